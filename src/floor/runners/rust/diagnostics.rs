//! rustc's errors, as cargo relays them in `compiler-message`s, read into a [`BuildFailure`]:
//! the files the errors point into (repo-relative, through the workspace root that rustc prints
//! paths relative to), each error at the first position of its macro expansion chain that lies
//! in the worktree, and the names an unresolved import says cannot be imported, so that a build
//! failure counts only for the tests whose failure it is (book: floor/attribution.md).

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::cargo_meta::exec;
use crate::floor::runners::kit::{truncate, worktree_relative};
use crate::floor::runners::{BuildFailure, Diagnostic, Invocation, RunCtx};

/// One compiler error cargo relayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CompilerError {
    /// The rendered diagnostic (or its message when not rendered).
    pub rendered: String,
    /// The files its primary spans (and the macro call sites they expand from) point into, as
    /// rustc printed them: relative to the workspace root, or absolute.
    pub files: Vec<String>,
    /// Per primary span, its position and then the call sites of the macros it expands from,
    /// innermost first: the first of them inside the worktree is where the error is.
    pub positions: Vec<Vec<SpanAt>>,
    /// The first line of the error's message.
    pub message: String,
}

/// A position rustc reported: the file as it printed it, 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SpanAt {
    pub file: String,
    pub line: u32,
    pub column: Option<u32>,
}

/// The names an unresolved-import error says cannot be imported (rustc's E0432: ``unresolved
/// import `crate::a::b` ``, ``unresolved imports `x::c`, `x::d` ``), so that only the tests
/// using those names count the failure as their own (book: floor/attribution.md). Empty for other errors.
fn unresolved_names(message: &str) -> Vec<String> {
    let Some(rest) = message
        .strip_prefix("unresolved imports ")
        .or_else(|| message.strip_prefix("unresolved import "))
    else {
        return Vec::new();
    };
    rest.split(", ")
        .filter_map(|quoted| quoted.trim().strip_prefix('`')?.strip_suffix('`'))
        .filter_map(|path| path.rsplit("::").next())
        .filter(|name| !name.is_empty() && *name != "*" && *name != "self")
        .map(str::to_string)
        .collect()
}

/// The error a `compiler-message` carries, with the files and positions of its primary spans
/// and the macro call sites they expand from; `None` for warnings and notes, and for rustc's
/// closing "aborting due to …" summary.
pub(super) fn compiler_error(v: &Value) -> Option<CompilerError> {
    let message = v.get("message")?;
    let level = message.get("level").and_then(Value::as_str).unwrap_or("");
    if !level.starts_with("error") {
        return None;
    }
    let text = message.get("message").and_then(Value::as_str).unwrap_or("");
    let spans = message
        .get("spans")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // "aborting due to N previous errors" is a summary, not an error of its own.
    if spans.is_empty() && text.starts_with("aborting due to") {
        return None;
    }
    let mut files = Vec::new();
    let mut positions = Vec::new();
    for span in spans
        .iter()
        .filter(|s| s.get("is_primary").and_then(Value::as_bool) == Some(true))
    {
        // Walk from the span out through the macro expansions to the call site in user code.
        let mut cur = Some(span);
        let mut depth = 0;
        let mut chain = Vec::new();
        while let Some(s) = cur {
            if let Some(f) = s.get("file_name").and_then(Value::as_str) {
                if !f.starts_with('<') && !files.iter().any(|x| x == f) {
                    files.push(f.to_string());
                }
                let number = |k: &str| {
                    s.get(k)
                        .and_then(Value::as_u64)
                        .and_then(|n| u32::try_from(n).ok())
                };
                if let (false, Some(line)) = (f.starts_with('<'), number("line_start")) {
                    chain.push(SpanAt {
                        file: f.to_string(),
                        line,
                        column: number("column_start"),
                    });
                }
            }
            cur = s.pointer("/expansion/span");
            depth += 1;
            if depth > 64 {
                break;
            }
        }
        positions.push(chain);
    }
    let rendered = message
        .get("rendered")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
        .unwrap_or(text)
        .to_string();
    Some(CompilerError {
        rendered,
        files,
        positions,
        message: text.lines().next().unwrap_or("").trim().to_string(),
    })
}

/// The build failure: repo-relative files the errors point into, and an excerpt.
pub(super) fn build_failure(
    ctx: &RunCtx,
    errors: &[CompilerError],
    invocations: &mut Vec<Invocation>,
) -> BuildFailure {
    let needs_root = errors
        .iter()
        .flat_map(|e| &e.files)
        .any(|f| !Path::new(f).is_absolute());
    // rustc runs in the workspace root and prints member paths relative to it.
    let ws_root = if needs_root {
        workspace_root(ctx, invocations).unwrap_or_else(|| ctx.dir.clone())
    } else {
        ctx.dir.clone()
    };
    let mut files = BTreeSet::new();
    for f in errors.iter().flat_map(|e| &e.files) {
        let p = Path::new(f);
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            ws_root.join(p)
        };
        if let Some(rel) = worktree_relative(ctx, &abs) {
            files.insert(rel);
        }
    }
    // Each error once, at the first position of its chain that lies in the worktree.
    let mut diagnostics = Vec::new();
    for e in errors {
        for chain in &e.positions {
            let at = chain.iter().find_map(|p| {
                let path = Path::new(&p.file);
                let abs = if path.is_absolute() {
                    path.to_path_buf()
                } else {
                    ws_root.join(path)
                };
                worktree_relative(ctx, &abs).map(|file| Diagnostic {
                    file,
                    line: p.line,
                    column: p.column,
                    message: e.message.clone(),
                    names: unresolved_names(&e.message),
                })
            });
            if let Some(d) = at {
                if !diagnostics.contains(&d) {
                    diagnostics.push(d);
                }
            }
        }
    }
    let mut excerpt = String::new();
    for e in errors.iter().take(10) {
        excerpt.push_str(e.rendered.trim_end());
        excerpt.push_str("\n\n");
    }
    BuildFailure {
        diagnostics,
        diagnostic_files: files.into_iter().collect(),
        excerpt: truncate(excerpt.trim_end(), 4000),
    }
}

/// The workspace root, from `cargo locate-project --workspace --message-format plain`.
fn workspace_root(ctx: &RunCtx, invocations: &mut Vec<Invocation>) -> Option<PathBuf> {
    let args = ["locate-project", "--workspace", "--message-format", "plain"].map(OsString::from);
    let ran = exec(ctx, OsStr::new("cargo"), &args, &ctx.dir, &[]);
    let ok = ran.operational_problem("").is_none() && ran.captured().success();
    let out = ran.captured().stdout_lossy();
    invocations.push(ran.invocation);
    if !ok {
        return None;
    }
    let manifest = PathBuf::from(out.trim());
    manifest.parent().map(Path::to_path_buf)
}

#[cfg(test)]
mod tests;
