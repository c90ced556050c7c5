//! What `go list` says of the packages: each one's import path, directory, test files and load
//! errors, which both a listing and a run read first; the `Test*` functions a package's test
//! files declare; and the build failure of a package that cannot even be loaded.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::PathBuf;

use serde_json::Value;

use super::diagnostics::{
    diagnostic_file, diagnostic_position, diagnostics_in, dir_label, resolve, Positioned,
};
use super::{go, is_test_name};
use crate::floor::runners::kit::{exit_problem, truncate, worktree_relative};
use crate::floor::runners::Problem;
use crate::floor::runners::{BuildFailure, Invocation, RunCtx};

/// The fields `go list` reports for each package.
const LIST_FIELDS: &str =
    "-json=ImportPath,Dir,Error,DepsErrors,TestGoFiles,XTestGoFiles,InvalidGoFiles";

/// The runner arguments `go list` must see too: the ones that change which files a package has
/// or how modules resolve.
pub(super) fn list_flags(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut iter = args.iter();
    while let Some(a) = iter.next() {
        let flag = a.trim_start_matches('-');
        if !a.starts_with('-') {
            continue;
        }
        let name = flag.split('=').next().unwrap_or("");
        if !matches!(name, "tags" | "mod" | "modfile") {
            continue;
        }
        out.push(a.clone());
        if !flag.contains('=') {
            if let Some(v) = iter.next() {
                out.push(v.clone());
            }
        }
    }
    out
}

/// One package `go list` reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct GoPackage {
    pub import_path: String,
    pub dir: Option<PathBuf>,
    /// Why the package, or a package it imports, could not be loaded (or does not exist):
    /// `Error`, then `DepsErrors`. `go test` stops altogether when any package it is given has
    /// one, so such packages are never given to it.
    pub errors: Vec<LoadError>,
    /// `TestGoFiles` and `XTestGoFiles`: file names in `dir`.
    pub test_files: Vec<String>,
    /// `InvalidGoFiles`: files in `dir` that could not be loaded.
    pub invalid_files: Vec<String>,
}

/// A load error `go list -e` reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct LoadError {
    pub message: String,
    /// Where it points, as go printed it (`dir/x.go:3:2`, relative to where go ran).
    pub pos: Option<String>,
}

impl GoPackage {
    pub(super) fn has_tests(&self) -> bool {
        !self.test_files.is_empty()
    }

    /// The directory, canonical where it exists (empty when go reported none).
    pub(super) fn canonical_dir(&self) -> PathBuf {
        let dir = self.dir.clone().unwrap_or_default();
        dir.canonicalize().unwrap_or(dir)
    }

