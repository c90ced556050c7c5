//! Files written and read without following a symlink (book: security.md).
//!
//! The change under check can commit a symlink anywhere in the repository, and the floor runs
//! its code, which can make one anywhere it may write. A symlink where an output goes would
//! send the output (the evidence store, in the fuse job that holds the signing identity)
//! wherever it points, and replace or fill a file of someone else's. So every output is an
//! [`OutputPath`]:
//!
//! - the directories of its path that were the user's own when the command started are taken
//!   as they are: the repository's root and the directories above it, for an output in the
//!   repository (the default `.shipmoor/…`); for an output named outside the repository by a
//!   flag, the directories that already existed (the first directory the user named, and those
//!   above it);
//! - below that, no directory on the way, nor the output itself, may be a symlink, or a file
//!   where a directory goes. [`OutputPath::check`] says so before any work starts and again
//!   just before anything is written ([`Refused`]); directories are then made one at a time,
//!   the temporary file is created new with `O_NOFOLLOW`, and it is renamed into place in its
//!   own directory. Nothing the floor started runs by then (it is a child subreaper), so what
//!   the checks saw is what is written.
//!
//! Files read back from elsewhere (a store's items, a shard's result) are read with
//! [`read_regular`]: a regular file only, never through a symlink, up to a size.

use std::fmt;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use crate::error::{is_operator_fault, operator_fix};
use crate::error::{Error, InputError};

/// An output's path and how much of it is taken as it is (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputPath {
    /// Absolute, `.` and `..` resolved by name (so a `..` never climbs out of a symlink).
    path: PathBuf,
    /// How many leading components (`/` counted) are the user's own directories.
    kept: usize,
    /// The repository's root as `path` spells it, when the output is in the repository.
    repository: Option<PathBuf>,
    dir: bool,
}

/// Why an output cannot be written where it was named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    Symlink,
    /// A file (or anything else) where a directory goes.
    NotADirectory,
    /// A directory (or a FIFO, a device) where the output file goes.
    NotAFile,
}

/// An output refused: `at` (the output itself, or a directory on the way) is in the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub output: PathBuf,
    pub at: PathBuf,
    pub why: Why,
    /// The repository's root, when `at` is in the repository (messages name paths from it).
    repository: Option<PathBuf>,
}

