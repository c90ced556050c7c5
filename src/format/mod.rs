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

/// How much of the check a run did, as the run result and the statement record it: `fast`, the
/// deterministic floor only, or `full`, the floor and then the judge on what it left open. (The
/// command line's `--mode` is its own type, which converts into this one.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Fast,
    Full,
}

impl Mode {
    pub const ALL: [Mode; 2] = [Mode::Fast, Mode::Full];

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Fast => "fast",
            Mode::Full => "full",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value a document records in one field as a string, each value spelt one way: a word of a
/// closed set, or a commit id.
pub trait Spelt: Sized {
    /// The value as documents spell it.
    fn spelling(&self) -> &str;
    /// The value `s` spells, when it spells one.
    fn read(s: &str) -> Option<Self>;
}

impl Spelt for Mode {
    fn spelling(&self) -> &str {
        self.as_str()
    }
    fn read(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

impl Spelt for crate::verdict::Rule {
    fn spelling(&self) -> &str {
        self.label()
    }
    fn read(s: &str) -> Option<crate::verdict::Rule> {
        crate::verdict::Rule::ALL
            .into_iter()
            .find(|r| r.label() == s)
    }
}

impl Spelt for crate::git::CommitId {
    fn spelling(&self) -> &str {
        self.as_str()
    }
    fn read(s: &str) -> Option<crate::git::CommitId> {
        crate::git::CommitId::parse(s)
    }
}

/// A value as a document records it: one this release reads ([`Spelt::read`]), or a string
/// that spells none, kept as written. It is written as the value's spelling, or the string.
///
/// For the fields a reader compares rather than trusts: the run result's and the statement's
/// `rule` (replay and admission re-derive the rule from the dispositions; the reports show the
/// recorded one), `mode` (shown; only `fast` says no judge ran), and `base` and `head` with the
/// judge request's (replay compares them with the subject and the records, and words a mismatch
/// itself: `the dispositions are for head "HEAD" but the subject is …`). A statement or result
/// that holds a spelling this release does not read (an edited one) is read and judged on what
/// is checked, rather than refused as unreadable; a value that is not a string is refused, as
/// for any string field. What is not a commit id never becomes a [`crate::git::CommitId`], so
/// it never reaches git as one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Recorded<T> {
    Known(T),
    /// A string that spells no value, as the document has it.
    Unknown(String),
}

impl<T: Spelt> Recorded<T> {
    /// The value as the document spells it.
    pub fn as_str(&self) -> &str {
        match self {
            Recorded::Known(w) => w.spelling(),
            Recorded::Unknown(s) => s,
        }
    }

    /// The value, when the document spells one.
    pub fn known(&self) -> Option<&T> {
        match self {
            Recorded::Known(w) => Some(w),
            Recorded::Unknown(_) => None,
        }
    }

    /// The spelling as reports show a commit ([`crate::text::short_commit`]).
    pub fn short(&self) -> &str {
        crate::text::short_commit(self.as_str())
    }
}

impl<T> From<T> for Recorded<T> {
    fn from(w: T) -> Self {
        Recorded::Known(w)
    }
}

impl<T: Spelt + PartialEq> PartialEq<T> for Recorded<T> {
    fn eq(&self, other: &T) -> bool {
        self.known() == Some(other)
    }
}

impl<T: Spelt> fmt::Display for Recorded<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<T: Spelt> Serialize for Recorded<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de, T: Spelt> Deserialize<'de> for Recorded<T> {
    /// Any string: the value it spells, or the string kept as [`Recorded::Unknown`].
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match T::read(&s) {
            Some(w) => Recorded::Known(w),
            None => Recorded::Unknown(s),
        })
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
        spelled(&Mode::ALL, |m| m.as_str());
        // The fusion's rule, as `fusion-v3.json` labels it.
        spelled(&crate::verdict::Rule::ALL, |r| r.label());
        assert!(serde_json::from_str::<Disposition>("\"not judged\"").is_err());
    }

    /// A recorded value is written as its spelling (for the enums, their own serde spelling:
    /// [`enums_keep_the_spelling_of_the_strings_they_replaced`]); read back, a spelling it
    /// reads is the value and any other string is kept as written.
    fn recorded<T>(all: &[T], others: &[&str])
    where
        T: Spelt + PartialEq + Clone + fmt::Debug,
    {
        for w in all {
            let json = serde_json::to_string(&Recorded::Known(w.clone())).unwrap();
            assert_eq!(json, serde_json::to_string(w.spelling()).unwrap());
            let back: Recorded<T> = serde_json::from_str(&json).unwrap();
            assert_eq!(back, Recorded::Known(w.clone()));
            assert_eq!(back, *w);
            assert_eq!(back.to_string(), w.spelling());
        }
        for other in others {
            let json = serde_json::to_string(other).unwrap();
            let back: Recorded<T> = serde_json::from_str(&json).unwrap();
            assert_eq!(back, Recorded::Unknown(other.to_string()));
            assert_eq!(back.known(), None);
            assert_eq!(back.as_str(), *other);
            assert_eq!(serde_json::to_string(&back).unwrap(), json);
        }
        let e = serde_json::from_str::<Recorded<T>>("9")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("invalid type: integer `9`, expected a string"),
            "{e}"
        );
    }

    #[test]
    fn a_recorded_value_reads_any_string_and_writes_it_back() {
        let words = ["", "9", "FAST", "Fast", "draft_gate", " 1"];
        recorded(&Mode::ALL, &words);
        recorded(&crate::verdict::Rule::ALL, &words);
        let commit = |s: &str| crate::git::CommitId::parse(s).unwrap();
        recorded(
            &[commit(&"a1".repeat(20)), commit(&"0f".repeat(32))],
            &[
                "",
                "HEAD",
                "not-a-commit",
                "--upload-pack=touch x",
                &"A1".repeat(20),
                &"a1".repeat(19),
                "é1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a",
            ],
        );
    }

    #[test]
    fn a_recorded_commit_is_shown_short_as_reports_show_any_commit() {
        let r: Recorded<crate::git::CommitId> =
            serde_json::from_str(&format!("\"{}\"", "a1".repeat(20))).unwrap();
        assert_eq!(r.short(), "a1a1a1a");
        // No character boundary at 7: the whole spelling, never a panic.
        let r: Recorded<crate::git::CommitId> = serde_json::from_str("\"ééééééééé\"").unwrap();
        assert_eq!(r.short(), "ééééééééé");
        let r: Recorded<crate::git::CommitId> = serde_json::from_str("\"HEAD\"").unwrap();
        assert_eq!(r.short(), "HEAD");
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
