//! The deterministic floor: binds each criterion to a mechanical check and observes it at the
//! base and head commits. It says only yes (`satisfied`), a hard no (`unsatisfied`), "no check
//! could be bound" (`unbound`) or "bound but not observable" (`undecided`).
//!
//! In: the repository, the validated acceptance set, base and head commits, the runners.
//! Out: a [`FloorReport`]: one [`FloorEntry`] per criterion (the criterion with its
//! [`CriterionFloor`]), then one for the pass-to-pass guard; the commands that ran, the files
//! laid over base; every observation stored in the evidence store.
//!
//! Steps:
//! 1. head: a detached worktree at the head commit; the tag scan of its tracked files ([`scan`]);
//!    each runner's `setup`, then its test listing, scoped to the files that carry a tag (a
//!    runner under whose root no tag occurs is neither set up nor listed);
//! 2. bind each criterion ([`bind`]): tag, `check.test`, `check.command` or `check.pattern`;
//! 3. head: run the bound tests `runs` times each, retries off;
//! 4. base: a detached worktree at base with head's test files laid over it; `setup`; the same
//!    tests, `runs` times;
//! 5. commands at both sides, patterns at head;
//! 6. decide each criterion with the pure rule ([`rule`]).
//!
//! Build outputs are never shared between the worktrees: each side has its own
//! `CARGO_TARGET_DIR`, because a shared one has been seen to run the other side's stale binary.

pub mod attribute;
pub mod bind;
mod checks;
mod decide;
pub mod harness;
pub use crate::process;
pub mod progress;
pub mod rule;
pub mod runners;
pub mod scan;
mod workspace;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::acceptance::{tag_matches, AcceptanceSet, Criterion, RunnerConfig, RunnerKind};
use crate::clock::Clock;
use crate::error::{Error, InputError};
use crate::evidence::{EvidenceStore, Normalizer, RECORD_SCHEMA};
use crate::format::evidence::{OverlayRef, PatternMatch, PatternRecord, Record, RunRecord};
use crate::git::{Change, CommitId, Git, Worktree};
use crate::verdict::FloorResult;
use attribute::{attribute_in, Attribution};
use bind::{Binding, BoundTest};
use rule::{Decision, Finding, SideState};
use runners::{FailureKind, Invocation, ItemMap, Outcome, RunCtx, Runner};

pub use decide::guard_criterion;
use decide::*;
use workspace::*;
pub use workspace::{seed_cargo_target, Seeded};

/// What the floor needs for one run.
pub struct FloorInput<'a> {
    pub git: &'a Git,
    pub acceptance: &'a AcceptanceSet,
    pub runners: Vec<RunnerConfig>,
    pub base: CommitId,
    pub head: CommitId,
    pub runs: u32,
    pub timeout: Duration,
    /// A fresh directory of our own for worktrees, target dirs and scratch files.
    pub temp_root: PathBuf,
    pub clock: &'a Clock,
    pub progress: &'a dyn Fn(&str),
    /// A line per finished test and heartbeats while commands run ([`progress`]); `None`:
    /// neither (`--quiet`, replay).
    pub live: Option<progress::Live>,
    /// The acceptance file's path in the repository, when it is there.
    pub acceptance_path: Option<String>,
    /// A shard's share of the entries (DESIGN 12); `None`: every entry.
    pub shard: Option<Share>,
}

/// How shards split the entries (`--shard-by`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Round robin over the entries in the report's order.
    Criterion,
    /// Round robin over the runners; each entry with the runner of its tests (the first
    /// runner, when they are in several), an entry bound to no runner with shard 1.
    Runner,
}

/// Shard `k` of `n` (1 ≤ k ≤ n), split by `split`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    pub k: usize,
    pub n: usize,
    pub split: Split,
}

impl Share {
    /// The positions of this shard's entries, given each criterion's runners (in acceptance
    /// order; empty: bound to no runner) and whether the pass-to-pass guard follows them.
    pub fn positions(&self, runners: &[Option<usize>], guard: bool) -> BTreeSet<usize> {
        let total = runners.len() + usize::from(guard);
        (0..total)
            .filter(|&pos| {
                let slot = match self.split {
                    Split::Criterion => pos % self.n,
                    Split::Runner => runners
                        .get(pos)
                        .copied()
                        .flatten()
                        .map_or(0, |r| r % self.n),
                };
                slot == self.k - 1
            })
            .collect()
    }
}

/// One part of a [`Position`]: a number (stage, runner, run) or a name (a test file).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Step {
    N(u64),
    S(String),
}

/// Where in a whole run's order a runtime row or an evidence record was made: the stage of the
/// floor (shared steps, one runner's run of one test file at one side, one criterion's check)
/// and the place within it. A stage does the same work in every shard that does it at all, so
/// the rows and records of shards, sorted by position, come back in the single run's order.
pub type Position = Vec<Step>;

/// The positions of a floor's runtime rows (one each, in order) and of its evidence records
/// (each where it was first stored), for fusing shards ([`run_ordered`]).
#[derive(Debug, Clone, Default)]
pub struct FloorOrder {
    /// The position of each of the report's entries (the claim's criteria in acceptance order,
    /// then the pass-to-pass guard).
    pub entries: Vec<usize>,
    pub rows: Vec<Position>,
    pub records: Vec<(String, Position)>,
}

// The floor's part of the run result: wire types, defined with the formats.
pub use crate::format::floor::{CriterionFloor, EvidenceRef, RuntimeRow, Side, TestObservation};

/// What an entry of the floor's report stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// One of the claim's criteria, from an acceptance file.
    Claimed,
    /// The pass-to-pass guard (`stage1.floor.guard`): a criterion of the settings, in no file.
    Guard,
}

/// One entry of the floor's report: a criterion and the floor's disposition of it, together,
/// so that nothing downstream pairs two lists by position.
#[derive(Debug, Clone)]
pub struct FloorEntry {
    pub kind: EntryKind,
    pub criterion: Criterion,
    pub floor: CriterionFloor,
}

#[derive(Debug, Clone)]
pub struct FloorReport {
    /// The claim's criteria in the acceptance set's order, then the pass-to-pass guard when the
    /// set has one (it reports as one more required floor criterion).
    pub entries: Vec<FloorEntry>,
    pub runtime: Vec<RuntimeRow>,
    pub overlay: Vec<String>,
    pub overlay_deleted: Vec<String>,
    /// Source files of which only head's test items were laid over base (DESIGN 5.1).
    pub overlay_spliced: Vec<String>,
    pub changed_files: usize,
    /// Files this change touched that decide how tests run (DESIGN 5.5).
    pub harness: Vec<harness::HarnessChange>,
}

/// The runners to use: the configured ones, or those detected from the head commit's files.
pub fn detect_runners(git: &Git, head: &CommitId) -> Result<Vec<RunnerConfig>, Error> {
    let files: Vec<String> = git.files(head.as_str(), None)?;
    let has = |name: &str| files.iter().any(|f| f == name);
    let mut found = Vec::new();
    let cfg = |kind, root: &str| RunnerConfig {
        kind,
        root: root.to_string(),
        args: vec![],
        setup: None,
        command: None,
        line: 0,
        env_pass: Vec::new(),
    };
    if has("Cargo.toml") {
        found.push(cfg(RunnerKind::Cargo, "."));
    }
    let python_marker = [
        "pytest.ini",
        "conftest.py",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "tox.ini",
    ]
    .iter()
    .any(|f| has(f));
    let python_tests = files.iter().any(|f| {
        let base = f.rsplit('/').next().unwrap_or(f);
        base.ends_with(".py") && (base.starts_with("test_") || base.ends_with("_test.py"))
    });
    if python_marker || python_tests {
        found.push(cfg(RunnerKind::Pytest, "."));
    }
    let skip = |f: &str| {
        f.split('/')
            .any(|c| matches!(c, "node_modules" | "vendor" | "testdata" | ".git"))
    };
    // Every Go module and every JavaScript package with vitest or jest is a runner of its own,
    // rooted where its go.mod or package.json is.
    for f in files.iter().filter(|f| !skip(f)) {
        let (dir, name) = match f.rsplit_once('/') {
            Some((d, n)) => (d, n),
            None => (".", f.as_str()),
        };
        match name {
            "go.mod" => found.push(cfg(RunnerKind::Go, dir)),
            "package.json" => {
                let text = git
                    .show(head, f)?
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                let uses = |tool: &str| {
                    ["dependencies", "devDependencies"]
                        .iter()
                        .any(|k| v[k].get(tool).is_some())
                };
                if uses("vitest") {
                    found.push(cfg(RunnerKind::Vitest, dir));
                } else if uses("jest") {
                    found.push(cfg(RunnerKind::Jest, dir));
                }
            }
            _ => {}
        }
    }
    Ok(found)
}

/// Checks every runner's tools, and what the worktrees take from the checkout (`checkout`),
/// before any work starts (a missing tool is an input error).
pub fn check_tools(
    runners: &[RunnerConfig],
    checkout: &Path,
    display_path: &str,
) -> Result<(), Error> {
    let mut errors = Vec::new();
    for r in runners {
        match runners::adapter(r.clone()) {
            Some(a) => {
                if let Err(e) = a.check_tool().and_then(|()| a.check_checkout(checkout)) {
                    errors.push(e);
                }
            }
            None => errors.push(
                InputError::new(format!(
                    "runner kind `{}` is not supported by this version",
                    r.kind.as_str()
                ))
                .at(display_path, r.line, 1)
                .help("use one of: cargo, nextest, pytest, go, vitest, jest, junit-command"),
            ),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Input(errors))
    }
}

