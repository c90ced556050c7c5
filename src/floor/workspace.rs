//! The worktrees' files: laying head's test files over base, and noticing tracked files a run
//! rewrote. Seeding a side's cargo target dir is the Rust runners' own
//! ([`super::runners::rust::target`]).

use crate::error::{Error, IoContext};
use crate::git::{CommitId, Worktree};

/// Lock files a build or an install may rightly rewrite.
pub(super) const LOCKFILES: [&str; 7] = [
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "go.sum",
    "poetry.lock",
];
/// `git status` entries (`XY path`) of tracked files in a worktree.
pub(super) fn status_entries(wt: &Worktree) -> Result<Vec<String>, Error> {
    wt.git().status_entries()
}
/// Tracked files whose state in a worktree differs from `baseline` (its commit, with the
/// overlay where there is one), other than lock files: what a build step or a test rewrote.
pub(super) fn rewritten_files(wt: &Worktree, baseline: &[String]) -> Result<Vec<String>, Error> {
    Ok(status_entries(wt)?
        .into_iter()
        .filter(|e| !baseline.contains(e))
        .map(|e| e[3..].to_string())
        .filter(|p| !LOCKFILES.contains(&p.rsplit('/').next().unwrap_or(p)))
        .collect())
}
pub(super) fn apply_overlay(
    wt: &Worktree,
    head: &CommitId,
    take: &[String],
    delete: &[String],
) -> Result<(), Error> {
    wt.git()
        .checkout_paths(head, take)
        .map_err(|e| Error::crash(format!("cannot lay head's test files over base: {e}")))?;
    for p in delete {
        let path = wt.path().join(p);
        if path.exists() {
            std::fs::remove_file(&path).at("remove", &path)?;
        }
    }
    Ok(())
}
/// Writes the spliced source files (base's text with head's test items, book: floor/base-overlay.md) into the
/// base worktree.
pub(super) fn apply_splices(wt: &Worktree, splices: &[(String, String)]) -> Result<(), Error> {
    for (path, text) in splices {
        std::fs::write(wt.path().join(path), text).map_err(|e| {
            Error::crash(format!(
                "cannot splice head's test items into base's {path}: {e}"
            ))
        })?;
    }
    Ok(())
}
