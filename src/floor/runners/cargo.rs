//! `cargo test` adapter, plus the helpers the cargo-based and other adapters share (starting
//! commands, showing their argv, reading cargo's JSON messages and compiler errors).
//!
//! Test ids are `<binary-id> <test name>`, the binary id spelled as nextest spells it: the package
//! name for the library's (or proc-macro's) unit tests, `<package>::<name>` for `tests/<name>.rs`,
//! `<package>::<kind>/<name>` for bins, examples and benches (`fx-crate::bin/tool`). Doctests are
//! not listed or run.
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
//! libtest's output is believed only when it is consistent: a summary line is present, the counts
//! of `ok`, `FAILED` and `ignored` lines equal the summary's, and the exit code agrees (0 with no
//! failures, 101 with some). Anything else (a crash, a test that called `exit`, stray output on
//! the result lines) makes that binary's ids `NotObserved` with a problem: a wrong pass is worse
//! than a missing one. Result lines are read only between `running N tests` and the `failures:`
//! section, because the failures section replays the tests' captured output, which can contain
//! anything.
//!
//! `<cargo args>` / `<test args>` are the runner config's `args` before / after a `--`.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde_json::Value;

pub(crate) use super::cargo_meta::cargo_error;
pub(super) use super::cargo_meta::{binary_id, exec, nextest_kind, WorkspacePackage};
use super::cargo_targets;
use super::contract::LIBTEST;
pub(super) use super::kit::parse_package_id;
use super::kit::{code_str, exit_problem, join_problems, truncate, worktree_relative};
use super::*;
use crate::process;

pub struct CargoTest {
    config: RunnerConfig,
}

impl CargoTest {
    pub fn new(config: RunnerConfig) -> Self {
        CargoTest { config }
    }
}

impl Runner for CargoTest {
    fn config(&self) -> &RunnerConfig {
        &self.config
    }

    fn check_tool(&self) -> Result<(), InputError> {
        check_cargo()
    }

    /// Any file under a directory named `tests` (integration tests, their modules and fixtures),
    /// at the crate root or anywhere below it (a workspace member's `tests/`, `src/tests/` unit
    /// test modules). Nothing else: unit tests live inside source files, which are the change.
    fn is_test_file(&self, rel_path: &str) -> bool {
        under_tests_dir(rel_path)
    }

    fn test_item(&self, id: &str) -> Option<String> {
        super::rust_items::test_item(id)
    }

    fn item_map(&self, ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
        rust_item_map(ctx, rel_path)
    }

    fn test_files_among(&self, ctx: &RunCtx, changed: &[String]) -> Vec<String> {
        test_module_files(ctx, changed)
    }

    fn may_splice(&self, rel_path: &str) -> bool {
        rel_path.ends_with(".rs")
    }

