//! Independent implementations check what `attest::dsse` and `attest::keyed_bundle` produce:
//!
//! - PyPI `securesystemslib` verifies our DSSE envelopes, rejects tampered ones, and signs
//!   envelopes that we verify (`tests/interop/dsse_securesystemslib.py`);
//! - npm `@sigstore/verify` verifies our keyed bundles and rejects tampered ones
//!   (`tests/interop/verify_bundle.js`);
//! - the `openssl` command line verifies our signatures over PAE, makes the same Ed25519
//!   signature, and signs P-256 PAE that we verify.
//!
//! Keys come from `openssl genpkey`. The tools are installed once per test run under
//! `$CARGO_TARGET_TMPDIR` behind a lock directory (nextest runs each test in its own process).
//! A test whose tool is missing fails and names it; none is skipped.

use crate::common;

use common::lock::Lock;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;
use shipmoor::attest::dsse::{self, Envelope, PAYLOAD_TYPE};
use shipmoor::attest::keyed_bundle;
use shipmoor::attest::keys::{load_signing_key, load_verifying_key, SigningKey, VerifyingKey};

const SSLIB_SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/interop/dsse_securesystemslib.py"
);
const BUNDLE_SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/interop/verify_bundle.js"
);
const SIGSTORE_JS: &str = "@sigstore/verify@3 @sigstore/bundle@4";

// ---------------------------------------------------------------------------------------------
// Tools

fn require_program(program: &str, why: &str) {
    let ok = Command::new(program)
        .arg(if program == "openssl" {
            "version"
        } else {
            "--version"
        })
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "`{program}` does not run: {why}");
}

fn tools_dir(kind: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(kind);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `python3` with `securesystemslib[crypto]` importable, installed with pip when it is not.
fn securesystemslib() -> &'static str {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        require_program(
            "python3",
            "the securesystemslib interop tests need Python 3 with pip",
        );
        let importable = || {
            Command::new("python3")
                .args(["-c", "import securesystemslib.dsse, cryptography"])
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if importable() {
            return;
        }
        let _lock = Lock::acquire(tools_dir("py-tools").join("securesystemslib.lock"));
        if importable() {
            return;
        }
        let out = Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "securesystemslib[crypto]",
            ])
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success() && importable(),
            "`python3 -m pip install 'securesystemslib[crypto]'` failed: the securesystemslib \
             interop tests need it from PyPI\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    });
    "python3"
}

/// The `node_modules` holding `@sigstore/verify` and `@sigstore/bundle`, installed once.
fn sigstore_js() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let why = "the @sigstore/verify interop tests need Node.js 20+ with npm";
        require_program("node", why);
        require_program("npm", why);
        let base = tools_dir("js-tools");
        let dir = base.join("sigstore-verify");
        let marker = dir.join(".installed");
        let done = || std::fs::read_to_string(&marker).is_ok_and(|s| s == SIGSTORE_JS);
        if !done() {
            let _lock = Lock::acquire(base.join("sigstore-verify.lock"));
            if !done() {
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(
                    dir.join("package.json"),
                    "{\"name\": \"shipmoor-test-sigstore-verify\", \"private\": true}\n",
                )
                .unwrap();
                let out = Command::new("npm")
                    .args(["install", "--no-audit", "--no-fund"])
                    .args(SIGSTORE_JS.split(' '))
                    .current_dir(&dir)
                    .output()
                    .expect("npm runs");
                assert!(
                    out.status.success(),
                    "`npm install {SIGSTORE_JS}` failed in {}:\n{}\n{}",
                    dir.display(),
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                for package in ["@sigstore/verify", "@sigstore/bundle"] {
                    assert!(
                        dir.join("node_modules").join(package).is_dir(),
                        "npm installed {SIGSTORE_JS} but there is no node_modules/{package}"
                    );
                }
                std::fs::write(&marker, SIGSTORE_JS).unwrap();
            }
        }
        dir.join("node_modules")
    })
}

