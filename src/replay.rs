//! Replay: offline verification of a prior attestation, step by step.
//!
//! In: the attestation (the plain statement, a DSSE envelope or a Sigstore bundle), how its
//! signature must be checked, the commit and subjects it must speak for, and its evidence store.
//! Out: a [`Report`] with one [`Step`] per check, each saying what it established or what failed.
//!
//! Steps (the same numbers stand above the code):
//! 1. **parse**: the form (statement, envelope, bundle) and its structure; the statement's
//!    format version is one this release reads;
//! 2. **signature**: a DSSE signature by `--key`, or a Sigstore bundle's certificate for
//!    `--certificate-identity` and `--certificate-oidc-issuer` under `--trusted-root` (offline);
//!    an unsigned statement only with `--allow-unsigned`. Everything after reads the payload
//!    this step verified, never the file again;
//! 3. **statement**: `_type`, `predicateType`, the subject (the expected commit, the raw commit
//!    object's SHA-256 where the repository has it, every `--subject`), `verifier.id`,
//!    `resourceUri`;
//! 4. **evidence**: every cited record and blob is re-hashed from the evidence store, and each
//!    disposition agrees with the records it cites (the floor's rule re-run over them);
//! 5. **fusion**: the recorded policy re-run over the dispositions gives the recorded verdict,
//!    `verificationResult` and `verifiedLevels`;
//! 6. **rerun** (with `--rerun`): the floor re-executed at the recorded commits gives the same
//!    outcomes.
//!
//! Replay stops at the first failed step; the steps after it read `not run`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::acceptance::{AcceptanceState, Lane};
use crate::attest::{
    self, Subject, EXTENSION_KEY, FORMAT_VERSION, PREDICATE_TYPE, STATEMENT_TYPE, VERIFIER_ID,
};
use crate::evidence::sha256_hex;
use crate::floor::rule::{self, SideState};
use crate::floor::runners::Outcome;
use crate::verdict::{self, FloorResult, FusionInput, JudgeResult, Verdict};

pub const REPORT_SCHEMA: &str = "claim_check.replay.v1";
/// The oldest statement format this release reads.
pub const OLDEST_FORMAT: u64 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Failed,
    Skipped,
    NotRun,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "FAILED",
            Status::Skipped => "skipped",
            Status::NotRun => "not run",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub number: u8,
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub attestation: String,
    pub valid: bool,
    pub form: Option<String>,
    pub format_version: Option<u64>,
    pub verdict: Option<String>,
    pub signer: Option<String>,
    pub steps: Vec<Step>,
}

/// How the signature must be checked.
#[derive(Debug, Clone, Default)]
pub struct SignatureCheck {
    pub key: Option<PathBuf>,
    pub identity: Option<(String, String)>,
    pub trusted_root: Option<PathBuf>,
    pub allow_unsigned: bool,
}

/// What the attestation must speak for.
#[derive(Debug, Clone, Default)]
pub struct Expectations {
    /// The commit (full id) the subject must name.
    pub commit: Option<String>,
    /// The raw commit object's SHA-256, when the repository has the commit.
    pub commit_sha256: Option<String>,
    pub subjects: Vec<Subject>,
}

/// The re-execution of step 6, supplied by the caller (it needs a repository and runners).
pub type Rerun<'a> = &'a dyn Fn(&Value) -> Result<String, String>;

pub const STEP_NAMES: [&str; 6] = [
    "parse",
    "signature",
    "statement",
    "evidence",
    "fusion",
    "rerun",
];

struct Run {
    steps: Vec<Step>,
}

impl Run {
    fn ok(&mut self, n: u8, detail: impl Into<String>) {
        self.push(n, Status::Ok, detail.into());
    }
    fn skipped(&mut self, n: u8, detail: impl Into<String>) {
        self.push(n, Status::Skipped, detail.into());
    }
    fn push(&mut self, n: u8, status: Status, detail: String) {
        self.steps.push(Step {
            number: n,
            name: STEP_NAMES[(n - 1) as usize],
            status,
            detail,
        });
    }
}

/// The attestation's form, after step 1.
enum Form {
    Statement(Vec<u8>),
    Envelope(attest::dsse::Envelope),
    Bundle(Value),
}

