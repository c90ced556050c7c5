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
//! A run is split by role. [`Env`] is what the run was given and what follows from it alone
//! (the inputs, the runners, the normaliser), made once and never changed. The `Recorder`
//! ([`record`]) receives every observation: evidence records, and [`events::Event`]s, of which
//! the runtime table keeps the rows and the progress display shows the lines (one event, both
//! views, worded in one place). `Watch` is the harness guard's (book: floor/harness.md),
//! `CacheSession` the base cache's (book: floor/base-cache.md). `Ctx` holds these and what one
//! phase found that a later one reads.
//!
//! The phases are files of their own, each adding its methods to `Ctx`: `plan` (the runners
//! and their tools, the harness changes, head's listing, the bindings and what each runner
//! runs), `seed` (the sides' cargo target dirs), `overlay` (what base gets from head), `side`
//! (one side's setup and runs), `isolate` (whose failure a build failure at base is), `entries`
//! and `checks` (each entry's own check, and its decision by `decide`), and `reuse` (the base
//! cache). `confine` says where each side's commands run.
//!
//! Build outputs are never shared between the worktrees: each side has its own
//! `CARGO_TARGET_DIR`, because a shared one has been seen to run the other side's stale binary.

pub mod bind;
pub mod cache;
#[cfg(feature = "claim-check")]
mod checks;
#[cfg(feature = "claim-check")]
mod confine;
#[cfg(feature = "claim-check")]
mod decide;
#[cfg(feature = "claim-check")]
mod entries;
#[cfg(feature = "claim-check")]
mod events;
pub mod harness;
#[cfg(feature = "claim-check")]
mod isolate;
#[cfg(feature = "claim-check")]
mod overlay;
#[cfg(feature = "claim-check")]
mod plan;
#[cfg(feature = "claim-check")]
mod planted;
pub use crate::process;
#[cfg(feature = "claim-check")]
pub mod progress;
#[cfg(feature = "claim-check")]
mod record;
#[cfg(feature = "claim-check")]
mod reuse;
pub mod runners;
#[cfg(feature = "claim-check")]
pub mod scan;
#[cfg(feature = "claim-check")]
mod seed;
#[cfg(feature = "claim-check")]
mod side;
#[cfg(feature = "claim-check")]
mod workspace;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::acceptance::Criterion;

// What the floor's execution uses (the default feature `claim-check`, see the crate's doc).
#[cfg(feature = "claim-check")]
use {
    crate::acceptance::{AcceptanceSet, RunnerConfig},
    crate::clock::Clock,
    crate::decision::attribute::Attribution,
    crate::error::Error,
    crate::evidence::{EvidenceStore, Normalizer},
    crate::git::{CommitId, Git},
    plan::{detect_harness, Needs, Plan},
    record::Recorder,
    runners::{FailureKind, Outcome, Runner, RunnerId},
    std::collections::BTreeMap,
    std::path::PathBuf,
    std::sync::Arc,
    std::time::Duration,
};
#[cfg(feature = "claim-check")]
pub use {
    decide::guard_criterion,
    plan::{check_tools, detect_runners},
    runners::rust::target::{seed_cargo_target, Seeded},
};