#[derive(Debug)]
pub enum WriteError {
    Refused(Refused),
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl OutputPath {
    /// The output file `path` (relative to the current directory); `repository`, the root of
    /// the repository the command works on, when there is one.
    pub fn file(path: &Path, repository: Option<&Path>) -> OutputPath {
        Self::new(path, repository, false)
    }

    /// The output directory `path` (the evidence store, a shard's directory).
    pub fn dir(path: &Path, repository: Option<&Path>) -> OutputPath {
        Self::new(path, repository, true)
    }

    fn new(path: &Path, repository: Option<&Path>, dir: bool) -> OutputPath {
        let path = normalize(path);
        let root = repository.and_then(|r| std::fs::canonicalize(r).ok());
        let inside = |real: &Path| root.as_ref().is_some_and(|r| real.starts_with(r));
        let components: Vec<Component<'_>> = path.components().collect();
        let mut kept = 1;
        let mut prefix = PathBuf::from("/");
        let mut real = PathBuf::from("/");
        // The output itself is never the user's directory: it is checked like the rest.
        for c in components
            .iter()
            .skip(1)
            .take(components.len().saturating_sub(2))
        {
            if inside(&real) {
                break;
            }
            let next = prefix.join(c);
            // A directory of the user's is taken as it is only if reaching it follows no
            // symlink in the repository (a symlink of theirs into the repository, then one
            // committed there, would lead anywhere).
            match resolve(&next, root.as_deref()) {
                Some((r, false)) if r.is_dir() => real = r,
                _ => break,
            }
            prefix = next;
            kept += 1;
        }
        OutputPath {
            path,
            kept,
            repository: root.filter(|r| &real == r).map(|_| prefix),
            dir,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file `name` in this directory.
    pub fn child_file(&self, name: &str) -> OutputPath {
        self.child(name, false)
    }

    /// The directory `name` in this directory.
    pub fn child_dir(&self, name: &str) -> OutputPath {
        self.child(name, true)
    }

    fn child(&self, name: &str, dir: bool) -> OutputPath {
        OutputPath {
            path: self.path.join(name),
            dir,
            ..self.clone()
        }
    }

    /// The file `name` beside this one (a signed form beside the statement).
    pub fn sibling(&self, name: &str) -> OutputPath {
        OutputPath {
            path: self.path.with_file_name(name),
            dir: false,
            ..self.clone()
        }
    }

    fn components(&self) -> Vec<Component<'_>> {
        self.path.components().collect()
    }

    /// No symlink, and no file where a directory goes, below the user's own directories; the
    /// output itself, when it exists, of its kind and no symlink. What does not exist yet
    /// passes: it is made, then, by [`OutputPath::write`].
    pub fn check(&self) -> Result<(), Refused> {
        let components = self.components();
        let mut at: PathBuf = components.iter().take(self.kept).collect();
        for (i, c) in components.iter().enumerate().skip(self.kept) {
            at.push(c);
            let meta = match std::fs::symlink_metadata(&at) {
                Ok(m) => m,
                // Nothing below it exists either; a directory that cannot be looked into is
                // the write's to report.
                Err(_) => return Ok(()),
            };
            let last = i + 1 == components.len();
            let why = if meta.file_type().is_symlink() {
                Some(Why::Symlink)
            } else if (!last || self.dir) && !meta.is_dir() {
                Some(Why::NotADirectory)
            } else if last && !self.dir && !meta.is_file() {
                Some(Why::NotAFile)
            } else {
                None
            };
            if let Some(why) = why {
                return Err(self.refused(at, why));
            }
        }
        Ok(())
    }

    fn refused(&self, at: PathBuf, why: Why) -> Refused {
        Refused {
            output: self.path.clone(),
            repository: self
                .repository
                .clone()
                .filter(|r| at.starts_with(r) && &at != r),
            at,
            why,
        }
    }

    /// Makes the directories below the user's own, one at a time, none through a symlink;
    /// with `itself`, this directory too.
    fn make_dirs(&self, itself: bool) -> Result<(), WriteError> {
        let components = self.components();
        let end = if itself {
            components.len()
        } else {
            components.len() - 1
        };
        let mut at: PathBuf = components.iter().take(self.kept).collect();
        for c in components.iter().take(end).skip(self.kept) {
            at.push(c);
            match std::fs::create_dir(&at) {
                Ok(()) => {}
                // `mkdir` never follows a symlink: what is there must be a directory.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let meta = std::fs::symlink_metadata(&at).map_err(|e| io(&at, e))?;
                    if meta.file_type().is_symlink() {
                        return Err(WriteError::Refused(self.refused(at, Why::Symlink)));
                    }
                    if !meta.is_dir() {
                        return Err(WriteError::Refused(self.refused(at, Why::NotADirectory)));
                    }
                }
                Err(e) => return Err(io(&at, e)),
            }
        }
        Ok(())
    }

    /// This directory, made (checked first) if it is not there.
    pub fn create_dir(&self) -> Result<(), WriteError> {
        self.check().map_err(WriteError::Refused)?;
        self.make_dirs(true)
    }

    /// Writes the file atomically: [`OutputPath::stage`], then [`Staged::commit`].
    pub fn write(&self, bytes: &[u8]) -> Result<(), WriteError> {
        self.stage(bytes)?.commit()
    }

    /// The temporary sibling the file is renamed from, written and synced: created new, never
    /// through a symlink, with mode 0666 less the user's umask, as any file a command writes.
    pub fn stage(&self, bytes: &[u8]) -> Result<Staged, WriteError> {
        self.stage_with_mode(bytes, 0o666)
    }

    /// [`OutputPath::stage`] with another mode (a private key's 0600, from the first byte).
    pub fn stage_with_mode(&self, bytes: &[u8], mode: u32) -> Result<Staged, WriteError> {
        self.check().map_err(WriteError::Refused)?;
        self.make_dirs(false)?;
        let dir = self.path.parent().unwrap_or(Path::new("/"));
        let mut tmp = tempfile::Builder::new()
            .prefix(".shipmoor-tmp-")
            .make_in(dir, |p| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(mode)
                    .custom_flags(libc::O_NOFOLLOW)
                    .open(p)
            })
            .map_err(|e| io(dir, e))?;
        let written = tmp.as_file_mut().write_all(bytes);
        written.map_err(|e| io(tmp.path(), e))?;
        tmp.as_file().sync_all().map_err(|e| io(tmp.path(), e))?;
        Ok(Staged {
            tmp,
            out: self.clone(),
        })
    }
}

