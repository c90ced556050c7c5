//! Keyless signing end to end, on loopback only: a local Fulcio and Rekor built from npm
//! `@sigstore/mock` (`tests/sigstore-mock/server.js`) sign a statement through
//! `sign_keyless`; the bundle is verified by `@sigstore/verify` in Node and by our
//! `verify_bundle`, and a tampered bundle is rejected by both. The GitHub Actions token request
//! of `ambient_token` is checked against a small HTTP server on 127.0.0.1.
//!
//! The npm packages are installed once per test run into
//! `$CARGO_TARGET_TMPDIR/js-tools/sigstore-mock` under a lock directory (nextest runs each test in
//! its own process), from the committed `package-lock.json`.

use crate::common;

use common::lock::Lock;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use sha2::{Digest, Sha256};
use shipmoor::attest::sigstore::{
    ambient_token_from, sign_keyless, verify_bundle, Artifact, Identity, Services, Trust,
};

const MOCK_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/sigstore-mock");
const ISSUER: &str = "https://oidc.shipmoor.test";
const SUBJECT: &str =
    "https://github.com/shipmoor/claim-check/.github/workflows/ci.yml@refs/heads/main";

// ---------------------------------------------------------------------------------------------
// The npm packages, installed once.

fn require_program(program: &str) {
    let ok = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "`{program} --version` does not run: the keyless tests need Node.js 20+ with npm on PATH"
    );
}

/// The `node_modules` holding `@sigstore/mock`, `@sigstore/verify` and `@sigstore/bundle`.
fn node_modules() -> PathBuf {
    require_program("node");
    require_program("npm");
    let manifest = std::fs::read(Path::new(MOCK_DIR).join("package.json")).unwrap();
    let lockfile = std::fs::read(Path::new(MOCK_DIR).join("package-lock.json")).unwrap();
    let stamp = hex::encode(Sha256::digest([manifest.as_slice(), &lockfile].concat()));

    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("js-tools");
    std::fs::create_dir_all(&base).unwrap();
    let dir = base.join("sigstore-mock");
    let marker = dir.join(".installed");
    let done = || std::fs::read_to_string(&marker).is_ok_and(|s| s == stamp);
    if !done() {
        let _lock = Lock::acquire(base.join("sigstore-mock.lock"));
        if !done() {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("package.json"), &manifest).unwrap();
            std::fs::write(dir.join("package-lock.json"), &lockfile).unwrap();
            let out = Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "`npm ci` failed in {}:\n{}\n{}",
                dir.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::write(&marker, &stamp).unwrap();
        }
    }
    dir.join("node_modules")
}

// ---------------------------------------------------------------------------------------------
// The local Fulcio and Rekor.

/// The mock server, stopped (killed) when dropped.
struct MockSigstore {
    child: Child,
    base_url: String,
    dir: tempfile::TempDir,
}

impl MockSigstore {
    fn start(node_modules: &Path) -> MockSigstore {
        let dir = tempfile::tempdir().unwrap();
        let log = std::fs::File::create(dir.path().join("server.log")).unwrap();
        let mut child = Command::new("node")
            .arg(Path::new(MOCK_DIR).join("server.js"))
            .arg(dir.path())
            .env("NODE_PATH", node_modules)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
        let mut server = MockSigstore {
            child,
            base_url: line.trim().to_string(),
            dir,
        };
        if !server.base_url.starts_with("http://127.0.0.1:") {
            let _ = server.child.kill();
            let _ = server.child.wait();
            panic!(
                "the sigstore mock did not start (first line {line:?}):\n{}",
                std::fs::read_to_string(server.dir.path().join("server.log")).unwrap_or_default()
            );
        }
        server
    }

    fn trusted_root(&self) -> PathBuf {
        self.dir.path().join("trusted_root.json")
    }

    fn services(&self) -> Services {
        Services {
            fulcio_url: self.base_url.clone(),
            rekor_url: self.base_url.clone(),
            tsa_url: None,
        }
    }
}