    fn splice_test_items(
        &self,
        rel_path: &str,
        base: &str,
        head: &str,
    ) -> Option<Result<String, String>> {
        super::rust_items::splice_source(rel_path, base, head)
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
        let members = workspace_packages(ctx).unwrap_or_default();
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
        let members = match workspace_packages(ctx) {
            Ok(m) => m,
            Err(p) => {
                report.problem = Some(p);
                return report;
            }
        };
        let lib_dirs = toolchain_lib_dirs(ctx);
        // Build only the targets that hold the requested tests: another test target that does
        // not compile at base must not make these tests read as build failures.
        let build = match build_selected(ctx, &cargo_args, &members, ids, &mut report.invocations) {
            Ok(b) => b,
            Err(p) => {
                report.problem = Some(p);
                return report;
            }
        };
        if !build.failed.is_empty() {
            let mut files = BTreeSet::new();
            let mut diagnostics: Vec<Diagnostic> = Vec::new();
            let mut excerpt = String::new();
            for id in ids {
                let Some((binary_id, _)) = id.split_once(' ') else {
                    continue;
                };
                if let Some(bf) = build.failed.get(binary_id) {
                    report.outcomes.insert(id.clone(), Outcome::BuildFail);
                    report
                        .build_files
                        .insert(id.clone(), bf.diagnostic_files.clone());
                    files.extend(bf.diagnostic_files.iter().cloned());
                    for d in &bf.diagnostics {
                        if !diagnostics.contains(d) {
                            diagnostics.push(d.clone());
                        }
                    }
                    if excerpt.is_empty() {
                        excerpt = bf.excerpt.clone();
                    }
                }
            }
            report.build_failure = Some(BuildFailure {
                diagnostics,
                diagnostic_files: files.into_iter().collect(),
                excerpt,
            });
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
                    report.failure_kinds.insert(id.clone(), panic_kind(&m));
                    report.messages.insert(id, m);
                }
                match judge_libtest(&parsed, ran.captured().exit_code, names) {
                    Ok(outcomes) => {
                        for (name, outcome) in outcomes {
                            report
                                .outcomes
                                .insert(format!("{} {}", bin.binary_id, name), outcome);
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

/// DESIGN 5.6: builds only the test targets that hold a scoped listing's files (see
/// [`cargo_targets`]), each package's targets together and, where that fails, each target
/// alone, so that a target that does not compile leaves the others listed. `None` where the
/// listing is not narrowed: an unscoped listing, the user's own target selection in `args`,
/// metadata that cannot be read, a file that maps to no target.
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
    let files: Vec<String> = files
        .iter()
        .filter_map(|f| worktree_relative(ctx, &ctx.dir.join(f)))
        .collect();
    let cargo_targets::Selection::Targets(targets) = cargo_targets::select(&packages, &files)
    else {
        return None;
    };
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
            report.problem = Some(p);
            Some(Err(()))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// libtest output
// ---------------------------------------------------------------------------------------------

/// The panic message of each failed test, from libtest's `---- NAME stdout ----` sections:
/// the line after `thread 'NAME' panicked at FILE:LINE:COL:`; for a test that returned an
/// `Err` (libtest prints `Error: …` and no panic), that `Error: …` line.
pub(super) fn panic_messages(stdout: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    let mut returned_err: Option<String> = None;
    let flush = |current: &mut Option<String>,
                 returned_err: &mut Option<String>,
                 out: &mut Vec<(String, String)>| {
        if let Some(e) = returned_err.take() {
            if let Some(name) = current.take() {
                out.push((name, e));
            }
        }
    };
    let mut lines = stdout.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("---- ") {
            flush(&mut current, &mut returned_err, &mut out);
            current = rest.strip_suffix(" stdout ----").map(str::to_string);
            continue;
        }
        if line == "failures:" {
            flush(&mut current, &mut returned_err, &mut out);
            continue;
        }
        let Some(name) = &current else { continue };
        if let Some(at) = panic_location(line) {
            let at = at.trim_end_matches(':');
            let msg = lines
                .peek()
                .map(|l| l.trim().to_string())
                .filter(|l| !l.is_empty())
                .unwrap_or_default();
            let text = if msg.is_empty() {
                format!("panicked at {at}")
            } else {
                format!("{msg} ({at})")
            };
            out.push((name.clone(), text.chars().take(200).collect()));
            current = None;
            returned_err = None;
        } else if returned_err.is_none() && line.starts_with("Error: ") {
            returned_err = Some(line.trim().chars().take(200).collect());
        }
    }
    flush(&mut current, &mut returned_err, &mut out);
    out
}

/// What follows `panicked at ` in libtest's panic line: `thread 'NAME' panicked at FILE:L:C:`,
/// or since Rust 1.91 `thread 'NAME' (TID) panicked at FILE:L:C:`.
fn panic_location(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("thread '")?;
    let (_, after) = rest.split_once(" panicked at ")?;
    Some(after)
}

/// What kind of failure a libtest panic message names: libtest's `assert!`, `assert_eq!` and
/// `assert_ne!` panic with a message that starts `assertion`; any other panic (`unwrap` on an
/// error, `panic!`, an index out of bounds) is an exception.
pub(super) fn panic_kind(message: &str) -> FailureKind {
    if message.trim_start().starts_with("assertion") {
        FailureKind::Assertion
    } else {
        FailureKind::Exception
    }
}

/// The failure kind in a test's captured output (nextest's JUnit text): the message on the line
/// after `thread '…' panicked at …`, else an exception when the test returned an `Err`
/// (`Error: …`); `None` when the output holds neither.
pub(super) fn output_failure_kind(output: &str) -> Option<FailureKind> {
    let mut lines = output.lines();
    while let Some(line) = lines.next() {
        if let Some(rest) = panic_location(line.trim_start()) {
            // Older libtest printed the message on the same line: `panicked at 'msg', src/…`.
            let message = match rest.strip_prefix('\'') {
                Some(inline) => inline.to_string(),
                None => lines.next().unwrap_or("").to_string(),
            };
            return Some(panic_kind(&message));
        }
    }
    // A test that returned an `Err`: libtest prints it and does not panic.
    output
        .lines()
        .any(|l| l.trim_start().starts_with("Error: "))
        .then_some(FailureKind::Exception)
}

/// Test names in the output of `--list --format terse` (`name: test`; benchmarks skipped).
pub(super) fn parse_terse_list(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .filter(|name| !name.is_empty())
        .map(str::to_string)
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum LibtestStatus {
    Ok,
    Ignored,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LibtestSummary {
    pub ok: bool,
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct LibtestOutput {
    /// Result lines, in order, as `(name as printed, status)`.
    pub results: Vec<(String, LibtestStatus)>,
    /// The last `test result:` line.
    pub summary: Option<LibtestSummary>,
}

/// Reads libtest's pretty output (see the module doc for which lines count).
pub(super) fn parse_libtest(stdout: &str) -> LibtestOutput {
    let mut out = LibtestOutput::default();
    let mut in_results = false;
    for line in stdout.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(rest) = line.strip_prefix("running ") {
            if rest.ends_with(" tests") || rest.ends_with(" test") {
                in_results = true;
                continue;
            }
        }
        if line == "failures:" || line == "successes:" {
            in_results = false;
            continue;
        }
        if let Some(summary) = line.strip_prefix("test result: ") {
            in_results = false;
            if let Some(s) = parse_summary(summary) {
                out.summary = Some(s);
            }
            continue;
        }
        if !in_results {
            continue;
        }
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, status)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let status = if status == "ok" {
            LibtestStatus::Ok
        } else if status.starts_with("FAILED") {
            LibtestStatus::Failed
        } else if status == "ignored" || status.starts_with("ignored, ") {
            LibtestStatus::Ignored
        } else {
            continue;
        };
        out.results.push((name.to_string(), status));
    }
    out
}

/// `ok. 1 passed; 0 failed; 1 ignored; 0 measured; 2 filtered out; finished in 0.00s`
fn parse_summary(s: &str) -> Option<LibtestSummary> {
    let (verdict, counts) = s.split_once(". ")?;
    let ok = match verdict {
        "ok" => true,
        "FAILED" => false,
        _ => return None,
    };
    let mut passed = None;
    let mut failed = None;
    let mut ignored = None;
    for part in counts.split(';') {
        let mut words = part.split_whitespace();
        let (Some(n), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(n) = n.parse::<u64>() else {
            continue;
        };
        match what {
            "passed" => passed = Some(n),
            "failed" => failed = Some(n),
            "ignored" => ignored = Some(n),
            _ => {}
        }
    }
    Some(LibtestSummary {
        ok,
        passed: passed?,
        failed: failed?,
        ignored: ignored?,
    })
}

/// Decides the outcome of each requested name from one binary's run, or says why the output
/// cannot be believed.
pub(super) fn judge_libtest(
    out: &LibtestOutput,
    exit_code: Option<i32>,
    names: &[&str],
) -> Result<Vec<(String, Outcome)>, String> {
    let Some(summary) = out.summary else {
        return Err(format!(
            "no `test result:` line (exit code {}); the test binary crashed or exited early",
            code_str(exit_code)
        ));
    };
    let count = |s: LibtestStatus| out.results.iter().filter(|(_, st)| *st == s).count() as u64;
    let (ok, failed, ignored) = (
        count(LibtestStatus::Ok),
        count(LibtestStatus::Failed),
        count(LibtestStatus::Ignored),
    );
    if (ok, failed, ignored) != (summary.passed, summary.failed, summary.ignored) {
        return Err(format!(
            "result lines ({ok} ok, {failed} failed, {ignored} ignored) disagree with the summary \
             ({} passed, {} failed, {} ignored)",
            summary.passed, summary.failed, summary.ignored
        ));
    }
    // The summary's own word must agree with its counts, and the exit code with both.
    let summary_agrees = summary.ok == (summary.failed == 0);
    let exit_agrees = summary_agrees && LIBTEST.agree(exit_code, summary.failed > 0).is_ok();
    if !exit_agrees {
        return Err(format!(
            "exit code {} disagrees with `test result: {}` ({} failed)",
            code_str(exit_code),
            if summary.ok { "ok" } else { "FAILED" },
            summary.failed
        ));
    }
    let requested: BTreeSet<&str> = names.iter().copied().collect();
    let mut seen: BTreeMap<&str, LibtestStatus> = BTreeMap::new();
    for (printed, status) in &out.results {
        // libtest prints `#[should_panic]` tests as `name - should panic`.
        let name = if requested.contains(printed.as_str()) {
            printed.as_str()
        } else {
            match [" - should panic", " - compile fail", " - compile"]
                .iter()
                .find_map(|suffix| printed.strip_suffix(suffix))
                .filter(|n| requested.contains(n))
            {
                Some(n) => n,
                None => continue,
            }
        };
        let name = requested.get(name).copied().unwrap_or(name);
        let entry = seen.entry(name).or_insert(*status);
        if *status > *entry {
            *entry = *status;
        }
    }
    Ok(names
        .iter()
        .map(|n| {
            let outcome = match seen.get(n) {
                Some(LibtestStatus::Ok) => Outcome::Pass,
                Some(LibtestStatus::Failed) => Outcome::Fail,
                Some(LibtestStatus::Ignored) | None => Outcome::NotObserved,
            };
            (n.to_string(), outcome)
        })
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Building with cargo and reading its JSON messages (shared with nextest)
// ---------------------------------------------------------------------------------------------

/// The item map of a Rust file under the runner's root, as the file is in `ctx.dir`, for the
/// cargo and nextest adapters; `None` when it cannot be read, lies outside a target's
/// directories, or does not parse. The file's module path comes from the module tree of the
/// workspace's targets ([`super::rust_modules`]): a test in `src/tests/recursive.rs` is named
/// `tests::recursive::…` when `src/lib.rs` declares `mod tests;` and `src/tests/mod.rs` declares
/// `mod recursive;`. A file that no target's tree reaches (the metadata cannot be read, a module
/// only a macro declares) takes the module path its place in the layout gives.
pub(super) fn rust_item_map(ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
    let text = read_source(&ctx.dir.join(rel_path))?;
    let places = worktree_relative(ctx, &ctx.dir.join(rel_path))
        .map(|file| {
            let tree = module_tree(ctx);
            tree.places(&file)
                .iter()
                .map(|p| p.path.clone())
                .collect::<BTreeSet<String>>()
        })
        .unwrap_or_default();
    let prefixes: Vec<String> = if places.is_empty() {
        vec![super::rust_items::module_prefix(rel_path)?]
    } else {
        places.into_iter().collect()
    };
    let mut map = ItemMap::default();
    for prefix in prefixes {
        let one = super::rust_items::item_map(&text, &prefix).ok()?;
        map.items.extend(one.items);
        for imp in one.imports {
            if !map.imports.contains(&imp) {
                map.imports.push(imp);
            }
        }
    }
    Some(map)
}

/// The module tree of every target of the workspace in `ctx` (see [`super::rust_modules`]),
/// files relative to the worktree; empty where `cargo metadata` cannot be read.
pub(super) fn module_tree(ctx: &RunCtx) -> super::rust_modules::ModuleTree {
    let Ok(packages) = cargo_targets::workspace_packages(ctx, &mut Vec::new()) else {
        return Default::default();
    };
    let roots: Vec<String> = packages
        .iter()
        .flat_map(|p| p.targets.iter())
        .filter(|t| t.kind != "custom-build" && !t.src_path.starts_with('/'))
        .map(|t| t.src_path.clone())
        .collect();
    super::rust_modules::resolve(&roots, &|f| read_source(&ctx.worktree.join(f)))
}

/// Of `changed` (relative to the runner's root), the Rust files the module tree at `ctx` reaches
/// only through `#[cfg(test)]` (see [`Runner::test_files_among`]).
pub(super) fn test_module_files(ctx: &RunCtx, changed: &[String]) -> Vec<String> {
    if !changed.iter().any(|f| f.ends_with(".rs")) {
        return Vec::new();
    }
    let tree = module_tree(ctx);
    changed
        .iter()
        .filter(|f| f.ends_with(".rs"))
        .filter(|f| {
            worktree_relative(ctx, &ctx.dir.join(f.as_str())).is_some_and(|w| tree.is_test_only(&w))
        })
        .cloned()
        .collect()
}

/// A source file's text: a regular file only (a committed symlink can point anywhere), and
/// bounded, as every file the floor parses.
fn read_source(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 16 << 20 {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

pub(super) fn check_cargo() -> Result<(), InputError> {
    if process::which("cargo").is_none() {
        return Err(InputError::new("`cargo` was not found on PATH")
            .help("install Rust with rustup: https://rustup.rs"));
    }
    Ok(())
}

/// Whether a `/`-separated relative path lies under a directory named `tests`.
pub(super) fn under_tests_dir(rel_path: &str) -> bool {
    let parts: Vec<&str> = rel_path.split('/').filter(|p| !p.is_empty()).collect();
    parts
        .iter()
        .take(parts.len().saturating_sub(1))
        .any(|p| *p == "tests")
}

/// Splits the runner's `args` at the first `--`: cargo's arguments, then the test binaries'.
pub(super) fn split_args(args: &[String]) -> (Vec<String>, Vec<String>) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (args[..i].to_vec(), args[i + 1..].to_vec()),
        None => (args.to_vec(), Vec::new()),
    }
}

/// A test binary cargo built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TestBinary {
    /// As nextest spells it (see the module doc).
    pub binary_id: String,
    pub package_name: String,
    pub package_version: Option<String>,
    /// The nextest kind: `lib`, `proc-macro`, `test`, `bin`, `example`, `bench`.
    pub kind: String,
    pub target_name: String,
    pub src_path: PathBuf,
    pub executable: PathBuf,
    pub manifest_path: PathBuf,
}

impl TestBinary {
    /// The package's directory, where cargo runs its tests.
    pub fn package_dir(&self) -> PathBuf {
        self.manifest_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// The environment `cargo test` gives a test binary, so that a direct start sees the same
    /// (checked against what a test run by `cargo test` 1.95 prints of its environment):
    /// `CARGO`, `CARGO_MANIFEST_DIR`, `CARGO_MANIFEST_PATH`, every `CARGO_PKG_*` of the
    /// package's manifest, and the dynamic library path (the build's profile and `deps`
    /// directories, then the toolchain's libraries, then what was already there), without which
    /// a proc-macro or dylib crate's test binary cannot load `libstd` and exits 127. Not set,
    /// because cargo sets them at compile time only: `CARGO_TARGET_TMPDIR`, `CARGO_CRATE_NAME`,
    /// `CARGO_PRIMARY_PACKAGE`. `[env]` of `.cargo/config.toml` is not applied.
    pub fn runtime_env(
        &self,
        ctx: &RunCtx,
        package: Option<&WorkspacePackage>,
        toolchain_lib_dirs: &[PathBuf],
    ) -> Vec<(OsString, OsString)> {
        let mut env = vec![
            (
                OsString::from("CARGO_MANIFEST_DIR"),
                self.package_dir().into_os_string(),
            ),
            (
                OsString::from("CARGO_MANIFEST_PATH"),
                self.manifest_path.clone().into_os_string(),
            ),
            (
                OsString::from("CARGO_PKG_NAME"),
                OsString::from(&self.package_name),
            ),
        ];
        if let Some(v) = &self.package_version {
            env.push((OsString::from("CARGO_PKG_VERSION"), OsString::from(v)));
            let core = v.split(['-', '+']).next().unwrap_or(v);
            let mut parts = core.split('.');
            for key in [
                "CARGO_PKG_VERSION_MAJOR",
                "CARGO_PKG_VERSION_MINOR",
                "CARGO_PKG_VERSION_PATCH",
            ] {
                env.push((
                    OsString::from(key),
                    OsString::from(parts.next().unwrap_or("")),
                ));
            }
            let pre = v
                .split_once('-')
                .map(|(_, p)| p.split('+').next().unwrap_or(""))
                .unwrap_or("");
            env.push((OsString::from("CARGO_PKG_VERSION_PRE"), OsString::from(pre)));
        }
        if let Some(p) = package {
            for (suffix, value) in &p.manifest_env {
                env.push((
                    OsString::from(format!("CARGO_PKG_{suffix}")),
                    OsString::from(value),
                ));
            }
        }
        if let Some(cargo) = process::which("cargo") {
            env.push((OsString::from("CARGO"), cargo.into_os_string()));
        }
        let mut lib_dirs: Vec<PathBuf> = Vec::new();
        if let Some(deps) = self.executable.parent() {
            if let Some(profile) = deps.parent() {
                lib_dirs.push(profile.to_path_buf());
            }
            lib_dirs.push(deps.to_path_buf());
        }
        lib_dirs.extend(toolchain_lib_dirs.iter().cloned());
        let var = dylib_path_var();
        let old = ctx
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == var)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os(var));
        match old {
            Some(old) => lib_dirs.extend(std::env::split_paths(&old)),
            // As cargo does: setting the fallback path replaces dyld's default, so add it back.
            None if cfg!(target_os = "macos") => {
                if let Some(home) = std::env::var_os("HOME") {
                    lib_dirs.push(PathBuf::from(home).join("lib"));
                }
                lib_dirs.extend(["/usr/local/lib", "/usr/lib"].map(PathBuf::from));
            }
            None => {}
        }
        let mut seen = BTreeSet::new();
        lib_dirs.retain(|d| !d.as_os_str().is_empty() && seen.insert(d.clone()));
        if let Ok(joined) = std::env::join_paths(lib_dirs) {
            env.push((OsString::from(var), joined));
        }
        env
    }
}

/// The variable the platform's loader searches for dynamic libraries, as cargo sets it.
fn dylib_path_var() -> &'static str {
    if cfg!(windows) {
        "PATH"
    } else if cfg!(target_os = "macos") {
        "DYLD_FALLBACK_LIBRARY_PATH"
    } else {
        "LD_LIBRARY_PATH"
    }
}

/// The toolchain's library directories, where `libstd-….so` lives: `rustc --print
/// target-libdir` and the sysroot's `lib` (`rustc --print sysroot`), asked in `ctx.dir` so
/// that a `rust-toolchain.toml` there picks the same toolchain as cargo. Empty when rustc
/// cannot tell; a binary that needs them then fails to start and says so.
pub(super) fn toolchain_lib_dirs(ctx: &RunCtx) -> Vec<PathBuf> {
    let rustc = ctx
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "RUSTC")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("RUSTC"))
        .unwrap_or_else(|| OsString::from("rustc"));
    let args = ["--print", "target-libdir", "--print", "sysroot"].map(OsString::from);
    let ran = exec(ctx, &rustc, &args, &ctx.dir, &[]);
    if ran.operational_problem("rustc").is_some() || !ran.captured().success() {
        return Vec::new();
    }
    let out = ran.captured().stdout_lossy();
    let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
    let (Some(libdir), Some(sysroot)) = (lines.next(), lines.next()) else {
        return Vec::new();
    };
    vec![PathBuf::from(libdir), Path::new(sysroot).join("lib")]
}

/// The workspace members of the project in `ctx.dir`, by name (unique within a workspace), from
/// `cargo metadata --no-deps`: reads the manifests only, so it needs no lock file and no
/// network.
pub(super) fn workspace_packages(
    ctx: &RunCtx,
) -> Result<BTreeMap<String, WorkspacePackage>, String> {
    let mut invocations = Vec::new();
    super::cargo_targets::workspace(ctx, &mut invocations).map(|(_, members)| members)
}

/// One compiler error cargo relayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CompilerError {
    /// The rendered diagnostic (or its message when not rendered).
    pub rendered: String,
    /// The files its primary spans (and the macro call sites they expand from) point into, as
    /// rustc printed them: relative to the workspace root, or absolute.
    pub files: Vec<String>,
    /// Per primary span, its position and then the call sites of the macros it expands from,
    /// innermost first: the first of them inside the worktree is where the error is.
    pub positions: Vec<Vec<SpanAt>>,
    /// The first line of the error's message.
    pub message: String,
}

/// A position rustc reported: the file as it printed it, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SpanAt {
    pub file: String,
    pub line: u32,
    pub column: Option<u32>,
}

/// What cargo's `--message-format=json` stream said.
#[derive(Debug, Clone, Default)]
pub(super) struct CargoMessages {
    /// Test binaries, one per binary id, by binary id: cargo reports them as their builds
    /// finish, in no fixed order, and the listing and its evidence follow this order.
    pub binaries: Vec<TestBinary>,
    pub errors: Vec<CompilerError>,
    /// The `build-finished` message's `success`, when there was one.
    pub build_success: Option<bool>,
    /// JSON lines that are not cargo messages (nextest prints its test list among them).
    pub other_json: Vec<Value>,
}

/// Reads cargo's JSON message stream; lines that are not JSON are skipped.
pub(super) fn parse_cargo_messages(stdout: &[u8]) -> CargoMessages {
    let mut msgs = CargoMessages::default();
    let mut seen_ids = BTreeSet::new();
    for line in String::from_utf8_lossy(stdout).lines() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match v.get("reason").and_then(Value::as_str) {
            Some("compiler-artifact") => {
                if let Some(bin) = test_binary(&v) {
                    if seen_ids.insert(bin.binary_id.clone()) {
                        msgs.binaries.push(bin);
                    }
                }
            }
            Some("compiler-message") => {
                if let Some(err) = compiler_error(&v) {
                    msgs.errors.push(err);
                }
            }
            Some("build-finished") => {
                msgs.build_success = v.get("success").and_then(Value::as_bool);
            }
            Some(_) => {}
            None => msgs.other_json.push(v),
        }
    }
    msgs.binaries.sort_by(|a, b| a.binary_id.cmp(&b.binary_id));
    msgs
}

