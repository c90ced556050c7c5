//! The `go test` adapter against real tiny modules: listing, running (pass, fail, skip, panic,
//! subtests, an external test package, a nested package), test files that do not compile, a
//! package that does not load, and ids that do not exist (never a pass).
//!
//! These tests need `go` on PATH and fail (they do not skip) without it.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use shipmoor::acceptance::RunnerKind;
use shipmoor::floor::runners::{self, FailureKind, ListScope, Outcome, RunCtx, Runner};

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
            jail: shipmoor::sandbox::Jail::none(),
        }
    }
}

fn adapter() -> std::sync::Arc<dyn Runner> {
    crate::common::builtin_runner(RunnerKind::Go, "gomod", &[])
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
    runner
        .check_tool(&shipmoor::floor::runners::Probe::unconfined())
        .expect("go is installed");

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
    assert_eq!(report.outcomes(), expected, "problem: {:?}", report.problem);
    assert!(report.problem.is_none(), "{:?}", report.problem);
    assert!(report.build_failure.is_none());
    assert_eq!(
        report
            .messages()
            .get("example.com/m/pkg TestFail")
            .map(String::as_str),
        Some("pkg_test.go:15: got 1, want 2")
    );
    assert_eq!(
        report
            .messages()
            .get("example.com/m/pkg TestSubs/bad")
            .map(String::as_str),
        Some("pkg_test.go:24: sub failed")
    );
    let boom = &report.messages()["example.com/m/crash TestBoom"];
    assert!(
        boom.starts_with("panic: assignment to entry in nil map"),
        "{boom}"
    );
    assert_eq!(report.messages().len(), 3, "{:?}", report.messages());

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
        report
            .outcomes()
            .values()
            .all(|o| *o == Outcome::NotObserved),
        "{:?}",
        report.outcomes()
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
        report.outcomes()["example.com/m/broken TestB"],
        Outcome::BuildFail
    );
    assert_eq!(
        report.outcomes()["example.com/m/pkg TestPass"],
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
        report.outcomes()["example.com/m/wrong TestW"],
        Outcome::BuildFail
    );
    assert_eq!(
        report.outcomes()["example.com/m/user TestU"],
        Outcome::BuildFail
    );
    assert_eq!(
        report.outcomes()["example.com/m/pkg TestPass"],
        Outcome::Pass
    );
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
    let outcome = |id: &str| report.outcomes()[id];
    // The forged `--- PASS:` line does not hide the real failure.
    assert_eq!(outcome("example.com/m/tricky TestForge"), Outcome::Pass);
    assert_eq!(
        outcome("example.com/m/tricky TestReallyFails"),
        Outcome::Fail
    );
    assert_eq!(
        report.messages()["example.com/m/tricky TestReallyFails"],
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
    let with_timeout = crate::common::builtin_runner(RunnerKind::Go, "gomod", &["-timeout=1s"]);
    let slow = ids(&[
        "example.com/m/slow TestQuick",
        "example.com/m/slow TestSlow",
    ]);
    let report = with_timeout.run(&fx.ctx("go-timeout"), &slow);
    assert!(
        report
            .outcomes()
            .values()
            .all(|o| *o == Outcome::NotObserved),
        "{:?}",
        report.outcomes()
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
    assert!(report
        .outcomes()
        .values()
        .all(|o| *o == Outcome::NotObserved));
    let problem = report.problem.unwrap_or_default();
    assert!(problem.contains("timed out after"), "{problem}");
}

// ----------------------------------------------------------------------------------------------
// Subtests, list scopes, item maps and diagnostics (book: floor/attribution.md)
// ----------------------------------------------------------------------------------------------

/// `Fixed` and the high clamp exist at head only; swapping in [`TABLE_BASE`] stands for base.
const TABLE_HEAD: &str = "package table\n\nconst Fixed = true\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\tif x > hi {\n\t\treturn hi\n\t}\n\treturn x\n}\n";
const TABLE_BASE: &str = "package table\n\nconst Fixed = false\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\treturn x\n}\n";

const TABLE_TEST: &str = r#"package table

import "testing"

func TestClamp(t *testing.T) {
	cases := []struct {
		name     string
		in, want int
	}{
		{"keeps mid", 5, 5},
		{"clamps high", 50, 10},
		{"dup", 1, 1},
		{"dup", 2, 2},
		{"a.b (x)", 3, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Clamp(c.in, 0, 10); got != c.want {
				t.Fatalf("Clamp(%d) = %d, want %d", c.in, got, c.want)
			}
		})
	}
	t.Run("outer", func(t *testing.T) {
		t.Run("inner", func(t *testing.T) {})
	})
}