impl Drop for MockSigstore {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `@sigstore/verify` on a bundle file: Ok(stdout) when it verifies, Err(stderr) otherwise.
fn node_verify(
    node_modules: &Path,
    root: &Path,
    bundle: &Path,
    identity: &str,
    issuer: &str,
    sha256: &str,
) -> Result<String, String> {
    let out = Command::new("node")
        .arg(Path::new(MOCK_DIR).join("verify.js"))
        .args([root, bundle])
        .args([identity, issuer, sha256])
        .env("NODE_PATH", node_modules)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    match out.status.code() {
        Some(0) => Ok(stdout),
        Some(1) => Err(stderr),
        other => panic!("verify.js crashed ({other:?}):\n{stdout}\n{stderr}"),
    }
}

/// An unsigned (`alg: none`) identity token, valid for ten minutes.
fn unsigned_jwt() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let header = serde_json::json!({"alg": "none", "typ": "JWT"});
    let claims = serde_json::json!({
        "iss": ISSUER,
        "sub": SUBJECT,
        "aud": "sigstore",
        "email": "ci@shipmoor.test",
        "email_verified": true,
        "iat": now,
        "exp": now + 600,
    });
    let part = |v: &serde_json::Value| URL_SAFE_NO_PAD.encode(serde_json::to_vec(v).unwrap());
    format!("{}.{}.", part(&header), part(&claims))
}

fn statement(subject_sha256: &str, result: &str) -> Vec<u8> {
    let statement = serde_json::json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [
            {"name": "repo", "digest": {"gitCommit": "0123456789abcdef0123456789abcdef01234567"}},
            {"name": "app.tar", "digest": {"sha256": subject_sha256}},
        ],
        "predicateType": "https://slsa.dev/verification_summary/v1",
        "predicate": {
            "verifier": {"id": "https://github.com/shipmoor/claim-check"},
            "verificationResult": result,
        },
    });
    serde_json::to_vec_pretty(&statement).unwrap()
}