fn test_binary(v: &Value) -> Option<TestBinary> {
    if v.pointer("/profile/test").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let executable = v.get("executable").and_then(Value::as_str)?;
    let target = v.get("target")?;
    let kinds: Vec<&str> = target
        .get("kind")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let target_name = target.get("name")?.as_str()?.to_string();
    let src_path = PathBuf::from(target.get("src_path")?.as_str()?);
    let manifest_path = PathBuf::from(v.get("manifest_path")?.as_str()?);
    let (package_name, package_version) = parse_package_id(v.get("package_id")?.as_str()?)?;
    let kind = nextest_kind(&kinds)?;
    let binary_id = binary_id(&package_name, &kind, &target_name);
    Some(TestBinary {
        binary_id,
        package_name,
        package_version,
        kind,
        target_name,
        src_path,
        executable: PathBuf::from(executable),
        manifest_path,
    })
}

/// The names an unresolved-import error says cannot be imported (rustc's E0432: ``unresolved
/// import `crate::a::b` ``, ``unresolved imports `x::c`, `x::d` ``), so that only the tests
/// using those names count the failure as their own (DESIGN 5.4). Empty for other errors.
fn unresolved_names(message: &str) -> Vec<String> {
    let Some(rest) = message
        .strip_prefix("unresolved imports ")
        .or_else(|| message.strip_prefix("unresolved import "))
    else {
        return Vec::new();
    };
    rest.split(", ")
        .filter_map(|quoted| quoted.trim().strip_prefix('`')?.strip_suffix('`'))
        .filter_map(|path| path.rsplit("::").next())
        .filter(|name| !name.is_empty() && *name != "*" && *name != "self")
        .map(str::to_string)
        .collect()
}

