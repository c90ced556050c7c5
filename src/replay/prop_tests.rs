//! Properties of replay's readers: the attestation in each of its forms (a statement, a DSSE
//! envelope, a Sigstore bundle), the statement a signature covers, and the evidence records it
//! cites. Any bytes, and each fixture mutated, end in a report whose failed step says why,
//! never in a panic (see [`crate::prop_tests`]). The report names the attestation; step 4's
//! errors name the evidence item.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::{replay, Expectations, Report, SignatureCheck, Status};
use crate::attest::{dsse, keyed_bundle, keys};
use crate::prop_tests::{bytes, config, mutate_json, mutations, within};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/replay/format-1"
);
const STATEMENT: &[u8] =
    include_bytes!("../../tests/fixtures/replay/format-1/claim-check.vsa.json");
const BUNDLE: &[u8] = include_bytes!("../../tests/fixtures/admit/vsa.sigstore.json");
const KEY: &str = include_str!("../../tests/fixtures/keys/golden-ed25519.pem");
const PUBLIC_KEY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/keys/golden-ed25519.pub"
);
const NAME: &str = "shown/claim-check.vsa.json";

fn unsigned() -> SignatureCheck {
    SignatureCheck {
        allow_unsigned: true,
        ..SignatureCheck::default()
    }
}

fn keyed() -> SignatureCheck {
    SignatureCheck {
        key: Some(PathBuf::from(PUBLIC_KEY)),
        ..SignatureCheck::default()
    }
}

/// Replays `bytes`: a valid report, or one whose first failed step says why, and every later
/// step not run.
fn replayed(bytes: &[u8], sig: &SignatureCheck, evidence: &Path) -> Result<Report, String> {
    let report = within(20, "a replay", || {
        replay(bytes, NAME, sig, &Expectations::default(), evidence, None)
    });
    if report.attestation != NAME {
        return Err(format!("the report names {}", report.attestation));
    }
    if !report.valid {
        let Some(failed) = report.steps.iter().find(|s| s.status == Status::Failed) else {
            return Err(format!("invalid, and no step failed: {report:?}"));
        };
        if failed.detail.trim().is_empty() {
            return Err(format!("step {} failed without a reason", failed.number));
        }
    }
    Ok(report)
}

/// `statement` in a DSSE envelope signed with the golden key; as a keyed bundle when `bundle`.
fn signed(statement: &[u8], bundle: bool) -> Vec<u8> {
    let key = keys::load_signing_key(KEY, None).expect("the golden key");
    let env = dsse::sign(statement, dsse::PAYLOAD_TYPE, &key);
    if bundle {
        serde_json::to_vec(&keyed_bundle::to_bundle(&env).expect("a bundle")).expect("JSON")
    } else {
        serde_json::to_vec(&env).expect("JSON")
    }
}

fn evidence_dir() -> PathBuf {
    Path::new(FIXTURE).join("evidence")
}

#[test]
fn the_fixtures_start_valid() {
    let unmutated = mutate_json(STATEMENT, &[]);
    let r = replayed(&unmutated, &unsigned(), &evidence_dir()).expect("a report");
    assert!(r.valid, "{r:?}");
    for bundle in [false, true] {
        let r = replayed(&signed(&unmutated, bundle), &keyed(), &evidence_dir()).expect("a report");
        assert!(r.valid, "{r:?}");
    }
    let r = replayed(&mutate_json(BUNDLE, &[]), &keyed(), &evidence_dir()).expect("a report");
    assert!(
        r.steps[1].status == Status::Ok,
        "the bundle's signature verifies: {r:?}"
    );
}

/// Nesting past serde_json's limit in each form: step 1 fails (the recursion limit is on: no
/// feature of a dependency turned it off), with no stack overflow.
#[test]
fn deep_nesting_fails_step_1() {
    let deep = crate::prop_tests::DEEP;
    for text in [
        "[".repeat(deep),
        format!("{{\"_type\": {}", "[".repeat(deep)),
        format!(
            "{{\"payloadType\": \"x\", \"payload\": {}}}",
            "{\"a\":".repeat(deep)
        ),
        format!("{}1{}", "[".repeat(129), "]".repeat(129)),
    ] {
        let r = replayed(text.as_bytes(), &unsigned(), &evidence_dir()).expect("a report");
        assert_eq!(r.steps[0].status, Status::Failed, "{r:?}");
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_are_a_report(input in bytes()) {
        replayed(&input, &unsigned(), &evidence_dir()).map_err(TestCaseError::fail)?;
        replayed(&input, &keyed(), &evidence_dir()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_statement_is_a_report(m in mutations()) {
        replayed(&mutate_json(STATEMENT, &m), &unsigned(), &evidence_dir())
            .map_err(TestCaseError::fail)?;
    }

    /// The statement behind a good signature reaches steps 3 to 5 however it was mutated.
    #[test]
    fn a_mutated_statement_signed_is_a_report(m in mutations(), bundle in any::<bool>()) {
        let input = signed(&mutate_json(STATEMENT, &m), bundle);
        replayed(&input, &keyed(), &evidence_dir()).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_envelope_or_bundle_is_a_report(m in mutations(), which in 0..3u8) {
        let example = match which {
            0 => signed(STATEMENT, false),
            1 => signed(STATEMENT, true),
            _ => BUNDLE.to_vec(),
        };
        replayed(&mutate_json(&example, &m), &keyed(), &evidence_dir())
            .map_err(TestCaseError::fail)?;
    }

    /// An evidence record mutated and stored under its new digest, the statement citing that:
    /// the record reaches its parser (step 4), whose errors name it.
    #[test]
    fn a_mutated_evidence_record_is_a_report(m in mutations(), pick in any::<prop::sample::Index>()) {
        let store = tempfile::tempdir().expect("a temporary directory");
        let sha = store.path().join("sha256");
        std::fs::create_dir(&sha).expect("made");
        let mut records = Vec::new();
        for e in std::fs::read_dir(evidence_dir().join("sha256")).expect("the fixture") {
            let e = e.expect("an entry");
            let bytes = std::fs::read(e.path()).expect("read");
            std::fs::write(sha.join(e.file_name()), &bytes).expect("written");
            if serde_json::from_slice::<serde_json::Value>(&bytes).is_ok_and(|v| v.is_object()) {
                records.push((e.file_name().to_string_lossy().to_string(), bytes));
            }
        }
        records.sort();
        let (old, bytes) = pick.get(&records).clone();
        let mutated = mutate_json(&bytes, &m);
        let new = crate::digest::sha256_hex(&mutated);
        std::fs::write(sha.join(&new), &mutated).expect("written");
        let statement = String::from_utf8(STATEMENT.to_vec()).expect("UTF-8").replace(&old, &new);
        let r = replayed(statement.as_bytes(), &unsigned(), store.path())
            .map_err(TestCaseError::fail)?;
        if let Some(failed) = r.steps.iter().find(|s| s.status == Status::Failed && s.number == 4) {
            prop_assert!(
                failed.detail.contains("sha256:") || failed.detail.contains("evidence"),
                "step 4 names no item: {}",
                failed.detail
            );
        }
    }
}
