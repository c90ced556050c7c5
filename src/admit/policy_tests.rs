//! The admission policy's reader: every key, the defaults, and every error message (one
//! snapshot, as the acceptance file's diagnostics are kept).

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{
    duration_seconds, fusion_policy_number, load, parse, suggest_verdict, Policy, SignerKind,
    DEFAULT_VERIFIER_ID,
};
use crate::attest::keys::VerifyingKey;
use crate::error::{Error, InputError};
use crate::verdict::Verdict;

/// The policy's path as messages show it; it lives in `deploy/` so that paths relative to its
/// directory differ from paths relative to the working directory.
const FILE: &str = "deploy/policy.yaml";

/// A deterministic Ed25519 public key, as `openssl pkey -pubout` writes one.
fn public_key() -> (VerifyingKey, String) {
    let sk = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let vk = VerifyingKey::Ed25519(sk.verifying_key());
    let pem = vk.to_pem();
    (vk, pem)
}

fn private_key_pem() -> String {
    use pkcs8::EncodePrivateKey;
    ed25519_dalek::SigningKey::from_bytes(&[7; 32])
        .to_pkcs8_pem(pkcs8::LineEnding::LF)
        .unwrap()
        .to_string()
}

const REGO: &str = "package shipmoor.admit\n\ndeny contains \"harness edited\" if {\n  count(input.statement.predicate[\"https://shipmoor.dev/claim-check/v1\"].harness_changes) > 0\n}\n";

/// A directory with the files a policy refers to, under `deploy/`: a public key, a private key
/// (a common mistake), a text file that is no key, a trusted root and a Rego module.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let deploy = dir.path().join("deploy");
    for sub in ["keys", "sigstore", "policies"] {
        std::fs::create_dir_all(deploy.join(sub)).unwrap();
    }
    std::fs::write(deploy.join("keys/claim-check.pub"), public_key().1).unwrap();
    std::fs::write(deploy.join("keys/claim-check.pem"), private_key_pem()).unwrap();
    std::fs::write(deploy.join("keys/notes.txt"), "not a key\n").unwrap();
    std::fs::write(
        deploy.join("keys/claim-check.der"),
        public_key().0.spki_der(),
    )
    .unwrap();
    std::fs::write(deploy.join("sigstore/trusted_root.json"), "{}\n").unwrap();
    std::fs::write(deploy.join("policies/extra.rego"), REGO).unwrap();
    std::fs::write(
        deploy.join("policies/broken.rego"),
        "package shipmoor.admit\n\ndeny contains msg if {\n  msg :=\n}\n",
    )
    .unwrap();
    std::fs::write(
        deploy.join("policies/allow.rego"),
        "package shipmoor.admit\n\nallow if true\n",
    )
    .unwrap();
    dir
}

fn run_in(dir: &Path, text: &str) -> Result<Policy, Vec<InputError>> {
    parse(
        text,
        FILE,
        &dir.join("deploy"),
        crate::evidence::sha256_hex(text.as_bytes()),
    )
}

fn parse_ok(text: &str) -> Policy {
    let dir = workspace();
    run_in(dir.path(), text)
        .unwrap_or_else(|errors| panic!("expected a valid policy, got:\n{}", Error::Input(errors)))
}

fn parse_err(text: &str) -> Vec<InputError> {
    let dir = workspace();
    match run_in(dir.path(), text) {
        Ok(policy) => panic!("expected errors, got {policy:#?}"),
        Err(errors) => errors,
    }
}

const FULL: &str = r#"version: 1
verifier_ids: ["https://github.com/shipmoor/claim-check", "https://ci.acme.dev/claim-check"]
allowed_verdicts: ["READY"]
floor_required: ["refund-voids-payment-intent", "order-marked-refunded"]
min_policy_version: v3
max_age: 12h
repositories: ["git+https://github.com/acme/*", "git+https://gitlab.acme.dev/shop"]
verified_levels: ["SHIPMOOR_CLAIM_CHECK_READY"]
signers:
  - key: keys/claim-check.pub
  - identity: "https://github.com/acme/app/.github/workflows/ci.yml@refs/heads/main"
    issuer: "https://token.actions.githubusercontent.com"
    verifier_ids: ["https://ci.acme.dev/claim-check"]
