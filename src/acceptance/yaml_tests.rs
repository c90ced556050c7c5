//! The spanned tree: duplicate keys, anchors, aliases, tags, syntax errors, extra documents and
//! the nesting cap, each reported at its position.

use crate::acceptance::test_support::{at, help, minimal, one_err, parse_err};

#[test]
fn duplicate_keys_are_errors() {
    let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    ac: B.\n");
    assert_eq!(at(&e), (5, 5));
    assert_eq!(e.message, "duplicate key `ac` (first on line 4)");
    assert_eq!(help(&e), "remove one of the two `ac` keys");

    let e = one_err(&minimal("version: 1\n"));
    assert_eq!(at(&e), (5, 1));
    assert!(e.message.contains("duplicate key `version`"));
}

#[test]
fn anchors_aliases_and_tags_are_rejected() {
    let errors =
        parse_err("version: 1\ncriteria:\n  - id: a\n    ac: &text A.\n  - id: b\n    ac: *text\n");
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(at(&errors[0]), (4, 9));
    assert!(errors[0]
        .message
        .contains("anchors (`&name`) are not supported"));
    assert_eq!(at(&errors[1]), (6, 9));
    assert!(errors[1]
        .message
        .contains("aliases (`*name`) are not supported"));

    let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: !!str A.\n");
    assert_eq!(at(&e), (4, 9));
    assert!(e.message.contains("YAML tags (`!!str`)"), "{e}");
}

#[test]
fn a_syntax_error_is_reported_at_the_parsers_position() {
    let e = one_err("version: 1\ncriteria: [a, b\n");
    assert_eq!(e.line, Some(3));
    assert!(e.message.starts_with("invalid YAML: "), "{e}");
    assert_eq!(help(&e), "fix the YAML syntax at this position");

    let e = one_err("version: 1\ncriteria:\n  - id: a\n   ac: A.\n");
    assert_eq!(e.line, Some(4), "{e}");
}

#[test]
fn a_second_document_is_an_error() {
    let e = one_err(&minimal("---\nversion: 1\n"));
    assert_eq!(at(&e), (5, 1));
    assert!(e.message.contains("more than one YAML document"));
}

#[test]
fn deep_nesting_is_cut_off() {
    // The YAML parser caps flow nesting at 255 itself (its scanner refuses the 256th level
    // before the tree sees the 65th) but not block nesting, so every shape must hit our own cap
    // before the tree gets deep enough to hurt, and say so in the same words.
    for deep in [
        format!("version: 1\ncriteria:\n{}x\n", "- ".repeat(100_000)),
        format!("version: 1\ncriteria: {}\n", "[".repeat(200)),
        format!("version: 1\ncriteria: {}\n", "[".repeat(10_000)),
    ] {
        let e = one_err(&deep);
        assert!(e.message.contains("nests deeper than 64 levels"), "{e}");
    }
}
