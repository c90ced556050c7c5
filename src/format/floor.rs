//! The floor's wire types: what each side observed of a test, and the floor's disposition of a
//! criterion, as the run result, the statement and the shard result carry them. The floor
//! ([`crate::floor`]) fills them in.

use serde::{Deserialize, Serialize};

use super::SideOutcome;
use crate::verdict::FloorResult;

/// A side of the change: the base commit (with head's test files laid over it) or the head.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    Base,
    Head,
}

impl Side {
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Base => "base",
            Side::Head => "head",
        }
    }
}

/// What one run observed of one test.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    Fail,
    /// The test's target did not compile.
    BuildFail,
    /// Absent, skipped, filtered out, or the runner never ran it.
    NotObserved,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::BuildFail => "build_fail",
            Outcome::NotObserved => "not_observed",
        }
    }
}

/// What kind of failure a failing test's evidence is, for reports (book: floor/attribution.md).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// An assertion failed (`assert!`, `assert x == y`, `t.Errorf`, `expect(…)`).
    Assertion,
    /// The test raised, panicked or threw for another reason.
    Exception,
    /// The test item itself does not build or import (attributed, book: floor/attribution.md).
    BuildFailureInTest,
}

impl FailureKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::Assertion => "an assertion",
            FailureKind::Exception => "an exception",
            FailureKind::BuildFailureInTest => "a build failure in the test",
        }
    }
}

/// An evidence pointer with what it shows, as the fix packet and reports cite it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceRef {
    pub pointer: String,
    pub detail: String,
}

/// One bound test and what each side observed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TestObservation {
    pub id: String,
    pub runner: String,
    pub file: Option<String>,
    pub head: SideOutcome,
    pub base: SideOutcome,
    pub head_evidence: Vec<String>,
    pub base_evidence: Vec<String>,
    /// What kind of failure at base this test's evidence is, where it failed there (book: floor/attribution.md):
    /// an assertion, an exception, or a build failure in the test itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_failure: Option<FailureKind>,
}

/// The floor's disposition for one criterion.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CriterionFloor {
    pub result: FloorResult,
    pub reason: String,
    /// `tag`, `check.test`, `check.command`, `check.pattern` or `judge_lane`.
    pub binding: String,
    pub tests: Vec<TestObservation>,
    /// The observation that decided the result.
    pub evidence: Option<EvidenceRef>,
    /// Every evidence record this criterion rests on.
    pub evidence_all: Vec<String>,
    /// What ran at base and at head for this criterion (`fail`, `pass`, `—`).
    pub base_summary: String,
    pub head_summary: String,
    /// A command that reproduces the decisive observation.
    pub reproduce: Option<String>,
}

/// One command the floor ran, for the runtime section of reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RuntimeRow {
    pub side: String,
    pub runner: String,
    pub command: String,
    pub tests: usize,
    pub result: String,
    pub seconds: f64,
    pub exit_code: Option<i32>,
    /// A bounded excerpt of the output where something failed.
    pub excerpt: Option<String>,
    /// The tool that ran, where more than one could have (`pytest 9.2.0, Python 3.11.7 at
    /// /usr/bin/python3`); absent for the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

impl CriterionFloor {
    /// A disposition that rests on no observed test: its result, reason and binding, nothing
    /// run at either side.
    pub fn new(result: FloorResult, reason: &str, binding: &str) -> Self {
        CriterionFloor {
            result,
            reason: reason.to_string(),
            binding: binding.to_string(),
            tests: vec![],
            evidence: None,
            evidence_all: vec![],
            base_summary: "—".into(),
            head_summary: "—".into(),
            reproduce: None,
        }
    }
}

/// How a run used the base cache (book: floor/base-cache.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseCacheState {
    /// Base's observations came from an entry: base did not run.
    Reused,
    /// Base ran, and its observations were kept as a new entry.
    Stored,
    /// Base ran, and nothing was kept (the note says why).
    Ran,
}

impl BaseCacheState {
    pub fn as_str(self) -> &'static str {
        match self {
            BaseCacheState::Reused => "reused",
            BaseCacheState::Stored => "stored",
            BaseCacheState::Ran => "ran",
        }
    }
}

/// The base cache's part of a run: which entry base's observations came from, or which one
/// they were kept as, or why neither.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseCacheUse {
    pub state: BaseCacheState,
    /// The cache's directory, as the run named it.
    pub dir: String,
    /// `sha256:<hex>` of everything that can change base's answer (empty when the cache could
    /// not be used for this run).
    pub key: String,
    /// The entry reused or stored, `sha256:<hex>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// A reused entry: the head commit of the run that observed base (head's test files came
    /// from it), and when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at_head: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