trusted_root: sigstore/trusted_root.json
rego: policies/extra.rego
"#;

#[test]
fn a_policy_with_every_key() {
    let dir = workspace();
    let p = run_in(dir.path(), FULL).unwrap_or_else(|e| panic!("{}", Error::Input(e)));
    assert_eq!(p.file, FILE);
    assert_eq!(p.sha256, crate::evidence::sha256_hex(FULL.as_bytes()));
    assert_eq!(
        p.verifier_ids,
        [
            "https://github.com/shipmoor/claim-check",
            "https://ci.acme.dev/claim-check"
        ]
    );
    assert_eq!(p.allowed_verdicts, [Verdict::Ready]);
    assert_eq!(
        p.floor_required,
        ["refund-voids-payment-intent", "order-marked-refunded"]
    );
    assert_eq!(p.min_policy_version, Some(3));
    assert_eq!(p.max_age_seconds, Some(12 * 3600));
    assert_eq!(
        p.repositories,
        [
            "git+https://github.com/acme/*",
            "git+https://gitlab.acme.dev/shop"
        ]
    );
    assert_eq!(p.verified_levels, ["SHIPMOOR_CLAIM_CHECK_READY"]);
    let deploy = dir.path().join("deploy");
    assert_eq!(
        p.trusted_root,
        Some(deploy.join("sigstore/trusted_root.json"))
    );

    assert_eq!(p.signers.len(), 2);
    match &p.signers[0].who {
        SignerKind::Key {
            path,
            resolved,
            key,
        } => {
            assert_eq!(path, "keys/claim-check.pub");
            assert_eq!(resolved, &deploy.join("keys/claim-check.pub"));
            assert_eq!(key, &public_key().0);
        }
        other => panic!("expected a key signer, got {other:?}"),
    }
    assert_eq!(p.signers[0].verifier_ids, None);
    assert_eq!(p.signers[0].verifier_ids(&p), p.verifier_ids.as_slice());
    match &p.signers[1].who {
        SignerKind::Identity { identity, issuer } => {
            assert_eq!(
                identity,
                "https://github.com/acme/app/.github/workflows/ci.yml@refs/heads/main"
            );
            assert_eq!(issuer, "https://token.actions.githubusercontent.com");
        }
        other => panic!("expected an identity signer, got {other:?}"),
    }
    assert_eq!(
        p.signers[1].verifier_ids(&p),
        ["https://ci.acme.dev/claim-check"]
    );

    let rego = p.rego.as_ref().expect("the Rego module is compiled");
    assert_eq!(rego.file, "policies/extra.rego");
    let edited = json!({"statement": {"predicate": {"https://shipmoor.dev/claim-check/v1": {"harness_changes": ["conftest.py"]}}}});
    assert_eq!(rego.deny(&edited), Ok(vec!["harness edited".to_string()]));
}

#[test]
fn defaults_are_filled_in() {
    let p = parse_ok("version: 1\nrepositories: [\"*\"]\n");
    assert_eq!(p.verifier_ids, [DEFAULT_VERIFIER_ID]);
    assert_eq!(
        DEFAULT_VERIFIER_ID,
        "https://github.com/shipmoor/claim-check"
    );
    assert_eq!(p.allowed_verdicts, [Verdict::Ready, Verdict::ReadyWithGaps]);
    assert!(p.floor_required.is_empty());
    assert_eq!(p.min_policy_version, None);
    assert_eq!(p.max_age_seconds, None);
    assert_eq!(p.repositories, ["*"]);
    assert!(p.verified_levels.is_empty());
    assert!(p.signers.is_empty());
    assert_eq!(p.trusted_root, None);
    assert!(p.rego.is_none());
}

