//! Listing a JavaScript project's tests: the tool collects every test of the test files and
//! runs none.
//!
//! # list
//! In: the project in `ctx.dir`, every test file or only those of a [`ListScope::Files`] (its
//! JavaScript and TypeScript files, given to the tool as file filters; the tool's own test-file
//! patterns still apply, so a source file in the scope yields nothing, and the results are kept to
//! exactly those files, vitest's filters being substrings). Out: every test in those test files,
//! skipped and todo tests included, in file order. The tool runs with a test-name pattern that can
//! match no name (`(?!)`): every file is loaded and its tests collected, none runs, and each
//! appears in the results as skipped/pending with its titles. One way for both tools, which also
//! reports the files that fail to load (`vitest list --json` writes nothing at all when one file
//! fails, and `jest --listTests` names files only). A file that fails to load (status `failed`, no
//! tests, a message) is a build failure; the tests of the other files are still listed. A file with
//! no tests at all (vitest's "No test suite found", jest's "must contain at least one test") is
//! neither.

use std::collections::BTreeSet;

use super::report::{agreement, observe};
use super::run::execute;
use super::{find_bin, missing_bin_problem, JsTool, JS_EXTENSIONS};
use crate::acceptance::RunnerConfig;
use crate::floor::runners::kit::{join_problems, safe_relative, worktree_relative};
use crate::floor::runners::{first_message_line, ListReport, ListScope, RunCtx, TestCase};

/// A test-name pattern that matches no name at all (an empty negative lookahead always fails).
const MATCHES_NOTHING: &str = "(?!)";

/// The scope's JavaScript and TypeScript files that exist under the root; `None` for every file.
/// The tools apply their own test-file patterns to the files they are given, so a scope file that
/// is not a test file (a source file that mentions the tag) simply yields no test.
fn scoped_files(ctx: &RunCtx, scope: &ListScope) -> Option<Vec<String>> {
    let ListScope::Files(files) = scope else {
        return None;
    };
    let out: BTreeSet<String> = files
        .iter()
        .filter(|f| {
            f.rsplit_once('.')
                .is_some_and(|(_, ext)| JS_EXTENSIONS.contains(&ext))
                && safe_relative(f)
                && !f.split('/').any(|p| p == "node_modules")
                && ctx.dir.join(f).is_file()
        })
        .cloned()
        .collect();
    Some(out.into_iter().collect())
}

pub(super) fn list(
    tool: JsTool,
    config: &RunnerConfig,
    ctx: &RunCtx,
    scope: &ListScope,
) -> ListReport {
    let mut report = ListReport::default();
    let scoped = scoped_files(ctx, scope);
    if scoped.as_ref().is_some_and(Vec::is_empty) {
        return report;
    }
    let Some(bin) = find_bin(ctx, tool.name()) else {
        report.problem = Some(missing_bin_problem(tool, config));
        return report;
    };
    let results = ctx.scratch.join(format!("{}-list.json", tool.name()));
    let _ = std::fs::remove_file(&results);
    let file_args = scoped.clone().unwrap_or_default();
    let args = tool.args(&results, &config.args, MATCHES_NOTHING, &file_args);
    let done = execute(tool, ctx, &bin, &args, &results, &mut report.invocations);
    let mut problems = done.problems;
    let Some(files) = done.files else {
        report.problem = join_problems(problems);
        return report;
    };
    let mut obs = observe(ctx, &files);
    if let (false, Some(p)) = agreement(tool, done.exit, &obs) {
        problems.push(p);
    }
    if let Some(scoped) = &scoped {
        // vitest takes file filters as substrings of paths: keep exactly the scope's files.
        obs.keep_files(scoped);
    }
    for (file, message) in &obs.file_errors {
        problems.push(format!(
            "{file}: the file failed outside its tests: {}",
            first_message_line(Some(message), None).unwrap_or_default()
        ));
    }
    report.build_failure = obs.build_failure(ctx, None);
    let mut tests: Vec<(usize, TestCase)> = obs
        .listed
        .iter()
        .enumerate()
        .map(|(i, (id, file))| {
            (
                i,
                TestCase {
                    id: id.clone(),
                    file: worktree_relative(ctx, &ctx.dir.join(file)),
                },
            )
        })
        .collect();
    // Files in path order (the tools order them by duration), tests in file order.
    tests.sort_by(|a, b| {
        let fa = &obs.listed[a.0].1;
        let fb = &obs.listed[b.0].1;
        fa.cmp(fb).then(a.0.cmp(&b.0))
    });
    report.tests = tests.into_iter().map(|(_, t)| t).collect();
    report.problem = join_problems(problems);
    report
}
