//! The decision over hand-made, really signed statements: allow, each deny reason on its own,
//! and tampered inputs (each denied at the signature step).

use std::path::PathBuf;

use serde_json::{json, Value};
use time::OffsetDateTime;

use super::policy::{Policy, Signer, SignerKind};
use super::*;
use crate::attest::{dsse, keyed_bundle, keys};
use crate::verdict::Verdict;

const KEY_PEM: &str = include_str!("../../tests/fixtures/keys/golden-ed25519.pem");
const PUB_PEM: &str = include_str!("../../tests/fixtures/keys/golden-ed25519.pub");
const IMAGE: &str = "7e57000000000000000000000000000000000000000000000000000000000001";

const EXT: &str = "https://shipmoor.dev/claim-check/v1";

/// A real statement (the BLOCKED run of the phase snapshots) for `IMAGE` too, verified an hour
/// before [`now`], its dispositions as the run wrote them.
fn blocked_statement() -> Value {
    let snap = include_str!("../commands/claim_check/snapshots/blocked_statement.snap");
    let body = snap.splitn(3, "---\n").nth(2).expect("snapshot body");
    let mut st: Value = serde_json::from_str(body).expect("statement JSON");
    st["predicate"]["timeVerified"] = json!("2026-11-30T11:00:00Z");
    st["subject"]
        .as_array_mut()
        .expect("subjects")
        .push(json!({"name": "registry.example/app", "digest": {"sha256": IMAGE}}));
    st
}

/// `st` stating `verdict` (its rule, `verificationResult` and level).
fn stating(mut st: Value, verdict: Verdict, rule: &str) -> Value {
    let p = &mut st["predicate"];
    p[EXT]["verdict"] = json!(verdict.as_str());
    p[EXT]["rule"] = json!(rule);
    p["verificationResult"] = json!(verdict.verification_result());
    p["verifiedLevels"] = json!(crate::attest::verified_levels(verdict, 5));
    st
}

/// The blocked statement with only its satisfied criterion kept: its dispositions fuse to the
/// READY it states.
fn ready_statement() -> Value {
    let mut st = blocked_statement();
    st["predicate"][EXT]["dispositions"]
        .as_array_mut()
        .expect("dispositions")
        .retain(|d| d["disposition"] == "satisfied");
    stating(st, Verdict::Ready, "4")
}

/// The blocked statement with every criterion but the satisfied one made optional: the gaps
/// are disclosed, and its dispositions fuse to the READY WITH GAPS it states.
fn with_gaps_statement() -> Value {
    let mut st = blocked_statement();
    for d in st["predicate"][EXT]["dispositions"]
        .as_array_mut()
        .expect("dispositions")
    {
        if d["disposition"] != "satisfied" {
            d["required"] = json!(false);
        }
    }
    with_acme_repo(stating(st, Verdict::ReadyWithGaps, "5"))
}

fn now() -> OffsetDateTime {
    OffsetDateTime::parse("2026-11-30T12:00:00Z", &Rfc3339).expect("time")
}

fn signing_key() -> keys::SigningKey {
    keys::load_signing_key(KEY_PEM, None).expect("key")
}

fn envelope(st: &Value) -> Vec<u8> {
    let payload = serde_json::to_vec(st).expect("payload");
    let env = dsse::sign(&payload, dsse::PAYLOAD_TYPE, &signing_key());
    serde_json::to_vec(&env).expect("envelope")
}

fn key_signer(verifier_ids: Option<Vec<String>>) -> Signer {
    Signer {
        who: SignerKind::Key {
            path: "claim-check.pub".into(),
            resolved: PathBuf::from("tests/fixtures/keys/golden-ed25519.pub"),
            key: keys::load_verifying_key(PUB_PEM).expect("public key"),
        },
        verifier_ids,
    }
}

fn policy() -> Policy {
    Policy {
        file: "policy.yaml".into(),
        sha256: "00".repeat(32),
        verifier_ids: vec![crate::format::statement::VERIFIER_ID.into()],
        allowed_verdicts: vec![Verdict::Ready, Verdict::ReadyWithGaps],
        floor_required: vec!["order-marked-refunded".into()],
        require_sandbox: false,
        require_isolated_signer: false,
        min_policy_version: Some(3),
        max_age_seconds: Some(7 * 86_400),
        repositories: vec!["git+https://github.com/acme/*".into()],
        verified_levels: Vec::new(),
        signers: vec![key_signer(None)],
        trusted_root: None,
        rego: None,
    }
}

