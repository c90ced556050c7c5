//! The kit under the runner adapters: starting a command and recording it as an
//! [`Invocation`], reading why its output cannot be believed (it did not start, timed out, was
//! interrupted or killed), and showing paths relative to the worktree. Every adapter starts its
//! commands here, so each adapter is only its parsing and its id mapping; cargo's own variables
//! are added by the cargo and nextest adapters alone (`exec` in [`super::rust::cargo_meta`]).

use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::{Invocation, RunCtx};
use crate::process::{self, Captured};

/// Runs one command through [`process::run`]: cwd `cwd`, `ctx.env`, then `extra_env`; with
/// `ctx.timeout`. Recorded as an [`Invocation`] whose argv is shown relative to the worktree.
pub fn exec(
    ctx: &RunCtx,
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
    extra_env: &[(OsString, OsString)],
) -> Ran {
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(cwd);
    for (k, v) in ctx.env.iter().chain(extra_env) {
        cmd.env(k, v);
    }
    let command = display_argv(ctx, program, args);
    let confine = process::Confine::Sandboxed(&ctx.jail);
    let (captured, spawn_error) = match process::run(cmd, ctx.timeout, confine) {
        Ok(c) => (c, None),
        Err(e) => (
            Captured {
                exit_code: None,
                stderr: format!("could not start {}: {e}", program.to_string_lossy()).into_bytes(),
                duration: Duration::ZERO,
                ..Captured::default()
            },
            Some(e.to_string()),
        ),
    };
    Ran {
        invocation: Invocation {
            command,
            captured,
            results: None,
            results_type: None,
        },
        spawn_error,
    }
}

/// An exit code for messages: the number, or that a signal ended the command.
pub(super) fn code_str(code: Option<i32>) -> String {
    code.map_or_else(|| "none (killed by a signal)".into(), |c| c.to_string())
}

/// A command that ran (or could not start), recorded as an [`Invocation`].
pub struct Ran {
    pub invocation: Invocation,
    /// Why the command could not be started, when it could not.
    pub spawn_error: Option<String>,
}

impl Ran {
    pub fn captured(&self) -> &Captured {
        &self.invocation.captured
    }

    /// An operational reason the output cannot be read: the command did not start, was
    /// interrupted, timed out, or was killed by a signal.
    pub fn operational_problem(&self, what: &str) -> Option<String> {
        let c = self.captured();
        if let Some(e) = &self.spawn_error {
            return Some(format!("{what}: could not start: {e}"));
        }
        if c.interrupted {
            return Some(format!("{what}: interrupted"));
        }
        if c.timed_out {
            return Some(format!("{what}: timed out after {}s", c.duration.as_secs()));
        }
        if c.exit_code.is_none() {
            return Some(format!(
                "{what}: killed by a signal{}",
                tail_suffix(&c.stderr)
            ));
        }
        None
    }
}

/// "<what> exited with code N: <last lines of stderr>".
pub fn exit_problem(what: &str, c: &Captured) -> String {
    format!(
        "{what} exited with code {}{}",
        code_str(c.exit_code),
        tail_suffix(if c.stderr.iter().all(u8::is_ascii_whitespace) {
            &c.stdout
        } else {
            &c.stderr
        })
    )
}

fn tail_suffix(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let tail = lines[lines.len().saturating_sub(5)..].join("\n");
    format!(": {}", truncate(&tail, 1500))
}

/// Joins several problems into one text.
pub(super) fn join_problems(problems: Vec<String>) -> Option<String> {
    if problems.is_empty() {
        None
    } else {
        Some(problems.join("; "))
    }
}

/// Cuts `s` to at most `max` bytes at a character boundary, marking the cut.
pub(super) fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The argv for reports: paths inside the worktree relative to it (the worktree itself as `.`),
/// the scratch directory as `$SCRATCH`, the target directory as `$CARGO_TARGET_DIR`, and a
/// cargo package id spec of a path package (`path+file:///…/w#clamp@0.1.0`, which the floor
/// passes so that a registry package of the same name is never meant) as what a person would
/// type, `clamp@0.1.0`.
pub(super) fn display_argv(ctx: &RunCtx, program: &OsStr, args: &[OsString]) -> Vec<String> {
    let subs = display_subs(ctx, false);
    std::iter::once(program)
        .chain(args.iter().map(OsString::as_os_str))
        .map(|a| {
            let a = a.to_string_lossy();
            match a
                .strip_prefix("path+file://")
                .and_then(|_| parse_package_id(&a))
            {
                Some((name, Some(version))) => format!("{name}@{version}"),
                Some((name, None)) => name,
                None => display_arg(&a, &subs),
            }
        })
        .collect()
}

