//! The `cargo test` adapter. Test ids as [`super`] says; doctests are not listed or run.
//!
//! # list
//! In: the project in `ctx.dir`. Out: every test of every test binary cargo builds.
//! 1. `cargo test --no-run --message-format=json <cargo args>` (cwd `ctx.dir`): builds the test
//!    binaries; `compiler-artifact` messages with `profile.test` and an `executable` give each
//!    binary's package, kind, name, `src_path` and path; `compiler-message` errors give the
//!    build failure (files the errors point into, made repo-relative through the workspace root
//!    that `cargo locate-project --workspace` reports).
//! 2. for each binary: `<exe> <test args> --list --format terse` in the package's directory with
//!    the environment `cargo test` gives it (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*` from `cargo
//!    metadata --no-deps`, and the dynamic library path with the toolchain's `lib`, without
//!    which a proc-macro crate's unit test binary cannot start); lines `name: test` are tests,
//!    `name: benchmark` lines are skipped.
//!
//! # run
//! In: test ids. Out: one outcome per id.
//! 1. build only the targets that hold the ids: `cargo test --no-run -p <spec> <targets>` per
//!    package, `<spec>` the package id spec `cargo metadata --no-deps` gives
//!    (`path+file:///…#name@version`), never the bare name, which is ambiguous once the lock
//!    file holds a registry package of that name too; a failed build makes its ids `BuildFail`
//!    (or, when cargo failed before compiling anything, `NotObserved` with a problem);
//! 2. for each binary holding requested ids: `<exe> <test args> --exact --test-threads=1 --
//!    <names>` in the package's directory, and read libtest's pretty output: `test NAME ... ok`,
//!    `FAILED`, `ignored`, then `test result: ...`.
//!
//! libtest's output is read and believed as [`super::libtest`] says; a binary whose output is
//! not believed leaves its ids `NotObserved` with a problem.
//!
//! `<cargo args>` / `<test args>` are the runner config's `args` before / after a `--`.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::sync::Arc;

use super::binary::{toolchain_lib_dirs, TestBinary};
use super::build::{build_selected, build_tests, Build, CargoMessages};
use super::cargo_meta::exec;
use super::cargo_targets::{self, workspace_members};
use super::libtest::{judge_libtest, panic_kind, panic_messages, parse_libtest, parse_terse_list};
use super::{check_cargo, split_args};
use crate::acceptance::{RunnerConfig, RunnerKind};
use crate::error::InputError;
use crate::floor::progress::FinishedLines;
use crate::floor::runners::kit::{exit_problem, join_problems, worktree_relative};
use crate::floor::runners::registered::{Detect, Registered};
use crate::floor::runners::{
    cd_prefix, BuildFailure, ListReport, ListScope, Outcome, Probe, RunCtx, RunReport, Runner,
    TestCase,
};

/// `cargo`: a runner at the repository's root when head has a `Cargo.toml` there.
pub const REGISTERED: Registered = Registered {
    kind: RunnerKind::Cargo,
    detect: Detect::Root(|files| files.iter().any(|f| f == "Cargo.toml")),
    make: |config| Arc::new(CargoTest::new(config)),
    harness: super::harness::harness,
    written: super::harness::written,
};

pub struct CargoTest {
    config: RunnerConfig,
}

impl CargoTest {
    pub fn new(config: RunnerConfig) -> Self {
        CargoTest { config }
    }
}

impl Runner for CargoTest {
    rust_family!();

    fn config(&self) -> &RunnerConfig {
        &self.config
    }

    fn check_tool(&self, _probe: &Probe) -> Result<(), InputError> {
        check_cargo()
    }

    fn reproduce(&self, id: &str) -> String {
        super::reproduce(&cd_prefix(&self.config), id, false)
    }

    fn version_probes(&self) -> &'static [&'static [&'static str]] {
        super::VERSION_PROBES
    }

    fn progress(&self, _ctx: &RunCtx) -> FinishedLines {
        super::progress::libtest_source()
    }

