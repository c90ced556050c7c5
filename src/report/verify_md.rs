//! `verify.md`: the Markdown report, after the verification playbook's `verify.md`. Every section
//! is wrapped in `<!-- section:TAG -->…<!-- /section:TAG -->`; the body stays within
//! [`BODY_LINE_BUDGET`] lines outside `<details>` (long tables and the claim records that do not
//! fit are folded into `<details>` blocks, each bounded too).
//!
//! Sections: Verdict, Metrics, Quality Gate (the floor table), Review Findings (one row per
//! judge finding, after the playbook's reviewer findings, and each citation's check),
//! Runtime Verification (commands run, failing excerpts), UAT (one `Verification Claim` record
//! per criterion), and last `## Deferred to TODO`.

use std::fmt::Write;

use super::fixes::FixPacket;
use super::{citation_at, short_pointer, BaseCacheState, CriterionResult, RunResult};
use crate::acceptance::Lane;
use crate::format::Mode;
use crate::judge::audit;
use crate::judge::{CheckedCitation, CitationCheck, Finding, Identity};
use crate::verdict::{JudgeResult, Verdict};

pub const BODY_LINE_BUDGET: usize = 120;
const TABLE_ROWS_IN_BODY: usize = 30;
/// The judge's tables share the body with the claim records: fewer rows each before the fold.
const JUDGE_ROWS_IN_BODY: usize = 10;
/// A finding's text in its table cell, in characters.
const FINDING_CELL_CHARS: usize = 160;
const EXCERPT_LINES: usize = 12;
const MAX_EXCERPTS: usize = 3;

pub fn render(r: &RunResult, packet: &FixPacket) -> String {
    let mut doc = Doc::default();
    doc.line(&format!(
        "# Claim Check — {} · policy {}",
        r.verdict.as_str(),
        r.policy
    ));
    doc.blank();
    verdict(&mut doc, r);
    metrics(&mut doc, r, packet);
    quality_gate(&mut doc, r);
    review_findings(&mut doc, r);
    runtime(&mut doc, r);
    // The claim records get what is left of the budget once the last section is accounted for.
    let mut tail = Doc::default();
    deferred(&mut tail, packet);
    let reserve = tail.body_lines() + 1;
    uat(&mut doc, r, BODY_LINE_BUDGET.saturating_sub(reserve));
    doc.append(tail);
    crate::text::visible(&doc.text)
}

pub fn status(v: Verdict) -> &'static str {
    match v {
        Verdict::Ready | Verdict::ReadyWithGaps => "passed",
        Verdict::Blocked => "failed",
        Verdict::Inconclusive => "blocked",
    }
}

/// Lines outside `<details>` blocks.
pub fn body_lines(md: &str) -> usize {
    let mut depth = 0usize;
    let mut n = 0;
    for line in md.lines() {
        let t = line.trim();
        if t.starts_with("<details") {
            depth += 1;
            continue;
        }
        if t.starts_with("</details>") {
            depth = depth.saturating_sub(1);
            continue;
        }
        if depth == 0 {
            n += 1;
        }
    }
    n
}

#[derive(Default)]
struct Doc {
    text: String,
}

impl Doc {
    fn line(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
    }
    /// A `key: value` line as a list item: GitHub joins consecutive plain lines into one
    /// paragraph, and a list keeps each on its own line (and `key:` still greps).
    fn item(&mut self, s: &str) {
        self.line(&format!("- {s}"));
    }
    fn blank(&mut self) {
        self.text.push('\n');
    }
    fn open(&mut self, tag: &str, heading: &str) {
        self.line(&format!("<!-- section:{tag} -->"));
        self.line(heading);
    }
    fn close(&mut self, tag: &str) {
        self.line(&format!("<!-- /section:{tag} -->"));
        self.blank();
    }
    fn body_lines(&self) -> usize {
        body_lines(&self.text)
    }
    fn append(&mut self, other: Doc) {
        self.text.push_str(&other.text);
    }
    /// A table whose rows past the first `TABLE_ROWS_IN_BODY` fold into `<details>`.
    fn table(&mut self, header: &str, rows: &[String], what: &str) {
        self.table_folded(header, rows, what, TABLE_ROWS_IN_BODY);
    }
    /// A table whose rows past the first `in_body` fold into `<details>`.
    fn table_folded(&mut self, header: &str, rows: &[String], what: &str, in_body: usize) {
        self.line(header);
        let sep = format!(
            "|{}",
            "---|".repeat(header.matches('|').count().saturating_sub(1))
        );
        self.line(&sep);
        for row in rows.iter().take(in_body) {
            self.line(row);
        }
        if rows.len() > in_body {
            self.blank();
            self.line("<details>");
            self.line(&format!(
                "<summary>{} more {what}</summary>",
                rows.len() - in_body
            ));
            self.blank();
            self.line(header);
            self.line(&sep);
            for row in &rows[in_body..] {
                self.line(row);
            }
            self.line("</details>");
        }
    }
}