impl Form {
    fn label(&self) -> &'static str {
        match self {
            Form::Statement(_) => "in-toto statement (unsigned)",
            Form::Envelope(_) => "DSSE envelope",
            Form::Bundle(_) => "Sigstore bundle v0.3",
        }
    }
}

/// Replays an attestation (see the module doc).
pub fn replay(
    bytes: &[u8],
    name: &str,
    sig: &SignatureCheck,
    expect: &Expectations,
    evidence_dir: &Path,
    rerun: Option<Rerun<'_>>,
) -> Report {
    let mut run = Run { steps: Vec::new() };
    let mut report = Report {
        schema: REPORT_SCHEMA,
        attestation: name.to_string(),
        valid: false,
        form: None,
        format_version: None,
        verdict: None,
        signer: None,
        steps: Vec::new(),
    };
    let outcome = steps(
        bytes,
        sig,
        expect,
        evidence_dir,
        rerun,
        &mut run,
        &mut report,
    );
    if let Err((n, why)) = outcome {
        run.push(n, Status::Failed, why);
        for later in (n + 1)..=6 {
            run.push(later, Status::NotRun, "an earlier step failed".into());
        }
    } else {
        report.valid = true;
    }
    report.steps = run.steps;
    report
}

type StepResult<T> = Result<T, (u8, String)>;

fn steps(
    bytes: &[u8],
    sig: &SignatureCheck,
    expect: &Expectations,
    evidence_dir: &Path,
    rerun: Option<Rerun<'_>>,
    run: &mut Run,
    report: &mut Report,
) -> StepResult<()> {
    // 1. parse
    let form = parse_form(bytes).map_err(|e| (1, e))?;
    report.form = Some(form.label().to_string());
    let unverified = match &form {
        Form::Statement(b) => b.clone(),
        Form::Envelope(env) => envelope_payload(env).map_err(|e| (1, e))?,
        Form::Bundle(b) => attest::keyed_bundle::from_bundle(b)
            .map_err(|e| (1, format!("the bundle's DSSE envelope: {e}")))
            .and_then(|env| envelope_payload(&env).map_err(|e| (1, e)))?,
    };
    let version = format_version(&unverified).map_err(|e| (1, e))?;
    report.format_version = Some(version);
    run.ok(1, format!("{}, statement format {version}", form.label()));

    // 2. signature
    let payload = signature(&form, &unverified, sig, run, report).map_err(|e| (2, e))?;

    // 3. statement
    let statement: Value = serde_json::from_slice(&payload)
        .map_err(|e| (3, format!("the signed payload is not JSON: {e}")))?;
    let commit = check_statement(&statement, expect).map_err(|e| (3, e))?;
    run.ok(
        3,
        format!(
            "in-toto Statement v1, SLSA VSA v1 by {VERIFIER_ID}, subject commit {}",
            &commit[..commit.len().min(12)]
        ),
    );

    // 4. evidence
    let ext = &statement["predicate"][EXTENSION_KEY];
    let detail = check_evidence(&statement, ext, evidence_dir).map_err(|e| (4, e))?;
    run.ok(4, detail);

    // 5. fusion
    let (verdict, detail) = check_fusion(&statement, ext).map_err(|e| (5, e))?;
    report.verdict = Some(verdict);
    run.ok(5, detail);

    // 6. rerun
    match rerun {
        Some(f) => {
            let detail = f(&statement).map_err(|e| (6, e))?;
            run.ok(6, detail);
        }
        None => run.skipped(
            6,
            "pass --rerun to re-execute the floor at the recorded commits",
        ),
    }
    Ok(())
}

fn parse_form(bytes: &[u8]) -> Result<Form, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
    let Some(obj) = v.as_object() else {
        return Err("not a JSON object".into());
    };
    if obj.contains_key("_type") {
        return Ok(Form::Statement(bytes.to_vec()));
    }
    if obj.contains_key("payloadType") {
        let env = attest::dsse::parse(bytes).map_err(|e| format!("DSSE envelope: {e}"))?;
        return Ok(Form::Envelope(env));
    }
    if let Some(mt) = obj.get("mediaType").and_then(Value::as_str) {
        let v03 = mt == "application/vnd.dev.sigstore.bundle.v0.3+json"
            || mt == "application/vnd.dev.sigstore.bundle+json;version=0.3";
        if !v03 {
            return Err(format!(
                "bundle media type `{mt}`: this release reads Sigstore bundles v0.3"
            ));
        }
        if obj.get("dsseEnvelope").is_none() {
            return Err("the bundle carries no DSSE envelope: it is not an attestation".into());
        }
        return Ok(Form::Bundle(v));
    }
    Err("neither an in-toto statement (`_type`), a DSSE envelope (`payloadType`) nor a Sigstore bundle (`mediaType`)".into())
}

