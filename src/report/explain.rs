//! `shipmoor explain`: one criterion of a run, from its statement and the evidence it cites
//! (book: agents.md): the rule the floor applied to it, what each bound test did at base and at
//! head (each run's failure and command, from its record), and what would change the answer.
//!
//! In: the statement's extension, the criterion (its id, or its tag in any case), and the
//! evidence store when there is one.
//! Out: [`Explanation`] (`claim_check.explain.v1`), and its human form ([`render`]).

use serde::Serialize;

use crate::evidence::{pointer_digest, StoreReader};
use crate::format::evidence::Record;
use crate::format::floor::Outcome;
use crate::format::result::RouteTo;
use crate::format::statement::{CriterionDisposition, Extension};
use crate::format::{Disposition, Recorded, SideOutcome};
use crate::git::CommitId;
use crate::report::terminal::wrapped;
use crate::verdict::{FloorResult, Verdict};

pub const EXPLAIN_SCHEMA: &str = "claim_check.explain.v1";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    pub schema: &'static str,
    pub id: String,
    pub tag: String,
    pub ac: String,
    pub required: bool,
    pub file: Option<String>,
    /// The run the statement records.
    pub verdict: Verdict,
    pub base: Recorded<CommitId>,
    pub head: Recorded<CommitId>,
    pub disposition: Disposition,
    pub route_to: RouteTo,
    /// The floor's result and its reason.
    pub floor_result: FloorResult,
    pub reason: String,
    /// How the criterion was bound (`tag`, `check.test`, …) and the rule that applies to it.
    pub binding: String,
    pub rule: String,
    /// The judge's word in full mode, when it gave one.
    pub judge: Option<String>,
    pub tests: Vec<ExplainedTest>,
    /// What would change the answer.
    pub would_change: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplainedTest {
    pub id: String,
    pub runner: String,
    pub base: SideOutcome,
    pub head: SideOutcome,
    /// Each run of it, base first, as its record has it.
    pub runs: Vec<ExplainedRun>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExplainedRun {
    pub side: String,
    pub record: String,
    /// The record's outcome and note (the failure's first line), when the record could be read.
    pub outcome: Option<Outcome>,
    pub note: Option<String>,
    pub command: Option<String>,
}

/// Finds `criterion` (an id, or a tag in any case) among the statement's dispositions.
pub fn find<'a>(ext: &'a Extension, criterion: &str) -> Option<&'a CriterionDisposition> {
    ext.dispositions
        .iter()
        .find(|d| d.id == criterion)
        .or_else(|| {
            ext.dispositions
                .iter()
                .find(|d| d.tag.eq_ignore_ascii_case(criterion))
        })
}

/// The explanation of one disposition of `ext`; `store`, the evidence it cites, when present.
pub fn explain(
    ext: &Extension,
    d: &CriterionDisposition,
    store: Option<&StoreReader>,
) -> Explanation {
    let tests = d
        .floor
        .tests
        .iter()
        .map(|t| {
            let mut runs = Vec::new();
            for (side, pointers) in [("base", &t.base_evidence), ("head", &t.head_evidence)] {
                for p in pointers {
                    runs.push(run_of(side, p, store));
                }
            }
            ExplainedTest {
                id: t.id.clone(),
                runner: t.runner.clone(),
                base: t.base,
                head: t.head,
                runs,
            }
        })
        .collect::<Vec<_>>();
    let judge = d
        .judge
        .rationale
        .clone()
        .map(|r| format!("{}: {r}", judge_word(d.disposition)));
    Explanation {
        schema: EXPLAIN_SCHEMA,
        id: d.id.clone(),
        tag: d.tag.clone(),
        ac: d.ac.clone(),
        required: d.required,
        file: d.file.clone(),
        verdict: ext.verdict,
        base: ext.base.clone(),
        head: ext.head.clone(),
        disposition: d.disposition,
        route_to: d.route_to,
        floor_result: d.floor.result,
        reason: d.floor.reason.clone(),
        binding: d.floor.binding.clone(),
        rule: rule(&d.floor.binding).to_string(),
        judge,
        would_change: would_change(d, &tests),
        tests,
    }
}

fn judge_word(d: Disposition) -> &'static str {
    match d {
        Disposition::Blocked => "blocked",
        Disposition::Abstained => "abstained",
        _ => "said",
    }
}

fn run_of(side: &str, pointer: &str, store: Option<&StoreReader>) -> ExplainedRun {
    // A record is read only when its bytes hash to its name, as replay reads it.
    let record = store
        .zip(pointer_digest(pointer))
        .and_then(|(s, hex)| {
            s.read(hex)
                .ok()
                .filter(|b| crate::digest::sha256_hex(b) == hex)
        })
        .and_then(|bytes| serde_json::from_slice::<Record>(&bytes).ok());
    let run = record.as_ref().and_then(|r| match r {
        Record::Test(run) | Record::Command(run) => Some(run),
        _ => None,
    });
    ExplainedRun {
        side: side.to_string(),
        record: pointer.to_string(),
        outcome: run.and_then(|r| r.outcome),
        note: run.and_then(|r| r.note.clone()),
        command: run.map(|r| r.command.join(" ")),
    }
}

