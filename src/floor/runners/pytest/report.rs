//! Reading one pytest run's results: what did not collect, and how each requested test ended.
//!
//! 3. What was collected comes from the same run: a file that could not be collected is a
//!    `collection failure` error case of the JUnit file, named after the file, with the
//!    traceback (or, where the file lacks it, an `ERROR collecting <file>` section of the
//!    output); its requested ids are `BuildFail` with the build failure as for `list`. A
//!    conftest that cannot be loaded (exit 4) stops pytest before it collects anything and
//!    fails every id below it the same way, read from the output.
//! 4. Read the JUnit file. pytest names a case `classname` = the file's path with `/` → `.` and
//!    without `.py`, plus the class names; `name` = the function name with its parameters. A test
//!    passes only when its case says passed and the exit code agrees (0 with no failures or
//!    errors in the file, 1 with some, 5 with no case at all: nothing requested was collected);
//!    `failure`/`error` (an error in setup is a real miss too) are `Fail`, with the failure's
//!    kind from the exception type the traceback ends with (`AssertionError`, or pytest's own
//!    `Failed` of `pytest.fail`: an assertion; anything else: an exception); `skipped` (also
//!    `xfail`) and absent cases (ids that do not exist, deselected by `args`) are
//!    `NotObserved`. Other exit codes, or a missing or unreadable file, are problems (failures
//!    already read stay `Fail`).

use std::collections::BTreeSet;

use super::diagnostics::{build_failure, collect_errors, CollectError};
use crate::floor::runners::contract::PYTEST;
use crate::floor::runners::junit::{
    any_failed, CaseNames, JunitCase, JunitFile, JunitStatus, Reading,
};
use crate::floor::runners::{FailureKind, Outcome, Problem, RunCtx, RunReport};

/// What one pytest run left to read.
pub(super) struct Output {
    pub exit: Option<i32>,
    /// The exit code as a problem, for when it is not one the contract believes.
    pub exit_text: String,
    pub stdout: String,
    pub stderr: String,
    pub junit: JunitFile,
}

/// Steps 3 and 4 (see the module doc): of the requested `ids`, those of `to_run` (the ids the
/// run was asked for, their `files` on its command line) that did not collect are `BuildFail`,
/// the others' outcomes, messages and failure kinds come from the JUnit file.
pub(super) fn read_run(
    ctx: &RunCtx,
    report: &mut RunReport,
    ids: &[String],
    mut to_run: Vec<&str>,
    files: &BTreeSet<&str>,
    out: Output,
) {
    // 3. What did not collect, from the same run's results: the JUnit file's collection
    // failures, and the report's sections for what the file does not hold (a conftest that
    // could not be loaded stops pytest before it collects anything).
    let mut errors: Vec<CollectError> = match out.junit.cases() {
        Some(cases) => junit_collect_errors(cases, files),
        None => Vec::new(),
    };
    for e in collect_errors(&out.stdout, &out.stderr) {
        if !errors.iter().any(|known| known.node == e.node) {
            errors.push(e);
        }
    }
    let mut build_failed = false;
    to_run.retain(|id| {
        if errors.iter().any(|e| e.covers(id)) {
            report.set(id, Outcome::BuildFail);
            build_failed = true;
            false
        } else {
            true
        }
    });
    if build_failed {
        let requested: Vec<&str> = ids.iter().map(String::as_str).collect();
        report.build_failure =
            build_failure(ctx, &errors, |e| requested.iter().any(|id| e.covers(id)));
    }
    // 4. Read the results.
    let exit = out.exit;
    let mut problems: Vec<String> = Vec::new();
    let explained = build_failed && matches!(exit, Some(2) | Some(4));
    let exit_believed = PYTEST.is_result_code(exit) || exit == Some(5);
    if !exit_believed && !explained {
        problems.push(out.exit_text);
    }
    // Exit 5 ("nothing collected") agrees only with an empty file; 0 and 1 by the contract.
    let agree = |cases: &[JunitCase]| match exit {
        Some(5) if cases.is_empty() => Ok(()),
        Some(5) => Err(Problem(
            "pytest exited with code 5 but its JUnit file has test cases".into(),
        )),
        _ => PYTEST.agree(exit, any_failed(cases)),
    };
    let reading = Reading {
        names: CaseNames::Derived(|id| Some(junit_key(id))),
        exit_believed,
        agree: &agree,
        missing: format!(
            "pytest exited with code {} but wrote no JUnit file",
            exit.unwrap_or(-1)
        ),
        unreadable: "pytest's JUnit file is unreadable",
        failure_kind,
    };
    out.junit.attach(report, to_run, reading, problems);
}

