//! What go's build output says, read into a [`BuildFailure`]: the compiler's and vet's error
//! lines (`./x_test.go:12:3: undefined: Bar`) under their `# <pkg>` headers, each file made
//! relative to the repository root (go prints it relative to where it ran, to the package, or
//! absolute), an error that names no file standing for its package's directory, and each
//! positioned error as a [`Diagnostic`] for attribution (book: floor/attribution.md).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::test2json::fail_marker;
use crate::floor::runners::kit::{truncate, worktree_relative};
use crate::floor::runners::{first_message_line, BuildFailure, Diagnostic, RunCtx};

/// What the compiler's (and vet's) text says, per error line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Diagnostics {
    /// Files the error lines point into, as go printed them (relative to its working directory,
    /// or absolute).
    pub files: Vec<String>,
    /// For each error line that names no file, the import path of the `# <pkg>` block it is in.
    pub without_file: Vec<Option<String>>,
    /// Each error line with a position, in go's order.
    pub positioned: Vec<Positioned>,
}

/// One error line with a position, as go printed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Positioned {
    /// The file as printed (relative to where go ran, or absolute).
    pub printed: String,
    pub line: u32,
    pub column: Option<u32>,
    pub message: String,
    /// The import path of the `# <pkg>` block it is in.
    pub block: Option<String>,
}

/// Reads go's build output: `# <pkg>` headers, `path.go:12:3: message` lines, indented
/// continuation lines, and anything else as an error that names no file.
pub(super) fn parse_diagnostics(text: &str) -> Diagnostics {
    let mut d = Diagnostics::default();
    let mut block: Option<String> = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with([' ', '\t']) {
            continue;
        }
        if let Some(h) = line.strip_prefix("# ") {
            block = Some(h.split(" [").next().unwrap_or(h).trim().to_string());
            continue;
        }
        if fail_marker(line).is_some()
            || line == "FAIL"
            || line.starts_with("FAIL\t")
            || line.starts_with("ok ")
            || line.starts_with("?   ")
            || line.starts_with("note: ")
            || line.starts_with("go: downloading ")
            || line.contains("too many errors")
        {
            continue;
        }
        match diagnostic_file(line) {
            Some(f) => {
                if !d.files.iter().any(|x| x == f) {
                    d.files.push(f.to_string());
                }
                if let Some((file, l, col, message)) = diagnostic_position(line) {
                    d.positioned.push(Positioned {
                        printed: file.to_string(),
                        line: l,
                        column: col,
                        message: message.to_string(),
                        block: block.clone(),
                    });
                }
            }
            None => d.without_file.push(block.clone()),
        }
    }
    d
}

/// The file of `path.go:12:3: message` (also `vet: path.go:…`, `go.mod:3: …`, a bare
/// `path.go:12:3` position).
pub(super) fn diagnostic_file(line: &str) -> Option<&str> {
    let line = line.strip_prefix("vet: ").unwrap_or(line);
    let (path, rest) = line.split_once(':')?;
    let lineno = rest.split(':').next()?;
    let known = [".go", ".s", ".c", ".h", "go.mod", "go.work", "go.sum"];
    (!path.is_empty()
        && !path.contains(char::is_whitespace)
        && known.iter().any(|k| path.ends_with(k))
        && !lineno.is_empty()
        && lineno.chars().all(|c| c.is_ascii_digit()))
    .then_some(path)
}

/// The position and message of `path.go:12:3: message` (`path.go:12: message`, `vet: …`, a bare
/// position); `None` where [`diagnostic_file`] finds no file.
pub(super) fn diagnostic_position(line: &str) -> Option<(&str, u32, Option<u32>, &str)> {
    let file = diagnostic_file(line)?;
    let line = line.strip_prefix("vet: ").unwrap_or(line);
    let rest = line.get(file.len() + 1..)?;
    let mut parts = rest.splitn(3, ':');
    let l: u32 = parts.next()?.parse().ok()?;
    let (col, message) = match (parts.next(), parts.next()) {
        (Some(c), Some(m)) if !c.is_empty() && c.chars().all(|x| x.is_ascii_digit()) => {
            (c.parse().ok(), m)
        }
        (Some(c), Some(m)) => (None, &rest[rest.len() - c.len() - m.len() - 1..]),
        (Some(c), None) if !c.is_empty() && c.chars().all(|x| x.is_ascii_digit()) => {
            (c.parse().ok(), "")
        }
        (Some(m), None) => (None, m),
        _ => (None, ""),
    };
    Some((file, l, col, message.trim()))
}

