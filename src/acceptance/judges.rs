//! The judges' settings (the book's judge page), as the acceptance file configures them: the
//! input model reads them, [`crate::judge`] runs them.

use std::time::Duration;

/// The name of the one judge a `judge:` mapping (not a panel) configures.
pub const SINGLE_JUDGE_NAME: &str = "judge";
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
