//! `shipmoor claim-check` end to end against real pytest projects in real git repositories.

use crate::common;

use common::{ident, require_pytest, tag, Repo};

const SERVICE_BASE: &str =
    "def refund(order):\n    return order\n\ndef is_refunded(order):\n    return False\n";
const SERVICE_HEAD: &str = "def refund(order):\n    order['status'] = 'refunded'\n    return order\n\ndef is_refunded(order):\n    return order.get('status') == 'refunded'\n";

/// A base commit with a service and one plain test; returns (repo, base sha).
fn base_repo() -> (Repo, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    r.write("svc/__init__.py", "");
    r.write("svc/refund.py", SERVICE_BASE);
    r.write(
        "tests/test_plain.py",
        "def test_plain():\n    assert 1 + 1 == 2\n",
    );
    let base = r.commit("base");
    (r, base)
}

fn acceptance(r: &Repo, body: &str) {
    r.write(
        ".shipmoor/acceptance.yaml",
        &format!("version: 1\ncriteria:\n{body}"),
    );
}

fn refunded_test(id: &str) -> String {
    format!(
        "from svc.refund import refund\n\ndef test_marks_{}():\n    assert refund({{}})['status'] == 'refunded'\n",
        ident(id)
    )
}

#[test]
fn fail_to_pass_is_satisfied_and_ready() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    // A test file new at head: the overlay makes it run against base code, where it fails.
    r.write(
        &format!("tests/test_refund_{}.py", ident("order-refunded")),
        &refunded_test("order-refunded"),
    );
    acceptance(
        &r,
        "  - id: order-refunded\n    ac: Order is marked refunded.\n",
    );
    let head = r.commit("head");
    let before = r.status();
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .starts_with("Claim Check  READY  ·  exit 0  ·  policy v3"),
        "{run:?}"
    );
    assert!(run.stdout.contains("✓ Order is marked refunded."));
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    assert_eq!(vsa["subject"][0]["digest"]["gitCommit"], head.as_str());
    assert_eq!(vsa["predicate"]["verificationResult"], "PASSED");
    let d = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["dispositions"][0];
    assert_eq!(d["floor"]["result"], "satisfied");
    assert_eq!(d["floor"]["tests"][0]["base"], "fail");
    assert_eq!(d["floor"]["tests"][0]["head"], "pass");
    let overlay = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["overlay"];
    assert_eq!(
        overlay[0],
        format!("tests/test_refund_{}.py", ident("order-refunded"))
    );
    // The user's checkout is untouched but for the outputs, and no worktree is left behind.
    assert_eq!(strip_outputs(&r.status()), before);
    assert!(r.extra_worktrees().is_empty());
    assert!(r.tmp_leftovers().is_empty(), "{:?}", r.tmp_leftovers());
}