#[test]
fn null_optional_keys_count_as_absent() {
    let p = parse_ok(
        "version: 1\nrepositories: [\"*\"]\nverifier_ids:\nallowed_verdicts:\nsigners:\n#  - key: keys/claim-check.pub\nrego:\nmax_age:\n",
    );
    assert_eq!(p.verifier_ids, [DEFAULT_VERIFIER_ID]);
    assert_eq!(p.allowed_verdicts, [Verdict::Ready, Verdict::ReadyWithGaps]);
    assert!(p.signers.is_empty());
    assert!(p.rego.is_none());
    assert_eq!(p.max_age_seconds, None);
}

#[test]
fn repeated_verdicts_count_once_and_keep_their_order() {
    let p = parse_ok(
        "version: 1\nrepositories: [\"*\"]\nallowed_verdicts: [\"READY WITH GAPS\", \"READY\", \"READY WITH GAPS\"]\n",
    );
    assert_eq!(p.allowed_verdicts, [Verdict::ReadyWithGaps, Verdict::Ready]);
}

#[test]
fn an_absolute_key_path_is_read_as_written() {
    let dir = workspace();
    let key = dir.path().join("deploy/keys/claim-check.pub");
    let text = format!(
        "version: 1\nrepositories: [\"*\"]\nsigners:\n  - key: \"{}\"\n",
        key.display()
    );
    let p = run_in(dir.path(), &text).unwrap_or_else(|e| panic!("{}", Error::Input(e)));
    match &p.signers[0].who {
        SignerKind::Key { resolved, .. } => assert_eq!(resolved, &key),
        other => panic!("{other:?}"),
    }
}

#[test]
fn load_hashes_the_file_bytes_and_resolves_paths_from_its_directory() {
    let dir = workspace();
    let path = dir.path().join(FILE);
    std::fs::write(&path, FULL).unwrap();
    let p = load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.file, path.display().to_string());
    assert_eq!(p.sha256, crate::evidence::sha256_hex(FULL.as_bytes()));
    assert_eq!(p.signers.len(), 2);
    assert!(p.rego.is_some());
}

#[test]
fn every_problem_is_reported_at_once_with_file_line_column_and_help() {
    let errors = parse_err(
        "version: 2\nrepositories: []\nmax_age: soon\nsigners:\n  - key: keys/missing.pub\n",
    );
    let at: Vec<(Option<&str>, Option<usize>, Option<usize>)> = errors
        .iter()
        .map(|e| (e.file.as_deref(), e.line, e.column))
        .collect();
    assert_eq!(
        at,
        [
            (Some(FILE), Some(1), Some(10)),
            (Some(FILE), Some(2), Some(15)),
            (Some(FILE), Some(3), Some(10)),
            (Some(FILE), Some(5), Some(10)),
        ]
    );
    assert!(errors.iter().all(|e| e.help.is_some()));
}

#[test]
fn a_yaml_syntax_error_is_reported_once_at_its_position() {
    let errors = parse_err("version: 1\nrepositories: [\"*\"\nmax_age: 7d\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].message.starts_with("invalid YAML: "),
        "{errors:?}"
    );
    assert_eq!(errors[0].file.as_deref(), Some(FILE));
    assert!(errors[0].line.is_some());
}

#[test]
fn a_rego_error_names_the_module_file_and_line_after_the_policy_problems() {
    let errors = parse_err("version: 1\nrepositories: []\nrego: policies/broken.rego\n");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].file.as_deref(), Some(FILE));
    let rego = &errors[1];
    let dir_shown = rego.file.as_deref().unwrap();
    assert!(
        dir_shown.ends_with("deploy/policies/broken.rego"),
        "{dir_shown}"
    );
    assert_eq!((rego.line, rego.column), (Some(4), Some(7)), "{rego}");
}

