//! What cargo's and nextest's test runs stream: libtest's `test NAME ... ok` lines on stdout (the
//! floor runs one test at a time, so the time since the line before is the test's), and
//! nextest's status lines on stderr.

use crate::floor::progress::{Finished, FinishedLines, Shown};
use crate::process::Stream;

/// What `cargo test` streams: libtest's lines, named without the binary id.
pub fn libtest_source() -> FinishedLines {
    FinishedLines {
        line: Some(|stream, line| match stream {
            Stream::Stdout => parse_libtest(line),
            Stream::Stderr => None,
        }),
        bare_names: true,
        ..FinishedLines::default()
    }
}

/// What `cargo nextest run` streams: its status lines.
pub fn nextest_source() -> FinishedLines {
    FinishedLines {
        line: Some(|stream, line| match stream {
            Stream::Stderr => parse_nextest(line),
            Stream::Stdout => None,
        }),
        ..FinishedLines::default()
    }
}

/// libtest's `test tests::a ... ok` (`FAILED`, `ignored`, `ignored, reason`); the time is the
/// caller's to add.
pub fn parse_libtest(line: &str) -> Option<Finished> {
    let rest = line.trim_end().strip_prefix("test ")?;
    let (name, result) = rest.rsplit_once(" ... ")?;
    let outcome = match result {
        "ok" => Shown::Pass,
        "FAILED" => Shown::Fail,
        r if r == "ignored" || r.starts_with("ignored, ") => Shown::Skip,
        _ => return None,
    };
    Some(Finished {
        name: name.to_string(),
        outcome,
        seconds: None,
    })
}

/// nextest's `        PASS [   0.004s] fx-crate::t unit_ok` (newer versions put a `(1/3)`
/// counter before the binary id); every status but `PASS` and `SKIP` is a failure.
pub fn parse_nextest(line: &str) -> Option<Finished> {
    let line = line.trim();
    let (status, rest) = line.split_once(" [")?;
    let (time, rest) = rest.split_once("s] ")?;
    let seconds: f64 = time.trim().parse().ok()?;
    let status = status.trim();
    let outcome = match status {
        "PASS" => Shown::Pass,
        "SKIP" => Shown::Skip,
        s if !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == ' ') =>
        {
            Shown::Fail
        }
        _ => return None,
    };
    let rest = rest.trim_start();
    let rest = match rest.strip_prefix('(') {
        Some(counted) => counted.split_once(") ")?.1,
        None => rest,
    };
    let (binary, test) = rest.trim().split_once(' ')?;
    Some(Finished {
        name: format!("{binary} {}", test.trim()),
        outcome,
        seconds: Some(seconds),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libtest_lines() {
        let f = parse_libtest("test tests::refund_is_capped ... ok").expect("parsed");
        assert_eq!(
            (f.name.as_str(), f.outcome),
            ("tests::refund_is_capped", Shown::Pass)
        );
        assert_eq!(
            parse_libtest("test a::b ... FAILED").map(|f| f.outcome),
            Some(Shown::Fail)
        );
        assert_eq!(
            parse_libtest("test a::slow ... ignored, takes a minute").map(|f| f.outcome),
            Some(Shown::Skip)
        );
        assert_eq!(
            parse_libtest("test a::c ... ignored").map(|f| f.outcome),
            Some(Shown::Skip)
        );
        // The summary, a name with " ... " in it as libtest never prints one, and other output.
        assert_eq!(parse_libtest("test result: ok. 1 passed; 0 failed"), None);
        assert_eq!(parse_libtest("running 1 test"), None);
        assert_eq!(parse_libtest("test a::b ... "), None);
    }

    #[test]
    fn nextest_status_lines() {
        let f = parse_nextest("        PASS [   0.004s] fx-crate::t unit_ok").expect("parsed");
        assert_eq!(
            f,
            Finished {
                name: "fx-crate::t unit_ok".into(),
                outcome: Shown::Pass,
                seconds: Some(0.004)
            }
        );
        let counted =
            parse_nextest("        FAIL [   1.250s] (2/3) fx-crate tests::a").expect("parsed");
        assert_eq!(
            (counted.name.as_str(), counted.outcome),
            ("fx-crate tests::a", Shown::Fail)
        );
        assert_eq!(
            parse_nextest("     SIGSEGV [   0.100s] fx-crate tests::b").map(|f| f.outcome),
            Some(Shown::Fail)
        );
        assert_eq!(parse_nextest("    Starting 2 tests across 1 binary"), None);
        assert_eq!(
            parse_nextest("     Summary [   0.010s] 2 tests run: 2 passed"),
            None
        );
    }
}
