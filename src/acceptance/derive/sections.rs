//! Sections: the kinds of heading a criterion can stand under, and their titles in the languages
//! derivation reads.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SectionKind {
    Acceptance,
    Optional,
    Process,
    OutOfScope,
    /// Why the change is wanted and what else was weighed (background, motivation, rationale,
    /// drawbacks, alternatives): its "must"/"should" describe the world or argue a case.
    Context,
    Other,
}

/// Section titles by kind, lower-cased. A title matches when it is one of these, or starts with
/// one followed by a character that is not a letter or digit ("Acceptance criteria (v2)").
pub(super) const SECTION_TITLES: &[(SectionKind, &[&str])] = &[
    (
        SectionKind::Acceptance,
        &[
            // English
            "acceptance criteria",
            "acceptance criterion",
            "acceptance",
            "acs",
            "done when",
            "definition of done",
            "dod",
            "requirements",
            "requirement",
            "success criteria",
            "exit criteria",
            // Kubernetes enhancement proposals list what each stage must meet.
            "graduation criteria",
            "completion criteria",
            "release criteria",
            "must have",
            "must haves",
            "must-have",
            "must-haves",
            // German
            "akzeptanzkriterien",
            "akzeptanzkriterium",
            "abnahmekriterien",
            "anforderungen",
            "fertig wenn",
            // French
            "critères d'acceptation",
            "critères d’acceptation",
            "criteres d'acceptation",
            "critère d'acceptation",
            "critères d'acceptance",
            "conditions d'acceptation",
            "exigences",
            "définition de fini",
            "définition de terminé",
            // Spanish
            "criterios de aceptación",
            "criterios de aceptacion",
            "criterio de aceptación",
            "requisitos",
            "definición de hecho",
            "definición de terminado",
            // Portuguese
            "critérios de aceitação",
            "criterios de aceitacao",
            "critérios de aceite",
            "definição de pronto",
            // Japanese
            "受け入れ条件",
            "受入条件",
            "受け入れ基準",
            "受入基準",
            "完了条件",
            "要件",
            // Chinese
            "验收标准",
            "验收条件",
            "驗收標準",
            "驗收條件",
            "完成标准",
            "需求",
        ],
    ),
    (
        SectionKind::Optional,
        &[
            "nice to have",
            "nice to haves",
            "nice-to-have",
            "nice-to-haves",
            "optional",
            "could have",
            "stretch goals",
            "stretch",
            "wünschenswert",
            "optionnel",
            "opcional",
            "任意",
            "可选",
        ],
    ),
    (
        SectionKind::Process,
        &[
            "checklist",
            "pr checklist",
            "pull request checklist",
            "pre-merge checklist",
            "reviewer checklist",
            "author checklist",
            "contributor checklist",
            "type of change",
            "types of changes",
            "how has this been tested",
            "how was this tested",
            "how to test",
            "testing",
            "testing done",
            "test plan",
            "manual testing",
            "before merging",
            // Chinese and Japanese templates' kind-of-change checkboxes ("这个变动的性质是？" is
            // the wording many Chinese templates share).
            "这个变动的性质是",
            "变更类型",
            "改动类型",
            "变动类型",
            "修改类型",
            "检查清单",
            "変更の種類",
            "変更種別",
            "チェックリスト",
        ],
    ),
    (
        SectionKind::OutOfScope,
        &[
            "out of scope",
            "not in scope",
            "not doing",
            "non-goals",
            "non goals",
            "open questions",
            "questions",
            "unresolved questions",
            "open issues",
            "steps to reproduce",
            "to reproduce",
            "reproduction steps",
            "nicht im umfang",
            "hors périmètre",
            "fuera de alcance",
            "fora de escopo",
            "対象外",
            "不在范围",
        ],
    ),
    (
        SectionKind::Context,
        &[
            "background",
            "motivation",
            "rationale",
            "drawbacks",
            "alternatives",
            "prior art",
            "how we teach this",
            "how do we teach this",
            "risks and mitigations",
            "future possibilities",
            "hintergrund",
            "contexte",
            "motivación",
            "motivação",
            "背景",
            "動機",
        ],
    ),
];

pub(super) fn section_kind(title: &str) -> SectionKind {
    let t = title.to_lowercase();
    for (kind, titles) in SECTION_TITLES {
        for name in *titles {
            if let Some(rest) = t.strip_prefix(name) {
                if rest.chars().next().is_none_or(|c| !c.is_alphanumeric()) {
                    return *kind;
                }
            }
        }
    }
    SectionKind::Other
}

/// A heading's title as a person reads it: emphasis, `#`s, a trailing colon and leading
/// decoration (emoji, punctuation) gone.
pub(super) fn heading_title(raw: &str) -> String {
    let t = raw.trim().trim_end_matches('#').trim();
    let t = strip_emphasis(t);
    let t = t
        .trim()
        .trim_end_matches([':', '：'])
        .trim()
        .trim_start_matches(|c: char| !c.is_alphanumeric());
    t.trim().to_string()
}

pub(super) fn strip_emphasis(s: &str) -> String {
    s.replace("**", "").replace("__", "")
}

pub(super) struct Section {
    pub(super) kind: SectionKind,
    /// 1–6 for ATX and setext headings; pseudo-headings (bold lines, `Title:` lines) are 7, so
    /// that any heading ends them.
    pub(super) level: u8,
    pub(super) title: String,
    /// List items seen in it so far: once an acceptance section has a list, the prose after it
    /// is the author's commentary ("Thanks for reviewing!"), not more criteria.
    pub(super) items: usize,
}

impl Section {
    pub(super) const PSEUDO: u8 = 7;
}