/// A tool's message as reports show it: paths inside the worktree relative to the repository
/// (the worktree itself as `.`), the scratch directory as `$SCRATCH`, whether the tool wrote
/// them as given or with links resolved.
pub(super) fn display_text(ctx: &RunCtx, text: &str) -> String {
    display_arg(text, &display_subs(ctx, true))
}

/// The substitutions of [`display_argv`], the most specific path first (a target dir inside the
/// scratch dir reads as `$CARGO_TARGET_DIR`, not `$SCRATCH/target`); with `resolved`, also each
/// path with its links resolved.
fn display_subs(ctx: &RunCtx, resolved: bool) -> Vec<(String, String)> {
    let paths = [
        (ctx.scratch.clone(), "$SCRATCH"),
        (target_dir(ctx), "$CARGO_TARGET_DIR"),
        (ctx.worktree.clone(), ""),
    ];
    let mut subs: Vec<(String, String)> = Vec::new();
    for (path, repl) in paths {
        let canonical = resolved.then(|| path.canonicalize().ok()).flatten();
        for p in std::iter::once(path).chain(canonical) {
            let p = p.to_string_lossy().into_owned();
            if p.len() > 1 && !subs.iter().any(|(q, _)| *q == p) {
                subs.push((p, repl.to_string()));
            }
        }
    }
    subs.sort_by_key(|s| std::cmp::Reverse(s.0.len()));
    subs
}

fn display_arg(arg: &str, subs: &[(String, String)]) -> String {
    let mut s = arg.to_string();
    for (path, repl) in subs {
        let path = path.trim_end_matches('/');
        let mut out = String::with_capacity(s.len());
        let mut rest = s.as_str();
        while let Some(i) = rest.find(path) {
            let after = &rest[i + path.len()..];
            let before_ok = i == 0 || !rest[..i].ends_with(is_path_char);
            if before_ok && after.starts_with('/') {
                out.push_str(&rest[..i]);
                // Inside the worktree: drop the prefix to make the path relative.
                if repl.is_empty() {
                    rest = &after[1..];
                    if rest.is_empty() {
                        out.push('.');
                    }
                } else {
                    out.push_str(repl);
                    rest = after;
                }
            } else if before_ok && !after.starts_with(is_path_char) {
                out.push_str(&rest[..i]);
                out.push_str(if repl.is_empty() { "." } else { repl });
                rest = after;
            } else {
                out.push_str(&rest[..i + path.len()]);
                rest = after;
            }
        }
        out.push_str(rest);
        s = out;
    }
    s
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '~')
}

/// `path` relative to the worktree, `/`-separated, when it lies inside it.
pub(super) fn worktree_relative(ctx: &RunCtx, path: &Path) -> Option<String> {
    relative_to(&ctx.worktree, path)
}

/// `path` relative to `base`, `/`-separated, when it lies inside it (either as given or with
/// links resolved, since runners print both).
pub(super) fn relative_to(base: &Path, path: &Path) -> Option<String> {
    let bases = [Some(base.to_path_buf()), base.canonicalize().ok()];
    let paths = [Some(path.to_path_buf()), path.canonicalize().ok()];
    for p in paths.iter().flatten() {
        for base in bases.iter().flatten() {
            if let Ok(rest) = p.strip_prefix(base) {
                if let Some(rel) = normalize_relative(rest) {
                    return Some(rel);
                }
            }
        }
    }
    None
}

/// A relative path with `.` and `..` resolved lexically; `None` when it leaves its base or is
/// empty.
pub(super) fn normalize_relative(p: &Path) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    if parts.is_empty() {
        None
    } else {
        Some(parts.join("/"))
    }
}

/// A non-empty relative path that stays below its base (no `..`, no root): a path a runner
/// printed, before it is joined to a directory of ours.
pub(super) fn safe_relative(p: &str) -> bool {
    !p.is_empty()
        && Path::new(p)
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
}

/// The target directory every cargo command uses: the caller's `CARGO_TARGET_DIR` from
/// `ctx.env`, else one in the scratch directory (never the user's, never inside the worktree).
pub(super) fn target_dir(ctx: &RunCtx) -> PathBuf {
    ctx.env
        .iter()
        .rev()
        .find(|(k, _)| k == "CARGO_TARGET_DIR")
        .map(|(_, v)| PathBuf::from(v))
        .unwrap_or_else(|| ctx.scratch.join("target"))
}