/// Table cells: no pipes or newlines.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A token longer than this (a test id, a path) gets places to break: a table's column is never
/// narrower than its longest unbroken word, and GitHub's column is about 1,012 px.
const LONG_TOKEN_CHARS: usize = 40;

/// A part of a token between `/` and `::` longer than this (about 480 px) breaks at its `_` too.
const LONG_PART_CHARS: usize = 60;

/// `token` with `<wbr>` (which GitHub's sanitizer keeps) after each `/`, `::`, `=` and `,`, and in a
/// part still long after that, after each `_`: where a reader expects an id to wrap.
fn break_token(token: &str) -> String {
    if token.chars().count() <= LONG_TOKEN_CHARS || token.contains('`') {
        return token.to_string();
    }
    let mut out = String::new();
    let mut part = String::new();
    let flush = |part: &mut String, out: &mut String| {
        if part.chars().count() > LONG_PART_CHARS {
            out.push_str(&part.replace('_', "_<wbr>"));
        } else {
            out.push_str(part);
        }
        part.clear();
    };
    let mut chars = token.chars().peekable();
    while let Some(ch) = chars.next() {
        part.push(ch);
        let at_break = match ch {
            '/' | '=' | ',' => true,
            ':' if chars.peek() != Some(&':') && part.ends_with("::") => true,
            _ => false,
        };
        if at_break && chars.peek().is_some() {
            flush(&mut part, &mut out);
            out.push_str("<wbr>");
        }
    }
    flush(&mut part, &mut out);
    out
}

/// A command in the runtime table: its program (with a subcommand, or `python3 -m MODULE`) and
/// its operands after the last option (the test files or the test, usually), the options
/// between elided. The whole command is in the fold under the table.
fn short_command(cmd: &str) -> String {
    const SHORT_COMMAND_CHARS: usize = 60;
    const OPERANDS: usize = 3;
    if cmd.chars().count() <= SHORT_COMMAND_CHARS {
        return cmd.to_string();
    }
    let words: Vec<&str> = cmd.split(' ').filter(|w| !w.is_empty()).collect();
    let program = if words.get(1) == Some(&"-m") {
        3.min(words.len())
    } else {
        words
            .iter()
            .take(2)
            .take_while(|w| !w.starts_with('-'))
            .count()
            .max(1)
    };
    let rest = &words[program..];
    let operands: &[&str] = match rest.iter().rposition(|w| w.starts_with('-')) {
        None => rest,
        Some(i) => {
            // An option without `=` may take the next word as its value (`-p plugin`); `--`
            // only ends the options.
            let takes_value = rest[i] != "--" && !rest[i].contains('=');
            let start = (i + 1 + usize::from(takes_value)).min(rest.len());
            &rest[start..]
        }
    };
    let mut out = words[..program].join(" ");
    if operands.len() < rest.len() {
        out.push_str(" …");
    }
    for w in operands.iter().take(OPERANDS) {
        out.push(' ');
        out.push_str(w);
    }
    if operands.len() > OPERANDS {
        out.push_str(" …");
    }
    out
}

/// A cell's text with its long tokens breakable.
fn breakable(s: &str) -> String {
    s.split(' ').map(break_token).collect::<Vec<_>>().join(" ")
}

/// A code cell: `` `text` ``, or, when a token in it is long, `<code>` with break points (a
/// code span would print `<wbr>` as text).
fn code_cell(s: &str) -> String {
    let s = cell(s);
    if !s.split(' ').any(|t| t.chars().count() > LONG_TOKEN_CHARS) {
        return format!("`{}`", s.replace('`', "'"));
    }
    let escaped = s
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    let broken: Vec<String> = escaped
        .split(' ')
        .map(|t| {
            if t.chars().count() > LONG_TOKEN_CHARS {
                break_token(&t.replace('`', "'"))
            } else {
                t.to_string()
            }
        })
        .collect();
    format!("<code>{}</code>", broken.join(" "))
}

