//! JUnit XML reading, shared by the adapters whose runners write JUnit (nextest, pytest, and the
//! JavaScript runners).
//!
//! In: the raw bytes of a JUnit XML file as a runner wrote it. Out: one [`JunitCase`] per distinct
//! `(classname, name)`, in the order of first appearance, each with the worst status any of its
//! occurrences had.
//!
//! Steps: stream the document with quick-xml; require a `testsuites` or `testsuite` root (suites
//! may nest); for every `testcase` element read `classname`, `name` and `file`, and derive the
//! status from its children: `failure` (and the retry elements `flakyFailure`, `rerunFailure`,
//! `flakyError`, `rerunError`) → failed, `error` → errored, `skipped` → skipped, none → passed.
//! The message and body of the first failure-like child are kept for reports. `system-out`,
//! `system-err` and `properties` are ignored.
//!
//! Why "any retry element means failed": the floor runs each test once with retries off, so a
//! retry element means a retry happened anyway, and a test that passed only on retry must never
//! count as a pass. Why "worst status wins" for duplicates: two cases with the same identity (for
//! example two JavaScript tests with the same title in one file) cannot be told apart, so a pass
//! is believed only when no occurrence said otherwise.
//!
//! A run's file into its report: [`JunitFile::read`] reads the file right after the run that
//! wrote it (nextest, pytest, junit-command) and keeps its bytes with that run's invocation as
//! evidence; [`JunitFile::attach`] then gives each requested id the outcome of its case, with
//! its first message line and failure kind when it failed, and says what is wrong: no file, a
//! file that does not parse, an exit code that disagrees with it, ids that share one case. What
//! differs between runners is a [`Reading`]: how an id names its case, whether the exit code is
//! believed and what agrees with it, the problems' words, how a failure's kind is told.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::kit::join_problems;
use super::{FailureKind, Invocation, Outcome, RunFileError, RunReport};
use crate::floor::runners::Problem;

/// The status of one JUnit test case. The order is "how bad": later variants win when the same
/// case appears more than once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JunitStatus {
    Passed,
    Skipped,
    Errored,
    Failed,
}

/// One test case read from a JUnit file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JunitCase {
    pub classname: String,
    pub name: String,
    /// The `file` attribute, when the runner writes one.
    pub file: Option<String>,
    pub status: JunitStatus,
    /// The `message` attribute of the failure, error or skip element.
    pub message: Option<String>,
    /// The text inside the failure, error or skip element (for example a traceback).
    pub text: Option<String>,
}

/// The children of `testcase` that decide its status, with the status each one means.
fn child_status(tag: &[u8]) -> Option<JunitStatus> {
    match tag {
        b"failure" | b"flakyFailure" | b"rerunFailure" | b"flakyError" | b"rerunError" => {
            Some(JunitStatus::Failed)
        }
        b"error" => Some(JunitStatus::Errored),
        b"skipped" => Some(JunitStatus::Skipped),
        _ => None,
    }
}

/// The one rule for a test's outcome from its JUnit case (pytest, nextest, junit-command): a
/// case that says passed counts only when the runner's exit code agrees with the whole file
/// (see [`super::contract`]); a failed or errored case is a failure whatever the exit code
/// says; a skipped or absent case was not observed.
pub fn case_outcome(status: Option<JunitStatus>, exit_agrees: bool) -> super::Outcome {
    match status {
        Some(JunitStatus::Passed) if exit_agrees => super::Outcome::Pass,
        Some(JunitStatus::Failed | JunitStatus::Errored) => super::Outcome::Fail,
        _ => super::Outcome::NotObserved,
    }
}

/// Whether any case failed or errored: what a runner's exit code must agree with.
pub fn any_failed(cases: &[JunitCase]) -> bool {
    cases
        .iter()
        .any(|c| matches!(c.status, JunitStatus::Failed | JunitStatus::Errored))
}

