//! Whether a criterion's floor disposition follows from the evidence records it cites: the
//! floor's own rule ([`decision::decide`], [`decision::decide_guard`], over [`SideState::collapse`] of
//! each test's runs) re-run over the records.
//!
//! Two callers trust a disposition no further than its records: `replay` (step 4), for every
//! disposition of a statement, and `fuse`, for every entry of every shard before anything is
//! merged, since a shard job runs the change's code and can rewrite its own `shard.json`. Both
//! go through [`check_floor`], so what `fuse` accepts from a shard is exactly what `replay`
//! accepts from the statement the fuse signs.

use std::collections::BTreeMap;

use crate::decision::{self, SideState};
use crate::format::evidence::Record;
use crate::format::floor::Outcome;
use crate::format::floor::Side;
use crate::format::statement::DispositionFloor;
use crate::format::SideOutcome;
use crate::verdict::FloorResult;

use super::Invalid;

/// The records a disposition may cite, and the commits they must have run at.
pub struct Cited<'a> {
    /// By pointer (`sha256:<hex>`), every one already re-hashed by the caller.
    pub records: &'a BTreeMap<String, Record>,
    pub base: &'a str,
    pub head: &'a str,
    /// What `records` are, for a pointer that is none of them: "the attestation's
    /// inputAttestations", "the shard's records".
    pub among: &'a str,
}

/// Checks that `floor`, criterion `id`'s floor disposition, follows from the records it cites:
/// every cited pointer is one of `cited.records`; each bound test's recorded outcome at each
/// side is what its records (runs of that test, at that side and commit) show; the result is
/// the rule's over them, or more cautious, never bolder; a satisfied `check.command` or
/// `check.pattern` is what its records show. The error says what the disposition states and
/// what its records show.
pub fn check_floor(id: &str, floor: &DispositionFloor, cited: &Cited<'_>) -> Result<(), Invalid> {
    let Cited {
        records,
        base,
        head,
        among,
    } = *cited;
    let claimed = floor.result;
    let cite = |p: &str| -> Result<&Record, Invalid> {
        records.get(p).ok_or_else(|| {
            Invalid::from(format!("criterion {id}: evidence {p} is not among {among}"))
        })
    };
    for p in &floor.evidence_all {
        cite(p)?;
    }
    if let Some(p) = &floor.evidence {
        cite(p)?;
    }
    let tests = &floor.tests;
    let mut states = Vec::new();
    for t in tests {
        let tid = &t.id;
        let side_state = |side: Side, commit: &str| -> Result<SideState, Invalid> {
            let mut outcomes = Vec::new();
            let mut problem = None;
            for p in t.evidence(side) {
                // A test's evidence is runs of that test, at that side and commit.
                let run = cite(p)?.run().filter(|r| {
                    r.test_id.as_deref() == Some(tid.as_str())
                        && r.side == Some(side)
                        && r.commit == commit
                });
                let Some(run) = run else {
                    return Err(Invalid::from(format!(
                        "criterion {id}: evidence {p} is not {tid} at {} {commit}",
                        side.as_str()
                    )));
                };
                let o = run
                    .outcome
                    .ok_or_else(|| format!("criterion {id}: evidence {p} has no outcome"))?;
                if o == Outcome::NotObserved {
                    problem = run.note.clone();
                }
                outcomes.push(o);
            }
            let recorded = t.outcome(side);
            // Attribution of a base build failure is the floor's finding; the records hold the
            // outcome, the disposition the attribution.
            let s = SideState::collapse(
                &outcomes,
                problem.as_deref(),
                recorded == SideOutcome::BuildFail,
            );
            let shown = s.outcome();
            let unobserved = [SideOutcome::Unobservable, SideOutcome::NotObserved];
            let agrees = shown == recorded
                || (unobserved.contains(&recorded) && unobserved.contains(&shown));
            if !agrees {
                return Err(Invalid::from(format!(
                    "criterion {id}: {tid} reads `{recorded}` at {} but its evidence shows `{shown}`",
                    side.as_str()
                )));
            }
            Ok(s)
        };
        let hs = side_state(Side::Head, head)?;
        let bs = side_state(Side::Base, base)?;
        states.push((hs, bs));
    }
    let binding = floor.binding.as_str();
    if matches!(binding, "tag" | "check.test") && !tests.is_empty() {
        let recomputed = decision::decide(&states).result;
        // A disposition may be more cautious than its records (the harness guard, say), never
        // bolder: a satisfied criterion must be what its records show.
        if claimed == FloorResult::Satisfied && recomputed != FloorResult::Satisfied {
            return Err(Invalid::from(format!(
                "criterion {id} reads satisfied but its evidence gives {}",
                recomputed.as_str()
            )));
        }
        if claimed == FloorResult::Unsatisfied && recomputed == FloorResult::Satisfied {
            return Err(Invalid::from(format!(
                "criterion {id} reads unsatisfied but its evidence gives satisfied"
            )));
        }
    }
    if binding == "guard" && !tests.is_empty() {
        let recomputed = decision::decide_guard(&states).0;
        if claimed == FloorResult::Satisfied && recomputed != FloorResult::Satisfied {
            return Err(Invalid::from(format!(
                "the guard reads satisfied but its evidence gives {}",
                recomputed.as_str()
            )));
        }
    }
    if claimed == FloorResult::Satisfied
        && tests.is_empty()
        && !matches!(binding, "check.command" | "check.pattern")
    {
        return Err(Invalid::from(format!(
            "criterion {id} reads satisfied with no observed test"
        )));
    }
    let cited_records = || floor.evidence_all.iter().filter_map(|p| cite(p).ok());
    if claimed == FloorResult::Satisfied && binding == "check.command" {
        // The command's own records: exit 0 at head and a failure at base, at those commits.
        let recs: Vec<_> = cited_records()
            .filter_map(|r| match r {
                Record::Command(run) => Some(run),
                _ => None,
            })
            .collect();
        let at = |side: Side, commit: &str, outcome: Outcome| {
            let of_side: Vec<_> = recs.iter().filter(|r| r.side == Some(side)).collect();
            !of_side.is_empty()
                && of_side
                    .iter()
                    .all(|r| r.commit == commit && r.outcome == Some(outcome))
        };
        if !at(Side::Head, head, Outcome::Pass) || !at(Side::Base, base, Outcome::Fail) {
            return Err(Invalid::from(format!(
                "criterion {id} reads satisfied but its command records do not show exit 0 at head and a failure at base"
            )));
        }
    }
    if claimed == FloorResult::Satisfied && binding == "check.pattern" {
        let matched = cited_records().any(|r| match r {
            Record::Pattern(p) => p.commit == head && !p.matches.is_empty(),
            _ => false,
        });
        if !matched {
            return Err(Invalid::from(format!(
                "criterion {id} reads satisfied but no pattern record shows a match at head"
            )));
        }
    }
    Ok(())
}