// Its subtest passes even where the parent itself fails.
func TestParentFails(t *testing.T) {
	t.Run("own case", func(t *testing.T) {})
	if !Fixed {
		t.Fatal("not fixed")
	}
}

// The subtest exists only where Fixed is set; the parent passes either way.
func TestOnlyWhenFixed(t *testing.T) {
	if Fixed {
		t.Run("new case", func(t *testing.T) {})
	}
}

func TestPlain(t *testing.T) {}
"#;

const BOOM_TEST: &str = r#"package boom

import "testing"

func TestBoom(t *testing.T) {
	t.Run("nil map", func(t *testing.T) {
		var m map[string]int
		m["x"] = 1
	})
}
"#;

#[test]
fn subtests_are_listed_and_decided_by_their_own_outcome() {
    let fx = fixture(&[
        ("table/table.go", TABLE_HEAD),
        ("table/table_test.go", TABLE_TEST),
        ("boom/boom_test.go", BOOM_TEST),
    ]);
    let runner = adapter();
    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.build_failure.is_none(), "{:?}", listed.build_failure);
    // The panicking subtest stops its package's binary: its subtests cannot all be known.
    let problem = listed.problem.clone().unwrap_or_default();
    assert!(
        problem.contains("finding the subtests of example.com/m/boom"),
        "{problem}"
    );
    let table: Vec<&str> = listed
        .tests
        .iter()
        .filter(|t| t.id.starts_with("example.com/m/table "))
        .map(|t| {
            assert_eq!(t.file.as_deref(), Some("gomod/table/table_test.go"));
            &t.id["example.com/m/table ".len()..]
        })
        .collect();
    assert_eq!(
        table,
        vec![
            "TestClamp",
            "TestClamp/a.b_(x)",
            "TestClamp/clamps_high",
            "TestClamp/dup",
            "TestClamp/dup#01",
            "TestClamp/keeps_mid",
            "TestClamp/outer",
            "TestClamp/outer/inner",
            "TestOnlyWhenFixed",
            "TestOnlyWhenFixed/new_case",
            "TestParentFails",
            "TestParentFails/own_case",
            "TestPlain",
        ]
    );
    // The subtest that started before the panic is still found.
    assert!(listed
        .tests
        .iter()
        .any(|t| t.id == "example.com/m/boom TestBoom/nil_map"));

    let table_ids = |names: &[&str]| -> Vec<String> {
        names
            .iter()
            .map(|n| format!("example.com/m/table {n}"))
            .collect()
    };
    let wanted = table_ids(&[
        "TestClamp/clamps_high",
        "TestClamp/keeps_mid",
        "TestClamp/dup#01",
        "TestClamp/a.b_(x)",
        "TestClamp/outer/inner",
        "TestParentFails/own_case",
        "TestOnlyWhenFixed/new_case",
    ]);
    let head = runner.run(&fx.ctx("head"), &wanted);
    assert!(head.problem.is_none(), "{:?}", head.problem);
    assert!(
        head.outcomes().values().all(|o| *o == Outcome::Pass),
        "{:?}",
        head.outcomes()
    );

    // "Base": the high clamp and Fixed are gone.
    write(&fx.dir.join("table/table.go"), TABLE_BASE);
    let base = runner.run(&fx.ctx("base"), &wanted);
    assert!(base.problem.is_none(), "{:?}", base.problem);
    let got: Vec<(&str, Outcome)> = base
        .tests
        .iter()
        .map(|(k, t)| (&k["example.com/m/table ".len()..], t.outcome))
        .collect();
    assert_eq!(
        got,
        vec![
            ("TestClamp/a.b_(x)", Outcome::Pass),
            ("TestClamp/clamps_high", Outcome::Fail),
            ("TestClamp/dup#01", Outcome::Pass),
            ("TestClamp/keeps_mid", Outcome::Pass),
            ("TestClamp/outer/inner", Outcome::Pass),
            // The parent failed; its subtest passed, and only the subtest counts.
            ("TestOnlyWhenFixed/new_case", Outcome::NotObserved),
            ("TestParentFails/own_case", Outcome::Pass),
        ]
    );
    let high = "example.com/m/table TestClamp/clamps_high";
    assert_eq!(
        base.messages()[high],
        "table_test.go:19: Clamp(50) = 50, want 10"
    );
    assert_eq!(base.failure_kinds()[high], FailureKind::Assertion);
    assert_eq!(base.failure_kinds().len(), 1, "{:?}", base.failure_kinds());
    // Exactly the requested subtests ran: one anchored, escaped pattern per level.
    let commands: Vec<String> = base
        .invocations
        .iter()
        .map(|i| i.command.join(" "))
        .collect();
    for want in [
        r"go test -json -count=1 -run ^TestClamp$/^(a\.b_\(x\)|clamps_high|dup#01|keeps_mid)$ example.com/m/table",
        r"go test -json -count=1 -run ^TestClamp$/^outer$/^inner$ example.com/m/table",
        r"go test -json -count=1 -run ^TestParentFails$/^own_case$ example.com/m/table",
    ] {
        assert!(
            commands.iter().any(|c| c == want),
            "{want} not in {commands:#?}"
        );
    }
    let all_events: String = base
        .invocations
        .iter()
        .map(|i| String::from_utf8_lossy(&i.captured.stdout).into_owned())
        .collect();
    // `dup` (the first) was not run, only `dup#01`.
    assert!(
        !all_events.contains("\"Test\":\"TestClamp/dup\""),
        "{all_events}"
    );

    // A panic is an exception.
    let boom = "example.com/m/boom TestBoom/nil_map";
    let report = runner.run(&fx.ctx("boom"), &[boom.to_string()]);
    assert_eq!(
        report.outcomes()[boom],
        Outcome::Fail,
        "{:?}",
        report.problem
    );
    assert_eq!(report.failure_kinds()[boom], FailureKind::Exception);
}

