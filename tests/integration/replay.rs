//! `shipmoor replay`: a valid attestation in every form replays; every tampering is rejected,
//! naming the step that caught it; an attestation of the previous format still replays.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use common::{ident, require_pytest, Repo};
use serde_json::Value;
use shipmoor::attest::{dsse, keyed_bundle, keys};
use shipmoor::replay::{self, Expectations, SignatureCheck, Status};

fn openssl_key(dir: &Path, name: &str, algo: &[&str]) -> (PathBuf, PathBuf) {
    let key = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub"));
    let ok = Command::new("openssl")
        .arg("genpkey")
        .args(algo)
        .arg("-out")
        .arg(&key)
        .status()
        .expect("openssl runs (apt-get install openssl)");
    assert!(ok.success());
    let ok = Command::new("openssl")
        .args(["pkey", "-pubout", "-in"])
        .arg(&key)
        .arg("-out")
        .arg(&public)
        .status()
        .unwrap();
    assert!(ok.success());
    (key, public)
}

/// Where a run's keys are made: inside the repository's git directory, so they are outside the
/// work tree (the run sees a clean checkout), belong to this run alone when tests share a
/// process, and go with the repository.
fn keys_dir(r: &Repo) -> PathBuf {
    let dir = r.path().join(".git/cc-keys");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A change whose one criterion, `two`, a tagged pytest test flips from failing to passing.
fn two_repo() -> (Repo, String) {
    two_repo_testing("from svc.m import f\n\ndef test_two():\n    assert f() == 2\n")
}

/// [`two_repo`] with `test` as the tagged test file's text.
fn two_repo_testing(test: &str) -> (Repo, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("svc/__init__.py", "");
    r.write("svc/m.py", "def f():\n    return 1\n");
    let base = r.commit("base");
    r.write("svc/m.py", "def f():\n    return 2\n");
    r.write(&format!("tests/test_a_{}.py", ident("two")), test);
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: two\n    ac: f is two.\n",
    );
    r.commit("head");
    (r, base)
}

/// A run with a satisfied and an unsatisfied criterion, signed with an ECDSA P-256 key.
fn signed_run() -> (Repo, String, PathBuf, PathBuf) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("svc/__init__.py", "");
    r.write("svc/m.py", "def f():\n    return 1\n");
    let base = r.commit("base");
    r.write("svc/m.py", "def f():\n    return 2\n");
    r.write(
        &format!("tests/test_a_{}.py", ident("two")),
        "from svc.m import f\n\ndef test_two():\n    assert f() == 2\n",
    );
    r.write(
        &format!("tests/test_b_{}.py", ident("three")),
        "from svc.m import f\n\ndef test_three():\n    assert f() == 3\n",
    );
    r.write(".shipmoor/acceptance.yaml", "version: 1\ncriteria:\n  - id: two\n    ac: f is two.\n  - id: three\n    ac: f is three.\n    required: false\n");
    r.commit("head");
    let keys_dir = keys_dir(&r);
    let (key, public) = openssl_key(
        &keys_dir,
        "signer",
        &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
    );
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--sign",
        "key",
        "--key",
        key.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("· key"), "{run:?}");
    (r, base, key, public)
}

fn replay_bytes(r: &Repo, bytes: &[u8], public: &Path) -> replay::Report {
    thread_local!(static HEAD: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) });
    let head = HEAD.with(|h| {
        h.borrow_mut()
            .get_or_insert_with(|| r.git(&["rev-parse", "HEAD"]))
            .clone()
    });
    let sig = SignatureCheck {
        key: Some(public.to_path_buf()),
        ..Default::default()
    };
    let expect = Expectations {
        commit: Some(head),
        commit_sha256: None,
        subjects: vec![],
    };
    replay::replay(
        bytes,
        "test",
        &sig,
        &expect,
        &r.path().join(".shipmoor/evidence"),
        None,
    )
}

fn failed_step(report: &replay::Report) -> Option<(u8, &'static str)> {
    report
        .steps
        .iter()
        .find(|s| s.status == Status::Failed)
        .map(|s| (s.number, s.name))
}

const EXT: &str = "https://shipmoor.dev/claim-check/v1";

/// The step names in their order: a failed step is asserted by number and name together.
const STEP_NAMES: [&str; 6] = [
    "parse",
    "signature",
    "statement",
    "evidence",
    "fusion",
    "rerun",
];

/// The run's DSSE envelope: its bytes, its JSON and its decoded payload (the statement).
struct Envelope {
    bytes: Vec<u8>,
    json: Value,
    payload: Vec<u8>,
}

fn envelope(r: &Repo) -> Envelope {
    let bytes = std::fs::read(r.path().join(".shipmoor/claim-check.vsa.dsse.json")).unwrap();
    let json: Value = serde_json::from_slice(&bytes).unwrap();
    let payload = base64::engine::general_purpose::STANDARD
        .decode(json["payload"].as_str().unwrap())
        .unwrap();
    Envelope {
        bytes,
        json,
        payload,
    }
}

fn signing_key(path: &Path) -> keys::SigningKey {
    keys::load_signing_key(&std::fs::read_to_string(path).unwrap(), None).unwrap()
}

fn resign(st: &Value, k: &keys::SigningKey) -> Vec<u8> {
    serde_json::to_vec(&dsse::sign(
        &serde_json::to_vec(st).unwrap(),
        dsse::PAYLOAD_TYPE,
        k,
    ))
    .unwrap()
}

type Edit = Box<dyn Fn(&mut Value)>;

/// Re-signs the run's statement with the right key after each edit: each is caught at `step`
/// with a detail that contains the case's words, and no step after it runs. The unedited
/// statement re-signed replays first, so each case fails for its edit alone.
fn assert_edits_caught_at(step: u8, cases: Vec<(&str, Edit, &str)>) {
    let (r, _base, key_path, public) = signed_run();
    let signer = signing_key(&key_path);
    let statement: Value = serde_json::from_slice(&envelope(&r).payload).unwrap();
    assert_eq!(
        failed_step(&replay_bytes(&r, &resign(&statement, &signer), &public)),
        None
    );
    for (name, edit, detail) in &cases {
        let mut st = statement.clone();
        edit(&mut st);
        let report = replay_bytes(&r, &resign(&st, &signer), &public);
        assert_eq!(
            failed_step(&report),
            Some((step, STEP_NAMES[usize::from(step) - 1])),
            "{name}: {:?}",
            report.steps
        );
        let failed = &report.steps[usize::from(step) - 1];
        assert!(failed.detail.contains(detail), "{name}: {failed:?}");
        assert!(report
            .steps
            .iter()
            .filter(|s| s.number > step)
            .all(|s| s.status == Status::NotRun));
    }
}

