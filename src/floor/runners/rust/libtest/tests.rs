use super::*;

#[test]
fn panic_messages_with_a_thread_id() {
    let out = "failures:\n\n---- t::high stdout ----\n\nthread 't::high' (11484) panicked at src/lib.rs:9:9:\nassertion `left == right` failed\n";
    assert_eq!(
        panic_messages(out),
        [(
            "t::high".to_string(),
            "assertion `left == right` failed (src/lib.rs:9:9)".to_string()
        )]
    );
}

#[test]
fn terse_list() {
    let out = "tests::a: test\nbench_x: benchmark\nmod::b c: test\n\n";
    assert_eq!(parse_terse_list(out), vec!["tests::a", "mod::b c"]);
}

#[test]
fn panic_messages_name_the_assertion() {
    let out = "failures:\n\n---- clamps_high stdout ----\nthread 'clamps_high' panicked at tests/c.rs:3:5:\nassertion `left == right` failed\n  left: 50\n right: 10\n\nfailures:\n    clamps_high\n";
    assert_eq!(
        panic_messages(out),
        [(
            "clamps_high".to_string(),
            "assertion `left == right` failed (tests/c.rs:3:5)".to_string()
        )]
    );
    // Newer toolchains print the thread's id after its name.
    let out = out.replace("'clamps_high' panicked", "'clamps_high' (5792) panicked");
    assert_eq!(
        panic_messages(&out)[0].1,
        "assertion `left == right` failed (tests/c.rs:3:5)"
    );
}

const MIXED: &str = "\nrunning 4 tests\ntest fails ... FAILED\ntest ignored ... ignored\ntest passes ... ok\ntest sp - should panic ... ok\n\nfailures:\n\n---- fails stdout ----\ntest ignored ... ok\ntest result: ok. 9 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\nthread 'fails' panicked at tests/t.rs:4:46:\n\nfailures:\n    fails\n\ntest result: FAILED. 2 passed; 1 failed; 1 ignored; 0 measured; 1 filtered out; finished in 0.17s\n\n";

#[test]
fn libtest_pretty_output() {
    let out = parse_libtest(MIXED);
    assert_eq!(
        out.results,
        vec![
            ("fails".to_string(), LibtestStatus::Failed),
            ("ignored".to_string(), LibtestStatus::Ignored),
            ("passes".to_string(), LibtestStatus::Ok),
            ("sp - should panic".to_string(), LibtestStatus::Ok),
        ]
    );
    assert_eq!(
        out.summary,
        Some(LibtestSummary {
            ok: false,
            passed: 2,
            failed: 1,
            ignored: 1
        })
    );
    let judged = judge_libtest(
        &out,
        Some(101),
        &["fails", "ignored", "passes", "sp", "missing"],
    )
    .unwrap();
    assert_eq!(
        judged,
        vec![
            ("fails".to_string(), Outcome::Fail),
            ("ignored".to_string(), Outcome::NotObserved),
            ("passes".to_string(), Outcome::Pass),
            ("sp".to_string(), Outcome::Pass),
            ("missing".to_string(), Outcome::NotObserved),
        ]
    );
}

#[test]
fn libtest_exit_code_must_agree() {
    let out = parse_libtest(MIXED);
    assert!(judge_libtest(&out, Some(0), &["passes"]).is_err());
    assert!(judge_libtest(&out, None, &["passes"]).is_err());
    let ok = "running 1 test\ntest passes ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s\n";
    let out = parse_libtest(ok);
    assert_eq!(
        judge_libtest(&out, Some(0), &["passes"]).unwrap(),
        vec![("passes".to_string(), Outcome::Pass)]
    );
    assert!(judge_libtest(&out, Some(101), &["passes"]).is_err());
    assert!(judge_libtest(&out, Some(1), &["passes"]).is_err());
}