fn envelope_payload(env: &attest::dsse::Envelope) -> Result<Vec<u8>, String> {
    if env.payload_type != attest::dsse::PAYLOAD_TYPE {
        return Err(format!(
            "payloadType `{}` is not `{}`",
            env.payload_type,
            attest::dsse::PAYLOAD_TYPE
        ));
    }
    env.unverified_payload()
        .map_err(|e| format!("the envelope's payload: {e}"))
}

/// The statement's format version; one this release reads, or an error that says which.
fn format_version(payload: &[u8]) -> Result<u64, String> {
    let v: Value =
        serde_json::from_slice(payload).map_err(|e| format!("the statement is not JSON: {e}"))?;
    let ext = v
        .pointer("/predicate")
        .and_then(|p| p.get(EXTENSION_KEY))
        .ok_or_else(|| {
            format!("the predicate has no `{EXTENSION_KEY}` extension: not written by Claim Check")
        })?;
    let version = ext["format_version"]
        .as_u64()
        .ok_or("the extension has no numeric `format_version`")?;
    if version < OLDEST_FORMAT || version > u64::from(FORMAT_VERSION) {
        return Err(format!(
            "statement format {version}: this release reads formats {OLDEST_FORMAT} to {FORMAT_VERSION}; use a newer shipmoor"
        ));
    }
    Ok(version)
}

// 2. signature
fn signature(
    form: &Form,
    unverified: &[u8],
    sig: &SignatureCheck,
    run: &mut Run,
    report: &mut Report,
) -> Result<Vec<u8>, String> {
    let load_key = |path: &Path| -> Result<attest::keys::VerifyingKey, String> {
        let pem = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the key {}: {e}", path.display()))?;
        attest::keys::load_verifying_key(&pem)
            .map_err(|e| format!("the key {}: {e}", path.display()))
    };
    match form {
        Form::Statement(bytes) => {
            if !sig.allow_unsigned {
                return Err("the statement is unsigned; pass --allow-unsigned to accept it (it then proves nothing about who produced it)".into());
            }
            run.skipped(2, "unsigned statement accepted with --allow-unsigned: it proves nothing about who produced it");
            Ok(bytes.clone())
        }
        Form::Envelope(env) => {
            let Some(path) = &sig.key else {
                return Err(
                    "a DSSE envelope is verified with --key (the signer's public key)".into(),
                );
            };
            let key = load_key(path)?;
            let verified =
                attest::dsse::verify(env, &key).map_err(|e| format!("DSSE signature: {e}"))?;
            report.signer = Some(format!("key {}", key.keyid()));
            run.ok(
                2,
                format!(
                    "DSSE signature by key {} ({})",
                    key.keyid(),
                    key.algorithm()
                ),
            );
            Ok(verified.into_payload())
        }
        Form::Bundle(b) => {
            let keyed = b.pointer("/verificationMaterial/publicKey").is_some();
            let no_tlog = b
                .pointer("/verificationMaterial/tlogEntries")
                .and_then(Value::as_array)
                .is_none_or(|a| a.is_empty());
            if keyed && no_tlog {
                let Some(path) = &sig.key else {
                    return Err("this bundle is signed with a key: verify it with --key".into());
                };
                let key = load_key(path)?;
                let verified = attest::keyed_bundle::verify_keyed_bundle(b, &key)
                    .map_err(|e| format!("keyed bundle: {e}"))?;
                report.signer = Some(format!("key {}", key.keyid()));
                run.ok(
                    2,
                    format!(
                        "bundle's DSSE signature by key {} ({})",
                        key.keyid(),
                        key.algorithm()
                    ),
                );
                return Ok(verified.into_payload());
            }
            let trust = match (&sig.key, &sig.identity) {
                (Some(k), _) => attest::sigstore::Trust::Key(k.clone()),
                (None, Some((id, iss))) => attest::sigstore::Trust::Identity(attest::sigstore::Identity::new(id, iss)),
                (None, None) => {
                    return Err("a keyless bundle is verified with --certificate-identity and --certificate-oidc-issuer (and --trusted-root)".into())
                }
            };
            // sigstore-verify binds a DSSE bundle to an artifact through a sha256 subject; the
            // subject itself is checked in step 3.
            let digest = first_sha256_subject(unverified)
                .ok_or("the statement has no sha256 subject to bind the bundle to")?;
            let json = serde_json::to_string(b).map_err(|e| e.to_string())?;
            let verified = attest::sigstore::verify_bundle(
                &json,
                &attest::sigstore::Artifact::Sha256(digest),
                &trust,
                sig.trusted_root.as_deref(),
            )?;
            let payload = verified
                .dsse_payload()
                .ok_or("the verified bundle has no DSSE payload")?
                .to_vec();
            let who = match (verified.identity(), verified.issuer()) {
                (Some(i), Some(o)) => format!("certificate for {i} (issuer {o})"),
                _ => "the given key".to_string(),
            };
            report.signer = Some(who.clone());
            run.ok(
                2,
                format!(
                    "Sigstore bundle verified offline: {who}; transparency log inclusion checked"
                ),
            );
            Ok(payload)
        }
    }
}