/// A staged output: the temporary file beside its place (removed if never committed).
pub struct Staged {
    tmp: tempfile::NamedTempFile<File>,
    out: OutputPath,
}

impl Staged {
    /// Renames the file into place, the place checked once more (a rename would replace a
    /// symlink there rather than follow it, which would still change the user's checkout).
    pub fn commit(self) -> Result<(), WriteError> {
        self.out.check().map_err(WriteError::Refused)?;
        let path = self.out.path.clone();
        self.tmp.persist(&path).map_err(|e| io(&path, e.error))?;
        Ok(())
    }
}

impl Staged {
    /// Where the file goes.
    pub fn path(&self) -> &Path {
        &self.out.path
    }
}

/// The directories a write is about to create (every missing ancestor of its outputs), so that
/// a write that does not complete removes them again and leaves nothing.
pub struct NewDirs(Vec<PathBuf>);

impl NewDirs {
    /// The missing ancestors of `files`, deepest first.
    pub fn of<'a>(files: impl IntoIterator<Item = &'a Path>) -> NewDirs {
        let mut dirs = Vec::new();
        for file in files {
            let mut at = file.parent();
            while let Some(dir) = at {
                if dir.as_os_str().is_empty() || std::fs::symlink_metadata(dir).is_ok() {
                    break;
                }
                dirs.push(dir.to_path_buf());
                at = dir.parent();
            }
        }
        dirs.sort();
        dirs.dedup();
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        NewDirs(dirs)
    }

    /// Removes each of them that is empty (the staged files are removed first).
    pub fn remove(&self) {
        for dir in &self.0 {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn io(path: &Path, error: std::io::Error) -> WriteError {
    WriteError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// Writes the file at `path` atomically, through no symlink below the user's own directories
/// (see the module doc); `repository`, the root of the repository the command works on.
pub fn write_atomic(
    path: &Path,
    repository: Option<&Path>,
    bytes: &[u8],
) -> Result<(), WriteError> {
    OutputPath::file(path, repository).write(bytes)
}

/// `path` resolved as the file system resolves it, symlink by symlink, and whether a symlink
/// in the repository (under `root`, canonical) was followed on the way. `None`: a part of it
/// does not exist, or the symlinks loop.
fn resolve(path: &Path, root: Option<&Path>) -> Option<(PathBuf, bool)> {
    let mut pending: Vec<std::ffi::OsString> = path
        .components()
        .rev()
        .map(|c| c.as_os_str().to_os_string())
        .collect();
    let mut real = PathBuf::from("/");
    let mut through_repository = false;
    let mut hops = 0;
    while let Some(c) = pending.pop() {
        match Path::new(&c).components().next() {
            Some(Component::RootDir) => real = PathBuf::from("/"),
            Some(Component::ParentDir) => {
                real.pop();
            }
            Some(Component::Normal(name)) => {
                let next = real.join(name);
                let meta = std::fs::symlink_metadata(&next).ok()?;
                if !meta.file_type().is_symlink() {
                    real = next;
                    continue;
                }
                hops += 1;
                if hops > 40 {
                    return None;
                }
                if root.is_some_and(|r| real.starts_with(r)) {
                    through_repository = true;
                }
                let target = std::fs::read_link(&next).ok()?;
                pending.extend(
                    target
                        .components()
                        .rev()
                        .map(|c| c.as_os_str().to_os_string()),
                );
            }
            _ => {}
        }
    }
    Some((real, through_repository))
}

/// `path` made absolute (from the current directory) with `.` and `..` resolved by name.
fn normalize(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

impl Refused {
    /// `at` as messages show it: from the repository's root when it is in the repository.
    pub fn shown_at(&self) -> String {
        shown(&self.at, self.repository.as_deref())
    }

    /// The input error for the output `flag` names (`--evidence-dir`, say): what is in the way
    /// and how to clear it.
    pub fn input_error(&self, flag: &str) -> InputError {
        let at = self.shown_at();
        let output = shown(&self.output, self.repository.as_deref());
        let on_the_way = if self.at == self.output {
            String::new()
        } else {
            format!(" on the way to {output}")
        };
        let (what, fix) = match self.why {
            Why::Symlink => (
                format!("{at} is a symlink{on_the_way}, and no output is written through a symlink (it could point anywhere)"),
                match &self.repository {
                    Some(_) => format!("remove the symlink from the repository (`git rm {at}`, then commit)"),
                    None => format!("remove the symlink {at}"),
                },
            ),
            Why::NotADirectory => (
                format!("{at} is a file, not a directory{on_the_way}"),
                format!("remove {at}"),
            ),
            Why::NotAFile => (
                format!("{at} is not a regular file"),
                format!("remove {at}"),
            ),
        };
        InputError::new(format!("cannot write {flag} {output}: {what}"))
            .help(format!("{fix}, or choose another output path with {flag}"))
    }
}

fn shown(path: &Path, repository: Option<&Path>) -> String {
    repository
        .and_then(|r| path.strip_prefix(r).ok())
        .filter(|r| !r.as_os_str().is_empty())
        .unwrap_or(path)
        .display()
        .to_string()
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.shown_at();
        match self.why {
            Why::Symlink => write!(f, "{at} is a symlink"),
            Why::NotADirectory => write!(f, "{at} is a file, not a directory"),
            Why::NotAFile => write!(f, "{at} is not a regular file"),
        }
    }
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::Refused(r) => write!(
                f,
                "cannot write {}: {r}, and no output is written through a symlink or over another kind of file",
                r.output.display()
            ),
            WriteError::Io { path, error } => write!(f, "cannot write {}: {error}", path.display()),
        }
    }
}

impl std::error::Error for WriteError {}

impl WriteError {
    /// The command's error: a path in the way is the user's to clear (exit 2), any other
    /// failure to write an internal error (exit 3). `flag` names the output, when a flag does.
    pub fn into_error(self, flag: Option<&str>) -> Error {
        match self {
            WriteError::Refused(r) => match flag {
                Some(flag) => Error::input(r.input_error(flag)),
                None => Error::input(
                    InputError::new(WriteError::Refused(r.clone()).to_string()).help(format!(
                        "remove {} (or choose another path for the output)",
                        r.shown_at()
                    )),
                ),
            },
            WriteError::Io { path, error } if is_operator_fault(&error) => {
                let fix = match flag {
                    Some(flag) => format!(", or choose another output path with {flag}"),
                    None => String::new(),
                };
                Error::input(
                    InputError::new(format!("cannot write {}: {error}", path.display())).help(
                        format!("{}{fix}; nothing was written", operator_fix(&error, &path)),
                    ),
                )
            }
            io => Error::crash(io),
        }
    }
}

impl From<WriteError> for Error {
    fn from(e: WriteError) -> Self {
        e.into_error(None)
    }
}

/// Why a file from elsewhere was not read.
#[derive(Debug)]
pub enum ReadError {
    /// Nothing there (the error says so).
    Missing(std::io::Error),
    Symlink,
    /// A directory, a FIFO, a device, a socket: named by kind.
    NotRegular(&'static str),
    /// Where a directory was looked for: named by kind.
    NotADirectory(&'static str),
    TooLarge {
        size: u64,
        limit: u64,
    },
    Io(std::io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Missing(e) => write!(f, "is missing: {e}"),
            ReadError::Symlink => write!(f, "is a symlink, which is never followed"),
            ReadError::NotRegular(kind) => write!(f, "is a {kind}, not a regular file"),
            ReadError::NotADirectory(kind) => write!(f, "is a {kind}, not a directory"),
            ReadError::TooLarge { size, limit } => {
                write!(f, "is {size} bytes, over the limit of {limit}")
            }
            ReadError::Io(e) => write!(f, "cannot be read: {e}"),
        }
    }
}

fn kind(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_symlink() {
        Some("symlink")
    } else if t.is_dir() {
        Some("directory")
    } else if t.is_fifo() {
        Some("FIFO")
    } else if t.is_char_device() || t.is_block_device() {
        Some("device")
    } else if t.is_socket() {
        Some("socket")
    } else if !t.is_file() {
        Some("special file")
    } else {
        None
    }
}

/// The bytes of the regular file `path`, at most `limit` of them: a symlink, a directory, a
/// FIFO or a device is refused before it is opened; the file is opened with `O_NOFOLLOW` (and
/// `O_NONBLOCK`, so that a FIFO put in its place meanwhile cannot hold the read), and what was
/// opened is checked to be the regular file looked at.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::Missing(e),
        _ => ReadError::Io(e),
    })?;
    if meta.file_type().is_symlink() {
        return Err(ReadError::Symlink);
    }
    if let Some(k) = kind(&meta) {
        return Err(ReadError::NotRegular(k));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // What was looked at became a symlink.
            Some(libc::ELOOP) => ReadError::Symlink,
            _ => ReadError::Io(e),
        })?;
    let opened = file.metadata().map_err(ReadError::Io)?;
    if let Some(k) = kind(&opened) {
        return Err(ReadError::NotRegular(k));
    }
    if opened.dev() != meta.dev() || opened.ino() != meta.ino() {
        return Err(ReadError::Io(std::io::Error::other(
            "it was replaced while being read",
        )));
    }
    let mut bytes = Vec::with_capacity(opened.len().min(limit) as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// A file the user names on the command line (an attestation, a key, a policy): a symlink is
/// followed, as the user chose it, but only a regular file is read, opened without blocking (a
/// FIFO or a device would hang the command or never end), and only up to `limit` bytes.
pub fn read_named(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ReadError::Missing(e),
            _ => ReadError::Io(e),
        })?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if let Some(k) = kind(&meta) {
        return Err(ReadError::NotRegular(k));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// The input error for a named file [`read_named`] refused: `what` it is (`the attestation`),
/// the file, why, and the fix.
pub fn named_input_error(path: &Path, what: &str, e: &ReadError) -> InputError {
    InputError::new(format!("{what} {e}"))
        .in_file(path.display().to_string())
        .help(read_help(what, e))
}

/// The fix for `what` that [`read_named`] could not read.
pub fn read_help(what: &str, e: &ReadError) -> String {
    match e {
        ReadError::Missing(_) => format!("check the path of {what}"),
        ReadError::NotRegular(_) | ReadError::NotADirectory(_) | ReadError::Symlink => {
            format!("pass {what} as a regular file")
        }
        ReadError::TooLarge { limit, .. } => {
            format!("{what} is never that large: pass the right file (at most {limit} bytes)")
        }
        ReadError::Io(_) => format!("make {what} readable for this user"),
    }
}

/// The directory `path`, when it is one and no symlink (`Ok(false)`: nothing there).
pub fn is_real_dir(path: &Path) -> Result<bool, ReadError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(ReadError::Symlink),
        Ok(m) if m.is_dir() => Ok(true),
        Ok(m) => Err(ReadError::NotADirectory(kind(&m).unwrap_or("file"))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(ReadError::Io(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_symlinked_directory_in_the_repository_is_refused_and_nothing_is_written_there() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("repo");
        let elsewhere = t.path().join("elsewhere");
        std::fs::create_dir_all(repo.join(".shipmoor")).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        symlink(&elsewhere, repo.join(".shipmoor/evidence")).unwrap();
        let out = OutputPath::dir(&repo.join(".shipmoor/evidence"), Some(&repo));
        let refused = out.check().unwrap_err();
        assert_eq!(refused.why, Why::Symlink);
        assert_eq!(refused.shown_at(), ".shipmoor/evidence");
        let item = out.child_dir("sha256").child_file(&"a".repeat(64));
        assert!(matches!(item.write(b"x"), Err(WriteError::Refused(_))));
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
        let e = refused.input_error("--evidence-dir");
        assert!(e.message.contains(".shipmoor/evidence is a symlink"), "{e}");
        assert!(e.help.unwrap().contains("git rm .shipmoor/evidence"));
    }

    #[test]
    fn the_output_itself_as_a_symlink_is_refused_and_left_alone() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim.md");
        std::fs::write(&victim, "mine").unwrap();
        std::fs::create_dir_all(t.path().join("repo/.shipmoor")).unwrap();
        let report = t.path().join("repo/.shipmoor/verify.md");
        symlink(&victim, &report).unwrap();
        let out = OutputPath::file(&report, Some(&t.path().join("repo")));
        assert!(matches!(out.write(b"report"), Err(WriteError::Refused(_))));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "mine");
        assert!(std::fs::symlink_metadata(&report)
            .unwrap()
            .file_type()
            .is_symlink());
        // No temporary file is left beside it.
        assert_eq!(
            std::fs::read_dir(report.parent().unwrap()).unwrap().count(),
            1
        );
    }

    #[test]
    fn outside_the_repository_the_users_existing_directories_are_taken_as_they_are() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().join("real");
        std::fs::create_dir_all(&real).unwrap();
        // A directory of the user's own, reached through a symlink of theirs.
        symlink(&real, t.path().join("mine")).unwrap();
        let out = OutputPath::file(&t.path().join("mine/new/vsa.json"), None);
        out.write(b"{}").unwrap();
        assert_eq!(std::fs::read(real.join("new/vsa.json")).unwrap(), b"{}");
        // A symlink made later below that directory is refused.
        let later = OutputPath::file(&t.path().join("mine/later/vsa.json"), None);
        symlink(t.path(), real.join("later")).unwrap();
        assert_eq!(later.check().unwrap_err().why, Why::Symlink);
    }

    #[test]
    fn a_file_where_a_directory_goes_is_refused() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join(".shipmoor"), "").unwrap();
        let out = OutputPath::file(&t.path().join(".shipmoor/verify.md"), Some(t.path()));
        assert_eq!(out.check().unwrap_err().why, Why::NotADirectory);
    }

    #[test]
    fn dot_dot_is_resolved_by_name_never_through_a_symlink() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("repo/a")).unwrap();
        symlink("/", t.path().join("repo/link")).unwrap();
        let out = OutputPath::file(
            &t.path().join("repo/link/../out.json"),
            Some(&t.path().join("repo")),
        );
        assert_eq!(out.path(), t.path().join("repo/out.json"));
        out.write(b"x").unwrap();
        assert!(t.path().join("repo/out.json").is_file());
    }

    #[test]
    fn only_regular_files_are_read_and_only_up_to_the_limit() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("f");
        std::fs::write(&file, "abc").unwrap();
        assert_eq!(read_regular(&file, 3).unwrap(), b"abc");
        assert!(matches!(
            read_regular(&file, 2),
            Err(ReadError::TooLarge { .. })
        ));
        symlink(&file, t.path().join("l")).unwrap();
        assert!(matches!(
            read_regular(&t.path().join("l"), 9),
            Err(ReadError::Symlink)
        ));
        assert!(matches!(
            read_regular(t.path(), 9),
            Err(ReadError::NotRegular("directory"))
        ));
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), 9),
            Err(ReadError::NotRegular("device"))
        ));
        assert!(matches!(
            read_regular(&t.path().join("none"), 9),
            Err(ReadError::Missing(_))
        ));
    }
}
