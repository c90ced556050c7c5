//! The claim the run checks (book: claims.md): read from git or the named file, or derived as a
//! draft from the change's text, and what the result says about it.

use super::shown_path;
use crate::acceptance::{self, claim, AcceptanceSet};
use crate::cli::ClaimCheckArgs;
use crate::error::{Error, InputError};
use crate::git::{CommitId, Git};
use crate::report::{self, AcceptanceInfo, InheritedCriterion};
use crate::verdict;

/// The claim the run checks: the acceptance set and where it came from (`explicit`, `files` or
/// `derived`, as [`load_claim`] says).
pub(super) struct ClaimInfo {
    pub set: AcceptanceSet,
    pub source: String,
}

/// The change's claim (book: claims.md): the file named with `--acceptance`; else the criteria
/// base..head adds or changes, read from git at both sides; else, when that is nothing, a draft
/// derived from `--from`, the pull request's description or the commit messages. Nothing at
/// all is an input error that says how to give intent. Returns the claim and its source
/// (`explicit`, `files` or `derived`).
pub(super) fn load_claim(
    args: &ClaimCheckArgs,
    git: &Git,
    base: &CommitId,
    head: &CommitId,
    located: Option<&acceptance::Located>,
) -> Result<(claim::Claim, String), Error> {
    let head_files = claim::Files::read(&claim::FileSource::Commit(git, head), true)?;
    let base_files = claim::Files::read(&claim::FileSource::Commit(git, base), false)?;
    if let Some(l) = located {
        let mut file = acceptance::load(l)?;
        // Named as the reports and the VSA name it, so that `replay --rerun` finds the same.
        file.display_path = shown_path(&l.path, git.root());
        return Ok((
            claim::explicit(file, &head_files, Some(&base_files)),
            "explicit".into(),
        ));
    }
    let found = claim::compare(&head_files, Some(&base_files));
    if !found.set.criteria.is_empty() {
        return Ok((found, "files".into()));
    }
    for (what, texts) in &intent_texts(args, git, base, head)? {
        let Some(criteria) = draft_criteria(texts, &found.set) else {
            continue;
        };
        let source = format!("{what} (derived draft)");
        return Ok((
            claim::derived(criteria, &source, &head_files, Some(&base_files)),
            "derived".into(),
        ));
    }
    Err(claims_nothing(git, base, head, &found, &head_files))
}

/// One text a draft may be derived from: its name in source pointers, and its words.
type NamedText = (String, String);

/// The texts a draft claim may be derived from, in order: `--from`, the pull request's title
/// and description, the commit messages of base..head; each group with what it is, in words.
fn intent_texts(
    args: &ClaimCheckArgs,
    git: &Git,
    base: &CommitId,
    head: &CommitId,
) -> Result<Vec<(String, Vec<NamedText>)>, Error> {
    let mut texts: Vec<(String, Vec<NamedText>)> = Vec::new();
    if let Some(from) = &args.from {
        let bytes = crate::nofollow::read_named(from, crate::acceptance::ACCEPTANCE_LIMIT)
            .map_err(|e| Error::input(crate::nofollow::named_input_error(from, "--from", &e)))?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::input(
                InputError::new("--from is not UTF-8 text")
                    .in_file(from.display().to_string())
                    .help("save the file as UTF-8"),
            )
        })?;
        let what = format!("--from {}", from.display());
        texts.push((what.clone(), vec![(what, text)]));
    }
    if let Some(event) = crate::action::event() {
        let text = |field: &str| {
            event
                .pointer(&format!("/pull_request/{field}"))
                .and_then(|t| t.as_str())
        };
        // A `null` description with a title is still the pull request's text.
        if text("body").is_some() || text("title").is_some() {
            let body = text("body").unwrap_or_default();
            let (what, name) = match event
                .pointer("/pull_request/number")
                .and_then(|n| n.as_u64())
            {
                Some(n) => (
                    format!("pull request #{n}'s description"),
                    format!("pull request #{n}"),
                ),
                None => (
                    "the pull request's description".to_string(),
                    "the pull request".to_string(),
                ),
            };
            let title = text("title").unwrap_or_default();
            texts.push((
                what,
                vec![
                    (format!("{name}'s title"), title.to_string()),
                    (name, body.to_string()),
                ],
            ));
        }
    }
    // As before: commits whose log cannot be read give no text (the run goes on without).
    if let Ok(messages) = git.messages(base, head) {
        let messages = messages
            .into_iter()
            .map(|(commit, message)| (format!("commit {}", commit.short()), message))
            .collect();
        texts.push(("the commit messages".into(), messages));
    }
    Ok(texts)
}

/// The criteria derived from `texts`, none when there are none; `found` holds the inherited
/// criteria, whose ids a draft does not take (as `acceptance derive` does not take another
/// file's).
fn draft_criteria(
    texts: &[NamedText],
    found: &AcceptanceSet,
) -> Option<Vec<acceptance::Criterion>> {
    let named: Vec<acceptance::derive::Text<'_>> = texts
        .iter()
        .map(|(name, body)| acceptance::derive::Text { name, body })
        .collect();
    let mut derived = acceptance::derive::derive(&named);
    if derived.is_empty() {
        return None;
    }
    let taken: std::collections::BTreeSet<String> = found
        .inherited_criteria
        .iter()
        .map(|c| c.id.clone())
        .collect();
    acceptance::draft::settle_ids(&mut derived, &[], &taken);
    Some(acceptance::draft::criteria(&derived))
}

