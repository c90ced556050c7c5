//! Test runner adapters. Each adapter can list the test ids of a project, run a chosen set of
//! them, and read per-test results from a structured file at a path we choose. An exit code is
//! never trusted alone: a test counts as passed only when its id is present in the results with
//! status passed and the exit code agrees.
//!
//! Test ids are runner-native:
//! - cargo and nextest: `<binary-id> <test name>`, the binary id as nextest spells it (`crate`
//!   for the library's unit tests, `crate::name` for `tests/name.rs`, `crate::bin/name`);
//! - pytest: the node id relative to the runner's root (`tests/test_x.py::TestA::test_b`).

#[cfg(feature = "claim-check")]
pub mod contract;
#[cfg(feature = "claim-check")]
pub mod go;
#[cfg(feature = "claim-check")]
pub mod js;
#[cfg(feature = "claim-check")]
pub mod junit;
#[cfg(feature = "claim-check")]
pub mod junit_command;
#[cfg(feature = "claim-check")]
pub mod kit;
#[cfg(feature = "claim-check")]
pub mod pytest;
#[cfg(feature = "claim-check")]
pub mod registered;
#[cfg(feature = "claim-check")]
pub mod registry;
#[cfg(feature = "claim-check")]
pub mod rust;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use crate::acceptance::{RunnerConfig, RunnerKind};
pub use crate::decision::attribute::{Diagnostic, ItemMap};
use crate::error::InputError;
use crate::floor::harness::Family;
use crate::process::Captured;

/// A runner of a floor run, by its position among the run's runners (the order detection or the
/// acceptance set gives them): how every observation and binding names its runner. (The base
/// cache's entries store the bare number.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunnerId(pub usize);

/// A test a runner listed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TestCase {
    /// The runner-native id (see the module doc).
    pub id: String,
    /// The file that holds the test, relative to the repository root, when the runner says.
    pub file: Option<String>,
}

/// A file a run was told to write (its JUnit file, its JSON report), read as the evidence of that
/// run: only a regular file, never through a symlink, at most [`crate::evidence::ITEM_LIMIT`]
/// bytes. The change's code writes where the run does, and may put a symlink there to a file
/// outside the repository (a key left on the runner) or a FIFO that never ends: either is a
/// problem that says what is there, never bytes read through it. `Ok(None)`: nothing there.
pub fn read_run_file(path: &std::path::Path) -> Result<Option<Vec<u8>>, RunFileError> {
    match crate::nofollow::read_regular(path, crate::evidence::ITEM_LIMIT) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(crate::nofollow::ReadError::Missing(_)) => Ok(None),
        // Named by its file name: the scratch directory's path differs on every run.
        Err(why) => Err(RunFileError {
            name: path
                .file_name()
                .unwrap_or(path.as_os_str())
                .to_string_lossy()
                .into_owned(),
            why,
        }),
    }
}

/// What is at the place a run was told to write its results, where no regular file is (or one
/// too big to read), by the file's name.
#[derive(Debug, thiserror::Error)]
#[error("{name} {why}")]
pub struct RunFileError {
    name: String,
    why: crate::nofollow::ReadError,
}

/// Where and how a runner runs: one worktree, one runner root.
#[derive(Debug, Clone)]
pub struct RunCtx {
    /// The worktree's root.
    pub worktree: PathBuf,
    /// The runner's root inside the worktree (`worktree.join(config.root)`).
    pub dir: PathBuf,
    /// An empty directory of our own for result files (JUnit XML, tool configs); never inside
    /// the worktree.
    pub scratch: PathBuf,
    /// The limit for each command the runner starts.
    pub timeout: Duration,
    /// Environment to set for every command (for example `CARGO_TARGET_DIR`).
    pub env: Vec<(OsString, OsString)>,
    /// The sandbox and the policy every command of the runner starts under.
    pub jail: crate::sandbox::Jail,
}

impl RunCtx {
    /// A variable as the runner's commands see it: the last value `env` sets, else the
    /// process's own.
    pub fn var(&self, name: &str) -> Option<OsString> {
        self.env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os(name))
    }
}

