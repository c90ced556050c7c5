//! The judge (full mode, DESIGN 6): a bring-your-own reviewer above the floor that may block a
//! criterion, with a pointer into the head tree the engine checks, or abstain. It never passes
//! anything: no answer turns an open criterion into a satisfied one.
//!
//! In: the criteria the judge looks at (judge-lane ones, and floor-lane ones the floor left
//! `unbound` or `undecided`), the change (diff base..head), the floor's findings, the panel of
//! judges from the acceptance file's `judge:` block. Out: one [`Finding`] per judge per
//! criterion, each request and response kept as evidence, and per criterion the judge result
//! the fusion takes.
//!
//! - [`audit`]: what an answer means once its citations are checked against the head tree
//!   (pure);
//! - the transports (a command on stdin/stdout, an OpenAI-compatible chat-completions
//!   endpoint) implement [`Ask`].

pub mod audit;
pub mod chat;

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::format::judge::{Citation, Request};
use crate::verdict::JudgeResult;

/// Default bound on the diff sent with each request.
pub const DEFAULT_MAX_DIFF_BYTES: usize = 200_000;
/// Default seconds per criterion.
pub const DEFAULT_TIMEOUT_SECONDS: u64 = 120;
/// Default criteria judged at once.
pub const DEFAULT_CONCURRENCY: usize = 4;
/// Paths never sent to a judge unless `exclude` says otherwise.
pub const DEFAULT_EXCLUDE: &[&str] = &["**/*.lock", "**/package-lock.json", ".env*", "**/.env*"];

/// How a judge is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// Request JSON on stdin, response JSON on stdout.
    Command { argv: Vec<String> },
    /// An OpenAI-compatible chat-completions endpoint; the key is read from the environment
    /// variable `api_key_env` names (never from the file), when there is one.
    Chat {
        url: String,
        model: String,
        api_key_env: Option<String>,
    },
}

/// One judge of the panel, as the acceptance file configures it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeSpec {
    /// The lens (`security`, `intent`, ...); `judge` when the block names one judge.
    pub name: String,
    pub transport: Transport,
    pub timeout: Duration,
    pub concurrency: usize,
    pub max_diff_bytes: usize,
    pub exclude: Vec<String>,
    /// Where the judge is configured (file, line), for messages about it.
    pub file: String,
    pub line: usize,
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