fn counts(r: &RunResult, required: bool) -> (usize, usize, usize) {
    let mut v = (0, 0, 0);
    for c in r.criteria.iter().filter(|c| c.required == required) {
        match c.claim_verdict() {
            "VERIFIED" => v.0 += 1,
            "NOT VERIFIED" => v.1 += 1,
            _ => v.2 += 1,
        }
    }
    v
}

fn verdict(doc: &mut Doc, r: &RunResult) {
    doc.open("verdict", "### Verdict");
    doc.item(&format!("status: {}", status(r.verdict)));
    doc.item(&format!("verdict: {}", r.verdict.as_str()));
    doc.item(&format!("exit_code: {}", r.exit_code));
    doc.item(&format!("rule: {} ({})", r.rule, r.rule_reason));
    doc.item(&format!("mode: {}", r.mode));
    doc.item(&format!(
        "base: {} · head: {}",
        r.base.short(),
        r.head.short()
    ));
    doc.item(&format!(
        "acceptance: {} ({}, {})",
        r.acceptance.path,
        r.acceptance.state.as_str(),
        short_pointer(&format!("sha256:{}", r.acceptance.sha256))
    ));
    if let Some(line) = r.acceptance.inherited_line() {
        doc.item(&format!("inherited: {line}"));
    }
    let (rv, rn, ri) = counts(r, true);
    let (av, an, ai) = counts(r, false);
    doc.item(&format!(
        "claim_records: required VERIFIED={rv} NOT VERIFIED={rn} INCONCLUSIVE={ri}; advisory VERIFIED={av} NOT VERIFIED={an} INCONCLUSIVE={ai}"
    ));
    doc.item(&format!(
        "attestation: {} ({})",
        r.outputs.vsa, r.signing.state
    ));
    doc.item(&format!(
        "started_at: {} · completed_at: {} · duration_seconds: {}",
        r.started_at, r.completed_at, r.duration_seconds
    ));
    doc.close("verdict");
}

fn metrics(doc: &mut Doc, r: &RunResult, p: &FixPacket) {
    doc.open("metrics", "### Metrics");
    doc.item(&format!("status: {}", status(r.verdict)));
    doc.item(&format!("duration_seconds: {}", r.duration_seconds));
    doc.item(&format!("criteria_total: {}", r.criteria.len()));
    doc.item(&format!(
        "claim_records_required_not_verified: {}",
        counts(r, true).1
    ));
    doc.item(&format!(
        "blocking_findings_count: {}",
        blocking_fixes(r, p)
    ));
    doc.item(&format!("route_to_human_count: {}", p.route_to_human.len()));
    doc.item(&format!("author_checks_count: {}", p.author_checks.len()));
    doc.item(&format!("runtime_checks_count: {}", r.runtime.len()));
    doc.item(&format!(
        "harness_changes_count: {}",
        r.harness_changes.len()
    ));
    if !r.findings.is_empty() {
        judge_metrics(doc, &r.findings);
    }
    doc.close("metrics");
}

/// The fixes that block: every judge's confirmed block, and a floor miss only on a criterion
/// that blocks (a required one); an optional criterion's miss is a gap the verdict allows.
fn blocking_fixes(r: &RunResult, p: &FixPacket) -> usize {
    p.fixes
        .iter()
        .filter(|f| {
            // A judge's fix names the judge's requirement, which several criteria share: it is
            // a confirmed block, whichever criterion it is on.
            f.evidence.kind == crate::format::fixes::EvidenceKind::Judge
                || r.criteria
                    .iter()
                    .find(|c| c.requirement == f.requirement)
                    .map(CriterionResult::blocks)
                    .unwrap_or(true)
        })
        .count()
}

/// The judge's counts, and its token usage when the endpoint reported any.
fn judge_metrics(doc: &mut Doc, findings: &[Finding]) {
    let blocks = findings
        .iter()
        .filter(|f| f.result == JudgeResult::Block)
        .count();
    let citations = findings.iter().flat_map(|f| &f.citations);
    let unresolved = citations
        .clone()
        .filter(|c| c.check != CitationCheck::Resolved)
        .count();
    doc.item(&format!("judge_findings_count: {}", findings.len()));
    doc.item(&format!("judge_blocks_count: {blocks}"));
    doc.item(&format!(
        "warning_findings_count: {}",
        findings.len() - blocks
    ));
    doc.item(&format!("citations_checked_count: {}", citations.count()));
    doc.item(&format!("citations_unresolved_count: {unresolved}"));
    let usage: Vec<_> = findings.iter().filter_map(|f| f.usage).collect();
    if !usage.is_empty() {
        let prompt: u64 = usage.iter().map(|u| u.prompt_tokens).sum();
        let completion: u64 = usage.iter().map(|u| u.completion_tokens).sum();
        doc.item(&format!("judge_prompt_tokens: {prompt}"));
        doc.item(&format!("judge_completion_tokens: {completion}"));
    }
}