/// Where a runner's tools are asked who they are (`--version`, the interpreter that runs
/// pytest) before and beside the floor's runs: in the sandbox, from `/`, a directory that holds
/// nothing of the change, so that no file of the checkout takes part (a `pytest.py` that
/// `python3 -m pytest` would import from its working directory, a `go.mod` naming a
/// toolchain). The person's own home and configuration are read as they are, never written.
#[derive(Debug, Clone)]
pub struct Probe {
    pub jail: crate::sandbox::Jail,
    /// Set on every command: a temporary directory the probe may write (`TMPDIR`; pytest
    /// captures output through temporary files even for `--version`).
    env: Vec<(OsString, OsString)>,
    /// That directory, removed with the last probe made from it.
    _tmp: Option<std::sync::Arc<tempfile::TempDir>>,
}

impl Probe {
    /// Probes under the run's sandbox, writing only a temporary directory of their own.
    pub fn new(confinement: &crate::sandbox::Confinement) -> Probe {
        let tmp = tempfile::Builder::new()
            .prefix("shipmoor-probe-")
            .tempdir()
            .ok()
            .map(std::sync::Arc::new);
        let dirs: Vec<&std::path::Path> = tmp.iter().map(|t| t.path()).collect();
        Probe {
            jail: confinement.jail(&dirs),
            env: tmp
                .iter()
                .map(|t| (OsString::from("TMPDIR"), t.path().as_os_str().to_owned()))
                .collect(),
            _tmp: tmp,
        }
    }

    /// Probes with no sandbox: for tests of the adapters.
    pub fn unconfined() -> Probe {
        Probe {
            jail: crate::sandbox::Jail::none(),
            env: Vec::new(),
            _tmp: None,
        }
    }

    /// Probes under a runner's jail and environment (its side's), from `/`.
    pub fn of(ctx: &RunCtx) -> Probe {
        Probe {
            jail: ctx.jail.clone(),
            env: ctx.env.clone(),
            _tmp: None,
        }
    }

    /// `program` to be started from `/`, with the probe's environment.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        cmd.current_dir("/");
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// Runs a probe's command in the jail.
    pub fn run(
        &self,
        cmd: std::process::Command,
        timeout: Duration,
    ) -> std::io::Result<crate::process::Captured> {
        crate::process::run(cmd, timeout, crate::process::Confine::Sandboxed(&self.jail))
    }
}

/// One command a runner started, with what it left.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// What ran, as the argv (paths inside the worktree are shown relative to it).
    pub command: Vec<String>,
    pub captured: Captured,
    /// The raw structured results file, when the runner wrote one.
    pub results: Option<Vec<u8>>,
    /// The media type of `results` (`application/xml` for JUnit, `application/json`).
    pub results_type: Option<String>,
}

/// A build failure: the runner could not compile what holds the tests.
#[derive(Debug, Clone, Default)]
pub struct BuildFailure {
    /// Files (relative to the repository root) that the compiler's error diagnostics point into.
    pub diagnostic_files: Vec<String>,
    /// A short excerpt of the first errors, for reports.
    pub excerpt: String,
    /// The errors with their positions, where the runner reports them, to decide whose failure
    /// it is (book: floor/attribution.md, [`crate::decision::attribute`]).
    pub diagnostics: Vec<Diagnostic>,
}

impl BuildFailure {
    /// One build failure out of several targets' own (cargo and nextest build each target
    /// alone after a failed build): every file the errors point into, every diagnostic once,
    /// the first excerpt.
    pub fn merge(failures: impl IntoIterator<Item = BuildFailure>) -> BuildFailure {
        let mut files = std::collections::BTreeSet::new();
        let mut merged = BuildFailure::default();
        for bf in failures {
            files.extend(bf.diagnostic_files);
            if merged.excerpt.is_empty() {
                merged.excerpt = bf.excerpt;
            }
            for d in bf.diagnostics {
                if !merged.diagnostics.contains(&d) {
                    merged.diagnostics.push(d);
                }
            }
        }
        merged.diagnostic_files = files.into_iter().collect();
        merged
    }
}

