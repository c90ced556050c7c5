//! The terminal report, in the shape of the "Reading the verdict" page:
//!
//! ```text
//! Claim Check  BLOCKED  ·  exit 1  ·  policy v3
//!
//!   ✗ The Stripe PaymentIntent is voided.
//!       requirement: stage1.floor.refund_voids_payment_intent · required · result: unsatisfied
//!       reason: …
//!       evidence: sha256:7ac1e4… (tests/refund/test_stripe_void.py::test_void_called, failed)
//!
//!   ? An audit log entry is written for every refund.
//!       requirement: stage3.byo_judge · required · result: abstained
//!       rationale: no audit-log call is visible in the diff — routed to a human
//! ```
//!
//! A judge's confirmed block reads `✗` with its rationale and the `path:line` its pointer
//! resolved to, one pair per blocking judge of a panel; the notes about the panel (a judge whose
//! blocks were discarded) follow the criteria.
//!
//! Colour only when asked (`--color`, decided by [`crate::colour`]); the text reads the same
//! without it. Reasons and rationales wrap at the terminal's width, their continuation lines
//! indented under the label as in the page's example; with no width (a pipe, a log) each stays
//! on one line, for `grep`.

use std::fmt::Write;

use super::{
    citation_at, short_pointer, CriterionResult, Disposition, RunResult, SigningState,
    JUDGE_REQUIREMENT,
};
use crate::acceptance::AcceptanceState;
use crate::judge::audit;
use crate::verdict::{FloorResult, JudgeResult, Verdict};

/// The width to wrap at: the terminal's when stdout is one, else `COLUMNS` when it is set (as
/// `ls` and `git` read it); `None` for a pipe or a log, which get unwrapped lines.
pub fn width() -> Option<usize> {
    use std::io::IsTerminal;
    let columns = || {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
    };
    let w = if std::io::stdout().is_terminal() {
        terminal_size::terminal_size()
            .map(|(w, _)| usize::from(w.0))
            .or_else(columns)
    } else {
        columns()
    }?;
    // Narrower than this, wrapping would leave a word or two a line: not worth it.
    (w >= 40).then_some(w)
}

/// `label` then `text`, wrapped at `width` columns with continuation lines indented by
/// `indent` spaces; a word longer than a line keeps its own line whole (a test id, a digest).
pub(crate) fn wrapped(label: &str, text: &str, indent: usize, width: Option<usize>) -> String {
    let text = one_line(text);
    let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
    match width {
        None => format!("{label}{text}\n"),
        Some(width) => fill(label, &words, " ", indent, width),
    }
}

/// As [`wrapped`], but breaking only between the ` · `-separated parts of `text`, each line but
/// the last ending with the `·`: `result: unsatisfied` stays together.
fn wrapped_parts(label: &str, text: &str, indent: usize, width: Option<usize>) -> String {
    let text = one_line(text);
    let parts: Vec<&str> = text.split(" · ").collect();
    match width {
        None => format!("{label}{text}\n"),
        Some(width) => fill(label, &parts, " · ", indent, width),
    }
}

