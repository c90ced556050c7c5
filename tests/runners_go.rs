//! The `go test` adapter against real tiny modules: listing, running (pass, fail, skip, panic,
//! subtests, an external test package, a nested package), test files that do not compile, a
//! package that does not load, and ids that do not exist (never a pass).
//!
//! These tests need `go` on PATH and fail (they do not skip) without it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use shipmoor::acceptance::{RunnerConfig, RunnerKind};
use shipmoor::floor::runners::{self, ListScope, Outcome, RunCtx, Runner};

const GO_MOD: &str = "module example.com/m\n\ngo 1.19\n";

const PKG: &str = "package pkg\n\nfunc Add(a, b int) int { return a + b }\n";

const PKG_TEST: &str = r#"package pkg

import (
	"fmt"
	"testing"
)

func TestPass(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("Add is broken")
	}
}

func TestFail(t *testing.T) {
	t.Errorf("got %d, want %d", 1, 2)
}

func TestSkip(t *testing.T) {
	t.Skip("not today")
}

func TestSubs(t *testing.T) {
	t.Run("ok case", func(t *testing.T) {})
	t.Run("bad", func(t *testing.T) { t.Error("sub failed") })
}

// Prints what a passing test that does not exist would look like.
func TestForger(t *testing.T) {
	fmt.Println("=== RUN   TestGhost")
	fmt.Println("--- PASS: TestGhost (0.00s)")
}

func BenchmarkAdd(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Add(1, 2)
	}
}

func ExampleAdd() {
	fmt.Println(Add(1, 2))
	// Output: 3
}
"#;

const PKG_XTEST: &str = r#"package pkg_test

import (
	"testing"

	"example.com/m/pkg"
)

func TestExternal(t *testing.T) {
	if pkg.Add(2, 2) != 4 {
		t.Fatal("bad")
	}
}
"#;

const CRASH_TEST: &str = r#"package crash

import "testing"

func TestBoom(t *testing.T) {
	var m map[string]int
	m["x"] = 1
}

func TestAfter(t *testing.T) {}
"#;

const NESTED_TEST: &str =
    "package nested\n\nimport \"testing\"\n\nfunc TestNested(t *testing.T) {}\n";

const BROKEN_TEST: &str =
    "package broken\n\nimport \"testing\"\n\nfunc TestB(t *testing.T) {\n\tUndefined()\n}\n";