fn first_sha256_subject(payload: &[u8]) -> Option<[u8; 32]> {
    let v: Value = serde_json::from_slice(payload).ok()?;
    v["subject"].as_array()?.iter().find_map(|s| {
        let hex = s.pointer("/digest/sha256")?.as_str()?;
        hex::decode(hex).ok()?.try_into().ok()
    })
}

// 3. statement
fn check_statement(st: &Value, expect: &Expectations) -> Result<String, String> {
    if st["_type"] != STATEMENT_TYPE {
        return Err(format!(
            "`_type` is {} and not `{STATEMENT_TYPE}`",
            st["_type"]
        ));
    }
    if st["predicateType"] != PREDICATE_TYPE {
        return Err(format!(
            "`predicateType` is {} and not `{PREDICATE_TYPE}`",
            st["predicateType"]
        ));
    }
    let pred = &st["predicate"];
    if pred.pointer("/verifier/id").and_then(Value::as_str) != Some(VERIFIER_ID) {
        return Err(format!(
            "`verifier.id` is {} and not `{VERIFIER_ID}`",
            pred["verifier"]["id"]
        ));
    }
    let subjects = st["subject"].as_array().ok_or("`subject` is not a list")?;
    let commits: Vec<&Value> = subjects
        .iter()
        .filter(|s| s.pointer("/digest/gitCommit").is_some())
        .collect();
    let commit_subject = match commits.as_slice() {
        [one] => *one,
        [] => return Err("no subject names a commit (`digest.gitCommit`)".into()),
        _ => {
            return Err(format!(
                "{} subjects name a commit: an attestation speaks for one",
                commits.len()
            ))
        }
    };
    let commit = commit_subject["digest"]["gitCommit"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if let Some(want) = &expect.commit {
        if &commit != want {
            return Err(format!(
                "the subject is commit {commit}, not the expected {want}"
            ));
        }
    }
    let object_sha = commit_subject
        .pointer("/digest/sha256")
        .and_then(Value::as_str);
    let format = st["predicate"][EXTENSION_KEY]["format_version"]
        .as_u64()
        .unwrap_or(0);
    if format >= 2 && object_sha.is_none() {
        return Err(
            "the commit subject has no `sha256` (the commit object's), which format 2 records"
                .into(),
        );
    }
    if let (Some(want), Some(got)) = (&expect.commit_sha256, object_sha) {
        if want != got {
            return Err(format!(
                "the subject's sha256 {got} is not the commit object's {want}"
            ));
        }
    }
    for s in &expect.subjects {
        let found = subjects.iter().any(|x| {
            x.pointer("/digest/sha256").and_then(Value::as_str) == Some(s.sha256.as_str())
                && x["name"].as_str() == Some(s.name.as_str())
        });
        if !found {
            return Err(format!("no subject {}=sha256:{}", s.name, s.sha256));
        }
    }
    let uri = pred["resourceUri"].as_str().ok_or("no `resourceUri`")?;
    if !uri.starts_with("git+") || !uri.ends_with(&format!("@{commit}")) {
        return Err(format!(
            "`resourceUri` {uri} does not name git+<repository>@{commit}"
        ));
    }
    for field in ["timeVerified", "verificationResult"] {
        if !pred[field].is_string() {
            return Err(format!("the predicate has no `{field}`"));
        }
    }
    if pred
        .pointer("/policy/digest/sha256")
        .and_then(Value::as_str)
        .is_none()
    {
        return Err("`policy.digest.sha256` is missing".into());
    }
    let ext = &pred[EXTENSION_KEY];
    // From format 3 the digest is the claim's, which the extension records too: a statement
    // whose two disagree names one claim to admission and re-fuses another.
    if format >= 3 && pred.pointer("/policy/digest/sha256") != ext.pointer("/acceptance/sha256") {
        return Err(
            "`policy.digest.sha256` is not the claim's digest the extension records".into(),
        );
    }
    if ext["head"].as_str() != Some(commit.as_str()) {
        return Err(format!(
            "the dispositions are for head {} but the subject is {commit}",
            ext["head"]
        ));
    }
    Ok(commit)
}

// 4. evidence
fn read_item(dir: &Path, pointer: &str, seen: &mut BTreeSet<String>) -> Result<Vec<u8>, String> {
    let hex = pointer
        .strip_prefix("sha256:")
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| format!("`{pointer}` is not a sha256 pointer"))?;
    let path = dir.join("sha256").join(hex);
    let bytes = std::fs::read(&path)
        .map_err(|e| format!("evidence {pointer} is missing from {}: {e}", dir.display()))?;
    let actual = sha256_hex(&bytes);
    if actual != hex {
        return Err(format!(
            "evidence {pointer} was modified: its bytes hash to sha256:{actual}"
        ));
    }
    seen.insert(hex.to_string());
    Ok(bytes)
}