/// What the floor needs for one run.
#[cfg(feature = "claim-check")]
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
    /// A shard's share of the entries (book: sharding.md); `None`: every entry.
    pub shard: Option<Share>,
    /// The base cache, read before any of the change's code ran (book: floor/base-cache.md);
    /// `None`: off (`--base-cache none`, replay's re-run).
    pub base_cache: Option<&'a cache::BaseCache>,
    /// The sandbox every command of the floor starts in, and the paths hidden from all of them
    /// (book: security.md, "The sandbox").
    pub confinement: &'a crate::sandbox::Confinement,
    /// The runners the floor knows ([`runners::registry::Registry::builtin`], or more in a test):
    /// each of `runners` is made from its kind's entry.
    pub registry: &'a runners::registry::Registry,
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
    pub fn positions(&self, runners: &[Option<runners::RunnerId>], guard: bool) -> BTreeSet<usize> {
        let total = runners.len() + usize::from(guard);
        (0..total)
            .filter(|&pos| {
                let slot = match self.split {
                    Split::Criterion => pos % self.n,
                    Split::Runner => runners
                        .get(pos)
                        .copied()
                        .flatten()
                        .map_or(0, |r| r.0 % self.n),
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
pub use crate::format::floor::{
    BaseCacheState, BaseCacheUse, CriterionFloor, EvidenceRef, RuntimeRow, Side, TestObservation,
};

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
    /// Source files of which only head's test items were laid over base (book:
    /// floor/base-overlay.md).
    pub overlay_spliced: Vec<String>,
    pub changed_files: usize,
    /// Files this change touched that decide how tests run (book: floor/harness.md).
    pub harness: Vec<harness::HarnessChange>,
    /// How base used the base cache; `None` when it is off or base ran no test.
    pub base_cache: Option<BaseCacheUse>,
    /// Base's observations as a new cache entry, for the command to write once nothing the
    /// run started still runs ([`cache::BaseCache::commit`]).
    pub cache_entry: Option<cache::Pending>,
    /// The sandbox every command of the floor ran under.
    pub sandbox: crate::format::sandbox::SandboxRecord,
}

/// What one floor run is given, and what follows from that alone: made once before anything
/// runs, never changed, and read by every role of the run.
#[cfg(feature = "claim-check")]
struct Env<'a> {
    input: &'a FloorInput<'a>,
    /// One runner per configured runner, made from its kind's registry entry.
    adapters: Vec<Arc<dyn Runner>>,
    /// What makes stored output and shown text free of the run's paths and of credentials.
    norm: Normalizer,
    /// The repository's and the person's git configuration, as reports name each
    /// ([`git_configuration`]), watched like a harness file.
    git_files: Vec<(String, PathBuf)>,
}

/// The harness guard's watch over one run (book: floor/harness.md): what the change and the
/// commands it ran did to the files that decide how tests run.
#[cfg(feature = "claim-check")]
#[derive(Default)]
struct Watch {
    /// The harness files this change touched.
    harness: Vec<harness::HarnessChange>,
    /// Tracked files a run changed in a worktree (`head: path`, `base: path`).
    rewritten: Vec<String>,
    /// Per side (head, base): what its worktree and home held after its last command, to find
    /// what the next one writes ([`planted`]).
    snapshots: [Option<planted::Snapshot>; 2],
    /// Files a command wrote that decide how later commands at its side run, in order.
    planted: Vec<(Side, planted::Planted)>,
}

/// How one run uses the base cache (book: floor/base-cache.md).
#[cfg(feature = "claim-check")]
#[derive(Default)]
struct CacheSession {
    /// How base used the base cache, so far.
    used: Option<BaseCacheUse>,
    /// Base's observations as a new cache entry.
    entry: Option<cache::Pending>,
    /// When the base cache's work for this run began (its key), for the cost a hit shows.
    started: Option<std::time::Instant>,
}

/// One floor run: its environment, the recorder its observations go to, the harness guard's
/// watch, the base cache session, and what each phase found that a later one reads. Each
/// phase's file adds its methods.
#[cfg(feature = "claim-check")]
struct Ctx<'a> {
    env: &'a Env<'a>,
    rec: Recorder<'a>,
    watch: Watch,
    cache: CacheSession,
    /// How many scratch directories the run made, for the next one's number.
    scratch_seq: usize,
    /// The tag scan of head, when tag-bound criteria needed one and it could run.
    scan: Option<scan::TagScan>,
    /// The scan's evidence record.
    scan_evidence: Option<String>,
    /// Changed files that are test code as a whole at head although no runner's path rule says
    /// so ([`runners::TestItems::test_files_among`]): laid over base whole, never spliced.
    test_modules: BTreeSet<String>,
    /// The checkout's `node_modules` directories the worktrees link to (readable in the
    /// sandbox, never writable).
    reused: Vec<PathBuf>,
    /// The (side, runner) pairs whose dependencies were fetched ([`Ctx::fetch_dependencies`]).
    fetched: BTreeSet<(usize, RunnerId)>,
}

/// Every name `env_pass` passes: `floor.env_pass` and each runner's own, sorted, once each.
#[cfg(feature = "claim-check")]
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
#[cfg(feature = "claim-check")]
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
#[cfg(feature = "claim-check")]
struct Reaping;

#[cfg(feature = "claim-check")]
impl Drop for Reaping {
    fn drop(&mut self) {
        process::become_subreaper(false);
        process::reap_orphans();
    }
}

/// Per test, per side: the outcomes of each run and their evidence pointers.
#[cfg(feature = "claim-check")]
#[derive(Default, Clone)]
struct Observed {
    outcomes: Vec<Outcome>,
    evidence: Vec<String>,
    problem: Option<String>,
    build_files: Option<Vec<String>>,
    /// The compiler's errors with their positions, when the test did not build.
    diagnostics: Vec<runners::Diagnostic>,
    /// Whose failure a build failure at base is (book: floor/attribution.md), once decided.
    attribution: Option<Attribution>,
    /// The first failure message seen.
    message: Option<String>,
    /// What kind of failure the first failing run was, where the runner tells.
    failure_kind: Option<FailureKind>,
    /// Why a run of this test is not trusted: a file an earlier command at its side wrote that
    /// decides how it ran (book: floor/harness.md, "Written at run time").
    tainted: Option<String>,
}

/// Runs the floor (see the module doc).
#[cfg(feature = "claim-check")]
pub fn run(input: &FloorInput<'_>, store: &mut EvidenceStore) -> Result<FloorReport, Error> {
    run_ordered(input, store).map(|(report, _)| report)
}

/// [`run`], with the position of every runtime row and evidence record it made.
#[cfg(feature = "claim-check")]
pub fn run_ordered(
    input: &FloorInput<'_>,
    store: &mut EvidenceStore,
) -> Result<(FloorReport, FloorOrder), Error> {
    let env = Env::new(input);
    let mut cx = Ctx::new(&env, store);
    // The floor's commands run one at a time: each one's end stops what it left running.
    process::become_subreaper(true);
    let reaping = Reaping;
    cx.rec.environment_row();
    env.make_homes()?;
    let git_before = planted::Snapshot::git(&cx.env.git_files);
    let changes = input.git.changed_files(&input.base, &input.head)?;
    cx.watch.harness = detect_harness(input, &env.adapters, &changes)?;
    let needs = Needs::of(input.acceptance);

    // 1. head worktree, setup, listing.
    let head_wt = cx.head_worktree(needs)?;
    let listed = cx.list_head(head_wt.as_ref(), &changes, needs)?;
    interrupted()?;

    // 2. bind, and what each runner runs.
    let tests: Vec<&[runners::TestCase]> = listed.iter().map(|l| l.tests.as_slice()).collect();
    let plan = Plan::new(input, &tests, needs.guarding)?;

    // 3. head runs of the bound (and guarded) tests.
    let mut head_obs = BTreeMap::new();
    if let Some(wt) = &head_wt {
        cx.run_side(Side::Head, wt, None, &plan, &changes, &mut head_obs)?;
    }
    interrupted()?;
    if let Some(wt) = &head_wt {
        cx.watch.note_rewritten(Side::Head, wt, &[])?;
    }

    // 4. base worktree with head's test files laid over it, and the same runs there, unless
    //    the base cache holds base's observations under this key (book: floor/base-cache.md).
    cx.rec.enter(vec![Step::N(STAGE_BASE), Step::N(0)]);
    let overlay = cx.overlay(&plan, &changes)?;
    let key = cx.base_key(&plan, &overlay, head_wt.as_ref())?;
    let mut base_obs = BTreeMap::new();
    cx.rec.enter(vec![Step::N(STAGE_BASE), Step::N(1)]);
    let reused = key
        .as_ref()
        .is_some_and(|k| cx.reuse_base(k, &mut base_obs));
    let base_wt = if plan.any_base_work() && !reused {
        Some(cx.lay_base(&overlay)?)
    } else {
        None
    };
    let (first_record, first_rewritten) = (cx.rec.store.records().len(), cx.watch.rewritten.len());
    if let Some((wt, _)) = &base_wt {
        let rust_at_base = cx
            .env
            .adapters
            .iter()
            .zip(&plan.wanted)
            .any(|(a, w)| a.cargo_target() && !w.is_empty());
        if rust_at_base {
            cx.seed_base_target(wt)?;
        }
        cx.run_side(
            Side::Base,
            wt,
            Some(&overlay.laid),
            &plan,
            &changes,
            &mut base_obs,
        )?;
    }
    interrupted()?;
    if let Some((wt, baseline)) = &base_wt {
        cx.watch.note_rewritten(Side::Base, wt, baseline)?;
    }
    if let (Some(key), false) = (key, reused) {
        cx.offer_base(key, &base_obs, first_record, first_rewritten)?;
    }

    // 5. what the run observed, as plain data for the deciding phase.
    let observations = cx.observations(&plan, listed, head_obs, base_obs);

    // 6. commands and patterns, and the decision for every criterion.
    let worktrees = (head_wt.as_ref(), base_wt.as_ref().map(|(wt, _)| wt));
    let entries = cx.entries(&plan, &observations, worktrees, &overlay.laid, &changes)?;
    cx.git_changed(&git_before);
    drop(reaping);
    drop(head_wt);
    drop(base_wt);
    cx.rec.enter(Vec::new());
    let report = FloorReport {
        entries,
        runtime: cx.rec.shown_runtime(),
        overlay: overlay.laid.paths,
        overlay_deleted: overlay.laid.deleted,
        overlay_spliced: overlay.laid.spliced,
        changed_files: changes.len(),
        harness: cx.watch.harness,
        base_cache: cx.cache.used,
        cache_entry: cx.cache.entry,
        sandbox: crate::format::sandbox::SandboxRecord::of(&input.confinement.sandbox),
    };
    Ok((report, cx.rec.order))
}

/// The stages of the floor's order ([`Position`]), as they run: the steps every shard runs
/// (the head worktree, tag scan, seeding, setup and listing); one runner's bound tests at head;
/// base's worktree and seeding; one runner's work at base; one entry's own check.
#[cfg(feature = "claim-check")]
const STAGE_SHARED: u64 = 0;
#[cfg(feature = "claim-check")]
const STAGE_HEAD_RUNS: u64 = 1;
#[cfg(feature = "claim-check")]
const STAGE_BASE: u64 = 2;
#[cfg(feature = "claim-check")]
const STAGE_BASE_RUNNER: u64 = 3;
#[cfg(feature = "claim-check")]
const STAGE_ENTRIES: u64 = 4;

#[cfg(feature = "claim-check")]
fn interrupted() -> Result<(), Error> {
    if process::interrupted() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}

#[cfg(feature = "claim-check")]
impl<'a> Env<'a> {
    fn new(input: &'a FloorInput<'a>) -> Env<'a> {
        let adapters: Vec<Arc<dyn Runner>> = input
            .runners
            .iter()
            .filter_map(|r| input.registry.make(r.clone()))
            .collect();
        let norm = Normalizer::new(&[
            (input.temp_root.join("head"), "$WORKTREE"),
            (input.temp_root.join("base"), "$WORKTREE"),
            (input.temp_root.join("scratch"), "$SCRATCH"),
            (input.temp_root.clone(), "$TMP"),
        ])
        .masking(&masked_values(input.git, &input.confinement.env));
        Env {
            input,
            adapters,
            norm,
            git_files: git_configuration(input.git),
        }
    }

    /// The commit checked out at `side`.
    fn commit(&self, side: Side) -> &'a CommitId {
        match side {
            Side::Head => &self.input.head,
            Side::Base => &self.input.base,
        }
    }
}

