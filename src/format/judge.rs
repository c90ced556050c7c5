//! The judge's wire formats (book: judge.md): the request a judge reads
//! (`claim_check.judge.request.v1`) and the response it answers with
//! (`claim_check.judge.response.v1`). Fields may be added, never removed.
//!
//! The response is read leniently on purpose: a judge is someone else's program, and anything
//! it gets wrong becomes an abstention with the reason recorded, never an error of the run. So
//! `decision` and `status` stay strings here; [`crate::judge`] decides what they mean.

use crate::verdict::JudgeResult;
use serde::{Deserialize, Serialize};

use super::Recorded;
use crate::acceptance::Lane;
use crate::git::CommitId;
use crate::verdict::FloorResult;

pub const REQUEST_SCHEMA: &str = "claim_check.judge.request.v1";
pub const RESPONSE_SCHEMA: &str = "claim_check.judge.response.v1";

/// What one judge is asked about one criterion.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    pub schema: String,
    pub criterion: RequestCriterion,
    /// The repository, as the statement's subject names it.
    pub repo: String,
    pub base: Recorded<CommitId>,
    pub head: Recorded<CommitId>,
    /// Every file base..head changes (excluded paths left out).
    pub changed_files: Vec<String>,
    /// The unified diff base..head, bounded in bytes, the files the criterion most likely
    /// concerns first; excluded paths are never in it.
    pub diff: String,
    pub diff_truncated: bool,
    pub floor: RequestFloor,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCriterion {
    pub id: String,
    pub ac: String,
    pub required: bool,
    pub lane: Lane,
    pub tag: String,
}

/// The floor's finding for the criterion, as the judge is told it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestFloor {
    pub result: FloorResult,
    pub reason: String,
}

/// A place in the head tree: `path` (relative to the repository), 1-based `line`, and a
/// `quote` that must occur there (whitespace normalised, within 3 lines).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    pub path: String,
    pub line: u64,
    pub quote: String,
}

/// One obligation the judge decomposed the criterion into.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Obligation {
    pub text: String,
    /// The judge's word for it (`met`, `divergent`, `unclear`, ...), kept as given.
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub citation: Option<Citation>,
}

/// A judge's answer, as read from its output. A response without `base`/`head` names the
/// request's commits (simple judges stay simple).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    #[serde(default)]
    pub schema: Option<String>,
    #[serde(default)]
    pub base: Option<String>,
    #[serde(default)]
    pub head: Option<String>,
    /// `block` or `abstain`; anything else (`pass` included) reads as an abstention.
    pub decision: String,
    #[serde(default)]
    pub rationale: Option<String>,
    #[serde(default)]
    pub pointer: Option<Citation>,
    #[serde(default)]
    pub obligations: Vec<Obligation>,
}

/// Who answered, as the statement records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
pub enum Identity {
    /// The command's argv and the SHA-256 of the program it runs (or of the argv when the
    /// program is not a file in the repository).
    Command {
        argv: Vec<String>,
        sha256: String,
    },
    Chat {
        url: String,
        model: String,
    },
}

/// Token usage, when the endpoint reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// The result of checking one citation against the head tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CitationCheck {
    /// A file at head inside the repository, the quote within 3 lines of the line.
    Resolved,
    /// The path leaves the repository, is absolute, or is not a file at head.
    NoSuchFile,
    /// The file is there; the quote is not near the line.
    QuoteNotFound,
}

/// A citation with what the audit found of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckedCitation {
    pub citation: Citation,
    pub check: CitationCheck,
}

/// One judge's answer on one criterion, after the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The criterion's id.
    pub criterion: String,
    /// The judge's name (its lens).
    pub judge: String,
    pub identity: Identity,
    /// `block` (confirmed: its pointer resolves) or `abstain`; never anything else.
    pub result: JudgeResult,
    pub rationale: String,
    /// The block's pointer, when it resolved.
    pub pointer: Option<Citation>,
    /// Every citation the answer made (the pointer and each obligation's), with its check.
    pub citations: Vec<CheckedCitation>,
    /// Why an answer became an abstention, or was discarded (`unresolved pointer`,
    /// `invalid context`, `"pass" is not an answer a judge may give`, `timeout after 120 s`,
    /// `most of this judge's citations do not resolve`, ...).
    pub downgraded: Option<String>,
    /// Evidence pointers of the request and the response records.
    pub request_evidence: String,
    pub response_evidence: Option<String>,
    pub usage: Option<Usage>,
}

#[cfg(test)]
mod tests {
    use super::Request;

    fn request(base: serde_json::Value) -> String {
        serde_json::json!({
            "schema": super::REQUEST_SCHEMA,
            "criterion": {"id": "c0", "ac": "It holds.", "required": true, "lane": "judge", "tag": "AC-C0-0000"},
            "repo": "https://github.com/acme/shop",
            "base": base,
            "head": "HEAD",
            "changed_files": [],
            "diff": "",
            "diff_truncated": false,
            "floor": {"result": "not_applicable", "reason": "a judgment criterion"}
        })
        .to_string()
    }

    /// A request document read back from the evidence (replay compares its commits with the
    /// statement's) keeps whatever commits it names, as spelt; a commit that is not a string is
    /// not a request.
    #[test]
    fn a_request_is_read_with_its_commits_as_spelt() {
        let text = request("not-a-commit".into());
        let read: Request = serde_json::from_str(&text).unwrap();
        assert_eq!(
            (read.base.to_string(), read.head.to_string()),
            ("not-a-commit".to_string(), "HEAD".to_string())
        );
        let back: serde_json::Value = serde_json::to_value(&read).unwrap();
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(&text).unwrap()
        );
        let e = serde_json::from_str::<Request>(&request(7.into()))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("invalid type: integer `7`, expected a string"),
            "{e}"
        );
    }
}