fn check_evidence(st: &Value, ext: &Value, dir: &Path) -> Result<String, String> {
    let cited: BTreeSet<String> = st["predicate"]["inputAttestations"]
        .as_array()
        .ok_or("`inputAttestations` is not a list")?
        .iter()
        .map(|a| {
            a.pointer("/digest/sha256")
                .and_then(Value::as_str)
                .map(|h| format!("sha256:{h}"))
                .ok_or("an input attestation has no sha256 digest")
        })
        .collect::<Result<_, _>>()?;
    let mut seen = BTreeSet::new();
    let mut records: BTreeMap<String, Value> = BTreeMap::new();
    let mut blobs = 0usize;
    for p in &cited {
        let bytes = read_item(dir, p, &mut seen)?;
        let rec: Value = serde_json::from_slice(&bytes)
            .map_err(|e| format!("evidence {p} is not a JSON record: {e}"))?;
        for field in ["stdout", "stderr", "results"] {
            if let Some(b) = rec[field].as_str() {
                read_item(dir, b, &mut seen)?;
                blobs += 1;
            }
        }
        records.insert(p.clone(), rec);
    }
    let base = ext["base"].as_str().unwrap_or_default();
    let head = ext["head"].as_str().unwrap_or_default();
    let dispositions = ext["dispositions"]
        .as_array()
        .ok_or("the extension has no `dispositions`")?;
    for d in dispositions {
        check_disposition(d, &records, base, head)?;
    }
    Ok(format!(
        "{} records and {blobs} blobs re-hashed; {} dispositions agree with their evidence",
        records.len(),
        dispositions.len()
    ))
}

fn outcome_of(rec: &Value) -> Option<Outcome> {
    match rec["outcome"].as_str()? {
        "pass" => Some(Outcome::Pass),
        "fail" => Some(Outcome::Fail),
        "build_fail" => Some(Outcome::BuildFail),
        "not_observed" => Some(Outcome::NotObserved),
        _ => None,
    }
}