fn quality_gate(doc: &mut Doc, r: &RunResult) {
    doc.open("quality-gate", "### Quality Gate");
    let rows: Vec<String> = r
        .criteria
        .iter()
        .filter(|c| c.lane == Lane::Floor)
        .map(|c| {
            format!(
                "| {} | {} | {} | {} | {} | {} |",
                cell(&c.ac),
                c.requirement,
                c.floor.base_summary,
                c.floor.head_summary,
                c.floor.result.as_str(),
                c.floor
                    .evidence
                    .as_ref()
                    .map(|e| short_pointer(&e.pointer))
                    .unwrap_or_else(|| "—".into())
            )
        })
        .collect();
    if rows.is_empty() {
        doc.line("No floor-lane criteria.");
    } else {
        doc.table(
            "| criterion | requirement | base | head | floor result | evidence |",
            &rows,
            "floor rows",
        );
    }
    doc.blank();
    if r.overlay.is_empty() {
        doc.item("Laid over base from head: no files.");
    } else {
        let shown: Vec<&str> = r.overlay.iter().take(5).map(|s| s.as_str()).collect();
        let more = r.overlay.len().saturating_sub(5);
        doc.item(&format!(
            "Laid over base from head: {}{}.",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ));
    }
    if !r.overlay_spliced.is_empty() {
        doc.item(&format!(
            "Test items only (head's test modules and tests spliced into base's version): {}.",
            r.overlay_spliced.join(", ")
        ));
    }
    if r.harness_changes.is_empty() {
        doc.item("Harness files changed: none.");
    } else {
        doc.item(&format!(
            "Harness files changed: {}.",
            r.harness_changes.join(", ")
        ));
    }
    doc.close("quality-gate");
}

/// Who a judge is, in a cell: its command's digest, or its model and endpoint.
fn identity_cell(id: &Identity) -> String {
    match id {
        Identity::Command { sha256, .. } => {
            format!("command {}", short_pointer(&format!("sha256:{sha256}")))
        }
        Identity::Chat { url, model } => format!("{} at {}", cell(model), cell(url)),
    }
}

fn check_words(c: CitationCheck) -> &'static str {
    match c {
        CitationCheck::Resolved => "resolved",
        CitationCheck::NoSuchFile => "no such file at head",
        CitationCheck::QuoteNotFound => "quote not within 3 lines",
    }
}

