//! The machinery the JavaScript adapters share ([`super::vitest`], [`super::jest`]): both tools
//! write the same "jest-compatible" JSON results file, take a test-name regex (`-t`) and file
//! filters, and fail a test file that cannot be loaded as a whole.
//!
//! Test ids are `<file relative to the runner root> > <describe> > … > <test title>`: the file,
//! then the result's `ancestorTitles` and `title`, joined by ` > ` (vitest's own way of showing a
//! full name). [`TestCase::file`] is that file relative to the repository root.
//!
//! # Starting the tool
//! Always the project's own local binary, `node_modules/.bin/<tool>` in the runner's root or the
//! nearest directory above it inside the worktree (npm workspaces hoist it to the repository
//! root), never `npx` (which could download something else). Without a `setup:` the worktrees
//! take the checkout's `node_modules`, so a binary missing from the checkout is an input error
//! before any work (`check_checkout_bin`), as a missing pytest is; with a `setup:`, a binary
//! that a setup which succeeded did not install is one too (`check_setup_bin`). Every command runs with `CI=1` (no watch mode, no
//! snapshot writing, no interactive output) and `NO_COLOR=1`; ANSI codes are stripped from
//! messages anyway. The results go to a file of our own in `ctx.scratch` (vitest's JUnit
//! report beside it), removed before each command so that an earlier file is never read as this
//! command's. The runner's `args` come after our options and before our test-name pattern and
//! file filters.
//!
//! # list
//! In: the project in `ctx.dir`, every test file or only those of a [`ListScope::Files`] (its
//! JavaScript and TypeScript files, given to the tool as file filters; the tool's own test-file
//! patterns still apply, so a source file in the scope yields nothing, and the results are kept
//! to exactly those files, vitest's filters being substrings). Out: every test in those test
//! files, skipped and todo tests included, in file order. The tool runs with a test-name pattern that can match no
//! name (`(?!)`): every file is loaded and its tests collected, none runs, and each appears in
//! the results as skipped/pending with its titles. One way for both tools, which also reports the
//! files that fail to load (`vitest list --json` writes nothing at all when one file fails, and
//! `jest --listTests` names files only). A file that fails to load (status `failed`, no tests,
//! a message) is a build failure; the tests of the other files are still listed. A file with no
//! tests at all (vitest's "No test suite found", jest's "must contain at least one test") is
//! neither.
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
//!    JUnit report), and `build_failure.diagnostics` the positions of `load_diagnostics`, paths
//!    and messages relative to the repository. A test passes only when its id is present with
//!    status `passed` and the exit code agrees with the whole results file (0 when nothing
//!    failed, 1 when a test or a file failed); `failed` is `Fail` with the first line of its
//!    first failure message in `messages` and its `failure_kind` (an assertion of `expect` or
//!    `assert`, or another exception) in `failure_kinds`; skipped, pending, todo, or absent is `NotObserved`.
//!    A test that passed only on a retry (set in the tests themselves: vitest's `{ retry }` beats
//!    `--retry=0`, jest's `jest.retryTimes`) is `Fail`: vitest keeps the earlier attempts' errors
//!    in a passed test's `failureMessages`, jest counts its `invocations`. A test file that
//!    failed although none of its tests did (an `afterAll` hook that threw, an unhandled error)
//!    does not vouch for its passes: they are `NotObserved` with a problem. When one id appears
//!    more than once (two tests with the same titles) the worst status wins. A timeout, crash,
//!    exit code other than 0 or 1, or a missing or unreadable results file is a problem: passes
//!    are not believed (failures already read stay `Fail`).
//!
//! # Attribution (DESIGN 5.4)
//! `test_item` is an id's titles part (`describe > test`); `item_map` parses the file with
//! [`super::js_parse`]. A file that fails while loading because it calls a name its import does
//! not bind at base (`TypeError: (0 , clamp) is not a function` from vitest, `TypeError: clamp
//! is not a function` from jest with CommonJS) has two diagnostics: the call, then the import
//! that binds the name, naming it (`unbound_import`), so that the test that uses `clamp` owns
//! the failure and a neighbour that does not is never observed at base. jest with native ESM
//! already fails at the import (`The requested module '…' does not provide an export named
//! 'clamp'`).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use regex::Regex;
use serde_json::Value;

use super::junit::{parse_junit, JunitCase};
use super::kit::{
    display_text, exec, exit_problem, join_problems, relative_to, safe_relative, truncate,
    worktree_relative,
};
use super::*;
use crate::process;

pub(super) use super::js_parse::SEP;

/// A test-name pattern that matches no name at all (an empty negative lookahead always fails).
pub(super) const MATCHES_NOTHING: &str = "(?!)";

/// The JavaScript test runners, with what differs between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum JsTool {
    Vitest,
    Jest,
}

impl JsTool {
    /// The tool's name, also the name of its binary in `node_modules/.bin`.
    pub fn name(self) -> &'static str {
        match self {
            JsTool::Vitest => "vitest",
            JsTool::Jest => "jest",
        }
    }

    /// What the tool's exit codes mean once it has written results.
    pub fn contract(self) -> super::contract::ExitContract {
        match self {
            JsTool::Vitest => super::contract::VITEST,
            JsTool::Jest => super::contract::JEST,
        }
    }

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
        // (see `add_vitest_stacks`).
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

/// Checks that `node` runs.
pub(super) fn check_node() -> Result<(), InputError> {
    let help = "install Node.js (https://nodejs.org) and put `node` on PATH; the project's own \
                test runner is then installed by `npm ci` (or the runner's `setup:`)";
    if process::which("node").is_none() {
        return Err(InputError::new("`node` was not found on PATH").help(help));
    }
    let mut cmd = Command::new("node");
    cmd.arg("--version");
    match process::run(cmd, Duration::from_secs(60)) {
        Ok(c) if c.success() => Ok(()),
        Ok(c) => Err(InputError::new(format!(
            "`node --version` failed (exit {}): {}",
            c.exit_code.map_or_else(|| "none".into(), |e| e.to_string()),
            c.stderr_lossy().trim()
        ))
        .help(help)),
        Err(e) => Err(InputError::new(format!("`node` could not be started: {e}")).help(help)),
    }
}

/// Whether a `/`-separated path relative to the runner's root belongs to a JavaScript test suite:
/// `*.test.<ext>` or `*.spec.<ext>` for the JavaScript and TypeScript extensions, or any file
/// under a `__tests__`, `test` or `tests` directory (helpers and fixture data included). Nothing
/// under `node_modules`.
pub(super) fn is_js_test_file(rel_path: &str) -> bool {
    const EXTS: [&str; 8] = ["js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts"];
    let parts: Vec<&str> = rel_path.split('/').filter(|p| !p.is_empty()).collect();
    let Some((base, dirs)) = parts.split_last() else {
        return false;
    };
    if dirs.contains(&"node_modules") {
        return false;
    }
    if dirs
        .iter()
        .any(|d| matches!(*d, "__tests__" | "test" | "tests"))
    {
        return true;
    }
    let Some((stem, ext)) = base.rsplit_once('.') else {
        return false;
    };
    EXTS.contains(&ext)
        && (stem.ends_with(".test") || stem.ends_with(".spec"))
        && !matches!(stem, ".test" | ".spec")
}

/// `node_modules/.bin/<name>` in `ctx.dir` or the nearest directory above it inside the worktree.
pub(super) fn find_bin(ctx: &RunCtx, name: &str) -> Option<PathBuf> {
    find_bin_in(&ctx.dir, &ctx.worktree, name)
}

/// `node_modules/.bin/<name>` in `dir` or the nearest directory above it inside `top`.
fn find_bin_in(dir: &Path, top: &Path, name: &str) -> Option<PathBuf> {
    let mut dir: Option<&Path> = Some(dir);
    while let Some(d) = dir {
        let candidate = d.join("node_modules").join(".bin").join(name);
        if candidate.is_file() {
            return Some(candidate);
        }
        if d == top || !d.starts_with(top) {
            break;
        }
        dir = d.parent();
    }
    None
}

/// Without a `setup:`, a worktree's `node_modules` can only be the checkout's (linked, see
/// `reuse_node_modules` in the floor), so a tool missing from the checkout is missing from
/// every run: an input error before any worktree exists, as a missing pytest or go is, rather
/// than a problem at each side and an INCONCLUSIVE verdict. With a `setup:` the tool is
/// installed in each worktree and looked for there.
pub(super) fn check_checkout_bin(
    tool: JsTool,
    config: &RunnerConfig,
    checkout: &Path,
) -> Result<(), InputError> {
    if config.setup.is_some() {
        return Ok(());
    }
    let dir = if config.root == "." {
        checkout.to_path_buf()
    } else {
        checkout.join(&config.root)
    };
    if find_bin_in(&dir, checkout, tool.name()).is_some() {
        return Ok(());
    }
    Err(InputError::new(format!(
        "{}: `node_modules/.bin/{}` is not installed in the checkout (runner root `{}` or above it), \
         and the runner has no `setup:` to install it in each worktree",
        tool.name(),
        tool.name(),
        config.root
    ))
    .help(format!(
        "run `npm ci` in `{}` before claim-check (as a workflow does after checkout), or set \
         `setup: npm ci` for the runner",
        config.root
    )))
}

