//! The one way this tool talks to git: a wrapper that clears the `GIT_DIR`-style variables a
//! caller's environment may carry (hooks set them), returns typed commit ids, and manages the
//! detached worktrees the floor runs in, removing them on drop and on Ctrl-C.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, InputError};

/// A full commit id (40 or 64 hex digits), as [`CommitId::parse`] and [`Git`] make it: what
/// is one has that shape, so none can reach git as an option or a revision expression. A
/// document's commit is read as a [`crate::format::Recorded`] commit, which is one only when it
/// has the shape.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CommitId(String);

impl CommitId {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn short(&self) -> &str {
        &self.0[..7.min(self.0.len())]
    }

    /// Checks the shape only: 40 or 64 lowercase hex digits.
    pub fn parse(s: &str) -> Option<CommitId> {
        let ok = (s.len() == 40 || s.len() == 64)
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        ok.then(|| CommitId(s.to_string()))
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const CLEARED_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
];

/// One entry of a commit's tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// `100644`, `100755`, `120000` (a link), `160000` (a submodule).
    pub mode: String,
    /// `blob`, `tree` or `commit`.
    pub kind: String,
    pub oid: String,
    pub path: String,
}

/// How a command that checks committed code begins its message about a working tree with
/// uncommitted changes to tracked files; the Stop hook recognises that input error by it.
pub const UNCOMMITTED: &str = "the working tree has uncommitted changes to tracked files";

/// A repository, by its top-level directory.
#[derive(Debug, Clone)]
pub struct Git {
    root: PathBuf,
    /// The git directory, named explicitly (`GIT_DIR`, with `GIT_WORK_TREE` the root) rather
    /// than found through the root's `.git`: a worktree's `.git` file lies in a directory the
    /// code under check writes, and a git command that followed it would run what that code
    /// configured (a filter, a pager) outside the sandbox.
    git_dir: Option<PathBuf>,
}

/// A git command's output.
pub struct Output {
    pub ok: bool,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Output {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).trim_end().to_string()
    }
}

fn git_command(dir: &Path, git_dir: Option<&Path>) -> Command {
    let mut cmd = Command::new("git");
    // No program the repository's configuration names runs inside a git command of ours: the
    // code under check can write `.git/config` and `.git/hooks` (a worktree shares them), and
    // would otherwise run on the next run's `git status` (fsmonitor) or `git worktree add`
    // (post-checkout), before the floor withholds anything from it.
    cmd.args([
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
    ]);
    cmd.current_dir(dir);
    for v in CLEARED_VARS {
        cmd.env_remove(v);
    }
    // Nor does a program it still names (a filter driver, a textconv) get a credential: git
    // needs none of them here, and withholds them as the floor's own commands do.
    for (name, value) in std::env::vars_os() {
        if crate::sandbox::env::is_withheld(&name, &value) {
            cmd.env_remove(name);
        }
    }
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .env("GIT_OPTIONAL_LOCKS", "0");
    if let Some(g) = git_dir {
        cmd.env("GIT_DIR", g).env("GIT_WORK_TREE", dir);
    }
    cmd
}

/// Whether a `git` program can be started here at all (the verifier image holds none), for a
/// message that says so rather than that a directory is no repository.
pub fn can_run() -> bool {
    std::process::Command::new("git")
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok()
}

fn run_git<I, S>(dir: &Path, args: I) -> Result<Output, Error>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_git_in(dir, None, args)
}

/// [`run_git`] with the git directory named explicitly (see [`Git::git_dir`]).
fn run_git_in<I, S>(dir: &Path, git_dir: Option<&Path>, args: I) -> Result<Output, Error>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = git_command(dir, git_dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            Error::input(
                InputError::new(format!("cannot run `git`: {e}"))
                    .help("install git and make sure it is on PATH"),
            )
        })?;
    Ok(Output {
        ok: out.status.success(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
    })
}

