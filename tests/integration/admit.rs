//! `shipmoor admit` on attestations that `claim-check` really signed: allow, deny with every
//! reason, the policy's Rego, the signer from the command line, and bad input (exit 2).

use crate::common;

use common::Repo;

use common::{GOLDEN_KEY as KEY, GOLDEN_PUBLIC_KEY as PUBLIC_KEY};
pub(crate) const IMAGE: &str =
    "sha256:5eed000000000000000000000000000000000000000000000000000000000042";
pub(crate) const BUNDLE: &str = ".shipmoor/claim-check.vsa.sigstore.json";
pub(crate) const ENVELOPE: &str = ".shipmoor/claim-check.vsa.dsse.json";

/// A change whose one criterion a command checks: READY when `fixed`, else BLOCKED. Signed
/// with the committed key, for the image [`IMAGE`], verified `epoch` (default: now).
pub(crate) fn signed_run(fixed: bool, epoch: Option<&str>) -> Repo {
    signed_run_with(fixed, epoch, &[])
}

/// [`signed_run`] with more flags for `claim-check` (`--sandbox off`, say).
fn signed_run_with(fixed: bool, epoch: Option<&str>, more: &[&str]) -> Repo {
    let r = Repo::new();
    r.git(&[
        "remote",
        "set-url",
        "origin",
        "https://github.com/acme/shop.git",
    ]);
    r.write("limits.txt", "limit = 0\n");
    let base = r.commit("base");
    r.write(
        "limits.txt",
        if fixed { "limit = 10\n" } else { "limit = 5\n" },
    );
    r.write("checks/limit.sh", "grep -q 'limit = 10' limits.txt\n");
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: limit-is-ten\n    ac: The limit is ten.\n    check:\n      command: sh checks/limit.sh\n",
    );
    r.commit("head");
    let now = common::now_epoch();
    let subject = format!("shop={IMAGE}");
    let mut args = vec![
        "claim-check",
        "--base",
        &base,
        "--sign",
        "key",
        "--key",
        KEY,
        "--subject",
        &subject,
    ];
    args.extend(more);
    let run = r.shipmoor_env(&args, &[("SOURCE_DATE_EPOCH", epoch.unwrap_or(&now))]);
    assert_eq!(run.code, if fixed { 0 } else { 1 }, "{run:?}");
    r
}

/// The policy, in the repository's `admission/` directory (its key beside it).
pub(crate) fn write_policy(r: &Repo, extra: &str) -> String {
    std::fs::create_dir_all(r.path().join("admission")).unwrap();
    std::fs::copy(PUBLIC_KEY, r.path().join("admission/claim-check.pub")).unwrap();
    let text = format!(
        "version: 1\nallowed_verdicts: [\"READY\"]\nfloor_required: [limit-is-ten]\nmin_policy_version: v3\nmax_age: 1d\nrepositories: [\"git+https://github.com/acme/*\"]\nsigners:\n  - key: claim-check.pub\n{extra}"
    );
    std::fs::write(r.path().join("admission/policy.yaml"), text).unwrap();
    "admission/policy.yaml".to_string()
}

pub(crate) fn admit(r: &Repo, policy: &str, attestation: &str, extra: &[&str]) -> common::Run {
    let mut args = vec![
        "admit",
        "--policy",
        policy,
        "--attestation",
        attestation,
        "--subject",
        IMAGE,
    ];
    args.extend(extra);
    r.shipmoor(&args)
}

