//! What an agent is told of a run: the verdict, each criterion's disposition and reason, and the
//! next steps, made from the result document `claim-check --format json` prints. The MCP tool
//! returns it; the Stop hook blocks with its next steps.
//!
//! In: the bytes of a `{"result": …, "fixes": …}` document.
//! Out: [`Summary`]; [`Summary::open`], the required criteria an agent can still act on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::format::result::{ResultDocument, RouteTo};
use crate::format::Disposition;
use crate::verdict::{Rule, Verdict};

/// The result of `claim_check`, as the tool returns it (book: agents.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// READY, READY WITH GAPS, INCONCLUSIVE or BLOCKED.
    #[schemars(with = "String")]
    pub verdict: Verdict,
    /// The exit code the command line gives for this verdict (0, 1 or 4).
    pub exit_code: i32,
    /// The rule that decided the verdict (`1`…`5`, `draft-gate`) and why.
    pub rule: String,
    pub rule_reason: String,
    pub base: String,
    pub head: String,
    /// Every criterion of the claim, in the acceptance file's order.
    pub criteria: Vec<CriterionSummary>,
    /// What to do next, most urgent first; empty once READY.
    pub next_steps: Vec<String>,
    /// Where the run wrote its outputs, relative to the repository.
    pub outputs: OutputPaths,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CriterionSummary {
    pub id: String,
    pub tag: String,
    /// The criterion's text.
    pub ac: String,
    pub required: bool,
    /// satisfied, unsatisfied, unbound, undecided, blocked, abstained or not_judged.
    #[schemars(with = "String")]
    pub disposition: Disposition,
    /// proceed, fix, human, author-check or follow-up.
    #[schemars(with = "String")]
    pub route_to: RouteTo,
    pub reason: String,
    /// A command that reproduces the decisive observation, where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reproduce: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputPaths {
    pub vsa: String,
    pub fixes: String,
    pub report: String,
    pub evidence: String,
}

impl Summary {
    /// The result of a finished child run: its stdout read as a result document, only when the
    /// run exited with the code that document states (a run that was killed, or whose stdout
    /// someone else wrote into, gives none).
    pub fn from_run(exit_code: Option<i32>, stdout: &[u8]) -> Option<Summary> {
        let summary = Summary::from_result(stdout)?;
        (exit_code == Some(summary.exit_code)).then_some(summary)
    }

    /// Reads a result document; `None` when the bytes are not one.
    pub fn from_result(bytes: &[u8]) -> Option<Summary> {
        let doc: ResultDocument<'static> = serde_json::from_slice(bytes).ok()?;
        let result = doc.result.into_owned();
        let criteria: Vec<CriterionSummary> = result
            .criteria
            .iter()
            .map(|c| CriterionSummary {
                id: c.id.clone(),
                tag: c.tag.clone(),
                ac: c.ac.clone(),
                required: c.required,
                disposition: c.disposition,
                route_to: c.route_to,
                reason: match (&c.judge.rationale, c.disposition) {
                    (Some(r), Disposition::Blocked | Disposition::Abstained) => {
                        format!("{} (judge: {r})", c.floor.reason)
                    }
                    _ => c.floor.reason.clone(),
                },
                reproduce: c.floor.reproduce.clone(),
            })
            .collect();
        let mut summary = Summary {
            verdict: result.verdict,
            exit_code: result.exit_code,
            rule: result.rule.to_string(),
            rule_reason: result.rule_reason.clone(),
            base: result.base.to_string(),
            head: result.head.to_string(),
            criteria,
            next_steps: Vec::new(),
            outputs: OutputPaths {
                vsa: result.outputs.vsa.clone(),
                fixes: result.outputs.fixes.clone(),
                report: result.outputs.report.clone(),
                evidence: result.outputs.evidence.clone(),
            },
        };
        summary.next_steps = next_steps(&summary);
        Some(summary)
    }

    /// The criteria an agent can still act on: the required ones unsatisfied, undecided or
    /// unbound, and any the judge blocked (a judge's block makes the verdict BLOCKED, optional
    /// or not). A criterion that waits for a person (abstained, not judged) is not among them:
    /// no amount of work by the agent settles it.
    pub fn open(&self) -> Vec<&CriterionSummary> {
        self.criteria
            .iter()
            .filter(|c| {
                c.disposition == Disposition::Blocked
                    || (c.required && is_actionable(c.disposition))
            })
            .collect()
    }

    /// Whether the claim is a draft the change must commit first (the draft gate).
    pub fn is_draft(&self) -> bool {
        self.rule == Rule::DraftGate.label()
    }
}

fn is_actionable(disposition: Disposition) -> bool {
    matches!(
        disposition,
        Disposition::Unsatisfied
            | Disposition::Undecided
            | Disposition::Unbound
            | Disposition::Blocked
    )
}

/// One step per open criterion (required ones first), then the draft gate and what waits for a
/// person. Each names the criterion and says what would settle it.
fn next_steps(s: &Summary) -> Vec<String> {
    let mut steps = Vec::new();
    let mut ordered: Vec<&CriterionSummary> = s.criteria.iter().filter(|c| c.required).collect();
    ordered.extend(s.criteria.iter().filter(|c| !c.required));
    for c in ordered {
        if let Some(step) = step(c) {
            steps.push(step);
        }
    }
    if s.is_draft() {
        steps.push(format!("The claim is a draft: {}.", s.rule_reason));
    }
    steps
}

/// The most of a reason a step quotes: a reason carries the failing test's own message.
pub const REASON_LIMIT: usize = 400;

fn step(c: &CriterionSummary) -> Option<String> {
    let who = format!(
        "\"{}\" ({}, {}, {})",
        c.ac,
        c.id,
        if c.required { "required" } else { "optional" },
        c.disposition
    );
    let reproduce = c
        .reproduce
        .as_deref()
        .map(|r| format!(" Reproduce: `{r}`."))
        .unwrap_or_default();
    let reason = crate::text::cut(&crate::text::one_line(&c.reason), REASON_LIMIT);
    let text = match c.disposition {
        Disposition::Satisfied => return None,
        Disposition::Unsatisfied => format!(
            "{who}: {}.{reproduce} Fix the code until the check passes at head (it must still fail at base); do not weaken the test.",
            reason
        ),
        Disposition::Unbound => format!(
            "{who}: no test carries the tag {}. Write a test whose id or filename contains this exact tag; it must fail at the base commit and pass at the head commit.",
            c.tag
        ),
        Disposition::Undecided => format!(
            "{who}: {}.{reproduce} Make its bound test run and give the same result every time.",
            reason
        ),
        Disposition::Blocked => format!("{who}: {reason}. Resolve what the judge points at."),
        // Abstained, not judged: what the floor cannot settle waits for a person.
        _ => format!("{who}: {reason}. A person decides this one."),
    };
    Some(text)
}

#[cfg(test)]
mod tests;
