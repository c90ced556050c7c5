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
//!
//! The steps' code: [`scan`] (the line scan and each block's candidates, steps 1 to 3, with the
//! headings of [`sections`] and the word-level tests of [`words`]), [`clean`] (4), [`merge`] (5)
//! and [`ids`] (6).

mod clean;
mod ids;
mod merge;
mod scan;
mod sections;
mod words;

use serde::Serialize;

use ids::assign_ids;
use merge::merge;
use scan::Scanner;

/// One text to derive from: what it is (for the source pointer) and its body.
pub struct Text<'a> {
    pub name: &'a str,
    pub body: &'a str,
}

/// Where a criterion came from: the text's name and the 1-based line in it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Origin {
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
    pub source: Origin,
}

/// The confidence of each way a criterion is found, highest first. A person wrote a checklist
/// under an acceptance heading to say exactly this; a `should` in prose may be a wish.
pub(super) struct Confidence;

impl Confidence {
    pub(super) const CHECKLIST_UNDER_ACCEPTANCE: f64 = 0.95;
    pub(super) const LIST_UNDER_ACCEPTANCE: f64 = 0.9;
    pub(super) const CHECKLIST_UNDER_OPTIONAL: f64 = 0.9;
    pub(super) const LIST_UNDER_OPTIONAL: f64 = 0.85;
    pub(super) const CHECKLIST_ELSEWHERE: f64 = 0.8;
    pub(super) const SENTENCE_UNDER_ACCEPTANCE: f64 = 0.75;
    pub(super) const RFC_MUST: f64 = 0.7;
    pub(super) const MUST: f64 = 0.65;
    pub(super) const RFC_SHOULD: f64 = 0.55;
    pub(super) const SHOULD: f64 = 0.5;
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
            source: Origin {
                text: texts[c.text].name.to_string(),
                line: c.line,
            },
        })
        .collect()
}

#[cfg(test)]
mod tests;