fn compiler_error(v: &Value) -> Option<CompilerError> {
    let message = v.get("message")?;
    let level = message.get("level").and_then(Value::as_str).unwrap_or("");
    if !level.starts_with("error") {
        return None;
    }
    let text = message.get("message").and_then(Value::as_str).unwrap_or("");
    let spans = message
        .get("spans")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // "aborting due to N previous errors" is a summary, not an error of its own.
    if spans.is_empty() && text.starts_with("aborting due to") {
        return None;
    }
    let mut files = Vec::new();
    let mut positions = Vec::new();
    for span in spans
        .iter()
        .filter(|s| s.get("is_primary").and_then(Value::as_bool) == Some(true))
    {
        // Walk from the span out through the macro expansions to the call site in user code.
        let mut cur = Some(span);
        let mut depth = 0;
        let mut chain = Vec::new();
        while let Some(s) = cur {
            if let Some(f) = s.get("file_name").and_then(Value::as_str) {
                if !f.starts_with('<') && !files.iter().any(|x| x == f) {
                    files.push(f.to_string());
                }
                let number = |k: &str| {
                    s.get(k)
                        .and_then(Value::as_u64)
                        .and_then(|n| u32::try_from(n).ok())
                };
                if let (false, Some(line)) = (f.starts_with('<'), number("line_start")) {
                    chain.push(SpanAt {
                        file: f.to_string(),
                        line,
                        column: number("column_start"),
                    });
                }
            }
            cur = s.pointer("/expansion/span");
            depth += 1;
            if depth > 64 {
                break;
            }
        }
        positions.push(chain);
    }
    let rendered = message
        .get("rendered")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
        .unwrap_or(text)
        .to_string();
    Some(CompilerError {
        rendered,
        files,
        positions,
        message: text.lines().next().unwrap_or("").trim().to_string(),
    })
}

