//! The floor's rule for a criterion bound to tests: a pure function over what each run observed.
//! The floor decides by it and replay checks a statement's dispositions against it, so it sits
//! below both; so does [`attribute`], whose verdict on a build failure at base the rule reads.
//!
//! Per test and side, the K runs collapse into one [`SideState`]; then, for the criterion:
//! 1. any bound test fails, does not build, or is not observed at head → `unsatisfied`
//!    (a real, mechanical miss: it is not observed passing at head);
//! 2. any bound test is flaky or unobservable at head → `undecided`;
//! 3. every bound test passes at head, and at least one fails at base (or fails to build there
//!    with the failure in the test item itself, book: floor/attribution.md) → `satisfied`;
//! 4. at base something could not be observed (flaky, a build failure that is not the test's
//!    own, absent) → `undecided`;
//! 5. every bound test already passes at base → `unsatisfied`: it proves nothing.

pub mod attribute;

use serde::{Deserialize, Serialize};

use crate::format::floor::Outcome;
use crate::verdict::FloorResult;

/// One side's K runs of one test, collapsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum SideState {
    Pass,
    Fail,
    /// The test's target did not compile; `attributed` when the failure is the test item's own
    /// (a diagnostic inside it, or at an import whose names it uses: the new test uses the new
    /// API, a real failure at base). Otherwise the test was never observed there.
    BuildFail {
        attributed: bool,
    },
    NotObserved,
    /// Mixed results across the K runs.
    Flaky,
    /// The run itself could not be observed: timeout, runner crash, setup failure.
    Unobservable(String),
}

impl SideState {
    /// The label a disposition records for this state (its detail stays in the evidence).
    pub fn outcome(&self) -> crate::format::SideOutcome {
        use crate::format::SideOutcome;
        match self {
            SideState::Pass => SideOutcome::Pass,
            SideState::Fail => SideOutcome::Fail,
            SideState::BuildFail { .. } => SideOutcome::BuildFail,
            SideState::NotObserved => SideOutcome::NotObserved,
            SideState::Flaky => SideOutcome::Flaky,
            SideState::Unobservable(_) => SideOutcome::Unobservable,
        }
    }

    /// Collapses K runs. `problem` is set when the runs could not be observed at all.
    pub fn collapse(runs: &[Outcome], problem: Option<&str>, attributed: bool) -> SideState {
        if let Some(p) = problem {
            if runs.iter().all(|o| *o == Outcome::NotObserved) {
                return SideState::Unobservable(p.to_string());
            }
        }
        let Some(first) = runs.first() else {
            return SideState::NotObserved;
        };
        if runs.iter().any(|o| o != first) {
            return SideState::Flaky;
        }
        match first {
            Outcome::Pass => SideState::Pass,
            Outcome::Fail => SideState::Fail,
            Outcome::BuildFail => SideState::BuildFail { attributed },
            Outcome::NotObserved => SideState::NotObserved,
        }
    }

    pub fn label(&self) -> &'static str {
        match self {
            SideState::Pass => "pass",
            SideState::Fail => "fail",
            SideState::BuildFail { .. } => "build_fail",
            SideState::NotObserved => "not_observed",
            SideState::Flaky => "flaky",
            SideState::Unobservable(_) => "unobservable",
        }
    }
}

/// Why the rule decided as it did, for reports and the fix packet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    FailsAtHead,
    DoesNotBuildAtHead,
    NotObservedAtHead,
    FlakyAtHead,
    UnobservableAtHead,
    FailToPass,
    FlakyAtBase,
    BaseDoesNotBuild,
    UnobservableAtBase,
    NotObservedAtBase,
    ProvesNothing,
    NoTests,
}

/// The decision for one criterion, with the index of the test that decided it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub result: FloorResult,
    pub finding: Finding,
    pub decisive: Option<usize>,
}

