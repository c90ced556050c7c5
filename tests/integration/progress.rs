//! Progress on long work: `claim-check` shows a line per finished bound test at each side, with
//! its outcome and time, and a heartbeat while a test runs silently; all on stderr, none with
//! `--quiet`, and stdout stays the JSON document with `--format json`.

use crate::common;

use common::{ident, require_pytest, Repo};

/// A base whose `refund` does nothing, and a head that fixes it with two tagged tests in one
/// file: a quick one, then one that sleeps 1.5 s before its assertion. Both fail at base and
/// pass at head. Returns the repository, base and head.
fn slow_repo() -> (Repo, String, String) {
    require_pytest();
    let r = Repo::new();
    r.write("svc/__init__.py", "");
    r.write("svc/refund.py", "def refund(order):\n    return order\n");
    let base = r.commit("base");
    r.write(
        "svc/refund.py",
        "def refund(order):\n    order['status'] = 'refunded'\n    return order\n",
    );
    r.write(
        "tests/test_refund.py",
        &format!(
            "import time\n\nfrom svc.refund import refund\n\n\
             def test_quick_{quick}():\n    assert refund({{}})['status'] == 'refunded'\n\n\
             def test_slow_{slow}():\n    time.sleep(1.5)\n    assert refund({{}}).get('status') == 'refunded'\n",
            quick = ident("quick"),
            slow = ident("slow"),
        ),
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: quick\n    ac: A refund marks the order.\n  - id: slow\n    ac: A slow refund marks the order.\n",
    );
    let head = r.commit("head");
    (r, base, head)
}

/// The stderr lines after `claim-check: `.
fn progress_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("claim-check: "))
        .collect()
}

#[test]
fn a_line_per_finished_test_at_each_side_and_a_heartbeat_on_stderr_only() {
    let (r, base, head) = slow_repo();
    let quick = format!("tests/test_refund.py::test_quick_{}", ident("quick"));
    let slow = format!("tests/test_refund.py::test_slow_{}", ident("slow"));
    // Half a second: a beat is due well before the slow test's 1.5 s are over, even on a
    // loaded machine.
    let run = r.shipmoor_env(
        &[
            "--color",
            "always",
            "claim-check",
            "--base",
            &base,
            "--format",
            "json",
        ],
        &[("SHIPMOOR_HEARTBEAT_SECS", "0.5")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    // Stdout is the result document alone.
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("stdout is JSON");
    assert_eq!(doc["result"]["verdict"], "READY", "{run:?}");

    let lines = progress_lines(&run.stderr);
    let plain: Vec<String> = lines.iter().map(|l| strip_colour(l)).collect();
    let at = |want: &dyn Fn(&str) -> bool| {
        plain
            .iter()
            .position(|l| want(l))
            .unwrap_or_else(|| panic!("no such line in {run:?}"))
    };
    let finished = |word: &str, side: &str, id: &str| {
        let word = format!("{word:>10} [");
        let tail = format!("s] {side} {id}");
        at(&|l: &str| l.starts_with(&word) && l.ends_with(&tail))
    };
    let head_short = &head[..7];
    let base_short = &base[..7];
    let head_runs = at(&|l| l.starts_with(&format!("head {head_short}: running 2 bound test(s)")));
    let head_quick = finished("PASS", "head", &quick);
    let head_slow = finished("PASS", "head", &slow);
    let base_runs = at(&|l| l.starts_with(&format!("base {base_short}: running 2 bound test(s)")));
    let base_quick = finished("FAIL", "base", &quick);
    let base_slow = finished("FAIL", "base", &slow);
    assert!(head_runs < head_quick && head_quick < head_slow && head_slow < base_runs);
    assert!(base_runs < base_quick && base_quick < base_slow);
    // One line per bound test and side.
    assert_eq!(
        plain
            .iter()
            .filter(|l| l.contains(" [") && l.contains("s] "))
            .count(),
        4,
        "{run:?}"
    );
    // The slow test's time is its own: at least its 1.5 s of sleep.
    let seconds = |i: usize| -> f64 {
        let inside = plain[i]
            .split_once('[')
            .expect("[")
            .1
            .split_once("s]")
            .expect("s]")
            .0;
        inside.trim().parse().expect("seconds")
    };
    assert!(
        seconds(head_slow) >= 1.5 && seconds(head_quick) < 1.5,
        "{run:?}"
    );
    // While the slow test sleeps, each side beats, after the quick test's line.
    let beat = |side: &str, short: &str| {
        at(&|l: &str| {
            l.starts_with(&format!("{side} {short}: still running pytest ("))
                && l.ends_with(&format!("; 1 of 2 tests finished; last: {quick})"))
        })
    };
    let head_beat = beat("head", head_short);
    let base_beat = beat("base", base_short);
    assert!(head_quick < head_beat && head_beat < head_slow, "{run:?}");
    assert!(base_quick < base_beat && base_beat < base_slow, "{run:?}");
    // `--color always` colours the outcome words of stderr's lines.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("\u{1b}[32m      PASS\u{1b}[0m [")),
        "{run:?}"
    );
    assert!(!run.stdout.contains('\u{1b}'), "{run:?}");
}

#[test]
fn quiet_shows_no_progress() {
    let (r, base, _) = slow_repo();
    let run = r.shipmoor_env(
        &["claim-check", "--base", &base, "--quiet"],
        &[("SHIPMOOR_HEARTBEAT_SECS", "1")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("Claim Check  READY"), "{run:?}");
    assert!(!run.stderr.contains("claim-check:"), "{run:?}");
    assert!(
        !run.stderr.contains("PASS") && !run.stderr.contains("still running"),
        "{run:?}"
    );
}

fn strip_colour(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // `ESC [ … m`
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
