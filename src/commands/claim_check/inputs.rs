//! The input checks of the run's own flags and of the repository: the temporary directory, the
//! subjects, the commits, a dirty tree, the runners and their tools, the judge panel.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::acceptance::{self, AcceptanceSet, RunnerConfig};
use crate::attest::SubjectArg;
use crate::cli::{ClaimCheckArgs, Mode};
use crate::error::{Error, InputError};
use crate::floor;
use crate::git::{CommitId, Git};
use crate::judge::{chat::ChatJudge, Transport};

/// Where the run's temporary directory goes: `--temp-dir` (`SHIPMOOR_TMPDIR`) or the system's
/// (`TMPDIR`). It must already be a directory this user can create files in: one that is
/// missing is not made (it would outlive the run), and a read-only or full one is named here,
/// before any work, rather than found when the worktrees are made.
pub(super) fn temp_base(args: &ClaimCheckArgs) -> Result<PathBuf, Error> {
    let (temp_base, named_by) = match &args.temp_dir {
        Some(d) => (d.clone(), "--temp-dir (SHIPMOOR_TMPDIR)"),
        None => (std::env::temp_dir(), "TMPDIR"),
    };
    let unusable = |why: String, fix: &str| {
        Error::input(
            InputError::new(format!(
                "cannot use {} for temporary files ({named_by}): {why}",
                temp_base.display()
            ))
            .help(fix.to_string()),
        )
    };
    match std::fs::metadata(&temp_base) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(unusable(
                "it does not exist".into(),
                "create the directory, or pass an existing writable directory with --temp-dir",
            ))
        }
        Err(e) => return Err(unusable(e.to_string(), "pass a writable --temp-dir")),
        Ok(m) if !m.is_dir() => {
            return Err(unusable(
                "it is not a directory".into(),
                "pass a writable directory with --temp-dir",
            ))
        }
        Ok(_) => {}
    }
    // An anonymous file of one block: it leaves no trace, and fails on a read-only or full
    // file system as a worktree would.
    let probe = tempfile::tempfile_in(&temp_base)
        .and_then(|mut f| f.write_all(&[0; 4096]).and_then(|()| f.sync_all()));
    if let Err(e) = probe {
        return Err(unusable(
            e.to_string(),
            "free space there or make it writable, or pass another directory with --temp-dir",
        ));
    }
    Ok(temp_base)
}

/// A temporary directory that cannot be made: the operator's to fix (a full or read-only file
/// system, a permission) or a crash.
pub(super) fn temp_dir_error(temp_base: &Path, e: std::io::Error) -> Error {
    if crate::error::is_operator_fault(&e) {
        Error::input(
            InputError::new(format!(
                "cannot make a temporary directory in {}: {e}",
                temp_base.display()
            ))
            .help(format!(
                "{}, or pass another directory with --temp-dir",
                crate::error::operator_fix(&e, &temp_base.join("x"))
            )),
        )
    } else {
        Error::crash(format!("temporary directory: {e}"))
    }
}

pub(super) fn parse_subjects(given: &[String]) -> Result<Vec<SubjectArg>, Error> {
    given
        .iter()
        .map(|s| SubjectArg::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| {
            Error::input(
                InputError::new(format!("--subject {m}"))
                    .help("pass --subject NAME=sha256:<64 hex digits>"),
            )
        })
}

/// Base and head: two distinct commits, base an ancestor of head.
pub(super) fn commits(args: &ClaimCheckArgs, git: &Git) -> Result<(CommitId, CommitId), Error> {
    let head = match (&args.head, pull_request_sha("head")) {
        (Some(h), _) => git.resolve(h, "--head")?,
        (None, Some(sha)) => git.resolve(&sha, "the pull request's head")?,
        (None, None) => git.resolve("HEAD", "HEAD")?,
    };
    let base = match &args.base {
        Some(b) => git.resolve(b, "--base")?,
        None => default_base(git, &head)?,
    };
    if base == head {
        return Err(Error::input(
            InputError::new(format!(
                "base and head are the same commit ({})",
                head.short()
            ))
            .help("pass the commit the change starts from with --base"),
        ));
    }
    if !git.is_ancestor(&base, &head)? {
        return Err(Error::input(
            InputError::new(format!(
                "--base {} is not an ancestor of --head {}",
                base.short(),
                head.short()
            ))
            .help(
                "pass the commit the change branched from (for example `git merge-base main HEAD`)",
            ),
        ));
    }
    Ok((base, head))
}

