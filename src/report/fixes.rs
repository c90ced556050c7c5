//! The fix packet, schema `claim_check.fixes.v2`: the actionable to-do list of a run, with the
//! same evidence pointers as the VSA.
//!
//! - `fixes`: one entry per requirement that actually failed (a floor miss or a judge block);
//! - `route_to_human`: criteria the run could not settle (abstained or undecided, and judgment
//!   criteria nobody judged);
//! - `author_checks`: unbound criteria, with the exact tag a new test must carry.

use serde::Serialize;

use super::{CriterionResult, RunResult};

pub const SCHEMA: &str = "claim_check.fixes.v2";

pub const AUTHOR_INSTRUCTION: &str = "Write a test whose id or filename contains this exact tag. It must fail at the base commit and pass at the head commit.";

#[derive(Debug, Clone, Serialize)]
pub struct FixPacket {
    pub schema: &'static str,
    pub fixes: Vec<Fix>,
    pub route_to_human: Vec<HumanRoute>,
    pub author_checks: Vec<AuthorCheck>,
    /// The criteria inherited from earlier changes, in one line (absent when there are none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inherited: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Fix {
    pub requirement: String,
    pub ac: String,
    pub reason: String,
    pub evidence: FixEvidence,
}

#[derive(Debug, Clone, Serialize)]
pub struct FixEvidence {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub pointer: String,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct HumanRoute {
    pub ac: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct AuthorCheck {
    pub ac: String,
    pub tag: String,
    pub instruction: &'static str,
}

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
    match c.disposition.as_str() {
        "unsatisfied" | "blocked" => {
            let (pointer, detail) = match &c.floor.evidence {
                Some(e) => (e.pointer.clone(), e.detail.clone()),
                None => (String::new(), "no evidence record".to_string()),
            };
            p.fixes.push(Fix {
                requirement: c.requirement.clone(),
                ac: c.ac.clone(),
                reason: c.reason(),
                evidence: FixEvidence {
                    kind: "attestation",
                    pointer,
                    detail,
                },
            });
        }
        "unbound" => p.author_checks.push(AuthorCheck {
            ac: c.ac.clone(),
            tag: c.tag.clone(),
            instruction: AUTHOR_INSTRUCTION,
        }),
        "undecided" | "abstained" | "not_judged" => p.route_to_human.push(HumanRoute {
            ac: c.ac.clone(),
            reason: match c.disposition.as_str() {
                "abstained" => format!("judge abstained: {}", c.reason()),
                _ => c.reason(),
            },
        }),
        _ => {}
    }
}