fn admission(policy: &Policy) -> Admission<'_> {
    Admission {
        policy,
        subject: IMAGE.into(),
        cli_signer: None,
        trusted_root: None,
        now: now(),
    }
}

fn decide(policy: &Policy, bytes: Vec<u8>) -> Decision {
    admission(policy).decide(
        &[Candidate {
            source: "vsa.dsse.json".into(),
            bytes,
        }],
        None,
    )
}

/// The resource URI the snapshot names, so that `repositories` admits it.
fn with_acme_repo(mut st: Value) -> Value {
    let head = "2".repeat(40);
    st["predicate"]["resourceUri"] = json!(format!("git+https://github.com/acme/app@{head}"));
    // The policy file is named in the same repository, as claim-check names it.
    st["predicate"]["policy"]["uri"] = json!(format!(
        "git+https://github.com/acme/app@{head}#.shipmoor/changes/refund.yaml"
    ));
    st
}

fn allowed() -> Value {
    with_acme_repo(ready_statement())
}

/// The decision's only reason, for a deny that has exactly one.
fn only_reason(d: &Decision) -> &str {
    assert_eq!(d.decision, "deny", "{d:#?}");
    assert_eq!(d.reasons.len(), 1, "{:#?}", d.reasons);
    &d.reasons[0]
}

#[test]
fn a_ready_statement_signed_by_a_trusted_key_is_allowed() {
    let d = decide(&policy(), envelope(&allowed()));
    assert_eq!(d.decision, "allow", "{:#?}", d.reasons);
    assert!(d.reasons.is_empty());
    let a = &d.attestations[0];
    assert_eq!(a.verdict.as_deref(), Some("READY"));
    assert!(matches!(
        a.signer,
        Some(crate::attest::verify::Signer::Key { .. })
    ));
    let names: Vec<&str> = a.checks.iter().map(|c| c.name).collect();
    assert_eq!(names, CHECKS, "every check, in order");
    assert!(a.checks.iter().all(|c| c.status != CheckStatus::Failed));
}

#[test]
fn the_keyed_bundle_form_is_admitted_too() {
    let payload = serde_json::to_vec(&allowed()).unwrap();
    let env = dsse::sign(&payload, dsse::PAYLOAD_TYPE, &signing_key());
    let bundle = keyed_bundle::to_bundle(&env).unwrap();
    let d = decide(&policy(), serde_json::to_vec(&bundle).unwrap());
    assert_eq!(d.decision, "allow", "{:#?}", d.reasons);
}

#[test]
fn another_subject_is_denied() {
    let mut p = policy();
    p.floor_required.clear();
    let admission = Admission {
        subject: "9f".repeat(32),
        ..admission(&p)
    };
    let d = admission.decide(
        &[Candidate {
            source: "f".into(),
            bytes: envelope(&allowed()),
        }],
        None,
    );
    let r = only_reason(&d);
    assert!(r.starts_with("subject: sha256:9f9f"), "{r}");
}

#[test]
fn an_unknown_signer_is_denied_at_the_signature() {
    let other = keys::SigningKey::Ed25519(ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]));
    let payload = serde_json::to_vec(&allowed()).unwrap();
    let env = dsse::sign(&payload, dsse::PAYLOAD_TYPE, &other);
    let d = decide(&policy(), serde_json::to_vec(&env).unwrap());
    let r = only_reason(&d);
    assert!(
        r.starts_with("signature: not signed by a signer the policy trusts"),
        "{r}"
    );
    let a = &d.attestations[0];
    assert!(a.verdict.is_none(), "nothing unsigned is read");
    assert!(a.checks[2..]
        .iter()
        .all(|c| c.status == CheckStatus::NotRun));
}

#[test]
fn a_signer_trusted_only_for_another_verifier_is_denied() {
    let mut p = policy();
    p.signers = vec![key_signer(Some(vec![
        "https://example.com/other-verifier".into()
    ]))];
    let d = decide(&p, envelope(&allowed()));
    let r = only_reason(&d);
    assert!(r.starts_with("verifier: verifier.id `https://github.com/shipmoor/claim-check` is not one this signer is trusted for (https://example.com/other-verifier)"), "{r}");
}