/// After a `setup:` that succeeded, the project's binary must be there: a setup that does not
/// install the runner's tool is the configuration's error, the same at every side, and an
/// input error rather than a problem at each side.
pub(super) fn check_setup_bin(
    tool: JsTool,
    config: &RunnerConfig,
    ctx: &RunCtx,
) -> Result<(), InputError> {
    if find_bin(ctx, tool.name()).is_some() {
        return Ok(());
    }
    let setup = config.setup.as_deref().unwrap_or_default();
    Err(InputError::new(format!(
        "{}: the runner's setup `{setup}` succeeded but installed no `node_modules/.bin/{}` in the runner root `{}` or above it",
        tool.name(),
        tool.name(),
        config.root
    ))
    .help(format!(
        "make `setup:` install the project's dependencies (for example `setup: npm ci`), with {} among them",
        tool.name()
    )))
}

fn missing_bin_problem(tool: JsTool, config: &RunnerConfig) -> String {
    format!(
        "`node_modules/.bin/{}` not found in the runner's root `{}` or above it: run npm ci (or \
         set `setup:` for the runner, e.g. `setup: npm ci`)",
        tool.name(),
        config.root
    )
}

fn js_env() -> Vec<(OsString, OsString)> {
    vec![
        (OsString::from("CI"), OsString::from("1")),
        (OsString::from("NO_COLOR"), OsString::from("1")),
    ]
}

// ---------------------------------------------------------------------------------------------
// The results file
// ---------------------------------------------------------------------------------------------

/// What one test's result says. The order is "how bad": the worst wins for duplicate ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum JsStatus {
    Passed,
    /// Skipped, pending (also filtered out), todo, disabled: it did not run.
    NotRun,
    Failed,
}

/// One test in the results file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct JsTest {
    pub ancestors: Vec<String>,
    pub title: String,
    pub status: JsStatus,
    /// The tool itself said `failed` (a test that passed on a retry is `Failed` for us but not
    /// for the tool, and does not make it exit 1).
    pub tool_failed: bool,
    /// The first failure message, when it failed.
    pub message: Option<String>,
}

/// One test file in the results file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct JsFile {
    /// The file's path as the tool wrote it (absolute).
    pub name: String,
    /// The file's status was `failed`.
    pub failed: bool,
    /// The file-level message (a load error, or jest's summary of failed tests), ANSI-free; for
    /// vitest, a load error with its stack from the JUnit report (`add_vitest_stacks`).
    pub message: String,
    pub tests: Vec<JsTest>,
}

/// Reads a jest-compatible JSON results file (`testResults[].assertionResults[]`). Anything not
/// shaped as expected is an error, never a guess.
pub(super) fn parse_results(bytes: &[u8]) -> Result<Vec<JsFile>, String> {
    let root: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let files = root
        .get("testResults")
        .and_then(Value::as_array)
        .ok_or("no `testResults` array")?;
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a test file without a `name`")?;
        let status = f.get("status").and_then(Value::as_str).unwrap_or("");
        let message = strip_ansi(f.get("message").and_then(Value::as_str).unwrap_or(""));
        let tests = match f.get("assertionResults") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(parse_test)
                .collect::<Result<Vec<_>, String>>()
                .map_err(|e| format!("{name}: {e}"))?,
            Some(_) => return Err(format!("{name}: `assertionResults` is not an array")),
        };
        out.push(JsFile {
            name: name.to_string(),
            failed: status == "failed",
            message,
            tests,
        });
    }
    Ok(out)
}

fn parse_test(v: &Value) -> Result<JsTest, String> {
    let title = v
        .get("title")
        .and_then(Value::as_str)
        .ok_or("a test without a `title`")?;
    let ancestors = match v.get("ancestorTitles") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|t| t.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("{title}: an ancestor title is not a string"))?,
        Some(_) => return Err(format!("{title}: `ancestorTitles` is not an array")),
    };
    let status_text = v
        .get("status")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{title}: no `status`"))?;
    let strings = |key: &str| -> Vec<String> {
        v.get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).map(strip_ansi).collect())
            .unwrap_or_default()
    };
    let failures = strings("failureMessages");
    let retry_reasons = strings("retryReasons");
    let invocations = v.get("invocations").and_then(Value::as_u64).unwrap_or(1);
    // A test that passed only on a retry is a failure for us. A configured retry can come from
    // the tests themselves (vitest's `{ retry: 2 }` beats `--retry=0`; jest's `retryTimes`):
    // vitest keeps the earlier attempts' errors in `failureMessages` of a passed test, jest counts
    // `invocations` (and may fill `retryReasons`).
    let retried = !retry_reasons.is_empty() || invocations > 1 || !failures.is_empty();
    let status = match status_text {
        "passed" if retried => JsStatus::Failed,
        "passed" => JsStatus::Passed,
        "failed" => JsStatus::Failed,
        _ => JsStatus::NotRun,
    };
    let first_failure = failures.into_iter().chain(retry_reasons).next();
    let message = match (status_text, status) {
        ("failed", _) => first_failure,
        (_, JsStatus::Failed) => Some(match first_failure {
            Some(m) => format!("passed only after a retry; an earlier attempt failed: {m}"),
            None => format!("passed only after a retry ({invocations} attempts)"),
        }),
        _ => None,
    };
    Ok(JsTest {
        ancestors,
        title: title.to_string(),
        status,
        tool_failed: status_text == "failed",
        message,
    })
}

/// The test id of a result: the file relative to the runner's root, then the titles.
pub(super) fn test_id(file: &str, ancestors: &[String], title: &str) -> String {
    let mut id = file.to_string();
    for a in ancestors {
        id.push_str(SEP);
        id.push_str(a);
    }
    id.push_str(SEP);
    id.push_str(title);
    id
}

/// The file part of an id and its titles part; `None` when the id has no titles.
pub(super) fn split_id(id: &str) -> Option<(&str, &str)> {
    let (file, titles) = id.split_once(SEP)?;
    (!file.is_empty() && !titles.is_empty()).then_some((file, titles))
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

/// Removes ANSI escape sequences (colors, cursor movement).
pub(super) fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('[') => {
                chars.next();
                // Parameters and intermediates, then one final byte in `@`..=`~`.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                // An OSC sequence ends with BEL or ESC `\`.
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            Some(_) => {
                chars.next();
            }
            None => {}
        }
    }
    out
}

/// `abs` relative to the runner's root, `/`-separated, when it lies inside it.
pub(super) fn root_relative(ctx: &RunCtx, abs: &Path) -> Option<String> {
    relative_to(&ctx.dir, abs)
}

/// Files inside the worktree (repo-relative, not under `node_modules`) that an error message
/// names with a position, in order of appearance: absolute paths (`/w/src/a.js:3:5`,
/// `SyntaxError: /w/src/a.js: Unexpected token`), paths relative to the runner's root followed by
/// `:line` (jest's stack frames `(tests/a.test.js:1:18)`), and vite's root-relative `At file:
/// /src/a.js:1:19`. A module specifier (`'../src/gone'`) is relative to the importing file, not
/// to us, so it is not taken.
pub(super) fn mentioned_files(ctx: &RunCtx, text: &str) -> Vec<String> {
    static PATH: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(re) = PATH
        .get_or_init(|| {
            Regex::new(
                r#"(?m)(?:^|[\s'"(\[])(At file: )?(/?[A-Za-z0-9_@.+~-][A-Za-z0-9_@.+~/-]*\.(?:[cm]?[jt]sx?|vue|svelte|json))(:\d+|: )?"#,
            )
            .ok()
        })
        .as_ref()
    else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for cap in re.captures_iter(text) {
        let Some(path) = cap.get(2).map(|m| m.as_str()) else {
            continue;
        };
        let at_file = cap.get(1).is_some();
        // `:12` after a relative path; `: ` (babel's `path: message`) only counts when absolute.
        let positioned = cap.get(3).is_some_and(|m| m.as_str() != ": ");
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(rooted) = path.strip_prefix('/') {
            candidates.push(PathBuf::from(path));
            if at_file {
                candidates.push(ctx.dir.join(rooted));
            }
        } else if positioned {
            candidates.push(ctx.dir.join(path));
        }
        for c in candidates {
            if !c.is_file() || c.components().any(|p| p.as_os_str() == "node_modules") {
                continue;
            }
            if let Some(rel) = worktree_relative(ctx, &c) {
                if !out.contains(&rel) {
                    out.push(rel);
                }
                break;
            }
        }
    }
    out
}

/// Where a test file that failed to load fails, for DESIGN 5.4: the position the error names
/// (babel's `SyntaxError: /abs/a.test.js: Unexpected token (8:26)`, the first stack frame inside
/// the worktree and outside `node_modules`, vite's `At file: /src/a.js:1:19`); else, for a
/// module that cannot be found (vitest without its stack names no position), the line that
/// imports it, and for a file that does not parse (vite's "Failed to parse source"), our
/// parser's first syntax error in the test file. TypeScript's compile errors (ts-jest's `tests/a.test.ts:3:10 - error
/// TS2305: …`) are one diagnostic each: several can stand in one message, and each may be a
/// different test's. `file` is relative to the runner's root.
///
/// A name the file imports that is not a function where the file calls it while loading is
/// also placed at the import that binds it (see [`unbound_import`]). Messages name paths
/// relative to the repository, never the worktree's.
pub(super) fn load_diagnostics(ctx: &RunCtx, file: &str, message: &str) -> Vec<Diagnostic> {
    let mut out = typescript_diagnostics(ctx, message);
    if out.is_empty() {
        out.extend(load_diagnostic(ctx, file, message));
        if let Some(first) = out.first_mut() {
            if let Some(import) = unbound_import(ctx, file, first) {
                first.names = import.names.clone();
                out.push(import);
            }
        }
    }
    for d in &mut out {
        d.message = display_text(ctx, &d.message);
    }
    out
}

