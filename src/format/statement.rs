//! The VSA: an in-toto Statement v1 carrying a SLSA Verification Summary Attestation v1 whose
//! predicate holds Claim Check's dispositions under the [`EXTENSION_KEY`] extension.
//!
//! [`crate::attest::statement`] writes it, `replay` reads it back; both through these types. The
//! statement is printed with every object's keys sorted ([`Statement::to_bytes`]), so the order
//! fields are declared in here does not reach the bytes a signature covers.
//!
//! Versions: [`FORMAT_VERSION`] is the layout this release writes; [`readable`] says whether a
//! statement's version is one this release reads. Fields a version added are optional here, so
//! statements of every older version still read.

use serde::{Deserialize, Serialize};

use super::judge::{Finding, Identity};
use super::result::{CriterionFloor, InheritedCriterion, JudgeOutcome, RouteTo};
use super::{Disposition, Mode, Recorded, SideOutcome, SigningState};
use crate::acceptance::{AcceptanceState, InheritedPolicy, Lane};
use crate::git::CommitId;
use crate::verdict::{FloorResult, Rule, Verdict};

pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
pub const PREDICATE_TYPE: &str = "https://slsa.dev/verification_summary/v1";
pub const VERIFIER_ID: &str = "https://github.com/shipmoor/claim-check";
/// The predicate's key for Claim Check's own part (the field name in [`Predicate`] and
/// [`VersionProbe`] spells it out, as serde needs a literal).
pub const EXTENSION_KEY: &str = "https://shipmoor.dev/claim-check/v1";
/// The media type of the evidence records the statement cites.
pub const EVIDENCE_MEDIA_TYPE: &str = "application/vnd.shipmoor.evidence+json";
/// The version of the statement's layout this release writes.
/// 1: the first release. 2: the commit subject also carries the SHA-256 of the raw commit
/// object (what Sigstore verifiers bind a DSSE bundle to), and the signing form is recorded.
/// 3: the `policy` digest covers the change's claim (the claimed criteria, each with its file,
/// and the settings: [`crate::acceptance::claim::document`]) rather than one file's bytes; each
/// disposition names its criterion's `file`; `acceptance` records the claim's `source` and the
/// inherited criteria. 4: full mode: `judges`, `findings` and `judge_notes`, with the judge's
/// request and response records among the evidence. 5: the SLSA fields to the letter: `policy`
/// is a resource descriptor of what the claim was read from (an absolute URI and the digest of
/// what it names: [`PolicyDigest`]), the claim's digest stays in `acceptance.sha256`; the
/// evidence records are cited in the extension's `evidence`, no longer as `inputAttestations`
/// (which holds attestations only); `verifiedLevels` holds `FAILED` beside Claim Check's level
/// when the result is `FAILED`; `resourceUri` is never a local path and has no `.git` suffix.
/// Every statement is written as format 5, with or without a judge.
///
/// Readable by: formats 1 and 2 by every release; 3 by releases from the one that wrote it on;
/// 4 by releases that write 4 or later; 5 by releases that write 5 or later. A release refuses
/// a later format at parse rather than read evidence or judge findings where it does not look.
pub const FORMAT_VERSION: u32 = 5;
/// The oldest statement format this release reads.
pub const OLDEST_FORMAT: u64 = 1;

/// Whether this release reads a statement of format `version`: every format from
/// [`OLDEST_FORMAT`] to [`FORMAT_VERSION`]; otherwise a message that says which it reads.
pub fn readable(version: u64) -> Result<u64, VersionError> {
    if version > u64::from(FORMAT_VERSION) {
        return Err(VersionError::Newer(version));
    }
    if version < OLDEST_FORMAT {
        return Err(VersionError::Older(version));
    }
    Ok(version)
}

/// Why a statement's format version is not one this release reads.
#[derive(Debug, thiserror::Error)]
pub enum VersionError {
    #[error("statement format {0}: this release reads formats {OLDEST_FORMAT} to {FORMAT_VERSION}; use a newer shipmoor")]
    Newer(u64),
    #[error("statement format {0}: this release reads formats {OLDEST_FORMAT} to {FORMAT_VERSION}, and no release wrote format {0}")]
    Older(u64),
    #[error("the statement's format version cannot be read: {0}")]
    Unreadable(serde_json::Error),
    #[error("the statement is not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("the predicate has no `{EXTENSION_KEY}` extension: not written by Claim Check")]
    NoExtension,
    #[error("the extension has no numeric `format_version`")]
    NoVersion,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    #[serde(rename = "_type")]
    pub type_: String,
    pub subject: Vec<Subject>,
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    pub predicate: Predicate,
}

