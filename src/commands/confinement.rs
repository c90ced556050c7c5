//! The sandbox a command's floor and judges run in (book: security.md, "The sandbox"): the
//! kernel probed once, the paths every command is kept from reading, and the paths under those
//! that stay readable.
//!
//! Hidden from every command: the credential files of the person's home
//! ([`crate::sandbox::CREDENTIAL_FILES`]), the repository's checkout (its uncommitted files, the
//! evidence store, the base cache and the outputs; the worktrees hold what the commands need),
//! the temporary directory the run's own directories are made in (other runs, the judge's
//! views), and what the run names besides (the signing key, an evidence store or base cache
//! outside the repository). Readable under those: the repository's git directories (git in a
//! worktree reads them), and the directories of `PATH` and of an activated virtual environment
//! that lie inside a hidden one (the person chose those tools).

use std::path::{Path, PathBuf};

use crate::error::{Error, InputError};
use crate::git::Git;
use crate::sandbox::{canonical, Confinement, Mode, Sandbox, CREDENTIAL_FILES};

/// What a run hides beyond [`Confinement`]'s defaults, and keeps readable.
#[derive(Debug, Default)]
pub(crate) struct Extra {
    pub hide: Vec<PathBuf>,
    pub read: Vec<PathBuf>,
}

/// The confinement of a run in `mode`: the kernel probed (an input error when `require` finds
/// it lacking), the paths hidden and those kept readable.
pub(crate) fn confinement(
    mode: Mode,
    git: Option<&Git>,
    temp_base: Option<&Path>,
    extra: Extra,
) -> Result<Confinement, Error> {
    let sandbox = probe(mode)?;
    let mut hide: Vec<PathBuf> = Vec::new();
    // Every home's: root reads the others' too (a job that ran `sudo` has HOME=/root, and the
    // job's user's keys are in /home/<user>).
    for home in homes() {
        for rel in CREDENTIAL_FILES {
            let p = home.join(rel);
            if std::fs::symlink_metadata(&p).is_ok() {
                hide.push(canonical(&p));
            }
        }
    }
    let mut read: Vec<PathBuf> = extra.read.iter().map(|p| canonical(p)).collect();
    if let Some(git) = git {
        hide.push(canonical(git.root()));
        for dir in git.git_dirs()? {
            let dir = canonical(&dir);
            // Git in a worktree reads the objects and the refs; the checkout's own index
            // (what is staged), the reflogs and the stash are the person's uncommitted work,
            // and no worktree needs them. Nor the configuration, which may hold the token a
            // checkout kept for fetching: each worktree reads a copy without credentials
            // (`git::worktree`'s private common directory).
            for private in ["index", "logs", "refs/stash", "config"] {
                hide.push(dir.join(private));
            }
            read.push(dir);
        }
    }
    hide.extend(temp_base.map(canonical));
    hide.extend(extra.hide.iter().map(|p| canonical(p)));
    hide.sort();
    hide.dedup();
    // The tools the person chose, where they lie inside a hidden directory (a virtual
    // environment in the checkout, activated).
    let hidden = |p: &Path| hide.iter().any(|h| p.starts_with(h));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let chosen = std::env::split_paths(&path).chain(
        ["VIRTUAL_ENV", "CONDA_PREFIX"]
            .iter()
            .filter_map(|v| std::env::var_os(v).map(PathBuf::from)),
    );
    for p in chosen {
        if p.is_absolute() && p.exists() {
            let p = canonical(&p);
            if hidden(&p) {
                read.push(p);
            }
        }
    }
    read.sort();
    read.dedup();
    Ok(Confinement {
        sandbox: std::sync::Arc::new(sandbox),
        hide,
        read,
        write: Vec::new(),
        env: crate::sandbox::env::EnvPolicy::default(),
    })
}

/// The home directories whose credential files are hidden: `HOME`'s, root's, and every one
/// under `/home`.
fn homes() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::env::var_os("HOME")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    out.push(PathBuf::from("/root"));
    if let Ok(entries) = std::fs::read_dir("/home") {
        out.extend(entries.flatten().map(|e| e.path()));
    }
    out.sort();
    out.dedup();
    out
}

/// The sandbox `mode` asks for, on this kernel: `require` without it is an input error that
/// says what is missing and how to go on.
pub(crate) fn probe(mode: Mode) -> Result<Sandbox, Error> {
    let helper = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) if mode == Mode::Require => {
            return Err(require_error(format!(
                "the sandbox's helper (this binary) cannot be found: {e}"
            )))
        }
        Err(_) => return Ok(Sandbox::off()),
    };
    Sandbox::probe(mode, &helper).map_err(require_error)
}

fn require_error(why: impl std::fmt::Display) -> Error {
    Error::input(InputError::new(format!("--sandbox require: {why}")).help(
        "run on Linux 5.13 or newer with Landlock enabled (it is on in the kernels of GitHub's hosted runners and of most distributions; `lsm=` on the kernel command line must list landlock), or pass --sandbox auto to run with what this kernel has, or --sandbox off",
    ))
}
