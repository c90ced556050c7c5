//! Evidence records, schema `claim_check.evidence.v1` (book: outputs.md): one observation each, stored
//! as RFC 8785 canonical JSON under its digest and cited by pointer from the dispositions.
//!
//! A record's `kind` says what it observed: a run of a command (`tag_scan`, `setup`, `listing`,
//! `test`, `command`), all in the one [`RunRecord`] shape, or a `pattern` search at head
//! ([`PatternRecord`]), or what a judge was asked (`judge_request`, [`JudgeRequestRecord`]) and
//! what it answered (`judge_response`, [`JudgeResponseRecord`]). Fields a run record has no value for are written as `null`, never left
//! out: the records' bytes, and so their digests, depend on it.

use serde::{Deserialize, Deserializer, Serialize};

use super::Constant;

use super::floor::{Outcome, Side};
use super::judge::{Identity, Usage};

pub const RECORD_SCHEMA: &str = "claim_check.evidence.v1";

fn record_schema<'de, D: Deserializer<'de>>(d: D) -> Result<&'static str, D::Error> {
    super::constant(d, RECORD_SCHEMA)
}

/// An evidence record, by its `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// The search of the head tree for the criteria's tags.
    TagScan(RunRecord),
    /// A runner's setup command at one side.
    Setup(RunRecord),
    /// A runner listing its tests at one side.
    Listing(RunRecord),
    /// One run of one bound test at one side.
    Test(RunRecord),
    /// One run of a `check.command` at one side.
    Command(RunRecord),
    /// A `check.pattern` search of the changed files at head.
    Pattern(PatternRecord),
    /// One request to one judge about one criterion (full mode).
    JudgeRequest(JudgeRequestRecord),
    /// What that judge gave back for it.
    JudgeResponse(JudgeResponseRecord),
}

impl Record {
    /// The record's `kind`, as written.
    pub fn kind(&self) -> &'static str {
        match self {
            Record::TagScan(_) => "tag_scan",
            Record::Setup(_) => "setup",
            Record::Listing(_) => "listing",
            Record::Test(_) => "test",
            Record::Command(_) => "command",
            Record::Pattern(_) => "pattern",
            Record::JudgeRequest(_) => "judge_request",
            Record::JudgeResponse(_) => "judge_response",
        }
    }

    /// The run a record observed, for every kind but `pattern`.
    pub fn run(&self) -> Option<&RunRecord> {
        match self {
            Record::TagScan(r)
            | Record::Setup(r)
            | Record::Listing(r)
            | Record::Test(r)
            | Record::Command(r) => Some(r),
            Record::Pattern(_) | Record::JudgeRequest(_) | Record::JudgeResponse(_) => None,
        }
    }

    /// The pointers of the blobs (logs, results files) the record cites.
    pub fn blobs(&self) -> Vec<&str> {
        match self {
            Record::JudgeRequest(r) => return vec![r.request.as_str()],
            Record::JudgeResponse(r) => return r.body.iter().map(String::as_str).collect(),
            _ => {}
        }
        self.run()
            .map(|r| {
                [&r.stdout, &r.stderr, &r.results]
                    .into_iter()
                    .filter_map(|b| b.as_deref())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// One run of a command: what ran, where, and what came of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    #[serde(deserialize_with = "record_schema")]
    pub schema: Constant,
    pub side: Option<Side>,
    pub commit: String,
    /// The head files laid over base for this run, when it ran at base with an overlay.
    pub overlay: Option<OverlayRef>,
    pub runner: Option<String>,
    pub root: Option<String>,
    pub command: Vec<String>,
    pub test_id: Option<String>,
    pub run: u32,
    pub outcome: Option<Outcome>,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub results: Option<String>,
    pub note: Option<String>,
}

/// What was laid over base: head's versions of these paths (book: floor/base-overlay.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OverlayRef {
    pub from: String,
    pub paths: Vec<String>,
    pub deleted: Vec<String>,
    /// Source files whose test items (only) were spliced from head into base's version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spliced: Vec<String>,
}

/// A `check.pattern` search: which changed files it considered at head and what matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatternRecord {
    #[serde(deserialize_with = "record_schema")]
    pub schema: Constant,
    pub commit: String,
    pub criterion: String,
    pub paths: Vec<String>,
    pub regex: String,
    pub considered: Vec<String>,
    pub matches: Vec<PatternMatch>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatternMatch {
    pub path: String,
    /// 1-based.
    pub line: usize,
    /// The line, trimmed, at most 200 characters.
    pub text: String,
}

/// A judge's request: who was asked, about which criterion, at which commits; the request
/// document itself (`claim_check.judge.request.v1`, diff included) is the blob `request`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeRequestRecord {
    #[serde(deserialize_with = "record_schema")]
    pub schema: Constant,
    /// The judge's name (its lens).
    pub judge: String,
    pub identity: Identity,
    pub criterion: String,
    pub base: String,
    /// The commit whose tree the answer's citations are checked against.
    pub commit: String,
    /// Pointer of the request's JSON blob.
    pub request: String,
}

