//! What `go test -json` streams: its pass, fail and skip events with their `Elapsed`.

use crate::floor::progress::{Finished, FinishedLines, Shown};
use crate::process::Stream;

/// What a `go test -json` run streams.
pub fn source() -> FinishedLines {
    FinishedLines {
        line: Some(|stream, line| match stream {
            Stream::Stdout => parse_go_json(line),
            Stream::Stderr => None,
        }),
        ..FinishedLines::default()
    }
}

/// A `go test -json` event that ends a test: `pass`, `fail` or `skip` with a `Test`, named
/// `<package> <test>` as the go adapter's ids are.
pub fn parse_go_json(line: &str) -> Option<Finished> {
    let v: serde_json::Value = serde_json::from_str(line.trim()).ok()?;
    let outcome = match v.get("Action")?.as_str()? {
        "pass" => Shown::Pass,
        "fail" => Shown::Fail,
        "skip" => Shown::Skip,
        _ => return None,
    };
    let test = v.get("Test")?.as_str()?;
    let package = v.get("Package")?.as_str()?;
    Some(Finished {
        name: format!("{package} {test}"),
        outcome,
        seconds: v.get("Elapsed").and_then(serde_json::Value::as_f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_json_events() {
        let f = parse_go_json(
            r#"{"Time":"2026-11-30T10:00:00Z","Action":"pass","Package":"example.com/m/refund","Test":"TestCap/over","Elapsed":0.31}"#,
        )
        .expect("parsed");
        assert_eq!(
            f,
            Finished {
                name: "example.com/m/refund TestCap/over".into(),
                outcome: Shown::Pass,
                seconds: Some(0.31)
            }
        );
        let fail = r#"{"Action":"fail","Package":"m","Test":"TestA","Elapsed":1}"#;
        assert_eq!(parse_go_json(fail).map(|f| f.outcome), Some(Shown::Fail));
        let skip = r#"{"Action":"skip","Package":"m","Test":"TestA","Elapsed":0}"#;
        assert_eq!(parse_go_json(skip).map(|f| f.outcome), Some(Shown::Skip));
        // A package's own result, a test's output and its start are not finished tests.
        assert_eq!(
            parse_go_json(r#"{"Action":"pass","Package":"m","Elapsed":1.2}"#),
            None
        );
        assert_eq!(
            parse_go_json(
                r#"{"Action":"output","Package":"m","Test":"TestA","Output":"--- PASS"}"#
            ),
            None
        );
        assert_eq!(
            parse_go_json(r#"{"Action":"run","Package":"m","Test":"TestA"}"#),
            None
        );
    }
}
