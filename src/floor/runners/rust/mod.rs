//! The Rust runners: the `cargo test` adapter ([`cargo`]) and the `cargo nextest` adapter
//! ([`nextest`]), and what both know of Rust and cargo. Here: the one splice path both adapters'
//! [`super::Runner`] methods call (which files are test files, the item map of a test file, the
//! module files that are test code as a whole, which files may be spliced), and the tool check
//! and argument split they share. Below:
//! - [`cargo_meta`]: cargo's vocabulary (workspace members, binary ids, target kinds, cargo's
//!   error text) and how a cargo command is started;
//! - [`cargo_targets`]: which test targets hold a scoped listing's files;
//! - [`build`]: building test targets and reading cargo's JSON messages;
//! - [`diagnostics`]: rustc's errors as a build failure, the files and positions they point at;
//! - [`binary`]: a test binary cargo built, and the environment `cargo test` starts it with;
//! - [`libtest`]: reading libtest's output into outcomes, messages and failure kinds;
//! - [`items`] and [`modules`]: a file's test items and the splice, and its place in its crate's
//!   module tree, found with a real parser.
//!
//! Test ids are `<binary-id> <test name>`, the binary id spelled as nextest spells it: the package
//! name for the library's (or proc-macro's) unit tests, `<package>::<name>` for `tests/<name>.rs`,
//! `<package>::<kind>/<name>` for bins, examples and benches (`fx-crate::bin/tool`). Doctests are
//! not listed or run.

pub mod binary;
pub mod build;
pub mod cargo;
pub mod cargo_meta;
pub mod cargo_targets;
pub mod diagnostics;
pub mod items;
pub mod libtest;
pub mod modules;
pub mod nextest;

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::InputError;
use crate::floor::runners::kit::worktree_relative;
use crate::floor::runners::{ItemMap, RunCtx};
use crate::process;

/// [`super::Runner::may_splice`]: every Rust source file can hold tests beside the code
/// (`#[cfg(test)]` modules, `#[test]` functions), which [`items::splice_source`] splices.
fn may_splice(rel_path: &str) -> bool {
    rel_path.ends_with(".rs")
}

/// [`super::Runner::item_map`]: the item map of a Rust file under the runner's root, as the file
/// is in `ctx.dir`; `None` when it cannot be read, lies outside a target's directories, or does
/// not parse. The file's module path comes from the module tree of the workspace's targets
/// ([`modules`]): a test in `src/tests/recursive.rs` is named `tests::recursive::…` when
/// `src/lib.rs` declares `mod tests;` and `src/tests/mod.rs` declares `mod recursive;`. A file
/// that no target's tree reaches (the metadata cannot be read, a module only a macro declares)
/// takes the module path its place in the layout gives.
fn item_map(ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
    let text = read_source(&ctx.dir.join(rel_path))?;
    let places = worktree_relative(ctx, &ctx.dir.join(rel_path))
        .map(|file| {
            let tree = module_tree(ctx);
            tree.places(&file)
                .iter()
                .map(|p| p.path.clone())
                .collect::<BTreeSet<String>>()
        })
        .unwrap_or_default();
    let prefixes: Vec<String> = if places.is_empty() {
        vec![items::module_prefix(rel_path)?]
    } else {
        places.into_iter().collect()
    };
    let mut map = ItemMap::default();
    for prefix in prefixes {
        let one = items::item_map(&text, &prefix).ok()?;
        map.items.extend(one.items);
        for imp in one.imports {
            if !map.imports.contains(&imp) {
                map.imports.push(imp);
            }
        }
    }
    Some(map)
}

/// The module tree of every target of the workspace in `ctx` (see [`modules`]), files relative
/// to the worktree; empty where `cargo metadata` cannot be read.
fn module_tree(ctx: &RunCtx) -> modules::ModuleTree {
    let Ok(packages) = cargo_targets::workspace_packages(ctx, &mut Vec::new()) else {
        return Default::default();
    };
    let roots: Vec<String> = packages
        .iter()
        .flat_map(|p| p.targets.iter())
        .filter(|t| t.kind != "custom-build" && !t.src_path.starts_with('/'))
        .map(|t| t.src_path.clone())
        .collect();
    modules::resolve(&roots, &|f| read_source(&ctx.worktree.join(f)))
}

/// [`super::Runner::test_files_among`]: of `changed` (relative to the runner's root), the Rust
/// files the module tree at `ctx` reaches only through `#[cfg(test)]`.
fn test_files_among(ctx: &RunCtx, changed: &[String]) -> Vec<String> {
    if !changed.iter().any(|f| f.ends_with(".rs")) {
        return Vec::new();
    }
    let tree = module_tree(ctx);
    changed
        .iter()
        .filter(|f| f.ends_with(".rs"))
        .filter(|f| {
            worktree_relative(ctx, &ctx.dir.join(f.as_str())).is_some_and(|w| tree.is_test_only(&w))
        })
        .cloned()
        .collect()
}

/// A source file's text: a regular file only (a committed symlink can point anywhere), and
/// bounded, as every file the floor parses.
fn read_source(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 16 << 20 {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// Whether `cargo` is on PATH; the error says how to install it.
fn check_cargo() -> Result<(), InputError> {
    // Only found on PATH: `cargo --version` in a worktree could start a toolchain a
    // `rust-toolchain.toml` of the change names.
    if process::which("cargo").is_none() {
        return Err(InputError::new("`cargo` was not found on PATH")
            .help("install Rust with rustup: https://rustup.rs"));
    }
    Ok(())
}

/// Whether a `/`-separated relative path lies under a directory named `tests`.
fn under_tests_dir(rel_path: &str) -> bool {
    let parts: Vec<&str> = rel_path.split('/').filter(|p| !p.is_empty()).collect();
    parts
        .iter()
        .take(parts.len().saturating_sub(1))
        .any(|p| *p == "tests")
}

/// Splits the runner's `args` at the first `--`: cargo's arguments, then the test binaries'.
fn split_args(args: &[String]) -> (Vec<String>, Vec<String>) {
    match args.iter().position(|a| a == "--") {
        Some(i) => (args[..i].to_vec(), args[i + 1..].to_vec()),
        None => (args.to_vec(), Vec::new()),
    }
}

#[cfg(test)]
mod tests;