/// The package name and version in a cargo package id: the current spec form
/// (`path+file:///x/fx#fx-crate@0.1.0`, or `path+file:///x/fx-crate#0.1.0` when the name is the
/// last path segment) and the older `name version (source)` form.
pub(super) fn parse_package_id(id: &str) -> Option<(String, Option<String>)> {
    if let Some((head, _)) = id.split_once(" (") {
        let mut words = head.split_whitespace();
        let name = words.next()?.to_string();
        return Some((name, words.next().map(str::to_string)));
    }
    let (url, fragment) = match id.split_once('#') {
        Some((u, f)) => (u, Some(f)),
        None => (id, None),
    };
    let last_segment = || {
        let path = url.split('?').next().unwrap_or(url).trim_end_matches('/');
        path.rsplit('/').next().map(str::to_string)
    };
    match fragment {
        Some(f) => match f.split_once('@') {
            Some((name, version)) => Some((name.to_string(), Some(version.to_string()))),
            None if f.starts_with(|c: char| c.is_ascii_digit()) => {
                Some((last_segment()?, Some(f.to_string())))
            }
            None => Some((f.to_string(), None)),
        },
        None => Some((last_segment()?, None)),
    }
}

/// The first line of `s` that is not blank, trimmed, at most 160 characters: a command's error
/// as a runtime row or a reason shows it.
pub fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .chars()
        .take(160)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::ffi::{OsStr, OsString};
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use super::{display_argv, display_text, safe_relative, worktree_relative};
    use crate::floor::runners::RunCtx;

    fn ctx() -> RunCtx {
        RunCtx {
            worktree: PathBuf::from("/tmp/wt"),
            dir: PathBuf::from("/tmp/wt/crate"),
            scratch: PathBuf::from("/tmp/scratch/001"),
            timeout: Duration::from_secs(5),
            env: vec![(
                OsString::from("CARGO_TARGET_DIR"),
                OsString::from("/tmp/target/base"),
            )],
            jail: crate::sandbox::Jail::none(),
        }
    }

    #[test]
    fn text_display() {
        assert_eq!(
            display_text(
                &ctx(),
                "Cannot find module '../src/gone.js' imported from '/tmp/wt/crate/tests/a.test.js'\nat /tmp/wt2/x.js (/tmp/scratch/001/out.json) /tmp/wt"
            ),
            "Cannot find module '../src/gone.js' imported from 'crate/tests/a.test.js'\nat /tmp/wt2/x.js ($SCRATCH/out.json) ."
        );
    }

    #[test]
    fn argv_display() {
        let c = ctx();
        let argv = display_argv(
            &c,
            OsStr::new("/tmp/target/base/debug/deps/t-1"),
            &[
                OsString::from("--rootdir=/tmp/wt/crate"),
                OsString::from("shipmoor:/tmp/scratch/001/nextest.toml"),
                OsString::from("/tmp/wt"),
                OsString::from("/tmp/wt2/x"),
                OsString::from("/tmp/wt/tests/t.rs::a"),
                OsString::from("-p"),
                OsString::from("path+file:///tmp/wt/crate#clamp@0.1.0"),
                OsString::from("path+file:///tmp/wt/alpha#0.2.0"),
            ],
        );
        assert_eq!(
            argv,
            vec![
                "$CARGO_TARGET_DIR/debug/deps/t-1",
                "--rootdir=crate",
                "shipmoor:$SCRATCH/nextest.toml",
                ".",
                "/tmp/wt2/x",
                "tests/t.rs::a",
                "-p",
                "clamp@0.1.0",
                "alpha@0.2.0",
            ]
        );
    }

    #[test]
    fn relative_paths() {
        let c = ctx();
        assert_eq!(
            worktree_relative(&c, Path::new("/tmp/wt/crate/../tests/t.rs")).as_deref(),
            Some("tests/t.rs")
        );
        assert_eq!(worktree_relative(&c, Path::new("/tmp/wtx/a.rs")), None);
        assert_eq!(worktree_relative(&c, Path::new("/tmp/wt/../a.rs")), None);
    }

    #[test]
    fn safe_relative_paths_stay_below_their_base() {
        assert!(safe_relative("tests/a.py"));
        assert!(safe_relative("./tests/a.py"));
        assert!(!safe_relative("../a.py"));
        assert!(!safe_relative("/etc/a.py"));
        assert!(!safe_relative(""));
    }
}
