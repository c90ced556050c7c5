//! The citation audit (book: judge.md), pure: a citation resolves when its path is a file at head
//! inside the repository and its quote, whitespace normalised, occurs within 3 lines of the
//! cited line. The head tree is read through a function, so the same audit runs over a
//! worktree, over `git show`, and in `replay` over a repository at hand.
//!
//! Reading an answer ([`assess`]), in order; the first step that fails decides:
//! 1. no answer (a timeout, a crash, output over the limit, a changed tree...) → abstain with
//!    the transport's reason;
//! 2. the JSON: the whole output, else the first balanced object in it (code fences and prose
//!    around it are a model's habit) → none: abstain, "malformed output";
//! 3. the shape: a `claim_check.judge.response.v1` document → else abstain, "schema mismatch";
//! 4. the context: `base`/`head`, when given, name the request's commits → else discarded,
//!    "invalid context" (seed 002 drops wrong-worktree reviewers);
//! 5. every citation (the pointer, each obligation's) is checked against the head tree;
//! 6. the decision: `block` stands only with a resolving pointer ("unresolved pointer"
//!    otherwise); `abstain` is itself; `pass` and anything else abstain with the reason.
//!
//! Then, over one judge's findings of a run ([`discard_if_mostly_unresolved`]): when most of its
//! citations do not resolve, its blocks are discarded. And per criterion over the panel
//! ([`outcomes`]): a confirmed block from any judge counts.

use std::collections::BTreeMap;

use super::{CheckedCitation, CitationCheck, Finding, Identity, Reply};
use crate::format::judge::{Citation, Request, Response, RESPONSE_SCHEMA};
use crate::format::result::JudgeOutcome;
use crate::verdict::JudgeResult;

/// Who was asked and where the exchange is kept: what a [`Finding`] carries besides the answer.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    pub judge: &'a str,
    pub identity: &'a Identity,
    pub request: &'a Request,
    pub request_evidence: &'a str,
    pub response_evidence: Option<&'a str>,
}

/// Reads one reply to one request into a [`Finding`] (steps 1-6 of the module doc). `read`
/// gives a file's text at head, as for [`check_citation`].
pub fn assess(asked: Asked<'_>, reply: &Reply, read: &dyn Fn(&str) -> Option<String>) -> Finding {
    let mut finding = Finding {
        criterion: asked.request.criterion.id.clone(),
        judge: asked.judge.to_string(),
        identity: asked.identity.clone(),
        result: JudgeResult::Abstain,
        rationale: String::new(),
        pointer: None,
        citations: Vec::new(),
        downgraded: None,
        request_evidence: asked.request_evidence.to_string(),
        response_evidence: asked.response_evidence.map(str::to_string),
        usage: None,
    };
    let abstain = |mut f: Finding, reason: String| {
        if f.rationale.trim().is_empty() {
            f.rationale = reason.clone();
        }
        f.result = JudgeResult::Abstain;
        f.pointer = None;
        f.downgraded = Some(reason);
        f
    };
    let body = match reply {
        Reply::Failed { reason } => return abstain(finding, reason.clone()),
        Reply::Answer { body, usage } => {
            finding.usage = *usage;
            String::from_utf8_lossy(body).into_owned()
        }
    };
    let response = match read_response(&body) {
        Ok(r) => r,
        Err(reason) => return abstain(finding, reason.to_string()),
    };
    for (side, said, want) in [
        ("base", &response.base, &asked.request.base),
        ("head", &response.head, &asked.request.head),
    ] {
        if let Some(said) = said.as_deref().filter(|s| !names_commit(s, want.as_str())) {
            return abstain(
                finding,
                format!(
                    "invalid context: the answer is for {side} `{}`, the request's {side} is `{want}`; it is discarded",
                    short(said)
                ),
            );
        }
    }
    // Only now: the words of an answer for other commits are not this run's rationale.
    finding.rationale = bounded(response.rationale.as_deref().unwrap_or_default());
    let check = |c: &Citation| CheckedCitation {
        citation: c.clone(),
        check: check_citation(c, read),
    };
    let pointer = response.pointer.as_ref().map(check);
    finding.citations = pointer
        .iter()
        .cloned()
        .chain(
            response
                .obligations
                .iter()
                .filter_map(|o| o.citation.as_ref())
                .map(check),
        )
        .collect();
    let decision = response.decision.trim().to_ascii_lowercase();
    match decision.as_str() {
        "block" => match pointer {
            Some(p) if p.check == CitationCheck::Resolved => {
                finding.result = JudgeResult::Block;
                finding.pointer = Some(p.citation);
                finding
            }
            Some(p) => {
                let why = match p.check {
                    CitationCheck::NoSuchFile => "no such file at head",
                    _ => "the quote is not there",
                };
                let at = format!("{}:{}", short(&p.citation.path), p.citation.line);
                abstain(finding, format!("unresolved pointer: {at} ({why})"))
            }
            None => abstain(
                finding,
                "unresolved pointer: a block without a pointer".to_string(),
            ),
        },
        "abstain" => {
            if finding.rationale.trim().is_empty() {
                finding.rationale = "the judge abstained without a rationale".to_string();
            }
            finding
        }
        "pass" => abstain(
            finding,
            "\"pass\" is not an answer a judge may give: only the floor passes a criterion"
                .to_string(),
        ),
        other => abstain(
            finding,
            format!(
                "unknown decision `{}`: a judge answers `block` or `abstain`",
                short(other)
            ),
        ),
    }
}

