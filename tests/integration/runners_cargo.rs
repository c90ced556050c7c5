//! The `cargo test` and `cargo nextest` adapters against real tiny crates: listing, running,
//! build failures, and ids that do not exist (never a pass).

use crate::common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use shipmoor::acceptance::RunnerKind;
use shipmoor::floor::runners::{FailureKind, ListScope, Outcome, RunCtx, Runner};

const CARGO_TOML: &str = r#"[package]
name = "fx-crate"
version = "0.1.0"
edition = "2021"

[workspace]
"#;

const LIB_RS: &str = r#"pub fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    #[test]
    fn unit_ok() { assert_eq!(super::add(1, 2), 3); }
}
"#;

const TESTS_T_RS: &str = r#"#[test]
fn passes() { assert_eq!(fx_crate::add(1, 1), 2); }

#[test]
fn fails() {
    // A failing test that prints what a passing one would look like.
    println!("test passes ... ok");
    assert_eq!(fx_crate::add(1, 1), 3);
}

#[test]
#[ignore]
fn ignored() {}

#[test]
#[should_panic]
fn sp() { panic!("expected") }

#[test]
fn reads_manifest_dir() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    assert!(std::path::Path::new(&dir).join("Cargo.toml").is_file());
    assert!(std::path::Path::new("Cargo.toml").is_file(), "cwd is the package dir");
}

mod inner {
    #[test]
    fn nested() {}
}
"#;

const BIN_RS: &str = r#"fn main() {}

#[test]
fn bin_test() {}
"#;

const BROKEN_T_RS: &str = r#"#[test]
fn passes() { let x: u32 = "not a number"; assert_eq!(fx_crate::add(1, 1), 2); let _ = x; }
"#;

struct Fixture {
    _tmp: tempfile::TempDir,
    worktree: PathBuf,
    dir: PathBuf,
    target: PathBuf,
    scratch_root: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A worktree with the crate at `root` ("." or a subdirectory).
fn fixture(root: &str, broken: bool) -> Fixture {
    fixture_with(root, broken, &[])
}

fn fixture_with(root: &str, broken: bool, extra: &[(&str, &str)]) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let worktree = tmp.path().join("wt");
    let dir = if root == "." {
        worktree.clone()
    } else {
        worktree.join(root)
    };
    write(&dir.join("Cargo.toml"), CARGO_TOML);
    write(&dir.join("src/lib.rs"), LIB_RS);
    write(&dir.join("src/bin/tool.rs"), BIN_RS);
    write(
        &dir.join("tests/t.rs"),
        if broken { BROKEN_T_RS } else { TESTS_T_RS },
    );
    for (path, text) in extra {
        write(&dir.join(path), text);
    }
    let target = tmp.path().join("target");
    let scratch_root = tmp.path().join("scratch");
    Fixture {
        worktree,
        dir,
        target,
        scratch_root,
        _tmp: tmp,
    }
}

impl Fixture {
    fn ctx(&self, label: &str) -> RunCtx {
        let scratch = self.scratch_root.join(label);
        std::fs::create_dir_all(&scratch).unwrap();
        RunCtx {
            worktree: self.worktree.clone(),
            dir: self.dir.clone(),
            scratch,
            timeout: Duration::from_secs(300),
            env: vec![
                (
                    OsString::from("CARGO_TARGET_DIR"),
                    self.target.clone().into_os_string(),
                ),
                (
                    OsString::from(common::NEXTEST_PROFILE.0),
                    OsString::from(common::NEXTEST_PROFILE.1),
                ),
            ],
            jail: shipmoor::sandbox::Jail::none(),
        }
    }
}

fn adapter(kind: RunnerKind, root: &str) -> std::sync::Arc<dyn Runner> {
    common::builtin_runner(kind, root, &[])
}

/// cargo-nextest must be installed for these tests (`.ci/run` and `scripts/test.sh` install
/// it): a missing nextest fails them, naming it, rather than skipping them quietly.
fn require_nextest() {
    let ok = std::process::Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "these tests need cargo-nextest (cargo install --locked cargo-nextest)"
    );
}

const EXPECTED_IDS: [&str; 8] = [
    "fx-crate tests::unit_ok",
    "fx-crate::bin/tool bin_test",
    "fx-crate::t fails",
    "fx-crate::t ignored",
    "fx-crate::t inner::nested",
    "fx-crate::t passes",
    "fx-crate::t reads_manifest_dir",
    "fx-crate::t sp",
];

fn requested() -> Vec<String> {
    [
        "fx-crate tests::unit_ok",
        "fx-crate::bin/tool bin_test",
        "fx-crate::t passes",
        "fx-crate::t fails",
        "fx-crate::t ignored",
        "fx-crate::t sp",
        "fx-crate::t inner::nested",
        "fx-crate::t reads_manifest_dir",
        // Does not exist: a name the failing test prints, a missing binary, a malformed id.
        "fx-crate::t nope",
        "fx-crate::gone passes",
        "garbage",
    ]
    .map(String::from)
    .to_vec()
}

