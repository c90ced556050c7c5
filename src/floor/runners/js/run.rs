//! Running chosen JavaScript tests: the tools' command lines (our options, the runner's `args`,
//! an exact test-name pattern, the ids' files), the reports asked of them, and one run of the
//! tool whose results file is then read by [`super::report`].
//!
//! # run
//! In: test ids. Out: one outcome per id.
//! 1. Ids without a ` > `, or whose file is not a file under the root, are `NotObserved`.
//! 2. One command over the ids' files with a pattern `^(?:A|B|…)$` that matches exactly the
//!    requested full names: each id's titles regex-escaped and joined by `(?: | > )`, because
//!    both tools match the pattern against the titles joined by single spaces (and a title may
//!    itself contain ` > `). The pattern only narrows what runs; results are mapped back by the
//!    exact id built from (file, ancestor titles, title), never by regex, so a test whose name
//!    merely contains another's (`adds twice` for `adds`, or jest's case-insensitive match) is
//!    never counted for it.
//! 3. Read the results file. A file that failed to load: its requested ids are `BuildFail`, and
//!    `build_failure.diagnostic_files` holds it plus the worktree files its error names with a
//!    position (`/abs/path.js:3:5`, `tests/a.test.js:1:18`, vite's `At file: /src/x.js:1:19`,
//!    babel's `SyntaxError: /abs/path.js: …`, vitest's stack `❯ tests/a.test.js:4:19` from its
//!    JUnit report), and `build_failure.diagnostics` the positions of `load_diagnostics`, paths and
//!    messages relative to the repository. A test passes only when its id is present with status
//!    `passed` and the exit code agrees with the whole results file (0 when nothing failed, 1 when
//!    a test or a file failed); `failed` is `Fail` with the first line of its first failure message
//!    in `messages` and its `failure_kind` (an assertion of `expect` or `assert`, or another
//!    exception) in `failure_kinds`; skipped, pending, todo, or absent is `NotObserved`. A test
//!    that passed only on a retry (set in the tests themselves: vitest's `{ retry }` beats
//!    `--retry=0`, jest's `jest.retryTimes`) is `Fail`: vitest keeps the earlier attempts' errors
//!    in a passed test's `failureMessages`, jest counts its `invocations`. A test file that failed
//!    although none of its tests did (an `afterAll` hook that threw, an unhandled error) does not
//!    vouch for its passes: they are `NotObserved` with a problem. When one id appears more than
//!    once (two tests with the same titles) the worst status wins. A timeout, crash, exit code
//!    other than 0 or 1, or a missing or unreadable results file is a problem: passes are not
//!    believed (failures already read stay `Fail`).

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::report::{add_vitest_stacks, judge, observe, parse_results, JsFile};
use super::{find_bin, missing_bin_problem, split_id, JsTool, SEP};
use crate::acceptance::RunnerConfig;
use crate::floor::runners::junit::parse_junit;
use crate::floor::runners::kit::{exec, exit_problem, join_problems, safe_relative};
use crate::floor::runners::{Invocation, RunCtx, RunReport};

impl JsTool {
    /// Where the tool writes its second report, beside the results file: vitest's JUnit, which
    /// holds the stacks of the files that fail to load (`vitest.xml` beside `vitest.json`).
    pub fn stack_report(self, results: &Path) -> Option<PathBuf> {
        match self {
            JsTool::Vitest => Some(results.with_extension("xml")),
            JsTool::Jest => None,
        }
    }

    /// The tool's arguments: our fixed options, the runner's `args`, the test-name pattern, and
    /// the files to restrict the run to (all files when empty).
    pub fn args(
        self,
        results: &Path,
        user_args: &[String],
        pattern: &str,
        files: &[String],
    ) -> Vec<OsString> {
        let mut out_arg = OsString::from("--outputFile=");
        out_arg.push(results);
        // vitest: `run` is no watch mode; `--retry=0` beats a `retry` in the config (a test's
        // own `{ retry }` still wins: `parse_test` fails a test that passed on a retry);
        // `--no-cache` keeps vitest from writing its results cache into `node_modules/.vite`.
        // jest: `--ci` never writes snapshots; retries only come from `jest.retryTimes` in the
        // tests, which the results file shows (`invocations`).
        // vitest also writes JUnit: only there does a file that fails to load have its stack
        // (see `add_vitest_stacks` in [`super::report`]).
        let (before, after): (&[&str], &[&str]) = match self {
            JsTool::Vitest => (
                &["run", "--reporter=json", "--reporter=junit"],
                &[
                    "--no-coverage",
                    "--no-cache",
                    "--retry=0",
                    "--passWithNoTests",
                ],
            ),
            JsTool::Jest => (
                &["--ci", "--watchAll=false", "--no-coverage", "--json"],
                &["--passWithNoTests"],
            ),
        };
        let mut args: Vec<OsString> = before.iter().map(OsString::from).collect();
        match self.stack_report(results) {
            Some(junit) => {
                let mut json_arg = OsString::from("--outputFile.json=");
                json_arg.push(results);
                let mut junit_arg = OsString::from("--outputFile.junit=");
                junit_arg.push(junit);
                args.extend([json_arg, junit_arg]);
            }
            None => args.push(out_arg),
        }
        args.extend(after.iter().map(OsString::from));
        args.extend(user_args.iter().map(OsString::from));
        args.push(OsString::from(format!("--testNamePattern={pattern}")));
        if !files.is_empty() {
            if self == JsTool::Jest {
                // Exact paths, not regexes over paths.
                args.push(OsString::from("--runTestsByPath"));
            }
            args.extend(files.iter().map(OsString::from));
        }
        args
    }
}