#[test]
fn a_keyless_bundle_verifies_in_node_and_in_rust_and_a_tampered_one_in_neither() {
    let modules = node_modules();
    let mock = MockSigstore::start(&modules);
    let root = mock.trusted_root();
    let work = tempfile::tempdir().unwrap();

    // (b) Sign a statement about an artifact.
    let artifact = b"shipmoor keyless test artifact\n".to_vec();
    let digest: [u8; 32] = Sha256::digest(&artifact).into();
    let digest_hex = hex::encode(digest);
    let statement = statement(&digest_hex, "PASSED");
    let bundle_json = sign_keyless(&statement, &unsigned_jwt(), &mock.services())
        .unwrap_or_else(|e| panic!("signing against the mock failed: {e}"));
    let bundle: serde_json::Value = serde_json::from_str(&bundle_json).unwrap();
    assert_eq!(
        bundle["mediaType"],
        "application/vnd.dev.sigstore.bundle.v0.3+json"
    );
    assert_eq!(
        bundle["dsseEnvelope"]["payloadType"],
        "application/vnd.in-toto+json"
    );
    assert_eq!(
        bundle["verificationMaterial"]["tlogEntries"][0]["kindVersion"]["kind"],
        "dsse"
    );
    let bundle_path = work.path().join("statement.sigstore.json");
    std::fs::write(&bundle_path, &bundle_json).unwrap();

    // (c) An independent verifier accepts it ...
    let node = node_verify(&modules, &root, &bundle_path, SUBJECT, ISSUER, &digest_hex);
    assert_eq!(
        node.as_deref(),
        Ok("verified\n"),
        "@sigstore/verify rejected the bundle:\n{bundle_json}"
    );

    // ... and so do we, by digest and by the artifact's bytes.
    let trust = Trust::Identity(Identity::new(SUBJECT, ISSUER));
    let verified = verify_bundle(&bundle_json, &Artifact::Sha256(digest), &trust, Some(&root))
        .unwrap_or_else(|e| panic!("our verification failed: {e}"));
    assert_eq!(verified.dsse_payload(), Some(statement.as_slice()));
    assert_eq!(
        verified.payload_type(),
        Some("application/vnd.in-toto+json")
    );
    assert_eq!(verified.identity(), Some(SUBJECT));
    assert_eq!(verified.issuer(), Some(ISSUER));
    verify_bundle(
        &bundle_json,
        &Artifact::Bytes(artifact),
        &trust,
        Some(&root),
    )
    .unwrap();
    // The command line too (the conformance protocol), with the digest as the artifact.
    let cli = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .arg("verify-bundle")
        .arg("--bundle")
        .arg(&bundle_path)
        .args(["--certificate-identity", SUBJECT])
        .args(["--certificate-oidc-issuer", ISSUER])
        .arg("--trusted-root")
        .arg(&root)
        .arg(format!("sha256:{digest_hex}"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&cli.stderr);
    assert_eq!(cli.status.code(), Some(0), "{stderr}");
    assert!(stderr.starts_with("verified:"), "{stderr}");

    // Not for another signer, another issuer, another artifact, or without the mock's root.
    let refusals = [
        (
            Trust::Identity(Identity::new("https://example.com/someone-else", ISSUER)),
            Artifact::Sha256(digest),
            Some(root.as_path()),
            &["certificate identity"][..],
        ),
        (
            Trust::Identity(Identity::new(
                SUBJECT,
                "https://token.actions.githubusercontent.com",
            )),
            Artifact::Sha256(digest),
            Some(root.as_path()),
            &["certificate issuer"][..],
        ),
        (
            trust.clone(),
            Artifact::Sha256([7; 32]),
            Some(root.as_path()),
            &["artifact binding"][..],
        ),
        // The public-good root knows neither the mock's log nor its CA.
        (
            trust.clone(),
            Artifact::Sha256(digest),
            None,
            &["transparency log", "certificate"][..],
        ),
    ];
    for (who, what, with_root, checks) in refusals {
        let err = verify_bundle(&bundle_json, &what, &who, with_root)
            .unwrap_err()
            .to_string();
        assert!(
            checks.iter().any(|check| err.starts_with(check)),
            "expected a failure of {checks:?}: {err}"
        );
    }
    assert!(node_verify(
        &modules,
        &root,
        &bundle_path,
        "https://example.com/x",
        ISSUER,
        &digest_hex
    )
    .is_err());

    // (d) The same bundle with another statement (same subject, other result) in its envelope.
    let mut tampered = bundle.clone();
    tampered["dsseEnvelope"]["payload"] =
        serde_json::Value::String(STANDARD.encode(self::statement(&digest_hex, "FAILED")));
    let tampered_json = serde_json::to_string_pretty(&tampered).unwrap();
    let tampered_path = work.path().join("tampered.sigstore.json");
    std::fs::write(&tampered_path, &tampered_json).unwrap();
    let node = node_verify(
        &modules,
        &root,
        &tampered_path,
        SUBJECT,
        ISSUER,
        &digest_hex,
    );
    assert!(
        node.is_err(),
        "@sigstore/verify accepted the tampered bundle"
    );
    let ours = verify_bundle(
        &tampered_json,
        &Artifact::Sha256(digest),
        &trust,
        Some(&root),
    );
    let err = ours
        .expect_err("we accepted the tampered bundle")
        .to_string();
    println!("tampered bundle: ours: {err}\n@sigstore/verify: {node:?}");
    assert!(
        err.starts_with("signature") || err.starts_with("transparency log"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// The GitHub Actions token request.

/// Serves one HTTP request on 127.0.0.1 with `status` and `body`; returns the base URL and a
/// receiver for the request's head (request line and headers).
fn one_shot_server(status: &'static str, body: &'static str) -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let _ = tx.send(String::from_utf8_lossy(&head).to_string());
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes());
    });
    (url, rx)
}

fn actions_env(url: String) -> impl Fn(&str) -> Option<String> {
    move |name: &str| match name {
        "GITHUB_ACTIONS" => Some("true".to_string()),
        "ACTIONS_ID_TOKEN_REQUEST_URL" => Some(format!("{url}/token?api-version=2.0")),
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN" => Some("request-token-123".to_string()),
        _ => None,
    }
}

