//! The judge (full mode, book: judge.md): a bring-your-own reviewer above the floor that may block a
//! criterion, with a pointer into the head tree the engine checks, or abstain. It never passes
//! anything: no answer turns an open criterion into a satisfied one.
//!
//! In: the criteria the judge looks at (judge-lane ones, and floor-lane ones the floor left
//! `unbound` or `undecided`), the change (diff base..head), the floor's findings, the panel of
//! judges from the acceptance file's `judge:` block. Out: one [`Finding`] per judge per
//! criterion, each request and response kept as evidence, and per criterion the judge result
//! the fusion takes.
//!
//! - [`request`]: what a judge is asked about one criterion (the diff bounded, the files the
//!   criterion most likely concerns first, excluded paths never sent);
//! - [`audit`]: what an answer means once its citations are checked against the head tree
//!   (pure);
//! - the transports (a command on stdin/stdout: [`command`]; an OpenAI-compatible
//!   chat-completions endpoint: [`chat`]) implement [`Ask`];
//! - [`run`]: the stage itself; [`keep_request`] and [`keep_reply`] keep each exchange as
//!   evidence (the records `replay` reads back).
//!
//! ```text
//! pub fn run(input: RunInput<'_>, evidence: &mut EvidenceStore) -> Result<JudgeRun, Error>
//!
//! RunInput { git, repo, base, head, entries: &[FloorEntry],
//!            panel: &[(JudgeSpec, Box<dyn Ask>)] }
//! JudgeRun { findings: Vec<Finding>,       // one per judge per judged criterion
//!            notes: Vec<String> }          // e.g. "judge X: most citations do not resolve ..."
//! JudgeRun::outcomes() -> BTreeMap<criterion id, JudgeOutcome>   // folded from the findings
//! ```
//!
//! Steps of [`run`]: (1) pick the criteria: the claim's judge-lane ones, and its floor-lane
//! ones the floor left `unbound` or `undecided` (never the pass-to-pass guard); (2) read the
//! change once; (3) for each judge of the panel, in order: build its requests, keep each as
//! evidence, ask them all (the transport runs up to its concurrency at once), keep each reply as
//! evidence, and read each one ([`audit::assess`]); then discard its blocks when most of its
//! citations do not resolve. Each criterion's outcome over the panel is derived from the findings
//! when asked ([`JudgeRun::outcomes`]), so the reports and the fusion read one fold.
//! An error is only ever git failing; no answer of a judge is an error of the run.

pub mod audit;
#[cfg(feature = "claim-check")]
pub mod chat;
#[cfg(feature = "claim-check")]
pub mod command;
#[cfg(feature = "claim-check")]
pub mod propose;
pub mod request;

#[cfg(test)]
mod prop_tests;

use std::collections::BTreeMap;

use crate::error::Error;
use crate::evidence::{EvidenceStore, RECORD_SCHEMA};
use crate::floor::{EntryKind, FloorEntry};
use crate::format::evidence::{JudgeRequestRecord, JudgeResponseRecord, Record};
use crate::format::judge::Request;
use crate::format::result::JudgeOutcome;
use crate::git::{CommitId, Git, HeadTree};
use crate::verdict::FloorResult;

// The judges' settings belong to the input model, which reads them from the acceptance file.
pub use crate::acceptance::judges::{
    JudgeSpec, Transport, DEFAULT_CONCURRENCY, DEFAULT_EXCLUDE, DEFAULT_MAX_DIFF_BYTES,
    DEFAULT_TIMEOUT_SECONDS, SINGLE_JUDGE_NAME,
};

/// What a transport got back for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// The judge's output (for a chat endpoint: the message content), not yet read.
    Answer { body: Vec<u8>, usage: Option<Usage> },
    /// No answer: a timeout, a crash, output over the limit, an HTTP failure after the
    /// retries, a command that changed the tree it was shown... The reason is recorded.
    Failed { reason: String },
}

/// A transport: asks one judge about many criteria, up to its concurrency at once, and gives
/// one reply per request in the requests' order.
pub trait Ask: Send + Sync {
    fn identity(&self) -> Identity;
    fn ask_all(&self, requests: &[Request]) -> Vec<Reply>;
}

