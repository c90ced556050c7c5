//! The command transport (book: judge.md): the request JSON on the judge's stdin, its answer on
//! stdout.
//!
//! The judge is someone else's program, run the way the floor runs the head commit's code
//! ([`crate::process`]): in its own process group, killed with it at the timeout, with
//! the signing secrets and the workflow command files left out of its environment, and stopped
//! once it prints more than [`OUTPUT_LIMIT`] bytes.
//!
//! It runs in a view of the head tree: an export of the head commit's objects as they are
//! ([`Git::export`]: no `export-ignore` of head's can hide a file from its judge; no `.git`, so it cannot
//! reach the repository's metadata through it, and none of the paths `exclude` keeps from the
//! judge) in a directory of our own, its files made read-only. Each worker thread has its own view, so a change is blamed on the one request
//! that made it. After each request the view is compared with what it was (every path's inode,
//! size, mode, modification and change times: a write, a chmod or a new file changes one); a
//! judge that changed anything is discarded with the paths named, and the view is made again
//! for the next request.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use super::{Ask, Identity, JudgeSpec, Reply, Transport};
use crate::error::{IoContext, IoError};
use crate::evidence::sha256_hex;
use crate::format::judge::Request;
use crate::git::{CommitId, Git};
use crate::process::{self, Limits};

/// The most a command judge may print on stdout.
pub const OUTPUT_LIMIT: usize = 1 << 20;

/// A judge reached by running a command.
pub struct CommandJudge {
    argv: Vec<String>,
    timeout: Duration,
    concurrency: usize,
    output_limit: usize,
    /// Paths the judge is never shown: left out of its view as out of its requests.
    exclude: Vec<String>,
    git: Git,
    head: CommitId,
    /// Where the views of the head tree are made (a directory of the run's own).
    scratch: PathBuf,
    identity: Identity,
    /// The sandbox the judge runs in: it reads its views, and writes only a home of its own
    /// made for each request in `scratch` and removed after it.
    confinement: crate::sandbox::Confinement,
}

impl CommandJudge {
    /// The command judge `spec` configures (`None` when it names a chat endpoint). `scratch`
    /// must be a directory of the run's own; the views are made (and removed) in it, and the
    /// judge runs in the sandbox of `confinement`, reading them and writing only a home of its
    /// own there.
    pub fn from_spec(
        spec: &JudgeSpec,
        git: &Git,
        head: &CommitId,
        scratch: &Path,
        confinement: &crate::sandbox::Confinement,
    ) -> Option<CommandJudge> {
        let Transport::Command { argv } = &spec.transport else {
            return None;
        };

        Some(CommandJudge {
            argv: argv.clone(),
            timeout: spec.timeout,
            concurrency: spec.concurrency.max(1),
            output_limit: OUTPUT_LIMIT,
            exclude: spec.exclude.clone(),
            git: git.clone(),
            head: head.clone(),
            scratch: scratch.to_path_buf(),
            identity: identity(argv, git, head),
            confinement: confinement.clone(),
        })
    }

    /// Another bound on stdout than [`OUTPUT_LIMIT`].
    pub fn with_output_limit(mut self, bytes: usize) -> CommandJudge {
        self.output_limit = bytes;
        self
    }

