//! The floor's deciding phase: a pure function of what the observing phase saw.
//!
//! In: one criterion and its [`Binding`], and the run's [`Observations`] (plain data: every
//! test's outcomes per side with their evidence pointers, the listings' problems, the harness
//! changes, the tag scan). Out: its [`CriterionFloor`]. No I/O: everything the decision needs
//! was observed before, so the decision can be tested from plain data, as [`rule`] is.
//!
//! Steps, per criterion bound to tests:
//! 1. nothing bound: say why (the tag occurs nowhere, head does not build, the listing failed);
//! 2. each bound test's K runs per side collapse into a [`SideState`], a build failure at base
//!    counting only when it is the test item's own (book: floor/attribution.md);
//! 3. the pure rule ([`decision::decide`]) gives the result and the decisive test;
//! 4. the harness guard and the worktree-rewrite check layered on top;
//! 5. the reason and the decisive evidence chosen.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::acceptance::{tag_matches, Criterion};
use crate::error::Error;
use crate::format::floor::{CriterionFloor, EvidenceRef, TestObservation};
use crate::git::{CommitId, Git};
use crate::verdict::FloorResult;

use super::bind::{Binding, BoundTest, TestKey};
use super::runners::{FailureKind, Outcome, Runner, RunnerId};
use super::{bind, harness, runners, Observed};
use crate::decision;
use crate::decision::attribute::Attribution;
use crate::decision::{Decision, Finding, SideState};

/// What head's listing of one runner found.
#[derive(Debug, Clone, Default)]
pub(super) struct Listing {
    pub tests: Vec<runners::TestCase>,
    pub outcome: ListOutcome,
    /// The listing's evidence record.
    pub evidence: Option<String>,
}

/// How head's listing of one runner went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum ListOutcome {
    /// Listed, or nothing to list (no tag occurs under the runner's root).
    #[default]
    Listed,
    /// The setup or the listing could not run (a timeout, the runner crashed).
    Failed(String),
    /// Head does not build: the problem, the files its errors point into, and whether nothing
    /// was listed at all (a partial listing still binds what it found).
    DoesNotBuild {
        problem: String,
        files: Vec<String>,
        nothing_listed: bool,
    },
}

impl ListOutcome {
    /// The listing's problem, and whether it was a build failure.
    pub fn problem(&self) -> Option<(&str, bool)> {
        match self {
            ListOutcome::Listed => None,
            ListOutcome::Failed(p) => Some((p, false)),
            ListOutcome::DoesNotBuild { problem, .. } => Some((problem, true)),
        }
    }

    /// Head's build failure: the files its errors point into, and whether nothing was listed.
    pub fn build(&self) -> Option<(&[String], bool)> {
        match self {
            ListOutcome::DoesNotBuild {
                files,
                nothing_listed,
                ..
            } => Some((files, *nothing_listed)),
            _ => None,
        }
    }
}

/// What the observing phase saw, as plain data: everything the deciding phase reads.
#[derive(Default, Clone)]
pub(super) struct Observations {
    /// The runners, indexed as [`BoundTest::runner`] is.
    pub runners: Vec<Arc<dyn Runner>>,
    pub head: BTreeMap<TestKey, Observed>,
    pub base: BTreeMap<TestKey, Observed>,
    /// Per runner: how head's listing went, and its evidence record.
    pub listings: Vec<Listing>,
    pub harness: Vec<harness::HarnessChange>,
    /// Tracked files a run changed in a worktree (`head: path`, `base: path`).
    pub rewritten: Vec<String>,
    /// The tags the scan of head's tracked files found nowhere (`None`: no scan ran).
    pub tags_nowhere: Option<BTreeSet<String>>,
    pub scan_evidence: Option<String>,
    /// Per tag: the first file at head whose path or text carries it, for tags whose
    /// criterion bound nothing (from the tag scan; where none ran, only while head did not
    /// build).
    pub tag_files: BTreeMap<String, String>,
}

/// Why a tag that the scan found at head in `file` still bound no test: the file lies under no
/// runner's root, or the tag is in its text but in no listed test's id or path.
fn unbound_despite_scan(tag: &str, file: &str, runners: &[Arc<dyn Runner>]) -> String {
    let under = |root: &str| {
        let root = root.trim_end_matches('/');
        root == "." || root.is_empty() || file.starts_with(&format!("{root}/"))
    };
    if !runners.iter().any(|r| under(&r.config().root)) {
        let roots: Vec<String> = runners
            .iter()
            .map(|r| format!("{} at `{}`", r.kind().as_str(), r.config().root))
            .collect();
        return format!(
            "the tag {tag} occurs at head in {file}, which lies under no runner's root ({}); add a runner whose root holds it to `runners`",
            roots.join(", ")
        );
    }
    format!(
        "the tag {tag} occurs at head in {file}, but no test the runners listed carries it in its id or file path (a tag in a file's text binds only through a test's name or path); put the tag in the test's name, or bind the test with `check.test`"
    )
}