/// vite's SSR transform (vitest) and CommonJS destructuring (jest) do not check that a module
/// exports the names a file imports from it: a name it lacks is bound to `undefined`, and the
/// failure surfaces at the name's first use. When the file calls it while loading (at the top
/// level, or in a `describe` body), the file fails with vitest's `TypeError: (0 , clamp) is not
/// a function` or jest's `TypeError: clamp is not a function`, at the call. Where that call is
/// in the test file itself and one of its imports binds the name, that import is what fails, as
/// Node's ESM linker would say at the import (`does not provide an export named 'clamp'`): a
/// diagnostic at the binding, naming it, so that a test that uses the name owns the failure and
/// its neighbours do not. A member of a namespace (`math.clamp is not a function`) names no
/// binding of the file: nothing is added.
fn unbound_import(ctx: &RunCtx, file: &str, thrown: &Diagnostic) -> Option<Diagnostic> {
    static NOT_CALLABLE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = NOT_CALLABLE
        .get_or_init(|| {
            Regex::new(
                r"^(?:TypeError: )?(?:\(0 , ([A-Za-z_$][A-Za-z0-9_$]*)\)|([A-Za-z_$][A-Za-z0-9_$]*)) is not a (?:function|constructor)$",
            )
            .ok()
        })
        .as_ref()?;
    let c = re.captures(thrown.message.trim())?;
    let name = c.get(1).or_else(|| c.get(2))?.as_str();
    if worktree_relative(ctx, &ctx.dir.join(file)).as_deref() != Some(thrown.file.as_str()) {
        return None;
    }
    let source = std::fs::read_to_string(ctx.dir.join(file)).ok()?;
    let (line, column) = super::js_parse::import_binding(&source, file, name)?;
    Some(Diagnostic {
        file: thrown.file.clone(),
        line,
        column: Some(column),
        message: format!("{}, thrown at {}", thrown.message, thrown.at()),
        names: vec![name.to_string()],
    })
}

/// `path:line:col - error TSnnnn: message` lines inside the worktree; `has no exported member
/// 'x'` names the one import that fails.
fn typescript_diagnostics(ctx: &RunCtx, message: &str) -> Vec<Diagnostic> {
    static TS: OnceLock<Option<Regex>> = OnceLock::new();
    static MEMBER: OnceLock<Option<Regex>> = OnceLock::new();
    let (Some(ts), Some(member)) = (
        TS.get_or_init(|| {
            Regex::new(r"(?m)^\s*(\S+\.(?:[cm]?[jt]sx?)):(\d+):(\d+) - error (TS\d+: .*)$").ok()
        })
        .as_ref(),
        MEMBER
            .get_or_init(|| Regex::new(r"has no exported member(?: named)? '([^']+)'").ok())
            .as_ref(),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in ts.captures_iter(message) {
        let path = Path::new(&c[1]);
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            ctx.dir.join(path)
        };
        if abs.components().any(|p| p.as_os_str() == "node_modules") {
            continue;
        }
        let (Some(rel), Ok(line), Ok(column)) = (
            worktree_relative(ctx, &abs),
            c[2].parse::<u32>(),
            c[3].parse::<u32>(),
        ) else {
            continue;
        };
        let text: String = c[4].chars().take(200).collect();
        out.push(Diagnostic {
            file: rel,
            line,
            column: Some(column),
            names: member
                .captures(&text)
                .map(|m| vec![m[1].to_string()])
                .unwrap_or_default(),
            message: text,
        });
    }
    out
}

fn load_diagnostic(ctx: &RunCtx, file: &str, message: &str) -> Option<Diagnostic> {
    static BABEL: OnceLock<Option<Regex>> = OnceLock::new();
    static FRAME: OnceLock<Option<Regex>> = OnceLock::new();
    static MISSING: OnceLock<Option<Regex>> = OnceLock::new();
    let babel = BABEL
        .get_or_init(|| Regex::new(r"SyntaxError: (/\S+?): .*\((\d+):(\d+)\)").ok())
        .as_ref()?;
    let frame = FRAME
        .get_or_init(|| {
            Regex::new(
                r#"(?m)(?:^|[\s'"(\[])(At file: )?((?:file://)?/?[A-Za-z0-9_@.+~-][A-Za-z0-9_@.+~/-]*\.(?:[cm]?[jt]sx?|vue|svelte)):(\d+):(\d+)"#,
            )
            .ok()
        })
        .as_ref()?;
    let missing = MISSING
        .get_or_init(|| Regex::new(r#"Cannot find (?:module|package) '([^']+)'"#).ok())
        .as_ref()?;
    static NO_EXPORT: OnceLock<Option<Regex>> = OnceLock::new();
    let no_export = NO_EXPORT
        .get_or_init(|| {
            Regex::new(
                r#"The requested module '([^']+)' does not provide an export named '([^']+)'"#,
            )
            .ok()
        })
        .as_ref()?;
    fn text<'h>(m: Option<regex::Match<'h>>) -> &'h str {
        m.map_or("", |m| m.as_str())
    }
    let number = |m: Option<regex::Match<'_>>| text(m).parse::<u32>().ok();
    let first_line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('●'))
        .unwrap_or("")
        .chars()
        .take(200)
        .collect::<String>();
    // Node's ESM linker names the one export that is missing; only that name of the import
    // statement fails.
    let names: Vec<String> = no_export
        .captures(message)
        .and_then(|c| c.get(2))
        .map(|m| vec![m.as_str().to_string()])
        .unwrap_or_default();
    let diagnostic = |rel: String, line: u32, column: Option<u32>| Diagnostic {
        file: rel,
        line,
        column,
        message: first_line.clone(),
        names: names.clone(),
    };
    let in_worktree = |path: &str, at_file: bool| -> Option<String> {
        let path = path.strip_prefix("file://").unwrap_or(path);
        let mut candidates = Vec::new();
        if let Some(rooted) = path.strip_prefix('/') {
            candidates.push(PathBuf::from(path));
            if at_file {
                candidates.push(ctx.dir.join(rooted));
            }
        } else {
            candidates.push(ctx.dir.join(path));
        }
        candidates.into_iter().find_map(|c| {
            if !c.is_file() || c.components().any(|p| p.as_os_str() == "node_modules") {
                return None;
            }
            worktree_relative(ctx, &c)
        })
    };
    if let Some(c) = babel.captures(message) {
        if let (Some(rel), Some(line)) = (in_worktree(text(c.get(1)), false), number(c.get(2))) {
            // Babel counts columns from 0.
            return Some(diagnostic(rel, line, number(c.get(3)).map(|n| n + 1)));
        }
    }
    for c in frame.captures_iter(message) {
        if let (Some(rel), Some(line)) = (
            in_worktree(text(c.get(2)), c.get(1).is_some()),
            number(c.get(3)),
        ) {
            return Some(diagnostic(rel, line, number(c.get(4))));
        }
    }
    let source = std::fs::read_to_string(ctx.dir.join(file)).ok()?;
    let rel = worktree_relative(ctx, &ctx.dir.join(file))?;
    // Node's ESM linker: `The requested module '../src/m.js' does not provide an export named
    // 'x'`, at the import of that module.
    let spec = missing
        .captures(message)
        .or_else(|| no_export.captures(message));
    if let Some(c) = spec {
        if let Some((line, column)) =
            super::js_parse::import_position(&source, file, text(c.get(1)))
        {
            return Some(diagnostic(rel, line, Some(column)));
        }
    }
    let unparsable = [
        "Failed to parse source",
        "SyntaxError",
        "Transform failed",
        "Unexpected token",
    ];
    if unparsable.iter().any(|m| message.contains(m)) {
        if let Some((line, column)) = super::js_parse::first_syntax_error(&source, file) {
            return Some(diagnostic(rel, line, Some(column)));
        }
    }
    None
}

/// The titles part of a test id (`describe > test`), the name [`super::js_parse`] gives the
/// test item.
pub(super) fn test_item(id: &str) -> Option<String> {
    split_id(id).map(|(_, titles)| titles.to_string())
}

/// The test items and imports of a test file (relative to the runner's root).
pub(super) fn item_map(ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
    if !safe_relative(rel_path) {
        return None;
    }
    let source = std::fs::read_to_string(ctx.dir.join(rel_path)).ok()?;
    super::js_parse::item_map(&source, rel_path)
}

/// The message of a file that failed because it holds no tests: not a build failure.
fn is_no_tests_message(message: &str) -> bool {
    message.contains("No test suite found in file")
        || message.contains("Your test suite must contain at least one test")
}

/// What a results file says, keyed by test id.
#[derive(Debug, Default)]
pub(super) struct Observed {
    /// Every test, in the tool's order, with its root-relative file.
    pub listed: Vec<(String, String)>,
    /// The worst status and the first failure message of each id.
    pub tests: BTreeMap<String, (JsStatus, Option<String>)>,
    /// Root-relative files that failed to load, with their messages.
    pub broken: BTreeMap<String, String>,
    /// Root-relative files that failed although none of their tests did, with their messages.
    pub file_errors: BTreeMap<String, String>,
    /// The tool said a test or a file failed (what makes it exit 1).
    pub any_failed: bool,
    /// Result files that are not under the runner's root (their tests have no id).
    pub outside: Vec<String>,
}

