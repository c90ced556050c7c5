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
//! 3. **statement**: the verified payload reads as a statement of its format
//!    ([`crate::format::statement::Statement`]: a missing field or an unknown value stops here);
//!    `_type`, `predicateType`, the subject (the expected commit, the raw commit
//!    object's SHA-256 where the repository has it, every `--subject`), `verifier.id`,
//!    `resourceUri`;
//! 4. **evidence**: every cited record and blob is re-hashed from the evidence store (named by
//!    its evidence name, read as a regular file, never through a symlink), and each
//!    disposition agrees with the records it cites (the floor's rule re-run over them); in full
//!    mode each judge finding agrees with its request and response records, every judge block
//!    of a disposition has its finding, and, with the repository at hand, the citation audit
//!    re-run at the recorded head gives each citation's recorded check (a block whose pointer
//!    no longer resolves fails here);
//! 5. **fusion**: the recorded policy re-run over the dispositions gives the recorded verdict,
//!    `verificationResult` and `verifiedLevels`;
//! 6. **rerun** (with `--rerun`): the floor re-executed at the recorded commits gives the same
//!    outcomes.
//!
//! Replay stops at the first failed step; the steps after it read `not run`.
//!
//! Steps 3 and 5 need nothing but the statement, so admission runs them too, through the same
//! functions ([`check_type`], [`check_predicate_type`], [`check_verifier_id`],
//! [`check_consistency`], [`check_fusion`]); step 4's re-derivation of a disposition from its
//! records ([`check_floor`]) is also what `fuse` runs over every shard's entries.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::attest::verify::{Attestation, Signer, Verified, VerifyError};
use crate::attest::{self, SubjectArg};
use crate::evidence::{pointer_digest, sha256_hex, ItemError, StoreReader};
use crate::format::evidence::Record;
pub use crate::format::statement::OLDEST_FORMAT;
use crate::format::statement::{Statement, PREDICATE_TYPE, STATEMENT_TYPE, VERIFIER_ID};
use crate::nofollow::ReadError;
use crate::verdict::{self, FusionInput};

mod floor;
mod judge;
#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod recorded_tests;

pub use floor::{check_floor, Cited};

pub const REPORT_SCHEMA: &str = "claim_check.replay.v1";

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
    pub subjects: Vec<SubjectArg>,
}

/// Why a statement is invalid at a step: the reason the replay report (and admission, and a
/// shard check) gives, word for word. Not a failure of the command: an invalid statement is a
/// verdict on the statement (exit 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(String);

impl From<String> for Invalid {
    fn from(reason: String) -> Self {
        Invalid(reason)
    }
}

impl From<&str> for Invalid {
    fn from(reason: &str) -> Self {
        Invalid(reason.to_string())
    }
}

/// A signature that does not verify: its reason, word for word.
impl From<VerifyError> for Invalid {
    fn from(e: VerifyError) -> Self {
        Invalid(e.to_string())
    }
}

/// The re-execution of step 6, supplied by the caller (it needs a repository and runners).
pub type Rerun<'a> = &'a dyn Fn(&Statement) -> Result<String, Invalid>;

/// The repository at hand, for step 4's re-run of the citation audit at the recorded head.
pub trait HeadTree {
    /// Whether the repository has this commit (a replay elsewhere cannot audit).
    fn has_commit(&self, commit: &str) -> bool;
    /// A file's text at `commit` by its repository-relative path, `None` when there is no
    /// such file.
    fn read(&self, commit: &str, path: &str) -> Option<String>;
}

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

/// Replays an attestation (see the module doc), without a repository to re-audit the judge's
/// citations in.
pub fn replay(
    bytes: &[u8],
    name: &str,
    sig: &SignatureCheck,
    expect: &Expectations,
    evidence_dir: &Path,
    rerun: Option<Rerun<'_>>,
) -> Report {
    replay_audited(bytes, name, sig, expect, evidence_dir, rerun, None)
}

