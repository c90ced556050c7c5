use super::{decide, parse_payload, Answer};
use crate::agent::summary::Summary;

const BLOCKED: &str = include_str!("../../../tests/fixtures/agents/result-blocked.json");

fn blocked() -> Summary {
    Summary::from_result(BLOCKED.as_bytes()).expect("a result document")
}

fn ready() -> Summary {
    let mut s = blocked();
    s.verdict = "READY".to_string();
    s.rule = "4".to_string();
    for c in &mut s.criteria {
        c.disposition = "satisfied".to_string();
    }
    s.next_steps.clear();
    s
}

#[test]
fn a_stop_payload_parses_and_anything_else_says_what_it_is() {
    let p = parse_payload(br#"{"session_id":"s","cwd":"/r","hook_event_name":"Stop","stop_hook_active":true,"extra":1}"#).unwrap();
    assert!(p.stop_hook_active);
    assert_eq!(p.session_id.as_deref(), Some("s"));
    let p = parse_payload(br#"{"session_id":"s"}"#).unwrap();
    assert!(!p.stop_hook_active, "absent reads as false");
    for (input, says) in [
        (&b""[..], "no hook payload"),
        (b"garbage", "not the agent's Stop payload"),
        (b"[1,2]", "not the agent's Stop payload"),
        (b"\xff\xfe", "not UTF-8"),
        (br#"{"hook_event_name":"PreToolUse"}"#, "PreToolUse event"),
        (
            br#"{"stop_hook_active":"yes"}"#,
            "not the agent's Stop payload",
        ),
    ] {
        let e = parse_payload(input).unwrap_err();
        assert!(e.contains(says), "{input:?}: {e}");
    }
    let big = vec![b' '; super::PAYLOAD_LIMIT + 1];
    assert!(parse_payload(&big).unwrap_err().contains("over"));
}

#[test]
fn an_open_required_criterion_blocks_with_the_next_steps() {
    let Answer::Block(reason) = decide(&blocked(), 0, 3) else {
        panic!("blocks");
    };
    assert!(
        reason.starts_with("Shipmoor Claim Check: BLOCKED (rule 1"),
        "{reason}"
    );
    assert!(
        reason.contains("\n1. \"The Stripe PaymentIntent is voided.\""),
        "{reason}"
    );
    assert!(
        reason.contains("\n2. \"A refund cannot be issued twice"),
        "{reason}"
    );
    assert!(reason.contains("(1 of 3 checks"), "{reason}");
    let Answer::Block(reason) = decide(&blocked(), 2, 3) else {
        panic!("the third block of three");
    };
    assert!(reason.contains("(3 of 3 checks"), "{reason}");
}

#[test]
fn the_limit_lets_the_agent_stop_and_tells_the_person() {
    for (prior, max) in [(3, 3), (5, 3), (0, 0)] {
        let Answer::Allow(Some(message)) = decide(&blocked(), prior, max) else {
            panic!("allows at {prior} of {max}");
        };
        assert!(message.contains("the claim is not met"), "{message}");
        assert!(message.contains(".shipmoor/verify.md"), "{message}");
    }
}

#[test]
fn ready_says_nothing_and_gaps_tell_the_person() {
    assert_eq!(decide(&ready(), 0, 3), Answer::Allow(None));
    assert_eq!(decide(&ready(), 0, 3).to_stdout(), None);
    let mut gaps = ready();
    gaps.verdict = "READY WITH GAPS".to_string();
    gaps.rule = "5".to_string();
    gaps.criteria[3].disposition = "unbound".to_string();
    gaps.next_steps = vec!["an optional one".to_string()];
    let answer = decide(&gaps, 0, 3);
    let Answer::Allow(Some(message)) = &answer else {
        panic!("{answer:?}");
    };
    assert!(message.contains("READY WITH GAPS") && message.contains("an optional one"));
    let line: serde_json::Value = serde_json::from_str(&answer.to_stdout().unwrap()).unwrap();
    assert_eq!(line, serde_json::json!({"systemMessage": message}));
}

#[test]
fn a_draft_claim_blocks_until_it_is_committed() {
    let mut draft = ready();
    draft.verdict = "INCONCLUSIVE".to_string();
    draft.rule = "draft-gate".to_string();
    draft.rule_reason = "acceptance set is a draft; commit it".to_string();
    draft.next_steps = vec!["The claim is a draft: commit it.".to_string()];
    assert!(matches!(decide(&draft, 0, 3), Answer::Block(r) if r.contains("draft")));
}

#[test]
fn the_block_line_has_only_the_fields_both_agents_read() {
    let line = Answer::Block("why".to_string()).to_stdout().unwrap();
    assert_eq!(line, r#"{"decision":"block","reason":"why"}"#);
}

#[test]
fn a_block_that_cannot_be_bounded_lets_the_agent_stop() {
    let Answer::Allow(Some(message)) = super::release(&blocked(), "no count") else {
        panic!("allows");
    };
    assert!(
        message.contains("(no count)") && message.contains("not met"),
        "{message}"
    );
    assert_eq!(super::release(&ready(), "no count"), Answer::Allow(None));
}