/// The criterion the pass-to-pass guard reports as (`stage1.floor.guard`); `scope` is
/// [`AcceptanceSet::guard_scope`](crate::acceptance::AcceptanceSet::guard_scope).
pub fn guard_criterion(scope: &str) -> Criterion {
    Criterion {
        id: "guard".into(),
        ac: format!("Tests that passed at base still pass at head ({scope})."),
        required: true,
        lane: crate::acceptance::Lane::Floor,
        check: None,
        tag: crate::acceptance::tag_for("guard"),
        line: 0,
        confidence: None,
        source: None,
    }
}
/// The listed tests whose ids match a `guard` glob.
pub(super) fn guarded_tests(
    globs: &[String],
    listings: &[&[runners::TestCase]],
) -> Result<Vec<BoundTest>, Error> {
    if globs.is_empty() {
        return Ok(Vec::new());
    }
    let mut gb = globset::GlobSetBuilder::new();
    for g in globs {
        gb.add(globset::Glob::new(g).map_err(|e| Error::crash(format!("guard glob `{g}`: {e}")))?);
    }
    let set = gb
        .build()
        .map_err(|e| Error::crash(format!("guard: {e}")))?;
    let mut out = Vec::new();
    for (runner, listing) in listings.iter().enumerate() {
        for t in listing.iter().filter(|t| set.is_match(&t.id)) {
            out.push(BoundTest {
                runner: RunnerId(runner),
                id: t.id.clone(),
                file: t.file.clone(),
            });
        }
    }
    Ok(out)
}
/// The tests bound to the inherited criteria kept as regression guards (`inherited: guard`),
/// bound exactly as their own change bound them (tag or `check.test`), and not already among
/// `guarded`.
pub(super) fn inherited_guard_tests(
    criteria: &[&Criterion],
    listings: &[&[runners::TestCase]],
    guarded: &[BoundTest],
) -> Vec<BoundTest> {
    let mut out: Vec<BoundTest> = Vec::new();
    for c in criteria {
        for t in bind::bind(c, listings).tests() {
            if !guarded.contains(t) && !out.contains(t) {
                out.push(t.clone());
            }
        }
    }
    out
}

/// Each bound test's runs collapsed per side ([`SideState::collapse`]), with its observation.
struct Collapsed {
    states: Vec<(SideState, SideState)>,
    observations: Vec<TestObservation>,
    /// Every run's evidence at both sides, sorted, each once.
    evidence: Vec<String>,
}

/// [`Collapsed`] of `tests`. `attributed`: a build failure at base counts only when it is the
/// test item's own (book: floor/attribution.md), and base's failure kind is kept, as a
/// criterion's tests are decided; the pass-to-pass guard counts neither.
fn collapse(tests: &[BoundTest], obs: &Observations, attributed: bool) -> Collapsed {
    let empty = Observed::default();
    let mut out = Collapsed {
        states: Vec::new(),
        observations: Vec::new(),
        evidence: Vec::new(),
    };
    for t in tests {
        let key = t.key();
        let h = obs.head.get(&key).unwrap_or(&empty);
        let b = obs.base.get(&key).unwrap_or(&empty);
        let hs = SideState::collapse(&h.outcomes, h.problem.as_deref(), false);
        let own = attributed && b.attribution.as_ref().is_some_and(Attribution::is_own);
        let bs = SideState::collapse(&b.outcomes, b.problem.as_deref(), own);
        let base_failure = match bs {
            _ if !attributed => None,
            SideState::BuildFail { attributed: true } => Some(FailureKind::BuildFailureInTest),
            SideState::Fail => b.failure_kind,
            _ => None,
        };
        out.evidence
            .extend(h.evidence.iter().chain(&b.evidence).cloned());
        out.observations.push(TestObservation {
            id: t.id.clone(),
            runner: runner_name(obs, t),
            file: t.file.clone(),
            head: hs.outcome(),
            base: bs.outcome(),
            head_evidence: h.evidence.clone(),
            base_evidence: b.evidence.clone(),
            base_failure,
        });
        out.states.push((hs, bs));
    }
    out.evidence.sort();
    out.evidence.dedup();
    out
}