/// Fails, naming `go`, when go is not installed: these tests must not pass by skipping.
fn require_go() {
    let ok = std::process::Command::new("go")
        .arg("version")
        .env("GOTOOLCHAIN", "local")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "this test needs `go` (apt-get install golang-go): `go version` did not work"
    );
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    worktree: PathBuf,
    dir: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A module in `<tmp>/wt/gomod` (the runner's root is `gomod`).
fn fixture(files: &[(&str, &str)]) -> Fixture {
    require_go();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let worktree = root.join("wt");
    let dir = worktree.join("gomod");
    write(&dir.join("go.mod"), GO_MOD);
    for (path, text) in files {
        write(&dir.join(path), text);
    }
    Fixture {
        _tmp: tmp,
        root,
        worktree,
        dir,
    }
}

impl Fixture {
    fn ctx(&self, label: &str) -> RunCtx {
        let scratch = self.root.join("scratch").join(label);
        std::fs::create_dir_all(&scratch).unwrap();
        let env = [
            ("GOCACHE", self.root.join("gocache").into_os_string()),
            ("GOPATH", self.root.join("gopath").into_os_string()),
            ("GOPROXY", OsString::from("off")),
            ("GOTOOLCHAIN", OsString::from("local")),
            ("GOFLAGS", OsString::from("-buildvcs=false")),
        ];
        RunCtx {
            worktree: self.worktree.clone(),
            dir: self.dir.clone(),
            scratch,
            timeout: Duration::from_secs(300),
            env: env
                .into_iter()
                .map(|(k, v)| (OsString::from(k), v))
                .collect(),
        }
    }
}

fn adapter() -> Box<dyn Runner> {
    runners::adapter(RunnerConfig {
        kind: RunnerKind::Go,
        root: "gomod".into(),
        args: vec![],
        setup: None,
        command: None,
        line: 1,
    })
    .expect("the go adapter")
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn lists_and_runs() {
    let fx = fixture(&[
        ("pkg/pkg.go", PKG),
        ("pkg/pkg_test.go", PKG_TEST),
        ("pkg/x_test.go", PKG_XTEST),
        ("pkg/nested/n_test.go", NESTED_TEST),
        ("crash/crash_test.go", CRASH_TEST),
        ("util/util.go", "package util\n"),
    ]);
    let runner = adapter();
    runner.check_tool().expect("go is installed");

    let report = runner.list(&fx.ctx("list"), &ListScope::All);
    assert!(report.problem.is_none(), "{:?}", report.problem);
    assert!(report.build_failure.is_none(), "{:?}", report.build_failure);
    // Subtests are found by running, at head, only the tests that call `.Run(`.
    let commands: Vec<String> = report
        .invocations
        .iter()
        .map(|i| i.command.join(" "))
        .collect();
    assert!(
        commands
            .iter()
            .any(|c| c == "go test -json -count=1 -run ^TestSubs$ example.com/m/pkg"),
        "{commands:#?}"
    );
    assert_eq!(
        commands.iter().filter(|c| c.contains(" -run ")).count(),
        1,
        "{commands:#?}"
    );
    let listed: Vec<(&str, Option<&str>)> = report
        .tests
        .iter()
        .map(|t| (t.id.as_str(), t.file.as_deref()))
        .collect();
    let pkg_test = Some("gomod/pkg/pkg_test.go");
    assert_eq!(
        listed,
        vec![
            (
                "example.com/m/crash TestAfter",
                Some("gomod/crash/crash_test.go")
            ),
            (
                "example.com/m/crash TestBoom",
                Some("gomod/crash/crash_test.go")
            ),
            (
                "example.com/m/pkg TestExternal",
                Some("gomod/pkg/x_test.go")
            ),
            ("example.com/m/pkg TestFail", pkg_test),
            ("example.com/m/pkg TestForger", pkg_test),
            ("example.com/m/pkg TestPass", pkg_test),
            ("example.com/m/pkg TestSkip", pkg_test),
            ("example.com/m/pkg TestSubs", pkg_test),
            ("example.com/m/pkg TestSubs/bad", pkg_test),
            ("example.com/m/pkg TestSubs/ok_case", pkg_test),
            (
                "example.com/m/pkg/nested TestNested",
                Some("gomod/pkg/nested/n_test.go")
            ),
        ]
    );

    let requested = ids(&[
        "example.com/m/pkg TestPass",
        "example.com/m/pkg TestFail",
        "example.com/m/pkg TestSkip",
        "example.com/m/pkg TestForger",
        "example.com/m/pkg TestExternal",
        "example.com/m/pkg TestSubs/ok_case",
        "example.com/m/pkg TestSubs/bad",
        "example.com/m/pkg/nested TestNested",
        "example.com/m/crash TestBoom",
        "example.com/m/crash TestAfter",
        // Do not exist: a test, a forged one, a subtest, a package, a package without tests,
        // and something that is not an id.
        "example.com/m/pkg TestNope",
        "example.com/m/pkg TestGhost",
        "example.com/m/pkg TestSubs/nope",
        "example.com/m/gone TestPass",
        "example.com/m/util TestPass",
        "example.com/m/... TestPass",
    ]);
    let report = runner.run(&fx.ctx("run"), &requested);
    let expected: BTreeMap<String, Outcome> = [
        ("example.com/m/pkg TestPass", Outcome::Pass),
        ("example.com/m/pkg TestFail", Outcome::Fail),
        ("example.com/m/pkg TestSkip", Outcome::NotObserved),
        ("example.com/m/pkg TestForger", Outcome::Pass),
        ("example.com/m/pkg TestExternal", Outcome::Pass),
        ("example.com/m/pkg TestSubs/ok_case", Outcome::Pass),
        ("example.com/m/pkg TestSubs/bad", Outcome::Fail),
        ("example.com/m/pkg/nested TestNested", Outcome::Pass),
        ("example.com/m/crash TestBoom", Outcome::Fail),
        // The panic stopped the test binary before it ran.
        ("example.com/m/crash TestAfter", Outcome::NotObserved),
        ("example.com/m/pkg TestNope", Outcome::NotObserved),
        ("example.com/m/pkg TestGhost", Outcome::NotObserved),
        ("example.com/m/pkg TestSubs/nope", Outcome::NotObserved),
        ("example.com/m/gone TestPass", Outcome::NotObserved),
        ("example.com/m/util TestPass", Outcome::NotObserved),
        ("example.com/m/... TestPass", Outcome::NotObserved),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(report.outcomes, expected, "problem: {:?}", report.problem);
    assert!(report.problem.is_none(), "{:?}", report.problem);
    assert!(report.build_failure.is_none());
    assert_eq!(
        report
            .messages
            .get("example.com/m/pkg TestFail")
            .map(String::as_str),
        Some("pkg_test.go:15: got 1, want 2")
    );
    assert_eq!(
        report
            .messages
            .get("example.com/m/pkg TestSubs/bad")
            .map(String::as_str),
        Some("pkg_test.go:24: sub failed")
    );
    let boom = &report.messages["example.com/m/crash TestBoom"];
    assert!(
        boom.starts_with("panic: assignment to entry in nil map"),
        "{boom}"
    );
    assert_eq!(report.messages.len(), 3, "{:?}", report.messages);

    // One command per package for top-level tests, one per parent for subtests; exact regexes.
    let commands: Vec<String> = report
        .invocations
        .iter()
        .map(|i| i.command.join(" "))
        .collect();
    for want in [
        "go test -json -count=1 -run ^(TestExternal|TestFail|TestForger|TestPass|TestSkip)$ example.com/m/pkg",
        "go test -json -count=1 -run ^TestSubs$/^(bad|nope|ok_case)$ example.com/m/pkg",
        "go test -json -count=1 -run ^TestNested$ example.com/m/pkg/nested",
    ] {
        assert!(commands.iter().any(|c| c == want), "{want} not in {commands:#?}");
    }
    // TestNope and TestGhost are not declared: only TestNope shares a command, as a filter.
    assert!(
        !commands.iter().any(|c| c.contains("TestGhost")),
        "{commands:#?}"
    );
    assert!(!commands
        .iter()
        .any(|c| c.contains("example.com/m/gone ") && c.starts_with("go test")));

    // Only a skipped test and ids that do not exist: nothing passes.
    let report = runner.run(
        &fx.ctx("none"),
        &ids(&[
            "example.com/m/pkg TestSkip",
            "example.com/m/pkg TestNope",
            "example.com/m/pkg/nested TestNested/sub",
        ]),
    );
    assert!(
        report.outcomes.values().all(|o| *o == Outcome::NotObserved),
        "{:?}",
        report.outcomes
    );
    assert!(report.problem.is_none(), "{:?}", report.problem);
    // Nothing was written into the module.
    let mut entries: Vec<String> = std::fs::read_dir(&fx.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    entries.sort();
    assert_eq!(entries, vec!["crash", "go.mod", "pkg", "util"]);
}

#[test]
fn test_files_that_do_not_compile_are_build_failures() {
    let fx = fixture(&[
        ("pkg/pkg.go", PKG),
        (
            "pkg/pkg_test.go",
            "package pkg\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) {}\n",
        ),
        ("broken/b.go", "package broken\n"),
        ("broken/b_test.go", BROKEN_TEST),
    ]);
    let runner = adapter();

    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    let bf = listed.build_failure.expect("a build failure");
    assert_eq!(bf.diagnostic_files, vec!["gomod/broken/b_test.go"]);
    assert!(
        bf.excerpt.contains("undefined: Undefined"),
        "{}",
        bf.excerpt
    );
    // What did build is still listed.
    let listed_ids: Vec<&str> = listed.tests.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(listed_ids, vec!["example.com/m/pkg TestPass"]);

    let report = runner.run(
        &fx.ctx("run"),
        &ids(&["example.com/m/broken TestB", "example.com/m/pkg TestPass"]),
    );
    assert_eq!(
        report.outcomes["example.com/m/broken TestB"],
        Outcome::BuildFail
    );
    assert_eq!(
        report.outcomes["example.com/m/pkg TestPass"],
        Outcome::Pass,
        "{:?}",
        report.problem
    );
    assert!(report.problem.is_none(), "{:?}", report.problem);
    let bf = report.build_failure.expect("a build failure");
    assert_eq!(bf.diagnostic_files, vec!["gomod/broken/b_test.go"]);
}

#[test]
fn packages_that_do_not_load_are_build_failures() {
    // The test file's package clause differs from the package's, and a package imports a module
    // the module does not require: go cannot load either (and would stop altogether if given
    // them).
    let fx = fixture(&[
        (
            "pkg/pkg_test.go",
            "package pkg\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) {}\n",
        ),
        ("wrong/w.go", "package wrong\n"),
        (
            "wrong/w_test.go",
            "package other\n\nimport \"testing\"\n\nfunc TestW(t *testing.T) {}\n",
        ),
        (
            "user/u.go",
            "package user\n\nimport _ \"github.com/nope/x\"\n",
        ),
        (
            "user/u_test.go",
            "package user\n\nimport \"testing\"\n\nfunc TestU(t *testing.T) {}\n",
        ),
    ]);
    let runner = adapter();
    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    let bf = listed.build_failure.expect("a build failure");
    assert_eq!(
        bf.diagnostic_files,
        vec!["gomod/user/u.go", "gomod/wrong/w_test.go"]
    );
    assert!(bf.excerpt.contains("github.com/nope/x"), "{}", bf.excerpt);
    let listed_ids: Vec<&str> = listed.tests.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(listed_ids, vec!["example.com/m/pkg TestPass"]);

    let report = runner.run(
        &fx.ctx("run"),
        &ids(&[
            "example.com/m/wrong TestW",
            "example.com/m/user TestU",
            "example.com/m/pkg TestPass",
        ]),
    );
    assert_eq!(
        report.outcomes["example.com/m/wrong TestW"],
        Outcome::BuildFail
    );
    assert_eq!(
        report.outcomes["example.com/m/user TestU"],
        Outcome::BuildFail
    );
    assert_eq!(report.outcomes["example.com/m/pkg TestPass"], Outcome::Pass);
    assert!(report.problem.is_none(), "{:?}", report.problem);
    let bf = report.build_failure.expect("a build failure");
    assert_eq!(
        bf.diagnostic_files,
        vec!["gomod/user/u.go", "gomod/wrong/w_test.go"]
    );
}

#[test]
fn empty_module_and_no_module() {
    let fx = fixture(&[("util/util.go", "package util\n")]);
    let listed = adapter().list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.tests.is_empty());
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    assert!(listed.build_failure.is_none());

    // No go.mod: a problem, not an empty success.
    std::fs::remove_file(fx.dir.join("go.mod")).unwrap();
    let listed = adapter().list(&fx.ctx("nomod"), &ListScope::All);
    assert!(listed.tests.is_empty());
    assert!(listed.problem.is_some());
}

#[test]
fn test_files() {
    let r = adapter();
    assert!(r.is_test_file("pkg/a_test.go"));
    assert!(r.is_test_file("a_test.go"));
    assert!(r.is_test_file("pkg/testdata/golden.txt"));
    assert!(!r.is_test_file("pkg/a.go"));
    assert!(!r.is_test_file("go.mod"));
}

const TRICKY_TEST: &str = r#"package tricky

import (
	"fmt"
	"testing"
)

// Prints a pass for a test that really fails.
func TestForge(t *testing.T) {
	fmt.Println("--- PASS: TestReallyFails (0.00s)")
}

func TestReallyFails(t *testing.T) {
	t.Fatal("really")
}
"#;

const EXIT_TEST: &str = r#"package exits

import (
	"os"
	"testing"
)

func TestFirst(t *testing.T) {}

func TestExit(t *testing.T) {
	os.Exit(1)
}
"#;

const SLOW_TEST: &str = r#"package slow

import (
	"testing"
	"time"
)

func TestQuick(t *testing.T) {}

func TestSlow(t *testing.T) {
	time.Sleep(5 * time.Second)
}
"#;

const NO_RUN_MAIN: &str = r#"package norun

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	os.Exit(0)
}

func TestNeverRuns(t *testing.T) {}
"#;

#[test]
fn exits_timeouts_and_forgeries_are_never_passes() {
    let fx = fixture(&[
        ("tricky/tricky_test.go", TRICKY_TEST),
        ("exits/exits_test.go", EXIT_TEST),
        ("slow/slow_test.go", SLOW_TEST),
        ("norun/norun_test.go", NO_RUN_MAIN),
    ]);
    let report = adapter().run(
        &fx.ctx("run"),
        &ids(&[
            "example.com/m/tricky TestForge",
            "example.com/m/tricky TestReallyFails",
            "example.com/m/exits TestFirst",
            "example.com/m/exits TestExit",
            "example.com/m/norun TestNeverRuns",
        ]),
    );
    let outcome = |id: &str| report.outcomes[id];
    // The forged `--- PASS:` line does not hide the real failure.
    assert_eq!(outcome("example.com/m/tricky TestForge"), Outcome::Pass);
    assert_eq!(
        outcome("example.com/m/tricky TestReallyFails"),
        Outcome::Fail
    );
    assert_eq!(
        report.messages["example.com/m/tricky TestReallyFails"],
        "tricky_test.go:14: really"
    );
    // os.Exit(1) inside a test: exit 1 with no failed test, so not even TestFirst is believed.
    assert_eq!(
        outcome("example.com/m/exits TestFirst"),
        Outcome::NotObserved
    );
    assert_eq!(
        outcome("example.com/m/exits TestExit"),
        Outcome::NotObserved
    );
    let problem = report.problem.clone().unwrap_or_default();
    assert!(
        problem.contains("example.com/m/exits") && problem.contains("did not finish: TestExit"),
        "{problem}"
    );
    // A TestMain that never calls m.Run: nothing ran, nothing passes.
    assert_eq!(
        outcome("example.com/m/norun TestNeverRuns"),
        Outcome::NotObserved
    );

    // go's own -timeout (a runner argument) stops the binary mid-run.
    let with_timeout = runners::adapter(RunnerConfig {
        kind: RunnerKind::Go,
        root: "gomod".into(),
        args: vec!["-timeout=1s".into()],
        setup: None,
        command: None,
        line: 1,
    })
    .expect("the go adapter");
    let slow = ids(&[
        "example.com/m/slow TestQuick",
        "example.com/m/slow TestSlow",
    ]);
    let report = with_timeout.run(&fx.ctx("go-timeout"), &slow);
    assert!(
        report.outcomes.values().all(|o| *o == Outcome::NotObserved),
        "{:?}",
        report.outcomes
    );
    let problem = report.problem.unwrap_or_default();
    assert!(
        problem.contains("panic: test timed out after 1s"),
        "{problem}"
    );
    assert!(
        report
            .invocations
            .last()
            .unwrap()
            .command
            .contains(&"-timeout=1s".to_string()),
        "{:?}",
        report.invocations.last().unwrap().command
    );

    // Our own timeout.
    let mut ctx = fx.ctx("our-timeout");
    ctx.timeout = Duration::from_secs(3);
    let report = adapter().run(&ctx, &slow);
    assert!(report.outcomes.values().all(|o| *o == Outcome::NotObserved));
    let problem = report.problem.unwrap_or_default();
    assert!(problem.contains("timed out after"), "{problem}");
}
