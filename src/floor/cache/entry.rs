//! A base cache entry (schema `claim_check.base_cache.v1`): what one base run observed of the
//! bound tests, with the evidence records and blobs it cites, named by the SHA-256 of its
//! canonical JSON like every item of an evidence store.

use serde::{Deserialize, Serialize};

use super::key::KeyInputs;
use crate::decision::attribute::{Attribution, Diagnostic};
use crate::floor::runners::{FailureKind, Outcome};

/// The entry's schema, checked when it is read.
pub const ENTRY_SCHEMA: &str = "claim_check.base_cache.v1";

/// One base run's observations, as the cache keeps them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub schema: String,
    /// The hex SHA-256 of [`Entry::inputs`] in canonical JSON: the name the entry is found by.
    pub key: String,
    /// Everything the key covers, kept so that a miss can say what changed.
    pub inputs: KeyInputs,
    /// The run that observed it: its head commit (the commit head's test files came from)
    /// and when it ran.
    pub made: Made,
    /// Each bound test's observation at base.
    pub observed: Vec<CachedObservation>,
    /// Tracked files base's runs changed in its worktree (`base: path`).
    pub rewritten: Vec<String>,
    /// The evidence records of base's runs, in the order the run stored them.
    pub records: Vec<String>,
    /// Every item the records cite (their logs and results files), the records included.
    pub items: Vec<String>,
    /// What base's runs gave, for the runtime row of a run that reuses them (`2 failed`).
    pub summary: String,
}

/// Where and when an entry was observed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Made {
    /// The head commit of the run that observed base (its test files were laid over base).
    pub head: String,
    /// RFC 3339.
    pub at: String,
    /// The shipmoor release that observed it.
    pub by: String,
}

/// One bound test's observation at base, as the floor holds it while it decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CachedObservation {
    /// The runner's position in the run's runners (the key covers them, in order).
    pub runner: usize,
    pub id: String,
    pub outcomes: Vec<Outcome>,
    pub evidence: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_files: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribution: Option<Attribution>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_kind: Option<FailureKind>,
}
