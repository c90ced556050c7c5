//! Unit tests of the JavaScript runners: which files are test files, ids and name patterns, the
//! tools' command lines, reading their results into outcomes, the positions of load failures,
//! and where the project's binary is found.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;

use super::diagnostics::*;
use super::report::*;
use super::run::*;
use super::*;
use crate::floor::runners::junit::parse_junit;
use crate::floor::runners::{Diagnostic, FailureKind, Outcome, RunReport};

fn ctx() -> RunCtx {
    RunCtx {
        worktree: PathBuf::from("/nonexistent-wt"),
        dir: PathBuf::from("/nonexistent-wt/web"),
        scratch: PathBuf::from("/nonexistent-scratch"),
        timeout: Duration::from_secs(5),
        env: vec![],
        jail: crate::sandbox::Jail::none(),
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
        jail: crate::sandbox::Jail::none(),
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
        jail: crate::sandbox::Jail::none(),
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
    let member = "const math = require('../src/math');\n\nconst high = math.clamp(50, 0, 10);\n";
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
    let ids_owned: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    let mut report = RunReport::not_observed(&ids_owned);
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
        .tests
        .iter()
        .map(|(k, t)| (k.as_str(), t.outcome))
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
        report.messages()["tests/math.test.js > fails"],
        "AssertionError: expected 2 to be 3 // Object.is equality"
    );
    assert_eq!(report.messages().len(), 2);
    let bf = report.build_failure.unwrap();
    assert_eq!(bf.diagnostic_files, vec!["web/tests/broken.test.js"]);

    // Exit 0 although the results show failures, or no exit code at all: no pass is
    // believed, failures stay failures.
    for exit in [Some(0), Some(2), None] {
        let (report, _) = judged(VITEST_JSON, exit, &ids);
        assert_eq!(
            report.outcomes()["tests/math.test.js > adds"],
            Outcome::NotObserved,
            "{exit:?}"
        );
        assert_eq!(
            report.outcomes()["tests/math.test.js > fails"],
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
    assert_eq!(
        report.outcomes()["tests/math.test.js > adds"],
        Outcome::Pass
    );
    // Filtered out by the pattern: `pending`, never a pass.
    assert_eq!(
        report.outcomes()["tests/math.test.js > adds twice"],
        Outcome::NotObserved
    );
    assert_eq!(
        report.outcomes()["tests/math.test.js > fails"],
        Outcome::Fail
    );
    assert_eq!(
        report.messages()["tests/math.test.js > fails"],
        "Error: expect(received).toBe(expected) // Object.is equality"
    );
    assert_eq!(
        report.outcomes()["tests/math.test.js > math > flaky"],
        Outcome::Fail
    );
    assert_eq!(
        report.outcomes()["tests/missing.test.js > uses gone"],
        Outcome::BuildFail
    );
    // Its file failed after the test passed (an `afterAll` that threw).
    assert_eq!(
        report.outcomes()["tests/hook.test.js > ok"],
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
    assert_eq!(report.outcomes()["a.test.js > a"], Outcome::Pass);
    assert_eq!(report.outcomes()["a.test.js > flaky"], Outcome::Fail);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(
        report.messages()["a.test.js > flaky"],
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
        jail: crate::sandbox::Jail::none(),
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
    assert!(mentioned_files(&c, "Cannot find module '../src/bad.js' imported from 'x'").is_empty());
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
        jail: crate::sandbox::Jail::none(),
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
