//! Drafting acceptance criteria from a change's own words (a pull request body, a linked issue,
//! commit messages), each with a stable id, `required`, a confidence and its reason, and where it
//! came from.
//!
//! In: texts, each with a name (for the source pointer) and a Markdown body. Out: the derived
//! criteria, duplicates merged, in source order. Pure: no I/O, the same texts give the same
//! criteria and ids on every run.
//!
//! Steps:
//! 1. **Scan** each text line by line (one pass, no backtracking), dropping noise: fenced and
//!    indented code blocks, HTML comments (also across lines), `>` quoted replies and
//!    `<blockquote>` blocks, table rows (lines with `|` cells), `Fixes #N` / `Closes owner/repo#N`
//!    lines, sign-offs (`Signed-off-by:`, `Co-authored-by:`, `cc @…`). Lines are gathered into
//!    blocks: list items (checklist or not, continuation lines folded in) and prose paragraphs.
//! 2. **Sections**: ATX (`## …`) and setext headings, bold pseudo-headings (`**Done when:**`) and
//!    plain lines naming a known section with a trailing colon (`Acceptance criteria:`) open a
//!    section. Its kind comes from its title (see [`SECTION_TITLES`], in English, German, French,
//!    Spanish, Portuguese, Japanese and Chinese): *acceptance* ("Acceptance criteria", "Done when",
//!    "Definition of done", "Requirements", "Must have"), *optional* ("Nice to have"),
//!    *process* ("Checklist", "Type of change", "How has this been tested", "变更类型"), *out of
//!    scope* ("Out of scope", "Non-goals", "Open questions", "Unresolved questions", "Steps to
//!    reproduce") and *context* ("Background", "Motivation", "Rationale", "Drawbacks",
//!    "Alternatives", "Prior art": why the change is wanted, whose modals argue a case). A deeper
//!    heading of no known kind stays inside its section. A plain `Title:` line opens a section
//!    only standing alone, not as the last line of a paragraph.
//! 3. **Candidates**, with their confidence (see [`Confidence`]): a checklist item under an
//!    acceptance heading (0.95), a list item there (0.9), a prose sentence there (0.75); items under
//!    an optional heading (0.9 / 0.85, never required); a checklist item elsewhere (0.8); a
//!    sentence in prose with `must`/`shall` (0.65, `MUST`/`SHALL` in RFC 2119 capitals 0.7) or
//!    `should` (0.5, `SHOULD` 0.55), and their German, French, Spanish, Portuguese, Japanese and
//!    Chinese equivalents. Process and out-of-scope sections give nothing; context sections give
//!    only their checklists. A paragraph introducing a list (its last sentence ends with `:` or
//!    says "the following") is a lead-in ([`LeadIn`]): not a criterion itself; its modal carries
//!    to the items after it that have none of their own (a `should` lead-in makes them optional);
//!    a lead-in naming conditions ("… if the following conditions fail:") is the criterion itself
//!    and its items only complete it; a lead-in that is a template prompt makes its items prompts. Dropped: empty items,
//!    template placeholders ([`is_placeholder`], also bracketed prompts over several lines and
//!    `v1.xx` versions), template guidance about a section ("This section should explain …"),
//!    obligations on users ("Users must install …"), process chores ([`is_chore`]), group labels
//!    ending in `:`, questions, hedged sentences ("probably", "I think"), RFC 2119 boilerplate. A
//!    `should` in an item's that-clause ("suggesting that a node should be rebooted") does not
//!    make the item optional.
//! 4. **Clean** the criterion's text: list markers and checkboxes go; links keep their text;
//!    images, bare URLs, HTML tags and emphasis markers go; inline code keeps its text without
//!    the backticks (an id like `Idempotency-Key` is often the point of the criterion), but a
//!    modal verb inside inline code does not make a sentence a criterion.
//! 5. **Merge** duplicates: the same normalised text (case, punctuation and whitespace ignored), or
//!    a near-duplicate: one's words all in the other, a word-set Jaccard ≥ 0.8, and no extra word
//!    holding a digit ("… on the server" and "… on the server side" merge; "24 hours" and "48
//!    hours", or "keeps the totals" and "keeps the dates", stay apart). The higher confidence
//!    wins, ties go to the first.
//! 6. **Ids**: a slug of the text's first words (accents folded, ≤ 48 chars); a text mostly outside
//!    ASCII gets `ac-` and 8 hex digits of its hash. Only texts whose slugs collide get a hash
//!    suffix, so an edit elsewhere in the body never renames a criterion unless it adds one with
//!    the same opening words.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// One text to derive from: what it is (for the source pointer) and its body.
pub struct Text<'a> {
    pub name: &'a str,
    pub body: &'a str,
}

/// Where a criterion came from: the text's name and the 1-based line in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Source {
    pub text: String,
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Derived {
    /// Stable: the same text gives the same id on every run; a valid acceptance-file id.
    pub id: String,
    /// The criterion's sentence, cleaned of Markdown.
    pub ac: String,
    pub required: bool,
    /// 0..=1, two decimals.
    pub confidence: f64,
    /// Why that confidence, one short phrase.
    pub reason: String,
    pub source: Source,
}

/// The confidence of each way a criterion is found, highest first. A person wrote a checklist
/// under an acceptance heading to say exactly this; a `should` in prose may be a wish.
struct Confidence;

impl Confidence {
    const CHECKLIST_UNDER_ACCEPTANCE: f64 = 0.95;
    const LIST_UNDER_ACCEPTANCE: f64 = 0.9;
    const CHECKLIST_UNDER_OPTIONAL: f64 = 0.9;
    const LIST_UNDER_OPTIONAL: f64 = 0.85;
    const CHECKLIST_ELSEWHERE: f64 = 0.8;
    const SENTENCE_UNDER_ACCEPTANCE: f64 = 0.75;
    const RFC_MUST: f64 = 0.7;
    const MUST: f64 = 0.65;
    const RFC_SHOULD: f64 = 0.55;
    const SHOULD: f64 = 0.5;
}