/// Whether `rev` is a plain branch name to look for among the remote-tracking branches (no
/// revision syntax, no glob that `for-each-ref` would expand).
fn remote_safe(rev: &str) -> bool {
    !rev.is_empty()
        && rev != "HEAD"
        && !rev.starts_with('-')
        && !rev
            .chars()
            .any(|c| matches!(c, '*' | '?' | '[' | '^' | '~' | ':' | '@' | '{' | ' '))
}

/// The command [`Git::tracked`] runs, as evidence shows it.
pub const TRACKED_COMMAND: &[&str] = &["git", "ls-files", "-z", "--stage"];

/// A tracked file, as the index lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tracked {
    /// Relative to the checkout's root, `/`-separated.
    pub path: String,
    /// A regular file (mode 100644 or 100755), not a symbolic link or a submodule. Read from
    /// the index, so that a reader needs no `stat` per file.
    pub regular: bool,
}

impl Git {
    /// Opens the repository that holds `dir`.
    pub fn discover(dir: &Path) -> Result<Git, Error> {
        if !dir.is_dir() {
            return Err(Error::input(
                InputError::new(format!("`{}` is not a directory", dir.display()))
                    .help("pass the repository to check with --repo"),
            ));
        }
        let out = run_git(dir, ["rev-parse", "--show-toplevel"])?;
        if !out.ok {
            return Err(Error::input(
                InputError::new(format!(
                    "`{}` is not inside a git repository",
                    dir.display()
                ))
                .help("run claim-check inside a git checkout, or pass one with --repo"),
            ));
        }
        Ok(Git {
            root: PathBuf::from(out.text()),
            git_dir: None,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Credentials the repository's configuration holds, by key: every `http.*.extraheader`
    /// (where `actions/checkout` persists the job's token) and every URL with a password in it.
    pub fn config_credentials(&self) -> Vec<(String, String)> {
        let Ok(out) = self.run(["config", "--null", "--get-regexp", "."]) else {
            return Vec::new();
        };
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.split('\0')
            .filter_map(|entry| entry.split_once('\n'))
            .filter_map(|(key, value)| {
                let credential = key.ends_with(".extraheader")
                    || (value.contains("://") && value.contains('@') && value.contains(':'));
                credential.then(|| (key.to_string(), value.to_string()))
            })
            .collect()
    }

    /// A value of the person's global git configuration (`git config --global --get KEY`).
    pub fn global_value(key: &str) -> Option<String> {
        let out = run_git(Path::new("/"), ["config", "--global", "--get", key]).ok()?;
        (out.ok && !out.text().is_empty()).then(|| out.text())
    }

    /// The repository's git directory and its common directory (the same, but for a linked
    /// worktree's checkout), as absolute paths: what git in a worktree of it reads.
    pub fn git_dirs(&self) -> Result<Vec<PathBuf>, Error> {
        let out = self.run(["rev-parse", "--absolute-git-dir", "--git-common-dir"])?;
        if !out.ok {
            return Err(Error::crash(format!(
                "git rev-parse --git-common-dir: {}",
                out.stderr
            )));
        }
        let mut dirs: Vec<PathBuf> = out
            .text()
            .lines()
            .map(|l| {
                let p = PathBuf::from(l);
                if p.is_absolute() {
                    p
                } else {
                    self.root.join(p)
                }
            })
            .collect();
        dirs.dedup();
        Ok(dirs)
    }

    fn run<I, S>(&self, args: I) -> Result<Output, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        run_git_in(&self.root, self.git_dir.as_deref(), args)
    }

    /// Resolves a revision to a commit id; `what` names it in the error (`--base`, say).
    pub fn resolve(&self, rev: &str, what: &str) -> Result<CommitId, Error> {
        let out = self.run([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ])?;
        let text = out.text();
        match CommitId::parse(&text) {
            Some(id) if out.ok => Ok(id),
            _ => Err(Error::input(self.unresolved(rev, what)?)),
        }
    }

    /// Why `rev` names no commit, with the fix for the common causes: a repository with no
    /// commit yet, a branch that exists only as a remote-tracking one (a CI checkout has
    /// `origin/main` and no `main`), a shallow clone.
    fn unresolved(&self, rev: &str, what: &str) -> Result<InputError, Error> {
        let any_commit = self.run(["rev-list", "-n", "1", "--all"])?;
        if any_commit.ok && any_commit.text().is_empty() {
            let named = if what == rev {
                format!("`{rev}`")
            } else {
                format!("{what} `{rev}`")
            };
            return Ok(InputError::new(format!(
                "the repository has no commits yet, so {named} names none"
            ))
            .help("claim-check compares two commits: commit the code the change starts from (`git add -A && git commit -m base`), then the change, and run it again"));
        }
        let tracking = if remote_safe(rev) {
            let refs = self.run([
                "for-each-ref",
                "--format=%(refname:short)",
                &format!("refs/remotes/*/{rev}"),
            ])?;
            // `*` in the pattern also crosses `/`: keep `<remote>/<rev>` exactly.
            refs.text()
                .lines()
                .find(|t| t.split_once('/').map(|(_, branch)| branch) == Some(rev))
                .map(str::to_string)
        } else {
            None
        };
        if let Some(tracking) = tracking {
            let pass = if what.starts_with("--") {
                format!("pass `{what} {tracking}`")
            } else {
                format!("use `{tracking}`")
            };
            return Ok(InputError::new(format!(
                "{what} `{rev}` is not a commit in this repository: there is no local branch `{rev}`, only the remote-tracking `{tracking}`"
            ))
            .help(format!("{pass} (or create the branch: `git branch {rev} {tracking}`)")));
        }
        Ok(InputError::new(format!("{what} `{rev}` is not a commit in this repository"))
            .help("pass a commit id, branch or tag that exists here; in a shallow clone fetch it first (`git fetch --unshallow` or `fetch-depth: 0`)"))
    }

    pub fn is_ancestor(&self, ancestor: &CommitId, of: &CommitId) -> Result<bool, Error> {
        Ok(self
            .run([
                "merge-base",
                "--is-ancestor",
                ancestor.as_str(),
                of.as_str(),
            ])?
            .ok)
    }

    pub fn merge_base(&self, a: &CommitId, b: &CommitId) -> Result<Option<CommitId>, Error> {
        let out = self.run(["merge-base", a.as_str(), b.as_str()])?;
        Ok(if out.ok {
            CommitId::parse(&out.text())
        } else {
            None
        })
    }

    /// The messages of the commits of `base..head`, oldest first, each with its commit.
    pub fn messages(
        &self,
        base: &CommitId,
        head: &CommitId,
    ) -> Result<Vec<(CommitId, String)>, Error> {
        // Each message ends with a record separator, which a message does not hold.
        let out = self.run([
            "log",
            "--reverse",
            "--format=%H%x00%B%x1e",
            &format!("{}..{}", base.as_str(), head.as_str()),
        ])?;
        if !out.ok {
            return Err(Error::crash(format!(
                "git log {}..{}: {}",
                base.short(),
                head.short(),
                out.stderr.trim()
            )));
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .split('\x1e')
            .filter_map(|record| {
                let (sha, message) = record.trim_start_matches('\n').split_once('\0')?;
                Some((CommitId::parse(sha)?, message.to_string()))
            })
            .collect())
    }

    /// The default branch: `origin/HEAD`'s target, else `main`, `master`, `origin/main`,
    /// `origin/master`, whichever exists first.
    pub fn default_branch(&self) -> Result<Option<String>, Error> {
        let out = self.run(["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"])?;
        if out.ok {
            let r = out.text();
            if let Some(name) = r.strip_prefix("refs/remotes/") {
                return Ok(Some(name.to_string()));
            }
        }
        for cand in ["main", "master", "origin/main", "origin/master"] {
            if self
                .run([
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{cand}^{{commit}}"),
                ])?
                .ok
            {
                return Ok(Some(cand.to_string()));
            }
        }
        Ok(None)
    }

    /// Tracked files with uncommitted changes (staged or not), as `git status` shows them,
    /// leaving out paths for which `ignore` says yes. A command that refuses them says so with
    /// [`UNCOMMITTED`].
    pub fn dirty_tracked(&self, ignore: impl Fn(&str) -> bool) -> Result<Vec<String>, Error> {
        let out = self.run([
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=no",
            "--ignore-submodules=all",
        ])?;
        if !out.ok {
            return Err(Error::crash(format!("git status failed: {}", out.stderr)));
        }
        Ok(out
            .stdout
            .split(|b| *b == 0)
            .filter(|e| e.len() > 3)
            .map(|e| String::from_utf8_lossy(&e[3..]).into_owned())
            .filter(|p| !ignore(p))
            .collect())
    }

    /// Files changed from `base` to `head` (renames as delete + add), with git's status letter.
    pub fn changed_files(&self, base: &CommitId, head: &CommitId) -> Result<Vec<Change>, Error> {
        let out = self.run([
            "diff",
            "--name-status",
            "--no-renames",
            "-z",
            base.as_str(),
            head.as_str(),
        ])?;
        if !out.ok {
            return Err(Error::crash(format!("git diff failed: {}", out.stderr)));
        }
        let parts: Vec<&[u8]> = out.stdout.split(|b| *b == 0).collect();
        let mut changes = Vec::new();
        let mut i = 0;
        while i + 1 < parts.len() {
            let status = String::from_utf8_lossy(parts[i]).into_owned();
            let path = String::from_utf8_lossy(parts[i + 1]).into_owned();
            if let Some(c) = status.chars().next() {
                changes.push(Change {
                    status: c,
                    path: path.clone(),
                });
            }
            i += 2;
        }
        changes.sort();
        Ok(changes)
    }

    /// The unified diff from `base` to `head`.
    pub fn diff(&self, base: &CommitId, head: &CommitId) -> Result<Vec<u8>, Error> {
        let out = self.run([
            "diff",
            "--no-color",
            "--no-ext-diff",
            base.as_str(),
            head.as_str(),
        ])?;
        Ok(out.stdout)
    }

    /// Every entry of `commit`'s tree, recursively (`git ls-tree -r -z --full-tree`), or only
    /// those under the directory `under`.
    pub fn tree(&self, commit: &str, under: Option<&str>) -> Result<Vec<TreeEntry>, Error> {
        let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", commit];
        if let Some(dir) = under {
            args.extend(["--", dir]);
        }
        let out = self.run(args)?;
        if !out.ok {
            return Err(Error::crash(format!(
                "git ls-tree {commit}: {}",
                out.stderr.trim()
            )));
        }
        // `<mode> <kind> <oid>\t<path>` per entry.
        Ok(out
            .stdout
            .split(|b| *b == 0)
            .filter_map(|e| {
                let e = String::from_utf8_lossy(e);
                let (meta, path) = e.split_once('\t')?;
                let mut meta = meta.split(' ');
                Some(TreeEntry {
                    mode: meta.next()?.to_string(),
                    kind: meta.next()?.to_string(),
                    oid: meta.next()?.to_string(),
                    path: path.to_string(),
                })
            })
            .collect())
    }

    /// The paths of every file (blob or link) of `commit`'s tree, or only those under `under`.
    pub fn files(&self, commit: &str, under: Option<&str>) -> Result<Vec<String>, Error> {
        Ok(self
            .tree(commit, under)?
            .into_iter()
            .filter(|e| e.kind == "blob")
            .map(|e| e.path)
            .collect())
    }

    /// The kind of object at `path` in `commit` (`blob`, `tree`, `commit`), `None` where there
    /// is none.
    pub fn object_kind(&self, commit: &str, path: &str) -> Result<Option<String>, Error> {
        let out = self.run(["cat-file", "-t", &format!("{commit}:{path}")])?;
        Ok(out.ok.then(|| out.text()))
    }

    /// The id of the object at `path` in `commit` (a blob's or a tree's), `None` where there is
    /// none.
    pub fn object_id(&self, commit: &str, path: &str) -> Result<Option<String>, Error> {
        let out = self.run([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{commit}:{path}"),
        ])?;
        Ok(out.ok.then(|| out.text().trim().to_string()))
    }

    /// The raw commit object (`git cat-file commit`), `None` where there is no such commit.
    pub fn commit_object(&self, commit: &str) -> Result<Option<Vec<u8>>, Error> {
        let out = self.run(["cat-file", "commit", commit])?;
        Ok(out.ok.then_some(out.stdout))
    }

    /// Whether the repository holds the commit.
    pub fn has_commit(&self, commit: &str) -> bool {
        self.run(["cat-file", "-e", &format!("{commit}^{{commit}}")])
            .is_ok_and(|o| o.ok)
    }

    /// The bytes of `path` at `commit`, or `None` where it does not exist.
    pub fn show(&self, commit: &CommitId, path: &str) -> Result<Option<Vec<u8>>, Error> {
        let out = self.run(["show", &format!("{}:{}", commit.as_str(), path)])?;
        Ok(out.ok.then_some(out.stdout))
    }

    /// The bytes of each of `paths` at `commit` that is a file there, read in one `git cat-file
    /// --batch`: a path that names no file at `commit` (absent, a directory, a submodule) is
    /// not in the map. A symlink's bytes are its target.
    pub fn blobs(
        &self,
        commit: &CommitId,
        paths: &[String],
    ) -> Result<std::collections::BTreeMap<String, Vec<u8>>, Error> {
        use std::io::Write as _;
        let mut out = std::collections::BTreeMap::new();
        // A name with a line break cannot go through the batch's lines: read on its own.
        let (odd, plain): (Vec<&String>, Vec<&String>) =
            paths.iter().partition(|p| p.contains('\n'));
        for p in odd {
            if let Some(b) = self.show(commit, p)? {
                out.insert(p.clone(), b);
            }
        }
        if plain.is_empty() {
            return Ok(out);
        }
        let mut child = git_command(&self.root, self.git_dir.as_deref())
            .args(["cat-file", "--batch"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| Error::crash(format!("cannot run `git cat-file`: {e}")))?;
        let mut request = String::new();
        for p in &plain {
            request.push_str(&format!("{}:{p}\n", commit.as_str()));
        }
        let mut stdin = child.stdin.take().expect("piped stdin");
        // The answer is read while the request is written: a large answer fills the pipe.
        let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
        let answer = child
            .wait_with_output()
            .map_err(|e| Error::crash(format!("git cat-file: {e}")))?;
        let _ = writer.join();
        // Per request: `<oid> <type> <size>\n<bytes>\n`, or `<name> missing\n`.
        let mut rest = answer.stdout.as_slice();
        for p in plain {
            let Some(nl) = rest.iter().position(|b| *b == b'\n') else {
                break;
            };
            let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
            rest = &rest[nl + 1..];
            let mut words = header.rsplitn(3, ' ');
            let (size, kind) = (words.next(), words.next());
            let Some(size) = size.and_then(|s| s.parse::<usize>().ok()) else {
                continue;
            };
            if rest.len() < size {
                break;
            }
            if kind == Some("blob") {
                out.insert(p.clone(), rest[..size].to_vec());
            }
            rest = rest.get(size + 1..).unwrap_or_default();
        }
        Ok(out)
    }

    /// The tracked files of this checkout or worktree, relative to its root, as the index lists
    /// them ([`TRACKED_COMMAND`]): a path in conflict once.
    pub fn tracked(&self) -> Result<Vec<Tracked>, Error> {
        let out = self.run(["ls-files", "-z", "--stage", "--full-name"])?;
        if !out.ok {
            return Err(Error::crash(format!("git ls-files failed: {}", out.stderr)));
        }
        let mut files: Vec<Tracked> = out
            .stdout
            .split(|b| *b == 0)
            .filter_map(|entry| {
                // `<mode> <object> <stage>\t<path>`
                let tab = entry.iter().position(|b| *b == b'\t')?;
                let (meta, path) = (&entry[..tab], &entry[tab + 1..]);
                Some(Tracked {
                    path: String::from_utf8_lossy(path).into_owned(),
                    regular: meta.starts_with(b"100"),
                })
            })
            .collect();
        // A path in conflict has an index entry per stage.
        files.dedup_by(|a, b| a.path == b.path);
        Ok(files)
    }

    /// The paths at `commit` whose text matches the extended regular expression `pattern`,
    /// case-folded (`git grep -l -i -E`), in git's order.
    pub fn grep_files(&self, commit: &CommitId, pattern: &str) -> Result<Vec<String>, Error> {
        let out = self.run(["grep", "-l", "-i", "-E", pattern, commit.as_str()])?;
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text
            .lines()
            .map(|l| l.split_once(':').map(|(_, p)| p).unwrap_or(l).to_string())
            .collect())
    }

    /// `git status` entries (`XY path`) of tracked files that differ from the index or the
    /// commit checked out.
    pub fn status_entries(&self) -> Result<Vec<String>, Error> {
        let out = self.run(["status", "--porcelain=v1", "-z", "--untracked-files=no"])?;
        if !out.ok {
            return Err(Error::crash(format!(
                "git status in a worktree: {}",
                out.stderr
            )));
        }
        Ok(out
            .stdout
            .split(|b| *b == 0)
            .filter(|e| e.len() > 3)
            .map(|e| String::from_utf8_lossy(e).into_owned())
            .collect())
    }

    /// Checks out `paths` as `commit` holds them into this checkout (`git checkout <commit> --
    /// <paths>`), a few hundred at a time; `Err` carries git's message.
    pub fn checkout_paths(&self, commit: &CommitId, paths: &[String]) -> Result<(), CheckoutError> {
        for chunk in paths.chunks(200) {
            let mut args: Vec<String> = vec!["checkout".into(), commit.to_string(), "--".into()];
            args.extend(chunk.iter().cloned());
            let out = self.run(&args).map_err(CheckoutError::Run)?;
            if !out.ok {
                return Err(CheckoutError::Git(out.stderr));
            }
        }
        Ok(())
    }

    /// The unified diff from `base` to `head` with renames as a deletion and an addition and
    /// paths unquoted (`core.quotePath=false`), or only `path`'s (named literally).
    pub fn diff_without_renames(
        &self,
        base: &CommitId,
        head: &CommitId,
        path: Option<&str>,
    ) -> Result<String, Error> {
        let out = match path {
            None => self.run([
                "-c",
                "core.quotePath=false",
                "diff",
                "--no-color",
                "--no-ext-diff",
                "--no-renames",
                base.as_str(),
                head.as_str(),
            ])?,
            Some(path) => {
                return Ok(String::from_utf8_lossy(
                    &self
                        .run([
                            "diff".to_string(),
                            "--no-color".to_string(),
                            "--no-ext-diff".to_string(),
                            "--no-renames".to_string(),
                            base.to_string(),
                            head.to_string(),
                            "--".to_string(),
                            format!(":(literal){path}"),
                        ])?
                        .stdout,
                )
                .into_owned())
            }
        };
        if !out.ok {
            return Err(Error::crash(format!("git diff failed: {}", out.stderr)));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The branch checked out (`git symbolic-ref --short HEAD`), `None` when HEAD is detached
    /// or git cannot tell.
    pub fn current_branch(&self) -> Option<String> {
        let out = self
            .run(["symbolic-ref", "--quiet", "--short", "HEAD"])
            .ok()?;
        (out.ok && !out.text().is_empty()).then(|| out.text())
    }

    /// Writes the files of `commit`'s tree under `dir` (which must exist) exactly as the
    /// objects hold them: no attributes (`export-ignore`, `export-subst`, `eol`) and no filters
    /// apply, unlike `git archive` or a checkout, so what a reader of `dir` sees is what `git
    /// show` gives. Regular files keep their executable bit, symlinks are symlinks; submodules
    /// and paths that would leave `dir` or enter a `.git` are left out.
    pub fn export(&self, commit: &CommitId, dir: &Path) -> Result<(), Error> {
        use std::io::{BufRead, BufReader, Read, Write};
        let listing = self.run(["ls-tree", "-r", "-z", "--full-tree", commit.as_str()])?;
        if !listing.ok {
            return Err(Error::crash(format!(
                "git ls-tree failed: {}",
                listing.stderr
            )));
        }
        // `<mode> blob <oid>\t<path>` per entry.
        let blobs: Vec<(String, String, String)> = listing
            .stdout
            .split(|b| *b == 0)
            .filter_map(|e| {
                let e = String::from_utf8_lossy(e);
                let (meta, path) = e.split_once('\t')?;
                let mut meta = meta.split(' ');
                let (mode, kind, oid) = (meta.next()?, meta.next()?, meta.next()?);
                let safe = !path.starts_with('/')
                    && path.split('/').all(|p| !matches!(p, "" | "." | ".."))
                    && !path.split('/').any(|p| p.eq_ignore_ascii_case(".git"));
                (kind == "blob" && safe)
                    .then(|| (mode.to_string(), oid.to_string(), path.to_string()))
            })
            .collect();
        let crash = |what: &str, e: std::io::Error| {
            Error::crash(format!("exporting {commit}: {what}: {e}"))
        };
        let mut child = git_command(&self.root, self.git_dir.as_deref())
            .args(["cat-file", "--batch"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| crash("git cat-file", e))?;
        let mut stdin = child
            .stdin
            .take()
            .ok_or_else(|| Error::crash("git cat-file: no stdin".to_string()))?;
        let oids: Vec<String> = blobs.iter().map(|(_, oid, _)| oid.clone()).collect();
        // Written from a thread: git answers while it reads, and both pipes would fill.
        let writer = std::thread::spawn(move || {
            for oid in oids {
                if writeln!(stdin, "{oid}").is_err() {
                    break;
                }
            }
        });
        let mut out = BufReader::new(
            child
                .stdout
                .take()
                .ok_or_else(|| Error::crash("git cat-file: no stdout".to_string()))?,
        );
        for (mode, _, path) in &blobs {
            let mut header = String::new();
            out.read_line(&mut header)
                .map_err(|e| crash("reading", e))?;
            let size: usize = header
                .split_whitespace()
                .nth(2)
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| {
                    Error::crash(format!(
                        "exporting {commit}: git cat-file said `{}`",
                        header.trim()
                    ))
                })?;
            let mut bytes = vec![0; size + 1];
            out.read_exact(&mut bytes)
                .map_err(|e| crash("reading", e))?;
            bytes.truncate(size);
            let target = dir.join(path);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(|e| crash(path, e))?;
            }
            if mode == "120000" {
                let link = String::from_utf8_lossy(&bytes).into_owned();
                std::os::unix::fs::symlink(link, &target).map_err(|e| crash(path, e))?;
            } else {
                use std::os::unix::fs::PermissionsExt;
                std::fs::write(&target, &bytes).map_err(|e| crash(path, e))?;
                let perms = if mode == "100755" { 0o755 } else { 0o644 };
                std::fs::set_permissions(&target, std::fs::Permissions::from_mode(perms))
                    .map_err(|e| crash(path, e))?;
            }
        }
        let _ = writer.join();
        let _ = child.wait();
        Ok(())
    }

    /// The URL of `origin` as git has it, `None` when there is no such remote (the statement
    /// spells it with [`crate::attest::resource::canonical`]).
    pub fn origin_url(&self) -> Result<Option<String>, Error> {
        let out = self.run(["remote", "get-url", "origin"])?;
        let url = out.text();
        Ok((out.ok && !url.trim().is_empty()).then(|| url.trim().to_string()))
    }
}

/// A file changed between two commits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Change {
    /// `A`dded, `M`odified, `D`eleted, `T`ype changed.
    pub status: char,
    pub path: String,
}

mod worktree;
pub use worktree::{
    remove_left_by_killed_runs, remove_live_worktrees, RunLock, Worktree, RUN_DIR_PREFIX, RUN_LOCK,
};

/// The head tree as the citation audit reads it, in the run and in `replay`: only regular files
/// (not directories, not symlinks, not submodules) are "a file at head"; each is read once.
pub struct HeadTree<'a> {
    git: &'a Git,
    head: CommitId,
    files: BTreeSet<String>,
    cache: RefCell<HashMap<String, Option<String>>>,
}

impl<'a> HeadTree<'a> {
    pub fn read(git: &'a Git, head: &CommitId) -> Result<HeadTree<'a>, Error> {
        let files = git
            .tree(head.as_str(), None)?
            .into_iter()
            .filter(|e| matches!(e.mode.as_str(), "100644" | "100755"))
            .map(|e| e.path)
            .collect();
        Ok(HeadTree {
            git,
            head: head.clone(),
            files,
            cache: RefCell::new(HashMap::new()),
        })
    }

    /// A regular file's text at head, `None` for anything else.
    pub fn text(&self, path: &str) -> Option<String> {
        if !self.files.contains(path) {
            return None;
        }
        if let Some(hit) = self.cache.borrow().get(path) {
            return hit.clone();
        }
        let text = self
            .git
            .show(&self.head, path)
            .ok()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        self.cache
            .borrow_mut()
            .insert(path.to_string(), text.clone());
        text
    }
}

/// Many commits' trees read through [`HeadTree`], each once, as `replay` reads every recorded
/// head (a statement may name any commit the repository holds).
pub struct CommitTrees<'a> {
    git: &'a Git,
    trees: RefCell<HashMap<String, Option<HeadTree<'a>>>>,
}

impl<'a> CommitTrees<'a> {
    pub fn new(git: &'a Git) -> CommitTrees<'a> {
        CommitTrees {
            git,
            trees: RefCell::new(HashMap::new()),
        }
    }

    /// Whether the repository holds the commit.
    pub fn has_commit(&self, commit: &str) -> bool {
        self.git.has_commit(commit)
    }

    /// A regular file's text at `commit` (see [`HeadTree::text`]), `None` for anything else or
    /// a commit the repository lacks.
    pub fn text(&self, commit: &str, path: &str) -> Option<String> {
        let mut trees = self.trees.borrow_mut();
        let tree = trees.entry(commit.to_string()).or_insert_with(|| {
            let id = self.git.resolve(commit, "the recorded head").ok()?;
            HeadTree::read(self.git, &id).ok()
        });
        tree.as_ref()?.text(path)
    }
}

/// Why `git checkout <commit> -- <paths>` did not check the paths out.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// git could not be run.
    #[error("{0}")]
    Run(Error),
    /// git ran and refused: its message.
    #[error("{0}")]
    Git(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_ids_are_checked() {
        assert!(CommitId::parse(&"a".repeat(40)).is_some());
        assert!(CommitId::parse(&"a".repeat(39)).is_none());
        assert!(CommitId::parse(&"A".repeat(40)).is_none());
        assert!(CommitId::parse("HEAD").is_none());
    }
}
