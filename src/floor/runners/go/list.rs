//! Listing the tests of a module: the top-level tests `go test -list` prints for the packages in
//! scope, the subtests a run of their parents reports, and the build failures met on the way.
//!
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

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::diagnostics::{build_failure, merge_failures};
use super::packages::{declared_in, go_list, package_dirs, GoPackage};
use super::parse_id;
use super::run::{go_test, run_pattern};
use super::test2json::{build_failed_packages, judge_run, parse_test_json, TestJson};
use crate::floor::runners::kit::{exit_problem, join_problems, truncate, worktree_relative};
use crate::floor::runners::{Invocation, ListReport, ListScope, RunCtx, TestCase};

/// Lists the tests in scope (see the module doc); `args` are the runner's.
pub(super) fn list_tests(ctx: &RunCtx, args: &[String], scope: &ListScope) -> ListReport {
    let mut report = ListReport::default();
    let packages = match go_list(
        ctx,
        args,
        &[OsString::from("./...")],
        &mut report.invocations,
    ) {
        Ok(p) => p,
        Err(problem) => {
            report.problem = Some(problem.0);
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
        let paths: Vec<&str> = testable.iter().map(|p| p.import_path.as_str()).collect();
        let ran = go_test(ctx, ["-list", "^Test"], args, &paths);
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
            discover_subtests(ctx, args, p, &parents, &mut report.invocations);
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

/// Runs the given top-level tests of one package and returns the subtests they
/// reported (`TestA/x`, `TestA/x/y`, as go spells them), each with its top-level test, and a
/// problem when the run cannot be read to the end (a timeout, a panic, `os.Exit`): subtests
/// that would have run after that point are unknown, those before it are still returned. `args`
/// are the runner's.
fn discover_subtests(
    ctx: &RunCtx,
    args: &[String],
    p: &GoPackage,
    parents: &[&str],
    invocations: &mut Vec<Invocation>,
) -> (Vec<(String, String)>, Option<String>) {
    let ran = go_test(
        ctx,
        ["-run", &run_pattern(&[], parents)],
        args,
        &[&p.import_path],
    );
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
        let panicked = out.first_panic(&p.import_path);
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
