//! Step 4's part for full mode: each judge finding the statement records against its request
//! and response records, every judge block of a disposition against its finding, and, with the
//! repository at hand, the citation audit re-run at the recorded head.
//!
//! What a replay can trust is the records (hashed and cited like every other, with their
//! blobs: the request document sent, the judge's reply body) and the head tree; the finding is
//! only the run's reading of them. So a block stands when the reply body its response record
//! keeps, read as the engine reads it, says `block` with the same pointer, and when that
//! pointer resolves at head today as it did when the run checked it.

use std::collections::{BTreeMap, BTreeSet};

use super::{HeadTree, Invalid};
use crate::format::evidence::Record;
use crate::format::judge::{Citation, Request, Response, REQUEST_SCHEMA};
use crate::format::statement::Extension;
use crate::judge::audit::{
    check_citation, discard_if_mostly_unresolved, names_commit, read_response,
};
use crate::judge::{CitationCheck, Finding};
use crate::verdict::JudgeResult;

/// Checks the findings; returns what it established, to follow step 4's detail (nothing when
/// the statement records no judge, so a fast run's replay reads as it always did). `blobs`
/// holds the bytes of the judge records' blobs, already re-hashed, by pointer.
pub(super) fn check_findings(
    ext: &Extension,
    records: &BTreeMap<String, Record>,
    blobs: &BTreeMap<String, Vec<u8>>,
    tree: Option<&dyn HeadTree>,
) -> Result<String, Invalid> {
    let judge_blocks = ext
        .dispositions
        .iter()
        .any(|d| d.judge.result == JudgeResult::Block);
    if ext.findings.is_empty() && !judge_blocks {
        return Ok(String::new());
    }
    let criteria: BTreeSet<&str> = ext.dispositions.iter().map(|d| d.id.as_str()).collect();
    for f in &ext.findings {
        if !criteria.contains(f.criterion.as_str()) {
            return Err(Invalid::from(format!(
                "judge {}'s finding is on criterion {}, which the statement has no disposition for",
                f.judge, f.criterion
            )));
        }
        check_finding(ext, f, records, blobs)?;
    }
    for d in &ext.dispositions {
        let confirmed = ext
            .findings
            .iter()
            .any(|f| f.criterion == d.id && f.result == JudgeResult::Block);
        let recorded = d.judge.result == JudgeResult::Block;
        if recorded && !confirmed {
            return Err(Invalid::from(format!(
                "criterion {}: the disposition reads a judge block, but no judge finding with its evidence records one",
                d.id
            )));
        }
        if confirmed && !recorded {
            return Err(Invalid::from(format!(
                "criterion {}: a judge's confirmed block is recorded, but the disposition's judge result reads `{}`",
                d.id,
                d.judge.result.as_str()
            )));
        }
    }
    check_discarded(&ext.findings)?;
    let audited = match tree {
        Some(t) if t.has_commit(ext.head.as_str()) => audit(ext, t)?,
        _ => {
            return Ok(format!(
                "; every judge finding ({}) agrees with its records (citations not re-audited: no repository with head {})",
                ext.findings.len(),
                short(ext.head.as_str())
            ))
        }
    };
    Ok(format!(
        "; every judge finding ({}) agrees with its records, {} re-audited at head {}",
        ext.findings.len(),
        counted(audited, "citation"),
        short(ext.head.as_str())
    ))
}

fn counted(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

fn check_word(c: CitationCheck) -> &'static str {
    match c {
        CitationCheck::Resolved => "resolved",
        CitationCheck::NoSuchFile => "no_such_file",
        CitationCheck::QuoteNotFound => "quote_not_found",
    }
}

fn at(c: &Citation) -> String {
    format!("{}:{}", c.path, c.line)
}

/// Whether a judge's answer names the statement's commits, where it names any: as the engine
/// reads them, a judge may echo the short ids.
fn answers_commits(a: &Response, ext: &Extension) -> bool {
    let names =
        |said: &Option<String>, want: &str| said.as_deref().is_none_or(|s| names_commit(s, want));
    names(&a.base, ext.base.as_str()) && names(&a.head, ext.head.as_str())
}

