//! Step 1, the line scan: noise dropped, lines gathered into list items and paragraphs under
//! their sections, and each block's candidates with their confidence.

use std::sync::OnceLock;

use regex::Regex;

use super::clean::{clean, contains_ignore_case, normalise, starts_with_ignore_case, tag_end};
use super::sections::{heading_title, section_kind, Section, SectionKind};
use super::words::{
    introduces_conditions, is_bracketed, is_chore, is_hedged, is_placeholder, is_pointer,
    is_rfc2119_boilerplate, is_section_guidance, is_user_obligation, modal, signals,
    split_sentences,
};
use super::Confidence;

/// A criterion found in one text, before merging and ids.
pub(super) struct Candidate {
    pub(super) text: usize,
    pub(super) line: usize,
    pub(super) ac: String,
    /// `ac` normalised for comparison (see [`normalise`]).
    pub(super) key: String,
    pub(super) required: bool,
    pub(super) confidence: f64,
    pub(super) reason: String,
}

#[derive(PartialEq, Eq)]
pub(super) enum BlockKind {
    None,
    Paragraph,
    Item { checklist: bool },
}

/// The lines gathered so far into one list item or paragraph, with where each line starts.
pub(super) struct Block {
    pub(super) kind: BlockKind,
    pub(super) buf: String,
    /// (byte offset in `buf`, 1-based line) of each line folded in.
    pub(super) lines: Vec<(usize, usize)>,
}

impl Block {
    pub(super) fn push(&mut self, text: &str, line: usize) {
        if !self.buf.is_empty() {
            self.buf.push(' ');
        }
        self.lines.push((self.buf.len(), line));
        self.buf.push_str(text.trim());
    }

    /// The line of byte `offset` in `buf`.
    pub(super) fn line_at(&self, offset: usize) -> usize {
        let i = self.lines.partition_point(|(o, _)| *o <= offset);
        self.lines[i.saturating_sub(1)].1
    }
}

pub(super) struct Scanner<'f> {
    pub(super) text: usize,
    pub(super) found: &'f mut Vec<Candidate>,
    pub(super) section: Section,
    pub(super) block: Block,
    /// The fence (character, length) of the open fenced code block.
    pub(super) fence: Option<(u8, usize)>,
    pub(super) in_comment: bool,
    pub(super) in_blockquote: bool,
    /// The previous line was blank (or opened the text), so an indented line starts code.
    pub(super) after_blank: bool,
    /// The previous line was indented code.
    pub(super) in_indented_code: bool,
    /// The last block was a list item: an indented line after it continues the list.
    pub(super) after_item: bool,
    /// The paragraph just before introduces a list (see [`LeadIn`]); ended by any other block.
    pub(super) lead_in: Option<LeadIn>,
    /// The index in `found` of that paragraph's last sentence, emitted as a criterion: when a
    /// list does follow, the sentence only introduced it and goes.
    pub(super) pending_lead_in: Option<usize>,
}

/// A paragraph whose last sentence introduces the list after it: it ends with a colon, or it
/// says "the following" ("The following changes must be made to take Table GA").
pub(super) enum LeadIn {
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
    pub(super) fn new(text: usize, found: &'f mut Vec<Candidate>) -> Scanner<'f> {
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

    pub(super) fn run(mut self, body: &str) {
        // One reusable buffer for lines that lose an HTML comment: most lines are borrowed as is.
        let mut uncommented = String::new();
        for (i, raw) in body.split('\n').enumerate() {
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            self.line(line, i + 1, &mut uncommented);
        }
        self.flush();
    }

    pub(super) fn line(&mut self, line: &str, number: usize, uncommented: &mut String) {
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
    pub(super) fn strip_comments(&mut self, line: &str, out: &mut String) -> Option<()> {
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
    pub(super) fn quoted(&mut self, trimmed: &str) -> bool {
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
    pub(super) fn end_lead_in(&mut self) {
        self.lead_in = None;
        self.pending_lead_in = None;
    }

    pub(super) fn heading(&mut self, level: u8, raw: &str) {
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

    pub(super) fn flush(&mut self) {
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

    pub(super) fn item(&mut self, checklist: bool) {
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

    pub(super) fn paragraph(&mut self) {
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
    pub(super) fn lead_in_of_block(&self) -> Option<LeadIn> {
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
    pub(super) fn sentences(&mut self, under_acceptance: bool) {
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

    pub(super) fn sentence(&mut self, sentence: &str, line: usize, under_acceptance: bool) {
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

    pub(super) fn emit(
        &mut self,
        line: usize,
        ac: String,
        required: bool,
        confidence: f64,
        reason: String,
    ) {
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

pub(super) fn indent_width(line: &str) -> usize {
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

pub(super) fn fence_open(trimmed: &str) -> Option<(u8, usize)> {
    let first = *trimmed.as_bytes().first()?;
    if first != b'`' && first != b'~' {
        return None;
    }
    let len = trimmed.bytes().take_while(|b| *b == first).count();
    // A backtick fence's info string may not hold a backtick (else it is inline code).
    let info = &trimmed[len..];
    (len >= 3 && (first == b'~' || !info.contains('`'))).then_some((first, len))
}

pub(super) fn atx_heading(trimmed: &str) -> Option<(u8, String)> {
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

pub(super) fn setext_underline(trimmed: &str) -> Option<u8> {
    let first = *trimmed.as_bytes().first()?;
    if (first == b'=' || first == b'-') && trimmed.bytes().all(|b| b == first) {
        return Some(if first == b'=' { 1 } else { 2 });
    }
    None
}

pub(super) fn is_thematic_break(trimmed: &str) -> bool {
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
pub(super) fn list_item(trimmed: &str) -> Option<(bool, &str)> {
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
pub(super) fn pseudo_heading(trimmed: &str, standalone: bool) -> Option<(String, &str)> {
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
pub(super) fn is_html_block_line(trimmed: &str) -> bool {
    trimmed.starts_with('<') && tag_end(trimmed, 0).is_some()
}

/// A row of a Markdown table: it starts with `|`, or holds at least two cell separators.
pub(super) fn is_table_row(trimmed: &str) -> bool {
    trimmed.starts_with('|') || trimmed.bytes().filter(|b| *b == b'|').count() >= 2
}

/// Lines that are never intent: issue references that close or relate (`Fixes #12`, `Closes
/// acme/web#3`), trailers (`Signed-off-by:`), and carbon copies (`cc @team`).
pub(super) fn is_noise_line(trimmed: &str) -> bool {
    pub(super) const TRAILERS: &[&str] = &[
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

pub(super) fn issue_reference() -> &'static Regex {
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