fn expected_outcomes() -> BTreeMap<String, Outcome> {
    [
        ("fx-crate tests::unit_ok", Outcome::Pass),
        ("fx-crate::bin/tool bin_test", Outcome::Pass),
        ("fx-crate::t passes", Outcome::Pass),
        ("fx-crate::t fails", Outcome::Fail),
        ("fx-crate::t ignored", Outcome::NotObserved),
        ("fx-crate::t sp", Outcome::Pass),
        ("fx-crate::t inner::nested", Outcome::Pass),
        ("fx-crate::t reads_manifest_dir", Outcome::Pass),
        ("fx-crate::t nope", Outcome::NotObserved),
        ("fx-crate::gone passes", Outcome::NotObserved),
        ("garbage", Outcome::NotObserved),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn check_listing(runner: &dyn Runner, fx: &Fixture) {
    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    assert!(listed.build_failure.is_none());
    let ids: Vec<&str> = listed.tests.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, EXPECTED_IDS);
    let file = |id: &str| {
        listed
            .tests
            .iter()
            .find(|t| t.id == id)
            .and_then(|t| t.file.clone())
    };
    assert_eq!(file("fx-crate::t passes").as_deref(), Some("tests/t.rs"));
    assert_eq!(
        file("fx-crate tests::unit_ok").as_deref(),
        Some("src/lib.rs")
    );
    assert_eq!(
        file("fx-crate::bin/tool bin_test").as_deref(),
        Some("src/bin/tool.rs")
    );
    assert!(!listed.invocations.is_empty());
    let first = &listed.invocations[0].command;
    assert_eq!(first[0], "cargo");
    // No absolute path of ours leaks into the shown commands.
    for inv in &listed.invocations {
        for arg in &inv.command {
            assert!(
                !arg.contains(fx.worktree.to_str().unwrap())
                    && !arg.contains(fx.target.to_str().unwrap()),
                "{:?}",
                inv.command
            );
        }
    }
}

fn check_run(runner: &dyn Runner, fx: &Fixture) {
    let report = runner.run(&fx.ctx("run"), &requested());
    assert!(report.build_failure.is_none());
    assert_eq!(
        report.outcomes(),
        expected_outcomes(),
        "problem: {:?}",
        report.problem
    );
    assert!(report.problem.is_none(), "{:?}", report.problem);
    assert!(!report.invocations.is_empty());
    // `assert_eq!` failed: an assertion, for the reports' "what kind of failure".
    assert_eq!(
        report.failure_kinds(),
        BTreeMap::from([("fx-crate::t fails".to_string(), FailureKind::Assertion)])
    );
}

fn check_build_failure(runner: &dyn Runner, fx: &Fixture) {
    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    let bf = listed.build_failure.expect("a build failure");
    assert_eq!(bf.diagnostic_files, vec!["crates/fx/tests/t.rs"]);
    assert!(bf.excerpt.contains("mismatched types"), "{}", bf.excerpt);
    assert!(listed.tests.is_empty());
    // The error's position, repository-relative, lies inside the test the parser finds there:
    // the failure is that test's own (book: floor/attribution.md).
    let d = &bf.diagnostics[0];
    assert_eq!(
        (d.file.as_str(), d.line, d.column, d.message.as_str()),
        ("crates/fx/tests/t.rs", 2, Some(28), "mismatched types"),
        "{:?}",
        bf.diagnostics
    );
    let item = runner
        .items()
        .test_item("fx-crate::t passes")
        .expect("a test item");
    let map = runner
        .items()
        .item_map(&fx.ctx("map"), "tests/t.rs")
        .expect("an item map");
    let a = shipmoor::decision::attribute::attribute(
        "crates/fx/tests/t.rs",
        &item,
        &map,
        &bf.diagnostics,
    );
    assert!(a.is_own(), "{a:?}");

    let ids = vec![
        "fx-crate::t passes".to_string(),
        "fx-crate::t nope".to_string(),
    ];
    let report = runner.run(&fx.ctx("run"), &ids);
    let bf = report.build_failure.clone().expect("a build failure");
    assert_eq!(bf.diagnostic_files, vec!["crates/fx/tests/t.rs"]);
    assert_eq!(bf.diagnostics.len(), 1, "{:?}", bf.diagnostics);
    for id in &ids {
        assert_eq!(report.outcomes()[id], Outcome::BuildFail);
    }
}

#[test]
fn cargo_lists_and_runs() {
    let fx = fixture(".", false);
    let runner = adapter(RunnerKind::Cargo, ".");
    runner
        .check_tool(&shipmoor::floor::runners::Probe::unconfined())
        .unwrap();
    check_listing(runner.as_ref(), &fx);
    check_run(runner.as_ref(), &fx);
    // Only ids that do not exist: nothing passes.
    let report = runner.run(&fx.ctx("none"), &["fx-crate::t nope".to_string()]);
    assert_eq!(report.outcomes()["fx-crate::t nope"], Outcome::NotObserved);
}

#[test]
fn cargo_build_failure() {
    let fx = fixture("crates/fx", true);
    let runner = adapter(RunnerKind::Cargo, "crates/fx");
    check_build_failure(runner.as_ref(), &fx);
}

#[test]
fn nextest_lists_and_runs() {
    require_nextest();
    let fx = fixture(".", false);
    let runner = adapter(RunnerKind::Nextest, ".");
    runner
        .check_tool(&shipmoor::floor::runners::Probe::unconfined())
        .unwrap();
    check_listing(runner.as_ref(), &fx);
    check_run(runner.as_ref(), &fx);
    let run = runner.run(&fx.ctx("run2"), &["fx-crate::t passes".to_string()]);
    let inv = run.invocations.last().unwrap();
    assert!(inv.results.as_ref().is_some_and(|r| !r.is_empty()));
    assert_eq!(inv.results_type.as_deref(), Some("application/xml"));
    assert!(
        inv.command
            .iter()
            .any(|a| a == "shipmoor:$SCRATCH/shipmoor-nextest.toml"),
        "{:?}",
        inv.command
    );
    // Only ids that do not exist: nextest says "no tests to run"; nothing passes, no problem.
    let report = runner.run(&fx.ctx("none"), &["fx-crate::t nope".to_string()]);
    assert_eq!(report.outcomes()["fx-crate::t nope"], Outcome::NotObserved);
    assert!(report.problem.is_none(), "{:?}", report.problem);
}

#[test]
fn nextest_build_failure() {
    require_nextest();
    let fx = fixture("crates/fx", true);
    let runner = adapter(RunnerKind::Nextest, "crates/fx");
    check_build_failure(runner.as_ref(), &fx);
}

#[test]
fn test_files() {
    let cargo = adapter(RunnerKind::Cargo, ".");
    assert!(cargo.is_test_file("tests/t.rs"));
    assert!(cargo.is_test_file("crates/a/tests/fixtures/x.txt"));
    assert!(!cargo.is_test_file("src/lib.rs"));
    let nextest = adapter(RunnerKind::Nextest, ".");
    assert!(nextest.is_test_file("tests/common/mod.rs"));
    assert!(!nextest.is_test_file("build.rs"));
    // Source files hold unit tests beside the code: only their test items are laid over base.
    for runner in [&cargo, &nextest] {
        assert!(runner.items().may_splice("src/lib.rs"));
        assert!(!runner.items().may_splice("README.md"));
        let base = "pub fn a() -> i32 { 1 }\n#[cfg(test)]\nmod tests {}\n";
        let head = "pub fn a() -> i32 { 2 }\n#[cfg(test)]\nmod tests { #[test] fn t() {} }\n";
        assert_eq!(
            runner.items().splice_test_items("src/lib.rs", base, head),
            Some(Ok(
                "pub fn a() -> i32 { 1 }\n#[cfg(test)]\nmod tests { #[test] fn t() {} }\n"
                    .to_string()
            ))
        );
        assert_eq!(
            runner
                .items()
                .splice_test_items("src/lib.rs", "pub fn a() {}\n", "pub fn b() {}\n"),
            None
        );
    }
}

const ODD_RS: &str = r#"#[test]
fn a_exits_early() { std::process::exit(0) }

#[test]
fn b_passes() {}

#[test]
fn sleeps() { std::thread::sleep(std::time::Duration::from_secs(120)) }
"#;

#[test]
fn cargo_crash_and_timeout_are_problems_not_passes() {
    let fx = fixture_with(".", false, &[("tests/odd.rs", ODD_RS)]);
    let runner = adapter(RunnerKind::Cargo, ".");
    // Build once with the long timeout.
    assert!(runner
        .list(&fx.ctx("list"), &ListScope::All)
        .problem
        .is_none());

    // A test that exits the process with code 0: libtest never prints its summary.
    let ids = vec![
        "fx-crate::odd a_exits_early".to_string(),
        "fx-crate::odd b_passes".to_string(),
        "fx-crate::t passes".to_string(),
    ];
    let report = runner.run(&fx.ctx("exit"), &ids);
    assert_eq!(report.outcomes()[&ids[0]], Outcome::NotObserved);
    assert_eq!(report.outcomes()[&ids[1]], Outcome::NotObserved);
    // Other binaries are unaffected.
    assert_eq!(report.outcomes()[&ids[2]], Outcome::Pass);
    let problem = report.problem.expect("a problem");
    assert!(problem.contains("fx-crate::odd"), "{problem}");

    // A test that outlives the timeout.
    let mut ctx = fx.ctx("timeout");
    ctx.timeout = Duration::from_secs(5);
    let report = runner.run(&ctx, &["fx-crate::odd sleeps".to_string()]);
    assert_eq!(
        report.outcomes()["fx-crate::odd sleeps"],
        Outcome::NotObserved
    );
    let problem = report.problem.expect("a problem");
    assert!(problem.contains("timed out"), "{problem}");
}
