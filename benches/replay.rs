//! In-process benchmark of `shipmoor replay` (harness = false), driven by `bench/replay.sh`.
//!
//! Each attestation is read once; then, after a short warm-up, N calls of
//! [`shipmoor::replay::replay`] are timed one by one (every report must be valid), and so is the
//! signature check alone, so the figures can be set beside verifiers that only check signatures:
//!
//! - DSSE envelope (key): `attest::dsse::parse` + `attest::dsse::verify` (key loaded once);
//! - keyed bundle: JSON parse + `attest::keyed_bundle::verify_keyed_bundle`;
//! - keyless bundle: `attest::sigstore::verify_bundle` (what replay's step 2 calls: it reads the
//!   trusted root file on each call), and `sigstore_verify::verify` with the trusted root parsed
//!   once (what an in-process verifier that keeps its trust root pays).
//!
//! ```text
//! cargo bench --bench replay -- --iterations N --commit SHA [--commit-sha256 HEX]
//!     [--envelope F --key PUB --evidence DIR] [--keyed-bundle F --key PUB --evidence DIR]
//!     [--keyless-bundle F --identity SAN --issuer URL --trusted-root F --keyless-evidence DIR]
//!     [--json OUT]
//! ```
//!
//! Prints one line per measurement; with `--json`, also writes them as a JSON array.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use shipmoor::attest::sigstore::{verify_bundle, Artifact, Identity, Trust};
use shipmoor::attest::{dsse, keyed_bundle, keys};
use shipmoor::replay::{self, Expectations, SignatureCheck};

struct Stats {
    mean_ms: f64,
    median_ms: f64,
    min_ms: f64,
    n: usize,
}

/// Runs `f` a few times untimed, then `n` times each timed on its own.
fn measure(n: usize, mut f: impl FnMut()) -> Stats {
    for _ in 0..(n / 10).clamp(1, 10) {
        f();
    }
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f();
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    let mid = ms.len() / 2;
    let median_ms = if ms.len() % 2 == 0 {
        (ms[mid - 1] + ms[mid]) / 2.0
    } else {
        ms[mid]
    };
    Stats {
        mean_ms: ms.iter().sum::<f64>() / ms.len() as f64,
        median_ms,
        min_ms: ms[0],
        n,
    }
}

struct Args(BTreeMap<String, String>);

impl Args {
    fn parse() -> Args {
        let mut map = BTreeMap::new();
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            // `cargo bench` passes `--bench` to every bench target.
            if a == "--bench" {
                continue;
            }
            let Some(name) = a.strip_prefix("--") else {
                fail(&format!("unexpected argument `{a}`"));
            };
            let value = it
                .next()
                .unwrap_or_else(|| fail(&format!("--{name} needs a value")));
            map.insert(name.to_string(), value);
        }
        Args(map)
    }
    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
    fn need(&self, name: &str) -> &str {
        self.get(name)
            .unwrap_or_else(|| fail(&format!("--{name} is required")))
    }
    fn path(&self, name: &str) -> PathBuf {
        PathBuf::from(self.need(name))
    }
}

fn fail(msg: &str) -> ! {
    eprintln!("replay bench: {msg}");
    std::process::exit(2);
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", path.display())))
}

struct Results {
    rows: Vec<serde_json::Value>,
}

impl Results {
    fn push(&mut self, form: &str, what: &str, s: Stats) {
        println!(
            "  {form:<24} {what:<50} mean {:>8.3} ms  median {:>8.3} ms  min {:>8.3} ms  (n={})",
            s.mean_ms, s.median_ms, s.min_ms, s.n
        );
        self.rows.push(serde_json::json!({
            "verifier": "shipmoor",
            "form": form,
            "what": what,
            "mode": "in-process",
            "n": s.n,
            "mean_ms": s.mean_ms,
            "median_ms": s.median_ms,
            "min_ms": s.min_ms,
        }));
    }
}

/// Replays `bytes` once and stops the bench with the report when it is not valid.
fn replay_valid(
    bytes: &[u8],
    sig: &SignatureCheck,
    expect: &Expectations,
    evidence: &Path,
) -> replay::Report {
    let report = replay::replay(bytes, "bench", sig, expect, evidence, None);
    if !report.valid {
        fail(&format!(
            "the attestation does not replay:\n{}",
            replay::render(&report)
        ));
    }
    report
}