/// Derives the criteria of `texts` (see the module doc); an empty body gives none.
pub fn derive(texts: &[Text<'_>]) -> Vec<Derived> {
    let mut found = Vec::new();
    for (index, text) in texts.iter().enumerate() {
        Scanner::new(index, &mut found).run(text.body);
    }
    let kept = merge(found);
    let ids = assign_ids(&kept);
    kept.into_iter()
        .zip(ids)
        .map(|(c, id)| Derived {
            id,
            ac: c.ac,
            required: c.required,
            confidence: (c.confidence * 100.0).round() / 100.0,
            reason: c.reason,
            source: Source {
                text: texts[c.text].name.to_string(),
                line: c.line,
            },
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SectionKind {
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
const SECTION_TITLES: &[(SectionKind, &[&str])] = &[
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

fn section_kind(title: &str) -> SectionKind {
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
fn heading_title(raw: &str) -> String {
    let t = raw.trim().trim_end_matches('#').trim();
    let t = strip_emphasis(t);
    let t = t
        .trim()
        .trim_end_matches([':', '：'])
        .trim()
        .trim_start_matches(|c: char| !c.is_alphanumeric());
    t.trim().to_string()
}

fn strip_emphasis(s: &str) -> String {
    s.replace("**", "").replace("__", "")
}

struct Section {
    kind: SectionKind,
    /// 1–6 for ATX and setext headings; pseudo-headings (bold lines, `Title:` lines) are 7, so
    /// that any heading ends them.
    level: u8,
    title: String,
    /// List items seen in it so far: once an acceptance section has a list, the prose after it
    /// is the author's commentary ("Thanks for reviewing!"), not more criteria.
    items: usize,
}

impl Section {
    const PSEUDO: u8 = 7;
}

// ---------------------------------------------------------------------------------------------
// Step 1: the line scan
// ---------------------------------------------------------------------------------------------

/// A criterion found in one text, before merging and ids.
struct Candidate {
    text: usize,
    line: usize,
    ac: String,
    /// `ac` normalised for comparison (see [`normalise`]).
    key: String,
    required: bool,
    confidence: f64,
    reason: String,
}

#[derive(PartialEq, Eq)]
enum BlockKind {
    None,
    Paragraph,
    Item { checklist: bool },
}

/// The lines gathered so far into one list item or paragraph, with where each line starts.
struct Block {
    kind: BlockKind,
    buf: String,
    /// (byte offset in `buf`, 1-based line) of each line folded in.
    lines: Vec<(usize, usize)>,
}

impl Block {
    fn push(&mut self, text: &str, line: usize) {
        if !self.buf.is_empty() {
            self.buf.push(' ');
        }
        self.lines.push((self.buf.len(), line));
        self.buf.push_str(text.trim());
    }

    /// The line of byte `offset` in `buf`.
    fn line_at(&self, offset: usize) -> usize {
        let i = self.lines.partition_point(|(o, _)| *o <= offset);
        self.lines[i.saturating_sub(1)].1
    }
}

struct Scanner<'f> {
    text: usize,
    found: &'f mut Vec<Candidate>,
    section: Section,
    block: Block,
    /// The fence (character, length) of the open fenced code block.
    fence: Option<(u8, usize)>,
    in_comment: bool,
    in_blockquote: bool,
    /// The previous line was blank (or opened the text), so an indented line starts code.
    after_blank: bool,
    /// The previous line was indented code.
    in_indented_code: bool,
    /// The last block was a list item: an indented line after it continues the list.
    after_item: bool,
    /// The paragraph just before introduces a list (see [`LeadIn`]); ended by any other block.
    lead_in: Option<LeadIn>,
    /// The index in `found` of that paragraph's last sentence, emitted as a criterion: when a
    /// list does follow, the sentence only introduced it and goes.
    pending_lead_in: Option<usize>,
}

/// A paragraph whose last sentence introduces the list after it: it ends with a colon, or it
/// says "the following" ("The following changes must be made to take Table GA").
enum LeadIn {
    /// A template prompt ("Explain the proposal … That generally means:"): its items are prompts.
    Prompt,
    /// A requirement: its modal carries to the items that have none of their own.
    Modal { required: bool, confidence: f64 },
    /// A requirement whose list names its conditions ("… a fallback if the following conditions
    /// fail:"): the lead-in is the criterion, as written, once a list follows; the items only
    /// complete it.
    Condition {
        line: usize,
        ac: String,
        required: bool,
        confidence: f64,
        emitted: bool,
    },
}

impl<'f> Scanner<'f> {
    fn new(text: usize, found: &'f mut Vec<Candidate>) -> Scanner<'f> {
        Scanner {
            text,
            found,
            section: Section {
                kind: SectionKind::Other,
                level: 0,
                title: String::new(),
                items: 0,
            },
            block: Block {
                kind: BlockKind::None,
                buf: String::new(),
                lines: Vec::new(),
            },
            fence: None,
            in_comment: false,
            in_blockquote: false,
            after_blank: true,
            in_indented_code: false,
            after_item: false,
            lead_in: None,
            pending_lead_in: None,
        }
    }

    fn run(mut self, body: &str) {
        // One reusable buffer for lines that lose an HTML comment: most lines are borrowed as is.
        let mut uncommented = String::new();
        for (i, raw) in body.split('\n').enumerate() {
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            self.line(line, i + 1, &mut uncommented);
        }
        self.flush();
    }

    fn line(&mut self, line: &str, number: usize, uncommented: &mut String) {
        if let Some((ch, len)) = self.fence {
            let t = line.trim();
            if t.len() >= len && t.bytes().all(|b| b == ch) {
                self.fence = None;
                self.after_blank = true;
            }
            return;
        }
        // `<` first: a byte search, where most lines end the check.
        let line = if self.in_comment || (line.as_bytes().contains(&b'<') && line.contains("<!--"))
        {
            match self.strip_comments(line, uncommented) {
                Some(()) => uncommented.as_str(),
                // Wholly inside a comment: as if the line were not there.
                None => return,
            }
        } else {
            line
        };
        let trimmed = line.trim();
        if trimmed.is_empty() {
            self.flush();
            self.after_blank = true;
            self.in_indented_code = false;
            return;
        }
        let indent = indent_width(line);
        if indent <= 3 {
            if let Some(fence) = fence_open(trimmed) {
                self.flush();
                self.end_lead_in();
                self.fence = Some(fence);
                return;
            }
        }
        if indent >= 4
            && self.block.kind == BlockKind::None
            && (self.after_blank || self.in_indented_code)
            && !self.after_item
        {
            self.in_indented_code = true;
            return;
        }
        self.in_indented_code = false;
        let was_blank = std::mem::replace(&mut self.after_blank, false);
        if self.quoted(trimmed)
            || is_table_row(trimmed)
            || is_html_block_line(trimmed)
            || is_noise_line(trimmed)
        {
            self.flush();
            self.end_lead_in();
            return;
        }
        if indent <= 3 {
            if let Some((level, title)) = atx_heading(trimmed) {
                self.flush();
                self.heading(level, &title);
                self.after_item = false;
                return;
            }
        }
        if let Some(level) = setext_underline(trimmed) {
            if self.block.kind == BlockKind::Paragraph && !was_blank {
                let title = std::mem::take(&mut self.block.buf);
                self.block.kind = BlockKind::None;
                self.block.lines.clear();
                self.heading(level, &title);
                self.after_item = false;
                return;
            }
        }
        if is_thematic_break(trimmed) {
            self.flush();
            self.end_lead_in();
            self.after_item = false;
            return;
        }
        if let Some((checklist, rest)) = list_item(trimmed) {
            self.flush();
            self.block.kind = BlockKind::Item { checklist };
            self.block.push(rest, number);
            return;
        }
        // A plain `Title:` line ending a paragraph ("… these requirements point-by-point:") is
        // the paragraph's lead-in, not a heading.
        let standalone = self.block.kind != BlockKind::Paragraph;
        if let Some((title, rest)) = pseudo_heading(trimmed, standalone) {
            self.flush();
            self.heading(Section::PSEUDO, &title);
            self.after_item = false;
            if !rest.is_empty() {
                self.block.kind = BlockKind::Paragraph;
                self.block.push(rest, number);
            }
            return;
        }
        if self.block.kind == BlockKind::None {
            self.block.kind = BlockKind::Paragraph;
        }
        self.block.push(trimmed, number);
    }

    /// Writes `line` without its HTML comments into `out`; `None` when nothing of it is outside
    /// a comment.
    fn strip_comments(&mut self, line: &str, out: &mut String) -> Option<()> {
        out.clear();
        let mut rest = line;
        let mut any = false;
        loop {
            if self.in_comment {
                match rest.find("-->") {
                    Some(end) => {
                        self.in_comment = false;
                        rest = &rest[end + 3..];
                    }
                    None => break,
                }
            } else {
                match rest.find("<!--") {
                    Some(start) => {
                        out.push_str(&rest[..start]);
                        any = true;
                        self.in_comment = true;
                        rest = &rest[start + 4..];
                    }
                    None => {
                        out.push_str(rest);
                        any = true;
                        break;
                    }
                }
            }
        }
        (any && !out.trim().is_empty()).then_some(())
    }

    /// `>` quoted replies, and lines inside a `<blockquote>` (release notes pasted by bots).
    fn quoted(&mut self, trimmed: &str) -> bool {
        if trimmed.starts_with('>') {
            return true;
        }
        let opens = starts_with_ignore_case(trimmed, "<blockquote");
        if self.in_blockquote || opens {
            self.in_blockquote = !contains_ignore_case(trimmed, "</blockquote>");
            return true;
        }
        false
    }

    /// Something other than a list follows the lead-in: it introduced code, a quote or nothing.
    fn end_lead_in(&mut self) {
        self.lead_in = None;
        self.pending_lead_in = None;
    }

    fn heading(&mut self, level: u8, raw: &str) {
        self.end_lead_in();
        let title = heading_title(raw);
        let kind = section_kind(&title);
        if kind != SectionKind::Other || level <= self.section.level || self.section.level == 0 {
            self.section = Section {
                kind,
                level,
                title,
                items: 0,
            };
        }
    }

    fn flush(&mut self) {
        let kind = std::mem::replace(&mut self.block.kind, BlockKind::None);
        match kind {
            BlockKind::None => {}
            BlockKind::Item { checklist } => {
                self.item(checklist);
                self.after_item = true;
            }
            BlockKind::Paragraph => {
                self.paragraph();
                self.after_item = false;
            }
        }
        self.block.buf.clear();
        self.block.lines.clear();
    }

    fn item(&mut self, checklist: bool) {
        self.section.items += 1;
        // The list is here: the sentence that introduced it is not a criterion of its own.
        if let Some(i) = self.pending_lead_in.take() {
            if i + 1 == self.found.len() {
                self.found.pop();
            }
        }
        let kind = self.section.kind;
        if matches!(kind, SectionKind::Process | SectionKind::OutOfScope) {
            return;
        }
        match &mut self.lead_in {
            Some(LeadIn::Prompt) => return,
            Some(LeadIn::Condition {
                line,
                ac,
                required,
                confidence,
                emitted,
            }) => {
                if !std::mem::replace(emitted, true) {
                    let (line, ac, required, confidence) =
                        (*line, std::mem::take(ac), *required, *confidence);
                    let word = if required { "must" } else { "should" };
                    let reason = format!("'{word}' lead-in to its conditions");
                    let required = required && kind != SectionKind::Optional;
                    self.emit(line, ac, required, confidence, reason);
                }
                return;
            }
            _ => {}
        }
        let line = self.block.lines.first().map_or(1, |l| l.1);
        let ac = clean(&self.block.buf, true);
        if ac.is_empty() || ac.ends_with([':', '：']) || is_placeholder(&ac) || is_chore(&ac) {
            return;
        }
        // A `should` lead-in makes its items wishes unless they say `must` themselves.
        let lead_optional = matches!(
            self.lead_in,
            Some(LeadIn::Modal {
                required: false,
                ..
            })
        );
        let title = &self.section.title;
        let (confidence, required, reason) = match (kind, checklist) {
            (SectionKind::Acceptance, true) => (
                Confidence::CHECKLIST_UNDER_ACCEPTANCE,
                !signals(&ac).marks_optional(false),
                format!("checklist item under '{title}'"),
            ),
            (SectionKind::Acceptance, false) => {
                let signals = signals(&ac);
                let own_must = signals.modal.as_ref().is_some_and(|m| m.required);
                (
                    Confidence::LIST_UNDER_ACCEPTANCE,
                    !signals.marks_optional(true) && (own_must || !lead_optional),
                    format!("list item under '{title}'"),
                )
            }
            (SectionKind::Optional, true) => (
                Confidence::CHECKLIST_UNDER_OPTIONAL,
                false,
                format!("checklist item under '{title}'"),
            ),
            (SectionKind::Optional, false) => (
                Confidence::LIST_UNDER_OPTIONAL,
                false,
                format!("list item under '{title}'"),
            ),
            (_, true) => (
                Confidence::CHECKLIST_ELSEWHERE,
                !signals(&ac).marks_optional(false),
                "checklist item outside an acceptance section".to_string(),
            ),
            // A plain bullet elsewhere is prose: its sentences count when they carry a modal,
            // or else the lead-in's.
            (_, false) => {
                let lead = match self.lead_in {
                    Some(LeadIn::Modal {
                        required,
                        confidence,
                    }) if kind != SectionKind::Context && modal(&ac).is_none() => {
                        Some((required, confidence))
                    }
                    _ => None,
                };
                let Some((required, confidence)) = lead else {
                    self.sentences(false);
                    return;
                };
                let optional_section = kind == SectionKind::Optional;
                let word = if required { "must" } else { "should" };
                (
                    confidence,
                    required && !optional_section,
                    format!("list item under a '{word}' lead-in"),
                )
            }
        };
        self.emit(line, ac, required, confidence, reason);
    }

    fn paragraph(&mut self) {
        self.end_lead_in();
        if is_bracketed(&self.block.buf) {
            return;
        }
        let before = self.found.len();
        match self.section.kind {
            SectionKind::Process | SectionKind::OutOfScope | SectionKind::Context => {}
            SectionKind::Acceptance => self.sentences(self.section.items == 0),
            SectionKind::Optional | SectionKind::Other => self.sentences(false),
        }
        if matches!(
            self.section.kind,
            SectionKind::Process | SectionKind::OutOfScope
        ) {
            return;
        }
        self.lead_in = self.lead_in_of_block();
        // A "the following" sentence without a colon was emitted: it goes if a list follows.
        if self.lead_in.is_some() && self.found.len() > before {
            let buf = self.block.buf.trim_end();
            if !buf.ends_with([':', '：']) {
                if let Some((_, last)) = split_sentences(buf).pop() {
                    let last = clean(last, true);
                    if self.found.last().is_some_and(|c| c.ac == last) {
                        self.pending_lead_in = Some(self.found.len() - 1);
                    }
                }
            }
        }
    }

    /// The block as a lead-in to a list: checked only for a block ending with a colon or
    /// saying "following" (two byte scans), so most paragraphs cost nothing more.
    fn lead_in_of_block(&self) -> Option<LeadIn> {
        let buf = self.block.buf.trim_end();
        let colon = buf.ends_with([':', '：']);
        // "following" is lower-case however the sentence opens: the fast substring search first,
        // the byte-wise case-blind one only on a hit.
        let following = buf.contains("following") && contains_ignore_case(buf, "the following");
        if !colon && !following {
            return None;
        }
        if is_placeholder(buf) {
            return Some(LeadIn::Prompt);
        }
        let (start, last) = split_sentences(buf).pop()?;
        if !colon && !contains_ignore_case(last, "the following") {
            return None;
        }
        if self.section.kind == SectionKind::Context {
            return None;
        }
        let plain = clean(last, false);
        let m = modal(&plain)?;
        let confidence = match (m.required, m.rfc) {
            (true, true) => Confidence::RFC_MUST,
            (true, false) => Confidence::MUST,
            (false, true) => Confidence::RFC_SHOULD,
            (false, false) => Confidence::SHOULD,
        };
        if introduces_conditions(&plain) {
            // Ending with a colon it was dropped as a sentence: it comes back once its list
            // does; without one it was emitted already.
            return colon.then(|| LeadIn::Condition {
                line: self.block.line_at(start),
                ac: clean(last, true),
                required: m.required,
                confidence,
                emitted: false,
            });
        }
        Some(LeadIn::Modal {
            required: m.required,
            confidence,
        })
    }

    /// Each sentence of the block: under an acceptance heading every one is a criterion; else
    /// only those with a modal verb.
    fn sentences(&mut self, under_acceptance: bool) {
        if self.section.kind == SectionKind::Context {
            return;
        }
        // Most prose states no requirement: one word scan of the block spares splitting and
        // cleaning it.
        if !under_acceptance && modal(&self.block.buf).is_none() {
            return;
        }
        let buf = std::mem::take(&mut self.block.buf);
        for (start, sentence) in split_sentences(&buf) {
            let line = self.block.line_at(start);
            self.sentence(sentence, line, under_acceptance);
        }
        self.block.buf = buf;
    }

    fn sentence(&mut self, sentence: &str, line: usize, under_acceptance: bool) {
        let ac = clean(sentence, true);
        if ac.is_empty() || ac.ends_with(['?', '？', ':', '：']) || is_placeholder(&ac) {
            return;
        }
        // The modal is read without inline code: `config must be a file` quotes a message.
        let plain = sentence.contains('`').then(|| clean(sentence, false));
        let plain = plain.as_deref().unwrap_or(&ac);
        let lower = plain.to_lowercase();
        if is_hedged(&lower)
            || is_rfc2119_boilerplate(&lower)
            || is_pointer(&lower)
            || is_section_guidance(&lower)
        {
            return;
        }
        let optional_section = self.section.kind == SectionKind::Optional;
        let (confidence, required, reason) = if under_acceptance {
            (
                Confidence::SENTENCE_UNDER_ACCEPTANCE,
                !signals(&ac).marks_optional(true),
                format!("sentence under '{}'", self.section.title),
            )
        } else {
            let Some(m) = modal(plain) else {
                return;
            };
            if (lower.contains("user") || lower.contains("you") || lower.contains("author"))
                && is_user_obligation(plain)
            {
                return;
            }
            let confidence = match (m.required, m.rfc) {
                (true, true) => Confidence::RFC_MUST,
                (true, false) => Confidence::MUST,
                (false, true) => Confidence::RFC_SHOULD,
                (false, false) => Confidence::SHOULD,
            };
            let reason = if optional_section {
                format!("'{}' sentence under '{}'", m.word, self.section.title)
            } else {
                format!("'{}' sentence in prose", m.word)
            };
            (confidence, m.required && !optional_section, reason)
        };
        self.emit(line, ac, required, confidence, reason);
    }

    fn emit(&mut self, line: usize, ac: String, required: bool, confidence: f64, reason: String) {
        let key = normalise(&ac);
        if key.is_empty() {
            return;
        }
        self.found.push(Candidate {
            text: self.text,
            line,
            ac,
            key,
            required,
            confidence,
            reason,
        });
    }
}

fn indent_width(line: &str) -> usize {
    let mut w = 0;
    for b in line.bytes() {
        match b {
            b' ' => w += 1,
            b'\t' => w += 4,
            _ => break,
        }
    }
    w
}

fn fence_open(trimmed: &str) -> Option<(u8, usize)> {
    let first = *trimmed.as_bytes().first()?;
    if first != b'`' && first != b'~' {
        return None;
    }
    let len = trimmed.bytes().take_while(|b| *b == first).count();
    // A backtick fence's info string may not hold a backtick (else it is inline code).
    let info = &trimmed[len..];
    (len >= 3 && (first == b'~' || !info.contains('`'))).then_some((first, len))
}

fn atx_heading(trimmed: &str) -> Option<(u8, String)> {
    let level = trimmed.bytes().take_while(|b| *b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &trimmed[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some((level as u8, rest.to_string()))
}

fn setext_underline(trimmed: &str) -> Option<u8> {
    let first = *trimmed.as_bytes().first()?;
    if (first == b'=' || first == b'-') && trimmed.bytes().all(|b| b == first) {
        return Some(if first == b'=' { 1 } else { 2 });
    }
    None
}

fn is_thematic_break(trimmed: &str) -> bool {
    let Some(&first) = trimmed.as_bytes().first() else {
        return false;
    };
    matches!(first, b'-' | b'*' | b'_')
        && trimmed.bytes().filter(|b| *b == first).count() >= 3
        && trimmed
            .bytes()
            .all(|b| b == first || b == b' ' || b == b'\t')
}

/// A list item's marker (`-`, `*`, `+`, `•`, `1.`, `1)`) and optional checkbox; the item's text.
fn list_item(trimmed: &str) -> Option<(bool, &str)> {
    let rest = if let Some(r) = trimmed
        .strip_prefix(['-', '*', '+'])
        .or_else(|| trimmed.strip_prefix('•'))
    {
        r
    } else {
        let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        trimmed[digits..].strip_prefix(['.', ')'])?
    };
    // Authors drop the spaces around a checkbox (`-[ ] text`, `- [ ]text`): still a checklist.
    let rest_trimmed = rest.trim_start();
    for b in ["[ ]", "[x]", "[X]"] {
        if let Some(after) = rest_trimmed.strip_prefix(b) {
            return Some((true, after.trim()));
        }
    }
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some((false, rest_trimmed))
}

/// A bold line (`**Acceptance criteria:**`, `__Done when__`), a bold label opening a line
/// (`**Notes:** the old parser…`: the title and the rest), or a plain line naming a known section
/// and ending with a colon (`acceptance criteria:`).
fn pseudo_heading(trimmed: &str, standalone: bool) -> Option<(String, &str)> {
    for mark in ["**", "__"] {
        if let Some(inner) = trimmed.strip_prefix(mark) {
            let end = inner.find(mark)?;
            let title = &inner[..end];
            let after = &inner[end + mark.len()..];
            let after_colon = after.trim_start().strip_prefix([':', '：']);
            let labelled = title.trim_end().ends_with([':', '：']) || after_colon.is_some();
            let rest = after_colon.unwrap_or(after).trim();
            if title.trim().is_empty() {
                return None;
            }
            if rest.is_empty() || labelled {
                return Some((title.to_string(), rest));
            }
            return None;
        }
    }
    let title = trimmed.strip_suffix([':', '：'])?;
    (standalone && title.len() <= 80 && section_kind(&heading_title(title)) != SectionKind::Other)
        .then(|| (title.to_string(), ""))
}

/// A line opening with an HTML tag is markup (`<details>`, `<summary>full log</summary>`,
/// `<img …>`, a bot's `<li>` lists): a person writing intent writes Markdown.
fn is_html_block_line(trimmed: &str) -> bool {
    trimmed.starts_with('<') && tag_end(trimmed, 0).is_some()
}

/// A row of a Markdown table: it starts with `|`, or holds at least two cell separators.
fn is_table_row(trimmed: &str) -> bool {
    trimmed.starts_with('|') || trimmed.bytes().filter(|b| *b == b'|').count() >= 2
}

/// Lines that are never intent: issue references that close or relate (`Fixes #12`, `Closes
/// acme/web#3`), trailers (`Signed-off-by:`), and carbon copies (`cc @team`).
fn is_noise_line(trimmed: &str) -> bool {
    const TRAILERS: &[&str] = &[
        "signed-off-by:",
        "co-authored-by:",
        "reviewed-by:",
        "acked-by:",
        "tested-by:",
        "reported-by:",
        "suggested-by:",
        "helped-by:",
        "change-id:",
        "cc:",
        "cc ",
        "/cc ",
    ];
    if TRAILERS.iter().any(|t| starts_with_ignore_case(trimmed, t)) {
        return true;
    }
    trimmed.contains('#') && trimmed.len() <= 120 && issue_reference().is_match(trimmed)
}

fn issue_reference() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // Anchored at the start, or after a short label ("关联 issue:"); `#N` or `owner/repo#N`,
        // then nothing but more references.
        Regex::new(
            r"(?i)^(?:\S+(?:\s+\S+)?\s*[:：]\s*)?(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?|relates? to|related to|refs?|see|part of|follow[- ]up (?:to|of))\s*:?\s+(?:[\w.-]+/[\w.-]+)?#\d+(?:[\s,]+(?:and\s+)?(?:[\w.-]+/[\w.-]+)?#\d+)*\s*\.?$",
        )
        .expect("the issue reference pattern is valid")
    })
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len()
        && s.is_char_boundary(prefix.len())
        && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn contains_ignore_case(s: &str, needle: &str) -> bool {
    s.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

// ---------------------------------------------------------------------------------------------
// Sentences, modals, placeholders, chores
// ---------------------------------------------------------------------------------------------

/// Splits at `.`, `!`, `?` (a run of them, with closing quotes or brackets) followed by
/// whitespace or the end, and at `。！？`; never inside inline code or after an abbreviation
/// ("e.g."). Yields (byte offset, sentence).
fn split_sentences(buf: &str) -> Vec<(usize, &str)> {
    const ABBREVIATIONS: &[&str] = &[
        "e.g", "i.e", "eg", "ie", "etc", "ex", "vs", "cf", "approx", "no", "nr", "fig", "mr",
        "mrs", "ms", "dr", "z.b", "d.h", "bzw", "ca", "usw", "p.ex",
    ];
    let bytes = buf.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_code = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'`' {
            in_code = !in_code;
            i += 1;
            continue;
        }
        if in_code {
            i += 1;
            continue;
        }
        let (is_end, width) = match b {
            b'.' | b'!' | b'?' => (true, 1),
            0xE3 if bytes[i..].starts_with("。".as_bytes()) => (true, 3),
            0xEF if bytes[i..].starts_with("！".as_bytes())
                || bytes[i..].starts_with("？".as_bytes()) =>
            {
                (true, 3)
            }
            _ => (false, 1),
        };
        if !is_end {
            i += 1;
            continue;
        }
        let mut end = i + width;
        let cjk = width == 3;
        while end < bytes.len() && matches!(bytes[end], b'.' | b'!' | b'?' | b'"' | b'\'' | b')') {
            end += 1;
        }
        let at_boundary = cjk || end == bytes.len() || bytes[end] == b' ';
        let abbreviation = b == b'.' && {
            // The word before the dot, looked for in the last few bytes only: an abbreviation is
            // short, and a long run without spaces must not make the split quadratic.
            let from = i.saturating_sub(8).max(start);
            let word_start = bytes[from..i]
                .iter()
                .rposition(|c| matches!(c, b' ' | b'('))
                .map_or(from, |p| from + p + 1);
            let word = &bytes[word_start..i];
            ABBREVIATIONS
                .iter()
                .any(|a| a.as_bytes().eq_ignore_ascii_case(word))
        };
        if at_boundary && !abbreviation {
            push_sentence(buf, start, end, &mut out);
            start = end;
        }
        i = end;
    }
    push_sentence(buf, start, buf.len(), &mut out);
    out
}

/// Pushes `buf[from..to]` trimmed, with the offset of its first character.
fn push_sentence<'b>(buf: &'b str, from: usize, to: usize, out: &mut Vec<(usize, &'b str)>) {
    let piece = &buf[from..to];
    let lead = piece.len() - piece.trim_start().len();
    let s = piece.trim();
    if !s.is_empty() {
        out.push((from + lead, s));
    }
}

/// The modal verb that makes a prose sentence a criterion.
struct Modal {
    word: String,
    required: bool,
    /// Written in RFC 2119 capitals.
    rfc: bool,
}

/// Modal verbs and phrases that make a sentence a requirement, as lower-case words.
const REQUIRED_MODALS: &[&[&str]] = &[
    &["must"],
    &["shall"],
    &["is", "required", "to"],
    &["are", "required", "to"],
    &["muss"],
    &["müssen"],
    &["darf", "nicht"],
    &["dürfen", "nicht"],
    &["doit"],
    &["doivent"],
    &["devra"],
    &["devront"],
    &["debe"],
    &["deben"],
    &["deberá"],
    &["deberán"],
    &["tiene", "que"],
    &["tienen", "que"],
    &["deve"],
    &["devem"],
    &["deverá"],
    &["deverão"],
    &["precisa"],
    &["precisam"],
];
/// Those that make it a wish.
const OPTIONAL_MODALS: &[&[&str]] = &[
    &["should"],
    &["ought", "to"],
    &["sollte"],
    &["sollten"],
    &["devrait"],
    &["devraient"],
    &["debería"],
    &["deberían"],
    &["sería", "bueno"],
    &["deveria"],
    &["deveriam"],
    &["seria", "bom"],
];
/// Scripts without spaces between words: looked for as substrings.
const REQUIRED_MODALS_CJK: &[&str] = &[
    "必须",
    "必須",
    "务必",
    "須要",
    "なければならない",
    "必要がある",
    "必要があります",
];
const OPTIONAL_MODALS_CJK: &[&str] = &["应该", "應該", "べき"];

/// Words explicitly marking a criterion optional.
const OPTIONAL_MARKERS: &[&[&str]] = &[
    &["optional"],
    &["optionally"],
    &["nice", "to", "have"],
    &["optionnel"],
    &["opcional"],
    &["wünschenswert"],
];
const OPTIONAL_MARKERS_CJK: &[&str] = &["可选", "任意"];
/// Verbs that make a list item (not a checklist item) optional.
const OPTIONAL_VERBS: &[&[&str]] = &[
    &["should"],
    &["could"],
    &["sollte"],
    &["sollten"],
    &["devrait"],
    &["debería"],
    &["deveria"],
];

/// The words of a text: maximal runs of letters and digits, without allocating. A word scan
/// instead of a regex with `\b`: Unicode word boundaries send the regex engines to their
/// slowest path, and this runs on every paragraph.
#[derive(Clone)]
struct Words<'a> {
    s: &'a str,
    at: usize,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.s.as_bytes();
        let mut i = self.at;
        // Skip to the word's start: ASCII separators a byte at a time.
        let start = loop {
            let Some(&b) = bytes.get(i) else {
                self.at = i;
                return None;
            };
            if b < 0x80 {
                if b.is_ascii_alphanumeric() {
                    break i;
                }
                i += 1;
            } else {
                let c = self.s[i..].chars().next().unwrap_or(' ');
                if c.is_alphanumeric() {
                    break i;
                }
                i += c.len_utf8();
            }
        };
        // And to its end.
        while let Some(&b) = bytes.get(i) {
            if b < 0x80 {
                if !b.is_ascii_alphanumeric() {
                    break;
                }
                i += 1;
            } else {
                let c = self.s[i..].chars().next().unwrap_or(' ');
                if !c.is_alphanumeric() {
                    break;
                }
                i += c.len_utf8();
            }
        }
        self.at = i;
        Some(&self.s[start..i])
    }
}

fn words(s: &str) -> Words<'_> {
    Words { s, at: 0 }
}

/// Which first words a phrase of `phrases` may start with: per first byte (ASCII case folded),
/// a bit for each byte length of such a word (16 and longer share the last bit), so that most
/// words are passed over with one lookup.
type FirstWords = [u16; 256];

const fn first_words(phrases: &[&[&str]]) -> FirstWords {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < phrases.len() {
        let word = phrases[i][0].as_bytes();
        let bit = 1u16 << if word.len() < 15 { word.len() } else { 15 };
        table[word[0].to_ascii_lowercase() as usize] |= bit;
        table[word[0].to_ascii_uppercase() as usize] |= bit;
        i += 1;
    }
    table
}

/// Whether `w` may start a phrase of the table's.
fn may_start(first: &FirstWords, w: &str) -> bool {
    first[usize::from(w.as_bytes()[0])] & (1u16 << w.len().min(15)) != 0
}

/// The phrase of `phrases` that starts with the word `w`, the words after it in `ahead`: the
/// word as written for a one-word phrase, else the phrase's words.
fn phrase_at(w: &str, ahead: &Words<'_>, phrases: &[&[&str]]) -> Option<String> {
    for p in phrases {
        if !p[0].eq_ignore_ascii_case(w) {
            continue;
        }
        let mut ahead = ahead.clone();
        if p[1..]
            .iter()
            .all(|part| ahead.next().is_some_and(|n| part.eq_ignore_ascii_case(n)))
        {
            return Some(if p.len() == 1 {
                w.to_string()
            } else {
                p.join(" ")
            });
        }
    }
    None
}

/// What one word scan of a text finds: its modal verb, and the words that would make it optional.
struct Signals {
    modal: Option<Modal>,
    /// "optional", "nice to have" (see [`OPTIONAL_MARKERS`]).
    marker: bool,
    /// "should", "could" (see [`OPTIONAL_VERBS`]).
    optional_verb: bool,
}

impl Signals {
    /// Words in an item's text that make it optional. A checklist item is required whatever its
    /// verb (the issue's rule), so only the explicit words count there; a list item's `should`
    /// or `could` counts too.
    fn marks_optional(&self, modal_verbs: bool) -> bool {
        self.marker
            || (modal_verbs
                && self.optional_verb
                && self.modal.as_ref().is_none_or(|m| !m.required))
    }
}

fn signals(s: &str) -> Signals {
    scan_words(s, true)
}

fn modal(plain: &str) -> Option<Modal> {
    scan_words(plain, false).modal
}

/// One scan of the words of `s` for every list (most prose has none of them); `markers`: whether
/// to look for the optional markers and verbs too, else the scan ends at the first required
/// modal. A required phrase anywhere wins over a wish before it.
fn scan_words(s: &str, markers: bool) -> Signals {
    const REQUIRED_FIRST: FirstWords = first_words(REQUIRED_MODALS);
    const OPTIONAL_FIRST: FirstWords = first_words(OPTIONAL_MODALS);
    const MARKERS_FIRST: FirstWords = first_words(OPTIONAL_MARKERS);
    const VERBS_FIRST: FirstWords = first_words(OPTIONAL_VERBS);
    let of_word = |w: String, required: bool| Modal {
        rfc: w.len() > 1 && w.chars().all(|c| !c.is_lowercase()),
        word: w.to_lowercase(),
        required,
    };
    let of_cjk = |cjk: &[&str], required: bool| {
        cjk.iter().find(|m| s.contains(**m)).map(|m| Modal {
            word: (*m).to_string(),
            required,
            rfc: false,
        })
    };
    let (mut must, mut wish) = (None, None);
    let (mut marker, mut optional_verb) = (false, false);
    let mut ws = words(s);
    // Words since the last "that": a `should` a few words after it sits in a that-clause
    // ("documentation suggesting that a node should be rebooted"), what the item talks about.
    let mut since_that = usize::MAX;
    while let Some(w) = ws.next() {
        since_that = if w.eq_ignore_ascii_case("that") {
            0
        } else {
            since_that.saturating_add(1)
        };
        if must.is_none() && may_start(&REQUIRED_FIRST, w) {
            must = phrase_at(w, &ws, REQUIRED_MODALS);
            if must.is_some() && !markers {
                break;
            }
        }
        if wish.is_none() && may_start(&OPTIONAL_FIRST, w) {
            wish = phrase_at(w, &ws, OPTIONAL_MODALS);
        }
        if markers {
            marker = marker
                || (may_start(&MARKERS_FIRST, w) && phrase_at(w, &ws, OPTIONAL_MARKERS).is_some());
            optional_verb = optional_verb
                || (since_that > 3
                    && may_start(&VERBS_FIRST, w)
                    && phrase_at(w, &ws, OPTIONAL_VERBS).is_some());
        }
    }
    let ascii = s.is_ascii();
    let modal = match must {
        Some(p) => Some(of_word(p, true)),
        None if ascii => wish.map(|w| of_word(w, false)),
        None => of_cjk(REQUIRED_MODALS_CJK, true)
            .or_else(|| wish.map(|w| of_word(w, false)))
            .or_else(|| of_cjk(OPTIONAL_MODALS_CJK, false)),
    };
    Signals {
        modal,
        marker: marker || (!ascii && OPTIONAL_MARKERS_CJK.iter().any(|m| s.contains(m))),
        optional_verb,
    }
}

/// A sentence that hedges is a guess about the change, not a criterion of it.
fn is_hedged(lower: &str) -> bool {
    const HEDGES: &[&str] = &[
        "i think",
        "i guess",
        "i believe",
        "probably",
        "hopefully",
        "maybe",
        "perhaps",
        "afaik",
        "should be fine",
        "should be ok",
        "should be good",
    ];
    HEDGES.iter().any(|h| lower.contains(h))
}

/// "See #12, …", "See [the design](…)": a sentence that sends the reader elsewhere.
fn is_pointer(lower: &str) -> bool {
    ["see ", "refer to ", "siehe ", "voir ", "ver ", "véase "]
        .iter()
        .any(|p| lower.starts_with(p))
}

/// "… if the following conditions fail:", "… when any of the following occurs:": the list after
/// the sentence names the conditions of its requirement, not requirements of their own.
fn introduces_conditions(plain: &str) -> bool {
    const CONDITIONS: &[&str] = &["if", "when", "whenever", "unless", "where"];
    const QUANTIFIERS: &[&str] = &["any", "one", "all", "each", "either", "none"];
    let lower = plain.to_lowercase();
    let Some(at) = lower.find("the following") else {
        return false;
    };
    let mut before = lower[..at].split_whitespace().rev();
    let is = |w: Option<&str>, set: &[&str]| w.is_some_and(|w| set.contains(&w));
    let w1 = before.next();
    if is(w1, CONDITIONS) {
        return true;
    }
    w1 == Some("of") && is(before.next(), QUANTIFIERS) && is(before.next(), CONDITIONS)
}

/// "Users must install …", "you must be logged in", "Authors and users of … must live with
/// it": the modal binds the people using the result, not the change. "Users must be able to …"
/// (or "not be able to") states what the change gives them, so it stays a criterion.
fn is_user_obligation(plain: &str) -> bool {
    const PEOPLE: &[&str] = &["users", "user", "you", "authors"];
    let is_person = |w: &str| PEOPLE.iter().any(|p| p.eq_ignore_ascii_case(w));
    let mut ws = words(plain);
    let opener = ws.clone().next().is_some_and(is_person);
    let mut prev = "";
    while let Some(w) = ws.next() {
        if ["must", "should", "shall"]
            .iter()
            .any(|m| m.eq_ignore_ascii_case(w))
        {
            let mut ahead = ws.clone();
            let next = ahead.next().unwrap_or("");
            let (a, b) = if next.eq_ignore_ascii_case("not") {
                (ahead.next().unwrap_or(""), ahead.next().unwrap_or(""))
            } else {
                (next, ahead.next().unwrap_or(""))
            };
            let able = a.eq_ignore_ascii_case("be") && b.eq_ignore_ascii_case("able");
            return (opener || is_person(prev)) && !able;
        }
        prev = w;
    }
    false
}

/// "This section should explain …": a template's instruction about its own sections, for
/// whoever fills it in.
fn is_section_guidance(lower: &str) -> bool {
    lower.contains("this section") || lower.contains("the section")
}

/// A paragraph that is one bracketed prompt (`[A description of the steps …\n… cycle](…).]`):
/// its first `[` closes at its last character.
fn is_bracketed(buf: &str) -> bool {
    let t = buf.trim();
    if !t.starts_with('[') || !t.ends_with(']') {
        return false;
    }
    let mut depth = 0usize;
    for (i, b) in t.bytes().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1 == t.len();
                }
            }
            _ => {}
        }
    }
    false
}