/// Lays `units` out after `label`, `sep` between them, breaking lines before `width`.
fn fill(label: &str, units: &[&str], sep: &str, indent: usize, width: usize) -> String {
    let trailing = sep.trim_end();
    let sep_width = sep.chars().count();
    let mut out = String::new();
    let mut line = label.to_string();
    let mut used = visible_width(label);
    let mut fresh = true;
    for unit in units {
        let n = unit.chars().count();
        if !fresh && used + sep_width + n > width {
            out.push_str(&line);
            out.push_str(trailing);
            out.push('\n');
            line = " ".repeat(indent);
            used = indent;
            fresh = true;
        }
        if !fresh {
            line.push_str(sep);
            used += sep_width;
        }
        line.push_str(unit);
        used += n;
        fresh = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// Columns `s` takes on a terminal: its characters, less the colour codes' escapes.
fn visible_width(s: &str) -> usize {
    let mut n = 0;
    let mut escape = false;
    for ch in s.chars() {
        match (escape, ch) {
            (false, '\x1b') => escape = true,
            (true, 'm') => escape = false,
            (true, _) => {}
            (false, _) => n += 1,
        }
    }
    n
}

/// The report, unwrapped: as a pipe or a log gets it.
pub fn render(r: &RunResult, colour: bool) -> String {
    render_at(r, colour, None)
}

/// The report with reasons wrapped at `width` columns (see [`width`]).
pub fn render_at(r: &RunResult, colour: bool, width: Option<usize>) -> String {
    let paint = |code: &str, s: &str| {
        if colour {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let verdict_colour = match r.verdict {
        Verdict::Ready => "1;32",
        Verdict::ReadyWithGaps => "1;33",
        Verdict::Inconclusive => "1;33",
        Verdict::Blocked => "1;31",
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Claim Check  {}  ·  exit {}  ·  policy {}",
        paint(verdict_colour, r.verdict.as_str()),
        r.exit_code,
        r.policy
    );
    for c in &r.criteria {
        out.push('\n');
        criterion(&mut out, r, c, &paint, width);
    }
    out.push('\n');
    out.push_str(&wrapped(
        &format!("  rule {}: ", r.rule),
        &r.rule_reason,
        4,
        width,
    ));
    let _ = writeln!(
        out,
        "  base {} · head {} · {} mode · {} · {}",
        r.base.short(),
        r.head.short(),
        r.mode,
        super::criteria_count(r.criteria.len()),
        r.signing.state
    );
    if let Some(line) = super::sandbox_line(r) {
        out.push_str(&wrapped("  ", &line, 4, width));
    }
    if let Some(line) = super::base_cache_line(r) {
        out.push_str(&wrapped("  ", &line, 4, width));
    }
    for note in &r.judge_notes {
        out.push_str(&wrapped("  ", note, 4, width));
    }
    if let Some(line) = r.acceptance.inherited_line() {
        out.push_str(&wrapped("  ", &line, 4, width));
    }
    if r.acceptance.state == AcceptanceState::Draft {
        let how = match r.acceptance.source.as_str() {
            "derived" => "write its criteria as .shipmoor/changes/<name>.yaml and commit it",
            _ if r.acceptance.path == ".shipmoor/acceptance.yaml.draft" => {
                "commit it as .shipmoor/acceptance.yaml"
            }
            _ => "commit it with `shipmoor acceptance commit`",
        };
        out.push_str(&wrapped(
            "  ",
            &format!("acceptance set {} is a draft: {how}", r.acceptance.path),
            4,
            width,
        ));
    }
    if !r.harness_changes.is_empty() {
        out.push_str(&wrapped(
            "  harness files changed: ",
            &r.harness_changes.join(", "),
            4,
            width,
        ));
        out.push_str(&harness_yaml(r));
    }
    out.push_str(&wrapped_parts(
        "  ",
        &format!(
            "fix packet: {} · report: {} · VSA: {}",
            r.outputs.fixes, r.outputs.report, r.outputs.vsa
        ),
        4,
        width,
    ));
    // The signed forms beside the statement, named as written (`claim-check.vsa.json` →
    // `claim-check.vsa.dsse.json`, `claim-check.vsa.sigstore.json`).
    let stem = r
        .outputs
        .vsa
        .strip_suffix(".json")
        .unwrap_or(&r.outputs.vsa);
    match r.signing.state {
        SigningState::Unsigned => {
            out.push_str(&wrapped("  ", &r.signing.note, 4, width));
        }
        SigningState::Key => {
            // One file a line: both on one would pass 80 columns.
            let _ = writeln!(out, "  signed: {stem}.dsse.json (DSSE envelope)");
            let _ = writeln!(out, "          {stem}.sigstore.json (Sigstore bundle)");
        }
        SigningState::Keyless => {
            let _ = writeln!(out, "  signed: {stem}.sigstore.json (Sigstore bundle)");
        }
    }
    out
}

/// When a harness change left a criterion untrusted, the YAML that allows it, ready to paste:
/// the change's own acceptance file when there is one, else the project's settings.
fn harness_yaml(r: &RunResult) -> String {
    let untrusted = r
        .criteria
        .iter()
        .any(|c| c.floor.reason.starts_with("harness file "));
    // The labels are `path (what)`; an allowed one says so and needs nothing.
    let paths: Vec<&str> = r
        .harness_changes
        .iter()
        .filter(|l| !l.ends_with("allowed by harness.allow_changes)"))
        .filter_map(|l| l.rsplit_once(" (").map(|(p, _)| p))
        .collect();
    if !untrusted || paths.is_empty() {
        return String::new();
    }
    let file = match r.acceptance.path.as_str() {
        p if r.acceptance.source == "files" && !p.contains(", ") => p,
        _ => ".shipmoor/config.yaml",
    };
    let mut out = format!(
        "  if the change to the harness is meant, allow it in {}:\n      harness:\n        allow_changes:\n",
        one_line(file)
    );
    for p in paths {
        let quoted = p.replace('\\', "\\\\").replace('"', "\\\"");
        let _ = writeln!(out, "          - \"{}\"", one_line(&quoted));
    }
    out
}

pub use crate::text::one_line;

fn criterion(
    out: &mut String,
    r: &RunResult,
    c: &CriterionResult,
    paint: &dyn Fn(&str, &str) -> String,
    width: Option<usize>,
) {
    let (mark, code) = match c.disposition {
        Disposition::Satisfied => ("✓", "32"),
        Disposition::Unsatisfied | Disposition::Blocked => ("✗", "31"),
        Disposition::Unbound => ("∅", "36"),
        _ => ("?", "33"),
    };
    out.push_str(&wrapped(
        &format!("  {} ", paint(code, mark)),
        &c.ac,
        4,
        width,
    ));
    if c.disposition == Disposition::Satisfied {
        // What the failure at base was, where the runner could tell (book: floor/attribution.md).
        if let Some((t, k)) = c
            .floor
            .tests
            .iter()
            .find_map(|t| t.base_failure.map(|k| (t, k)))
        {
            out.push_str(&wrapped(
                "      at base: ",
                &format!("{} ({})", k.as_str(), t.id),
                6,
                width,
            ));
        }
        return;
    }
    let result = match c.disposition {
        Disposition::NotJudged => "not judged",
        d => d.as_str(),
    };
    // A judge's answer is reported under the judge's requirement, whatever the lane.
    let judged = matches!(c.disposition, Disposition::Blocked | Disposition::Abstained)
        && c.judge.result != JudgeResult::None;
    out.push_str(&wrapped_parts(
        "      requirement: ",
        &format!(
            "{} · {} · result: {}",
            if judged {
                JUDGE_REQUIREMENT
            } else {
                c.requirement.as_str()
            },
            if c.required { "required" } else { "optional" },
            result
        ),
        6,
        width,
    ));
    if judged && judge_lines(out, r, c, width) {
        if c.floor.result == FloorResult::Unbound {
            let _ = writeln!(out, "      tag: {}", c.tag);
        }
        return;
    }
    match c.disposition {
        Disposition::Unbound => {
            let _ = writeln!(out, "      tag: {}", c.tag);
        }
        Disposition::Abstained | Disposition::NotJudged => {
            out.push_str(&wrapped("      rationale: ", &c.reason(), 6, width));
        }
        _ => {
            out.push_str(&wrapped("      reason: ", &c.reason(), 6, width));
            if let Some(e) = &c.floor.evidence {
                out.push_str(&wrapped(
                    "      evidence: ",
                    &format!("{} ({})", short_pointer(&e.pointer), e.detail),
                    6,
                    width,
                ));
            }
        }
    }
}

/// The judge's lines of a blocked or abstained criterion; false when there is nothing of the
/// judge's to show (a block recorded without its finding), for the floor's lines instead.
fn judge_lines(out: &mut String, r: &RunResult, c: &CriterionResult, width: Option<usize>) -> bool {
    if c.disposition == Disposition::Abstained {
        out.push_str(&wrapped(
            "      rationale: ",
            &format!("{} — routed to a human", c.reason()),
            6,
            width,
        ));
        return true;
    }
    let mut shown = false;
    for f in r
        .findings_for(&c.id)
        .filter(|f| f.result == JudgeResult::Block)
    {
        let Some(p) = &f.pointer else { continue };
        out.push_str(&wrapped("      rationale: ", &audit::reason(f), 6, width));
        let evidence = f
            .response_evidence
            .as_deref()
            .unwrap_or(&f.request_evidence);
        // A lone judge is named `judge`: "judge judge" says nothing, so only a panel's lens shows.
        let by = if f.judge == crate::judge::SINGLE_JUDGE_NAME {
            String::new()
        } else {
            format!("judge {} · ", one_line(&f.judge))
        };
        out.push_str(&wrapped(
            "      pointer: ",
            &format!(
                "{} ({by}evidence {})",
                citation_at(p),
                short_pointer(evidence)
            ),
            6,
            width,
        ));
        shown = true;
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::wrapped;

    /// The page's example, wrapped at its width: the same two lines.
    #[test]
    fn wraps_as_the_pages_example_does() {
        let text = "no audit-log call is visible in the diff, but the write may happen inside the shared AuditWriter helper this change doesn't touch — routed to a human";
        assert_eq!(
            wrapped("      rationale: ", text, 6, Some(90)),
            "      rationale: no audit-log call is visible in the diff, but the write may happen inside\n      the shared AuditWriter helper this change doesn't touch — routed to a human\n"
        );
        // No width: one line, as a pipe gets it.
        assert_eq!(
            wrapped("      rationale: ", text, 6, None),
            format!("      rationale: {text}\n")
        );
    }

    #[test]
    fn a_word_longer_than_a_line_keeps_its_line_whole() {
        let id = "tests/test_stripe_void.py::test_void_called_ac_refund_voids_payment_intent_737b";
        let out = wrapped(
            "      reason: ",
            &format!("bound test {id} fails at head"),
            6,
            Some(40),
        );
        assert_eq!(
            out,
            format!("      reason: bound test\n      {id}\n      fails at head\n")
        );
        for line in out.lines().filter(|l| !l.contains(id)) {
            assert!(line.chars().count() <= 40, "{line:?}");
        }
    }

    #[test]
    fn labelled_parts_break_only_at_their_separators() {
        let text = "stage1.floor.refund_voids_payment_intent · required · result: unsatisfied";
        assert_eq!(
            super::wrapped_parts("      requirement: ", text, 6, Some(80)),
            "      requirement: stage1.floor.refund_voids_payment_intent · required ·\n      result: unsatisfied\n"
        );
        assert_eq!(
            super::wrapped_parts("      requirement: ", text, 6, Some(120)),
            format!("      requirement: {text}\n")
        );
        // Colour codes in a label take no columns.
        assert_eq!(super::visible_width("  \x1b[31m✗\x1b[0m "), 4);
    }

    /// At 80 columns every line of a report fits, but for one whose only word is longer.
    #[test]
    fn the_report_fits_80_columns() {
        let mut r = crate::format::result::tests::every_disposition();
        for c in &mut r.criteria {
            c.floor.reason = format!(
                "bound test tests/test_x.py::test_{} fails at head: AssertionError: expected the refund to void the PaymentIntent before the order is marked refunded",
                c.id
            );
        }
        let out = super::render_at(&r, false, Some(80));
        let mut continued = 0;
        for line in out.lines() {
            let t = line.trim_start();
            if line.starts_with("      ") && !t.contains(": ") {
                continued += 1;
            }
            let fits = line.chars().count() <= 80 || !t.contains(' ');
            assert!(fits, "{line:?} is wider than 80 columns:\n{out}");
        }
        assert!(continued > 0, "nothing wrapped:\n{out}");
        // Unwrapped, each reason is one line.
        let flat = super::render_at(&r, false, None);
        assert!(flat.lines().any(|l| l.chars().count() > 80), "{flat}");
    }
    #[test]
    fn untrusted_text_stays_on_one_line() {
        assert_eq!(
            super::one_line("a\n::error::x\r\u{2028}b"),
            "a ::error::x  b"
        );
    }
}
