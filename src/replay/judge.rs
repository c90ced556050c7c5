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
                "; {} judge findings agree with their records (citations not re-audited: no repository with head {})",
                ext.findings.len(),
                short(&ext.head)
            ))
        }
    };
    Ok(format!(
        "; {} judge findings agree with their records, {audited} citations re-audited at head {}",
        ext.findings.len(),
        short(&ext.head)
    ))
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
/// body, or the object between its first `{` and its last `}` (a code fence, leading prose).
fn read_reply(r: &JudgeResponseRecord) -> Option<Response> {
    let StoredReply::Body(body) = &r.reply else {
        return None;
    };
    if let Ok(a) = serde_json::from_str::<Response>(body.trim()) {
        return Some(a);
    }
    let start = body.find('{')?;
    let end = body.rfind('}')?;
    (start < end)
        .then(|| serde_json::from_str::<Response>(&body[start..=end]).ok())
        .flatten()
}