#[test]
fn libtest_forged_or_missing_lines_are_not_believed() {
    // A test wrote a fake result line straight to stdout: the counts no longer match.
    let forged = "running 1 test\ntest other ... ok\ntest passes ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
    assert!(judge_libtest(&parse_libtest(forged), Some(0), &["other"]).is_err());
    // The binary exited (or crashed) mid-run: no summary.
    let crashed = "running 2 tests\ntest passes ... ok\n";
    assert!(judge_libtest(&parse_libtest(crashed), Some(0), &["passes"]).is_err());
    // Stray output on the result line hides the status: counts disagree.
    let stray = "running 1 test\ntest passes ... hello\nok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
    assert!(judge_libtest(&parse_libtest(stray), Some(0), &["passes"]).is_err());
    // Nothing matched the filter: exit 0, and no pass.
    let none = "\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out; finished in 0.00s\n\n";
    assert_eq!(
        judge_libtest(&parse_libtest(none), Some(0), &["nope"]).unwrap(),
        vec![("nope".to_string(), Outcome::NotObserved)]
    );
}

#[test]
fn failure_kinds_from_panics() {
    assert_eq!(
        panic_kind("assertion `left == right` failed (tests/c.rs:3:5)"),
        FailureKind::Assertion
    );
    assert_eq!(
        panic_kind("assertion failed: x > 3 (src/lib.rs:9:9)"),
        FailureKind::Assertion
    );
    assert_eq!(
        panic_kind("called `Result::unwrap()` on an `Err` value: 3 (src/lib.rs:2:1)"),
        FailureKind::Exception
    );
    assert_eq!(
        panic_kind("panicked at src/lib.rs:2:1"),
        FailureKind::Exception
    );
    let out = "running\nthread 'a' panicked at tests/t.rs:4:5:\nassertion `left == right` failed\n  left: 1\n";
    assert_eq!(output_failure_kind(out), Some(FailureKind::Assertion));
    let out = "thread 'a' (4242) panicked at tests/t.rs:4:5:\nindex out of bounds\n";
    assert_eq!(output_failure_kind(out), Some(FailureKind::Exception));
    let old = "thread 'a' panicked at 'assertion failed: x', tests/t.rs:4:5\n";
    assert_eq!(output_failure_kind(old), Some(FailureKind::Assertion));
    assert_eq!(output_failure_kind("no panic here\n"), None);
    assert_eq!(
        output_failure_kind("Error: \"boom\"\n"),
        Some(FailureKind::Exception)
    );
    let out = "failures:\n\n---- returns_err stdout ----\nError: \"boom\"\n\n---- panics stdout ----\nError: printed, then\nthread 'panics' panicked at src/lib.rs:4:5:\nassertion failed: false\n\n\nfailures:\n    panics\n    returns_err\n";
    assert_eq!(
        panic_messages(out),
        [
            ("returns_err".to_string(), "Error: \"boom\"".to_string()),
            (
                "panics".to_string(),
                "assertion failed: false (src/lib.rs:4:5)".to_string()
            ),
        ]
    );
    assert_eq!(panic_kind("Error: \"boom\""), FailureKind::Exception);
}

#[test]
fn panics_are_assertions_or_exceptions() {
    use crate::floor::runners::FailureKind::*;
    for (out, want) in [
        (
            "assertion `left == right` failed (tests/c.rs:3:5)",
            Assertion,
        ),
        (
            "thread 'a' panicked at tests/t.rs:4:46:\nassertion failed: x > 1\n",
            Assertion,
        ),
        (
            "thread 'a' panicked at 'assertion failed: x', src/lib.rs:1:1",
            Assertion,
        ),
        (
            "thread 'a' (12) panicked at t.rs:1:1:\nassertion failed: x\n",
            Assertion,
        ),
        (
            "thread 'a' panicked at src/lib.rs:9:5:\ncalled `Option::unwrap()` on a `None` value",
            Exception,
        ),
        ("panicked at src/lib.rs:9:5", Exception),
        ("", Exception),
    ] {
        assert_eq!(
            output_failure_kind(out).unwrap_or_else(|| panic_kind(out)),
            want,
            "{out}"
        );
    }
}