    /// One request in `view`: the reply, and whether the view must be made again.
    fn ask_one(&self, view: &View, request: &Request) -> (Reply, bool) {
        let failed = |reason: String| Reply::Failed { reason };
        let input = match serde_json::to_vec(request) {
            Ok(b) => b,
            Err(e) => {
                return (
                    failed(format!("the request could not be written: {e}")),
                    false,
                )
            }
        };
        let Some((program, args)) = self.argv.split_first() else {
            return (failed("the judge command is empty".to_string()), false);
        };
        // A relative program path names a file of the head tree, as the judge sees it.
        let in_view = view.root.join(program);
        let program_path = if program.contains('/') && !Path::new(program).is_absolute() {
            in_view.into_os_string()
        } else {
            program.into()
        };
        let mut cmd = Command::new(&program_path);
        cmd.args(args).current_dir(&view.root);
        // `floor.env_pass` reaches a command judge too (a forwarder's own key, say).
        for (k, v) in self.confinement.env.passed_to_judges() {
            cmd.env(k, v);
        }
        let home = match tempfile::Builder::new()
            .prefix("home-")
            .tempdir_in(&self.scratch)
        {
            Ok(h) => h,
            Err(e) => return (failed(format!("no home for the judge: {e}")), false),
        };
        cmd.env("HOME", home.path()).env("TMPDIR", home.path());
        let jail = self
            .confinement
            .jail_reading(&[home.path()], &[&self.scratch]);
        let limits = Limits {
            stdin: Some(input),
            stdout_bytes: Some(self.output_limit),
        };
        let ran = process::run_with(
            cmd,
            self.timeout,
            limits,
            process::Confine::Sandboxed(&jail),
        );
        drop(home);
        let changed = view.changes();
        let reply = match ran {
            _ if !changed.is_empty() => failed(format!(
                "the judge changed the tree it was shown ({}); its answer is discarded",
                listed(&changed)
            )),
            Err(e) => failed(format!("the judge `{program}` could not be started: {e}")),
            Ok(c) if c.interrupted => failed("the run was interrupted".to_string()),
            Ok(c) if c.timed_out => failed(format!("timeout after {} s", self.timeout.as_secs())),
            Ok(c) if c.stdout_over_limit => failed(format!(
                "output over the limit of {} bytes",
                self.output_limit
            )),
            Ok(c) => match c.exit_code {
                Some(0) => Reply::Answer {
                    body: c.stdout,
                    usage: None,
                },
                Some(code) => failed(format!(
                    "the judge exited with code {code}{}",
                    first_line(&c.stderr_lossy())
                )),
                None => failed(format!(
                    "the judge was killed by a signal{}",
                    first_line(&c.stderr_lossy())
                )),
            },
        };
        (reply, !changed.is_empty())
    }
}

impl Ask for CommandJudge {
    fn identity(&self) -> Identity {
        self.identity.clone()
    }

    fn ask_all(&self, requests: &[Request]) -> Vec<Reply> {
        let replies: Mutex<Vec<Option<Reply>>> = Mutex::new(vec![None; requests.len()]);
        let next = AtomicUsize::new(0);
        let workers = self.concurrency.min(requests.len());
        std::thread::scope(|s| {
            for w in 0..workers {
                let (replies, next) = (&replies, &next);
                s.spawn(move || {
                    let dir = self.scratch.join(format!("judge-view-{w}"));
                    let mut view = View::make(&self.git, &self.head, &self.exclude, &dir);
                    loop {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(request) = requests.get(i) else {
                            break;
                        };
                        let reply = match &view {
                            Ok(v) => {
                                let (reply, remake) = self.ask_one(v, request);
                                if remake {
                                    view = View::make(&self.git, &self.head, &self.exclude, &dir);
                                }
                                reply
                            }
                            Err(e) => Reply::Failed {
                                reason: format!(
                                    "no view of the head tree to run the judge in: {e}"
                                ),
                            },
                        };
                        if let Ok(mut r) = replies.lock() {
                            r[i] = Some(reply);
                        }
                    }
                    if let Ok(v) = view {
                        v.remove();
                    }
                });
            }
        });
        replies
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .map(|r| {
                r.unwrap_or(Reply::Failed {
                    reason: "the judge was not asked (a worker stopped)".to_string(),
                })
            })
            .collect()
    }
}

/// The identity the statement records: the argv, and the SHA-256 of the program the judge runs
/// when that is a file of the head tree (the first argument that is one: `judge.sh` itself, or
/// the script `python3` is given), else of the argv (each argument followed by a zero byte).
pub fn identity(argv: &[String], git: &Git, head: &CommitId) -> Identity {
    let program_file = argv.iter().find_map(|a| {
        let path = super::audit::inside_repository(a)?;
        git.show(head, &path)
            .ok()
            .flatten()
            .filter(|_| is_file_at(git, head, &path))
    });
    let sha256 = match program_file {
        Some(bytes) => sha256_hex(&bytes),
        None => {
            let mut joined = Vec::new();
            for a in argv {
                joined.extend_from_slice(a.as_bytes());
                joined.push(0);
            }
            sha256_hex(&joined)
        }
    };
    Identity::Command {
        argv: argv.to_vec(),
        sha256,
    }
}

