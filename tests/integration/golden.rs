//! Golden files: the terminal report, fix packet, verify.md and VSA of runs over real projects,
//! with commit ids, paths, digests and runner logs redacted: the refund example (pytest, every
//! kind of criterion), a cargo run, a Go build failure at base, the pass-to-pass and harness
//! guards, and a run signed with a committed key (its DSSE envelope, keyed bundle and replay
//! reports too). The new runs also keep their result JSON and what the Action reports of it.
//! One more run, of criteria no runner decides, keeps every digest visible: its documents, the
//! names in its evidence store and the documents' SHA-256 are the same bytes on every machine,
//! so a change in any evidence byte shows in review. Replay's reports of the committed format-1
//! attestation. And byte-identical outputs when the same inputs run twice with the clock pinned.

use crate::common;

use base64::Engine as _;
use common::{ident, require_pytest, require_tool, Repo, Run, GOLDEN_KEY, GOLDEN_PUBLIC_KEY};

/// The refund example: satisfied, unsatisfied, unbound, an optional gap and a judgment criterion.
fn refund_repo() -> (Repo, String, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    r.write("svc/__init__.py", "");
    r.write(
        "svc/refund.py",
        "def refund(order, gateway):\n    return order\n",
    );
    r.write(
        "tests/test_plain.py",
        "def test_plain():\n    assert True\n",
    );
    let base = r.commit("base");
    r.write(
        "svc/refund.py",
        "def refund(order, gateway):\n    order['status'] = 'refunded'\n    return order\n",
    );
    r.write(
        &format!("tests/test_refund_{}.py", ident("order-marked-refunded")),
        "from svc.refund import refund\n\ndef test_marks_refunded():\n    assert refund({}, None)['status'] == 'refunded'\n",
    );
    r.write(
        "tests/test_stripe_void.py",
        &format!("from svc.refund import refund\n\nclass Gateway:\n    cancelled = []\n\ndef test_void_called_{}():\n    g = Gateway()\n    refund({{'intent': 'pi_123'}}, g)\n    assert g.cancelled == ['pi_123'], 'expected PaymentIntent.cancel(pi_123)'\n", ident("refund-voids-payment-intent")),
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: refund-voids-payment-intent\n    ac: The Stripe PaymentIntent is voided.\n  - id: order-marked-refunded\n    ac: Order is marked refunded in the database.\n  - id: audit-log\n    ac: An audit log entry is written for every refund.\n    lane: judge\n  - id: refund-idempotency\n    ac: A refund cannot be issued twice for the same order.\n  - id: receipt-email\n    ac: The customer receives a receipt.\n    required: false\n",
    );
    let head = r.commit("head");
    (r, base, head)
}

/// Where the snapshots are, relative to this file: `tests/snapshots`.
const SNAPSHOTS: &str = "../snapshots";