impl Statement {
    /// The statement's bytes: sorted keys, two-space indent, a final newline.
    pub fn to_bytes(&self) -> Result<Vec<u8>, serde_json::Error> {
        // Through a `Value`, whose maps are sorted: the bytes the statement always had.
        let v = serde_json::to_value(self)?;
        let mut out = serde_json::to_vec_pretty(&v)?;
        out.push(b'\n');
        Ok(out)
    }

    /// The subjects that name a commit (an attestation speaks for exactly one).
    pub fn commit_subjects(&self) -> Vec<&Subject> {
        self.subject
            .iter()
            .filter(|s| s.digest.git_commit.is_some())
            .collect()
    }

    /// Claim Check's part of the predicate.
    pub fn extension(&self) -> &Extension {
        &self.predicate.extension
    }

    /// The evidence records the statement cites, as pointers: the extension's `evidence` from
    /// format 5, `inputAttestations` before.
    pub fn evidence_pointers(&self) -> Vec<String> {
        if self.predicate.extension.format_version >= 5 {
            return self.predicate.extension.evidence.clone();
        }
        self.predicate
            .input_attestations
            .iter()
            .map(|a| format!("sha256:{}", a.digest.sha256))
            .collect()
    }
}

/// What the statement speaks for: the head commit (`gitCommit`, and from format 2 the raw
/// commit object's `sha256`), or an artifact given with `--subject` (`sha256`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    pub digest: SubjectDigest,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubjectDigest {
    #[serde(rename = "gitCommit", default, skip_serializing_if = "Option::is_none")]
    pub git_commit: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Predicate {
    pub verifier: Verifier,
    #[serde(rename = "timeVerified")]
    pub time_verified: String,
    /// `git+<repository>@<head>`.
    #[serde(rename = "resourceUri")]
    pub resource_uri: String,
    /// The claim: its file (files, or the text it was derived from) and its digest.
    pub policy: Policy,
    /// Formats 1 to 4: every evidence record, by digest. From format 5 the records are in the
    /// extension's `evidence` and this holds attestations only (none yet).
    #[serde(
        rename = "inputAttestations",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub input_attestations: Vec<InputAttestation>,
    /// `PASSED` or `FAILED`.
    #[serde(rename = "verificationResult")]
    pub verification_result: String,
    /// Our own level names, never `SLSA_…`; from format 5 with `FAILED` beside ours when the
    /// result is `FAILED`.
    #[serde(rename = "verifiedLevels")]
    pub verified_levels: Vec<String>,
    #[serde(rename = "https://shipmoor.dev/claim-check/v1")]
    pub extension: Extension,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verifier {
    pub id: String,
    pub version: VerifierVersion,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifierVersion {
    pub shipmoor: String,
}

/// What the claim was read from, as a resource descriptor: from format 5 an absolute URI and the
/// digest of what it names (formats 1 to 4: the claim's file as a repository path, and the
/// claim's digest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    pub uri: String,
    pub digest: PolicyDigest,
}

/// A digest set of what `policy.uri` names: `sha256` and `gitBlob` of one file at head,
/// `gitTree` of the directory of several, or `sha256` alone of the claim's own document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyDigest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(rename = "gitBlob", default, skip_serializing_if = "Option::is_none")]
    pub git_blob: Option<String>,
    #[serde(rename = "gitTree", default, skip_serializing_if = "Option::is_none")]
    pub git_tree: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sha256Digest {
    pub sha256: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputAttestation {
    /// `evidence/sha256/<hex>`, relative to the evidence store's parent.
    pub uri: String,
    pub digest: Sha256Digest,
    #[serde(rename = "mediaType")]
    pub media_type: String,
}

/// Claim Check's part of the predicate: what `replay` re-checks and re-fuses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Extension {
    pub format_version: u64,
    /// The fusion policy the verdict was reached under (`v3`).
    pub policy: String,
    pub verdict: Verdict,
    /// The rule the run's fusion gave; replay re-derives it from the dispositions rather than
    /// reading it.
    pub rule: Recorded<Rule>,
    pub mode: Recorded<Mode>,
    pub base: Recorded<CommitId>,
    pub head: Recorded<CommitId>,
    pub acceptance: ExtensionAcceptance,
    pub overlay: Vec<String>,
    pub harness_changes: Vec<String>,
    pub signing: SigningState,
    pub dispositions: Vec<CriterionDisposition>,
    /// From format 5: every evidence record the statement rests on, by pointer (`sha256:<hex>`),
    /// which `replay` re-hashes (formats 1 to 4 cite them as `inputAttestations`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// Full mode: who judged (each judge of the panel by name, with its command's digest or
    /// its endpoint and model). Absent when no judge ran, as in every statement before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<JudgeIdentity>,
    /// Full mode: every judge's finding on every criterion, with each citation's check and the
    /// evidence pointers of its request and response records, which `replay` re-audits.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Full mode: what the run said about the panel (a judge whose blocks were discarded).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge_notes: Vec<String>,
    /// Base's observations came from the base cache (book: floor/base-cache.md): which entry,
    /// and which run observed them. The records are that run's, cited as any others. Absent
    /// when base ran in this run, as in every statement before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_cache: Option<BaseCacheReuse>,
    /// The sandbox the floor's commands ran under at head and base (book: security.md), which
    /// an admission policy can require (`require_sandbox`). Absent in statements of releases
    /// before it, which an admission policy that requires a sandbox denies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<super::sandbox::SandboxRecord>,
    /// Where the change's code was observed against where the statement was signed (book:
    /// trust-boundary.md), which an admission policy can require (`require_isolated_signer`).
    /// Absent in statements of releases before it, which such a policy denies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<super::observation::Observation>,
}

/// Where a statement's base observations came from when they were reused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseCacheReuse {
    /// The entry, `sha256:<hex>`.
    pub entry: String,
    /// The digest of everything that can change base's answer, which this run's inputs gave.
    pub key: String,
    /// The head commit of the run that observed base (its test files were laid over base).
    pub observed_at_head: String,
    /// When that run observed base (RFC 3339).
    pub observed_at: String,
}

