//! The pure parts of the chat-completions transport: `Retry-After`, the backoff, reading a
//! completion, excerpts. The HTTP behaviour is tested against a loopback server in
//! `tests/integration/judge_chat.rs`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{parse_retry_after, ChatJudge, Retry, SYSTEM_PROMPT};
use crate::format::judge::{REQUEST_SCHEMA, RESPONSE_SCHEMA};
use crate::judge::{JudgeSpec, Reply, Transport, Usage};

fn spec(api_key_env: Option<&str>) -> JudgeSpec {
    JudgeSpec {
        name: "intent".to_string(),
        transport: Transport::Chat {
            url: "http://127.0.0.1:9/v1/chat/completions".to_string(),
            model: "m".to_string(),
            api_key_env: api_key_env.map(str::to_string),
        },
        timeout: Duration::from_secs(120),
        concurrency: 4,
        max_diff_bytes: 1000,
        exclude: Vec::new(),
        file: ".shipmoor/acceptance.yaml".to_string(),
        line: 7,
    }
}

fn judge_with_key(key: &str) -> ChatJudge {
    let key = key.to_string();
    ChatJudge::from_spec_with_env(&spec(Some("JUDGE_KEY")), move |_| Some(key.clone())).unwrap()
}

#[test]
fn retry_after_in_seconds() {
    let now = SystemTime::now();
    assert_eq!(parse_retry_after("1", now), Some(Duration::from_secs(1)));
    assert_eq!(
        parse_retry_after(" 30 ", now),
        Some(Duration::from_secs(30))
    );
    assert_eq!(parse_retry_after("0", now), Some(Duration::ZERO));
}

#[test]
fn retry_after_as_an_http_date() {
    // Sun, 06 Nov 1994 08:49:37 GMT is RFC 9110's own example: 784111777.
    let now = UNIX_EPOCH + Duration::from_secs(784_111_777 - 90);
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
        Some(Duration::from_secs(90))
    );
    let later = UNIX_EPOCH + Duration::from_secs(784_111_777 + 5);
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", later),
        Some(Duration::ZERO),
        "a date already past means now"
    );
}

#[test]
fn retry_after_that_is_neither_is_ignored() {
    let now = SystemTime::now();
    for value in ["", "soon", "-1", "1.5", "Sunday, 06-Nov-94 08:49:37 GMT"] {
        assert_eq!(parse_retry_after(value, now), None, "{value:?}");
    }
}

#[test]
fn backoff_doubles_up_to_its_cap_with_jitter_down_to_half() {
    let retry = Retry {
        attempts: 10,
        base_backoff: Duration::from_millis(100),
        max_backoff: Duration::from_millis(350),
    };
    for _ in 0..50 {
        for (failed, full) in [(1, 100), (2, 200), (3, 350), (9, 350), (40, 350)] {
            let wait = retry.backoff(failed);
            let full = Duration::from_millis(full);
            assert!(
                wait >= full / 2 && wait <= full,
                "after {failed} failures: {wait:?}, not within [{:?}, {full:?}]",
                full / 2
            );
        }
    }
}

#[test]
fn the_prompt_names_both_schemas_and_both_decisions() {
    assert!(SYSTEM_PROMPT.contains(REQUEST_SCHEMA));
    assert!(SYSTEM_PROMPT.contains(RESPONSE_SCHEMA));
    assert!(SYSTEM_PROMPT.contains("\"block\""));
    assert!(SYSTEM_PROMPT.contains("\"abstain\""));
    // OpenAI's JSON mode refuses a conversation that does not mention JSON.
    assert!(SYSTEM_PROMPT.contains("JSON"));
}

#[test]
fn a_missing_key_variable_names_the_file_line_and_fix() {
    for value in [None, Some("  ".to_string())] {
        let err = ChatJudge::from_spec_with_env(&spec(Some("OPENAI_API_KEY")), |name| {
            assert_eq!(name, "OPENAI_API_KEY");
            value.clone()
        })
        .unwrap_err();
        assert_eq!(err.file.as_deref(), Some(".shipmoor/acceptance.yaml"));
        assert_eq!(err.line, Some(7));
        assert!(err.message.contains("`OPENAI_API_KEY`"), "{}", err.message);
        assert!(err
            .help
            .as_deref()
            .unwrap()
            .contains("set `OPENAI_API_KEY`"));
    }
}

#[test]
fn no_key_variable_means_no_key_and_the_environment_is_not_read() {
    let judge = ChatJudge::from_spec_with_env(&spec(None), |name| {
        panic!("looked up {name} though the spec names no variable")
    })
    .unwrap();
    assert_eq!(judge.inner.api_key, None);
}

#[test]
fn a_command_spec_is_not_a_chat_judge() {
    let mut command = spec(None);
    command.transport = Transport::Command {
        argv: vec!["judge".to_string()],
    };
    let err = ChatJudge::from_spec_with_env(&command, |_| None).unwrap_err();
    assert!(err.message.contains("is a command"), "{}", err.message);
}

fn read(body: &str) -> Reply {
    judge_with_key("sk-secret")
        .inner
        .read_completion(body.as_bytes())
}

