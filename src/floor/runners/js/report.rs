//! Reading what a JavaScript tool wrote: its jest-compatible JSON results file (and, for vitest,
//! the JUnit report that holds the stacks of the files that fail to load) into tests and files,
//! then into each requested test's outcome, first failure message and failure kind, with the
//! exit code checked against the results (step 3 of [`super::run`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

use super::diagnostics::{load_diagnostics, mentioned_files};
use super::{test_id, JsTool};
use crate::floor::runners::junit::JunitCase;
use crate::floor::runners::kit::{display_text, relative_to, truncate, worktree_relative};
use crate::floor::runners::{
    first_message_line, BuildFailure, FailureKind, Outcome, RunCtx, RunReport,
};

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

/// Why a results file is not read: it is not shaped as a jest-compatible one.
#[derive(Debug, thiserror::Error)]
pub(super) enum ResultsError {
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("no `testResults` array")]
    NoTestResults,
    #[error("a test file without a `name`")]
    FileWithoutName,
    /// A test of the file is not shaped as one.
    #[error("{file}: {why}")]
    Test { file: String, why: TestError },
    #[error("{0}: `assertionResults` is not an array")]
    ResultsNotArray(String),
}

/// Why one entry of a file's `assertionResults` is not read as a test.
#[derive(Debug, thiserror::Error)]
pub(super) enum TestError {
    #[error("a test without a `title`")]
    NoTitle,
    #[error("{0}: an ancestor title is not a string")]
    AncestorNotText(String),
    #[error("{0}: `ancestorTitles` is not an array")]
    AncestorsNotArray(String),
    #[error("{0}: no `status`")]
    NoStatus(String),
}

/// Reads a jest-compatible JSON results file (`testResults[].assertionResults[]`). Anything not
/// shaped as expected is an error, never a guess.
pub(super) fn parse_results(bytes: &[u8]) -> Result<Vec<JsFile>, ResultsError> {
    let root: Value = serde_json::from_slice(bytes).map_err(ResultsError::NotJson)?;
    let files = root
        .get("testResults")
        .and_then(Value::as_array)
        .ok_or(ResultsError::NoTestResults)?;
    let mut out = Vec::with_capacity(files.len());
    for f in files {
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or(ResultsError::FileWithoutName)?;
        let status = f.get("status").and_then(Value::as_str).unwrap_or("");
        let message = strip_ansi(f.get("message").and_then(Value::as_str).unwrap_or(""));
        let tests = match f.get("assertionResults") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(parse_test)
                .collect::<Result<Vec<_>, TestError>>()
                .map_err(|why| ResultsError::Test {
                    file: name.to_string(),
                    why,
                })?,
            Some(_) => return Err(ResultsError::ResultsNotArray(name.to_string())),
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

fn parse_test(v: &Value) -> Result<JsTest, TestError> {
    let title = v
        .get("title")
        .and_then(Value::as_str)
        .ok_or(TestError::NoTitle)?;
    let ancestors = match v.get("ancestorTitles") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|t| t.as_str().map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| TestError::AncestorNotText(title.to_string()))?,
        Some(_) => return Err(TestError::AncestorsNotArray(title.to_string())),
    };
    let status_text = v
        .get("status")
        .and_then(Value::as_str)
        .ok_or_else(|| TestError::NoStatus(title.to_string()))?;
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
fn root_relative(ctx: &RunCtx, abs: &Path) -> Option<String> {
    relative_to(&ctx.dir, abs)
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
    pub(super) fn keep_files(&mut self, files: &[String]) {
        let keep = |f: &String| files.contains(f);
        self.listed.retain(|(_, f)| keep(f));
        let ids: BTreeSet<&String> = self.listed.iter().map(|(id, _)| id).collect();
        self.tests.retain(|id, _| ids.contains(id));
        self.broken.retain(|f, _| keep(f));
        self.file_errors.retain(|f, _| keep(f));
    }

    /// The build failure for the broken files among `files` (all of them when `None`).
    pub(super) fn build_failure(
        &self,
        ctx: &RunCtx,
        files: Option<&BTreeSet<&str>>,
    ) -> Option<BuildFailure> {
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
pub(super) fn add_vitest_stacks(ctx: &RunCtx, files: &mut [JsFile], cases: &[JunitCase]) {
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
pub(super) fn agreement(tool: JsTool, exit: Option<i32>, obs: &Observed) -> (bool, Option<String>) {
    let contract = tool.contract();
    if !contract.is_result_code(exit) {
        return (false, None);
    }
    match contract.agree(exit, obs.any_failed) {
        Ok(()) => (true, None),
        Err(problem) => (false, Some(problem.0)),
    }
}

/// Step 3 of [`super::run::run`]: the outcomes of the `(id, file)` pairs that ran, from what the
/// results file says and the exit code.
pub(super) fn judge(
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
            report.set(id, Outcome::BuildFail);
            build_failed.insert(file);
            continue;
        }
        let outcome = match obs.tests.get(id) {
            Some((JsStatus::Failed, message)) => {
                if let Some(t) = report.test_mut(id) {
                    if let Some(m) = first_message_line(message.as_deref(), None) {
                        t.message = Some(m);
                    }
                    if let Some(kind) = message.as_deref().and_then(failure_kind) {
                        t.failure_kind = Some(kind);
                    }
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
        report.set(id, outcome);
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