/// A finding's row: its evidence cell names the block's pointer, each citation with its
/// check, and the judge's response record.
fn finding_row(f: &Finding) -> String {
    let (severity, disposition) = match (f.result, &f.downgraded) {
        (JudgeResult::Block, _) => ("BLOCKING", "confirmed block → fix".to_string()),
        (_, Some(d)) => ("WARNING", format!("abstain ({}) → human", cell(d))),
        _ => ("WARNING", "abstain → human".to_string()),
    };
    let record = f
        .response_evidence
        .as_deref()
        .unwrap_or(&f.request_evidence);
    let mut evidence = Vec::new();
    if let (JudgeResult::Block, Some(p)) = (f.result, &f.pointer) {
        evidence.push(format!("pointer {}", citation_at(p)));
    }
    if f.citations.is_empty() {
        evidence.push("no citations".to_string());
    } else {
        evidence.push(
            distinct(&f.citations)
                .into_iter()
                .map(|c| format!("{} {}", citation_at(&c.citation), check_words(c.check)))
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    evidence.push(short_pointer(record));
    format!(
        "| {} | {} | {}: {} | {severity} | {} | {disposition} |",
        cell(&f.judge),
        identity_cell(&f.identity),
        cell(&f.criterion),
        cell(&crate::text::cut(&audit::reason(f), FINDING_CELL_CHARS)),
        cell(&evidence.join("; ")),
    )
}

/// A finding's citations, each once: a block's pointer is usually also an obligation's
/// citation, and the same place checked twice says nothing more.
fn distinct(citations: &[CheckedCitation]) -> Vec<&CheckedCitation> {
    let mut seen = Vec::new();
    for c in citations {
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    seen
}

fn citation_rows(findings: &[Finding]) -> Vec<String> {
    findings
        .iter()
        .flat_map(|f| {
            distinct(&f.citations).into_iter().map(move |c| {
                format!(
                    "| {} | {} | {} | `{}` | {} |",
                    cell(&f.judge),
                    cell(&f.criterion),
                    cell(&citation_at(&c.citation)),
                    cell(&crate::text::cut(&c.citation.quote, 60)).replace('`', "'"),
                    check_words(c.check)
                )
            })
        })
        .collect()
}

/// One row per judge finding (lens, judge, finding, severity, evidence with each citation's
/// check, disposition), the citations with their quotes folded below, then the notes about
/// the panel. The claim records share the body's budget, so only the findings stay unfolded.
fn judge_findings(doc: &mut Doc, r: &RunResult) {
    let rows: Vec<String> = r.findings.iter().map(finding_row).collect();
    doc.table_folded(
        "| lens | judge | finding | severity | evidence | disposition |",
        &rows,
        "judge findings",
        JUDGE_ROWS_IN_BODY,
    );
    let citations = citation_rows(&r.findings);
    if !citations.is_empty() {
        doc.blank();
        doc.line("<details>");
        doc.line(&format!(
            "<summary>{} citations checked against the head tree</summary>",
            citations.len()
        ));
        doc.blank();
        doc.table_folded(
            "| lens | criterion | citation | quote | check |",
            &citations,
            "citations",
            citations.len(),
        );
        doc.line("</details>");
    }
    for note in &r.judge_notes {
        doc.blank();
        doc.line(&format!("Note: {}", note.replace('\n', " ")));
    }
}

fn review_findings(doc: &mut Doc, r: &RunResult) {
    doc.open("review-findings", "### Review Findings");
    if !r.findings.is_empty() {
        judge_findings(doc, r);
        doc.close("review-findings");
        return;
    }
    let judged: Vec<&CriterionResult> = r
        .criteria
        .iter()
        .filter(|c| c.judge.result != JudgeResult::None)
        .collect();
    if judged.is_empty() {
        let open = r
            .criteria
            .iter()
            .filter(|c| c.lane == Lane::Judge || !c.floor.result.settled())
            .count();
        let routed = if open == 1 {
            "1 criterion the floor did not settle is routed as below.".to_string()
        } else {
            format!("{open} criteria the floor did not settle are routed as below.")
        };
        if r.mode == Mode::Fast {
            doc.line(&format!("No judge ran (fast mode); {routed}"));
        } else {
            doc.line(&format!("The judge gave no findings; {routed}"));
        }
    } else {
        let rows: Vec<String> = judged
            .iter()
            .map(|c| {
                format!(
                    "| {} | {} | {} | {} |",
                    cell(&c.ac),
                    c.judge.result.as_str(),
                    cell(c.judge.rationale.as_deref().unwrap_or("—")),
                    "—"
                )
            })
            .collect();
        doc.table(
            "| criterion | decision | rationale | pointer |",
            &rows,
            "judge rows",
        );
    }
    doc.close("review-findings");
}

fn runtime(doc: &mut Doc, r: &RunResult) {
    doc.open("runtime-verification", "### Runtime Verification");
    if r.runtime.is_empty() {
        doc.line("No commands ran: no criterion is bound to a test or a command.");
    } else {
        let rows: Vec<String> = r
            .runtime
            .iter()
            .enumerate()
            .map(|(i, row)| {
                format!(
                    "| {} | {} | {} | {} | {} | {} | {:.1} |",
                    i + 1,
                    row.side,
                    row.runner,
                    code_cell(&short_command(&row.command)),
                    row.tests,
                    cell(&row.result),
                    row.seconds
                )
            })
            .collect();
        doc.table(
            "| # | side | runner | command | tests | result | seconds |",
            &rows,
            "commands",
        );
        if let Some(line) = super::sandbox_line(r) {
            doc.blank();
            doc.item(&cell(&line));
        }
        if let Some(u) = &r.base_cache {
            doc.blank();
            doc.item(&match u.state {
                BaseCacheState::Reused => format!(
                    "base did not run: its results were reused from the base cache {} (entry `{}`, observed at head `{}` on {}); the records cited are that run's",
                    cell(&u.dir),
                    u.entry.as_deref().unwrap_or(""),
                    crate::text::short_commit(u.observed_at_head.as_deref().unwrap_or("")),
                    u.observed_at.as_deref().unwrap_or("")
                ),
                _ => format!(
                    "base cache {}: {}",
                    cell(&u.dir),
                    cell(u.note.as_deref().unwrap_or(""))
                ),
            });
        }
        // Which tool ran, where more than one could have (which Python ran pytest), once each.
        let mut tools: Vec<(&str, &str)> = Vec::new();
        for row in &r.runtime {
            if let Some(t) = row.tool.as_deref() {
                if !tools.contains(&(row.runner.as_str(), t)) {
                    tools.push((row.runner.as_str(), t));
                }
            }
        }
        if !tools.is_empty() {
            doc.blank();
            for (runner, tool) in tools {
                doc.item(&format!("{runner} ran as {}", cell(tool)));
            }
        }
        // The commands in full, by the rows' numbers, when the table shortened any: in a list
        // they wrap at the page's width, where in the table the longest one would squeeze every
        // other column.
        if r.runtime
            .iter()
            .any(|row| short_command(&row.command) != row.command)
        {
            doc.blank();
            doc.line("<details>");
            doc.line("<summary>the commands in full</summary>");
            doc.blank();
            for (i, row) in r.runtime.iter().enumerate() {
                doc.line(&format!(
                    "{}. `{}`",
                    i + 1,
                    row.command.replace('\n', " ").replace('`', "'")
                ));
            }
            doc.line("</details>");
        }
        let mut shown = 0;
        for row in r.runtime.iter().filter(|row| row.excerpt.is_some()) {
            if shown == MAX_EXCERPTS {
                break;
            }
            let Some(ex) = &row.excerpt else { continue };
            let lines: Vec<&str> = ex.lines().collect();
            let start = lines.len().saturating_sub(EXCERPT_LINES);
            doc.blank();
            doc.line("<details>");
            doc.line(&format!(
                "<summary>{}: {} ({}, excerpt)</summary>",
                row.side,
                cell(&row.command).chars().take(100).collect::<String>(),
                cell(&row.result)
            ));
            doc.blank();
            doc.line("```");
            for l in &lines[start..] {
                doc.line(&l.replace("```", "'''"));
            }
            doc.line("```");
            doc.line("</details>");
            shown += 1;
        }
    }
    doc.close("runtime-verification");
}

fn claim_record(c: &CriterionResult) -> Vec<String> {
    let f = &c.floor;
    let (condition, observable, threshold) = match f.binding.as_str() {
        "judge_lane" => (
            "a person (or the judge, in full mode) reads the change".to_string(),
            "the judge's decision and its citations".to_string(),
            "not applicable: only the floor can make a criterion pass".to_string(),
        ),
        "check.command" => (
            "the command runs at base (with head's test files laid over) and at head".to_string(),
            format!("exit code of `{}`", f.reproduce.as_deref().unwrap_or("?")),
            "non-zero at base, 0 at head".to_string(),
        ),
        "check.pattern" => (
            "the files this change touched, at head".to_string(),
            "regex matches in the changed files".to_string(),
            "at least one match at head".to_string(),
        ),
        _ if f.tests.is_empty() => (
            "a test carrying the tag runs at base and at head".to_string(),
            format!("a test whose id or file path contains {}", c.tag),
            "fails at base, passes at head".to_string(),
        ),
        _ => (
            "the bound test runs at base (with head's test files laid over) and at head"
                .to_string(),
            format!(
                "outcome of {}",
                f.tests
                    .iter()
                    .map(|t| t.id.as_str())
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(", ")
                    + if f.tests.len() > 3 { ", …" } else { "" }
            ),
            "fails at base, passes at head".to_string(),
        ),
    };
    let side_ptr = |side: &str| -> String {
        let ptr = f.tests.first().and_then(|t| {
            if side == "base" {
                t.base_evidence.last()
            } else {
                t.head_evidence.last()
            }
        });
        match ptr {
            Some(p) => format!(" ({})", short_pointer(p)),
            None => String::new(),
        }
    };
    let baseline = match f.base_summary.as_str() {
        "—" => "not applicable: nothing ran at base".to_string(),
        s => format!("base: {s}{}", side_ptr("base")),
    };
    let treatment = match f.head_summary.as_str() {
        "—" => "not applicable: nothing ran at head".to_string(),
        s => format!("head: {s}{}", side_ptr("head")),
    };
    let surface = match &f.reproduce {
        Some(cmd) => code_cell(cmd),
        None => match f.binding.as_str() {
            "judge_lane" => "the diff base..head".to_string(),
            _ => format!("a test carrying {}", code_cell(&c.tag)),
        },
    };
    vec![
        format!("#### Verification Claim: {}", c.ac.replace('\n', " ")),
        "| Field | Value |".into(),
        "|---|---|".into(),
        format!("| claim_source | {} |", code_cell(&c.requirement)),
        format!("| condition | {} |", breakable(&cell(&condition))),
        format!(
            "| metric_or_observable | {} |",
            breakable(&cell(&observable))
        ),
        format!("| threshold | {} |", breakable(&cell(&threshold))),
        format!("| smallest_disproving_surface | {surface} |"),
        format!("| baseline | {} |", breakable(&cell(&baseline))),
        format!("| treatment | {} |", breakable(&cell(&treatment))),
        format!("| comparison | {} |", breakable(&cell(&c.reason()))),
        format!("| verdict | `{}` |", c.claim_verdict()),
        format!("| route_to | `{}` |", c.route_to.as_str()),
    ]
}

fn uat(doc: &mut Doc, r: &RunResult, budget: usize) {
    doc.open("uat", "### UAT");
    let records: Vec<(bool, Vec<String>)> = r
        .criteria
        .iter()
        .map(|c| (c.explains(r.verdict), claim_record(c)))
        .collect();
    // What stays in the body: first the records the verdict rests on (a reader must not have to
    // unfold the reason for a BLOCKED or a READY WITH GAPS), then the others in order, as
    // many as fit, keeping room for the close and a fold. Only when the records behind the
    // verdict alone overflow the budget (dozens of open criteria) do the last of them fold.
    let used = doc.body_lines();
    let mut room = budget.saturating_sub(used + 3);
    let mut in_body = vec![false; records.len()];
    for (i, (explains, rec)) in records.iter().enumerate() {
        if *explains && rec.len() < room {
            room -= rec.len() + 1;
            in_body[i] = true;
        }
    }
    // The others keep their order: none jumps over one that did not fit.
    for (i, (explains, rec)) in records.iter().enumerate() {
        if *explains {
            continue;
        }
        if rec.len() >= room {
            break;
        }
        room -= rec.len() + 1;
        in_body[i] = true;
    }
    for (_, rec) in records
        .iter()
        .zip(&in_body)
        .filter(|(_, b)| **b)
        .map(|(r, _)| r)
    {
        for l in rec {
            doc.line(l);
        }
        doc.blank();
    }
    let folded: Vec<&Vec<String>> = records
        .iter()
        .zip(&in_body)
        .filter(|(_, b)| !**b)
        .map(|((_, rec), _)| rec)
        .collect();
    if !folded.is_empty() {
        doc.line("<details>");
        doc.line(&format!(
            "<summary>{} more claim records</summary>",
            folded.len()
        ));
        doc.blank();
        for rec in folded {
            for l in rec {
                doc.line(l);
            }
            doc.blank();
        }
        doc.line("</details>");
    }
    doc.close("uat");
}

fn deferred(doc: &mut Doc, p: &FixPacket) {
    doc.line("<!-- section:deferred -->");
    doc.line("## Deferred to TODO");
    let humans = p.route_to_human.len();
    let authors = p.author_checks.len();
    if humans + authors == 0 {
        doc.line("Deferred to TODO: 0 findings this run.");
    } else {
        let mut s = String::new();
        let _ = write!(
            s,
            "This run routes {humans} {} to a person and asks for {authors} author check{}:",
            if humans == 1 { "criterion" } else { "criteria" },
            if authors == 1 { "" } else { "s" }
        );
        doc.line(&s);
        let mut items: Vec<String> = p
            .route_to_human
            .iter()
            .map(|h| format!("- route to human: {} ({})", h.ac, h.reason))
            .collect();
        items.extend(p.author_checks.iter().map(|a| {
            format!(
                "- author check: {} Write a test whose id or filename contains `{}`; it must fail at the base commit and pass at the head commit.",
                a.ac, a.tag
            )
        }));
        let keep = 12.min(items.len());
        for i in &items[..keep] {
            doc.line(&i.replace('\n', " "));
        }
        if items.len() > keep {
            doc.line("<details>");
            doc.line(&format!("<summary>{} more</summary>", items.len() - keep));
            doc.blank();
            for i in &items[keep..] {
                doc.line(&i.replace('\n', " "));
            }
            doc.line("</details>");
        }
    }
    doc.line("<!-- /section:deferred -->");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::result::tests::{criterion, run_result};
    use crate::format::Disposition;

    #[test]
    fn long_commands_keep_their_program_and_last_argument() {
        assert_eq!(
            short_command("python3 -m pytest -q -p no:cacheprovider --rootdir=. --junitxml=$SCRATCH/pytest-junit.xml -o junit_family=xunit2 tests/test_stripe_void.py"),
            "python3 -m pytest … tests/test_stripe_void.py"
        );
        assert_eq!(
            short_command("go test -json -count=1 -run ^(TestDoubles_ac_doubles_6104|TestKeeps_ac_keeps_mid_32c9)$ example.com/clamp"),
            "go test … example.com/clamp"
        );
        assert_eq!(
            short_command("npx --yes vitest run --reporter=json --outputFile=/tmp/some/long/place/report.json --no-color"),
            "npx …"
        );
        assert_eq!(
            short_command("python3 -m pytest --collect-only -q --verbosity=-1 tests/a.py tests/b.py tests/c.py tests/d.py"),
            "python3 -m pytest … tests/a.py tests/b.py tests/c.py …"
        );
        assert_eq!(
            short_command("$CARGO_TARGET_DIR/debug/deps/clamp-5ec2d42a0e940506 --exact --test-threads=1 -- clamps_high"),
            "$CARGO_TARGET_DIR/debug/deps/clamp-5ec2d42a0e940506 … clamps_high"
        );
        assert_eq!(short_command("sh checks/limit.sh"), "sh checks/limit.sh");
    }

    #[test]
    fn long_tokens_break_where_an_id_would() {
        assert_eq!(
            break_token("tests/test_stripe_void.py::test_void_called_ac_refund_voids_payment_intent_737b"),
            "tests/<wbr>test_stripe_void.py::<wbr>test_void_called_ac_refund_voids_payment_intent_737b"
        );
        assert_eq!(break_token("short/path.py"), "short/path.py");
        assert_eq!(
            break_token("`a/very/long/token/inside/a/code/span/here`"),
            "`a/very/long/token/inside/a/code/span/here`"
        );
        let long_name = format!("t/{}", "word_".repeat(14));
        assert_eq!(
            break_token(&long_name),
            format!("t/<wbr>{}", "word_<wbr>".repeat(14))
        );
        assert_eq!(code_cell("pytest a.py::t"), "`pytest a.py::t`");
        assert_eq!(
            code_cell("pytest tests/test_refund_ac_order_marked_refunded_8df8.py::test_x<y>"),
            "<code>pytest tests/<wbr>test_refund_ac_order_marked_refunded_8df8.py::<wbr>test_x&lt;y&gt;</code>"
        );
    }

    /// The key/value blocks are lists: on GitHub each stays its own line.
    #[test]
    fn key_value_blocks_are_lists() {
        let r = run_result(vec![criterion(0, Disposition::Unsatisfied)]);
        let md = render(&r, &crate::report::fixes::packet(&r));
        assert!(
            md.contains("### Verdict\n- status: failed\n- verdict: BLOCKED\n"),
            "{md}"
        );
        assert!(md.contains("### Metrics\n- status: failed\n"), "{md}");
        assert!(md.contains("\n- Harness files changed: none.\n"), "{md}");
    }

    /// An optional criterion's floor miss is a fix but no block; a required one's is both.
    #[test]
    fn only_what_blocks_counts_as_blocking() {
        let mut optional = criterion(1, Disposition::Unsatisfied);
        optional.required = false;
        let r = run_result(vec![criterion(0, Disposition::Unsatisfied), optional]);
        let packet = crate::report::fixes::packet(&r);
        assert_eq!(packet.fixes.len(), 2);
        let md = render(&r, &packet);
        assert!(md.contains("- blocking_findings_count: 1\n"), "{md}");
    }

    /// With more criteria than the body holds, the records behind the verdict stay unfolded,
    /// wherever they are in the claim.
    #[test]
    fn the_records_behind_the_verdict_are_never_folded() {
        let mut criteria: Vec<_> = (0..12)
            .map(|i| criterion(i, Disposition::Satisfied))
            .collect();
        let mut gap = criterion(12, Disposition::Unbound);
        gap.required = false;
        criteria.push(gap);
        let mut r = run_result(criteria);
        r.verdict = Verdict::ReadyWithGaps;
        let md = render(&r, &crate::report::fixes::packet(&r));
        let fold = md
            .find("more claim records</summary>")
            .expect("some records fold");
        let gap_record = md
            .find("#### Verification Claim: Criterion 12 holds.")
            .unwrap();
        assert!(gap_record < fold, "{md}");
        assert!(body_lines(&md) <= BODY_LINE_BUDGET, "{md}");
        // Without the gap behind the verdict, the last record is folded as before.
        r.verdict = Verdict::Ready;
        let md = render(&r, &crate::report::fixes::packet(&r));
        let fold = md.find("more claim records</summary>").unwrap();
        assert!(
            md.find("#### Verification Claim: Criterion 12 holds.")
                .unwrap()
                > fold
        );
    }
}
