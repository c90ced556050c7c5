//! The Rust runners: the `cargo test` adapter ([`cargo`]) and the `cargo nextest` adapter
//! ([`nextest`]), and what both know of Rust and cargo. Here: the one splice path both adapters'
//! [`RustItems`] give (which files are test files, the item map of a test file, the
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

/// The `Runner` methods both Rust runners answer alike: their test files (any file under a
/// directory named `tests`: integration tests, their modules and fixtures, at the crate root or
/// anywhere below it; unit tests live inside source files, which are the change), their test
/// items, their family, a cargo target directory of their own and `cargo fetch` before the
/// sandbox closes.
macro_rules! rust_family {
    () => {
        fn is_test_file(&self, rel_path: &str) -> bool {
            $crate::floor::runners::rust::under_tests_dir(rel_path)
        }

        fn items(&self) -> &dyn $crate::floor::runners::TestItems {
            &$crate::floor::runners::rust::RustItems
        }

        fn family(&self) -> $crate::floor::harness::Family {
            $crate::floor::harness::Family::Rust
        }

        fn cargo_target(&self) -> bool {
            true
        }

        fn fetch(
            &self,
            dir: &std::path::Path,
            probe: &$crate::floor::runners::Probe,
            timeout: std::time::Duration,
        ) -> Option<$crate::floor::runners::Fetch> {
            $crate::floor::runners::rust::fetch(dir, probe, timeout)
        }
    };
}

pub mod binary;
pub mod build;
pub mod cargo;
pub mod cargo_meta;
pub mod cargo_targets;
pub mod diagnostics;
pub mod harness;
pub mod items;
pub mod libtest;
pub mod modules;
pub mod nextest;
pub mod progress;
pub mod target;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::error::InputError;
use crate::floor::runners::kit::worktree_relative;
use crate::floor::runners::{Fetch, ItemMap, Probe, RunCtx, SpliceError, TestItems};
use crate::process;

/// What both Rust adapters know of a Rust file's test items: their names, a file's item map,
/// the module files that are test code as a whole, and the splice of test items into base.
pub struct RustItems;

impl TestItems for RustItems {
    fn test_item(&self, id: &str) -> Option<String> {
        items::test_item(id)
    }

    fn item_map(&self, ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
        item_map(ctx, rel_path)
    }

    fn test_files_among(&self, ctx: &RunCtx, changed: &[String]) -> Vec<String> {
        test_files_among(ctx, changed)
    }

    fn may_splice(&self, rel_path: &str) -> bool {
        may_splice(rel_path)
    }

    fn splice_test_items(
        &self,
        rel_path: &str,
        base: &str,
        head: &str,
    ) -> Option<Result<String, SpliceError>> {
        items::splice_source(rel_path, base, head)
    }
}

/// What both Rust adapters' runs of a side are keyed with in the base cache.
const VERSION_PROBES: &[&[&str]] = &[&["rustc", "-vV"], &["cargo", "-V"]];

/// A `cargo test` reproduction, or a `cargo nextest run` one, of the test `id` from `cd`.
fn reproduce(cd: &str, id: &str, nextest: bool) -> String {
    let (binary, name) = id.split_once(' ').unwrap_or(("", id));
    if nextest {
        return format!("{cd}cargo nextest run -E 'binary_id({binary}) & test(={name})'");
    }
    let target = match binary.split_once("::") {
        Some((_, t)) if t.starts_with("bin/") => format!("--bin {}", &t[4..]),
        Some((_, t)) => format!("--test {t}"),
        None => "--lib".to_string(),
    };
    format!("{cd}cargo test {target} -- --exact {name}")
}

/// `cargo fetch` of the project at `dir` into cargo's store, from a directory outside the
/// project (so that neither its `.cargo/config.toml` nor its `rust-toolchain.toml` is read),
/// for the host's platform only.
fn fetch(dir: &Path, probe: &Probe, timeout: Duration) -> Option<Fetch> {
    let home = cargo_home()?;
    if !dir.join("Cargo.toml").is_file() {
        return None;
    }
    // Cargo's locks on its store: the fetch takes them as the person's own cargo
    // would (a build inside the sandbox reads the store without them).
    let mut store = vec![home.join("registry"), home.join("git")];
    for lock in [".package-cache", ".package-cache-mutate"] {
        let path = home.join(lock);
        let made = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .is_ok();
        if made {
            store.push(path);
        }
    }
    let mut cmd = Command::new("cargo");
    cmd.arg("fetch")
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"));
    if let Some(host) = host_triple(probe, timeout) {
        cmd.arg("--target").arg(host);
    }
    Some(Fetch {
        cmd,
        store,
        what: "cargo fetch",
        env: Vec::new(),
    })
}

/// Cargo's home as cargo finds it: `CARGO_HOME`, else `~/.cargo` when it exists.
fn cargo_home() -> Option<PathBuf> {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
        .filter(|p| p.is_dir())
}

/// The host's target triple as `rustc -vV` names it, asked from outside any project.
fn host_triple(probe: &Probe, timeout: Duration) -> Option<String> {
    let mut cmd = probe.command("rustc");
    cmd.arg("-vV");
    let out = probe.run(cmd, timeout).ok()?;
    out.stdout_lossy()
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_string())
}

/// [`TestItems::may_splice`]: every Rust source file can hold tests beside the code
/// (`#[cfg(test)]` modules, `#[test]` functions), which [`items::splice_source`] splices.
fn may_splice(rel_path: &str) -> bool {
    rel_path.ends_with(".rs")
}

/// [`TestItems::item_map`]: the item map of a Rust file under the runner's root, as the file
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

/// [`TestItems::test_files_among`]: of `changed` (relative to the runner's root), the Rust
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