/// Why a judge's output is no answer: the reason its finding abstains with.
#[derive(Debug, thiserror::Error)]
pub enum ResponseError {
    #[error("malformed output: the judge printed nothing")]
    Empty,
    #[error("malformed output: no JSON object in the judge's output")]
    NoJson,
    #[error("schema mismatch: {0}")]
    Schema(serde_json::Error),
    /// The answer names another schema (the one it names).
    #[error("schema mismatch: `{0}` where `{RESPONSE_SCHEMA}` is read")]
    OtherSchema(String),
}

/// A judge's output read as its answer (steps 2 and 3 of the module doc), or why it is none.
/// `replay` reads a recorded reply body with this same function.
pub fn read_response(body: &str) -> Result<Response, ResponseError> {
    let Some(value) = extract_json(body) else {
        return Err(if body.trim().is_empty() {
            ResponseError::Empty
        } else {
            ResponseError::NoJson
        });
    };
    let response: Response = serde_json::from_value(value).map_err(ResponseError::Schema)?;
    if let Some(schema) = response.schema.as_deref().filter(|s| *s != RESPONSE_SCHEMA) {
        return Err(ResponseError::OtherSchema(schema.to_string()));
    }
    Ok(response)
}

/// Whether `said` names the commit `want`: the full id, or a prefix of it of 7 digits or more
/// (a judge may echo the short id).
pub fn names_commit(said: &str, want: &str) -> bool {
    let said = said.trim().to_ascii_lowercase();
    said == want || (said.len() >= 7 && want.starts_with(&said))
}

/// The most of a judge's rationale that is kept: every report shows it, and a judge may print
/// up to its output limit.
pub const MAX_RATIONALE_CHARS: usize = 2000;

fn bounded(rationale: &str) -> String {
    crate::text::cut(rationale.trim(), MAX_RATIONALE_CHARS)
}

/// At most 80 characters of a judge's text, for a reason.
fn short(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(79).collect::<String>())
    }
}

/// How many opening braces [`extract_json`] tries before it gives up: a bound on the work
/// hostile output can cause.
const MAX_CANDIDATES: usize = 64;

/// The JSON object in a judge's output: the whole output when it is one, else the first
/// balanced `{...}` that parses as an object (inside a code fence, after prose, ...).
pub fn extract_json(text: &str) -> Option<serde_json::Value> {
    let is_object = |v: &serde_json::Value| v.is_object();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(text.trim()) {
        return is_object(&v).then_some(v);
    }
    let bytes = text.as_bytes();
    let starts = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'{')
        .map(|(i, _)| i)
        .take(MAX_CANDIDATES);
    for start in starts {
        let Some(end) = balanced_end(&bytes[start..]) else {
            continue;
        };
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes[start..start + end]) {
            if is_object(&v) {
                return Some(v);
            }
        }
    }
    None
}