#[test]
fn a_tagged_test_that_already_passes_at_base_proves_nothing() {
    let (r, base) = base_repo();
    r.write(
        &format!("tests/test_math_{}.py", ident("math-works")),
        "def test_math():\n    assert 2 * 2 == 4\n",
    );
    acceptance(&r, "  - id: math-works\n    ac: Math works.\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("result: unsatisfied"), "{run:?}");
    assert!(run.stdout.contains("proves nothing"), "{run:?}");
    let fixes = r.json(".shipmoor/claim-check.fixes.json");
    assert!(fixes["fixes"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("already passes at base"));
}

#[test]
fn a_tagged_test_failing_at_head_blocks_with_a_fix_and_evidence() {
    let (r, base) = base_repo();
    r.write(&format!("tests/test_void_{}.py", ident("voids-intent")), "from svc.refund import refund\n\ndef test_void():\n    assert refund({}).get('voided'), 'PaymentIntent not voided'\n");
    acceptance(
        &r,
        "  - id: voids-intent\n    ac: The PaymentIntent is voided.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run
        .stdout
        .starts_with("Claim Check  BLOCKED  ·  exit 1  ·  policy v3"));
    let fixes = r.json(".shipmoor/claim-check.fixes.json");
    assert_eq!(fixes["schema"], "claim_check.fixes.v2");
    let fix = &fixes["fixes"][0];
    assert_eq!(fix["requirement"], "stage1.floor.voids_intent");
    assert_eq!(fix["ac"], "The PaymentIntent is voided.");
    assert_eq!(fix["evidence"]["type"], "attestation");
    let pointer = fix["evidence"]["pointer"].as_str().unwrap().to_string();
    assert!(fix["evidence"]["detail"]
        .as_str()
        .unwrap()
        .contains("failed at head"));
    // The pointer names a stored record that says what was observed, and the VSA cites it.
    let hex = pointer.strip_prefix("sha256:").unwrap();
    let record: serde_json::Value =
        serde_json::from_str(&r.read(&format!(".shipmoor/evidence/sha256/{hex}"))).unwrap();
    assert_eq!(record["outcome"], "fail");
    assert_eq!(record["side"], "head");
    let stdout_hex = record["stdout"]
        .as_str()
        .unwrap()
        .strip_prefix("sha256:")
        .unwrap()
        .to_string();
    assert!(r.exists(&format!(".shipmoor/evidence/sha256/{stdout_hex}")));
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    // Format 5 cites the evidence records in the extension; `inputAttestations` is for
    // attestations only.
    assert!(vsa["predicate"].get("inputAttestations").is_none(), "{vsa}");
    let cited: Vec<&str> = vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().strip_prefix("sha256:").unwrap())
        .collect();
    assert!(cited.contains(&hex));
    assert_eq!(vsa["predicate"]["verificationResult"], "FAILED");
    let md = r.read(".shipmoor/verify.md");
    assert!(md.contains("status: failed"));
    assert!(
        md.contains("PaymentIntent not voided"),
        "the failure excerpt is in verify.md:\n{md}"
    );
}

#[test]
fn a_required_criterion_without_a_tagged_test_is_inconclusive_with_an_author_check() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    acceptance(
        &r,
        "  - id: refund-idempotent\n    ac: A refund cannot be issued twice.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.stdout.contains("∅ A refund cannot be issued twice."));
    assert!(run.stdout.contains("tag: AC-REFUND-IDEMPOTENT-10fd"));
    let fixes = r.json(".shipmoor/claim-check.fixes.json");
    let a = &fixes["author_checks"][0];
    assert_eq!(a["tag"], "AC-REFUND-IDEMPOTENT-10fd");
    assert_eq!(a["ac"], "A refund cannot be issued twice.");
    assert_eq!(a["instruction"], "Write a test whose id or filename contains this exact tag. It must fail at the base commit and pass at the head commit.");
    assert!(fixes["fixes"].as_array().unwrap().is_empty());
}

#[test]
fn only_an_optional_criterion_open_is_ready_with_gaps() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write(
        &format!("tests/test_r_{}.py", ident("order-refunded")),
        &refunded_test("order-refunded"),
    );
    acceptance(&r, "  - id: order-refunded\n    ac: Order is marked refunded.\n  - id: receipt-email\n    ac: A receipt is emailed.\n    required: false\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .starts_with("Claim Check  READY WITH GAPS  ·  exit 0"),
        "{run:?}"
    );
    let md = r.read(".shipmoor/verify.md");
    assert!(md.contains("| route_to | `follow-up` |"), "{md}");
    assert!(md.contains("status: passed"));
}

#[test]
fn a_draft_acceptance_set_that_would_be_ready_is_inconclusive() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write(
        &format!("tests/test_r_{}.py", ident("order-refunded")),
        &refunded_test("order-refunded"),
    );
    r.write(
        ".shipmoor/acceptance.yaml.draft",
        "version: 1\ncriteria:\n  - id: order-refunded\n    ac: Order is marked refunded.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(
        run.stdout.contains(
            "rule draft-gate: acceptance set is a draft; commit it as .shipmoor/acceptance.yaml"
        ),
        "{run:?}"
    );
    assert!(run.stdout.contains("✓ Order is marked refunded."));
}

#[test]
fn a_filter_that_matches_no_test_is_never_a_pass() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    acceptance(&r, "  - id: order-refunded\n    ac: Order is marked refunded.\n    check:\n      test: tests/test_missing.py::test_nothing\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("names no test at head"), "{run:?}");
    assert!(!run.stdout.contains("did you mean"), "{run:?}");
}

/// A `check.test` with a typo says which listed test it most likely meant, in the report and
/// the fix packet.
#[test]
fn a_check_test_that_names_no_test_suggests_the_nearest_at_head() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write(
        "tests/test_refund.py",
        "from svc.refund import refund\n\ndef test_marks_order():\n    assert refund({})['status'] == 'refunded'\n",
    );
    acceptance(&r, "  - id: order-refunded\n    ac: Order is marked refunded.\n    check:\n      test: tests/test_refund.py::test_mark_order\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    let fixes = r.read(".shipmoor/claim-check.fixes.json");
    for out in [&run.stdout, &fixes] {
        assert!(out.contains("names no test at head"), "{out}");
        assert!(
            out.contains("did you mean `tests/test_refund.py::test_marks_order`?"),
            "{out}"
        );
    }
}

#[test]
fn a_skipped_tagged_test_is_not_a_pass() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write(&format!("tests/test_s_{}.py", ident("order-refunded")), "import pytest\n\n@pytest.mark.skip(reason='later')\ndef test_skipped():\n    assert True\n");
    acceptance(
        &r,
        "  - id: order-refunded\n    ac: Order is marked refunded.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("not observed passing at head"),
        "{run:?}"
    );
}

