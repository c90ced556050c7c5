//! Reading what a libtest binary prints, for the `cargo test` adapter (and, for failure kinds,
//! nextest, whose JUnit text is the test's own output): the test names of `--list --format
//! terse`, the result lines and summary of the pretty output judged into one outcome per
//! requested test, and each failed test's panic message and failure kind.
//!
//! libtest's output is believed only when it is consistent: a summary line is present, the counts
//! of `ok`, `FAILED` and `ignored` lines equal the summary's, and the exit code agrees (0 with no
//! failures, 101 with some). Anything else (a crash, a test that called `exit`, stray output on
//! the result lines) makes that binary's ids `NotObserved` with a problem: a wrong pass is worse
//! than a missing one. Result lines are read only between `running N tests` and the `failures:`
//! section, because the failures section replays the tests' captured output, which can contain
//! anything.

use std::collections::{BTreeMap, BTreeSet};

use crate::floor::runners::contract::LIBTEST;
use crate::floor::runners::kit::code_str;
use crate::floor::runners::Problem;
use crate::floor::runners::{FailureKind, Outcome};

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
) -> Result<Vec<(String, Outcome)>, Problem> {
    let Some(summary) = out.summary else {
        return Err(Problem(format!(
            "no `test result:` line (exit code {}); the test binary crashed or exited early",
            code_str(exit_code)
        )));
    };
    let count = |s: LibtestStatus| out.results.iter().filter(|(_, st)| *st == s).count() as u64;
    let (ok, failed, ignored) = (
        count(LibtestStatus::Ok),
        count(LibtestStatus::Failed),
        count(LibtestStatus::Ignored),
    );
    if (ok, failed, ignored) != (summary.passed, summary.failed, summary.ignored) {
        return Err(Problem(format!(
            "result lines ({ok} ok, {failed} failed, {ignored} ignored) disagree with the summary \
             ({} passed, {} failed, {} ignored)",
            summary.passed, summary.failed, summary.ignored
        )));
    }
    // The summary's own word must agree with its counts, and the exit code with both.
    let summary_agrees = summary.ok == (summary.failed == 0);
    let exit_agrees = summary_agrees && LIBTEST.agree(exit_code, summary.failed > 0).is_ok();
    if !exit_agrees {
        return Err(Problem(format!(
            "exit code {} disagrees with `test result: {}` ({} failed)",
            code_str(exit_code),
            if summary.ok { "ok" } else { "FAILED" },
            summary.failed
        )));
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

#[cfg(test)]
mod tests;