pub use crate::format::floor::{FailureKind, Outcome};

/// Which tests a listing needs to find: every test, or only those in the files a tag scan of
/// the head tree found (book: floor.md: only what is bound gets built).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListScope {
    All,
    /// Files relative to the runner's root, `/`-separated. An adapter lists and builds only
    /// the targets, packages or files that hold them; where a file maps to no target it falls
    /// back to listing everything.
    Files(Vec<String>),
}

/// What kept a runner from a step (listing, building, running, reading its results), worded as
/// the floor shows it: a listing's or a run's problem, a runtime row's result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Problem(pub String);

#[derive(Debug, Clone, Default)]
pub struct ListReport {
    pub tests: Vec<TestCase>,
    pub invocations: Vec<Invocation>,
    /// Set when the project does not build (or the runner cannot collect), so nothing is listed.
    pub build_failure: Option<BuildFailure>,
    /// Set when listing could not happen for an operational reason (timeout, runner crash).
    pub problem: Option<String>,
}

/// What one run observed of one requested test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRun {
    pub outcome: Outcome,
    /// For a failed test, the failure's first line as the runner reported it (an assertion
    /// message, a panic), for reasons a person reads.
    pub message: Option<String>,
    /// For a failed test, what kind of failure it was, where the runner can tell.
    pub failure_kind: Option<FailureKind>,
    /// For a `BuildFail` test, the files its own target's errors point into, where the runner
    /// can tell targets apart (cargo builds each test target on its own after a failure).
    pub build_files: Option<Vec<String>>,
}