#[test]
fn explicit_test_command_and_pattern_checks() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write("tests/test_named.py", "from svc.refund import is_refunded, refund\n\ndef test_is_refunded():\n    assert is_refunded(refund({}))\n");
    r.write(
        "scripts/check.sh",
        "#!/bin/sh\ngrep -q \"'refunded'\" svc/refund.py\n",
    );
    acceptance(
        &r,
        "  - id: by-test\n    ac: Refunded orders read as refunded.\n    check:\n      test: tests/test_named.py::test_is_refunded\n  - id: by-command\n    ac: The service sets the refunded status.\n    check:\n      command: sh scripts/check.sh\n  - id: by-pattern\n    ac: The status is written.\n    check:\n      pattern:\n        paths: [\"svc/**\"]\n        regex: \"order\\\\['status'\\\\] = \"\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("json on stdout");
    let results: Vec<(&str, &str)> = v["result"]["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                c["floor"]["result"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("by-test", "satisfied"),
            ("by-command", "satisfied"),
            ("by-pattern", "satisfied")
        ],
        "{run:?}"
    );
    assert_eq!(v["result"]["verdict"], "READY");
    assert_eq!(v["fixes"]["schema"], "claim_check.fixes.v2");
}

#[test]
fn runs_k_times_and_a_flaky_test_is_undecided() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    // Fails every other run, at either side: a counter kept outside the worktrees.
    let counter = r.shared.path().join("cc-flaky");
    r.write(
        &format!("tests/test_f_{}.py", ident("order-refunded")),
        &format!("import os\n\ndef test_flaky():\n    p = {:?}\n    n = int(open(p).read()) if os.path.exists(p) else 0\n    open(p, 'w').write(str(n + 1))\n    assert n % 2 == 0\n", counter.display().to_string()),
    );
    acceptance(
        &r,
        "  - id: order-refunded\n    ac: Order is marked refunded.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--runs", "2"]);
    let _ = std::fs::remove_file(&counter);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.stdout.contains("result: undecided"), "{run:?}");
    // With the counts, to read against --runs: the head side runs first, pass then fail.
    assert!(run.stdout.contains("flaky: bound test"), "{run:?}");
    assert!(run.stdout.contains("passed 1 of 2 at head"), "{run:?}");
}