/// `v1.xx`, `1.XX`: a version left for the author to fill in.
fn is_version_placeholder(word: &str) -> bool {
    let w = word.trim_matches(|c: char| !c.is_alphanumeric());
    let w = w.strip_prefix(['v', 'V']).unwrap_or(w);
    let Some((major, minor)) = w.split_once('.') else {
        return false;
    };
    !major.is_empty()
        && major.bytes().all(|b| b.is_ascii_digit())
        && minor.len() >= 2
        && minor.bytes().all(|b| b == b'x' || b == b'X')
}

/// The RFC 2119 / BCP 14 key-words paragraph names the modals without requiring anything.
fn is_rfc2119_boilerplate(lower: &str) -> bool {
    lower.contains("rfc 2119") || lower.contains("rfc2119") || lower.contains("bcp 14")
}

/// Prompts a template leaves for the author, and the fillers put in their place.
pub(crate) fn is_placeholder(ac: &str) -> bool {
    const FILLERS: &[&str] = &[
        "n/a", "na", "tbd", "tba", "todo", "none", "-", "...", "…", "?", "wip", "nothing",
    ];
    const PROMPTS: &[&str] = &[
        "describe ",
        "explain ",
        "please ",
        "if applicable",
        "add any ",
        "replace this",
        "list the ",
        "list what ",
        "list any ",
        "link to the issue",
        "your ",
        "write your ",
        "a clear and concise description",
        "a description of ",
        "a short description",
        "a brief description",
    ];
    let t = ac.trim().trim_end_matches('.');
    FILLERS.iter().any(|f| f.eq_ignore_ascii_case(t))
        || PROMPTS.iter().any(|p| starts_with_ignore_case(t, p))
        || ((t.contains(".x") || t.contains(".X"))
            && t.split_whitespace().any(is_version_placeholder))
}