/// One finding against its records.
fn check_finding(
    ext: &Extension,
    f: &Finding,
    records: &BTreeMap<String, Record>,
    blobs: &BTreeMap<String, Vec<u8>>,
) -> Result<(), Invalid> {
    let who = format!("criterion {}: judge {}", f.criterion, f.judge);
    if f.result == JudgeResult::None {
        return Err(Invalid::from(format!(
            "{who}'s finding reads `none`, which no judge gives"
        )));
    }
    let cited = |p: &str| {
        records.get(p).ok_or_else(|| {
            format!("{who}'s evidence {p} is not among the evidence the attestation cites")
        })
    };
    // Every blob a cited judge record names was read (and re-hashed) with the records.
    let blob = |p: &str| {
        blobs
            .get(p)
            .ok_or_else(|| format!("{who}: the blob {p} of its evidence was not read"))
    };
    let request = match cited(&f.request_evidence)? {
        Record::JudgeRequest(r)
            if r.judge == f.judge
                && r.identity == f.identity
                && r.criterion == f.criterion
                && r.base == ext.base.as_str()
                && r.commit == ext.head.as_str() =>
        {
            r
        }
        _ => {
            return Err(Invalid::from(format!(
                "{who}: evidence {} is not that judge's request on that criterion at base..head",
                f.request_evidence
            )))
        }
    };
    // The document the judge was sent, which the record only points at.
    let sent: Request = serde_json::from_slice(blob(&request.request)?).map_err(|e| {
        format!(
            "{who}: the request {} of evidence {} is not a judge request: {e}",
            request.request, f.request_evidence
        )
    })?;
    if sent.schema != REQUEST_SCHEMA
        || sent.criterion.id != f.criterion
        || sent.base != ext.base
        || sent.head != ext.head
    {
        return Err(Invalid::from(format!(
            "{who}: the request {} of evidence {} is not a request on that criterion at base..head",
            request.request, f.request_evidence
        )));
    }
    let response = match &f.response_evidence {
        Some(p) => match cited(p)? {
            Record::JudgeResponse(r)
                if r.judge == f.judge
                    && r.identity == f.identity
                    && r.criterion == f.criterion
                    && r.commit == ext.head.as_str() =>
            {
                if r.request != f.request_evidence {
                    return Err(Invalid::from(format!(
                        "{who}: evidence {p} answers the request {}, not the finding's {}",
                        r.request, f.request_evidence
                    )));
                }
                Some(r)
            }
            _ => {
                return Err(Invalid::from(format!(
                    "{who}: evidence {p} is not that judge's response on that criterion"
                )))
            }
        },
        None => None,
    };
    // The reply body read as the engine read it: no answer where it found none.
    let answer = match response.and_then(|r| r.body.as_deref()) {
        Some(b) => read_response(&String::from_utf8_lossy(blob(b)?)).ok(),
        None => None,
    };
    if let Some(a) = &answer {
        // Every citation the finding records is one the judge made.
        let made: Vec<&Citation> = a
            .pointer
            .iter()
            .chain(a.obligations.iter().filter_map(|o| o.citation.as_ref()))
            .collect();
        if let Some(c) = f.citations.iter().find(|c| !made.contains(&&c.citation)) {
            return Err(Invalid::from(format!(
                "{who}: the citation {} is not in the judge's response",
                at(&c.citation)
            )));
        }
    }
    if f.result != JudgeResult::Block {
        return Ok(());
    }
    let Some(a) = answer else {
        return Err(Invalid::from(format!(
            "{who}: a block with no response record that reads as the judge's answer"
        )));
    };
    let commits_agree = answers_commits(&a, ext);
    if !a.decision.trim().eq_ignore_ascii_case("block") || !commits_agree {
        return Err(Invalid::from(format!(
            "{who}: a block, but the response record answers `{}`{}",
            a.decision,
            if commits_agree {
                ""
            } else {
                " for other commits"
            }
        )));
    }
    let Some(pointer) = &f.pointer else {
        return Err(Invalid::from(format!("{who}: a block with no pointer")));
    };
    if a.pointer.as_ref() != Some(pointer) {
        return Err(Invalid::from(format!(
            "{who}: the block points at {}, but the judge's response points at {}",
            at(pointer),
            a.pointer
                .as_ref()
                .map(at)
                .unwrap_or_else(|| "nothing".into())
        )));
    }
    let resolved = f
        .citations
        .iter()
        .any(|c| &c.citation == pointer && c.check == CitationCheck::Resolved);
    if !resolved {
        return Err(Invalid::from(format!(
            "{who}: the block's pointer {} is not recorded as resolving",
            at(pointer)
        )));
    }
    Ok(())
}