pub(super) fn observe(ctx: &RunCtx, files: &[JsFile]) -> Observed {
    let mut obs = Observed::default();
    for f in files {
        let any_test_failed = f.tests.iter().any(|t| t.tool_failed);
        obs.any_failed |= f.failed || any_test_failed;
        let Some(rel) = root_relative(ctx, Path::new(&f.name)) else {
            obs.outside.push(f.name.clone());
            continue;
        };
        if f.failed && f.tests.is_empty() {
            if !is_no_tests_message(&f.message) {
                obs.broken.insert(rel.clone(), f.message.clone());
            }
            continue;
        }
        if f.failed && !any_test_failed {
            obs.file_errors.insert(rel.clone(), f.message.clone());
        }
        for t in &f.tests {
            let id = test_id(&rel, &t.ancestors, &t.title);
            match obs.tests.get_mut(&id) {
                Some(entry) => {
                    if t.status > entry.0 {
                        entry.0 = t.status;
                    }
                    if entry.1.is_none() {
                        entry.1 = t.message.clone();
                    }
                }
                None => {
                    obs.listed.push((id.clone(), rel.clone()));
                    obs.tests.insert(id, (t.status, t.message.clone()));
                }
            }
        }
    }
    obs
}

impl Observed {
    /// Forgets every file but `files` (root-relative).
    fn keep_files(&mut self, files: &[String]) {
        let keep = |f: &String| files.contains(f);
        self.listed.retain(|(_, f)| keep(f));
        let ids: BTreeSet<&String> = self.listed.iter().map(|(id, _)| id).collect();
        self.tests.retain(|id, _| ids.contains(id));
        self.broken.retain(|f, _| keep(f));
        self.file_errors.retain(|f, _| keep(f));
    }