fn check_disposition(
    d: &Value,
    records: &BTreeMap<String, Value>,
    base: &str,
    head: &str,
) -> Result<(), String> {
    let id = d["id"].as_str().unwrap_or("?");
    let floor = &d["floor"];
    let claimed = floor_result(floor["result"].as_str().unwrap_or(""))
        .ok_or_else(|| format!("criterion {id}: unknown floor result {}", floor["result"]))?;
    let cite = |p: &Value| -> Result<&Value, String> {
        let p = p
            .as_str()
            .ok_or_else(|| format!("criterion {id}: an evidence pointer is not a string"))?;
        records.get(p).ok_or_else(|| {
            format!("criterion {id}: evidence {p} is not among the attestation's inputAttestations")
        })
    };
    for p in floor["evidence_all"].as_array().into_iter().flatten() {
        cite(p)?;
    }
    if let Some(p) = floor.get("evidence").filter(|p| !p.is_null()) {
        cite(p)?;
    }
    let tests = floor["tests"].as_array().cloned().unwrap_or_default();
    let mut states = Vec::new();
    for t in &tests {
        let tid = t["id"].as_str().unwrap_or("?");
        let side_state = |side: &str, commit: &str| -> Result<SideState, String> {
            let mut outcomes = Vec::new();
            let mut problem = None;
            for p in t[format!("{side}_evidence")]
                .as_array()
                .into_iter()
                .flatten()
            {
                let rec = cite(p)?;
                if rec["test_id"].as_str() != Some(tid)
                    || rec["side"].as_str() != Some(side)
                    || rec["commit"].as_str() != Some(commit)
                {
                    return Err(format!(
                        "criterion {id}: evidence {} is not {tid} at {side} {commit}",
                        p.as_str().unwrap_or("")
                    ));
                }
                let o = outcome_of(rec).ok_or_else(|| {
                    format!(
                        "criterion {id}: evidence {} has no outcome",
                        p.as_str().unwrap_or("")
                    )
                })?;
                if o == Outcome::NotObserved {
                    problem = rec["note"].as_str().map(str::to_string);
                }
                outcomes.push(o);
            }
            let recorded = t[side].as_str().unwrap_or("");
            // Attribution of a base build failure is the floor's finding; the records hold the
            // outcome, the disposition the attribution.
            let s = SideState::collapse(&outcomes, problem.as_deref(), recorded == "build_fail");
            let label = s.label();
            let agrees = label == recorded
                || (recorded == "unobservable" && label == "not_observed")
                || (recorded == "not_observed" && label == "unobservable");
            if !agrees {
                return Err(format!("criterion {id}: {tid} reads `{recorded}` at {side} but its evidence shows `{label}`"));
            }
            Ok(s)
        };
        let hs = side_state("head", head)?;
        let bs = side_state("base", base)?;
        states.push((hs, bs));
    }
    let binding = floor["binding"].as_str().unwrap_or("");
    if matches!(binding, "tag" | "check.test") && !tests.is_empty() {
        let recomputed = rule::decide(&states).result;
        // A disposition may be more cautious than its records (the harness guard, say), never
        // bolder: a satisfied criterion must be what its records show.
        if claimed == FloorResult::Satisfied && recomputed != FloorResult::Satisfied {
            return Err(format!(
                "criterion {id} reads satisfied but its evidence gives {}",
                recomputed.as_str()
            ));
        }
        if claimed == FloorResult::Unsatisfied && recomputed == FloorResult::Satisfied {
            return Err(format!(
                "criterion {id} reads unsatisfied but its evidence gives satisfied"
            ));
        }
    }
    if binding == "guard" && !tests.is_empty() {
        let recomputed = rule::decide_guard(&states).0;
        if claimed == FloorResult::Satisfied && recomputed != FloorResult::Satisfied {
            return Err(format!(
                "the guard reads satisfied but its evidence gives {}",
                recomputed.as_str()
            ));
        }
    }
    if claimed == FloorResult::Satisfied
        && tests.is_empty()
        && !matches!(binding, "check.command" | "check.pattern")
    {
        return Err(format!(
            "criterion {id} reads satisfied with no observed test"
        ));
    }
    let records_of = |kind: &str| -> Vec<&Value> {
        floor["evidence_all"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| cite(p).ok())
            .filter(|r| r["kind"] == kind)
            .collect()
    };
    if claimed == FloorResult::Satisfied && binding == "check.command" {
        // The command's own records: exit 0 at head and a failure at base, at those commits.
        let recs = records_of("command");
        let at = |side: &str, commit: &str, outcome: &str| {
            let of_side: Vec<&&Value> = recs.iter().filter(|r| r["side"] == side).collect();
            !of_side.is_empty()
                && of_side.iter().all(|r| {
                    r["commit"].as_str() == Some(commit) && r["outcome"].as_str() == Some(outcome)
                })
        };
        if !at("head", head, "pass") || !at("base", base, "fail") {
            return Err(format!(
                "criterion {id} reads satisfied but its command records do not show exit 0 at head and a failure at base"
            ));
        }
    }
    if claimed == FloorResult::Satisfied && binding == "check.pattern" {
        let matched = records_of("pattern").iter().any(|r| {
            r["commit"].as_str() == Some(head)
                && r["matches"].as_array().is_some_and(|m| !m.is_empty())
        });
        if !matched {
            return Err(format!(
                "criterion {id} reads satisfied but no pattern record shows a match at head"
            ));
        }
    }
    Ok(())
}