/// Replays an attestation (see the module doc); with `tree`, step 4 also re-runs the citation
/// audit over the judge's findings at the recorded head.
pub fn replay_audited(
    bytes: &[u8],
    name: &str,
    sig: &SignatureCheck,
    expect: &Expectations,
    evidence_dir: &Path,
    rerun: Option<Rerun<'_>>,
    tree: Option<&dyn HeadTree>,
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
    let checks = Checks {
        sig,
        expect,
        evidence_dir,
        rerun,
        tree,
    };
    let outcome = steps(bytes, &checks, &mut run, &mut report);
    if let Err((n, why)) = outcome {
        run.push(n, Status::Failed, why.to_string());
        for later in (n + 1)..=6 {
            run.push(later, Status::NotRun, "an earlier step failed".into());
        }
    } else {
        report.valid = true;
    }
    report.steps = run.steps;
    report
}

type StepResult<T> = Result<T, (u8, Invalid)>;

/// What the caller asked to be checked, and with what.
struct Checks<'a> {
    sig: &'a SignatureCheck,
    expect: &'a Expectations,
    evidence_dir: &'a Path,
    rerun: Option<Rerun<'a>>,
    tree: Option<&'a dyn HeadTree>,
}

fn steps(bytes: &[u8], checks: &Checks<'_>, run: &mut Run, report: &mut Report) -> StepResult<()> {
    let Checks {
        sig,
        expect,
        evidence_dir,
        rerun,
        tree,
    } = *checks;
    // 1. parse
    let attestation = Attestation::parse(bytes).map_err(|(label, e)| {
        report.form = label.map(str::to_string);
        (1, Invalid::from(e))
    })?;
    report.form = Some(attestation.label().to_string());
    let version = attestation.version;
    report.format_version = Some(version);
    run.ok(
        1,
        format!("{}, statement format {version}", attestation.label()),
    );

    // 2. signature
    let verified = signature(&attestation, sig).map_err(|e| (2, e))?;
    if verified.signer == Signer::Unsigned {
        run.skipped(2, verified.detail);
    } else {
        report.signer = Some(verified.signer.describe());
        run.ok(2, verified.detail);
    }
    let payload = verified.payload;

    // 3. statement
    let statement: Statement = serde_json::from_slice(&payload).map_err(|e| {
        let why = if e.is_data() {
            format!("the signed payload is not a statement of format {version}: {e}")
        } else {
            format!("the signed payload is not JSON: {e}")
        };
        (3, Invalid::from(why))
    })?;
    let commit = check_statement(&statement, expect).map_err(|e| (3, e))?;
    if let Some(tree) = tree {
        check_policy_content(&statement, &commit, tree).map_err(|e| (3, e))?;
    }
    run.ok(
        3,
        format!(
            "in-toto Statement v1, SLSA VSA v1 by {VERIFIER_ID}, subject commit {}",
            &commit[..commit.len().min(12)]
        ),
    );

    // 4. evidence
    let detail = check_evidence(&statement, evidence_dir, tree).map_err(|e| (4, e))?;
    run.ok(4, detail);

    // 5. fusion
    let (verdict, detail) = check_fusion(&statement).map_err(|e| (5, e))?;
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

// 2. signature
fn signature(attestation: &Attestation, sig: &SignatureCheck) -> Result<Verified, Invalid> {
    let load_key = |path: &Path| -> Result<attest::keys::VerifyingKey, Invalid> {
        let pem = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the key {}: {e}", path.display()))?;
        attest::keys::load_verifying_key(&pem)
            .map_err(|e| Invalid::from(format!("the key {}: {e}", path.display())))
    };
    if attestation.is_unsigned() {
        if !sig.allow_unsigned {
            return Err(Invalid::from("the statement is unsigned; pass --allow-unsigned to accept it (it then proves nothing about who produced it)"));
        }
        return attestation
            .accept_unsigned()
            .ok_or_else(|| Invalid::from("the statement is unsigned"));
    }
    if attestation.is_envelope() || attestation.is_keyed_bundle_without_log() {
        let Some(path) = &sig.key else {
            return Err(Invalid::from(if attestation.is_envelope() {
                "a DSSE envelope is verified with --key (the signer's public key)"
            } else {
                "this bundle is signed with a key: verify it with --key"
            }));
        };
        return attestation
            .verify_with_key(&load_key(path)?, path, sig.trusted_root.as_deref())
            .map_err(Invalid::from);
    }
    match (&sig.key, &sig.identity) {
        (Some(path), _) => attestation
            .verify_with_key(&load_key(path)?, path, sig.trusted_root.as_deref())
            .map_err(Invalid::from),
        (None, Some((id, iss))) => attestation
            .verify_with_identity(
                &attest::sigstore::Identity::new(id, iss),
                sig.trusted_root.as_deref(),
            )
            .map_err(Invalid::from),
        (None, None) => Err(Invalid::from("a keyless bundle is verified with --certificate-identity and --certificate-oidc-issuer (and --trusted-root)")),
    }
}

/// A string as the statement spells it, quoted, for messages.
fn quoted(s: &str) -> String {
    Value::from(s).to_string()
}

// 3. statement
/// Step 3 over the statement read from the verified payload: [`check_type`],
/// [`check_predicate_type`], [`check_verifier_id`], then [`check_consistency`]. Returns the
/// subject commit. Admission runs the same four, each as a check of its own.
pub fn check_statement(st: &Statement, expect: &Expectations) -> Result<String, Invalid> {
    check_type(st)?;
    check_predicate_type(st)?;
    check_verifier_id(st)?;
    check_consistency(st, expect)
}

/// `_type` is in-toto's Statement v1.
pub fn check_type(st: &Statement) -> Result<(), Invalid> {
    if st.type_ != STATEMENT_TYPE {
        return Err(Invalid::from(format!(
            "`_type` is {} and not `{STATEMENT_TYPE}`",
            quoted(&st.type_)
        )));
    }
    Ok(())
}

/// `predicateType` is SLSA's Verification Summary v1.
pub fn check_predicate_type(st: &Statement) -> Result<(), Invalid> {
    if st.predicate_type != PREDICATE_TYPE {
        return Err(Invalid::from(format!(
            "`predicateType` is {} and not `{PREDICATE_TYPE}`",
            quoted(&st.predicate_type)
        )));
    }
    Ok(())
}

/// `verifier.id` is Claim Check's: the extension's dispositions mean what this release reads
/// them as only in a statement Claim Check wrote.
pub fn check_verifier_id(st: &Statement) -> Result<(), Invalid> {
    let id = &st.predicate.verifier.id;
    if id != VERIFIER_ID {
        return Err(Invalid::from(format!(
            "`verifier.id` is {} and not `{VERIFIER_ID}`",
            quoted(id)
        )));
    }
    Ok(())
}

/// The statement agrees with itself and with what it must speak for: its format carries only
/// what that format records, exactly one subject names a commit (the expected one, with the
/// expected object digest, when `expect` names them), every expected subject is there,
/// `resourceUri` names that commit, and the extension's claim digest and head are the
/// predicate's. Returns the subject commit.
pub fn check_consistency(st: &Statement, expect: &Expectations) -> Result<String, Invalid> {
    let ext = st.extension();
    if ext.format_version < 4
        && (!ext.findings.is_empty() || !ext.judges.is_empty() || !ext.judge_notes.is_empty())
    {
        return Err(Invalid::from(format!(
            "a statement of format {} carries judge findings, which only format 4 records",
            ext.format_version
        )));
    }
    let pred = &st.predicate;
    let commit_subject = match st.commit_subjects().as_slice() {
        [one] => *one,
        [] => {
            return Err(Invalid::from(
                "no subject names a commit (`digest.gitCommit`)",
            ))
        }
        commits => {
            return Err(Invalid::from(format!(
                "{} subjects name a commit: an attestation speaks for one",
                commits.len()
            )))
        }
    };
    let commit = commit_subject.digest.git_commit.clone().unwrap_or_default();
    if let Some(want) = &expect.commit {
        if &commit != want {
            return Err(Invalid::from(format!(
                "the subject is commit {commit}, not the expected {want}"
            )));
        }
    }
    let object_sha = commit_subject.digest.sha256.as_deref();
    let format = ext.format_version;
    if format >= 2 && object_sha.is_none() {
        return Err(Invalid::from(
            "the commit subject has no `sha256` (the commit object's), which format 2 records",
        ));
    }
    if let (Some(want), Some(got)) = (&expect.commit_sha256, object_sha) {
        if want != got {
            return Err(Invalid::from(format!(
                "the subject's sha256 {got} is not the commit object's {want}"
            )));
        }
    }
    for s in &expect.subjects {
        let found = st
            .subject
            .iter()
            .any(|x| x.digest.sha256.as_deref() == Some(s.sha256.as_str()) && x.name == s.name);
        if !found {
            return Err(Invalid::from(format!(
                "no subject {}=sha256:{}",
                s.name, s.sha256
            )));
        }
    }
    let uri = &pred.resource_uri;
    if !uri.starts_with("git+") || !uri.ends_with(&format!("@{commit}")) {
        return Err(Invalid::from(format!(
            "`resourceUri` {uri} does not name git+<repository>@{commit}"
        )));
    }
    // Formats 3 and 4: the digest is the claim's, which the extension records too: a statement
    // whose two disagree names one claim to admission and re-fuses another.
    if (3..5).contains(&format)
        && pred.policy.digest.sha256.as_deref() != Some(ext.acceptance.sha256.as_str())
    {
        return Err(Invalid::from(
            "`policy.digest.sha256` is not the claim's digest the extension records",
        ));
    }
    if format >= 5 {
        check_resource_descriptors(st, &commit)?;
    }
    if ext.head.as_str() != commit {
        return Err(Invalid::from(format!(
            "the dispositions are for head {} but the subject is {commit}",
            quoted(ext.head.as_str())
        )));
    }
    Ok(commit)
}

/// Format 5: `resourceUri` and `policy` as SLSA VSA v1 has them: absolute URIs, never a local
/// path, one spelling of the repository, the policy naming a file or directory at the subject
/// commit (with a `sha256` and `gitBlob`, or a `gitTree`) or the claim's own document by the
/// claim's digest.
fn check_resource_descriptors(st: &Statement, commit: &str) -> Result<(), Invalid> {
    let pred = &st.predicate;
    let ext = st.extension();
    let uri = &pred.resource_uri;
    let repository = uri
        .strip_prefix("git+")
        .and_then(|r| r.strip_suffix(&format!("@{commit}")))
        .unwrap_or_default();
    match attest::resource::canonical(repository) {
        Ok(c) if c == repository => {}
        Ok(c) => {
            return Err(Invalid::from(format!(
                "`resourceUri` {uri} is not spelt as git+{c}@{commit}"
            )))
        }
        Err(e) => return Err(Invalid::from(format!("`resourceUri` {uri}: {e}"))),
    }
    let policy = &pred.policy;
    let digest = &policy.digest;
    if let Some(claim) = policy.uri.strip_prefix(attest::resource::CLAIM_URN) {
        if claim != ext.acceptance.sha256 || digest.sha256.as_deref() != Some(claim) {
            return Err(Invalid::from(format!(
                "`policy` {} does not name the claim the extension records (sha256:{})",
                policy.uri, ext.acceptance.sha256
            )));
        }
        return Ok(());
    }
    let path = policy
        .uri
        .strip_prefix(&format!("git+{repository}@{commit}#"))
        .filter(|p| !p.is_empty())
        .ok_or_else(|| {
            format!(
                "`policy.uri` {} names neither a file of git+{repository}@{commit} nor the claim",
                policy.uri
            )
        })?;
    let hex = |d: &Option<String>, n: usize| d.as_deref().is_some_and(|h| is_hex(h, n));
    let file = hex(&digest.sha256, 64) && hex(&digest.git_blob, 40) && digest.git_tree.is_none();
    let tree = hex(&digest.git_tree, 40) && digest.sha256.is_none() && digest.git_blob.is_none();
    if !file && !tree {
        return Err(Invalid::from(format!(
            "`policy.digest` of {path} is neither a file's (`sha256` and `gitBlob`) nor a directory's (`gitTree`)"
        )));
    }
    Ok(())
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Format 5, with the repository at hand: the file `policy` names at the subject commit has the
/// recorded `sha256` (a directory's tree id is only checked by `--rerun`'s claim).
fn check_policy_content(st: &Statement, commit: &str, tree: &dyn HeadTree) -> Result<(), Invalid> {
    let pred = &st.predicate;
    if st.extension().format_version < 5 || !tree.has_commit(commit) {
        return Ok(());
    }
    let (Some(want), Some((_, path))) =
        (&pred.policy.digest.sha256, pred.policy.uri.split_once('#'))
    else {
        return Ok(());
    };
    if !pred.policy.uri.starts_with("git+") {
        return Ok(());
    }
    match tree.read(commit, path) {
        Some(text) if &sha256_hex(text.as_bytes()) == want => Ok(()),
        Some(text) => Err(Invalid::from(format!(
            "`policy` names {path} at {commit}, whose bytes hash to sha256:{}, not the recorded sha256:{want}",
            sha256_hex(text.as_bytes())
        ))),
        None => Err(Invalid::from(format!(
            "`policy` names {path} at {commit}, and the repository has no such file there"
        ))),
    }
}

// 4. evidence
/// The item a pointer cites, re-hashed. The pointer is an evidence name before it becomes a
/// path (`sha256:` and 64 lowercase hex digits), and the item a regular file in the store,
/// read through no symlink and up to [`crate::evidence::ITEM_LIMIT`]: the attestation and the
/// store may both have been made to point elsewhere.
fn read_item(
    store: &StoreReader,
    dir: &Path,
    pointer: &str,
    seen: &mut BTreeSet<String>,
) -> Result<Vec<u8>, Invalid> {
    let hex = pointer_digest(pointer).ok_or_else(|| {
        format!("`{pointer}` is not a sha256 pointer (`sha256:` and 64 lowercase hex digits)")
    })?;
    let bytes = store.read(hex).map_err(|e| match e {
        ItemError::Item(ReadError::Missing(e)) => {
            format!("evidence {pointer} is missing from {}: {e}", dir.display())
        }
        e => format!(
            "evidence {pointer} in {} {e}: only the store's regular files are read",
            dir.display()
        ),
    })?;
    let actual = sha256_hex(&bytes);
    if actual != hex {
        return Err(Invalid::from(format!(
            "evidence {pointer} was modified: its bytes hash to sha256:{actual}"
        )));
    }
    seen.insert(hex.to_string());
    Ok(bytes)
}

fn check_evidence(
    st: &Statement,
    dir: &Path,
    tree: Option<&dyn HeadTree>,
) -> Result<String, Invalid> {
    let cited: BTreeSet<String> = st.evidence_pointers().into_iter().collect();
    let store = StoreReader::open(dir).map_err(|e| format!("the evidence store: {e}"))?;
    let mut seen = BTreeSet::new();
    let mut records: BTreeMap<String, Record> = BTreeMap::new();
    // The judge's request documents and reply bodies, which step 4 reads; a run's logs it only
    // re-hashes (they may be large).
    let mut judge_blobs: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut blobs = 0usize;
    for p in &cited {
        let bytes = read_item(&store, dir, p, &mut seen)?;
        let rec: Record = serde_json::from_slice(&bytes)
            .map_err(|e| format!("evidence {p} is not a JSON record: {e}"))?;
        let of_judge = matches!(rec, Record::JudgeRequest(_) | Record::JudgeResponse(_));
        for b in rec.blobs() {
            let bytes = read_item(&store, dir, b, &mut seen)?;
            if of_judge {
                judge_blobs.insert(b.to_string(), bytes);
            }
            blobs += 1;
        }
        records.insert(p.clone(), rec);
    }
    let ext = st.extension();
    let cited = Cited {
        records: &records,
        base: ext.base.as_str(),
        head: ext.head.as_str(),
        among: "the evidence the attestation cites",
    };
    for d in &ext.dispositions {
        check_floor(&d.id, &d.floor, &cited)?;
    }
    let judged = judge::check_findings(ext, &records, &judge_blobs, tree)?;
    // Base's records observed by an earlier run of the same inputs, as the statement says.
    let reused = ext
        .base_cache
        .as_ref()
        .map(|b| {
            format!(
                "; base's records are those of base cache entry {}, observed at head {}",
                &b.entry[..b.entry.len().min(19)],
                &b.observed_at_head[..b.observed_at_head.len().min(7)]
            )
        })
        .unwrap_or_default();
    Ok(format!(
        "{} records and {blobs} blobs re-hashed; {} dispositions agree with their evidence{judged}{reused}",
        records.len(),
        ext.dispositions.len()
    ))
}

// 5. fusion
/// Step 5: the recorded fusion policy re-run over the dispositions gives the recorded verdict,
/// `verificationResult` and `verifiedLevels`. Returns the verdict and what was established.
/// Admission runs it too: it needs nothing but the statement.
pub fn check_fusion(st: &Statement) -> Result<(String, String), Invalid> {
    let ext = st.extension();
    if ext.policy != verdict::POLICY {
        return Err(Invalid::from(format!(
            "policy `{}`: this release applies policy {}",
            ext.policy,
            verdict::POLICY
        )));
    }
    let inputs: Vec<FusionInput> = ext
        .dispositions
        .iter()
        .map(|d| FusionInput {
            required: d.required,
            lane: d.lane,
            floor: d.floor.result,
            judge: d.judge.result,
        })
        .collect();
    if inputs.is_empty() {
        return Err(Invalid::from(
            "no dispositions: an attestation with no criteria is never valid",
        ));
    }
    let fused = verdict::fuse(ext.acceptance.state, &inputs);
    if fused.verdict != ext.verdict {
        return Err(Invalid::from(format!(
            "the dispositions fuse to {} (rule {}) but the attestation says {}",
            fused.verdict.as_str(),
            fused.rule.label(),
            ext.verdict.as_str()
        )));
    }
    let vr = &st.predicate.verification_result;
    if vr != fused.verdict.verification_result() {
        return Err(Invalid::from(format!(
            "verificationResult {vr} disagrees with the verdict {}",
            fused.verdict.as_str()
        )));
    }
    let levels = &st.predicate.verified_levels;
    let want = attest::verified_levels(fused.verdict, ext.format_version);
    if levels[..] != want[..] {
        return Err(Invalid::from(format!(
            "verifiedLevels {levels:?} are not exactly [{}]",
            want.join(", ")
        )));
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

#[cfg(test)]
mod tests {
    use super::{replay, Expectations, Report, SignatureCheck, Status};
    use crate::format::result::tests::{criterion, run_result};
    use crate::format::statement::{self, Statement};
    use crate::format::Disposition;

    fn written() -> Statement {
        let result = run_result(vec![
            criterion(0, Disposition::Unsatisfied),
            criterion(1, Disposition::Unbound),
        ]);
        crate::attest::statement_of(&result, &[], &[])
    }

    fn replayed(bytes: &[u8]) -> Report {
        let sig = SignatureCheck {
            allow_unsigned: true,
            ..Default::default()
        };
        let dir = tempfile::tempdir().unwrap();
        replay(bytes, "t", &sig, &Expectations::default(), dir.path(), None)
    }

    fn failed(r: &Report) -> Option<(u8, &str)> {
        let s = r.steps.iter().find(|s| s.status == Status::Failed)?;
        Some((s.number, s.detail.as_str()))
    }

    #[test]
    fn a_statement_of_a_later_format_is_refused_at_parse_saying_so() {
        let mut st = written();
        st.predicate.extension.format_version = 6;
        let r = replayed(&st.to_bytes().unwrap());
        assert_eq!(
            failed(&r),
            Some((
                1,
                "statement format 6: this release reads formats 1 to 5; use a newer shipmoor"
            ))
        );
        assert_eq!(
            statement::readable(6).unwrap_err().to_string(),
            r.steps[0].detail
        );
        assert!(r.steps[1..].iter().all(|s| s.status == Status::NotRun));
        assert_eq!(r.format_version, None);
    }

    /// Judge findings came with format 4: an earlier format that carries them is not what any
    /// release wrote, and a release that reads only format 3 would have passed them unaudited.
    #[test]
    fn judge_findings_in_a_statement_of_format_3_are_refused() {
        let mut st = written();
        st.predicate.extension.format_version = 3;
        st.predicate.extension.judge_notes = vec!["judge x: most citations do not resolve".into()];
        let r = replayed(&st.to_bytes().unwrap());
        assert_eq!(
            failed(&r),
            Some((
                3,
                "a statement of format 3 carries judge findings, which only format 4 records"
            ))
        );
    }

    #[test]
    fn a_statement_this_release_wrote_reads_past_the_statement_step() {
        let r = replayed(&written().to_bytes().unwrap());
        assert_eq!(r.format_version, Some(5));
        assert_eq!(r.steps[2].status, Status::Ok, "{:?}", r.steps);
        // No evidence store: the records the dispositions cite are not there.
        assert_eq!(failed(&r).map(|f| f.0), Some(4));
    }

    /// A value our types do not know is a statement this release cannot read, caught where the
    /// statement is read.
    #[test]
    fn an_unknown_value_is_refused_at_the_statement_step() {
        let text = String::from_utf8(written().to_bytes().unwrap()).unwrap();
        let edited = text.replacen("\"result\": \"unsatisfied\"", "\"result\": \"unknown\"", 1);
        assert_ne!(edited, text);
        let r = replayed(edited.as_bytes());
        let (step, detail) = failed(&r).unwrap();
        assert_eq!(step, 3, "{:?}", r.steps);
        assert!(
            detail.starts_with(
                "the signed payload is not a statement of format 5: unknown variant `unknown`"
            ),
            "{detail}"
        );
    }

    /// Format 5's descriptors as SLSA VSA v1 has them: every departure stops at step 3, and
    /// `verifiedLevels` without `FAILED` on a FAILED result at step 5.
    #[test]
    fn format_5_resource_descriptors_are_checked_to_the_letter() {
        let st = written();
        let head = st.extension().head.clone();
        let claim = st.extension().acceptance.sha256.clone();
        let step = |st: &Statement| -> Option<(u8, String)> {
            failed(&replayed(&st.to_bytes().unwrap())).map(|(n, d)| (n, d.to_string()))
        };
        // As written: past step 3 (the store is empty, so step 4 fails).
        assert_eq!(step(&st).map(|f| f.0), Some(4));
        let repo = "git+https://github.com/acme/shop";
        type Edit<'a> = Box<dyn Fn(&mut Statement) + 'a>;
        let cases: Vec<(&str, Edit, &str)> = vec![
            (
                "a .git suffix",
                Box::new(|s| s.predicate.resource_uri = format!("{repo}.git@{head}")),
                "is not spelt as git+https://github.com/acme/shop@",
            ),
            (
                "a local path",
                Box::new(|s| {
                    s.predicate.resource_uri = format!("git+file:///home/alice/shop@{head}")
                }),
                "file: URL",
            ),
            (
                "a repository-relative policy",
                Box::new(|s| s.predicate.policy.uri = ".shipmoor/acceptance.yaml".into()),
                "names neither a file of",
            ),
            (
                "another claim",
                Box::new(|s| {
                    s.predicate.policy.uri =
                        format!("{}{}", crate::attest::resource::CLAIM_URN, "0".repeat(64))
                }),
                "does not name the claim the extension records",
            ),
            (
                "a file without its blob id",
                Box::new(|s| {
                    s.predicate.policy.uri = format!("{repo}@{head}#.shipmoor/acceptance.yaml");
                    s.predicate.policy.digest.sha256 = Some("a".repeat(64));
                }),
                "is neither a file's (`sha256` and `gitBlob`) nor a directory's (`gitTree`)",
            ),
            (
                "a file of another commit",
                Box::new(|s| {
                    s.predicate.policy.uri =
                        format!("{repo}@{}#.shipmoor/acceptance.yaml", "9".repeat(40));
                }),
                "names neither a file of",
            ),
        ];
        for (what, edit, want) in cases {
            let mut edited = st.clone();
            edit(&mut edited);
            let (n, detail) = step(&edited).expect(what);
            assert_eq!(n, 3, "{what}: {detail}");
            assert!(detail.contains(want), "{what}: {detail}");
        }
        // A directory's tree id is a descriptor of its own.
        let mut tree = st.clone();
        tree.predicate.policy.uri = format!("{repo}@{head}#.shipmoor");
        tree.predicate.policy.digest = statement::PolicyDigest {
            git_tree: Some("b".repeat(40)),
            ..Default::default()
        };
        assert_eq!(step(&tree).map(|f| f.0), Some(4));
        assert!(st.predicate.policy.uri.ends_with(&claim));
        // FAILED beside the level, as SLSA says for a failed verification.
        assert_eq!(st.predicate.verification_result, "FAILED");
        assert_eq!(
            st.predicate.verified_levels.last().map(String::as_str),
            Some("FAILED")
        );
        let mut without = st.clone();
        without.predicate.verified_levels.pop();
        let e = super::check_fusion(&without).unwrap_err();
        assert!(
            e.to_string()
                .contains("are not exactly [SHIPMOOR_CLAIM_CHECK_BLOCKED, FAILED]"),
            "{e}"
        );
    }
}
