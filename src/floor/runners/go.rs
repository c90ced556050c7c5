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
//! # list
//! In: the module in `ctx.dir` and a [`ListScope`]. Out: the top-level tests of the packages in
//! scope, and the subtests a run of their parents reports (the floor lists at head to bind).
//! 1. `go list -e -json=<fields> [-tags/-mod/-modfile from args] ./...`: each package's import
//!    path, directory, `_test.go` files and load errors (`Error`, `DepsErrors`). A package that
//!    cannot even be loaded (`found packages a and b`, an import no module provides) would stop
//!    any `go test` given it, for every package: it is a build failure on its own (the files its
//!    errors point into, else its directory), and is left out of step 3.
//! 2. The scope: [`ListScope::All`] keeps every package; [`ListScope::Files`] keeps the packages
//!    whose directory holds a named file (for a file below `testdata`, the directory that holds
//!    `testdata`), so only they are built, and load failures elsewhere are not reported. A file
//!    in no package go knows (a `README.md` outside any package) could hold a test id only
//!    through something we cannot see: then every package is kept.
//! 3. `go test -json -count=1 -list ^Test <args> <import paths with test files>`: the test binary
//!    of each package prints its test names, which arrive as package-level `output` events. A
//!    name is listed only when it is a `Test*` name and a `func TestName(` of the package's test
//!    files declares it (that file is `TestCase::file`); anything else a `TestMain` prints is
//!    ignored. A package whose tests do not compile (`FAIL <pkg> [build failed]` or `[setup
//!    failed]`) is a `build_failure`, the others are still listed.
//! 4. Subtests exist only while their parent runs (a `t.Run` table row is the usual Go way to add
//!    a case), so the parents that may have them are run, one `go test -json -count=1
//!    -run '^(TestA|TestB)$' <args> <pkg>` per package, and every `run` event below them is
//!    listed as `<pkg> TestA/<sub>` with the parent's file, named as go reports it (spaces
//!    become `_`, a repeated name gets `#01`, each `/` a level). Which parents: under a file
//!    scope, every test declared in a named `_test.go` file (a tag is in that file, and a table
//!    may be run by a helper in another file), and in a package named through another file (a
//!    source file, a `testdata` fixture) the tests whose text calls `.Run(`; under `All`, only
//!    the tests whose text calls `.Run(` (from their `func` line to the next top-level `func`),
//!    which bounds the cost to one head run of the table-driven tests; a table run by a helper
//!    in another file is then not seen. A run that cannot be read to the end (a panic, which
//!    ends the test binary, `os.Exit`, a timeout) is a `problem`: what ran before it is still
//!    listed.
//!
//! # run
//! In: test ids. Out: one outcome per id.
//! 1. `go list -e -json=<fields> <import paths of the ids>`. Ids of a package that does not exist
//!    (or lies outside the worktree), has no test files, or whose top-level test no test file
//!    declares are `NotObserved` without running anything (a filter that matches nothing is
//!    never a pass). A package that cannot be loaded (as in list) makes its ids `BuildFail`.
//! 2. Per package, one `go test -json -count=1 -run <regex> <args> <import path>` for its
//!    top-level ids (`-run '^(TestA|TestB)$'`), and one per parent for subtest ids (`-run
//!    '^TestA$/^(x|y)$'`; go splits `-run` at `/`, one pattern per level), so that exactly the
//!    requested tests run. Names are escaped like `regexp.QuoteMeta`. `-count=1` defeats go's
//!    test cache; go has no retries.
//! 3. Read the `test2json` events of each command. A build failure (`FAIL <pkg> [build failed]`
//!    or `[setup failed]` on stdout or stderr, a `build-fail` event, a `fail` event with
//!    `FailedBuild`) makes the command's ids `BuildFail`, with the files the compiler and vet
//!    errors point into (`./x_test.go:12:3: undefined: Bar`, printed relative to `ctx.dir` where
//!    go runs, or absolute) as `diagnostic_files`; an error that names no file (an import cycle)
//!    adds its package's directory, which keeps the failure from being blamed on test files
//!    alone. Otherwise a test is `Pass` only when a `pass` event exists for exactly that package
//!    and test, no `fail` event does, and the exit code agrees with the package's own result
//!    (exit 0 with a package `pass` and no failed test; exit 1 with a package `fail` and some
//!    failed test). `fail` (an assertion, a panic) is `Fail`; `skip` and absent are
//!    `NotObserved`. Anything else (exit 1 without a failed test: `os.Exit`, go's own
//!    `-timeout`, a crash between tests; a timeout or signal of ours) is a `problem`, and no pass
//!    is believed. Failure messages come from the failed test's `output` events: its first
//!    `panic:` line, else its first line that is not go's own `=== RUN`/`--- FAIL`; a parent
//!    with nothing of its own borrows its first failed subtest's. A failure with a `panic:`
//!    line in the test's (or a subtest's) output is an exception, any other an assertion
//!    (`t.Error`, `t.Fatal`).
//!
//! A subtest's outcome is its own, never its parent's: at base the parent can fail (its own
//! check) while the requested subtest passes, which is a pass; or pass without running the
//! subtest at all, which leaves it not observed.
//!
//! # Attribution (DESIGN 5.4)
//! [`Runner::test_item`] is the id's top-level test (`TestA` for `TestA/x`), and
//! [`Runner::item_map`] parses a test file with go's own parser (see [`goparse`]). A build
//! failure carries `diagnostics`: each error line with a position (`./x_test.go:12:5:
//! undefined: Foo`, `pkg/x_test.go:6:2: no required module provides package …` for an import
//! that does not resolve, and the `Pos` of a load error), printed by go relative to `ctx.dir`
//! where it runs (where no such file exists there, relative to the directory of the package in
//! whose `# <pkg>` block it stands), made relative to the repository root; positions outside
//! the worktree (GOROOT, the module cache) are left out. A failed import's position is the
//! import's, so it counts for exactly the tests that use the name it binds.
//!
//! Go 1.19's `test2json` reads results from the text the test binary prints, so a test that
//! prints `--- PASS: TestX` could forge a result for a test of the same package; requiring the
//! declaration, the absence of any `fail` event and the exit code's agreement narrows that to
//! tests that really exist and really ran in the same command.
//!
//! Invocations carry no separate results file: the event stream is their stdout.
//!
//! The runner's `args` are appended to `go test` before the packages (`-tags`, `-short`,
//! `-race`, `-vet=off`, …); `-tags`, `-mod` and `-modfile` among them are also given to
//! `go list`. Arguments that change what runs (`-run`, `-list`, `-json`) are not supported.

use super::contract::GO;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::goparse;
use super::kit::{code_str, exec, exit_problem, join_problems, truncate, worktree_relative};
use super::*;
use crate::process;

const INSTALL_HELP: &str =
    "install Go: `apt-get install golang-go`, or download it from https://go.dev/dl/";