// The judge's part of the run result and the statement: wire types, defined with the formats.
pub use crate::format::judge::{CheckedCitation, CitationCheck, Finding, Identity, Usage};

/// What the judge stage needs for one run.
pub struct RunInput<'a> {
    pub git: &'a Git,
    /// The repository, as the statement's subject names it.
    pub repo: &'a str,
    pub base: &'a CommitId,
    pub head: &'a CommitId,
    /// The floor's report, in its order.
    pub entries: &'a [FloorEntry],
    /// The panel: each judge with the transport that asks it.
    pub panel: &'a [(JudgeSpec, Box<dyn Ask>)],
}

/// What the judge stage found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct JudgeRun {
    /// One per judge per judged criterion: the panel's order, then the entries'.
    pub findings: Vec<Finding>,
    /// What every report must say about the run as a whole.
    pub notes: Vec<String>,
}

impl JudgeRun {
    /// Each judged criterion's judge result, by criterion id, folded from the findings
    /// ([`audit::outcomes`]); a criterion absent from it was not judged.
    pub fn outcomes(&self) -> BTreeMap<String, JudgeOutcome> {
        audit::outcomes(&self.findings)
    }
}

/// Whether the judge looks at an entry: a claimed judge-lane criterion, or a claimed floor-lane
/// one the floor could not settle by binding or observing a check.
pub fn is_judged(entry: &FloorEntry) -> bool {
    entry.kind == EntryKind::Claimed
        && (entry.criterion.lane == crate::acceptance::Lane::Judge
            || matches!(
                entry.floor.result,
                FloorResult::Unbound | FloorResult::Undecided
            ))
}

/// The judge stage (see the module doc for its steps).
pub fn run(input: RunInput<'_>, evidence: &mut EvidenceStore) -> Result<JudgeRun, Error> {
    let judged: Vec<usize> = (0..input.entries.len())
        .filter(|i| is_judged(&input.entries[*i]))
        .collect();
    let mut out = JudgeRun::default();
    if judged.is_empty() || input.panel.is_empty() {
        return Ok(out);
    }
    let change = request::Change::read(input.git, input.repo, input.base, input.head)?;
    let head_tree = HeadTree::read(input.git, input.head)?;
    let read = |path: &str| head_tree.text(path);
    for (spec, ask) in input.panel {
        let identity = ask.identity();
        let requests: Vec<Request> = judged
            .iter()
            .map(|i| {
                let e = &input.entries[*i];
                request::build(
                    &change,
                    &e.criterion,
                    &e.floor,
                    spec.max_diff_bytes,
                    &spec.exclude,
                )
            })
            .collect();
        let mut request_records = Vec::with_capacity(requests.len());
        for r in &requests {
            request_records.push(keep_request(evidence, &spec.name, &identity, r)?);
        }
        let replies = ask.ask_all(&requests);
        let mut findings = Vec::with_capacity(requests.len());
        for (k, r) in requests.iter().enumerate() {
            let reply = replies.get(k).cloned().unwrap_or(Reply::Failed {
                reason: "the transport gave no reply for this request".to_string(),
            });
            let response_evidence = keep_reply(
                evidence,
                &spec.name,
                &identity,
                r,
                &request_records[k],
                &reply,
            )?;
            let asked = audit::Asked {
                judge: &spec.name,
                identity: &identity,
                request: r,
                request_evidence: &request_records[k],
                response_evidence: Some(&response_evidence),
            };
            findings.push(audit::assess(asked, &reply, &read));
        }
        if let Some(note) = audit::discard_if_mostly_unresolved(&spec.name, &mut findings) {
            out.notes.push(note);
        }
        out.findings.extend(findings);
    }
    Ok(out)
}

/// Keeps one request as evidence: the request document as a blob, and the record naming who was
/// asked about which criterion at which commits. Returns the record's pointer.
pub fn keep_request(
    evidence: &mut EvidenceStore,
    judge: &str,
    identity: &Identity,
    request: &Request,
) -> Result<String, Error> {
    let bytes =
        serde_json::to_vec(request).map_err(|e| Error::crash(format!("the judge request: {e}")))?;
    let blob = evidence.put_blob(bytes);
    let record = Record::JudgeRequest(JudgeRequestRecord {
        schema: RECORD_SCHEMA,
        judge: judge.to_string(),
        identity: identity.clone(),
        criterion: request.criterion.id.clone(),
        base: request.base.to_string(),
        commit: request.head.to_string(),
        request: blob,
    });
    evidence.put_record(&record).map_err(Error::crash)
}