/// One judge of the panel, as the statement names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeIdentity {
    /// The judge's name (its lens).
    pub name: String,
    pub identity: Identity,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtensionAcceptance {
    pub path: String,
    pub state: AcceptanceState,
    pub sha256: String,
    /// From format 3: `files`, `explicit` or `derived`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// From format 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inherited: Option<Vec<InheritedCriterion>>,
    /// From format 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inherited_policy: Option<InheritedPolicy>,
}

/// One criterion's disposition, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CriterionDisposition {
    pub id: String,
    pub ac: String,
    pub tag: String,
    pub required: bool,
    pub lane: Lane,
    pub requirement: String,
    /// From format 3: the criterion's acceptance file (`null` for the pass-to-pass guard).
    #[serde(default)]
    pub file: Option<String>,
    pub disposition: Disposition,
    pub route_to: RouteTo,
    pub floor: DispositionFloor,
    /// Absent reads as no judge.
    #[serde(default)]
    pub judge: JudgeOutcome,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispositionFloor {
    pub result: FloorResult,
    pub reason: String,
    /// `tag`, `check.test`, `check.command`, `check.pattern`, `guard` or `judge_lane`.
    pub binding: String,
    /// The record that decided the result.
    pub evidence: Option<String>,
    /// Every record the disposition rests on.
    pub evidence_all: Vec<String>,
    pub tests: Vec<DispositionTest>,
}

