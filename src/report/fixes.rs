//! The fix packet, schema `claim_check.fixes.v2`: the actionable to-do list of a run, with the
//! same evidence pointers as the VSA.
//!
//! - `fixes`: one entry per requirement that actually failed (a floor miss or a judge block);
//! - `route_to_human`: criteria the run could not settle (abstained or undecided, and judgment
//!   criteria nobody judged);
//! - `author_checks`: unbound criteria, with the exact tag a new test must carry.

use super::{CriterionResult, Disposition, RunResult};
pub use crate::format::fixes::{
    AuthorCheck, Fix, FixEvidence, FixPacket, HumanRoute, AUTHOR_INSTRUCTION, EVIDENCE_KIND, SCHEMA,
};

pub fn packet(result: &RunResult) -> FixPacket {
    let mut p = FixPacket {
        schema: SCHEMA,
        fixes: vec![],
        route_to_human: vec![],
        author_checks: vec![],
        inherited: result.acceptance.inherited_line(),
    };
    for c in &result.criteria {
        add(&mut p, c);
    }
    p
}

fn add(p: &mut FixPacket, c: &CriterionResult) {
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
        Disposition::Unbound => p.author_checks.push(AuthorCheck {
            ac: c.ac.clone(),
            tag: c.tag.clone(),
            instruction: AUTHOR_INSTRUCTION,
        }),
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
