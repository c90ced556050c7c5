use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Duration;

use super::*;
use crate::process::{self, Watch};

/// A [`Live`] whose lines land in the returned buffer.
fn live(heartbeat: Duration) -> (Live, Rc<RefCell<Vec<String>>>) {
    let lines = Rc::new(RefCell::new(Vec::new()));
    let kept = lines.clone();
    let live = Live {
        sink: Rc::new(move |l: &str| kept.borrow_mut().push(l.to_string())),
        colour: false,
        heartbeat,
    };
    (live, lines)
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn test_lines_align_outcome_time_side_and_id() {
    let lines = [
        test_line(
            Side::Head,
            "tests/test_x.py::test_y",
            Shown::Pass,
            Some(0.414),
            false,
        ),
        test_line(
            Side::Base,
            "tests/test_x.py::test_y",
            Shown::Fail,
            Some(12.5),
            false,
        ),
        test_line(Side::Base, "fx::t a", Shown::BuildFail, None, false),
        test_line(Side::Head, "pkg TestA", Shown::NotRun, Some(0.0), false),
        test_line(Side::Head, "t::s", Shown::Skip, Some(123.456), false),
    ];
    assert_eq!(
        lines,
        [
            "      PASS [  0.41s] head tests/test_x.py::test_y",
            "      FAIL [ 12.50s] base tests/test_x.py::test_y",
            "BUILD FAIL [     --] base fx::t a",
            "   NOT RUN [  0.00s] head pkg TestA",
            "      SKIP [123.46s] head t::s",
        ]
    );
}

#[test]
fn test_lines_colour_only_the_outcome_and_never_pass_control_characters() {
    let line = test_line(Side::Head, "t\x1b[2Jx", Shown::Fail, Some(1.0), true);
    assert_eq!(line, "\x1b[1;31m      FAIL\x1b[0m [  1.00s] head t [2Jx");
    let pass = test_line(Side::Head, "t", Shown::Pass, Some(1.0), true);
    assert!(pass.starts_with("\x1b[32m      PASS\x1b[0m "), "{pass}");
}

#[test]
fn heartbeat_lines_name_the_step_its_time_and_its_tests() {
    assert_eq!(
        heartbeat_line(
            "base 7fb7011",
            "pytest",
            Duration::from_millis(20_900),
            Some((3, 12, Some("tests/t.py::a")))
        ),
        "base 7fb7011: still running pytest (20 s; 3 of 12 tests finished; last: tests/t.py::a)"
    );
    assert_eq!(
        heartbeat_line(
            "head e295e43",
            "pytest",
            Duration::from_secs(10),
            Some((0, 1, None))
        ),
        "head e295e43: still running pytest (10 s; 0 of 1 test finished)"
    );
    assert_eq!(
        heartbeat_line(
            "head e295e43",
            "setup `npm ci`",
            Duration::from_secs(30),
            None
        ),
        "head e295e43: still running setup `npm ci` (30 s)"
    );
}

#[test]
fn the_heartbeat_interval_comes_from_its_variable_or_is_ten_seconds() {
    assert_eq!(heartbeat_interval(None), Duration::from_secs(10));
    assert_eq!(heartbeat_interval(Some("1")), Duration::from_secs(1));
    assert_eq!(
        heartbeat_interval(Some(" 0.5 ")),
        Duration::from_millis(500)
    );
    for bad in ["", "0", "-3", "soon", "NaN", "inf", "1e30"] {
        assert_eq!(heartbeat_interval(Some(bad)), HEARTBEAT_DEFAULT, "{bad}");
    }
}

#[test]
fn a_step_shows_each_requested_test_once_and_the_rest_at_its_end() {
    let (live, lines) = live(Duration::from_secs(3600));
    let mut w = StepWatch::new(
        live,
        Side::Head,
        "head e295e43".into(),
        "cargo".into(),
        crate::floor::runners::rust::progress::libtest_source(),
        ids(&["fx::t a", "fx::t b", "fx::t c"]),
        0,
        3,
    );
    w.started("t-1");
    // A line split across chunks, a test not requested, the same test twice.
    w.output(Stream::Stdout, b"running 2 tests\ntest a ... ");
    w.output(
        Stream::Stdout,
        b"ok\ntest other ... ok\ntest b ... FAILED\ntest a ... ok\n",
    );
    w.output(Stream::Stderr, b"test c ... ok\n");
    let outcomes: BTreeMap<String, Outcome> = [
        ("fx::t a".to_string(), Outcome::Pass),
        ("fx::t b".to_string(), Outcome::Fail),
        ("fx::t c".to_string(), Outcome::BuildFail),
    ]
    .into_iter()
    .collect();
    w.finish(&outcomes);
    let got: Vec<String> = lines
        .borrow()
        .iter()
        .map(|l| {
            // The times are measured: keep the words, the side and the id.
            let (word, rest) = l.split_once(" [").expect("a time");
            format!(
                "{} {}",
                word.trim(),
                rest.split_once("] ").expect("closed").1
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            "PASS head fx::t a",
            "FAIL head fx::t b",
            "BUILD FAIL head fx::t c"
        ]
    );
    assert!(
        lines.borrow()[2].contains("[     --]"),
        "{:?}",
        lines.borrow()
    );
    assert_eq!(w.done(), 3);
}

#[test]
fn a_silent_step_beats_with_its_tally() {
    let (live, lines) = live(Duration::from_millis(50));
    let w = Rc::new(RefCell::new(StepWatch::new(
        live,
        Side::Base,
        "base 7fb7011".into(),
        "go".into(),
        crate::floor::runners::go::progress::source(),
        ids(&["m TestA", "m TestB"]),
        1,
        3,
    )));
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(r#"echo '{"Action":"pass","Package":"m","Test":"TestA","Elapsed":0.01}'; sleep 0.3"#);
    let out = step(Some(&w), || {
        process::run(
            cmd,
            Duration::from_secs(10),
            process::Confine::Unconfined(&crate::sandbox::env::EnvPolicy::default()),
        )
    })
    .expect("runs");
    // Watching leaves what the command printed as it was.
    assert!(
        out.stdout_lossy().starts_with(r#"{"Action":"pass""#),
        "{out:?}"
    );
    let lines = lines.borrow();
    assert_eq!(lines[0], "      PASS [  0.01s] base m TestA");
    let beats: Vec<&String> = lines[1..].iter().collect();
    assert!(beats.len() >= 2, "{lines:?}");
    assert!(
        beats.iter().all(|b| b.starts_with(
            "base 7fb7011: still running go (0 s; 2 of 3 tests finished; last: m TestA)"
        )),
        "{lines:?}"
    );
}

#[test]
fn the_pytest_plugin_file_is_read_as_it_grows_and_its_last_line_at_the_end() {
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("progress.jsonl");
    let (live, lines) = live(Duration::from_secs(3600));
    let w = Rc::new(RefCell::new(StepWatch::new(
        live,
        Side::Head,
        "head e295e43".into(),
        "pytest".into(),
        FinishedLines {
            file: Some((
                file.clone(),
                crate::floor::runners::pytest::progress::parse_pytest,
            )),
            ..FinishedLines::default()
        },
        ids(&["t.py::a", "t.py::b"]),
        0,
        2,
    )));
    let script = format!(
        r#"printf '{{"nodeid": "t.py::a", "outcome": "passed", "duration": 0.5}}\n' > {f}; sleep 0.4; printf '{{"nodeid": "t.py::b", "outcome": "failed", "duration": 0.1}}\n' >> {f}"#,
        f = file.display()
    );
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c").arg(script);
    step(Some(&w), || {
        process::run(
            cmd,
            Duration::from_secs(10),
            process::Confine::Unconfined(&crate::sandbox::env::EnvPolicy::default()),
        )
    })
    .expect("runs");
    let seen_during = lines.borrow().len();
    assert!(
        seen_during >= 1,
        "the first line is read while the command runs"
    );
    w.borrow_mut().finish(&BTreeMap::new());
    assert_eq!(
        *lines.borrow(),
        [
            "      PASS [  0.50s] head t.py::a",
            "      FAIL [  0.10s] head t.py::b"
        ]
    );
}