/// The pass-to-pass guard's disposition; `scope` says what it keeps, in words.
pub(super) fn decide_guard(tests: &[BoundTest], obs: &Observations, scope: &str) -> CriterionFloor {
    let Collapsed {
        states,
        observations,
        evidence: all,
    } = collapse(tests, obs, false);
    let (result, finding) = decision::decide_guard(&states);
    let globs = scope;
    let (reason, decisive) = match finding {
        decision::GuardFinding::NoTests => (
            match obs.listings.iter().find_map(|l| l.outcome.problem()) {
                Some((p, _)) => format!("the guard ({globs}) could not list tests at head: {p}"),
                None => format!("the guard ({globs}) matches no test at head"),
            },
            None,
        ),
        decision::GuardFinding::NothingPassedAtBase => (
            format!(
                "none of the {} guarded tests passed at base: nothing to keep",
                tests.len()
            ),
            None,
        ),
        decision::GuardFinding::Regressed(i) => (
            format!(
                "regression: {} passes at base and {} at head",
                tests[i].id,
                past(states[i].0.label())
            ),
            Some((i, "head")),
        ),
        decision::GuardFinding::Flaky(i) => (
            format!(
                "flaky: {} passed {} at head",
                tests[i].id,
                runs_of(obs.head.get(&tests[i].key()).map_or(&[], |o| &o.outcomes))
            ),
            Some((i, "head")),
        ),
        decision::GuardFinding::Unobservable(i) => (
            format!(
                "{} could not be observed: {} at base, {} at head",
                tests[i].id,
                states[i].1.label(),
                states[i].0.label()
            ),
            Some((i, "base")),
        ),
        decision::GuardFinding::Held(n) => (
            format!("all {n} guarded tests that passed at base pass at head"),
            None,
        ),
    };
    let evidence = decisive.and_then(|(i, side)| {
        let o = &observations[i];
        let ev = if side == "head" {
            &o.head_evidence
        } else {
            &o.base_evidence
        };
        ev.last().map(|p| EvidenceRef {
            pointer: p.clone(),
            detail: format!(
                "{}, {} at {side}",
                o.id,
                past(if side == "head" {
                    o.head.as_str()
                } else {
                    o.base.as_str()
                })
            ),
        })
    });
    // A guard is as blind as the runs it reads.
    let (result, reason) = match untrusted(tests, obs, result, &reason) {
        Some(why) => (FloorResult::Undecided, why),
        None => (result, reason),
    };
    CriterionFloor {
        result,
        reason,
        binding: "guard".into(),
        base_summary: summarize(states.iter().map(|(_, b)| b)),
        head_summary: summarize(states.iter().map(|(h, _)| h)),
        tests: observations,
        evidence,
        evidence_all: all,
        reproduce: None,
    }
}
/// Why the runs of `tests` are not trusted, whatever they showed (`result` and `reason`, named
/// in the answer): a run changed tracked files in a worktree, a command of the floor wrote a
/// file that decides how they ran (book: floor/harness.md, "Written at run time"), or the
/// change rewrote their harness (and `harness.allow_changes` does not cover it).
fn untrusted(
    tests: &[BoundTest],
    obs: &Observations,
    result: FloorResult,
    reason: &str,
) -> Option<String> {
    if !obs.rewritten.is_empty() {
        return Some(format!(
            "the run changed tracked files in a worktree ({}): a build step or a test rewrote the checkout, so the result ({}: {}) is not trusted",
            obs.rewritten.join(", "),
            result.as_str(),
            reason
        ));
    }
    let planted = tests.iter().find_map(|t| {
        [&obs.head, &obs.base]
            .iter()
            .find_map(|m| m.get(&t.key())?.tainted.clone())
    });
    if let Some(why) = planted {
        return Some(format!(
            "{why}: a command of the floor wrote it, and it decides how the bound tests ran; the result ({}: {}) is not trusted",
            result.as_str(),
            reason
        ));
    }
    // The harness guard: a test whose harness this change rewrote proves nothing either way.
    let (t, h) = tests.iter().find_map(|t| {
        let family = obs.runners.get(t.runner.0)?.family();
        obs.harness
            .iter()
            .find(|h| !h.allowed && h.governs(family, t.file.as_deref()))
            .map(|h| (t, h))
    })?;
    Some(format!(
        "harness file {} ({}) changed in this change and decides how {} runs; the result ({}: {}) is not trusted. If the change is meant, allow it with harness.allow_changes",
        h.path, h.what, t.id, result.as_str(), reason
    ))
}