/// Checklist items of pull request templates that are process chores, not behaviour: the author
/// vouching for themselves ("I have read…", "My code follows…"), and a short list of
/// housekeeping items. Deliberately small: a behaviour that mentions tests or docs ("the runbook
/// lists the restart steps") is not a chore.
pub(crate) fn is_chore(ac: &str) -> bool {
    const FIRST_PERSON: &[&str] = &[
        "i have ",
        "i've ",
        "i agree",
        "i confirm",
        "i read ",
        "i ran ",
        "i tested",
        "my code ",
        "my changes ",
        "my change ",
    ];
    const HOUSEKEEPING: &[&str] = &[
        "tests added",
        "tests updated",
        "tests pass",
        "added tests",
        "added unit tests",
        "unit tests added",
        "docs updated",
        "documentation updated",
        "updated docs",
        "updated the docs",
        "updated documentation",
        "updated the documentation",
        "changelog",
        "updated changelog",
        "updated the changelog",
        "linked the issue",
        "linked issue",
        "signed the cla",
        "cla signed",
        "self-review",
        "self review",
        "rebased",
        "squashed",
        "ci passes",
        "ci is green",
        "lint passes",
        "labels added",
        "added labels",
    ];
    let t = ac.trim();
    FIRST_PERSON.iter().any(|p| starts_with_ignore_case(t, p))
        || HOUSEKEEPING.iter().any(|h| {
            starts_with_ignore_case(t, h)
                && t[h.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric())
        })
}

