//! What the parser's tests share: one file name, and ways to parse a text expecting a valid set,
//! errors, or exactly one error, with every error checked for file, position and help.

use super::parse::parse;
use super::{AcceptanceSet, AcceptanceState};
use crate::error::InputError;

pub(super) const FILE: &str = ".shipmoor/acceptance.yaml";

pub(super) fn run(text: &str) -> Result<AcceptanceSet, Vec<InputError>> {
    parse(text, FILE, AcceptanceState::Committed, "abc123".to_string())
}

pub(super) fn parse_ok(text: &str) -> AcceptanceSet {
    match run(text) {
        Ok(set) => set,
        Err(errors) => panic!(
            "expected a valid set, got:\n{}",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

pub(super) fn parse_err(text: &str) -> Vec<InputError> {
    match run(text) {
        Ok(set) => panic!("expected errors, got {set:#?}"),
        Err(errors) => {
            for e in &errors {
                assert_eq!(e.file.as_deref(), Some(FILE), "{e}");
                assert!(e.line.is_some() && e.column.is_some(), "{e}");
                assert!(e.help.as_deref().is_some_and(|h| !h.is_empty()), "{e}");
            }
            errors
        }
    }
}

pub(super) fn one_err(text: &str) -> InputError {
    let errors = parse_err(text);
    assert_eq!(errors.len(), 1, "expected one error, got {errors:#?}");
    errors.into_iter().next().unwrap()
}

pub(super) fn at(e: &InputError) -> (usize, usize) {
    (e.line.unwrap(), e.column.unwrap())
}

pub(super) fn help(e: &InputError) -> &str {
    e.help.as_deref().unwrap()
}

/// A valid file with one criterion, plus `extra` appended at the top level.
pub(super) fn minimal(extra: &str) -> String {
    format!("version: 1\ncriteria:\n  - id: a\n    ac: A holds.\n{extra}")
}
