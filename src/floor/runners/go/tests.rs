//! The go adapter's unit tests: ids and `-run` patterns, `go list`'s packages, the `test2json`
//! events judged into outcomes, and the compiler's diagnostics read into build failures.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::diagnostics::*;
use super::list::*;
use super::packages::*;
use super::run::*;
use super::test2json::*;
use super::*;
use crate::floor::runners::{FailureKind, Outcome};

fn ctx() -> RunCtx {
    RunCtx {
        worktree: PathBuf::from("/tmp/wt"),
        dir: PathBuf::from("/tmp/wt/gomod"),
        scratch: PathBuf::from("/tmp/scratch"),
        timeout: Duration::from_secs(5),
        env: vec![],
        jail: crate::sandbox::Jail::none(),
    }
}

const PKG: &str = "example.com/m/pkg";

/// Go 1.19's events for `-run '^(TestPass|TestFail|TestSkip|TestSubs|TestPanic)$'`.
const MIXED: &str = r#"{"Time":"2026-11-29T23:32:14.07Z","Action":"run","Package":"example.com/m/pkg","Test":"TestPass"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPass","Output":"=== RUN   TestPass\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPass","Output":"--- PASS: TestPass (0.00s)\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"pass","Package":"example.com/m/pkg","Test":"TestPass","Elapsed":0}
{"Time":"2026-11-29T23:32:14.07Z","Action":"run","Package":"example.com/m/pkg","Test":"TestFail"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestFail","Output":"=== RUN   TestFail\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestFail","Output":"    pkg_test.go:13: got 1, want 2\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestFail","Output":"--- FAIL: TestFail (0.00s)\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"fail","Package":"example.com/m/pkg","Test":"TestFail","Elapsed":0}
{"Time":"2026-11-29T23:32:14.07Z","Action":"run","Package":"example.com/m/pkg","Test":"TestSkip"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestSkip","Output":"    pkg_test.go:16: not today\n"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"skip","Package":"example.com/m/pkg","Test":"TestSkip","Elapsed":0}
{"Time":"2026-11-29T23:32:19.29Z","Action":"run","Package":"example.com/m/pkg","Test":"TestSubs"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"run","Package":"example.com/m/pkg","Test":"TestSubs/ok_case"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"run","Package":"example.com/m/pkg","Test":"TestSubs/bad"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"output","Package":"example.com/m/pkg","Test":"TestSubs/bad","Output":"    pkg_test.go:25: sub failed\n"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"output","Package":"example.com/m/pkg","Test":"TestSubs","Output":"--- FAIL: TestSubs (0.00s)\n"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"pass","Package":"example.com/m/pkg","Test":"TestSubs/ok_case","Elapsed":0}
{"Time":"2026-11-29T23:32:19.29Z","Action":"output","Package":"example.com/m/pkg","Test":"TestSubs/bad","Output":"    --- FAIL: TestSubs/bad (0.00s)\n"}
{"Time":"2026-11-29T23:32:19.29Z","Action":"fail","Package":"example.com/m/pkg","Test":"TestSubs/bad","Elapsed":0}
{"Time":"2026-11-29T23:32:19.29Z","Action":"fail","Package":"example.com/m/pkg","Test":"TestSubs","Elapsed":0}
{"Time":"2026-11-29T23:32:14.07Z","Action":"run","Package":"example.com/m/pkg","Test":"TestPanic"}
{"Time":"2026-11-29T23:32:14.07Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPanic","Output":"--- FAIL: TestPanic (0.00s)\n"}
{"Time":"2026-11-29T23:32:14.08Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPanic","Output":"panic: assignment to entry in nil map [recovered]\n"}
{"Time":"2026-11-29T23:32:14.08Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPanic","Output":"\tpanic: assignment to entry in nil map\n"}
{"Time":"2026-11-29T23:32:14.08Z","Action":"output","Package":"example.com/m/pkg","Test":"TestPanic","Output":"goroutine 21 [running]:\n"}
{"Time":"2026-11-29T23:32:14.08Z","Action":"fail","Package":"example.com/m/pkg","Test":"TestPanic","Elapsed":0}
{"Time":"2026-11-29T23:32:14.08Z","Action":"output","Package":"example.com/m/pkg","Output":"FAIL\texample.com/m/pkg\t0.007s\n"}
{"Time":"2026-11-29T23:32:14.08Z","Action":"fail","Package":"example.com/m/pkg","Elapsed":0.007}
"#;

fn outcomes(j: &Judged) -> Vec<(&str, Outcome)> {
    j.outcomes.iter().map(|(k, v)| (k.as_str(), *v)).collect()
}

#[test]
fn events_are_parsed() {
    let out = parse_test_json(MIXED);
    assert_eq!(out.events.len(), 29);
    assert!(out.raw.is_empty());
    assert_eq!(
        out.events[3],
        Event {
            action: "pass".into(),
            package: PKG.into(),
            test: Some("TestPass".into()),
            ..Event::default()
        }
    );
    assert_eq!(out.package_result(PKG), Some("fail"));
    assert_eq!(out.package_result("example.com/m/other"), None);
    let out = parse_test_json("FAIL\texample.com/m/broken [build failed]\n{not json\n\n");
    assert!(out.events.is_empty());
    assert_eq!(
        out.raw,
        vec!["FAIL\texample.com/m/broken [build failed]", "{not json"]
    );
}

#[test]
fn mixed_results() {
    let out = parse_test_json(MIXED);
    let names = [
        "TestPass",
        "TestFail",
        "TestSkip",
        "TestSubs",
        "TestSubs/ok_case",
        "TestSubs/bad",
        "TestPanic",
        "TestNope",
    ];
    let j = judge_run(PKG, &out, "", Some(1), &names);
    assert_eq!(j.problem, None);
    assert!(!j.build_failed);
    assert_eq!(
        outcomes(&j),
        vec![
            ("TestFail", Outcome::Fail),
            ("TestNope", Outcome::NotObserved),
            ("TestPanic", Outcome::Fail),
            ("TestPass", Outcome::Pass),
            ("TestSkip", Outcome::NotObserved),
            ("TestSubs", Outcome::Fail),
            ("TestSubs/bad", Outcome::Fail),
            ("TestSubs/ok_case", Outcome::Pass),
        ]
    );
    assert_eq!(j.messages["TestFail"], "pkg_test.go:13: got 1, want 2");
    assert_eq!(
        j.messages["TestPanic"],
        "panic: assignment to entry in nil map"
    );
    assert_eq!(j.messages["TestSubs/bad"], "pkg_test.go:25: sub failed");
    assert_eq!(j.messages["TestSubs"], "bad: pkg_test.go:25: sub failed");
    assert_eq!(j.messages.len(), 4);
    let kinds: Vec<(&str, FailureKind)> = j.kinds.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        kinds,
        vec![
            ("TestFail", FailureKind::Assertion),
            ("TestPanic", FailureKind::Exception),
            ("TestSubs", FailureKind::Assertion),
            ("TestSubs/bad", FailureKind::Assertion),
        ]
    );
}