#[cfg(feature = "claim-check")]
impl<'a> Ctx<'a> {
    fn new(env: &'a Env<'a>, store: &'a mut EvidenceStore) -> Ctx<'a> {
        Ctx {
            env,
            rec: Recorder::new(env, store),
            watch: Watch::default(),
            cache: CacheSession::default(),
            scratch_seq: 0,
            scan: None,
            scan_evidence: None,
            test_modules: BTreeSet::new(),
            reused: Vec::new(),
            fetched: BTreeSet::new(),
        }
    }
}

/// The git configuration a command could change for every later `git` (a filter, a hook, an
/// fsmonitor): the repository's `config`, `info/attributes` and `hooks/` (of its common and own
/// git directories), and the person's global configuration; each with the name reports show.
#[cfg(feature = "claim-check")]
fn git_configuration(git: &crate::git::Git) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for dir in git.git_dirs().unwrap_or_default() {
        for name in ["config", "config.worktree", "info/attributes", "hooks"] {
            out.push((format!(".git/{name}"), dir.join(name)));
        }
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    if let Some(g) = std::env::var_os("GIT_CONFIG_GLOBAL") {
        out.push(("$GIT_CONFIG_GLOBAL".into(), PathBuf::from(g)));
    }
    if let Some(h) = &home {
        out.push(("~/.gitconfig".into(), h.join(".gitconfig")));
    }
    if let Some(x) = xdg {
        out.push(("~/.config/git".into(), x.join("git")));
    }
    out.sort();
    out.dedup_by(|a, b| a.1 == b.1);
    out
}

/// The values masked in everything stored or shown: every credential of our environment as the
/// run's policy has them ([`crate::sandbox::env::EnvPolicy::withheld_values`]), and the
/// credentials the repository's own configuration holds (`actions/checkout` leaves the job's
/// token in `.git/config` as an `http.<url>.extraheader`), which git in a worktree must be able
/// to read.
#[cfg(feature = "claim-check")]
fn masked_values(
    git: &crate::git::Git,
    env: &crate::sandbox::env::EnvPolicy,
) -> Vec<(String, String)> {
    let mut values = env.withheld_values();
    for (key, value) in git.config_credentials() {
        // `AUTHORIZATION: basic <base64>`: the header's value, and the credential alone; a URL's
        // `user:password@`: the password.
        let secret = match value.split_once("://") {
            Some((_, rest)) => rest
                .split_once('@')
                .and_then(|(userinfo, _)| userinfo.split_once(':'))
                .map(|(_, password)| password.to_string())
                .unwrap_or_default(),
            None => value.rsplit(' ').next().unwrap_or(&value).to_string(),
        };
        for v in [value.clone(), secret] {
            if v.len() >= 6 && !values.iter().any(|(_, w)| *w == v) {
                values.push((key.clone(), v));
            }
        }
    }
    values.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
    values
}

/// Whether a path is one of this tool's outputs (left out of the dirty-tree check).
pub fn is_output_path(p: &str) -> bool {
    p.starts_with(".shipmoor/evidence/")
        || p.starts_with(".shipmoor/cache/")
        || p == ".shipmoor/verify.md"
        || (p.starts_with(".shipmoor/claim-check.") && p.ends_with(".json"))
}

#[cfg(test)]
mod tests;