/// The input error of a change that claims nothing, saying how to give it intent (and which
/// claim files are there but not committed).
fn claims_nothing(
    git: &Git,
    base: &CommitId,
    head: &CommitId,
    found: &claim::Claim,
    head_files: &claim::Files,
) -> Error {
    let inherited = found.set.inherited_criteria.len();
    let uncommitted: Vec<String> =
        claim::Files::read(&claim::FileSource::Worktree(git.root()), false)
            .map(|w| {
                w.files
                    .into_iter()
                    .map(|f| f.path)
                    .filter(|p| head_files.files.iter().all(|h| &h.path != p))
                    .collect()
            })
            .unwrap_or_default();
    let mut help = "give the change its intent in one of three ways: (1) add its criteria as `.shipmoor/changes/<name>.yaml` (or edit a criterion of `.shipmoor/acceptance.yaml`) and commit it; (2) derive a draft from a text with `shipmoor acceptance derive --from FILE` (or pass `--from FILE` here); (3) put a `## Acceptance criteria` checklist (`- [ ] …`) in the pull request's description or a commit message".to_string();
    if !uncommitted.is_empty() {
        help.push_str(&format!(
            "; note: {} is not committed, and claim-check reads the change from git",
            uncommitted.join(", ")
        ));
    }
    Error::input(
        InputError::new(format!(
            "this change claims nothing: base..head ({}..{}) adds or changes no acceptance criterion{}, and there is no text with criteria to derive a draft from",
            base.short(),
            head.short(),
            match inherited {
                0 => String::new(),
                1 => " (1 criterion is inherited from an earlier change)".to_string(),
                n => format!(" ({n} criteria are inherited from earlier changes)"),
            }
        ))
        .help(help),
    )
}

/// The fused rule as a sentence; the draft gate says how to commit this claim's own draft.
pub(super) fn draft_reason(fused: &verdict::Fused, set: &AcceptanceSet, source: &str) -> String {
    if fused.rule != verdict::Rule::DraftGate
        || set.display_path == ".shipmoor/acceptance.yaml.draft"
        || source == "explicit"
    {
        return report::fused_reason(fused);
    }
    if source == "derived" {
        return format!(
            "acceptance set is a draft derived from {}; write its criteria as .shipmoor/changes/<name>.yaml and commit it",
            set.display_path.trim_end_matches(" (derived draft)")
        );
    }
    let drafts: Vec<&str> = set
        .criteria
        .iter()
        .filter_map(|c| set.origin.get(&c.id))
        .filter(|f| f.ends_with(".draft"))
        .map(String::as_str)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    format!(
        "acceptance set is a draft; commit {} with `shipmoor acceptance commit`",
        drafts.join(", ")
    )
}

/// The command line that turns a draft claim into this change's committed file: for a claim
/// derived from text, `acceptance derive` from the same text first.
fn commit_command(set: &AcceptanceSet, source: &str, base: &CommitId, head: &CommitId) -> String {
    const COMMIT: &str = "shipmoor acceptance commit";
    if source != "derived" {
        return COMMIT.to_string();
    }
    let what = set.display_path.trim_end_matches(" (derived draft)");
    let derive = if let Some(from) = what.strip_prefix("--from ") {
        format!("shipmoor acceptance derive --from {from}")
    } else if let Some(n) = what
        .strip_prefix("pull request #")
        .and_then(|r| r.split('\'').next())
    {
        format!("gh pr view {n} --json body -q .body | shipmoor acceptance derive --from -")
    } else {
        format!(
            "shipmoor acceptance derive --from-commits {}..{}",
            base.short(),
            head.short()
        )
    };
    format!("{derive} && {COMMIT}")
}

/// What the result says about the claim; `path` is its file as reports show it, `base` and
/// `head` the commits the run checked.
pub(super) fn acceptance_info(
    set: &AcceptanceSet,
    path: &str,
    source: &str,
    (base, head): (&CommitId, &CommitId),
) -> AcceptanceInfo {
    let draft = (set.state == acceptance::AcceptanceState::Draft).then(|| report::DraftInfo {
        commit: commit_command(set, source, base, head),
        criteria: set
            .criteria
            .iter()
            .map(|c| report::DraftCriterion {
                id: c.id.clone(),
                tag: c.tag.clone(),
                ac: c.ac.clone(),
                required: c.required,
                confidence: c.confidence.map(|k| k.value()),
                source: c.source.clone(),
            })
            .collect(),
    });
    AcceptanceInfo {
        draft,
        path: path.to_string(),
        state: set.state,
        sha256: set.sha256.clone(),
        source: source.to_string(),
        inherited: set
            .inherited_criteria
            .iter()
            .map(|c| InheritedCriterion {
                id: c.id.clone(),
                file: set.origin.get(&c.id).cloned().unwrap_or_default(),
            })
            .collect(),
        inherited_policy: set.inherited,
    }
}