/// The rule (see the module doc). `tests[i]` is (head, base) of bound test i.
pub fn decide(tests: &[(SideState, SideState)]) -> Decision {
    let first = |pred: &dyn Fn(&SideState) -> bool, head: bool| {
        tests
            .iter()
            .position(|(h, b)| if head { pred(h) } else { pred(b) })
    };
    let d = |result, finding, decisive| Decision {
        result,
        finding,
        decisive,
    };
    if tests.is_empty() {
        return d(FloorResult::Unbound, Finding::NoTests, None);
    }
    if let Some(i) = first(&|s| *s == SideState::Fail, true) {
        return d(FloorResult::Unsatisfied, Finding::FailsAtHead, Some(i));
    }
    if let Some(i) = first(&|s| matches!(s, SideState::BuildFail { .. }), true) {
        return d(
            FloorResult::Unsatisfied,
            Finding::DoesNotBuildAtHead,
            Some(i),
        );
    }
    if let Some(i) = first(&|s| *s == SideState::NotObserved, true) {
        return d(
            FloorResult::Unsatisfied,
            Finding::NotObservedAtHead,
            Some(i),
        );
    }
    if let Some(i) = first(&|s| *s == SideState::Flaky, true) {
        return d(FloorResult::Undecided, Finding::FlakyAtHead, Some(i));
    }
    if let Some(i) = first(&|s| matches!(s, SideState::Unobservable(_)), true) {
        return d(FloorResult::Undecided, Finding::UnobservableAtHead, Some(i));
    }
    // Every bound test passes at head.
    if let Some(i) = first(
        &|s| {
            matches!(
                s,
                SideState::Fail | SideState::BuildFail { attributed: true }
            )
        },
        false,
    ) {
        return d(FloorResult::Satisfied, Finding::FailToPass, Some(i));
    }
    if let Some(i) = first(&|s| *s == SideState::Flaky, false) {
        return d(FloorResult::Undecided, Finding::FlakyAtBase, Some(i));
    }
    if let Some(i) = first(
        &|s| matches!(s, SideState::BuildFail { attributed: false }),
        false,
    ) {
        return d(FloorResult::Undecided, Finding::BaseDoesNotBuild, Some(i));
    }
    if let Some(i) = first(&|s| matches!(s, SideState::Unobservable(_)), false) {
        return d(FloorResult::Undecided, Finding::UnobservableAtBase, Some(i));
    }
    if let Some(i) = first(&|s| *s == SideState::NotObserved, false) {
        return d(FloorResult::Undecided, Finding::NotObservedAtBase, Some(i));
    }
    d(FloorResult::Unsatisfied, Finding::ProvesNothing, Some(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states() -> Vec<SideState> {
        vec![
            SideState::Pass,
            SideState::Fail,
            SideState::BuildFail { attributed: true },
            SideState::BuildFail { attributed: false },
            SideState::NotObserved,
            SideState::Flaky,
            SideState::Unobservable("timeout".into()),
        ]
    }

    #[test]
    fn collapse_never_turns_mixed_runs_into_a_pass() {
        use Outcome::*;
        assert_eq!(
            SideState::collapse(&[Pass, Pass], None, false),
            SideState::Pass
        );
        assert_eq!(
            SideState::collapse(&[Pass, Fail], None, false),
            SideState::Flaky
        );
        assert_eq!(
            SideState::collapse(&[Fail, Pass], None, false),
            SideState::Flaky
        );
        assert_eq!(
            SideState::collapse(&[Pass, NotObserved], None, false),
            SideState::Flaky
        );
        assert_eq!(
            SideState::collapse(&[], None, false),
            SideState::NotObserved
        );
        assert_eq!(
            SideState::collapse(&[NotObserved], Some("timed out"), false),
            SideState::Unobservable("timed out".into())
        );
        assert_eq!(
            SideState::collapse(&[BuildFail], None, true),
            SideState::BuildFail { attributed: true }
        );
    }

    /// Every pair of (head, base) states for one and for two bound tests, checked against the
    /// rule restated as properties.
    #[test]
    fn exhaustive_over_one_and_two_tests() {
        let s = states();
        let mut cases: Vec<Vec<(SideState, SideState)>> = Vec::new();
        for h in &s {
            for b in &s {
                cases.push(vec![(h.clone(), b.clone())]);
            }
        }
        let singles = cases.clone();
        for a in &singles {
            for b in &singles {
                cases.push(vec![a[0].clone(), b[0].clone()]);
            }
        }
        for tests in &cases {
            let got = decide(tests);
            let all_head_pass = tests.iter().all(|(h, _)| *h == SideState::Pass);
            let some_base_fail = tests.iter().any(|(_, b)| {
                matches!(
                    b,
                    SideState::Fail | SideState::BuildFail { attributed: true }
                )
            });
            // A pass needs every test passing at head and a real failure at base.
            assert_eq!(
                got.result == FloorResult::Satisfied,
                all_head_pass && some_base_fail,
                "{tests:?}"
            );
            // A hard failure at head is always a mechanical miss.
            if tests
                .iter()
                .any(|(h, _)| matches!(h, SideState::Fail | SideState::BuildFail { .. }))
            {
                assert_eq!(got.result, FloorResult::Unsatisfied);
            }
            // Already green at base proves nothing.
            if all_head_pass && tests.iter().all(|(_, b)| *b == SideState::Pass) {
                assert_eq!(got.finding, Finding::ProvesNothing);
                assert_eq!(got.result, FloorResult::Unsatisfied);
            }
            // Flaky anywhere never yields a pass.
            if tests
                .iter()
                .any(|(h, b)| *h == SideState::Flaky || (*b == SideState::Flaky && !some_base_fail))
            {
                assert_ne!(got.result, FloorResult::Satisfied);
            }
            let i = got.decisive.expect("a decisive test");
            assert!(i < tests.len());
        }
        assert_eq!(decide(&[]).result, FloorResult::Unbound);
    }

    #[test]
    fn named_cases() {
        use SideState::*;
        let d = decide(&[(Pass, Fail)]);
        assert_eq!(
            (d.result, d.finding),
            (FloorResult::Satisfied, Finding::FailToPass)
        );
        let d = decide(&[(Pass, Pass)]);
        assert_eq!(
            (d.result, d.finding),
            (FloorResult::Unsatisfied, Finding::ProvesNothing)
        );
        let d = decide(&[(Fail, Fail)]);
        assert_eq!(
            (d.result, d.finding),
            (FloorResult::Unsatisfied, Finding::FailsAtHead)
        );
        let d = decide(&[(Pass, BuildFail { attributed: false })]);
        assert_eq!(
            (d.result, d.finding),
            (FloorResult::Undecided, Finding::BaseDoesNotBuild)
        );
        let d = decide(&[(Pass, NotObserved)]);
        assert_eq!(
            (d.result, d.finding),
            (FloorResult::Undecided, Finding::NotObservedAtBase)
        );
        let d = decide(&[(Flaky, Fail)]);
        assert_eq!(
            (d.result, d.finding),
            (FloorResult::Undecided, Finding::FlakyAtHead)
        );
        let d = decide(&[(Pass, Pass), (Pass, Fail)]);
        assert_eq!((d.result, d.decisive), (FloorResult::Satisfied, Some(1)));
    }
}

/// The pass-to-pass guard's rule over (head, base) of every guarded test: only tests that pass
/// at base count; any of them not passing at head is a regression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardFinding {
    NoTests,
    NothingPassedAtBase,
    Regressed(usize),
    Flaky(usize),
    Unobservable(usize),
    Held(usize),
}

pub fn decide_guard(tests: &[(SideState, SideState)]) -> (FloorResult, GuardFinding) {
    if tests.is_empty() {
        return (FloorResult::Undecided, GuardFinding::NoTests);
    }
    let kept: Vec<usize> = (0..tests.len())
        .filter(|i| tests[*i].1 == SideState::Pass)
        .collect();
    if let Some(i) = tests
        .iter()
        .position(|(_, b)| matches!(b, SideState::Flaky | SideState::Unobservable(_)))
    {
        return (FloorResult::Undecided, GuardFinding::Unobservable(i));
    }
    if kept.is_empty() {
        return (FloorResult::Satisfied, GuardFinding::NothingPassedAtBase);
    }
    if let Some(&i) = kept.iter().find(|i| {
        matches!(
            tests[**i].0,
            SideState::Fail | SideState::BuildFail { .. } | SideState::NotObserved
        )
    }) {
        return (FloorResult::Unsatisfied, GuardFinding::Regressed(i));
    }
    if let Some(&i) = kept.iter().find(|i| tests[**i].0 == SideState::Flaky) {
        return (FloorResult::Undecided, GuardFinding::Flaky(i));
    }
    if let Some(&i) = kept
        .iter()
        .find(|i| matches!(tests[**i].0, SideState::Unobservable(_)))
    {
        return (FloorResult::Undecided, GuardFinding::Unobservable(i));
    }
    (FloorResult::Satisfied, GuardFinding::Held(kept.len()))
}

#[cfg(test)]
mod guard_tests {
    use super::*;
    use SideState::*;

    #[test]
    fn only_tests_green_at_base_are_guarded() {
        assert_eq!(decide_guard(&[]).0, FloorResult::Undecided);
        assert_eq!(
            decide_guard(&[(Pass, Pass), (Pass, Fail)]).0,
            FloorResult::Satisfied
        );
        assert_eq!(
            decide_guard(&[(Fail, Fail)]),
            (FloorResult::Satisfied, GuardFinding::NothingPassedAtBase)
        );
        assert_eq!(
            decide_guard(&[(Pass, Pass), (Fail, Pass)]),
            (FloorResult::Unsatisfied, GuardFinding::Regressed(1))
        );
        assert_eq!(
            decide_guard(&[(NotObserved, Pass)]).0,
            FloorResult::Unsatisfied
        );
        assert_eq!(decide_guard(&[(Flaky, Pass)]).0, FloorResult::Undecided);
        assert_eq!(decide_guard(&[(Pass, Flaky)]).0, FloorResult::Undecided);
        assert_eq!(
            decide_guard(&[(Pass, Unobservable("t".into()))]).0,
            FloorResult::Undecided
        );
    }
}