impl From<&CriterionFloor> for DispositionFloor {
    /// The floor's part of a disposition as the statement records it: what `replay` re-checks
    /// against the records, and what `fuse` re-checks a shard's entries as.
    fn from(f: &CriterionFloor) -> Self {
        DispositionFloor {
            result: f.result,
            reason: f.reason.clone(),
            binding: f.binding.clone(),
            evidence: f.evidence.as_ref().map(|e| e.pointer.clone()),
            evidence_all: f.evidence_all.clone(),
            tests: f
                .tests
                .iter()
                .map(|t| DispositionTest {
                    id: t.id.clone(),
                    runner: t.runner.clone(),
                    base: t.base,
                    head: t.head,
                    base_evidence: t.base_evidence.clone(),
                    head_evidence: t.head_evidence.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DispositionTest {
    pub id: String,
    pub runner: String,
    pub base: SideOutcome,
    pub head: SideOutcome,
    pub base_evidence: Vec<String>,
    pub head_evidence: Vec<String>,
}

impl DispositionTest {
    pub fn outcome(&self, side: super::floor::Side) -> SideOutcome {
        match side {
            super::floor::Side::Base => self.base,
            super::floor::Side::Head => self.head,
        }
    }

    pub fn evidence(&self, side: super::floor::Side) -> &[String] {
        match side {
            super::floor::Side::Base => &self.base_evidence,
            super::floor::Side::Head => &self.head_evidence,
        }
    }
}

/// Just enough of a statement to learn its format version, read before anything else (a
/// statement of a later format may not read as this release's [`Statement`] at all).
#[derive(Debug, Deserialize)]
pub struct VersionProbe {
    predicate: Option<ProbePredicate>,
}

#[derive(Debug, Deserialize)]
struct ProbePredicate {
    #[serde(rename = "https://shipmoor.dev/claim-check/v1")]
    extension: Option<ProbeExtension>,
}

#[derive(Debug, Deserialize)]
struct ProbeExtension {
    format_version: Option<serde_json::Number>,
}

/// The format version of a statement's bytes, when this release reads it.
pub fn format_version(payload: &[u8]) -> Result<u64, VersionError> {
    let probe: VersionProbe = serde_json::from_slice(payload).map_err(|e| {
        if e.is_data() {
            VersionError::Unreadable(e)
        } else {
            VersionError::NotJson(e)
        }
    })?;
    let ext = probe
        .predicate
        .and_then(|p| p.extension)
        .ok_or(VersionError::NoExtension)?;
    let version = ext
        .format_version
        .and_then(|n| n.as_u64())
        .ok_or(VersionError::NoVersion)?;
    readable(version)
}

/// The subjects of a statement's bytes, read without the rest (what a Sigstore bundle is bound
/// to is needed before the statement is verified).
pub fn subjects(payload: &[u8]) -> Option<Vec<Subject>> {
    #[derive(Deserialize)]
    struct Subjects {
        subject: Vec<Subject>,
    }
    serde_json::from_slice::<Subjects>(payload)
        .ok()
        .map(|s| s.subject)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMAT_1: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/format-1/claim-check.vsa.json"
    );

    /// The statement as claim-check writes it (every disposition, an artifact subject).
    fn written() -> Vec<u8> {
        let result = crate::format::result::tests::every_disposition();
        let records = [format!("sha256:{}", "1".repeat(64))];
        let artifact = crate::attest::SubjectArg {
            name: "app.tar".into(),
            sha256: "3".repeat(64),
        };
        crate::attest::statement_of(&result, &records, &[artifact])
            .to_bytes()
            .unwrap()
    }

    #[test]
    fn a_statement_reads_back_to_the_same_bytes() {
        let bytes = written();
        let st: Statement = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(st.to_bytes().unwrap(), bytes);
        assert_eq!(format_version(&bytes).ok(), Some(u64::from(FORMAT_VERSION)));
        // The key the types read is the one the constant names.
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert!(v["predicate"][EXTENSION_KEY]["dispositions"].is_array());
        assert_eq!(subjects(&bytes), Some(st.subject.clone()));
        insta::assert_snapshot!("statement", String::from_utf8(bytes).unwrap());
    }

    #[test]
    fn a_renamed_field_does_not_read() {
        let text = String::from_utf8(written()).unwrap();
        for (from, to) in [
            ("\"disposition\": \"", "\"dispositon\": \""),
            ("\"evidence_all\"", "\"evidence_every\""),
            ("\"base\": \"fail\"", "\"base\": \"failed\""),
            ("\"signing\"", "\"signed\""),
        ] {
            assert!(text.contains(from), "{from}");
            let changed = text.replace(from, to);
            assert!(
                serde_json::from_str::<Statement>(&changed).is_err(),
                "{from} → {to} still reads"
            );
        }
    }

    #[test]
    fn versions_from_the_oldest_to_this_one_are_readable() {
        for v in OLDEST_FORMAT..=u64::from(FORMAT_VERSION) {
            assert_eq!(readable(v).ok(), Some(v));
        }
        let e = readable(u64::from(FORMAT_VERSION) + 1)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!(
                "statement format {}: this release reads formats 1 to {FORMAT_VERSION}; use a newer shipmoor",
                FORMAT_VERSION + 1
            )
        );
        let e = readable(0).unwrap_err().to_string();
        assert!(e.contains("no release wrote format 0"), "{e}");
    }

    #[test]
    fn the_format_version_is_read_before_the_rest() {
        // A statement of a later format is refused for its version, whatever else it holds.
        let later = format!(
            r#"{{"predicate": {{"{EXTENSION_KEY}": {{"format_version": 99, "dispositions": "changed"}}}}}}"#
        );
        let e = format_version(later.as_bytes()).unwrap_err().to_string();
        assert!(e.starts_with("statement format 99: "), "{e}");
        assert!(e.ends_with("use a newer shipmoor"), "{e}");
        let e = format_version(br#"{"predicate": {}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not written by Claim Check"), "{e}");
        let none = format!(r#"{{"predicate": {{"{EXTENSION_KEY}": {{}}}}}}"#);
        assert_eq!(
            format_version(none.as_bytes()).unwrap_err().to_string(),
            "the extension has no numeric `format_version`"
        );
        assert!(format_version(b"{")
            .unwrap_err()
            .to_string()
            .contains("not JSON"));
        assert_eq!(
            format_version(&std::fs::read(FORMAT_1).unwrap()).ok(),
            Some(1)
        );
    }

    #[test]
    fn a_format_1_statement_still_reads() {
        let st: Statement = serde_json::from_slice(&std::fs::read(FORMAT_1).unwrap()).unwrap();
        let ext = st.extension();
        assert_eq!(ext.format_version, 1);
        assert_eq!(ext.acceptance.source, None);
        assert_eq!(ext.dispositions.len(), 2);
        assert_eq!(ext.dispositions[0].file, None);
        assert_eq!(ext.dispositions[0].floor.tests[0].base, SideOutcome::Fail);
        assert_eq!(st.commit_subjects()[0].digest.sha256, None);
    }
}
