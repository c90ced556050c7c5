use super::{decide, parse_payload, Answer};
use crate::agent::summary::Summary;
use crate::format::Disposition;
use crate::verdict::Verdict;

const BLOCKED: &str = include_str!("../../../tests/fixtures/agents/result-blocked.json");

fn blocked() -> Summary {
    Summary::from_result(BLOCKED.as_bytes()).expect("a result document")
}

fn ready() -> Summary {
    let mut s = blocked();
    s.verdict = Verdict::Ready;
    s.rule = "4".to_string();
    for c in &mut s.criteria {
        c.disposition = Disposition::Satisfied;
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
        let e = parse_payload(input).unwrap_err().to_string();
        assert!(e.contains(says), "{input:?}: {e}");
    }
    let big = vec![b' '; super::PAYLOAD_LIMIT + 1];
    assert!(parse_payload(&big)
        .unwrap_err()
        .to_string()
        .contains("over"));
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
    gaps.verdict = Verdict::ReadyWithGaps;
    gaps.rule = "5".to_string();
    gaps.criteria[3].disposition = Disposition::Unbound;
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
    draft.verdict = Verdict::Inconclusive;
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

#[test]
fn uncommitted_changes_send_the_agent_back_to_commit_within_the_limit() {
    let message = "the working tree has uncommitted changes to tracked files: refund.py";
    let Answer::Block(reason) = super::decide_uncommitted(message, 0, 2) else {
        panic!("blocks");
    };
    assert!(
        reason.contains("refund.py")
            && reason.contains("commit your changes and stop again")
            && reason.contains("(1 of 2 checks"),
        "{reason}"
    );
    assert!(!reason.contains("--"), "{reason}");
    for (prior, max) in [(2, 2), (0, 0)] {
        let Answer::Allow(Some(told)) = super::decide_uncommitted(message, prior, max) else {
            panic!("allows at {prior} of {max}");
        };
        assert!(told.contains("not checked"), "{told}");
    }
    let Answer::Allow(Some(told)) = super::release_uncommitted(message, "no count") else {
        panic!("allows");
    };
    assert!(
        told.contains("(no count)") && told.contains("not checked"),
        "{told}"
    );
}

/// A run is read by its documents: the result, the error document of a dirty tree, and
/// anything else as its message in the hook's words.
#[test]
fn a_run_reads_as_a_verdict_uncommitted_changes_or_no_verdict() {
    use super::{Checked, Options, PASSED_ON};
    use crate::agent::child::Ran;
    use crate::error::{Error, InputError};
    use crate::format::error::ErrorDocument;
    let opts = Options {
        repo: None,
        base: None,
        mode: "fast",
        acceptance: None,
        runs: 1,
        timeout: 1,
        max_blocks: 3,
        claim_check_flags: PASSED_ON
            .iter()
            .map(|f| f.to_string())
            .chain(["--head".to_string()])
            .collect(),
    };
    let ran = |e: InputError| {
        let error = Error::input(e.clone());
        Ran {
            exit_code: Some(2),
            stdout: serde_json::to_vec(&ErrorDocument::of(&error)).unwrap(),
            stderr: format!("{error}\n"),
            cancelled: false,
        }
    };
    let dirty = ran(
        InputError::new(format!("{}: a.py", crate::git::UNCOMMITTED))
            .help("commit or stash the changes (`git stash`), or pass --head"),
    );
    assert_eq!(
        Checked::of(&dirty, &opts.words()),
        Checked::Uncommitted(format!("{}: a.py", crate::git::UNCOMMITTED))
    );
    let base = ran(
        InputError::new("--base `x` is not a commit in this repository")
            .help("pass a commit that exists here, or pass --head"),
    );
    assert_eq!(
        Checked::of(&base, &opts.words()),
        Checked::NoVerdict(
            "error: --base `x` is not a commit in this repository\n  help: pass a commit that exists here"
                .to_string()
        )
    );
    let verdict = Ran {
        exit_code: Some(1),
        stdout: BLOCKED.as_bytes().to_vec(),
        ..Ran::default()
    };
    assert!(matches!(
        Checked::of(&verdict, &opts.words()),
        Checked::Verdict(_)
    ));
}
