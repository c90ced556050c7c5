//! cargo's own vocabulary, shared by the `cargo test` and `cargo nextest` adapters and the
//! target selection: the workspace's packages as `cargo metadata --no-deps` gives them, binary
//! ids as nextest spells them, target kinds, cargo's error text, and how a cargo command is
//! started (the side's target directory, no colour).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::Path;

use serde_json::Value;

use crate::floor::runners::kit::{self, target_dir, truncate, Ran};
use crate::floor::runners::RunCtx;

/// A workspace member as `cargo metadata --no-deps` describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct WorkspacePackage {
    /// The package id spec (`path+file:///…#name@version`). It selects this package and no
    /// other, where a bare `-p name` is ambiguous once the lock file holds a registry package
    /// of the same name (a crate whose dev-dependencies pull an older release of itself from
    /// the registry, as serde_json's do).
    pub id: String,
    pub name: String,
    /// The manifest fields cargo passes to tests, by the suffix after `CARGO_PKG_`: `AUTHORS`
    /// (joined with `:`), `DESCRIPTION`, `HOMEPAGE`, `LICENSE`, `LICENSE_FILE`, `README`,
    /// `REPOSITORY`, `RUST_VERSION`; empty where the manifest has none, as cargo sets them.
    pub manifest_env: Vec<(&'static str, String)>,
}

/// Why `cargo metadata` told nothing of the workspace: it could not run or failed, or what it
/// printed is not what cargo prints.
#[derive(Debug, thiserror::Error)]
pub enum MetadataError {
    /// It could not run (a timeout, it could not start), as the run's problem says.
    #[error("{0}")]
    NotRun(String),
    /// It failed: cargo's error.
    #[error("cargo metadata failed: {0}")]
    Failed(String),
    #[error("cargo metadata: unreadable output: {0}")]
    Unreadable(serde_json::Error),
    #[error("cargo metadata printed no JSON: {0}")]
    NoJson(serde_json::Error),
    #[error("cargo metadata: no workspace_root")]
    NoWorkspaceRoot,
    #[error("cargo metadata: no packages")]
    NoPackages,
    #[error("cargo metadata: package {0} lies outside the worktree")]
    OutsideWorktree(String),
}

pub(super) fn parse_workspace_packages(
    metadata: &[u8],
) -> Result<BTreeMap<String, WorkspacePackage>, MetadataError> {
    let v: Value = serde_json::from_slice(metadata).map_err(MetadataError::NoJson)?;
    let members: BTreeSet<&str> = v["workspace_members"]
        .as_array()
        .map(|ms| ms.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let text = |p: &Value, key: &str| p[key].as_str().unwrap_or("").to_string();
    let mut out = BTreeMap::new();
    for p in v["packages"].as_array().into_iter().flatten() {
        let (Some(id), Some(name)) = (p["id"].as_str(), p["name"].as_str()) else {
            continue;
        };
        if !members.contains(id) {
            continue;
        }
        let authors: Vec<&str> = p["authors"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let manifest_env = vec![
            ("AUTHORS", authors.join(":")),
            ("DESCRIPTION", text(p, "description")),
            ("HOMEPAGE", text(p, "homepage")),
            ("LICENSE", text(p, "license")),
            ("LICENSE_FILE", text(p, "license_file")),
            ("README", text(p, "readme")),
            ("REPOSITORY", text(p, "repository")),
            ("RUST_VERSION", text(p, "rust_version")),
        ];
        out.insert(
            name.to_string(),
            WorkspacePackage {
                id: id.to_string(),
                name: name.to_string(),
                manifest_env,
            },
        );
    }
    Ok(out)
}

/// The error in cargo's stderr, without the warnings before it (a deprecated `.cargo/config`
/// warns on every command, and its first line is not why the command failed): the `error…`
/// line and the lines that explain it (its `Caused by:` chain), up to the next warning, at
/// most five lines; the last line when there is no `error` line.
pub(crate) fn cargo_error(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let Some(start) = lines.iter().position(|l| l.starts_with("error")) else {
        return lines
            .last()
            .map(|l| l.to_string())
            .unwrap_or_else(|| "(no output)".into());
    };
    let out: Vec<&str> = lines[start..]
        .iter()
        .take_while(|l| !l.starts_with("warning"))
        .take(5)
        .copied()
        .collect();
    truncate(&out.join(" "), 600)
}

/// The kind nextest gives a target: every library crate type is `lib`.
pub(super) fn nextest_kind(kinds: &[&str]) -> Option<String> {
    if kinds
        .iter()
        .any(|k| matches!(*k, "lib" | "rlib" | "dylib" | "cdylib" | "staticlib"))
    {
        return Some("lib".into());
    }
    kinds.first().map(|k| k.to_string())
}

/// nextest's binary id: `pkg` (lib, proc-macro), `pkg::name` (test), `pkg::kind/name` (others).
pub(super) fn binary_id(package: &str, kind: &str, target: &str) -> String {
    match kind {
        "lib" | "proc-macro" => package.to_string(),
        "test" => format!("{package}::{target}"),
        _ => format!("{package}::{kind}/{target}"),
    }
}

/// Runs a cargo command (or a test binary cargo built) through [`kit::exec`], with cargo's own
/// variables: the side's target directory and `CARGO_TERM_COLOR=never`, then `extra_env`.
pub(super) fn exec(
    ctx: &RunCtx,
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
    extra_env: &[(OsString, OsString)],
) -> Ran {
    let mut env = vec![
        (
            OsString::from("CARGO_TARGET_DIR"),
            target_dir(ctx).into_os_string(),
        ),
        (OsString::from("CARGO_TERM_COLOR"), OsString::from("never")),
    ];
    env.extend(extra_env.iter().cloned());
    kit::exec(ctx, program, args, cwd, &env)
}

#[cfg(test)]
mod tests;