/// A judge most of whose citations in the run do not resolve has all its blocks discarded
/// (book: judge.md): a statement that keeps one is not what the run could have concluded. The rule is
/// the engine's own, run over each judge's findings.
fn check_discarded(findings: &[Finding]) -> Result<(), Invalid> {
    let judges: BTreeSet<&str> = findings.iter().map(|f| f.judge.as_str()).collect();
    for judge in judges {
        let mut of_judge: Vec<Finding> = findings
            .iter()
            .filter(|f| f.judge == judge)
            .cloned()
            .collect();
        let blocks = of_judge.iter().any(|f| f.result == JudgeResult::Block);
        if blocks && discard_if_mostly_unresolved(judge, &mut of_judge).is_some() {
            let all = of_judge.iter().flat_map(|f| &f.citations);
            let total = all.clone().count();
            let unresolved = all.filter(|c| c.check != CitationCheck::Resolved).count();
            return Err(Invalid::from(format!(
                "judge {judge}: {unresolved} of its {total} citations do not resolve, yet a block of it is kept"
            )));
        }
    }
    Ok(())
}

/// The citation audit again, at the recorded head: every citation's check must be what the run
/// recorded. Returns how many were checked.
fn audit(ext: &Extension, tree: &dyn HeadTree) -> Result<usize, Invalid> {
    let read = |path: &str| tree.read(ext.head.as_str(), path);
    let mut n = 0;
    for f in &ext.findings {
        for c in &f.citations {
            let now = check_citation(&c.citation, &read);
            if now != c.check {
                return Err(Invalid::from(format!(
                    "criterion {}: judge {}'s citation {} is recorded `{}`, but at head {} the audit gives `{}`",
                    f.criterion,
                    f.judge,
                    at(&c.citation),
                    check_word(c.check),
                    short(ext.head.as_str()),
                    check_word(now)
                )));
            }
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use crate::acceptance::Lane;
    use crate::evidence::EvidenceStore;
    use crate::format::evidence::{JudgeRequestRecord, Record, RECORD_SCHEMA};
    use crate::format::judge::{Citation, Request, RequestCriterion, RequestFloor, REQUEST_SCHEMA};
    use crate::format::result::tests::{criterion, run_result};
    use crate::format::result::{JudgeOutcome, RunResult};
    use crate::format::statement::Statement;
    use crate::format::Disposition;
    use crate::git::CommitId;
    use crate::judge::audit::{assess, Asked};
    use crate::judge::{keep_reply, keep_request, CitationCheck, Finding, Identity, Reply};
    use crate::replay::{replay_audited, Expectations, HeadTree, Report, SignatureCheck, Status};
    use crate::verdict::{FloorResult, JudgeResult};

    const REFUND: &str =
        "def refund(order):\n    if order.paid:\n        return order\n    audit.write(order)\n";

    /// The head tree as a map of files, at one commit.
    struct Tree {
        head: String,
        files: BTreeMap<&'static str, &'static str>,
    }

    impl HeadTree for Tree {
        fn has_commit(&self, commit: &str) -> bool {
            commit == self.head
        }
        fn read(&self, commit: &str, path: &str) -> Option<String> {
            (commit == self.head)
                .then(|| self.files.get(path).map(|t| t.to_string()))
                .flatten()
        }
    }

    fn pointer() -> Citation {
        Citation {
            path: "src/refund.py".into(),
            line: 3,
            quote: "return order".into(),
        }
    }

    fn identity() -> Identity {
        Identity::Command {
            argv: vec!["./judge.sh".into()],
            sha256: "e".repeat(64),
        }
    }

    /// A run whose one criterion, a judgment criterion, judge `intent` was asked about; no
    /// finding yet.
    fn judgment_run() -> RunResult {
        let mut c = criterion(0, Disposition::Blocked);
        c.lane = Lane::Judge;
        c.requirement = "stage3.byo_judge".into();
        c.floor.result = FloorResult::NotApplicable;
        c.floor.binding = "judge_lane".into();
        c.floor.tests.clear();
        c.floor.evidence = None;
        c.floor.evidence_all.clear();
        run_result(vec![c])
    }

    /// What the judge stage sends judge `intent` about the run's criterion.
    fn request(result: &RunResult) -> Request {
        Request {
            schema: REQUEST_SCHEMA.into(),
            criterion: RequestCriterion {
                id: "c0".into(),
                ac: "Criterion 0 holds.".into(),
                required: true,
                lane: Lane::Judge,
                tag: "AC-C0-0000".into(),
            },
            repo: result.repository.clone(),
            base: result.base.clone(),
            head: result.head.clone(),
            changed_files: vec!["src/refund.py".into()],
            diff: "+        return order\n".into(),
            diff_truncated: false,
            floor: RequestFloor {
                result: FloorResult::NotApplicable,
                reason: "judgment criterion".into(),
            },
        }
    }

    /// A judge's answer in `body`, as a chat model gives it: prose and a code fence around
    /// the JSON.
    fn answer(body: serde_json::Value) -> Reply {
        Reply::Answer {
            body: format!("Here is my answer.\n```json\n{body}\n```\n").into_bytes(),
            usage: None,
        }
    }

    /// A block with a pointer that resolves, citing `more` for obligations of its own.
    fn block_citing(more: &[Citation]) -> Reply {
        let mut obligations =
            vec![serde_json::json!({"text": "an entry is written", "status": "divergent"})];
        obligations.extend(
            more.iter()
                .map(|c| serde_json::json!({"text": "more", "status": "met", "citation": c})),
        );
        answer(serde_json::json!({
            "schema": "claim_check.judge.response.v1",
            "decision": "block",
            "rationale": "refund() returns before the audit write",
            "pointer": pointer(),
            "obligations": obligations,
        }))
    }

    /// One exchange of judge `intent`, kept in `ev` as the judge stage keeps it and read by the
    /// engine's audit over the head tree [`REFUND`].
    fn exchange(ev: &mut EvidenceStore, request: &Request, reply: &Reply) -> Finding {
        let request_evidence = keep_request(ev, "intent", &identity(), request).unwrap();
        let response_evidence =
            keep_reply(ev, "intent", &identity(), request, &request_evidence, reply).unwrap();
        let read = |path: &str| (path == "src/refund.py").then(|| REFUND.to_string());
        let asked = Asked {
            judge: "intent",
            identity: &identity(),
            request,
            request_evidence: &request_evidence,
            response_evidence: Some(&response_evidence),
        };
        assess(asked, reply, &read)
    }

    /// [`judgment_run`] with judge `intent`'s answer `reply` as its finding (the run's own
    /// discarding of a sloppy judge's blocks not applied), its records committed to `dir`.
    fn judged_run(dir: &Path, reply: &Reply) -> RunResult {
        let mut result = judgment_run();
        let mut ev = EvidenceStore::new();
        result.findings = vec![exchange(&mut ev, &request(&result), reply)];
        ev.commit(&crate::nofollow::OutputPath::dir(dir, None))
            .unwrap();
        result
    }

    /// A run in which judge `intent` blocked the criterion with a pointer that resolves, its
    /// obligations also citing `more`.
    fn blocked_run_citing(dir: &Path, more: &[Citation]) -> RunResult {
        let result = judged_run(dir, &block_citing(more));
        assert_eq!(result.findings[0].result, JudgeResult::Block);
        result
    }

    fn blocked_run(dir: &Path) -> RunResult {
        blocked_run_citing(dir, &[])
    }

    /// The finding edited into the block a resolving [`pointer`] makes, as a statement that
    /// lies about what its judge answered would record it.
    fn forged_block(result: &mut RunResult) {
        let f = &mut result.findings[0];
        f.result = JudgeResult::Block;
        f.pointer = Some(pointer());
        f.citations = vec![crate::judge::CheckedCitation {
            citation: pointer(),
            check: CitationCheck::Resolved,
        }];
        f.downgraded = None;
    }

    fn statement(result: &RunResult) -> Statement {
        let records: Vec<String> = result
            .findings
            .iter()
            .flat_map(|f| {
                [
                    Some(f.request_evidence.clone()),
                    f.response_evidence.clone(),
                ]
            })
            .flatten()
            .collect();
        crate::attest::statement_of(result, &records, &[])
    }

    fn tree(result: &RunResult, refund: &'static str) -> Tree {
        Tree {
            head: result.head.to_string(),
            files: BTreeMap::from([("src/refund.py", refund)]),
        }
    }

    fn replayed(st: &Statement, dir: &Path, tree: Option<&Tree>) -> Report {
        let sig = SignatureCheck {
            allow_unsigned: true,
            ..Default::default()
        };
        replay_audited(
            &st.to_bytes().unwrap(),
            "t",
            &sig,
            &Expectations::default(),
            dir,
            None,
            tree.map(|t| t as &dyn HeadTree),
        )
    }

    fn failed(r: &Report) -> Option<(u8, String)> {
        let s = r.steps.iter().find(|s| s.status == Status::Failed)?;
        Some((s.number, s.detail.clone()))
    }

    #[test]
    fn a_judge_block_with_its_records_replays_with_its_citations_reaudited() {
        let dir = tempfile::tempdir().unwrap();
        let result = blocked_run(dir.path());
        let st = statement(&result);
        let r = replayed(&st, dir.path(), Some(&tree(&result, REFUND)));
        assert!(r.valid, "{:?}", r.steps);
        assert!(
            r.steps[3]
                .detail
                .ends_with("; every judge finding (1) agrees with its records, 1 citation re-audited at head fbac99915b71"),
            "{}",
            r.steps[3].detail
        );
        // The two records and their two blobs (the request sent, the reply body).
        assert!(
            r.steps[3]
                .detail
                .starts_with("2 records and 2 blobs re-hashed"),
            "{}",
            r.steps[3].detail
        );
        assert_eq!(r.verdict.as_deref(), Some("BLOCKED"));
        // Without the repository the records are still checked; the detail says what was not.
        let r = replayed(&st, dir.path(), None);
        assert!(r.valid, "{:?}", r.steps);
        assert!(
            r.steps[3].detail.contains("citations not re-audited"),
            "{}",
            r.steps[3].detail
        );
    }

    #[test]
    fn evidence_catches_a_pointer_edited_to_a_fabricated_one() {
        let dir = tempfile::tempdir().unwrap();
        let result = blocked_run(dir.path());
        let mut st = statement(&result);
        let fabricated = Citation {
            path: "src/audit.py".into(),
            line: 12,
            quote: "AuditWriter.write(order)".into(),
        };
        let f = &mut st.predicate.extension.findings[0];
        f.pointer = Some(fabricated.clone());
        f.citations[0].citation = fabricated;
        let r = replayed(&st, dir.path(), Some(&tree(&result, REFUND)));
        assert_eq!(
            failed(&r),
            Some((4, "criterion c0: judge intent: the citation src/audit.py:12 is not in the judge's response".into()))
        );
        assert!(r.steps[4..].iter().all(|s| s.status == Status::NotRun));
    }

    #[test]
    fn evidence_catches_a_block_whose_pointer_no_longer_resolves_at_head() {
        let dir = tempfile::tempdir().unwrap();
        let result = blocked_run(dir.path());
        let st = statement(&result);
        let moved = "def refund(order):\n    audit.write(order)\n    x = 1\n    y = 2\n    z = 3\n    w = 4\n    v = 5\n    return order\n";
        let r = replayed(&st, dir.path(), Some(&tree(&result, moved)));
        assert_eq!(
            failed(&r),
            Some((4, "criterion c0: judge intent's citation src/refund.py:3 is recorded `resolved`, but at head fbac99915b71 the audit gives `quote_not_found`".into()))
        );
        let gone = Tree {
            files: BTreeMap::new(),
            ..tree(&result, REFUND)
        };
        let (step, detail) = failed(&replayed(&st, dir.path(), Some(&gone))).unwrap();
        assert_eq!(step, 4);
        assert!(
            detail.ends_with("the audit gives `no_such_file`"),
            "{detail}"
        );
    }

    #[test]
    fn evidence_catches_a_judge_block_added_to_a_statement_without_evidence() {
        // A fast run's statement, its criterion edited to read a judge block.
        let dir = tempfile::tempdir().unwrap();
        let mut result = blocked_run(dir.path());
        result.findings.clear();
        let st = statement(&result);
        assert_eq!(
            st.extension().dispositions[0].judge.result,
            JudgeResult::Block
        );
        assert_eq!(
            failed(&replayed(&st, dir.path(), None)),
            Some((4, "criterion c0: the disposition reads a judge block, but no judge finding with its evidence records one".into()))
        );
        // A finding that cites records the statement does not carry.
        let result = blocked_run(dir.path());
        let mut st = statement(&result);
        st.predicate.extension.evidence.clear();
        let (step, detail) = failed(&replayed(&st, dir.path(), None)).unwrap();
        assert_eq!(step, 4);
        assert!(
            detail.contains("is not among the evidence the attestation cites"),
            "{detail}"
        );
        // A finding whose response record is not a response (here: its own request record).
        let mut st = statement(&result);
        let f = &mut st.predicate.extension.findings[0];
        f.response_evidence = Some(f.request_evidence.clone());
        let (step, detail) = failed(&replayed(&st, dir.path(), None)).unwrap();
        assert_eq!(step, 4);
        assert!(
            detail.ends_with("is not that judge's response on that criterion"),
            "{detail}"
        );
        // A finding whose response record is that judge's on that criterion, but answers
        // another request.
        let mut twice = blocked_run(dir.path());
        let mut ev = EvidenceStore::new();
        let again = Request {
            diff: "+        return order  # asked again\n".into(),
            ..request(&twice)
        };
        let other = exchange(&mut ev, &again, &block_citing(&[]));
        ev.commit(&crate::nofollow::OutputPath::dir(dir.path(), None))
            .unwrap();
        twice.findings[0].response_evidence = other.response_evidence.clone();
        let st = statement(&twice);
        let (step, detail) = failed(&replayed(&st, dir.path(), None)).unwrap();
        assert_eq!(step, 4);
        assert_eq!(
            detail,
            format!(
                "criterion c0: judge intent: evidence {} answers the request {}, not the finding's {}",
                other.response_evidence.unwrap(),
                other.request_evidence,
                twice.findings[0].request_evidence
            )
        );
    }

    #[test]
    fn evidence_catches_a_request_record_whose_document_is_not_that_request() {
        let dir = tempfile::tempdir().unwrap();
        let result = blocked_run(dir.path());
        let identity = identity();
        // A request record that names this judge, criterion, base and head, pointing at `blob`.
        let with_document = |blob: Vec<u8>| {
            let mut ev = EvidenceStore::new();
            let request = ev.put_blob(blob);
            let record = Record::JudgeRequest(JudgeRequestRecord {
                schema: RECORD_SCHEMA,
                judge: "intent".into(),
                identity: identity.clone(),
                criterion: "c0".into(),
                base: result.base.to_string(),
                commit: result.head.to_string(),
                request: request.clone(),
            });
            let pointer = ev.put_record(&record).unwrap();
            ev.commit(&crate::nofollow::OutputPath::dir(dir.path(), None))
                .unwrap();
            let mut edited = result.clone();
            edited.findings[0].request_evidence = pointer.clone();
            let r = replayed(&statement(&edited), dir.path(), None);
            (failed(&r), request, pointer)
        };
        let elsewhere = Request {
            head: CommitId::parse(&"9".repeat(40)).unwrap().into(),
            ..request(&result)
        };
        let (failure, blob, record) = with_document(serde_json::to_vec(&elsewhere).unwrap());
        assert_eq!(
            failure,
            Some((4, format!("criterion c0: judge intent: the request {blob} of evidence {record} is not a request on that criterion at base..head")))
        );
        let (failure, blob, record) = with_document(b"{\"criterion\": \"c0\"}".to_vec());
        let (step, detail) = failure.unwrap();
        assert_eq!(step, 4);
        assert!(
            detail.starts_with(&format!(
                "criterion c0: judge intent: the request {blob} of evidence {record} is not a judge request: "
            )),
            "{detail}"
        );
        // The record itself must be at the statement's commits.
        let mut ev = EvidenceStore::new();
        let at_other_head = keep_request(&mut ev, "intent", &identity, &elsewhere).unwrap();
        ev.commit(&crate::nofollow::OutputPath::dir(dir.path(), None))
            .unwrap();
        let mut edited = result.clone();
        edited.findings[0].request_evidence = at_other_head.clone();
        assert_eq!(
            failed(&replayed(&statement(&edited), dir.path(), None)),
            Some((4, format!("criterion c0: judge intent: evidence {at_other_head} is not that judge's request on that criterion at base..head")))
        );
        // A finding that names another judge than the one its records say was asked.
        let mut st = statement(&result);
        st.predicate.extension.findings[0].identity = Identity::Chat {
            url: "https://api.example.com/v1".into(),
            model: "a-stronger-model".into(),
        };
        assert_eq!(
            failed(&replayed(&st, dir.path(), None)),
            Some((4, format!("criterion c0: judge intent: evidence {} is not that judge's request on that criterion at base..head", result.findings[0].request_evidence)))
        );
    }

    #[test]
    fn evidence_catches_a_block_hidden_from_its_disposition_or_kept_from_a_discarded_judge() {
        let dir = tempfile::tempdir().unwrap();
        let result = blocked_run(dir.path());
        // The block recorded, the disposition softened to an abstention (and re-fused).
        let mut softened = result.clone();
        softened.criteria[0].judge = JudgeOutcome {
            result: JudgeResult::Abstain,
            rationale: Some("abstained".into()),
        };
        softened.criteria[0].disposition = Disposition::Abstained;
        softened.verdict = crate::verdict::Verdict::Inconclusive;
        let (step, detail) = failed(&replayed(&statement(&softened), dir.path(), None)).unwrap();
        assert_eq!(step, 4);
        assert!(
            detail.ends_with("the disposition's judge result reads `abstain`"),
            "{detail}"
        );
        // A judge most of whose citations fail keeps no block.
        let nowhere = |line| Citation {
            path: "src/nowhere.py".into(),
            line,
            quote: "x".into(),
        };
        let sloppy = blocked_run_citing(dir.path(), &[nowhere(1), nowhere(2)]);
        assert_eq!(
            failed(&replayed(&statement(&sloppy), dir.path(), None)),
            Some((
                4,
                "judge intent: 2 of its 3 citations do not resolve, yet a block of it is kept"
                    .into()
            ))
        );
        // One fabricated citation of two is not most: the block stands.
        let one = blocked_run_citing(dir.path(), &[nowhere(1)]);
        let r = replayed(&statement(&one), dir.path(), Some(&tree(&one, REFUND)));
        assert!(r.valid, "{:?}", r.steps);
    }

    /// The reply body is read as the engine reads it (prose and fences around the JSON are
    /// fine, a short commit id too); a block stands on nothing else.
    #[test]
    fn a_block_stands_only_on_a_reply_the_engine_reads_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let result = judgment_run();
        let short = answer(serde_json::json!({
            "decision": "block",
            "head": &result.head.as_str()[..7],
            "pointer": pointer(),
        }));
        let echoed = judged_run(dir.path(), &short);
        assert_eq!(echoed.findings[0].result, JudgeResult::Block);
        let r = replayed(
            &statement(&echoed),
            dir.path(),
            Some(&tree(&echoed, REFUND)),
        );
        assert!(r.valid, "{:?}", r.steps);

        let no_answer = [
            Reply::Failed {
                reason: "timeout after 120 s".into(),
            },
            Reply::Answer {
                body: b"I would block this: refund() returns early.".to_vec(),
                usage: None,
            },
            answer(serde_json::json!({
                "schema": "claim_check.judge.response.v0",
                "decision": "block",
                "pointer": pointer(),
            })),
        ];
        for reply in &no_answer {
            let mut forged = judged_run(dir.path(), reply);
            assert_eq!(forged.findings[0].result, JudgeResult::Abstain);
            forged_block(&mut forged);
            assert_eq!(
                failed(&replayed(&statement(&forged), dir.path(), None)),
                Some((4, "criterion c0: judge intent: a block with no response record that reads as the judge's answer".into())),
                "{reply:?}"
            );
        }
        // An abstention the run recorded as a block.
        let abstained = answer(serde_json::json!({"decision": "abstain", "pointer": pointer()}));
        let mut forged = judged_run(dir.path(), &abstained);
        forged_block(&mut forged);
        assert_eq!(
            failed(&replayed(&statement(&forged), dir.path(), None)),
            Some((
                4,
                "criterion c0: judge intent: a block, but the response record answers `abstain`"
                    .into()
            ))
        );
    }
}
