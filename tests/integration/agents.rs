//! Coding agents check their own claims (book: agents.md): `shipmoor mcp` driven by a real MCP
//! client (the PyPI `mcp` SDK, tests/agent/mcp_client.py), `shipmoor hook claude-code` and
//! `codex` fed the agents' recorded Stop payloads, and `shipmoor explain`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common;
use common::{
    dispositions, ident, require_pytest, slow_change, wait_for_start, Repo, Run, PINNED_EPOCH,
};

// ----------------------------------------------------------------------------------------------
// Fixtures
// ----------------------------------------------------------------------------------------------

/// A pytest repository whose change claims one criterion, `voids`: its test fails at base and
/// passes at head, unless `broken`, when it still fails at head. Returns the repository and its
/// base commit.
fn change(broken: bool) -> (Repo, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("refund.py", "def void(intent):\n    return 'open'\n");
    r.write(
        "tests/test_base.py",
        "from refund import void\n\ndef test_imports():\n    assert void\n",
    );
    let base = r.commit("base");
    let fixed = if broken { "'open'" } else { "'cancelled'" };
    r.write(
        "refund.py",
        &format!("def void(intent):\n    return {fixed}\n"),
    );
    r.write(
        &format!("tests/test_void_{}.py", ident("voids")),
        "from refund import void\n\ndef test_void():\n    assert void('pi_1') == 'cancelled', 'expected the PaymentIntent to be cancelled'\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: voids\n    ac: The PaymentIntent is voided.\n",
    );
    r.commit("head");
    (r, base)
}

/// The Python of a virtual environment with the PyPI `mcp` SDK (scripts/test.sh makes it).
fn mcp_python() -> PathBuf {
    let python = std::env::var_os("SHIPMOOR_TEST_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-tools/mcp-venv/bin/python")
        });
    let ok = Command::new(&python)
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "this test needs the PyPI mcp SDK, which is missing at {}: bash scripts/test.sh installs it (python3 -m venv target/test-tools/mcp-venv && target/test-tools/mcp-venv/bin/pip install mcp==2.3.0), or set SHIPMOOR_TEST_MCP_PYTHON",
        python.display()
    );
    python
}

/// Runs the MCP client script against `shipmoor mcp --repo <repo>`.
fn mcp(r: &Repo, scenario: &str, args: Value) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/agent/mcp_client.py");
    let out = Command::new(mcp_python())
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_shipmoor"))
        .arg(r.path())
        .arg(scenario)
        .arg(args.to_string())
        .current_dir(r.path())
        .env("SOURCE_DATE_EPOCH", PINNED_EPOCH)
        .env("SHIPMOOR_TMPDIR", r.tmp.path())
        .env("SHIPMOOR_SANDBOX_WRITE", r.shared.path())
        .env("SHIPMOOR_BASE_CACHE", "none")
        .env("SHIPMOOR_HEARTBEAT_SECS", "0.5")
        .env_remove("GITHUB_EVENT_PATH")
        .output()
        .expect("the MCP client runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the MCP client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// `shipmoor mcp` spoken to line by line, as a client without an SDK would: the handshake,
/// then each of `lines` as it is. Returns the first `replies` replies after the handshake's,
/// each a JSON object as read from one line of stdout.
fn mcp_lines(r: &Repo, lines: &[&str], replies: usize) -> Vec<Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .args(["mcp", "--repo"])
        .arg(r.path())
        .current_dir(r.path())
        .env("SHIPMOOR_TMPDIR", r.tmp.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("shipmoor mcp runs");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    let handshake = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    ];
    for line in handshake.iter().chain(lines) {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut got = Vec::new();
    while got.len() < replies + 1 {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = rx.recv_timeout(left) else {
            break;
        };
        got.push(serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}: {line}")));
    }
    drop(stdin);
    let _ = child.wait();
    assert_eq!(got.len(), replies + 1, "the replies: {got:?}");
    assert_eq!(got[0]["id"], 0, "the handshake first: {got:?}");
    got.split_off(1)
}

/// The CLI's own result document for the same change.
fn cli_result(r: &Repo, base: &str) -> Value {
    let run = r.shipmoor(&["claim-check", "--base", base, "--format", "json", "-q"]);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

// ----------------------------------------------------------------------------------------------
// shipmoor mcp
// ----------------------------------------------------------------------------------------------

#[test]
fn mcp_lists_every_tool_with_an_input_schema() {
    let (r, _) = change(false);
    let out = mcp(&r, "list", Value::Null);
    assert_eq!(out["server"], "shipmoor");
    assert!(out["instructions"]
        .as_str()
        .unwrap_or_default()
        .contains("claim_check"));
    let tools = out["tools"].as_object().expect("tools");
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "acceptance_derive",
            "acceptance_init",
            "acceptance_tags",
            "claim_check",
            "explain",
            "replay"
        ]
    );
    let cc = &tools["claim_check"]["properties"];
    for field in ["repo", "base", "head", "mode", "runs", "acceptance"] {
        assert!(cc.get(field).is_some(), "claim_check takes {field}: {cc}");
    }
    assert_eq!(cc["runs"]["maximum"], 20, "{cc}");
    assert_eq!(
        tools["explain"]["required"],
        serde_json::json!(["criterion"])
    );
    assert_eq!(
        tools["acceptance_derive"]["required"],
        serde_json::json!(["text"])
    );
    // claim_check declares its structured result.
    let out_schema = &out["output_schemas"]["claim_check"]["properties"];
    for field in ["verdict", "criteria", "next_steps"] {
        assert!(out_schema.get(field).is_some(), "{out_schema}");
    }
}

