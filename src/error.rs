//! One error type for the command line boundary, mapped once to the documented exit codes.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | READY or READY WITH GAPS (replay: valid; admit: allow) |
//! | 1 | BLOCKED (replay: invalid; admit: deny) |
//! | 2 | usage or input error: bad flags, an invalid acceptance file, a dirty tree, a missing tool |
//! | 3 | engine crash: an internal error, never reported as a verdict |
//! | 4 | INCONCLUSIVE |

use std::fmt;

pub const EXIT_OK: i32 = 0;
pub const EXIT_BLOCKED: i32 = 1;
pub const EXIT_INPUT: i32 = 2;
pub const EXIT_CRASH: i32 = 3;
pub const EXIT_INCONCLUSIVE: i32 = 4;
pub const EXIT_INTERRUPTED: i32 = 130;

/// A problem the user can fix: what is wrong, where (file, line, column when known), and a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub file: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    pub help: Option<String>,
}

impl InputError {
    pub fn new(message: impl Into<String>) -> Self {
        InputError {
            file: None,
            line: None,
            column: None,
            message: message.into(),
            help: None,
        }
    }

    pub fn at(mut self, file: impl Into<String>, line: usize, column: usize) -> Self {
        self.file = Some(file.into());
        self.line = Some(line);
        self.column = Some(column);
        self
    }

    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: ")?;
        match (&self.file, self.line, self.column) {
            (Some(file), Some(line), Some(col)) => write!(f, "{file}:{line}:{col}: ")?,
            (Some(file), Some(line), None) => write!(f, "{file}:{line}: ")?,
            (Some(file), None, _) => write!(f, "{file}: ")?,
            _ => {}
        }
        write!(f, "{}", self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// Every way a command can end other than with a verdict.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// One or more problems in the user's input (all of them, when a file has several).
    #[error("{}", render_input(.0))]
    Input(Vec<InputError>),
    /// The run was interrupted (Ctrl-C or SIGTERM); worktrees have been removed.
    #[error("interrupted: worktrees removed, nothing written")]
    Interrupted,
    /// An internal failure: a bug or an environment fault we did not anticipate.
    #[error("internal error: {0}")]
    Crash(String),
}

fn render_input(errors: &[InputError]) -> String {
    let mut out = String::new();
    for (i, e) in errors.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&e.to_string());
    }
    if errors.len() > 1 {
        out.push_str(&format!("\n{} errors", errors.len()));
    }
    out
}

impl Error {
    pub fn input(e: InputError) -> Self {
        Error::Input(vec![e])
    }

    pub fn crash(msg: impl fmt::Display) -> Self {
        Error::Crash(msg.to_string())
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => EXIT_INPUT,
            Error::Interrupted => EXIT_INTERRUPTED,
            Error::Crash(_) => EXIT_CRASH,
        }
    }
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::input(e)
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Crash(format!("I/O: {e}"))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
#[path = "error_tests.rs"]
mod help_tests;
