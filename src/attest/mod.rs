//! The attestation: a Verification Summary Attestation (SLSA VSA v1) in an in-toto Statement v1.
//!
//! In: the run's result and the evidence store. Out: the statement, as canonical, sorted JSON
//! bytes (the exact bytes a signature covers).
//!
//! - subject: the head commit (`gitCommit`) and any `--subject NAME=sha256:HEX` artifacts;
//! - predicate: `verifier`, `timeVerified`, `resourceUri` (`git+<repo>@<head>`), `policy` (the
//!   acceptance set's path and digest), `inputAttestations` (every evidence record, by digest),
//!   `verificationResult`, `verifiedLevels` (our own names, never `SLSA_…`), and the full
//!   dispositions under the [`EXTENSION_KEY`] extension, which `replay` re-fuses.

pub mod dsse;
pub mod keyed_bundle;
pub mod keys;
pub mod sigstore;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::report::RunResult;
use crate::verdict::Verdict;

pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
pub const PREDICATE_TYPE: &str = "https://slsa.dev/verification_summary/v1";
pub const VERIFIER_ID: &str = "https://github.com/shipmoor/claim-check";
pub const EXTENSION_KEY: &str = "https://shipmoor.dev/claim-check/v1";
/// The version of the statement's layout; `replay` reads every version up to this one.
/// 1: the first release. 2: the commit subject also carries the SHA-256 of the raw commit
/// object (what Sigstore verifiers bind a DSSE bundle to), and the signing form is recorded.
/// 3: the `policy` digest covers the change's claim (the claimed criteria, each with its file,
/// and the settings: [`crate::acceptance::claim::document`]) rather than one file's bytes; each
/// disposition names its criterion's `file`; `acceptance` records the claim's `source` and the
/// inherited criteria.
pub const FORMAT_VERSION: u32 = 3;

/// An artifact the VSA also speaks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    pub name: String,
    pub sha256: String,
}

impl Subject {
    /// Parses `NAME=sha256:HEX`.
    pub fn parse(s: &str) -> Result<Subject, String> {
        let (name, digest) = s
            .rsplit_once('=')
            .ok_or_else(|| format!("`{s}` is not NAME=sha256:HEX"))?;
        let hex = digest
            .strip_prefix("sha256:")
            .ok_or_else(|| format!("`{s}`: the digest must start with `sha256:`"))?;
        if name.is_empty() {
            return Err(format!("`{s}`: the name is empty"));
        }
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("`{s}`: the digest must be 64 hex digits"));
        }
        Ok(Subject {
            name: name.to_string(),
            sha256: hex.to_ascii_lowercase(),
        })
    }
}

/// The custom level for a verdict (`SHIPMOOR_CLAIM_CHECK_READY`, …).
pub fn level(v: Verdict) -> String {
    format!("SHIPMOOR_CLAIM_CHECK_{}", v.as_str().replace(' ', "_"))
}

/// The SHA-256 of a raw commit object (`git cat-file commit <sha>`): the same commit as its
/// `gitCommit` id, in a digest Sigstore verifiers can bind to.
pub fn commit_object_sha256(raw_commit: &[u8]) -> String {
    crate::evidence::sha256_hex(raw_commit)
}

/// The statement as a JSON value. `head_object_sha256` is [`commit_object_sha256`] of the head.
pub fn statement(
    r: &RunResult,
    evidence_records: &[String],
    subjects: &[Subject],
    head_object_sha256: &str,
) -> Value {
    let mut subject = vec![json!({
        "name": r.repository,
        "uri": format!("git+{}", r.repository),
        "digest": {"gitCommit": r.head, "sha256": head_object_sha256},
    })];
    for s in subjects {
        subject.push(json!({"name": s.name, "digest": {"sha256": s.sha256}}));
    }
    let inputs: Vec<Value> = evidence_records
        .iter()
        .filter_map(|p| p.strip_prefix("sha256:"))
        .map(|hex| {
            json!({
                "uri": format!("evidence/sha256/{hex}"),
                "digest": {"sha256": hex},
                "mediaType": "application/vnd.shipmoor.evidence+json",
            })
        })
        .collect();
    let dispositions: Vec<Value> = r
        .criteria
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "ac": c.ac,
                "tag": c.tag,
                "required": c.required,
                "lane": c.lane,
                "requirement": c.requirement,
                "file": c.file,
                "disposition": c.disposition,
                "route_to": c.route_to,
                "floor": {
                    "result": c.floor.result,
                    "reason": c.floor.reason,
                    "binding": c.floor.binding,
                    "evidence": c.floor.evidence.as_ref().map(|e| &e.pointer),
                    "evidence_all": c.floor.evidence_all,
                    "tests": c.floor.tests.iter().map(|t| json!({
                        "id": t.id, "runner": t.runner, "base": t.base, "head": t.head,
                        "base_evidence": t.base_evidence, "head_evidence": t.head_evidence,
                    })).collect::<Vec<_>>(),
                },
                "judge": {"result": c.judge.result, "rationale": c.judge.rationale},
            })
        })
        .collect();
    json!({
        "_type": STATEMENT_TYPE,
        "subject": subject,
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "verifier": {"id": VERIFIER_ID, "version": {"shipmoor": r.tool_version}},
            "timeVerified": r.completed_at,
            "resourceUri": format!("git+{}@{}", r.repository, r.head),
            "policy": {
                "uri": r.acceptance.path,
                "digest": {"sha256": r.acceptance.sha256},
            },
            "inputAttestations": inputs,
            "verificationResult": r.verdict.verification_result(),
            "verifiedLevels": [level(r.verdict)],
            EXTENSION_KEY: {
                "format_version": FORMAT_VERSION,
                "policy": r.policy,
                "verdict": r.verdict,
                "rule": r.rule,
                "mode": r.mode,
                "base": r.base,
                "head": r.head,
                "acceptance": {
                    "path": r.acceptance.path, "state": r.acceptance.state, "sha256": r.acceptance.sha256,
                    "source": r.acceptance.source,
                    "inherited": r.acceptance.inherited,
                    "inherited_policy": r.acceptance.inherited_policy,
                },
                "overlay": r.overlay,
                "harness_changes": r.harness_changes,
                "signing": r.signing.state,
                "dispositions": dispositions,
            },
        },
    })
}

/// The statement's bytes: sorted keys, two-space indent, a final newline.
pub fn statement_bytes(v: &Value) -> Result<Vec<u8>, String> {
    let mut out = serde_json::to_vec_pretty(v).map_err(|e| e.to_string())?;
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_parse() {
        let hex = "a".repeat(64);
        let s = Subject::parse(&format!("app.tar=sha256:{hex}")).unwrap();
        assert_eq!(s.name, "app.tar");
        assert!(Subject::parse("app.tar").is_err());
        assert!(Subject::parse("app=sha1:abc").is_err());
        assert!(Subject::parse("=sha256:aa").is_err());
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
