//! The verdict fusion, policy v3: one pure function from per-criterion dispositions (and the
//! acceptance set's state) to one of four verdicts. No I/O; `replay` re-runs it over the
//! dispositions recorded in an attestation.
//!
//! Rules, top to bottom, the first that fires wins:
//! 1. a required criterion is `unsatisfied` at the floor → BLOCKED;
//! 2. the judge confirmed a block on any criterion → BLOCKED;
//! 3. a required criterion is underspecified (the floor did not settle it and the judge did not
//!    block it) → INCONCLUSIVE;
//! 4. nothing is underspecified or failed → READY;
//! 5. only optional criteria are underspecified or unsatisfied → READY WITH GAPS.
//!
//! The draft gate stands in front: with an uncommitted draft acceptance set, a run that would be
//! READY or READY WITH GAPS is INCONCLUSIVE.

use serde::{Deserialize, Serialize};

use crate::acceptance::{AcceptanceState, Lane};

/// The policy this module implements, as recorded in attestations.
pub const POLICY: &str = "v3";

/// The floor's result for one criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FloorResult {
    Satisfied,
    /// A real, mechanical miss.
    Unsatisfied,
    /// No check could be bound.
    Unbound,
    /// Bound, but the run could not observe it (runner problem, timeout, flaky, no base build).
    Undecided,
    /// A judge-lane criterion: the floor does not look at it.
    NotApplicable,
}

impl FloorResult {
    pub const ALL: [FloorResult; 5] = [
        FloorResult::Satisfied,
        FloorResult::Unsatisfied,
        FloorResult::Unbound,
        FloorResult::Undecided,
        FloorResult::NotApplicable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FloorResult::Satisfied => "satisfied",
            FloorResult::Unsatisfied => "unsatisfied",
            FloorResult::Unbound => "unbound",
            FloorResult::Undecided => "undecided",
            FloorResult::NotApplicable => "not_applicable",
        }
    }

    /// Whether the floor settled the criterion (a yes or a hard no).
    pub fn settled(self) -> bool {
        matches!(self, FloorResult::Satisfied | FloorResult::Unsatisfied)
    }
}

/// The judge's answer for one criterion, after the citation audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeResult {
    /// The judge was not run on this criterion.
    None,
    /// A confirmed block, with a resolving pointer.
    Block,
    Abstain,
}

impl JudgeResult {
    pub const ALL: [JudgeResult; 3] = [JudgeResult::None, JudgeResult::Block, JudgeResult::Abstain];

    pub fn as_str(self) -> &'static str {
        match self {
            JudgeResult::None => "none",
            JudgeResult::Block => "block",
            JudgeResult::Abstain => "abstain",
        }
    }
}

/// What the fusion needs to know of one criterion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FusionInput {
    pub required: bool,
    pub lane: Lane,
    pub floor: FloorResult,
    pub judge: JudgeResult,
}

impl FusionInput {
    /// The floor did not settle it and the judge did not block it.
    pub fn underspecified(&self) -> bool {
        !self.floor.settled() && self.judge != JudgeResult::Block
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Verdict {
    #[serde(rename = "READY")]
    Ready,
    #[serde(rename = "READY WITH GAPS")]
    ReadyWithGaps,
    #[serde(rename = "INCONCLUSIVE")]
    Inconclusive,
    #[serde(rename = "BLOCKED")]
    Blocked,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ready => "READY",
            Verdict::ReadyWithGaps => "READY WITH GAPS",
            Verdict::Inconclusive => "INCONCLUSIVE",
            Verdict::Blocked => "BLOCKED",
        }
    }