/// Every tool has a title and the hints a client reads before it calls one: the three that
/// write nothing say so, and none asks for a flag the server does not have.
#[test]
fn mcp_lists_each_tools_title_and_annotations() {
    let r = Repo::new();
    let out = mcp(&r, "list", Value::Null);
    let listed = out["listed"].as_object().expect("listed");
    assert_eq!(listed.len(), 6);
    for (name, tool) in listed {
        let title = tool["title"].as_str().unwrap_or_default();
        assert!(!title.is_empty(), "{name}: {tool}");
        assert_eq!(tool["annotations"]["title"], title, "{name}");
        let a = &tool["annotations"];
        for hint in [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ] {
            assert!(a[hint].is_boolean(), "{name} says {hint}: {a}");
        }
        let writes_nothing = ["acceptance_tags", "explain", "replay"].contains(&name.as_str());
        assert_eq!(a["readOnlyHint"], writes_nothing, "{name}: {a}");
        if writes_nothing {
            assert_eq!(a["idempotentHint"], true, "{name}: {a}");
            assert_eq!(a["openWorldHint"], false, "{name}: {a}");
        }
    }
    let cc = &listed["claim_check"]["annotations"];
    assert_eq!(
        (&cc["destructiveHint"], &cc["openWorldHint"]),
        (&Value::Bool(false), &Value::Bool(true)),
        "it writes only its outputs, and runs the repository's tests: {cc}"
    );
    assert_eq!(
        listed["acceptance_init"]["annotations"]["destructiveHint"], true,
        "with force it replaces the acceptance file"
    );
    // The only flag anything listed names is the server's own --repo.
    let text = format!("{} {}", out["listed"], out["instructions"]);
    let flags: Vec<&str> = text
        .match_indices("--")
        .map(|(i, _)| {
            text[i..]
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .next()
                .unwrap_or_default()
        })
        .collect();
    assert!(flags.iter().all(|f| *f == "--repo"), "{flags:?}");
}

/// What is not a call is answered as JSON-RPC says: a line that is not JSON with -32700 and
/// `"id": null`; a `tools/call` whose `arguments` is not an object with -32602 and its id. The
/// session goes on.
#[test]
fn mcp_answers_a_line_that_is_not_json_and_arguments_that_are_not_an_object() {
    let r = Repo::new();
    let replies = mcp_lines(
        &r,
        &[
            "this is not json",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"acceptance_tags","arguments":"{\"repo\": \".\"}"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        ],
        3,
    );
    let by_id = |id: Value| {
        replies
            .iter()
            .find(|v| v["id"] == id)
            .unwrap_or_else(|| panic!("a reply to {id}: {replies:?}"))
    };
    let parse = by_id(Value::Null);
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["jsonrpc"], "2.0");
    assert!(
        parse.as_object().unwrap().contains_key("id"),
        "`id` is there, null: {parse}"
    );
    let params = by_id(2.into());
    assert_eq!(params["error"]["code"], -32602, "{params}");
    assert!(
        params["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("`params.arguments` is a string"),
        "{params}"
    );
    assert_eq!(by_id(3.into())["result"], serde_json::json!({}));
}

