//! The attestation: a Verification Summary Attestation (SLSA VSA v1) in an in-toto Statement v1.
//!
//! In: the run's result and the evidence store. Out: the statement, as canonical, sorted JSON
//! bytes (the exact bytes a signature covers).
//!
//! - subject: the head commit (`gitCommit`) and any `--subject NAME=sha256:HEX` artifacts;
//! - predicate: `verifier`, `timeVerified`, `resourceUri` (`git+<repo>@<head>`, never a local
//!   path: [`resource`]), `policy` (a resource descriptor of what the claim was read from:
//!   [`resource::policy`]), `verificationResult`, `verifiedLevels` (our own names, never
//!   `SLSA_…`, with `FAILED` beside ours on a failure), and the full dispositions under the
//!   [`EXTENSION_KEY`] extension, which `replay` re-fuses, with every evidence record by
//!   pointer (`evidence`); in full mode the extension also names each judge (its command's
//!   digest, or its endpoint and model) and holds every finding, whose request and response
//!   records are among the evidence.
//!
//! The statement's types, and the format version, are in [`crate::format::statement`].

pub mod dsse;
pub mod keyed_bundle;
pub mod keys;
pub mod resource;
pub mod sigstore;
pub mod unique_keys;
pub mod verify;

use serde::{Deserialize, Serialize};

use crate::format::result::BaseCacheState;
use crate::format::statement::{
    BaseCacheReuse, CriterionDisposition, DispositionFloor, Extension, ExtensionAcceptance,
    JudgeIdentity, Policy, Predicate, Statement, Subject as StatementSubject, SubjectDigest,
    Verifier, VerifierVersion,
};
pub use crate::format::statement::{
    EXTENSION_KEY, FORMAT_VERSION, PREDICATE_TYPE, STATEMENT_TYPE, VERIFIER_ID,
};
use crate::report::RunResult;
use crate::verdict::Verdict;

/// An artifact the VSA also speaks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubjectArg {
    pub name: String,
    pub sha256: String,
}

/// Why a `--subject` (as given) is not `NAME=sha256:HEX`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubjectError {
    #[error("`{0}` is not NAME=sha256:HEX")]
    Form(String),
    #[error("`{0}`: the digest must start with `sha256:`")]
    Algorithm(String),
    #[error("`{0}`: the name is empty")]
    NoName(String),
    #[error("`{0}`: the digest must be 64 hex digits")]
    Digest(String),
}

impl SubjectArg {
    /// Parses `NAME=sha256:HEX`.
    pub fn parse(s: &str) -> Result<SubjectArg, SubjectError> {
        let (name, digest) = s
            .rsplit_once('=')
            .ok_or_else(|| SubjectError::Form(s.to_string()))?;
        let hex = digest
            .strip_prefix("sha256:")
            .ok_or_else(|| SubjectError::Algorithm(s.to_string()))?;
        if name.is_empty() {
            return Err(SubjectError::NoName(s.to_string()));
        }
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SubjectError::Digest(s.to_string()));
        }
        Ok(SubjectArg {
            name: name.to_string(),
            sha256: hex.to_ascii_lowercase(),
        })
    }
}

/// The custom level for a verdict (`SHIPMOOR_CLAIM_CHECK_READY`, …).
pub fn level(v: Verdict) -> String {
    format!("SHIPMOOR_CLAIM_CHECK_{}", v.as_str().replace(' ', "_"))
}

/// `verifiedLevels` for a verdict: its level, and (SLSA VSA v1) `FAILED` beside it when policy
/// verification failed; a statement of format 1 to 4 holds the level alone.
pub fn verified_levels(v: Verdict, format: u64) -> Vec<String> {
    let mut levels = vec![level(v)];
    if format >= 5 && v.verification_result() == "FAILED" {
        levels.push("FAILED".to_string());
    }
    levels
}

/// The SHA-256 of a raw commit object (`git cat-file commit <sha>`): the same commit as its
/// `gitCommit` id, in a digest Sigstore verifiers can bind to.
pub fn commit_object_sha256(raw_commit: &[u8]) -> String {
    crate::evidence::sha256_hex(raw_commit)
}