/// The runner's name as reports show it.
fn runner_name(obs: &Observations, t: &BoundTest) -> String {
    obs.runners
        .get(t.runner.0)
        .map(|r| r.kind().as_str().to_string())
        .unwrap_or_default()
}

/// `; did you mean `a`?`, `; did you mean `a` or `b`?`, … over the listed ids nearest to a
/// `check.test` that names none; empty when none is near.
fn did_you_mean(near: &[String]) -> String {
    let quoted: Vec<String> = near.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => format!("; did you mean {last}?"),
        Some((last, rest)) => format!("; did you mean {} or {last}?", rest.join(", ")),
    }
}

/// A criterion whose binding found no test: why (the tag occurs nowhere, head does not build,
/// the listing failed, nothing carries the tag), with the listing's or the scan's evidence.
fn decide_unbound(c: &Criterion, b: &Binding, obs: &Observations) -> CriterionFloor {
    let problems = || obs.listings.iter().filter_map(|l| l.outcome.problem());
    let head_build = || obs.listings.iter().filter_map(|l| l.outcome.build());
    let listing_ev = obs.listings.iter().find_map(|l| l.evidence.clone());
    let build_problem = problems().find(|(_, build)| *build);
    let other_problem = problems().find(|(_, build)| !*build);
    // Where head does not build, a criterion whose tag is in a file that failed, or (when
    // nothing could be listed) anywhere in head's files, is bound to something broken.
    let broken_file = head_build()
        .flat_map(|(files, _)| files.iter())
        .find(|f| tag_matches(f, &c.tag))
        .cloned()
        .or_else(|| {
            head_build()
                .any(|(_, whole)| whole)
                .then(|| obs.tag_files.get(&c.tag).cloned())
                .flatten()
        });
    // A tag in no tracked file at head cannot be in any test id or test path (book: floor.md).
    let nowhere = matches!(b, Binding::Tag(_))
        && !obs.runners.is_empty()
        && obs
            .tags_nowhere
            .as_ref()
            .is_some_and(|n| n.contains(&c.tag));
    let (result, reason) = match (b, broken_file, build_problem, other_problem) {
        _ if nowhere => (
            FloorResult::Unbound,
            format!(
                "the tag {} occurs in no tracked file at head (no path, no contents), so no test can carry it and nothing was built; bind a test whose name a macro pastes together with `check.test`",
                c.tag
            ),
        ),
        (_, Some(f), Some((p, _)), _) => (
            FloorResult::Unsatisfied,
            format!("{p}; the tag is in {f}, whose tests could not be listed"),
        ),
        (_, _, _, Some((p, _))) => (
            FloorResult::Undecided,
            format!("tests could not be listed at head: {p}"),
        ),
        (Binding::ExplicitTest { id, .. }, _, Some((p, _)), None) => (
            FloorResult::Unsatisfied,
            format!("check.test `{id}` could not be listed: {p}"),
        ),
        (Binding::ExplicitTest { id, near, .. }, _, None, None) => (
            FloorResult::Unsatisfied,
            format!(
                "check.test `{id}` names no test at head (a filter that matches nothing is never a pass){}",
                did_you_mean(near)
            ),
        ),
        _ if obs.runners.is_empty() => (
            FloorResult::Unbound,
            "no test runner detected, so no tagged test could be found".to_string(),
        ),
        _ => (
            FloorResult::Unbound,
            match obs.tag_files.get(&c.tag) {
                Some(f) => unbound_despite_scan(&c.tag, f, &obs.runners),
                None => format!("no test id or test file path carries the tag {}", c.tag),
            },
        ),
    };
    let mut cf = CriterionFloor::new(result, &reason, b.kind());
    if let (true, Some(ev)) = (nowhere, &obs.scan_evidence) {
        cf.evidence = Some(EvidenceRef {
            pointer: ev.clone(),
            detail: "tag scan of head's tracked files".into(),
        });
        cf.evidence_all.push(ev.clone());
    } else if let Some(ev) = listing_ev {
        cf.evidence = Some(EvidenceRef {
            pointer: ev.clone(),
            detail: "test listing at head".into(),
        });
        cf.evidence_all.push(ev);
    }
    cf
}