/// A tool's error names the tool's own arguments: `force: true`, `head`, `runs`; never a flag
/// of the command line, nor its `--help`.
#[test]
fn mcp_tool_errors_speak_the_tools_arguments() {
    let (r, base) = change(false);
    let out = mcp(&r, "call", serde_json::json!({"__tool": "acceptance_init"}));
    let text = out["result"]["text"].as_str().unwrap_or_default();
    assert_eq!(out["result"]["is_error"], true, "{out}");
    assert!(text.contains("pass `force: true`"), "{text}");
    assert!(!text.contains("--"), "{text}");
    r.write("refund.py", "def void(intent):\n    return 'pending'\n");
    let out = mcp(
        &r,
        "call",
        serde_json::json!({"__tool": "claim_check", "base": base}),
    );
    let text = out["result"]["text"].as_str().unwrap_or_default();
    assert_eq!(out["result"]["is_error"], true, "{out}");
    assert!(
        text.contains("uncommitted changes") && text.contains("pass `head`"),
        "{text}"
    );
    assert!(!text.contains("--"), "{text}");
    let out = mcp(
        &r,
        "call",
        serde_json::json!({"__tool": "claim_check", "base": base, "runs": 0}),
    );
    let text = out["result"]["text"].as_str().unwrap_or_default();
    assert_eq!(out["result"]["is_error"], true, "{out}");
    assert!(text.contains("`runs` is 0"), "{text}");
    assert!(!text.contains("--"), "{text}");
}

#[test]
fn mcp_claim_check_gives_the_cli_verdict_ready_and_blocked_with_progress() {
    for broken in [false, true] {
        let (r, base) = change(broken);
        let before = r.status();
        let out = mcp(
            &r,
            "call",
            serde_json::json!({"__tool": "claim_check", "base": base}),
        );
        let result = &out["result"];
        assert_eq!(result["is_error"], false, "a verdict is a result: {result}");
        let s = &result["structured"];
        let cli = cli_result(&r, &base);
        assert_eq!(s["verdict"], cli["result"]["verdict"], "{s}");
        assert_eq!(
            s["verdict"],
            if broken { "BLOCKED" } else { "READY" },
            "{s}"
        );
        assert_eq!(
            dispositions(&s["criteria"]),
            dispositions(&cli["result"]["criteria"])
        );
        let steps = s["next_steps"].as_array().expect("next_steps");
        if broken {
            let step = steps[0].as_str().unwrap_or_default();
            assert!(
                step.contains("voids") && step.contains("fails at head"),
                "{step}"
            );
            assert!(
                step.contains("expected the PaymentIntent to be cancelled"),
                "{step}"
            );
        } else {
            assert!(steps.is_empty(), "{steps:?}");
        }
        // The same outputs as the command line, in the repository's .shipmoor/ only.
        for f in [
            ".shipmoor/verify.md",
            ".shipmoor/claim-check.fixes.json",
            ".shipmoor/claim-check.vsa.json",
        ] {
            assert!(r.exists(f), "{f}");
        }
        let written: Vec<String> = r
            .status()
            .lines()
            .filter(|l| !before.lines().any(|b| b == *l))
            .map(str::to_string)
            .collect();
        assert!(
            written.iter().all(|l| l.starts_with("?? .shipmoor/")),
            "a call writes only .shipmoor/: {written:?}"
        );
        // Progress notifications: the phases and each finished test.
        let progress: Vec<&str> = out["progress"]
            .as_array()
            .expect("progress")
            .iter()
            .filter_map(|p| p["message"].as_str())
            .collect();
        assert!(
            progress.iter().any(|m| m.contains("creating worktree")),
            "{progress:?}"
        );
        assert!(
            progress
                .iter()
                .any(|m| m.contains("head") && m.contains("test_void")),
            "a finished test: {progress:?}"
        );
        let values: Vec<f64> = out["progress"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["progress"].as_f64())
            .collect();
        assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    }
}