/// Whether `path` is a blob (a file, not a directory) at `head`.
fn is_file_at(git: &Git, head: &CommitId, path: &str) -> bool {
    git.object_kind(head.as_str(), path)
        .is_ok_and(|k| k.as_deref() == Some("blob"))
}

fn first_line(stderr: &str) -> String {
    match stderr.lines().map(str::trim).find(|l| !l.is_empty()) {
        Some(l) => format!(": {}", l.chars().take(200).collect::<String>()),
        None => String::new(),
    }
}

fn listed(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(5).map(String::as_str).collect();
    let more = paths.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// What is compared of each path of a view: a write, a chmod, a rename or a new file changes it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    ino: u64,
    len: u64,
    mode: u32,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

/// Why no view of the head tree was made for a judge to run in.
#[derive(Debug, thiserror::Error)]
enum ViewError {
    #[error("{0}")]
    Io(#[from] IoError),
    /// `git archive` or its unpacking failed (git's error).
    #[error("{0}")]
    Export(crate::error::Error),
}

/// An export of the head tree, read-only, and what it looked like when made.
struct View {
    root: PathBuf,
    stamps: BTreeMap<String, Stamp>,
}

impl View {
    fn make(git: &Git, head: &CommitId, exclude: &[String], dir: &Path) -> Result<View, ViewError> {
        if dir.exists() {
            make_writable(dir);
            std::fs::remove_dir_all(dir).at("clear", dir)?;
        }
        std::fs::create_dir_all(dir).at("create", dir)?;
        git.export(head, dir).map_err(ViewError::Export)?;
        let excluded = super::request::exclude_set(exclude);
        for path in stamps(dir).into_keys().filter(|p| excluded.is_match(p)) {
            let p = dir.join(&path);
            let _ = std::fs::remove_file(&p).or_else(|_| std::fs::remove_dir_all(&p));
        }
        make_read_only(dir);
        Ok(View {
            root: dir.to_path_buf(),
            stamps: stamps(dir),
        })
    }

    /// The paths added, removed or changed since the view was made.
    fn changes(&self) -> Vec<String> {
        let now = stamps(&self.root);
        let mut out: Vec<String> = now
            .iter()
            .filter(|(p, s)| self.stamps.get(*p) != Some(s))
            .map(|(p, _)| p.clone())
            .chain(
                self.stamps
                    .keys()
                    .filter(|p| !now.contains_key(*p))
                    .cloned(),
            )
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn remove(self) {
        make_writable(&self.root);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Every path under `root` (the root itself as `.`), not following symlinks.
fn stamps(root: &Path) -> BTreeMap<String, Stamp> {
    use std::os::unix::fs::MetadataExt;
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let rel = p
            .strip_prefix(root)
            .map(|r| r.display().to_string())
            .unwrap_or_default();
        let rel = if rel.is_empty() { ".".to_string() } else { rel };
        out.insert(
            rel,
            Stamp {
                ino: m.ino(),
                len: m.len(),
                mode: m.mode(),
                mtime: (m.mtime(), m.mtime_nsec()),
                ctime: (m.ctime(), m.ctime_nsec()),
            },
        );
        if m.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
            }
        }
    }
    out
}

/// Takes the write bits off every file and directory (directories last, so their entries can
/// still be reached).
fn make_read_only(root: &Path) {
    set_modes(root, |mode| mode & !0o222);
}

fn make_writable(root: &Path) {
    set_modes(root, |mode| mode | 0o200);
}

fn set_modes(root: &Path, f: impl Fn(u32) -> u32) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mut dirs = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.file_type().is_symlink() {
            continue;
        }
        if m.is_dir() {
            // Writable first, so that making a view writable again can reach inside.
            let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m.mode() | 0o700));
            if let Ok(entries) = std::fs::read_dir(&p) {
                stack.extend(entries.filter_map(|e| e.ok()).map(|e| e.path()));
            }
            dirs.push((p, m.mode()));
        } else {
            let _ = std::fs::set_permissions(&p, std::fs::Permissions::from_mode(f(m.mode())));
        }
    }
    for (d, mode) in dirs.into_iter().rev() {
        let _ = std::fs::set_permissions(&d, std::fs::Permissions::from_mode(f(mode | 0o700)));
    }
}
