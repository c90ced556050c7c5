//! The terminal report, in the shape of the "Reading the verdict" page:
//!
//! ```text
//! Claim Check  BLOCKED  ·  exit 1  ·  policy v3
//!
//!   ✗ The Stripe PaymentIntent is voided.
//!       requirement: stage1.floor.refund_voids_payment_intent · required · result: unsatisfied
//!       reason: …
//!       evidence: sha256:7ac1e4… (tests/refund/test_stripe_void.py::test_void_called, failed)
//! ```
//!
//! Colour only when asked (a terminal without `NO_COLOR`); the text reads the same without it.

use std::fmt::Write;

use super::{short_pointer, CriterionResult, Disposition, RunResult, SigningState};
use crate::acceptance::AcceptanceState;
use crate::verdict::Verdict;

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
        criterion(&mut out, c, &paint);
    }
    out.push('\n');
    let _ = writeln!(out, "  rule {}: {}", r.rule, r.rule_reason);
    let _ = writeln!(
        out,
        "  base {} · head {} · {} mode · {} criteria · {}",
        &r.base[..7.min(r.base.len())],
        &r.head[..7.min(r.head.len())],
        r.mode,
        r.criteria.len(),
        r.signing.state
    );
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
    if r.signing.state == SigningState::Unsigned {
        let _ = writeln!(out, "  {}", r.signing.note);
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

fn criterion(out: &mut String, c: &CriterionResult, paint: &dyn Fn(&str, &str) -> String) {
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
    let _ = writeln!(
        out,
        "      requirement: {} · {} · result: {}",
        c.requirement,
        if c.required { "required" } else { "optional" },
        result
    );
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