    /// The build failure for the broken files among `files` (all of them when `None`).
    fn build_failure(&self, ctx: &RunCtx, files: Option<&BTreeSet<&str>>) -> Option<BuildFailure> {
        let mut diagnostic: Vec<String> = Vec::new();
        let mut excerpt = String::new();
        let mut diagnostics = Vec::new();
        for (file, message) in &self.broken {
            if files.is_some_and(|f| !f.contains(file.as_str())) {
                continue;
            }
            diagnostics.extend(load_diagnostics(ctx, file, message));
            let mut push = |rel: String| {
                if !diagnostic.contains(&rel) {
                    diagnostic.push(rel);
                }
            };
            if let Some(rel) = worktree_relative(ctx, &ctx.dir.join(file)) {
                push(rel);
            }
            for rel in mentioned_files(ctx, message) {
                push(rel);
            }
            let body: Vec<&str> = message
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.trim().is_empty())
                .take(20)
                .collect();
            excerpt.push_str(file);
            excerpt.push('\n');
            excerpt.push_str(&display_text(ctx, &body.join("\n")));
            excerpt.push_str("\n\n");
        }
        if diagnostic.is_empty() && excerpt.is_empty() {
            return None;
        }
        Some(BuildFailure {
            diagnostics,
            diagnostic_files: diagnostic,
            excerpt: truncate(excerpt.trim_end(), 4000),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------

/// What one command left: its exit code and results, or why there are none.
struct Executed {
    exit: Option<i32>,
    files: Option<Vec<JsFile>>,
    problems: Vec<String>,
}

/// Runs the tool once and reads its results file.
fn execute(
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
    let bytes = std::fs::read(results).ok();
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
                .and_then(|p| std::fs::read(p).ok())
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

/// vitest's JSON report gives a test file that failed to load its error's message alone
/// (`(0 , clamp) is not a function`), without the error's name or where it was thrown. Its JUnit
/// report has the same error as a test case named after the file, with its name and vitest's
/// stack, one frame a line, paths relative to the root:
///
/// ```text
/// <testcase classname="tests/a.test.js" name="tests/a.test.js" time="0">
///     <failure message="(0 , clamp) is not a function" type="TypeError">
/// TypeError: (0 , clamp) is not a function
///  ❯ tests/a.test.js:4:19
///     </failure>
/// ```
///
/// Each such file's message becomes the JUnit's first line where that names the same error
/// (`TypeError: …`), the rest of the JSON message, then the `❯` frames of that error (before any
/// `Caused by:`). Only the frames: the code frame vite adds to a parse failure says `File:
/// /abs/a.test.js:1:0` whatever the line of the error.
fn add_vitest_stacks(ctx: &RunCtx, files: &mut [JsFile], cases: &[JunitCase]) {
    for f in files.iter_mut().filter(|f| f.failed && f.tests.is_empty()) {
        let Some(rel) = root_relative(ctx, Path::new(&f.name)) else {
            continue;
        };
        let Some(text) = cases
            .iter()
            .find(|c| c.classname == rel && c.name == rel)
            .and_then(|c| c.text.as_deref())
        else {
            continue;
        };
        f.message = with_stack(&f.message, &strip_ansi(text));
    }
}

/// `message` (from the JSON report) with the error's name and frames from `junit` (its JUnit
/// failure text), as [`add_vitest_stacks`] says.
fn with_stack(message: &str, junit: &str) -> String {
    let mut lines = junit.lines().map(str::trim).filter(|l| !l.is_empty());
    let head = lines.next().unwrap_or("");
    let frames: Vec<&str> = lines
        .take_while(|l| !l.starts_with("Caused by:") && !l.starts_with('⎯'))
        .filter(|l| l.starts_with('❯'))
        .collect();
    let (first, rest) = message.split_once('\n').unwrap_or((message, ""));
    let first = if !first.trim().is_empty() && head.ends_with(first.trim()) {
        head
    } else {
        first
    };
    let mut out = first.to_string();
    for part in [rest.trim_end()]
        .into_iter()
        .chain(frames)
        .filter(|p| !p.is_empty())
    {
        out.push('\n');
        out.push_str(part);
    }
    out
}

/// What kind of failure a test's first failure message is. Assertion errors: `expect`'s matcher
/// errors (jest prints them as `Error: expect(received).toBe(expected)`, vitest as chai's
/// `AssertionError: expected 2 to be 3`) and node's `assert` (`AssertionError [ERR_ASSERTION]`);
/// any other error is an exception. A retried pass ("passed only after a retry") has no kind.
pub(super) fn failure_kind(message: &str) -> Option<FailureKind> {
    let first = message.lines().map(str::trim).find(|l| !l.is_empty())?;
    if first.starts_with("passed only after a retry") {
        return None;
    }
    let (name, rest) = first.split_once(':').unwrap_or((first, ""));
    let name = name.trim();
    let is_name = name.split_whitespace().next().is_some_and(|n| {
        n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    });
    if !is_name {
        return Some(FailureKind::Exception);
    }
    let base = name.split_whitespace().next().unwrap_or(name);
    let matcher = rest.trim_start().starts_with("expect(");
    Some(if base.ends_with("AssertionError") || matcher {
        FailureKind::Assertion
    } else {
        FailureKind::Exception
    })
}

/// Whether the exit code agrees with the results; a problem saying how when it does not.
fn agreement(tool: JsTool, exit: Option<i32>, obs: &Observed) -> (bool, Option<String>) {
    let contract = tool.contract();
    if !contract.is_result_code(exit) {
        return (false, None);
    }
    match contract.agree(exit, obs.any_failed) {
        Ok(()) => (true, None),
        Err(problem) => (false, Some(problem)),
    }
}

/// The scope's JavaScript and TypeScript files that exist under the root; `None` for every file.
/// The tools apply their own test-file patterns to the files they are given, so a scope file that
/// is not a test file (a source file that mentions the tag) simply yields no test.
fn scoped_files(ctx: &RunCtx, scope: &ListScope) -> Option<Vec<String>> {
    const EXTS: [&str; 8] = ["js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts"];
    let ListScope::Files(files) = scope else {
        return None;
    };
    let out: BTreeSet<String> = files
        .iter()
        .filter(|f| {
            f.rsplit_once('.')
                .is_some_and(|(_, ext)| EXTS.contains(&ext))
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

/// Step 3 of [`run`]: the outcomes of the `(id, file)` pairs that ran, from what the results
/// file says and the exit code.
fn judge(
    tool: JsTool,
    ctx: &RunCtx,
    runnable: &[(&str, &str)],
    obs: &Observed,
    exit: Option<i32>,
    report: &mut RunReport,
    problems: &mut Vec<String>,
) {
    let (agrees, disagreement) = agreement(tool, exit, obs);
    problems.extend(disagreement);
    let mut errored_files: BTreeSet<&str> = BTreeSet::new();
    let mut build_failed: BTreeSet<&str> = BTreeSet::new();
    for &(id, file) in runnable {
        if obs.broken.contains_key(file) {
            report.outcomes.insert(id.to_string(), Outcome::BuildFail);
            build_failed.insert(file);
            continue;
        }
        let outcome = match obs.tests.get(id) {
            Some((JsStatus::Failed, message)) => {
                if let Some(m) = first_message_line(message.as_deref(), None) {
                    report.messages.insert(id.to_string(), m);
                }
                if let Some(kind) = message.as_deref().and_then(failure_kind) {
                    report.failure_kinds.insert(id.to_string(), kind);
                }
                Outcome::Fail
            }
            Some((JsStatus::Passed, _)) => {
                if obs.file_errors.contains_key(file) {
                    errored_files.insert(file);
                    Outcome::NotObserved
                } else if agrees {
                    Outcome::Pass
                } else {
                    Outcome::NotObserved
                }
            }
            _ => Outcome::NotObserved,
        };
        report.outcomes.insert(id.to_string(), outcome);
    }
    for file in errored_files {
        let message = obs.file_errors.get(file).map(String::as_str);
        problems.push(format!(
            "{file}: the file failed outside its tests, so its passes are not believed: {}",
            first_message_line(message, None).unwrap_or_default()
        ));
    }
    if !build_failed.is_empty() {
        report.build_failure = obs.build_failure(ctx, Some(&build_failed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> RunCtx {
        RunCtx {
            worktree: PathBuf::from("/nonexistent-wt"),
            dir: PathBuf::from("/nonexistent-wt/web"),
            scratch: PathBuf::from("/nonexistent-scratch"),
            timeout: Duration::from_secs(5),
            env: vec![],
        }
    }

    #[test]
    fn test_files() {
        for yes in [
            "a.test.js",
            "src/a.test.tsx",
            "src/a.spec.mts",
            "src/b.spec.cjs",
            "src/__tests__/helper.js",
            "test/data.json",
            "pkg/tests/fixture.txt",
            "x.test.jsx",
        ] {
            assert!(is_js_test_file(yes), "{yes}");
        }
        for no in [
            "src/a.js",
            "src/test.js",
            "src/a.test.json",
            "src/a.tests.js",
            "src/.test.js",
            "node_modules/x/test/a.js",
            "node_modules/x/a.test.js",
            "tests",
            "",
        ] {
            assert!(!is_js_test_file(no), "{no}");
        }
    }

    #[test]
    fn ids_and_patterns() {
        assert_eq!(
            test_id("tests/a.test.js", &["math".into(), "inner".into()], "deep"),
            "tests/a.test.js > math > inner > deep"
        );
        assert_eq!(test_id("a.test.js", &[], "adds"), "a.test.js > adds");
        assert_eq!(
            split_id("tests/a.test.js > math > adds"),
            Some(("tests/a.test.js", "math > adds"))
        );
        assert_eq!(split_id("tests/a.test.js"), None);
        assert_eq!(split_id(" > x"), None);
        assert_eq!(
            escape_regex("adds (a|b) [x] 1.5$ ^{2}*+? a/b \\"),
            "adds \\(a\\|b\\) \\[x\\] 1\\.5\\$ \\^\\{2\\}\\*\\+\\? a\\/b \\\\"
        );
        assert_eq!(
            name_pattern(["adds", "math > adds (x)", "adds"]),
            "^(?:adds|math(?: | > )adds \\(x\\))$"
        );
        // The pattern, read as a regex, matches the full name exactly and nothing longer.
        let re = Regex::new(&name_pattern(["adds", "math > inner > deep"])).unwrap();
        assert!(re.is_match("adds"));
        assert!(!re.is_match("adds twice"));
        assert!(!re.is_match("xadds"));
        assert!(re.is_match("math inner deep"));
        assert!(!re.is_match("math inner deeper"));
    }

    #[test]
    fn failure_kinds() {
        let k = |m: &str| failure_kind(m);
        assert_eq!(
            k("AssertionError: expected 2 to be 3 // Object.is equality\n    at x"),
            Some(FailureKind::Assertion)
        );
        assert_eq!(
            k("Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 3"),
            Some(FailureKind::Assertion)
        );
        assert_eq!(
            k("AssertionError [ERR_ASSERTION]: 1 == 2"),
            Some(FailureKind::Assertion)
        );
        assert_eq!(
            k("TypeError: (0 , clamp) is not a function"),
            Some(FailureKind::Exception)
        );
        assert_eq!(k("Error: boom"), Some(FailureKind::Exception));
        assert_eq!(k("passed only after a retry (2 attempts)"), None);
        assert_eq!(k(""), None);
    }

    #[test]
    fn load_failure_positions() {
        let tmp = tempfile::tempdir().unwrap();
        let wt = tmp.path().join("wt");
        let dir = wt.join("web");
        let test_src = "import { expect, test } from 'vitest';\nimport { gone } from '../src/gone.js';\n\ntest('x', () => {});\n";
        for (f, text) in [("tests/a.test.js", test_src), ("src/m.js", "")] {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        }
        let c = RunCtx {
            worktree: wt.clone(),
            dir: dir.clone(),
            scratch: tmp.path().join("scratch"),
            timeout: Duration::from_secs(5),
            env: vec![],
        };
        let d = dir.display();
        let at = |message: &str| {
            load_diagnostic(&c, "tests/a.test.js", message)
                .map(|d| (d.file, d.line, d.column, d.message))
        };
        // babel: the file and its 0-based column.
        assert_eq!(
            at(&format!("  ● Test suite failed to run\n\n    SyntaxError: {d}/tests/a.test.js: Unexpected token, expected \",\" (8:26)\n")),
            Some(("web/tests/a.test.js".into(), 8, Some(27), format!("SyntaxError: {d}/tests/a.test.js: Unexpected token, expected \",\" (8:26)")))
        );
        // The first frame inside the worktree and outside node_modules.
        assert_eq!(
            at("TypeError: m.clamp is not a function\n  at x (../../node_modules/a/b.js:1:1)\n  at Object.clamp (src/m.js:2:13)\n  at y (tests/a.test.js:1:1)").map(|a| (a.0, a.1)),
            Some(("web/src/m.js".into(), 2))
        );
        // vitest names no position: the import of the missing module.
        assert_eq!(
            at(&format!(
                "Cannot find module '../src/gone.js' imported from '{d}/tests/a.test.js'"
            ))
            .map(|a| (a.0, a.1, a.2)),
            Some(("web/tests/a.test.js".into(), 2, Some(22)))
        );
        let esm = load_diagnostic(
            &c,
            "tests/a.test.js",
            "SyntaxError: The requested module '../src/gone.js' does not provide an export named 'gone'",
        )
        .unwrap();
        // Only that export of the statement fails.
        assert_eq!((esm.line, esm.names), (2, vec!["gone".to_string()]));
        // Nothing to place it by.
        assert_eq!(at("clamp is not a function"), None);
        // ts-jest: every TypeScript error, each with its own position.
        let ts = load_diagnostics(
            &c,
            "tests/a.test.js",
            "  ● Test suite failed to run\n\n    tests/a.test.js:2:10 - error TS2305: Module '\"../src/gone\"' has no exported member 'gone'.\n\n    2 import { gone } from '../src/gone';\n\n    tests/a.test.js:4:3 - error TS2304: Cannot find name 'later'.\n",
        );
        let got: Vec<(u32, Vec<String>)> = ts.into_iter().map(|d| (d.line, d.names)).collect();
        assert_eq!(got, vec![(2, vec!["gone".to_string()]), (4, vec![])]);
    }

    /// A project with test files on disk, for the positions read from load errors.
    fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, RunCtx) {
        let tmp = tempfile::tempdir().unwrap();
        let wt = tmp.path().join("wt");
        let dir = wt.join("web");
        for (f, text) in files {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
        }
        let c = RunCtx {
            worktree: wt,
            dir,
            scratch: tmp.path().join("scratch"),
            timeout: Duration::from_secs(5),
            env: vec![],
        };
        (tmp, c)
    }

    const TOP_LEVEL: &str = "import { expect, test } from 'vitest';\nimport { add, clamp } from '../src/math.js';\n\nconst high = clamp(50, 0, 10);\n\ntest('trivial', () => {\n  expect(add(1, 1)).toBe(2);\n});\n";
    const SYNTAX: &str = "import { describe, expect, test } from 'vitest';\n\ntest('ok', () => {\n  expect(1).toBe(1);\n});\n\ntest('bad', () => {\n  expect(1.toBe(1);\n});\n";

    /// vitest 3.2's JUnit for files that fail to load, as written (only the paths of the project
    /// are the fixture's): a call at the top level of a name the module does not export, a
    /// module that cannot be found (its cause's frames are vite's), and a file that does not
    /// parse (vite's code frame says `:1:0`).
    fn vitest_junit(d: &str) -> String {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="3" failures="3" errors="0" time="0">
    <testsuite name="tests/a.test.js" timestamp="2026-12-02T01:07:04.276Z" hostname="vm" tests="1" failures="1" errors="0" skipped="0" time="0">
        <testcase classname="tests/a.test.js" name="tests/a.test.js" time="0">
            <failure message="(0 , clamp) is not a function" type="TypeError">
TypeError: (0 , clamp) is not a function
 ❯ tests/a.test.js:4:19
            </failure>
        </testcase>
    </testsuite>
    <testsuite name="tests/missing.test.js" timestamp="2026-12-02T01:08:22.619Z" hostname="vm" tests="1" failures="1" errors="0" skipped="0" time="0">
        <testcase classname="tests/missing.test.js" name="tests/missing.test.js" time="0">
            <failure message="Cannot find module &apos;../src/double.js&apos; imported from &apos;{d}/tests/missing.test.js&apos;" type="Error">
Error: Cannot find module &apos;../src/double.js&apos; imported from &apos;{d}/tests/missing.test.js&apos;
 ❯ tests/missing.test.js:2:1

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯
Serialized Error: {{ code: &apos;ERR_MODULE_NOT_FOUND&apos; }}
Caused by: Error: Failed to load url ../src/double.js (resolved id: ../src/double.js) in {d}/tests/missing.test.js. Does the file exist?
 ❯ loadAndTransform node_modules/vite/dist/node/chunks/config.js:22907:33
            </failure>
        </testcase>
    </testsuite>
    <testsuite name="tests/syntax.test.js" timestamp="2026-12-02T01:10:35.952Z" hostname="vm" tests="1" failures="1" errors="0" skipped="0" time="0">
        <testcase classname="tests/syntax.test.js" name="tests/syntax.test.js" time="0">
            <failure message="Failed to parse source for import analysis because the content contains invalid JS syntax. If you are using JSX, make sure to name the file with the .jsx or .tsx extension." type="Error">
Error: Failed to parse source for import analysis because the content contains invalid JS syntax. If you are using JSX, make sure to name the file with the .jsx or .tsx extension.
  Plugin: vite:import-analysis
  File: {d}/tests/syntax.test.js:1:0
  1  |  import {{ describe, expect, test }} from &apos;vitest&apos;;
     |  ^
  2  |  
 ❯ TransformPluginContext._formatLog node_modules/vite/dist/node/chunks/config.js:29250:43
 ❯ loadAndTransform node_modules/vite/dist/node/chunks/config.js:22914:26
            </failure>
        </testcase>
    </testsuite>
</testsuites>
"#
        )
    }

    #[test]
    fn vitest_module_level_failures_take_their_stack_from_junit() {
        let (_tmp, c) = project(&[
            ("tests/a.test.js", TOP_LEVEL),
            ("tests/missing.test.js", ""),
            ("tests/syntax.test.js", SYNTAX),
        ]);
        let d = c.dir.display().to_string();
        // vitest 3.2's JSON report for the same run: the messages alone.
        let json = format!(
            r#"{{"testResults": [
              {{"assertionResults": [], "status": "failed", "message": "(0 , clamp) is not a function", "name": "{d}/tests/a.test.js"}},
              {{"assertionResults": [], "status": "failed", "message": "Cannot find module '../src/double.js' imported from '{d}/tests/missing.test.js'", "name": "{d}/tests/missing.test.js"}},
              {{"assertionResults": [], "status": "failed", "message": "Failed to parse source for import analysis because the content contains invalid JS syntax. If you are using JSX, make sure to name the file with the .jsx or .tsx extension.", "name": "{d}/tests/syntax.test.js"}}
            ]}}"#
        );
        let mut files = parse_results(json.as_bytes()).unwrap();
        // Nothing to place the call by without the stack.
        assert!(load_diagnostics(&c, "tests/a.test.js", &files[0].message).is_empty());
        let cases = parse_junit(vitest_junit(&d).as_bytes()).unwrap();
        add_vitest_stacks(&c, &mut files, &cases);
        assert_eq!(
            files[0].message,
            "TypeError: (0 , clamp) is not a function\n❯ tests/a.test.js:4:19"
        );
        // The cause's frames are not the error's.
        assert_eq!(
            files[1].message,
            format!("Error: Cannot find module '../src/double.js' imported from '{d}/tests/missing.test.js'\n❯ tests/missing.test.js:2:1")
        );
        assert!(!files[2].message.contains("File:"), "{}", files[2].message);

        // The call, then the import that binds the name it calls.
        let got = load_diagnostics(&c, "tests/a.test.js", &files[0].message);
        assert_eq!(
            got,
            vec![
                Diagnostic {
                    file: "web/tests/a.test.js".into(),
                    line: 4,
                    column: Some(19),
                    message: "TypeError: (0 , clamp) is not a function".into(),
                    names: vec!["clamp".into()],
                },
                Diagnostic {
                    file: "web/tests/a.test.js".into(),
                    line: 2,
                    column: Some(15),
                    message:
                        "TypeError: (0 , clamp) is not a function, thrown at web/tests/a.test.js:4"
                            .into(),
                    names: vec!["clamp".into()],
                },
            ]
        );
        // Paths relative to the repository.
        let missing = load_diagnostics(&c, "tests/missing.test.js", &files[1].message);
        assert_eq!(
            missing
                .iter()
                .map(|d| (d.line, d.message.as_str()))
                .collect::<Vec<_>>(),
            vec![(2, "Error: Cannot find module '../src/double.js' imported from 'web/tests/missing.test.js'")]
        );
        // vite's `:1:0` is not taken: the parser's first syntax error is.
        let syntax = load_diagnostics(&c, "tests/syntax.test.js", &files[2].message);
        assert_eq!(syntax.len(), 1);
        assert!((7..=9).contains(&syntax[0].line), "{syntax:?}");
    }

    #[test]
    fn a_name_not_exported_is_placed_at_its_import() {
        let describe = "\nconst { add, clamp } = require('../src/math');\n\ndescribe('clamp', () => {\n  const high = clamp(50, 0, 10);\n  test('trivial', () => {\n    expect(add(1, 1)).toBe(2);\n  });\n});\n";
        let member =
            "const math = require('../src/math');\n\nconst high = math.clamp(50, 0, 10);\n";
        let (_tmp, c) = project(&[
            ("tests/describe.test.js", describe),
            ("tests/member.test.js", member),
            (
                "src/helper.js",
                "const { clamp } = require('./math');\nmodule.exports = clamp(1);\n",
            ),
        ]);
        // jest 29's message, as written.
        let jest = "  ● Test suite failed to run\n\n    TypeError: clamp is not a function\n\n      3 |\n      4 | describe('clamp', () => {\n    > 5 |   const high = clamp(50, 0, 10);\n        |                ^\n      6 |   test('trivial', () => {\n\n      at clamp (tests/describe.test.js:5:16)\n      at Object.describe (tests/describe.test.js:4:1)\n";
        let got: Vec<(u32, Option<u32>, Vec<String>)> =
            load_diagnostics(&c, "tests/describe.test.js", jest)
                .into_iter()
                .map(|d| (d.line, d.column, d.names))
                .collect();
        let clamp = vec!["clamp".to_string()];
        assert_eq!(
            got,
            vec![(5, Some(16), clamp.clone()), (2, Some(14), clamp)]
        );
        // A namespace's member binds nothing of the file.
        let jest = "  ● Test suite failed to run\n\n    TypeError: math.clamp is not a function\n\n      at clamp (tests/member.test.js:3:19)\n";
        let got = load_diagnostics(&c, "tests/member.test.js", jest);
        assert_eq!(
            got.iter()
                .map(|d| (d.line, d.names.len()))
                .collect::<Vec<_>>(),
            vec![(3, 0)]
        );
        // Thrown in another file: that file's names are not the test file's.
        let jest = "  ● Test suite failed to run\n\n    TypeError: clamp is not a function\n\n      at Object.clamp (src/helper.js:2:18)\n      at Object.require (tests/describe.test.js:2:1)\n";
        let got = load_diagnostics(&c, "tests/describe.test.js", jest);
        assert_eq!(
            got.iter()
                .map(|d| (d.file.as_str(), d.line, d.names.len()))
                .collect::<Vec<_>>(),
            vec![("web/src/helper.js", 2, 0)]
        );
    }

    #[test]
    fn strips_ansi() {
        assert_eq!(
            strip_ansi("\u{1b}[31m\u{1b}[1m>\u{1b}[22m\u{1b}[39m 1 | x\u{1b}]8;;http://a\u{7}y"),
            "> 1 | xy"
        );
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn tool_args() {
        let args = |tool: JsTool, files: &[String]| -> Vec<String> {
            tool.args(
                Path::new("/s/out.json"),
                &["--config".into(), "c.js".into()],
                "^(?:a)$",
                files,
            )
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
        };
        assert_eq!(
            args(JsTool::Vitest, &["tests/a.test.js".into()]),
            vec![
                "run",
                "--reporter=json",
                "--reporter=junit",
                "--outputFile.json=/s/out.json",
                "--outputFile.junit=/s/out.xml",
                "--no-coverage",
                "--no-cache",
                "--retry=0",
                "--passWithNoTests",
                "--config",
                "c.js",
                "--testNamePattern=^(?:a)$",
                "tests/a.test.js"
            ]
        );
        assert_eq!(
            args(JsTool::Jest, &["tests/a.test.js".into()]),
            vec![
                "--ci",
                "--watchAll=false",
                "--no-coverage",
                "--json",
                "--outputFile=/s/out.json",
                "--passWithNoTests",
                "--config",
                "c.js",
                "--testNamePattern=^(?:a)$",
                "--runTestsByPath",
                "tests/a.test.js"
            ]
        );
        assert!(!args(JsTool::Jest, &[]).contains(&"--runTestsByPath".to_string()));
    }

    /// vitest's JSON reporter after `vitest run -t …`: a passing, a failing, a filtered-out, a
    /// skipped and a todo test, nested describes, a duplicate title, a file that failed to load,
    /// and an empty file.
    const VITEST_JSON: &str = r#"{
      "numTotalTestSuites": 4, "success": false,
      "testResults": [
        {"name": "/nonexistent-wt/web/tests/math.test.js", "status": "failed", "message": "",
         "assertionResults": [
           {"ancestorTitles": [], "fullName": "adds", "status": "passed", "title": "adds", "failureMessages": [], "meta": {}},
           {"ancestorTitles": [], "fullName": "adds twice", "status": "skipped", "title": "adds twice", "failureMessages": []},
           {"ancestorTitles": [], "fullName": "fails", "status": "failed", "title": "fails",
            "failureMessages": ["AssertionError: expected 2 to be 3 // Object.is equality\n    at /nonexistent-wt/web/tests/math.test.js:6:41"]},
           {"ancestorTitles": [], "fullName": "later", "status": "todo", "title": "later", "failureMessages": []},
           {"ancestorTitles": ["math", "inner"], "fullName": "math inner deep", "status": "passed", "title": "deep", "failureMessages": []},
           {"ancestorTitles": [], "fullName": "dup", "status": "passed", "title": "dup", "failureMessages": []},
           {"ancestorTitles": [], "fullName": "flaky", "status": "passed", "title": "flaky", "failureMessages": ["AssertionError: expected 1 to be 2"]},
           {"ancestorTitles": [], "fullName": "dup", "status": "failed", "title": "dup", "failureMessages": ["Error: second dup"]}
         ]},
        {"name": "/nonexistent-wt/web/tests/broken.test.js", "status": "failed",
         "message": "Cannot find module '../src/gone.js' imported from '/nonexistent-wt/web/tests/broken.test.js'",
         "assertionResults": []},
        {"name": "/nonexistent-wt/web/tests/empty.test.js", "status": "failed",
         "message": "No test suite found in file /nonexistent-wt/web/tests/empty.test.js",
         "assertionResults": []},
        {"name": "/elsewhere/x.test.js", "status": "passed", "message": "",
         "assertionResults": [{"ancestorTitles": [], "status": "passed", "title": "x", "failureMessages": []}]}
      ]
    }"#;

    #[test]
    fn vitest_results() {
        let files = parse_results(VITEST_JSON.as_bytes()).unwrap();
        assert_eq!(files.len(), 4);
        let obs = observe(&ctx(), &files);
        assert!(obs.any_failed);
        let status = |id: &str| obs.tests.get(id).map(|t| t.0);
        assert_eq!(status("tests/math.test.js > adds"), Some(JsStatus::Passed));
        assert_eq!(
            status("tests/math.test.js > adds twice"),
            Some(JsStatus::NotRun)
        );
        assert_eq!(status("tests/math.test.js > fails"), Some(JsStatus::Failed));
        assert_eq!(status("tests/math.test.js > later"), Some(JsStatus::NotRun));
        assert_eq!(
            status("tests/math.test.js > math > inner > deep"),
            Some(JsStatus::Passed)
        );
        // Same id twice: the worst wins, with its message.
        assert_eq!(
            obs.tests.get("tests/math.test.js > dup"),
            Some(&(JsStatus::Failed, Some("Error: second dup".to_string())))
        );
        assert_eq!(
            obs.tests["tests/math.test.js > fails"].1.as_deref(),
            Some("AssertionError: expected 2 to be 3 // Object.is equality\n    at /nonexistent-wt/web/tests/math.test.js:6:41")
        );
        assert_eq!(
            obs.broken.keys().collect::<Vec<_>>(),
            vec!["tests/broken.test.js"]
        );
        assert!(obs.file_errors.is_empty());
        assert_eq!(obs.outside, vec!["/elsewhere/x.test.js"]);
        assert_eq!(obs.listed.len(), 7);
        // Passed on a retry (vitest keeps the earlier attempt's error): a failure.
        assert_eq!(
            obs.tests["tests/math.test.js > flaky"],
            (
                JsStatus::Failed,
                Some(
                    "passed only after a retry; an earlier attempt failed: AssertionError: expected 1 to be 2"
                        .to_string()
                )
            )
        );
        let bf = obs.build_failure(&ctx(), None).unwrap();
        // The files do not exist on this machine: only the failing file itself.
        assert_eq!(bf.diagnostic_files, vec!["web/tests/broken.test.js"]);
        assert!(bf.excerpt.contains("Cannot find module"), "{}", bf.excerpt);
        let none: BTreeSet<&str> = BTreeSet::new();
        assert!(obs.build_failure(&ctx(), Some(&none)).is_none());
    }

    /// jest's `--json` after `jest -t …`: filtered-out and skipped tests are both `pending`, a
    /// test retried by `jest.retryTimes`, a file that failed to load, and a file whose
    /// `afterAll` threw after its tests passed.
    const JEST_JSON: &str = r#"{
      "numFailedTestSuites": 3, "success": false,
      "testResults": [
        {"name": "/nonexistent-wt/web/tests/math.test.js", "status": "failed",
         "message": "  \u001b[1m● fails\u001b[22m\n\n    expect(received).toBe(expected)",
         "assertionResults": [
           {"ancestorTitles": [], "fullName": "adds", "status": "passed", "title": "adds", "failureMessages": [], "invocations": 1, "retryReasons": []},
           {"ancestorTitles": [], "fullName": "adds twice", "status": "pending", "title": "adds twice", "failureMessages": []},
           {"ancestorTitles": [], "fullName": "fails", "status": "failed", "title": "fails",
            "failureMessages": ["Error: \u001b[2mexpect(\u001b[22mreceived).toBe(expected) // Object.is equality\n\nExpected: 3"]},
           {"ancestorTitles": [], "fullName": "later", "status": "todo", "title": "later", "failureMessages": []},
           {"ancestorTitles": ["math"], "fullName": "math flaky", "status": "passed", "title": "flaky", "failureMessages": [],
            "invocations": 2, "retryReasons": ["Error: first attempt failed"]},
           {"ancestorTitles": ["math"], "fullName": "math flaky2", "status": "passed", "title": "flaky2", "failureMessages": [],
            "invocations": 3, "retryReasons": []}
         ]},
        {"name": "/nonexistent-wt/web/tests/missing.test.js", "status": "failed",
         "message": "  ● Test suite failed to run\n\n    Cannot find module '../src/gone' from 'tests/missing.test.js'\n\n      at Object.require (tests/missing.test.js:1:18)\n",
         "assertionResults": []},
        {"name": "/nonexistent-wt/web/tests/hook.test.js", "status": "failed",
         "message": "  ● Test suite failed to run\n\n    afterAll boom",
         "assertionResults": [
           {"ancestorTitles": [], "fullName": "ok", "status": "passed", "title": "ok", "failureMessages": []}
         ]},
        {"name": "/nonexistent-wt/web/tests/empty.test.js", "status": "failed",
         "message": "  ● Test suite failed to run\n\n    Your test suite must contain at least one test.\n",
         "assertionResults": []}
      ]
    }"#;

    #[test]
    fn jest_results() {
        let files = parse_results(JEST_JSON.as_bytes()).unwrap();
        assert!(!files[0].message.contains('\u{1b}'));
        let obs = observe(&ctx(), &files);
        let status = |id: &str| obs.tests.get(id).map(|t| t.0);
        assert_eq!(status("tests/math.test.js > adds"), Some(JsStatus::Passed));
        assert_eq!(
            status("tests/math.test.js > adds twice"),
            Some(JsStatus::NotRun)
        );
        assert_eq!(status("tests/math.test.js > later"), Some(JsStatus::NotRun));
        assert_eq!(
            obs.tests["tests/math.test.js > fails"],
            (
                JsStatus::Failed,
                Some(
                    "Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 3"
                        .to_string()
                )
            )
        );
        // Passed only on a retry: a failure.
        assert_eq!(
            obs.tests["tests/math.test.js > math > flaky"],
            (
                JsStatus::Failed,
                Some(
                    "passed only after a retry; an earlier attempt failed: Error: first attempt failed"
                        .to_string()
                )
            )
        );
        assert_eq!(
            obs.tests["tests/math.test.js > math > flaky2"],
            (
                JsStatus::Failed,
                Some("passed only after a retry (3 attempts)".to_string())
            )
        );
        assert_eq!(
            obs.broken.keys().collect::<Vec<_>>(),
            vec!["tests/missing.test.js"]
        );
        assert_eq!(
            obs.file_errors.keys().collect::<Vec<_>>(),
            vec!["tests/hook.test.js"]
        );
        assert_eq!(
            status("tests/hook.test.js > ok"),
            Some(JsStatus::Passed),
            "the caller decides not to believe it"
        );
        assert!(obs.any_failed);
        assert_eq!(agreement(JsTool::Jest, Some(1), &obs), (true, None));
        assert!(!agreement(JsTool::Jest, Some(0), &obs).0);
        assert!(!agreement(JsTool::Jest, Some(2), &obs).0);
        assert!(!agreement(JsTool::Jest, None, &obs).0);
    }

    /// Runs [`judge`] over literal results as `run` would.
    fn judged(json: &str, exit: Option<i32>, ids: &[&str]) -> (RunReport, Vec<String>) {
        let c = ctx();
        let obs = observe(&c, &parse_results(json.as_bytes()).unwrap());
        let mut report = RunReport {
            outcomes: ids
                .iter()
                .map(|id| (id.to_string(), Outcome::NotObserved))
                .collect(),
            ..RunReport::default()
        };
        let runnable: Vec<(&str, &str)> = ids
            .iter()
            .map(|id| (*id, split_id(id).unwrap().0))
            .collect();
        let mut problems = Vec::new();
        judge(
            JsTool::Vitest,
            &c,
            &runnable,
            &obs,
            exit,
            &mut report,
            &mut problems,
        );
        (report, problems)
    }

    #[test]
    fn vitest_outcomes() {
        let ids = [
            "tests/math.test.js > adds",
            "tests/math.test.js > adds twice",
            "tests/math.test.js > fails",
            "tests/math.test.js > later",
            "tests/math.test.js > math > inner > deep",
            "tests/math.test.js > math inner > deep",
            "tests/math.test.js > add",
            "tests/math.test.js > dup",
            "tests/broken.test.js > uses gone",
            "tests/empty.test.js > x",
        ];
        let (report, problems) = judged(VITEST_JSON, Some(1), &ids);
        let got: Vec<(&str, Outcome)> = report
            .outcomes
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        assert_eq!(
            got,
            vec![
                ("tests/broken.test.js > uses gone", Outcome::BuildFail),
                ("tests/empty.test.js > x", Outcome::NotObserved),
                ("tests/math.test.js > add", Outcome::NotObserved),
                ("tests/math.test.js > adds", Outcome::Pass),
                ("tests/math.test.js > adds twice", Outcome::NotObserved),
                ("tests/math.test.js > dup", Outcome::Fail),
                ("tests/math.test.js > fails", Outcome::Fail),
                ("tests/math.test.js > later", Outcome::NotObserved),
                ("tests/math.test.js > math > inner > deep", Outcome::Pass),
                (
                    "tests/math.test.js > math inner > deep",
                    Outcome::NotObserved
                ),
            ]
        );
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            report.messages["tests/math.test.js > fails"],
            "AssertionError: expected 2 to be 3 // Object.is equality"
        );
        assert_eq!(report.messages.len(), 2);
        let bf = report.build_failure.unwrap();
        assert_eq!(bf.diagnostic_files, vec!["web/tests/broken.test.js"]);

        // Exit 0 although the results show failures, or no exit code at all: no pass is
        // believed, failures stay failures.
        for exit in [Some(0), Some(2), None] {
            let (report, _) = judged(VITEST_JSON, exit, &ids);
            assert_eq!(
                report.outcomes["tests/math.test.js > adds"],
                Outcome::NotObserved,
                "{exit:?}"
            );
            assert_eq!(
                report.outcomes["tests/math.test.js > fails"],
                Outcome::Fail,
                "{exit:?}"
            );
        }
        let (_, problems) = judged(VITEST_JSON, Some(0), &ids);
        assert_eq!(
            problems,
            vec!["vitest exited with code 0 but its results show failures"]
        );
    }

    #[test]
    fn jest_outcomes() {
        let ids = [
            "tests/math.test.js > adds",
            "tests/math.test.js > adds twice",
            "tests/math.test.js > fails",
            "tests/math.test.js > math > flaky",
            "tests/missing.test.js > uses gone",
            "tests/hook.test.js > ok",
        ];
        let (report, problems) = judged(JEST_JSON, Some(1), &ids);
        assert_eq!(report.outcomes["tests/math.test.js > adds"], Outcome::Pass);
        // Filtered out by the pattern: `pending`, never a pass.
        assert_eq!(
            report.outcomes["tests/math.test.js > adds twice"],
            Outcome::NotObserved
        );
        assert_eq!(report.outcomes["tests/math.test.js > fails"], Outcome::Fail);
        assert_eq!(
            report.messages["tests/math.test.js > fails"],
            "Error: expect(received).toBe(expected) // Object.is equality"
        );
        assert_eq!(
            report.outcomes["tests/math.test.js > math > flaky"],
            Outcome::Fail
        );
        assert_eq!(
            report.outcomes["tests/missing.test.js > uses gone"],
            Outcome::BuildFail
        );
        // Its file failed after the test passed (an `afterAll` that threw).
        assert_eq!(
            report.outcomes["tests/hook.test.js > ok"],
            Outcome::NotObserved
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("tests/hook.test.js: the file failed outside its tests"));
        assert_eq!(
            report.build_failure.unwrap().diagnostic_files,
            vec!["web/tests/missing.test.js"]
        );
    }

    #[test]
    fn exit_code_must_agree() {
        let all_pass = r#"{"testResults": [{"name": "/nonexistent-wt/web/a.test.js", "status": "passed", "message": "",
            "assertionResults": [{"ancestorTitles": [], "title": "a", "status": "passed"}]}]}"#;
        let obs = observe(&ctx(), &parse_results(all_pass.as_bytes()).unwrap());
        assert_eq!(agreement(JsTool::Vitest, Some(0), &obs), (true, None));
        let (ok, problem) = agreement(JsTool::Vitest, Some(1), &obs);
        assert!(!ok);
        assert_eq!(
            problem.as_deref(),
            Some("vitest exited with code 1 but its results show no failures")
        );
    }

