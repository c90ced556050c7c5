//! pytest's progress: the floor's plugin appends a JSON line per finished test to a file in the
//! scratch directory, read while the run goes on (pytest's own output stays as it was).

use crate::floor::progress::{Finished, FinishedLines, Shown};
use crate::floor::runners::RunCtx;

/// What a pytest run streams: the plugin's file.
pub fn source(ctx: &RunCtx) -> FinishedLines {
    FinishedLines {
        file: Some((super::progress_path(ctx), parse_pytest)),
        ..FinishedLines::default()
    }
}

/// A line of the pytest plugin: `{"nodeid": …, "outcome": "passed", "duration": 0.01}`.
pub fn parse_pytest(line: &str) -> Option<Finished> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let outcome = match v.get("outcome")?.as_str()? {
        "passed" => Shown::Pass,
        "failed" => Shown::Fail,
        "skipped" => Shown::Skip,
        _ => return None,
    };
    Some(Finished {
        name: v.get("nodeid")?.as_str()?.to_string(),
        outcome,
        seconds: v.get("duration").and_then(serde_json::Value::as_f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_plugin_lines() {
        assert_eq!(
            parse_pytest(
                r#"{"nodeid": "tests/test_x.py::TestA::test_b[1]", "outcome": "failed", "duration": 0.25}"#
            ),
            Some(Finished {
                name: "tests/test_x.py::TestA::test_b[1]".into(),
                outcome: Shown::Fail,
                seconds: Some(0.25)
            })
        );
        let skipped = parse_pytest(r#"{"nodeid": "t.py::a", "outcome": "skipped", "duration": 0}"#);
        assert_eq!(skipped.map(|f| f.outcome), Some(Shown::Skip));
        let passed =
            parse_pytest(r#"{"nodeid": "t.py::a", "outcome": "passed", "duration": 0.01}"#);
        assert_eq!(passed.map(|f| f.outcome), Some(Shown::Pass));
        assert_eq!(
            parse_pytest(r#"{"nodeid": "t.py::a", "outcome": "rerun"}"#),
            None
        );
        assert_eq!(parse_pytest("not json"), None);
    }
}