/// The fields `go list` reports for each package.
const LIST_FIELDS: &str =
    "-json=ImportPath,Dir,Error,DepsErrors,TestGoFiles,XTestGoFiles,InvalidGoFiles";

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

    fn check_tool(&self) -> Result<(), InputError> {
        let mut cmd = Command::new("go");
        cmd.arg("version");
        for (k, v) in go_env(&[]) {
            cmd.env(k, v);
        }
        match process::run(cmd, Duration::from_secs(60)) {
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
        let mut report = ListReport::default();
        let packages = match go_list(
            ctx,
            &self.config.args,
            &[OsString::from("./...")],
            &mut report.invocations,
        ) {
            Ok(p) => p,
            Err(problem) => {
                report.problem = Some(problem);
                return report;
            }
        };
        // Which packages to build: those holding the scope's files, or every one when a file
        // lies in no package (it could hold a test only through something we cannot see).
        let scoped = match scope {
            ListScope::All => None,
            ListScope::Files(files) => scope_packages(ctx, files, &packages),
        };
        let in_scope = |p: &GoPackage| {
            scoped
                .as_ref()
                .is_none_or(|s| s.dirs.contains(&p.canonical_dir()))
        };
        let mut problems = Vec::new();
        let mut failures = Vec::new();
        let mut testable: Vec<&GoPackage> = Vec::new();
        for p in &packages {
            match (p.dir_in(ctx), p.errors.first()) {
                (None, Some(e)) if p.dir.is_none() && scoped.is_none() => {
                    problems.push(format!("go list: {}", e.message))
                }
                (Some(_), Some(_)) if p.has_tests() && in_scope(p) => {
                    failures.push(p.load_failure(ctx))
                }
                (Some(_), None) if p.has_tests() && in_scope(p) => testable.push(p),
                _ => {}
            }
        }
        let mut tests = BTreeSet::new();
        // Packages that listed, with what their test files declare, for subtest discovery.
        let mut listed: Vec<(&GoPackage, BTreeMap<String, PathBuf>)> = Vec::new();
        if !testable.is_empty() {
            let mut args: Vec<OsString> = ["test", "-json", "-count=1", "-list", "^Test"]
                .map(OsString::from)
                .to_vec();
            args.extend(self.config.args.iter().map(OsString::from));
            args.extend(testable.iter().map(|p| OsString::from(&p.import_path)));
            let ran = exec(ctx, OsStr::new("go"), &args, &ctx.dir, &go_env(&ctx.env));
            if let Some(p) = ran.operational_problem("go test -list") {
                problems.push(p);
            } else {
                let captured = ran.captured();
                let out = parse_test_json(&captured.stdout_lossy());
                let stderr = captured.stderr_lossy();
                let failed = build_failed_packages(&out, &stderr);
                // Packages that neither listed nor failed to build (a `TestMain` that exits, or
                // go stopping before it ran anything).
                let mut unexplained: Vec<&str> = Vec::new();
                for p in &testable {
                    if failed.contains(&p.import_path) {
                        continue;
                    }
                    match out.package_result(&p.import_path) {
                        Some("pass") => {
                            let declared = p.declared_tests();
                            for name in out.listed_names(&p.import_path) {
                                if let Some(file) = declared.get(name) {
                                    tests.insert(TestCase {
                                        id: format!("{} {}", p.import_path, name),
                                        file: worktree_relative(ctx, file),
                                    });
                                }
                            }
                            listed.push((p, declared));
                        }
                        Some("skip") => {}
                        _ => unexplained.push(&p.import_path),
                    }
                }
                if !failed.is_empty() {
                    let dirs = package_dirs(&packages);
                    failures.push(build_failure(
                        ctx,
                        &out.build_text(&stderr),
                        &dirs,
                        &ctx.dir,
                    ));
                }
                let exit_ok = match captured.exit_code {
                    Some(0) => failed.is_empty(),
                    Some(1 | 2) => !failed.is_empty(),
                    _ => false,
                };
                if !unexplained.is_empty() {
                    problems.push(truncate(
                        &format!(
                            "go test -list gave no test list for {}",
                            unexplained.join(", ")
                        ),
                        1000,
                    ));
                }
                if !exit_ok || !unexplained.is_empty() {
                    problems.push(exit_problem("go test -list", captured));
                }
            }
            report.invocations.push(ran.invocation);
        }
        // Subtests exist only when their parent runs: run the parents that may have them.
        for (p, declared) in &listed {
            let parents = subtest_parents(p, declared, scoped.as_ref());
            if parents.is_empty() {
                continue;
            }
            let (subtests, problem) =
                self.discover_subtests(ctx, p, &parents, &mut report.invocations);
            for (name, top) in subtests {
                tests.insert(TestCase {
                    id: format!("{} {}", p.import_path, name),
                    file: declared.get(&top).and_then(|f| worktree_relative(ctx, f)),
                });
            }
            problems.extend(problem);
        }
        report.tests = tests.into_iter().collect();
        report.build_failure = merge_failures(failures);
        report.problem = join_problems(problems);
        report
    }

    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
        let mut report = RunReport::not_observed(ids);
        // Requested ids per package, as (id, name levels); malformed ids stay NotObserved.
        let mut wanted: BTreeMap<&str, Vec<(&str, Vec<&str>)>> = BTreeMap::new();
        for id in ids {
            if let Some((pkg, levels)) = parse_id(id) {
                wanted.entry(pkg).or_default().push((id.as_str(), levels));
            }
        }
        if wanted.is_empty() {
            return report;
        }
        // 1. Where the packages are, and what their test files declare.
        let patterns: Vec<OsString> = wanted.keys().map(OsString::from).collect();
        let packages = match go_list(ctx, &self.config.args, &patterns, &mut report.invocations) {
            Ok(p) => p,
            Err(problem) => {
                report.problem = Some(problem);
                return report;
            }
        };
        let by_path: BTreeMap<&str, &GoPackage> = packages
            .iter()
            .map(|p| (p.import_path.as_str(), p))
            .collect();
        let mut problems = Vec::new();
        let mut failures = Vec::new();
        for (pkg, wanted) in &wanted {
            let Some(info) = by_path.get(pkg) else {
                continue;
            };
            let Some(dir) = info.dir_in(ctx) else {
                continue;
            };
            if !info.has_tests() {
                continue;
            }
            if !info.errors.is_empty() {
                for (id, _) in wanted {
                    report.outcomes.insert(id.to_string(), Outcome::BuildFail);
                }
                failures.push(info.load_failure(ctx));
                continue;
            }
            let declared = info.declared_tests();
            // 2. One command per parent: the top-level ids together, subtests by parent.
            let mut groups: BTreeMap<Vec<&str>, Vec<(&str, &str)>> = BTreeMap::new();
            for (id, levels) in wanted {
                let Some((last, parents)) = levels.split_last() else {
                    continue;
                };
                if !levels
                    .first()
                    .is_some_and(|top| declared.contains_key(*top))
                {
                    continue;
                }
                groups.entry(parents.to_vec()).or_default().push((id, last));
            }
            for (parents, members) in &groups {
                let lasts: Vec<&str> = members.iter().map(|(_, l)| *l).collect();
                let mut args: Vec<OsString> = ["test", "-json", "-count=1", "-run"]
                    .map(OsString::from)
                    .to_vec();
                args.push(OsString::from(run_pattern(parents, &lasts)));
                args.extend(self.config.args.iter().map(OsString::from));
                args.push(OsString::from(pkg));
                let ran = exec(ctx, OsStr::new("go"), &args, &ctx.dir, &go_env(&ctx.env));
                let what = format!("go test {pkg}");
                if let Some(p) = ran.operational_problem(&what) {
                    problems.push(p);
                    report.invocations.push(ran.invocation);
                    continue;
                }
                let captured = ran.captured();
                let out = parse_test_json(&captured.stdout_lossy());
                let stderr = captured.stderr_lossy();
                // Full test names (`TestA/x`) back to the ids that asked for them.
                let names: Vec<(String, &str)> = members
                    .iter()
                    .map(|(id, _)| {
                        let name = id.split_once(' ').map_or("", |(_, n)| n);
                        (name.to_string(), *id)
                    })
                    .collect();
                let name_refs: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
                let judged = judge_run(pkg, &out, &stderr, captured.exit_code, &name_refs);
                if judged.build_failed {
                    let dirs = package_dirs(&packages);
                    failures.push(build_failure(ctx, &out.build_text(&stderr), &dirs, &dir));
                }
                if let Some(p) = judged.problem {
                    problems.push(format!("{what}: {p}"));
                }
                for (name, id) in &names {
                    if let Some(o) = judged.outcomes.get(name.as_str()) {
                        report.outcomes.insert(id.to_string(), *o);
                    }
                    if let Some(m) = judged.messages.get(name.as_str()) {
                        report.messages.insert(id.to_string(), m.clone());
                    }
                    if let Some(k) = judged.kinds.get(name.as_str()) {
                        report.failure_kinds.insert(id.to_string(), *k);
                    }
                }
                report.invocations.push(ran.invocation);
            }
        }
        report.build_failure = merge_failures(failures);
        report.problem = join_problems(problems);
        report
    }

    /// The top-level test function: `TestParent` for `TestParent/sub`.
    fn test_item(&self, id: &str) -> Option<String> {
        parse_id(id).and_then(|(_, levels)| levels.first().map(|top| top.to_string()))
    }

    /// The file's `Test*` functions and imports, from go's own `go/parser` (see [`goparse`]).
    fn item_map(&self, ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
        goparse::item_map(ctx, &ctx.dir.join(rel_path))
    }
}

impl GoTest {
    /// Runs the given top-level tests of one package and returns the subtests they
    /// reported (`TestA/x`, `TestA/x/y`, as go spells them), each with its top-level test, and a
    /// problem when the run cannot be read to the end (a timeout, a panic, `os.Exit`): subtests
    /// that would have run after that point are unknown, those before it are still returned.
    fn discover_subtests(
        &self,
        ctx: &RunCtx,
        p: &GoPackage,
        parents: &[&str],
        invocations: &mut Vec<Invocation>,
    ) -> (Vec<(String, String)>, Option<String>) {
        let mut args: Vec<OsString> = ["test", "-json", "-count=1", "-run"]
            .map(OsString::from)
            .to_vec();
        args.push(OsString::from(run_pattern(&[], parents)));
        args.extend(self.config.args.iter().map(OsString::from));
        args.push(OsString::from(&p.import_path));
        let ran = exec(ctx, OsStr::new("go"), &args, &ctx.dir, &go_env(&ctx.env));
        let what = format!("finding the subtests of {}", p.import_path);
        let result = if let Some(problem) = ran.operational_problem(&what) {
            (Vec::new(), Some(problem))
        } else {
            let captured = ran.captured();
            let out = parse_test_json(&captured.stdout_lossy());
            let judged = judge_run(
                &p.import_path,
                &out,
                &captured.stderr_lossy(),
                captured.exit_code,
                parents,
            );
            // A panic ends the test binary: what would have run after it is unknown.
            let terminal = out.terminal(&p.import_path);
            let unrun: Vec<&str> = parents
                .iter()
                .copied()
                .filter(|t| !terminal.contains_key(t))
                .collect();
            let panicked = out
                .events
                .iter()
                .filter(|e| e.package == p.import_path && e.action == "output")
                .filter_map(|e| e.output.as_deref())
                .find(|o| o.starts_with("panic: "));
            let problem = match (judged.problem, panicked) {
                (Some(problem), _) => Some(format!("{what}: {problem}")),
                _ if judged.build_failed => Some(format!("{what}: the tests did not build")),
                (None, Some(panic)) => Some(truncate(
                    &format!(
                        "{what}: the test binary stopped at `{}`{}",
                        panic.trim(),
                        if unrun.is_empty() {
                            String::new()
                        } else {
                            format!(" before running {}", unrun.join(", "))
                        }
                    ),
                    1000,
                )),
                (None, None) => None,
            };
            (subtests_run(&out, &p.import_path, parents), problem)
        };
        invocations.push(ran.invocation);
        result
    }
}

// ---------------------------------------------------------------------------------------------
// Ids, names, patterns
// ---------------------------------------------------------------------------------------------

/// Whether a `/`-separated path relative to the runner's root belongs to the test suite.
pub(super) fn is_go_test_file(rel_path: &str) -> bool {
    let parts: Vec<&str> = rel_path.split('/').filter(|p| !p.is_empty()).collect();
    let Some((base, dirs)) = parts.split_last() else {
        return false;
    };
    base.ends_with("_test.go") || dirs.contains(&"testdata")
}