    fn list(&self, ctx: &RunCtx, scope: &ListScope) -> ListReport {
        let mut report = ListReport::default();
        let (cargo_args, test_args) = split_args(&self.config.args);
        let build = match scoped_build(ctx, scope, &cargo_args, &mut report) {
            Some(Ok(binaries)) => Build::Built(CargoMessages {
                binaries,
                ..CargoMessages::default()
            }),
            Some(Err(())) => return report,
            None => build_tests(ctx, &cargo_args, &mut report.invocations),
        };
        let build = match build {
            Build::Built(msgs) => msgs,
            Build::Failed(bf) => {
                report.build_failure = Some(bf);
                return report;
            }
            Build::Problem(p) => {
                report.problem = Some(p);
                return report;
            }
        };
        let mut problems = Vec::new();
        // Without the manifest fields the binaries still list; only `CARGO_PKG_*` beyond the
        // name and version would be missing, so a failure here is not a reason to stop.
        let members = workspace_members(ctx).unwrap_or_default();
        let lib_dirs = toolchain_lib_dirs(ctx);
        let mut tests = BTreeSet::new();
        for bin in &build.binaries {
            let mut args: Vec<OsString> = test_args.iter().map(OsString::from).collect();
            args.extend(["--list", "--format", "terse"].map(OsString::from));
            let ran = exec(
                ctx,
                bin.executable.as_os_str(),
                &args,
                &bin.package_dir(),
                &bin.runtime_env(ctx, members.get(&bin.package_name), &lib_dirs),
            );
            let what = format!("listing {}", bin.binary_id);
            if let Some(p) = ran.operational_problem(&what) {
                problems.push(p);
            } else if !ran.captured().success() {
                problems.push(exit_problem(&what, ran.captured()));
            } else {
                let file = worktree_relative(ctx, &bin.src_path);
                for name in parse_terse_list(&ran.captured().stdout_lossy()) {
                    tests.insert(TestCase {
                        id: format!("{} {}", bin.binary_id, name),
                        file: file.clone(),
                    });
                }
            }
            report.invocations.push(ran.invocation);
        }
        report.tests = tests.into_iter().collect();
        report.problem = join_problems(problems);
        report
    }

    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
        let mut report = RunReport::not_observed(ids);
        if ids.is_empty() {
            return report;
        }
        let (cargo_args, test_args) = split_args(&self.config.args);
        let members = match workspace_members(ctx) {
            Ok(m) => m,
            Err(p) => {
                report.problem = Some(p.to_string());
                return report;
            }
        };
        let lib_dirs = toolchain_lib_dirs(ctx);
        // Build only the targets that hold the requested tests: another test target that does
        // not compile at base must not make these tests read as build failures.
        let build = match build_selected(ctx, &cargo_args, &members, ids, &mut report.invocations) {
            Ok(b) => b,
            Err(p) => {
                report.problem = Some(p.0);
                return report;
            }
        };
        if !build.failed.is_empty() {
            let mut failed = Vec::new();
            for id in ids {
                let Some((binary_id, _)) = id.split_once(' ') else {
                    continue;
                };
                if let Some(bf) = build.failed.get(binary_id) {
                    if let Some(t) = report.test_mut(id) {
                        t.outcome = Outcome::BuildFail;
                        t.build_files = Some(bf.diagnostic_files.clone());
                    }
                    failed.push(bf.clone());
                }
            }
            report.build_failure = Some(BuildFailure::merge(failed));
        }
        // Requested names per binary; ids of binaries that no longer exist stay NotObserved.
        let mut wanted: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for id in ids {
            if let Some((binary_id, name)) = id.split_once(' ') {
                wanted.entry(binary_id).or_default().push(name);
            }
        }
        let mut problems = Vec::new();
        for bin in &build.binaries {
            let Some(names) = wanted.get(bin.binary_id.as_str()) else {
                continue;
            };
            let mut args: Vec<OsString> = test_args.iter().map(OsString::from).collect();
            args.extend(["--exact", "--test-threads=1", "--"].map(OsString::from));
            args.extend(names.iter().map(OsString::from));
            let ran = exec(
                ctx,
                bin.executable.as_os_str(),
                &args,
                &bin.package_dir(),
                &bin.runtime_env(ctx, members.get(&bin.package_name), &lib_dirs),
            );
            let what = format!("running {}", bin.binary_id);
            if let Some(p) = ran.operational_problem(&what) {
                problems.push(p);
            } else {
                let stdout = ran.captured().stdout_lossy();
                let parsed = parse_libtest(&stdout);
                for (name, m) in panic_messages(&stdout) {
                    let id = format!("{} {}", bin.binary_id, name);
                    if let Some(t) = report.test_mut(&id) {
                        t.failure_kind = Some(panic_kind(&m));
                        t.message = Some(m);
                    }
                }
                match judge_libtest(&parsed, ran.captured().exit_code, names) {
                    Ok(outcomes) => {
                        for (name, outcome) in outcomes {
                            report.set(&format!("{} {}", bin.binary_id, name), outcome);
                        }
                    }
                    Err(why) => problems.push(format!("{what}: {why}")),
                }
            }
            report.invocations.push(ran.invocation);
        }
        report.problem = join_problems(problems);
        report
    }
}

/// Builds only the test targets that hold a scoped listing's files, since only what is bound
/// gets built (book: floor.md; see [`cargo_targets`]): each package's targets together and,
/// where that fails, each target alone, so that a target that does not compile leaves the
/// others listed. `None` where the listing is not narrowed: an unscoped listing, the user's own
/// target selection in `args`, metadata that cannot be read, a file that maps to no target.
fn scoped_build(
    ctx: &RunCtx,
    scope: &ListScope,
    cargo_args: &[String],
    report: &mut ListReport,
) -> Option<Result<Vec<TestBinary>, ()>> {
    let ListScope::Files(files) = scope else {
        return None;
    };
    if cargo_targets::user_selects_targets(cargo_args) {
        return None;
    }
    let (packages, members) = cargo_targets::workspace(ctx, &mut report.invocations).ok()?;
    let targets = cargo_targets::select_in(ctx, &packages, files)?;
    if targets.is_empty() {
        return Some(Ok(Vec::new()));
    }
    // `build_selected` reads only the binary id of each test id.
    let ids: Vec<String> = targets
        .iter()
        .map(|t| format!("{} *", t.binary_id))
        .collect();
    match build_selected(ctx, cargo_args, &members, &ids, &mut report.invocations) {
        Ok(build) => {
            if !build.failed.is_empty() {
                report.build_failure = Some(BuildFailure::merge(build.failed.values().cloned()));
            }
            Some(Ok(build.binaries))
        }
        Err(p) => {
            report.problem = Some(p.0);
            Some(Err(()))
        }
    }
}