/// The outcome of building the tests.
pub(super) enum Build {
    Built(CargoMessages),
    Failed(BuildFailure),
    Problem(String),
}

/// What building the selected targets gave: the binaries that built, and per binary id that
/// did not, its build failure.
pub(super) struct SelectedBuild {
    pub binaries: Vec<TestBinary>,
    pub failed: BTreeMap<String, BuildFailure>,
}

/// The cargo target selection for a binary id: `pkg` → `--lib`, `pkg::name` → `--test name`,
/// `pkg::bin/name` → `--bin name` (likewise `example/`, `bench/`).
fn target_selector(binary_id: &str) -> (String, Vec<String>) {
    match binary_id.split_once("::") {
        None => (binary_id.to_string(), vec!["--lib".into()]),
        Some((pkg, rest)) => {
            let sel = match rest.split_once('/') {
                Some((kind @ ("bin" | "example" | "bench" | "test"), name)) => {
                    vec![format!("--{kind}"), name.to_string()]
                }
                _ => vec!["--test".into(), rest.to_string()],
            };
            (pkg.to_string(), sel)
        }
    }
}

/// Builds the test targets that hold `ids`, one `cargo test --no-run -p SPEC <targets>` per
/// package; when a build with several targets fails, each target is built alone so that only
/// the targets that do not compile count as build failures. A target that does not exist at
/// this side (its file is new) is skipped: its tests stay not observed.
pub(super) fn build_selected(
    ctx: &RunCtx,
    cargo_args: &[String],
    members: &BTreeMap<String, WorkspacePackage>,
    ids: &[String],
    invocations: &mut Vec<Invocation>,
) -> Result<SelectedBuild, String> {
    // Keyed by the package id spec: a bare name is ambiguous when the lock file holds a
    // registry package of that name too. A package that is no member at this side (new at
    // head) has nothing to build; its tests stay not observed.
    let mut by_package: BTreeMap<String, BTreeSet<(String, Vec<String>)>> = BTreeMap::new();
    for id in ids {
        if let Some((binary_id, _)) = id.split_once(' ') {
            let (pkg, sel) = target_selector(binary_id);
            let Some(member) = members.get(&pkg) else {
                continue;
            };
            by_package
                .entry(member.id.clone())
                .or_default()
                .insert((binary_id.to_string(), sel));
        }
    }
    let mut out = SelectedBuild {
        binaries: Vec::new(),
        failed: BTreeMap::new(),
    };
    let mut problems = Vec::new();
    for (pkg, targets) in &by_package {
        let mut groups: Vec<Vec<&(String, Vec<String>)>> = vec![targets.iter().collect()];
        while let Some(group) = groups.pop() {
            let mut args = cargo_args.to_vec();
            args.extend(["-p".to_string(), pkg.clone()]);
            for (_, sel) in &group {
                args.extend(sel.iter().cloned());
            }
            match build_tests(ctx, &args, invocations) {
                Build::Built(msgs) => out.binaries.extend(msgs.binaries),
                Build::Failed(_) | Build::Problem(_) if group.len() > 1 => {
                    groups.extend(group.iter().map(|t| vec![*t]));
                }
                Build::Failed(bf) => {
                    for (binary_id, _) in &group {
                        out.failed.insert(binary_id.clone(), bf.clone());
                    }
                }
                Build::Problem(p) => problems.push(p),
            }
        }
    }
    // Problems that are only "no such target" leave those tests unobserved; any other stops.
    let real: Vec<String> = problems
        .into_iter()
        .filter(|p| {
            !p.contains("no test target")
                && !p.contains("no bin target")
                && !p.contains("no library targets")
                && !p.contains("did not match any packages")
                && !p.contains("no example target")
                && !p.contains("no bench target")
        })
        .collect();
    if real.is_empty() {
        Ok(out)
    } else {
        Err(real.join("; "))
    }
}

/// `cargo test --no-run --message-format=json <cargo args>` in `ctx.dir`.
fn build_tests(ctx: &RunCtx, cargo_args: &[String], invocations: &mut Vec<Invocation>) -> Build {
    let mut args: Vec<OsString> = ["test", "--no-run", "--message-format=json"]
        .map(OsString::from)
        .to_vec();
    args.extend(cargo_args.iter().map(OsString::from));
    let ran = exec(ctx, OsStr::new("cargo"), &args, &ctx.dir, &[]);
    let problem = ran.operational_problem("cargo test --no-run");
    let msgs = parse_cargo_messages(&ran.captured().stdout);
    let exit_ok = ran.captured().success();
    let exit_text = exit_problem("cargo test --no-run", ran.captured());
    let mut invocation = ran.invocation;
    invocation.captured.stdout = in_target_order(&invocation.captured.stdout);
    invocations.push(invocation);
    if let Some(p) = problem {
        return Build::Problem(p);
    }
    classify_build(ctx, msgs, exit_ok, &exit_text, invocations)
}

/// Cargo's JSON message stream with each target's messages together, targets by package and
/// target, `build-finished` last: cargo emits them as its parallel builds finish, in no fixed
/// order, and the stream is evidence, whose bytes the same inputs must reproduce. Each target's
/// own messages keep their order (one compiler wrote them); lines that are not JSON come first,
/// as they were.
pub(super) fn in_target_order(stdout: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(stdout);
    let mut lines: Vec<(u8, String, String, String, &str)> = text
        .lines()
        .map(|line| {
            let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
                return (0, String::new(), String::new(), String::new(), line);
            };
            let field = |p: &str| v.pointer(p).map(|f| f.to_string()).unwrap_or_default();
            let last = u8::from(v.get("reason").and_then(Value::as_str) == Some("build-finished"));
            (
                1 + last,
                field("/package_id"),
                field("/target/kind"),
                field("/target/name"),
                line,
            )
        })
        .collect();
    // Stable: each target's messages stay in the order cargo printed them.
    lines.sort_by(|a, b| (a.0, &a.1, &a.2, &a.3).cmp(&(b.0, &b.1, &b.2, &b.3)));
    let mut out = Vec::with_capacity(stdout.len());
    for (_, _, _, _, line) in lines {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    // As printed: no final newline added to a stream that had none.
    if !stdout.ends_with(b"\n") {
        out.pop();
    }
    out
}