#[test]
fn exit_code_must_agree() {
    let out = parse_test_json(MIXED);
    // Failures but exit 0, or a signal, or exit 2: no pass is believed, failures stay.
    for code in [Some(0), None, Some(2)] {
        let j = judge_run(PKG, &out, "", code, &["TestPass", "TestFail"]);
        assert!(j.problem.is_some(), "{code:?}");
        assert_eq!(j.outcomes["TestPass"], Outcome::NotObserved);
        assert_eq!(j.outcomes["TestFail"], Outcome::Fail);
    }
    let pass = r#"{"Action":"run","Package":"example.com/m/pkg","Test":"TestPass"}
{"Action":"pass","Package":"example.com/m/pkg","Test":"TestPass","Elapsed":0}
{"Action":"output","Package":"example.com/m/pkg","Output":"PASS\n"}
{"Action":"pass","Package":"example.com/m/pkg","Elapsed":0.01}
"#;
    let out = parse_test_json(pass);
    let j = judge_run(PKG, &out, "", Some(0), &["TestPass"]);
    assert_eq!(j.outcomes["TestPass"], Outcome::Pass);
    assert_eq!(j.problem, None);
    // Exit 1 without a failed test (os.Exit, go's -timeout): nothing is believed.
    let j = judge_run(PKG, &out, "", Some(1), &["TestPass"]);
    assert_eq!(j.outcomes["TestPass"], Outcome::NotObserved);
    assert!(j.problem.is_some());
    // Another package's pass is not this package's.
    let j = judge_run("example.com/m/other", &out, "", Some(0), &["TestPass"]);
    assert_eq!(j.outcomes["TestPass"], Outcome::NotObserved);
}

