//! Listing pytest's tests: collecting node ids without running them.
//!
//! In: the project in `ctx.dir`, every test or only those of some files. Out: the node ids
//! pytest collects there.
//! `pytest --collect-only -q -p no:cacheprovider --rootdir=<dir> <args> --verbosity=-1 [files]`
//! prints one node id per line (the trailing `--verbosity=-1` beats any `-v`/`-q` in `addopts`
//! or `args`, which would change that format). With [`ListScope::Files`] only the scope's test
//! modules (`test_*.py`, `*_test.py`) that exist are collected; pytest collects a file named on
//! its command line whatever its name, so a scope file with another `.py` name (a helper, or a
//! project with its own `python_files`) cannot be told apart from a test module by its name and
//! the whole suite is listed instead; files that are not Python hold no node id and are dropped.
//! Exit 5 is an empty suite. A file that cannot be collected (exit 2: an `ImportError`,
//! `SyntaxError` or any error while importing it) or a `conftest.py` that cannot be loaded
//! (exit 4) is Python's compile error: `build_failure`, with the failing file and the files of
//! the traceback inside the worktree as `diagnostic_files`, and in `diagnostics` the innermost
//! position inside the worktree that the traceback names (`tests/test_x.py:3: in <module>`, a
//! `SyntaxError`'s `File "…", line 4`), with the name an `ImportError: cannot import name 'x'`
//! says is missing (only that name of its `from … import` fails). The tests that did collect
//! are still listed next to it.
//! Any other exit is a problem.

use std::collections::BTreeSet;
use std::ffi::OsString;

use super::diagnostics::{build_failure, collect_errors, CollectError};
use super::tool::{python_env, rootdir_arg};
use super::{file_of, Pytest};
use crate::floor::runners::kit::{exec, exit_problem, safe_relative, Ran};
use crate::floor::runners::Probe;
use crate::floor::runners::{Invocation, ListReport, ListScope, RunCtx, TestCase};

impl Pytest {
    /// [`crate::floor::runners::Runner::list`] for pytest (see the module doc).
    pub(super) fn list_tests(&self, ctx: &RunCtx, scope: &ListScope) -> ListReport {
        let mut report = ListReport::default();
        let paths = match scoped_files(ctx, scope) {
            Some(paths) if paths.is_empty() => return report,
            Some(paths) => paths,
            None => Vec::new(),
        };
        let collect = self.collect(ctx, &paths, &mut report.invocations);
        report.build_failure = build_failure(ctx, &collect.errors, |_| true);
        report.problem = collect.problem;
        report.tests = collect
            .ids
            .iter()
            .map(|id| TestCase {
                id: id.clone(),
                file: file_of(ctx, id),
            })
            .collect();
        report
    }

    /// `pytest --collect-only` over `paths` (the whole suite when empty).
    fn collect(
        &self,
        ctx: &RunCtx,
        paths: &[String],
        invocations: &mut Vec<Invocation>,
    ) -> Collected {
        let (program, mut args) = self.pytest_command(&Probe::of(ctx));
        args.extend(["--collect-only", "-q", "-p", "no:cacheprovider"].map(OsString::from));
        args.push(rootdir_arg(ctx));
        args.extend(self.config.args.iter().map(OsString::from));
        // Last, so that it overrides any -v/-q before it: one node id per line.
        args.push(OsString::from("--verbosity=-1"));
        args.extend(paths.iter().map(OsString::from));
        let ran: Ran = exec(ctx, &program, &args, &ctx.dir, &python_env());
        let mut out = Collected::default();
        if let Some(p) = ran.operational_problem("pytest --collect-only") {
            out.problem = Some(p);
            invocations.push(ran.invocation);
            return out;
        }
        let stdout = ran.captured().stdout_lossy();
        let stderr = ran.captured().stderr_lossy();
        out.ids = parse_collect_only(&stdout);
        out.errors = collect_errors(&stdout, &stderr);
        match ran.captured().exit_code {
            Some(0) | Some(5) => {}
            // Collection errors (2), or a conftest that cannot be loaded (4): build failures when
            // we could tell which file; otherwise an operational problem.
            _ if !out.errors.is_empty() => {}
            _ => out.problem = Some(exit_problem("pytest --collect-only", ran.captured())),
        }
        invocations.push(ran.invocation);
        out
    }
}

/// The scope's files to collect: `None` for the whole suite (the scope is `All`, or it holds a
/// Python file that is not a test module by its name, see the module doc).
fn scoped_files(ctx: &RunCtx, scope: &ListScope) -> Option<Vec<String>> {
    let ListScope::Files(files) = scope else {
        return None;
    };
    let mut out = BTreeSet::new();
    for f in files {
        if !f.ends_with(".py") {
            continue;
        }
        let base = f.rsplit('/').next().unwrap_or(f);
        let test_module = base.starts_with("test_") || base.ends_with("_test.py");
        if !test_module || !safe_relative(f) {
            return None;
        }
        if ctx.dir.join(f).is_file() {
            out.insert(f.clone());
        }
    }
    Some(out.into_iter().collect())
}

/// What a `--collect-only` run found.
#[derive(Debug, Default)]
struct Collected {
    ids: Vec<String>,
    errors: Vec<CollectError>,
    problem: Option<String>,
}

/// Node ids in `--collect-only -q` output: the lines before the first blank line or section
/// header that look like node ids.
pub(super) fn parse_collect_only(stdout: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for line in stdout.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            if ids.is_empty() {
                continue;
            }
            break;
        }
        if line.starts_with('=') || line.starts_with('_') || line.starts_with('!') {
            break;
        }
        if line.starts_with(char::is_whitespace) || !line.contains("::") {
            continue;
        }
        ids.push(line.to_string());
    }
    ids
}