/// `(import path, name levels)` of an id: `example.com/m/pkg TestA/sub` →
/// `("example.com/m/pkg", ["TestA", "sub"])`. `None` for anything that is not a plain import
/// path and a `Test*` name (a pattern such as `./...` or `all` would make go run other packages).
pub(super) fn parse_id(id: &str) -> Option<(&str, Vec<&str>)> {
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
pub(super) fn is_test_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("Test") else {
        return false;
    };
    if rest.chars().next().is_some_and(char::is_lowercase) {
        return false;
    }
    name.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// `regexp.QuoteMeta`: a backslash before each of `\.+*?()|[]{}^$`.
pub(super) fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if r"\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The `-run` value that selects exactly `lasts` below `parents`: `^A$/^(x|y)$`.
pub(super) fn run_pattern(parents: &[&str], lasts: &[&str]) -> String {
    let mut levels: Vec<String> = parents
        .iter()
        .map(|p| format!("^{}$", quote_meta(p)))
        .collect();
    let mut quoted: Vec<String> = lasts.iter().map(|l| quote_meta(l)).collect();
    quoted.sort();
    quoted.dedup();
    levels.push(match quoted.as_slice() {
        [one] => format!("^{one}$"),
        many => format!("^({})$", many.join("|")),
    });
    levels.join("/")
}

/// The test functions a test file declares, from `func TestName(` at the start of a line
/// (`func TestName[` too: go refuses generic tests, but the name is still declared).
pub(super) fn declared_in(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in source.lines() {
        let Some(rest) = line.strip_prefix("func") else {
            continue;
        };
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let rest = rest.trim_start();
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, after) = rest.split_at(end);
        if is_test_name(name) && after.trim_start().starts_with(['(', '[']) {
            out.push(name.to_string());
        }
    }
    out
}

/// The `Test*` functions whose text calls `.Run(`: each one's text runs from its declaration to
/// the next top-level `func` (so it may include what follows it, never less than its body).
pub(super) fn run_callers(source: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut current: Option<String> = None;
    for line in source.lines() {
        if line.starts_with("func") {
            current = declared_in(line).into_iter().next();
        }
        if let Some(name) = &current {
            if line.contains(".Run(") {
                out.insert(name.clone());
            }
        }
    }
    out
}

/// The subtests a run reported for the given top-level tests: every `run` event of the package
/// whose test has a `/` below one of them (a name that is no valid id is left out), with its
/// top-level test.
pub(super) fn subtests_run(out: &TestJson, pkg: &str, parents: &[&str]) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for e in &out.events {
        let Some(test) = e.test.as_deref() else {
            continue;
        };
        if e.package != pkg || e.action != "run" {
            continue;
        }
        let Some((top, _)) = test.split_once('/') else {
            continue;
        };
        if !parents.contains(&top) || parse_id(&format!("{pkg} {test}")).is_none() {
            continue;
        }
        if !found.iter().any(|(t, _)| t == test) {
            found.push((test.to_string(), top.to_string()));
        }
    }
    found
}

/// What a [`ListScope::Files`] selects: the packages' directories (canonical), the named
/// `_test.go` files (canonical), and the directories named through another file (a source file,
/// a `testdata` fixture).
#[derive(Debug, Clone, Default)]
pub(super) struct Scoped {
    pub dirs: BTreeSet<PathBuf>,
    pub test_files: BTreeSet<PathBuf>,
    pub by_other: BTreeSet<PathBuf>,
}

/// The package directory a file (relative to the runner's root) belongs to: its directory, or
/// for a file below `testdata`, the directory that holds `testdata`.
pub(super) fn package_dir_of(rel: &str) -> Option<String> {
    let parts: Vec<&str> = rel
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let (_, dirs) = parts.split_last()?;
    let end = dirs
        .iter()
        .position(|d| *d == "testdata")
        .unwrap_or(dirs.len());
    Some(dirs[..end].join("/"))
}

/// The packages that hold the scope's files; `None` (list everything) when a file lies in no
/// package go knows.
fn scope_packages(ctx: &RunCtx, files: &[String], packages: &[GoPackage]) -> Option<Scoped> {
    let known: BTreeSet<PathBuf> = packages.iter().map(GoPackage::canonical_dir).collect();
    let mut scoped = Scoped::default();
    for f in files {
        let dir = ctx.dir.join(package_dir_of(f)?);
        let dir = dir.canonicalize().unwrap_or(dir);
        if !known.contains(&dir) {
            return None;
        }
        if f.ends_with("_test.go") && !f.split('/').any(|p| p == "testdata") {
            let path = ctx.dir.join(f);
            scoped
                .test_files
                .insert(path.canonicalize().unwrap_or(path));
        } else {
            scoped.by_other.insert(dir.clone());
        }
        scoped.dirs.insert(dir);
    }
    Some(scoped)
}

/// The top-level tests of a package to run for its subtests. With a scope: every test declared
/// in a named test file (the tag is in it, and a table's rows may be run by a helper elsewhere),
/// and in a package named through another file, the tests that call `.Run(`. Without one
/// (every package): only the tests that call `.Run(` themselves, so that the cost stays one run
/// of the table-driven tests.
fn subtest_parents<'a>(
    p: &GoPackage,
    declared: &'a BTreeMap<String, PathBuf>,
    scoped: Option<&Scoped>,
) -> Vec<&'a str> {
    let by_other = scoped.is_none_or(|s| s.by_other.contains(&p.canonical_dir()));
    let mut callers: BTreeMap<&Path, BTreeSet<String>> = BTreeMap::new();
    let mut out = Vec::new();
    for (name, file) in declared {
        let named = scoped.is_some_and(|s| {
            s.test_files
                .contains(&file.canonicalize().unwrap_or_else(|_| file.clone()))
        });
        let calls_run = by_other
            && callers
                .entry(file.as_path())
                .or_insert_with(|| {
                    std::fs::read(file)
                        .map(|b| run_callers(&String::from_utf8_lossy(&b)))
                        .unwrap_or_default()
                })
                .contains(name);
        if named || calls_run {
            out.push(name.as_str());
        }
    }
    out
}

/// `GOTOOLCHAIN=local` unless the caller or our environment chose a toolchain.
fn go_env(env: &[(OsString, OsString)]) -> Vec<(OsString, OsString)> {
    let chosen =
        env.iter().any(|(k, _)| k == "GOTOOLCHAIN") || std::env::var_os("GOTOOLCHAIN").is_some();
    if chosen {
        Vec::new()
    } else {
        vec![(OsString::from("GOTOOLCHAIN"), OsString::from("local"))]
    }
}