/// The reason a bound test's finding is worded as: `tests[i]` is the decisive test, `states`
/// every bound test's side states, `decided` its observation.
fn finding_reason(
    finding: &Finding,
    tests: &[BoundTest],
    i: usize,
    states: &[(SideState, SideState)],
    decided: &TestObservation,
    obs: &Observations,
) -> String {
    let (head_obs, base_obs) = (&obs.head, &obs.base);
    let empty = Observed::default();
    let t = &tests[i];
    let (hs, bs) = &states[i];
    match finding {
        Finding::FailsAtHead => match head_obs.get(&t.key()).and_then(|o| o.message.as_deref()) {
            Some(m) => format!("bound test {} fails at head: {m}", t.id),
            None => format!("bound test {} fails at head", t.id),
        },
        Finding::DoesNotBuildAtHead => format!("bound test {} does not build at head", t.id),
        Finding::NotObservedAtHead => format!(
            "bound test {} was not observed passing at head (skipped, filtered out or absent)",
            t.id
        ),
        Finding::FlakyAtHead => format!(
            "flaky: bound test {} passed {} at head",
            t.id,
            runs_of(&head_obs.get(&t.key()).unwrap_or(&empty).outcomes)
        ),
        Finding::UnobservableAtHead => format!(
            "bound test {} could not be observed at head: {}",
            t.id,
            unobservable(hs)
        ),
        Finding::FailToPass => format!(
            "{} fails at base{} and passes at head",
            if tests.len() == 1 {
                t.id.clone()
            } else {
                format!(
                    "{} of {} bound tests: {}",
                    count_fail_base(states),
                    tests.len(),
                    t.id
                )
            },
            decided
                .base_failure
                .map(|k| format!(" ({})", k.as_str()))
                .unwrap_or_default()
        ),
        Finding::FlakyAtBase => format!(
            "flaky: bound test {} passed {} at base",
            t.id,
            runs_of(&base_obs.get(&t.key()).unwrap_or(&empty).outcomes)
        ),
        Finding::BaseDoesNotBuild => {
            match base_obs.get(&t.key()).and_then(|o| o.attribution.as_ref()) {
                Some(a) => format!(
                    "base does not build for bound test {}, which was {}",
                    t.id,
                    a.describe()
                ),
                None => format!(
                    "base does not build for bound test {}, which was never observed there",
                    t.id
                ),
            }
        }
        Finding::UnobservableAtBase => format!(
            "bound test {} could not be observed at base: {}",
            t.id,
            unobservable(bs)
        ),
        Finding::NotObservedAtBase => format!(
            "bound test {} was not observed at base (absent, skipped or filtered there)",
            t.id
        ),
        Finding::ProvesNothing => {
            format!("proves nothing: bound test {} already passes at base", t.id)
        }
        Finding::NoTests => "no bound test".to_string(),
    }
}