/// Status lines minus this tool's own outputs.
fn strip_outputs(status: &str) -> String {
    status
        .lines()
        .filter(|l| {
            !l.contains(".shipmoor/claim-check.")
                && !l.contains(".shipmoor/verify.md")
                && !l.contains(".shipmoor/evidence/")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn tags_print_for_each_criterion() {
    let (r, _) = base_repo();
    acceptance(
        &r,
        "  - id: refund-idempotent\n    ac: A.\n  - id: audit-log\n    ac: B.\n",
    );
    let run = r.shipmoor(&["acceptance", "tags"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "refund-idempotent  {}\naudit-log          {}\n",
            tag("refund-idempotent"),
            tag("audit-log")
        )
    );
    let lint = r.shipmoor(&["acceptance", "lint"]);
    assert_eq!(lint.code, 0, "{lint:?}");
}

#[test]
fn a_tagged_test_file_that_does_not_import_at_head_is_unsatisfied() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write(
        &format!("tests/test_r_{}.py", ident("order-refunded")),
        "from svc.refund import no_such_function\n\ndef test_x():\n    assert no_such_function()\n",
    );
    acceptance(&r, "  - id: order-refunded\n    ac: Order is marked refunded.\n  - id: other\n    ac: Something else.\n    required: false\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        v["result"]["criteria"][0]["floor"]["result"], "unsatisfied",
        "{run:?}"
    );
    assert_eq!(
        v["result"]["criteria"][1]["floor"]["result"], "unbound",
        "{run:?}"
    );
}

/// The head adds a conftest.py hook that rewrites every report to passed: the criterion must not
/// be satisfied, and the harness change is listed in every report.
#[test]
fn a_conftest_that_rewrites_reports_to_passed_is_not_trusted() {
    let (r, base) = base_repo();
    // No real fix: the tagged test really fails at head. The hook forges a pass only where the
    // change's marker is in the code, so base still fails and, unguarded, the forgery would read
    // as a fail-to-pass.
    r.write("svc/refund.py", &format!("# fixed\n{SERVICE_BASE}"));
    r.write(
        &format!("tests/test_r_{}.py", ident("order-refunded")),
        &refunded_test("order-refunded"),
    );
    r.write(
        "conftest.py",
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    report = outcome.get_result()\n    if '# fixed' in open('svc/refund.py').read():\n        report.outcome = 'passed'\n",
    );
    acceptance(
        &r,
        "  - id: order-refunded\n    ac: Order is marked refunded.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(run.stdout.contains("result: undecided"), "{run:?}");
    assert!(
        run.stdout
            .contains("harness file conftest.py (pytest conftest)"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("harness files changed: conftest.py (pytest conftest)"),
        "{run:?}"
    );
    let md = r.read(".shipmoor/verify.md");
    assert!(
        md.contains("Harness files changed: conftest.py (pytest conftest)."),
        "{md}"
    );
    // The report names the Python that ran pytest, as that Python reports itself.
    let python = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys; print(sys.version.split()[0], sys.executable)",
        ])
        .output()
        .unwrap();
    let python = String::from_utf8_lossy(&python.stdout);
    let (version, executable) = python.trim().split_once(' ').unwrap();
    assert!(
        md.contains("- pytest ran as pytest ")
            && md.contains(&format!(", Python {version} at {executable}\n")),
        "{md}"
    );
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    assert_eq!(
        vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["harness_changes"][0],
        "conftest.py (pytest conftest)"
    );

    // The report gives the YAML that allows it, to paste into the change's acceptance file.
    let (_, after) = run
        .stdout
        .split_once(
            "  if the change to the harness is meant, allow it in .shipmoor/acceptance.yaml:\n",
        )
        .unwrap_or_else(|| panic!("no YAML to paste: {run:?}"));
    let pasted: String = after
        .lines()
        .take_while(|l| l.starts_with("      "))
        .map(|l| format!("{}\n", &l[6..]))
        .collect();
    assert_eq!(
        pasted, "harness:\n  allow_changes:\n    - \"conftest.py\"\n",
        "{run:?}"
    );

    // Allowed by the acceptance set, the hook is trusted and the forged pass goes through: the
    // allowance is the user's statement that the harness change is meant.
    acceptance(
        &r,
        &format!("  - id: order-refunded\n    ac: Order is marked refunded.\n{pasted}"),
    );
    r.commit("allow the conftest");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert!(
        run.stdout.contains("allowed by harness.allow_changes"),
        "{run:?}"
    );
    // That the forgery works unguarded shows the guard above is what stopped it.
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn the_pass_to_pass_guard_catches_a_regression() {
    let (r, base) = base_repo();
    r.write("tests/test_kept.py", "from svc.refund import is_refunded\n\ndef test_new_orders_are_not_refunded():\n    assert not is_refunded({})\n");
    let base2 = r.commit("a guarded test at base");
    let _ = base;
    // The change refunds orders but breaks is_refunded for new ones.
    r.write("svc/refund.py", "def refund(order):\n    order['status'] = 'refunded'\n    return order\n\ndef is_refunded(order):\n    return True\n");
    r.write(
        &format!("tests/test_r_{}.py", ident("order-refunded")),
        &refunded_test("order-refunded"),
    );
    acceptance(&r, "  - id: order-refunded\n    ac: Order is marked refunded.\nguard: [\"tests/test_kept.py::*\", \"tests/test_plain.py::*\"]\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base2, "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let c = v["result"]["criteria"].as_array().unwrap();
    assert_eq!(c[0]["floor"]["result"], "satisfied");
    assert_eq!(c[1]["requirement"], "stage1.floor.guard");
    assert_eq!(c[1]["floor"]["result"], "unsatisfied");
    assert!(c[1]["floor"]["reason"].as_str().unwrap().contains("regression: tests/test_kept.py::test_new_orders_are_not_refunded passes at base and failed at head"), "{run:?}");
    assert_eq!(v["fixes"]["fixes"][0]["requirement"], "stage1.floor.guard");
}

/// Another criterion's test that patches pytest when it is imported cannot forge this
/// criterion's result: each bound test runs in a process of its own.
#[test]
fn another_criterions_test_cannot_forge_a_pass() {
    let (r, base) = base_repo();
    // No fix: the honest test fails at head.
    r.write(
        &format!("tests/test_a_{}.py", ident("order-refunded")),
        &refunded_test("order-refunded"),
    );
    r.write("svc/marker.py", "");
    r.write(
        &format!("tests/test_b_{}.py", ident("forger")),
        "import os\nimport _pytest.python\n\nif os.path.exists('svc/marker.py'):\n    _pytest.python.Function.runtest = lambda self: None\n\ndef test_b():\n    assert True\n",
    );
    acceptance(&r, "  - id: order-refunded\n    ac: Order is marked refunded.\n  - id: forger\n    ac: Something optional.\n    required: false\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        v["result"]["criteria"][0]["floor"]["result"], "unsatisfied",
        "{run:?}"
    );
}

/// A run that rewrites tracked files in its worktree is not trusted.
#[test]
fn a_test_that_rewrites_the_checkout_is_not_trusted() {
    let (r, base) = base_repo();
    r.write(
        &format!("tests/test_a_{}.py", ident("order-refunded")),
        "import pathlib\nfrom svc import refund as m\n\ndef test_rewrites():\n    p = pathlib.Path(m.__file__)\n    p.write_text(p.read_text() + '\\n# touched\\n')\n    assert 'touched' in p.read_text()\n",
    );
    r.write("svc/refund.py", SERVICE_HEAD);
    acceptance(
        &r,
        "  - id: order-refunded\n    ac: Order is marked refunded.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(
        run.stdout
            .contains("changed tracked files in a worktree (head: svc/refund.py"),
        "{run:?}"
    );
}

/// A `check.command` whose script is new at head, run through an interpreter, runs against base
/// too (the script is laid over); one that already exits 0 at base proves nothing.
#[test]
fn a_command_check_through_an_interpreter_lays_its_script_over_base() {
    let (r, base) = base_repo();
    r.write("scripts/check.py", "import sys\nsys.exit(0)\n");
    acceptance(&r, "  - id: by-command\n    ac: A command holds.\n    check:\n      command: python3 scripts/check.py --strict\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("proves nothing"), "{run:?}");
}

/// The bound tests of one file run in one pytest process per side and run, tests of different
/// files in different ones; pytest collects in that same process (no `--collect-only` per test).
#[test]
fn bound_tests_of_one_file_share_one_pytest_process_per_run() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    let (a, b, c) = ("order-refunded", "order-reported", "order-kept");
    r.write(
        "tests/test_refunds.py",
        &format!(
            "from svc.refund import refund, is_refunded\n\ndef test_marks_{}():\n    assert refund({{}})['status'] == 'refunded'\n\ndef test_reports_{}():\n    assert is_refunded(refund({{}}))\n",
            ident(a),
            ident(b)
        ),
    );
    r.write(
        "tests/test_other.py",
        &format!(
            "from svc.refund import refund\n\ndef test_keeps_{}():\n    assert refund({{'id': 1}})['id'] == 1\n",
            ident(c)
        ),
    );
    acceptance(
        &r,
        &format!("  - id: {a}\n    ac: Order is marked refunded.\n  - id: {b}\n    ac: Refund is reported.\n  - id: {c}\n    ac: The order is kept.\n    required: false\n"),
    );
    r.commit("head");
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--runs",
        "2",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let c0 = &v["result"]["criteria"];
    assert_eq!(c0[0]["floor"]["result"], "satisfied", "{run:?}");
    assert_eq!(c0[1]["floor"]["result"], "satisfied", "{run:?}");
    // Passes at base too: proves nothing, whatever its neighbours in other files do.
    assert_eq!(c0[2]["floor"]["result"], "unsatisfied", "{run:?}");
    assert!(
        c0[2]["floor"]["reason"]
            .as_str()
            .unwrap()
            .contains("proves nothing"),
        "{run:?}"
    );
    let rows = v["result"]["runtime"].as_array().unwrap();
    let pytest_runs = |side: &str| -> Vec<(String, u64)> {
        rows.iter()
            .filter(|row| {
                row["runner"] == "pytest" && row["side"].as_str().unwrap().starts_with(side)
            })
            .map(|row| {
                (
                    row["command"].as_str().unwrap().to_string(),
                    row["tests"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    for side in ["head", "base"] {
        let runs = pytest_runs(side);
        let test_runs: Vec<&(String, u64)> = runs
            .iter()
            .filter(|(cmd, _)| cmd.contains("--junitxml"))
            .collect();
        // Two files, two runs each: four processes, never one per test.
        assert_eq!(test_runs.len(), 4, "{side}: {runs:#?}");
        for (cmd, n) in &test_runs {
            let together = cmd.ends_with("tests/test_refunds.py");
            assert!(together || cmd.ends_with("tests/test_other.py"), "{cmd}");
            assert_eq!(*n, if together { 2 } else { 1 }, "{cmd}");
        }
        // The only other pytest process is head's one listing.
        let collects = runs
            .iter()
            .filter(|(cmd, _)| cmd.contains("--collect-only"))
            .count();
        assert_eq!(collects, usize::from(side == "head"), "{side}: {runs:#?}");
    }
}

/// Attribution end to end (book: floor/attribution.md): a test file new at head imports a name base does not have. The import
/// fails at base for the whole file, but it is only the failure of the tests that use that name;
/// a test in a file of its own that reaches the new behaviour through a module import and a
/// call in its body fails at base with an exception, a plain failure.
#[test]
fn an_import_failure_at_base_counts_only_for_the_tests_that_use_the_name() {
    let (r, base) = base_repo();
    r.write(
        "svc/refund.py",
        &format!("{SERVICE_HEAD}\ndef refund_twice(order):\n    return refund(refund(order))\n"),
    );
    let (trivial, uses, calls) = ("trivial-test", "uses-the-import", "calls-in-body");
    r.write(
        "tests/test_mixed.py",
        &format!(
            "from svc.refund import is_refunded, refund_twice\n\n\
             def test_{}():\n    assert not is_refunded({{}})\n\n\
             def test_{}():\n    assert refund_twice({{}})['status'] == 'refunded'\n",
            ident(trivial),
            ident(uses),
        ),
    );
    r.write(
        "tests/test_body.py",
        &format!(
            "import svc.refund\n\n\
             def test_{}():\n    assert svc.refund.refund_twice({{}})['status'] == 'refunded'\n",
            ident(calls)
        ),
    );
    acceptance(
        &r,
        &format!(
            "  - id: {trivial}\n    ac: A new order is not refunded.\n    required: false\n\
             \x20 - id: {uses}\n    ac: Refunding twice is refunded.\n\
             \x20 - id: {calls}\n    ac: A refunded order says so.\n"
        ),
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    let v: serde_json::Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    let floor = |i: usize| v["result"]["criteria"][i]["floor"].clone();
    // The trivial test never used `refund_twice`: it was never observed at base.
    assert_eq!(floor(0)["result"], "undecided", "{}", floor(0));
    let reason = floor(0)["reason"].as_str().unwrap_or_default().to_string();
    assert!(reason.contains("never observed at base"), "{reason}");
    assert!(reason.contains("tests/test_mixed.py:1"), "{reason}");
    // The test that uses the failing import fails at base in its own import.
    assert_eq!(floor(1)["result"], "satisfied", "{}", floor(1));
    assert_eq!(
        floor(1)["tests"][0]["base_failure"],
        "build_failure_in_test"
    );
    // Through a module import and a call in the body: an exception at base.
    assert_eq!(floor(2)["result"], "satisfied", "{}", floor(2));
    assert_eq!(floor(2)["tests"][0]["base_failure"], "exception");
    // Only the optional criterion is open.
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(v["result"]["verdict"], "READY WITH GAPS", "{}", v["result"]);
}

/// Run from a subdirectory: relative output flags resolve against the current directory, the
/// footer names every output by a path that exists from there, and `replay` of a VSA written
/// elsewhere finds the evidence where claim-check wrote it.
#[test]
fn output_paths_and_the_footer_are_from_where_the_user_stands() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write(
        &format!("tests/test_r_{}.py", ident("order-refunded")),
        &refunded_test("order-refunded"),
    );
    acceptance(
        &r,
        "  - id: order-refunded\n    ac: Order is marked refunded.\n",
    );
    r.commit("head");
    let cwd = r.path().join("svc");
    let shipmoor = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_shipmoor"))
            .args(args)
            .current_dir(&cwd)
            .env("SOURCE_DATE_EPOCH", "1700000000")
            .env("SHIPMOOR_TMPDIR", r.tmp.path())
            .env("SHIPMOOR_SANDBOX_WRITE", r.shared.path())
            .env("NO_COLOR", "1")
            .env_remove("GITHUB_EVENT_PATH")
            .output()
            .unwrap();
        common::Run::from(out)
    };
    let run = shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("fix packet: ../.shipmoor/claim-check.fixes.json · report: ../.shipmoor/verify.md · VSA: ../.shipmoor/claim-check.vsa.json"),
        "{run:?}"
    );
    // The documents keep the repository-relative names the Action resolves from --repo.
    let result: serde_json::Value = serde_json::from_str(
        &shipmoor(&["claim-check", "--base", &base, "--format", "json"]).stdout,
    )
    .unwrap();
    assert_eq!(
        result["result"]["outputs"]["vsa"], ".shipmoor/claim-check.vsa.json",
        "{result}"
    );

    let run = shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--vsa-out",
        "out/vsa.json",
        "--fixes-out",
        "out/fixes.json",
        "--report-out",
        "out/verify.md",
        "--result-out",
        "out/result.json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("fix packet: out/fixes.json · report: out/verify.md · VSA: out/vsa.json"),
        "{run:?}"
    );
    for f in ["vsa.json", "fixes.json", "verify.md", "result.json"] {
        assert!(cwd.join("out").join(f).is_file(), "{f}");
        assert!(
            !r.exists(&format!("out/{f}")),
            "{f} went to the repository root"
        );
    }
    // The VSA is away from the evidence, which stayed in the repository's store.
    assert!(!cwd.join("out/evidence").exists());
    let replay = shipmoor(&["replay", "out/vsa.json", "--allow-unsigned"]);
    assert_eq!(replay.code, 0, "{replay:?}");
    assert!(replay.stdout.contains("4 evidence   ok"), "{replay:?}");
}

/// The same inputs twice, with the clock pinned: the reason of a base import failure quotes
/// Python's message, whose path names the base worktree's temporary directory. Every path the
/// floor shows is relative to the repository, so the reasons, the fix packet, `verify.md` and
/// the attestation are byte-identical across runs.
#[test]
fn a_base_import_failure_reads_the_same_on_every_run() {
    let (r, base) = base_repo();
    r.write(
        "svc/refund.py",
        &format!("{SERVICE_HEAD}\ndef refund_twice(order):\n    return refund(refund(order))\n"),
    );
    let trivial = "trivial-test";
    r.write(
        "tests/test_mixed.py",
        &format!(
            "from svc.refund import is_refunded, refund_twice\n\n\
             def test_{}():\n    assert not is_refunded({{}})\n",
            ident(trivial),
        ),
    );
    acceptance(
        &r,
        &format!("  - id: {trivial}\n    ac: A new order is not refunded.\n"),
    );
    r.commit("head");
    let outputs = |r: &Repo| -> Vec<(String, String)> {
        let run = r.shipmoor(&["claim-check", "--base", &base]);
        assert_eq!(run.code, 4, "{run:?}");
        [
            ".shipmoor/claim-check.fixes.json",
            ".shipmoor/verify.md",
            ".shipmoor/claim-check.vsa.json",
        ]
        .iter()
        .map(|f| (f.to_string(), r.read(f)))
        .collect()
    };
    let first = outputs(&r);
    let fixes = &first[0].1;
    // Python's message, with the path it names made relative to the repository.
    assert!(
        fixes.contains("cannot import name 'refund_twice' from 'svc.refund' (svc/refund.py)"),
        "{fixes}"
    );
    for (file, text) in &first {
        assert!(
            !text.contains("shipmoor-") && !text.contains("$WORKTREE"),
            "{file} names the run's temporary directory:\n{text}"
        );
    }
    let second = outputs(&r);
    for ((file, a), (_, b)) in first.iter().zip(&second) {
        assert_eq!(a, b, "{file} differs between two runs of the same inputs");
    }
}

/// The code under check never sees the job's credentials: a bound test, the runner's `setup`, a
/// `check.command` and a command judge each dump the environment they got. Names that look
/// like credentials, the judge's `api_key_env` whatever its name, and `SHIPMOOR_*` are withheld;
/// `env_pass` passes a name deliberately; the report names both lists, never a value. A value
/// that leaks anyway (the test reads its parent's `/proc/<pid>/environ`) is masked in what is
/// stored and shown. The leak needs `--sandbox off` (in the sandbox the read is refused, even as
/// root: sandbox.rs), and the masking holds there too.
#[test]
fn credentials_never_reach_the_code_under_check_and_leaks_are_masked() {
    let (r, base) = base_repo();
    let dump = r.shared.path().join("env-dumps");
    std::fs::create_dir_all(&dump).unwrap();
    r.write("svc/refund.py", SERVICE_HEAD);
    let t = ident("order-refunded");
    r.write(
        &format!("tests/test_refund_{t}.py"),
        &format!(
            "import os\nfrom svc.refund import refund\n\n\
             def test_marks_{t}():\n    \
                 with open(os.environ['DUMP_DIR'] + '/test', 'w') as f:\n        \
                     f.write('\\n'.join(sorted(os.environ)))\n    \
                 # What a hostile test can still reach: its parent's environment.\n    \
                 leak = open('/proc/%d/environ' % os.getppid(), 'rb').read().split(b'\\0')\n    \
                 print([v.decode() for v in leak if v.startswith(b'AWS_SECRET_ACCESS_KEY=')])\n    \
                 assert refund({{}})['status'] == 'refunded'\n"
        ),
    );
    r.write(
        "tools/judge.sh",
        "env | cut -d= -f1 | sort > \"$DUMP_DIR/judge\"\ncat > /dev/null\necho '{\"decision\": \"abstain\", \"rationale\": \"env\"}'\n",
    );
    acceptance(
        &r,
        "  - id: order-refunded\n    ac: Order is marked refunded.\n\
         \x20 - id: checked-by-command\n    ac: The command check ran.\n    required: false\n    check:\n      command: \"env | cut -d= -f1 | sort > $DUMP_DIR/command; exit 1\"\n\
         \x20 - id: judged\n    ac: A judge looks.\n    lane: judge\n    required: false\n\
         runners:\n  - kind: pytest\n    setup: \"env | cut -d= -f1 | sort > $DUMP_DIR/setup\"\n    env_pass: [PASSED_TOKEN]\n\
         judge:\n  - { name: cmd, command: [\"sh\", \"tools/judge.sh\"] }\n  - { name: chat, url: \"http://127.0.0.1:9/v1/chat/completions\", model: m, api_key_env: ODDLY_NAMED_VARIABLE }\n",
    );
    r.commit("head");
    let secret = "s3cr3t-AKIA-value-9f8e7d";
    let secrets = [
        ("AWS_SECRET_ACCESS_KEY", secret),
        ("AWS_SESSION_TOKEN", "session-token-value"),
        ("NPM_TOKEN", "npm-token-value"),
        ("CARGO_REGISTRY_TOKEN", "cargo-token-value"),
        ("DOCKER_AUTH_CONFIG", "docker-auth-value"),
        ("OPENAI_API_KEY", "openai-key-value"),
        ("MY_SERVICE_PASSWORD", "password-value"),
        ("ODDLY_NAMED_VARIABLE", "judge-key-value"),
        ("SHIPMOOR_SIGNING_TOKEN", "shipmoor-value"),
        ("GITHUB_TOKEN", "github-token-value"),
        ("PASSED_TOKEN", "passed-on-purpose"),
    ];
    let dump_dir = dump.to_string_lossy().into_owned();
    let mut env: Vec<(&str, &str)> = secrets.to_vec();
    env.push(("DUMP_DIR", &dump_dir));
    env.push(("SHIPMOOR_SANDBOX", "off"));
    env.push(("PLAIN_SETTING", "kept"));
    let run = r.shipmoor_env(&["claim-check", "--base", &base, "--mode", "full"], &env);
    assert!(matches!(run.code, 0 | 4), "{run:?}");
    for who in ["test", "setup", "command", "judge"] {
        let names = std::fs::read_to_string(dump.join(who))
            .unwrap_or_else(|e| panic!("the {who} wrote no dump: {e}; {run:?}"));
        let names: Vec<&str> = names.lines().collect();
        for (name, _) in &secrets {
            let passed = *name == "PASSED_TOKEN" && who != "judge" && who != "command";
            assert_eq!(names.contains(name), passed, "{who} sees {name}: {names:?}");
        }
        assert!(names.contains(&"PLAIN_SETTING"), "{who}: {names:?}");
    }
    // The leaked value is masked wherever it was stored or shown.
    let mut stored = String::new();
    for e in std::fs::read_dir(r.path().join(".shipmoor/evidence/sha256")).unwrap() {
        stored.push_str(&String::from_utf8_lossy(
            &std::fs::read(e.unwrap().path()).unwrap(),
        ));
    }
    assert!(
        stored.contains("[withheld AWS_SECRET_ACCESS_KEY]"),
        "the leak was not captured"
    );
    for text in [
        stored,
        r.read(".shipmoor/verify.md"),
        run.stdout.clone(),
        run.stderr.clone(),
    ] {
        for (_, value) in &secrets {
            assert!(!text.contains(value), "a value is in the outputs: {value}");
        }
    }
    // The report names what was withheld and passed, never a value.
    let verify = r.read(".shipmoor/verify.md");
    assert!(
        verify.contains("withheld:")
            && verify.contains("AWS_SECRET_ACCESS_KEY")
            && verify.contains("ODDLY_NAMED_VARIABLE"),
        "{verify}"
    );
    assert!(
        verify.contains("passed by env_pass: PASSED_TOKEN"),
        "{verify}"
    );
}

/// A bound test that daemonizes a process of its own (a new session, so out of the test's
/// process group) to rewrite an output after the run: the floor is that process's subreaper and
/// stops it when the test's command ends, so the outputs are what the run wrote.
#[test]
fn a_process_a_test_daemonized_does_not_outlive_its_command() {
    let (r, base) = base_repo();
    r.write("svc/refund.py", SERVICE_HEAD);
    let t = ident("order-refunded");
    let target = r.path().join(".shipmoor/verify.md");
    r.write(
        &format!("tests/test_refund_{t}.py"),
        &format!(
            "import subprocess\nfrom svc.refund import refund\n\n\
             def test_marks_{t}():\n    \
                 subprocess.Popen(['sh', '-c', 'sleep 2; echo FORGED >> {}'],\n        \
                     start_new_session=True, stdin=subprocess.DEVNULL,\n        \
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n    \
                 assert refund({{}})['status'] == 'refunded'\n",
            target.display()
        ),
    );
    acceptance(
        &r,
        "  - id: order-refunded\n    ac: Order is marked refunded.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    let written = r.read(".shipmoor/verify.md");
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert_eq!(
        r.read(".shipmoor/verify.md"),
        written,
        "a process the test started rewrote the report after the run"
    );
}

/// The tagged test replaces the JUnit file pytest wrote with a symlink to a file outside the
/// repository (a signing key left on the runner): its bytes must never become evidence, and the
/// run must say why the results are unreadable rather than read through the link.
#[test]
fn a_results_file_swapped_for_a_symlink_is_never_read_through_it() {
    let (r, base) = base_repo();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("signing.key");
    std::fs::write(&secret, "-----BEGIN PRIVATE KEY-----\nSECRET-abc123\n").unwrap();
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write(
        &format!("tests/test_r_{}.py", ident("order-refunded")),
        &format!(
            "import atexit, os, sys\n\n\
             def _swap():\n    \
                 for a in sys.argv:\n        \
                     if a.startswith('--junitxml='):\n            \
                         p = a.split('=', 1)[1]\n            \
                         os.remove(p)\n            \
                         os.symlink({secret:?}, p)\n\n\
             atexit.register(_swap)\n\n{}",
            refunded_test("order-refunded")
        ),
    );
    acceptance(
        &r,
        "  - id: order-refunded\n    ac: Order is marked refunded.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_ne!(run.code, 0, "{run:?}");
    let mut stack = vec![r.path().join(".shipmoor")];
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                seen += 1;
                let bytes = std::fs::read(&path).unwrap();
                assert!(
                    !String::from_utf8_lossy(&bytes).contains("SECRET-abc123"),
                    "{} holds the file the symlink named",
                    path.display()
                );
            }
        }
    }
    assert!(seen > 3, "the run wrote its outputs: {run:?}");
    assert!(run.stdout.contains("symlink"), "{run:?}");
}