#[test]
fn a_ready_vsa_is_admitted_in_both_signed_forms() {
    let r = signed_run(true, None);
    let policy = write_policy(&r, "");
    let before = r.status();
    for file in [BUNDLE, ENVELOPE] {
        let run = admit(&r, &policy, file, &[]);
        assert_eq!(run.code, 0, "{file}: {run:?}");
        // The terminal shows digests by their first 12 hex digits.
        let header = format!(
            "Admit  ALLOW  ·  {}…  ·  policy admission/policy.yaml\n",
            &IMAGE[..19]
        );
        assert!(run.stdout.starts_with(&header), "{}", run.stdout);
        assert!(run.stdout.contains("ok       signature"), "{}", run.stdout);
        assert!(!run.stdout.contains("deny reasons"), "{}", run.stdout);
    }
    let json = admit(&r, &policy, BUNDLE, &["--format", "json"]);
    assert_eq!(json.code, 0, "{json:?}");
    common::assert_schema_is_strict("claim_check.admit.v1", &json.stdout);
    let d: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(d["schema"], "claim_check.admit.v1");
    assert_eq!(d["decision"], "allow");
    assert_eq!(d["subject"], IMAGE);
    assert_eq!(d["attestations"][0]["verdict"], "READY");
    assert_eq!(d["attestations"][0]["signer"]["kind"], "key");
    assert_eq!(d["reasons"], serde_json::json!([]));
    // The repository's checkout is untouched: admission writes nothing.
    assert_eq!(r.status(), before);
}