/// Keeps one reply as evidence: the judge's output as a blob (or the reason there was none),
/// and the record answering the request record `request_evidence` points at. Returns the
/// record's pointer.
pub fn keep_reply(
    evidence: &mut EvidenceStore,
    judge: &str,
    identity: &Identity,
    request: &Request,
    request_evidence: &str,
    reply: &Reply,
) -> Result<String, Error> {
    let (body, failure, usage) = match reply {
        Reply::Answer { body, usage } => (Some(evidence.put_blob(body.clone())), None, *usage),
        Reply::Failed { reason } => (None, Some(reason.clone()), None),
    };
    let record = Record::JudgeResponse(JudgeResponseRecord {
        schema: RECORD_SCHEMA,
        judge: judge.to_string(),
        identity: identity.clone(),
        criterion: request.criterion.id.clone(),
        commit: request.head.to_string(),
        request: request_evidence.to_string(),
        body,
        failure,
        usage,
    });
    evidence.put_record(&record).map_err(Error::crash)
}

#[cfg(test)]
mod tests {
    use super::audit::{assess, discard_if_mostly_unresolved, outcomes, Asked};
    use super::*;
    use crate::acceptance::{tag_for, AcceptanceState, Criterion, Lane};
    use crate::floor::CriterionFloor;
    use crate::format::judge::{RequestCriterion, RequestFloor, REQUEST_SCHEMA};
    use crate::verdict::{fuse, FusionInput, JudgeResult, Verdict};

    const BASE: &str = "1111111111111111111111111111111111111111";
    const HEAD: &str = "2222222222222222222222222222222222222222";

    fn read(path: &str) -> Option<String> {
        (path == "src/refund.py").then(|| "def refund(order):\n    return order\n".to_string())
    }

    fn entry(required: bool, lane: Lane, floor: FloorResult) -> FloorEntry {
        FloorEntry {
            kind: EntryKind::Claimed,
            criterion: Criterion {
                id: "c".into(),
                ac: "C holds.".into(),
                required,
                lane,
                check: None,
                tag: tag_for("c"),
                line: 3,
                confidence: None,
                source: None,
            },
            floor: CriterionFloor {
                result: floor,
                reason: String::new(),
                binding: "tag".into(),
                tests: vec![],
                evidence: None,
                evidence_all: vec![],
                base_summary: String::new(),
                head_summary: String::new(),
                reproduce: None,
            },
        }
    }