/// The first line of each failed or errored case's message, by (classname, name).
pub fn failure_messages(cases: &[JunitCase]) -> std::collections::BTreeMap<(&str, &str), String> {
    cases
        .iter()
        .filter(|c| matches!(c.status, JunitStatus::Failed | JunitStatus::Errored))
        .filter_map(|c| {
            super::first_message_line(c.message.as_deref(), c.text.as_deref())
                .map(|m| ((c.classname.as_str(), c.name.as_str()), m))
        })
        .collect()
}

/// Why a JUnit file cannot be read: what is at its place is no file to read, or its bytes are
/// not a JUnit document.
#[derive(Debug, thiserror::Error)]
pub enum JunitError {
    #[error(transparent)]
    RunFile(#[from] RunFileError),
    #[error("malformed XML at byte {at}: {why}")]
    Malformed { at: u64, why: quick_xml::Error },
    /// Text, CDATA, an entity or an attribute that does not decode (`bad text: …`).
    #[error("bad {what}: {why}")]
    Undecodable { what: &'static str, why: String },
    #[error("truncated XML: unclosed elements at end of file")]
    Truncated,
    #[error("not a JUnit file: no <testsuites> or <testsuite> root element")]
    NoRoot,
    #[error("not a JUnit file: root element is <{0}>")]
    OtherRoot(String),
}

/// A decoding failure of one part of the document.
fn undecodable(what: &'static str) -> impl Fn(&dyn std::fmt::Display) -> JunitError {
    move |why| JunitError::Undecodable {
        what,
        why: why.to_string(),
    }
}

/// Reads a JUnit XML document. Errors when the bytes are not well-formed XML or the root element
/// is neither `testsuites` nor `testsuite`.
pub fn parse_junit(bytes: &[u8]) -> Result<Vec<JunitCase>, JunitError> {
    let mut reader = Reader::from_reader(bytes);
    // Element names must match: a truncated or garbled file must not be read as complete.
    reader.config_mut().check_end_names = true;

    let mut cases: Vec<JunitCase> = Vec::new();
    // The element names currently open, to know where we are.
    let mut stack: Vec<Vec<u8>> = Vec::new();
    let mut saw_root = false;
    // The test case being read, and the status child whose text is being collected.
    let mut current: Option<JunitCase> = None;
    let mut collecting: Option<(JunitStatus, String)> = None;

    loop {
        let event = reader.read_event().map_err(|why| JunitError::Malformed {
            at: reader.error_position(),
            why,
        })?;
        match event {
            Event::Start(start) => {
                let tag = start.name().as_ref().to_vec();
                open_element(
                    &start,
                    &tag,
                    &stack,
                    &mut saw_root,
                    &mut current,
                    &mut collecting,
                )?;
                stack.push(tag);
            }
            Event::Empty(start) => {
                let tag = start.name().as_ref().to_vec();
                open_element(
                    &start,
                    &tag,
                    &stack,
                    &mut saw_root,
                    &mut current,
                    &mut collecting,
                )?;
                close_element(&tag, &stack, &mut cases, &mut current, &mut collecting);
            }
            Event::End(end) => {
                let tag = end.name().as_ref().to_vec();
                stack.pop();
                close_element(&tag, &stack, &mut cases, &mut current, &mut collecting);
            }
            Event::Text(text) => {
                if let Some((_, buf)) = collecting.as_mut() {
                    let s = text.decode().map_err(|e| undecodable("text")(&e))?;
                    buf.push_str(&s);
                }
            }
            Event::CData(data) => {
                if let Some((_, buf)) = collecting.as_mut() {
                    let s = data.decode().map_err(|e| undecodable("CDATA")(&e))?;
                    buf.push_str(&s);
                }
            }
            Event::GeneralRef(reference) => {
                if let Some((_, buf)) = collecting.as_mut() {
                    if let Ok(Some(c)) = reference.resolve_char_ref() {
                        buf.push(c);
                    } else {
                        let name = reference.decode().map_err(|e| undecodable("entity")(&e))?;
                        match quick_xml::escape::resolve_predefined_entity(&name) {
                            Some(s) => buf.push_str(s),
                            // An unknown entity is kept as written rather than failing the file.
                            None => {
                                buf.push('&');
                                buf.push_str(&name);
                                buf.push(';');
                            }
                        }
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err(JunitError::Truncated);
    }
    if !saw_root {
        return Err(JunitError::NoRoot);
    }
    Ok(merge_duplicates(cases))
}

fn open_element(
    start: &BytesStart<'_>,
    tag: &[u8],
    stack: &[Vec<u8>],
    saw_root: &mut bool,
    current: &mut Option<JunitCase>,
    collecting: &mut Option<(JunitStatus, String)>,
) -> Result<(), JunitError> {
    if stack.is_empty() {
        if tag != b"testsuites" && tag != b"testsuite" {
            return Err(JunitError::OtherRoot(
                String::from_utf8_lossy(tag).into_owned(),
            ));
        }
        *saw_root = true;
        return Ok(());
    }
    if tag == b"testcase" {
        let attr = |key: &[u8]| -> Result<Option<String>, JunitError> {
            match start.try_get_attribute(key) {
                Ok(Some(a)) => a
                    .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .map(|v| Some(v.into_owned()))
                    .map_err(|e| undecodable("attribute")(&e)),
                Ok(None) => Ok(None),
                Err(e) => Err(undecodable("attribute")(&e)),
            }
        };
        *current = Some(JunitCase {
            classname: attr(b"classname")?.unwrap_or_default(),
            name: attr(b"name")?.unwrap_or_default(),
            file: attr(b"file")?,
            status: JunitStatus::Passed,
            message: None,
            text: None,
        });
        return Ok(());
    }
    // Only direct children of a test case decide its status.
    if stack.last().map(|t| t.as_slice()) == Some(b"testcase".as_slice()) {
        if let (Some(case), Some(status)) = (current.as_mut(), child_status(tag)) {
            let message = match start.try_get_attribute(b"message") {
                Ok(Some(a)) => a
                    .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .ok()
                    .map(|v| v.into_owned()),
                _ => None,
            };
            if status > case.status {
                case.status = status;
                case.message = message;
                case.text = None;
            } else if case.message.is_none() && status == case.status {
                case.message = message;
            }
            *collecting = Some((status, String::new()));
        }
    }
    Ok(())
}

fn close_element(
    tag: &[u8],
    stack: &[Vec<u8>],
    cases: &mut Vec<JunitCase>,
    current: &mut Option<JunitCase>,
    collecting: &mut Option<(JunitStatus, String)>,
) {
    if tag == b"testcase" {
        if let Some(case) = current.take() {
            cases.push(case);
        }
        *collecting = None;
        return;
    }
    if stack.last().map(|t| t.as_slice()) == Some(b"testcase".as_slice())
        && child_status(tag).is_some()
    {
        if let (Some(case), Some((status, text))) = (current.as_mut(), collecting.take()) {
            // Keep the body of the element that set the case's status (the first one of the
            // worst kind).
            if status == case.status && case.text.is_none() {
                let trimmed = text.trim();
                if !trimmed.is_empty() {
                    case.text = Some(trimmed.to_string());
                }
            }
        }
    }
}

/// Merges cases with the same `(classname, name)`: the worst status wins, with its details.
fn merge_duplicates(cases: Vec<JunitCase>) -> Vec<JunitCase> {
    let mut out: Vec<JunitCase> = Vec::with_capacity(cases.len());
    let mut index: std::collections::HashMap<(String, String), usize> =
        std::collections::HashMap::new();
    for case in cases {
        let key = (case.classname.clone(), case.name.clone());
        match index.get(&key) {
            Some(&i) => {
                let kept = &mut out[i];
                if case.status > kept.status {
                    let file = kept.file.take().or(case.file.clone());
                    *kept = case;
                    if kept.file.is_none() {
                        kept.file = file;
                    }
                }
            }
            None => {
                index.insert(key, out.len());
                out.push(case);
            }
        }
    }
    out
}

/// How a runner's test ids name the cases of its JUnit file.
#[derive(Debug, Clone, Copy)]
pub enum CaseNames {
    /// An id is its case's `<classname> <name>` as the file spells them (junit-command); where
    /// two cases spell one id, the later one is that id's.
    Joined,
    /// An id's `(classname, name)` follows from the id itself (nextest's `<binary-id> <test>`,
    /// pytest's node id as pytest mangles it); `None` for an id that names no case.
    Derived(fn(&str) -> Option<(String, String)>),
}

/// What differs between runners when their JUnit file is read into a [`RunReport`].
pub struct Reading<'a> {
    /// How the requested ids name the file's cases.
    pub names: CaseNames,
    /// Whether the exit code says the runner ran and wrote its results (a code of its contract,
    /// see [`super::contract`]): only then can a passed case count, and only then is a missing
    /// file or a disagreement a problem (any other code is the caller's to explain).
    pub exit_believed: bool,
    /// Whether the exit code agrees with the cases.
    pub agree: &'a dyn Fn(&[JunitCase]) -> Result<(), Problem>,
    /// The problem when the runner wrote no file.
    pub missing: String,
    /// The opening of the problem when the file does not parse (`pytest's JUnit file is
    /// unreadable`), followed by why.
    pub unreadable: &'a str,
    /// The kind of a failed case's failure, where its text tells.
    pub failure_kind: fn(&JunitCase) -> Option<FailureKind>,
}

/// A runner's JUnit file as one run left it: read right after the run, before anything else is
/// decided, so that whatever the report goes on to say, the file is evidence of that run.
#[derive(Debug)]
pub struct JunitFile(Option<Result<Vec<JunitCase>, JunitError>>);

impl JunitFile {
    /// Reads the file at `path` that the run `invocation` records was told to write, and keeps
    /// its bytes with the invocation as its results (`application/xml`), whether or not they
    /// parse. A file that is not there is no results.
    pub fn read(path: &Path, invocation: &mut Invocation) -> JunitFile {
        let bytes = match super::read_run_file(path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return JunitFile(None),
            Err(why) => return JunitFile(Some(Err(why.into()))),
        };
        let cases = parse_junit(&bytes);
        invocation.results = Some(bytes);
        invocation.results_type = Some("application/xml".into());
        JunitFile(Some(cases))
    }

    /// The cases, when the file is there and parses.
    pub fn cases(&self) -> Option<&[JunitCase]> {
        match &self.0 {
            Some(Ok(cases)) => Some(cases),
            _ => None,
        }
    }

    /// The cases, or the problem: `missing` when the run wrote no file, `unreadable` and why
    /// when it does not parse.
    pub fn into_cases(self, missing: String, unreadable: &str) -> Result<Vec<JunitCase>, Problem> {
        match self.0 {
            None => Err(Problem(missing)),
            Some(Err(e)) => Err(Problem(format!("{unreadable}: {e}"))),
            Some(Ok(cases)) => Ok(cases),
        }
    }

    /// Reads the file into `report` for the requested `ids` (each counted once): every id whose
    /// case the file holds gets the outcome [`case_outcome`] gives it, and a failed one its first
    /// message line and, where `reading` tells, its failure's kind; an id the file does not hold
    /// keeps the outcome it has (`NotObserved`, from [`RunReport::not_observed`]). `problems`
    /// (what the caller found already) and what is wrong here become the report's problem: a
    /// missing file (when the exit code is believed), an unreadable one, an exit code that
    /// disagrees with the cases, ids that share one case.
    pub fn attach<'i>(
        self,
        report: &mut RunReport,
        ids: impl IntoIterator<Item = &'i str>,
        reading: Reading<'_>,
        mut problems: Vec<String>,
    ) {
        let cases = match self.0 {
            Some(Ok(cases)) => cases,
            read => {
                if read.is_some() || reading.exit_believed {
                    let file = JunitFile(read);
                    problems.extend(
                        file.into_cases(reading.missing, reading.unreadable)
                            .err()
                            .map(|p| p.0),
                    );
                }
                report.problem = join_problems(problems);
                return;
            }
        };
        let agreement = (reading.agree)(&cases);
        let agrees = reading.exit_believed && agreement.is_ok();
        if reading.exit_believed {
            problems.extend(agreement.err().map(|p| p.0));
        }
        let by_key: BTreeMap<(&str, &str), &JunitCase> = cases
            .iter()
            .map(|c| ((c.classname.as_str(), c.name.as_str()), c))
            .collect();
        let joined: BTreeMap<String, &JunitCase> = match reading.names {
            CaseNames::Joined => cases
                .iter()
                .map(|c| (format!("{} {}", c.classname, c.name), c))
                .collect(),
            CaseNames::Derived(_) => BTreeMap::new(),
        };
        let mut seen = BTreeSet::new();
        let keyed: Vec<(&str, (String, String))> = ids
            .into_iter()
            .filter(|id| seen.insert(*id))
            .filter_map(|id| {
                let key = match reading.names {
                    CaseNames::Joined => joined
                        .get(id)
                        .map(|c| (c.classname.clone(), c.name.clone())),
                    CaseNames::Derived(key) => key(id),
                };
                Some((id, key?))
            })
            .collect();
        // Two ids with the same JUnit identity (pytest's `a/b.py::C::t` and `a/b/C.py::t`)
        // cannot be told apart in the file: neither is believed.
        let mut key_count: BTreeMap<&(String, String), usize> = BTreeMap::new();
        for (_, key) in &keyed {
            *key_count.entry(key).or_default() += 1;
        }
        let messages = failure_messages(&cases);
        for (id, key) in &keyed {
            if key_count.get(key).copied().unwrap_or(0) > 1 {
                problems.push(format!(
                    "{id}: its JUnit identity is shared with another id"
                ));
                continue;
            }
            let key = (key.0.as_str(), key.1.as_str());
            let Some(case) = by_key.get(&key) else {
                continue;
            };
            let outcome = case_outcome(Some(case.status), agrees);
            let Some(t) = report.test_mut(id) else {
                continue;
            };
            if outcome == Outcome::Fail {
                if let Some(m) = messages.get(&key) {
                    t.message = Some(m.clone());
                }
                if let Some(kind) = (reading.failure_kind)(case) {
                    t.failure_kind = Some(kind);
                }
            }
            t.outcome = outcome;
        }
        report.problem = join_problems(problems);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find<'a>(cases: &'a [JunitCase], classname: &str, name: &str) -> &'a JunitCase {
        cases
            .iter()
            .find(|c| c.classname == classname && c.name == name)
            .unwrap_or_else(|| panic!("no case {classname} {name} in {cases:?}"))
    }

    #[test]
    fn reads_nextest_shape() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="3" failures="1" errors="0">
    <testsuite name="fx-crate::t" tests="3" failures="1">
        <testcase name="passes" classname="fx-crate::t" time="0.009"/>
        <testcase name="fails" classname="fx-crate::t" time="0.124">
            <failure message="thread &apos;fails&apos; panicked at tests/t.rs:4:46" type="test failure">thread &apos;fails&apos; panicked
  left: 2 &lt; 3</failure>
            <system-out>test passes ... ok</system-out>
            <system-err>boom</system-err>
        </testcase>
        <testcase name="flaky" classname="fx-crate::t">
            <flakyFailure message="first try failed" type="test failure">x</flakyFailure>
        </testcase>
    </testsuite>
</testsuites>"#;
        let cases = parse_junit(xml.as_bytes()).unwrap();
        assert_eq!(cases.len(), 3);
        assert_eq!(
            find(&cases, "fx-crate::t", "passes").status,
            JunitStatus::Passed
        );
        let fails = find(&cases, "fx-crate::t", "fails");
        assert_eq!(fails.status, JunitStatus::Failed);
        assert_eq!(
            fails.message.as_deref(),
            Some("thread 'fails' panicked at tests/t.rs:4:46")
        );
        assert_eq!(
            fails.text.as_deref(),
            Some("thread 'fails' panicked\n  left: 2 < 3")
        );
        assert_eq!(
            find(&cases, "fx-crate::t", "flaky").status,
            JunitStatus::Failed
        );
    }

    #[test]
    fn reads_pytest_shape() {
        let xml = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="2" tests="6"><testcase classname="tests.test_a" name="test_pass" time="0.000" /><testcase classname="tests.test_a" name="test_fail" time="0.000"><failure message="assert False">def test_fail():
&gt;       assert False</failure></testcase><testcase classname="tests.test_a" name="test_skip" time="0.000"><skipped type="pytest.skip" message="nope">/x/tests/test_a.py:10: nope</skipped></testcase><testcase classname="tests.test_a" name="test_param[x::y]" time="0.000" /><testcase classname="tests.test_a.TestA.TestInner" name="test_c" time="0.000" /><testcase classname="tests.test_a" name="test_setup_error" time="0.000"><error message="failed on setup with &quot;RuntimeError: setup boom&quot;">boom</error></testcase><testcase classname="tests.test_a" name="test_xfail" time="0.000"><skipped type="pytest.xfail" message="" /></testcase></testsuite></testsuites>"#;
        let cases = parse_junit(xml.as_bytes()).unwrap();
        assert_eq!(cases.len(), 7);
        assert_eq!(
            find(&cases, "tests.test_a", "test_pass").status,
            JunitStatus::Passed
        );
        assert_eq!(
            find(&cases, "tests.test_a", "test_fail").status,
            JunitStatus::Failed
        );
        assert_eq!(
            find(&cases, "tests.test_a", "test_fail").text.as_deref(),
            Some("def test_fail():\n>       assert False")
        );
        assert_eq!(
            find(&cases, "tests.test_a", "test_skip").status,
            JunitStatus::Skipped
        );
        assert_eq!(
            find(&cases, "tests.test_a", "test_skip").message.as_deref(),
            Some("nope")
        );
        assert_eq!(
            find(&cases, "tests.test_a", "test_param[x::y]").status,
            JunitStatus::Passed
        );
        assert_eq!(
            find(&cases, "tests.test_a.TestA.TestInner", "test_c").status,
            JunitStatus::Passed
        );
        let setup = find(&cases, "tests.test_a", "test_setup_error");
        assert_eq!(setup.status, JunitStatus::Errored);
        assert_eq!(
            setup.message.as_deref(),
            Some("failed on setup with \"RuntimeError: setup boom\"")
        );
        assert_eq!(
            find(&cases, "tests.test_a", "test_xfail").status,
            JunitStatus::Skipped
        );
    }

    #[test]
    fn reads_vitest_shape_with_duplicates() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="4" failures="1" errors="0" time="0.5">
    <testsuite name="src/a.test.ts" tests="4" failures="1" errors="0" skipped="1" time="0.01">
        <testcase classname="src/a.test.ts" name="suite &gt; adds" time="0.001">
        </testcase>
        <testcase classname="src/a.test.ts" name="suite &gt; fails" time="0.002">
            <failure message="expected 1 to be 2" type="AssertionError"><![CDATA[AssertionError: expected 1 to be 2
 ❯ src/a.test.ts:5:20]]></failure>
        </testcase>
        <testcase classname="src/a.test.ts" name="dup" time="0.001"/>
        <testcase classname="src/a.test.ts" name="dup" time="0.001">
            <skipped/>
        </testcase>
        <testcase classname="src/a.test.ts" name="dup2" time="0.001">
            <failure/>
        </testcase>
        <testcase classname="src/a.test.ts" name="dup2" time="0.001"/>
    </testsuite>
</testsuites>"#;
        let cases = parse_junit(xml.as_bytes()).unwrap();
        assert_eq!(cases.len(), 4);
        assert_eq!(
            find(&cases, "src/a.test.ts", "suite > adds").status,
            JunitStatus::Passed
        );
        let fails = find(&cases, "src/a.test.ts", "suite > fails");
        assert_eq!(fails.status, JunitStatus::Failed);
        assert_eq!(
            fails.text.as_deref(),
            Some("AssertionError: expected 1 to be 2\n ❯ src/a.test.ts:5:20")
        );
        assert_eq!(
            find(&cases, "src/a.test.ts", "dup").status,
            JunitStatus::Skipped
        );
        assert_eq!(
            find(&cases, "src/a.test.ts", "dup2").status,
            JunitStatus::Failed
        );
    }

    #[test]
    fn bare_testsuite_root_nested_suites_and_file_attribute() {
        let xml = r#"<testsuite name="outer">
  <testsuite name="inner">
    <testcase classname="A" name="t1" file="tests/a.py"/>
    <testcase classname="A" name="t2"><rerunFailure message="again"/><failure message="final"/></testcase>
    <testcase classname="A" name="t3"><error message="e"/><failure message="f"/></testcase>
  </testsuite>
</testsuite>"#;
        let cases = parse_junit(xml.as_bytes()).unwrap();
        assert_eq!(cases.len(), 3);
        let t1 = find(&cases, "A", "t1");
        assert_eq!(t1.status, JunitStatus::Passed);
        assert_eq!(t1.file.as_deref(), Some("tests/a.py"));
        assert_eq!(find(&cases, "A", "t2").status, JunitStatus::Failed);
        let t3 = find(&cases, "A", "t3");
        assert_eq!(t3.status, JunitStatus::Failed);
        assert_eq!(t3.message.as_deref(), Some("f"));
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_junit(b"").is_err());
        assert!(parse_junit(b"not xml at all").is_err());
        assert!(parse_junit(b"<html><body/></html>").is_err());
        assert!(parse_junit(b"<testsuites><testsuite><testcase name=\"a\">").is_err());
        assert!(parse_junit(b"<testsuites><testsuite></testcase></testsuites>").is_err());
    }

