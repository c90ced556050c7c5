//! The judge's wire formats (DESIGN 6): the request a judge reads
//! (`claim_check.judge.request.v1`) and the response it answers with
//! (`claim_check.judge.response.v1`). Fields may be added, never removed.
//!
//! The response is read leniently on purpose: a judge is someone else's program, and anything
//! it gets wrong becomes an abstention with the reason recorded, never an error of the run. So
//! `decision` and `status` stay strings here; [`crate::judge`] decides what they mean.

use serde::{Deserialize, Serialize};

use crate::acceptance::Lane;
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
    pub base: String,
    pub head: String,
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