struct Ctx<'a> {
    input: &'a FloorInput<'a>,
    adapters: Vec<Box<dyn Runner>>,
    store: &'a mut EvidenceStore,
    norm: Normalizer,
    runtime: Vec<RuntimeRow>,
    scratch_seq: usize,
    harness: Vec<harness::HarnessChange>,
    /// Tracked files a run changed in a worktree (`head: path`, `base: path`).
    rewritten: Vec<String>,
    /// The tag scan of head, when tag-bound criteria needed one and it could run.
    scan: Option<scan::TagScan>,
    /// The scan's evidence record.
    scan_evidence: Option<String>,
    /// The bound tests of the running phase (one runner at one side, one run) that have
    /// finished, and how many it runs, for the heartbeat.
    tally: (usize, usize),
    /// The stage running now, and the rows and records made by the stages before it.
    stage: Position,
    order: FloorOrder,
    /// How many records the store held before the floor began.
    records_before: usize,
    /// Changed files that are test code as a whole at head although no runner's path rule says
    /// so ([`Runner::test_files_among`]): laid over base whole, never spliced.
    test_modules: BTreeSet<String>,
}

/// Every name `env_pass` passes: `floor.env_pass` and each runner's own, sorted, once each.
fn all_env_pass(input: &FloorInput<'_>) -> Vec<String> {
    let mut all = input.acceptance.env_pass.clone();
    for r in &input.runners {
        all.extend(r.env_pass.iter().cloned());
    }
    all.sort();
    all.dedup();
    all
}

/// `path` (relative to the repository) relative to a runner's `root`, `None` when it lies
/// outside it.
fn under_root<'p>(root: &str, path: &'p str) -> Option<&'p str> {
    let root = root.trim_end_matches('/');
    if root == "." || root.is_empty() {
        Some(path)
    } else {
        path.strip_prefix(root).and_then(|r| r.strip_prefix('/'))
    }
}

/// While alive, the floor reaps after each command (see [`process::become_subreaper`]); when
/// dropped (the floor done, or stopped by an error), it stops that and reaps what is left.
struct Reaping;

impl Drop for Reaping {
    fn drop(&mut self) {
        process::become_subreaper(false);
        process::reap_orphans();
    }
}

/// Per test, per side: the outcomes of each run and their evidence pointers.
#[derive(Default, Clone)]
struct Observed {
    outcomes: Vec<Outcome>,
    evidence: Vec<String>,
    problem: Option<String>,
    build_files: Option<Vec<String>>,
    /// The compiler's errors with their positions, when the test did not build.
    diagnostics: Vec<runners::Diagnostic>,
    /// Whose failure a build failure at base is (DESIGN 5.4), once decided.
    attribution: Option<Attribution>,
    /// The first failure message seen.
    message: Option<String>,
    /// What kind of failure the first failing run was, where the runner tells.
    failure_kind: Option<FailureKind>,
}

/// Whether `needle` occurs in `hay` as a whole name (not inside a longer identifier, so that
/// `TestA` is not found in `TestAB`).
fn contains(hay: &[u8], needle: &str) -> bool {
    let n = needle.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    !n.is_empty()
        && hay.windows(n.len()).enumerate().any(|(i, w)| {
            w == n
                && (i == 0 || !ident(hay[i - 1]) || !ident(n[0]))
                && hay
                    .get(i + n.len())
                    .is_none_or(|b| !ident(*b) || !ident(n[n.len() - 1]))
        })
}

/// Runs the floor (see the module doc).
pub fn run(input: &FloorInput<'_>, store: &mut EvidenceStore) -> Result<FloorReport, Error> {
    run_ordered(input, store).map(|(report, _)| report)
}

/// The runner each binding's tests are in (the first, when several), `None` for no test.
fn binding_runners(bindings: &[Binding]) -> Vec<Option<usize>> {
    bindings
        .iter()
        .map(|b| b.tests().iter().map(|t| t.runner).min())
        .collect()
}

