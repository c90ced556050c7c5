//! pytest adapter.
//!
//! Test ids are pytest node ids relative to the runner's root, which is also pytest's rootdir
//! (`tests/test_refund.py::TestA::test_b[1]`). pytest is started as `python3 -m pytest` (or
//! `python -m pytest`) when that works, else as `pytest`: run as a module, pytest also puts its
//! working directory (the runner's root) on `sys.path`, so a test under `tests/` can import the
//! project's packages the way `python -m pytest` users expect; the bare `pytest` script does not
//! (the project's modules then fail to import). Always with `-p no:cacheprovider` and
//! `PYTHONDONTWRITEBYTECODE=1` so nothing is written into the worktree, and `--rootdir=<dir>` so
//! the ids do not depend on where an ini file happens to be.
//!
//! The adapter's parts:
//! - `tool`: which pytest, under which Python, and the arguments every pytest command takes;
//! - `list`: collecting node ids (`--collect-only`);
//! - `run`: running the requested ids in one pytest process, through the selection plugin;
//! - `report`: reading that run's JUnit file and collection failures into outcomes;
//! - `diagnostics`: what could not be collected, where the traceback says it was raised, and
//!   which files of the worktree it points into;
//! - `items`: a test file's items and imports, for attribution (book: floor/attribution.md).

mod diagnostics;
pub mod harness;
mod items;
mod list;
pub mod progress;
mod report;
mod run;
mod tool;

use std::sync::{Arc, OnceLock};

use super::kit::worktree_relative;
use super::registered::{Detect, Registered};
use super::{
    cd_prefix, ItemMap, ListReport, ListScope, Probe, RunCtx, RunReport, Runner, TestItems,
};
use crate::acceptance::{RunnerConfig, RunnerKind};
use crate::error::InputError;
use crate::floor::harness::Family;
use crate::floor::progress::FinishedLines;
use tool::{describe, find_pytest, PytestCommand};

use run::progress_path;

/// `pytest`: a runner at the repository's root when head has a Python project's marker file
/// or a Python test file.
pub const REGISTERED: Registered = Registered {
    kind: RunnerKind::Pytest,
    detect: Detect::Root(detected),
    make: |config| Arc::new(Pytest::new(config)),
    harness: harness::harness,
    written: harness::written,
};

/// Whether head's files hold a Python project's marker or a Python test file.
fn detected(files: &[String]) -> bool {
    let has = |name: &str| files.iter().any(|f| f == name);
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
    python_marker || python_tests
}

pub struct Pytest {
    config: RunnerConfig,
    command: OnceLock<Option<PytestCommand>>,
    tool: OnceLock<Option<String>>,
}

impl Pytest {
    pub fn new(config: RunnerConfig) -> Self {
        Pytest {
            config,
            command: OnceLock::new(),
            tool: OnceLock::new(),
        }
    }
}

impl Runner for Pytest {
    fn config(&self) -> &RunnerConfig {
        &self.config
    }

    fn check_tool(&self, probe: &Probe) -> Result<(), InputError> {
        match self.command.get_or_init(|| find_pytest(probe)) {
            Some(_) => Ok(()),
            None => Err(InputError::new("pytest not found").help("pip install pytest")),
        }
    }

    fn tool(&self, probe: &Probe) -> Option<String> {
        self.tool
            .get_or_init(|| {
                self.command
                    .get_or_init(|| find_pytest(probe))
                    .as_ref()
                    .and_then(|c| describe(c, probe))
            })
            .clone()
    }

    /// `test_*.py`, `*_test.py`, `conftest.py`, or any file under a directory named `tests` or
    /// `test` (helpers and fixture data included).
    fn is_test_file(&self, rel_path: &str) -> bool {
        is_pytest_test_file(rel_path)
    }

    fn list(&self, ctx: &RunCtx, scope: &ListScope) -> ListReport {
        self.list_tests(ctx, scope)
    }

    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
        self.run_tests(ctx, ids)
    }

    fn items(&self) -> &dyn TestItems {
        self
    }

    fn family(&self) -> Family {
        Family::Python
    }

    fn reproduce(&self, id: &str) -> String {
        format!("{}pytest {id}", cd_prefix(&self.config))
    }

    fn progress(&self, ctx: &RunCtx) -> FinishedLines {
        progress::source(ctx)
    }
}

impl TestItems for Pytest {
    /// The node id's path after the file, without parameters: `TestA::test_b` of
    /// `tests/test_x.py::TestA::test_b[1]`, as `py/items.py` names items.
    fn test_item(&self, id: &str) -> Option<String> {
        let path = id.split_once('[').map_or(id, |(p, _)| p);
        let (_, item) = path.split_once("::")?;
        (!item.is_empty()).then(|| item.to_string())
    }

    fn item_map(&self, ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
        items::item_map(self.pytest_command(&Probe::of(ctx)), ctx, rel_path)
    }
}

/// Whether a `/`-separated path relative to the runner's root belongs to the test suite.
pub(super) fn is_pytest_test_file(rel_path: &str) -> bool {
    let parts: Vec<&str> = rel_path.split('/').filter(|p| !p.is_empty()).collect();
    let Some((base, dirs)) = parts.split_last() else {
        return false;
    };
    if dirs.iter().any(|d| *d == "tests" || *d == "test") {
        return true;
    }
    *base == "conftest.py"
        || (base.starts_with("test_") && base.ends_with(".py"))
        || base.ends_with("_test.py")
}

/// The file part of a node id (`tests/test_a.py` of `tests/test_a.py::TestA::test_b[1]`).
fn node_file(id: &str) -> Option<&str> {
    let file = id.split("::").next()?;
    (!file.is_empty()).then_some(file)
}

/// The repo-relative file of a node id.
fn file_of(ctx: &RunCtx, id: &str) -> Option<String> {
    let file = node_file(id)?;
    worktree_relative(ctx, &ctx.dir.join(file))
}

#[cfg(test)]
mod tests;
