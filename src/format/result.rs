//! The run result, schema `claim_check.result.v1`: everything one run decided, and the result
//! document `{"schema": "claim_check.run.v1", "result": …, "fixes": …}` that `--format json`
//! prints and `--result-out` writes for the Action to read. `schemas/` in the repository holds
//! its JSON Schema.
//!
//! The floor's part of each criterion ([`CriterionFloor`] and the rest) is defined with the floor
//! that fills it in and read back here with the rest of the result.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize};

use super::fixes::FixPacket;
pub use super::floor::{
    BaseCacheState, BaseCacheUse, CriterionFloor, EvidenceRef, RuntimeRow, TestObservation,
};
use super::judge::Finding;
use super::{Constant, Disposition, Mode, Recorded, SigningState};
use crate::acceptance::{AcceptanceState, InheritedPolicy, Lane};
use crate::git::CommitId;
use crate::verdict::{JudgeResult, Rule, Verdict};

pub const RESULT_SCHEMA: &str = "claim_check.result.v1";

/// The result document's own schema, its top-level `schema` key
/// (`schemas/claim_check.run.v1.json` in the repository describes it).
pub const RUN_SCHEMA: &str = "claim_check.run.v1";

fn result_schema<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    super::constant(d, RESULT_SCHEMA)
}

fn policy<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    super::constant(d, crate::verdict::POLICY)
}

/// Where a criterion goes next, as `verify.md`'s `route_to` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouteTo {
    Proceed,
    Fix,
    Human,
    AuthorCheck,
    FollowUp,
}

impl RouteTo {
    pub fn as_str(self) -> &'static str {
        match self {
            RouteTo::Proceed => "proceed",
            RouteTo::Fix => "fix",
            RouteTo::Human => "human",
            RouteTo::AuthorCheck => "author-check",
            RouteTo::FollowUp => "follow-up",
        }
    }
}

/// The judge's part of a criterion's disposition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeOutcome {
    pub result: JudgeResult,
    pub rationale: Option<String>,
}