/// The disposition of a criterion bound to tests (by tag or `check.test`): see the module doc.
pub(super) fn decide_tests(c: &Criterion, b: &Binding, obs: &Observations) -> CriterionFloor {
    let tests = b.tests();
    if tests.is_empty() {
        // Nothing listed could be bound; say why, and whether the runner could list at all.
        return decide_unbound(c, b, obs);
    }
    let Collapsed {
        states,
        observations,
        evidence: all,
    } = collapse(tests, obs, true);
    let Decision {
        result,
        finding,
        decisive,
    } = decision::decide(&states);
    let i = decisive.unwrap_or(0);
    let t: &BoundTest = &tests[i];
    let (hs, bs) = &states[i];
    let decided = &observations[i];
    let reason = finding_reason(&finding, tests, i, &states, decided, obs);
    let (ptr, side_label) = match finding {
        Finding::FailToPass
        | Finding::FlakyAtBase
        | Finding::BaseDoesNotBuild
        | Finding::UnobservableAtBase
        | Finding::NotObservedAtBase
        | Finding::ProvesNothing => (decided.base_evidence.last().cloned(), ("base", bs.label())),
        _ => (decided.head_evidence.last().cloned(), ("head", hs.label())),
    };
    // At base, the evidence says what kind of failure it is (book: floor/attribution.md).
    let kind = match side_label.0 {
        "base" => decided.base_failure.map(|k| format!(": {}", k.as_str())),
        _ => None,
    };
    let evidence = ptr.map(|pointer| EvidenceRef {
        pointer,
        detail: format!(
            "{}, {} at {}{}",
            t.id,
            past(side_label.1),
            side_label.0,
            kind.unwrap_or_default()
        ),
    });
    let (result, reason) = match untrusted(tests, obs, result, &reason) {
        Some(why) => (FloorResult::Undecided, why),
        None => (result, reason),
    };
    CriterionFloor {
        result,
        reason,
        binding: b.kind().to_string(),
        base_summary: summarize(states.iter().map(|(_, b)| b)),
        head_summary: summarize(states.iter().map(|(h, _)| h)),
        tests: observations,
        evidence,
        evidence_all: all,
        reproduce: obs.runners.get(t.runner.0).map(|r| r.reproduce(&t.id)),
    }
}
/// The first file at `head` whose path or text carries the tag (git grep, case-folded, `-` and
/// `_` alike, whole token).
pub(super) fn tag_in_head(git: &Git, head: &CommitId, tag: &str) -> Option<String> {
    let body: String = tag
        .chars()
        .map(|ch| match ch {
            '-' | '_' => "[-_]".to_string(),
            c => c.to_string(),
        })
        .collect();
    let pattern = format!("(^|[^A-Za-z0-9]){body}([^A-Za-z0-9]|$)");
    let files = git.files(head.as_str(), None).ok()?;
    if let Some(f) = files.into_iter().find(|f| tag_matches(f, tag)) {
        return Some(f);
    }
    git.grep_files(head, &pattern).ok()?.into_iter().next()
}
pub(super) fn count_fail_base(states: &[(SideState, SideState)]) -> usize {
    states
        .iter()
        .filter(|(_, b)| {
            matches!(
                b,
                SideState::Fail | SideState::BuildFail { attributed: true }
            )
        })
        .count()
}
pub(super) fn unobservable(s: &SideState) -> String {
    match s {
        SideState::Unobservable(p) => p.clone(),
        other => other.label().to_string(),
    }
}
pub(super) fn past(label: &str) -> &str {
    match label {
        "pass" => "passed",
        "fail" => "failed",
        "build_fail" => "did not build",
        "not_observed" => "not observed",
        "flaky" => "flaky",
        _ => "unobservable",
    }
}
/// How many of a side's runs passed, for a flaky result (`1 of 2`), to read against `--runs`.
pub(super) fn runs_of(outcomes: &[Outcome]) -> String {
    let passed = outcomes.iter().filter(|o| **o == Outcome::Pass).count();
    format!("{passed} of {}", outcomes.len())
}

/// One word for a side across several tests: the same state for all, or `mixed`.
pub(super) fn summarize<'a>(mut it: impl Iterator<Item = &'a SideState>) -> String {
    let Some(first) = it.next() else {
        return "—".into();
    };
    if it.all(|s| s.label() == first.label()) {
        first.label().to_string()
    } else {
        "mixed".into()
    }
}

#[cfg(test)]
mod tests {
    //! The deciding phase from plain data: no worktree, no runner, no I/O.

    use std::collections::{BTreeMap, BTreeSet};

    use super::{decide_guard, decide_tests, did_you_mean, guard_criterion, Observations};
    use super::{ListOutcome, Listing};
    use crate::acceptance::{tag_for, Criterion, Lane, RunnerConfig, RunnerKind};
    use crate::decision::attribute::{Attribution, Diagnostic};
    use crate::floor::bind::{Binding, BoundTest, TestKey};
    use crate::floor::harness::{Family, HarnessChange};
    use crate::floor::runners::registry::Registry;
    use crate::floor::runners::{FailureKind, Outcome, Runner, RunnerId};
    use crate::floor::Observed;
    use crate::verdict::FloorResult;
    use std::sync::Arc;

    const ID: &str = "tests/test_refund.py::test_refund";

    fn criterion(id: &str) -> Criterion {
        Criterion {
            id: id.into(),
            ac: "Refunds are idempotent.".into(),
            required: true,
            lane: Lane::Floor,
            check: None,
            tag: tag_for(id),
            line: 3,
            confidence: None,
            source: None,
        }
    }

    fn bound() -> Binding {
        Binding::Tag(vec![BoundTest {
            runner: RunnerId(0),
            id: ID.into(),
            file: Some("tests/test_refund.py".into()),
        }])
    }

    fn observed(outcome: Outcome, pointer: &str) -> Observed {
        Observed {
            outcomes: vec![outcome],
            evidence: vec![pointer.into()],
            ..Default::default()
        }
    }