#[test]
fn a_failed_verification_result_is_denied() {
    let mut st = allowed();
    st["predicate"]["verificationResult"] = json!("FAILED");
    // Denied for what it says, and for saying it of a READY verdict.
    assert_eq!(
        decide(&policy(), envelope(&st)).reasons,
        [
            "verification_result: verificationResult is FAILED, not PASSED",
            "fusion: verificationResult FAILED disagrees with the verdict READY",
        ]
    );
}

#[test]
fn a_verdict_the_policy_does_not_admit_is_denied() {
    let mut p = policy();
    p.allowed_verdicts = vec![Verdict::Ready];
    let r = only_reason(&decide(&p, envelope(&with_gaps_statement()))).to_string();
    assert_eq!(
        r,
        "verdict: the verdict is READY WITH GAPS; the policy admits READY"
    );
}

#[test]
fn a_level_that_no_allowed_verdict_names_is_denied() {
    let mut st = allowed();
    st["predicate"]["verifiedLevels"] = json!(["SHIPMOOR_CLAIM_CHECK_BLOCKED"]);
    assert_eq!(
        decide(&policy(), envelope(&st)).reasons,
        [
            "verified_levels: verifiedLevels [SHIPMOOR_CLAIM_CHECK_BLOCKED] lacks SHIPMOOR_CLAIM_CHECK_READY",
            "fusion: verifiedLevels [\"SHIPMOOR_CLAIM_CHECK_BLOCKED\"] are not exactly [SHIPMOOR_CLAIM_CHECK_READY]",
        ]
    );
    let mut p = policy();
    p.verified_levels = vec!["ACME_REVIEWED".into()];
    let r = only_reason(&decide(&p, envelope(&allowed()))).to_string();
    assert_eq!(
        r,
        "verified_levels: verifiedLevels [SHIPMOOR_CLAIM_CHECK_READY] lacks ACME_REVIEWED"
    );
}

#[test]
fn a_required_criterion_left_to_a_person_is_denied() {
    for (id, expected) in [
        (
            "audit-log",
            "floor_required: `audit-log` is not_judged (floor: not_applicable), not satisfied by the floor",
        ),
        (
            "refund-voids-payment-intent",
            "floor_required: `refund-voids-payment-intent` is unsatisfied (floor: unsatisfied), not satisfied by the floor",
        ),
        (
            "no-such-criterion",
            "floor_required: `no-such-criterion` is not among the attestation's criteria",
        ),
    ] {
        let mut p = policy();
        p.floor_required = vec!["order-marked-refunded".into(), id.into()];
        assert_eq!(
            only_reason(&decide(&p, envelope(&with_gaps_statement()))),
            expected
        );
    }
}

#[test]
fn a_statement_older_than_max_age_is_denied() {
    let mut st = allowed();
    st["predicate"]["timeVerified"] = json!("2026-11-20T10:00:00Z");
    let r = only_reason(&decide(&policy(), envelope(&st))).to_string();
    assert_eq!(r, "age: verified 10d 2h ago, older than the policy's 7d");
    st["predicate"]["timeVerified"] = json!("2026-12-30T10:00:00Z");
    let r = only_reason(&decide(&policy(), envelope(&st))).to_string();
    assert!(
        r.starts_with("age: timeVerified 2026-12-30T10:00:00Z is "),
        "{r}"
    );
}

#[test]
fn an_older_fusion_policy_is_denied() {
    let mut p = policy();
    p.min_policy_version = Some(4);
    let r = only_reason(&decide(&p, envelope(&allowed()))).to_string();
    assert_eq!(
        r,
        "policy_version: the verdict was fused under v3, older than v4"
    );
}