/// Decides between a good build, a build failure (compiler errors) and an operational problem
/// (cargo failed without a compiler error: a bad manifest, a network error, a build script).
pub(super) fn classify_build(
    ctx: &RunCtx,
    msgs: CargoMessages,
    exit_ok: bool,
    exit_text: &str,
    invocations: &mut Vec<Invocation>,
) -> Build {
    let failed = !exit_ok || msgs.build_success == Some(false);
    if !failed {
        return Build::Built(msgs);
    }
    if msgs.errors.is_empty() {
        return Build::Problem(exit_text.to_string());
    }
    Build::Failed(build_failure(ctx, &msgs.errors, invocations))
}

/// The build failure: repo-relative files the errors point into, and an excerpt.
pub(super) fn build_failure(
    ctx: &RunCtx,
    errors: &[CompilerError],
    invocations: &mut Vec<Invocation>,
) -> BuildFailure {
    let needs_root = errors
        .iter()
        .flat_map(|e| &e.files)
        .any(|f| !Path::new(f).is_absolute());
    // rustc runs in the workspace root and prints member paths relative to it.
    let ws_root = if needs_root {
        workspace_root(ctx, invocations).unwrap_or_else(|| ctx.dir.clone())
    } else {
        ctx.dir.clone()
    };
    let mut files = BTreeSet::new();
    for f in errors.iter().flat_map(|e| &e.files) {
        let p = Path::new(f);
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            ws_root.join(p)
        };
        if let Some(rel) = worktree_relative(ctx, &abs) {
            files.insert(rel);
        }
    }
    // Each error once, at the first position of its chain that lies in the worktree.
    let mut diagnostics = Vec::new();
    for e in errors {
        for chain in &e.positions {
            let at = chain.iter().find_map(|p| {
                let path = Path::new(&p.file);
                let abs = if path.is_absolute() {
                    path.to_path_buf()
                } else {
                    ws_root.join(path)
                };
                worktree_relative(ctx, &abs).map(|file| Diagnostic {
                    file,
                    line: p.line,
                    column: p.column,
                    message: e.message.clone(),
                    names: unresolved_names(&e.message),
                })
            });
            if let Some(d) = at {
                if !diagnostics.contains(&d) {
                    diagnostics.push(d);
                }
            }
        }
    }
    let mut excerpt = String::new();
    for e in errors.iter().take(10) {
        excerpt.push_str(e.rendered.trim_end());
        excerpt.push_str("\n\n");
    }
    BuildFailure {
        diagnostics,
        diagnostic_files: files.into_iter().collect(),
        excerpt: truncate(excerpt.trim_end(), 4000),
    }
}