    pub fn parse(s: &str) -> Option<Verdict> {
        [
            Verdict::Ready,
            Verdict::ReadyWithGaps,
            Verdict::Inconclusive,
            Verdict::Blocked,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }

    /// The process exit code for this verdict (book: exit-codes.md).
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Ready | Verdict::ReadyWithGaps => crate::error::EXIT_OK,
            Verdict::Blocked => crate::error::EXIT_BLOCKED,
            Verdict::Inconclusive => crate::error::EXIT_INCONCLUSIVE,
        }
    }

    /// The SLSA VSA `verificationResult`.
    pub fn verification_result(self) -> &'static str {
        match self {
            Verdict::Ready | Verdict::ReadyWithGaps => "PASSED",
            Verdict::Blocked | Verdict::Inconclusive => "FAILED",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which rule decided the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    #[serde(rename = "1")]
    FloorDeny,
    #[serde(rename = "2")]
    JudgeBlock,
    #[serde(rename = "3")]
    RequiredUnderspecified,
    #[serde(rename = "4")]
    AllSettled,
    #[serde(rename = "5")]
    OptionalGaps,
    DraftGate,
}

impl Rule {
    pub const ALL: [Rule; 6] = [
        Rule::FloorDeny,
        Rule::JudgeBlock,
        Rule::RequiredUnderspecified,
        Rule::AllSettled,
        Rule::OptionalGaps,
        Rule::DraftGate,
    ];