    /// The directory, when it exists inside the worktree.
    pub(super) fn dir_in(&self, ctx: &RunCtx) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        // The module root itself is inside the worktree too (its relative path is empty).
        let at_root = [Some(ctx.worktree.clone()), ctx.worktree.canonicalize().ok()]
            .iter()
            .flatten()
            .any(|w| w == dir || dir.canonicalize().ok().as_ref() == Some(w));
        (dir.is_dir() && (at_root || worktree_relative(ctx, dir).is_some())).then(|| dir.clone())
    }

    /// Each declared `Test*` name and the file that declares it (the first, in go's file order).
    pub(super) fn declared_tests(&self) -> BTreeMap<String, PathBuf> {
        let mut out = BTreeMap::new();
        let Some(dir) = &self.dir else {
            return out;
        };
        for f in &self.test_files {
            let path = dir.join(f);
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            for name in declared_in(&String::from_utf8_lossy(&bytes)) {
                out.entry(name).or_insert_with(|| path.clone());
            }
        }
        out
    }

    /// A package that cannot be loaded: the files its error names, else its directory.
    pub(super) fn load_failure(&self, ctx: &RunCtx) -> BuildFailure {
        let mut files = BTreeSet::new();
        let mut positioned: Vec<Positioned> = Vec::new();
        for e in &self.errors {
            if let Some(f) = e.pos.as_deref().and_then(diagnostic_file) {
                files.extend(resolve(ctx, &ctx.dir, f));
            }
            if let Some((f, line, col, _)) = e.pos.as_deref().and_then(diagnostic_position) {
                positioned.push(Positioned {
                    printed: f.to_string(),
                    line,
                    column: col,
                    message: e.message.clone(),
                    block: None,
                });
            }
        }
        if let Some(dir) = &self.dir {
            for f in &self.invalid_files {
                files.extend(worktree_relative(ctx, &dir.join(f)));
            }
            if files.is_empty() {
                files.insert(dir_label(ctx, dir));
            }
        }
        BuildFailure {
            diagnostics: diagnostics_in(ctx, &positioned, &BTreeMap::new()),
            diagnostic_files: files.into_iter().collect(),
            excerpt: truncate(
                &format!(
                    "{}: {}",
                    self.import_path,
                    self.errors
                        .iter()
                        .map(|e| match &e.pos {
                            Some(p) => format!("{p}: {}", e.message),
                            None => e.message.clone(),
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
                4000,
            ),
        }
    }
}

/// `go list -e <fields> <list flags> <patterns>` in `ctx.dir`; an error text when go list itself
/// failed (no module, a broken `go.mod`).
pub(super) fn go_list(
    ctx: &RunCtx,
    args: &[String],
    patterns: &[OsString],
    invocations: &mut Vec<Invocation>,
) -> Result<Vec<GoPackage>, Problem> {
    let mut argv: Vec<OsString> = vec![
        OsString::from("list"),
        OsString::from("-e"),
        OsString::from(LIST_FIELDS),
    ];
    argv.extend(list_flags(args).into_iter().map(OsString::from));
    argv.extend(patterns.iter().cloned());
    let ran = go(ctx, &argv);
    let result = if let Some(p) = ran.operational_problem("go list") {
        Err(Problem(p))
    } else if !ran.captured().success() {
        Err(Problem(exit_problem("go list", ran.captured())))
    } else {
        Ok(parse_go_list(&ran.captured().stdout_lossy()))
    };
    invocations.push(ran.invocation);
    result
}

/// The stream of JSON objects `go list -json` prints (not one per line: indented objects one
/// after another). Reading stops at the first thing that is not JSON.
pub(super) fn parse_go_list(stdout: &str) -> Vec<GoPackage> {
    let strings = |v: &Value, key: &str| -> Vec<String> {
        v.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for v in serde_json::Deserializer::from_str(stdout).into_iter::<Value>() {
        let Ok(v) = v else { break };
        let Some(import_path) = v.get("ImportPath").and_then(Value::as_str) else {
            continue;
        };
        let load_error = |e: &Value| LoadError {
            message: e
                .get("Err")
                .and_then(Value::as_str)
                .unwrap_or("unknown error")
                .to_string(),
            pos: e
                .get("Pos")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        };
        let mut errors: Vec<LoadError> = v.get("Error").map(load_error).into_iter().collect();
        if let Some(deps) = v.get("DepsErrors").and_then(Value::as_array) {
            errors.extend(deps.iter().map(load_error));
        }
        let mut test_files = strings(&v, "TestGoFiles");
        test_files.extend(strings(&v, "XTestGoFiles"));
        out.push(GoPackage {
            import_path: import_path.to_string(),
            dir: v
                .get("Dir")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            errors,
            test_files,
            invalid_files: strings(&v, "InvalidGoFiles"),
        });
    }
    out
}

/// Each package's directory by import path, to find where a `# <pkg>` block's files are.
pub(super) fn package_dirs(packages: &[GoPackage]) -> BTreeMap<String, PathBuf> {
    packages
        .iter()
        .filter_map(|p| Some((p.import_path.clone(), p.dir.clone()?)))
        .collect()
}

/// The test functions a test file declares, from `func TestName(` at the start of a line
/// (`func TestName[` too: go refuses generic tests, but the name is still declared).
pub(super) fn declared_in(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in source.lines() {
        let Some(rest) = line.strip_prefix("func") else {
            continue;
        };
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let rest = rest.trim_start();
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, after) = rest.split_at(end);
        if is_test_name(name) && after.trim_start().starts_with(['(', '[']) {
            out.push(name.to_string());
        }
    }
    out
}
