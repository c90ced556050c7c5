//! The fix packet, schema `claim_check.fixes.v2`: the actionable to-do list of a run, with the
//! same evidence pointers as the VSA.
//!
//! - `fixes`: one entry per requirement that actually failed: a floor miss, citing its
//!   attestation record, or each judge's confirmed block, citing the judge's response record and
//!   the `path:line` its pointer resolved to;
//! - `route_to_human`: criteria the run could not settle (abstained or undecided, and judgment
//!   criteria nobody judged);
//! - `author_checks`: unbound criteria, with the exact tag a new test must carry (a judged one
//!   too: a bound test is what settles it for good).

use super::{citation_at, CriterionResult, Disposition, RunResult};
pub use crate::format::fixes::{
    AuthorCheck, EvidenceKind, Fix, FixEvidence, FixPacket, HumanRoute, AUTHOR_INSTRUCTION,
    EVIDENCE_KIND, SCHEMA,
};
use crate::judge::audit;
use crate::verdict::{FloorResult, JudgeResult};

pub fn packet(result: &RunResult) -> FixPacket {
    let mut p = FixPacket {
        schema: SCHEMA,
        fixes: vec![],
        route_to_human: vec![],
        author_checks: vec![],
        inherited: result.acceptance.inherited_line(),
        judge_notes: result.judge_notes.clone(),
    };
    for c in &result.criteria {
        add(&mut p, result, c);
    }
    p
}

/// A fix per confirmed block on `c`, each citing its judge's response record.
fn judge_fixes(result: &RunResult, c: &CriterionResult) -> Vec<Fix> {
    result
        .findings_for(&c.id)
        .filter(|f| f.result == JudgeResult::Block)
        .filter_map(|f| {
            let pointer = f.pointer.as_ref()?;
            Some(Fix {
                requirement: super::JUDGE_REQUIREMENT.to_string(),
                ac: c.ac.clone(),
                reason: audit::reason(f),
                evidence: FixEvidence {
                    kind: EvidenceKind::Judge,
                    pointer: f
                        .response_evidence
                        .clone()
                        .unwrap_or_else(|| f.request_evidence.clone()),
                    detail: citation_at(pointer),
                },
            })
        })
        .collect()
}

fn add(p: &mut FixPacket, result: &RunResult, c: &CriterionResult) {
    let judged_unbound = c.floor.result == FloorResult::Unbound
        && c.judge.result != JudgeResult::None
        && c.disposition != Disposition::Unbound;
    if c.disposition == Disposition::Blocked {
        let fixes = judge_fixes(result, c);
        if !fixes.is_empty() {
            p.fixes.extend(fixes);
            if judged_unbound {
                p.author_checks.push(author_check(c));
            }
            return;
        }
    }
    if judged_unbound {
        p.author_checks.push(author_check(c));
    }
    match c.disposition {
        Disposition::Unsatisfied | Disposition::Blocked => {
            let (pointer, detail) = match &c.floor.evidence {
                Some(e) => (e.pointer.clone(), e.detail.clone()),
                None => (String::new(), "no evidence record".to_string()),
            };
            p.fixes.push(Fix {
                requirement: c.requirement.clone(),
                ac: c.ac.clone(),
                reason: c.reason(),
                evidence: FixEvidence {
                    kind: EVIDENCE_KIND,
                    pointer,
                    detail,
                },
            });
        }
        Disposition::Unbound => p.author_checks.push(author_check(c)),
        Disposition::Undecided | Disposition::Abstained | Disposition::NotJudged => {
            p.route_to_human.push(HumanRoute {
                ac: c.ac.clone(),
                reason: match c.disposition {
                    Disposition::Abstained => format!("judge abstained: {}", c.reason()),
                    _ => c.reason(),
                },
            })
        }
        Disposition::Satisfied => {}
    }
}

fn author_check(c: &CriterionResult) -> AuthorCheck {
    AuthorCheck {
        ac: c.ac.clone(),
        tag: c.tag.clone(),
        instruction: AUTHOR_INSTRUCTION,
    }
}