#[test]
fn every_form_replays() {
    let (r, _base, _key, public) = signed_run();
    // Every form replays through the binary.
    for (file, extra) in [
        (
            ".shipmoor/claim-check.vsa.dsse.json",
            vec!["--key", public.to_str().unwrap()],
        ),
        (
            ".shipmoor/claim-check.vsa.sigstore.json",
            vec!["--key", public.to_str().unwrap()],
        ),
        (".shipmoor/claim-check.vsa.json", vec!["--allow-unsigned"]),
    ] {
        let mut args = vec!["replay", file];
        args.extend(extra);
        let run = r.shipmoor(&args);
        assert_eq!(run.code, 0, "{file}: {run:?}");
        assert!(run.stdout.starts_with("Replay  VALID"), "{run:?}");
    }
    let run = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["steps"].as_array().unwrap().len(), 6);
    assert_eq!(v["verdict"], "READY WITH GAPS");
    common::assert_schema_is_strict("claim_check.replay.v1", &run.stdout);
    // An INVALID report is a document of the same schema: failed at step 3 (the form and
    // format known, no verdict) and at step 1 (nothing known), the later steps not run.
    let other = "0".repeat(40);
    let run = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--commit",
        &other,
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    common::assert_matches_schema("claim_check.replay.v1", &run.stdout);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["steps"][2]["status"], "failed", "{v:#}");
    assert_eq!(v["steps"][3]["status"], "not_run", "{v:#}");
    assert_eq!(v["verdict"], Value::Null, "{v:#}");
    r.write("not-an-attestation.json", "{\"hello\": 1}\n");
    let run = r.shipmoor(&[
        "replay",
        "not-an-attestation.json",
        "--allow-unsigned",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    common::assert_matches_schema("claim_check.replay.v1", &run.stdout);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["steps"][0]["status"], "failed", "{v:#}");
    assert_eq!(v["form"], Value::Null, "{v:#}");
    // And through the library, which the negative tests below use.
    assert_eq!(
        failed_step(&replay_bytes(&r, &envelope(&r).bytes, &public)),
        None
    );
}

/// Step 1: an envelope or bundle that repeats a key, at any level, is INVALID at parse and the
/// key is named, as a statement's repeated field is. Each repetition repeats the value already
/// there, so the file reads the same whichever occurrence a parser keeps: only the repetition
/// is wrong (without the check each of them replays VALID).
#[test]
fn a_repeated_key_in_the_envelope_or_bundle_is_refused_at_parse() {
    let (r, _base, _key, public) = signed_run();
    let compact = |file: &str| -> (String, Value) {
        let v: Value =
            serde_json::from_slice(&std::fs::read(r.path().join(file)).unwrap()).unwrap();
        (serde_json::to_string(&v).unwrap(), v)
    };
    let (envelope, env) = compact(".shipmoor/claim-check.vsa.dsse.json");
    let (bundle, b) = compact(".shipmoor/claim-check.vsa.sigstore.json");
    let json = |v: &Value| serde_json::to_string(v).unwrap();
    // `"key":{` becomes `"key":{"inner":<its value>,`.
    let repeat_in = |text: &str, open: &str, inner: &str, value: &Value| {
        assert!(text.contains(open), "{open} not in {text}");
        text.replacen(open, &format!("{open}\"{inner}\":{},", json(value)), 1)
    };
    let cases = [
        (
            "envelope payloadType",
            repeat_in(&envelope, "{", "payloadType", &env["payloadType"]),
            "duplicate key `payloadType` at the top level",
        ),
        (
            "envelope signatures[0].keyid",
            repeat_in(
                &envelope,
                "\"signatures\":[{",
                "keyid",
                &env["signatures"][0]["keyid"],
            ),
            "duplicate key `keyid` in `signatures[0]`",
        ),
        (
            "bundle dsseEnvelope.payload",
            repeat_in(
                &bundle,
                "\"dsseEnvelope\":{",
                "payload",
                &b["dsseEnvelope"]["payload"],
            ),
            "duplicate key `payload` in `dsseEnvelope`",
        ),
        (
            "bundle verificationMaterial.publicKey.hint",
            repeat_in(
                &bundle,
                "\"publicKey\":{",
                "hint",
                &b["verificationMaterial"]["publicKey"]["hint"],
            ),
            "duplicate key `hint` in `verificationMaterial.publicKey`",
        ),
    ];
    for (name, text, want) in cases {
        let file = r.path().join(".git/repeated.json");
        std::fs::write(&file, &text).unwrap();
        let run = r.shipmoor(&[
            "replay",
            file.to_str().unwrap(),
            "--key",
            public.to_str().unwrap(),
            "--evidence",
            ".shipmoor/evidence",
        ]);
        assert_eq!(run.code, 1, "{name}: {run:?}");
        assert!(run.stdout.starts_with("Replay  INVALID"), "{name}: {run:?}");
        let parse = run
            .stdout
            .lines()
            .find(|l| l.contains("1 parse"))
            .unwrap_or_default();
        assert!(
            parse.contains("FAILED") && parse.contains(want),
            "{name}: {run:?}"
        );
        assert!(
            run.stdout.contains("2 signature  not run"),
            "{name}: {run:?}"
        );
    }
}

/// Step 1: a statement of a format this release does not read, signed correctly, is refused
/// before its signature is looked at.
#[test]
fn parse_refuses_a_newer_format() {
    assert_edits_caught_at(
        1,
        vec![(
            "newer format",
            Box::new(|s: &mut Value| s["predicate"][EXT]["format_version"] = 99.into()),
            "statement format 99: this release reads formats 1 to",
        )],
    );
}