    /// Every kind of answer a judge can give, and every way of giving none.
    fn replies() -> Vec<Reply> {
        let ptr = r#"{"path": "src/refund.py", "line": 2, "quote": "return order"}"#;
        let ghost = r#"{"path": "src/ghost.py", "line": 1, "quote": "x"}"#;
        let ob = |c: &str| format!(r#"{{"text": "o", "status": "met", "citation": {c}}}"#);
        let bodies = [
            format!(r#"{{"decision": "block", "rationale": "r", "pointer": {ptr}}}"#),
            format!(r#"{{"decision": "block", "pointer": {ghost}}}"#),
            r#"{"decision": "block"}"#.to_string(),
            format!(
                r#"{{"decision": "block", "pointer": {ptr}, "obligations": [{}, {}]}}"#,
                ob(ghost),
                ob(ghost)
            ),
            format!(r#"{{"decision": "abstain", "obligations": [{}]}}"#, ob(ptr)),
            format!(r#"{{"decision": "pass", "pointer": {ptr}}}"#),
            r#"{"decision": "approve"}"#.to_string(),
            format!(
                r#"{{"decision": "block", "head": "{}", "pointer": {ptr}}}"#,
                "9".repeat(40)
            ),
            r#"{"schema": "other", "decision": "block"}"#.to_string(),
            "no json here".to_string(),
            String::new(),
        ];
        let mut out: Vec<Reply> = bodies
            .into_iter()
            .map(|b| Reply::Answer {
                body: b.into_bytes(),
                usage: None,
            })
            .collect();
        for reason in ["timeout after 1 s", "the judge exited with code 3"] {
            out.push(Reply::Failed {
                reason: reason.into(),
            });
        }
        out
    }

    fn finding(reply: &Reply) -> Finding {
        let request = Request {
            schema: REQUEST_SCHEMA.into(),
            criterion: RequestCriterion {
                id: "c".into(),
                ac: "C holds.".into(),
                required: true,
                lane: Lane::Judge,
                tag: tag_for("c"),
            },
            repo: "r".into(),
            base: CommitId::parse(BASE).unwrap().into(),
            head: CommitId::parse(HEAD).unwrap().into(),
            changed_files: vec![],
            diff: String::new(),
            diff_truncated: false,
            floor: RequestFloor {
                result: FloorResult::Unbound,
                reason: String::new(),
            },
        };
        let identity = Identity::Chat {
            url: "u".into(),
            model: "m".into(),
        };
        let asked = Asked {
            judge: "judge",
            identity: &identity,
            request: &request,
            request_evidence: "sha256:r",
            response_evidence: None,
        };
        assess(asked, reply, &read)
    }

    /// The judge's result per criterion for one judge answering each of `entries` with the
    /// reply of the same index, as [`run`] derives it.
    fn judged(entries: &[FloorEntry], answers: &[&Finding]) -> Vec<JudgeResult> {
        let mut findings: Vec<Finding> = answers.iter().map(|f| (*f).clone()).collect();
        discard_if_mostly_unresolved("judge", &mut findings);
        entries
            .iter()
            .zip(&findings)
            .map(|(e, f)| {
                if is_judged(e) {
                    outcomes(std::slice::from_ref(f))[&f.criterion].result
                } else {
                    JudgeResult::None
                }
            })
            .collect()
    }

    /// The property of the book's judge.md ("the judge never passes anything"), over every floor outcome of
    /// every kind of criterion, alone and in pairs, and every judge answer: adding the judge's
    /// answers never yields READY or READY WITH GAPS where the floor alone would not have.
    #[test]
    fn no_judge_answer_ever_opens_a_verdict_the_floor_kept_closed() {
        let answers: Vec<Finding> = replies().iter().map(finding).collect();
        // The answers do cover both results.
        assert!(answers.iter().any(|f| f.result == JudgeResult::Block));
        assert!(answers.iter().any(|f| f.result == JudgeResult::Abstain));
        let mut kinds = Vec::new();
        for required in [true, false] {
            for lane in [Lane::Floor, Lane::Judge] {
                for floor in FloorResult::ALL {
                    kinds.push(entry(required, lane, floor));
                }
            }
        }
        let input = |e: &FloorEntry, judge| FusionInput {
            required: e.criterion.required,
            lane: e.criterion.lane,
            floor: e.floor.result,
            judge,
        };
        let open = |v: Verdict| matches!(v, Verdict::Ready | Verdict::ReadyWithGaps);
        let mut checked = 0usize;
        for state in [AcceptanceState::Committed, AcceptanceState::Draft] {
            let check = |entries: &[FloorEntry], with: &[JudgeResult]| {
                let alone: Vec<FusionInput> = entries
                    .iter()
                    .map(|e| input(e, JudgeResult::None))
                    .collect();
                let both: Vec<FusionInput> = entries
                    .iter()
                    .zip(with)
                    .map(|(e, j)| input(e, *j))
                    .collect();
                let (alone, both) = (fuse(state, &alone).verdict, fuse(state, &both).verdict);
                assert!(
                    !open(both) || alone == both,
                    "{state:?} {both:?} with the judge, {alone:?} without: {entries:?} {with:?}"
                );
            };
            for a in &kinds {
                for fa in &answers {
                    let one = std::slice::from_ref(a);
                    check(one, &judged(one, &[fa]));
                    checked += 1;
                    for b in &kinds {
                        for fb in &answers {
                            let two = [a.clone(), b.clone()];
                            check(&two, &judged(&two, &[fa, fb]));
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(checked, 2 * (20 * 13) * (1 + 20 * 13));
    }
}
