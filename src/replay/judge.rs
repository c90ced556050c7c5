//! Step 4's part for full mode: each judge finding the statement records against its request
//! and response records, every judge block of a disposition against its finding, and, with the
//! repository at hand, the citation audit re-run at the recorded head.
//!
//! What a replay can trust is the records (hashed and cited like every other) and the head
//! tree; the finding is only the run's reading of them. So a block stands when its response
//! record says `block` with the same pointer, and when that pointer resolves at head today as
//! it did when the run checked it.

use std::collections::{BTreeMap, BTreeSet};

use super::HeadTree;
use crate::format::evidence::{JudgeResponseRecord, Record, StoredReply};
use crate::format::judge::{Citation, Response};
use crate::format::statement::Extension;
use crate::judge::audit::check_citation;
use crate::judge::{CitationCheck, Finding};
use crate::verdict::JudgeResult;

/// Checks the findings; returns what it established, to follow step 4's detail (nothing when
/// the statement records no judge, so a fast run's replay reads as it always did).
pub(super) fn check_findings(
    ext: &Extension,
    records: &BTreeMap<String, Record>,
    tree: Option<&dyn HeadTree>,
) -> Result<String, String> {
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
            return Err(format!(
                "judge {}'s finding is on criterion {}, which the statement has no disposition for",
                f.judge, f.criterion
            ));
        }
        check_finding(ext, f, records)?;
    }
    for d in &ext.dispositions {
        let confirmed = ext
            .findings
            .iter()
            .any(|f| f.criterion == d.id && f.result == JudgeResult::Block);
        let recorded = d.judge.result == JudgeResult::Block;
        if recorded && !confirmed {
            return Err(format!(
                "criterion {}: the disposition reads a judge block, but no judge finding with its evidence records one",
                d.id
            ));
        }
        if confirmed && !recorded {
            return Err(format!(
                "criterion {}: a judge's confirmed block is recorded, but the disposition's judge result reads `{}`",
                d.id,
                d.judge.result.as_str()
            ));
        }
    }
    check_discarded(&ext.findings)?;
    let audited = match tree {
        Some(t) if t.has_commit(&ext.head) => audit(ext, t)?,
        _ => {
            return Ok(format!(
                "; every judge finding ({}) agrees with its records (citations not re-audited: no repository with head {})",
                ext.findings.len(),
                short(&ext.head)
            ))
        }
    };
    Ok(format!(
        "; every judge finding ({}) agrees with its records, {} re-audited at head {}",
        ext.findings.len(),
        counted(audited, "citation"),
        short(&ext.head)
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

/// One finding against its records.
fn check_finding(
    ext: &Extension,
    f: &Finding,
    records: &BTreeMap<String, Record>,
) -> Result<(), String> {
    let who = format!("criterion {}: judge {}", f.criterion, f.judge);
    if f.result == JudgeResult::None {
        return Err(format!(
            "{who}'s finding reads `none`, which no judge gives"
        ));
    }
    let cited = |p: &str| {
        records.get(p).ok_or_else(|| {
            format!("{who}'s evidence {p} is not among the attestation's inputAttestations")
        })
    };
    match cited(&f.request_evidence)? {
        Record::JudgeRequest(r)
            if r.judge == f.judge
                && r.criterion == f.criterion
                && r.request.criterion.id == f.criterion
                && r.request.base == ext.base
                && r.request.head == ext.head => {}
        _ => {
            return Err(format!(
                "{who}: evidence {} is not that judge's request on that criterion at base..head",
                f.request_evidence
            ))
        }
    }
    let response = match &f.response_evidence {
        Some(p) => match cited(p)? {
            Record::JudgeResponse(r) if r.judge == f.judge && r.criterion == f.criterion => Some(r),
            _ => {
                return Err(format!(
                    "{who}: evidence {p} is not that judge's response on that criterion"
                ))
            }
        },
        None => None,
    };
    let answer = response.and_then(read_reply);
    if let Some(a) = &answer {
        // Every citation the finding records is one the judge made.
        let made: Vec<&Citation> = a
            .pointer
            .iter()
            .chain(a.obligations.iter().filter_map(|o| o.citation.as_ref()))
            .collect();
        if let Some(c) = f.citations.iter().find(|c| !made.contains(&&c.citation)) {
            return Err(format!(
                "{who}: the citation {} is not in the judge's response",
                at(&c.citation)
            ));
        }
    }
    if f.result != JudgeResult::Block {
        return Ok(());
    }
    let Some(a) = answer else {
        return Err(format!(
            "{who}: a block with no response record that reads as the judge's answer"
        ));
    };
    let commits_agree = a.base.as_deref().is_none_or(|b| b == ext.base)
        && a.head.as_deref().is_none_or(|h| h == ext.head);
    if !a.decision.trim().eq_ignore_ascii_case("block") || !commits_agree {
        return Err(format!(
            "{who}: a block, but the response record answers `{}`{}",
            a.decision,
            if commits_agree {
                ""
            } else {
                " for other commits"
            }
        ));
    }
    let Some(pointer) = &f.pointer else {
        return Err(format!("{who}: a block with no pointer"));
    };
    if a.pointer.as_ref() != Some(pointer) {
        return Err(format!(
            "{who}: the block points at {}, but the judge's response points at {}",
            at(pointer),
            a.pointer
                .as_ref()
                .map(at)
                .unwrap_or_else(|| "nothing".into())
        ));
    }
    let resolved = f
        .citations
        .iter()
        .any(|c| &c.citation == pointer && c.check == CitationCheck::Resolved);
    if !resolved {
        return Err(format!(
            "{who}: the block's pointer {} is not recorded as resolving",
            at(pointer)
        ));
    }
    Ok(())
}

/// A judge most of whose citations in the run do not resolve has all its blocks discarded
/// (DESIGN 6): a statement that keeps one is not what the run could have concluded.
fn check_discarded(findings: &[Finding]) -> Result<(), String> {
    let mut by_judge: BTreeMap<&str, (usize, usize, bool)> = BTreeMap::new();
    for f in findings {
        let e = by_judge.entry(&f.judge).or_default();
        e.0 += f.citations.len();
        e.1 += f
            .citations
            .iter()
            .filter(|c| c.check != CitationCheck::Resolved)
            .count();
        e.2 |= f.result == JudgeResult::Block;
    }
    for (judge, (total, unresolved, blocks)) in by_judge {
        if blocks && unresolved * 2 > total {
            return Err(format!(
                "judge {judge}: {unresolved} of its {total} citations do not resolve, yet a block of it is kept"
            ));
        }
    }
    Ok(())
}

/// The citation audit again, at the recorded head: every citation's check must be what the run
/// recorded. Returns how many were checked.
fn audit(ext: &Extension, tree: &dyn HeadTree) -> Result<usize, String> {
    let read = |path: &str| tree.read(&ext.head, path);
    let mut n = 0;
    for f in &ext.findings {
        for c in &f.citations {
            let now = check_citation(&c.citation, &read);
            if now != c.check {
                return Err(format!(
                    "criterion {}: judge {}'s citation {} is recorded `{}`, but at head {} the audit gives `{}`",
                    f.criterion,
                    f.judge,
                    at(&c.citation),
                    check_word(c.check),
                    short(&ext.head),
                    check_word(now)
                ));
            }
            n += 1;
        }
    }
    Ok(n)
}

/// The judge's answer in a stored reply, read as leniently as a judge's output is: the whole
/// body, or else the first JSON object in it that reads as a response, whatever prose or code
/// fence stands before or after it.
fn read_reply(r: &JudgeResponseRecord) -> Option<Response> {
    let StoredReply::Body(body) = &r.reply else {
        return None;
    };
    if let Ok(a) = serde_json::from_str::<Response>(body.trim()) {
        return Some(a);
    }
    body.match_indices('{').find_map(|(i, _)| {
        serde_json::Deserializer::from_str(&body[i..])
            .into_iter::<Response>()
            .next()
            .and_then(Result::ok)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use crate::acceptance::Lane;
    use crate::evidence::{canonical_json, sha256_hex};
    use crate::format::evidence::{
        JudgeRequestRecord, JudgeResponseRecord, Record, StoredReply, RECORD_SCHEMA,
    };
    use crate::format::judge::{Citation, Request, RequestCriterion, RequestFloor, REQUEST_SCHEMA};
    use crate::format::result::tests::{criterion, run_result};
    use crate::format::result::{JudgeOutcome, RunResult};
    use crate::format::statement::Statement;
    use crate::format::Disposition;
    use crate::judge::{CheckedCitation, CitationCheck, Finding, Identity};
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

    fn store(dir: &Path, r: &Record) -> String {
        let bytes = canonical_json(r).unwrap();
        let hex = sha256_hex(&bytes);
        std::fs::create_dir_all(dir.join("sha256")).unwrap();
        std::fs::write(dir.join("sha256").join(&hex), bytes).unwrap();
        format!("sha256:{hex}")
    }

    fn pointer() -> Citation {
        Citation {
            path: "src/refund.py".into(),
            line: 3,
            quote: "return order".into(),
        }
    }

    /// A run whose one criterion, a judgment criterion, judge `intent` blocked with a pointer
    /// that resolves, its request and response stored in `dir`.
    fn blocked_run(dir: &Path) -> RunResult {
        blocked_run_citing(dir, &[])
    }

    /// [`blocked_run`], the response also citing `more` for obligations of its own.
    fn blocked_run_citing(dir: &Path, more: &[Citation]) -> RunResult {
        let mut c = criterion(0, Disposition::Blocked);
        c.lane = Lane::Judge;
        c.requirement = "stage3.byo_judge".into();
        c.floor.result = FloorResult::NotApplicable;
        c.floor.binding = "judge_lane".into();
        c.floor.tests.clear();
        c.floor.evidence = None;
        c.floor.evidence_all.clear();
        let mut result = run_result(vec![c]);
        let request = Record::JudgeRequest(JudgeRequestRecord {
            schema: RECORD_SCHEMA,
            judge: "intent".into(),
            criterion: "c0".into(),
            request: Request {
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
            },
        });
        let mut obligations = vec![
            serde_json::json!({"text": "an entry is written", "status": "divergent", "citation": pointer()}),
        ];
        obligations.extend(
            more.iter()
                .map(|c| serde_json::json!({"text": "more", "status": "met", "citation": c})),
        );
        // As a chat model answers: prose and a code fence around the JSON.
        let body = format!(
            "Here is my answer.\n```json\n{}\n```\n",
            serde_json::json!({
                "schema": "claim_check.judge.response.v1",
                "decision": "block",
                "rationale": "refund() returns before the audit write",
                "pointer": pointer(),
                "obligations": obligations,
            })
        );
        let response = Record::JudgeResponse(JudgeResponseRecord {
            schema: RECORD_SCHEMA,
            judge: "intent".into(),
            criterion: "c0".into(),
            reply: StoredReply::Body(body),
            usage: None,
        });
        let request_evidence = store(dir, &request);
        let response_evidence = store(dir, &response);
        result.findings = vec![Finding {
            criterion: "c0".into(),
            judge: "intent".into(),
            identity: Identity::Command {
                argv: vec!["./judge.sh".into()],
                sha256: "e".repeat(64),
            },
            result: JudgeResult::Block,
            rationale: "refund() returns before the audit write".into(),
            pointer: Some(pointer()),
            citations: std::iter::once((pointer(), CitationCheck::Resolved))
                .chain(more.iter().map(|c| (c.clone(), CitationCheck::NoSuchFile)))
                .map(|(citation, check)| CheckedCitation { citation, check })
                .collect(),
            downgraded: None,
            request_evidence,
            response_evidence: Some(response_evidence),
            usage: None,
        }];
        result
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
        crate::attest::statement(result, &records, &[], &"4".repeat(64))
    }

    fn tree(result: &RunResult, refund: &'static str) -> Tree {
        Tree {
            head: result.head.clone(),
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
        st.predicate.input_attestations.clear();
        let (step, detail) = failed(&replayed(&st, dir.path(), None)).unwrap();
        assert_eq!(step, 4);
        assert!(
            detail.contains("is not among the attestation's inputAttestations"),
            "{detail}"
        );
        // A finding whose response record is another criterion's.
        let mut st = statement(&result);
        let f = &mut st.predicate.extension.findings[0];
        f.response_evidence = Some(f.request_evidence.clone());
        let (step, detail) = failed(&replayed(&st, dir.path(), None)).unwrap();
        assert_eq!(step, 4);
        assert!(
            detail.ends_with("is not that judge's response on that criterion"),
            "{detail}"
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

    #[test]
    fn a_reply_reads_with_prose_and_fences_around_it() {
        let reply = |body: &str| JudgeResponseRecord {
            schema: RECORD_SCHEMA,
            judge: "j".into(),
            criterion: "c".into(),
            reply: StoredReply::Body(body.into()),
            usage: None,
        };
        let plain = r#"{"decision": "abstain"}"#;
        assert_eq!(
            super::read_reply(&reply(plain)).unwrap().decision,
            "abstain"
        );
        let fenced = format!("Sure.\n```json\n{plain}\n```");
        assert_eq!(
            super::read_reply(&reply(&fenced)).unwrap().decision,
            "abstain"
        );
        assert!(super::read_reply(&reply("no JSON here")).is_none());
        let failed = JudgeResponseRecord {
            reply: StoredReply::Failed("timeout after 120 s".into()),
            ..reply(plain)
        };
        assert!(super::read_reply(&failed).is_none());
    }
}