impl Default for JudgeOutcome {
    /// No judge looked at the criterion.
    fn default() -> Self {
        JudgeOutcome {
            result: JudgeResult::None,
            rationale: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CriterionResult {
    pub id: String,
    pub ac: String,
    pub tag: String,
    pub required: bool,
    pub lane: Lane,
    pub requirement: String,
    /// The criterion's line in the acceptance file (0 for the pass-to-pass guard).
    pub line: usize,
    /// The acceptance file the criterion comes from (none for the pass-to-pass guard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub disposition: Disposition,
    pub route_to: RouteTo,
    pub floor: CriterionFloor,
    pub judge: JudgeOutcome,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AcceptanceInfo {
    /// The claim's file (files, comma-separated, when several), or the text it was derived from.
    pub path: String,
    pub state: AcceptanceState,
    /// The claim's digest (see [`crate::acceptance::claim::digest`]).
    pub sha256: String,
    /// Where the claim came from: `files` (what base..head adds or changes), `explicit`
    /// (`--acceptance PATH`) or `derived` (a draft from text).
    pub source: String,
    /// Criteria present unchanged at base: an earlier change's claim, not this one's.
    pub inherited: Vec<InheritedCriterion>,
    /// What the floor did with them (`list`, or `guard`: their tests kept as regression guards,
    /// `stage1.floor.guard`).
    pub inherited_policy: InheritedPolicy,
    /// When the claim is a draft: its criteria, each with how sure its derivation was, and the
    /// command that commits it (absent for a committed claim, whose result is as it always was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<DraftInfo>,
}

/// A draft claim, for the person who commits it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DraftInfo {
    /// The one command line that writes the draft as this change's file and commits it
    /// (`shipmoor acceptance commit`, after `shipmoor acceptance derive …` for a derived one).
    pub commit: String,
    pub criteria: Vec<DraftCriterion>,
}

/// One criterion of a draft claim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DraftCriterion {
    pub id: String,
    pub tag: String,
    pub ac: String,
    pub required: bool,
    /// How sure the derivation was, 0 to 1 (absent for a criterion written by hand).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Where it was read: `pull request #12, line 7`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InheritedCriterion {
    pub id: String,
    pub file: String,
}

/// Where the run wrote its documents, as the user would name them (relative to the repository
/// when inside it).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outputs {
    pub vsa: String,
    pub fixes: String,
    pub report: String,
    pub evidence: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Signing {
    pub state: SigningState,
    pub note: String,
}

/// Everything one run decided, as `--format json` prints it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    #[serde(deserialize_with = "result_schema")]
    pub schema: Constant,
    pub tool_version: String,
    #[serde(deserialize_with = "policy")]
    pub policy: Constant,
    pub mode: Recorded<Mode>,
    pub verdict: Verdict,
    /// The fusion rule that decided the verdict (`1`…`5`, `draft-gate`).
    pub rule: Recorded<Rule>,
    pub rule_reason: String,
    pub exit_code: i32,
    pub repository: String,
    pub base: Recorded<CommitId>,
    pub head: Recorded<CommitId>,
    pub acceptance: AcceptanceInfo,
    pub started_at: String,
    pub completed_at: String,
    pub duration_seconds: u64,
    pub criteria: Vec<CriterionResult>,
    pub overlay: Vec<String>,
    /// Source files of which only head's test items were laid over base (book: floor/base-overlay.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overlay_spliced: Vec<String>,
    pub harness_changes: Vec<String>,
    pub runtime: Vec<RuntimeRow>,
    pub outputs: Outputs,
    pub signing: Signing,
    /// Full mode: every judge's answer on every criterion it was asked about, after the
    /// citation audit (absent when no judge ran, so a fast run's result is as it always was).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Full mode: what every report says about the panel as a whole (`judge X: most
    /// citations do not resolve; its blocks are discarded`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge_notes: Vec<String>,
    /// A fused run (`shipmoor fuse`): the shard jobs its floor ran in. Absent for a single run,
    /// whose result is as it always was. The fix packet, `verify.md` and the statement do not
    /// carry it: a fused run's are the single run's, byte for byte (book: sharding.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<Shards>,
    /// How base used the base cache (book: floor/base-cache.md); absent when it is off or base
    /// ran no test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_cache: Option<BaseCacheUse>,
    /// The sandbox the floor's commands ran under (book: security.md); absent only in results
    /// of releases before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<super::sandbox::SandboxRecord>,
    /// Where the change's code was observed against where the run signed (book:
    /// trust-boundary.md); absent only in results of releases before it. The fix packet and
    /// `verify.md` do not carry it; the statement does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<super::observation::Observation>,
}

/// How a fused run's floor was split across CI jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shards {
    /// N: how many shard jobs (`claim-check --shard K/N`) ran the floor, each one's entries
    /// re-derived by `fuse` from that shard's own records.
    pub n: usize,
    /// How the criteria were shared out: `criterion` or `runner` (`--shard-by`).
    pub by: String,
}

/// The result document: the run result and its fix packet. Written from borrowed parts, read
/// back owned.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultDocument<'a> {
    pub result: Cow<'a, RunResult>,
    pub fixes: Cow<'a, FixPacket>,
}

impl<'a> ResultDocument<'a> {
    pub fn new(result: &'a RunResult, fixes: &'a FixPacket) -> Self {
        ResultDocument {
            result: Cow::Borrowed(result),
            fixes: Cow::Borrowed(fixes),
        }
    }

    /// The document as printed: every object's keys sorted, two-space indent, no final newline.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        // Through a `Value`, whose maps are sorted: the bytes the result document always had.
        let mut v = serde_json::to_value(self)?;
        if let Some(map) = v.as_object_mut() {
            map.insert("schema".into(), RUN_SCHEMA.into());
        }
        serde_json::to_string_pretty(&v)
    }
}