fn settings(r: &Repo) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(SNAPSHOTS);
    s.set_prepend_module_to_snapshot(false);
    // The runs' temporary root: worktrees and build outputs, named in some runners' words.
    let tmp = r.tmp.path().canonicalize().unwrap().display().to_string();
    s.add_filter(&regex::escape(&tmp), "[TMP]");
    let repo = r.path().canonicalize().unwrap().display().to_string();
    s.add_filter(&regex::escape(&repo), "[REPO]");
    s.add_filter(&regex::escape(&r.path().display().to_string()), "[REPO]");
    // The Python that ran pytest, as the report names it: the machine's own.
    s.add_filter(
        r#"pytest [0-9][0-9A-Za-z.+-]*, Python [0-9][0-9A-Za-z.+-]* at [^ |\n"]+"#,
        "pytest [VERSION], Python [VERSION] at [PYTHON]",
    );
    s.add_filter(r"sha256:[0-9a-f]{64}", "sha256:[DIGEST]");
    s.add_filter(r"sha256:[0-9a-f]{12}…", "sha256:[SHORT]…");
    s.add_filter(r#""[0-9a-f]{64}""#, "\"[HEX]\"");
    s.add_filter(r"evidence/sha256/[0-9a-f]{64}", "evidence/sha256/[HEX]");
    // cargo's metadata hash in a test binary's name: it folds in the compiler's version.
    // verify.md breaks the long path after each `/` (`<wbr>`).
    s.add_filter(
        r"(deps/(?:<wbr>)?[A-Za-z0-9_]+)-[0-9a-f]{16}\b",
        "$1-[HASH]",
    );
    s.add_filter(r"\b[0-9a-f]{40}\b", "[COMMIT]");
    s.add_filter(r"\b[0-9a-f]{7}\b", "[SHORT_COMMIT]");
    s.add_filter(r#""shipmoor": "[0-9.]+""#, "\"shipmoor\": \"[VERSION]\"");
    s.add_filter(
        r#""tool_version": "[0-9.]+""#,
        "\"tool_version\": \"[VERSION]\"",
    );
    // What the Action makes unique per process: `GITHUB_OUTPUT` delimiters, the artifact name.
    s.add_filter(r"ghadelimiter_[0-9a-f]{16}", "ghadelimiter_[DELIM]");
    s.add_filter(r"(claim-check-1)-[0-9a-f]{8}", "$1-[UNIQUE]");
    s.add_filter(&regex::escape(env!("CARGO_MANIFEST_DIR")), "[MANIFEST_DIR]");
    // The sandbox as this machine's kernel and user give it (the ABI, what held, root or not).
    s.add_filter(
        r"Landlock ABI [0-9]+ \([^)\n]*\)",
        "Landlock ABI [ABI] ([PROTECTIONS])",
    );
    s.add_filter(r"; not enforced: [^\n|]*?( at head and base|\n|$)", "$1");
    s.add_filter(r#""landlock_abi": [0-9]+"#, "\"landlock_abi\": [ABI]");
    s.add_filter(r#""as_root": (true|false)"#, "\"as_root\": [AS_ROOT]");
    s.add_filter(
        r#"(?s)"(protections|not_enforced)": \[[^\]]*\]"#,
        "\"$1\": [...]",
    );
    // Log excerpts are the runner's own words, which change with its version.
    s.add_filter(r"(?s)```\n.*?```", "```\n[EXCERPT]\n```");
    s.add_filter(
        r#""excerpt": "(?:[^"\\]|\\.)*""#,
        "\"excerpt\": \"[EXCERPT]\"",
    );
    s
}

#[test]
fn reports_of_one_run() {
    let (r, base, _head) = refund_repo();
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    let s = settings(&r);
    s.bind(|| {
        insta::assert_snapshot!("refund_terminal", run.stdout);
        insta::assert_snapshot!("refund_fixes", r.read(".shipmoor/claim-check.fixes.json"));
        insta::assert_snapshot!("refund_verify_md", r.read(".shipmoor/verify.md"));
        insta::assert_snapshot!("refund_vsa", r.read(".shipmoor/claim-check.vsa.json"));
    });
    let md = r.read(".shipmoor/verify.md");
    assert!(shipmoor::report::verify_md::body_lines(&md) <= 120);
}

#[test]
fn the_same_inputs_give_byte_identical_fix_packet_and_vsa() {
    let (r, base, _) = refund_repo();
    let first = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(first.code, 1, "{first:?}");
    let fixes = r.read(".shipmoor/claim-check.fixes.json");
    let vsa = r.read(".shipmoor/claim-check.vsa.json");
    let md = r.read(".shipmoor/verify.md");
    let second = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(second.code, 1, "{second:?}");
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(fixes, r.read(".shipmoor/claim-check.fixes.json"));
    assert_eq!(vsa, r.read(".shipmoor/claim-check.vsa.json"));
    assert_eq!(md, r.read(".shipmoor/verify.md"));
}

#[test]
fn verify_md_stays_within_its_line_budget_with_many_criteria() {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("tests/test_a.py", "def test_a():\n    assert True\n");
    let base = r.commit("base");
    let mut body = String::from("version: 1\ncriteria:\n");
    for i in 0..40 {
        body.push_str(&format!(
            "  - id: criterion-{i}\n    ac: Criterion number {i} holds.\n"
        ));
    }
    r.write(".shipmoor/acceptance.yaml", &body);
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 4, "{run:?}");
    let md = r.read(".shipmoor/verify.md");
    assert!(shipmoor::report::verify_md::body_lines(&md) <= 120, "{md}");
    assert_eq!(md.matches("#### Verification Claim:").count(), 40);
    assert!(md.trim_end().ends_with("<!-- /section:deferred -->"));
}

/// Where the new goldens' runs write their result JSON (`--result-out`), which the Action reads.
const RESULT: &str = ".shipmoor/claim-check.result.json";

/// `shipmoor claim-check --base BASE --result-out RESULT EXTRA…`.
fn claim_check(r: &Repo, base: &str, extra: &[&str]) -> Run {
    let mut args = vec!["claim-check", "--base", base, "--result-out", RESULT];
    args.extend(extra);
    r.shipmoor(&args)
}

/// What `shipmoor action report` makes of the run's result JSON: its step outputs, then the
/// job summary (built from the result, see `report::github`), then its annotations.
fn action_report(r: &Repo, exit_code: i32) -> String {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("output");
    let summary = dir.path().join("summary");
    let run = r.shipmoor_env(
        &[
            "action",
            "report",
            "--result",
            RESULT,
            "--exit-code",
            &exit_code.to_string(),
        ],
        &[
            ("GITHUB_OUTPUT", output.to_str().unwrap()),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ("GITHUB_JOB", "claim-check"),
            ("GITHUB_RUN_ATTEMPT", "1"),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let summary = std::fs::read_to_string(summary).unwrap();
    format!(
        "--- GITHUB_OUTPUT\n{}--- GITHUB_STEP_SUMMARY\n{summary}--- annotations\n{}",
        std::fs::read_to_string(output).unwrap(),
        run.stdout
    )
}

/// The terminal report, fix packet, verify.md, VSA and result JSON of `run` and what the Action
/// reports of it, redacted by [`settings`], as `<name>_terminal`, `<name>_fixes`,
/// `<name>_verify_md`, `<name>_vsa`, `<name>_result` and `<name>_action`.
fn assert_reports(name: &str, r: &Repo, run: &Run) {
    let action = action_report(r, run.code);
    common::assert_matches_schema("claim_check.run.v1", &r.read(RESULT));
    settings(r).bind(|| {
        insta::assert_snapshot!(format!("{name}_terminal"), run.stdout);
        insta::assert_snapshot!(
            format!("{name}_fixes"),
            r.read(".shipmoor/claim-check.fixes.json")
        );
        insta::assert_snapshot!(format!("{name}_verify_md"), r.read(".shipmoor/verify.md"));
        insta::assert_snapshot!(
            format!("{name}_vsa"),
            r.read(".shipmoor/claim-check.vsa.json")
        );
        insta::assert_snapshot!(format!("{name}_result"), r.read(RESULT));
        insta::assert_snapshot!(format!("{name}_action"), action);
    });
}

// ----------------------------------------------------------------------------------------------
// cargo test
// ----------------------------------------------------------------------------------------------

const CLAMP_BASE: &str = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    let _ = hi;\n    if x < lo { lo } else { x }\n}\n";
const CLAMP_HEAD: &str = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else if x > hi { hi } else { x }\n}\n";

/// A crate whose new integration test, tagged, fails at base by its assertion and passes at
/// head; a second required criterion has no test (unbound), so the run is INCONCLUSIVE.
#[test]
fn a_cargo_run() {
    require_tool("cargo", &["--version"], "install Rust with rustup");
    let r = Repo::new();
    r.write(
        "Cargo.toml",
        "[package]\nname = \"clamp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    r.write(".gitignore", "/target\n");
    r.write("src/lib.rs", CLAMP_BASE);
    let base = r.commit("base");
    r.write("src/lib.rs", CLAMP_HEAD);
    r.write(
        &format!("tests/clamp_{}.rs", ident("clamps-high")),
        "#[test]\nfn clamps_high() {\n    assert_eq!(clamp::clamp(50, 0, 10), 10);\n}\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: clamps-high\n    ac: Values above the range are clamped to its top.\n  - id: clamps-nan\n    ac: A range given upside down is refused.\n",
    );
    r.commit("head");
    let run = claim_check(&r, &base, &[]);
    assert_eq!(run.code, 4, "{run:?}");
    assert_reports("cargo", &r, &run);
}

// ----------------------------------------------------------------------------------------------
// go test
// ----------------------------------------------------------------------------------------------

/// Attribution on Go (book: floor/attribution.md): the new test file calls a function that exists only at head, so base does
/// not build. The error lies in one test's body, which fails at base (a build failure in the
/// test); its neighbour in the same file never ran at base and is not observed.
#[test]
fn a_go_build_failure_at_base() {
    require_tool("go", &["version"], "apt-get install golang-go");
    let (r, base) = common::go_build_failure_at_base();
    let run = r.shipmoor_go(&["claim-check", "--base", &base, "--result-out", RESULT]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_reports("go_build_failure", &r, &run);
    // `go test -json` stamps every event with the wall clock: masked, a second run of the same
    // inputs cites the same evidence, so the statement is byte-identical.
    let vsa = r.read(".shipmoor/claim-check.vsa.json");
    let again = r.shipmoor_go(&["claim-check", "--base", &base]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(vsa, r.read(".shipmoor/claim-check.vsa.json"));
}

// ----------------------------------------------------------------------------------------------
// The pass-to-pass guard and the harness guard
// ----------------------------------------------------------------------------------------------

/// The shared settings keep inherited criteria and one more test file as regression guards
/// (book: claims.md); the change meets its own criterion, breaks the guarded test, and adds a
/// `conftest.py` (book: floor/harness.md) that governs its second criterion's test, which reads undecided.
#[test]
fn the_pass_to_pass_and_harness_guards() {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    r.write("svc/__init__.py", "");
    r.write("svc/refund.py", "def refund(order):\n    order['status'] = 'refunded'\n    return order\n\ndef is_refunded(order):\n    return order.get('status') == 'refunded'\n");
    r.write(
        "svc/limits.py",
        "def limit():\n    return 0\n\ndef receipt():\n    return None\n",
    );
    r.write(
        "tests/test_plain.py",
        "def test_plain():\n    assert True\n",
    );
    r.write(
        "tests/test_kept.py",
        "from svc.refund import is_refunded\n\ndef test_new_orders_are_not_refunded():\n    assert not is_refunded({})\n",
    );
    // An earlier change's criterion, met at base: inherited, and kept as a guard.
    r.write(
        &format!("tests/test_refund_{}.py", ident("order-refunded")),
        "from svc.refund import refund\n\ndef test_refunded():\n    assert refund({})['status'] == 'refunded'\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: order-refunded\n    ac: Order is marked refunded.\n",
    );
    r.write(
        ".shipmoor/config.yaml",
        "version: 1\ninherited: guard\nguard: [\"tests/test_kept.py::*\"]\n",
    );
    let base = r.commit("base");
    // The change: the limit is met, but every order now reads refunded.
    r.write("svc/refund.py", "def refund(order):\n    order['status'] = 'refunded'\n    return order\n\ndef is_refunded(order):\n    return True\n");
    r.write(
        "svc/limits.py",
        "def limit():\n    return 10\n\ndef receipt():\n    return 'sent'\n",
    );
    r.write(
        &format!("tests/test_limit_{}.py", ident("limit-is-ten")),
        "from svc.limits import limit\n\ndef test_limit():\n    assert limit() == 10\n",
    );
    r.write(
        "tests/receipts/conftest.py",
        "import pytest\n\n@pytest.fixture\ndef order():\n    return {}\n",
    );
    r.write(
        &format!("tests/receipts/test_{}.py", ident("receipt-sent")),
        "from svc.limits import receipt\n\ndef test_receipt(order):\n    assert receipt() == 'sent'\n",
    );
    r.write(
        ".shipmoor/changes/limits.yaml",
        "version: 1\ncriteria:\n  - id: limit-is-ten\n    ac: The limit is ten.\n  - id: receipt-sent\n    ac: A receipt is sent.\n",
    );
    r.commit("head");
    let run = claim_check(&r, &base, &[]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_reports("guards", &r, &run);
    // `replay --rerun` runs the floor again, the guard with it, and gets the recorded outcomes.
    let rerun = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--rerun",
    ]);
    assert_eq!(rerun.code, 0, "{rerun:?}");
    settings(&r).bind(|| insta::assert_snapshot!("guards_replay_rerun", rerun.stdout));
}

// ----------------------------------------------------------------------------------------------
// Criteria no runner decides: the digests can stay visible
// ----------------------------------------------------------------------------------------------

/// A change whose criteria no test runner decides: a `check.command` (a `sh -c` script that
/// prints its worktree, which the evidence must record as `$WORKTREE`), a `check.pattern`, an
/// optional unbound criterion, an optional judgment criterion and another optional one. Nothing
/// in it depends on the machine: the dates are pinned, the repository is named by a fixed
/// `origin`, and no runner's version appears in any log.
fn no_runner_repo() -> (Repo, String) {
    let r = Repo::new();
    r.git(&[
        "remote",
        "set-url",
        "origin",
        "https://example.com/shipmoor/golden.git",
    ]);
    r.write("limits.txt", "limit = 0\n");
    r.write("svc/refund.txt", "refund: keep the intent\n");
    let base = r.commit("base");
    r.write("limits.txt", "limit = 10\n");
    r.write("svc/refund.txt", "refund: PaymentIntent.cancel(intent)\n");
    r.write(
        "checks/limit.sh",
        "echo \"checking limits.txt in $PWD\"\ncat limits.txt >&2\ngrep -q 'limit = 10' limits.txt\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: limit-is-ten\n    ac: The limit is ten.\n    check:\n      command: sh checks/limit.sh\n  - id: refund-voids-intent\n    ac: A refund voids the payment intent.\n    check:\n      pattern:\n        paths: [\"svc/**\"]\n        regex: \"PaymentIntent\\\\.cancel\"\n  - id: refund-idempotency\n    ac: A refund cannot be issued twice.\n    required: false\n  - id: audit-log\n    ac: An audit log entry is written for every refund.\n    lane: judge\n    required: false\n  - id: receipt-email\n    ac: The customer receives a receipt.\n    required: false\n",
    );
    r.commit("head");
    (r, base)
}

/// A document with the tool's version as `[VERSION]`: the one thing in these outputs that is
/// not fixed by the inputs (it changes with each release, not with the machine).
fn without_version(doc: &str) -> String {
    let version = env!("CARGO_PKG_VERSION");
    doc.replace(
        &format!("\"shipmoor\": \"{version}\""),
        "\"shipmoor\": \"[VERSION]\"",
    )
    .replace(
        &format!("\"tool_version\": \"{version}\""),
        "\"tool_version\": \"[VERSION]\"",
    )
}

const DOCUMENTS: [&str; 4] = [
    ".shipmoor/claim-check.fixes.json",
    ".shipmoor/verify.md",
    ".shipmoor/claim-check.vsa.json",
    RESULT,
];

/// The names in the evidence store, then the SHA-256 of each document and of the result JSON
/// (with the version as `[VERSION]`).
fn evidence_and_digests(r: &Repo) -> String {
    let mut names: Vec<String> = std::fs::read_dir(r.path().join(".shipmoor/evidence/sha256"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = String::from("evidence store (.shipmoor/evidence/sha256/):\n");
    for n in names {
        out.push_str(&format!("  {n}\n"));
    }
    out.push_str("documents (sha256, the tool version as [VERSION]):\n");
    for doc in DOCUMENTS {
        let hex = shipmoor::evidence::sha256_hex(without_version(&r.read(doc)).as_bytes());
        out.push_str(&format!("  {hex}  {doc}\n"));
    }
    out
}

/// The documents of a run with nothing redacted but the tool's version: commit ids, evidence
/// pointers and document digests show, so a change in any evidence byte shows in review. A
/// second repository of the same inputs, in another temporary directory, gives the same bytes:
/// nothing in them depends on where the run happened.
#[test]
fn digests_stay_visible_under_the_pinned_clock() {
    let (r, base) = no_runner_repo();
    // The sandbox is recorded as this machine's kernel gives it; off, it is the same everywhere,
    // and so are the digests.
    let run = claim_check(&r, &base, &["--sandbox", "off"]);
    assert_eq!(run.code, 0, "{run:?}");
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(SNAPSHOTS);
    s.set_prepend_module_to_snapshot(false);
    s.bind(|| {
        insta::assert_snapshot!("digests_terminal", run.stdout);
        insta::assert_snapshot!("digests_fixes", r.read(".shipmoor/claim-check.fixes.json"));
        insta::assert_snapshot!("digests_verify_md", r.read(".shipmoor/verify.md"));
        insta::assert_snapshot!(
            "digests_vsa",
            without_version(&r.read(".shipmoor/claim-check.vsa.json"))
        );
        insta::assert_snapshot!("digests_result", without_version(&r.read(RESULT)));
        insta::assert_snapshot!("digests_evidence", evidence_and_digests(&r));
    });
    let rerun = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--rerun",
        "--format",
        "json",
    ]);
    assert_eq!(rerun.code, 0, "{rerun:?}");
    common::assert_matches_schema("claim_check.replay.v1", &rerun.stdout);
    s.bind(|| insta::assert_snapshot!("digests_replay_rerun_json", rerun.stdout));

    let (again, base_again) = no_runner_repo();
    assert_eq!(base_again, base);
    assert_ne!(again.path(), r.path());
    let second = claim_check(&again, &base_again, &["--sandbox", "off"]);
    assert_eq!(second.stdout, run.stdout);
    for doc in DOCUMENTS {
        assert_eq!(again.read(doc), r.read(doc), "{doc}");
    }
    assert_eq!(evidence_and_digests(&again), evidence_and_digests(&r));
}

/// Signed with the committed Ed25519 key: the reports, the envelope and the keyed bundle. The
/// envelope's payload is the VSA's bytes exactly (asserted, then shown as a marker); its keyid
/// and signature stay visible, so a changed byte of the statement changes the signature here
/// (the statement records the tool's version, so a release changes the signature too). Both
/// forms replay with the committed public key.
#[test]
fn a_keyed_signature() {
    let (r, base) = no_runner_repo();
    // Off: the signature covers the sandbox's record, which is this machine's kernel's.
    let run = claim_check(
        &r,
        &base,
        &["--sign", "key", "--key", GOLDEN_KEY, "--sandbox", "off"],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_reports("keyed", &r, &run);

    let vsa = r.read(".shipmoor/claim-check.vsa.json");
    let mut envelope = r.json(".shipmoor/claim-check.vsa.dsse.json");
    let payload = base64::engine::general_purpose::STANDARD
        .decode(envelope["payload"].as_str().unwrap())
        .unwrap();
    assert_eq!(String::from_utf8(payload).unwrap(), vsa);
    let mut bundle = r.json(".shipmoor/claim-check.vsa.sigstore.json");
    assert_eq!(bundle["dsseEnvelope"], envelope);
    let marker: serde_json::Value = "[the bytes of claim-check.vsa.json, base64]".into();
    envelope["payload"] = marker.clone();
    bundle["dsseEnvelope"]["payload"] = marker;
    settings(&r).bind(|| {
        insta::assert_snapshot!(
            "keyed_dsse",
            serde_json::to_string_pretty(&envelope).unwrap()
        );
        insta::assert_snapshot!(
            "keyed_bundle",
            serde_json::to_string_pretty(&bundle).unwrap()
        );
    });

    // Replay's own reports of both forms, as a person and as JSON.
    for (form, file) in [
        ("dsse", ".shipmoor/claim-check.vsa.dsse.json"),
        ("bundle", ".shipmoor/claim-check.vsa.sigstore.json"),
    ] {
        let replay = r.shipmoor(&["replay", file, "--key", GOLDEN_PUBLIC_KEY]);
        assert_eq!(replay.code, 0, "{file}: {replay:?}");
        assert!(replay.stdout.starts_with("Replay  VALID"), "{replay:?}");
        let json = r.shipmoor(&[
            "replay",
            file,
            "--key",
            GOLDEN_PUBLIC_KEY,
            "--format",
            "json",
        ]);
        assert_eq!(json.code, 0, "{file}: {json:?}");
        common::assert_matches_schema("claim_check.replay.v1", &json.stdout);
        settings(&r).bind(|| {
            insta::assert_snapshot!(format!("keyed_replay_{form}"), replay.stdout);
            insta::assert_snapshot!(format!("keyed_replay_{form}_json"), json.stdout);
        });
    }
}

/// Replay's reports of the committed format-1 attestation, as a person and as JSON: an old
/// statement is read the same way however the readers are built.
#[test]
fn the_replay_of_a_format_1_attestation() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/format-1"
    );
    let replay = |format: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_shipmoor"))
            .args([
                "replay",
                "claim-check.vsa.json",
                "--allow-unsigned",
                "--commit",
                "fbac99915b71a5f8645bf21e20c54f0cfb18a1cb",
                "--evidence",
                "evidence",
                "--format",
                format,
            ])
            .current_dir(fixture)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let run = Run::from(out);
        assert_eq!(run.code, 0, "{run:?}");
        if format == "json" {
            common::assert_matches_schema("claim_check.replay.v1", &run.stdout);
        }
        run.stdout
    };
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(SNAPSHOTS);
    s.set_prepend_module_to_snapshot(false);
    s.bind(|| {
        insta::assert_snapshot!("format_1_replay", replay("human"));
        insta::assert_snapshot!("format_1_replay_json", replay("json"));
    });
}