/// [`run`], with the position of every runtime row and evidence record it made.
pub fn run_ordered(
    input: &FloorInput<'_>,
    store: &mut EvidenceStore,
) -> Result<(FloorReport, FloorOrder), Error> {
    let adapters: Vec<Box<dyn Runner>> = input
        .runners
        .iter()
        .filter_map(|r| runners::adapter(r.clone()))
        .collect();
    let passed = all_env_pass(input);
    let norm = Normalizer::new(&[
        (input.temp_root.join("head"), "$WORKTREE"),
        (input.temp_root.join("base"), "$WORKTREE"),
        (input.temp_root.join("scratch"), "$SCRATCH"),
        (input.temp_root.clone(), "$TMP"),
    ])
    .masking(&process::withheld_values(&passed));
    let mut cx = Ctx {
        input,
        adapters,
        store,
        norm,
        runtime: Vec::new(),
        scratch_seq: 0,
        harness: Vec::new(),
        rewritten: Vec::new(),
        scan: None,
        scan_evidence: None,
        tally: (0, 0),
        stage: vec![Step::N(STAGE_SHARED)],
        order: FloorOrder::default(),
        records_before: 0,
        test_modules: BTreeSet::new(),
    };
    cx.records_before = cx.store.records().len();
    // The floor's commands run one at a time: each one's end stops what it left running.
    process::become_subreaper(true);
    let reaping = Reaping;
    cx.environment_row();
    let criteria = &input.acceptance.criteria;
    let changes = input.git.changed_files(&input.base, &input.head)?;
    cx.harness = detect_harness(input, &changes)?;

    let guarding =
        !input.acceptance.guard.is_empty() || !input.acceptance.guarded_criteria().is_empty();
    let needs_tests = guarding || criteria.iter().any(bind::needs_tests);
    let needs_worktrees = guarding
        || criteria.iter().any(|c| {
            bind::needs_tests(c) || matches!(c.check, Some(crate::acceptance::Check::Command(_)))
        });

    // 1. head worktree, setup, listing.
    let mut listings: Vec<Vec<runners::TestCase>> = vec![Vec::new(); cx.adapters.len()];
    let mut list_problems: Vec<Option<(String, bool)>> = vec![None; cx.adapters.len()];
    let mut head_build: Vec<Option<(Vec<String>, bool)>> = vec![None; cx.adapters.len()];
    let mut list_evidence: Vec<Option<String>> = vec![None; cx.adapters.len()];
    let head_wt = if needs_worktrees {
        (input.progress)(&format!("head {}: creating worktree", input.head.short()));
        Some(Worktree::add(
            input.git,
            &input.temp_root.join("head"),
            &input.head,
        )?)
    } else {
        None
    };
    if let (Some(wt), true) = (&head_wt, needs_tests) {
        cx.test_modules = cx.test_modules_at_head(wt, &changes)?;
    }
    let mut head_setup_failed: Vec<Option<String>> = vec![None; cx.adapters.len()];
    let rust_runner = cx
        .adapters
        .iter()
        .any(|a| matches!(a.kind(), RunnerKind::Cargo | RunnerKind::Nextest));
    if let (Some(wt), true, true) = (&head_wt, needs_tests, rust_runner) {
        cx.seed_head_target(wt)?;
    }
    if let (Some(wt), true) = (&head_wt, needs_tests) {
        let scopes = cx.list_scopes(wt)?;
        for i in 0..cx.adapters.len() {
            let Some(scope) = &scopes[i] else {
                (input.progress)(&format!(
                    "head {}: no tag occurs under {} ({}): nothing to list or build",
                    input.head.short(),
                    cx.adapters[i].config().root,
                    cx.adapters[i].kind().as_str()
                ));
                continue;
            };
            if let Some(p) = cx.setup(i, wt, Side::Head, None)? {
                head_setup_failed[i] = Some(p.clone());
                list_problems[i] = Some((p, false));
                continue;
            }
            (input.progress)(&format!(
                "head {}: listing tests ({})",
                input.head.short(),
                cx.adapters[i].kind().as_str()
            ));
            let ctx = cx.run_ctx(i, wt, Side::Head)?;
            let watch = cx.step_watch(
                Side::Head,
                format!("{} to list the tests", cx.adapters[i].kind().as_str()),
                progress::Source::None,
                &[],
            );
            let report = progress::step(watch.as_ref(), || cx.adapters[i].list(&ctx, scope));
            let ev = cx.record_listing(i, Side::Head, &report)?;
            list_evidence[i] = Some(ev);
            if let Some(bf) = &report.build_failure {
                // A partial listing (pytest collects what imports) still binds what it found;
                // the files that failed are kept to judge the criteria they carry.
                list_problems[i] = Some((
                    format!("head does not build: {}", first_line(&bf.excerpt)),
                    true,
                ));
                head_build[i] = Some((bf.diagnostic_files.clone(), report.tests.is_empty()));
            } else if let Some(p) = &report.problem {
                list_problems[i] = Some((p.clone(), false));
            }
            listings[i] = report.tests;
        }
    }
    interrupted()?;

    // 2. bind.
    let bindings: Vec<Binding> = criteria.iter().map(|c| bind::bind(c, &listings)).collect();

    let mut guarded = guarded_tests(&input.acceptance.guard, &listings)?;
    let inherited =
        inherited_guard_tests(&input.acceptance.guarded_criteria(), &listings, &guarded);
    guarded.extend(inherited);
    // A shard runs the tests of its own entries only; every binding above is still made (the
    // overlay, the grouping by file and the listing are the whole run's).
    let guard_pos = criteria.len();
    let chosen = input
        .shard
        .map(|share| share.positions(&binding_runners(&bindings), guarding));
    let selected = |pos: usize| chosen.as_ref().is_none_or(|c| c.contains(&pos));
    if !selected(guard_pos) {
        guarded.clear();
    }
    let mine: Vec<&Binding> = bindings
        .iter()
        .enumerate()
        .filter(|(pos, _)| selected(*pos))
        .map(|(_, b)| b)
        .collect();

    // 3. head runs of the bound (and guarded) tests.
    let mut wanted: Vec<BTreeSet<String>> = vec![BTreeSet::new(); cx.adapters.len()];
    // Each bound test with its file: the floor runs the bound tests of one file together.
    let mut bound: Vec<BTreeMap<String, Option<String>>> = vec![BTreeMap::new(); cx.adapters.len()];
    for t in bindings.iter().flat_map(|b| b.tests()) {
        bound[t.runner].insert(t.id.clone(), t.file.clone());
    }
    for t in mine.iter().flat_map(|b| b.tests()).chain(&guarded) {
        wanted[t.runner].insert(t.id.clone());
    }
    // A shard runs the whole of every file group it has a test in: the bound tests of one file
    // run in one invocation, and the same invocation in every shard that needs it (and in the
    // single run) gives the same evidence, where a part of the group would give other evidence.
    if input.shard.is_some() {
        let mut files: BTreeSet<(usize, String)> = BTreeSet::new();
        for (i, ids) in wanted.iter().enumerate() {
            for id in ids {
                if let Some(Some(file)) = bound[i].get(id) {
                    files.insert((i, file.clone()));
                }
            }
        }
        for t in bindings.iter().flat_map(|b| b.tests()) {
            if t.file
                .as_ref()
                .is_some_and(|f| files.contains(&(t.runner, f.clone())))
            {
                wanted[t.runner].insert(t.id.clone());
            }
        }
    }
    let runs = input.runs.max(1);
    let mut head_obs: BTreeMap<(usize, String), Observed> = BTreeMap::new();
    if let Some(wt) = &head_wt {
        for (i, wanted) in wanted.iter().enumerate() {
            let ids: Vec<String> = wanted.iter().cloned().collect();
            if ids.is_empty() {
                continue;
            }
            for k in 1..=runs {
                (input.progress)(&format!(
                    "head {}: running {} bound test(s) ({}, run {k}/{runs})",
                    input.head.short(),
                    ids.len(),
                    cx.adapters[i].kind().as_str()
                ));
                cx.tally = (0, ids.len());
                let stage = vec![Step::N(STAGE_HEAD_RUNS), Step::N(i as u64)];
                cx.run_isolated(
                    &stage,
                    i,
                    wt,
                    Side::Head,
                    None,
                    &ids,
                    &bound[i],
                    k,
                    &mut head_obs,
                )?;
            }
        }
    }
    interrupted()?;

    if let Some(wt) = &head_wt {
        cx.rewritten.extend(
            rewritten_files(wt, &[])?
                .into_iter()
                .map(|f| format!("head: {f}")),
        );
    }

    // 4. base worktree with head's test files laid over it.
    cx.enter(vec![Step::N(STAGE_BASE), Step::N(0)]);
    let tags: Vec<&str> = criteria
        .iter()
        .zip(&bindings)
        .filter(|(_, b)| !b.tests().is_empty())
        .map(|(c, _)| c.tag.as_str())
        .collect();
    let scripts: Vec<String> = bindings
        .iter()
        .flat_map(|b| match b {
            Binding::Command(cmd) => bind::command_paths(cmd),
            _ => Vec::new(),
        })
        .collect();
    let is_test_file = |p: &str| {
        cx.adapters
            .iter()
            .any(|a| under_root(&a.config().root, p).is_some_and(|r| a.is_test_file(r)))
            || cx.test_modules.contains(p)
    };
    let (mut take, delete) = bind::overlay(&changes, &is_test_file, &tags, &scripts);
    let (splices, claimed) = cx.splices(&changes)?;
    take.retain(|p| !claimed.contains(p));
    let spliced: Vec<String> = splices.iter().map(|(p, _)| p.clone()).collect();
    let overlay = OverlayRef {
        from: input.head.to_string(),
        paths: take.clone(),
        deleted: delete.clone(),
        spliced: spliced.clone(),
    };
    let any_base_work = wanted.iter().any(|w| !w.is_empty())
        || mine.iter().any(|b| matches!(b, Binding::Command(_)));
    let mut base_obs: BTreeMap<(usize, String), Observed> = BTreeMap::new();
    let mut base_baseline: Vec<String> = Vec::new();
    let base_wt = if any_base_work {
        (input.progress)(&format!(
            "base {}: creating worktree, laying over {} test file(s) from head{}",
            input.base.short(),
            take.len() + delete.len(),
            if splices.is_empty() {
                String::new()
            } else {
                format!(" and the test items of {} source file(s)", spliced.len())
            }
        ));
        let wt = Worktree::add(input.git, &input.temp_root.join("base"), &input.base)?;
        apply_overlay(&wt, &input.head, &take, &delete)?;
        apply_splices(&wt, &splices)?;
        base_baseline = status_entries(&wt)?;
        Some(wt)
    } else {
        None
    };
    if let Some(wt) = &base_wt {
        let rust_at_base = cx.adapters.iter().zip(&wanted).any(|(a, w)| {
            matches!(a.kind(), RunnerKind::Cargo | RunnerKind::Nextest) && !w.is_empty()
        });
        cx.enter(vec![Step::N(STAGE_BASE), Step::N(1)]);
        if rust_at_base {
            cx.seed_base_target(wt)?;
        }
        for (i, wanted) in wanted.iter().enumerate() {
            let ids: Vec<String> = wanted.iter().cloned().collect();
            if ids.is_empty() {
                continue;
            }
            let runner =
                |step: u64| vec![Step::N(STAGE_BASE_RUNNER), Step::N(i as u64), Step::N(step)];
            cx.enter(runner(0));
            if let Some(p) = cx.setup(i, wt, Side::Base, Some(&overlay))? {
                for id in &ids {
                    base_obs.insert(
                        (i, id.clone()),
                        Observed {
                            problem: Some(p.clone()),
                            ..Default::default()
                        },
                    );
                }
                continue;
            }
            for k in 1..=runs {
                (input.progress)(&format!(
                    "base {}: running {} bound test(s) ({}, run {k}/{runs})",
                    input.base.short(),
                    ids.len(),
                    cx.adapters[i].kind().as_str()
                ));
                cx.tally = (0, ids.len());
                cx.run_isolated(
                    &runner(1),
                    i,
                    wt,
                    Side::Base,
                    Some(&overlay),
                    &ids,
                    &bound[i],
                    k,
                    &mut base_obs,
                )?;
            }
            let files: BTreeMap<String, String> = mine
                .iter()
                .flat_map(|b| b.tests())
                .chain(&guarded)
                .filter(|t| t.runner == i)
                .filter_map(|t| Some((t.id.clone(), t.file.clone()?)))
                .collect();
            cx.enter(runner(2));
            cx.isolate_base_build(i, wt, &overlay, &changes, &files, runs, &mut base_obs)?;
            cx.enter(runner(3));
            cx.attribute_base_builds(i, wt, &files, &mut base_obs)?;
        }
    }
    interrupted()?;

    if let Some(wt) = &base_wt {
        cx.rewritten.extend(
            rewritten_files(wt, &base_baseline)?
                .into_iter()
                .map(|f| format!("base: {f}")),
        );
    }

    // 5. what the run observed, as plain data for the deciding phase.
    let whole_head_broken = head_build.iter().flatten().any(|(_, whole)| *whole);
    // Where a tag bound nothing, the file the scan found it in, so the reason never
    // contradicts the scan; without a scan, looked up only where head did not build at all.
    let mut tag_files = BTreeMap::new();
    if whole_head_broken || cx.scan.is_some() {
        for (c, _) in criteria
            .iter()
            .zip(&bindings)
            .filter(|(_, b)| b.tests().is_empty())
        {
            let scanned = cx
                .scan
                .as_ref()
                .and_then(|s| s.tags.get(&c.tag))
                .map(|o| o.first().map(|o| o.path.clone()));
            let found = match scanned {
                Some(found) => found,
                None if whole_head_broken => tag_in_head(input.git, &input.head, &c.tag),
                None => None,
            };
            if let Some(f) = found {
                tag_files.insert(c.tag.clone(), f);
            }
        }
    }
    let observations = Observations {
        runners: cx.adapters.iter().map(|a| a.config().clone()).collect(),
        head: head_obs,
        base: base_obs,
        list_problems,
        head_build,
        list_evidence,
        harness: cx.harness.clone(),
        rewritten: cx.rewritten.clone(),
        tags_nowhere: cx.scan.as_ref().map(|s| {
            s.tags
                .iter()
                .filter(|(_, o)| o.is_empty())
                .map(|(t, _)| t.clone())
                .collect()
        }),
        scan_evidence: cx.scan_evidence.clone(),
        tag_files,
    };

    // 6. commands and patterns, and the decision for every criterion.
    let mut entries = Vec::new();
    for (pos, (c, b)) in criteria.iter().zip(&bindings).enumerate() {
        if !selected(pos) {
            continue;
        }
        cx.enter(vec![Step::N(STAGE_ENTRIES), Step::N(pos as u64)]);
        cx.order.entries.push(pos);
        let cf = match b {
            Binding::JudgeLane => CriterionFloor::new(
                FloorResult::NotApplicable,
                "judgment criterion: the floor does not decide it",
                b.kind(),
            ),
            Binding::Command(cmd) => {
                let (Some(h), Some(bw)) = (&head_wt, &base_wt) else {
                    return Err(Error::crash("worktrees missing for a command check"));
                };
                cx.command_check(cmd, h, bw, &overlay, runs)?
            }
            Binding::Pattern { paths, regex } => cx.pattern_check(c, paths, regex, &changes)?,
            Binding::Tag(_) | Binding::ExplicitTest { .. } => decide_tests(c, b, &observations),
        };
        entries.push(FloorEntry {
            kind: EntryKind::Claimed,
            criterion: c.clone(),
            floor: cx.shown_floor(cf),
        });
    }
    if guarding && selected(guard_pos) {
        cx.enter(vec![Step::N(STAGE_ENTRIES), Step::N(guard_pos as u64)]);
        cx.order.entries.push(guard_pos);
        // The reason names the globs alone when they are all the guard keeps; the criterion's
        // text always names the whole scope.
        let scope = if input.acceptance.guarded_criteria().is_empty() {
            input.acceptance.guard.join(", ")
        } else {
            input.acceptance.guard_scope()
        };
        entries.push(FloorEntry {
            kind: EntryKind::Guard,
            criterion: guard_criterion(&input.acceptance.guard_scope()),
            floor: cx.shown_floor(decide_guard(&guarded, &observations, &scope)),
        });
    }
    drop(reaping);
    drop(head_wt);
    drop(base_wt);
    cx.enter(Vec::new());
    let report = FloorReport {
        entries,
        runtime: cx
            .runtime
            .iter()
            .map(|r| RuntimeRow {
                command: cx.shown(&r.command),
                result: cx.shown(&r.result),
                excerpt: r.excerpt.as_deref().map(|e| cx.shown(e)),
                ..r.clone()
            })
            .collect(),
        overlay: take,
        overlay_deleted: delete,
        overlay_spliced: spliced,
        changed_files: changes.len(),
        harness: cx.harness,
    };
    Ok((report, cx.order))
}