#[test]
fn mcp_bad_input_is_a_tool_error_with_the_cli_message() {
    let (r, _) = change(false);
    let out = mcp(
        &r,
        "call",
        serde_json::json!({"__tool": "claim_check", "base": "no-such-rev"}),
    );
    let result = &out["result"];
    assert_eq!(result["is_error"], true, "{result}");
    let text = result["text"].as_str().unwrap_or_default();
    assert!(text.contains("no-such-rev"), "{text}");
    assert!(text.contains("help:"), "the fix is given: {text}");
    // An invalid acceptance file: the file and line.
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: voids\n    ac: [unclosed\n",
    );
    r.commit("broken acceptance");
    let out = mcp(&r, "call", serde_json::json!({"__tool": "acceptance_tags"}));
    let text = out["result"]["text"].as_str().unwrap_or_default();
    assert_eq!(out["result"]["is_error"], true, "{out}");
    assert!(text.contains(".shipmoor/acceptance.yaml"), "{text}");
    assert!(
        text.contains(".shipmoor/acceptance.yaml:5:"),
        "the line: {text}"
    );
}

#[test]
fn mcp_cancellation_stops_the_tests_and_removes_the_worktrees() {
    let marker = format!("p{}", std::process::id());
    let (r, base, started) = slow_change(&marker);
    let before = r.status();
    let start = Instant::now();
    let out = mcp(&r, "cancel", serde_json::json!({"base": base}));
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "the cancelled run did not stop promptly"
    );
    assert_eq!(out["cancelled"], true, "{out}");
    assert_eq!(
        out["worktrees_after_cancel"], 1,
        "the cancelled run's worktrees are removed while the session goes on: {out}"
    );
    assert!(
        out["progress"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m.as_str().unwrap_or_default().contains("running")),
        "{out}"
    );
    // The session goes on after a cancelled call.
    assert_eq!(out["after"]["is_error"], false, "{out}");
    let tags = out["after"]["structured"].to_string();
    assert!(tags.contains("AC-SLOW"), "{tags}");
    // The server has exited: the run was stopped, its worktrees removed, nothing written.
    r.wait_for_cleanup(20);
    assert!(r.extra_worktrees().is_empty(), "{:?}", r.extra_worktrees());
    assert!(r.tmp_leftovers().is_empty(), "{:?}", r.tmp_leftovers());
    assert!(!r.exists(".shipmoor/verify.md"));
    assert!(!r.exists(".shipmoor/evidence"));
    assert_eq!(r.status(), before, "the checkout is untouched");
    let _ = std::fs::remove_file(&started);
    assert!(
        !running(&marker),
        "the slow test is still running after the cancellation"
    );
}

/// Whether a process whose command line names `marker` runs.
fn running(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .any(|c| c.contains("pytest") && c.contains(marker))
}

#[test]
fn mcp_tags_init_derive_explain_and_replay() {
    let (r, base) = change(true);
    let out = mcp(&r, "call", serde_json::json!({"__tool": "acceptance_tags"}));
    assert_eq!(out["result"]["is_error"], false, "{out}");
    let tags = out["result"]["structured"].to_string();
    assert!(tags.contains(&common::tag("voids")), "{tags}");
    // explain before any run: the error says to run claim-check.
    let out = mcp(
        &r,
        "call",
        serde_json::json!({"__tool": "explain", "criterion": "voids"}),
    );
    assert_eq!(out["result"]["is_error"], true, "{out}");
    assert!(out["result"]["text"]
        .as_str()
        .unwrap_or_default()
        .contains("claim-check"));
    mcp(
        &r,
        "call",
        serde_json::json!({"__tool": "claim_check", "base": base}),
    );
    let out = mcp(
        &r,
        "call",
        serde_json::json!({"__tool": "explain", "criterion": common::tag("voids").to_lowercase()}),
    );
    let e = &out["result"]["structured"];
    assert_eq!(e["schema"], "claim_check.explain.v1", "{out}");
    assert_eq!(e["disposition"], "unsatisfied");
    assert!(e["would_change"][0]
        .as_str()
        .unwrap_or_default()
        .contains("pass at head"));
    let out = mcp(
        &r,
        "call",
        serde_json::json!({"__tool": "replay", "allow_unsigned": true}),
    );
    assert_eq!(out["result"]["is_error"], false, "{out}");
    assert_eq!(
        out["result"]["structured"]["schema"], "claim_check.replay.v1",
        "{out}"
    );
    assert_eq!(out["result"]["structured"]["valid"], true, "{out}");
    // A branch of its own: init drafts from a checklist, derive from a task's text.
    r.git(&["switch", "--quiet", "-c", "receipts"]);
    let out = mcp(
        &r,
        "call",
        serde_json::json!({"__tool": "acceptance_init", "text": "- [ ] A receipt is emailed.\n"}),
    );
    assert_eq!(out["result"]["is_error"], false, "{out}");
    assert!(r.exists(".shipmoor/changes/receipts.yaml"), "{out}");
    let tags = out["result"]["structured"]["tags"].to_string();
    assert!(tags.contains("receipt"), "{tags}");
    r.remove(".shipmoor/changes/receipts.yaml");
    let out = mcp(
        &r,
        "call",
        serde_json::json!({"__tool": "acceptance_derive", "text": "Refunds\n\n- [ ] The customer is emailed a receipt.\n"}),
    );
    assert_eq!(out["result"]["is_error"], false, "{out}");
    assert!(r.exists(".shipmoor/changes/receipts.yaml.draft"), "{out}");
}