/// The length of the balanced `{...}` at the start of `bytes`, strings (and their escapes)
/// skipped, or `None` when it never closes.
fn balanced_end(bytes: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Seed 002 drops hallucinated reviewer output: when most of one judge's citations in a run
/// (more than half, over all its findings) do not resolve, none of its blocks is trusted. Its
/// blocks become abstentions with the reason, and the note for the reports is returned.
pub fn discard_if_mostly_unresolved(judge: &str, findings: &mut [Finding]) -> Option<String> {
    let all = findings.iter().flat_map(|f| &f.citations);
    let total = all.clone().count();
    let unresolved = all.filter(|c| c.check != CitationCheck::Resolved).count();
    if total == 0 || unresolved * 2 <= total {
        return None;
    }
    let reason = format!(
        "most of this judge's citations do not resolve ({unresolved} of {total}); its blocks are discarded"
    );
    for f in findings
        .iter_mut()
        .filter(|f| f.result == JudgeResult::Block)
    {
        f.result = JudgeResult::Abstain;
        f.pointer = None;
        f.downgraded = Some(reason.clone());
    }
    Some(format!(
        "judge {judge}: most citations do not resolve ({unresolved} of {total}); its blocks are discarded"
    ))
}

/// The judge's part of each criterion's disposition, by criterion id, folded from the
/// findings: a confirmed block from any judge of the panel is the criterion's block (with
/// every blocking judge's rationale); otherwise the criterion is abstained, with every judge's
/// reason. Nothing a judge answers makes it anything else.
pub fn outcomes(findings: &[Finding]) -> BTreeMap<String, JudgeOutcome> {
    let panel = findings
        .iter()
        .map(|f| f.judge.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len()
        > 1;
    let mut by_criterion: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for f in findings {
        by_criterion.entry(&f.criterion).or_default().push(f);
    }
    by_criterion
        .into_iter()
        .map(|(id, fs)| {
            let blocks: Vec<&&Finding> = fs
                .iter()
                .filter(|f| f.result == JudgeResult::Block)
                .collect();
            let (result, shown): (JudgeResult, Vec<&&Finding>) = if blocks.is_empty() {
                (JudgeResult::Abstain, fs.iter().collect())
            } else {
                (JudgeResult::Block, blocks)
            };
            let rationale = shown
                .iter()
                .map(|f| {
                    let why = reason(f);
                    if panel {
                        format!("judge {}: {why}", f.judge)
                    } else {
                        why
                    }
                })
                .collect::<Vec<_>>()
                .join("; ");
            (
                id.to_string(),
                JudgeOutcome {
                    result,
                    rationale: Some(rationale),
                },
            )
        })
        .collect()
}

/// One finding's reason as a person reads it: the judge's rationale, after why the engine
/// downgraded or discarded its answer when it did.
pub fn reason(f: &Finding) -> String {
    let rationale = f.rationale.trim();
    match (&f.downgraded, rationale.is_empty()) {
        (Some(d), true) => d.clone(),
        (Some(d), false) => format!("{d}: {rationale}"),
        (None, true) => "the judge gave no rationale".to_string(),
        (None, false) => rationale.to_string(),
    }
}

/// How far from the cited line the quote may be.
pub const LINE_SLACK: u64 = 3;

/// Checks one citation. `read` gives a file's text at head by its repository-relative path,
/// or `None` when there is no such file.
pub fn check_citation(c: &Citation, read: &dyn Fn(&str) -> Option<String>) -> CitationCheck {
    let Some(path) = inside_repository(&c.path) else {
        return CitationCheck::NoSuchFile;
    };
    let Some(text) = read(&path) else {
        return CitationCheck::NoSuchFile;
    };
    let quote = normalise(&c.quote);
    if quote.is_empty() || c.line == 0 {
        return CitationCheck::QuoteNotFound;
    }
    let lines: Vec<&str> = text.lines().collect();
    let first = c.line.saturating_sub(LINE_SLACK).max(1);
    let last = c.line.saturating_add(LINE_SLACK);
    // The quote may span lines: search the window's lines joined, each normalised.
    let window: Vec<String> = (first..=last)
        .filter_map(|n| lines.get((n - 1) as usize))
        .map(|l| normalise(l))
        .collect();
    if window.join(" ").contains(&quote) {
        CitationCheck::Resolved
    } else {
        CitationCheck::QuoteNotFound
    }
}

/// The path as a clean repository-relative path, or `None` when it is absolute or climbs out.
pub fn inside_repository(path: &str) -> Option<String> {
    let p = path.trim().trim_start_matches("./");
    if p.is_empty() || p.starts_with('/') || p.contains('\\') || p.contains('\0') {
        return None;
    }
    let mut parts = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            _ => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Runs of whitespace become one space; leading and trailing whitespace goes.
pub fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acceptance::Lane;
    use crate::format::judge::{RequestCriterion, RequestFloor, REQUEST_SCHEMA};
    use crate::judge::Usage;
    use crate::verdict::FloorResult;

    const BASE: &str = "1111111111111111111111111111111111111111";
    const HEAD: &str = "2222222222222222222222222222222222222222";

    fn request() -> Request {
        Request {
            schema: REQUEST_SCHEMA.into(),
            criterion: RequestCriterion {
                id: "audit-log".into(),
                ac: "An audit log entry is written for every refund.".into(),
                required: true,
                lane: Lane::Judge,
                tag: "AC-AUDIT-LOG-fb7d".into(),
            },
            repo: "https://example.com/shop.git".into(),
            base: crate::git::CommitId::parse(BASE).unwrap().into(),
            head: crate::git::CommitId::parse(HEAD).unwrap().into(),
            changed_files: vec!["src/refund.py".into()],
            diff: String::new(),
            diff_truncated: false,
            floor: RequestFloor {
                result: FloorResult::NotApplicable,
                reason: "judge lane".into(),
            },
        }
    }

    fn identity() -> Identity {
        Identity::Command {
            argv: vec!["judge.sh".into()],
            sha256: "0".repeat(64),
        }
    }

    fn judged_as(judge: &str, body: &str) -> Finding {
        let (req, id) = (request(), identity());
        let asked = Asked {
            judge,
            identity: &id,
            request: &req,
            request_evidence: "sha256:req",
            response_evidence: Some("sha256:resp"),
        };
        let reply = Reply::Answer {
            body: body.as_bytes().to_vec(),
            usage: Some(Usage {
                prompt_tokens: 7,
                completion_tokens: 2,
            }),
        };
        assess(asked, &reply, &read)
    }

    fn judged(body: &str) -> Finding {
        judged_as("judge", body)
    }

    const BLOCK: &str = r#"{"decision": "block", "rationale": "refund() returns before the audit write",
        "pointer": {"path": "src/refund.py", "line": 3, "quote": "return order"},
        "obligations": [{"text": "an entry is written", "status": "divergent",
                         "citation": {"path": "src/refund.py", "line": 4, "quote": "audit.write(order)"}}]}"#;

    #[test]
    fn a_block_with_a_resolving_pointer_is_confirmed() {
        let f = judged(BLOCK);
        assert_eq!(f.result, JudgeResult::Block);
        assert_eq!(f.pointer.as_ref().map(|p| p.line), Some(3));
        assert_eq!(f.downgraded, None);
        assert_eq!(f.citations.len(), 2);
        assert!(f
            .citations
            .iter()
            .all(|c| c.check == CitationCheck::Resolved));
        assert_eq!(f.rationale, "refund() returns before the audit write");
        assert_eq!(
            (f.criterion.as_str(), f.judge.as_str()),
            ("audit-log", "judge")
        );
        assert_eq!(f.response_evidence.as_deref(), Some("sha256:resp"));
        assert_eq!(f.usage.map(|u| u.prompt_tokens), Some(7));
        // The request's commits echoed, in full or as short ids, are the same context.
        let echoed = BLOCK.replacen(
            '{',
            &format!(r#"{{"schema": "{RESPONSE_SCHEMA}", "base": "{BASE}", "head": "2222222","#),
            1,
        );
        assert_eq!(judged(&echoed).result, JudgeResult::Block);
    }

    #[test]
    fn json_is_found_in_fences_and_prose() {
        let fenced = format!("Here is my review.\n```json\n{BLOCK}\n```\nThanks!");
        assert_eq!(judged(&fenced).result, JudgeResult::Block);
        // A brace in prose before the object, and braces inside strings, are not the object.
        let tricky =
            r#"Note {not json}. {"decision": "abstain", "rationale": "a } and a { in text"}"#;
        let f = judged(tricky);
        assert_eq!(
            (f.result, f.downgraded.as_deref()),
            (JudgeResult::Abstain, None)
        );
        assert_eq!(f.rationale, "a } and a { in text");
        assert_eq!(extract_json("[1, 2]"), None);
        assert_eq!(extract_json("{\"decision\": \"block\""), None);
        // An object that never closes: the first balanced one inside it is what there is.
        assert_eq!(
            extract_json("{\"a\": {\"b\": 1}"),
            Some(serde_json::json!({"b": 1}))
        );
    }

    #[test]
    fn every_other_answer_abstains_with_its_reason() {
        let reason = |body: &str| {
            let f = judged(body);
            assert_eq!(f.result, JudgeResult::Abstain, "{body}");
            assert_eq!(f.pointer, None);
            f.downgraded.unwrap_or_else(|| "(none)".into())
        };
        let fabricated = BLOCK.replace(
            r#""line": 3, "quote": "return order""#,
            r#""line": 3, "quote": "audit.skip()""#,
        );
        assert!(reason(&fabricated)
            .starts_with("unresolved pointer: src/refund.py:3 (the quote is not there)"));
        let elsewhere = BLOCK.replace(
            r#""path": "src/refund.py", "line": 3"#,
            r#""path": "/etc/passwd", "line": 3"#,
        );
        assert!(reason(&elsewhere).contains("no such file at head"));
        assert_eq!(
            reason(r#"{"decision": "block", "rationale": "trust me"}"#),
            "unresolved pointer: a block without a pointer"
        );
        assert!(reason(&BLOCK.replace("\"block\"", "\"pass\""))
            .starts_with("\"pass\" is not an answer"));
        assert!(reason(&BLOCK.replace("\"block\"", "\"approve\""))
            .starts_with("unknown decision `approve`"));
        assert_eq!(
            reason("I think it is fine."),
            "malformed output: no JSON object in the judge's output"
        );
        assert_eq!(
            reason("  \n"),
            "malformed output: the judge printed nothing"
        );
        assert!(reason(r#"{"verdict": "block"}"#)
            .starts_with("schema mismatch: missing field `decision`"));
        assert!(reason(r#"{"decision": 3}"#).starts_with("schema mismatch"));
        let other_schema = r#"{"schema": "claim_check.judge.response.v9", "decision": "block"}"#;
        assert!(reason(other_schema).contains("`claim_check.judge.response.v9`"));
        // An abstention is itself, not a downgrade.
        assert_eq!(
            reason(r#"{"decision": "abstain", "rationale": "cannot tell"}"#),
            "(none)"
        );
        assert_eq!(
            judged(r#"{"decision": "abstain"}"#).rationale,
            "the judge abstained without a rationale"
        );
        let long = format!(
            r#"{{"decision": "abstain", "rationale": "{}"}}"#,
            "why ".repeat(1000)
        );
        assert_eq!(judged(&long).rationale.chars().count(), MAX_RATIONALE_CHARS);
    }

    #[test]
    fn an_answer_for_other_commits_is_discarded() {
        let other = BLOCK.replacen(
            '{',
            r#"{"head": "3333333333333333333333333333333333333333","#,
            1,
        );
        let f = judged(&other);
        assert_eq!(f.result, JudgeResult::Abstain);
        let why = f.downgraded.unwrap();
        assert!(why.starts_with("invalid context: the answer is for head `3333333333333333333333333333333333333333`"), "{why}");
        // The discarded answer's words are not kept as this run's rationale, nor its citations.
        assert_eq!(f.rationale, why);
        assert!(f.citations.is_empty());
        let other_base = BLOCK.replacen('{', r#"{"base": "111111a","#, 1);
        assert!(judged(&other_base)
            .downgraded
            .unwrap()
            .starts_with("invalid context"));
    }

    #[test]
    fn no_answer_is_an_abstention_with_the_transports_reason() {
        let (req, id) = (request(), identity());
        let asked = Asked {
            judge: "judge",
            identity: &id,
            request: &req,
            request_evidence: "sha256:req",
            response_evidence: None,
        };
        let f = assess(
            asked,
            &Reply::Failed {
                reason: "timeout after 5 s".into(),
            },
            &read,
        );
        assert_eq!(f.result, JudgeResult::Abstain);
        assert_eq!(f.downgraded.as_deref(), Some("timeout after 5 s"));
        assert_eq!(f.rationale, "timeout after 5 s");
    }

    #[test]
    fn a_judge_whose_citations_mostly_do_not_resolve_loses_its_blocks() {
        let fabricated = |n: u64| {
            format!(
                r#"{{"text": "o{n}", "status": "met", "citation": {{"path": "src/ghost.py", "line": {n}, "quote": "nothing"}}}}"#
            )
        };
        // One confirmed block (2 resolving citations), two abstentions citing 3 ghosts: 3 of 5.
        let abstain = format!(
            r#"{{"decision": "abstain", "obligations": [{}, {}]}}"#,
            fabricated(1),
            fabricated(2)
        );
        let one_ghost = format!(
            r#"{{"decision": "abstain", "obligations": [{}]}}"#,
            fabricated(3)
        );
        let mut findings = vec![
            judged_as("intent", BLOCK),
            judged_as("intent", &abstain),
            judged_as("intent", &one_ghost),
        ];
        assert_eq!(findings[0].result, JudgeResult::Block);
        let note = discard_if_mostly_unresolved("intent", &mut findings).unwrap();
        assert_eq!(
            note,
            "judge intent: most citations do not resolve (3 of 5); its blocks are discarded"
        );
        assert_eq!(findings[0].result, JudgeResult::Abstain);
        assert_eq!(findings[0].pointer, None);
        assert!(findings[0]
            .downgraded
            .as_deref()
            .unwrap()
            .contains("(3 of 5)"));
        // Half is not most: the block stands.
        let mut findings = vec![judged_as("intent", BLOCK), judged_as("intent", &abstain)];
        assert_eq!(discard_if_mostly_unresolved("intent", &mut findings), None);
        assert_eq!(findings[0].result, JudgeResult::Block);
        // No citations at all: nothing to say.
        let mut findings = vec![judged_as("intent", r#"{"decision": "abstain"}"#)];
        assert_eq!(discard_if_mostly_unresolved("intent", &mut findings), None);
    }

    fn read(path: &str) -> Option<String> {
        (path == "src/refund.py").then(|| {
            "def refund(order):\n    if order.paid:\n        return   order\n    audit.write(order)\n"
                .to_string()
        })
    }

    fn cite(path: &str, line: u64, quote: &str) -> Citation {
        Citation {
            path: path.into(),
            line,
            quote: quote.into(),
        }
    }

    #[test]
    fn a_quote_near_its_line_resolves_with_whitespace_normalised() {
        assert_eq!(
            check_citation(&cite("src/refund.py", 3, "return order"), &read),
            CitationCheck::Resolved
        );
        // Within three lines either way.
        assert_eq!(
            check_citation(&cite("./src/refund.py", 6, "return order"), &read),
            CitationCheck::Resolved
        );
        assert_eq!(
            check_citation(&cite("src/refund.py", 7, "return order"), &read),
            CitationCheck::QuoteNotFound
        );
        assert_eq!(
            check_citation(
                &cite("src/refund.py", 2, "if order.paid: return order"),
                &read
            ),
            CitationCheck::Resolved
        );
    }

    #[test]
    fn paths_outside_the_repository_or_missing_never_resolve() {
        for p in [
            "/etc/passwd",
            "../src/refund.py",
            "src/../../x",
            "src/nope.py",
            "",
        ] {
            assert_eq!(
                check_citation(&cite(p, 1, "def refund"), &read),
                CitationCheck::NoSuchFile,
                "{p}"
            );
        }
        assert_eq!(
            check_citation(&cite("src/refund.py", 1, "   "), &read),
            CitationCheck::QuoteNotFound
        );
        assert_eq!(
            check_citation(&cite("src/refund.py", 0, "def refund"), &read),
            CitationCheck::QuoteNotFound
        );
    }
}