#[test]
fn the_actions_token_is_requested_with_the_sigstore_audience_over_plain_http() {
    let (url, request) = one_shot_server("200 OK", r#"{"count": 1, "value": "aaa.bbb.ccc"}"#);
    let token = ambient_token_from(&actions_env(url)).unwrap();
    assert_eq!(token.as_deref(), Some("aaa.bbb.ccc"));

    let head = request.recv_timeout(Duration::from_secs(30)).unwrap();
    let mut lines = head.lines();
    assert_eq!(
        lines.next(),
        Some("GET /token?api-version=2.0&audience=sigstore HTTP/1.1"),
        "{head}"
    );
    let authorization: Vec<&str> = lines
        .filter_map(|l| l.split_once(':'))
        .filter(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .map(|(_, value)| value.trim())
        .collect();
    assert_eq!(authorization, ["bearer request-token-123"], "{head}");
}

#[test]
fn a_refused_or_malformed_token_answer_is_an_error_that_does_not_leak_the_request_token() {
    for (status, body, expected) in [
        ("403 Forbidden", r#"{"message": "no"}"#, "HTTP 403"),
        ("200 OK", r#"{"token": "x"}"#, "no `value`"),
        ("200 OK", "not json", "not JSON"),
    ] {
        let (url, _request) = one_shot_server(status, body);
        let err = ambient_token_from(&actions_env(url))
            .unwrap_err()
            .to_string();
        assert!(err.contains(expected), "{err}");
        assert!(!err.contains("request-token-123"), "{err}");
    }
}

#[test]
fn without_an_identity_there_is_no_token() {
    // A pull request from a fork: in Actions, but without the token request variables.
    let fork = |name: &str| (name == "GITHUB_ACTIONS").then(|| "true".to_string());
    assert_eq!(ambient_token_from(&fork).unwrap(), None);
    assert_eq!(ambient_token_from(&|_: &str| None).unwrap(), None);
}

// ---------------------------------------------------------------------------------------------
// End to end: claim-check signs keyless, replay verifies the bundle offline.

/// A change whose one criterion a command checks: READY.
fn fixed_repo() -> (common::Repo, String) {
    let r = common::Repo::new();
    r.write("check.sh", "#!/bin/sh\ngrep -q fixed code.txt\n");
    r.write("code.txt", "broken\n");
    let base = r.commit("base");
    r.write("code.txt", "fixed\n");
    r.write(".shipmoor/acceptance.yaml", "version: 1\ncriteria:\n  - id: fixed\n    ac: The code is fixed.\n    check:\n      command: sh check.sh\n");
    r.commit("head");
    (r, base)
}

#[test]
fn claim_check_signs_keyless_and_replay_verifies_the_bundle() {
    let modules = node_modules();
    let mock = MockSigstore::start(&modules);
    let root = mock.trusted_root();
    let (r, base) = fixed_repo();
    let token = unsigned_jwt();
    let run = r.shipmoor_env(
        &["claim-check", "--base", &base, "--sign", "keyless"],
        &[
            ("SIGSTORE_ID_TOKEN", &token),
            ("SHIPMOOR_FULCIO_URL", &mock.base_url),
            ("SHIPMOOR_REKOR_URL", &mock.base_url),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("· keyless"), "{run:?}");
    assert!(
        run.stdout
            .contains("  signed: .shipmoor/claim-check.vsa.sigstore.json (Sigstore bundle)\n"),
        "the footer names the signed file: {run:?}"
    );
    let bundle = r.path().join(".shipmoor/claim-check.vsa.sigstore.json");
    assert!(bundle.exists());
    assert!(!r.exists(".shipmoor/claim-check.vsa.dsse.json"));

    // Our replay, offline, against the mock's trusted root.
    let root_s = root.to_str().unwrap();
    let run = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.sigstore.json",
        "--certificate-identity",
        SUBJECT,
        "--certificate-oidc-issuer",
        ISSUER,
        "--trusted-root",
        root_s,
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(&format!("certificate for {SUBJECT}")),
        "{run:?}"
    );
    // The wrong identity is refused at step 2.
    let run = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.sigstore.json",
        "--certificate-identity",
        "https://example.com/other",
        "--certificate-oidc-issuer",
        ISSUER,
        "--trusted-root",
        root_s,
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("2 signature  FAILED"), "{run:?}");

    // An independent verifier: @sigstore/verify, bound to the commit subject's sha256.
    let raw = std::process::Command::new("git")
        .args(["cat-file", "commit", "HEAD"])
        .current_dir(r.path())
        .output()
        .unwrap()
        .stdout;
    let sha = hex::encode(Sha256::digest(&raw));
    node_verify(&modules, &root, &bundle, SUBJECT, ISSUER, &sha)
        .unwrap_or_else(|e| panic!("@sigstore/verify refused our bundle: {e}"));

    // A fork's pull request: no identity, the run stays unsigned and says so.
    let run = r.shipmoor_env(
        &["claim-check", "--base", &base, "--sign", "keyless"],
        &[
            ("SIGSTORE_ID_TOKEN", ""),
            ("ACTIONS_ID_TOKEN_REQUEST_URL", ""),
            ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", ""),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("UNSIGNED"), "{run:?}");
    assert!(run.stderr.contains("warning: UNSIGNED"), "{run:?}");
    assert!(
        !bundle.exists(),
        "a stale bundle must not stand beside an unsigned statement"
    );
    let md = r.read(".shipmoor/verify.md");
    assert!(md.contains("(unsigned)"), "{md}");
}

/// Admission of a keyless VSA: the policy's identity signer (with the mock's trusted root, by
/// a path relative to the policy) admits it; the same bundle under a policy that trusts another
/// identity is denied at the signature, and so is a bundle whose statement was edited after
/// signing; the command line's `--certificate-identity` replaces the policy's signers.
#[test]
fn admit_verifies_a_keyless_vsa_by_the_policys_identity() {
    let modules = node_modules();
    let mock = MockSigstore::start(&modules);
    let (r, base) = fixed_repo();
    let image = format!("sha256:{}", "ab".repeat(32));
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string();
    let run = r.shipmoor_env(
        &[
            "claim-check",
            "--base",
            &base,
            "--sign",
            "keyless",
            "--subject",
            &format!("app={image}"),
        ],
        &[
            ("SIGSTORE_ID_TOKEN", &unsigned_jwt()),
            ("SHIPMOOR_FULCIO_URL", &mock.base_url),
            ("SHIPMOOR_REKOR_URL", &mock.base_url),
            ("SOURCE_DATE_EPOCH", &now),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(mock.trusted_root(), dir.path().join("trusted_root.json")).unwrap();
    let policy = |identity: &str| {
        let path = dir.path().join("policy.yaml");
        std::fs::write(
            &path,
            format!("version: 1\nmax_age: 1h\nrepositories: [\"*\"]\ntrusted_root: trusted_root.json\nsigners:\n  - identity: \"{identity}\"\n    issuer: \"{ISSUER}\"\n"),
        )
        .unwrap();
        path.to_str().unwrap().to_string()
    };
    let admit = |policy: &str, bundle: &str, extra: &[&str]| {
        let mut args = vec![
            "admit",
            "--policy",
            policy,
            "--attestation",
            bundle,
            "--subject",
            &image,
            "--format",
            "json",
        ];
        args.extend(extra);
        let run = r.shipmoor(&args);
        // A certificate's signer, allowed and denied.
        common::assert_matches_schema("claim_check.admit.v1", &run.stdout);
        let d: serde_json::Value =
            serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
        (run.code, d)
    };
    let bundle = ".shipmoor/claim-check.vsa.sigstore.json";

    let (code, d) = admit(&policy(SUBJECT), bundle, &[]);
    assert_eq!(code, 0, "{d:#}");
    assert_eq!(
        d["attestations"][0]["signer"],
        serde_json::json!({"kind": "certificate", "identity": SUBJECT, "issuer": ISSUER})
    );

    let other = policy("https://github.com/acme/other/.github/workflows/ci.yml@refs/heads/main");
    let (code, d) = admit(&other, bundle, &[]);
    assert_eq!(code, 1, "{d:#}");
    let reasons = d["reasons"].as_array().unwrap();
    assert_eq!(reasons.len(), 1, "{d:#}");
    assert!(
        reasons[0].as_str().unwrap().starts_with("signature: not signed by a signer the policy trusts (identity https://github.com/acme/other/"),
        "{d:#}"
    );
    // The command line's identity replaces the policy's, under the policy's trusted root.
    let (code, d) = admit(
        &other,
        bundle,
        &[
            "--certificate-identity",
            SUBJECT,
            "--certificate-oidc-issuer",
            ISSUER,
        ],
    );
    assert_eq!(code, 0, "{d:#}");

    // A BLOCKED statement cannot be passed off as READY: edit the signed payload's verdict.
    let mut b: serde_json::Value = serde_json::from_str(&r.read(bundle)).unwrap();
    let payload = STANDARD
        .decode(b["dsseEnvelope"]["payload"].as_str().unwrap())
        .unwrap();
    let edited = String::from_utf8(payload).unwrap().replace(
        "\"verificationResult\": \"PASSED\"",
        "\"verificationResult\": \"PASSED\" ",
    );
    b["dsseEnvelope"]["payload"] = STANDARD.encode(edited).into();
    r.write("tampered.json", &b.to_string());
    let (code, d) = admit(&policy(SUBJECT), "tampered.json", &[]);
    assert_eq!(code, 1, "{d:#}");
    let failed: Vec<&str> = d["attestations"][0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "failed")
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["signature"], "{d:#}");
}
