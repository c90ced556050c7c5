//! Golden files: the terminal report, fix packet, verify.md and VSA of one run that has every
//! kind of criterion, with commit ids, paths and digests redacted; and byte-identical outputs
//! when the same inputs run twice with the clock pinned.

mod common;

use common::{ident, require_pytest, Repo};

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

fn settings(r: &Repo) -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("snapshots");
    s.set_prepend_module_to_snapshot(false);
    let repo = r.path().canonicalize().unwrap().display().to_string();
    s.add_filter(&regex::escape(&repo), "[REPO]");
    s.add_filter(&regex::escape(&r.path().display().to_string()), "[REPO]");
    s.add_filter(r"sha256:[0-9a-f]{64}", "sha256:[DIGEST]");
    s.add_filter(r"sha256:[0-9a-f]{12}…", "sha256:[SHORT]…");
    s.add_filter(r#""[0-9a-f]{64}""#, "\"[HEX]\"");
    s.add_filter(r"evidence/sha256/[0-9a-f]{64}", "evidence/sha256/[HEX]");
    s.add_filter(r"\b[0-9a-f]{40}\b", "[COMMIT]");
    s.add_filter(r"\b[0-9a-f]{7}\b", "[SHORT_COMMIT]");
    s.add_filter(r#""shipmoor": "[0-9.]+""#, "\"shipmoor\": \"[VERSION]\"");
    // Log excerpts are the runner's own words, which change with its version.
    s.add_filter(r"(?s)```\n.*?```", "```\n[EXCERPT]\n```");
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
