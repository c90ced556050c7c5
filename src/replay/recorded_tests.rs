//! What replay makes of a statement whose `rule`, `mode`, `base` or `head` holds a value no
//! release writes: the outcome and its words, pinned. The recorded rule and mode are not
//! re-checked (step 5 re-derives the rule from the dispositions); a commit is compared as the
//! statement spells it.

use std::path::Path;

use serde_json::Value;

use super::{replay, Expectations, Report, SignatureCheck, Status};
use crate::format::statement::EXTENSION_KEY;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/replay");

/// The fixture of `format`'s statement, with its extension's `field` set to `value` (removed
/// when `None`), replayed unsigned against its evidence store.
fn replayed(format: u8, field: &str, value: Option<Value>) -> Report {
    let dir = Path::new(FIXTURES).join(format!("format-{format}"));
    let bytes = std::fs::read(dir.join("claim-check.vsa.json")).expect("the fixture");
    let mut st: Value = serde_json::from_slice(&bytes).expect("JSON");
    let ext = st["predicate"][EXTENSION_KEY]
        .as_object_mut()
        .expect("the extension");
    match value {
        Some(v) => ext.insert(field.to_string(), v),
        None => ext.remove(field),
    };
    let sig = SignatureCheck {
        allow_unsigned: true,
        ..Default::default()
    };
    let text = serde_json::to_vec_pretty(&st).expect("JSON");
    replay(
        &text,
        "t",
        &sig,
        &Expectations::default(),
        &dir.join("evidence"),
        None,
    )
}

fn failed(r: &Report) -> Option<(u8, String)> {
    let s = r.steps.iter().find(|s| s.status == Status::Failed)?;
    Some((s.number, s.detail.clone()))
}

fn steps(r: &Report) -> Vec<(u8, Status, String)> {
    r.steps
        .iter()
        .map(|s| (s.number, s.status, s.detail.clone()))
        .collect()
}

/// A rule or mode no release writes changes nothing replay says: the statement is as valid as
/// the one written, step for step.
#[test]
fn an_unknown_rule_or_mode_is_not_judged() {
    for format in [1u8, 3] {
        let written = steps(&replayed(format, "x-absent", None));
        assert!(written.iter().all(|s| s.1 != Status::Failed), "{written:?}");
        for (field, value) in [
            ("rule", "9"),
            ("rule", "draft-gate"),
            ("rule", ""),
            ("mode", "slow"),
            ("mode", "FAST"),
        ] {
            let r = replayed(format, field, Some(value.into()));
            assert!(r.valid, "format {format}, {field} {value:?}: {:?}", r.steps);
            assert_eq!(steps(&r), written, "format {format}, {field} {value:?}");
        }
    }
}

/// A commit that is not 40 or 64 hex digits is compared as spelt: a base with the records'
/// base, a head with the subject.
#[test]
fn a_commit_of_another_shape_is_compared_as_spelt() {
    let r = replayed(3, "base", Some("not-a-commit".into()));
    assert_eq!(
        failed(&r),
        Some((
            4,
            "criterion order-marked-refunded: evidence sha256:6ebc228431eb4c16a9974e77bf5c2b2d7979c4a03bd682efd701834946090f06 is not tests/test_refund_ac_order_marked_refunded_8df8.py::test_refund_marks_order_refunded at base not-a-commit".to_string()
        ))
    );
    let r = replayed(1, "base", Some("".into()));
    assert_eq!(
        failed(&r),
        Some((
            4,
            "criterion order-refunded: evidence sha256:d81ed4a05531ec0a187b07eff69ff28bc148d946c9ee5deeb7680a5d6110859a is not tests/test_r_ac_order_refunded_63fc.py::test_refunded at base ".to_string()
        ))
    );
    let r = replayed(3, "head", Some("HEAD".into()));
    assert_eq!(
        failed(&r),
        Some((
            3,
            "the dispositions are for head \"HEAD\" but the subject is 3d231e30ca8608f5c526eff725398be132ecc793".to_string()
        ))
    );
}

/// A rule, mode or commit that is not a string, or is absent, is a statement this release
/// cannot read: step 3, in serde's words for a string field.
#[test]
fn a_rule_mode_or_commit_that_is_not_a_string_is_refused_at_step_3() {
    let why = "the signed payload is not a statement of format 3: ";
    for (field, value, want) in [
        (
            "rule",
            Some(Value::from(9)),
            "invalid type: integer `9`, expected a string at line 156 column 15",
        ),
        ("rule", None, "missing field `rule` at line 173 column 5"),
        (
            "mode",
            Some(Value::Null),
            "invalid type: null, expected a string at line 147 column 18",
        ),
        (
            "head",
            Some(Value::from(40)),
            "invalid type: integer `40`, expected a string at line 146 column 16",
        ),
    ] {
        let r = replayed(3, field, value);
        assert_eq!(failed(&r), Some((3, format!("{why}{want}"))), "{field}");
    }
    let r = replayed(1, "base", Some(Value::from(false)));
    let (n, detail) = failed(&r).unwrap();
    assert_eq!(n, 3);
    assert!(
        detail.starts_with(
            "the signed payload is not a statement of format 1: invalid type: boolean `false`, expected a string"
        ),
        "{detail}"
    );
}