/// One repository, with or without `.git`: format 5 drops the suffix, the formats before kept
/// the remote's, and a policy may be written either way.
#[test]
fn a_repository_matches_with_or_without_its_git_suffix() {
    for (policy_repo, resource) in [
        (
            "git+https://github.com/example/shop",
            "git+https://github.com/example/shop.git",
        ),
        (
            "git+https://github.com/example/shop.git",
            "git+https://github.com/example/shop",
        ),
        (
            "git+https://github.com/example/shop",
            "git+https://github.com/example/shop",
        ),
    ] {
        let mut p = policy();
        p.repositories = vec![policy_repo.to_string()];
        let mut st = ready_statement();
        let head = st["predicate"][EXT]["head"]
            .as_str()
            .expect("head")
            .to_string();
        st["predicate"]["resourceUri"] = json!(format!("{resource}@{head}"));
        let d = decide(&p, envelope(&st));
        let check = d.attestations[0]
            .checks
            .iter()
            .find(|c| c.name == "resource_uri")
            .expect("the resource_uri check");
        assert_eq!(
            check.status,
            CheckStatus::Ok,
            "{policy_repo} vs {resource}: {check:?}"
        );
    }
    let mut p = policy();
    p.repositories = vec!["git+https://github.com/example/shop".to_string()];
    let mut st = ready_statement();
    st["predicate"]["resourceUri"] = json!("git+https://github.com/example/shop.github@abc");
    let r = decide(&p, envelope(&st));
    assert!(r.attestations[0]
        .checks
        .iter()
        .any(|c| c.name == "resource_uri" && c.status == CheckStatus::Failed));
}

#[test]
fn a_repository_the_policy_does_not_admit_is_denied() {
    let d = decide(&policy(), envelope(&ready_statement()));
    let r = only_reason(&d);
    assert!(
        r.starts_with("resource_uri: git+https://github.com/")
            && r.ends_with(
                "the repository is not one the policy admits (git+https://github.com/acme/*)"
            ),
        "{r}"
    );
    // `*` crosses `/`, and the commit is not part of what the glob matches.
    assert!(glob_matches(
        "git+https://github.com/acme/*",
        "git+https://github.com/acme/a/b"
    ));
    assert!(!glob_matches(
        "git+https://github.com/acme/*",
        "git+https://github.com/acme-evil/a"
    ));
    assert_eq!(
        resource_repository("git+https://github.com/acme/app@0123"),
        "git+https://github.com/acme/app"
    );
}

/// A trusted signer's statement that says READY (verdict, `verificationResult`, level) over
/// dispositions that fuse to BLOCKED: replay rejects it at the fusion, and so does admission,
/// whatever else of it the policy admits.
#[test]
fn a_verdict_its_dispositions_do_not_fuse_to_is_denied_at_the_fusion() {
    let st = with_acme_repo(stating(blocked_statement(), Verdict::Ready, "4"));
    let mut p = policy();
    p.floor_required.clear();
    let d = decide(&p, envelope(&st));
    assert_eq!(
        only_reason(&d),
        "fusion: the dispositions fuse to BLOCKED (rule 1) but the attestation says READY"
    );
    let fusion = d.attestations[0]
        .checks
        .iter()
        .find(|c| c.name == "fusion")
        .expect("the fusion check");
    assert_eq!(fusion.status, CheckStatus::Failed);
    // Stated as it fuses, the same statement is denied for its verdict alone.
    let honest = with_acme_repo(stating(blocked_statement(), Verdict::Blocked, "1"));
    let reasons = decide(&p, envelope(&honest)).reasons;
    assert!(
        reasons.iter().all(|r| !r.starts_with("fusion:")),
        "{reasons:?}"
    );
}

/// Replay's statement checks are admission's: a statement that does not agree with itself,
/// or that another verifier wrote, is denied with replay's words, every reason given.
#[test]
fn the_statement_checks_are_replays() {
    let mut st = allowed();
    st["predicate"]["resourceUri"] = json!("git+https://github.com/acme/app@0123");
    st["predicate"]["verifier"]["id"] = json!("https://example.com/other");
    st["predicateType"] = json!("https://slsa.dev/provenance/v1");
    let mut p = policy();
    p.verifier_ids.push("https://example.com/other".into());
    let d = decide(&p, envelope(&st));
    assert_eq!(
        d.reasons,
        [
            format!(
                "statement: `resourceUri` git+https://github.com/acme/app@0123 does not name git+<repository>@{}",
                "2".repeat(40)
            ),
            "predicate_type: `predicateType` is \"https://slsa.dev/provenance/v1\" and not `https://slsa.dev/verification_summary/v1`".to_string(),
            "verifier: `verifier.id` is \"https://example.com/other\" and not `https://github.com/shipmoor/claim-check`".to_string(),
        ]
    );
    // `_type` stops the statement as replay stops: nothing after it is read.
    let mut st = allowed();
    st["_type"] = json!("https://in-toto.io/Statement/v0.1");
    let d = decide(&policy(), envelope(&st));
    assert_eq!(
        only_reason(&d),
        "statement: `_type` is \"https://in-toto.io/Statement/v0.1\" and not `https://in-toto.io/Statement/v1`"
    );
    assert!(d.attestations[0].verdict.is_none());
}

