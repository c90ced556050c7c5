//! What a person (or a program) reads after a run: the run's result model, the terminal report,
//! the fix packet (`claim_check.fixes.v2`) and `verify.md`.
//!
//! In: the acceptance set, the floor's dispositions, the fused verdict. Out: a [`RunResult`]
//! (serialized as `claim_check.result.v1` by `--format json`), and from it each rendering. The
//! renderers are pure functions of the result, so the same run always renders the same bytes.
//! The result's and the fix packet's types are in [`crate::format`], which readers share.

pub mod fixes;
pub mod terminal;
pub mod verify_md;

use crate::acceptance::{AcceptanceSet, Criterion, InheritedPolicy, Lane};
use crate::floor::{CriterionFloor, FloorReport};
pub use crate::format::result::{
    AcceptanceInfo, CriterionResult, InheritedCriterion, JudgeOutcome, Outputs, ResultDocument,
    RouteTo, RunResult, Signing, RESULT_SCHEMA,
};
pub use crate::format::{Disposition, SigningState};
use crate::verdict::{FloorResult, Fused, FusionInput, JudgeResult};

impl CriterionResult {
    pub fn fusion_input(&self) -> FusionInput {
        FusionInput {
            required: self.required,
            lane: self.lane,
            floor: self.floor.result,
            judge: self.judge.result,
        }
    }

    /// The claim-record verdict of `verify.md`.
    pub fn claim_verdict(&self) -> &'static str {
        match self.disposition {
            Disposition::Satisfied => "VERIFIED",
            Disposition::Unsatisfied | Disposition::Blocked => "NOT VERIFIED",
            _ => "INCONCLUSIVE",
        }
    }

    /// The reason a person reads: the judge's rationale when there is one (a block, an
    /// abstention, or why nobody judged), else the floor's.
    pub fn reason(&self) -> String {
        match (&self.judge.rationale, self.floor.result.settled()) {
            (Some(r), false) => r.clone(),
            (Some(r), true) if self.judge.result == JudgeResult::Block => r.clone(),
            _ => self.floor.reason.clone(),
        }
    }
}

impl AcceptanceInfo {
    /// The one line every report says about inherited criteria, when there are any.
    pub fn inherited_line(&self) -> Option<String> {
        let n = self.inherited.len();
        if n == 0 {
            return None;
        }
        let what = if n == 1 {
            "1 criterion inherited from an earlier change".to_string()
        } else {
            format!("{n} criteria inherited from earlier changes")
        };
        Some(if self.inherited_policy == InheritedPolicy::Guard {
            format!("{what}, kept as regression guards (stage1.floor.guard)")
        } else {
            format!("{what}, not checked")
        })
    }
}

/// Joins the acceptance set with the floor's (and the judge's) findings.
pub fn criteria_results(
    acceptance: &AcceptanceSet,
    floor: &FloorReport,
    judge: &[JudgeOutcome],
    mode_full: bool,
) -> Vec<CriterionResult> {
    acceptance
        .criteria
        .iter()
        .zip(&floor.criteria)
        .enumerate()
        .map(|(i, (c, f))| {
            let judge = judge.get(i).cloned().unwrap_or(JudgeOutcome {
                result: JudgeResult::None,
                rationale: None,
            });
            let mut r = criterion_result(c, f.clone(), judge, mode_full);
            r.file = acceptance.origin.get(&c.id).cloned();
            r
        })
        .collect()
}

fn criterion_result(
    c: &Criterion,
    mut floor: CriterionFloor,
    mut judge: JudgeOutcome,
    mode_full: bool,
) -> CriterionResult {
    if c.lane == Lane::Judge && judge.result == JudgeResult::None {
        judge.rationale = Some(if mode_full {
            "the judge did not answer; a person decides this judgment criterion".to_string()
        } else {
            "judgment criterion: no judge ran (fast mode); a person decides".to_string()
        });
        floor.reason = "judgment criterion: the floor does not decide it".into();
    }
    let disposition = match (floor.result, judge.result) {
        (_, JudgeResult::Block) => Disposition::Blocked,
        (FloorResult::Satisfied, _) => Disposition::Satisfied,
        (FloorResult::Unsatisfied, _) => Disposition::Unsatisfied,
        (_, JudgeResult::Abstain) => Disposition::Abstained,
        (FloorResult::Unbound, _) => Disposition::Unbound,
        (FloorResult::Undecided, _) => Disposition::Undecided,
        (FloorResult::NotApplicable, _) => Disposition::NotJudged,
    };
    let route_to = match disposition {
        Disposition::Satisfied => RouteTo::Proceed,
        _ if !c.required => RouteTo::FollowUp,
        Disposition::Unsatisfied | Disposition::Blocked => RouteTo::Fix,
        Disposition::Unbound => RouteTo::AuthorCheck,
        _ => RouteTo::Human,
    };
    CriterionResult {
        id: c.id.clone(),
        ac: c.ac.clone(),
        tag: c.tag.clone(),
        required: c.required,
        lane: c.lane,
        requirement: c.requirement(),
        line: c.line,
        file: None,
        disposition,
        route_to,
        floor,
        judge,
    }
}

/// Renders `f` followed by the fused verdict's rule as a sentence.
pub fn fused_reason(f: &Fused) -> String {
    f.rule.explain().to_string()
}

/// Shortens `sha256:<64 hex>` to `sha256:<12 hex>…` for narrow places.
pub fn short_pointer(p: &str) -> String {
    match p.strip_prefix("sha256:") {
        Some(hex) if hex.len() > 12 => format!("sha256:{}…", &hex[..12]),
        _ => p.to_string(),
    }
}
