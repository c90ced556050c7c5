//! What pytest could not collect, read from its own words: the `ERROR collecting <file>`
//! sections of its report and the conftests it could not load, each a [`CollectError`] with its
//! traceback. A collection error is Python's build failure: the floor attributes it (book:
//! floor/attribution.md) by the files of the worktree the traceback points into and by the
//! innermost position there (`tests/test_x.py:3: in <module>`, a `SyntaxError`'s `File "…",
//! line 4`), with the name an `ImportError: cannot import name 'x'` says is missing.

use std::collections::BTreeSet;
use std::path::Path;

use super::node_file;
use crate::floor::runners::kit::{truncate, worktree_relative};
use crate::floor::runners::{BuildFailure, Diagnostic, RunCtx};

/// One file (or node) pytest could not collect, or a conftest it could not load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CollectError {
    /// The node that failed, relative to the rootdir (`tests/test_x.py`), or the conftest's path
    /// as pytest printed it (absolute).
    pub node: String,
    pub header: String,
    pub body: String,
    /// A conftest: everything below its directory fails (pytest stops altogether).
    pub conftest: bool,
}

impl CollectError {
    /// Whether this error is why `id` could not be collected.
    pub(super) fn covers(&self, id: &str) -> bool {
        if self.conftest {
            return true;
        }
        id == self.node
            || id
                .strip_prefix(self.node.as_str())
                .is_some_and(|rest| rest.starts_with("::"))
    }

    /// Repo-relative files: the failing file, and traceback files inside the worktree (not in an
    /// installed package).
    pub(super) fn files(&self, ctx: &RunCtx) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let from_node = node_file(&self.node).map(str::to_string);
        for f in from_node.into_iter().chain(traceback_files(&self.body)) {
            if let Some(rel) = self.in_worktree(ctx, &f) {
                if !out.contains(&rel) {
                    out.push(rel);
                }
            }
        }
        out
    }
}

/// The build failure of the errors `wanted` keeps (`None` when it keeps none).
pub(super) fn build_failure(
    ctx: &RunCtx,
    errors: &[CollectError],
    wanted: impl Fn(&CollectError) -> bool,
) -> Option<BuildFailure> {
    let errors: Vec<&CollectError> = errors.iter().filter(|e| wanted(e)).collect();
    if errors.is_empty() {
        return None;
    }
    let mut files = BTreeSet::new();
    let mut excerpt = String::new();
    let mut diagnostics = Vec::new();
    for e in errors {
        files.extend(e.files(ctx));
        diagnostics.extend(e.diagnostic(ctx));
        excerpt.push_str(&e.header);
        excerpt.push('\n');
        excerpt.push_str(e.body.trim_end());
        excerpt.push_str("\n\n");
    }
    Some(BuildFailure {
        diagnostics,
        diagnostic_files: files.into_iter().collect(),
        excerpt: truncate(excerpt.trim_end(), 4000),
    })
}

/// The collection errors in a pytest run's output: `ERROR collecting` sections (stdout) and
/// conftests that could not be loaded (either stream).
pub(super) fn collect_errors(stdout: &str, stderr: &str) -> Vec<CollectError> {
    let mut errors = parse_collect_errors(stdout);
    errors.extend(parse_conftest_errors(stderr));
    errors.extend(parse_conftest_errors(stdout));
    errors
}

/// The `ERROR collecting <node>` sections of pytest's report.
pub(super) fn parse_collect_errors(text: &str) -> Vec<CollectError> {
    let mut out: Vec<CollectError> = Vec::new();
    let mut current: Option<CollectError> = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        let trimmed = line.trim_matches(|c: char| c == '_' || c == ' ');
        if line.starts_with("___") {
            if let Some(e) = current.take() {
                out.push(e);
            }
            if let Some(node) = trimmed.strip_prefix("ERROR collecting ") {
                current = Some(CollectError {
                    node: node.trim().to_string(),
                    header: trimmed.to_string(),
                    body: String::new(),
                    conftest: false,
                });
            }
            continue;
        }
        if line.starts_with("===") || line.starts_with("!!!") {
            if let Some(e) = current.take() {
                out.push(e);
            }
            continue;
        }
        if let Some(e) = current.as_mut() {
            e.body.push_str(line);
            e.body.push('\n');
        }
    }
    if let Some(e) = current.take() {
        out.push(e);
    }
    out
}