/// Steps 1 and 2: every single-bit change to the envelope's payload, signature, keyid and
/// payloadType is caught, the signature's own bytes and the keyid at the signature step.
#[test]
fn signature_catches_every_flipped_bit_of_the_envelope() {
    let (r, _base, _key, public) = signed_run();
    let Envelope {
        json: env, payload, ..
    } = envelope(&r);
    let b64 = base64::engine::general_purpose::STANDARD;
    let with = |field: &str, value: Value| {
        let mut e = env.clone();
        if field == "sig" || field == "keyid" {
            e["signatures"][0][field] = value;
        } else {
            e[field] = value;
        }
        serde_json::to_vec(&e).unwrap()
    };
    let mut checked = 0;
    for i in 0..payload.len() {
        let mut p = payload.clone();
        p[i] ^= 0x01;
        let report = replay_bytes(&r, &with("payload", b64.encode(&p).into()), &public);
        let step =
            failed_step(&report).unwrap_or_else(|| panic!("payload byte {i} flipped was accepted"));
        assert!(step.0 <= 2, "payload byte {i}: caught at {step:?}");
        checked += 1;
    }
    let sig = b64
        .decode(env["signatures"][0]["sig"].as_str().unwrap())
        .unwrap();
    for i in 0..sig.len() {
        let mut s = sig.clone();
        s[i] ^= 0x01;
        let report = replay_bytes(&r, &with("sig", b64.encode(&s).into()), &public);
        assert_eq!(
            failed_step(&report).map(|s| s.0),
            Some(2),
            "signature byte {i}"
        );
        checked += 1;
    }
    let keyid = env["signatures"][0]["keyid"].as_str().unwrap().to_string();
    for i in 0..keyid.len() {
        let mut k = keyid.clone().into_bytes();
        k[i] = if k[i] == b'A' { b'B' } else { b'A' };
        let report = replay_bytes(
            &r,
            &with("keyid", String::from_utf8(k).unwrap().into()),
            &public,
        );
        assert_eq!(failed_step(&report).map(|s| s.0), Some(2), "keyid byte {i}");
        checked += 1;
    }
    let pt = env["payloadType"].as_str().unwrap().to_string();
    for i in 0..pt.len() {
        let mut t = pt.clone().into_bytes();
        t[i] = if t[i] == b'x' { b'y' } else { b'x' };
        let report = replay_bytes(
            &r,
            &with("payloadType", String::from_utf8(t).unwrap().into()),
            &public,
        );
        assert!(
            failed_step(&report).is_some_and(|s| s.0 <= 2),
            "payloadType byte {i}"
        );
        checked += 1;
    }
    assert!(checked > 1000);
}

/// Step 2: the unchanged statement re-signed with another key, as an envelope and as a keyed
/// bundle, is refused at the signature step.
#[test]
fn signature_refuses_another_key() {
    let (r, _base, _key, public) = signed_run();
    let Envelope { payload, .. } = envelope(&r);
    let statement: Value = serde_json::from_slice(&payload).unwrap();
    let (other_key, _) = openssl_key(&keys_dir(&r), "other", &["-algorithm", "ed25519"]);
    let other = signing_key(&other_key);
    let report = replay_bytes(&r, &resign(&statement, &other), &public);
    assert_eq!(failed_step(&report), Some((2, "signature")));
    assert!(
        report.steps[1]
            .detail
            .contains("DSSE signature: no signature is for this key"),
        "{:?}",
        report.steps[1]
    );

    // A keyed bundle re-signed with another key.
    let bundle =
        keyed_bundle::to_bundle(&dsse::sign(&payload, dsse::PAYLOAD_TYPE, &other)).unwrap();
    let report = replay_bytes(&r, &serde_json::to_vec(&bundle).unwrap(), &public);
    assert_eq!(failed_step(&report).map(|s| s.0), Some(2));
    assert!(
        report.steps[1]
            .detail
            .contains("keyed bundle: the bundle's public key hint"),
        "{:?}",
        report.steps[1]
    );
}

/// Step 3: a statement about another commit, of another predicate type or by another verifier.
#[test]
fn statement_catches_a_changed_subject_type_or_verifier() {
    assert_edits_caught_at(
        3,
        vec![
            (
                "swapped subject",
                Box::new(|s: &mut Value| {
                    s["subject"][0]["digest"]["gitCommit"] = "0".repeat(40).into()
                }),
                "the subject is commit 0000000000000000000000000000000000000000, not the expected",
            ),
            (
                "changed predicateType",
                Box::new(|s: &mut Value| {
                    s["predicateType"] = "https://slsa.dev/provenance/v1".into()
                }),
                "`predicateType` is \"https://slsa.dev/provenance/v1\"",
            ),
            (
                "changed verifier",
                Box::new(|s: &mut Value| {
                    s["predicate"]["verifier"]["id"] = "https://example.com/other".into()
                }),
                "`verifier.id` is \"https://example.com/other\"",
            ),
        ],
    );
}