/// The statement. `head_object_sha256` is [`commit_object_sha256`] of the head.
pub fn statement(
    r: &RunResult,
    evidence_records: &[String],
    subjects: &[SubjectArg],
    head_object_sha256: &str,
    policy: Policy,
) -> Statement {
    let mut subject = vec![StatementSubject {
        name: r.repository.clone(),
        uri: Some(format!("git+{}", r.repository)),
        digest: SubjectDigest {
            git_commit: Some(r.head.to_string()),
            sha256: Some(head_object_sha256.to_string()),
        },
    }];
    for s in subjects {
        subject.push(StatementSubject {
            name: s.name.clone(),
            uri: None,
            digest: SubjectDigest {
                git_commit: None,
                sha256: Some(s.sha256.clone()),
            },
        });
    }
    let dispositions = r
        .criteria
        .iter()
        .map(|c| CriterionDisposition {
            id: c.id.clone(),
            ac: c.ac.clone(),
            tag: c.tag.clone(),
            required: c.required,
            lane: c.lane,
            requirement: c.requirement.clone(),
            file: c.file.clone(),
            disposition: c.disposition,
            route_to: c.route_to,
            floor: DispositionFloor::from(&c.floor),
            judge: c.judge.clone(),
        })
        .collect();
    Statement {
        type_: STATEMENT_TYPE.to_string(),
        subject,
        predicate_type: PREDICATE_TYPE.to_string(),
        predicate: Predicate {
            verifier: Verifier {
                id: VERIFIER_ID.to_string(),
                version: VerifierVersion {
                    shipmoor: r.tool_version.clone(),
                },
            },
            time_verified: r.completed_at.clone(),
            resource_uri: format!("git+{}@{}", r.repository, r.head),
            policy,
            input_attestations: Vec::new(),
            verification_result: r.verdict.verification_result().to_string(),
            verified_levels: verified_levels(r.verdict, u64::from(FORMAT_VERSION)),
            extension: Extension {
                format_version: u64::from(FORMAT_VERSION),
                evidence: evidence_records.to_vec(),
                policy: r.policy.to_string(),
                verdict: r.verdict,
                rule: r.rule.clone(),
                mode: r.mode.clone(),
                base: r.base.clone(),
                head: r.head.clone(),
                acceptance: ExtensionAcceptance {
                    path: r.acceptance.path.clone(),
                    state: r.acceptance.state,
                    sha256: r.acceptance.sha256.clone(),
                    source: Some(r.acceptance.source.clone()),
                    inherited: Some(r.acceptance.inherited.clone()),
                    inherited_policy: Some(r.acceptance.inherited_policy),
                },
                overlay: r.overlay.clone(),
                harness_changes: r.harness_changes.clone(),
                signing: r.signing.state,
                dispositions,
                judges: judges(r),
                findings: r.findings.clone(),
                judge_notes: r.judge_notes.clone(),
                base_cache: r.base_cache.as_ref().and_then(|u| {
                    (u.state == BaseCacheState::Reused).then(|| BaseCacheReuse {
                        entry: u.entry.clone().unwrap_or_default(),
                        key: u.key.clone(),
                        observed_at_head: u.observed_at_head.clone().unwrap_or_default(),
                        observed_at: u.observed_at.clone().unwrap_or_default(),
                    })
                }),
                sandbox: r.sandbox.clone(),
                observation: r.observation.clone(),
            },
        },
    }
}

/// Each judge that answered, once, in the order of its first finding.
fn judges(r: &RunResult) -> Vec<JudgeIdentity> {
    let mut out: Vec<JudgeIdentity> = Vec::new();
    for f in &r.findings {
        if out.iter().all(|j| j.name != f.judge) {
            out.push(JudgeIdentity {
                name: f.judge.clone(),
                identity: f.identity.clone(),
            });
        }
    }
    out
}

/// The statement's bytes: sorted keys, two-space indent, a final newline.
/// The statement of `r` with its claim as the policy (what the unit tests sign and replay).
#[cfg(test)]
pub fn statement_of(r: &RunResult, records: &[String], subjects: &[SubjectArg]) -> Statement {
    let policy = resource::policy(
        &r.repository,
        r.head
            .known()
            .expect("a statement is made of a run result with its head"),
        &resource::ClaimOrigin::Document,
        &r.acceptance.sha256,
    );
    statement(r, records, subjects, &"4".repeat(64), policy)
}

pub fn statement_bytes(st: &Statement) -> Result<Vec<u8>, serde_json::Error> {
    st.to_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_parse() {
        let hex = "a".repeat(64);
        let s = SubjectArg::parse(&format!("app.tar=sha256:{hex}")).unwrap();
        assert_eq!(s.name, "app.tar");
        assert!(SubjectArg::parse("app.tar").is_err());
        assert!(SubjectArg::parse("app=sha1:abc").is_err());
        assert!(SubjectArg::parse("=sha256:aa").is_err());
    }

    #[test]
    fn levels_never_start_with_slsa() {
        for v in [
            Verdict::Ready,
            Verdict::ReadyWithGaps,
            Verdict::Blocked,
            Verdict::Inconclusive,
        ] {
            assert!(!level(v).starts_with("SLSA_"));
        }
        assert_eq!(
            level(Verdict::ReadyWithGaps),
            "SHIPMOOR_CLAIM_CHECK_READY_WITH_GAPS"
        );
    }
}