#[test]
fn verdict_suggestions() {
    assert_eq!(
        suggest_verdict("ready_with_gaps"),
        Some(Verdict::ReadyWithGaps)
    );
    assert_eq!(
        suggest_verdict("Ready-With-Gaps"),
        Some(Verdict::ReadyWithGaps)
    );
    assert_eq!(suggest_verdict("blocked"), Some(Verdict::Blocked));
    assert_eq!(suggest_verdict("READDY"), Some(Verdict::Ready));
    assert_eq!(suggest_verdict("INCONCLUSIV"), Some(Verdict::Inconclusive));
    assert_eq!(suggest_verdict("GREEN"), None);
}

#[test]
fn durations() {
    assert_eq!(duration_seconds("7d"), Some(7 * 86_400));
    assert_eq!(duration_seconds("12h"), Some(43_200));
    assert_eq!(duration_seconds("30m"), Some(1_800));
    assert_eq!(duration_seconds("90s"), Some(90));
    assert_eq!(duration_seconds("0s"), Some(0));
    for bad in [
        "",
        "d",
        "7",
        "7 d",
        "-1d",
        "1.5h",
        "7w",
        "1d12h",
        "99999999999999999999d",
    ] {
        assert_eq!(duration_seconds(bad), None, "{bad}");
    }
    // An overflow of the multiplication, not of the number.
    assert_eq!(duration_seconds(&format!("{}d", u64::MAX / 2)), None);
}

#[test]
fn fusion_policy_names() {
    assert_eq!(fusion_policy_number("v3"), Some(3));
    assert_eq!(fusion_policy_number("v12"), Some(12));
    for bad in ["3", "v", "v0", "V3", "v3.1", "vv3", " v3"] {
        assert_eq!(fusion_policy_number(bad), None, "{bad}");
    }
    // The release's own policy must read, or no `min_policy_version` could be checked.
    assert!(fusion_policy_number(crate::verdict::POLICY).is_some());
}

#[test]
fn the_example_policy_loads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/admit/policy.yaml");
    let p = load(&path).unwrap_or_else(|e| panic!("examples/admit/policy.yaml:\n{e}"));
    assert_eq!(p.allowed_verdicts, [Verdict::Ready, Verdict::ReadyWithGaps]);
    assert_eq!(p.min_policy_version, Some(3));
    assert_eq!(p.max_age_seconds, Some(7 * 86_400));
    assert!(!p.floor_required.is_empty());
    assert!(p.require_sandbox && p.require_isolated_signer);
    assert!(!p.signers.is_empty());
    assert!(p
        .signers
        .iter()
        .all(|s| matches!(s.who, SignerKind::Identity { .. })));
    assert_eq!(p.rego.as_ref().map(|r| r.file.as_str()), Some("extra.rego"));
}

// ---------------------------------------------------------------------------------------------
// Every error message, as the user reads it
// ---------------------------------------------------------------------------------------------