/// Step 3 through the binary: the failed step is named, exit 1.
#[test]
fn statement_failure_is_named_by_the_binary() {
    let (r, _base, key_path, public) = signed_run();
    let mut st: Value = serde_json::from_slice(&envelope(&r).payload).unwrap();
    st["subject"][0]["digest"]["gitCommit"] = "1".repeat(40).into();
    let tampered = r.path().join("tampered.json");
    std::fs::write(&tampered, resign(&st, &signing_key(&key_path))).unwrap();
    let run = r.shipmoor(&[
        "replay",
        tampered.to_str().unwrap(),
        "--key",
        public.to_str().unwrap(),
        "--evidence",
        ".shipmoor/evidence",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("3 statement  FAILED"), "{run:?}");
}

/// Step 4: a disposition or test outcome that its evidence records do not show.
#[test]
fn evidence_catches_an_edited_disposition_or_outcome() {
    assert_edits_caught_at(
        4,
        vec![
            (
                "edited disposition",
                Box::new(|s: &mut Value| {
                    s["predicate"][EXT]["dispositions"][1]["floor"]["result"] = "satisfied".into()
                }),
                "criterion three reads satisfied but its evidence gives unsatisfied",
            ),
            (
                "edited test outcome",
                Box::new(|s: &mut Value| {
                    s["predicate"][EXT]["dispositions"][0]["floor"]["tests"][0]["base"] =
                        "pass".into()
                }),
                "reads `pass` at base but its evidence shows `fail`",
            ),
        ],
    );
}

/// Step 4: an evidence record modified in the store, then missing from it; put back, the
/// envelope replays again.
#[test]
fn evidence_catches_a_modified_or_missing_record() {
    let (r, _base, _key, public) = signed_run();
    let Envelope {
        bytes: env_bytes,
        payload,
        ..
    } = envelope(&r);
    let statement: Value = serde_json::from_slice(&payload).unwrap();
    let rec_hex = statement["predicate"]["https://shipmoor.dev/claim-check/v1"]["evidence"][0]
        .as_str()
        .unwrap()["sha256:".len()..]
        .to_string();
    let rec_path = r.path().join(".shipmoor/evidence/sha256").join(&rec_hex);
    let original = std::fs::read(&rec_path).unwrap();
    let mut modified = original.clone();
    modified[10] ^= 0x20;
    std::fs::write(&rec_path, &modified).unwrap();
    let report = replay_bytes(&r, &env_bytes, &public);
    assert_eq!(failed_step(&report), Some((4, "evidence")));
    assert!(
        report.steps[3].detail.contains("was modified"),
        "{:?}",
        report.steps[3]
    );
    std::fs::remove_file(&rec_path).unwrap();
    let report = replay_bytes(&r, &env_bytes, &public);
    assert_eq!(failed_step(&report), Some((4, "evidence")));
    assert!(
        report.steps[3].detail.contains("is missing"),
        "{:?}",
        report.steps[3]
    );
    std::fs::write(&rec_path, &original).unwrap();
    assert_eq!(failed_step(&replay_bytes(&r, &env_bytes, &public)), None);
}

/// Step 5: a verdict or `verificationResult` the recorded policy does not give, or a criterion
/// dropped from the dispositions.
#[test]
fn fusion_catches_an_edited_verdict_or_a_dropped_criterion() {
    assert_edits_caught_at(
        5,
        vec![
            (
                "edited verdict",
                Box::new(|s: &mut Value| s["predicate"][EXT]["verdict"] = "READY".into()),
                "the dispositions fuse to READY WITH GAPS (rule 5) but the attestation says READY",
            ),
            (
                "edited verificationResult",
                Box::new(|s: &mut Value| s["predicate"]["verificationResult"] = "FAILED".into()),
                "verificationResult FAILED disagrees with the verdict READY WITH GAPS",
            ),
            (
                "dropped criterion",
                Box::new(|s: &mut Value| {
                    s["predicate"][EXT]["dispositions"]
                        .as_array_mut()
                        .unwrap()
                        .remove(1);
                }),
                "the dispositions fuse to READY (rule 4) but the attestation says READY WITH GAPS",
            ),
        ],
    );
}

/// Step 6: `--rerun` re-executes the floor; a test whose outcome now differs from the recorded
/// one (here it reads the environment) fails the step, naming the criterion. Without the
/// change in the environment the same rerun agrees, so the difference alone fails it.
#[test]
fn rerun_catches_outcomes_that_differ_now() {
    let (r, base) = two_repo_testing(
        "import os\nfrom svc.m import f\n\ndef test_two():\n    assert f() == 2\n    assert 'CC_REPLAY_BREAKS' not in os.environ\n",
    );
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    let args = [
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--rerun",
    ];
    let agrees = r.shipmoor(&args);
    assert_eq!(agrees.code, 0, "{agrees:?}");
    assert!(agrees.stdout.contains("6 rerun      ok"), "{agrees:?}");
    let differs = r.shipmoor_env(&args, &[("CC_REPLAY_BREAKS", "1")]);
    assert_eq!(differs.code, 1, "{differs:?}");
    assert!(
        differs.stdout.contains("6 rerun      FAILED"),
        "{differs:?}"
    );
    assert!(
        differs
            .stdout
            .contains("the floor re-run differs: two: recorded satisfied, now unsatisfied"),
        "{differs:?}"
    );
}

#[test]
fn an_attestation_of_the_previous_format_still_replays() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/format-1"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .args([
            "replay",
            "claim-check.vsa.json",
            "--allow-unsigned",
            "--commit",
            "fbac99915b71a5f8645bf21e20c54f0cfb18a1cb",
            "--evidence",
            "evidence",
            "--format",
            "json",
        ])
        .current_dir(fixture)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{v}");
    assert_eq!(v["format_version"], 1);
    assert_eq!(v["verdict"], "READY WITH GAPS");
}

