//! `claim-check --mode full` end to end: the judge configured in the acceptance file, run by
//! the binary on a real repository, with a scripted command judge, with a chat-completions
//! endpoint on loopback, and with `examples/judge/forward.py` forwarding to that endpoint; and
//! full mode's input errors, which write nothing.

use crate::common;

use common::chat_server::{answer_for, completion, Action, ChatServer};
use common::{require_pytest, Repo};
use serde_json::Value;

/// A change with a satisfied floor criterion, an unbound one, and a judgment criterion; the
/// acceptance file ends with `judge` (its lines given by the caller).
fn repo(judge: &str) -> (Repo, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("svc/__init__.py", "");
    r.write("svc/refund.py", "def refund(order):\n    return order\n");
    let base = r.commit("base");
    r.write(
        "svc/refund.py",
        "def refund(order):\n    return order\n\ndef total(a, b):\n    return a + b\n",
    );
    r.write(
        &format!("tests/test_total_{}.py", common::ident("total")),
        "from svc.refund import total\n\ndef test_total():\n    assert total(1, 2) == 3\n",
    );
    r.write("tools/judge.py", common::BLOCKING_JUDGE);
    r.write(
        ".shipmoor/acceptance.yaml",
        &format!("version: 1\ncriteria:\n  - id: total\n    ac: Totals add up.\n  - id: audit-log\n    ac: An audit log entry is written for every refund.\n    lane: judge\n  - id: receipt\n    ac: A receipt is sent.\n    required: false\n{judge}"),
    );
    r.commit("head");
    (r, base)
}

fn json(r: &Repo, path: &str) -> Value {
    serde_json::from_str(&r.read(path)).expect("JSON")
}

#[test]
fn a_command_judges_confirmed_block_blocks_and_replays() {
    let (r, base) = repo("judge:\n  command: [\"python3\", \"tools/judge.py\"]\n");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--mode", "full"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("stage3.byo_judge"), "{}", run.stdout);
    // The judge's findings in the result document, as its schema describes them.
    let printed = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--mode",
        "full",
        "--format",
        "json",
    ]);
    assert_eq!(printed.code, 1, "{printed:?}");
    assert!(
        printed.stdout.contains("\"findings\""),
        "{}",
        printed.stdout
    );
    common::assert_matches_schema("claim_check.run.v1", &printed.stdout);
    assert!(run.stdout.contains("svc/refund.py:2"), "{}", run.stdout);
    let fixes = json(&r, ".shipmoor/claim-check.fixes.json");
    let fix = fixes["fixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["evidence"]["type"] == "judge")
        .unwrap_or_else(|| panic!("a judge fix: {fixes:#}"));
    assert_eq!(fix["evidence"]["detail"], "svc/refund.py:2");
    assert!(fix["evidence"]["pointer"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    // The optional unbound criterion was judged too: an abstention, routed to a person.
    assert!(
        fixes["route_to_human"]
            .to_string()
            .contains("judge abstained"),
        "{fixes:#}"
    );
    let vsa = json(&r, ".shipmoor/claim-check.vsa.json");
    let ext = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"];
    assert_eq!(ext["mode"], "full");
    assert_eq!(ext["format_version"], 5, "every statement is format 5");
    assert_eq!(ext["verdict"], "BLOCKED");
    // The judge's request and response are evidence the statement cites, and replay re-checks
    // them (and the citation, with the repository at hand).
    let replay = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
    ]);
    assert_eq!(replay.code, 0, "{replay:?}");
    assert!(replay.stdout.contains("judge"), "{}", replay.stdout);
    // The same replay as JSON: a full-mode statement's report is the same document.
    let json = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--format",
        "json",
    ]);
    assert_eq!(json.code, 0, "{json:?}");
    common::assert_matches_schema("claim_check.replay.v1", &json.stdout);
    assert!(json.stdout.contains("judge"), "{}", json.stdout);
    let md = r.read(".shipmoor/verify.md");
    assert!(md.contains("### Review Findings"), "{md}");
}