/// The runner arguments `go list` must see too: the ones that change which files a package has
/// or how modules resolve.
pub(super) fn list_flags(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        let flag = a.trim_start_matches('-');
        if !a.starts_with('-') {
            continue;
        }
        let name = flag.split('=').next().unwrap_or("");
        if !matches!(name, "tags" | "mod" | "modfile") {
            continue;
        }
        out.push(a.clone());
        if !flag.contains('=') {
            if let Some(v) = iter.next() {
                out.push(v.clone());
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// go list
// ---------------------------------------------------------------------------------------------

/// One package `go list` reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct GoPackage {
    pub import_path: String,
    pub dir: Option<PathBuf>,
    /// Why the package, or a package it imports, could not be loaded (or does not exist):
    /// `Error`, then `DepsErrors`. `go test` stops altogether when any package it is given has
    /// one, so such packages are never given to it.
    pub errors: Vec<LoadError>,
    /// `TestGoFiles` and `XTestGoFiles`: file names in `dir`.
    pub test_files: Vec<String>,
    /// `InvalidGoFiles`: files in `dir` that could not be loaded.
    pub invalid_files: Vec<String>,
}

/// A load error `go list -e` reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct LoadError {
    pub message: String,
    /// Where it points, as go printed it (`dir/x.go:3:2`, relative to where go ran).
    pub pos: Option<String>,
}

impl GoPackage {
    fn has_tests(&self) -> bool {
        !self.test_files.is_empty()
    }

    /// The directory, canonical where it exists (empty when go reported none).
    fn canonical_dir(&self) -> PathBuf {
        let dir = self.dir.clone().unwrap_or_default();
        dir.canonicalize().unwrap_or(dir)
    }

    /// The directory, when it exists inside the worktree.
    fn dir_in(&self, ctx: &RunCtx) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        // The module root itself is inside the worktree too (its relative path is empty).
        let at_root = [Some(ctx.worktree.clone()), ctx.worktree.canonicalize().ok()]
            .iter()
            .flatten()
            .any(|w| w == dir || dir.canonicalize().ok().as_ref() == Some(w));
        (dir.is_dir() && (at_root || worktree_relative(ctx, dir).is_some())).then(|| dir.clone())
    }

    /// Each declared `Test*` name and the file that declares it (the first, in go's file order).
    fn declared_tests(&self) -> BTreeMap<String, PathBuf> {
        let mut out = BTreeMap::new();
        let Some(dir) = &self.dir else {
            return out;
        };
        for f in &self.test_files {
            let path = dir.join(f);
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            for name in declared_in(&String::from_utf8_lossy(&bytes)) {
                out.entry(name).or_insert_with(|| path.clone());
            }
        }
        out
    }

    /// A package that cannot be loaded: the files its error names, else its directory.
    fn load_failure(&self, ctx: &RunCtx) -> BuildFailure {
        let mut files = BTreeSet::new();
        let mut positioned: Vec<Positioned> = Vec::new();
        for e in &self.errors {
            if let Some(f) = e.pos.as_deref().and_then(diagnostic_file) {
                files.extend(resolve(ctx, &ctx.dir, f));
            }
            if let Some((f, line, col, _)) = e.pos.as_deref().and_then(diagnostic_position) {
                positioned.push(Positioned {
                    printed: f.to_string(),
                    line,
                    column: col,
                    message: e.message.clone(),
                    block: None,
                });
            }
        }
        if let Some(dir) = &self.dir {
            for f in &self.invalid_files {
                files.extend(worktree_relative(ctx, &dir.join(f)));
            }
            if files.is_empty() {
                files.insert(dir_label(ctx, dir));
            }
        }
        BuildFailure {
            diagnostics: diagnostics_in(ctx, &positioned, &BTreeMap::new()),
            diagnostic_files: files.into_iter().collect(),
            excerpt: truncate(
                &format!(
                    "{}: {}",
                    self.import_path,
                    self.errors
                        .iter()
                        .map(|e| match &e.pos {
                            Some(p) => format!("{p}: {}", e.message),
                            None => e.message.clone(),
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
                4000,
            ),
        }
    }
}

/// `go list -e <fields> <list flags> <patterns>` in `ctx.dir`; an error text when go list itself
/// failed (no module, a broken `go.mod`).
fn go_list(
    ctx: &RunCtx,
    args: &[String],
    patterns: &[OsString],
    invocations: &mut Vec<Invocation>,
) -> Result<Vec<GoPackage>, String> {
    let mut argv: Vec<OsString> = vec![
        OsString::from("list"),
        OsString::from("-e"),
        OsString::from(LIST_FIELDS),
    ];
    argv.extend(list_flags(args).into_iter().map(OsString::from));
    argv.extend(patterns.iter().cloned());
    let ran = exec(ctx, OsStr::new("go"), &argv, &ctx.dir, &go_env(&ctx.env));
    let result = if let Some(p) = ran.operational_problem("go list") {
        Err(p)
    } else if !ran.captured().success() {
        Err(exit_problem("go list", ran.captured()))
    } else {
        Ok(parse_go_list(&ran.captured().stdout_lossy()))
    };
    invocations.push(ran.invocation);
    result
}

/// The stream of JSON objects `go list -json` prints (not one per line: indented objects one
/// after another). Reading stops at the first thing that is not JSON.
pub(super) fn parse_go_list(stdout: &str) -> Vec<GoPackage> {
    let strings = |v: &Value, key: &str| -> Vec<String> {
        v.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for v in serde_json::Deserializer::from_str(stdout).into_iter::<Value>() {
        let Ok(v) = v else { break };
        let Some(import_path) = v.get("ImportPath").and_then(Value::as_str) else {
            continue;
        };
        let load_error = |e: &Value| LoadError {
            message: e
                .get("Err")
                .and_then(Value::as_str)
                .unwrap_or("unknown error")
                .to_string(),
            pos: e
                .get("Pos")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        };
        let mut errors: Vec<LoadError> = v.get("Error").map(load_error).into_iter().collect();
        if let Some(deps) = v.get("DepsErrors").and_then(Value::as_array) {
            errors.extend(deps.iter().map(load_error));
        }
        let mut test_files = strings(&v, "TestGoFiles");
        test_files.extend(strings(&v, "XTestGoFiles"));
        out.push(GoPackage {
            import_path: import_path.to_string(),
            dir: v
                .get("Dir")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            errors,
            test_files,
            invalid_files: strings(&v, "InvalidGoFiles"),
        });
    }
    out
}

fn package_dirs(packages: &[GoPackage]) -> BTreeMap<String, PathBuf> {
    packages
        .iter()
        .filter_map(|p| Some((p.import_path.clone(), p.dir.clone()?)))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// test2json events
// ---------------------------------------------------------------------------------------------

/// One `go test -json` event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Event {
    pub action: String,
    pub package: String,
    /// `None` for the package's own events.
    pub test: Option<String>,
    pub output: Option<String>,
    /// Go 1.24+ `build-output` / `build-fail` events name the package being built here.
    pub import_path: Option<String>,
    /// Go 1.24+: set on a package's `fail` event when its build failed.
    pub failed_build: Option<String>,
}

/// What `go test -json` printed on stdout: its events, and the lines that are not events (the
/// go command's own `FAIL <pkg> [build failed]` lines).
#[derive(Debug, Clone, Default)]
pub(super) struct TestJson {
    pub events: Vec<Event>,
    pub raw: Vec<String>,
}

pub(super) fn parse_test_json(stdout: &str) -> TestJson {
    let mut out = TestJson::default();
    for line in stdout.lines() {
        let line = line.trim_end_matches('\r');
        match parse_event(line) {
            Some(e) => out.events.push(e),
            None => {
                if !line.trim().is_empty() {
                    out.raw.push(line.to_string());
                }
            }
        }
    }
    out
}

fn parse_event(line: &str) -> Option<Event> {
    if !line.starts_with('{') {
        return None;
    }
    let v: Value = serde_json::from_str(line).ok()?;
    let text = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Some(Event {
        action: text("Action")?,
        package: text("Package").unwrap_or_default(),
        test: text("Test"),
        output: v.get("Output").and_then(Value::as_str).map(str::to_string),
        import_path: text("ImportPath"),
        failed_build: text("FailedBuild"),
    })
}

impl TestJson {
    /// The package's own last `pass`, `fail` or `skip`.
    fn package_result(&self, pkg: &str) -> Option<&str> {
        self.events
            .iter()
            .rev()
            .find(|e| {
                e.package == pkg
                    && e.test.is_none()
                    && matches!(e.action.as_str(), "pass" | "fail" | "skip")
            })
            .map(|e| e.action.as_str())
    }

    /// The names a package's test binary printed for `-list` (its package-level output lines).
    fn listed_names(&self, pkg: &str) -> Vec<&str> {
        self.events
            .iter()
            .filter(|e| e.package == pkg && e.test.is_none() && e.action == "output")
            .filter_map(|e| e.output.as_deref())
            .flat_map(str::lines)
            .map(str::trim)
            .filter(|l| is_test_name(l))
            .collect()
    }

    /// The terminal actions (`pass`, `fail`, `skip`) of each test of a package, in order.
    fn terminal(&self, pkg: &str) -> BTreeMap<&str, Vec<&str>> {
        let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for e in &self.events {
            let Some(test) = &e.test else { continue };
            if e.package == pkg && matches!(e.action.as_str(), "pass" | "fail" | "skip") {
                out.entry(test.as_str())
                    .or_default()
                    .push(e.action.as_str());
            }
        }
        out
    }

    /// Why a package's run ended early, for problems: the tests that started but never ended
    /// (the binary exited or was stopped during them) and the first `panic:` line.
    fn crash_note(&self, pkg: &str, terminal: &BTreeMap<&str, Vec<&str>>) -> String {
        let mut unfinished: Vec<&str> = Vec::new();
        for e in &self.events {
            if let (Some(t), "run") = (&e.test, e.action.as_str()) {
                if e.package == pkg
                    && !terminal.contains_key(t.as_str())
                    && !unfinished.contains(&t.as_str())
                {
                    unfinished.push(t);
                }
            }
        }
        let panic = self
            .events
            .iter()
            .filter(|e| e.package == pkg && e.action == "output")
            .filter_map(|e| e.output.as_deref())
            .find(|o| o.starts_with("panic: "));
        let mut note = String::new();
        if !unfinished.is_empty() {
            note.push_str(&format!("; did not finish: {}", unfinished.join(", ")));
        }
        if let Some(p) = panic {
            note.push_str("; ");
            note.push_str(p.trim());
        }
        truncate(&note, 1000)
    }

    /// The output lines of one test.
    fn test_output(&self, pkg: &str, test: &str) -> Vec<&str> {
        self.events
            .iter()
            .filter(|e| e.package == pkg && e.test.as_deref() == Some(test) && e.action == "output")
            .filter_map(|e| e.output.as_deref())
            .flat_map(str::lines)
            .collect()
    }

    /// The compiler's and vet's text: stderr (go 1.19–1.23), plus `build-output` events (1.24+).
    fn build_text(&self, stderr: &str) -> String {
        let mut text = stderr.to_string();
        for e in self.events.iter().filter(|e| e.action == "build-output") {
            if let Some(o) = &e.output {
                text.push_str(o);
            }
        }
        text
    }
}

/// `FAIL\t<pkg> [build failed]` / `[setup failed]`: the package.
pub(super) fn fail_marker(line: &str) -> Option<&str> {
    let rest = line.trim_end().strip_prefix("FAIL")?;
    if !rest.starts_with([' ', '\t']) {
        return None;
    }
    let (pkg, reason) = rest.trim_start().split_once(" [")?;
    matches!(reason, "build failed]" | "setup failed]").then_some(pkg.trim())
}

/// The packages whose test binary could not be built: from the go command's own lines (stdout
/// lines that are not events, stderr) and its build events; never from a test's output.
pub(super) fn build_failed_packages(out: &TestJson, stderr: &str) -> BTreeSet<String> {
    let mut failed: BTreeSet<String> = out
        .raw
        .iter()
        .map(String::as_str)
        .chain(stderr.lines())
        .filter_map(fail_marker)
        .map(str::to_string)
        .collect();
    let strip = |s: &str| s.split(" [").next().unwrap_or(s).trim().to_string();
    for e in &out.events {
        if e.action == "build-fail" {
            if let Some(p) = &e.import_path {
                failed.insert(strip(p));
            }
        }
        if e.action == "fail" && e.test.is_none() && e.failed_build.is_some() {
            failed.insert(e.package.clone());
        }
    }
    failed
}

/// What one `go test -run` command observed of its requested tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Judged {
    /// By full test name (`TestA`, `TestA/x`).
    pub outcomes: BTreeMap<String, Outcome>,
    pub messages: BTreeMap<String, String>,
    /// For failed names: a panic (in the test or a subtest of it) is an exception, anything
    /// else (`t.Error`, `t.Fatal`) an assertion.
    pub kinds: BTreeMap<String, FailureKind>,
    pub build_failed: bool,
    pub problem: Option<String>,
}

/// Decides each requested name of one package's command (see the module doc).
pub(super) fn judge_run(
    pkg: &str,
    out: &TestJson,
    stderr: &str,
    exit_code: Option<i32>,
    names: &[&str],
) -> Judged {
    let mut judged = Judged {
        outcomes: names
            .iter()
            .map(|n| (n.to_string(), Outcome::NotObserved))
            .collect(),
        ..Judged::default()
    };
    let terminal = out.terminal(pkg);
    let any_failed = terminal.values().any(|a| a.contains(&"fail"));
    let any_passed = terminal.values().any(|a| a.contains(&"pass"));
    if build_failed_packages(out, stderr).contains(pkg) {
        if exit_code == Some(0) || any_passed {
            judged.problem = Some(format!(
                "go reported a build failure, but exit code {} and {} passed test(s)",
                code_str(exit_code),
                terminal.values().filter(|a| a.contains(&"pass")).count()
            ));
            return judged;
        }
        judged.build_failed = true;
        for o in judged.outcomes.values_mut() {
            *o = Outcome::BuildFail;
        }
        return judged;
    }
    let result = out.package_result(pkg);
    // The exit code must agree with the events (the contract), and the package's own result
    // with both.
    let by_contract = GO.agree(exit_code, any_failed).is_ok();
    let agrees = match result {
        Some("pass") => by_contract && !any_failed,
        // No test files: nothing ran.
        Some("skip") => exit_code == Some(0) && terminal.is_empty(),
        Some("fail") => by_contract && any_failed,
        _ => false,
    };
    if !agrees {
        judged.problem = Some(format!(
            "exit code {} disagrees with the package's result ({}) and {} failed test(s){}{}",
            code_str(exit_code),
            result.unwrap_or("none"),
            terminal.values().filter(|a| a.contains(&"fail")).count(),
            out.crash_note(pkg, &terminal),
            stderr_tail(stderr)
        ));
    }
    for name in names {
        let outcome = match terminal.get(name) {
            Some(actions) if actions.contains(&"fail") => Outcome::Fail,
            Some(actions) if agrees && actions.iter().all(|a| *a == "pass") => Outcome::Pass,
            _ => Outcome::NotObserved,
        };
        if outcome == Outcome::Fail {
            if let Some(m) = failure_message(out, pkg, name) {
                judged.messages.insert(name.to_string(), m);
            }
            judged
                .kinds
                .insert(name.to_string(), failure_kind(out, pkg, name));
        }
        judged.outcomes.insert(name.to_string(), outcome);
    }
    judged
}

/// A failed test's message: its first `panic:` line, else its first line of its own; else its
/// first failed subtest's, prefixed with the subtest's name.
fn failure_message(out: &TestJson, pkg: &str, name: &str) -> Option<String> {
    let own: Vec<&str> = out
        .test_output(pkg, name)
        .into_iter()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.starts_with("=== ")
                && !l.starts_with("--- FAIL")
                && !l.starts_with("--- PASS")
                && !l.starts_with("--- SKIP")
        })
        .collect();
    let panic = own
        .iter()
        .find(|l| l.starts_with("panic: "))
        .map(|l| l.trim_end_matches(" [recovered]"));
    if let Some(line) = panic.or_else(|| own.first().copied()) {
        return first_message_line(Some(line), None);
    }
    // The first subtest to fail (the deepest comes first: a parent ends after its subtests).
    let prefix = format!("{name}/");
    let sub = out
        .events
        .iter()
        .filter(|e| e.package == pkg && e.action == "fail")
        .filter_map(|e| e.test.as_deref())
        .find(|t| t.starts_with(&prefix))?;
    let m = failure_message(out, pkg, sub)?;
    first_message_line(Some(&format!("{}: {m}", &sub[prefix.len()..])), None)
}

/// A panic line in the test's own output or in a subtest's makes the failure an exception.
fn failure_kind(out: &TestJson, pkg: &str, name: &str) -> FailureKind {
    let prefix = format!("{name}/");
    let panicked = out
        .events
        .iter()
        .filter(|e| e.package == pkg && e.action == "output")
        .filter(|e| {
            e.test
                .as_deref()
                .is_some_and(|t| t == name || t.starts_with(&prefix))
        })
        .filter_map(|e| e.output.as_deref())
        .flat_map(str::lines)
        .any(|l| l.trim_start().starts_with("panic: "));
    if panicked {
        FailureKind::Exception
    } else {
        FailureKind::Assertion
    }
}

fn stderr_tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        ": {}",
        truncate(&lines[lines.len().saturating_sub(5)..].join("\n"), 1500)
    )
}