/// pytest's JUnit `(classname, name)` for a node id (pytest's `mangle_test_address`).
pub(super) fn junit_key(id: &str) -> (String, String) {
    let (path, params) = match id.find('[') {
        Some(i) => (&id[..i], &id[i..]),
        None => (id, ""),
    };
    let mut names: Vec<String> = path.split("::").map(str::to_string).collect();
    if let Some(first) = names.first_mut() {
        let dotted = first.replace('/', ".");
        *first = dotted.strip_suffix(".py").unwrap_or(&dotted).to_string();
    }
    if let Some(last) = names.last_mut() {
        last.push_str(params);
    }
    let name = names.pop().unwrap_or_default();
    (names.join("."), name)
}

/// The files that could not be collected, from pytest's JUnit file: an error case named after
/// the file (`classname=""`, `name="tests.test_x"`, message `collection failure`) whose text is
/// the traceback. The dotted name is matched back to the requested file it mangles to; a name
/// two requested files share is left to the report's own section.
pub(super) fn junit_collect_errors(
    cases: &[JunitCase],
    files: &BTreeSet<&str>,
) -> Vec<CollectError> {
    let mangled = |f: &str| -> String {
        let dotted = f.replace('/', ".");
        dotted.strip_suffix(".py").unwrap_or(&dotted).to_string()
    };
    cases
        .iter()
        .filter(|c| {
            c.classname.is_empty()
                && c.status == JunitStatus::Errored
                && c.message.as_deref() == Some("collection failure")
        })
        .filter_map(|c| {
            let mut matching = files.iter().filter(|f| mangled(f) == c.name);
            let file = matching.next()?;
            if matching.next().is_some() {
                return None;
            }
            Some(CollectError {
                node: file.to_string(),
                header: format!("ERROR collecting {file}"),
                body: c.text.clone().unwrap_or_default(),
                conftest: false,
            })
        })
        .collect()
}

/// The kind of a failed or errored case: the exception type its traceback ends with (the long
/// style's `tests/test_a.py:2: AssertionError`, or the last `E   ValueError: x` line), else
/// the message's (`assert 1 == 2` is pytest's rewritten assertion).
pub(super) fn failure_kind(case: &JunitCase) -> Option<FailureKind> {
    let text = case.text.as_deref().unwrap_or("");
    let from_location = text.lines().rev().find_map(|l| {
        let (at, ty) = l.trim().rsplit_once(": ")?;
        let (_, line) = at.rsplit_once(':')?;
        (line.chars().all(|c| c.is_ascii_digit()) && !line.is_empty() && is_exception_name(ty))
            .then_some(ty)
    });
    let from_e_line = || {
        text.lines().rev().find_map(|l| {
            let rest = l.strip_prefix('E')?.trim_start();
            exception_name_of(rest)
        })
    };
    let message = case.message.as_deref().unwrap_or("").trim();
    let message = message
        .strip_prefix("failed on setup with \"")
        .or_else(|| message.strip_prefix("failed on teardown with \""))
        .unwrap_or(message);
    let from_message = || {
        if message.starts_with("assert ") || message == "assert" {
            Some("AssertionError")
        } else {
            exception_name_of(message)
        }
    };
    let ty = from_location.or_else(from_e_line).or_else(from_message)?;
    let short = ty.rsplit('.').next().unwrap_or(ty);
    Some(match short {
        // `pytest.fail(…)` is the test saying it failed, as an assertion does.
        "AssertionError" | "Failed" => FailureKind::Assertion,
        _ => FailureKind::Exception,
    })
}

/// `ValueError` of `ValueError: x` (also dotted: `mod.Error: x`).
fn exception_name_of(line: &str) -> Option<&str> {
    let (ty, _) = line.split_once(':')?;
    is_exception_name(ty).then_some(ty)
}

fn is_exception_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}