/// The floor's rule for a binding (book: floor.md).
pub fn rule(binding: &str) -> &'static str {
    match binding {
        "tag" => "a test carrying the criterion's tag (in its id or file name) must fail at the base commit and pass at the head commit",
        "check.test" => "the test the criterion names (check.test) must fail at the base commit and pass at the head commit",
        "check.command" => "the criterion's command (check.command) must fail at the base commit and succeed at the head commit",
        "check.pattern" => "a file the change touches must match the criterion's pattern (check.pattern) at the head commit",
        "guard" => "the tests that pass at the base commit must still pass at the head commit (the pass-to-pass guard)",
        "judge_lane" => "the floor does not check this criterion; in full mode the judge may block or abstain, never pass, and a person decides",
        _ => "the criterion's binding decides it",
    }
}

fn would_change(d: &CriterionDisposition, tests: &[ExplainedTest]) -> Vec<String> {
    let mut out = Vec::new();
    let note = |t: &ExplainedTest, side: &str| {
        t.runs
            .iter()
            .find(|r| r.side == side && r.note.is_some())
            .and_then(|r| r.note.clone())
            .map(|n| format!(" (now: {n})"))
            .unwrap_or_default()
    };
    match d.disposition {
        Disposition::Satisfied => {
            for t in tests {
                out.push(format!(
                    "It would no longer be satisfied if `{}` failed at head, or passed at base.",
                    t.id
                ));
            }
        }
        Disposition::Unbound => out.push(format!(
            "Write a test whose id or file name contains the tag {}; it must fail at the base commit and pass at the head commit.",
            d.tag
        )),
        Disposition::Blocked => out.push(
            "Resolve what the judge points at; the judge can block or abstain, never pass, so the floor must still satisfy the criterion.".to_string(),
        ),
        Disposition::Abstained | Disposition::NotJudged => out.push(
            "The floor cannot settle this criterion: bind it to a test (its tag, or check.test) so that it can, or a person decides.".to_string(),
        ),
        Disposition::Unsatisfied | Disposition::Undecided => {
            for (t, dt) in tests.iter().zip(&d.floor.tests) {
                let step = match (dt.base, dt.head) {
                    (_, SideOutcome::Fail) => format!(
                        "Make `{}` pass at head{}.",
                        t.id,
                        note(t, "head")
                    ),
                    (_, SideOutcome::BuildFail) => format!(
                        "Make `{}` build at head{}.",
                        t.id,
                        note(t, "head")
                    ),
                    (SideOutcome::Pass, SideOutcome::Pass) => format!(
                        "`{}` passes at base too, so it does not show the change: make it test what the change adds, so that it fails at base.",
                        t.id
                    ),
                    (SideOutcome::Flaky, _) | (_, SideOutcome::Flaky) => format!(
                        "`{}` gave mixed results over the runs: make it deterministic.",
                        t.id
                    ),
                    (SideOutcome::NotObserved | SideOutcome::Unobservable, _) => format!(
                        "`{}` was not observed at base{}: make it run there (a base it cannot build is undecided, never satisfied).",
                        t.id,
                        note(t, "base")
                    ),
                    (_, SideOutcome::NotObserved | SideOutcome::Unobservable) => format!(
                        "`{}` was not observed at head{}: make it run there.",
                        t.id,
                        note(t, "head")
                    ),
                    _ => continue,
                };
                out.push(step);
            }
            if out.is_empty() {
                out.push(format!("{}: change what the reason names.", d.floor.reason));
            }
        }
    }
    out
}

/// The human form, for a terminal, wrapped at `width` columns (`None`: unwrapped, for a pipe).
pub fn render(e: &Explanation, width: Option<usize>) -> String {
    let mut s = String::new();
    s.push_str(&wrapped(
        "",
        &format!(
            "{} ({}, {}, {})",
            e.id,
            e.tag,
            if e.required { "required" } else { "optional" },
            e.disposition
        ),
        2,
        width,
    ));
    s.push_str(&wrapped("  ", &format!("\"{}\"", e.ac), 3, width));
    s.push_str(&format!(
        "  run: {} · base {} · head {}\n",
        e.verdict.as_str(),
        e.base.short(),
        e.head.short()
    ));
    s.push_str(&wrapped(
        &format!("  rule ({}): ", e.binding),
        &e.rule,
        4,
        width,
    ));
    s.push_str(&wrapped(
        &format!("  floor: {}: ", e.floor_result.as_str()),
        &e.reason,
        4,
        width,
    ));
    if let Some(j) = &e.judge {
        s.push_str(&wrapped("  judge ", j, 4, width));
    }
    for t in &e.tests {
        s.push_str(&wrapped(
            "  test ",
            &format!("{} ({}): base {} · head {}", t.id, t.runner, t.base, t.head),
            4,
            width,
        ));
        for r in &t.runs {
            s.push_str(&format!(
                "    {} {} {}\n",
                r.side,
                r.outcome.map_or("(record not read)", Outcome::as_str),
                super::short_pointer(&r.record)
            ));
            if let Some(n) = &r.note {
                s.push_str(&wrapped("      ", n, 6, width));
            }
            if let Some(c) = &r.command {
                s.push_str(&wrapped("      $ ", c, 8, width));
            }
        }
    }
    s.push_str("  what would change it:\n");
    for w in &e.would_change {
        s.push_str(&wrapped("    - ", w, 6, width));
    }
    s
}

#[cfg(test)]
mod tests;