    /// As `fusion-v3.json` spells it: `1`…`5` or `draft-gate`.
    pub fn label(self) -> &'static str {
        match self {
            Rule::FloorDeny => "1",
            Rule::JudgeBlock => "2",
            Rule::RequiredUnderspecified => "3",
            Rule::AllSettled => "4",
            Rule::OptionalGaps => "5",
            Rule::DraftGate => "draft-gate",
        }
    }

    /// A sentence a person reads in reports.
    pub fn explain(self) -> &'static str {
        match self {
            Rule::FloorDeny => "a required criterion fails the deterministic floor",
            Rule::JudgeBlock => "the judge confirmed a block with a resolving pointer",
            Rule::RequiredUnderspecified => {
                "a required criterion is not settled by the floor: a person decides"
            }
            Rule::AllSettled => "every criterion is satisfied by the floor",
            Rule::OptionalGaps => "only optional criteria are open; the gaps are disclosed",
            Rule::DraftGate => "acceptance set is a draft; commit it as .shipmoor/acceptance.yaml",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fused {
    pub verdict: Verdict,
    pub rule: Rule,
}

/// The fusion, policy v3. Total over every combination of inputs.
pub fn fuse(state: AcceptanceState, criteria: &[FusionInput]) -> Fused {
    let decided = |verdict, rule| Fused { verdict, rule };
    if criteria
        .iter()
        .any(|c| c.required && c.floor == FloorResult::Unsatisfied)
    {
        return decided(Verdict::Blocked, Rule::FloorDeny);
    }
    if criteria.iter().any(|c| c.judge == JudgeResult::Block) {
        return decided(Verdict::Blocked, Rule::JudgeBlock);
    }
    if criteria.iter().any(|c| c.required && c.underspecified()) {
        return decided(Verdict::Inconclusive, Rule::RequiredUnderspecified);
    }
    let open = criteria
        .iter()
        .any(|c| c.underspecified() || c.floor == FloorResult::Unsatisfied);
    let provisional = if open {
        decided(Verdict::ReadyWithGaps, Rule::OptionalGaps)
    } else {
        decided(Verdict::Ready, Rule::AllSettled)
    };
    if state == AcceptanceState::Draft {
        return decided(Verdict::Inconclusive, Rule::DraftGate);
    }
    provisional
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Vectors {
        policy: String,
        cases: Vec<Case>,
    }

    #[derive(Deserialize)]
    struct Case {
        acceptance: AcceptanceState,
        criteria: Vec<FusionInput>,
        verdict: Verdict,
        rule: serde_json::Value,
    }

    fn rule_label(v: &serde_json::Value) -> String {
        match v {
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::String(s) => s.clone(),
            other => panic!("unexpected rule {other}"),
        }
    }

    /// Every case of the published fusion vectors (`tests/vectors/fusion-v3.json`) agrees with
    /// `fuse`.
    #[test]
    fn agrees_with_the_published_vectors() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/fusion-v3.json");
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("the fusion vectors are needed at {path}: {e}"));
        let vectors: Vectors = serde_json::from_str(&text).expect("vectors parse");
        assert_eq!(vectors.policy, POLICY);
        assert_eq!(vectors.cases.len(), 240);
        for (i, case) in vectors.cases.iter().enumerate() {
            let got = fuse(case.acceptance, &case.criteria);
            assert_eq!(
                (got.verdict, got.rule.label().to_string()),
                (case.verdict, rule_label(&case.rule)),
                "case {i}: {:?} {:?}",
                case.acceptance,
                case.criteria
            );
        }
    }

    fn all_inputs() -> Vec<FusionInput> {
        let mut v = Vec::new();
        for required in [true, false] {
            for lane in [Lane::Floor, Lane::Judge] {
                for floor in FloorResult::ALL {
                    for judge in JudgeResult::ALL {
                        v.push(FusionInput {
                            required,
                            lane,
                            floor,
                            judge,
                        });
                    }
                }
            }
        }
        v
    }

    /// The rules restated independently, as properties over every set of up to two criteria
    /// (60 single inputs: 3,600 pairs, both acceptance states).
    #[test]
    fn exhaustive_properties_over_pairs() {
        let inputs = all_inputs();
        let mut sets: Vec<Vec<FusionInput>> = inputs.iter().map(|c| vec![*c]).collect();
        for a in &inputs {
            for b in &inputs {
                sets.push(vec![*a, *b]);
            }
        }
        for state in [AcceptanceState::Committed, AcceptanceState::Draft] {
            for set in &sets {
                let got = fuse(state, set);
                let floor_deny = set
                    .iter()
                    .any(|c| c.required && c.floor == FloorResult::Unsatisfied);
                let judge_block = set.iter().any(|c| c.judge == JudgeResult::Block);
                // Only the floor can make a criterion pass: a judge never turns an open
                // criterion into READY.
                if got.verdict == Verdict::Ready {
                    assert!(set.iter().all(|c| c.floor == FloorResult::Satisfied));
                    assert_eq!(state, AcceptanceState::Committed);
                }
                // A floor deny can never be softened.
                if floor_deny {
                    assert_eq!(got.verdict, Verdict::Blocked);
                    assert_eq!(got.rule, Rule::FloorDeny);
                }
                if judge_block {
                    assert_eq!(got.verdict, Verdict::Blocked);
                }
                if !floor_deny && !judge_block {
                    assert_ne!(got.verdict, Verdict::Blocked);
                }
                // A draft never reads READY or READY WITH GAPS.
                if state == AcceptanceState::Draft {
                    assert!(!matches!(
                        got.verdict,
                        Verdict::Ready | Verdict::ReadyWithGaps
                    ));
                }
                // Removing every optional criterion never makes a required-only verdict worse.
                let required_only: Vec<_> = set.iter().copied().filter(|c| c.required).collect();
                if !judge_block {
                    let r = fuse(state, &required_only);
                    assert!(
                        r.verdict == got.verdict
                            || (got.verdict == Verdict::ReadyWithGaps
                                && r.verdict == Verdict::Ready),
                        "{set:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn exit_codes_and_results() {
        assert_eq!(Verdict::Ready.exit_code(), 0);
        assert_eq!(Verdict::ReadyWithGaps.exit_code(), 0);
        assert_eq!(Verdict::Blocked.exit_code(), 1);
        assert_eq!(Verdict::Inconclusive.exit_code(), 4);
        assert_eq!(Verdict::ReadyWithGaps.verification_result(), "PASSED");
        assert_eq!(Verdict::Inconclusive.verification_result(), "FAILED");
    }
}