fn failed(reply: Reply) -> String {
    match reply {
        Reply::Failed { reason } => reason,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn a_completion_gives_its_first_content_and_usage() {
    let reply = read(
        r#"{"choices": [{"message": {"role": "assistant", "content": "{\"decision\": \"abstain\"}"}},
                        {"message": {"content": "second"}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}"#,
    );
    assert_eq!(
        reply,
        Reply::Answer {
            body: br#"{"decision": "abstain"}"#.to_vec(),
            usage: Some(Usage {
                prompt_tokens: 12,
                completion_tokens: 3
            })
        }
    );
}

#[test]
fn content_parts_are_joined_and_missing_usage_is_none() {
    let reply = read(
        r#"{"choices": [{"message": {"content": [{"type": "text", "text": "{\"decision\": "},
                                                  {"type": "text", "text": "\"block\"}"}]}}]}"#,
    );
    assert_eq!(
        reply,
        Reply::Answer {
            body: br#"{"decision": "block"}"#.to_vec(),
            usage: None
        }
    );
}

#[test]
fn what_is_not_an_answer_fails_with_its_reason() {
    let cases = [
        (
            r#"{"choices": [{"message": {"content": null, "refusal": "I can't help with that."}}]}"#,
            "the model refused: I can't help with that.",
        ),
        (r#"{"choices": []}"#, "no choices"),
        (r#"{"object": "chat.completion"}"#, "no choices"),
        (
            r#"{"choices": [{"message": {"content": ""}, "finish_reason": "length"}]}"#,
            "no content (finish_reason: length)",
        ),
        (r#"{"choices": [{"finish_reason": "stop"}]}"#, "no message"),
        ("<html>bad gateway</html>", "not a chat completion"),
        (
            r#"{"error": {"message": "model not loaded"}}"#,
            "HTTP 200 with an error: model not loaded",
        ),
    ];
    for (body, expected) in cases {
        let reason = failed(read(body));
        assert!(reason.contains(expected), "{body}: {reason}");
    }
}

#[test]
fn excerpts_are_bounded_single_lines_without_the_key() {
    let judge = judge_with_key("sk-secret");
    let text = format!("bad key sk-secret\n\n{}", "x".repeat(1000));
    let excerpt = judge.inner.excerpt(&text);
    assert!(!excerpt.contains("sk-secret"), "{excerpt}");
    assert!(excerpt.starts_with("bad key <api key> xxx"), "{excerpt}");
    assert!(!excerpt.contains('\n'));
    assert_eq!(
        excerpt.chars().count(),
        301,
        "300 characters and an ellipsis"
    );
    assert_eq!(judge.inner.excerpt(" \n"), "(empty body)");
}

#[test]
fn a_key_no_header_can_carry_names_its_variable_and_never_the_key() {
    let err = ChatJudge::from_spec_with_env(&spec(Some("JUDGE_KEY")), |_| {
        Some("sk-one\nline-two".to_string())
    })
    .unwrap_err();
    assert!(err.message.contains("`JUDGE_KEY`"), "{}", err.message);
    assert!(!err.to_string().contains("sk-one"), "{err}");
    assert_eq!(err.line, Some(7));
}

#[test]
fn neither_the_header_nor_the_debug_output_shows_the_key() {
    let judge = judge_with_key("sk-secret");
    let value = judge.inner.authorization.as_ref().unwrap();
    assert!(value.is_sensitive());
    assert_eq!(value.to_str().unwrap(), "Bearer sk-secret");
    let debug = format!("{judge:?}");
    assert!(!debug.contains("sk-secret"), "{debug}");
    assert!(debug.contains(r#"api_key: Some("<set>")"#), "{debug}");
}

mod properties {
    //! A chat completion's body, whatever the endpoint sent: an answer or a failure that says
    //! why, never a panic (see [`crate::prop_tests`]).
    use proptest::prelude::*;

    use super::read;
    use crate::judge::Reply;
    use crate::prop_tests::{bytes, config, mutate_json, mutations, within};

    const COMPLETION: &str = r#"{"id": "c1", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "{\"decision\": \"abstain\"}"}},
                    {"message": {"content": [{"type": "text", "text": "second"}]}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}"#;

    fn said_why(body: &[u8]) -> Result<(), String> {
        let Ok(text) = std::str::from_utf8(body) else {
            return Ok(());
        };
        match within(20, "reading a completion", || read(text)) {
            Reply::Failed { reason } if reason.trim().is_empty() => Err("no reason".to_string()),
            _ => Ok(()),
        }
    }

    #[test]
    fn the_example_starts_an_answer() {
        let body = String::from_utf8(mutate_json(COMPLETION.as_bytes(), &[])).unwrap();
        assert!(matches!(read(&body), Reply::Answer { .. }));
    }

    proptest! {
        #![proptest_config(config())]

        #[test]
        fn any_body_is_an_answer_or_a_reason(input in bytes()) {
            said_why(&input).map_err(TestCaseError::fail)?;
        }

        #[test]
        fn a_mutated_completion_is_an_answer_or_a_reason(m in mutations()) {
            said_why(&mutate_json(COMPLETION.as_bytes(), &m)).map_err(TestCaseError::fail)?;
        }
    }
}