fn main() {
    let args = Args::parse();
    let n: usize = args
        .get("iterations")
        .unwrap_or("200")
        .parse()
        .unwrap_or_else(|_| fail("--iterations takes a number"));
    if n == 0 {
        fail("--iterations must be at least 1");
    }
    let expect = Expectations {
        commit: Some(args.need("commit").to_string()),
        commit_sha256: args.get("commit-sha256").map(str::to_string),
        subjects: vec![],
    };
    let mut out = Results { rows: Vec::new() };
    println!("shipmoor replay, in process ({n} timed calls each, after a warm-up):");

    // A keyed attestation: the DSSE envelope and the keyed bundle.
    if args.get("envelope").is_some() || args.get("keyed-bundle").is_some() {
        let key_path = args.path("key");
        let evidence = args.path("evidence");
        let pem = String::from_utf8(read(&key_path)).unwrap_or_else(|_| fail("the key: not UTF-8"));
        let key = keys::load_verifying_key(&pem).unwrap_or_else(|e| fail(&format!("the key: {e}")));
        let sig = SignatureCheck {
            key: Some(key_path.clone()),
            ..Default::default()
        };
        if let Some(path) = args.get("envelope") {
            let bytes = read(Path::new(path));
            replay_valid(&bytes, &sig, &expect, &evidence);
            out.push(
                "DSSE envelope (key)",
                "replay, 6 steps (rerun skipped)",
                measure(n, || {
                    let r = replay::replay(&bytes, "bench", &sig, &expect, &evidence, None);
                    assert!(black_box(r).valid);
                }),
            );
            out.push(
                "DSSE envelope (key)",
                "signature only: dsse::parse + dsse::verify",
                measure(n, || {
                    let env = dsse::parse(black_box(&bytes)).expect("envelope parses");
                    let v = dsse::verify(&env, &key).expect("envelope verifies");
                    black_box(v);
                }),
            );
        }
        if let Some(path) = args.get("keyed-bundle") {
            let bytes = read(Path::new(path));
            replay_valid(&bytes, &sig, &expect, &evidence);
            out.push(
                "keyed bundle",
                "replay, 6 steps (rerun skipped)",
                measure(n, || {
                    let r = replay::replay(&bytes, "bench", &sig, &expect, &evidence, None);
                    assert!(black_box(r).valid);
                }),
            );
            out.push(
                "keyed bundle",
                "signature only: JSON + verify_keyed_bundle",
                measure(n, || {
                    let v: serde_json::Value =
                        serde_json::from_slice(black_box(&bytes)).expect("bundle is JSON");
                    let ok = keyed_bundle::verify_keyed_bundle(&v, &key).expect("bundle verifies");
                    black_box(ok);
                }),
            );
        }
    }

    // A keyless attestation.
    if let Some(path) = args.get("keyless-bundle") {
        let bytes = read(Path::new(path));
        let json = String::from_utf8(bytes.clone()).unwrap_or_else(|_| fail("bundle: not UTF-8"));
        let identity = args.need("identity").to_string();
        let issuer = args.need("issuer").to_string();
        let root_path = args.path("trusted-root");
        let evidence = args.path("keyless-evidence");
        let sig = SignatureCheck {
            identity: Some((identity.clone(), issuer.clone())),
            trusted_root: Some(root_path.clone()),
            ..Default::default()
        };
        replay_valid(&bytes, &sig, &expect, &evidence);
        out.push(
            "keyless bundle",
            "replay, 6 steps (rerun skipped)",
            measure(n, || {
                let r = replay::replay(&bytes, "bench", &sig, &expect, &evidence, None);
                assert!(black_box(r).valid);
            }),
        );
        // The artifact the bundle is bound to: the statement's sha256 subject (the raw commit
        // object's SHA-256), as replay's step 2 binds it.
        let digest = first_sha256_subject(&bytes);
        let trust = Trust::Identity(Identity::new(identity.clone(), issuer.clone()));
        let artifact = Artifact::Sha256(digest);
        out.push(
            "keyless bundle",
            "signature only: attest::sigstore::verify_bundle",
            measure(n, || {
                let v = verify_bundle(black_box(&json), &artifact, &trust, Some(&root_path))
                    .expect("bundle verifies");
                black_box(v);
            }),
        );
        let root = sigstore_trust_root::TrustedRoot::from_file(&root_path)
            .unwrap_or_else(|e| fail(&format!("trusted root: {e}")));
        let policy = sigstore_verify::VerificationPolicy::new(identity.as_str(), issuer.as_str());
        out.push(
            "keyless bundle",
            "signature only: sigstore-verify, root loaded once",
            measure(n, || {
                let bundle =
                    sigstore_types::Bundle::from_json(black_box(&json)).expect("bundle parses");
                let input =
                    sigstore_types::Artifact::from_digest(sigstore_types::Sha256Hash::from(digest));
                let v = sigstore_verify::verify(input, &bundle, &policy, &root).expect("verifies");
                black_box(v);
            }),
        );
    }

    if out.rows.is_empty() {
        fail("nothing to measure: pass --envelope, --keyed-bundle or --keyless-bundle");
    }
    if let Some(path) = args.get("json") {
        let text = serde_json::to_string_pretty(&out.rows).expect("JSON");
        std::fs::write(path, text + "\n")
            .unwrap_or_else(|e| fail(&format!("cannot write {path}: {e}")));
    }
}

/// The first `sha256` subject of the bundle's statement.
fn first_sha256_subject(bundle: &[u8]) -> [u8; 32] {
    use base64::Engine as _;
    let v: serde_json::Value = serde_json::from_slice(bundle).expect("bundle is JSON");
    let payload = v
        .pointer("/dsseEnvelope/payload")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_else(|| fail("the keyless bundle has no DSSE payload"));
    let statement = base64::engine::general_purpose::STANDARD
        .decode(payload)
        .unwrap_or_else(|_| fail("the DSSE payload is not base64"));
    let st: serde_json::Value =
        serde_json::from_slice(&statement).unwrap_or_else(|_| fail("the statement is not JSON"));
    st["subject"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|s| {
            let hex = s.pointer("/digest/sha256")?.as_str()?;
            hex::decode(hex).ok()?.try_into().ok()
        })
        .unwrap_or_else(|| fail("the statement has no sha256 subject"))
}