/// The workspace root, from `cargo locate-project --workspace --message-format plain`.
fn workspace_root(ctx: &RunCtx, invocations: &mut Vec<Invocation>) -> Option<PathBuf> {
    let args = ["locate-project", "--workspace", "--message-format", "plain"].map(OsString::from);
    let ran = exec(ctx, OsStr::new("cargo"), &args, &ctx.dir, &[]);
    let ok = ran.operational_problem("").is_none() && ran.captured().success();
    let out = ran.captured().stdout_lossy();
    invocations.push(ran.invocation);
    if !ok {
        return None;
    }
    let manifest = PathBuf::from(out.trim());
    manifest.parent().map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::floor::runners::cargo_meta::parse_workspace_packages;

    #[test]
    fn panic_messages_with_a_thread_id() {
        let out = "failures:\n\n---- t::high stdout ----\n\nthread 't::high' (11484) panicked at src/lib.rs:9:9:\nassertion `left == right` failed\n";
        assert_eq!(
            panic_messages(out),
            [(
                "t::high".to_string(),
                "assertion `left == right` failed (src/lib.rs:9:9)".to_string()
            )]
        );
    }

    #[test]
    fn terse_list() {
        let out = "tests::a: test\nbench_x: benchmark\nmod::b c: test\n\n";
        assert_eq!(parse_terse_list(out), vec!["tests::a", "mod::b c"]);
    }

    #[test]
    fn panic_messages_name_the_assertion() {
        let out = "failures:\n\n---- clamps_high stdout ----\nthread 'clamps_high' panicked at tests/c.rs:3:5:\nassertion `left == right` failed\n  left: 50\n right: 10\n\nfailures:\n    clamps_high\n";
        assert_eq!(
            panic_messages(out),
            [(
                "clamps_high".to_string(),
                "assertion `left == right` failed (tests/c.rs:3:5)".to_string()
            )]
        );
        // Newer toolchains print the thread's id after its name.
        let out = out.replace("'clamps_high' panicked", "'clamps_high' (5792) panicked");
        assert_eq!(
            panic_messages(&out)[0].1,
            "assertion `left == right` failed (tests/c.rs:3:5)"
        );
    }

    const MIXED: &str = "\nrunning 4 tests\ntest fails ... FAILED\ntest ignored ... ignored\ntest passes ... ok\ntest sp - should panic ... ok\n\nfailures:\n\n---- fails stdout ----\ntest ignored ... ok\ntest result: ok. 9 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\nthread 'fails' panicked at tests/t.rs:4:46:\n\nfailures:\n    fails\n\ntest result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured; 1 filtered out; finished in 0.17s\n\n";

    #[test]
    fn libtest_pretty_output() {
        let out = parse_libtest(MIXED);
        assert_eq!(
            out.results,
            vec![
                ("fails".to_string(), LibtestStatus::Failed),
                ("ignored".to_string(), LibtestStatus::Ignored),
                ("passes".to_string(), LibtestStatus::Ok),
                ("sp - should panic".to_string(), LibtestStatus::Ok),
            ]
        );
        assert_eq!(
            out.summary,
            Some(LibtestSummary {
                ok: false,
                passed: 2,
                failed: 1,
                ignored: 1
            })
        );
        let judged = judge_libtest(
            &out,
            Some(101),
            &["fails", "ignored", "passes", "sp", "missing"],
        )
        .unwrap();
        assert_eq!(
            judged,
            vec![
                ("fails".to_string(), Outcome::Fail),
                ("ignored".to_string(), Outcome::NotObserved),
                ("passes".to_string(), Outcome::Pass),
                ("sp".to_string(), Outcome::Pass),
                ("missing".to_string(), Outcome::NotObserved),
            ]
        );
    }

    #[test]
    fn libtest_exit_code_must_agree() {
        let out = parse_libtest(MIXED);
        assert!(judge_libtest(&out, Some(0), &["passes"]).is_err());
        assert!(judge_libtest(&out, None, &["passes"]).is_err());
        let ok = "running 1 test\ntest passes ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s\n";
        let out = parse_libtest(ok);
        assert_eq!(
            judge_libtest(&out, Some(0), &["passes"]).unwrap(),
            vec![("passes".to_string(), Outcome::Pass)]
        );
        assert!(judge_libtest(&out, Some(101), &["passes"]).is_err());
        assert!(judge_libtest(&out, Some(1), &["passes"]).is_err());
    }

    #[test]
    fn libtest_forged_or_missing_lines_are_not_believed() {
        // A test wrote a fake result line straight to stdout: the counts no longer match.
        let forged = "running 1 test\ntest other ... ok\ntest passes ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        assert!(judge_libtest(&parse_libtest(forged), Some(0), &["other"]).is_err());
        // The binary exited (or crashed) mid-run: no summary.
        let crashed = "running 2 tests\ntest passes ... ok\n";
        assert!(judge_libtest(&parse_libtest(crashed), Some(0), &["passes"]).is_err());
        // Stray output on the result line hides the status: counts disagree.
        let stray = "running 1 test\ntest passes ... hello\nok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        assert!(judge_libtest(&parse_libtest(stray), Some(0), &["passes"]).is_err());
        // Nothing matched the filter: exit 0, and no pass.
        let none = "\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out; finished in 0.00s\n\n";
        assert_eq!(
            judge_libtest(&parse_libtest(none), Some(0), &["nope"]).unwrap(),
            vec![("nope".to_string(), Outcome::NotObserved)]
        );
    }

    #[test]
    fn failure_kinds_from_panics() {
        assert_eq!(
            panic_kind("assertion `left == right` failed (tests/c.rs:3:5)"),
            FailureKind::Assertion
        );
        assert_eq!(
            panic_kind("assertion failed: x > 3 (src/lib.rs:9:9)"),
            FailureKind::Assertion
        );
        assert_eq!(
            panic_kind("called `Result::unwrap()` on an `Err` value: 3 (src/lib.rs:2:1)"),
            FailureKind::Exception
        );
        assert_eq!(
            panic_kind("panicked at src/lib.rs:2:1"),
            FailureKind::Exception
        );
        let out = "running\nthread 'a' panicked at tests/t.rs:4:5:\nassertion `left == right` failed\n  left: 1\n";
        assert_eq!(output_failure_kind(out), Some(FailureKind::Assertion));
        let out = "thread 'a' (4242) panicked at tests/t.rs:4:5:\nindex out of bounds\n";
        assert_eq!(output_failure_kind(out), Some(FailureKind::Exception));
        let old = "thread 'a' panicked at 'assertion failed: x', tests/t.rs:4:5\n";
        assert_eq!(output_failure_kind(old), Some(FailureKind::Assertion));
        assert_eq!(output_failure_kind("no panic here\n"), None);
        assert_eq!(
            output_failure_kind("Error: \"boom\"\n"),
            Some(FailureKind::Exception)
        );
        let out = "failures:\n\n---- returns_err stdout ----\nError: \"boom\"\n\n---- panics stdout ----\nError: printed, then\nthread 'panics' panicked at src/lib.rs:4:5:\nassertion failed: false\n\n\nfailures:\n    panics\n    returns_err\n";
        assert_eq!(
            panic_messages(out),
            [
                ("returns_err".to_string(), "Error: \"boom\"".to_string()),
                (
                    "panics".to_string(),
                    "assertion failed: false (src/lib.rs:4:5)".to_string()
                ),
            ]
        );
        assert_eq!(panic_kind("Error: \"boom\""), FailureKind::Exception);
    }

    #[test]
    fn cargo_errors_skip_warnings() {
        let deprecated = "warning: `/w/.cargo/config` is deprecated in favor of `config.toml`\n  |\n  = help: if you need to support cargo 1.38 or earlier, you can symlink `config` to `config.toml`\n";
        let stderr = format!("{deprecated}     Locking 4 packages to latest compatible versions\nerror: failed to download `winapi v0.3.9`\n\nCaused by:\n  attempting to make an HTTP request, but --offline was specified\n");
        assert_eq!(
            cargo_error(&stderr),
            "error: failed to download `winapi v0.3.9` Caused by: attempting to make an HTTP \
             request, but --offline was specified"
        );
        let stderr = "error: no matching package named `zzz` found\nlocation searched: crates.io index\nrequired by package `fx v0.1.0 (/w)`\nAs a reminder, you're using offline mode\nmore\nand more\nwarning: x\n";
        assert_eq!(
            cargo_error(stderr),
            "error: no matching package named `zzz` found location searched: crates.io index \
             required by package `fx v0.1.0 (/w)` As a reminder, you're using offline mode more"
        );
        assert_eq!(
            cargo_error("warning: a\n  something odd\n\n"),
            "something odd"
        );
        assert_eq!(cargo_error(""), "(no output)");
    }

    #[test]
    fn workspace_members_by_name() {
        let json = br#"{"packages":[
          {"name":"itoa","version":"0.9.0","id":"path+file:///w/itoa#0.9.0","source":null,
           "authors":["A <a@x>","B"],"description":"d","homepage":null,"license":"MIT",
           "license_file":null,"readme":"README.md","repository":null,"rust_version":"1.70"},
          {"name":"other","version":"1.0.0","id":"path+file:///elsewhere#other@1.0.0","source":null}
        ],"workspace_members":["path+file:///w/itoa#0.9.0"],"target_directory":"/w/target"}"#;
        let ws = parse_workspace_packages(json).unwrap();
        assert_eq!(ws.keys().collect::<Vec<_>>(), ["itoa"]);
        let p = &ws["itoa"];
        assert_eq!(p.id, "path+file:///w/itoa#0.9.0");
        assert_eq!(
            p.manifest_env,
            [
                ("AUTHORS", "A <a@x>:B".to_string()),
                ("DESCRIPTION", "d".into()),
                ("HOMEPAGE", "".into()),
                ("LICENSE", "MIT".into()),
                ("LICENSE_FILE", "".into()),
                ("README", "README.md".into()),
                ("REPOSITORY", "".into()),
                ("RUST_VERSION", "1.70".into()),
            ]
        );
        assert!(parse_workspace_packages(b"error").is_err());
    }

    #[test]
    fn package_ids() {
        assert_eq!(
            parse_package_id("path+file:///tmp/exp/fx#fx-crate@0.1.0"),
            Some(("fx-crate".into(), Some("0.1.0".into())))
        );
        assert_eq!(
            parse_package_id("path+file:///tmp/exp/fx-crate#0.1.0"),
            Some(("fx-crate".into(), Some("0.1.0".into())))
        );
        assert_eq!(
            parse_package_id("fx-crate 0.1.0 (path+file:///tmp/exp/fx)"),
            Some(("fx-crate".into(), Some("0.1.0".into())))
        );
        assert_eq!(
            parse_package_id("git+https://github.com/a/b?branch=main#c@1.2.3-rc.1"),
            Some(("c".into(), Some("1.2.3-rc.1".into())))
        );
    }

    #[test]
    fn binary_ids() {
        assert_eq!(nextest_kind(&["cdylib", "rlib"]).as_deref(), Some("lib"));
        assert_eq!(nextest_kind(&["proc-macro"]).as_deref(), Some("proc-macro"));
        assert_eq!(binary_id("fx-crate", "lib", "fx_crate"), "fx-crate");
        assert_eq!(binary_id("fx-crate", "proc-macro", "fx_crate"), "fx-crate");
        assert_eq!(binary_id("fx-crate", "test", "t"), "fx-crate::t");
        assert_eq!(binary_id("fx-crate", "bin", "tool"), "fx-crate::bin/tool");
        assert_eq!(
            binary_id("fx-crate", "example", "demo"),
            "fx-crate::example/demo"
        );
    }

    #[test]
    fn cargo_messages_are_kept_in_target_order_whatever_order_the_builds_finished_in() {
        let line = |name: &str, n: u32| {
            format!(
                r#"{{"reason":"compiler-message","package_id":"p","target":{{"kind":["test"],"name":"{name}"}},"n":{n}}}"#
            )
        };
        let done = r#"{"reason":"build-finished","success":true}"#;
        let one = [
            line("b", 1),
            line("a", 1),
            line("b", 2),
            line("a", 2),
            done.into(),
        ]
        .join("\n")
            + "\n";
        let other = [
            line("a", 1),
            line("b", 1),
            line("a", 2),
            line("b", 2),
            done.into(),
        ]
        .join("\n")
            + "\n";
        let want = [
            line("a", 1),
            line("a", 2),
            line("b", 1),
            line("b", 2),
            done.into(),
        ]
        .join("\n")
            + "\n";
        assert_eq!(
            String::from_utf8(in_target_order(one.as_bytes())).unwrap(),
            want
        );
        assert_eq!(
            in_target_order(one.as_bytes()),
            in_target_order(other.as_bytes())
        );
        assert_eq!(in_target_order(b"not json\n{}"), b"not json\n{}");
    }

    #[test]
    fn test_binaries_come_by_binary_id_whatever_order_their_builds_finished_in() {
        let artifact = |kind: &str, name: &str| {
            format!(
                r#"{{"reason":"compiler-artifact","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{{"kind":["{kind}"],"crate_types":["{kind}"],"name":"{name}","src_path":"/tmp/wt/tests/{name}.rs","test":true}},"profile":{{"test":true}},"executable":"/tmp/target/debug/deps/{name}-1"}}"#
            )
        };
        let stdout = [
            artifact("test", "zeta"),
            artifact("lib", "fx_crate"),
            artifact("test", "alpha"),
        ]
        .join("\n");
        let ids: Vec<String> = parse_cargo_messages(stdout.as_bytes())
            .binaries
            .into_iter()
            .map(|b| b.binary_id)
            .collect();
        assert_eq!(ids, ["fx-crate", "fx-crate::alpha", "fx-crate::zeta"]);
    }

    #[test]
    fn cargo_messages() {
        let stdout = br#"   Compiling noise
{"reason":"compiler-artifact","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"fx_crate","src_path":"/tmp/wt/src/lib.rs","test":true},"profile":{"test":true},"executable":"/tmp/target/debug/deps/fx_crate-1"}
{"reason":"compiler-artifact","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"fx_crate","src_path":"/tmp/wt/src/lib.rs","test":true},"profile":{"test":false},"executable":null}
{"reason":"compiler-artifact","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{"kind":["bin"],"crate_types":["bin"],"name":"tool","src_path":"/tmp/wt/src/bin/tool.rs","test":true},"profile":{"test":false},"executable":"/tmp/target/debug/tool"}
{"reason":"compiler-message","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{"kind":["test"],"name":"t","src_path":"/tmp/wt/tests/t.rs"},"message":{"rendered":"error[E0308]: mismatched types\n --> tests/t.rs:2:28\n","level":"error","message":"mismatched types","spans":[{"file_name":"tests/t.rs","is_primary":true,"line_start":2,"column_start":28,"expansion":null},{"file_name":"src/lib.rs","is_primary":false,"expansion":null}],"children":[{"level":"note","message":"defined here","spans":[{"file_name":"src/other.rs","is_primary":true}]}]}}
{"reason":"compiler-message","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{"kind":["test"],"name":"t","src_path":"/tmp/wt/tests/t.rs"},"message":{"rendered":"error: in macro\n","level":"error","message":"in macro","spans":[{"file_name":"/home/u/.cargo/registry/src/x/mac.rs","is_primary":true,"line_start":9,"column_start":1,"expansion":{"span":{"file_name":"tests/helpers/mod.rs","is_primary":false,"line_start":4,"column_start":5,"expansion":null},"macro_decl_name":"m!"}}],"children":[]}}
{"reason":"compiler-message","message":{"rendered":"warning: unused\n","level":"warning","message":"unused","spans":[{"file_name":"src/lib.rs","is_primary":true}],"children":[]}}
{"reason":"compiler-message","message":{"rendered":"error: aborting due to 1 previous error\n","level":"error","message":"aborting due to 1 previous error","spans":[],"children":[]}}
{"reason":"build-finished","success":false}
{"rust-suites":{}}
"#;
        let msgs = parse_cargo_messages(stdout);
        assert_eq!(msgs.binaries.len(), 1);
        let b = &msgs.binaries[0];
        assert_eq!(b.binary_id, "fx-crate");
        assert_eq!(b.kind, "lib");
        assert_eq!(b.src_path, PathBuf::from("/tmp/wt/src/lib.rs"));
        assert_eq!(b.package_version.as_deref(), Some("0.1.0"));
        assert_eq!(msgs.build_success, Some(false));
        assert_eq!(msgs.errors.len(), 2);
        assert_eq!(msgs.errors[0].files, vec!["tests/t.rs"]);
        assert_eq!(
            msgs.errors[1].files,
            vec![
                "/home/u/.cargo/registry/src/x/mac.rs",
                "tests/helpers/mod.rs"
            ]
        );
        assert_eq!(msgs.other_json.len(), 1);
        // Positions, innermost first: the macro's own file, then the call site in the tests.
        let at = |f: &str, line, column| SpanAt {
            file: f.into(),
            line,
            column: Some(column),
        };
        assert_eq!(
            msgs.errors[0].positions,
            vec![vec![at("tests/t.rs", 2, 28)]]
        );
        assert_eq!(msgs.errors[0].message, "mismatched types");
        assert_eq!(
            msgs.errors[1].positions,
            vec![vec![
                at("/home/u/.cargo/registry/src/x/mac.rs", 9, 1),
                at("tests/helpers/mod.rs", 4, 5)
            ]]
        );
    }

    #[test]
    fn test_files_and_args() {
        assert!(under_tests_dir("tests/t.rs"));
        assert!(under_tests_dir("tests/fixtures/data.json"));
        assert!(under_tests_dir("crates/a/tests/t.rs"));
        assert!(under_tests_dir("src/tests/mod.rs"));
        assert!(!under_tests_dir("tests"));
        assert!(!under_tests_dir("src/lib.rs"));
        assert!(!under_tests_dir("benches/b.rs"));
        assert!(!under_tests_dir("src/my_tests.rs"));
        let args: Vec<String> = ["--features", "x", "--", "--include-ignored"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            split_args(&args),
            (
                vec!["--features".to_string(), "x".to_string()],
                vec!["--include-ignored".to_string()]
            )
        );
    }

    #[test]
    fn names_come_from_rustc_unresolved_import_messages() {
        assert_eq!(
            unresolved_names("unresolved import `crate::clamp`"),
            ["clamp"]
        );
        assert_eq!(
            unresolved_names("unresolved imports `util::a`, `util::b`"),
            ["a", "b"]
        );
        assert!(unresolved_names("cannot find function `clamp` in this scope").is_empty());
        assert!(unresolved_names("unresolved import `util::*`").is_empty());
    }
}
