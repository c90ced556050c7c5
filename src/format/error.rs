//! The error document (`claim_check.error.v1`) printed on stdout, in place of a result, when a
//! command run with `--format json` ends without one: an input error (exit 2, every problem
//! with its place and hint), an interruption (130) or a crash (3). Scripts read it instead of
//! parsing stderr, which keeps the human form.

use serde::{Deserialize, Serialize};

use crate::error::{Error, InputError};

pub const ERROR_SCHEMA: &str = "claim_check.error.v1";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorDocument {
    pub schema: String,
    pub exit_code: i32,
    /// `input`, `interrupted` or `crash`.
    pub kind: String,
    pub errors: Vec<ErrorEntry>,
}

/// One problem: where (each `null` when not known), what, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorEntry {
    pub file: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    pub help: Option<String>,
}

impl From<&InputError> for ErrorEntry {
    fn from(e: &InputError) -> ErrorEntry {
        ErrorEntry {
            file: e.file.clone(),
            line: e.line,
            column: e.column,
            message: e.message.clone(),
            help: e.help.clone(),
        }
    }
}

impl ErrorDocument {
    pub fn of(error: &Error) -> ErrorDocument {
        let (kind, errors) = match error {
            Error::Input(errors) => ("input", errors.iter().map(ErrorEntry::from).collect()),
            Error::Interrupted => ("interrupted", vec![bare(error.to_string())]),
            Error::Crash(msg) => ("crash", vec![bare(msg.clone())]),
        };
        ErrorDocument {
            schema: ERROR_SCHEMA.to_string(),
            exit_code: error.exit_code(),
            kind: kind.to_string(),
            errors,
        }
    }

    /// A panic: the engine crashed where no [`Error`] was made.
    pub fn panic(message: &str) -> ErrorDocument {
        ErrorDocument::of(&Error::Crash(message.to_string()))
    }
}

fn bare(message: String) -> ErrorEntry {
    ErrorEntry {
        file: None,
        line: None,
        column: None,
        message,
        help: None,
    }
}

#[cfg(test)]
mod tests {
    use super::{ErrorDocument, ERROR_SCHEMA};
    use crate::error::{Error, InputError};

    #[test]
    fn every_problem_keeps_its_place_and_hint_and_the_exit_code() {
        let err = Error::Input(vec![
            InputError::new("unknown key `requird`")
                .at(".shipmoor/acceptance.yaml", 5, 5)
                .help("did you mean `required`?"),
            InputError::new("--base `x` is not a commit"),
        ]);
        let v = serde_json::to_value(ErrorDocument::of(&err)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "schema": ERROR_SCHEMA, "exit_code": 2, "kind": "input",
                "errors": [
                    {"file": ".shipmoor/acceptance.yaml", "line": 5, "column": 5,
                     "message": "unknown key `requird`", "help": "did you mean `required`?"},
                    {"file": null, "line": null, "column": null,
                     "message": "--base `x` is not a commit", "help": null},
                ]
            })
        );
        let crash = ErrorDocument::of(&Error::crash("I/O: disk full"));
        assert_eq!((crash.exit_code, crash.kind.as_str()), (3, "crash"));
        assert_eq!(crash.errors[0].message, "I/O: disk full");
    }
}
