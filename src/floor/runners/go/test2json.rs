//! Reading what `go test -json` printed: the `test2json` events (one JSON object a line) and the
//! go command's own lines between them (`FAIL <pkg> [build failed]`), and deciding from them,
//! with the exit code, each requested test's outcome, failure message and failure kind (the
//! rule is step 3 of [`super::run`]).
//!
//! Go 1.19's `test2json` reads results from the text the test binary prints, so a test that
//! prints `--- PASS: TestX` could forge a result for a test of the same package; requiring the
//! declaration, the absence of any `fail` event and the exit code's agreement narrows that to
//! tests that really exist and really ran in the same command.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::is_test_name;
use crate::floor::runners::contract::GO;
use crate::floor::runners::kit::{code_str, truncate};
use crate::floor::runners::{first_message_line, FailureKind, Outcome};

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
    pub(super) fn package_result(&self, pkg: &str) -> Option<&str> {
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
    pub(super) fn listed_names(&self, pkg: &str) -> Vec<&str> {
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
    pub(super) fn terminal(&self, pkg: &str) -> BTreeMap<&str, Vec<&str>> {
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
        let panic = self.first_panic(pkg);
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

    /// The first of the package's `output` events that starts with `panic: ` (a panic ends the
    /// test binary).
    pub(super) fn first_panic(&self, pkg: &str) -> Option<&str> {
        self.events
            .iter()
            .filter(|e| e.package == pkg && e.action == "output")
            .filter_map(|e| e.output.as_deref())
            .find(|o| o.starts_with("panic: "))
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
    pub(super) fn build_text(&self, stderr: &str) -> String {
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

/// Decides each requested name of one package's command (step 3 of [`super::run`]).
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
