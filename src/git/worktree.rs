//! The detached worktrees the floor runs in: removed on drop, on Ctrl-C, and, when a run was
//! killed before it could remove them (SIGKILL, a power cut), by the next run (see
//! [`remove_left_by_killed_runs`]).

use std::ffi::OsStr;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use nix::fcntl::{Flock, FlockArg};

use super::{run_git, CommitId, Git};
use crate::error::{Error, InputError};

// Worktrees registered here are removed by the Ctrl-C handler if the process must exit before
// their guards drop.
static LIVE_WORKTREES: Mutex<Vec<(PathBuf, PathBuf)>> = Mutex::new(Vec::new());

/// A detached worktree, removed (with its git metadata) when dropped.
#[derive(Debug)]
pub struct Worktree {
    repo: PathBuf,
    path: PathBuf,
    /// The worktree's own git directory (`<common dir>/worktrees/<name>`), as git named it when
    /// the worktree was made, before any command of the change ran: every git command of ours
    /// there names it, never the worktree's `.git` file, which that code can rewrite.
    git_dir: PathBuf,
    pub commit: CommitId,
}

impl Worktree {
    pub fn add(git: &Git, path: &Path, commit: &CommitId) -> Result<Worktree, Error> {
        if let Ok(mut live) = LIVE_WORKTREES.lock() {
            live.push((git.root.clone(), path.to_path_buf()));
        }
        let out = git.run([
            OsStr::new("worktree"),
            OsStr::new("add"),
            OsStr::new("--detach"),
            OsStr::new("--force"),
            path.as_os_str(),
            OsStr::new(commit.as_str()),
        ])?;
        let mut wt = Worktree {
            repo: git.root.clone(),
            path: path.to_path_buf(),
            git_dir: PathBuf::new(),
            commit: commit.clone(),
        };
        if !out.ok && is_full_or_read_only(&out.stderr) {
            return Err(Error::input(
                InputError::new(format!(
                    "cannot create a worktree at {} for {}: {}",
                    path.display(),
                    commit,
                    out.stderr.trim()
                ))
                .help(
                    "free space on the temporary directory's file system or make it writable, or pass another directory with --temp-dir",
                ),
            ));
        }
        if !out.ok {
            return Err(Error::crash(format!(
                "cannot create a worktree at {} for {}: {}",
                path.display(),
                commit,
                out.stderr
            )));
        }
        let dir = run_git(path, ["rev-parse", "--absolute-git-dir"])?;
        if !dir.ok {
            return Err(Error::crash(format!(
                "the worktree at {} names no git directory: {}",
                path.display(),
                dir.stderr
            )));
        }
        wt.git_dir = PathBuf::from(dir.text());
        private_common_dir(&wt.git_dir)?;
        Ok(wt)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A git handle inside this worktree.
    pub fn git(&self) -> Git {
        Git {
            root: self.path.clone(),
            git_dir: Some(self.git_dir.clone()),
        }
    }
}

/// Gives the worktree a common directory of its own, `<its git dir>/common`: every entry a link
/// to the repository's (refs, hooks, ...) but its objects (an alternate object store there),
/// `HEAD` (a copy) and `config`, a copy without what a checkout
/// may have left there for fetching (`http.*.extraheader`, `credential.*`, a password in a
/// URL). The sandbox hides the repository's own `config` (book: security.md), and git in the
/// worktree, the change's tests' git among it, reads this one.
fn private_common_dir(git_dir: &Path) -> Result<(), Error> {
    let crash = |what: &str, e: std::io::Error| Error::crash(format!("{what}: {e}"));
    let commondir = git_dir.join("commondir");
    let named = std::fs::read_to_string(&commondir)
        .map_err(|e| crash(&format!("cannot read {}", commondir.display()), e))?;
    let common = git_dir.join(named.trim());
    let common = common
        .canonicalize()
        .map_err(|e| crash(&format!("cannot resolve {}", common.display()), e))?;
    let private = git_dir.join("common");
    std::fs::create_dir(&private)
        .map_err(|e| crash(&format!("cannot create {}", private.display()), e))?;
    let entries = std::fs::read_dir(&common)
        .map_err(|e| crash(&format!("cannot read {}", common.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| crash(&format!("cannot read {}", common.display()), e))?;
        let name = entry.file_name();
        // Copied or made below: git refuses to clone from a repository whose `objects` is a
        // link, and to take a `HEAD` that links outside `refs/` as a repository's.
        if name == "config" || name == "HEAD" || name == "objects" {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), private.join(&name))
            .map_err(|e| crash(&format!("cannot link {}", private.display()), e))?;
    }
    std::fs::copy(common.join("HEAD"), private.join("HEAD"))
        .map_err(|e| crash(&format!("cannot copy {}", common.join("HEAD").display()), e))?;
    // The repository's objects, as an alternate object store.
    let info = private.join("objects/info");
    std::fs::create_dir_all(&info)
        .map_err(|e| crash(&format!("cannot create {}", info.display()), e))?;
    let mut alternates = common.join("objects").into_os_string().into_encoded_bytes();
    alternates.push(b'\n');
    std::fs::write(info.join("alternates"), alternates)
        .map_err(|e| crash(&format!("cannot write {}", info.display()), e))?;
    let config = private.join("config");
    std::fs::copy(common.join("config"), &config).map_err(|e| {
        crash(
            &format!("cannot copy {}", common.join("config").display()),
            e,
        )
    })?;
    redact_config(&config)?;
    // Git reads the common directory from this file, relative to the worktree's git directory.
    std::fs::write(&commondir, "common\n")
        .map_err(|e| crash(&format!("cannot write {}", commondir.display()), e))?;
    Ok(())
}

/// Removes from a copy of a repository's configuration every credential it may carry: HTTP
/// headers (`actions/checkout`'s token), credential helpers' settings, and the password of any
/// URL (`https://user:token@host/...` becomes `https://user@host/...`).
fn redact_config(config: &Path) -> Result<(), Error> {
    // `git config --file <config> ARGS`, which must succeed: a credential left in the copy is
    // one the worktree's git would hand to the change's code.
    let config_git = |args: &[&OsStr]| -> Result<String, Error> {
        let mut all = vec![
            OsStr::new("config"),
            OsStr::new("--file"),
            config.as_os_str(),
        ];
        all.extend_from_slice(args);
        let out = run_git(Path::new("/"), &all)?;
        if !out.ok {
            return Err(Error::crash(format!(
                "git config --file {} {:?}: {}",
                config.display(),
                args,
                out.stderr
            )));
        }
        Ok(out.text())
    };
    let listed = config_git(&[OsStr::new("--null"), OsStr::new("--list")])?;
    let mut unset: Vec<&str> = Vec::new();
    let mut rewrite: Vec<(&str, &str, String)> = Vec::new();
    for item in listed.split('\0').filter(|i| !i.is_empty()) {
        let (key, value) = item.split_once('\n').unwrap_or((item, ""));
        let lower = key.to_ascii_lowercase();
        if lower.starts_with("credential.")
            || (lower.starts_with("http.") && lower.ends_with(".extraheader"))
        {
            if !unset.contains(&key) {
                unset.push(key);
            }
        } else if let Some(without) = without_password(value) {
            if !rewrite.iter().any(|(k, v, _)| *k == key && *v == value) {
                rewrite.push((key, value, without));
            }
        }
    }
    for key in unset {
        config_git(&[OsStr::new("--unset-all"), OsStr::new(key)])?;
    }
    for (key, value, without) in &rewrite {
        config_git(&[
            OsStr::new("--fixed-value"),
            OsStr::new("--replace-all"),
            OsStr::new(key),
            OsStr::new(without),
            OsStr::new(value),
        ])?;
    }
    Ok(())
}

/// `scheme://user:password@host/...` without the password; `None` for any other value.
fn without_password(value: &str) -> Option<String> {
    let (scheme, rest) = value.split_once("://")?;
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let (userinfo, host) = authority.rsplit_once('@')?;
    let (user, _password) = userinfo.split_once(':')?;
    Some(format!(
        "{scheme}://{user}@{host}{}",
        &rest[authority_end..]
    ))
}

#[cfg(test)]
#[test]
fn a_urls_password_is_removed_and_nothing_else() {
    assert_eq!(
        without_password("https://x-access-token:ghs_1@github.com/a/b.git").as_deref(),
        Some("https://x-access-token@github.com/a/b.git")
    );
    assert_eq!(
        without_password("https://u:p@host:8443").as_deref(),
        Some("https://u@host:8443")
    );
    for plain in [
        "https://github.com/a/b.git",
        "https://user@github.com/a/b.git",
        "git@github.com:a/b.git",
        "https://github.com/a/b@c:d",
        "true",
    ] {
        assert_eq!(without_password(plain), None, "{plain}");
    }
}

/// Whether git's message says the disk is full, over quota or read-only (strerror's words, as
/// git prints them).
fn is_full_or_read_only(stderr: &str) -> bool {
    [
        "No space left on device",
        "Disk quota exceeded",
        "Read-only file system",
        "Permission denied",
        "File too large",
    ]
    .iter()
    .any(|m| stderr.contains(m))
}

fn remove_worktree(repo: &Path, path: &Path) {
    let _ = run_git(
        repo,
        [
            OsStr::new("worktree"),
            OsStr::new("remove"),
            OsStr::new("--force"),
            OsStr::new("--force"),
            path.as_os_str(),
        ],
    );
    if path.exists() {
        let _ = std::fs::remove_dir_all(path);
    }
    let _ = run_git(repo, ["worktree", "prune"]);
}

impl Drop for Worktree {
    fn drop(&mut self) {
        remove_worktree(&self.repo, &self.path);
        if let Ok(mut live) = LIVE_WORKTREES.lock() {
            live.retain(|(_, p)| p != &self.path);
        }
    }
}

/// Removes every worktree still registered (the Ctrl-C path).
pub fn remove_live_worktrees() {
    let live: Vec<(PathBuf, PathBuf)> = LIVE_WORKTREES
        .lock()
        .map(|mut l| std::mem::take(&mut *l))
        .unwrap_or_default();
    for (repo, path) in live {
        remove_worktree(&repo, &path);
    }
}

/// The file in a run's temporary directory that the run holds locked while it lives (the lock
/// goes with the process, however it ends), so that a later run can tell a killed run's
/// directory from a live one's.
pub const RUN_LOCK: &str = ".shipmoor-run.lock";

/// The name every run's temporary directory starts with (`tempfile`'s random tail follows).
pub const RUN_DIR_PREFIX: &str = "shipmoor-";

/// A live run's hold on its temporary directory.
pub struct RunLock {
    _lock: Flock<File>,
}

impl RunLock {
    /// Locks `dir`'s [`RUN_LOCK`] for as long as the value lives.
    pub fn hold(dir: &Path) -> std::io::Result<RunLock> {
        let file = File::create(dir.join(RUN_LOCK))?;
        let lock = Flock::lock(file, FlockArg::LockExclusiveNonblock)
            .map_err(|(_, e)| std::io::Error::from(e))?;
        Ok(RunLock { _lock: lock })
    }
}

/// What killed runs left in `temp_base`: each run directory of ours (a real directory named
/// [`RUN_DIR_PREFIX`]…, owned by this user, holding a [`RUN_LOCK`] that no process holds) is
/// removed, the worktrees of this repository registered inside it first. A directory without
/// the lock file is left alone (a run that is just starting has not made it yet), and so is
/// anything outside `temp_base`. Returns the directories removed and how many worktrees they
/// held.
pub fn remove_left_by_killed_runs(git: &Git, temp_base: &Path) -> Vec<(PathBuf, usize)> {
    let Ok(entries) = std::fs::read_dir(temp_base) else {
        return Vec::new();
    };
    let uid = nix::unistd::Uid::current().as_raw();
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(RUN_DIR_PREFIX) {
            continue;
        }
        let dir = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        use std::os::unix::fs::MetadataExt;
        if !meta.is_dir() || meta.uid() != uid || !is_abandoned(&dir) {
            continue;
        }
        let worktrees: Vec<PathBuf> = registered_worktrees(git)
            .into_iter()
            .filter(|w| w.starts_with(&dir))
            .collect();
        for w in &worktrees {
            remove_worktree(&git.root, w);
        }
        if std::fs::remove_dir_all(&dir).is_ok() {
            removed.push((dir, worktrees.len()));
        }
    }
    removed
}

/// Whether `dir`'s run lock is there and nobody holds it.
fn is_abandoned(dir: &Path) -> bool {
    let lock = dir.join(RUN_LOCK);
    let Ok(meta) = std::fs::symlink_metadata(&lock) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    match std::fs::OpenOptions::new().read(true).open(&lock) {
        Ok(f) => Flock::lock(f, FlockArg::LockExclusiveNonblock).is_ok(),
        Err(_) => false,
    }
}

/// The paths of the worktrees registered in `git`'s repository.
fn registered_worktrees(git: &Git) -> Vec<PathBuf> {
    let Ok(out) = git.run(["worktree", "list", "--porcelain", "-z"]) else {
        return Vec::new();
    };
    out.stdout
        .split(|b| *b == 0)
        .filter_map(|field| field.strip_prefix(b"worktree "))
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .collect()
}