// ---------------------------------------------------------------------------------------------
// Compiler diagnostics
// ---------------------------------------------------------------------------------------------

/// What the compiler's (and vet's) text says, per error line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Diagnostics {
    /// Files the error lines point into, as go printed them (relative to its working directory,
    /// or absolute).
    pub files: Vec<String>,
    /// For each error line that names no file, the import path of the `# <pkg>` block it is in.
    pub without_file: Vec<Option<String>>,
    /// Each error line with a position, in go's order.
    pub positioned: Vec<Positioned>,
}

/// One error line with a position, as go printed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Positioned {
    /// The file as printed (relative to where go ran, or absolute).
    pub printed: String,
    pub line: u32,
    pub column: Option<u32>,
    pub message: String,
    /// The import path of the `# <pkg>` block it is in.
    pub block: Option<String>,
}

/// Reads go's build output: `# <pkg>` headers, `path.go:12:3: message` lines, indented
/// continuation lines, and anything else as an error that names no file.
pub(super) fn parse_diagnostics(text: &str) -> Diagnostics {
    let mut d = Diagnostics::default();
    let mut block: Option<String> = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with([' ', '\t']) {
            continue;
        }
        if let Some(h) = line.strip_prefix("# ") {
            block = Some(h.split(" [").next().unwrap_or(h).trim().to_string());
            continue;
        }
        if fail_marker(line).is_some()
            || line == "FAIL"
            || line.starts_with("FAIL\t")
            || line.starts_with("ok ")
            || line.starts_with("?   ")
            || line.starts_with("note: ")
            || line.starts_with("go: downloading ")
            || line.contains("too many errors")
        {
            continue;
        }
        match diagnostic_file(line) {
            Some(f) => {
                if !d.files.iter().any(|x| x == f) {
                    d.files.push(f.to_string());
                }
                if let Some((file, l, col, message)) = diagnostic_position(line) {
                    d.positioned.push(Positioned {
                        printed: file.to_string(),
                        line: l,
                        column: col,
                        message: message.to_string(),
                        block: block.clone(),
                    });
                }
            }
            None => d.without_file.push(block.clone()),
        }
    }
    d
}

/// The file of `path.go:12:3: message` (also `vet: path.go:…`, `go.mod:3: …`, a bare
/// `path.go:12:3` position).
pub(super) fn diagnostic_file(line: &str) -> Option<&str> {
    let line = line.strip_prefix("vet: ").unwrap_or(line);
    let (path, rest) = line.split_once(':')?;
    let lineno = rest.split(':').next()?;
    let known = [".go", ".s", ".c", ".h", "go.mod", "go.work", "go.sum"];
    (!path.is_empty()
        && !path.contains(char::is_whitespace)
        && known.iter().any(|k| path.ends_with(k))
        && !lineno.is_empty()
        && lineno.chars().all(|c| c.is_ascii_digit()))
    .then_some(path)
}

/// The position and message of `path.go:12:3: message` (`path.go:12: message`, `vet: …`, a bare
/// position); `None` where [`diagnostic_file`] finds no file.
pub(super) fn diagnostic_position(line: &str) -> Option<(&str, u32, Option<u32>, &str)> {
    let file = diagnostic_file(line)?;
    let line = line.strip_prefix("vet: ").unwrap_or(line);
    let rest = line.get(file.len() + 1..)?;
    let mut parts = rest.splitn(3, ':');
    let l: u32 = parts.next()?.parse().ok()?;
    let (col, message) = match (parts.next(), parts.next()) {
        (Some(c), Some(m)) if !c.is_empty() && c.chars().all(|x| x.is_ascii_digit()) => {
            (c.parse().ok(), m)
        }
        (Some(c), Some(m)) => (None, &rest[rest.len() - c.len() - m.len() - 1..]),
        (Some(c), None) if !c.is_empty() && c.chars().all(|x| x.is_ascii_digit()) => {
            (c.parse().ok(), "")
        }
        (Some(m), None) => (None, m),
        _ => (None, ""),
    };
    Some((file, l, col, message.trim()))
}

/// Where a printed path is, repo-relative: go 1.19 prints it relative to where it runs
/// (`ctx.dir`); where no such file exists, relative to the directory of the package whose
/// `# <pkg>` block it is in (the compiler's own `./x_test.go`, in case go leaves it so).
fn locate(
    ctx: &RunCtx,
    printed: &str,
    block: Option<&str>,
    dirs: &BTreeMap<String, PathBuf>,
) -> Option<String> {
    let p = Path::new(printed);
    if p.is_absolute() || ctx.dir.join(p).is_file() {
        return resolve(ctx, &ctx.dir, printed);
    }
    match block.and_then(|b| dirs.get(b)) {
        Some(dir) if dir.join(p).is_file() => resolve(ctx, dir, printed),
        _ => resolve(ctx, &ctx.dir, printed),
    }
}

