//! Tags: the design's vectors, and the whole-token, case-folded match.

use super::{tag_for, tag_matches};

#[test]
fn design_vectors() {
    assert_eq!(tag_for("refund-idempotent"), "AC-REFUND-IDEMPOTENT-10fd");
    assert_eq!(tag_for("audit-log"), "AC-AUDIT-LOG-fb7d");
}

#[test]
fn matches_file_names_and_function_names() {
    let tag = "AC-REFUND-IDEMPOTENT-10fd";
    assert!(tag_matches("test_refund_AC_REFUND_IDEMPOTENT_10fd.py", tag));
    assert!(tag_matches("fn ac_refund_idempotent_10fd()", tag));
    assert!(tag_matches(
        "tests/AC-REFUND-IDEMPOTENT-10fd/test_x.py::test_y",
        tag
    ));
    assert!(tag_matches("ac_refund_idempotent_10fd", tag));
    assert!(tag_matches(
        "tests/test_r.py::test_refund_ac_refund_idempotent_10fd",
        tag
    ));
}

#[test]
fn needs_a_boundary_on_both_sides() {
    let tag = "AC-REFUND-IDEMPOTENT-10fd";
    assert!(!tag_matches("xac_refund_idempotent_10fd", tag));
    assert!(!tag_matches("ac_refund_idempotent_10fda", tag));
    assert!(!tag_matches("ac_refund_idempotent_10fd0", tag));
    assert!(!tag_matches("ac_refund_idempotent_10fe", tag));
    assert!(!tag_matches("ac refund idempotent 10fd", tag));
    assert!(!tag_matches("", tag));
}
