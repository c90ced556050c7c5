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
//! without it.

use std::fmt::Write;

use super::{
    citation_at, finding_reason, short_pointer, CriterionResult, Disposition, RunResult,
    SigningState, JUDGE_REQUIREMENT,
};
use crate::acceptance::AcceptanceState;
use crate::verdict::{FloorResult, JudgeResult, Verdict};

pub fn render(r: &RunResult, colour: bool) -> String {
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
        criterion(&mut out, r, c, &paint);
    }
    out.push('\n');
    let _ = writeln!(out, "  rule {}: {}", r.rule, r.rule_reason);
    let _ = writeln!(
        out,
        "  base {} · head {} · {} mode · {} · {}",
        &r.base[..7.min(r.base.len())],
        &r.head[..7.min(r.head.len())],
        r.mode,
        super::criteria_count(r.criteria.len()),
        r.signing.state
    );
    for note in &r.judge_notes {
        let _ = writeln!(out, "  {}", one_line(note));
    }
    if let Some(line) = r.acceptance.inherited_line() {
        let _ = writeln!(out, "  {line}");
    }
    if r.acceptance.state == AcceptanceState::Draft {
        let how = match r.acceptance.source.as_str() {
            "derived" => "write its criteria as .shipmoor/changes/<name>.yaml and commit it",
            _ if r.acceptance.path == ".shipmoor/acceptance.yaml.draft" => {
                "commit it as .shipmoor/acceptance.yaml"
            }
            _ => "commit it with `shipmoor acceptance commit`",
        };
        let _ = writeln!(
            out,
            "  acceptance set {} is a draft: {how}",
            r.acceptance.path
        );
    }
    if !r.harness_changes.is_empty() {
        let _ = writeln!(
            out,
            "  harness files changed: {}",
            r.harness_changes.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "  fix packet: {} · report: {} · VSA: {}",
        r.outputs.fixes, r.outputs.report, r.outputs.vsa
    );
    // The signed forms beside the statement, named as written (`claim-check.vsa.json` →
    // `claim-check.vsa.dsse.json`, `claim-check.vsa.sigstore.json`).
    let stem = r
        .outputs
        .vsa
        .strip_suffix(".json")
        .unwrap_or(&r.outputs.vsa);
    match r.signing.state {
        SigningState::Unsigned => {
            let _ = writeln!(out, "  {}", r.signing.note);
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

/// Text from the acceptance set or from a run on one line: a line break in it would break the
/// report's layout, and in CI logs a line starting with `::` is a workflow command.
pub fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

fn criterion(
    out: &mut String,
    r: &RunResult,
    c: &CriterionResult,
    paint: &dyn Fn(&str, &str) -> String,
) {
    let (mark, code) = match c.disposition {
        Disposition::Satisfied => ("✓", "32"),
        Disposition::Unsatisfied | Disposition::Blocked => ("✗", "31"),
        Disposition::Unbound => ("∅", "36"),
        _ => ("?", "33"),
    };
    let _ = writeln!(out, "  {} {}", paint(code, mark), one_line(&c.ac));
    if c.disposition == Disposition::Satisfied {
        // What the failure at base was, where the runner could tell (DESIGN 5.4).
        if let Some((t, k)) = c
            .floor
            .tests
            .iter()
            .find_map(|t| t.base_failure.map(|k| (t, k)))
        {
            let _ = writeln!(out, "      at base: {} ({})", k.as_str(), one_line(&t.id));
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
    let _ = writeln!(
        out,
        "      requirement: {} · {} · result: {}",
        if judged {
            JUDGE_REQUIREMENT
        } else {
            c.requirement.as_str()
        },
        if c.required { "required" } else { "optional" },
        result
    );
    if judged && judge_lines(out, r, c) {
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
            let _ = writeln!(out, "      rationale: {}", one_line(&c.reason()));
        }
        _ => {
            let _ = writeln!(out, "      reason: {}", one_line(&c.reason()));
            if let Some(e) = &c.floor.evidence {
                let _ = writeln!(
                    out,
                    "      evidence: {} ({})",
                    short_pointer(&e.pointer),
                    one_line(&e.detail)
                );
            }
        }
    }
}

/// The judge's lines of a blocked or abstained criterion; false when there is nothing of the
/// judge's to show (a block recorded without its finding), for the floor's lines instead.
fn judge_lines(out: &mut String, r: &RunResult, c: &CriterionResult) -> bool {
    if c.disposition == Disposition::Abstained {
        let _ = writeln!(
            out,
            "      rationale: {} — routed to a human",
            one_line(&c.reason())
        );
        return true;
    }
    let mut shown = false;
    for f in r
        .findings_for(&c.id)
        .filter(|f| f.result == JudgeResult::Block)
    {
        let Some(p) = &f.pointer else { continue };
        let _ = writeln!(out, "      rationale: {}", one_line(&finding_reason(f)));
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
        let _ = writeln!(
            out,
            "      pointer: {} ({by}evidence {})",
            one_line(&citation_at(p)),
            short_pointer(evidence)
        );
        shown = true;
    }
    shown
}

#[cfg(test)]
mod tests {
    #[test]
    fn untrusted_text_stays_on_one_line() {
        assert_eq!(
            super::one_line("a\n::error::x\r\u{2028}b"),
            "a ::error::x  b"
        );
    }
}
