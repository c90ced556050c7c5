//! Every format Claim Check writes and reads back, typed once: the same `Serialize +
//! Deserialize` types are used by the writer and by every reader (`replay`, the Action), so a
//! field renamed in one place fails to compile or fails a round-trip test instead of quietly
//! reading as empty.
//!
//! - [`statement`]: the in-toto statement, its VSA predicate and the dispositions extension
//!   (the VSA), with the one "readable by this version" check of its format version;
//! - [`evidence`]: evidence records (`claim_check.evidence.v1`);
//! - [`result`]: the run result (`claim_check.result.v1`) and the result document
//!   `{result, fixes}` of `--format json` and `--result-out`;
//! - [`fixes`]: the fix packet (`claim_check.fixes.v2`);
//! - [`error`]: the error document (`claim_check.error.v1`) of `--format json` when a command
//!   ends without a result.
//!
//! The judge's and the shards' formats belong here too when they exist. Other people's formats
//! (the DSSE envelope, the Sigstore bundle) stay with the code that speaks them, in `attest`.
//!
//! This module holds the values several formats share; each enum serializes exactly as the
//! string it replaced.

pub mod error;
pub mod evidence;
pub mod fixes;
pub mod floor;
pub mod judge;
pub mod observation;
pub mod result;
pub mod sandbox;
pub mod statement;

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// One word for a criterion's state, as the run result and the statement's dispositions spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disposition {
    Satisfied,
    Unsatisfied,
    Unbound,
    Undecided,
    Blocked,
    Abstained,
    NotJudged,
}

impl Disposition {
    pub const ALL: [Disposition; 7] = [
        Disposition::Satisfied,
        Disposition::Unsatisfied,
        Disposition::Unbound,
        Disposition::Undecided,
        Disposition::Blocked,
        Disposition::Abstained,
        Disposition::NotJudged,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Disposition::Satisfied => "satisfied",
            Disposition::Unsatisfied => "unsatisfied",
            Disposition::Unbound => "unbound",
            Disposition::Undecided => "undecided",
            Disposition::Blocked => "blocked",
            Disposition::Abstained => "abstained",
            Disposition::NotJudged => "not_judged",
        }
    }
}

impl fmt::Display for Disposition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the statement is signed, as the run result and the statement record it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SigningState {
    Unsigned,
    /// A DSSE envelope and a keyed Sigstore bundle, signed with `--key`.
    Key,
    /// A Sigstore bundle with a Fulcio certificate and a Rekor entry.
    Keyless,
}

impl SigningState {
    pub const ALL: [SigningState; 3] = [
        SigningState::Unsigned,
        SigningState::Key,
        SigningState::Keyless,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SigningState::Unsigned => "unsigned",
            SigningState::Key => "key",
            SigningState::Keyless => "keyless",
        }
    }
}

impl fmt::Display for SigningState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What one side's runs of a bound test came to, as a disposition records it: the label of the
/// floor's `SideState` (its detail stays in the evidence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SideOutcome {
    Pass,
    Fail,
    BuildFail,
    NotObserved,
    Flaky,
    Unobservable,
}

impl SideOutcome {
    pub const ALL: [SideOutcome; 6] = [
        SideOutcome::Pass,
        SideOutcome::Fail,
        SideOutcome::BuildFail,
        SideOutcome::NotObserved,
        SideOutcome::Flaky,
        SideOutcome::Unobservable,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SideOutcome::Pass => "pass",
            SideOutcome::Fail => "fail",
            SideOutcome::BuildFail => "build_fail",
            SideOutcome::NotObserved => "not_observed",
            SideOutcome::Flaky => "flaky",
            SideOutcome::Unobservable => "unobservable",
        }
    }
}

impl fmt::Display for SideOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A field that holds one constant of this release, read with [`constant`]. (A type alias, as
/// serde would otherwise take a `&'static str` field for one borrowed from the input.)
pub type Constant = &'static str;

/// Reads a field that holds one constant of this release (a schema name, the policy), refusing
/// any other value: a document of another schema is not read as if it were this one.
fn constant<'de, D: Deserializer<'de>>(d: D, want: &'static str) -> Result<&'static str, D::Error> {
    let got = String::deserialize(d)?;
    if got == want {
        Ok(want)
    } else {
        Err(serde::de::Error::custom(format!(
            "`{got}` where this release reads `{want}`"
        )))
    }
}

/// Whether `json` validates against the repository's `schemas/<schema>.json`, asked of
/// check-jsonschema (from PyPI): the unit tests' side of the documented contract.
#[cfg(test)]
pub(crate) fn matches_schema(schema: &str, json: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("document.json");
    std::fs::write(&doc, json).unwrap();
    let file = format!("{}/schemas/{schema}.json", env!("CARGO_MANIFEST_DIR"));
    std::process::Command::new("check-jsonschema")
        .arg("--schemafile")
        .arg(&file)
        .arg(&doc)
        .output()
        .unwrap_or_else(|e| {
            panic!("this test needs check-jsonschema (pip install check-jsonschema): {e}")
        })
        .status
        .success()
}

#[cfg(test)]
mod prop_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::SideState;

    /// Each enum serializes as the word it replaced, and reads back from it.
    fn spelled<T>(all: &[T], word: fn(&T) -> &'static str)
    where
        T: Serialize + for<'de> Deserialize<'de> + PartialEq + fmt::Debug,
    {
        for v in all {
            let json = serde_json::to_string(v).unwrap();
            assert_eq!(json, format!("\"{}\"", word(v)));
            assert_eq!(&serde_json::from_str::<T>(&json).unwrap(), v);
        }
    }

    #[test]
    fn enums_keep_the_spelling_of_the_strings_they_replaced() {
        spelled(&Disposition::ALL, |d| d.as_str());
        spelled(&SigningState::ALL, |s| s.as_str());
        spelled(&SideOutcome::ALL, |o| o.as_str());
        assert!(serde_json::from_str::<Disposition>("\"not judged\"").is_err());
    }

    #[test]
    fn every_side_state_has_its_label() {
        for s in [
            SideState::Pass,
            SideState::Fail,
            SideState::BuildFail { attributed: true },
            SideState::NotObserved,
            SideState::Flaky,
            SideState::Unobservable("timed out".into()),
        ] {
            assert_eq!(s.outcome().as_str(), s.label());
        }
    }
}