fn floor_result(s: &str) -> Option<FloorResult> {
    FloorResult::ALL.into_iter().find(|f| f.as_str() == s)
}

fn judge_result(s: &str) -> Option<JudgeResult> {
    JudgeResult::ALL.into_iter().find(|j| j.as_str() == s)
}

// 5. fusion
fn check_fusion(st: &Value, ext: &Value) -> Result<(String, String), String> {
    let policy = ext["policy"].as_str().unwrap_or("");
    if policy != verdict::POLICY {
        return Err(format!(
            "policy `{policy}`: this release applies policy {}",
            verdict::POLICY
        ));
    }
    let state = match ext.pointer("/acceptance/state").and_then(Value::as_str) {
        Some("committed") => AcceptanceState::Committed,
        Some("draft") => AcceptanceState::Draft,
        other => return Err(format!("unknown acceptance state {other:?}")),
    };
    let mut inputs = Vec::new();
    for d in ext["dispositions"].as_array().ok_or("no dispositions")? {
        let lane = match d["lane"].as_str() {
            Some("floor") => Lane::Floor,
            Some("judge") => Lane::Judge,
            other => return Err(format!("unknown lane {other:?}")),
        };
        inputs.push(FusionInput {
            required: d["required"]
                .as_bool()
                .ok_or("a disposition has no `required`")?,
            lane,
            floor: floor_result(d["floor"]["result"].as_str().unwrap_or(""))
                .ok_or("an unknown floor result")?,
            judge: judge_result(d["judge"]["result"].as_str().unwrap_or("none"))
                .ok_or("an unknown judge result")?,
        });
    }
    if inputs.is_empty() {
        return Err("no dispositions: an attestation with no criteria is never valid".into());
    }
    let fused = verdict::fuse(state, &inputs);
    let recorded = ext["verdict"]
        .as_str()
        .and_then(Verdict::parse)
        .ok_or("the extension has no verdict")?;
    if fused.verdict != recorded {
        return Err(format!(
            "the dispositions fuse to {} (rule {}) but the attestation says {}",
            fused.verdict.as_str(),
            fused.rule.label(),
            recorded.as_str()
        ));
    }
    let vr = st["predicate"]["verificationResult"].as_str().unwrap_or("");
    if vr != fused.verdict.verification_result() {
        return Err(format!(
            "verificationResult {vr} disagrees with the verdict {}",
            fused.verdict.as_str()
        ));
    }
    let levels: Vec<&str> = st["predicate"]["verifiedLevels"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if levels != [attest::level(fused.verdict).as_str()] {
        return Err(format!(
            "verifiedLevels {levels:?} are not exactly [{}]",
            attest::level(fused.verdict)
        ));
    }
    Ok((
        fused.verdict.as_str().to_string(),
        format!(
            "policy {} over {} dispositions: {} (rule {}), verificationResult {vr}",
            verdict::POLICY,
            inputs.len(),
            fused.verdict.as_str(),
            fused.rule.label()
        ),
    ))
}

/// The terminal rendering of a report.
pub fn render(r: &Report) -> String {
    let mut out = format!(
        "Replay  {}  ·  {}\n",
        if r.valid { "VALID" } else { "INVALID" },
        r.attestation
    );
    for s in &r.steps {
        out.push_str(&format!(
            "  {} {:<10} {:<8} {}\n",
            s.number,
            s.name,
            s.status.as_str(),
            s.detail
        ));
    }
    if let Some(v) = &r.verdict {
        out.push_str(&format!("  recorded verdict: {v}\n"));
    }
    out
}