/// The stages of the floor's order ([`Position`]), as they run: the steps every shard runs
/// (the head worktree, tag scan, seeding, setup and listing); one runner's bound tests at head;
/// base's worktree and seeding; one runner's work at base; one entry's own check.
const STAGE_SHARED: u64 = 0;
const STAGE_HEAD_RUNS: u64 = 1;
const STAGE_BASE: u64 = 2;
const STAGE_BASE_RUNNER: u64 = 3;
const STAGE_ENTRIES: u64 = 4;

/// The harness changes of base..head, with `harness.allow_changes` applied.
fn detect_harness(
    input: &FloorInput<'_>,
    changes: &[Change],
) -> Result<Vec<harness::HarnessChange>, Error> {
    let mut gb = globset::GlobSetBuilder::new();
    for g in &input.acceptance.harness.allow_changes {
        let glob = globset::Glob::new(g).map_err(|e| Error::crash(format!("glob `{g}`: {e}")))?;
        gb.add(glob);
    }
    let allow = gb
        .build()
        .map_err(|e| Error::crash(format!("harness.allow_changes: {e}")))?;
    let scripts: Vec<String> = input
        .runners
        .iter()
        .filter(|r| r.kind == RunnerKind::JunitCommand)
        .filter_map(|r| {
            let script = r.command.as_deref().and_then(bind::command_script)?;
            Some(if r.root == "." {
                script
            } else {
                format!("{}/{script}", r.root.trim_end_matches('/'))
            })
        })
        .collect();
    let read = |p: &str, at_head: bool| {
        let commit = if at_head { &input.head } else { &input.base };
        input
            .git
            .show(commit, p)
            .ok()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    let mut found = harness::detect(
        changes,
        &read,
        &|p| allow.is_match(p),
        &scripts,
        input.acceptance_path.as_deref(),
    );
    // Settings this change edits that base had (worked out with the claim, DESIGN 5.5).
    for p in &input.acceptance.settings_edits {
        if !found.iter().any(|h| &h.path == p) {
            found.push(harness::HarnessChange {
                path: p.clone(),
                what: "the project settings (runners, judge, harness, guard or inherited)".into(),
                family: harness::Family::All,
                scope: String::new(),
                allowed: false,
            });
        }
    }
    Ok(found)
}

fn interrupted() -> Result<(), Error> {
    if process::interrupted() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .chars()
        .take(160)
        .collect()
}

impl Ctx<'_> {
    /// Starts the stage at `next`: the rows and records made since the last one are given their
    /// positions in the stage that made them.
    fn enter(&mut self, next: Position) {
        let done = std::mem::replace(&mut self.stage, next);
        let at = |n: usize| {
            let mut p = done.clone();
            p.push(Step::N(n as u64));
            p
        };
        let first_row = self.order.rows.len();
        for n in first_row..self.runtime.len() {
            self.order.rows.push(at(n - first_row));
        }
        let first_record = self.records_before + self.order.records.len();
        let made: Vec<String> =
            self.store.records()[first_record.min(self.store.records().len())..].to_vec();
        for (n, pointer) in made.into_iter().enumerate() {
            self.order.records.push((pointer, at(n)));
        }
    }

    /// DESIGN 5.6: what each runner's head listing needs to cover. Tag-bound criteria are found
    /// by a scan of head's tracked files first, and each runner lists only the files under its
    /// root that carry a tag (`None`: no tag occurs there, so the runner lists nothing). A
    /// `check.test` binding or a `guard` glob can name any test, so they need the whole listing;
    /// so does a scan that could not run.
    fn list_scopes(&mut self, head: &Worktree) -> Result<Vec<Option<runners::ListScope>>, Error> {
        // The claim's criteria and the inherited ones kept as regression guards: both bind
        // by tag, so both need their tests listed.
        let guarded = self.input.acceptance.guarded_criteria();
        let criteria: Vec<&Criterion> = self
            .input
            .acceptance
            .criteria
            .iter()
            .chain(guarded.iter().copied())
            .collect();
        let all = vec![Some(runners::ListScope::All); self.adapters.len()];
        let tags: Vec<String> = criteria
            .iter()
            .filter(|c| c.lane == crate::acceptance::Lane::Floor && c.check.is_none())
            .map(|c| c.tag.clone())
            .collect();
        if tags.is_empty() {
            return Ok(all);
        }
        (self.input.progress)(&format!(
            "head {}: scanning tracked files for {} tag(s)",
            self.input.head.short(),
            tags.len()
        ));
        let scanned = scan::scan_tree(head.path(), &tags, scan::default_threads());
        self.record_scan(&tags, &scanned)?;
        let Ok(found) = scanned else {
            return Ok(all);
        };
        let whole = !self.input.acceptance.guard.is_empty()
            || criteria.iter().any(|c| {
                c.lane == crate::acceptance::Lane::Floor
                    && matches!(c.check, Some(crate::acceptance::Check::Test(_)))
            });
        let matched = found.matched_files();
        let scopes = self
            .adapters
            .iter()
            .map(|a| {
                let files = scan::files_under_root(&a.config().root, matched.iter().copied());
                if whole {
                    Some(runners::ListScope::All)
                } else if files.is_empty() {
                    None
                } else {
                    Some(runners::ListScope::Files(files))
                }
            })
            .collect();
        self.scan = Some(found);
        Ok(scopes)
    }

    /// The scan as evidence (what was searched, which files carry which tag) and a runtime row.
    fn record_scan(
        &mut self,
        tags: &[String],
        scanned: &Result<scan::TagScan, String>,
    ) -> Result<(), Error> {
        let command: Vec<String> = crate::git::TRACKED_COMMAND
            .iter()
            .map(|s| s.to_string())
            .chain(tags.iter().map(|t| format!("--tag={t}")))
            .collect();
        let (note, result, results, duration) = match scanned {
            Ok(found) => {
                let hit = tags.iter().filter(|t| found.found(t)).count();
                let json = serde_json::to_vec(found).map_err(|e| Error::crash(e.to_string()))?;
                (
                    format!(
                        "searched the paths and contents of {} tracked files at head ({} binary, {} not regular files, contents not searched); {hit} of {} tag(s) found in {} file(s)",
                        found.files,
                        found.binary,
                        found.unreadable,
                        tags.len(),
                        found.matched_files().len()
                    ),
                    format!(
                        "{hit} of {} tag(s) in {} of {} files",
                        tags.len(),
                        found.matched_files().len(),
                        found.files
                    ),
                    Some(self.store.put_blob(json)),
                    found.duration,
                )
            }
            Err(e) => (
                format!("the tag scan failed ({e}); every test is listed"),
                format!("failed: {e}"),
                None,
                Duration::ZERO,
            ),
        };
        let ptr = self.put(&Record::TagScan(RunRecord {
            schema: RECORD_SCHEMA,
            side: Some(Side::Head),
            commit: self.input.head.to_string(),
            overlay: None,
            runner: None,
            root: Some(".".into()),
            command,
            test_id: None,
            run: 1,
            outcome: None,
            exit_code: None,
            duration_ms: self.ms(duration),
            stdout: None,
            stderr: None,
            results,
            note: Some(note),
        }))?;
        self.scan_evidence = Some(ptr);
        self.runtime.push(RuntimeRow {
            side: "head".into(),
            runner: "tag scan".into(),
            command: format!("tag scan of tracked files ({} tag(s))", tags.len()),
            tests: 0,
            result,
            seconds: if self.input.clock.is_pinned() {
                0.0
            } else {
                (duration.as_secs_f64() * 10.0).round() / 10.0
            },
            exit_code: None,
            excerpt: None,
            tool: None,
        });
        Ok(())
    }

    /// The cargo project directory of the first cargo or nextest runner inside `root`.
    fn cargo_dir(&self, root: &std::path::Path) -> PathBuf {
        self.adapters
            .iter()
            .find(|a| matches!(a.kind(), RunnerKind::Cargo | RunnerKind::Nextest))
            .map(|a| {
                let r = &a.config().root;
                if r == "." {
                    root.to_path_buf()
                } else {
                    root.join(r)
                }
            })
            .unwrap_or_else(|| root.to_path_buf())
    }

    /// Seeds head's target dir from the checkout's (a `target/` a cache step restored or an
    /// earlier `cargo test` built, or where `CARGO_TARGET_DIR` or the cargo config puts it),
    /// so that head does not rebuild every registry dependency the workflow already built. The
    /// same safe seeding as base's: a copy with every path package's units removed, so no stale
    /// test binary of the workspace can run (see [`seed_cargo_target`]).
    fn seed_head_target(&mut self, head: &Worktree) -> Result<(), Error> {
        let to = self.input.temp_root.join("target").join("head");
        if to.exists() {
            return Ok(());
        }
        let checkout = self.cargo_dir(self.input.git.root());
        let Some(from) = workspace::checkout_target_dir(&checkout, self.input.timeout) else {
            return Ok(());
        };
        (self.input.progress)(
            "head: seeding the target dir from the checkout's (registry dependencies only)",
        );
        let shown = from
            .strip_prefix(self.input.git.root())
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| from.display().to_string());
        let lock = workspace::find_lock(self.input.git.root(), &checkout);
        let seeded = self.seed_watched(Side::Head, &from, &to, head, lock.as_deref());
        self.record_seeding(
            "head",
            &format!("the checkout's target dir ({shown})"),
            "the checkout's",
            &shown,
            seeded,
            &to,
        );
        Ok(())
    }

    /// Seeds base's target dir from head's so that registry dependencies are not built twice,
    /// removing every path package's own units so that nothing of head's code can run at base
    /// (see [`seed_cargo_target`]). Falls back to an empty target dir when seeding fails.
    fn seed_base_target(&mut self, base: &Worktree) -> Result<(), Error> {
        let from = self.input.temp_root.join("target").join("head");
        let to = self.input.temp_root.join("target").join("base");
        if !from.is_dir() || to.exists() {
            return Ok(());
        }
        (self.input.progress)(
            "base: seeding the target dir from head's (registry dependencies only)",
        );
        let head_root = self.input.temp_root.join("head");
        let lock = workspace::find_lock(&head_root, &self.cargo_dir(&head_root));
        let seeded = self.seed_watched(Side::Base, &from, &to, base, lock.as_deref());
        self.record_seeding(
            "base (+ head test files)",
            "head's target dir",
            "head's",
            "$TMP/target/head",
            seeded,
            &to,
        );
        Ok(())
    }

    /// [`seed_cargo_target`] from `from` into `to` for the worktree `wt`, under the progress
    /// watch (a heartbeat while it copies).
    fn seed_watched(
        &self,
        side: Side,
        from: &std::path::Path,
        to: &std::path::Path,
        wt: &Worktree,
        lock: Option<&std::path::Path>,
    ) -> Result<workspace::Seeded, String> {
        let watch = self.step_watch(
            side,
            "the seeding of the target dir".into(),
            progress::Source::None,
            &[],
        );
        progress::step(watch.as_ref(), || {
            seed_cargo_target(
                from,
                to,
                &self.cargo_dir(wt.path()),
                lock,
                self.input.timeout,
            )
        })
    }

    /// The runtime row of one seeding; a failed seeding leaves no target dir behind.
    fn record_seeding(
        &mut self,
        side: &str,
        source: &str,
        lock_source: &str,
        from_shown: &str,
        seeded: Result<workspace::Seeded, String>,
        to: &std::path::Path,
    ) {
        // `$TMP/target/head` or `$TMP/target/base`.
        let to_side = to
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (result, secs, command) = match &seeded {
            Ok(s) => (
                format!(
                    "seeded from {source}; {} path package(s) cleaned{}",
                    s.cleaned.len(),
                    if s.lock_given {
                        format!("; given {lock_source} Cargo.lock")
                    } else {
                        String::new()
                    }
                ),
                s.duration.as_secs_f64(),
                format!(
                    "cp -a --reflink=auto {from_shown} $TMP/target/{to_side} (debug/ and \
                     release/, without incremental/ and the workspace's own units) && cargo \
                     clean -p {}",
                    s.cleaned.join(" -p ")
                ),
            ),
            Err(e) => {
                let _ = std::fs::remove_dir_all(to);
                (
                    format!("not seeded ({e}); {to_side} builds from scratch"),
                    0.0,
                    "seed target dir".to_string(),
                )
            }
        };
        self.runtime.push(RuntimeRow {
            side: side.into(),
            runner: "cargo".into(),
            command,
            tests: 0,
            result,
            seconds: if self.input.clock.is_pinned() {
                0.0
            } else {
                (secs * 10.0).round() / 10.0
            },
            exit_code: Some(if seeded.is_ok() { 0 } else { 1 }),
            excerpt: None,
            tool: None,
        });
    }

    /// A test whose own file compiled at base can still read `build_fail` there when a
    /// neighbour laid over from head (another new test file in the same Go package, say) does
    /// not compile. Such tests are run again at base without the neighbours new at head, so
    /// that what they report is their own outcome, not the neighbour's.
    #[allow(clippy::too_many_arguments)]
    fn isolate_base_build(
        &mut self,
        i: usize,
        wt: &Worktree,
        overlay: &OverlayRef,
        changes: &[Change],
        files: &BTreeMap<String, String>,
        runs: u32,
        obs: &mut BTreeMap<(usize, String), Observed>,
    ) -> Result<(), Error> {
        let tainted: Vec<String> = files
            .iter()
            .filter(|(id, file)| {
                obs.get(&(i, (*id).clone())).is_some_and(|o| {
                    o.outcomes.contains(&Outcome::BuildFail)
                        && o.build_files.as_ref().is_some_and(|fs| !fs.contains(file))
                })
            })
            .map(|(id, _)| id.clone())
            .collect();
        if tainted.is_empty() {
            return Ok(());
        }
        let own: BTreeSet<&str> = tainted
            .iter()
            .filter_map(|id| files.get(id))
            .map(String::as_str)
            .collect();
        let neighbours: Vec<String> = changes
            .iter()
            .filter(|c| {
                c.status == 'A' && overlay.paths.contains(&c.path) && !own.contains(c.path.as_str())
            })
            .map(|c| c.path.clone())
            .collect();
        if neighbours.is_empty() {
            return Ok(());
        }
        (self.input.progress)(&format!(
            "base: {} test(s) did not build because of other new test files; running them without those",
            tainted.len()
        ));
        for p in &neighbours {
            let _ = std::fs::remove_file(wt.path().join(p));
        }
        let reduced = OverlayRef {
            from: overlay.from.clone(),
            paths: overlay
                .paths
                .iter()
                .filter(|p| !neighbours.contains(p))
                .cloned()
                .collect(),
            deleted: overlay.deleted.clone(),
            spliced: overlay.spliced.clone(),
        };
        let mut fresh: BTreeMap<(usize, String), Observed> = BTreeMap::new();
        let mut outcome = Ok(());
        'runs: for k in 1..=runs {
            self.tally = (0, tainted.len());
            for id in &tainted {
                outcome = self.run_tests(
                    i,
                    wt,
                    Side::Base,
                    Some(&reduced),
                    std::slice::from_ref(id),
                    k,
                    &mut fresh,
                );
                if outcome.is_err() {
                    break 'runs;
                }
            }
        }
        let head = CommitId::parse(&overlay.from).ok_or_else(|| Error::crash("overlay commit"))?;
        apply_overlay(wt, &head, &neighbours, &[])?;
        outcome?;
        for (key, o) in fresh {
            obs.insert(key, o);
        }
        Ok(())
    }

    /// DESIGN 5.4: a bound test that does not build at base counts as failing there only when
    /// the failure is its own: a diagnostic inside the test item, or at an import whose names
    /// the item uses, as the runner's parser finds them in base's version of the files. Anything
    /// else (another new test in the same file, a base that does not build at all, a runner
    /// without a parser) leaves the test not observed at base.
    fn attribute_base_builds(
        &mut self,
        i: usize,
        wt: &Worktree,
        files: &BTreeMap<String, String>,
        obs: &mut BTreeMap<(usize, String), Observed>,
    ) -> Result<(), Error> {
        let failed: Vec<String> = obs
            .iter()
            .filter(|((r, _), o)| *r == i && o.outcomes.contains(&Outcome::BuildFail))
            .map(|((_, id), _)| id.clone())
            .collect();
        if failed.is_empty() {
            return Ok(());
        }
        let ctx = self.run_ctx(i, wt, Side::Base)?;
        let adapter = &self.adapters[i];
        let in_root = |f: &str| under_root(&adapter.config().root, f).map(str::to_string);
        let mut parsed: BTreeMap<String, Option<ItemMap>> = BTreeMap::new();
        for id in failed {
            let Some(o) = obs.get_mut(&(i, id.clone())) else {
                continue;
            };
            // The test's own file first, then every file the compiler complained about.
            let mut candidates: Vec<String> = files.get(&id).cloned().into_iter().collect();
            for d in &o.diagnostics {
                if !candidates.contains(&d.file) {
                    candidates.push(d.file.clone());
                }
            }
            let maps: Vec<(String, Option<ItemMap>)> = candidates
                .into_iter()
                .filter_map(|f| {
                    let rel = in_root(&f)?;
                    // Each file is parsed once for all the tests that failed in it (a Rust
                    // item map walks the crate's module tree).
                    let map = parsed
                        .entry(rel.clone())
                        .or_insert_with(|| adapter.item_map(&ctx, &rel))
                        .clone();
                    Some((f, map))
                })
                .collect();
            let item = adapter.test_item(&id);
            o.attribution = Some(attribute_in(item.as_deref(), &maps, &o.diagnostics));
        }
        Ok(())
    }

    /// The changed files each runner takes for test code as a whole at head beyond its path
    /// rule ([`Runner::test_files_among`]), relative to the repository. Read before any of the
    /// change's code runs in the head worktree, so what it decides is what head commits.
    fn test_modules_at_head(
        &mut self,
        wt: &Worktree,
        changes: &[Change],
    ) -> Result<BTreeSet<String>, Error> {
        let mut out = BTreeSet::new();
        for i in 0..self.adapters.len() {
            let root = self.adapters[i]
                .config()
                .root
                .trim_end_matches('/')
                .to_string();
            let strip = |p: &str| under_root(&root, p).map(str::to_string);
            let rel: Vec<String> = changes
                .iter()
                .filter(|c| c.status != 'D')
                .filter_map(|c| strip(&c.path))
                .filter(|r| !self.adapters[i].is_test_file(r))
                .collect();
            if rel.is_empty() {
                continue;
            }
            // No scratch directory of its own: reading the module tree writes nothing, and the
            // scratch numbering stays that of the runs.
            let ctx = RunCtx {
                worktree: wt.path().to_path_buf(),
                dir: if root == "." || root.is_empty() {
                    wt.path().to_path_buf()
                } else {
                    wt.path().join(&root)
                },
                scratch: self.input.temp_root.join("scratch"),
                timeout: self.input.timeout,
                env: self.side_env(Side::Head),
            };
            for f in self.adapters[i].test_files_among(&ctx, &rel) {
                out.insert(if root == "." || root.is_empty() {
                    f
                } else {
                    format!("{root}/{f}")
                });
            }
        }
        Ok(out)
    }

    /// The source files of the change whose test items (only) are laid over base, with base's
    /// text and head's test items spliced in (DESIGN 5.1): changed files that a runner keeps
    /// tests beside the code in ([`Runner::may_splice`], Rust's `#[cfg(test)]` modules). Such a
    /// file is never laid over whole, even when its path carries a tag: it holds the fix too.
    /// A file new at head is not spliced: base's code does not include it, so its tests cannot
    /// exist there and read as not observed. A file that does not parse is left as base has it,
    /// and said so in the runtime table. Returns the spliced texts and every file claimed.
    #[allow(clippy::type_complexity)]
    fn splices(
        &mut self,
        changes: &[Change],
    ) -> Result<(Vec<(String, String)>, Vec<String>), Error> {
        let mut out = Vec::new();
        let mut claimed = Vec::new();
        let mut unparsed: Vec<(String, String, String)> = Vec::new();
        for ch in changes.iter().filter(|c| c.status != 'D') {
            let found = self.adapters.iter().find_map(|a| {
                under_root(&a.config().root, &ch.path)
                    .filter(|r| {
                        !a.is_test_file(r)
                            && !self.test_modules.contains(&ch.path)
                            && a.may_splice(r)
                    })
                    .map(|r| (a, r.to_string()))
            });
            let Some((adapter, rel)) = found else {
                continue;
            };
            claimed.push(ch.path.clone());
            if ch.status == 'A' {
                continue;
            }
            let text = |c: &CommitId| -> Result<Option<String>, Error> {
                Ok(self
                    .input
                    .git
                    .show(c, &ch.path)?
                    .map(|b| String::from_utf8_lossy(&b).into_owned()))
            };
            let (Some(base), Some(head)) = (text(&self.input.base)?, text(&self.input.head)?)
            else {
                continue;
            };
            match adapter.splice_test_items(&rel, &base, &head) {
                None => {}
                Some(Ok(spliced)) if spliced == base => {}
                Some(Ok(spliced)) => out.push((ch.path.clone(), spliced)),
                Some(Err(e)) => {
                    unparsed.push((adapter.kind().as_str().to_string(), ch.path.clone(), e))
                }
            }
        }
        for (runner, path, e) in unparsed {
            (self.input.progress)(&format!(
                "base: the test items of {path} are not laid over: {e}"
            ));
            self.runtime.push(RuntimeRow {
                side: "base (+ head test files)".into(),
                runner,
                command: format!("splice test items of {path}"),
                tests: 0,
                result: format!("not spliced: {e}"),
                seconds: 0.0,
                exit_code: None,
                excerpt: None,
                tool: None,
            });
        }
        Ok((out, claimed))
    }

    /// The watch of one step at `side` that runs `what` (and the tests `ids`,
    /// none for a setup or a listing), when progress is live.
    fn step_watch(
        &self,
        side: Side,
        what: String,
        source: progress::Source,
        ids: &[String],
    ) -> Option<std::rc::Rc<std::cell::RefCell<progress::StepWatch>>> {
        let live = self.input.live.clone()?;
        let commit = match side {
            Side::Head => &self.input.head,
            Side::Base => &self.input.base,
        };
        let (done, total) = if ids.is_empty() { (0, 0) } else { self.tally };
        Some(std::rc::Rc::new(std::cell::RefCell::new(
            progress::StepWatch::new(
                live,
                side,
                format!("{} {}", side.as_str(), commit.short()),
                what,
                source,
                ids.to_vec(),
                done,
                total.max(done + ids.len()),
            ),
        )))
    }

    fn scratch(&mut self, label: &str) -> Result<PathBuf, Error> {
        self.scratch_seq += 1;
        let p = self
            .input
            .temp_root
            .join("scratch")
            .join(format!("{:03}-{label}", self.scratch_seq));
        std::fs::create_dir_all(&p)?;
        Ok(p)
    }

    fn run_ctx(&mut self, i: usize, wt: &Worktree, side: Side) -> Result<RunCtx, Error> {
        let root = &self.adapters[i].config().root;
        let dir = if root == "." {
            wt.path().to_path_buf()
        } else {
            wt.path().join(root)
        };
        let scratch = self.scratch(&format!(
            "{}-{}",
            side.as_str(),
            self.adapters[i].kind().as_str()
        ))?;
        // Cargo's variables are for cargo and nextest alone; every runner gets the rest.
        let cargo = matches!(
            self.adapters[i].kind(),
            RunnerKind::Cargo | RunnerKind::Nextest
        );
        let env = self
            .side_env(side)
            .into_iter()
            .filter(|(k, _)| cargo || k != "CARGO_TARGET_DIR")
            .chain(self.passed_env(Some(i)))
            .collect();
        Ok(RunCtx {
            worktree: wt.path().to_path_buf(),
            dir,
            scratch,
            timeout: self.input.timeout,
            env,
        })
    }

    /// The environment every command at a side gets: its own cargo target dir (base and head
    /// never share build outputs, nor use the user's), and a pinned terminal size (runners wrap
    /// their output to it, and the same run must leave the same logs).
    fn side_env(&self, side: Side) -> Vec<(OsString, OsString)> {
        vec![
            (
                OsString::from("CARGO_TARGET_DIR"),
                self.input
                    .temp_root
                    .join("target")
                    .join(side.as_str())
                    .into_os_string(),
            ),
            (OsString::from("COLUMNS"), OsString::from("120")),
            (OsString::from("LINES"), OsString::from("40")),
        ]
    }

    /// A fresh worktree has the code but not what the workflow installed into the checkout.
    /// With no `setup`, a JavaScript runner reuses the checkout's `node_modules` (a link) when
    /// the lockfile at this commit is the same as the checkout's, and says so in the report.
    fn reuse_node_modules(&mut self, i: usize, wt: &Worktree, side: Side) {
        let root = self.adapters[i].config().root.clone();
        let rel = |base: &std::path::Path| {
            if root == "." {
                base.to_path_buf()
            } else {
                base.join(&root)
            }
        };
        let (dir, checkout) = (rel(wt.path()), rel(self.input.git.root()));
        if dir.join("node_modules").exists() || !checkout.join("node_modules").is_dir() {
            return;
        }
        const LOCKFILES: [&str; 5] = [
            "package-lock.json",
            "npm-shrinkwrap.json",
            "yarn.lock",
            "pnpm-lock.yaml",
            "bun.lockb",
        ];
        let same = LOCKFILES.iter().find_map(|name| {
            let ours = std::fs::read(dir.join(name)).ok()?;
            let theirs = std::fs::read(checkout.join(name)).ok()?;
            Some((name, ours == theirs))
        });
        let result = match same {
            Some((name, true)) => {
                match std::os::unix::fs::symlink(checkout.join("node_modules"), dir.join("node_modules")) {
                    Ok(()) => format!("reused the checkout's node_modules: {name} is the same at this commit"),
                    Err(e) => format!("could not link the checkout's node_modules: {e}"),
                }
            }
            Some((name, false)) => format!("not reusing the checkout's node_modules: {name} differs at this commit; set `setup:` (for example `npm ci`)"),
            None => "not reusing the checkout's node_modules: no lockfile to compare; set `setup:` (for example `npm ci`)".to_string(),
        };
        (self.input.progress)(&format!("{}: {result}", side.as_str()));
        self.runtime.push(RuntimeRow {
            side: match side {
                Side::Head => "head".into(),
                Side::Base => "base (+ head test files)".into(),
            },
            runner: self.adapters[i].kind().as_str().into(),
            command: "node_modules".into(),
            tests: 0,
            result,
            seconds: 0.0,
            exit_code: None,
            excerpt: None,
            tool: None,
        });
    }

    /// Runs a runner's `setup` in a worktree; `Some(problem)` when it failed.
    fn setup(
        &mut self,
        i: usize,
        wt: &Worktree,
        side: Side,
        overlay: Option<&OverlayRef>,
    ) -> Result<Option<String>, Error> {
        let Some(setup) = self.adapters[i].config().setup.clone() else {
            if matches!(
                self.adapters[i].kind(),
                RunnerKind::Vitest | RunnerKind::Jest
            ) {
                self.reuse_node_modules(i, wt, side);
            }
            return Ok(None);
        };
        (self.input.progress)(&format!("{}: setup `{setup}`", side.as_str()));
        let ctx = self.run_ctx(i, wt, side)?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(&setup).current_dir(&ctx.dir);
        for (k, v) in &ctx.env {
            cmd.env(k, v);
        }
        let watch = self.step_watch(
            side,
            format!("setup `{setup}`"),
            progress::Source::None,
            &[],
        );
        let cap = progress::step(watch.as_ref(), || process::run(cmd, self.input.timeout))
            .map_err(|e| Error::crash(format!("cannot start sh: {e}")))?;
        let argv = vec!["sh".to_string(), "-c".to_string(), setup.clone()];
        let inv = Invocation {
            command: argv,
            captured: cap.clone(),
            results: None,
            results_type: None,
        };
        let commit = if side == Side::Head {
            &self.input.head
        } else {
            &self.input.base
        };
        let ptrs = self.store_invocation(&inv)?;
        let note = if cap.success() {
            None
        } else {
            Some("setup failed")
        };
        self.put(&Record::Setup(RunRecord {
            schema: RECORD_SCHEMA,
            side: Some(side),
            commit: commit.to_string(),
            overlay: overlay.cloned(),
            runner: Some(self.adapters[i].kind().as_str().into()),
            root: Some(self.adapters[i].config().root.clone()),
            command: inv.command.clone(),
            test_id: None,
            run: 1,
            outcome: None,
            exit_code: cap.exit_code,
            duration_ms: self.ms(cap.duration),
            stdout: Some(ptrs.0),
            stderr: Some(ptrs.1),
            results: None,
            note: note.map(str::to_string),
        }))?;
        self.push_runtime(
            side,
            i,
            &inv,
            0,
            if cap.success() {
                "ok".into()
            } else {
                "setup failed".into()
            },
        );
        interrupted()?;
        if cap.success() {
            self.adapters[i].check_setup(&ctx).map_err(Error::input)?;
        }
        Ok((!cap.success()).then(|| {
            if cap.timed_out {
                format!("setup `{setup}` timed out")
            } else {
                format!("setup `{setup}` failed (exit {})", code(cap.exit_code))
            }
        }))
    }

    fn ms(&self, d: Duration) -> u64 {
        if self.input.clock.is_pinned() {
            0
        } else {
            d.as_millis() as u64
        }
    }

    fn put(&mut self, r: &Record) -> Result<String, Error> {
        self.store.put_record(r).map_err(Error::crash)
    }

    fn store_invocation(
        &mut self,
        inv: &Invocation,
    ) -> Result<(String, String, Option<String>), Error> {
        let out = self.store.put_blob(self.norm.apply(&inv.captured.stdout));
        let err = self.store.put_blob(self.norm.apply(&inv.captured.stderr));
        let res = inv
            .results
            .as_ref()
            .map(|r| self.store.put_blob(self.norm.apply(r)));
        Ok((out, err, res))
    }

    fn record_listing(
        &mut self,
        i: usize,
        side: Side,
        report: &runners::ListReport,
    ) -> Result<String, Error> {
        let commit = if side == Side::Head {
            self.input.head.clone()
        } else {
            self.input.base.clone()
        };
        let mut last = String::new();
        for inv in &report.invocations {
            let (o, e, r) = self.store_invocation(inv)?;
            let command: Vec<String> = inv.command.iter().map(|a| self.norm.apply_str(a)).collect();
            let note = report
                .build_failure
                .as_ref()
                .map(|_| "does not build".to_string())
                .or_else(|| report.problem.clone())
                .unwrap_or_else(|| format!("{} tests listed", report.tests.len()));
            last = self.put(&Record::Listing(RunRecord {
                schema: RECORD_SCHEMA,
                side: Some(side),
                commit: commit.to_string(),
                overlay: None,
                runner: Some(self.adapters[i].kind().as_str().into()),
                root: Some(self.adapters[i].config().root.clone()),
                command,
                test_id: None,
                run: 1,
                outcome: None,
                exit_code: inv.captured.exit_code,
                duration_ms: self.ms(inv.captured.duration),
                stdout: Some(o),
                stderr: Some(e),
                results: r.clone(),
                note: Some(note.clone()),
            }))?;
            let is_last = std::ptr::eq(inv, report.invocations.last().unwrap_or(inv));
            let summary = match (inv.captured.success(), is_last) {
                (true, true) => format!("{} listed", report.tests.len()),
                (true, false) => "ok".to_string(),
                (false, _) => note.clone(),
            };
            let n = if is_last { report.tests.len() } else { 0 };
            self.push_runtime(side, i, inv, n, summary);
            if is_last {
                if let Some(row) = self.runtime.last_mut() {
                    row.tool = self.adapters[i].tool();
                }
            }
        }
        Ok(last)
    }

    /// Runs the bound tests of one file in one invocation, and tests of different files in
    /// different invocations, so that no test of another file (another criterion's, say, or one
    /// the change added) can forge or disturb a bound test's result: the tests of one file
    /// already share a module, so one process gives them no way to reach each other that the
    /// file does not already have. A bound test whose file is unknown runs alone. Each test's
    /// evidence cites the invocation that observed it. The tests only the pass-to-pass guard
    /// wants run together.
    #[allow(clippy::too_many_arguments)]
    fn run_isolated(
        &mut self,
        stage: &Position,
        i: usize,
        wt: &Worktree,
        side: Side,
        overlay: Option<&OverlayRef>,
        ids: &[String],
        bound: &BTreeMap<String, Option<String>>,
        k: u32,
        obs: &mut BTreeMap<(usize, String), Observed>,
    ) -> Result<(), Error> {
        let (groups, alone, together) = group_by_file(ids, bound);
        // Each invocation is a stage of its own, named as it is ordered here, so that the
        // invocations of shards merge back into this order.
        let at = |class: u64, name: &str| {
            let mut p = stage.clone();
            p.extend([
                Step::N(u64::from(k)),
                Step::N(class),
                Step::S(name.to_string()),
            ]);
            p
        };
        for (file, group) in &groups {
            self.enter(at(0, file));
            self.run_tests(i, wt, side, overlay, group, k, obs)?;
        }
        for id in &alone {
            self.enter(at(1, id));
            self.run_tests(i, wt, side, overlay, std::slice::from_ref(id), k, obs)?;
        }
        if !together.is_empty() {
            self.enter(at(2, ""));
            self.run_tests(i, wt, side, overlay, &together, k, obs)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn run_tests(
        &mut self,
        i: usize,
        wt: &Worktree,
        side: Side,
        overlay: Option<&OverlayRef>,
        ids: &[String],
        k: u32,
        obs: &mut BTreeMap<(usize, String), Observed>,
    ) -> Result<(), Error> {
        let ctx = self.run_ctx(i, wt, side)?;
        let kind = self.adapters[i].kind();
        let source = progress::Source::of(kind, &ctx);
        let watch = self.step_watch(side, kind.as_str().to_string(), source, ids);
        let report = progress::step(watch.as_ref(), || self.adapters[i].run(&ctx, ids));
        interrupted()?;
        if let Some(w) = &watch {
            let mut w = w.borrow_mut();
            w.finish(&report.outcomes);
            self.tally.0 = w.done();
        }
        let commit = if side == Side::Head {
            self.input.head.clone()
        } else {
            self.input.base.clone()
        };
        let mut blobs = Vec::new();
        for inv in &report.invocations {
            blobs.push(self.store_invocation(inv)?);
        }
        let duration: Duration = report
            .invocations
            .iter()
            .map(|inv| inv.captured.duration)
            .sum();
        let mut counts: BTreeMap<Outcome, usize> = BTreeMap::new();
        for id in ids {
            let outcome = report
                .outcomes
                .get(id)
                .copied()
                .unwrap_or(Outcome::NotObserved);
            *counts.entry(outcome).or_default() += 1;
            // Cite the invocation that ran this test: the last one whose output names it
            // (earlier ones build or collect; cargo runs one binary per invocation).
            let name = id.rsplit([' ', ':']).next().unwrap_or(id);
            let at = report
                .invocations
                .iter()
                .rposition(|inv| {
                    contains(&inv.captured.stdout, name)
                        || inv.results.as_deref().is_some_and(|r| contains(r, name))
                })
                .unwrap_or(report.invocations.len().saturating_sub(1));
            let (stdout, stderr, results) = blobs.get(at).cloned().unwrap_or_default();
            let inv = report.invocations.get(at);
            let command: Vec<String> = inv
                .map(|inv| inv.command.iter().map(|a| self.norm.apply_str(a)).collect())
                .unwrap_or_default();
            let exit_code = inv.and_then(|inv| inv.captured.exit_code);
            let message = report.messages.get(id).map(|m| self.norm.apply_str(m));
            let note = match outcome {
                Outcome::BuildFail => report
                    .build_failure
                    .as_ref()
                    .map(|b| format!("errors in: {}", b.diagnostic_files.join(", "))),
                Outcome::NotObserved => report.problem.clone(),
                Outcome::Fail => message.clone(),
                Outcome::Pass => None,
            };
            let ptr = self.put(&Record::Test(RunRecord {
                schema: RECORD_SCHEMA,
                side: Some(side),
                commit: commit.to_string(),
                overlay: overlay.cloned(),
                runner: Some(self.adapters[i].kind().as_str().into()),
                root: Some(self.adapters[i].config().root.clone()),
                command,
                test_id: Some(id.clone()),
                run: k,
                outcome: Some(outcome),
                exit_code,
                duration_ms: self.ms(duration),
                stdout: Some(stdout),
                stderr: Some(stderr),
                results,
                note,
            }))?;
            let entry = obs.entry((i, id.clone())).or_default();
            entry.outcomes.push(outcome);
            entry.evidence.push(ptr);
            if outcome == Outcome::NotObserved && report.problem.is_some() {
                entry.problem = report.problem.clone();
            }
            if outcome == Outcome::BuildFail {
                entry.build_files = report.build_files.get(id).cloned().or_else(|| {
                    report
                        .build_failure
                        .as_ref()
                        .map(|b| b.diagnostic_files.clone())
                });
                entry.diagnostics = report
                    .build_failure
                    .as_ref()
                    .map(|b| b.diagnostics.clone())
                    .unwrap_or_default();
            }
            if outcome == Outcome::Fail && entry.message.is_none() {
                entry.message = message;
            }
            if outcome == Outcome::Fail && entry.failure_kind.is_none() {
                entry.failure_kind = report.failure_kinds.get(id).copied();
            }
        }
        let result = counts
            .iter()
            .map(|(o, n)| format!("{n} {}", past(o.as_str())))
            .collect::<Vec<_>>()
            .join(", ");
        for (n, inv) in report.invocations.iter().enumerate() {
            let is_last = n + 1 == report.invocations.len();
            let summary = if is_last {
                result.clone()
            } else if inv.captured.success() {
                "ok".to_string()
            } else if report.build_failure.is_some() {
                "build failed".to_string()
            } else {
                format!("exit {}", code(inv.captured.exit_code))
            };
            self.push_runtime(side, i, inv, if is_last { ids.len() } else { 0 }, summary);
        }
        Ok(())
    }

    /// A text the floor shows a person (a reason, an evidence detail, a runtime row), with every
    /// path into a worktree relative to the repository and every other path of the run's own
    /// temporary directory as its placeholder: what the compiler or Python printed names the
    /// worktree's temporary path, which differs on every run and means nothing to the reader.
    /// Stored logs keep what the run printed (with the evidence's own placeholders).
    fn shown(&self, text: &str) -> String {
        let text = self.norm.apply_str(text);
        if !text.contains("$WORKTREE") {
            return text;
        }
        text.replace("$WORKTREE/", "").replace("$WORKTREE", ".")
    }

    /// [`Ctx::shown`] over a criterion's reason and evidence detail.
    fn shown_floor(&self, mut cf: CriterionFloor) -> CriterionFloor {
        cf.reason = self.shown(&cf.reason);
        if let Some(e) = cf.evidence.as_mut() {
            e.detail = self.shown(&e.detail);
        }
        cf
    }

    /// The environment the floor's commands get, for the runtime section: the names withheld
    /// from them (looking like credentials, or the judge's key) and the names `env_pass`
    /// passes, never a value. No row where nothing is either.
    fn environment_row(&mut self) {
        let (withheld, passed) = process::environment_names(&all_env_pass(self.input));
        if withheld.is_empty() && passed.is_empty() {
            return;
        }
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        self.runtime.push(RuntimeRow {
            side: "head and base".into(),
            runner: "environment".into(),
            command: "the environment of every command the floor runs".into(),
            tests: 0,
            result: format!(
                "withheld: {}; passed by env_pass: {}",
                list(&withheld),
                list(&passed)
            ),
            seconds: 0.0,
            exit_code: None,
            excerpt: None,
            tool: None,
        });
    }

    /// The variables `env_pass` passes to runner `runner`'s commands (`floor.env_pass` and its
    /// own; `None`: a `check.command`, `floor.env_pass` alone), as our environment has them.
    /// Set on each command explicitly: [`process::run`] withholds them when inherited.
    fn passed_env(&self, runner: Option<usize>) -> Vec<(OsString, OsString)> {
        let mut names = self.input.acceptance.env_pass.clone();
        if let Some(a) = runner.and_then(|i| self.adapters.get(i)) {
            names.extend(a.config().env_pass.iter().cloned());
        }
        names.sort();
        names.dedup();
        process::passed_values(&names)
            .into_iter()
            .map(|(k, v)| (OsString::from(k), v))
            .collect()
    }

    fn push_runtime(
        &mut self,
        side: Side,
        i: usize,
        inv: &Invocation,
        tests: usize,
        result: String,
    ) {
        let failed = !inv.captured.success();
        let excerpt = failed.then(|| {
            excerpt(
                &self.norm.apply(&inv.captured.stdout),
                &self.norm.apply(&inv.captured.stderr),
            )
        });
        self.runtime.push(RuntimeRow {
            side: match side {
                Side::Head => "head".into(),
                Side::Base => "base (+ head test files)".into(),
            },
            runner: self
                .adapters
                .get(i)
                .map(|a| a.kind().as_str().to_string())
                .unwrap_or_else(|| "command".into()),
            command: inv
                .command
                .iter()
                .map(|a| self.norm.apply_str(a))
                .collect::<Vec<_>>()
                .join(" "),
            tests,
            result,
            seconds: if self.input.clock.is_pinned() {
                0.0
            } else {
                (inv.captured.duration.as_secs_f64() * 10.0).round() / 10.0
            },
            exit_code: inv.captured.exit_code,
            excerpt,
            tool: None,
        });
    }
}

/// The invocations of one run at one side (see [`Ctx::run_isolated`]): the bound ids grouped by
/// their file, the bound ids with no known file (each alone), and the ids that are not bound
/// (the guard's, run together).
type Grouped = (BTreeMap<String, Vec<String>>, Vec<String>, Vec<String>);

fn group_by_file(ids: &[String], bound: &BTreeMap<String, Option<String>>) -> Grouped {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut alone = Vec::new();
    let mut together = Vec::new();
    for id in ids {
        match bound.get(id) {
            Some(Some(file)) => groups.entry(file.clone()).or_default().push(id.clone()),
            Some(None) => alone.push(id.clone()),
            None => together.push(id.clone()),
        }
    }
    (groups, alone, together)
}

fn code(c: Option<i32>) -> String {
    c.map(|c| c.to_string()).unwrap_or_else(|| "signal".into())
}

/// The last lines of a failed command's output, bounded.
fn excerpt(stdout: &[u8], stderr: &[u8]) -> String {
    let pick = |b: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(b)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.chars().take(200).collect())
            .collect()
    };
    let mut lines = pick(stdout);
    if lines.is_empty() {
        lines = pick(stderr);
    }
    let n = lines.len();
    lines[n.saturating_sub(12)..].join("\n")
}