#[test]
fn a_blocked_vsa_is_denied_with_every_reason() {
    let r = signed_run(false, None);
    let policy = write_policy(&r, "");
    let run = admit(&r, &policy, BUNDLE, &["--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    common::assert_matches_schema("claim_check.admit.v1", &run.stdout);
    let d: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(d["decision"], "deny");
    let reasons: Vec<&str> = d["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        [
            "verification_result: verificationResult is FAILED, not PASSED",
            "verdict: the verdict is BLOCKED; the policy admits READY",
            "floor_required: `limit-is-ten` is unsatisfied (floor: unsatisfied), not satisfied by the floor",
        ]
    );
    let human = admit(&r, &policy, BUNDLE, &[]);
    assert!(human.stdout.starts_with("Admit  DENY"), "{}", human.stdout);
    assert!(
        human.stdout.contains("  deny reasons:\n    - verification_result: verificationResult is FAILED, not PASSED\n"),
        "{}",
        human.stdout
    );
}

#[test]
fn an_attestation_older_than_max_age_is_denied() {
    // Verified at the pinned test epoch, long before today.
    let r = signed_run(true, Some("1700000000"));
    let policy = write_policy(&r, "");
    let run = admit(&r, &policy, BUNDLE, &["--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let d: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let reasons = d["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    let r0 = reasons[0].as_str().unwrap();
    assert!(
        r0.starts_with("age: verified ") && r0.ends_with(" ago, older than the policy's 1d"),
        "{r0}"
    );
}

#[test]
fn a_rego_rule_adds_its_deny_and_cannot_admit() {
    let r = signed_run(true, None);
    std::fs::create_dir_all(r.path().join("admission")).unwrap();
    std::fs::write(
        r.path().join("admission/extra.rego"),
        "package shipmoor.admit\n\nimport rego.v1\n\ndeny contains msg if {\n\tinput.statement.predicate[\"https://shipmoor.dev/claim-check/v1\"].mode == \"fast\"\n\tmsg := sprintf(\"mode %s: this cluster admits full-mode runs only\", [\"fast\"])\n}\n",
    )
    .unwrap();
    let policy = write_policy(&r, "rego: extra.rego\n");
    let run = admit(&r, &policy, BUNDLE, &["--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    common::assert_matches_schema("claim_check.admit.v1", &run.stdout);
    let d: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        d["reasons"],
        serde_json::json!(["rego: mode fast: this cluster admits full-mode runs only"])
    );
    // A Rego module with an empty deny set admits what the rules admit, and nothing more.
    std::fs::write(
        r.path().join("admission/extra.rego"),
        "package shipmoor.admit\n\nimport rego.v1\n\ndeny contains msg if {\n\tinput.verified != true\n\tmsg := \"unverified\"\n}\n",
    )
    .unwrap();
    assert_eq!(admit(&r, &policy, BUNDLE, &[]).code, 0);
    let blocked = signed_run(false, None);
    let policy = write_policy(&blocked, "");
    assert_eq!(admit(&blocked, &policy, BUNDLE, &[]).code, 1);
}

#[test]
fn the_command_line_signer_replaces_the_policys() {
    let r = signed_run(true, None);
    std::fs::create_dir_all(r.path().join("admission")).unwrap();
    std::fs::write(
        r.path().join("admission/nosigners.yaml"),
        "version: 1\nrepositories: [\"*\"]\n",
    )
    .unwrap();
    let run = admit(&r, "admission/nosigners.yaml", BUNDLE, &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("no signer to verify the attestation with"),
        "{}",
        run.stderr
    );
    let run = admit(
        &r,
        "admission/nosigners.yaml",
        BUNDLE,
        &["--key", PUBLIC_KEY],
    );
    assert_eq!(run.code, 0, "{run:?}");
    // Another key on the command line: denied at the signature, the policy's key unused.
    let other = r.path().join("other.pub");
    std::fs::write(
        &other,
        "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAOjyrAqXXZKPFC8kGchxBqou/4ixAs6a3+kUx1cefRnw=\n-----END PUBLIC KEY-----\n",
    )
    .unwrap();
    let policy = write_policy(&r, "");
    let run = admit(&r, &policy, BUNDLE, &["--key", other.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("FAILED   signature"), "{}", run.stdout);
}

#[test]
fn bad_input_is_exit_2_with_the_place_and_the_fix() {
    let r = signed_run(true, None);
    std::fs::create_dir_all(r.path().join("admission")).unwrap();
    std::fs::write(
        r.path().join("admission/broken.yaml"),
        "version: 1\nallowed_verdicts: [READDY]\nmax_age: 7 days\nrepositories: [\"*\"]\n",
    )
    .unwrap();
    let run = admit(&r, "admission/broken.yaml", BUNDLE, &["--key", PUBLIC_KEY]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("admission/broken.yaml:2:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("admission/broken.yaml:3:"),
        "every error at once: {}",
        run.stderr
    );
    assert!(
        run.stdout.is_empty(),
        "no decision on a bad policy: {}",
        run.stdout
    );

    std::fs::write(
        r.path().join("admission/bad.rego"),
        "package shipmoor.admit\n\ndeny contains msg if {\n\tinput.verified ==\n}\n",
    )
    .unwrap();
    let policy = write_policy(&r, "rego: bad.rego\n");
    let run = admit(&r, &policy, BUNDLE, &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("bad.rego:"), "{}", run.stderr);

    let policy = write_policy(&r, "");
    let run = r.shipmoor(&["admit", "--policy", &policy, "--attestation", BUNDLE]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("--attestation needs --subject"),
        "{}",
        run.stderr
    );
    let run = r.shipmoor(&[
        "admit",
        "--policy",
        &policy,
        "--attestation",
        BUNDLE,
        "--subject",
        "sha256:12",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("is not a SHA-256 digest"),
        "{}",
        run.stderr
    );
    let run = admit(&r, &policy, "no-such-file.json", &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("no-such-file.json"), "{}", run.stderr);
}

/// A BLOCKED VSA edited to read READY (verdict, result and level) is denied at the signature,
/// in both signed forms, and nothing of its edited statement is read.
#[test]
fn a_blocked_vsa_edited_to_read_ready_is_denied_at_the_signature() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let r = signed_run(false, None);
    let policy = write_policy(&r, "");
    let forge = |statement: &[u8]| -> Vec<u8> {
        String::from_utf8(statement.to_vec())
            .unwrap()
            .replace("\"verdict\": \"BLOCKED\"", "\"verdict\": \"READY\"")
            .replace("\"FAILED\"", "\"PASSED\"")
            .replace("SHIPMOOR_CLAIM_CHECK_BLOCKED", "SHIPMOOR_CLAIM_CHECK_READY")
            .into_bytes()
    };
    for (file, pointer) in [(BUNDLE, "/dsseEnvelope/payload"), (ENVELOPE, "/payload")] {
        let mut doc = r.json(file);
        let payload = b64
            .decode(doc.pointer(pointer).unwrap().as_str().unwrap())
            .unwrap();
        let forged = forge(&payload);
        assert_ne!(forged, payload, "the forgery changes the statement");
        *doc.pointer_mut(pointer).unwrap() = b64.encode(&forged).into();
        r.write("forged.json", &doc.to_string());
        let run = admit(&r, &policy, "forged.json", &["--format", "json"]);
        assert_eq!(run.code, 1, "{file}: {run:?}");
        // Denied at the signature: no signer, no verdict, the later checks not run.
        common::assert_matches_schema("claim_check.admit.v1", &run.stdout);
        let d: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let a = &d["attestations"][0];
        assert_eq!(a["verdict"], serde_json::Value::Null, "{d:#}");
        let failed: Vec<&str> = a["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["status"] == "failed")
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(failed, ["signature"], "{file}: {d:#}");
    }
}

/// A statement signed by the trusted key that says READY (verdict, `verificationResult`,
/// level) while its required criterion's disposition is `unsatisfied`: a signature proves who
/// signed, not that the verdict follows. Admission re-runs the fusion as `replay` does and
/// denies it, naming the mismatch, even under a policy that asks nothing of the criteria;
/// `replay` rejects it at the fusion.
#[test]
fn a_signed_ready_whose_dispositions_fuse_to_blocked_is_denied_at_the_fusion() {
    use base64::Engine as _;
    use shipmoor::attest::{dsse, keys};
    let b64 = base64::engine::general_purpose::STANDARD;
    let r = signed_run(false, None);
    // A policy that reads only the verdict (no `floor_required`): the fields a signer states.
    write_policy(&r, "");
    std::fs::write(
        r.path().join("admission/verdict-only.yaml"),
        "version: 1\nallowed_verdicts: [\"READY\"]\nrepositories: [\"git+https://github.com/acme/*\"]\nsigners:\n  - key: claim-check.pub\n",
    )
    .unwrap();
    let policy = "admission/verdict-only.yaml";
    let envelope = r.json(ENVELOPE);
    let payload = b64.decode(envelope["payload"].as_str().unwrap()).unwrap();
    let mut st: serde_json::Value = serde_json::from_slice(&payload).unwrap();
    let ext = &mut st["predicate"]["https://shipmoor.dev/claim-check/v1"];
    assert_eq!(ext["dispositions"][0]["disposition"], "unsatisfied");
    assert_eq!(ext["dispositions"][0]["required"], true);
    ext["verdict"] = "READY".into();
    ext["rule"] = "4".into();
    st["predicate"]["verificationResult"] = "PASSED".into();
    st["predicate"]["verifiedLevels"] = serde_json::json!(["SHIPMOOR_CLAIM_CHECK_READY"]);
    let key = keys::load_signing_key(&std::fs::read_to_string(KEY).unwrap(), None).unwrap();
    let signed = dsse::sign(&serde_json::to_vec(&st).unwrap(), dsse::PAYLOAD_TYPE, &key);
    r.write("forged.json", &serde_json::to_string(&signed).unwrap());

    let run = admit(&r, policy, "forged.json", &["--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    common::assert_matches_schema("claim_check.admit.v1", &run.stdout);
    let d: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(d["decision"], "deny");
    let a = &d["attestations"][0];
    assert_eq!(a["signer"]["kind"], "key", "the signature verifies: {d:#}");
    let reasons: Vec<&str> = d["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        ["fusion: the dispositions fuse to BLOCKED (rule 1) but the attestation says READY"]
    );
    let human = admit(&r, policy, "forged.json", &[]);
    assert_eq!(human.code, 1, "{human:?}");
    assert!(
        human
            .stdout
            .contains("    - fusion: the dispositions fuse to BLOCKED (rule 1) but the attestation says READY\n"),
        "{}",
        human.stdout
    );
    // Replay rejects the same statement at the same check.
    let replay = r.shipmoor(&["replay", "forged.json", "--key", PUBLIC_KEY]);
    assert_eq!(replay.code, 1, "{replay:?}");
    assert!(replay.stdout.contains("5 fusion     FAILED"), "{replay:?}");
}

/// The check `name` of the first attestation in `admit --format json`'s output.
fn named_check(run: &common::Run, name: &str) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    v["attestations"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("no check {name}: {run:?}"))
}

/// A policy's `require_sandbox: true` admits a VSA whose floor ran in the kernel sandbox, and
/// denies one made with `--sandbox off`, the check saying why; without the rule both pass.
#[test]
fn a_policy_that_requires_the_sandbox_denies_a_vsa_made_without_it() {
    let sandboxed = signed_run_with(true, None, &["--sandbox", "require"]);
    let policy = write_policy(&sandboxed, "require_sandbox: true\n");
    let run = admit(&sandboxed, &policy, ENVELOPE, &["--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let check = |run: &common::Run| named_check(run, "sandbox");
    let ok = check(&run);
    assert_eq!(ok["status"], "ok", "{run:?}");
    assert!(
        ok["detail"].as_str().unwrap().contains("Landlock ABI"),
        "{ok}"
    );

    let unsandboxed = signed_run_with(true, None, &["--sandbox", "off"]);
    let policy = write_policy(&unsandboxed, "require_sandbox: true\n");
    let run = admit(&unsandboxed, &policy, ENVELOPE, &["--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let denied = check(&run);
    assert_eq!(denied["status"], "failed", "{run:?}");
    assert!(
        denied["detail"]
            .as_str()
            .unwrap()
            .contains("the floor did not run sandboxed (sandbox off: nothing enforced"),
        "{denied}"
    );
    // The rest of the VSA is as good as the sandboxed one's: without the rule it is admitted.
    let policy = write_policy(&unsandboxed, "");
    let run = admit(&unsandboxed, &policy, ENVELOPE, &[]);
    assert_eq!(run.code, 0, "{run:?}");
}

/// A policy's `require_isolated_signer: true` admits a VSA that a job which ran none of the
/// change's code signed (a fuse of a shard another job of its workflow run observed), and
/// denies one signed where the floor ran (a single run in Actions, or a fuse of a shard the
/// signing job itself observed); without the rule all are admitted.
#[test]
fn a_policy_that_requires_an_isolated_signer_denies_a_vsa_signed_where_the_floor_ran() {
    let single = signed_run_with(true, None, &[]);
    let policy = write_policy(&single, "require_isolated_signer: true\n");
    let run = admit(&single, &policy, ENVELOPE, &["--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let check = |run: &common::Run| named_check(run, "isolated_signer");
    let denied = check(&run);
    assert_eq!(denied["status"], "failed", "{run:?}");
    assert!(
        denied["detail"]
            .as_str()
            .unwrap()
            .contains("observed and signed outside GitHub Actions, by one process"),
        "{denied}"
    );

    // The same change observed by a shard job and fused by another job of the same run.
    let actions = |job: &'static str| {
        vec![
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_RUN_ID", "77"),
            ("GITHUB_RUN_ATTEMPT", "1"),
            ("GITHUB_JOB", job),
        ]
    };
    let fused = |observed_in: &'static str| -> Repo {
        let r = signed_run_with(true, None, &[]);
        let base = r.git(&["rev-parse", "HEAD~1"]);
        let shard = r.tmp.path().join("shard-1");
        let shard = shard.to_str().unwrap();
        let run = r.shipmoor_env(
            &[
                "claim-check",
                "--base",
                base.trim(),
                "--shard",
                "1/1",
                "--shard-out",
                shard,
            ],
            &actions(observed_in),
        );
        assert_eq!(run.code, 0, "{run:?}");
        let subject = format!("shop={IMAGE}");
        let mut env = actions("sign");
        let now = common::now_epoch();
        env.push(("SOURCE_DATE_EPOCH", &now));
        let run = r.shipmoor_env(
            &[
                "fuse",
                "--sign",
                "key",
                "--key",
                KEY,
                "--subject",
                &subject,
                shard,
            ],
            &env,
        );
        assert_eq!(run.code, 0, "{run:?}");
        r
    };
    let isolated = fused("observe");
    let policy = write_policy(&isolated, "require_isolated_signer: true\n");
    let run = admit(&isolated, &policy, ENVELOPE, &["--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let ok = check(&run);
    assert_eq!(ok["status"], "ok", "{run:?}");
    assert!(
        ok["detail"]
            .as_str()
            .unwrap()
            .contains("observed in job observe of run 77 (attempt 1), signed in job sign"),
        "{ok}"
    );

    let same_job = fused("sign");
    let policy = write_policy(&same_job, "require_isolated_signer: true\n");
    let run = admit(&same_job, &policy, ENVELOPE, &["--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert_eq!(check(&run)["status"], "failed", "{run:?}");
    let policy = write_policy(&same_job, "");
    assert_eq!(admit(&same_job, &policy, ENVELOPE, &[]).code, 0);
}