#[test]
fn fast_mode_never_starts_the_judge() {
    // A judge that leaves a mark outside its view when it runs: fast mode must not run it.
    let mark = tempfile::tempdir().unwrap();
    let marker = mark.path().join("judged");
    let (r, base) = repo(&format!(
        "judge:\n  command: [\"sh\", \"-c\", \"touch {}\"]\n",
        marker.display()
    ));
    // The judge runs in the sandbox: the mark's directory is one it may write.
    let writable = [("SHIPMOOR_SANDBOX_WRITE", mark.path().to_str().unwrap())];
    let run = r.shipmoor_env(&["claim-check", "--base", &base], &writable);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(!marker.exists(), "fast mode ran the judge");
    // The same judge in full mode does run (so the mark can show).
    let full = r.shipmoor_env(
        &["claim-check", "--base", &base, "--mode", "full"],
        &writable,
    );
    assert_eq!(full.code, 4, "{full:?}");
    assert!(marker.exists(), "full mode did not run the judge");
    assert!(
        run.stdout.contains("no judge ran (fast mode)"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_chat_endpoint_that_abstains_routes_to_a_person() {
    let server = ChatServer::start(|got| {
        Action::ok(completion(&answer_for(got, "abstain"), Some((120, 30))))
    });
    let (r, base) = repo(&format!(
        "judge:\n  url: {}\n  model: loopback\n  api_key_env: CLAIM_CHECK_TEST_KEY\n",
        server.url
    ));
    let run = r.shipmoor_env(
        &["claim-check", "--base", &base, "--mode", "full"],
        &[("CLAIM_CHECK_TEST_KEY", "sk-test-123")],
    );
    assert_eq!(run.code, 4, "{run:?}");
    let got = server.received();
    assert_eq!(
        got.len(),
        2,
        "audit-log and receipt are judged, total is not"
    );
    assert_eq!(got[0].header("authorization"), Some("Bearer sk-test-123"));
    let fixes = json(&r, ".shipmoor/claim-check.fixes.json");
    assert_eq!(fixes["fixes"], serde_json::json!([]), "{fixes:#}");
    assert!(
        fixes["route_to_human"]
            .to_string()
            .contains("judge abstained"),
        "{fixes:#}"
    );
    let md = r.read(".shipmoor/verify.md");
    assert!(
        md.contains("judge_prompt_tokens: 240"),
        "token usage in the metrics: {md}"
    );
    assert!(md.contains("judge_completion_tokens: 60"), "{md}");
    // The key never reaches an output.
    for f in [
        ".shipmoor/claim-check.vsa.json",
        ".shipmoor/verify.md",
        ".shipmoor/claim-check.fixes.json",
    ] {
        assert!(!r.read(f).contains("sk-test-123"), "{f}");
    }
}

#[test]
fn the_example_forwarder_is_a_working_command_judge() {
    let server = ChatServer::start(|got| {
        let req = got.judge_request();
        let id = req["criterion"]["id"].as_str().unwrap_or("").to_string();
        if id == "audit-log" {
            let ptr =
                serde_json::json!({"path": "svc/refund.py", "line": 2, "quote": "return order"});
            Action::ok(completion(
                &format!(
                    "```json\n{}\n```",
                    serde_json::json!({"decision": "block", "rationale": "no audit entry",
                        "base": req["base"], "head": req["head"], "pointer": ptr,
                        "obligations": [{"text": "an entry", "status": "divergent", "citation": ptr}]})
                ),
                None,
            ))
        } else {
            Action::ok(completion(&answer_for(got, "abstain"), None))
        }
    });
    let forward = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/judge/forward.py");
    let (r, base) = repo(&format!(
        "judge:\n  command: [\"python3\", \"{forward}\"]\n"
    ));
    let run = r.shipmoor_env(
        &["claim-check", "--base", &base, "--mode", "full"],
        &[
            ("SHIPMOOR_JUDGE_URL", server.url.as_str()),
            ("SHIPMOOR_JUDGE_MODEL", "loopback"),
            ("SHIPMOOR_JUDGE_KEY_ENV", ""),
        ],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("svc/refund.py:2"), "{}", run.stdout);
    assert_eq!(server.received().len(), 2);
}

/// Full mode's input errors: exit 2, the file and line named with a fix, nothing written.
#[test]
fn full_mode_input_errors_name_the_file_and_write_nothing() {
    let cases = [
        ("", "--mode full needs a judge, and the acceptance set configures none"),
        (
            "judge:\n  url: http://127.0.0.1:9/v1/chat/completions\n  model: m\n  api_key_env: CLAIM_CHECK_UNSET_KEY\n",
            "CLAIM_CHECK_UNSET_KEY",
        ),
        (
            "judge:\n  command: [\"python3\", \"tools/judge.py\"]\n  url: http://127.0.0.1:9/v1/chat/completions\n",
            "`judge` has both `command` and `url`",
        ),
    ];
    for (judge, message) in cases {
        let (r, base) = repo(judge);
        let run = r.shipmoor(&["claim-check", "--base", &base, "--mode", "full"]);
        assert_eq!(run.code, 2, "{judge}: {run:?}");
        assert!(run.stderr.contains(message), "{judge}: {}", run.stderr);
        assert!(
            run.stderr.contains(".shipmoor/acceptance.yaml"),
            "{}",
            run.stderr
        );
        assert!(run.stderr.contains("help:"), "{}", run.stderr);
        assert!(!r.path().join(".shipmoor/claim-check.vsa.json").exists());
        assert!(!r.path().join(".shipmoor/evidence").exists());
        assert!(!r.path().join(".shipmoor/verify.md").exists());
    }
}