impl TestRun {
    fn not_observed() -> TestRun {
        TestRun {
            outcome: Outcome::NotObserved,
            message: None,
            failure_kind: None,
            build_files: None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct RunReport {
    /// One entry per requested test id. Ids the runner never reported are `NotObserved`.
    pub tests: BTreeMap<String, TestRun>,
    pub invocations: Vec<Invocation>,
    /// Set when the tests' targets did not compile (the affected tests are `BuildFail`).
    pub build_failure: Option<BuildFailure>,
    /// Set when the run could not be observed for an operational reason (timeout, runner crash,
    /// results file missing although the runner exited); affected tests are `NotObserved`.
    pub problem: Option<String>,
}

impl RunReport {
    /// The opening of every adapter's `run`: one entry per requested id, each `NotObserved`
    /// until the runner reports it.
    pub fn not_observed(ids: &[String]) -> RunReport {
        RunReport {
            tests: ids
                .iter()
                .map(|id| (id.clone(), TestRun::not_observed()))
                .collect(),
            ..RunReport::default()
        }
    }

    /// A requested test's entry, to write what the run observed of it; `None` for an id that
    /// was not requested (nothing is kept of it).
    pub fn test_mut(&mut self, id: &str) -> Option<&mut TestRun> {
        self.tests.get_mut(id)
    }

    /// Sets a requested test's outcome.
    pub fn set(&mut self, id: &str, outcome: Outcome) {
        if let Some(t) = self.test_mut(id) {
            t.outcome = outcome;
        }
    }

    /// Every requested test's outcome.
    pub fn outcomes(&self) -> BTreeMap<String, Outcome> {
        self.tests
            .iter()
            .map(|(id, t)| (id.clone(), t.outcome))
            .collect()
    }

    /// The failure messages the run gave, by test.
    pub fn messages(&self) -> BTreeMap<String, String> {
        self.tests
            .iter()
            .filter_map(|(id, t)| Some((id.clone(), t.message.clone()?)))
            .collect()
    }

    /// The failure kinds the run told, by test.
    pub fn failure_kinds(&self) -> BTreeMap<String, FailureKind> {
        self.tests
            .iter()
            .filter_map(|(id, t)| Some((id.clone(), t.failure_kind?)))
            .collect()
    }
}

/// A test runner adapter.
pub trait Runner: Send + Sync {
    fn config(&self) -> &RunnerConfig;

    fn kind(&self) -> RunnerKind {
        self.config().kind
    }

    /// Checks that the runner's tools are installed; the error says what to install.
    fn check_tool(&self, probe: &Probe) -> Result<(), InputError>;

    /// The tool that ran the tests, named for the report where more than one could have
    /// (`pytest 8.3.3, Python 3.11.2 at /usr/bin/python3`): which interpreter ran them is the
    /// first question when a test passes in one environment and not another.
    fn tool(&self, _probe: &Probe) -> Option<String> {
        None
    }

    /// Whether what the runner needs from the checkout is there (`checkout`: the repository's
    /// working directory), for runners whose tool the worktrees take from it.
    fn check_checkout(&self, _checkout: &std::path::Path) -> Result<(), InputError> {
        Ok(())
    }

    /// Whether the runner's `setup:`, which succeeded, installed what the runner starts (in
    /// `ctx`), for runners whose tool the setup installs.
    fn check_setup(&self, _ctx: &RunCtx) -> Result<(), InputError> {
        Ok(())
    }

    /// Whether a path (relative to the runner's root, `/`-separated) is part of the test suite:
    /// the files laid over the base worktree.
    fn is_test_file(&self, rel_path: &str) -> bool;

    /// Lists the test ids of the project in `ctx.dir` (building what it needs), every one or
    /// only those the scope names.
    fn list(&self, ctx: &RunCtx, scope: &ListScope) -> ListReport;

    /// Runs exactly the given test ids once, retries off, and reads their outcomes.
    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport;

    /// What the runner knows of its test files' items (their names, their item maps, the
    /// splice of test items into base), for attributing build failures and for the overlay.
    fn items(&self) -> &dyn TestItems {
        &NoItems
    }

    /// The runners a harness file of this family governs ([`Family`]).
    fn family(&self) -> Family;

    /// A command a person can paste to run one test the way the floor did; by default the
    /// runner's name and the id, from the runner's root.
    fn reproduce(&self, id: &str) -> String {
        format!("{}{} {id}", cd_prefix(self.config()), self.kind().as_str())
    }

    /// The commands whose answers key the base cache with this runner's toolchain (`rustc -vV`),
    /// run in head's worktree.
    fn version_probes(&self) -> &'static [&'static [&'static str]] {
        &[]
    }

    /// Whether the runner builds with cargo: it gets `CARGO_TARGET_DIR` and a seeded target
    /// dir.
    fn cargo_target(&self) -> bool {
        false
    }

    /// The build cache a side's commands write, seeded from the person's once per side
    /// (Go's `GOCACHE`).
    fn build_cache(&self) -> Option<BuildCache> {
        None
    }

    /// Directories put first on the `PATH` of the runner's commands in `dir` (inside
    /// `worktree`): the project's own tools, where its ecosystem puts them first.
    fn path_dirs(&self, _dir: &std::path::Path, _worktree: &std::path::Path) -> Vec<PathBuf> {
        Vec::new()
    }

    /// The command that fetches the project's dependencies at `dir` into the person's store,
    /// before any of the change's code runs at a side; `None`: nothing to fetch.
    #[cfg(feature = "claim-check")]
    fn fetch(&self, _dir: &std::path::Path, _probe: &Probe, _timeout: Duration) -> Option<Fetch> {
        None
    }

    /// What a side without a `setup` takes from the checkout (`dir` the runner's root in the
    /// worktree, `checkout` the same in the repository's working directory); `None`: nothing.
    fn without_setup(
        &self,
        _dir: &std::path::Path,
        _checkout: &std::path::Path,
    ) -> Option<Prepared> {
        None
    }

    /// The script the runner's command runs, relative to its root, which the harness guard
    /// watches.
    fn harness_script(&self) -> Option<String> {
        None
    }

    /// What the runner's test run streams that tells which tests finished, in `ctx`.
    #[cfg(feature = "claim-check")]
    fn progress(&self, _ctx: &RunCtx) -> crate::floor::progress::FinishedLines {
        crate::floor::progress::FinishedLines::default()
    }
}

/// What a runner knows of the items in its test files.
pub trait TestItems {
    /// The test item a test id names inside its file, as this runner's [`ItemMap`] names it
    /// (see [`crate::decision::attribute::TestItem::name`]); `None` where the runner cannot tell.
    fn test_item(&self, _id: &str) -> Option<String> {
        None
    }

    /// Parses one test file (relative to the runner's root, as it is in `ctx.worktree`) into
    /// its test items and imports with a real parser of the language, so that a build failure
    /// can be attributed (book: floor/attribution.md). `None` where this runner has no parser or the file does
    /// not parse.
    fn item_map(&self, _ctx: &RunCtx, _rel_path: &str) -> Option<ItemMap> {
        None
    }

    /// Of the changed files (relative to the runner's root), those that are test code as a
    /// whole at head although [`Runner::is_test_file`]'s path rule does not say so: a Rust module
    /// file reached only through `#[cfg(test)]` (`#[cfg(test)] mod tests;` and `src/x/tests.rs`),
    /// which is laid over base whole, as a test file is. `ctx` is the head worktree.
    fn test_files_among(&self, _ctx: &RunCtx, _changed: &[String]) -> Vec<String> {
        Vec::new()
    }

    /// Whether a file that is not a test file (relative to the runner's root) is a source file
    /// that can hold tests beside the code (Rust's `#[cfg(test)]` modules): such a file is never
    /// laid over base whole, only its test items are ([`TestItems::splice_test_items`]).
    fn may_splice(&self, _rel_path: &str) -> bool {
        false
    }

    /// For a changed file [`TestItems::may_splice`] accepts, `base` with head's test items spliced
    /// in, so that only the tests are laid over base (book: floor/base-overlay.md); `rel_path` is relative to the
    /// runner's root. `None` where neither side holds test items; an error says which side does
    /// not parse.
    fn splice_test_items(
        &self,
        _rel_path: &str,
        _base: &str,
        _head: &str,
    ) -> Option<Result<String, SpliceError>> {
        None
    }
}

/// Where a source file does not parse, as its language's parser says (1-based line and
/// column).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}:{column}: {message}")]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Why head's test items could not be spliced into base: which side's version does not parse,
/// and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpliceError {
    #[error("head's version does not parse: {0}")]
    Head(ParseError),
    #[error("base's version does not parse: {0}")]
    Base(ParseError),
}

/// A runner that knows nothing of its test files' items.
pub struct NoItems;

impl TestItems for NoItems {}

/// A build cache a side's commands write, seeded from the person's: the copy is named `name`
/// in the runtime rows (`what` in their wording), taken from the variable `env` or else
/// `person_dir` under the person's cache directory, into `home` under the side's home.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildCache {
    pub name: &'static str,
    pub what: &'static str,
    pub env: &'static str,
    pub person_dir: &'static str,
    pub home: &'static str,
}

/// A dependency fetch (`cargo fetch`, `go mod download`): the command (with no working
/// directory: it then runs in a scratch directory), the store it writes, what the runtime row
/// calls it, and environment set on it beyond the side's.
#[cfg(feature = "claim-check")]
pub struct Fetch {
    pub cmd: std::process::Command,
    pub store: Vec<PathBuf>,
    pub what: &'static str,
    pub env: Vec<(OsString, OsString)>,
}

/// What a side without `setup` took from the checkout: the runtime row's command and result,
/// and a path of the checkout the side's commands now read (`reused`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub command: &'static str,
    pub result: String,
    pub reused: Option<PathBuf>,
}

/// `cd <root> && ` for a runner whose root is not the repository's, else nothing: the start of
/// a command a person can paste.
pub fn cd_prefix(config: &RunnerConfig) -> String {
    if config.root == "." {
        String::new()
    } else {
        format!("cd {} && ", config.root)
    }
}

/// The first meaningful line of a failure message, bounded.
pub fn first_message_line(message: Option<&str>, text: Option<&str>) -> Option<String> {
    let pick = |s: &str| {
        s.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.chars().take(200).collect::<String>())
    };
    message.and_then(pick).or_else(|| text.and_then(pick))
}
