//! `go test` adapter.
//!
//! Test ids are `<import path> <TestName>` for a top-level test and `<import path>
//! <TestName>/<sub>[/<subsub>…]` for a subtest, the subtest part spelled as go spells it (spaces
//! become `_`, a repeated name gets `#01`). `TestCase::file` is the repo-relative `_test.go` file
//! that declares the top-level test. The runner's root is a module (or a directory inside one);
//! `./...` from it never crosses into a nested module, so a repository with several modules needs
//! one runner per module. Only `Test*` functions are tests: examples, benchmarks and fuzz targets
//! are neither listed nor run.
//!
//! Every command runs in `ctx.dir` with `ctx.env`, plus `GOTOOLCHAIN=local` when neither
//! `ctx.env` nor our own environment sets `GOTOOLCHAIN` (never download a toolchain). Nothing is
//! written into the worktree: go keeps its build cache outside it (`GOCACHE`, which the caller may
//! set in `ctx.env`). Dependencies must be in the module cache or downloadable as the user's
//! environment allows; the caller can forbid downloads with `GOPROXY=off` or `GOFLAGS=-mod=vendor`
//! in `ctx.env`. Needs Go 1.19 or later (`go list -json=<fields>`).
//!
//! The adapter's parts, as a run goes: [`packages`] asks `go list` where each package is and what
//! its test files declare; [`list`] lists the tests and the subtests a run of their parents
//! reports; [`run`] runs exactly the requested ids; [`test2json`] reads `go test -json`'s events
//! into outcomes, messages and failure kinds; [`diagnostics`] reads the compiler's and vet's
//! errors into a build failure; [`goparse`] parses a test file with go's own parser.
//!
//! # Attribution (book: floor/attribution.md)
//! [`TestItems::test_item`] is the id's top-level test (`TestA` for `TestA/x`), and
//! [`TestItems::item_map`] parses a test file with go's own parser (see [`goparse`]). A build
//! failure carries `diagnostics`: each error line with a position (`./x_test.go:12:5:
//! undefined: Foo`, `pkg/x_test.go:6:2: no required module provides package …` for an import
//! that does not resolve, and the `Pos` of a load error), printed by go relative to `ctx.dir`
//! where it runs (where no such file exists there, relative to the directory of the package in
//! whose `# <pkg>` block it stands), made relative to the repository root; positions outside
//! the worktree (GOROOT, the module cache) are left out. A failed import's position is the
//! import's, so it counts for exactly the tests that use the name it binds.
//!
//! Invocations carry no separate results file: the event stream is their stdout.
//!
//! The runner's `args` are appended to `go test` before the packages (`-tags`, `-short`,
//! `-race`, `-vet=off`, …); `-tags`, `-mod` and `-modfile` among them are also given to
//! `go list`. Arguments that change what runs (`-run`, `-list`, `-json`) are not supported.

mod diagnostics;
mod goparse;
pub mod harness;
mod list;
mod packages;
pub mod progress;
mod run;
mod test2json;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use super::kit::{exec, exit_problem, Ran};
use super::registered::{Detect, Registered};
use super::{
    BuildCache, Fetch, ItemMap, ListReport, ListScope, Probe, RunCtx, RunReport, Runner, TestItems,
};
use crate::acceptance::{RunnerConfig, RunnerKind};
use crate::error::InputError;
use crate::floor::harness::Family;
use crate::floor::progress::FinishedLines;

/// Where a side's Go build cache is in its private home: every command's `GOCACHE` points
/// there, and the runner seeds it from the person's.
pub const GOCACHE_HOME: &str = ".cache/go-build";

/// `go`: a runner rooted at each `go.mod` of head.
pub const REGISTERED: Registered = Registered {
    kind: RunnerKind::Go,
    detect: Detect::EachFile(|name, _| Ok(name == "go.mod")),
    make: |config| Arc::new(GoTest::new(config)),
    harness: harness::harness,
    written: harness::written,
};

const INSTALL_HELP: &str =
    "install Go: `apt-get install golang-go`, or download it from https://go.dev/dl/";

pub struct GoTest {
    config: RunnerConfig,
}

impl GoTest {
    pub fn new(config: RunnerConfig) -> Self {
        GoTest { config }
    }
}

impl Runner for GoTest {
    fn config(&self) -> &RunnerConfig {
        &self.config
    }

    fn check_tool(&self, probe: &Probe) -> Result<(), InputError> {
        let mut cmd = probe.command("go");
        cmd.arg("version");
        for (k, v) in go_env(&[]) {
            cmd.env(k, v);
        }
        match probe.run(cmd, Duration::from_secs(60)) {
            Ok(c) if c.success() && c.stdout_lossy().starts_with("go version") => Ok(()),
            Ok(c) => Err(InputError::new(format!(
                "`go version` did not work: {}",
                exit_problem("go version", &c)
            ))
            .help(INSTALL_HELP)),
            Err(e) => {
                Err(InputError::new(format!("`go` could not be started: {e}")).help(INSTALL_HELP))
            }
        }
    }

    /// `*_test.go` files, and anything under a `testdata` directory (go's fixtures).
    fn is_test_file(&self, rel_path: &str) -> bool {
        is_go_test_file(rel_path)
    }