// ---------------------------------------------------------------------------------------------
// Step 4: cleaning
// ---------------------------------------------------------------------------------------------

/// The text of a criterion without Markdown: links keep their text, images, bare URLs and HTML
/// tags go, emphasis markers go, inline code keeps its text (`keep_code`) or goes; whitespace is
/// collapsed.
fn clean(s: &str, keep_code: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'`' => {
                let run = bytes[i..].iter().take_while(|c| **c == b'`').count();
                let fence = &s[i..i + run];
                // Bounded, so that many unmatched backticks stay linear.
                let window = bounded(s, i + run, MAX_SPAN);
                match window.find(fence) {
                    Some(len) => {
                        if keep_code {
                            out.push_str(s[i + run..i + run + len].trim());
                        }
                        i += run + len + run;
                    }
                    None => i += run,
                }
            }
            b'!' if bytes.get(i + 1) == Some(&b'[') => match link_at(s, i + 1) {
                Some((_, end)) => i = end,
                None => {
                    out.push('!');
                    i += 1;
                }
            },
            b'[' => match link_at(s, i) {
                Some((text, end)) => {
                    out.push_str(&clean(text, keep_code));
                    i = end;
                }
                None => {
                    out.push('[');
                    i += 1;
                }
            },
            b'<' => match tag_end(s, i) {
                Some(end) => {
                    out.push(' ');
                    i = end;
                }
                None => {
                    out.push('<');
                    i += 1;
                }
            },
            b'*' | b'_' | b'~' if bytes.get(i + 1) == Some(&b) => i += 2,
            b'h' if (s[i..].starts_with("https://") || s[i..].starts_with("http://"))
                && (i == 0 || bytes[i - 1].is_ascii_whitespace() || bytes[i - 1] == b'(') =>
            {
                i += s[i..].find(char::is_whitespace).unwrap_or(s.len() - i);
            }
            _ => {
                // Copy up to the next byte that may open markup in one go (an `h` only where
                // `http` follows: a letter of every other word must not end the run).
                let mut run = i + 1;
                while let Some(&c) = bytes.get(run) {
                    if matches!(c, b'`' | b'!' | b'[' | b'<' | b'*' | b'_' | b'~')
                        || (c == b'h' && bytes[run + 1..].starts_with(b"ttp"))
                    {
                        break;
                    }
                    run += 1;
                }
                out.push_str(&s[i..run]);
                i = run;
            }
        }
    }
    collapse_whitespace(&mut out);
    let end = out.trim_end_matches('\\').trim_end().len();
    out.truncate(end);
    // A link or image removed before punctuation leaves "page ." behind.
    if out.contains(" .") || out.contains(" ,") {
        out = out.replace(" .", ".").replace(" ,", ",");
    }
    out
}