    /// A pytest runner rooted at `root`.
    fn pytest_at(root: &str) -> Arc<dyn Runner> {
        Registry::builtin()
            .make(RunnerConfig {
                kind: RunnerKind::Pytest,
                root: root.into(),
                args: vec![],
                setup: None,
                command: None,
                line: 0,
                env_pass: Vec::new(),
            })
            .expect("a builtin runner")
    }

    /// A pytest run whose bound test observed `head` and `base`.
    fn run(head: Observed, base: Observed) -> Observations {
        let key = TestKey {
            runner: RunnerId(0),
            id: ID.to_string(),
        };
        Observations {
            runners: vec![pytest_at(".")],
            head: BTreeMap::from([(key.clone(), head)]),
            base: BTreeMap::from([(key, base)]),
            listings: vec![Listing {
                evidence: Some("sha256:list".into()),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn fail_to_pass_is_satisfied_and_cites_the_base_failure_and_its_kind() {
        let mut base = observed(Outcome::Fail, "sha256:base");
        base.failure_kind = Some(FailureKind::Assertion);
        let obs = run(observed(Outcome::Pass, "sha256:head"), base);
        let cf = decide_tests(&criterion("refund"), &bound(), &obs);
        assert_eq!(cf.result, FloorResult::Satisfied, "{}", cf.reason);
        assert_eq!(
            cf.reason,
            format!("{ID} fails at base (an assertion) and passes at head")
        );
        let ev = cf.evidence.expect("decisive evidence");
        assert_eq!(ev.pointer, "sha256:base");
        assert!(
            ev.detail.ends_with("failed at base: an assertion"),
            "{}",
            ev.detail
        );
        assert_eq!(cf.evidence_all, ["sha256:base", "sha256:head"]);
        assert_eq!(
            cf.reproduce.as_deref(),
            Some(format!("pytest {ID}").as_str())
        );
    }

    fn build_fail_at_base(attribution: Attribution) -> Observations {
        let mut base = observed(Outcome::BuildFail, "sha256:base");
        base.attribution = Some(attribution);
        run(observed(Outcome::Pass, "sha256:head"), base)
    }

    fn diagnostic(line: u32) -> Diagnostic {
        Diagnostic {
            file: "tests/test_refund.py".into(),
            line,
            column: None,
            message: "cannot import name 'refund_twice'".into(),
            names: vec!["refund_twice".into()],
        }
    }

    #[test]
    fn a_build_failure_at_base_counts_only_when_it_is_the_tests_own() {
        let own = build_fail_at_base(Attribution::InTest {
            diagnostic: diagnostic(7),
        });
        let cf = decide_tests(&criterion("refund"), &bound(), &own);
        assert_eq!(cf.result, FloorResult::Satisfied, "{}", cf.reason);
        assert!(
            cf.reason.contains("(a build failure in the test)"),
            "{}",
            cf.reason
        );

        let elsewhere = build_fail_at_base(Attribution::Elsewhere {
            diagnostic: diagnostic(2),
        });
        let cf = decide_tests(&criterion("refund"), &bound(), &elsewhere);
        assert_eq!(cf.result, FloorResult::Undecided, "{}", cf.reason);
        assert!(
            cf.reason.contains("never observed at base"),
            "{}",
            cf.reason
        );
        assert!(
            cf.reason.contains("tests/test_refund.py:2"),
            "{}",
            cf.reason
        );
    }

    #[test]
    fn a_changed_harness_or_a_rewritten_checkout_makes_any_result_untrusted() {
        let satisfied = run(
            observed(Outcome::Pass, "sha256:head"),
            observed(Outcome::Fail, "sha256:base"),
        );
        let mut harness = satisfied.clone();
        harness.harness = vec![HarnessChange {
            path: "tests/conftest.py".into(),
            what: "pytest conftest".into(),
            family: Family::Python,
            scope: "tests".into(),
            allowed: false,
        }];
        let cf = decide_tests(&criterion("refund"), &bound(), &harness);
        assert_eq!(cf.result, FloorResult::Undecided);
        assert!(
            cf.reason.contains("harness file tests/conftest.py"),
            "{}",
            cf.reason
        );

        harness.harness[0].allowed = true;
        let cf = decide_tests(&criterion("refund"), &bound(), &harness);
        assert_eq!(cf.result, FloorResult::Satisfied, "{}", cf.reason);

        let mut rewritten = satisfied;
        rewritten.rewritten = vec!["base: src/refund.py".into()];
        let cf = decide_tests(&criterion("refund"), &bound(), &rewritten);
        assert_eq!(cf.result, FloorResult::Undecided);
        assert!(cf.reason.contains("base: src/refund.py"), "{}", cf.reason);
    }

    #[test]
    fn a_flaky_side_counts_its_passing_runs() {
        use Outcome::*;
        assert_eq!(super::runs_of(&[Pass, Fail]), "1 of 2");
        assert_eq!(super::runs_of(&[Fail, Pass, Pass]), "2 of 3");
        assert_eq!(super::runs_of(&[NotObserved, Fail]), "0 of 2");
    }

    #[test]
    fn did_you_mean_names_each_near_id_in_backticks() {
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(did_you_mean(&[]), "");
        assert_eq!(did_you_mean(&ids(&["a"])), "; did you mean `a`?");
        assert_eq!(
            did_you_mean(&ids(&["a", "b", "c"])),
            "; did you mean `a`, `b` or `c`?"
        );
    }

    #[test]
    fn a_tag_the_scan_found_nowhere_is_unbound_on_the_scans_evidence() {
        let c = criterion("refund");
        let mut obs = run(Observed::default(), Observed::default());
        obs.tags_nowhere = Some(BTreeSet::from([c.tag.clone()]));
        obs.scan_evidence = Some("sha256:scan".into());
        let cf = decide_tests(&c, &Binding::Tag(vec![]), &obs);
        assert_eq!(cf.result, FloorResult::Unbound);
        assert!(
            cf.reason.contains("occurs in no tracked file"),
            "{}",
            cf.reason
        );
        assert!(cf.reason.contains("check.test"), "{}", cf.reason);
        assert_eq!(
            cf.evidence.map(|e| e.pointer).as_deref(),
            Some("sha256:scan")
        );

        // Found by the scan but bound to no listed test: the listing is the evidence.
        obs.tags_nowhere = Some(BTreeSet::new());
        let cf = decide_tests(&c, &Binding::Tag(vec![]), &obs);
        assert_eq!(cf.result, FloorResult::Unbound);
        assert!(
            cf.reason.contains("no test id or test file path"),
            "{}",
            cf.reason
        );
        assert_eq!(
            cf.evidence.map(|e| e.pointer).as_deref(),
            Some("sha256:list")
        );

        // The scan names the file it found the tag in: the reason says where and why it bound
        // nothing, never "no test … carries the tag" as if the scan had not found it.
        obs.tag_files = BTreeMap::from([(c.tag.clone(), "member/src/lib.rs".to_string())]);
        let cf = decide_tests(&c, &Binding::Tag(vec![]), &obs);
        assert_eq!(cf.result, FloorResult::Unbound);
        assert!(
            cf.reason.contains("occurs at head in member/src/lib.rs")
                && cf.reason.contains("check.test"),
            "{}",
            cf.reason
        );
        obs.runners[0] = pytest_at("other");
        let cf = decide_tests(&c, &Binding::Tag(vec![]), &obs);
        assert!(
            cf.reason.contains("lies under no runner's root") && cf.reason.contains("at `other`"),
            "{}",
            cf.reason
        );
    }

    #[test]
    fn a_tag_in_a_file_that_does_not_build_at_head_is_unsatisfied() {
        let c = criterion("refund");
        let mut obs = run(Observed::default(), Observed::default());
        obs.listings[0].outcome = ListOutcome::DoesNotBuild {
            problem: "head does not build: E0425".into(),
            files: vec!["src/lib.rs".into()],
            nothing_listed: true,
        };
        obs.tag_files = BTreeMap::from([(c.tag.clone(), "tests/refund.rs".to_string())]);
        let cf = decide_tests(&c, &Binding::Tag(vec![]), &obs);
        assert_eq!(cf.result, FloorResult::Unsatisfied, "{}", cf.reason);
        assert!(cf.reason.contains("tests/refund.rs"), "{}", cf.reason);
    }

    #[test]
    fn the_guard_reports_a_regression_at_head() {
        let obs = run(
            observed(Outcome::Fail, "sha256:head"),
            observed(Outcome::Pass, "sha256:base"),
        );
        let tests = bound().tests().to_vec();
        let cf = decide_guard(&tests, &obs, "tests/**");
        assert_eq!(cf.result, FloorResult::Unsatisfied, "{}", cf.reason);
        assert_eq!(
            cf.reason,
            format!("regression: {ID} passes at base and failed at head")
        );
        assert_eq!(
            cf.evidence.map(|e| e.pointer).as_deref(),
            Some("sha256:head")
        );
        assert!(guard_criterion("tests/**").ac.contains("tests/**"));
    }
}