#[test]
fn crash_after_a_pass_is_not_believed() {
    // TestExit called os.Exit(1): no terminal event for it, the package fails.
    let text = r#"{"Action":"run","Package":"example.com/m/pkg","Test":"TestPass"}
{"Action":"pass","Package":"example.com/m/pkg","Test":"TestPass","Elapsed":0}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestExit"}
{"Action":"output","Package":"example.com/m/pkg","Test":"TestExit","Output":"=== RUN   TestExit\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"FAIL\texample.com/m/pkg\t0.003s\n"}
{"Action":"fail","Package":"example.com/m/pkg","Elapsed":0.003}
"#;
    let j = judge_run(
        PKG,
        &parse_test_json(text),
        "",
        Some(1),
        &["TestPass", "TestExit"],
    );
    assert_eq!(j.outcomes["TestPass"], Outcome::NotObserved);
    assert_eq!(j.outcomes["TestExit"], Outcome::NotObserved);
    assert!(j.problem.is_some());
}

#[test]
fn nothing_matched_is_not_a_pass() {
    let text = r#"{"Action":"output","Package":"example.com/m/pkg","Output":"testing: warning: no tests to run\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"PASS\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"ok  \texample.com/m/pkg\t0.003s [no tests to run]\n"}
{"Action":"pass","Package":"example.com/m/pkg","Elapsed":0.003}
"#;
    let j = judge_run(PKG, &parse_test_json(text), "", Some(0), &["TestNope"]);
    assert_eq!(j.outcomes["TestNope"], Outcome::NotObserved);
    assert_eq!(j.problem, None);
    // A pass and a fail for the same name (a forged `--- PASS:` line): a failure.
    let text = r#"{"Action":"pass","Package":"example.com/m/pkg","Test":"TestA","Elapsed":0}
{"Action":"fail","Package":"example.com/m/pkg","Test":"TestA","Elapsed":0}
{"Action":"fail","Package":"example.com/m/pkg","Elapsed":0.003}
"#;
    let j = judge_run(PKG, &parse_test_json(text), "", Some(1), &["TestA"]);
    assert_eq!(j.outcomes["TestA"], Outcome::Fail);
    // A parent's pass is not its subtest's.
    let text = r#"{"Action":"pass","Package":"example.com/m/pkg","Test":"TestA","Elapsed":0}
{"Action":"pass","Package":"example.com/m/pkg","Elapsed":0.003}
"#;
    let j = judge_run(PKG, &parse_test_json(text), "", Some(0), &["TestA/x"]);
    assert_eq!(j.outcomes["TestA/x"], Outcome::NotObserved);
}

#[test]
fn build_failures() {
    // Go 1.19: the marker on stdout, the errors on stderr, exit 2.
    let stdout = "FAIL\texample.com/m/broken [build failed]\n";
    let stderr = "# example.com/m/broken [example.com/m/broken.test]\nbroken/b_test.go:5:28: undefined: Undefined\n";
    let out = parse_test_json(stdout);
    let j = judge_run("example.com/m/broken", &out, stderr, Some(2), &["TestB"]);
    assert!(j.build_failed);
    assert_eq!(j.outcomes["TestB"], Outcome::BuildFail);
    assert_eq!(j.problem, None);
    // Setup failures (a missing module, a syntax error in a test file), exit 1.
    let stdout = "FAIL\texample.com/m/miss [setup failed]\n";
    let j = judge_run(
        "example.com/m/miss",
        &parse_test_json(stdout),
        "",
        Some(1),
        &["TestM"],
    );
    assert!(j.build_failed);
    // Go 1.24: build events and FailedBuild.
    let stdout = r##"{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-output","Output":"# example.com/m/broken [example.com/m/broken.test]\n"}
{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-output","Output":"./b_test.go:5:28: undefined: Undefined\n"}
{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-fail"}
{"Action":"start","Package":"example.com/m/broken"}
{"Action":"output","Package":"example.com/m/broken","Output":"FAIL\texample.com/m/broken [build failed]\n"}
{"Action":"fail","Package":"example.com/m/broken","Elapsed":0,"FailedBuild":"example.com/m/broken [example.com/m/broken.test]"}
"##;
    let out = parse_test_json(stdout);
    assert_eq!(
        build_failed_packages(&out, ""),
        BTreeSet::from(["example.com/m/broken".to_string()])
    );
    let j = judge_run("example.com/m/broken", &out, "", Some(1), &["TestB"]);
    assert!(j.build_failed);
    assert_eq!(
        parse_diagnostics(&out.build_text("")).files,
        vec!["./b_test.go"]
    );
    // A test printing the marker is only output: not a build failure.
    let stdout = r#"{"Action":"output","Package":"example.com/m/pkg","Test":"TestA","Output":"FAIL\texample.com/m/pkg [build failed]\n"}
{"Action":"pass","Package":"example.com/m/pkg","Test":"TestA","Elapsed":0}
{"Action":"pass","Package":"example.com/m/pkg","Elapsed":0}
"#;
    let j = judge_run(PKG, &parse_test_json(stdout), "", Some(0), &["TestA"]);
    assert!(!j.build_failed);
    assert_eq!(j.outcomes["TestA"], Outcome::Pass);
    // A build failure next to passes, or with exit 0: not believed.
    let stdout = "FAIL\texample.com/m/pkg [build failed]\n{\"Action\":\"pass\",\"Package\":\"example.com/m/pkg\",\"Test\":\"TestA\"}\n";
    let j = judge_run(PKG, &parse_test_json(stdout), "", Some(2), &["TestA"]);
    assert!(!j.build_failed);
    assert!(j.problem.is_some());
    assert_eq!(j.outcomes["TestA"], Outcome::NotObserved);
}

#[test]
fn markers() {
    assert_eq!(
        fail_marker("FAIL\texample.com/m/x [build failed]"),
        Some("example.com/m/x")
    );
    assert_eq!(
        fail_marker("FAIL\texample.com/m/x [setup failed]\r"),
        Some("example.com/m/x")
    );
    assert_eq!(fail_marker("FAIL\texample.com/m/x\t0.01s"), None);
    assert_eq!(fail_marker("FAILED\tx [build failed]"), None);
    assert_eq!(fail_marker("FAIL"), None);
}

#[test]
fn diagnostics() {
    let text = "# example.com/m/broken [example.com/m/broken.test]\n./b_test.go:5:28: undefined: Undefined\nbroken/c_test.go:7:2: x declared but not used\n/tmp/wt/gomod/abs_test.go:1:1: bad\nvet: ./v_test.go:6:27: fmt.Printf format %d has arg \"x\" of wrong type string\n./b_test.go:9:1: again\n\ttoo many errors\n# example.com/m/miss\nmiss/m_test.go:4:1: no required module provides package github.com/foo/bar; to add it:\n\tgo get github.com/foo/bar\n# example.com/m/cyc/b\npackage example.com/m/cyc/b\n\timports example.com/m/cyc/a: import cycle not allowed in test\nnote: module requires Go 1.99\nFAIL\texample.com/m/cyc/b [setup failed]\n";
    let d = parse_diagnostics(text);
    assert_eq!(
        d.files,
        vec![
            "./b_test.go",
            "broken/c_test.go",
            "/tmp/wt/gomod/abs_test.go",
            "./v_test.go",
            "miss/m_test.go"
        ]
    );
    assert_eq!(
        d.without_file,
        vec![Some("example.com/m/cyc/b".to_string())]
    );

    let c = ctx();
    let dirs = BTreeMap::from([(
        "example.com/m/cyc/b".to_string(),
        PathBuf::from("/tmp/wt/gomod/cyc/b"),
    )]);
    let bf = build_failure(&c, text, &dirs, &c.dir);
    assert_eq!(
        bf.diagnostic_files,
        vec![
            "gomod/abs_test.go",
            "gomod/b_test.go",
            "gomod/broken/c_test.go",
            "gomod/cyc/b",
            "gomod/miss/m_test.go",
            "gomod/v_test.go"
        ]
    );
    assert!(bf.excerpt.contains("undefined: Undefined"));
    let at: Vec<(&str, u32, Option<u32>, &str)> = bf
        .diagnostics
        .iter()
        .map(|d| (d.file.as_str(), d.line, d.column, d.message.as_str()))
        .collect();
    assert_eq!(
        at,
        vec![
            ("gomod/b_test.go", 5, Some(28), "undefined: Undefined"),
            (
                "gomod/broken/c_test.go",
                7,
                Some(2),
                "x declared but not used"
            ),
            ("gomod/abs_test.go", 1, Some(1), "bad"),
            (
                "gomod/v_test.go",
                6,
                Some(27),
                "fmt.Printf format %d has arg \"x\" of wrong type string"
            ),
            ("gomod/b_test.go", 9, Some(1), "again"),
            (
                "gomod/miss/m_test.go",
                4,
                Some(1),
                "no required module provides package github.com/foo/bar; to add it:"
            ),
        ]
    );
    // No error line at all: the package's directory.
    let bf = build_failure(&c, "", &dirs, Path::new("/tmp/wt/gomod/x"));
    assert_eq!(bf.diagnostic_files, vec!["gomod/x"]);
    // Files outside the worktree (GOROOT) are not the repository's.
    let bf = build_failure(
        &c,
        "/usr/lib/go/src/fmt/print.go:1:1: x\n./a_test.go:1:1: y\n",
        &dirs,
        &c.dir,
    );
    assert_eq!(bf.diagnostic_files, vec!["gomod/a_test.go"]);
    assert_eq!(bf.diagnostics.len(), 1);
    // Merged failures keep every diagnostic once.
    let merged = merge_failures(vec![bf.clone(), bf.clone()]).unwrap();
    assert_eq!(merged.diagnostics, bf.diagnostics);

    assert_eq!(
        diagnostic_position("./x_test.go:12:5: undefined: Foo"),
        Some(("./x_test.go", 12, Some(5), "undefined: Foo"))
    );
    assert_eq!(
        diagnostic_position("go.mod:3: unknown directive: x"),
        Some(("go.mod", 3, None, "unknown directive: x"))
    );
    assert_eq!(
        diagnostic_position("vet: a.go:2:7: m"),
        Some(("a.go", 2, Some(7), "m"))
    );
    assert_eq!(
        diagnostic_position("a.go:2:7"),
        Some(("a.go", 2, Some(7), ""))
    );
    assert_eq!(diagnostic_position("a.go:x: m"), None);

    assert_eq!(diagnostic_file("x.go:1: m"), Some("x.go"));
    assert_eq!(
        diagnostic_file("go.mod:3: unknown directive"),
        Some("go.mod")
    );
    assert_eq!(diagnostic_file("a b.go:1:2: m"), None);
    assert_eq!(diagnostic_file("x.go:abc: m"), None);
    assert_eq!(diagnostic_file("x.txt:1: m"), None);
}

#[test]
fn go_list_output() {
    let out = r#"{
	"Dir": "/tmp/wt/gomod/wrong",
	"ImportPath": "example.com/m/wrong",
	"Error": {
		"ImportStack": [],
		"Pos": "",
		"Err": "found packages wrong (w.go) and other (w_test.go) in /tmp/wt/gomod/wrong"
	},
	"InvalidGoFiles": ["w_test.go"],
	"TestGoFiles": [
		"w_test.go"
	]
}
{
	"Dir": "/tmp/wt/gomod/pkg",
	"ImportPath": "example.com/m/pkg",
	"TestGoFiles": ["a_test.go"],
	"XTestGoFiles": ["x_test.go"]
}
{
	"ImportPath": "example.com/m/gone",
	"Error": {
		"ImportStack": [],
		"Pos": "",
		"Err": "no required module provides package example.com/m/gone"
	}
}
{
	"Dir": "/tmp/wt/gomod/user",
	"ImportPath": "example.com/m/user",
	"DepsErrors": [
		{
			"ImportStack": ["example.com/m/user"],
			"Pos": "user/u.go:2:8",
			"Err": "no required module provides package github.com/nope/x; to add it:\n\tgo get github.com/nope/x"
		}
	],
	"TestGoFiles": ["u_test.go"]
}
go: something that is not JSON
"#;
    let pkgs = parse_go_list(out);
    assert_eq!(pkgs.len(), 4);
    assert_eq!(pkgs[0].import_path, "example.com/m/wrong");
    assert_eq!(pkgs[0].errors.len(), 1);
    assert!(pkgs[0].errors[0].message.starts_with("found packages"));
    assert_eq!(pkgs[0].errors[0].pos, None);
    assert_eq!(pkgs[0].invalid_files, vec!["w_test.go"]);
    assert_eq!(pkgs[1].test_files, vec!["a_test.go", "x_test.go"]);
    assert_eq!(pkgs[1].dir, Some(PathBuf::from("/tmp/wt/gomod/pkg")));
    assert!(pkgs[1].errors.is_empty());
    assert_eq!(pkgs[2].dir, None);
    let bf = pkgs[0].load_failure(&ctx());
    assert_eq!(bf.diagnostic_files, vec!["gomod/wrong/w_test.go"]);
    assert!(bf.excerpt.contains("found packages"));
    // A dependency that cannot be loaded: the import that names it.
    assert_eq!(pkgs[3].errors[0].pos.as_deref(), Some("user/u.go:2:8"));
    let bf = pkgs[3].load_failure(&ctx());
    assert_eq!(bf.diagnostic_files, vec!["gomod/user/u.go"]);
    assert_eq!(bf.diagnostics.len(), 1);
    assert_eq!(
        (
            bf.diagnostics[0].file.as_str(),
            bf.diagnostics[0].line,
            bf.diagnostics[0].column
        ),
        ("gomod/user/u.go", 2, Some(8))
    );
    assert!(bf.diagnostics[0]
        .message
        .starts_with("no required module provides package github.com/nope/x"));
    assert!(pkgs[0].load_failure(&ctx()).diagnostics.is_empty());
    assert!(bf
        .excerpt
        .starts_with("example.com/m/user: user/u.go:2:8: no required module"));
    assert!(parse_go_list("").is_empty());
}

#[test]
fn listed_names() {
    let text = r#"{"Action":"output","Package":"example.com/m/pkg","Output":"TestPass\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"TestFail\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"Testable\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"ExampleX\n"}
{"Action":"output","Package":"example.com/m/pkg","Output":"ok  \texample.com/m/pkg\t0.004s\n"}
{"Action":"pass","Package":"example.com/m/pkg","Elapsed":0.004}
{"Action":"output","Package":"example.com/m/pkg/nested","Output":"TestNested\n"}
{"Action":"pass","Package":"example.com/m/pkg/nested","Elapsed":0.004}
"#;
    let out = parse_test_json(text);
    assert_eq!(out.listed_names(PKG), vec!["TestPass", "TestFail"]);
    assert_eq!(
        out.listed_names("example.com/m/pkg/nested"),
        vec!["TestNested"]
    );
}

#[test]
fn declarations() {
    let src = "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\nfunc  TestB (t *testing.T) {}\nfunc Testable(t *testing.T) {}\nfunc helperTest() {}\n// func TestC(t *testing.T) {}\n\tfunc TestD(t *testing.T) {}\nfunc TestÉ(t *testing.T) {}\nfunc Test(t *testing.T) {}\nfunc Test_x(t *testing.T) {}\nfunc BenchmarkA(b *testing.B) {}\nfunc (s *S) TestM(t *testing.T) {}\n";
    assert_eq!(
        declared_in(src),
        vec!["TestA", "TestB", "TestÉ", "Test", "Test_x"]
    );
}

#[test]
fn ids_and_patterns() {
    assert_eq!(
        parse_id("example.com/m/pkg TestA/sub/x#01"),
        Some(("example.com/m/pkg", vec!["TestA", "sub", "x#01"]))
    );
    assert_eq!(
        parse_id("example.com/m/pkg TestA"),
        Some(("example.com/m/pkg", vec!["TestA"]))
    );
    assert_eq!(parse_id("example.com/m/pkg"), None);
    assert_eq!(parse_id("example.com/m/... TestA"), None);
    assert_eq!(parse_id("all TestA"), None);
    assert_eq!(parse_id("-exec TestA"), None);
    assert_eq!(parse_id("example.com/m/pkg TestA//x"), None);
    assert_eq!(parse_id("example.com/m/pkg TestA/a b"), None);
    assert_eq!(parse_id("example.com/m/pkg helper"), None);
    assert_eq!(parse_id("example.com/m/pkg Testable"), None);

    assert_eq!(
        quote_meta(r"a.b+c*d?e(f)g|h[i]j{k}l^m$n\o-p#q"),
        r"a\.b\+c\*d\?e\(f\)g\|h\[i\]j\{k\}l\^m\$n\\o-p#q"
    );
    assert_eq!(run_pattern(&[], &["TestA"]), "^TestA$");
    assert_eq!(
        run_pattern(&[], &["TestB", "TestA", "TestB"]),
        "^(TestA|TestB)$"
    );
    assert_eq!(
        run_pattern(&["TestA"], &["ok_case", "x.y"]),
        r"^TestA$/^(ok_case|x\.y)$"
    );
    assert_eq!(
        run_pattern(&["TestA", "a(1)"], &["b"]),
        r"^TestA$/^a\(1\)$/^b$"
    );
}

#[test]
fn test_files_and_flags() {
    assert!(is_go_test_file("pkg/a_test.go"));
    assert!(is_go_test_file("a_test.go"));
    assert!(is_go_test_file("pkg/testdata/golden.json"));
    assert!(is_go_test_file("testdata/x/y.go"));
    assert!(!is_go_test_file("pkg/a.go"));
    assert!(!is_go_test_file("pkg/a_test.go.orig"));
    assert!(!is_go_test_file("testdata"));
    assert!(!is_go_test_file("pkg/mytestdata/x.txt"));

    let args: Vec<String> = [
        "-short",
        "-tags",
        "integration",
        "-race",
        "--mod=vendor",
        "-v",
        "-modfile",
        "x.mod",
        "-tags=a,b",
    ]
    .map(String::from)
    .to_vec();
    assert_eq!(
        list_flags(&args),
        vec![
            "-tags",
            "integration",
            "--mod=vendor",
            "-modfile",
            "x.mod",
            "-tags=a,b"
        ]
    );
    assert!(go_env(&[(OsString::from("GOTOOLCHAIN"), OsString::from("go1.22.0"))]).is_empty());
}

#[test]
fn tests_that_call_run() {
    let src = "package p\n\nfunc TestA(t *testing.T) {\n\tfor _, c := range cases {\n\t\tt.Run(c.name, func(t *testing.T) {})\n\t}\n}\n\nfunc TestB(t *testing.T) {\n\tcheck(t)\n}\n\nfunc helper(t *testing.T) {\n\tt.Run(\"x\", nil)\n}\n\nfunc TestC(t *testing.T) { t.Run(\"one\", nil) }\nfunc (s *S) TestM(t *testing.T) { t.Run(\"m\", nil) }\n";
    let found: Vec<String> = run_callers(src).into_iter().collect();
    assert_eq!(found, vec!["TestA", "TestC"]);
}

#[test]
fn subtests_from_run_events() {
    let text = r#"{"Action":"run","Package":"example.com/m/pkg","Test":"TestA"}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestA/ok_case"}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestA/ok_case"}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestA/x/deep#01"}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestA/has space"}
{"Action":"run","Package":"example.com/m/pkg","Test":"TestOther/y"}
{"Action":"run","Package":"example.com/m/other","Test":"TestA/z"}
{"Action":"pass","Package":"example.com/m/pkg","Test":"TestA/w"}
"#;
    let found = subtests_run(&parse_test_json(text), PKG, &["TestA"]);
    assert_eq!(
        found,
        vec![
            ("TestA/ok_case".to_string(), "TestA".to_string()),
            ("TestA/x/deep#01".to_string(), "TestA".to_string()),
        ]
    );
}

#[test]
fn package_dirs_of_scope_files() {
    assert_eq!(package_dir_of("pkg/a_test.go").as_deref(), Some("pkg"));
    assert_eq!(package_dir_of("a_test.go").as_deref(), Some(""));
    assert_eq!(
        package_dir_of("pkg/testdata/x/golden.json").as_deref(),
        Some("pkg")
    );
    assert_eq!(package_dir_of("./pkg/sub/b.go").as_deref(), Some("pkg/sub"));
    assert_eq!(package_dir_of(""), None);
}

#[test]
fn positions_relative_to_the_package_are_found_there() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let c = RunCtx {
        worktree: root.clone(),
        dir: root.join("gomod"),
        ..ctx()
    };
    std::fs::create_dir_all(c.dir.join("broken")).unwrap();
    std::fs::write(c.dir.join("broken/b_test.go"), "package broken\n").unwrap();
    std::fs::write(c.dir.join("root_test.go"), "package m\n").unwrap();
    let dirs = BTreeMap::from([("example.com/m/broken".to_string(), c.dir.join("broken"))]);
    // `./b_test.go` is not in the runner's root, but in the block's package.
    let text = "# example.com/m/broken [example.com/m/broken.test]\n./b_test.go:5:28: undefined: X\n./root_test.go:1:1: y\nbroken/b_test.go:6:1: z\n";
    let bf = build_failure(&c, text, &dirs, &c.dir);
    let at: Vec<(&str, u32)> = bf
        .diagnostics
        .iter()
        .map(|d| (d.file.as_str(), d.line))
        .collect();
    assert_eq!(
        at,
        vec![
            ("gomod/broken/b_test.go", 5),
            ("gomod/root_test.go", 1),
            ("gomod/broken/b_test.go", 6)
        ]
    );
    assert_eq!(
        bf.diagnostic_files,
        vec!["gomod/broken/b_test.go", "gomod/root_test.go"]
    );
}
