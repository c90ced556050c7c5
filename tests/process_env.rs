//! The tests that set variables in the environment of their own process, kept out of
//! `tests/integration` in a binary of their own: the environment is the whole process's, and
//! under `cargo test` (one process per binary, tests on threads) what they set would reach every
//! other test of the binary and every `shipmoor` those start (`GITHUB_OUTPUT` and
//! `SIGSTORE_ID_TOKEN` among them). nextest runs each test in a process of its own, so here too
//! each sees only its own. Each module is named for the area its test belongs to.

mod common;

/// The judge stage (`tests/integration/judge.rs`): a command judge's environment.
mod judge {
    use crate::common::command_judge::{fixture, one};

    #[test]
    fn a_command_judge_gets_the_floors_scrubbed_environment() {
        let f = fixture();
        // In the test's own environment, as in a real job (nextest runs each test in its own process).
        for (k, v) in [
            ("SIGSTORE_ID_TOKEN", "oidc"),
            ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "t"),
            ("GITHUB_OUTPUT", "/tmp/out"),
            ("GITHUB_ENV", "/tmp/env"),
            ("GITHUB_STEP_SUMMARY", "/tmp/sum"),
            ("GITHUB_PATH", "/tmp/path"),
            ("JUDGE_TEST_KEEP", "1"),
        ] {
            std::env::set_var(k, v);
        }
        let (finding, _, _) = one(&f, "env");
        assert_eq!(finding.rationale, "JUDGE_TEST_KEEP");
    }
}

/// The chat-completions judge (`tests/integration/judge_chat.rs`): its API key, read from the
/// environment.
mod judge_chat {
    use crate::common::chat_judge::{request, spec, SECONDS};
    use crate::common::chat_server::{answer_for, completion, Action, ChatServer};
    use shipmoor::judge::chat::ChatJudge;
    use shipmoor::judge::{Ask, Reply};

    #[test]
    fn the_key_goes_as_a_bearer_token_from_the_variable_the_spec_names() {
        let var = format!("SHIPMOOR_TEST_JUDGE_KEY_{}", std::process::id());
        // Each test binary of nextest is one process per test; the name is this process's own.
        std::env::set_var(&var, "sk-loopback-7f3a");
        let server = ChatServer::start(|r| Action::ok(completion(&answer_for(r, "abstain"), None)));
        let judge = ChatJudge::from_spec(&spec(&server.url, Some(&var), SECONDS, 1)).unwrap();
        let replies = judge.ask_all(&[request("audit-log")]);
        std::env::remove_var(&var);

        assert!(
            matches!(replies[0], Reply::Answer { usage: None, .. }),
            "{replies:?}"
        );
        assert_eq!(
            server.received()[0].header("authorization"),
            Some("Bearer sk-loopback-7f3a")
        );
    }
}