    #[test]
    fn empty_suites_are_fine() {
        assert_eq!(parse_junit(b"<testsuites/>").unwrap(), vec![]);
        assert_eq!(
            parse_junit(b"<?xml version=\"1.0\"?><testsuites name=\"x\"></testsuites>").unwrap(),
            vec![]
        );
    }

    #[test]
    fn status_children_only_count_directly_under_testcase() {
        // A <failure> nested in <system-out> (odd, but possible in hand-written files) does not
        // change the status; neither does a <skipped> outside any test case.
        let xml = r#"<testsuites><testsuite><skipped/><testcase classname="A" name="t"><system-out><failure/></system-out></testcase></testsuite></testsuites>"#;
        let cases = parse_junit(xml.as_bytes()).unwrap();
        assert_eq!(cases[0].status, JunitStatus::Passed);
    }

    fn file(xml: &str) -> JunitFile {
        JunitFile(Some(parse_junit(xml.as_bytes())))
    }

    fn reading<'a>(
        names: CaseNames,
        exit_believed: bool,
        agree: &'a dyn Fn(&[JunitCase]) -> Result<(), Problem>,
    ) -> Reading<'a> {
        Reading {
            names,
            exit_believed,
            agree,
            missing: "no file".into(),
            unreadable: "unreadable",
            failure_kind: |_| Some(FailureKind::Assertion),
        }
    }

    const RUN: &str = r#"<testsuites><testsuite><testcase classname="a" name="ok"/><testcase classname="a" name="bad"><failure message="boom"/></testcase><testcase classname="a" name="later"><skipped/></testcase></testsuite></testsuites>"#;

    #[test]
    fn attaching_gives_each_requested_id_its_case() {
        let ids: Vec<String> = ["a ok", "a bad", "a later", "a gone", "nospace"]
            .map(String::from)
            .to_vec();
        let mut report = RunReport::not_observed(&ids);
        let split = CaseNames::Derived(|id| {
            id.split_once(' ')
                .map(|(c, n)| (c.to_string(), n.to_string()))
        });
        let agree = |_: &[JunitCase]| Ok(());
        file(RUN).attach(
            &mut report,
            ids.iter().map(String::as_str),
            reading(split, true, &agree),
            Vec::new(),
        );
        assert_eq!(report.problem, None);
        assert_eq!(report.outcomes()["a ok"], Outcome::Pass);
        assert_eq!(report.outcomes()["a bad"], Outcome::Fail);
        assert_eq!(report.outcomes()["a later"], Outcome::NotObserved);
        assert_eq!(report.outcomes()["a gone"], Outcome::NotObserved);
        assert_eq!(report.outcomes()["nospace"], Outcome::NotObserved);
        assert_eq!(report.messages().len(), 1);
        assert_eq!(report.messages()["a bad"], "boom");
        assert_eq!(report.failure_kinds().len(), 1);
        assert_eq!(report.failure_kinds()["a bad"], FailureKind::Assertion);

        // An exit code that disagrees: no pass, the disagreement is the problem.
        let mut report = RunReport::not_observed(&ids);
        let disagree = |_: &[JunitCase]| Err(Problem("exit 0 but failures".to_string()));
        file(RUN).attach(
            &mut report,
            ids.iter().map(String::as_str),
            reading(CaseNames::Joined, true, &disagree),
            vec!["earlier".into()],
        );
        assert_eq!(report.outcomes()["a ok"], Outcome::NotObserved);
        assert_eq!(report.outcomes()["a bad"], Outcome::Fail);
        assert_eq!(
            report.problem.as_deref(),
            Some("earlier; exit 0 but failures")
        );
    }

    #[test]
    fn ids_that_share_a_case_are_neither_believed() {
        let ids: Vec<String> = ["x/a ok", "x.a ok"].map(String::from).to_vec();
        let mut report = RunReport::not_observed(&ids);
        let dotted = CaseNames::Derived(|id| {
            let (c, n) = id.split_once(' ')?;
            Some((c.replace('/', "."), n.to_string()))
        });
        let agree = |_: &[JunitCase]| Ok(());
        let xml = r#"<testsuite><testcase classname="x.a" name="ok"/></testsuite>"#;
        file(xml).attach(
            &mut report,
            ids.iter().map(String::as_str),
            reading(dotted, true, &agree),
            Vec::new(),
        );
        assert!(report
            .outcomes()
            .values()
            .all(|o| *o == Outcome::NotObserved));
        assert_eq!(
            report.problem.as_deref(),
            Some(
                "x/a ok: its JUnit identity is shared with another id; \
                 x.a ok: its JUnit identity is shared with another id"
            )
        );
    }

    #[test]
    fn a_missing_file_is_a_problem_only_when_the_exit_code_is_believed() {
        let agree = |_: &[JunitCase]| Ok(());
        let ids = vec!["a ok".to_string()];
        for (believed, problem) in [(true, Some("no file")), (false, None)] {
            let mut report = RunReport::not_observed(&ids);
            JunitFile(None).attach(
                &mut report,
                ["a ok"],
                reading(CaseNames::Joined, believed, &agree),
                Vec::new(),
            );
            assert_eq!(report.problem.as_deref(), problem);
            assert_eq!(report.outcomes()["a ok"], Outcome::NotObserved);
        }
        let mut report = RunReport::not_observed(&ids);
        file("<html/>").attach(
            &mut report,
            ["a ok"],
            reading(CaseNames::Joined, false, &agree),
            Vec::new(),
        );
        assert!(report
            .problem
            .is_some_and(|p| p.starts_with("unreadable: not a JUnit file")));
    }

    /// The JUnit file is written by the change under check: a test case with tens of thousands
    /// of attributes must not stall the floor. quick-xml before 0.41 compared each attribute's
    /// name with every earlier one (RUSTSEC-2026-0194, quadratic: about a minute for this file
    /// in a debug build); now the whole file is linear and reads in milliseconds.
    #[test]
    fn a_testcase_with_many_attributes_reads_in_linear_time() {
        let attrs: String = (0..40_000).map(|i| format!(" a{i}=\"\"")).collect();
        let xml = format!(
            "<testsuites><testsuite><testcase classname=\"c\" name=\"n\"{attrs}/></testsuite></testsuites>"
        );
        let started = std::time::Instant::now();
        let cases = parse_junit(xml.as_bytes()).unwrap();
        let took = started.elapsed();
        assert_eq!(cases.len(), 1);
        assert_eq!(
            (cases[0].classname.as_str(), cases[0].name.as_str()),
            ("c", "n")
        );
        // A guard against the stall, not a measure of speed: linear is milliseconds, the
        // quadratic scan a minute.
        assert!(
            took < std::time::Duration::from_secs(30),
            "40,000 attributes on one test case took {took:?}"
        );
    }
}