fn js_env() -> Vec<(OsString, OsString)> {
    vec![
        (OsString::from("CI"), OsString::from("1")),
        (OsString::from("NO_COLOR"), OsString::from("1")),
    ]
}

/// Escapes a string for a JavaScript regex (without the `u` flag).
pub(super) fn escape_regex(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '^'
                | '$'
                | '.'
                | '*'
                | '+'
                | '?'
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '|'
                | '/'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The test-name pattern that matches exactly the full names of the given ids' titles parts
/// (both tools join the titles with single spaces; a title may contain ` > ` itself).
pub(super) fn name_pattern<'a>(titles: impl IntoIterator<Item = &'a str>) -> String {
    let alternatives: BTreeSet<String> = titles
        .into_iter()
        .map(|t| {
            t.split(SEP)
                .map(escape_regex)
                .collect::<Vec<_>>()
                .join("(?: | > )")
        })
        .collect();
    format!(
        "^(?:{})$",
        alternatives.into_iter().collect::<Vec<_>>().join("|")
    )
}

/// What one command left: its exit code and results, or why there are none.
pub(super) struct Executed {
    pub exit: Option<i32>,
    pub files: Option<Vec<JsFile>>,
    pub problems: Vec<String>,
}

/// Runs the tool once and reads its results file.
pub(super) fn execute(
    tool: JsTool,
    ctx: &RunCtx,
    bin: &Path,
    args: &[OsString],
    results: &Path,
    invocations: &mut Vec<Invocation>,
) -> Executed {
    let name = tool.name();
    let stacks = tool.stack_report(results);
    if let Some(p) = &stacks {
        let _ = std::fs::remove_file(p);
    }
    let mut ran = exec(ctx, bin.as_os_str(), args, &ctx.dir, &js_env());
    let problem = ran.operational_problem(name);
    let exit = ran.captured().exit_code;
    let exit_text = exit_problem(name, ran.captured());
    let (bytes, unreadable) = match super::super::read_run_file(results) {
        Ok(bytes) => (bytes, None),
        Err(why) => (None, Some(why)),
    };
    if let Some(b) = &bytes {
        ran.invocation.results = Some(b.clone());
        ran.invocation.results_type = Some("application/json".into());
    }
    invocations.push(ran.invocation);
    if let Some(p) = problem {
        return Executed {
            exit: None,
            files: None,
            problems: vec![p],
        };
    }
    let mut problems = Vec::new();
    let exit_believed = matches!(exit, Some(0) | Some(1));
    if !exit_believed {
        problems.push(exit_text.clone());
    }
    if let Some(why) = unreadable {
        problems.push(format!("{name}'s results file is unreadable: {why}"));
        return Executed {
            exit,
            files: None,
            problems,
        };
    }
    let Some(bytes) = bytes else {
        if exit_believed {
            problems.push(format!("{exit_text}, but wrote no results file"));
        }
        return Executed {
            exit,
            files: None,
            problems,
        };
    };
    match parse_results(&bytes) {
        Ok(mut files) => {
            // Without the second report, a file that fails to load keeps the message alone.
            let junit = stacks
                .and_then(|p| super::super::read_run_file(&p).ok().flatten())
                .and_then(|b| parse_junit(&b).ok());
            if let Some(cases) = junit {
                add_vitest_stacks(ctx, &mut files, &cases);
            }
            Executed {
                exit,
                files: Some(files),
                problems,
            }
        }
        Err(e) => {
            problems.push(format!("{name}'s results file is unreadable: {e}"));
            Executed {
                exit,
                files: None,
                problems,
            }
        }
    }
}

pub(super) fn run(tool: JsTool, config: &RunnerConfig, ctx: &RunCtx, ids: &[String]) -> RunReport {
    let mut report = RunReport::not_observed(ids);
    // 1. Only ids whose file exists under the root.
    let runnable: Vec<(&str, &str, &str)> = ids
        .iter()
        .filter_map(|id| {
            let (file, titles) = split_id(id)?;
            (safe_relative(file) && ctx.dir.join(file).is_file()).then_some((
                id.as_str(),
                file,
                titles,
            ))
        })
        .collect();
    if runnable.is_empty() {
        return report;
    }
    let Some(bin) = find_bin(ctx, tool.name()) else {
        report.problem = Some(missing_bin_problem(tool, config));
        return report;
    };
    // 2. One command over their files, narrowed by an exact name pattern.
    let files: BTreeSet<&str> = runnable.iter().map(|(_, f, _)| *f).collect();
    let file_args: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    let pattern = name_pattern(runnable.iter().map(|(_, _, t)| *t));
    let results = ctx.scratch.join(format!("{}.json", tool.name()));
    let _ = std::fs::remove_file(&results);
    let args = tool.args(&results, &config.args, &pattern, &file_args);
    let done = execute(tool, ctx, &bin, &args, &results, &mut report.invocations);
    let mut problems = done.problems;
    let Some(result_files) = done.files else {
        report.problem = join_problems(problems);
        return report;
    };
    // 3. Map the results back by exact id.
    let obs = observe(ctx, &result_files);
    let runnable: Vec<(&str, &str)> = runnable.iter().map(|(id, f, _)| (*id, *f)).collect();
    judge(
        tool,
        ctx,
        &runnable,
        &obs,
        done.exit,
        &mut report,
        &mut problems,
    );
    report.problem = join_problems(problems);
    report
}