/// Where a printed path is, repo-relative: go 1.19 prints it relative to where it runs
/// (`ctx.dir`); where no such file exists, relative to the directory of the package whose
/// `# <pkg>` block it is in (the compiler's own `./x_test.go`, in case go leaves it so).
fn locate(
    ctx: &RunCtx,
    printed: &str,
    block: Option<&str>,
    dirs: &BTreeMap<String, PathBuf>,
) -> Option<String> {
    let p = Path::new(printed);
    if p.is_absolute() || ctx.dir.join(p).is_file() {
        return resolve(ctx, &ctx.dir, printed);
    }
    match block.and_then(|b| dirs.get(b)) {
        Some(dir) if dir.join(p).is_file() => resolve(ctx, dir, printed),
        _ => resolve(ctx, &ctx.dir, printed),
    }
}

/// The diagnostics of positions inside the worktree (see [`locate`]), each once.
pub(super) fn diagnostics_in(
    ctx: &RunCtx,
    positioned: &[Positioned],
    dirs: &BTreeMap<String, PathBuf>,
) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for p in positioned {
        let Some(file) = locate(ctx, &p.printed, p.block.as_deref(), dirs) else {
            continue;
        };
        let d = Diagnostic {
            file,
            line: p.line,
            column: p.column,
            message: first_message_line(Some(&p.message), None).unwrap_or_default(),
            names: Vec::new(),
        };
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// A path go printed (relative to `base`, or absolute), repo-relative when inside the worktree.
pub(super) fn resolve(ctx: &RunCtx, base: &Path, printed: &str) -> Option<String> {
    let p = Path::new(printed);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    worktree_relative(ctx, &abs)
}

/// A directory, repo-relative (the worktree itself as `.`).
pub(super) fn dir_label(ctx: &RunCtx, dir: &Path) -> String {
    worktree_relative(ctx, dir).unwrap_or_else(|| ".".to_string())
}

/// The build failure of one command: the files its errors point into (resolved from `ctx.dir`,
/// where go ran); for an error without a file, its package's directory (`fallback` when the
/// package is unknown); and the text as the excerpt.
pub(super) fn build_failure(
    ctx: &RunCtx,
    text: &str,
    dirs: &BTreeMap<String, PathBuf>,
    fallback: &Path,
) -> BuildFailure {
    let d = parse_diagnostics(text);
    let mut files: BTreeSet<String> = d
        .files
        .iter()
        .filter_map(|f| {
            let block = d
                .positioned
                .iter()
                .find(|p| &p.printed == f)
                .and_then(|p| p.block.as_deref());
            locate(ctx, f, block, dirs)
        })
        .collect();
    for pkg in &d.without_file {
        let dir = pkg
            .as_ref()
            .and_then(|p| dirs.get(p))
            .map_or(fallback, |d| d);
        files.insert(dir_label(ctx, dir));
    }
    if files.is_empty() {
        files.insert(dir_label(ctx, fallback));
    }
    BuildFailure {
        diagnostics: diagnostics_in(ctx, &d.positioned, dirs),
        diagnostic_files: files.into_iter().collect(),
        excerpt: truncate(text.trim(), 4000),
    }
}

/// The build failures of several commands and packages as one: every file and every diagnostic
/// once, and the excerpts one after another, each that is not already in them.
pub(super) fn merge_failures(failures: Vec<BuildFailure>) -> Option<BuildFailure> {
    if failures.is_empty() {
        return None;
    }
    let mut files = BTreeSet::new();
    let mut excerpt = String::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    for f in failures {
        files.extend(f.diagnostic_files);
        for d in f.diagnostics {
            if !diagnostics.contains(&d) {
                diagnostics.push(d);
            }
        }
        if !excerpt.contains(f.excerpt.as_str()) {
            excerpt.push_str(&f.excerpt);
            excerpt.push_str("\n\n");
        }
    }
    Some(BuildFailure {
        diagnostics,
        diagnostic_files: files.into_iter().collect(),
        excerpt: truncate(excerpt.trim_end(), 4000),
    })
}
