//! A result document whose `rule`, `mode`, `base` or `head` holds a value no release writes
//! (`action comment`, `action report` and the agents read the file a run wrote, which someone
//! may have edited): it reads, its spellings come back as written, and every report shows them
//! as written.

use serde_json::Value;

use crate::format::result::tests::{criterion, run_result};
use crate::format::result::ResultDocument;
use crate::format::Disposition;

/// The result document of a run no judge looked at, `edit` applied to its `result`.
fn document(edit: impl Fn(&mut serde_json::Map<String, Value>)) -> String {
    let result = run_result(vec![
        criterion(0, Disposition::Unsatisfied),
        criterion(1, Disposition::NotJudged),
    ]);
    let packet = super::fixes::packet(&result);
    let json = ResultDocument::new(&result, &packet).to_json().unwrap();
    let mut v: Value = serde_json::from_str(&json).unwrap();
    edit(v["result"].as_object_mut().unwrap());
    serde_json::to_string_pretty(&v).unwrap()
}

fn unknown() -> String {
    document(|r| {
        r.insert("mode".into(), "slow".into());
        r.insert("rule".into(), "9".into());
        r.insert("base".into(), "not-a-commit".into());
        r.insert("head".into(), "HEAD".into());
    })
}

#[test]
fn unknown_spellings_read_back_as_written() {
    let text = unknown();
    let doc = ResultDocument::parse(text.as_bytes()).unwrap();
    assert_eq!(doc.to_json().unwrap(), text);
}

#[test]
fn every_report_shows_unknown_spellings_as_written() {
    let doc = ResultDocument::parse(unknown().as_bytes()).unwrap();
    let comment = super::github::job_summary(&doc, "claim-check");
    assert!(
        comment.contains("· base `not-a-c` · head `HEAD` · slow mode"),
        "{comment}"
    );
    assert!(comment.contains("**Rule 9:** "), "{comment}");
    let md = super::verify_md::render(&doc.result, &doc.fixes);
    assert!(md.contains("rule: 9 ("), "{md}");
    assert!(md.contains("mode: slow"), "{md}");
    // A mode other than `fast` reads as a run whose judge gave nothing.
    assert!(md.contains("The judge gave no findings; "), "{md}");
    assert!(!md.contains("No judge ran (fast mode)"), "{md}");
    let term = super::terminal::render_at(&doc.result, false, None);
    assert!(term.contains("  rule 9: "), "{term}");
    assert!(
        term.contains("  base not-a-c · head HEAD · slow mode · "),
        "{term}"
    );
    let summary = crate::agent::summary::Summary::from_result(unknown().as_bytes()).unwrap();
    assert_eq!(
        (
            summary.rule.as_str(),
            summary.base.as_str(),
            summary.head.as_str()
        ),
        ("9", "not-a-commit", "HEAD")
    );
    assert!(!summary.is_draft());
}

/// A known rule and mode read as themselves: `draft-gate` is the draft gate, `fast` says no
/// judge ran.
#[test]
fn known_spellings_read_as_themselves() {
    let text = document(|r| {
        r.insert("rule".into(), "draft-gate".into());
    });
    let summary = crate::agent::summary::Summary::from_result(text.as_bytes()).unwrap();
    assert!(summary.is_draft());
    let doc = ResultDocument::parse(text.as_bytes()).unwrap();
    let md = super::verify_md::render(&doc.result, &doc.fixes);
    assert!(md.contains("No judge ran (fast mode)"), "{md}");
}

/// A value that is not a string is refused, with serde's words for a string field.
#[test]
fn a_rule_mode_or_commit_that_is_not_a_string_is_refused() {
    for (field, value, want) in [
        (
            "rule",
            Value::from(9),
            "invalid type: integer `9`, expected a string",
        ),
        ("mode", Value::Null, "invalid type: null, expected a string"),
        (
            "base",
            Value::from(true),
            "invalid type: boolean `true`, expected a string",
        ),
        (
            "head",
            Value::from(40),
            "invalid type: integer `40`, expected a string",
        ),
    ] {
        let text = document(|r| {
            r.insert(field.into(), value.clone());
        });
        let e = ResultDocument::parse(text.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(want), "{field}: {e}");
        let missing = document(|r| {
            r.remove(field);
        });
        let e = ResultDocument::parse(missing.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("missing field `{field}`")),
            "{field}: {e}"
        );
    }
}