// ----------------------------------------------------------------------------------------------
// shipmoor hook
// ----------------------------------------------------------------------------------------------

/// A recorded Stop payload of `agent`, for the repository `r`.
fn payload(agent: &str, r: &Repo, active: bool) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks")
        .join(format!("{agent}-stop.json"));
    std::fs::read_to_string(path)
        .expect("payload fixture")
        .replace("@CWD@", &r.path().display().to_string())
        .replace("@ACTIVE@", if active { "true" } else { "false" })
}

/// `shipmoor hook AGENT ARGS` as an agent starts it: somewhere other than the repository (the
/// payload names it), its payload to come on stdin.
fn hook_command(r: &Repo, agent: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_shipmoor"));
    cmd.args(["hook", agent])
        .args(args)
        .current_dir(r.tmp.path())
        .env("SOURCE_DATE_EPOCH", PINNED_EPOCH)
        .env("SHIPMOOR_TMPDIR", r.tmp.path())
        .env("SHIPMOOR_SANDBOX_WRITE", r.shared.path())
        .env("SHIPMOOR_BASE_CACHE", "none")
        .env_remove("GITHUB_EVENT_PATH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Runs a hook command with `stdin` as its payload.
fn answer(mut cmd: Command, stdin: &str) -> Run {
    let mut child = cmd.spawn().expect("shipmoor hook runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    Run::from(child.wait_with_output().unwrap())
}

fn hook(r: &Repo, agent: &str, args: &[&str], stdin: &str) -> Run {
    answer(hook_command(r, agent, args), stdin)
}

/// Codex's published Stop output schema (tests/fixtures/agents/codex-schemas/README.md).
const CODEX_STOP_OUTPUT: &str =
    "tests/fixtures/agents/codex-schemas/stop.command.output.schema.json";

/// A hook's answer as both agents read it: exit 0 (the one code whose stdout either reads), and
/// stdout empty or one JSON object that Codex's Stop output schema accepts and that keeps to
/// Claude Code's contract (its common fields and `decision`/`reason`, a block with a reason).
fn agents_read(run: &Run) -> Option<Value> {
    assert_eq!(
        run.code, 0,
        "both agents read stdout only on exit 0: {run:?}"
    );
    let out = run.stdout.trim();
    if out.is_empty() {
        return None;
    }
    assert_eq!(out.lines().count(), 1, "one JSON object: {run:?}");
    common::assert_matches_schema_file(CODEX_STOP_OUTPUT, out);
    let v: Value = serde_json::from_str(out).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    let claude_code = [
        "continue",
        "stopReason",
        "suppressOutput",
        "systemMessage",
        "decision",
        "reason",
    ];
    for key in v.as_object().expect("an object").keys() {
        assert!(claude_code.contains(&key.as_str()), "{key}: {v}");
    }
    if v.get("decision").is_some() {
        assert_eq!(v["decision"], "block", "{v}");
        assert!(
            v["reason"].as_str().is_some_and(|r| !r.trim().is_empty()),
            "a block gives the agent its reason: {v}"
        );
    }
    Some(v)
}

/// The answer's `systemMessage`, for an answer that lets the agent stop.
fn message_of(run: &Run) -> String {
    let v = agents_read(run).unwrap_or_else(|| panic!("a message: {run:?}"));
    assert!(v.get("decision").is_none(), "no block: {v}");
    v["systemMessage"].as_str().unwrap_or_default().to_string()
}

#[test]
fn hook_blocks_a_blocked_change_with_the_failing_criterion_and_lets_a_ready_one_stop() {
    for agent in ["claude-code", "codex"] {
        let (r, base) = change(true);
        let run = hook(&r, agent, &["--base", &base], &payload(agent, &r, false));
        let answer = agents_read(&run).expect("one JSON answer");
        assert_eq!(answer["decision"], "block", "{run:?}");
        let reason = answer["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("BLOCKED"), "{reason}");
        assert!(
            reason.contains("voids") && reason.contains("fails at head"),
            "{reason}"
        );
        assert!(reason.contains("1 of 3"), "{reason}");
        // Only the fields both agents' Stop output allows.
        let keys: Vec<&String> = answer.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["decision", "reason"]);

        let (r, base) = change(false);
        let run = hook(&r, agent, &["--base", &base], &payload(agent, &r, false));
        assert_eq!(
            agents_read(&run),
            None,
            "READY: nothing, the agent stops: {run:?}"
        );
    }
}

/// The payload the tests send as Codex's is one Codex's published input schema accepts.
#[test]
fn the_recorded_codex_payload_is_codexs() {
    let r = Repo::new();
    for active in [false, true] {
        common::assert_matches_schema_file(
            "tests/fixtures/agents/codex-schemas/stop.command.input.schema.json",
            &payload("codex", &r, active),
        );
    }
}

#[test]
fn hook_never_holds_an_agent_in_a_loop() {
    let (r, base) = change(true);
    let args = ["--base", base.as_str(), "--max-blocks", "2"];
    let answer = |active: bool| -> Value {
        let run = hook(
            &r,
            "claude-code",
            &args,
            &payload("claude-code", &r, active),
        );
        agents_read(&run).unwrap_or_else(|| panic!("an answer: {run:?}"))
    };
    assert_eq!(answer(false)["decision"], "block");
    // The agent went on and stopped again, still BLOCKED: the second block of two.
    let second = answer(true);
    assert_eq!(second["decision"], "block");
    assert!(second["reason"].as_str().unwrap().contains("2 of 2"));
    // The third: the agent may stop, and the person is told the claim is not met.
    let third = answer(true);
    assert!(third.get("decision").is_none(), "{third}");
    let message = third["systemMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("BLOCKED") && message.contains("not met"),
        "{message}"
    );
    // A stop the agent makes of its own accord starts the count again.
    assert_eq!(answer(false)["decision"], "block");
    // Another session's count is its own.
    let other = payload("claude-code", &r, true).replace("abc123", "zzz999");
    let run = hook(&r, "claude-code", &args, &other);
    let v: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert!(
        v.get("decision").is_none(),
        "an active stop with no count of its own: {v}"
    );
}

/// Whatever keeps the hook from a verdict lets the agent stop, and tells the person why in a
/// `systemMessage` on stdout, exit 0: Codex reads nothing of a hook that exits 1 but its code.
#[test]
fn hook_without_a_verdict_lets_the_agent_stop_and_says_why() {
    let (r, base) = change(true);
    for agent in ["claude-code", "codex"] {
        for stdin in [
            "garbage",
            "",
            "{\"hook_event_name\": \"PreToolUse\"}",
            "[1, 2",
        ] {
            let run = hook(&r, agent, &["--base", &base], stdin);
            let message = message_of(&run);
            assert!(
                message.contains(&format!("shipmoor hook {agent}"))
                    && message.contains("no verdict, so the stop is not blocked"),
                "{stdin:?}: {message}"
            );
            assert!(
                message.contains("payload") || message.contains("Stop"),
                "{stdin:?}: {message}"
            );
        }
    }
    // A mistyped hook command in the agent's settings.
    let run = hook(
        &r,
        "codex",
        &["--bse", "main"],
        &payload("codex", &r, false),
    );
    let message = message_of(&run);
    assert!(
        message.contains("--bse") && message.contains("not blocked"),
        "{message}"
    );
    // A run that reaches no verdict (an unknown base): the command line's message.
    let run = hook(
        &r,
        "codex",
        &["--base", "no-such-rev"],
        &payload("codex", &r, false),
    );
    let message = message_of(&run);
    assert!(
        message.contains("no-such-rev") && message.contains("not blocked"),
        "{message}"
    );
    // A run that cannot complete (its temporary directory is missing): the hint that needs
    // claim-check's --temp-dir, which the hook does not have, is left out.
    let mut cmd = hook_command(&r, "claude-code", &["--base", &base]);
    cmd.env("SHIPMOOR_TMPDIR", r.tmp.path().join("missing"));
    let message = message_of(&answer(cmd, &payload("claude-code", &r, false)));
    assert!(
        message.contains("it does not exist") && message.contains("help: create the directory"),
        "{message}"
    );
    assert!(
        !message.contains("pass an existing writable directory"),
        "{message}"
    );
}

/// A working tree with uncommitted changes sends the agent back to commit them, as many times
/// in a row as any block, and no more; the hook then checks what was committed.
#[test]
fn hook_on_a_dirty_tree_sends_the_agent_back_to_commit_and_no_more_than_the_limit() {
    let (r, base) = change(false);
    let committed = std::fs::read_to_string(r.path().join("refund.py")).unwrap();
    r.write("refund.py", "def void(intent):\n    return 'pending'\n");
    let args = ["--base", base.as_str(), "--max-blocks", "2"];
    for agent in ["claude-code", "codex"] {
        let first =
            agents_read(&hook(&r, agent, &args, &payload(agent, &r, false))).expect("an answer");
        assert_eq!(first["decision"], "block", "{first}");
        let reason = first["reason"].as_str().unwrap();
        for part in [
            "uncommitted changes",
            "refund.py",
            "commit your changes and stop again",
            "1 of 2",
        ] {
            assert!(reason.contains(part), "{part}: {reason}");
        }
        assert!(!reason.contains("--"), "no flag the hook lacks: {reason}");
        let second =
            agents_read(&hook(&r, agent, &args, &payload(agent, &r, true))).expect("an answer");
        assert!(
            second["reason"].as_str().unwrap().contains("2 of 2"),
            "{second}"
        );
        // The limit: the agent may stop, and the person is told nothing was checked.
        let message = message_of(&hook(&r, agent, &args, &payload(agent, &r, true)));
        assert!(
            message.contains("uncommitted changes") && message.contains("not checked"),
            "{message}"
        );
    }
    // Committed (here: put back as committed), the change is checked: READY, nothing said.
    r.write("refund.py", &committed);
    let run = hook(&r, "codex", &args, &payload("codex", &r, false));
    assert_eq!(agents_read(&run), None, "{run:?}");
}

// ----------------------------------------------------------------------------------------------
// shipmoor explain
// ----------------------------------------------------------------------------------------------

#[test]
fn explain_gives_the_rule_the_evidence_and_what_would_change_it() {
    let (r, base) = change(true);
    r.shipmoor(&["claim-check", "--base", &base, "-q"]);
    let run = r.shipmoor(&["explain", "voids"]);
    assert_eq!(run.code, 0, "{run:?}");
    for part in [
        "voids (AC-VOIDS",
        "rule (tag): a test carrying the criterion's tag",
        "base fail",
        "head fail",
        "expected the PaymentIntent to be cancelled",
        "$ python3 -m pytest",
        "what would change it:",
        "pass at head",
    ] {
        assert!(run.stdout.contains(part), "{part}: {}", run.stdout);
    }
    let json = r.shipmoor(&["explain", &common::tag("voids"), "--format", "json"]);
    assert_eq!(json.code, 0, "{json:?}");
    common::assert_matches_schema("claim_check.explain.v1", &json.stdout);
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        v["tests"][0]["runs"][0]["outcome"], "fail",
        "read from the record: {v}"
    );
    let run = r.shipmoor(&["explain", "nope"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("voids (AC-VOIDS"),
        "the known ones: {run:?}"
    );
}

// ----------------------------------------------------------------------------------------------
// The change under check, as an attacker of the agent's session
// ----------------------------------------------------------------------------------------------

/// What the code under check writes into the repository's git configuration and hooks never runs
/// inside a later run's git commands (where nothing is withheld from it yet).
#[test]
fn a_planted_fsmonitor_or_git_hook_never_runs_in_a_later_run() {
    let (r, base) = change(false);
    let marker = r
        .tmp
        .path()
        .parent()
        .unwrap()
        .join(format!("cc-planted-{}", std::process::id()));
    let script = r
        .tmp
        .path()
        .parent()
        .unwrap()
        .join(format!("cc-planted-{}.sh", std::process::id()));
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho ran >> {}\n", marker.display()),
    )
    .unwrap();
    std::process::Command::new("chmod")
        .args(["+x", script.to_str().unwrap()])
        .status()
        .unwrap();
    r.git(&["config", "core.fsmonitor", script.to_str().unwrap()]);
    let hooks = r.path().join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in [
        "post-checkout",
        "reference-transaction",
        "post-index-change",
    ] {
        std::fs::copy(&script, hooks.join(hook)).unwrap();
    }
    let run = r.shipmoor(&["claim-check", "--base", &base, "-q"]);
    assert_eq!(run.code, 0, "{run:?}");
    let ran = marker.exists();
    let _ = std::fs::remove_file(&marker);
    let _ = std::fs::remove_file(&script);
    assert!(
        !ran,
        "a program the repository's git config names ran inside claim-check"
    );
}

/// A program the repository's git config still names for git to run (a filter driver, here
/// the smudge of the head commit's `.gitattributes`) runs without the job's credentials.
#[test]
fn a_planted_filter_never_sees_a_credential() {
    let (r, base) = change(false);
    let seen = r
        .tmp
        .path()
        .parent()
        .unwrap()
        .join(format!("cc-filter-env-{}", std::process::id()));
    r.write("notes.txt", "hello\n");
    r.write(".gitattributes", "*.txt filter=planted\n");
    r.commit("head, with attributes");
    r.git(&[
        "config",
        "filter.planted.smudge",
        &format!("sh -c 'env >> {}; cat'", seen.display()),
    ]);
    let run = r.shipmoor_env(
        &["claim-check", "--base", &base, "-q"],
        &[("DEPLOY_TOKEN", "hunter2-value")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let env = std::fs::read_to_string(&seen).unwrap_or_default();
    let _ = std::fs::remove_file(&seen);
    assert!(
        !env.is_empty(),
        "the filter ran (the test would prove nothing otherwise)"
    );
    assert!(
        !env.contains("hunter2-value"),
        "a credential reached a program git ran"
    );
}

#[test]
fn a_count_that_cannot_be_recorded_never_blocks() {
    let (r, base) = change(true);
    // The hook's directory for its counts is a file: nothing can be recorded there.
    let tmp = tempfile::tempdir().unwrap();
    let uid = String::from_utf8(Command::new("id").arg("-u").output().unwrap().stdout).unwrap();
    std::fs::write(
        tmp.path().join(format!("shipmoor-hook-{}", uid.trim())),
        "x",
    )
    .unwrap();
    let mut cmd = hook_command(&r, "claude-code", &["--base", &base]);
    cmd.env("TMPDIR", tmp.path());
    let run = answer(cmd, &payload("claude-code", &r, false));
    assert_eq!(run.code, 0, "{run:?}");
    let v: Value =
        serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    assert!(v.get("decision").is_none(), "an unbounded block: {v}");
    let message = v["systemMessage"].as_str().unwrap_or_default();
    assert!(
        message.contains("could not be recorded") && message.contains("not met"),
        "{message}"
    );
}

#[test]
fn a_killed_hook_stops_its_run() {
    let name = format!("h{}", std::process::id());
    let (r, base, marker) = slow_change(&name);
    let before = r.status();
    let mut cmd = hook_command(&r, "codex", &["--base", &base]);
    cmd.stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload("codex", &r, false).as_bytes())
        .unwrap();
    wait_for_start(&marker);
    // The agent's timeout: the hook is killed outright.
    child.kill().unwrap();
    let _ = child.wait();
    r.wait_for_cleanup(30);
    let _ = std::fs::remove_file(&marker);
    assert!(r.extra_worktrees().is_empty(), "{:?}", r.extra_worktrees());
    assert!(r.tmp_leftovers().is_empty(), "{:?}", r.tmp_leftovers());
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        !r.exists(".shipmoor/verify.md"),
        "the run went on for nobody"
    );
    assert_eq!(r.status(), before);
}

#[test]
fn relative_paths_are_the_hooks_own_directorys() {
    let (r, base) = change(true);
    let name = r.path().file_name().unwrap().to_str().unwrap().to_string();
    let parent = r.path().parent().unwrap();
    let acceptance = format!("{name}/.shipmoor/acceptance.yaml");
    let mut cmd = hook_command(
        &r,
        "claude-code",
        &[
            "--base",
            &base,
            "--repo",
            &name,
            "--acceptance",
            &acceptance,
        ],
    );
    cmd.current_dir(parent);
    // The agent is in a subdirectory of the repository.
    std::fs::create_dir_all(r.path().join("tests")).unwrap();
    let p = payload("claude-code", &r, false).replace(
        &r.path().display().to_string(),
        &r.path().join("tests").display().to_string(),
    );
    let run = answer(cmd, &p);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("\"decision\":\"block\""), "{run:?}");
}
