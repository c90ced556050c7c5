//! The floor's decision for each criterion bound to tests, and for the pass-to-pass guard:
//! observations collapsed per side, the pure rule applied, the harness guard and the
//! worktree-rewrite check layered on top, the reason and the decisive evidence chosen.

use super::*;

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
    }
}
/// The listed tests whose ids match a `guard` glob.
pub(super) fn guarded_tests(
    globs: &[String],
    listings: &[Vec<runners::TestCase>],
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
                runner,
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
    listings: &[Vec<runners::TestCase>],
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

pub(super) fn decide_guard(
    cx: &Ctx<'_>,
    tests: &[BoundTest],
    head_obs: &BTreeMap<(usize, String), Observed>,
    base_obs: &BTreeMap<(usize, String), Observed>,
    list_problems: &[Option<(String, bool)>],
) -> CriterionFloor {
    let empty = Observed::default();
    let mut states = Vec::new();
    let mut observations = Vec::new();
    let mut all = Vec::new();
    for t in tests {
        let key = (t.runner, t.id.clone());
        let h = head_obs.get(&key).unwrap_or(&empty);
        let b = base_obs.get(&key).unwrap_or(&empty);
        let hs = SideState::collapse(&h.outcomes, h.problem.as_deref(), false);
        let bs = SideState::collapse(&b.outcomes, b.problem.as_deref(), false);
        all.extend(h.evidence.iter().chain(&b.evidence).cloned());
        observations.push(TestObservation {
            id: t.id.clone(),
            runner: cx.adapters[t.runner].kind().as_str().to_string(),
            file: t.file.clone(),
            head: hs.label().to_string(),
            base: bs.label().to_string(),
            head_evidence: h.evidence.clone(),
            base_evidence: b.evidence.clone(),
            base_failure: None,
        });
        states.push((hs, bs));
    }
    let (result, finding) = rule::decide_guard(&states);
    let globs = if cx.input.acceptance.guarded_criteria().is_empty() {
        cx.input.acceptance.guard.join(", ")
    } else {
        cx.input.acceptance.guard_scope()
    };
    let (reason, decisive) = match finding {
        rule::GuardFinding::NoTests => (
            match list_problems.iter().flatten().next() {
                Some((p, _)) => format!("the guard ({globs}) could not list tests at head: {p}"),
                None => format!("the guard ({globs}) matches no test at head"),
            },
            None,
        ),
        rule::GuardFinding::NothingPassedAtBase => (
            format!(
                "none of the {} guarded tests passed at base: nothing to keep",
                tests.len()
            ),
            None,
        ),
        rule::GuardFinding::Regressed(i) => (
            format!(
                "regression: {} passes at base and {} at head",
                tests[i].id,
                past(states[i].0.label())
            ),
            Some((i, "head")),
        ),
        rule::GuardFinding::Flaky(i) => (
            format!("flaky: {} gave mixed results at head", tests[i].id),
            Some((i, "head")),
        ),
        rule::GuardFinding::Unobservable(i) => (
            format!(
                "{} could not be observed: {} at base, {} at head",
                tests[i].id,
                states[i].1.label(),
                states[i].0.label()
            ),
            Some((i, "base")),
        ),
        rule::GuardFinding::Held(n) => (
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
                past(if side == "head" { &o.head } else { &o.base })
            ),
        })
    });
    all.sort();
    all.dedup();
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
#[allow(clippy::too_many_arguments)]
pub(super) fn decide_tests(
    c: &Criterion,
    b: &Binding,
    cx: &Ctx<'_>,
    head_obs: &BTreeMap<(usize, String), Observed>,
    base_obs: &BTreeMap<(usize, String), Observed>,
    list_problems: &[Option<(String, bool)>],
    head_build: &[Option<(Vec<String>, bool)>],
    list_evidence: &[Option<String>],
) -> CriterionFloor {
    let tests = b.tests();
    if tests.is_empty() {
        // Nothing listed could be bound; say why, and whether the runner could list at all.
        let listing_ev = list_evidence.iter().flatten().next().cloned();
        let build_problem = list_problems
            .iter()
            .flatten()
            .find(|(_, build)| *build)
            .cloned();
        let other_problem = list_problems
            .iter()
            .flatten()
            .find(|(_, build)| !*build)
            .cloned();
        // Where head does not build, a criterion whose tag is in a file that failed, or (when
        // nothing could be listed) anywhere in head's files, is bound to something broken.
        let broken_file = head_build
            .iter()
            .flatten()
            .flat_map(|(files, _)| files.iter())
            .find(|f| tag_matches(f, &c.tag))
            .cloned()
            .or_else(|| {
                head_build
                    .iter()
                    .flatten()
                    .any(|(_, whole)| *whole)
                    .then(|| tag_in_head(cx.input.git, &cx.input.head, &c.tag))
                    .flatten()
            });
        // DESIGN 5.6: a tag in no tracked file at head cannot be in any test id or test path.
        let nowhere = matches!(b, Binding::Tag(_))
            && !cx.adapters.is_empty()
            && cx.scan.as_ref().is_some_and(|s| !s.found(&c.tag));
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
            (Binding::ExplicitTest { id, .. }, _, None, None) => (
                FloorResult::Unsatisfied,
                format!("check.test `{id}` names no test at head (a filter that matches nothing is never a pass)"),
            ),
            _ if cx.adapters.is_empty() => (
                FloorResult::Unbound,
                "no test runner detected, so no tagged test could be found".to_string(),
            ),
            _ => (
                FloorResult::Unbound,
                format!("no test id or test file path carries the tag {}", c.tag),
            ),
        };
        let mut cf = CriterionFloor::simple(result, &reason, b.kind());
        if let (true, Some(ev)) = (nowhere, &cx.scan_evidence) {
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
        return cf;
    }
    let empty = Observed::default();
    let mut states = Vec::new();
    let mut observations = Vec::new();
    let mut all = Vec::new();
    for t in tests {
        let key = (t.runner, t.id.clone());
        let h = head_obs.get(&key).unwrap_or(&empty);
        let bo = base_obs.get(&key).unwrap_or(&empty);
        let hs = SideState::collapse(&h.outcomes, h.problem.as_deref(), false);
        // DESIGN 5.4: a build failure at base counts only when it is the test item's own.
        let bs = SideState::collapse(
            &bo.outcomes,
            bo.problem.as_deref(),
            bo.attribution.as_ref().is_some_and(Attribution::is_own),
        );
        let base_failure = match bs {
            SideState::BuildFail { attributed: true } => Some(FailureKind::BuildFailureInTest),
            SideState::Fail => bo.failure_kind,
            _ => None,
        };
        all.extend(h.evidence.iter().cloned());
        all.extend(bo.evidence.iter().cloned());
        observations.push(TestObservation {
            id: t.id.clone(),
            runner: cx.adapters[t.runner].kind().as_str().to_string(),
            file: t.file.clone(),
            head: hs.label().to_string(),
            base: bs.label().to_string(),
            head_evidence: h.evidence.clone(),
            base_evidence: bo.evidence.clone(),
            base_failure,
        });
        states.push((hs, bs));
    }
    let Decision {
        result,
        finding,
        decisive,
    } = rule::decide(&states);
    let i = decisive.unwrap_or(0);
    let t: &BoundTest = &tests[i];
    let (hs, bs) = &states[i];
    let obs = &observations[i];
    let reason = match finding {
        Finding::FailsAtHead => match head_obs
            .get(&(t.runner, t.id.clone()))
            .and_then(|o| o.message.as_deref())
        {
            Some(m) => format!("bound test {} fails at head: {m}", t.id),
            None => format!("bound test {} fails at head", t.id),
        },
        Finding::DoesNotBuildAtHead => format!("bound test {} does not build at head", t.id),
        Finding::NotObservedAtHead => format!(
            "bound test {} was not observed passing at head (skipped, filtered out or absent)",
            t.id
        ),
        Finding::FlakyAtHead => format!("flaky: bound test {} gave mixed results at head", t.id),
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
                    count_fail_base(&states),
                    tests.len(),
                    t.id
                )
            },
            obs.base_failure
                .map(|k| format!(" ({})", k.as_str()))
                .unwrap_or_default()
        ),
        Finding::FlakyAtBase => format!("flaky: bound test {} gave mixed results at base", t.id),
        Finding::BaseDoesNotBuild => match base_obs
            .get(&(t.runner, t.id.clone()))
            .and_then(|o| o.attribution.as_ref())
        {
            Some(a) => format!(
                "base does not build for bound test {}, which was {}",
                t.id,
                a.describe()
            ),
            None => format!(
                "base does not build for bound test {}, which was never observed there",
                t.id
            ),
        },
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
    };
    let (ptr, side_label) = match finding {
        Finding::FailToPass
        | Finding::FlakyAtBase
        | Finding::BaseDoesNotBuild
        | Finding::UnobservableAtBase
        | Finding::NotObservedAtBase
        | Finding::ProvesNothing => (obs.base_evidence.last().cloned(), ("base", bs.label())),
        _ => (obs.head_evidence.last().cloned(), ("head", hs.label())),
    };
    // At base, the evidence says what kind of failure it is (DESIGN 5.4).
    let kind = match side_label.0 {
        "base" => obs.base_failure.map(|k| format!(": {}", k.as_str())),
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
    all.sort();
    all.dedup();
    // The harness guard: a test whose harness this change rewrote proves nothing either way.
    let tampered = tests.iter().find_map(|t| {
        let kind = cx.adapters[t.runner].kind();
        cx.harness
            .iter()
            .find(|h| !h.allowed && h.governs(kind, t.file.as_deref()))
    });
    let (result, reason) = match tampered {
        _ if !cx.rewritten.is_empty() => (
            FloorResult::Undecided,
            format!(
                "the run changed tracked files in a worktree ({}): a build step or a test rewrote the checkout, so the result ({}: {}) is not trusted",
                cx.rewritten.join(", "),
                result.as_str(),
                reason
            ),
        ),
        Some(h) => (
            FloorResult::Undecided,
            format!(
                "harness file {} ({}) changed in this change and decides how {} runs; the result ({}: {}) is not trusted. If the change is meant, allow it with harness.allow_changes",
                h.path, h.what, t.id, result.as_str(), reason
            ),
        ),
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
        reproduce: Some(reproduce(cx.adapters[t.runner].config(), &t.id)),
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
    let files = git
        .run(["ls-tree", "-r", "--name-only", head.as_str()])
        .ok()?;
    if let Some(f) = String::from_utf8_lossy(&files.stdout)
        .lines()
        .find(|f| tag_matches(f, tag))
    {
        return Some(f.to_string());
    }
    let out = git
        .run(["grep", "-l", "-i", "-E", &pattern, head.as_str()])
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .next()
        .map(|l| l.split_once(':').map(|(_, p)| p).unwrap_or(l).to_string())
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