/// Runs of whitespace to one space, none at either end, in place (the cleaning's one string).
fn collapse_whitespace(s: &mut String) {
    if !s.is_ascii() {
        // Unicode spaces (U+00A0, U+3000) count too: the general path.
        *s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        return;
    }
    let mut bytes = std::mem::take(s).into_bytes();
    let mut w = 0;
    let mut gap = false;
    for r in 0..bytes.len() {
        let b = bytes[r];
        if b.is_ascii_whitespace() || b == 0x0B {
            gap = w > 0;
            continue;
        }
        if gap {
            bytes[w] = b' ';
            w += 1;
            gap = false;
        }
        bytes[w] = b;
        w += 1;
    }
    bytes.truncate(w);
    // Only ASCII whitespace bytes were dropped or replaced by a space: still UTF-8 (ASCII).
    *s = String::from_utf8(bytes).unwrap_or_default();
}

/// How far a code span, a link's parts or a tag are looked for: the cleaning stays linear on
/// hostile input (a line of ten thousand `[`), and real spans are far shorter.
const MAX_SPAN: usize = 4096;

/// `s[from..]`, at most about `max` bytes of it, cut at a character boundary.
fn bounded(s: &str, from: usize, max: usize) -> &str {
    let mut end = (from + max).min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[from..end]
}