/// When head is the checkout, its tracked files are as committed (outputs and the explicit
/// acceptance file aside): claim-check checks committed code.
pub(super) fn check_clean(
    git: &Git,
    head: &CommitId,
    located: Option<&acceptance::Located>,
) -> Result<(), Error> {
    let head_is_checkout = git.resolve("HEAD", "HEAD").ok().as_ref() == Some(head);
    if !head_is_checkout {
        return Ok(());
    }
    let acceptance_rel = located.and_then(|l| {
        l.path
            .strip_prefix(git.root())
            .ok()
            .map(|p| p.display().to_string())
    });
    let dirty =
        git.dirty_tracked(|p| floor::is_output_path(p) || acceptance_rel.as_deref() == Some(p))?;
    if dirty.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = dirty.iter().take(5).map(|s| s.as_str()).collect();
    Err(Error::input(
        InputError::new(format!(
            "{}: {}{}",
            crate::git::UNCOMMITTED,
            shown.join(", "),
            if dirty.len() > 5 { format!(" and {} more", dirty.len() - 5) } else { String::new() }
        ))
        .help("claim-check checks committed code: commit or stash the changes (`git stash`), or pass --head"),
    ))
}

/// The runners in force (the configured ones, or those detected at head) and, when anything
/// needs them, their tools and their roots at head.
/// `check_tools`: whether the runners' tools must be here (not for `fuse`, whose shards ran them).
pub(super) fn runners(
    git: &Git,
    head: &CommitId,
    set: &AcceptanceSet,
    check_tools: bool,
    confinement: &crate::sandbox::Confinement,
) -> Result<Vec<RunnerConfig>, Error> {
    // Where the runners in force were written, for messages about them.
    let runners_file = set
        .settings_files
        .get("runners")
        .cloned()
        .unwrap_or_else(|| set.display_path.clone());
    let runners = if set.runners.is_empty() {
        floor::detect_runners(git, head)?
    } else {
        set.runners.clone()
    };
    let needs_runner = !set.guard.is_empty()
        || !set.guarded_criteria().is_empty()
        || set.criteria.iter().any(floor::bind::needs_tests);
    if !needs_runner || !check_tools {
        return Ok(runners);
    }
    floor::check_tools(&runners, git.root(), &runners_file, confinement)?;
    let mut missing = Vec::new();
    for r in runners.iter().filter(|r| r.root != ".") {
        let kind = git.object_kind(head.as_str(), r.root.trim_end_matches('/'))?;
        if kind.as_deref() != Some("tree") {
            missing.push(
                InputError::new(format!("runner root `{}` is not a directory at head {}", r.root, head.short()))
                    .at(runners_file.clone(), r.line, 1)
                    .help("set `root` to the directory of the runner's project, relative to the repository"),
            );
        }
    }
    if !missing.is_empty() {
        return Err(Error::Input(missing));
    }
    Ok(runners)
}

/// Full mode's input checks: the acceptance set configures a judge, and every chat judge's key
/// variable is set (a command judge needs nothing more). Returns the chat judges so made, in
/// panel order (`None` for each command judge). Fast mode never looks at the panel.
pub(super) fn check_panel(
    mode: Mode,
    set: &AcceptanceSet,
) -> Result<Vec<Option<ChatJudge>>, Error> {
    if mode != Mode::Full {
        return Ok(Vec::new());
    }
    if set.judge.is_empty() {
        let file = set
            .settings_files
            .get("judge")
            .cloned()
            .unwrap_or_else(|| set.display_path.clone());
        return Err(Error::Input(vec![InputError::new(
            "--mode full needs a judge, and the acceptance set configures none",
        )
        .at(file, 1, 1)
        .help(
            "add a `judge:` block (for example `judge: { command: [\"python3\", \"examples/judge/forward.py\"] }`), or run with --mode fast",
        )]));
    }
    let mut judges = Vec::new();
    let mut missing = Vec::new();
    for spec in &set.judge {
        match &spec.transport {
            Transport::Command { .. } => judges.push(None),
            Transport::Chat { .. } => match ChatJudge::from_spec(spec) {
                Ok(j) => judges.push(Some(j)),
                Err(e) => missing.push(e),
            },
        }
    }
    if missing.is_empty() {
        Ok(judges)
    } else {
        Err(Error::Input(missing))
    }
}

/// The pull request's base in GitHub Actions, else the merge-base of head with the default
/// branch.
pub(crate) fn default_base(git: &Git, head: &CommitId) -> Result<CommitId, Error> {
    if let Some(sha) = pull_request_sha("base") {
        return git.resolve(&sha, "the pull request's base");
    }
    let Some(branch) = git.default_branch()? else {
        return Err(Error::input(
            InputError::new(
                "cannot tell the base commit: no default branch (origin/HEAD, main or master) here",
            )
            .help("pass the commit the change starts from with --base"),
        ));
    };
    let tip = git.resolve(&branch, "the default branch")?;
    match git.merge_base(&tip, head)? {
        Some(b) => Ok(b),
        None => Err(Error::input(
            InputError::new(format!("`{branch}` and head share no history"))
                .help("pass the commit the change starts from with --base"),
        )),
    }
}

/// The pull request's base or head commit in GitHub Actions.
fn pull_request_sha(which: &str) -> Option<String> {
    crate::action::pull_request_sha(&crate::action::event()?, which)
}