#[test]
fn every_reason_is_given_not_just_the_first() {
    let mut st = ready_statement(); // repository not admitted
    st["predicate"]["verificationResult"] = json!("FAILED");
    st["predicate"]["timeVerified"] = json!("2026-01-01T00:00:00Z");
    let d = decide(&policy(), envelope(&st));
    let checks: Vec<&str> = d
        .reasons
        .iter()
        .map(|r| r.split(':').next().unwrap())
        .collect();
    assert_eq!(
        checks,
        ["resource_uri", "verification_result", "fusion", "age"]
    );
}

#[test]
fn an_unsigned_statement_is_denied() {
    let d = decide(&policy(), serde_json::to_vec(&allowed()).unwrap());
    assert!(only_reason(&d).starts_with("signature: the statement is unsigned"));
}

#[test]
fn every_tampered_byte_of_the_envelope_is_denied_at_parse_or_signature() {
    let good = envelope(&allowed());
    let env: dsse::Envelope = serde_json::from_slice(&good).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;
    let payload = b64.decode(&env.payload).unwrap();
    let p = policy();
    // Every 97th byte of the signed statement, flipped: a sample across the whole payload
    // (the replay tests flip every bit of an envelope).
    for i in (0..payload.len()).step_by(97) {
        let mut bad = payload.clone();
        bad[i] ^= 0x01;
        let mut e = env.clone();
        e.payload = b64.encode(&bad);
        let d = decide(&p, serde_json::to_vec(&e).unwrap());
        assert_eq!(d.decision, "deny", "byte {i} flipped was admitted");
        let failed = d.attestations[0]
            .checks
            .iter()
            .find(|c| c.status == CheckStatus::Failed)
            .unwrap();
        assert!(
            failed.name == "signature" || failed.name == "parse",
            "byte {i}: denied at {} instead: {}",
            failed.name,
            failed.detail
        );
    }
    let mut e = env.clone();
    let mut sig = b64.decode(&e.signatures[0].sig).unwrap();
    sig[10] ^= 0x80;
    e.signatures[0].sig = b64.encode(sig);
    let d = decide(&p, serde_json::to_vec(&e).unwrap());
    assert!(
        only_reason(&d).starts_with("signature: "),
        "{:?}",
        d.reasons
    );
}

#[test]
fn an_image_without_attestations_is_denied_with_that_reason() {
    let p = policy();
    let d = admission(&p).decide(&[], Some(format!("registry.example/app@sha256:{IMAGE}")));
    assert_eq!(
        d.reasons,
        [format!(
            "no Claim Check VSA is attached to registry.example/app@sha256:{IMAGE}"
        )]
    );
}

#[test]
fn one_passing_attestation_of_several_admits_the_image() {
    let p = policy();
    let admission = admission(&p);
    let mut blocked = allowed();
    blocked["predicate"]["verificationResult"] = json!("FAILED");
    let both = [
        Candidate {
            source: "a".into(),
            bytes: envelope(&blocked),
        },
        Candidate {
            source: "b".into(),
            bytes: envelope(&allowed()),
        },
    ];
    assert!(admission.decide(&both, None).allowed());
    let d = admission.decide(&both[..1], None);
    assert_eq!(
        d.reasons,
        [
            "verification_result: verificationResult is FAILED, not PASSED",
            "fusion: verificationResult FAILED disagrees with the verdict READY",
        ]
    );
}

#[test]
fn durations_read_as_people_write_them() {
    assert_eq!(human_duration(40), "40s");
    assert_eq!(human_duration(12 * 60), "12m");
    assert_eq!(human_duration(3 * 3600), "3h");
    assert_eq!(human_duration(3 * 3600 + 60), "3h 1m");
    assert_eq!(human_duration(7 * 86_400), "7d");
}