/// `[text](url)` or `[text][ref]` at `open`: the text and the end of the link.
fn link_at(s: &str, open: usize) -> Option<(&str, usize)> {
    let close = open + 1 + bounded(s, open + 1, MAX_SPAN).find([']', '['])?;
    if s.as_bytes()[close] != b']' {
        return None;
    }
    let text = &s[open + 1..close];
    let after = &s[close + 1..];
    let c = if after.starts_with('(') {
        ')'
    } else if after.starts_with('[') {
        ']'
    } else {
        return None;
    };
    let end = bounded(after, 0, MAX_SPAN).find(c)?;
    Some((text, close + 1 + end + 1))
}

/// The end of an HTML tag or autolink starting at `open` (`<a href=…>`, `</li>`, `<br/>`,
/// `<https://…>`).
fn tag_end(s: &str, open: usize) -> Option<usize> {
    let next = *s.as_bytes().get(open + 1)?;
    if !(next.is_ascii_alphabetic() || next == b'/' || next == b'!') {
        return None;
    }
    // A comparison ("a < b and c > d") is not a tag: a tag has no space right after `<`.
    let close = bounded(s, open, MAX_SPAN).find('>')?;
    Some(open + close + 1)
}

/// The comparison key: lower-case words of letters and digits, one space apart.
fn normalise(ac: &str) -> String {
    let mut out = String::with_capacity(ac.len());
    let mut gap = false;
    for c in ac.chars() {
        if c.is_alphanumeric() {
            if gap && !out.is_empty() {
                out.push(' ');
            }
            gap = false;
            if c.is_ascii() {
                out.push(c.to_ascii_lowercase());
            } else {
                out.extend(c.to_lowercase());
            }
        } else {
            gap = true;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Step 5: merging
// ---------------------------------------------------------------------------------------------

/// The Jaccard similarity of two token sets (one holding the other) at or above which two
/// criteria are one.
const NEAR_DUPLICATE: f64 = 0.8;
/// Each bucket compares a criterion with at most this many earlier ones, so that a body of many
/// similar lines stays linear (a body of thousands of criteria sharing their rarest words spends
/// most of its time here).
const BUCKET_CAP: usize = 8;

/// The maps of the merge and the ids: keys are the body's own words, hashed by the millions on a
/// large body, and no input of ours needs SipHash's resistance to chosen collisions (a body
/// crafted to collide costs its own run time, bounded by [`BUCKET_CAP`] where it matters).
type Map<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

/// The Fx hash (rustc's): a multiply and a rotate per word of input.
#[derive(Default)]
struct Fx(u64);

impl Fx {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.add(u64::from_le_bytes(word));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

fn merge(found: Vec<Candidate>) -> Vec<Candidate> {
    // Exact duplicates first (one map lookup each), then near-duplicates among the distinct.
    let mut kept: Vec<Candidate> = Vec::new();
    let mut by_key: Map<String, usize> = Map::default();
    for c in found {
        match by_key.get(&c.key) {
            Some(&i) => {
                if c.confidence > kept[i].confidence {
                    kept[i] = c;
                }
            }
            None => {
                by_key.insert(c.key.clone(), kept.len());
                kept.push(c);
            }
        }
    }
    drop(by_key);
    // Near-duplicates: each criterion's three smallest token hashes name its buckets; two sets
    // with Jaccard ≥ 0.8 share one of them unless the union's three smallest all fall outside the
    // intersection (odds below 1 in 100), an acceptable miss for a draft a person reviews.
    let tokens: Vec<Vec<u64>> = kept.iter().map(|c| token_hashes(&c.key)).collect();
    let mut parent: Vec<usize> = (0..kept.len()).collect();
    let mut buckets: Map<u64, Vec<usize>> = Map::default();
    for (i, t) in tokens.iter().enumerate() {
        let mut smallest = t.clone();
        smallest.truncate(3);
        let mut matched = None;
        'search: for h in &smallest {
            if let Some(members) = buckets.get(h) {
                for &j in members.iter().take(BUCKET_CAP) {
                    if near_duplicate(&kept[i].key, &kept[j].key, t, &tokens[j]) {
                        matched = Some(find(&mut parent, j));
                        break 'search;
                    }
                }
            }
        }
        if let Some(root) = matched {
            parent[i] = root;
        }
        for h in smallest {
            buckets.entry(h).or_default().push(i);
        }
    }
    let mut best: Map<usize, usize> = Map::default();
    for i in 0..kept.len() {
        let root = find(&mut parent, i);
        let entry = best.entry(root).or_insert(i);
        if kept[i].confidence > kept[*entry].confidence {
            *entry = i;
        }
    }
    let mut winners: Vec<usize> = best.into_values().collect();
    winners.sort_by_key(|&i| (kept[i].text, kept[i].line, i));
    let mut slots: Vec<Option<Candidate>> = kept.into_iter().map(Some).collect();
    winners
        .into_iter()
        .filter_map(|i| slots[i].take())
        .collect()
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The sorted, distinct FNV-1a hashes of a key's words.
fn token_hashes(key: &str) -> Vec<u64> {
    let mut out: Vec<u64> = key
        .split(' ')
        .map(|w| {
            w.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
            })
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn near_duplicate(a_key: &str, b_key: &str, a: &[u64], b: &[u64]) -> bool {
    // One must hold the other, so the Jaccard is the smaller's share of the larger: most pairs
    // of a bucket fail on their sizes alone.
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if (small.len() as f64) < NEAR_DUPLICATE * large.len() as f64 {
        return false;
    }
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    // One says all the other says, and a little more ("… on the server" / "… on the server
    // side"); a word replaced ("keeps the totals" / "keeps the dates") is another criterion.
    if union == 0
        || common < a.len().min(b.len())
        || (common as f64) / (union as f64) < NEAR_DUPLICATE
    {
        return false;
    }
    // Figures are the criterion: "within a day" and "within a day or 2" are two.
    let words_a: Vec<&str> = a_key.split(' ').collect();
    let words_b: Vec<&str> = b_key.split(' ').collect();
    let differs_in_digits = |x: &[&str], y: &[&str]| {
        x.iter()
            .any(|w| !y.contains(w) && w.bytes().any(|c| c.is_ascii_digit()))
    };
    !differs_in_digits(&words_a, &words_b) && !differs_in_digits(&words_b, &words_a)
}

// ---------------------------------------------------------------------------------------------
// Step 6: ids
// ---------------------------------------------------------------------------------------------

const MAX_ID: usize = 48;

fn assign_ids(kept: &[Candidate]) -> Vec<String> {
    let slugs: Vec<String> = kept.iter().map(|c| slug(&c.key)).collect();
    let mut count: Map<&str, usize> = Map::default();
    for s in &slugs {
        *count.entry(s.as_str()).or_default() += 1;
    }
    let mut taken: HashSet<String, BuildHasherDefault<Fx>> = HashSet::default();
    let mut out = Vec::with_capacity(kept.len());
    for (c, s) in kept.iter().zip(&slugs) {
        // `guard` would report as `stage1.floor.guard`, the regression guard's own id.
        let collides = count[s.as_str()] > 1 || s == "guard";
        // The key's hash only for a slug that collides (hashing is most of the ids' cost).
        let mut hash = None;
        let mut short_hash =
            || -> String { hash.get_or_insert_with(|| hash_hex(&c.key))[..4].to_string() };
        let mut id = if collides {
            with_suffix(s, &short_hash())
        } else {
            s.clone()
        };
        let mut n = 2;
        while !taken.insert(id.clone()) {
            id = with_suffix(s, &format!("{}-{n}", short_hash()));
            n += 1;
        }
        out.push(id);
    }
    out
}

fn with_suffix(slug: &str, suffix: &str) -> String {
    let room = MAX_ID - suffix.len() - 1;
    let mut base = truncate_words(slug, room);
    base.push('-');
    base.push_str(suffix);
    base
}

fn truncate_words(slug: &str, max: usize) -> String {
    if slug.len() <= max {
        return slug.to_string();
    }
    let cut = slug[..=max].rfind('-').filter(|&p| p > 0).unwrap_or(max);
    slug[..cut].trim_end_matches('-').to_string()
}

fn hash_hex(key: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"claim-check/derive/v1\0");
    h.update(key.as_bytes());
    hex::encode(h.finalize())
}

/// `[a-z0-9][a-z0-9-]*` from the key's words, accents folded, at most [`MAX_ID`] characters; a
/// key mostly outside ASCII (Japanese, Chinese) is `ac-` and 8 hex digits of its hash.
fn slug(key: &str) -> String {
    let mut out = String::new();
    let (mut total, mut ascii) = (0usize, 0usize);
    let mut w = String::new();
    for word in key.split(' ') {
        // A key's words are letters and digits (see [`normalise`]): an ASCII one is its slug.
        if word.is_ascii() && !word.is_empty() {
            total += word.len();
            ascii += word.len();
            if !out.is_empty() {
                out.push('-');
            }
            out.push_str(word);
            if out.len() > MAX_ID {
                break;
            }
            continue;
        }
        w.clear();
        for c in word.chars() {
            total += 1;
            if c.is_ascii_alphanumeric() {
                w.push(c);
                ascii += 1;
            } else if let Some(f) = fold_accent(c) {
                w.push_str(f);
                ascii += 1;
            } else if !w.is_empty() && !w.ends_with('-') {
                w.push('-');
            }
        }
        let trimmed = w.trim_matches('-');
        if trimmed.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(trimmed);
        if out.len() > MAX_ID {
            break;
        }
    }
    if out.is_empty() || ascii * 10 < total * 6 {
        return format!("ac-{}", &hash_hex(key)[..8]);
    }
    truncate_words(&out, MAX_ID)
}

fn fold_accent(c: char) -> Option<&'static str> {
    Some(match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => "a",
        'ç' => "c",
        'è' | 'é' | 'ê' | 'ë' => "e",
        'ì' | 'í' | 'î' | 'ï' => "i",
        'ñ' => "n",
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' => "o",
        'ù' | 'ú' | 'û' | 'ü' => "u",
        'ý' | 'ÿ' => "y",
        'ß' => "ss",
        'æ' => "ae",
        'œ' => "oe",
        _ => return None,
    })
}

#[cfg(test)]
#[path = "derive_tests.rs"]
mod tests;