/// `ImportError while loading conftest '<path>'.` and the traceback after it.
pub(super) fn parse_conftest_errors(text: &str) -> Vec<CollectError> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line
            .trim()
            .strip_prefix("ImportError while loading conftest '")
        else {
            continue;
        };
        let Some(path) = rest.strip_suffix("'.") else {
            continue;
        };
        let body: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| !l.starts_with("ImportError while loading conftest"))
            .take(60)
            .copied()
            .collect();
        out.push(CollectError {
            node: path.to_string(),
            header: line.trim().to_string(),
            body: body.join("\n"),
            conftest: true,
        });
    }
    out
}

/// Python files a traceback points into: `path.py:12: in <module>` and `File "path.py", line 3`.
pub(super) fn traceback_files(body: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (f, _) in traceback_positions(body) {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// The name an `ImportError: cannot import name 'x' from 'm'` says is missing: only that name of
/// a `from m import a, x` fails. A missing module fails every name of the statement: none.
fn failing_import_names(message: &str) -> Vec<String> {
    message
        .strip_prefix("ImportError: cannot import name '")
        .and_then(|rest| rest.split_once('\''))
        .map(|(name, _)| vec![name.to_string()])
        .unwrap_or_default()
}

/// The positions a traceback names, in order (outermost first): pytest's `path.py:12: in f`
/// and `path.py:12: ValueError`, and Python's `File "path.py", line 3` (a `SyntaxError`'s).
fn traceback_positions(body: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for line in body.lines() {
        let line = line.trim_start_matches(['E', ' ']);
        let mut found: Option<(&str, &str)> = None;
        if let Some(i) = line.find(".py:") {
            let candidate = &line[..i + 3];
            let after = &line[i + 4..];
            if after.starts_with(|c: char| c.is_ascii_digit())
                && !candidate.contains(char::is_whitespace)
            {
                found = Some((candidate, after));
            }
        }
        if found.is_none() {
            if let Some(start) = line.find("File \"") {
                let rest = &line[start + 6..];
                if let Some(end) = rest.find("\", line ") {
                    found = Some((&rest[..end], &rest[end + 8..]));
                }
            }
        }
        if let Some((f, after)) = found {
            let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
            if let (true, Ok(n)) = (f.ends_with(".py"), digits.parse::<u32>()) {
                out.push((f.to_string(), n));
            }
        }
    }
    out
}

impl CollectError {
    /// Where the error was raised: the innermost position of the traceback inside the worktree
    /// (not an installed package, not the standard library), with the exception's line as the
    /// message. An `ImportError` of a name the module lacks is raised at the test file's import
    /// line; an error inside a module the test file imports is that module's (base's own code,
    /// or a helper), never the test's.
    pub(super) fn diagnostic(&self, ctx: &RunCtx) -> Option<Diagnostic> {
        let (file, line) = traceback_positions(&self.body)
            .into_iter()
            .rev()
            .find_map(|(f, line)| Some((self.in_worktree(ctx, &f)?, line)))?;
        let message = self
            .body
            .lines()
            .rev()
            .filter_map(|l| l.strip_prefix('E'))
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('^'))
            .unwrap_or(self.header.as_str())
            .chars()
            .take(200)
            .collect::<String>();
        Some(Diagnostic {
            file,
            line,
            column: None,
            names: failing_import_names(&message),
            message,
        })
    }

    /// A traceback path (relative to the rootdir, or absolute) as a repo-relative path, when it
    /// is a file of the worktree outside installed packages.
    fn in_worktree(&self, ctx: &RunCtx, p: &str) -> Option<String> {
        let path = Path::new(p);
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            ctx.dir.join(path)
        };
        if abs.components().any(|c| {
            matches!(
                c.as_os_str().to_str(),
                Some("site-packages" | "dist-packages")
            )
        }) {
            return None;
        }
        worktree_relative(ctx, &abs)
    }
}
