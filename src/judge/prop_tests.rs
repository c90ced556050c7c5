//! Properties of the readers of a judge's answers: a command judge's output read as its verdict
//! on a criterion ([`audit::read_response`], replay's reader too) or as the criteria it
//! proposes ([`propose::read_answer`]). Any bytes, and a valid answer mutated, end in the answer
//! or in a reason, never in a panic, and in bounded time (see [`crate::prop_tests`]).

use proptest::prelude::*;

use super::{audit, propose};
use crate::prop_tests::{bytes, config, mutate_json, mutations, within};

const RESPONSE: &str = r#"{"schema": "claim_check.judge.response.v1",
    "base": "d8f94489d716fc95c2df61bda5b3eef0449c9499",
    "head": "fbac99917fd2c8e9c4a1c1e1b1c1d1e1f1a1b1c1",
    "decision": "block", "rationale": "the refund is never voided",
    "pointer": {"path": "src/refund.py", "line": 12, "quote": "pass"},
    "obligations": [{"text": "void the intent", "status": "divergent",
                     "citation": {"path": "src/refund.py", "line": 12, "quote": "pass"}}]}"#;

const PROPOSAL: &str = r#"{"criteria": [{"ac": "A refund is idempotent.", "required": false,
    "text": "the issue", "line": 3}, {"ac": "The receipt is emailed."}]}"#;

fn read_both(input: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(input);
    // As the judge printed it, and inside prose and a code fence.
    for body in [
        text.to_string(),
        format!("Here it is:\n```json\n{text}\n```\n"),
    ] {
        if let Err(why) = within(20, "reading a judge's answer", || {
            audit::read_response(&body)
        }) {
            if why.to_string().trim().is_empty() {
                return Err("an answer refused without a reason".to_string());
            }
        }
    }
    if let Err(why) = within(20, "reading proposals", || {
        propose::read_answer(input, "judge", &[])
    }) {
        if !why.to_string().contains("its answer") {
            return Err(format!("a reason that does not say whose: {why}"));
        }
    }
    Ok(())
}

#[test]
fn the_examples_start_valid() {
    let r =
        audit::read_response(&String::from_utf8(mutate_json(RESPONSE.as_bytes(), &[])).unwrap());
    assert!(r.is_ok(), "{r:?}");
    let p = propose::read_answer(&mutate_json(PROPOSAL.as_bytes(), &[]), "judge", &[]).unwrap();
    assert_eq!(p.len(), 2);
}

/// Output a judge may print to make the reader work: a megabyte of opening braces, of balanced
/// nests past the recursion limit, of unclosed strings. The reader tries a bounded number of
/// candidates, each in linear time.
#[test]
fn hostile_output_is_read_in_bounded_time() {
    let mb = 1 << 20;
    for text in [
        "{".repeat(mb),
        "{\"a\":".repeat(mb / 5),
        format!("{}{}", "{".repeat(mb / 2), "}".repeat(mb / 2)),
        "{\"".repeat(mb / 2),
        format!("{} {}", "x".repeat(mb), RESPONSE),
    ] {
        within(20, "hostile output", || {
            let _ = audit::read_response(&text);
            let _ = propose::read_answer(text.as_bytes(), "judge", &[]);
        });
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_output_is_an_answer_or_a_reason(input in bytes()) {
        read_both(&input).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_response_is_an_answer_or_a_reason(m in mutations()) {
        read_both(&mutate_json(RESPONSE.as_bytes(), &m)).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_proposal_is_an_answer_or_a_reason(m in mutations()) {
        read_both(&mutate_json(PROPOSAL.as_bytes(), &m)).map_err(TestCaseError::fail)?;
    }
}
