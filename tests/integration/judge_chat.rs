//! The chat-completions judge against a chat-completions endpoint on loopback
//! (`common::chat_server`): what it sends, what it keeps of the answer, and how it meets rate
//! limits, failing servers, silent servers, servers without JSON mode, and its concurrency
//! limit. No assertion here is about elapsed time: bounds are shown by counting attempts.

use crate::common;

use std::time::Duration;

use serde_json::{json, Value};
use shipmoor::format::judge::Request;
use shipmoor::judge::chat::{ChatJudge, Retry, SYSTEM_PROMPT};
use shipmoor::judge::{Ask, Identity, Reply, Usage};

use common::chat_judge::{request, spec, SECONDS};
use common::chat_server::{answer_for, completion, Action, ChatServer};

/// A keyless judge of `server`, retries quick so that failing tests stay short.
fn judge(server: &ChatServer, timeout: Duration, concurrency: usize) -> ChatJudge {
    ChatJudge::from_spec(&spec(&server.url, None, timeout, concurrency))
        .unwrap()
        .with_retry(quick_retry(4))
}

fn quick_retry(attempts: u32) -> Retry {
    Retry {
        attempts,
        base_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
    }
}

fn reason(reply: &Reply) -> &str {
    match reply {
        Reply::Failed { reason } => reason,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn body(reply: &Reply) -> String {
    match reply {
        Reply::Answer { body, .. } => String::from_utf8(body.clone()).unwrap(),
        other => panic!("expected an answer, got {other:?}"),
    }
}

#[test]
fn an_answer_is_the_message_content_with_the_usage() {
    let server =
        ChatServer::start(|r| Action::ok(completion(&answer_for(r, "abstain"), Some((812, 64)))));
    let judge = judge(&server, SECONDS, 4);
    let sent = request("audit-log");
    let replies = judge.ask_all(std::slice::from_ref(&sent));

    let received = server.received();
    assert_eq!(received.len(), 1);
    assert_eq!(
        replies,
        vec![Reply::Answer {
            body: answer_for(&received[0], "abstain").into_bytes(),
            usage: Some(Usage {
                prompt_tokens: 812,
                completion_tokens: 64
            }),
        }]
    );
    assert_eq!(
        judge.identity(),
        Identity::Chat {
            url: server.url.clone(),
            model: "loopback-model".to_string()
        }
    );

    // What went over the wire: a POST to the spec's URL, the model, temperature 0, JSON mode,
    // the system prompt, and the request JSON as the user message; no key, as none is named.
    let got = &received[0];
    assert_eq!(
        (got.method.as_str(), got.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(got.header("authorization"), None);
    assert_eq!(got.header("content-type"), Some("application/json"));
    assert_eq!(got.body["model"], "loopback-model");
    assert_eq!(got.body["temperature"], 0);
    assert_eq!(got.body["response_format"], json!({"type": "json_object"}));
    assert_eq!(got.body["messages"][0]["role"], "system");
    assert_eq!(got.body["messages"][0]["content"], SYSTEM_PROMPT);
    assert_eq!(got.body["messages"][1]["role"], "user");
    assert_eq!(got.judge_request(), serde_json::to_value(&sent).unwrap());
}

#[test]
fn a_rejected_key_fails_at_once_and_the_reason_never_holds_the_key() {
    let server = ChatServer::start(|r| {
        let echoed = r.header("authorization").unwrap_or("").to_string();
        Action::status(
            401,
            json!({"error": {"message": format!("Incorrect API key provided: {echoed}")}})
                .to_string(),
        )
    });
    let judge =
        ChatJudge::from_spec_with_env(&spec(&server.url, Some("JUDGE_KEY"), SECONDS, 1), |_| {
            Some("sk-loopback-secret".to_string())
        })
        .unwrap()
        .with_retry(quick_retry(4));
    let replies = judge.ask_all(&[request("audit-log")]);
    let why = reason(&replies[0]);
    assert!(
        why.starts_with("HTTP 401 Unauthorized: Incorrect API key"),
        "{why}"
    );
    assert!(!why.contains("sk-loopback-secret"), "{why}");
    assert_eq!(
        server.received().len(),
        1,
        "a 4xx other than 429 is not retried"
    );
}

#[test]
fn a_429_is_retried_after_its_retry_after() {
    let server = ChatServer::start(|r| {
        if r.index == 0 {
            Action::status(429, r#"{"error": {"message": "Rate limit reached"}}"#)
                .header("Retry-After", "1")
        } else {
            Action::ok(completion(&answer_for(r, "block"), Some((10, 5))))
        }
    });
    // A backoff of its own this long would pass the timeout: only the server's `Retry-After:
    // 1` lets the second attempt happen.
    let judge = ChatJudge::from_spec(&spec(&server.url, None, Duration::from_secs(20), 1))
        .unwrap()
        .with_retry(Retry {
            attempts: 4,
            base_backoff: Duration::from_secs(600),
            max_backoff: Duration::from_secs(600),
        });
    let replies = judge.ask_all(&[request("audit-log")]);
    assert_eq!(server.received().len(), 2);
    assert!(
        body(&replies[0]).contains(r#""decision":"block""#),
        "{replies:?}"
    );
}

#[test]
fn a_retry_after_past_the_timeout_gives_up_at_once() {
    let server =
        ChatServer::start(|_| Action::status(503, "overloaded").header("Retry-After", "3600"));
    let judge = judge(&server, Duration::from_secs(20), 1);
    let replies = judge.ask_all(&[request("audit-log")]);
    let why = reason(&replies[0]);
    assert!(
        why.starts_with("HTTP 503 Service Unavailable: overloaded"),
        "{why}"
    );
    assert!(why.contains("would pass the 20 s timeout"), "{why}");
    assert_eq!(server.received().len(), 1);
}

#[test]
fn a_500_throughout_fails_after_the_bounded_attempts() {
    let server =
        ChatServer::start(|_| Action::status(500, r#"{"error": {"message": "upstream crashed"}}"#));
    let judge = ChatJudge::from_spec(&spec(&server.url, None, SECONDS, 2))
        .unwrap()
        .with_retry(quick_retry(3));
    let replies = judge.ask_all(&[request("one"), request("two")]);
    for reply in &replies {
        assert_eq!(
            reason(reply),
            "HTTP 500 Internal Server Error: upstream crashed (gave up after 3 attempts)"
        );
    }
    assert_eq!(
        server.received().len(),
        6,
        "3 attempts for each of 2 criteria"
    );
}

#[test]
fn the_default_policy_is_bounded_too() {
    let server = ChatServer::start(|_| Action::status(502, "bad gateway"));
    let judge = ChatJudge::from_spec(&spec(&server.url, None, Duration::from_secs(60), 1)).unwrap();
    let replies = judge.ask_all(&[request("one")]);
    assert!(reason(&replies[0]).contains("gave up after"), "{replies:?}");
    assert_eq!(server.received().len() as u32, Retry::default().attempts);
}

#[test]
fn a_server_that_never_answers_times_out() {
    let server = ChatServer::start(|_| Action::Hang);
    let judge = judge(&server, Duration::from_millis(500), 1);
    let replies = judge.ask_all(&[request("audit-log")]);
    assert_eq!(reason(&replies[0]), "timeout after 0.5 s");
    assert_eq!(
        server.received().len(),
        1,
        "the timeout covers the criterion, retries included"
    );
}

#[test]
fn connection_errors_are_retried_then_fail() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    let judge = ChatJudge::from_spec(&spec(&url, None, SECONDS, 1))
        .unwrap()
        .with_retry(quick_retry(2));
    let replies = judge.ask_all(&[request("audit-log")]);
    let why = reason(&replies[0]);
    assert!(why.starts_with(&format!("no answer from {url}")), "{why}");
    assert!(why.ends_with("(gave up after 2 attempts)"), "{why}");
}

#[test]
fn a_server_without_json_mode_is_asked_again_without_it_and_not_asked_with_it_again() {
    let server = ChatServer::start(|r| {
        if r.body.get("response_format").is_some() {
            Action::status(
                400,
                json!({"error": {"message": "Unrecognized request argument supplied: response_format",
                                 "type": "invalid_request_error"}})
                .to_string(),
            )
        } else {
            Action::ok(completion(&answer_for(r, "abstain"), None))
        }
    });
    let judge = judge(&server, SECONDS, 1);
    let replies = judge.ask_all(&[request("one"), request("two")]);
    assert!(
        replies.iter().all(|r| matches!(r, Reply::Answer { .. })),
        "{replies:?}"
    );
    let with_json_mode: Vec<bool> = server
        .received()
        .iter()
        .map(|r| r.body.get("response_format").is_some())
        .collect();
    assert_eq!(with_json_mode, [true, false, false]);
}

#[test]
fn another_400_is_not_read_as_a_json_mode_rejection() {
    let server = ChatServer::start(|_| {
        Action::status(400, r#"{"error": {"message": "model `x` not found"}}"#)
    });
    let judge = judge(&server, SECONDS, 1);
    let replies = judge.ask_all(&[request("one")]);
    assert_eq!(
        reason(&replies[0]),
        "HTTP 400 Bad Request: model `x` not found"
    );
    assert_eq!(server.received().len(), 1);
}

#[test]
fn content_in_a_code_fence_is_passed_as_it_is() {
    let fenced = "Here is my review.\n```json\n{\"decision\": \"abstain\", \"rationale\": \"unclear\"}\n```\n";
    let server = ChatServer::start(move |_| Action::ok(completion(fenced, None)));
    let judge = judge(&server, SECONDS, 1);
    let replies = judge.ask_all(&[request("one")]);
    assert_eq!(body(&replies[0]), fenced);
}

#[test]
fn a_refusal_over_http_fails_with_it() {
    let server = ChatServer::start(|_| {
        Action::ok(
            json!({"choices": [{"message": {"role": "assistant", "content": null,
                                            "refusal": "I can't review this."}}]})
            .to_string(),
        )
    });
    let replies = judge(&server, SECONDS, 1).ask_all(&[request("one")]);
    assert_eq!(
        reason(&replies[0]),
        "the model refused: I can't review this."
    );
}

#[test]
fn criteria_are_judged_up_to_the_concurrency_and_replied_in_request_order() {
    // The first criteria answered slowest, so the answers arrive out of request order.
    let server = ChatServer::start(|r| {
        let id = r.judge_request()["criterion"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let n: u64 = id.trim_start_matches("c").parse().unwrap();
        Action::ok(completion(&answer_for(r, "abstain"), None))
            .after(Duration::from_millis(40 * (8 - n)))
    });
    let judge = judge(&server, SECONDS, 4);
    let requests: Vec<Request> = (0..8).map(|i| request(&format!("c{i}"))).collect();
    let replies = judge.ask_all(&requests);

    let answered: Vec<String> = replies
        .iter()
        .map(|r| {
            let answer: Value = serde_json::from_str(&body(r)).unwrap();
            answer["rationale"].as_str().unwrap().to_string()
        })
        .collect();
    let expected: Vec<String> = (0..8).map(|i| format!("about c{i}")).collect();
    assert_eq!(answered, expected);
    assert_eq!(server.received().len(), 8);
    assert!(
        server.max_in_flight() <= 4,
        "{} at once",
        server.max_in_flight()
    );
    assert!(
        server.max_in_flight() > 1,
        "the criteria were judged one at a time"
    );
}

#[test]
fn no_requests_ask_nothing() {
    let server = ChatServer::start(|_| Action::status(500, ""));
    assert!(judge(&server, SECONDS, 1).ask_all(&[]).is_empty());
    assert!(server.received().is_empty());
}

#[test]
fn a_retry_after_as_an_http_date_is_honoured() {
    let format = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let server = ChatServer::start(move |r| {
        if r.index == 0 {
            let at = time::OffsetDateTime::now_utc() + time::Duration::seconds(2);
            Action::status(429, "slow down").header("Retry-After", &at.format(&format).unwrap())
        } else {
            Action::ok(completion(&answer_for(r, "abstain"), None))
        }
    });
    // As with `Retry-After: 1`: only the server's date lets the second attempt happen in time.
    let judge = ChatJudge::from_spec(&spec(&server.url, None, Duration::from_secs(20), 1))
        .unwrap()
        .with_retry(Retry {
            attempts: 4,
            base_backoff: Duration::from_secs(600),
            max_backoff: Duration::from_secs(600),
        });
    let replies = judge.ask_all(&[request("audit-log")]);
    assert!(matches!(replies[0], Reply::Answer { .. }), "{replies:?}");
    assert_eq!(server.received().len(), 2);
}

#[test]
fn asking_from_inside_a_tokio_runtime_does_not_panic() {
    let server = ChatServer::start(|r| Action::ok(completion(&answer_for(r, "abstain"), None)));
    let judge = judge(&server, SECONDS, 2);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let replies = runtime.block_on(async { judge.ask_all(&[request("one"), request("two")]) });
    assert!(
        replies.iter().all(|r| matches!(r, Reply::Answer { .. })),
        "{replies:?}"
    );
}

#[test]
fn a_criterion_s_timeout_starts_with_its_turn_not_while_it_waits_for_one() {
    // Six criteria one at a time, 200 ms each: the last starts after about a second, past a
    // timeout counted from the start of the run, well within one counted from its turn.
    let server = ChatServer::start(|r| {
        Action::ok(completion(&answer_for(r, "abstain"), None)).after(Duration::from_millis(200))
    });
    let judge = judge(&server, Duration::from_millis(900), 1);
    let requests: Vec<Request> = (0..6).map(|i| request(&format!("c{i}"))).collect();
    let replies = judge.ask_all(&requests);
    assert!(
        replies.iter().all(|r| matches!(r, Reply::Answer { .. })),
        "{replies:?}"
    );
    assert_eq!(server.max_in_flight(), 1);
}

/// A connection dropped mid-answer (the headers and half the promised body, then closed) is a
/// transport fault: retried like a refused connection, and the answer of the retry is kept;
/// dropped on every attempt, the criterion's reply is a failure saying so, never a half-read
/// answer and never a panic.
#[test]
fn an_answer_cut_off_mid_body_is_retried_then_fails() {
    let server = ChatServer::start(|r| {
        let body = completion(&answer_for(r, "abstain"), None);
        if r.index == 0 {
            Action::DropMidAnswer { body }
        } else {
            Action::ok(body)
        }
    });
    let replies = judge(&server, SECONDS, 1).ask_all(&[request("audit-log")]);
    assert_eq!(server.received().len(), 2, "the cut answer is asked again");
    assert!(
        body(&replies[0]).contains("\"decision\":\"abstain\""),
        "{replies:?}"
    );

    let server = ChatServer::start(|r| Action::DropMidAnswer {
        body: completion(&answer_for(r, "block"), None),
    });
    let judge = ChatJudge::from_spec(&spec(&server.url, None, SECONDS, 1))
        .unwrap()
        .with_retry(quick_retry(3));
    let replies = judge.ask_all(&[request("audit-log")]);
    let why = reason(&replies[0]);
    assert_eq!(server.received().len(), 3, "{why}");
    assert!(why.ends_with("(gave up after 3 attempts)"), "{why}");
}

#[test]
fn the_key_goes_as_a_bearer_token_from_the_variable_the_spec_names() {
    let var = "SHIPMOOR_TEST_JUDGE_KEY";
    let server = ChatServer::start(|r| Action::ok(completion(&answer_for(r, "abstain"), None)));
    // The environment the judge reads its key from, looked up by name.
    let env = |name: &str| (name == var).then(|| "sk-loopback-7f3a".to_string());
    let judge =
        ChatJudge::from_spec_with_env(&spec(&server.url, Some(var), SECONDS, 1), env).unwrap();
    let replies = judge.ask_all(&[request("audit-log")]);

    assert!(
        matches!(replies[0], Reply::Answer { usage: None, .. }),
        "{replies:?}"
    );
    assert_eq!(
        server.received()[0].header("authorization"),
        Some("Bearer sk-loopback-7f3a")
    );
}