/// One bad policy per group of messages; the first holds one of nearly every mistake at once.
fn cases() -> Vec<(&'static str, String)> {
    let base = |extra: &str| format!("version: 1\nrepositories: [\"*\"]\n{extra}");
    vec![
        (
            "one of each mistake, all reported at once",
            r#"version: 2
verifier_id: ["https://github.com/shipmoor/claim-check"]
colour: blue
allowed_verdicts: ["READY", "ready_with_gaps", "GREEN"]
floor_required: ["refund-voids-payment-intent", ""]
min_policy_version: 3
max_age: 7 days
repositories: ["git+https://github.com/acme/[app", ""]
verified_levels: SHIPMOOR_CLAIM_CHECK_READY
signers:
  - key: keys/missing.pub
  - key: keys/claim-check.pem
  - key: keys/notes.txt
  - key: keys/claim-check.der
  - identity: "https://github.com/acme/app/.github/workflows/ci.yml@refs/heads/main"
  - issuer: "https://token.actions.githubusercontent.com"
  - key: keys/claim-check.pub
    identity: "https://github.com/acme/app/.github/workflows/ci.yml@refs/heads/main"
    issuer: "https://token.actions.githubusercontent.com"
  - verifier_ids: ["https://github.com/shipmoor/claim-check"]
  - keys/claim-check.pub
  - key: keys/claim-check.pub
    verifier_ids: []
    verifer: x
  - identity: ""
    issuer: [a]
trusted_root: sigstore/missing.json
rego: policies/missing.rego
"#
            .to_string(),
        ),
        ("an empty file", String::new()),
        ("a file that is not a mapping", "- version: 1\n".to_string()),
        (
            "a YAML syntax error",
            "version: 1\nrepositories: [\"*\"\nmax_age: 7d\n".to_string(),
        ),
        (
            "YAML features the policy does not take",
            "version: 1\nrepositories: &all [\"*\"]\nverified_levels: *all\n---\nversion: 1\n"
                .to_string(),
        ),
        (
            "a duplicate key",
            "version: 1\nrepositories: [\"*\"]\nrepositories: [\"git+https://github.com/acme/*\"]\n"
                .to_string(),
        ),
        ("no version and no repositories", "max_age: 7d\n".to_string()),
        ("a quoted version", "version: \"1\"\nrepositories: [\"*\"]\n".to_string()),
        ("a null repositories", "version: 1\nrepositories:\n".to_string()),
        (
            "empty lists that would admit nothing",
            "version: 1\nrepositories: [\"*\"]\nverifier_ids: []\nallowed_verdicts: []\nsigners: []\n"
                .to_string(),
        ),
        ("a policy newer than the fusion", base("min_policy_version: v4\n")),
        ("a policy version in words", base("min_policy_version: three\n")),
        ("a policy version as a list", base("min_policy_version: [v3]\n")),
        ("a zero age", base("max_age: 0s\n")),
        ("an age without a unit", base("max_age: 3600\n")),
        ("an age as a list", base("max_age: [7d]\n")),
        ("a verdict that is a mapping", base("allowed_verdicts: [{READY: true}]\n")),
        ("a trusted root that is a directory", base("trusted_root: sigstore\n")),
        ("a Rego syntax error", base("rego: policies/broken.rego\n")),
        ("a Rego module without deny", base("rego: policies/allow.rego\n")),
    ]
}

#[test]
fn every_policy_error_message() {
    let mut out = String::new();
    for (i, (name, text)) in cases().iter().enumerate() {
        let dir = workspace();
        let printed = match run_in(dir.path(), text) {
            Ok(p) => panic!("case `{name}` was accepted: {p:#?}"),
            Err(errors) => Error::Input(errors).to_string(),
        };
        let printed = printed.replace(&dir.path().display().to_string(), "[tmp]");
        let mut shown = format!("{FILE}:\n");
        if text.is_empty() {
            shown.push_str("     (empty)\n");
        }
        for (n, line) in text.lines().enumerate() {
            shown.push_str(&format!("  {:>3} | {line}\n", n + 1));
        }
        out.push_str(&format!("── {}. {name} ──\n{shown}\n{printed}\n\n", i + 1));
    }
    insta::assert_snapshot!("policy_errors", out);
}

#[test]
fn a_file_that_cannot_be_read_or_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let missing: PathBuf = dir.path().join("policy.yaml");
    let Err(Error::Input(errors)) = load(&missing) else {
        panic!("a missing policy must be an input error")
    };
    assert!(errors[0]
        .message
        .starts_with("cannot read the admission policy: "));
    assert_eq!(
        errors[0].help.as_deref(),
        Some("check the path given to `--policy`")
    );

    std::fs::write(&missing, b"version: 1\nrepositories: [\"\xff\"]\n").unwrap();
    let Err(Error::Input(errors)) = load(&missing) else {
        panic!("a policy that is not UTF-8 must be an input error")
    };
    assert_eq!(errors[0].message, "the admission policy is not UTF-8 text");
}