/// Whether a path is one of this tool's outputs (left out of the dirty-tree check).
pub fn is_output_path(p: &str) -> bool {
    p.starts_with(".shipmoor/evidence/")
        || p == ".shipmoor/verify.md"
        || (p.starts_with(".shipmoor/claim-check.") && p.ends_with(".json"))
}

/// A command a person can paste to run one test the way the floor did.
pub fn reproduce(config: &RunnerConfig, id: &str) -> String {
    let cd = if config.root == "." {
        String::new()
    } else {
        format!("cd {} && ", config.root)
    };
    let (binary, name) = id.split_once(' ').unwrap_or(("", id));
    match config.kind {
        RunnerKind::Pytest => format!("{cd}pytest {id}"),
        RunnerKind::Nextest => {
            format!("{cd}cargo nextest run -E 'binary_id({binary}) & test(={name})'")
        }
        RunnerKind::Cargo => {
            let target = match binary.split_once("::") {
                Some((_, t)) if t.starts_with("bin/") => format!("--bin {}", &t[4..]),
                Some((_, t)) => format!("--test {t}"),
                None => "--lib".to_string(),
            };
            format!("{cd}cargo test {target} -- --exact {name}")
        }
        other => format!("{cd}{} {id}", other.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::{group_by_file, Share, Split};
    use std::collections::BTreeMap;

    #[test]
    fn shards_split_the_entries_round_robin_by_criterion_or_by_runner() {
        let positions = |k, n, split, runners: &[Option<usize>], guard| {
            Share { k, n, split }
                .positions(runners, guard)
                .into_iter()
                .collect::<Vec<_>>()
        };
        // Seven criteria and the guard (position 7), three shards: i mod 3 = K - 1.
        let runners = [Some(0), Some(1), Some(0), Some(1), Some(0), Some(1), None];
        assert_eq!(positions(1, 3, Split::Criterion, &runners, true), [0, 3, 6]);
        assert_eq!(positions(2, 3, Split::Criterion, &runners, true), [1, 4, 7]);
        assert_eq!(positions(3, 3, Split::Criterion, &runners, true), [2, 5]);
        // By runner: runner 0's criteria, and those bound to none and the guard, in shard 1.
        assert_eq!(
            positions(1, 3, Split::Runner, &runners, true),
            [0, 2, 4, 6, 7]
        );
        assert_eq!(positions(2, 3, Split::Runner, &runners, true), [1, 3, 5]);
        assert!(positions(3, 3, Split::Runner, &runners, true).is_empty());
        // Runners round robin over fewer shards: runner 2 goes with runner 0.
        let three = [Some(2), Some(1), Some(0)];
        assert_eq!(positions(1, 2, Split::Runner, &three, false), [0, 2]);
        // Every entry in exactly one shard, whatever N.
        for n in 1..=9 {
            for split in [Split::Criterion, Split::Runner] {
                let mut all: Vec<usize> = (1..=n)
                    .flat_map(|k| positions(k, n, split, &runners, true))
                    .collect();
                all.sort();
                assert_eq!(all, (0..8).collect::<Vec<_>>(), "{n} shards by {split:?}");
            }
        }
    }

    #[test]
    fn bound_tests_run_together_per_file_and_never_across_files() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let bound: BTreeMap<String, Option<String>> = [
            ("a::one", Some("tests/a.py")),
            ("b::one", Some("tests/b.py")),
            ("a::two", Some("tests/a.py")),
            ("x::nofile", None),
            ("y::nofile", None),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
        .collect();
        let ids = s(&[
            "a::one",
            "a::two",
            "b::one",
            "g::guard",
            "x::nofile",
            "y::nofile",
        ]);
        let (groups, alone, together) = group_by_file(&ids, &bound);
        assert_eq!(
            groups.into_iter().collect::<Vec<_>>(),
            vec![
                ("tests/a.py".to_string(), s(&["a::one", "a::two"])),
                ("tests/b.py".to_string(), s(&["b::one"])),
            ]
        );
        // No file known: each alone, never grouped with each other.
        assert_eq!(alone, s(&["x::nofile", "y::nofile"]));
        // Not bound (the guard's): together.
        assert_eq!(together, s(&["g::guard"]));
    }
}