/// A judge's reply to one request: its output as a blob (`body`, what the audit reads), or why
/// there was none (`failure`: a timeout, a crash, output over the limit, a changed tree...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeResponseRecord {
    #[serde(deserialize_with = "record_schema")]
    pub schema: Constant,
    pub judge: String,
    pub identity: Identity,
    pub criterion: String,
    pub commit: String,
    /// Pointer of the [`JudgeRequestRecord`] this answers.
    pub request: String,
    pub body: Option<String>,
    pub failure: Option<String>,
    pub usage: Option<Usage>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::canonical_json;

    fn test_record() -> Record {
        Record::Test(RunRecord {
            schema: RECORD_SCHEMA,
            side: Some(Side::Base),
            commit: "d8f94489d716fc95c2df61bda5b3eef0449c9499".into(),
            overlay: Some(OverlayRef {
                from: "fbac99915b71a5f8645bf21e20c54f0cfb18a1cb".into(),
                paths: vec!["tests/test_r.py".into()],
                deleted: vec![],
                spliced: vec![],
            }),
            runner: Some("pytest".into()),
            root: Some(".".into()),
            command: vec!["python3".into(), "-m".into(), "pytest".into()],
            test_id: Some("tests/test_r.py::test_refunded".into()),
            run: 1,
            outcome: Some(Outcome::Fail),
            exit_code: Some(1),
            duration_ms: 0,
            stdout: Some(format!("sha256:{}", "a".repeat(64))),
            stderr: Some(format!("sha256:{}", "b".repeat(64))),
            results: None,
            note: None,
        })
    }

    #[test]
    fn a_record_reads_back_to_the_same_canonical_bytes() {
        let pattern = Record::Pattern(PatternRecord {
            schema: RECORD_SCHEMA,
            commit: "fbac99915b71a5f8645bf21e20c54f0cfb18a1cb".into(),
            criterion: "fixed".into(),
            paths: vec!["src/**".into()],
            regex: "fixed".into(),
            considered: vec!["src/a.rs".into()],
            matches: vec![PatternMatch {
                path: "src/a.rs".into(),
                line: 3,
                text: "// fixed".into(),
            }],
        });
        let identity = Identity::Command {
            argv: vec!["python3".into(), "tools/judge.py".into()],
            sha256: "c".repeat(64),
        };
        let request = Record::JudgeRequest(JudgeRequestRecord {
            schema: RECORD_SCHEMA,
            judge: "security".into(),
            identity: identity.clone(),
            criterion: "audit-log".into(),
            base: "d8f94489d716fc95c2df61bda5b3eef0449c9499".into(),
            commit: "fbac99915b71a5f8645bf21e20c54f0cfb18a1cb".into(),
            request: format!("sha256:{}", "d".repeat(64)),
        });
        let response = Record::JudgeResponse(JudgeResponseRecord {
            schema: RECORD_SCHEMA,
            judge: "security".into(),
            identity,
            criterion: "audit-log".into(),
            commit: "fbac99915b71a5f8645bf21e20c54f0cfb18a1cb".into(),
            request: format!("sha256:{}", "e".repeat(64)),
            body: Some(format!("sha256:{}", "f".repeat(64))),
            failure: None,
            usage: Some(Usage {
                prompt_tokens: 10,
                completion_tokens: 3,
            }),
        });
        assert_eq!(request.kind(), "judge_request");
        assert_eq!(response.kind(), "judge_response");
        assert_eq!(request.blobs().len() + response.blobs().len(), 2);
        for r in [test_record(), pattern, request, response] {
            let bytes = canonical_json(&r).unwrap();
            let back: Record = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(back, r);
            assert_eq!(canonical_json(&back).unwrap(), bytes);
        }
    }

    /// The exact bytes the untyped writer produced, `null`s included: the digests of existing
    /// evidence depend on them.
    #[test]
    fn a_run_record_is_written_as_before() {
        let bytes = String::from_utf8(canonical_json(&test_record()).unwrap()).unwrap();
        let want = format!(
            concat!(
                r#"{{"command":["python3","-m","pytest"],"commit":"d8f94489d716fc95c2df61bda5b3eef0449c9499","#,
                r#""duration_ms":0,"exit_code":1,"kind":"test","note":null,"outcome":"fail","#,
                r#""overlay":{{"deleted":[],"from":"fbac99915b71a5f8645bf21e20c54f0cfb18a1cb","paths":["tests/test_r.py"]}},"#,
                r#""results":null,"root":".","run":1,"runner":"pytest","schema":"claim_check.evidence.v1","#,
                r#""side":"base","stderr":"sha256:{b}","stdout":"sha256:{a}","test_id":"tests/test_r.py::test_refunded"}}"#
            ),
            a = "a".repeat(64),
            b = "b".repeat(64)
        );
        assert_eq!(bytes, want);
    }

    #[test]
    fn records_of_another_schema_or_kind_are_refused() {
        let bytes = canonical_json(&test_record()).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let other = text.replace("claim_check.evidence.v1", "claim_check.evidence.v9");
        let e = serde_json::from_str::<Record>(&other).unwrap_err();
        assert!(e.to_string().contains("claim_check.evidence.v9"), "{e}");
        let other = text.replace(r#""kind":"test""#, r#""kind":"tset""#);
        assert!(serde_json::from_str::<Record>(&other).is_err());
    }

    #[test]
    fn the_committed_format_1_records_still_read() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/replay/format-1/evidence/sha256"
        );
        let mut records = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            if bytes.first() != Some(&b'{') {
                continue;
            }
            let r: Record = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(canonical_json(&r).unwrap(), bytes);
            records += 1;
        }
        assert_eq!(records, 3);
    }
}
