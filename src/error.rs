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
use std::io;
use std::path::{Path, PathBuf};

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

/// An I/O operation that failed at a path: what was done (`op`, a verb such as "create" or
/// "read"), where, and the operating system's error. Converted into [`Error`], an operator
/// fault (see [`is_operator_fault`]) is an input error naming the path with its fix (exit 2);
/// any other failure is internal (exit 3).
#[derive(Debug, thiserror::Error)]
#[error("cannot {op} {}: {source}", path.display())]
pub struct IoError {
    pub op: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl IoError {
    pub fn new(op: &'static str, path: impl AsRef<Path>, source: io::Error) -> Self {
        IoError {
            op,
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    /// How the operator clears this fault: a path that was only to be read must exist and be
    /// readable, a directory to write in must exist; any other follows [`operator_fix`].
    fn fix(&self) -> String {
        let reading = matches!(self.op, "read" | "list");
        match self.source.raw_os_error() {
            Some(libc::EACCES | libc::EPERM) if reading => {
                format!("make {} readable for this user", self.path.display())
            }
            Some(libc::ENOENT) if reading => {
                format!(
                    "check that {} exists, or name another path",
                    self.path.display()
                )
            }
            Some(libc::ENOENT) => {
                let dir = self.path.parent().unwrap_or(&self.path).display();
                format!("create {dir}, or name another path")
            }
            _ => operator_fix(&self.source, &self.path),
        }
    }
}

/// Names the operation and the path of an I/O result's error: `fs::create_dir(&p).at("create", &p)?`.
pub trait IoContext<T> {
    fn at(self, op: &'static str, path: impl AsRef<Path>) -> std::result::Result<T, IoError>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn at(self, op: &'static str, path: impl AsRef<Path>) -> std::result::Result<T, IoError> {
        self.map_err(|source| IoError::new(op, path, source))
    }
}

impl From<IoError> for Error {
    fn from(e: IoError) -> Self {
        if is_operator_fault(&e.source) {
            let fix = e.fix();
            Error::input(InputError::new(e.to_string()).help(fix))
        } else {
            Error::crash(e)
        }
    }
}

/// An I/O failure that is the machine's or the operator's to fix, not a bug: a full or
/// read-only file system, a quota, a permission, a file where a directory goes, a name or a
/// file too long. These are input errors (exit 2) naming the path, never crashes.
pub fn is_operator_fault(error: &io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(
            libc::ENOSPC
                | libc::EDQUOT
                | libc::EROFS
                | libc::EACCES
                | libc::EPERM
                | libc::ENOTDIR
                | libc::EISDIR
                | libc::EFBIG
                | libc::ENAMETOOLONG
                | libc::EMLINK
                | libc::ENOENT
        )
    )
}

/// How to clear an operator fault at `path` (see [`is_operator_fault`]).
pub fn operator_fix(error: &io::Error, path: &Path) -> String {
    let dir = path.parent().unwrap_or(path).display();
    match error.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG) => {
            format!("free space on the file system holding {dir}")
        }
        Some(libc::EROFS) => format!("{dir} is on a read-only file system: mount it writable"),
        Some(libc::EACCES | libc::EPERM) => format!("make {dir} writable for this user"),
        Some(libc::ENOENT) => format!("{dir} was removed while the command ran: create it again"),
        _ => format!("remove what stands at {}", path.display()),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
#[path = "error_tests.rs"]
mod help_tests;

#[cfg(test)]
mod io_tests {
    use super::{Error, IoContext, EXIT_CRASH, EXIT_INPUT};

    fn failed(errno: i32, op: &'static str) -> Error {
        Err::<(), _>(std::io::Error::from_raw_os_error(errno))
            .at(op, "/data/out/file")
            .unwrap_err()
            .into()
    }

    #[test]
    fn an_operator_fault_is_an_input_error_naming_the_path_with_its_fix() {
        let e = failed(libc::ENOSPC, "write");
        assert_eq!(e.exit_code(), EXIT_INPUT);
        let text = e.to_string();
        assert!(
            text.starts_with("error: cannot write /data/out/file: "),
            "{text}"
        );
        assert!(
            text.ends_with("\n  help: free space on the file system holding /data/out"),
            "{text}"
        );
        let e = failed(libc::EACCES, "read");
        assert!(
            e.to_string()
                .ends_with("help: make /data/out/file readable for this user"),
            "{e}"
        );
        let e = failed(libc::ENOENT, "create");
        assert!(
            e.to_string()
                .ends_with("help: create /data/out, or name another path"),
            "{e}"
        );
    }

    #[test]
    fn any_other_io_error_is_internal() {
        let e = failed(libc::EIO, "read");
        assert_eq!(e.exit_code(), EXIT_CRASH);
        assert!(
            e.to_string()
                .starts_with("internal error: cannot read /data/out/file: "),
            "{e}"
        );
    }
}