    fn list(&self, ctx: &RunCtx, scope: &ListScope) -> ListReport {
        list::list_tests(ctx, &self.config.args, scope)
    }

    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
        run::run_tests(ctx, &self.config.args, ids)
    }

    fn items(&self) -> &dyn TestItems {
        self
    }

    fn family(&self) -> Family {
        Family::Go
    }

    fn version_probes(&self) -> &'static [&'static [&'static str]] {
        &[&["go", "version"]]
    }

    /// Go's build cache: every entry is named by the digest of its inputs, so a copy of the
    /// person's holds nothing stale. Seeded where every command's `GOCACHE` points.
    fn build_cache(&self) -> Option<BuildCache> {
        Some(BuildCache {
            name: "go",
            what: "GOCACHE",
            env: "GOCACHE",
            person_dir: "go-build",
            home: GOCACHE_HOME,
        })
    }

    /// `go mod download`: it runs no code and checks every module against `go.sum` and the
    /// checksum database.
    fn fetch(&self, dir: &Path, _probe: &Probe, _timeout: Duration) -> Option<Fetch> {
        let store = module_cache()?;
        if !dir.join("go.mod").is_file() {
            return None;
        }
        let mut cmd = Command::new("go");
        cmd.args(["mod", "download"]).current_dir(dir);
        Some(Fetch {
            cmd,
            store: vec![store],
            what: "go mod download",
            env: toolchain_env(),
        })
    }

    fn progress(&self, _ctx: &RunCtx) -> FinishedLines {
        progress::source()
    }
}

impl TestItems for GoTest {
    /// The top-level test function: `TestParent` for `TestParent/sub`.
    fn test_item(&self, id: &str) -> Option<String> {
        parse_id(id).and_then(|(_, levels)| levels.first().map(|top| top.to_string()))
    }

    /// The file's `Test*` functions and imports, from go's own `go/parser` (see [`goparse`]).
    fn item_map(&self, ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
        goparse::item_map(ctx, &ctx.dir.join(rel_path))
    }
}

/// `go <args>` in `ctx.dir`, with [`go_env`] over `ctx.env`.
fn go(ctx: &RunCtx, args: &[OsString]) -> Ran {
    exec(ctx, OsStr::new("go"), args, &ctx.dir, &go_env(&ctx.env))
}

/// `GOTOOLCHAIN=local` unless the caller or our environment chose a toolchain.
/// What every go command of the floor is given beyond the side's environment (Go's own
/// toolchain, never one a `go.mod` names), for commands started outside the adapter.
pub fn toolchain_env() -> Vec<(OsString, OsString)> {
    go_env(&[])
}

/// Go's module cache as the floor's commands find it: `GOMODCACHE`, else `pkg/mod` under
/// `GOPATH` or `~/go`; `None` when neither is set and `~/go` does not exist (then each side's
/// private home holds one of its own, writable).
fn module_cache() -> Option<PathBuf> {
    if let Some(m) = std::env::var_os("GOMODCACHE") {
        return Some(PathBuf::from(m));
    }
    let gopath = std::env::var_os("GOPATH")
        .and_then(|p| std::env::split_paths(&p).next())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join("go"))
                .filter(|p| p.is_dir())
        })?;
    Some(gopath.join("pkg/mod"))
}

fn go_env(env: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
    let chosen =
        env.iter().any(|(k, _)| k == "GOTOOLCHAIN") || std::env::var_os("GOTOOLCHAIN").is_some();
    if chosen {
        Vec::new()
    } else {
        vec![(OsString::from("GOTOOLCHAIN"), OsString::from("local"))]
    }
}

// ---------------------------------------------------------------------------------------------
// Ids, names
// ---------------------------------------------------------------------------------------------

/// Whether a `/`-separated path relative to the runner's root belongs to the test suite.
fn is_go_test_file(rel_path: &str) -> bool {
    let parts: Vec<&str> = rel_path.split('/').filter(|p| !p.is_empty()).collect();
    let Some((base, dirs)) = parts.split_last() else {
        return false;
    };
    base.ends_with("_test.go") || dirs.contains(&"testdata")
}

/// `(import path, name levels)` of an id: `example.com/m/pkg TestA/sub` →
/// `("example.com/m/pkg", ["TestA", "sub"])`. `None` for anything that is not a plain import
/// path and a `Test*` name (a pattern such as `./...` or `all` would make go run other packages).
fn parse_id(id: &str) -> Option<(&str, Vec<&str>)> {
    let (pkg, name) = id.split_once(' ')?;
    if pkg.is_empty()
        || pkg.starts_with('-')
        || pkg.contains("...")
        || matches!(pkg, "all" | "std" | "cmd" | "tool")
        || pkg.contains(char::is_whitespace)
    {
        return None;
    }
    let levels: Vec<&str> = name.split('/').collect();
    let valid = levels
        .iter()
        .all(|l| !l.is_empty() && !l.contains(|c: char| c.is_whitespace() || c.is_control()));
    if !valid || !levels.first().is_some_and(|top| is_test_name(top)) {
        return None;
    }
    Some((pkg, levels))
}

/// go's rule for a test function: `Test`, then nothing or a character that is not a lower-case
/// letter; an identifier.
fn is_test_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("Test") else {
        return false;
    };
    if rest.chars().next().is_some_and(char::is_lowercase) {
        return false;
    }
    name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests;