    #[test]
    fn a_retried_pass_fails_without_spoiling_the_others() {
        // vitest exits 0 when a test passed on its retry; that test is a failure for us, the
        // exit code still agrees with the rest.
        let json = r#"{"testResults": [{"name": "/nonexistent-wt/web/a.test.js", "status": "passed", "message": "",
            "assertionResults": [
              {"ancestorTitles": [], "title": "a", "status": "passed", "failureMessages": []},
              {"ancestorTitles": [], "title": "flaky", "status": "passed", "failureMessages": ["AssertionError: expected 1 to be 2"]}
            ]}]}"#;
        let ids = ["a.test.js > a", "a.test.js > flaky"];
        let (report, problems) = judged(json, Some(0), &ids);
        assert_eq!(report.outcomes["a.test.js > a"], Outcome::Pass);
        assert_eq!(report.outcomes["a.test.js > flaky"], Outcome::Fail);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            report.messages["a.test.js > flaky"],
            "passed only after a retry; an earlier attempt failed: AssertionError: expected 1 to be 2"
        );
    }

    #[test]
    fn malformed_results_are_errors() {
        assert!(parse_results(b"").is_err());
        assert!(parse_results(b"{}").is_err());
        assert!(parse_results(br#"{"testResults": [{"status": "passed"}]}"#).is_err());
        assert!(parse_results(
            br#"{"testResults": [{"name": "a", "assertionResults": [{"title": "t"}]}]}"#
        )
        .is_err());
        assert!(parse_results(
            br#"{"testResults": [{"name": "a", "assertionResults": [{"title": "t", "status": "passed", "ancestorTitles": [1]}]}]}"#
        )
        .is_err());
        assert_eq!(
            parse_results(br#"{"testResults": []}"#).unwrap(),
            Vec::<JsFile>::new()
        );
    }

    #[test]
    fn files_named_in_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let wt = tmp.path().join("wt");
        let dir = wt.join("web");
        for f in [
            "tests/a.test.js",
            "src/bad.js",
            "src/other.ts",
            "node_modules/x/index.js",
        ] {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
        }
        std::fs::write(wt.join("outside.js"), "").unwrap();
        let c = RunCtx {
            worktree: wt.clone(),
            dir: dir.clone(),
            scratch: tmp.path().join("scratch"),
            timeout: Duration::from_secs(5),
            env: vec![],
        };
        let d = dir.display();
        let text = format!(
            "Cannot find module '../src/other.ts' from 'tests/a.test.js'\n\
             SyntaxError: {d}/src/bad.js: Unexpected token (1:12)\n\
             at Object.require (tests/a.test.js:1:17)\n\
             at x ({d}/node_modules/x/index.js:3:4)\n\
             at y (../outside.js:1:1)\n\
             Parse failure: Expression expected\nAt file: /src/other.ts:1:19\n\
             {d}/src/missing.js:1:1\n"
        );
        assert_eq!(
            mentioned_files(&c, &text),
            vec![
                "web/src/bad.js",
                "web/tests/a.test.js",
                "outside.js",
                "web/src/other.ts"
            ]
        );
        // A bare module specifier relative to its importer is not taken.
        assert!(
            mentioned_files(&c, "Cannot find module '../src/bad.js' imported from 'x'").is_empty()
        );
    }

    #[test]
    fn bin_lookup() {
        let tmp = tempfile::tempdir().unwrap();
        let wt = tmp.path().join("wt");
        let dir = wt.join("packages/web");
        std::fs::create_dir_all(&dir).unwrap();
        let c = RunCtx {
            worktree: wt.clone(),
            dir: dir.clone(),
            scratch: tmp.path().join("scratch"),
            timeout: Duration::from_secs(5),
            env: vec![],
        };
        assert_eq!(find_bin(&c, "vitest"), None);
        // Above the worktree does not count.
        std::fs::create_dir_all(tmp.path().join("node_modules/.bin")).unwrap();
        std::fs::write(tmp.path().join("node_modules/.bin/vitest"), "").unwrap();
        assert_eq!(find_bin(&c, "vitest"), None);
        // Hoisted to the repository root.
        std::fs::create_dir_all(wt.join("node_modules/.bin")).unwrap();
        std::fs::write(wt.join("node_modules/.bin/vitest"), "").unwrap();
        assert_eq!(
            find_bin(&c, "vitest"),
            Some(wt.join("node_modules/.bin/vitest"))
        );
        std::fs::create_dir_all(dir.join("node_modules/.bin")).unwrap();
        std::fs::write(dir.join("node_modules/.bin/vitest"), "").unwrap();
        assert_eq!(
            find_bin(&c, "vitest"),
            Some(dir.join("node_modules/.bin/vitest"))
        );
    }
}