const OTHER_TEST: &str = r#"package other

import (
	"os"
	"testing"
)

func TestGolden(t *testing.T) {
	for _, name := range []string{"a.txt"} {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat("testdata/" + name); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSide(t *testing.T) {}
"#;

#[test]
fn a_file_scope_lists_only_the_packages_that_hold_the_files() {
    let fx = fixture(&[
        ("table/table.go", TABLE_HEAD),
        ("table/table_test.go", TABLE_TEST),
        ("other/other_test.go", OTHER_TEST),
        ("other/testdata/a.txt", "a\n"),
        ("broken/b.go", "package broken\n"),
        ("broken/b_test.go", BROKEN_TEST),
        ("README.md", "docs\n"),
    ]);
    let runner = adapter();
    let ids_of =
        |r: &runners::ListReport| -> Vec<String> { r.tests.iter().map(|t| t.id.clone()).collect() };
    let commands = |r: &runners::ListReport| -> Vec<String> {
        r.invocations.iter().map(|i| i.command.join(" ")).collect()
    };

    // A named test file: its package only, and every test of the file run for its subtests.
    let scope = ListScope::Files(vec!["table/table_test.go".into()]);
    let r = runner.list(&fx.ctx("table"), &scope);
    assert!(r.problem.is_none(), "{:?}", r.problem);
    assert!(
        r.build_failure.is_none(),
        "the broken package was not built: {:?}",
        r.build_failure
    );
    let ids = ids_of(&r);
    assert!(
        ids.iter().all(|i| i.starts_with("example.com/m/table ")),
        "{ids:?}"
    );
    assert!(ids.contains(&"example.com/m/table TestClamp/clamps_high".to_string()));
    assert!(
        commands(&r).iter().any(|c| c
            == "go test -json -count=1 -run ^(TestClamp|TestOnlyWhenFixed|TestParentFails|TestPlain)$ example.com/m/table"),
        "{:#?}",
        commands(&r)
    );
    assert!(
        !commands(&r)
            .iter()
            .any(|c| c.starts_with("go test") && c.contains("broken")),
        "{:#?}",
        commands(&r)
    );

    // A fixture under testdata: the package that holds testdata; only tests calling `.Run(`
    // are run for subtests.
    let scope = ListScope::Files(vec!["other/testdata/a.txt".into()]);
    let r = runner.list(&fx.ctx("other"), &scope);
    assert!(r.problem.is_none(), "{:?}", r.problem);
    assert!(r.build_failure.is_none());
    assert_eq!(
        ids_of(&r),
        vec![
            "example.com/m/other TestGolden",
            "example.com/m/other TestGolden/a.txt",
            "example.com/m/other TestSide",
        ]
    );
    assert!(
        commands(&r)
            .iter()
            .any(|c| c == "go test -json -count=1 -run ^TestGolden$ example.com/m/other"),
        "{:#?}",
        commands(&r)
    );

    // A file in no package: everything is listed, the broken package included.
    let scope = ListScope::Files(vec!["table/table_test.go".into(), "README.md".into()]);
    let r = runner.list(&fx.ctx("all"), &scope);
    let bf = r
        .build_failure
        .clone()
        .expect("the broken package is built");
    assert_eq!(bf.diagnostic_files, vec!["gomod/broken/b_test.go"]);
    let ids = ids_of(&r);
    assert!(
        ids.contains(&"example.com/m/other TestSide".to_string()),
        "{ids:?}"
    );
    assert!(
        ids.contains(&"example.com/m/table TestPlain".to_string()),
        "{ids:?}"
    );
}

const PARSED_TEST: &str = r#"package pkg_test

import (
	"testing"

	_ "embed"
	. "fmt"
	str "strings"

	"example.com/m/newpkg"
	"github.com/x/go-thing/v2"
	"gopkg.in/yaml.v3"
)

func helper() string { return thing.Name }

// TestA has a doc comment.
func TestA(t *testing.T) {
	_ = str.ToUpper("x")
	if newpkg.Value != 1 {
		t.Fatal(helper())
	}
}

func (s *S) TestMethod(t *testing.T) {}

func TestB(t *testing.T) { _ = yaml.Marshal }
"#;

#[test]
fn item_maps_come_from_gos_parser() {
    use std::collections::BTreeSet;
    let fx = fixture(&[
        ("pkg/p_test.go", PARSED_TEST),
        (
            "pkg/bad_test.go",
            "package pkg\n\nfunc TestX(t *testing.T) {\n",
        ),
    ]);
    let runner = adapter();
    let ctx = fx.ctx("parse");
    assert_eq!(
        runner
            .items()
            .test_item("example.com/m/pkg TestA/sub/x#01")
            .as_deref(),
        Some("TestA")
    );
    assert_eq!(
        runner
            .items()
            .test_item("example.com/m/pkg TestA")
            .as_deref(),
        Some("TestA")
    );
    assert_eq!(runner.items().test_item("not an id"), None);

    let map = runner
        .items()
        .item_map(&ctx, "pkg/p_test.go")
        .expect("the file parses");
    let names = |n: &[&str]| -> BTreeSet<String> { n.iter().map(|s| s.to_string()).collect() };
    let items: Vec<(&str, u32, u32)> = map
        .items
        .iter()
        .map(|i| (i.name.as_str(), i.lines.start, i.lines.end))
        .collect();
    // Methods and helpers are not tests.
    assert_eq!(items, vec![("TestA", 18, 23), ("TestB", 27, 27)]);
    let a = map.item("TestA").unwrap();
    for used in [
        "str", "ToUpper", "newpkg", "Value", "t", "Fatal", "helper", "testing",
    ] {
        assert!(a.uses.contains(used), "{used} in {:?}", a.uses);
    }
    // What only the helper mentions is not TestA's.
    assert!(!a.uses.contains("thing"), "{:?}", a.uses);
    let imports: Vec<(u32, BTreeSet<String>)> = map
        .imports
        .iter()
        .map(|i| (i.lines.start, i.names.clone()))
        .collect();
    assert_eq!(
        imports,
        vec![
            (4, names(&["testing"])),
            (6, names(&[])),
            (7, names(&[])),
            (8, names(&["str"])),
            (10, names(&["newpkg"])),
            (11, names(&["thing"])),
            (12, names(&["yaml"])),
        ]
    );
    // A file that does not parse has no map.
    assert!(runner.items().item_map(&ctx, "pkg/bad_test.go").is_none());
    assert!(runner
        .items()
        .item_map(&ctx, "pkg/missing_test.go")
        .is_none());
}

const CLAMP_BASE: &str = "package clamp\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\treturn x\n}\n";

/// A trivial test beside one that calls a function base does not have.
const BESIDE_TEST: &str = r#"package clamp

import "testing"

func TestTrivial(t *testing.T) {
	if Clamp(5, 0, 10) != 5 {
		t.Fatal("mid")
	}
}

func TestUsesNew(t *testing.T) {
	if Double(2) != 4 {
		t.Fatal("double")
	}
}
"#;

/// A trivial test beside one that uses a package base does not have.
const IMPORT_TEST: &str = r#"package imp

import (
	"testing"

	"example.com/m/newpkg"
)

func TestTrivial(t *testing.T) {}

func TestImports(t *testing.T) {
	if newpkg.Value != 1 {
		t.Fatal("value")
	}
}
"#;

#[test]
fn base_build_failures_are_attributed_with_gos_positions() {
    use shipmoor::decision::attribute::{attribute, Attribution};
    let fx = fixture(&[
        ("clamp/clamp.go", CLAMP_BASE),
        ("clamp/clamp_test.go", BESIDE_TEST),
        ("imp/imp.go", "package imp\n"),
        ("imp/imp_test.go", IMPORT_TEST),
    ]);
    let runner = adapter();
    let ctx = fx.ctx("base");
    let wanted = ids(&[
        "example.com/m/clamp TestTrivial",
        "example.com/m/clamp TestUsesNew",
        "example.com/m/imp TestTrivial",
        "example.com/m/imp TestImports",
    ]);
    let report = runner.run(&ctx, &wanted);
    assert!(report.problem.is_none(), "{:?}", report.problem);
    assert!(
        report.outcomes().values().all(|o| *o == Outcome::BuildFail),
        "{:?}",
        report.outcomes()
    );
    let bf = report.build_failure.expect("a build failure");
    let at: Vec<(String, u32)> = bf
        .diagnostics
        .iter()
        .map(|d| (d.file.clone(), d.line))
        .collect();
    assert_eq!(
        at,
        vec![
            ("gomod/clamp/clamp_test.go".to_string(), 12),
            ("gomod/imp/imp_test.go".to_string(), 6),
        ],
        "{:#?}",
        bf.diagnostics
    );
    assert_eq!(bf.diagnostics[0].column, Some(5));
    assert_eq!(bf.diagnostics[0].message, "undefined: Double");
    assert!(
        bf.diagnostics[1].message.contains("example.com/m/newpkg"),
        "{}",
        bf.diagnostics[1].message
    );

    let decide = |id: &str, rel: &str| -> Attribution {
        let item = runner.items().test_item(id).expect("a test item");
        let map = runner.items().item_map(&ctx, rel).expect("the file parses");
        attribute(&format!("gomod/{rel}"), &item, &map, &bf.diagnostics)
    };
    // The new-API call is in TestUsesNew's body, outside TestTrivial.
    let a = decide("example.com/m/clamp TestUsesNew", "clamp/clamp_test.go");
    assert!(matches!(a, Attribution::InTest { .. }), "{a:?}");
    let a = decide("example.com/m/clamp TestTrivial", "clamp/clamp_test.go");
    assert!(
        matches!(&a, Attribution::Elsewhere { diagnostic } if diagnostic.line == 12),
        "{a:?}"
    );
    // The missing package's import is TestImports' own, not TestTrivial's.
    let a = decide("example.com/m/imp TestImports", "imp/imp_test.go");
    assert_eq!(
        a,
        Attribution::InUsedImport {
            diagnostic: bf.diagnostics[1].clone(),
            names: vec!["newpkg".into()],
        }
    );
    let a = decide("example.com/m/imp TestTrivial", "imp/imp_test.go");
    assert!(!a.is_own(), "{a:?}");
}