impl ResultDocument<'static> {
    /// Reads a document a run of this release wrote.
    pub fn parse(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(bytes)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::verdict::FloorResult;

    /// A criterion of a result in each disposition, as the run writes them.
    pub(crate) fn criterion(i: usize, disposition: Disposition) -> CriterionResult {
        let floor_result = match disposition {
            Disposition::Satisfied => FloorResult::Satisfied,
            Disposition::Unsatisfied => FloorResult::Unsatisfied,
            Disposition::Unbound => FloorResult::Unbound,
            Disposition::NotJudged => FloorResult::NotApplicable,
            _ => FloorResult::Undecided,
        };
        let judge = match disposition {
            Disposition::Blocked => JudgeOutcome {
                result: JudgeResult::Block,
                rationale: Some(format!("the judge blocks c{i}")),
            },
            Disposition::Abstained => JudgeOutcome {
                result: JudgeResult::Abstain,
                rationale: Some(format!("the judge abstains on c{i}")),
            },
            Disposition::NotJudged => JudgeOutcome {
                result: JudgeResult::None,
                rationale: Some(
                    "judgment criterion: no judge ran (fast mode); a person decides".into(),
                ),
            },
            _ => JudgeOutcome::default(),
        };
        CriterionResult {
            id: format!("c{i}"),
            ac: format!("Criterion {i} holds."),
            tag: format!("AC-C{i}-0000"),
            required: true,
            lane: if disposition == Disposition::NotJudged {
                Lane::Judge
            } else {
                Lane::Floor
            },
            requirement: format!("stage1.floor.c{i}"),
            line: i + 3,
            file: (i % 2 == 1).then(|| format!(".shipmoor/changes/c{i}.yaml")),
            disposition,
            route_to: RouteTo::Fix,
            floor: CriterionFloor {
                result: floor_result,
                reason: format!("c{i}: fails, at head: 100%"),
                binding: "tag".into(),
                tests: vec![TestObservation {
                    id: format!("tests/test_c{i}.py::test_c{i}"),
                    runner: "pytest".into(),
                    file: Some(format!("tests/test_c{i}.py")),
                    head: super::super::SideOutcome::Fail,
                    base: super::super::SideOutcome::Fail,
                    head_evidence: vec![format!("sha256:{}", "1".repeat(64))],
                    base_evidence: vec![format!("sha256:{}", "2".repeat(64))],
                    base_failure: None,
                }],
                evidence: Some(EvidenceRef {
                    pointer: format!("sha256:{}", "1".repeat(64)),
                    detail: "failed at head".into(),
                }),
                evidence_all: vec![format!("sha256:{}", "1".repeat(64))],
                base_summary: "fail".into(),
                head_summary: "fail".into(),
                reproduce: Some("python3 -m pytest".into()),
            },
            judge,
        }
    }

    /// A run result as claim-check builds it.
    /// A result with a criterion in each disposition, in [`Disposition::ALL`]'s order.
    pub(crate) fn every_disposition() -> RunResult {
        run_result(
            Disposition::ALL
                .iter()
                .enumerate()
                .map(|(i, d)| criterion(i, *d))
                .collect(),
        )
    }

    pub(crate) fn run_result(criteria: Vec<CriterionResult>) -> RunResult {
        RunResult {
            schema: RESULT_SCHEMA,
            tool_version: "0.1.0".into(),
            policy: crate::verdict::POLICY,
            mode: Mode::Fast.into(),
            verdict: Verdict::Blocked,
            rule: Rule::FloorDeny.into(),
            rule_reason: "a required criterion fails the deterministic floor".into(),
            exit_code: 1,
            repository: "https://github.com/acme/shop".into(),
            base: CommitId::parse("d8f94489d716fc95c2df61bda5b3eef0449c9499")
                .unwrap()
                .into(),
            head: CommitId::parse("fbac99915b71a5f8645bf21e20c54f0cfb18a1cb")
                .unwrap()
                .into(),
            acceptance: AcceptanceInfo {
                path: ".shipmoor/acceptance.yaml".into(),
                state: AcceptanceState::Committed,
                sha256: "b".repeat(64),
                source: "files".into(),
                inherited: vec![InheritedCriterion {
                    id: "old".into(),
                    file: ".shipmoor/acceptance.yaml".into(),
                }],
                inherited_policy: InheritedPolicy::Guard,
                draft: None,
            },
            started_at: "2026-12-01T10:00:00Z".into(),
            completed_at: "2026-12-01T10:00:00Z".into(),
            duration_seconds: 0,
            criteria,
            overlay: vec!["tests/test_c0.py".into()],
            overlay_spliced: vec![],
            harness_changes: vec![],
            runtime: vec![RuntimeRow {
                side: "head".into(),
                runner: "pytest".into(),
                command: "python3 -m pytest".into(),
                tests: 1,
                result: "1 failed".into(),
                seconds: 0.0,
                exit_code: Some(1),
                excerpt: None,
                tool: Some("pytest 8.3.3, Python 3.11.2 at /usr/bin/python3".into()),
            }],
            outputs: Outputs {
                vsa: ".shipmoor/claim-check.vsa.json".into(),
                fixes: ".shipmoor/claim-check.fixes.json".into(),
                report: ".shipmoor/verify.md".into(),
                evidence: ".shipmoor/evidence".into(),
            },
            signing: Signing {
                state: SigningState::Unsigned,
                note: "the attestation is unsigned (--sign none)".into(),
            },
            findings: vec![],
            judge_notes: vec![],
            shards: None,
            base_cache: None,
            sandbox: Some(crate::format::sandbox::SandboxRecord::example()),
            observation: Some(crate::format::observation::Observation::single(None)),
        }
    }

    #[test]
    fn a_result_document_reads_back_to_the_same_bytes() {
        let result = crate::format::result::tests::every_disposition();
        let packet = crate::report::fixes::packet(&result);
        let json = ResultDocument::new(&result, &packet).to_json().unwrap();
        let back = ResultDocument::parse(json.as_bytes()).unwrap();
        assert_eq!(back.to_json().unwrap(), json);
        // The written keys are sorted at every level, as the untyped writer's were.
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string_pretty(&v).unwrap(), json);
        assert!(json.contains(r#""disposition": "not_judged""#), "{json}");
        assert!(json.contains(r#""state": "unsigned""#), "{json}");
        assert!(json.contains(r#""inherited_policy": "guard""#), "{json}");
        assert_eq!(v["schema"], RUN_SCHEMA);
        // The document's field names are a contract with every reader of `--format json`: a
        // rename shows here in review.
        insta::assert_snapshot!("result_document", json);
    }

    /// Every disposition's criterion, written, matches the documented JSON Schema.
    #[test]
    fn the_result_document_matches_its_json_schema() {
        let result = crate::format::result::tests::every_disposition();
        let packet = crate::report::fixes::packet(&result);
        let json = ResultDocument::new(&result, &packet).to_json().unwrap();
        assert!(
            crate::format::matches_schema("claim_check.run.v1", &json),
            "{json}"
        );
        // The schema is strict: a key it does not describe fails it.
        let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
        v["result"]["criteria"][0]["surprise"] = true.into();
        assert!(
            !crate::format::matches_schema("claim_check.run.v1", &v.to_string()),
            "an undescribed key passed the schema"
        );
    }

    #[test]
    fn a_result_of_another_schema_is_refused() {
        let result = run_result(vec![criterion(0, Disposition::Unsatisfied)]);
        let packet = crate::report::fixes::packet(&result);
        let json = ResultDocument::new(&result, &packet).to_json().unwrap();
        let other = json.replace(RESULT_SCHEMA, "claim_check.result.v9");
        let e = ResultDocument::parse(other.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("claim_check.result.v9"), "{e}");
        let renamed = json.replace(r#""disposition":"#, r#""state_of":"#);
        let e = ResultDocument::parse(renamed.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("disposition"), "{e}");
    }
}