/// The diagnostics of positions inside the worktree (see [`locate`]), each once.
fn diagnostics_in(
    ctx: &RunCtx,
    positioned: &[Positioned],
    dirs: &BTreeMap<String, PathBuf>,
) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for p in positioned {
        let Some(file) = locate(ctx, &p.printed, p.block.as_deref(), dirs) else {
            continue;
        };
        let d = Diagnostic {
            file,
            line: p.line,
            column: p.column,
            message: first_message_line(Some(&p.message), None).unwrap_or_default(),
            names: Vec::new(),
        };
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// A path go printed (relative to `base`, or absolute), repo-relative when inside the worktree.
fn resolve(ctx: &RunCtx, base: &Path, printed: &str) -> Option<String> {
    let p = Path::new(printed);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    worktree_relative(ctx, &abs)
}

/// A directory, repo-relative (the worktree itself as `.`).
fn dir_label(ctx: &RunCtx, dir: &Path) -> String {
    worktree_relative(ctx, dir).unwrap_or_else(|| ".".to_string())
}

/// The build failure of one command: the files its errors point into (resolved from `ctx.dir`,
/// where go ran); for an error without a file, its package's directory (`fallback` when the
/// package is unknown); and the text as the excerpt.
fn build_failure(
    ctx: &RunCtx,
    text: &str,
    dirs: &BTreeMap<String, PathBuf>,
    fallback: &Path,
) -> BuildFailure {
    let d = parse_diagnostics(text);
    let mut files: BTreeSet<String> = d
        .files
        .iter()
        .filter_map(|f| {
            let block = d
                .positioned
                .iter()
                .find(|p| &p.printed == f)
                .and_then(|p| p.block.as_deref());
            locate(ctx, f, block, dirs)
        })
        .collect();
    for pkg in &d.without_file {
        let dir = pkg
            .as_ref()
            .and_then(|p| dirs.get(p))
            .map_or(fallback, |d| d);
        files.insert(dir_label(ctx, dir));
    }
    if files.is_empty() {
        files.insert(dir_label(ctx, fallback));
    }
    BuildFailure {
        diagnostics: diagnostics_in(ctx, &d.positioned, dirs),
        diagnostic_files: files.into_iter().collect(),
        excerpt: truncate(text.trim(), 4000),
    }
}

fn merge_failures(failures: Vec<BuildFailure>) -> Option<BuildFailure> {
    if failures.is_empty() {
        return None;
    }
    let mut files = BTreeSet::new();
    let mut excerpt = String::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    for f in failures {
        files.extend(f.diagnostic_files);
        for d in f.diagnostics {
            if !diagnostics.contains(&d) {
                diagnostics.push(d);
            }
        }
        if !excerpt.contains(f.excerpt.as_str()) {
            excerpt.push_str(&f.excerpt);
            excerpt.push_str("\n\n");
        }
    }
    Some(BuildFailure {
        diagnostics,
        diagnostic_files: files.into_iter().collect(),
        excerpt: truncate(excerpt.trim_end(), 4000),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> RunCtx {
        RunCtx {
            worktree: PathBuf::from("/tmp/wt"),
            dir: PathBuf::from("/tmp/wt/gomod"),
            scratch: PathBuf::from("/tmp/scratch"),
            timeout: Duration::from_secs(5),
            env: vec![],
        }
    }

    const PKG: &str = "example.com/m/pkg";

    /// Go 1.19's events for `-run '^(TestPass|TestFail|TestSkip|TestSubs|TestPanic)$'`.
    const MIXED: &str = r#"{"Time":"2026-11-29T23:32:14.07Z","Action":"run","Package":"example.com/m/pkg","Test":"TestPass"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPass","Output":"=== RUN   TestPass\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPass","Output":"--- PASS: TestPass (0.00s)\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"pass","Package":"example.com/m/pkg","Test":"TestPass","Elapsed":0}
{"Time":"2026-11-29T23:32:14.07Z","Action":"run","Package":"example.com/m/pkg","Test":"TestFail"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestFail","Output":"=== RUN   TestFail\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestFail","Output":"    pkg_test.go:13: got 1, want 2\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestFail","Output":"--- FAIL: TestFail (0.00s)\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"fail","Package":"example.com/m/pkg","Test":"TestFail","Elapsed":0}
{"Time":"2026-11-29T23:32:14.07Z","Action":"run","Package":"example.com/m/pkg","Test":"TestSkip"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestSkip","Output":"    pkg_test.go:16: not today\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"skip","Package":"example.com/m/pkg","Test":"TestSkip","Elapsed":0}
{"Time":"2026-11-29T23:32:19.29Z","Action":"run","Package":"example.com/m/pkg","Test":"TestSubs"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"run","Package":"example.com/m/pkg","Test":"TestSubs/ok_case"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"run","Package":"example.com/m/pkg","Test":"TestSubs/bad"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"output","Package":"example.com/m/pkg","Test":"TestSubs/bad","Output":"    pkg_test.go:25: sub failed\n"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"output","Package":"example.com/m/pkg","Test":"TestSubs","Output":"--- FAIL: TestSubs (0.00s)\n"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"pass","Package":"example.com/m/pkg","Test":"TestSubs/ok_case","Elapsed":0}
{"Time":"2026-11-29T23:32:19.29Z","Action":"output","Package":"example.com/m/pkg","Test":"TestSubs/bad","Output":"    --- FAIL: TestSubs/bad (0.00s)\n"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"fail","Package":"example.com/m/pkg","Test":"TestSubs/bad","Elapsed":0}
{"Time":"2026-11-29T23:32:19.29Z","Action":"fail","Package":"example.com/m/pkg","Test":"TestSubs","Elapsed":0}
{"Time":"2026-11-29T23:32:14.07Z","Action":"run","Package":"example.com/m/pkg","Test":"TestPanic"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPanic","Output":"--- FAIL: TestPanic (0.00s)\n"}
{"Time":"2026-11-29T23:32:14.08Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPanic","Output":"panic: assignment to entry in nil map [recovered]\n"}
{"Time":"2026-11-29T23:32:14.08Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPanic","Output":"\tpanic: assignment to entry in nil map\n"}
{"Time":"2026-11-29T23:32:14.08Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPanic","Output":"goroutine 21 [running]:\n"}
{"Time":"2026-11-29T23:32:14.08Z","Action":"fail","Package":"example.com/m/pkg","Test":"TestPanic","Elapsed":0}
{"Time":"2026-11-29T23:32:14.08Z","Action":"output","Package":"example.com/m/pkg","Output":"FAIL\texample.com/m/pkg\t0.007s\n"}
{"Time":"2026-11-29T23:32:14.08Z","Action":"fail","Package":"example.com/m/pkg","Elapsed":0.007}
"#;

    fn outcomes(j: &Judged) -> Vec<(&str, Outcome)> {
        j.outcomes.iter().map(|(k, v)| (k.as_str(), *v)).collect()
    }

    #[test]
    fn events_are_parsed() {
        let out = parse_test_json(MIXED);
        assert_eq!(out.events.len(), 29);
        assert!(out.raw.is_empty());
        assert_eq!(
            out.events[3],
            Event {
                action: "pass".into(),
                package: PKG.into(),
                test: Some("TestPass".into()),
                ..Event::default()
            }
        );
        assert_eq!(out.package_result(PKG), Some("fail"));
        assert_eq!(out.package_result("example.com/m/other"), None);
        let out = parse_test_json("FAIL\texample.com/m/broken [build failed]\n{not json\n\n");
        assert!(out.events.is_empty());
        assert_eq!(
            out.raw,
            vec!["FAIL\texample.com/m/broken [build failed]", "{not json"]
        );
    }

    #[test]
    fn mixed_results() {
        let out = parse_test_json(MIXED);
        let names = [
            "TestPass",
            "TestFail",
            "TestSkip",
            "TestSubs",
            "TestSubs/ok_case",
            "TestSubs/bad",
            "TestPanic",
            "TestNope",
        ];
        let j = judge_run(PKG, &out, "", Some(1), &names);
        assert_eq!(j.problem, None);
        assert!(!j.build_failed);
        assert_eq!(
            outcomes(&j),
            vec![
                ("TestFail", Outcome::Fail),
                ("TestNope", Outcome::NotObserved),
                ("TestPanic", Outcome::Fail),
                ("TestPass", Outcome::Pass),
                ("TestSkip", Outcome::NotObserved),
                ("TestSubs", Outcome::Fail),
                ("TestSubs/bad", Outcome::Fail),
                ("TestSubs/ok_case", Outcome::Pass),
            ]
        );
        assert_eq!(j.messages["TestFail"], "pkg_test.go:13: got 1, want 2");
        assert_eq!(
            j.messages["TestPanic"],
            "panic: assignment to entry in nil map"
        );
        assert_eq!(j.messages["TestSubs/bad"], "pkg_test.go:25: sub failed");
        assert_eq!(j.messages["TestSubs"], "bad: pkg_test.go:25: sub failed");
        assert_eq!(j.messages.len(), 4);
        let kinds: Vec<(&str, FailureKind)> =
            j.kinds.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            kinds,
            vec![
                ("TestFail", FailureKind::Assertion),
                ("TestPanic", FailureKind::Exception),
                ("TestSubs", FailureKind::Assertion),
                ("TestSubs/bad", FailureKind::Assertion),
            ]
        );
    }

    #[test]
    fn exit_code_must_agree() {
        let out = parse_test_json(MIXED);
        // Failures but exit 0, or a signal, or exit 2: no pass is believed, failures stay.
        for code in [Some(0), None, Some(2)] {
            let j = judge_run(PKG, &out, "", code, &["TestPass", "TestFail"]);
            assert!(j.problem.is_some(), "{code:?}");
            assert_eq!(j.outcomes["TestPass"], Outcome::NotObserved);
            assert_eq!(j.outcomes["TestFail"], Outcome::Fail);
        }
        let pass = r#"{"Action":"run","Package":"example.com/m/pkg","Test":"TestPass"}
{"Action":"pass","Package":"example.com/m/pkg","Test":"TestPass","Elapsed":0}
{"Action":"output","Package":"example.com/m/pkg","Output":"PASS\n"}
{"Action":"pass","Package":"example.com/m/pkg","Elapsed":0.01}
"#;
        let out = parse_test_json(pass);
        let j = judge_run(PKG, &out, "", Some(0), &["TestPass"]);
        assert_eq!(j.outcomes["TestPass"], Outcome::Pass);
        assert_eq!(j.problem, None);
        // Exit 1 without a failed test (os.Exit, go's -timeout): nothing is believed.
        let j = judge_run(PKG, &out, "", Some(1), &["TestPass"]);
        assert_eq!(j.outcomes["TestPass"], Outcome::NotObserved);
        assert!(j.problem.is_some());
        // Another package's pass is not this package's.
        let j = judge_run("example.com/m/other", &out, "", Some(0), &["TestPass"]);
        assert_eq!(j.outcomes["TestPass"], Outcome::NotObserved);
    }

    #[test]
    fn crash_after_a_pass_is_not_believed() {
        // TestExit called os.Exit(1): no terminal event for it, the package fails.
        let text = r#"{"Action":"run","Package":"example.com/m/pkg","Test":"TestPass"}
{"Action":"pass","Package":"example.com/m/pkg","Test":"TestPass","Elapsed":0}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestExit"}
{"Action":"output","Package":"example.com/m/pkg","Test":"TestExit","Output":"=== RUN   TestExit\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"FAIL\texample.com/m/pkg\t0.003s\n"}
{"Action":"fail","Package":"example.com/m/pkg","Elapsed":0.003}
"#;
        let j = judge_run(
            PKG,
            &parse_test_json(text),
            "",
            Some(1),
            &["TestPass", "TestExit"],
        );
        assert_eq!(j.outcomes["TestPass"], Outcome::NotObserved);
        assert_eq!(j.outcomes["TestExit"], Outcome::NotObserved);
        assert!(j.problem.is_some());
    }

    #[test]
    fn nothing_matched_is_not_a_pass() {
        let text = r#"{"Action":"output","Package":"example.com/m/pkg","Output":"testing: warning: no tests to run\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"PASS\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"ok  \texample.com/m/pkg\t0.003s [no tests to run]\n"}
{"Action":"pass","Package":"example.com/m/pkg","Elapsed":0.003}
"#;
        let j = judge_run(PKG, &parse_test_json(text), "", Some(0), &["TestNope"]);
        assert_eq!(j.outcomes["TestNope"], Outcome::NotObserved);
        assert_eq!(j.problem, None);
        // A pass and a fail for the same name (a forged `--- PASS:` line): a failure.
        let text = r#"{"Action":"pass","Package":"example.com/m/pkg","Test":"TestA","Elapsed":0}
{"Action":"fail","Package":"example.com/m/pkg","Test":"TestA","Elapsed":0}
{"Action":"fail","Package":"example.com/m/pkg","Elapsed":0.003}
"#;
        let j = judge_run(PKG, &parse_test_json(text), "", Some(1), &["TestA"]);
        assert_eq!(j.outcomes["TestA"], Outcome::Fail);
        // A parent's pass is not its subtest's.
        let text = r#"{"Action":"pass","Package":"example.com/m/pkg","Test":"TestA","Elapsed":0}
{"Action":"pass","Package":"example.com/m/pkg","Elapsed":0.003}
"#;
        let j = judge_run(PKG, &parse_test_json(text), "", Some(0), &["TestA/x"]);
        assert_eq!(j.outcomes["TestA/x"], Outcome::NotObserved);
    }

    #[test]
    fn build_failures() {
        // Go 1.19: the marker on stdout, the errors on stderr, exit 2.
        let stdout = "FAIL\texample.com/m/broken [build failed]\n";
        let stderr = "# example.com/m/broken [example.com/m/broken.test]\nbroken/b_test.go:5:28: undefined: Undefined\n";
        let out = parse_test_json(stdout);
        let j = judge_run("example.com/m/broken", &out, stderr, Some(2), &["TestB"]);
        assert!(j.build_failed);
        assert_eq!(j.outcomes["TestB"], Outcome::BuildFail);
        assert_eq!(j.problem, None);
        // Setup failures (a missing module, a syntax error in a test file), exit 1.
        let stdout = "FAIL\texample.com/m/miss [setup failed]\n";
        let j = judge_run(
            "example.com/m/miss",
            &parse_test_json(stdout),
            "",
            Some(1),
            &["TestM"],
        );
        assert!(j.build_failed);
        // Go 1.24: build events and FailedBuild.
        let stdout = r##"{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-output","Output":"# example.com/m/broken [example.com/m/broken.test]\n"}
{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-output","Output":"./b_test.go:5:28: undefined: Undefined\n"}
{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-fail"}
{"Action":"start","Package":"example.com/m/broken"}
{"Action":"output","Package":"example.com/m/broken","Output":"FAIL\texample.com/m/broken [build failed]\n"}
{"Action":"fail","Package":"example.com/m/broken","Elapsed":0,"FailedBuild":"example.com/m/broken [example.com/m/broken.test]"}
"##;
        let out = parse_test_json(stdout);
        assert_eq!(
            build_failed_packages(&out, ""),
            BTreeSet::from(["example.com/m/broken".to_string()])
        );
        let j = judge_run("example.com/m/broken", &out, "", Some(1), &["TestB"]);
        assert!(j.build_failed);
        assert_eq!(
            parse_diagnostics(&out.build_text("")).files,
            vec!["./b_test.go"]
        );
        // A test printing the marker is only output: not a build failure.
        let stdout = r#"{"Action":"output","Package":"example.com/m/pkg","Test":"TestA","Output":"FAIL\texample.com/m/pkg [build failed]\n"}
{"Action":"pass","Package":"example.com/m/pkg","Test":"TestA","Elapsed":0}
{"Action":"pass","Package":"example.com/m/pkg","Elapsed":0}
"#;
        let j = judge_run(PKG, &parse_test_json(stdout), "", Some(0), &["TestA"]);
        assert!(!j.build_failed);
        assert_eq!(j.outcomes["TestA"], Outcome::Pass);
        // A build failure next to passes, or with exit 0: not believed.
        let stdout = "FAIL\texample.com/m/pkg [build failed]\n{\"Action\":\"pass\",\"Package\":\"example.com/m/pkg\",\"Test\":\"TestA\"}\n";
        let j = judge_run(PKG, &parse_test_json(stdout), "", Some(2), &["TestA"]);
        assert!(!j.build_failed);
        assert!(j.problem.is_some());
        assert_eq!(j.outcomes["TestA"], Outcome::NotObserved);
    }

    #[test]
    fn markers() {
        assert_eq!(
            fail_marker("FAIL\texample.com/m/x [build failed]"),
            Some("example.com/m/x")
        );
        assert_eq!(
            fail_marker("FAIL\texample.com/m/x [setup failed]\r"),
            Some("example.com/m/x")
        );
        assert_eq!(fail_marker("FAIL\texample.com/m/x\t0.01s"), None);
        assert_eq!(fail_marker("FAILED\tx [build failed]"), None);
        assert_eq!(fail_marker("FAIL"), None);
    }

    #[test]
    fn diagnostics() {
        let text = "# example.com/m/broken [example.com/m/broken.test]\n./b_test.go:5:28: undefined: Undefined\nbroken/c_test.go:7:2: x declared but not used\n/tmp/wt/gomod/abs_test.go:1:1: bad\nvet: ./v_test.go:6:27: fmt.Printf format %d has arg \"x\" of wrong type string\n./b_test.go:9:1: again\n\ttoo many errors\n# example.com/m/miss\nmiss/m_test.go:4:1: no required module provides package github.com/foo/bar; to add it:\n\tgo get github.com/foo/bar\n# example.com/m/cyc/b\npackage example.com/m/cyc/b\n\timports example.com/m/cyc/a: import cycle not allowed in test\nnote: module requires Go 1.99\nFAIL\texample.com/m/cyc/b [setup failed]\n";
        let d = parse_diagnostics(text);
        assert_eq!(
            d.files,
            vec![
                "./b_test.go",
                "broken/c_test.go",
                "/tmp/wt/gomod/abs_test.go",
                "./v_test.go",
                "miss/m_test.go"
            ]
        );
        assert_eq!(
            d.without_file,
            vec![Some("example.com/m/cyc/b".to_string())]
        );

        let c = ctx();
        let dirs = BTreeMap::from([(
            "example.com/m/cyc/b".to_string(),
            PathBuf::from("/tmp/wt/gomod/cyc/b"),
        )]);
        let bf = build_failure(&c, text, &dirs, &c.dir);
        assert_eq!(
            bf.diagnostic_files,
            vec![
                "gomod/abs_test.go",
                "gomod/b_test.go",
                "gomod/broken/c_test.go",
                "gomod/cyc/b",
                "gomod/miss/m_test.go",
                "gomod/v_test.go"
            ]
        );
        assert!(bf.excerpt.contains("undefined: Undefined"));
        let at: Vec<(&str, u32, Option<u32>, &str)> = bf
            .diagnostics
            .iter()
            .map(|d| (d.file.as_str(), d.line, d.column, d.message.as_str()))
            .collect();
        assert_eq!(
            at,
            vec![
                ("gomod/b_test.go", 5, Some(28), "undefined: Undefined"),
                (
                    "gomod/broken/c_test.go",
                    7,
                    Some(2),
                    "x declared but not used"
                ),
                ("gomod/abs_test.go", 1, Some(1), "bad"),
                (
                    "gomod/v_test.go",
                    6,
                    Some(27),
                    "fmt.Printf format %d has arg \"x\" of wrong type string"
                ),
                ("gomod/b_test.go", 9, Some(1), "again"),
                (
                    "gomod/miss/m_test.go",
                    4,
                    Some(1),
                    "no required module provides package github.com/foo/bar; to add it:"
                ),
            ]
        );
        // No error line at all: the package's directory.
        let bf = build_failure(&c, "", &dirs, Path::new("/tmp/wt/gomod/x"));
        assert_eq!(bf.diagnostic_files, vec!["gomod/x"]);
        // Files outside the worktree (GOROOT) are not the repository's.
        let bf = build_failure(
            &c,
            "/usr/lib/go/src/fmt/print.go:1:1: x\n./a_test.go:1:1: y\n",
            &dirs,
            &c.dir,
        );
        assert_eq!(bf.diagnostic_files, vec!["gomod/a_test.go"]);
        assert_eq!(bf.diagnostics.len(), 1);
        // Merged failures keep every diagnostic once.
        let merged = merge_failures(vec![bf.clone(), bf.clone()]).unwrap();
        assert_eq!(merged.diagnostics, bf.diagnostics);

        assert_eq!(
            diagnostic_position("./x_test.go:12:5: undefined: Foo"),
            Some(("./x_test.go", 12, Some(5), "undefined: Foo"))
        );
        assert_eq!(
            diagnostic_position("go.mod:3: unknown directive: x"),
            Some(("go.mod", 3, None, "unknown directive: x"))
        );
        assert_eq!(
            diagnostic_position("vet: a.go:2:7: m"),
            Some(("a.go", 2, Some(7), "m"))
        );
        assert_eq!(
            diagnostic_position("a.go:2:7"),
            Some(("a.go", 2, Some(7), ""))
        );
        assert_eq!(diagnostic_position("a.go:x: m"), None);

        assert_eq!(diagnostic_file("x.go:1: m"), Some("x.go"));
        assert_eq!(
            diagnostic_file("go.mod:3: unknown directive"),
            Some("go.mod")
        );
        assert_eq!(diagnostic_file("a b.go:1:2: m"), None);
        assert_eq!(diagnostic_file("x.go:abc: m"), None);
        assert_eq!(diagnostic_file("x.txt:1: m"), None);
    }

    #[test]
    fn go_list_output() {
        let out = r#"{
	"Dir": "/tmp/wt/gomod/wrong",
	"ImportPath": "example.com/m/wrong",
	"Error": {
		"ImportStack": [],
		"Pos": "",
		"Err": "found packages wrong (w.go) and other (w_test.go) in /tmp/wt/gomod/wrong"
	},
	"InvalidGoFiles": ["w_test.go"],
	"TestGoFiles": [
		"w_test.go"
	]
}
{
	"Dir": "/tmp/wt/gomod/pkg",
	"ImportPath": "example.com/m/pkg",
	"TestGoFiles": ["a_test.go"],
	"XTestGoFiles": ["x_test.go"]
}
{
	"ImportPath": "example.com/m/gone",
	"Error": {
		"ImportStack": [],
		"Pos": "",
		"Err": "no required module provides package example.com/m/gone"
	}
}
{
	"Dir": "/tmp/wt/gomod/user",
	"ImportPath": "example.com/m/user",
	"DepsErrors": [
		{
			"ImportStack": ["example.com/m/user"],
			"Pos": "user/u.go:2:8",
			"Err": "no required module provides package github.com/nope/x; to add it:\n\tgo get github.com/nope/x"
		}
	],
	"TestGoFiles": ["u_test.go"]
}
go: something that is not JSON
"#;
        let pkgs = parse_go_list(out);
        assert_eq!(pkgs.len(), 4);
        assert_eq!(pkgs[0].import_path, "example.com/m/wrong");
        assert_eq!(pkgs[0].errors.len(), 1);
        assert!(pkgs[0].errors[0].message.starts_with("found packages"));
        assert_eq!(pkgs[0].errors[0].pos, None);
        assert_eq!(pkgs[0].invalid_files, vec!["w_test.go"]);
        assert_eq!(pkgs[1].test_files, vec!["a_test.go", "x_test.go"]);
        assert_eq!(pkgs[1].dir, Some(PathBuf::from("/tmp/wt/gomod/pkg")));
        assert!(pkgs[1].errors.is_empty());
        assert_eq!(pkgs[2].dir, None);
        let bf = pkgs[0].load_failure(&ctx());
        assert_eq!(bf.diagnostic_files, vec!["gomod/wrong/w_test.go"]);
        assert!(bf.excerpt.contains("found packages"));
        // A dependency that cannot be loaded: the import that names it.
        assert_eq!(pkgs[3].errors[0].pos.as_deref(), Some("user/u.go:2:8"));
        let bf = pkgs[3].load_failure(&ctx());
        assert_eq!(bf.diagnostic_files, vec!["gomod/user/u.go"]);
        assert_eq!(bf.diagnostics.len(), 1);
        assert_eq!(
            (
                bf.diagnostics[0].file.as_str(),
                bf.diagnostics[0].line,
                bf.diagnostics[0].column
            ),
            ("gomod/user/u.go", 2, Some(8))
        );
        assert!(bf.diagnostics[0]
            .message
            .starts_with("no required module provides package github.com/nope/x"));
        assert!(pkgs[0].load_failure(&ctx()).diagnostics.is_empty());
        assert!(bf
            .excerpt
            .starts_with("example.com/m/user: user/u.go:2:8: no required module"));
        assert!(parse_go_list("").is_empty());
    }

    #[test]
    fn listed_names() {
        let text = r#"{"Action":"output","Package":"example.com/m/pkg","Output":"TestPass\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"TestFail\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"Testable\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"ExampleX\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"ok  \texample.com/m/pkg\t0.004s\n"}
{"Action":"pass","Package":"example.com/m/pkg","Elapsed":0.004}
{"Action":"output","Package":"example.com/m/pkg/nested","Output":"TestNested\n"}
{"Action":"pass","Package":"example.com/m/pkg/nested","Elapsed":0.004}
"#;
        let out = parse_test_json(text);
        assert_eq!(out.listed_names(PKG), vec!["TestPass", "TestFail"]);
        assert_eq!(
            out.listed_names("example.com/m/pkg/nested"),
            vec!["TestNested"]
        );
    }

    #[test]
    fn declarations() {
        let src = "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\nfunc  TestB (t *testing.T) {}\nfunc Testable(t *testing.T) {}\nfunc helperTest() {}\n// func TestC(t *testing.T) {}\n\tfunc TestD(t *testing.T) {}\nfunc TestÉ(t *testing.T) {}\nfunc Test(t *testing.T) {}\nfunc Test_x(t *testing.T) {}\nfunc BenchmarkA(b *testing.B) {}\nfunc (s *S) TestM(t *testing.T) {}\n";
        assert_eq!(
            declared_in(src),
            vec!["TestA", "TestB", "TestÉ", "Test", "Test_x"]
        );
    }

    #[test]
    fn ids_and_patterns() {
        assert_eq!(
            parse_id("example.com/m/pkg TestA/sub/x#01"),
            Some(("example.com/m/pkg", vec!["TestA", "sub", "x#01"]))
        );
        assert_eq!(
            parse_id("example.com/m/pkg TestA"),
            Some(("example.com/m/pkg", vec!["TestA"]))
        );
        assert_eq!(parse_id("example.com/m/pkg"), None);
        assert_eq!(parse_id("example.com/m/... TestA"), None);
        assert_eq!(parse_id("all TestA"), None);
        assert_eq!(parse_id("-exec TestA"), None);
        assert_eq!(parse_id("example.com/m/pkg TestA//x"), None);
        assert_eq!(parse_id("example.com/m/pkg TestA/a b"), None);
        assert_eq!(parse_id("example.com/m/pkg helper"), None);
        assert_eq!(parse_id("example.com/m/pkg Testable"), None);

        assert_eq!(
            quote_meta(r"a.b+c*d?e(f)g|h[i]j{k}l^m$n\o-p#q"),
            r"a\.b\+c\*d\?e\(f\)g\|h\[i\]j\{k\}l\^m\$n\\o-p#q"
        );
        assert_eq!(run_pattern(&[], &["TestA"]), "^TestA$");
        assert_eq!(
            run_pattern(&[], &["TestB", "TestA", "TestB"]),
            "^(TestA|TestB)$"
        );
        assert_eq!(
            run_pattern(&["TestA"], &["ok_case", "x.y"]),
            r"^TestA$/^(ok_case|x\.y)$"
        );
        assert_eq!(
            run_pattern(&["TestA", "a(1)"], &["b"]),
            r"^TestA$/^a\(1\)$/^b$"
        );
    }

    #[test]
    fn test_files_and_flags() {
        assert!(is_go_test_file("pkg/a_test.go"));
        assert!(is_go_test_file("a_test.go"));
        assert!(is_go_test_file("pkg/testdata/golden.json"));
        assert!(is_go_test_file("testdata/x/y.go"));
        assert!(!is_go_test_file("pkg/a.go"));
        assert!(!is_go_test_file("pkg/a_test.go.orig"));
        assert!(!is_go_test_file("testdata"));
        assert!(!is_go_test_file("pkg/mytestdata/x.txt"));

        let args: Vec<String> = [
            "-short",
            "-tags",
            "integration",
            "-race",
            "--mod=vendor",
            "-v",
            "-modfile",
            "x.mod",
            "-tags=a,b",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            list_flags(&args),
            vec![
                "-tags",
                "integration",
                "--mod=vendor",
                "-modfile",
                "x.mod",
                "-tags=a,b"
            ]
        );
        assert!(go_env(&[(OsString::from("GOTOOLCHAIN"), OsString::from("go1.22.0"))]).is_empty());
    }

    #[test]
    fn tests_that_call_run() {
        let src = "package p\n\nfunc TestA(t *testing.T) {\n\tfor _, c := range cases {\n\t\tt.Run(c.name, func(t *testing.T) {})\n\t}\n}\n\nfunc TestB(t *testing.T) {\n\tcheck(t)\n}\n\nfunc helper(t *testing.T) {\n\tt.Run(\"x\", nil)\n}\n\nfunc TestC(t *testing.T) { t.Run(\"one\", nil) }\nfunc (s *S) TestM(t *testing.T) { t.Run(\"m\", nil) }\n";
        let found: Vec<String> = run_callers(src).into_iter().collect();
        assert_eq!(found, vec!["TestA", "TestC"]);
    }

    #[test]
    fn subtests_from_run_events() {
        let text = r#"{"Action":"run","Package":"example.com/m/pkg","Test":"TestA"}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestA/ok_case"}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestA/ok_case"}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestA/x/deep#01"}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestA/has space"}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestOther/y"}
{"Action":"run","Package":"example.com/m/other","Test":"TestA/z"}
{"Action":"pass","Package":"example.com/m/pkg","Test":"TestA/w"}
"#;
        let found = subtests_run(&parse_test_json(text), PKG, &["TestA"]);
        assert_eq!(
            found,
            vec![
                ("TestA/ok_case".to_string(), "TestA".to_string()),
                ("TestA/x/deep#01".to_string(), "TestA".to_string()),
            ]
        );
    }

    #[test]
    fn package_dirs_of_scope_files() {
        assert_eq!(package_dir_of("pkg/a_test.go").as_deref(), Some("pkg"));
        assert_eq!(package_dir_of("a_test.go").as_deref(), Some(""));
        assert_eq!(
            package_dir_of("pkg/testdata/x/golden.json").as_deref(),
            Some("pkg")
        );
        assert_eq!(package_dir_of("./pkg/sub/b.go").as_deref(), Some("pkg/sub"));
        assert_eq!(package_dir_of(""), None);
    }

    #[test]
    fn positions_relative_to_the_package_are_found_there() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let c = RunCtx {
            worktree: root.clone(),
            dir: root.join("gomod"),
            ..ctx()
        };
        std::fs::create_dir_all(c.dir.join("broken")).unwrap();
        std::fs::write(c.dir.join("broken/b_test.go"), "package broken\n").unwrap();
        std::fs::write(c.dir.join("root_test.go"), "package m\n").unwrap();
        let dirs = BTreeMap::from([("example.com/m/broken".to_string(), c.dir.join("broken"))]);
        // `./b_test.go` is not in the runner's root, but in the block's package.
        let text = "# example.com/m/broken [example.com/m/broken.test]\n./b_test.go:5:28: undefined: X\n./root_test.go:1:1: y\nbroken/b_test.go:6:1: z\n";
        let bf = build_failure(&c, text, &dirs, &c.dir);
        let at: Vec<(&str, u32)> = bf
            .diagnostics
            .iter()
            .map(|d| (d.file.as_str(), d.line))
            .collect();
        assert_eq!(
            at,
            vec![
                ("gomod/broken/b_test.go", 5),
                ("gomod/root_test.go", 1),
                ("gomod/broken/b_test.go", 6)
            ]
        );
        assert_eq!(
            bf.diagnostic_files,
            vec!["gomod/broken/b_test.go", "gomod/root_test.go"]
        );
    }
}
