//! In-process benchmark of admission beside replay of the same attestation (harness = false),
//! driven by `bench/admit.sh`.
//!
//! ```text
//! cargo bench --bench admit -- --iterations N --attestation F --key PUB --evidence DIR
//!     --commit SHA --policy POLICY --subject sha256:HEX
//! ```
//!
//! After a warm-up, N calls each are timed one by one: `replay::replay` (its six steps, rerun
//! skipped; the report must be valid), `Admission::decide` with the policy loaded once (the
//! decision must be allow), the decision with the policy's Rego module left out, the module's
//! `deny` alone over the input admission gives it, and the policy's load plus the decision (what
//! one `shipmoor admit` process does besides reading its files). Prints one line per measurement
//! and the ratios.

use std::collections::BTreeMap;
mod timing;

use std::hint::black_box;
use std::path::{Path, PathBuf};

use shipmoor::admit::{policy, Admission, Candidate};
use shipmoor::replay::{self, Expectations, SignatureCheck};

fn fail(msg: &str) -> ! {
    eprintln!("admit bench: {msg}");
    std::process::exit(2);
}

/// Runs `f` a few times untimed, then `n` times each timed on its own; the median in ms.
fn median_ms(n: usize, f: impl FnMut()) -> f64 {
    timing::median_ms(n, (n / 10).clamp(1, 10), f)
}

fn main() {
    let mut args = BTreeMap::new();
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = it.next() {
        let Some(name) = a.strip_prefix("--") else {
            fail(&format!("unexpected argument `{a}`"));
        };
        let value = it
            .next()
            .unwrap_or_else(|| fail(&format!("--{name} needs a value")));
        args.insert(name.to_string(), value);
    }
    let need = |name: &str| -> String {
        args.get(name)
            .cloned()
            .unwrap_or_else(|| fail(&format!("--{name} is required")))
    };
    let n: usize = args
        .get("iterations")
        .map_or("200", String::as_str)
        .parse()
        .unwrap_or_else(|_| fail("--iterations takes a number"));
    let attestation = PathBuf::from(need("attestation"));
    let bytes = std::fs::read(&attestation)
        .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", attestation.display())));
    let evidence = PathBuf::from(need("evidence"));
    let policy_path = PathBuf::from(need("policy"));
    let subject = need("subject")
        .strip_prefix("sha256:")
        .unwrap_or_else(|| fail("--subject is sha256:HEX"))
        .to_string();
    let sig = SignatureCheck {
        key: Some(PathBuf::from(need("key"))),
        ..Default::default()
    };
    let expect = Expectations {
        commit: Some(need("commit")),
        commit_sha256: None,
        subjects: vec![],
    };

    let replay_once = || {
        let r = replay::replay(&bytes, "bench", &sig, &expect, &evidence, None);
        if !r.valid {
            fail(&format!(
                "the attestation does not replay:\n{}",
                replay::render(&r)
            ));
        }
        black_box(r);
    };
    let load = |p: &Path| policy::load(p).unwrap_or_else(|e| fail(&format!("the policy: {e}")));
    let loaded = load(&policy_path);
    let decide = |p: &policy::Policy| {
        let admission = Admission {
            policy: p,
            subject: subject.clone(),
            cli_signer: None,
            trusted_root: None,
            now: time::OffsetDateTime::now_utc(),
        };
        let d = admission.decide(
            &[Candidate {
                source: "bench".into(),
                bytes: bytes.clone(),
            }],
            None,
        );
        if !d.allowed() {
            fail(&format!("the attestation is not admitted: {:?}", d.reasons));
        }
        black_box(d);
    };

    println!("in process ({n} timed calls each, after a warm-up), median:");
    let replay_ms = median_ms(n, replay_once);
    println!("  replay (6 steps, rerun skipped)            {replay_ms:>8.3} ms");
    let decide_ms = median_ms(n, || decide(&loaded));
    println!("  admit: the decision (policy loaded once)   {decide_ms:>8.3} ms");
    let mut without_rego = load(&policy_path);
    let rego = without_rego.rego.take().map(|r| r.file);
    let plain_ms = median_ms(n, || decide(&without_rego));
    println!(
        "  admit: the decision without {:<14}  {plain_ms:>8.3} ms",
        rego.as_deref().unwrap_or("a Rego module")
    );
    // The Rego module's share: the input as admission builds it (the signed statement, the
    // signer, the subject, the age), then `deny` over it.
    if let Some(rego) = &loaded.rego {
        let attestation = shipmoor::attest::verify::Attestation::parse(&bytes)
            .unwrap_or_else(|(_, why)| fail(&format!("the attestation: {why}")));
        let statement: serde_json::Value =
            serde_json::from_slice(attestation.unverified_statement())
                .unwrap_or_else(|e| fail(&format!("the statement: {e}")));
        let input = serde_json::json!({
            "statement": statement,
            "signer": {"kind": "key"},
            "subject": {"digest": format!("sha256:{subject}"), "name": "bench"},
            "age_seconds": 0,
            "verified": true,
        });
        let deny_ms = median_ms(n, || {
            black_box(rego.deny(&input).unwrap_or_else(|e| fail(&e.to_string())));
        });
        println!(
            "  admit: {} alone (deny over the input)  {deny_ms:>8.3} ms",
            rego.file
        );
    }
    let whole_ms = median_ms(n, || decide(&load(&policy_path)));
    println!("  admit: load the policy, then decide        {whole_ms:>8.3} ms");
    println!(
        "  ratio admit/replay: {:.2}x (decision), {:.2}x (with the policy's load)",
        decide_ms / replay_ms,
        whole_ms / replay_ms
    );
}
