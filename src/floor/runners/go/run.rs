//! Running exactly the requested tests: the `go test -json -count=1 -run <pattern>` command
//! lines, one per package and parent, and what their events say of each id.
//!
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

use std::collections::BTreeMap;
use std::ffi::OsString;

use super::diagnostics::{build_failure, merge_failures};
use super::packages::{go_list, package_dirs, GoPackage};
use super::test2json::{judge_run, parse_test_json};
use super::{go, parse_id};
use crate::floor::runners::kit::{join_problems, Ran};
use crate::floor::runners::{Outcome, RunCtx, RunReport};

/// Runs exactly the given ids once (see the module doc); `args` are the runner's.
pub(super) fn run_tests(ctx: &RunCtx, args: &[String], ids: &[String]) -> RunReport {
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
    let packages = match go_list(ctx, args, &patterns, &mut report.invocations) {
        Ok(p) => p,
        Err(problem) => {
            report.problem = Some(problem.0);
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
                report.set(id, Outcome::BuildFail);
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
            let ran = go_test(ctx, ["-run", &run_pattern(parents, &lasts)], args, &[*pkg]);
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
                let Some(t) = report.test_mut(id) else {
                    continue;
                };
                if let Some(o) = judged.outcomes.get(name.as_str()) {
                    t.outcome = *o;
                }
                if let Some(m) = judged.messages.get(name.as_str()) {
                    t.message = Some(m.clone());
                }
                if let Some(k) = judged.kinds.get(name.as_str()) {
                    t.failure_kind = Some(*k);
                }
            }
            report.invocations.push(ran.invocation);
        }
    }
    report.build_failure = merge_failures(failures);
    report.problem = join_problems(problems);
    report
}

/// `go test -json -count=1 <selection> <args> <packages>` in `ctx.dir`: `selection` is
/// `-list ^Test` or `-run <pattern>`, `args` the runner's.
pub(super) fn go_test(
    ctx: &RunCtx,
    selection: [&str; 2],
    args: &[String],
    packages: &[&str],
) -> Ran {
    let mut argv: Vec<OsString> = ["test", "-json", "-count=1"].map(OsString::from).to_vec();
    argv.extend(selection.map(OsString::from));
    argv.extend(args.iter().map(OsString::from));
    argv.extend(packages.iter().map(OsString::from));
    go(ctx, &argv)
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