/// Runs `openssl ARGS` in `dir`, which must succeed.
fn openssl(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = openssl_status(dir, args);
    assert!(
        out.status.success(),
        "`openssl {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn openssl_status(dir: &Path, args: &[&str]) -> Output {
    require_program("openssl", "these tests make keys with OpenSSL 3");
    Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs")
}

// ---------------------------------------------------------------------------------------------
// Keys and payloads

const KINDS: [&str; 2] = ["ed25519", "p256"];

/// Keys made by openssl in a temporary directory: `NAME.pem` (private), `NAME.pub` (public,
/// written by openssl) and `p256-enc.pem` (encrypted with the password `secret`).
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::Builder::new()
            .prefix("interop-dsse-")
            .tempdir()
            .unwrap();
        let d = dir.path();
        openssl(
            d,
            &["genpkey", "-algorithm", "ed25519", "-out", "ed25519.pem"],
        );
        openssl(
            d,
            &[
                "genpkey",
                "-algorithm",
                "EC",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-out",
                "p256.pem",
            ],
        );
        for kind in KINDS {
            openssl(
                d,
                &[
                    "pkey",
                    "-in",
                    &format!("{kind}.pem"),
                    "-pubout",
                    "-out",
                    &format!("{kind}.pub"),
                ],
            );
        }
        openssl(
            d,
            &[
                "pkcs8",
                "-topk8",
                "-v2",
                "aes-256-cbc",
                "-passout",
                "pass:secret",
                "-in",
                "p256.pem",
                "-out",
                "p256-enc.pem",
            ],
        );
        Fixture { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap()
    }

    fn signing(&self, kind: &str) -> SigningKey {
        load_signing_key(&self.read(&format!("{kind}.pem")), None).unwrap()
    }

    fn verifying(&self, kind: &str) -> VerifyingKey {
        load_verifying_key(&self.read(&format!("{kind}.pub"))).unwrap()
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

fn statement() -> Vec<u8> {
    let v = serde_json::json!({
        "_type": "https://in-toto.io/Statement/v1",
        "subject": [{
            "name": "https://github.com/shipmoor/example",
            "digest": {"gitCommit": "4f1c0c5a3d2e8b7f6a5b4c3d2e1f0a9b8c7d6e5f"},
        }],
        "predicateType": "https://slsa.dev/verification_summary/v1",
        "predicate": {
            "verifier": {"id": "https://github.com/shipmoor/claim-check"},
            "verificationResult": "PASSED",
            "verifiedLevels": ["SHIPMOOR_CLAIM_CHECK_READY"],
            "note": "non-ASCII survives: é ü ✓",
        },
    });
    let mut out = serde_json::to_vec_pretty(&v).unwrap();
    out.push(b'\n');
    out
}

/// The envelope with its payload replaced, its signature or payloadType altered.
fn tampered(env: &Envelope) -> Vec<(&'static str, Envelope)> {
    let mut payload = env.clone();
    let mut bytes = STANDARD.decode(&env.payload).unwrap();
    let last = bytes.len() - 2;
    bytes[last] ^= 0x01;
    payload.payload = STANDARD.encode(bytes);

    let mut sig = env.clone();
    let mut s = STANDARD.decode(&env.signatures[0].sig).unwrap();
    let mid = s.len() / 2;
    s[mid] ^= 0x01;
    sig.signatures[0].sig = STANDARD.encode(s);

    let mut payload_type = env.clone();
    payload_type.payload_type = "application/vnd.in-toto+jsoN".to_string();

    vec![
        ("payload", payload),
        ("signature", sig),
        ("payloadType", payload_type),
    ]
}

/// Exit code 0 or 1 of an interop script; anything else is a crash and fails the test.
fn verdict(what: &str, out: &Output) -> bool {
    match out.status.code() {
        Some(0) => true,
        Some(1) => false,
        _ => panic!(
            "{what} crashed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// securesystemslib

fn sslib_verify(fx: &Fixture, env: &Envelope, kind: &str, keyid: &str) -> Output {
    let python = securesystemslib();
    let path = fx.write("envelope.json", &serde_json::to_vec_pretty(env).unwrap());
    Command::new(python)
        .arg(SSLIB_SCRIPT)
        .arg("verify")
        .arg(&path)
        .arg(fx.path(&format!("{kind}.pub")))
        .arg(keyid)
        .output()
        .expect("python3 runs")
}

#[test]
fn securesystemslib_verifies_our_envelopes() {
    let fx = Fixture::new();
    for kind in KINDS {
        let key = fx.signing(kind);
        let keyid = key.keyid();
        let env = dsse::sign(&statement(), PAYLOAD_TYPE, &key);
        let out = sslib_verify(&fx, &env, kind, &keyid);
        assert!(
            verdict("securesystemslib", &out),
            "securesystemslib rejected our {kind} envelope:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, statement(), "the payload securesystemslib read");

        for (what, bad) in tampered(&env) {
            let out = sslib_verify(&fx, &bad, kind, &keyid);
            assert!(
                !verdict("securesystemslib", &out),
                "securesystemslib accepted a {kind} envelope with a tampered {what}"
            );
            // And so do we.
            assert!(dsse::verify(&bad, &fx.verifying(kind)).is_err());
        }
        // The other key does not verify it.
        let other = if kind == "p256" { "ed25519" } else { "p256" };
        let out = sslib_verify(&fx, &env, other, &keyid);
        assert!(!verdict("securesystemslib", &out));
    }

    // A key loaded from encrypted PKCS#8 signs the same way.
    let key = load_signing_key(&fx.read("p256-enc.pem"), Some(b"secret")).unwrap();
    let env = dsse::sign(&statement(), PAYLOAD_TYPE, &key);
    let out = sslib_verify(&fx, &env, "p256", &key.keyid());
    assert!(verdict("securesystemslib", &out));
}

#[test]
fn we_verify_envelopes_securesystemslib_signs() {
    let fx = Fixture::new();
    let python = securesystemslib();
    let payload = fx.write("statement.json", &statement());
    for kind in KINDS {
        let vk = fx.verifying(kind);
        let out_path = fx.path(&format!("{kind}-sslib.json"));
        let out = Command::new(python)
            .arg(SSLIB_SCRIPT)
            .arg("sign")
            .arg(fx.path(&format!("{kind}.pem")))
            .arg(vk.keyid())
            .arg(PAYLOAD_TYPE)
            .arg(&payload)
            .arg(&out_path)
            .output()
            .expect("python3 runs");
        assert!(
            verdict("securesystemslib sign", &out),
            "securesystemslib could not sign"
        );
        let env = dsse::parse(&std::fs::read(&out_path).unwrap()).unwrap();
        let verified = dsse::verify(&env, &vk).unwrap();
        assert_eq!(verified.payload(), statement());
        assert_eq!(verified.payload_type(), PAYLOAD_TYPE);
        for (what, bad) in tampered(&env) {
            assert!(
                dsse::verify(&bad, &vk).is_err(),
                "we accepted a securesystemslib {kind} envelope with a tampered {what}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// @sigstore/verify

fn sigstore_verify(fx: &Fixture, bundle: &Value, kind: &str) -> Output {
    let node_modules = sigstore_js();
    let path = fx.write(
        "bundle.sigstore.json",
        &serde_json::to_vec_pretty(bundle).unwrap(),
    );
    Command::new("node")
        .arg(BUNDLE_SCRIPT)
        .arg(&path)
        .arg(fx.path(&format!("{kind}.pub")))
        .env("NODE_PATH", node_modules)
        .output()
        .expect("node runs")
}

#[test]
fn sigstore_verify_accepts_our_keyed_bundles() {
    let fx = Fixture::new();
    for kind in KINDS {
        let key = fx.signing(kind);
        let env = dsse::sign(&statement(), PAYLOAD_TYPE, &key);
        let bundle = keyed_bundle::to_bundle(&env).unwrap();
        let out = sigstore_verify(&fx, &bundle, kind);
        assert!(
            verdict("@sigstore/verify", &out),
            "@sigstore/verify rejected our {kind} bundle:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, statement(), "the payload @sigstore/verify read");
        // The keyid node computed from the PEM is the hint we wrote.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(&key.keyid()), "{stderr}");

        // Our own verifier agrees on the untampered bundle...
        let vk = fx.verifying(kind);
        assert!(keyed_bundle::verify_keyed_bundle(&bundle, &vk).is_ok());
        // ...and both reject every tampered one.
        for (what, bad) in tampered(&env) {
            let bad = keyed_bundle::to_bundle(&bad).unwrap();
            let out = sigstore_verify(&fx, &bad, kind);
            assert!(
                !verdict("@sigstore/verify", &out),
                "@sigstore/verify accepted a {kind} bundle with a tampered {what}"
            );
            assert!(keyed_bundle::verify_keyed_bundle(&bad, &vk).is_err());
        }
        let other = fx.signing(if kind == "p256" { "ed25519" } else { "p256" });
        let mut hint = bundle.clone();
        hint["verificationMaterial"]["publicKey"]["hint"] = other.keyid().into();
        let out = sigstore_verify(&fx, &hint, kind);
        assert!(
            !verdict("@sigstore/verify", &out),
            "@sigstore/verify accepted a {kind} bundle whose hint names another key"
        );
        assert!(keyed_bundle::verify_keyed_bundle(&hint, &vk).is_err());
        // The legacy media type spelling is read by both.
        let mut legacy = bundle.clone();
        legacy["mediaType"] = keyed_bundle::MEDIA_TYPE_LEGACY.into();
        assert!(verdict(
            "@sigstore/verify",
            &sigstore_verify(&fx, &legacy, kind)
        ));
        assert!(keyed_bundle::verify_keyed_bundle(&legacy, &vk).is_ok());
    }
}

// ---------------------------------------------------------------------------------------------
// openssl

#[test]
fn openssl_agrees_on_signatures_over_pae() {
    let fx = Fixture::new();
    let d = fx.dir.path();
    let payload = statement();
    fx.write("pae.bin", &dsse::pae(PAYLOAD_TYPE, &payload));

    // Ed25519 is deterministic: openssl makes the very signature we make.
    let env = dsse::sign(&payload, PAYLOAD_TYPE, &fx.signing("ed25519"));
    let ours = STANDARD.decode(&env.signatures[0].sig).unwrap();
    let theirs = openssl(
        d,
        &[
            "pkeyutl",
            "-sign",
            "-inkey",
            "ed25519.pem",
            "-rawin",
            "-in",
            "pae.bin",
        ],
    );
    assert_eq!(ours, theirs);
    fx.write("ed25519.sig", &ours);
    let ok = openssl_status(
        d,
        &[
            "pkeyutl",
            "-verify",
            "-pubin",
            "-inkey",
            "ed25519.pub",
            "-rawin",
            "-in",
            "pae.bin",
            "-sigfile",
            "ed25519.sig",
        ],
    );
    assert!(
        ok.status.success(),
        "openssl rejected our Ed25519 signature"
    );

    // Our P-256 signature is DER that `openssl dgst -verify` accepts.
    let env = dsse::sign(&payload, PAYLOAD_TYPE, &fx.signing("p256"));
    fx.write(
        "p256.sig",
        &STANDARD.decode(&env.signatures[0].sig).unwrap(),
    );
    let verify = |sig: &str, data: &str| {
        openssl_status(
            d,
            &[
                "dgst",
                "-sha256",
                "-verify",
                "p256.pub",
                "-signature",
                sig,
                data,
            ],
        )
        .status
        .success()
    };
    assert!(
        verify("p256.sig", "pae.bin"),
        "openssl rejected our P-256 signature"
    );
    // Over PAE, not over the bare payload.
    fx.write("payload.bin", &payload);
    assert!(!verify("p256.sig", "payload.bin"));

    // And openssl's P-256 signature over PAE verifies with us.
    let sig = openssl(d, &["dgst", "-sha256", "-sign", "p256.pem", "pae.bin"]);
    let mut theirs = env.clone();
    theirs.signatures[0].sig = STANDARD.encode(&sig);
    let verified = dsse::verify(&theirs, &fx.verifying("p256")).unwrap();
    assert_eq!(verified.payload(), payload);
}
