//! The fix packet, schema `claim_check.fixes.v2`: the actionable to-do list of a run, with the
//! same evidence pointers as the VSA. Its fields are written in the order declared here.
//!
//! - `fixes`: one entry per requirement that actually failed (a floor miss or a judge block);
//! - `route_to_human`: criteria the run could not settle (abstained or undecided, and judgment
//!   criteria nobody judged);
//! - `author_checks`: unbound criteria, with the exact tag a new test must carry.

use serde::{Deserialize, Deserializer, Serialize};

use super::Constant;

pub const SCHEMA: &str = "claim_check.fixes.v2";

pub const AUTHOR_INSTRUCTION: &str = "Write a test whose id or filename contains this exact tag. It must fail at the base commit and pass at the head commit.";

/// What a fix's evidence points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    /// A record of the attestation (a floor observation).
    Attestation,
    /// A judge's response record, with the `path:line` its confirmed block points at.
    Judge,
}

/// The kind of evidence a floor miss cites.
pub const EVIDENCE_KIND: EvidenceKind = EvidenceKind::Attestation;

fn schema<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    super::constant(d, SCHEMA)
}

fn author_instruction<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    super::constant(d, AUTHOR_INSTRUCTION)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FixPacket {
    #[serde(deserialize_with = "schema")]
    pub schema: Constant,
    pub fixes: Vec<Fix>,
    pub route_to_human: Vec<HumanRoute>,
    pub author_checks: Vec<AuthorCheck>,
    /// The criteria inherited from earlier changes, in one line (absent when there are none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inherited: Option<String>,
    /// Full mode: what the run says about the panel (a judge whose blocks were discarded);
    /// absent when there is nothing to say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge_notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fix {
    pub requirement: String,
    pub ac: String,
    pub reason: String,
    pub evidence: FixEvidence,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FixEvidence {
    #[serde(rename = "type")]
    pub kind: EvidenceKind,
    pub pointer: String,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HumanRoute {
    pub ac: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuthorCheck {
    pub ac: String,
    pub tag: String,
    #[serde(deserialize_with = "author_instruction")]
    pub instruction: Constant,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packet's bytes as the run writes them, read back and written again.
    #[test]
    fn a_fix_packet_reads_back_to_the_same_bytes() {
        let result = crate::format::result::tests::every_disposition();
        let packet = crate::report::fixes::packet(&result);
        assert!(!packet.fixes.is_empty() && !packet.route_to_human.is_empty());
        assert!(!packet.author_checks.is_empty() && packet.inherited.is_some());
        let bytes = serde_json::to_vec_pretty(&packet).unwrap();
        let back: FixPacket = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(serde_json::to_vec_pretty(&back).unwrap(), bytes);
        // Declared order, not sorted: `schema` first, as the packet always began.
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.starts_with("{\n  \"schema\": \"claim_check.fixes.v2\",\n  \"fixes\": ["));
    }

    /// A judge's fix cites `{type: "judge", pointer, detail: "path:line"}`; a type this release
    /// does not write is refused.
    #[test]
    fn a_judge_fix_reads_back_and_an_unknown_evidence_type_does_not() {
        let fix = Fix {
            requirement: "stage3.byo_judge".into(),
            ac: "An audit log entry is written.".into(),
            reason: "refund() returns first".into(),
            evidence: FixEvidence {
                kind: EvidenceKind::Judge,
                pointer: format!("sha256:{}", "a".repeat(64)),
                detail: "src/refund.py:42".into(),
            },
        };
        let json = serde_json::to_string(&fix).unwrap();
        assert!(
            json.contains(r#""evidence":{"type":"judge","pointer":"sha256:"#),
            "{json}"
        );
        let back: Fix = serde_json::from_str(&json).unwrap();
        assert_eq!(back.evidence.kind, EvidenceKind::Judge);
        let other = json.replace(r#""type":"judge""#, r#""type":"oracle""#);
        assert!(serde_json::from_str::<Fix>(&other).is_err());
        let floor = json.replace(r#""type":"judge""#, r#""type":"attestation""#);
        let back: Fix = serde_json::from_str(&floor).unwrap();
        assert_eq!(back.evidence.kind, EVIDENCE_KIND);
    }
}
