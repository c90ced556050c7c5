use super::{explain, find, render, rule};
use crate::format::statement::Statement;
use crate::format::SideOutcome;

const STATEMENT: &str = include_str!("../../../tests/fixtures/agents/statement-blocked.json");

fn statement() -> Statement {
    serde_json::from_str(STATEMENT).expect("a statement")
}

#[test]
fn a_criterion_is_found_by_its_id_or_its_tag_in_any_case() {
    let s = statement();
    let ext = &s.predicate.extension;
    assert_eq!(
        find(ext, "refund-idempotency").unwrap().id,
        "refund-idempotency"
    );
    assert_eq!(
        find(ext, "ac-refund-idempotency-9845").unwrap().id,
        "refund-idempotency"
    );
    assert!(find(ext, "refund").is_none());
}

#[test]
fn each_disposition_says_what_would_change_it() {
    let s = statement();
    let ext = &s.predicate.extension;
    let e = explain(ext, find(ext, "refund-voids-payment-intent").unwrap(), None);
    assert_eq!(e.disposition.as_str(), "unsatisfied");
    assert_eq!(e.rule, rule("tag"));
    assert_eq!(
        (e.tests[0].base.as_str(), e.tests[0].head.as_str()),
        ("fail", "fail")
    );
    assert!(
        e.would_change[0].starts_with("Make `tests/test_stripe_void.py::"),
        "{:?}",
        e.would_change
    );
    assert!(e.would_change[0].contains("pass at head"));
    // Without the store the records are named, not read.
    assert!(e.tests[0]
        .runs
        .iter()
        .all(|r| r.outcome.is_none() && r.record.starts_with("sha256:")));

    let e = explain(ext, find(ext, "refund-idempotency").unwrap(), None);
    assert!(e.would_change[0].contains("AC-REFUND-IDEMPOTENCY-9845"));

    let e = explain(ext, find(ext, "order-marked-refunded").unwrap(), None);
    assert!(e.would_change[0].contains("failed at head, or passed at base"));

    // A test that passes at base too does not show the change.
    let would = voids_with(SideOutcome::Pass, SideOutcome::Pass);
    assert!(would[0].contains("passes at base too"), "{would:?}");
    let would = voids_with(SideOutcome::Flaky, SideOutcome::Pass);
    assert!(would[0].contains("mixed results"), "{would:?}");
}

/// What would change `refund-voids-payment-intent` had its test done `base` and `head`.
fn voids_with(base: SideOutcome, head: SideOutcome) -> Vec<String> {
    let mut s = statement();
    let d = s
        .predicate
        .extension
        .dispositions
        .iter_mut()
        .find(|d| d.id == "refund-voids-payment-intent")
        .unwrap();
    d.floor.tests[0].base = base;
    d.floor.tests[0].head = head;
    let ext = &s.predicate.extension;
    explain(ext, find(ext, "refund-voids-payment-intent").unwrap(), None).would_change
}

#[test]
fn the_human_form_shows_the_rule_each_run_and_the_changes() {
    let s = statement();
    let ext = &s.predicate.extension;
    let e = explain(ext, find(ext, "refund-voids-payment-intent").unwrap(), None);
    let text = render(&e, None);
    assert!(text.starts_with("refund-voids-payment-intent (AC-REFUND-VOIDS-PAYMENT-INTENT-737b, required, unsatisfied)\n"), "{text}");
    assert!(text.contains("  rule (tag): a test carrying"), "{text}");
    assert!(
        text.contains("    base (record not read) sha256:"),
        "{text}"
    );
    assert!(
        text.contains("  what would change it:\n    - Make `"),
        "{text}"
    );
}

#[test]
fn at_80_columns_every_line_fits_but_a_word_longer_than_a_line() {
    let s = statement();
    let ext = &s.predicate.extension;
    let e = explain(ext, find(ext, "refund-voids-payment-intent").unwrap(), None);
    let text = render(&e, Some(80));
    for line in text.lines() {
        let long_word = line.split(' ').any(|w| w.chars().count() > 60);
        assert!(line.chars().count() <= 80 || long_word, "{line:?}\n{text}");
    }
    insta::assert_snapshot!(text);
}