#[test]
fn replay_without_a_way_to_check_the_signature_is_a_usage_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .args(["replay", "missing.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .args(["replay", "x.json", "--certificate-identity", "a"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A `check.command` disposition must be what its command records show: a failed command edited
/// to satisfied (with the verdict made to match) is caught at the evidence step.
#[test]
fn a_command_disposition_must_agree_with_its_records() {
    let r = Repo::new();
    r.write("code.txt", "broken\n");
    let base = r.commit("base");
    r.write("check.sh", "grep -q fixed code.txt\n");
    r.write(".shipmoor/acceptance.yaml", "version: 1\ncriteria:\n  - id: fixed\n    ac: The code is fixed.\n    check:\n      command: sh check.sh\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    let path = r.path().join(".shipmoor/claim-check.vsa.json");
    let mut st: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let ext = "https://shipmoor.dev/claim-check/v1";
    st["predicate"][ext]["dispositions"][0]["floor"]["result"] = "satisfied".into();
    st["predicate"][ext]["dispositions"][0]["disposition"] = "satisfied".into();
    st["predicate"][ext]["verdict"] = "READY".into();
    st["predicate"]["verificationResult"] = "PASSED".into();
    st["predicate"]["verifiedLevels"] = serde_json::json!(["SHIPMOOR_CLAIM_CHECK_READY"]);
    std::fs::write(&path, serde_json::to_vec_pretty(&st).unwrap()).unwrap();
    let run = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("4 evidence   FAILED"), "{run:?}");
    assert!(
        run.stdout.contains("command records do not show"),
        "{run:?}"
    );
}

/// `evidence gc` keeps what the attestations beside the store cite and removes what an earlier
/// run left behind: afterwards every form still replays; `--dry-run` removes nothing; a store
/// with no attestation beside it is refused rather than emptied.
#[test]
fn evidence_gc_keeps_what_the_statements_cite() {
    let (r, base, key, public) = signed_run();
    let store = r.path().join(".shipmoor/evidence/sha256");
    let count = || std::fs::read_dir(&store).unwrap().count();
    let first = count();
    // The head commit again under another message, and a second run: every record names the
    // new commit, so the first run's are cited no more.
    r.git(&["commit", "--amend", "-q", "-m", "head, again"]);
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--sign",
        "key",
        "--key",
        key.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let before = count();
    assert!(
        before > first,
        "{before} items after two runs, {first} after one"
    );

    let dry = r.shipmoor(&["evidence", "gc", "--dry-run"]);
    assert_eq!(dry.code, 0, "{dry:?}");
    assert!(dry.stdout.contains("would remove "), "{}", dry.stdout);
    assert_eq!(count(), before, "--dry-run removes nothing");

    let gc = r.shipmoor(&["evidence", "gc"]);
    assert_eq!(gc.code, 0, "{gc:?}");
    let after = count();
    assert!(after < before, "{}", gc.stdout);
    assert!(
        gc.stdout
            .starts_with(&format!("removed {} of {before} items", before - after)),
        "{}",
        gc.stdout
    );
    for form in [
        ".shipmoor/claim-check.vsa.dsse.json",
        ".shipmoor/claim-check.vsa.sigstore.json",
    ] {
        let replay = r.shipmoor(&["replay", form, "--key", public.to_str().unwrap()]);
        assert_eq!(replay.code, 0, "{form} after gc: {replay:?}");
    }
    // Nothing more to remove.
    let again = r.shipmoor(&["evidence", "gc"]);
    assert!(
        again
            .stdout
            .starts_with(&format!("removed 0 of {after} items")),
        "{}",
        again.stdout
    );

    // A store alone, with no attestation beside it, is not emptied.
    let lone = tempfile::tempdir().unwrap();
    let lone_store = lone.path().join("evidence");
    std::fs::create_dir_all(lone_store.join("sha256")).unwrap();
    std::fs::write(lone_store.join("sha256").join("ab".repeat(32)), "x").unwrap();
    let refused = r.shipmoor(&[
        "evidence",
        "gc",
        "--evidence-dir",
        lone_store.to_str().unwrap(),
    ]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("--keep"), "{}", refused.stderr);
    assert!(lone_store.join("sha256").join("ab".repeat(32)).exists());
}

/// `evidence gc --base-cache DIR` tidies the base cache too: of two entries (two runs with
/// different `--runs`), `--cache-keep 1` keeps the newer, with its items, and a run with the
/// newer settings still reuses it; `--dry-run` removes nothing; `none` leaves it alone.
#[test]
fn evidence_gc_keeps_the_newest_base_cache_entries() {
    let (r, base) = two_repo();
    let outside = tempfile::tempdir().unwrap();
    let cache = outside.path().join("cache");
    let cache_s = cache.to_str().unwrap();
    let result = outside.path().join("result.json");
    let check = |runs: &str, epoch: &str| -> Value {
        let run = r.shipmoor_env(
            &[
                "claim-check",
                "--base",
                &base,
                "--runs",
                runs,
                "--base-cache",
                cache_s,
                "--result-out",
                result.to_str().unwrap(),
            ],
            &[("SOURCE_DATE_EPOCH", epoch)],
        );
        assert_eq!(run.code, 0, "--runs {runs}: {run:?}");
        let doc: Value = serde_json::from_slice(&std::fs::read(&result).unwrap()).unwrap();
        doc["result"]["base_cache"].clone()
    };
    let names = |sub: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(cache.join(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let older = check("1", common::PINNED_EPOCH);
    assert_eq!(older["state"], "stored", "{older}");
    // An hour later, with other settings: another key, another entry.
    let later = (common::PINNED_EPOCH.parse::<u64>().unwrap() + 3600).to_string();
    let newer = check("2", &later);
    assert_eq!(newer["state"], "stored", "{newer}");
    let entry = |u: &Value| {
        u["entry"]
            .as_str()
            .unwrap()
            .trim_start_matches("sha256:")
            .to_string()
    };
    let (older, newer) = (entry(&older), entry(&newer));
    assert_ne!(older, newer);
    let mut both = vec![older.clone(), newer.clone()];
    both.sort();
    assert_eq!(names("v1/entries"), both);
    // An item no entry cites (a run that was stopped before it wrote its entry, say).
    let orphan = cache.join("v1/sha256").join("ab".repeat(32));
    std::fs::write(&orphan, "left behind").unwrap();
    let items_before = names("v1/sha256");
    let cites = |name: &str| -> Vec<String> {
        let e: Value =
            serde_json::from_slice(&std::fs::read(cache.join("v1/entries").join(name)).unwrap())
                .unwrap();
        e["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                p.as_str()
                    .unwrap()
                    .trim_start_matches("sha256:")
                    .to_string()
            })
            .collect()
    };
    let (older_cites, newer_cites) = (cites(&older), cites(&newer));
    assert!(!newer_cites.is_empty());

    let gc = |extra: &[&str]| {
        let mut args = vec![
            "evidence",
            "gc",
            "--base-cache",
            cache_s,
            "--cache-keep",
            "1",
        ];
        args.extend_from_slice(extra);
        let run = r.shipmoor(&args);
        assert_eq!(run.code, 0, "{run:?}");
        run
    };
    let dry = gc(&["--dry-run"]);
    let line = format!(
        "would remove entry sha256:{} (over --cache-keep 1)",
        &older[..12]
    );
    assert!(dry.stdout.contains(&line), "{}", dry.stdout);
    assert_eq!(names("v1/entries"), both, "--dry-run removes nothing");
    assert_eq!(names("v1/sha256"), items_before);
    assert!(
        dry.stdout
            .contains(&format!("would remove {}", orphan.display())),
        "{}",
        dry.stdout
    );
    // `none` (the tests' default) leaves the cache alone and says nothing of it.
    let off = r.shipmoor(&["evidence", "gc", "--cache-keep", "0"]);
    assert_eq!(off.code, 0, "{off:?}");
    assert!(!off.stdout.contains("base cache"), "{}", off.stdout);
    assert_eq!(names("v1/entries"), both);

    // A symlink for the cache's directory is refused, naming it, and nothing goes from either.
    let link = outside.path().join("link");
    std::os::unix::fs::symlink(&cache, &link).unwrap();
    let store_items = || {
        std::fs::read_dir(r.path().join(".shipmoor/evidence/sha256"))
            .unwrap()
            .count()
    };
    let stored = store_items();
    let refused = r.shipmoor(&[
        "evidence",
        "gc",
        "--base-cache",
        link.to_str().unwrap(),
        "--cache-keep",
        "0",
    ]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused
            .stderr
            .contains(&format!("{} is a symlink", link.display())),
        "{refused:?}"
    );
    assert_eq!(names("v1/entries"), both);
    assert_eq!(store_items(), stored);
    // A size it does not read is a usage error naming the flag, with an example.
    let bad = r.shipmoor(&["evidence", "gc", "--cache-max-size", "1T"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr.contains("--cache-max-size") && bad.stderr.contains("e.g. 500M"),
        "{bad:?}"
    );

    let done = gc(&[]);
    let line = format!(
        "removed entry sha256:{} (over --cache-keep 1)",
        &older[..12]
    );
    assert!(done.stdout.contains(&line), "{}", done.stdout);
    assert!(
        done.stdout
            .contains(&format!("base cache {cache_s}: removed 1 of 2 entries, ")),
        "{}",
        done.stdout
    );
    assert!(done.stdout.contains("; 1 entry kept ("), "{}", done.stdout);
    assert_eq!(names("v1/entries"), vec![newer.clone()]);
    assert!(cache.join("CACHEDIR.TAG").is_file());
    // What the newer entry cites stays; what only the older one cited goes, and the orphan.
    let mut wanted = newer_cites.clone();
    wanted.sort();
    wanted.dedup();
    assert_eq!(names("v1/sha256"), wanted, "{items_before:?}");
    let only_older = older_cites
        .iter()
        .filter(|h| !newer_cites.contains(h))
        .count()
        + 1;
    assert!(
        done.stdout.contains(&format!(
            "removed 1 of 2 entries, {only_older} of {} items",
            items_before.len()
        )),
        "{}",
        done.stdout
    );

    // The kept entry still serves a run with its settings.
    let again = check("2", &later);
    assert_eq!(again["state"], "reused", "{again}");
    assert_eq!(again["entry"], format!("sha256:{newer}"));
}

/// An attestation given nothing to verify it with is a usage error (exit 2, a hint, nothing on
/// stdout), never INVALID: a DSSE envelope or a keyed bundle without `--key`, a keyless bundle
/// without `--key` or the identity flags. An unsigned statement without `--allow-unsigned`
/// stays INVALID at step 2: that is a verdict about the file.
#[test]
fn replay_without_the_key_or_identity_its_form_needs_is_a_usage_error() {
    let (r, _base, _key, public) = signed_run();
    let keyless = r.path().join("keyless.sigstore.json");
    let mut bundle = r.json(".shipmoor/claim-check.vsa.sigstore.json");
    bundle["verificationMaterial"] = serde_json::json!({
        "certificate": {"rawBytes": "MIIB"},
        "tlogEntries": [{"logIndex": "1"}]
    });
    std::fs::write(&keyless, serde_json::to_vec(&bundle).unwrap()).unwrap();
    let keyless = keyless.to_str().unwrap();
    for (file, wants) in [
        (
            ".shipmoor/claim-check.vsa.dsse.json",
            "a DSSE envelope is verified with the signer's public key",
        ),
        (
            ".shipmoor/claim-check.vsa.sigstore.json",
            "this bundle is signed with a key",
        ),
        (
            keyless,
            "a keyless Sigstore bundle is verified with the signer's identity",
        ),
    ] {
        let run = r.shipmoor(&["replay", file]);
        assert_eq!(run.code, 2, "{file}: {run:?}");
        assert!(run.stdout.is_empty(), "{file}: {run:?}");
        assert!(run.stderr.contains(wants), "{file}: {run:?}");
        assert!(
            run.stderr
                .contains("openssl pkey -in KEY -pubout -out KEY.pub"),
            "{file}: {run:?}"
        );
    }
    // Given what it needs, the keyless bundle's forged certificate is a verdict again.
    let run = r.shipmoor(&[
        "replay",
        keyless,
        "--certificate-identity",
        "https://github.com/acme/app/.github/workflows/ci.yml@refs/heads/main",
        "--certificate-oidc-issuer",
        "https://token.actions.githubusercontent.com",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("2 signature  FAILED"), "{run:?}");
    // The envelope with its key still replays.
    let run = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.dsse.json",
        "--key",
        public.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let run = r.shipmoor(&["replay", ".shipmoor/claim-check.vsa.json"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("2 signature  FAILED"), "{run:?}");
    assert!(run.stdout.contains("pass --allow-unsigned"), "{run:?}");
}

/// A private key given as `--key` to verify with, in each PEM form a user holds one (PKCS#8,
/// SEC1, OpenSSH), is a usage error naming the command that writes the public key, for
/// `replay`, `admit` and `verify-bundle` alike; the public key of the same pair verifies.
#[test]
fn a_private_key_given_to_verify_with_is_a_usage_error() {
    let (r, _base, pkcs8, public) = signed_run();
    let dir = keys_dir(&r);
    let sec1 = dir.join("sec1.pem");
    let ok = Command::new("openssl")
        .args(["ec", "-in"])
        .arg(&pkcs8)
        .arg("-out")
        .arg(&sec1)
        .output()
        .unwrap();
    assert!(ok.status.success(), "{ok:?}");
    assert!(std::fs::read_to_string(&sec1)
        .unwrap()
        .contains("BEGIN EC PRIVATE KEY"));
    let openssh = dir.join("ssh_ecdsa");
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ecdsa", "-N", "", "-f"])
        .arg(&openssh)
        .output()
        .expect("ssh-keygen runs (apt-get install openssh-client)");
    assert!(ok.status.success(), "{ok:?}");
    let digest = format!("sha256:{}", "a".repeat(64));
    for (key, hint) in [
        (
            &pkcs8,
            format!("openssl pkey -in {0} -pubout -out {0}.pub", pkcs8.display()),
        ),
        (
            &sec1,
            format!("openssl pkey -in {0} -pubout -out {0}.pub", sec1.display()),
        ),
        (
            &openssh,
            format!("ssh-keygen -e -m PKCS8 -f {0} > {0}.pub", openssh.display()),
        ),
    ] {
        let key = key.to_str().unwrap();
        for args in [
            vec![
                "replay",
                ".shipmoor/claim-check.vsa.dsse.json",
                "--key",
                key,
            ],
            vec![
                "admit",
                "--policy",
                "policy.yaml",
                "--subject",
                &digest,
                "--attestation",
                ".shipmoor/claim-check.vsa.dsse.json",
                "--key",
                key,
            ],
            vec![
                "verify-bundle",
                "--bundle",
                ".shipmoor/claim-check.vsa.sigstore.json",
                "--key",
                key,
                &digest,
            ],
        ] {
            let run = r.shipmoor(&args);
            assert_eq!(run.code, 2, "{args:?}: {run:?}");
            assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
            assert!(
                run.stderr.contains("--key is a private key"),
                "{args:?}: {run:?}"
            );
            assert!(run.stderr.contains(&hint), "{args:?}: {run:?}");
        }
    }
    let run = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.dsse.json",
        "--key",
        public.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
}

/// A keyed bundle as `claim-check --sign key` writes it holds no transparency log entry:
/// `verify-bundle --key` refuses it and names `--offline-key`; with `--offline-key` the key
/// verifies its signature and the artifact, and the output says no log entry was checked. A
/// changed bundle, or an artifact the statement does not name, is refused all the same.
#[test]
fn verify_bundle_offline_key_verifies_a_keyed_bundle_without_a_log_entry() {
    use sha2::Digest as _;
    let (r, base) = two_repo();
    let keys = keys_dir(&r);
    let gen = r.shipmoor_env(
        &["keygen", "--output-dir", keys.to_str().unwrap()],
        &[("SHIPMOOR_KEY_PASSWORD", "")],
    );
    assert_eq!(gen.code, 0, "{gen:?}");
    let public = keys.join("shipmoor.pub");
    let public = public.to_str().unwrap();
    let artifact = keys.join("app.tar");
    std::fs::write(&artifact, b"the app\n").unwrap();
    let digest = hex::encode(sha2::Sha256::digest(b"the app\n"));
    let sign = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--sign",
        "key",
        "--key",
        keys.join("shipmoor.key").to_str().unwrap(),
        "--subject",
        &format!("app=sha256:{digest}"),
    ]);
    assert_eq!(sign.code, 0, "{sign:?}");
    let bundle = ".shipmoor/claim-check.vsa.sigstore.json";
    let verify = |bundle: &str, artifact: &str, extra: &[&str]| {
        let mut args = vec!["verify-bundle", "--bundle", bundle, "--key", public];
        args.extend(extra);
        args.push(artifact);
        r.shipmoor(&args)
    };
    let artifact = artifact.to_str().unwrap();

    let refused = verify(bundle, artifact, &[]);
    assert_eq!(refused.code, 1, "{refused:?}");
    assert!(
        refused.stderr.contains("no transparency log entry")
            && refused.stderr.contains("`--offline-key`"),
        "{refused:?}"
    );
    let by_digest = format!("sha256:{digest}");
    for artifact in [artifact, by_digest.as_str()] {
        let ok = verify(bundle, artifact, &["--offline-key"]);
        assert_eq!(ok.code, 0, "{ok:?}");
        assert!(ok.stderr.contains("verified: "), "{ok:?}");
        assert!(
            ok.stderr
                .contains("note: no transparency log entry was checked (--offline-key)"),
            "{ok:?}"
        );
    }
    // An artifact no subject names.
    let other = format!("sha256:{}", "0".repeat(64));
    let run = verify(bundle, &other, &["--offline-key"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("artifact binding"), "{run:?}");
    // A changed statement under the same signature.
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(r.path().join(bundle)).unwrap()).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD;
    let payload = b64
        .decode(v["dsseEnvelope"]["payload"].as_str().unwrap())
        .unwrap();
    let mut statement: Value = serde_json::from_slice(&payload).unwrap();
    statement["predicate"]["verificationResult"] = "PASSED".into();
    statement["subject"][0]["name"] = "another".into();
    v["dsseEnvelope"]["payload"] = b64.encode(statement.to_string()).into();
    let changed = keys.join("changed.sigstore.json");
    std::fs::write(&changed, v.to_string()).unwrap();
    let run = verify(changed.to_str().unwrap(), artifact, &["--offline-key"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("signature"), "{run:?}");
    assert!(!run.stderr.contains("note:"), "{run:?}");
    // The flag needs a key.
    let run = r.shipmoor(&[
        "verify-bundle",
        "--bundle",
        bundle,
        "--offline-key",
        artifact,
    ]);
    assert_eq!(run.code, 2, "{run:?}");
}

/// Replay reads evidence only as the store's own regular files: a cited record that is a
/// symlink (to the very bytes it names, outside the store) or a FIFO is refused at step 4,
/// without blocking; a cited name that is a path (`../`) is refused before it becomes one.
/// Put back, the envelope replays.
#[test]
fn replay_reads_evidence_only_as_the_stores_regular_files() {
    let (r, _base, key_path, public) = signed_run();
    let Envelope { payload, .. } = envelope(&r);
    let statement: Value = serde_json::from_slice(&payload).unwrap();
    let rec_hex = statement["predicate"]["https://shipmoor.dev/claim-check/v1"]["evidence"][0]
        .as_str()
        .unwrap()["sha256:".len()..]
        .to_string();
    let item = r.path().join(".shipmoor/evidence/sha256").join(&rec_hex);
    let original = std::fs::read(&item).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let copy = outside.path().join(&rec_hex);
    std::fs::write(&copy, &original).unwrap();
    let public_arg = public.to_str().unwrap();
    let replay = |what: &str| {
        r.shipmoor_within(
            &[
                "replay",
                ".shipmoor/claim-check.vsa.dsse.json",
                "--key",
                public_arg,
            ],
            120,
        )
        .unwrap_or_else(|| panic!("{what}: replay blocked"))
    };

    std::fs::remove_file(&item).unwrap();
    std::os::unix::fs::symlink(&copy, &item).unwrap();
    let run = replay("a symlinked record");
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("FAILED"), "{run:?}");
    assert!(run.stdout.contains("is a symlink"), "{run:?}");

    std::fs::remove_file(&item).unwrap();
    common::mkfifo(&item);
    let run = replay("a FIFO for a record");
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("is a FIFO, not a regular file"),
        "{run:?}"
    );

    std::fs::remove_file(&item).unwrap();
    std::fs::write(&item, &original).unwrap();
    let mut st = statement.clone();
    st["predicate"]["https://shipmoor.dev/claim-check/v1"]["evidence"][0] =
        format!("sha256:../../../{}", &rec_hex[9..]).into();
    let report = replay_bytes(&r, &resign(&st, &signing_key(&key_path)), &public);
    assert_eq!(failed_step(&report), Some((4, "evidence")));
    assert!(
        report.steps[3].detail.contains("is not a sha256 pointer"),
        "{:?}",
        report.steps[3]
    );

    assert_eq!(replay("put back").code, 0);
}

/// `evidence gc` reads the kept attestations unverified, so it reads nothing but evidence
/// names in the store, and only its regular files: an attestation citing a path (`../`, or a
/// FIFO outside the store, which would hold the read forever), and a cited item that is a
/// symlink or a FIFO, are input errors naming the attestation; nothing is removed. Put back,
/// gc runs.
#[test]
fn evidence_gc_reads_nothing_but_the_stores_regular_files() {
    let (r, _base, _key, _public) = signed_run();
    let store = r.path().join(".shipmoor/evidence/sha256");
    let names = || {
        let mut n: Vec<_> = std::fs::read_dir(&store)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        n.sort();
        n
    };
    let before = names();
    let statement = r.json(".shipmoor/claim-check.vsa.json");
    let outside = tempfile::tempdir().unwrap();
    let fifo = outside.path().join("fifo");
    common::mkfifo(&fifo);
    std::fs::write(r.path().join("secret.json"), "{}").unwrap();
    let gc = |keep: &Path, what: &str| {
        r.shipmoor_within(&["evidence", "gc", "--keep", keep.to_str().unwrap()], 120)
            .unwrap_or_else(|| panic!("{what}: gc blocked"))
    };
    for (digest, what) in [
        ("../../../secret.json", "a path up out of the store"),
        (fifo.to_str().unwrap(), "a FIFO outside the store"),
    ] {
        let mut st = statement.clone();
        st["predicate"]["https://shipmoor.dev/claim-check/v1"]["evidence"][0] = digest.into();
        let keep = outside.path().join("edited.vsa.json");
        std::fs::write(&keep, serde_json::to_vec(&st).unwrap()).unwrap();
        let run = gc(&keep, what);
        assert_eq!(run.code, 2, "{what}: {run:?}");
        assert!(
            run.stderr.contains("is not an evidence name"),
            "{what}: {run:?}"
        );
        assert!(
            run.stderr.contains(keep.to_str().unwrap()),
            "{what}: names the attestation: {run:?}"
        );
        assert_eq!(names(), before, "{what}");
    }

    let rec_hex = statement["predicate"]["https://shipmoor.dev/claim-check/v1"]["evidence"][0]
        .as_str()
        .unwrap()["sha256:".len()..]
        .to_string();
    let item = store.join(&rec_hex);
    let original = std::fs::read(&item).unwrap();
    let copy = outside.path().join(&rec_hex);
    std::fs::write(&copy, &original).unwrap();
    let vsa = r.path().join(".shipmoor/claim-check.vsa.json");
    std::fs::remove_file(&item).unwrap();
    std::os::unix::fs::symlink(&copy, &item).unwrap();
    let run = gc(&vsa, "a symlinked record");
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("is a symlink"), "{run:?}");
    assert_eq!(names(), before);
    std::fs::remove_file(&item).unwrap();
    common::mkfifo(&item);
    let run = gc(&vsa, "a FIFO for a record");
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("is a FIFO, not a regular file"),
        "{run:?}"
    );
    assert_eq!(names(), before);

    std::fs::remove_file(&item).unwrap();
    std::fs::write(&item, &original).unwrap();
    let run = gc(&vsa, "put back");
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(names(), before, "the one run's evidence is all cited");
}

/// `--key` is the user's input and is checked before any verification: a path that is missing,
/// a directory, a FIFO, text that is no PEM key, a certificate or a public key on a curve replay
/// does not verify with is a usage error (exit 2) naming the file, with a help line, never
/// INVALID (which would blame the attestation). An attestation that is a FIFO is refused at
/// once rather than read (which would block forever).
#[test]
fn replay_refuses_a_key_or_an_attestation_that_is_not_one() {
    let (r, _base, key, public) = signed_run();
    let dir = keys_dir(&r);
    let garbage = dir.join("garbage.pem");
    std::fs::write(&garbage, "not a key at all\n").unwrap();
    let cert = dir.join("signer.crt");
    let ok = Command::new("openssl")
        .args(["req", "-x509", "-subj", "/CN=signer", "-days", "1", "-key"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(ok.status.success(), "{ok:?}");
    let (_p384, p384_public) = openssl_key(
        &dir,
        "p384",
        &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"],
    );
    let key_dir = dir.join("a-directory");
    std::fs::create_dir(&key_dir).unwrap();
    let key_fifo = dir.join("key.fifo");
    common::mkfifo(&key_fifo);
    let missing = dir.join("missing.pub");
    for (path, says) in [
        (&missing, "is missing"),
        (&key_dir, "is a directory"),
        (&key_fifo, "is a FIFO"),
        (&garbage, "the key"),
        (&cert, "the key"),
        (&p384_public, "the key"),
    ] {
        let args = [
            "replay",
            ".shipmoor/claim-check.vsa.dsse.json",
            "--key",
            path.to_str().unwrap(),
        ];
        let run = r
            .shipmoor_within(&args, 20)
            .unwrap_or_else(|| panic!("{args:?} did not finish"));
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
        assert!(
            run.stderr.contains(path.to_str().unwrap()) && run.stderr.contains(says),
            "{args:?}: {run:?}"
        );
        assert!(run.stderr.contains("help: "), "{args:?}: {run:?}");
    }
    let fifo = r.path().join(".git/attestation.fifo");
    common::mkfifo(&fifo);
    let args = [
        "replay",
        fifo.to_str().unwrap(),
        "--key",
        public.to_str().unwrap(),
    ];
    let run = r
        .shipmoor_within(&args, 20)
        .expect("a FIFO as the attestation is refused, not read");
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("the attestation") && run.stderr.contains("FIFO"),
        "{run:?}"
    );
    // The key that signed it still verifies.
    let run = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.dsse.json",
        "--key",
        public.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
}
