//! The JavaScript runners, [`jest`] and [`vitest`], and the machinery they share: both tools
//! write the same "jest-compatible" JSON results file, take a test-name regex (`-t`) and file
//! filters, and fail a test file that cannot be loaded as a whole.
//!
//! Test ids are `<file relative to the runner root> > <describe> > … > <test title>`: the file,
//! then the result's `ancestorTitles` and `title`, joined by ` > ` (vitest's own way of showing a
//! full name). [`TestCase::file`] is that file relative to the repository root.
//!
//! # Starting the tool
//! Always the project's own local binary, `node_modules/.bin/<tool>` in the runner's root or the
//! nearest directory above it inside the worktree (npm workspaces hoist it to the repository root),
//! never `npx` (which could download something else). Without a `setup:` the worktrees take the
//! checkout's `node_modules`, so a binary missing from the checkout is an input error before any
//! work (`check_checkout_bin`), as a missing pytest is; with a `setup:`, a binary that a setup
//! which succeeded did not install is one too (`check_setup_bin`). Every command runs with `CI=1`
//! (no watch mode, no snapshot writing, no interactive output) and `NO_COLOR=1`; ANSI codes are
//! stripped from messages anyway. The results go to a file of our own in `ctx.scratch` (vitest's
//! JUnit report beside it), removed before each command so that an earlier file is never read as
//! this command's. The runner's `args` come after our options and before our test-name pattern and
//! file filters.
//!
//! # Attribution (book: floor/attribution.md)
//! `test_item` is an id's titles part (`describe > test`); `item_map` parses the file with
//! [`parse`]. Where a test file that failed to load fails, and which of its imports the failure
//! names, is [`diagnostics`]'s.
//!
//! # The parts
//! - [`list`]: listing a project's tests, each collected and none run;
//! - [`run`]: running chosen tests, the tools' command lines and the reports asked of them;
//! - [`report`]: reading the results file (and vitest's JUnit report) into each test's
//!   outcome, message and failure kind, judged against the exit code;
//! - [`diagnostics`]: the files and positions a test file's load failure names;
//! - [`parse`]: a JavaScript or TypeScript file's test items and imports;
//! - [`jest`], [`vitest`]: the adapters themselves, which only name their tool.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::kit::safe_relative;
use super::{
    ItemMap, ListReport, ListScope, Prepared, Probe, RunCtx, RunReport, Runner, TestItems,
};
use crate::acceptance::RunnerConfig;
use crate::error::InputError;
use crate::floor::harness::Family;
use crate::process;

mod diagnostics;
pub mod harness;
pub mod jest;
mod list;
mod parse;
mod report;
mod run;
pub mod vitest;

/// What both JavaScript adapters' runs of a side are keyed with in the base cache.
const VERSION_PROBES: &[&[&str]] = &[&["node", "--version"]];

/// What vitest and jest know of a test file's items: the titles an id names, and the items
/// and imports [`parse`] finds.
pub struct JsItems;

impl TestItems for JsItems {
    fn test_item(&self, id: &str) -> Option<String> {
        test_item(id)
    }

    fn item_map(&self, ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
        item_map(ctx, rel_path)
    }
}

/// Whether a package.json's text names `tool` among its dependencies or dev dependencies.
fn depends_on(text: &str, tool: &str) -> bool {
    let v: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    ["dependencies", "devDependencies"]
        .iter()
        .any(|k| v[k].get(tool).is_some())
}

/// `node_modules/.bin` of the runner's root `dir` and of each directory above it up to
/// `worktree`, as `npm test` and `npx` put them first on `PATH`.
fn bin_dirs(dir: &Path, worktree: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut at = Some(dir);
    while let Some(d) = at {
        dirs.push(d.join("node_modules/.bin"));
        if d == worktree {
            break;
        }
        at = d.parent().filter(|p| p.starts_with(worktree));
    }
    dirs
}

/// A fresh worktree has the code but not what the workflow installed into the checkout.
/// With no `setup`, a JavaScript runner reuses the checkout's `node_modules` (a link) when
/// the lockfile at this commit is the same as the checkout's, and says so in the report.
/// `dir` is the runner's root in the worktree, `checkout` the same in the repository's
/// working directory; `None` when the worktree has its own `node_modules` or the checkout none.
fn reuse_node_modules(dir: &Path, checkout: &Path) -> Option<Prepared> {
    if dir.join("node_modules").exists() || !checkout.join("node_modules").is_dir() {
        return None;
    }
    const LOCKFILES: [&str; 5] = [
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lockb",
    ];
    let same = LOCKFILES.iter().find_map(|name| {
        let ours = std::fs::read(dir.join(name)).ok()?;
        let theirs = std::fs::read(checkout.join(name)).ok()?;
        Some((name, ours == theirs))
    });
    let mut reused = None;
    let result = match same {
        Some((name, true)) => {
            match std::os::unix::fs::symlink(checkout.join("node_modules"), dir.join("node_modules")) {
                Ok(()) => {
                    reused = Some(crate::sandbox::canonical(&checkout.join("node_modules")));
                    format!("reused the checkout's node_modules: {name} is the same at this commit")
                }
                Err(e) => format!("could not link the checkout's node_modules: {e}"),
            }
        }
        Some((name, false)) => format!("not reusing the checkout's node_modules: {name} differs at this commit; set `setup:` (for example `npm ci`)"),
        None => "not reusing the checkout's node_modules: no lockfile to compare; set `setup:` (for example `npm ci`)".to_string(),
    };
    Some(Prepared {
        command: "node_modules",
        result,
        reused,
    })
}

/// The separator between the file, the describe blocks and the title in a test id.
pub(super) const SEP: &str = " > ";

/// The extensions of JavaScript and TypeScript source files.
const JS_EXTENSIONS: [&str; 8] = ["js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts"];

/// The JavaScript test runners, with what differs between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsTool {
    Vitest,
    Jest,
}

impl JsTool {
    /// The tool's name, also the name of its binary in `node_modules/.bin`.
    pub fn name(self) -> &'static str {
        match self {
            JsTool::Vitest => "vitest",
            JsTool::Jest => "jest",
        }
    }

    /// What the tool's exit codes mean once it has written results.
    pub fn contract(self) -> super::contract::ExitContract {
        match self {
            JsTool::Vitest => super::contract::VITEST,
            JsTool::Jest => super::contract::JEST,
        }
    }
}

/// Checks that `node` runs.
pub(super) fn check_node(probe: &Probe) -> Result<(), InputError> {
    let help = "install Node.js (https://nodejs.org) and put `node` on PATH; the project's own \
                test runner is then installed by `npm ci` (or the runner's `setup:`)";
    if process::which("node").is_none() {
        return Err(InputError::new("`node` was not found on PATH").help(help));
    }
    let mut cmd = probe.command("node");
    cmd.arg("--version");
    match probe.run(cmd, Duration::from_secs(60)) {
        Ok(c) if c.success() => Ok(()),
        Ok(c) => Err(InputError::new(format!(
            "`node --version` failed (exit {}): {}",
            c.exit_code.map_or_else(|| "none".into(), |e| e.to_string()),
            c.stderr_lossy().trim()
        ))
        .help(help)),
        Err(e) => Err(InputError::new(format!("`node` could not be started: {e}")).help(help)),
    }
}

/// Whether a `/`-separated path relative to the runner's root belongs to a JavaScript test suite:
/// `*.test.<ext>` or `*.spec.<ext>` for the JavaScript and TypeScript extensions, or any file
/// under a `__tests__`, `test` or `tests` directory (helpers and fixture data included). Nothing
/// under `node_modules`.
pub(super) fn is_js_test_file(rel_path: &str) -> bool {
    let parts: Vec<&str> = rel_path.split('/').filter(|p| !p.is_empty()).collect();
    let Some((base, dirs)) = parts.split_last() else {
        return false;
    };
    if dirs.contains(&"node_modules") {
        return false;
    }
    if dirs
        .iter()
        .any(|d| matches!(*d, "__tests__" | "test" | "tests"))
    {
        return true;
    }
    let Some((stem, ext)) = base.rsplit_once('.') else {
        return false;
    };
    JS_EXTENSIONS.contains(&ext)
        && (stem.ends_with(".test") || stem.ends_with(".spec"))
        && !matches!(stem, ".test" | ".spec")
}

/// `node_modules/.bin/<name>` in `ctx.dir` or the nearest directory above it inside the worktree.
pub(super) fn find_bin(ctx: &RunCtx, name: &str) -> Option<PathBuf> {
    find_bin_in(&ctx.dir, &ctx.worktree, name)
}

/// `node_modules/.bin/<name>` in `dir` or the nearest directory above it inside `top`.
fn find_bin_in(dir: &Path, top: &Path, name: &str) -> Option<PathBuf> {
    let mut dir: Option<&Path> = Some(dir);
    while let Some(d) = dir {
        let candidate = d.join("node_modules").join(".bin").join(name);
        if candidate.is_file() {
            return Some(candidate);
        }
        if d == top || !d.starts_with(top) {
            break;
        }
        dir = d.parent();
    }
    None
}

/// Without a `setup:`, a worktree's `node_modules` can only be the checkout's (linked, see
/// [`reuse_node_modules`]), so a tool missing from the checkout is missing from
/// every run: an input error before any worktree exists, as a missing pytest or go is, rather
/// than a problem at each side and an INCONCLUSIVE verdict. With a `setup:` the tool is
/// installed in each worktree and looked for there.
pub(super) fn check_checkout_bin(
    tool: JsTool,
    config: &RunnerConfig,
    checkout: &Path,
) -> Result<(), InputError> {
    if config.setup.is_some() {
        return Ok(());
    }
    let dir = if config.root == "." {
        checkout.to_path_buf()
    } else {
        checkout.join(&config.root)
    };
    if find_bin_in(&dir, checkout, tool.name()).is_some() {
        return Ok(());
    }
    Err(InputError::new(format!(
        "{}: `node_modules/.bin/{}` is not installed in the checkout (runner root `{}` or above it), \
         and the runner has no `setup:` to install it in each worktree",
        tool.name(),
        tool.name(),
        config.root
    ))
    .help(format!(
        "run `npm ci` in `{}` before claim-check (as a workflow does after checkout), or set \
         `setup: npm ci` for the runner",
        config.root
    )))
}

/// After a `setup:` that succeeded, the project's binary must be there: a setup that does not
/// install the runner's tool is the configuration's error, the same at every side, and an
/// input error rather than a problem at each side.
pub(super) fn check_setup_bin(
    tool: JsTool,
    config: &RunnerConfig,
    ctx: &RunCtx,
) -> Result<(), InputError> {
    if find_bin(ctx, tool.name()).is_some() {
        return Ok(());
    }
    let setup = config.setup.as_deref().unwrap_or_default();
    Err(InputError::new(format!(
        "{}: the runner's setup `{setup}` succeeded but installed no `node_modules/.bin/{}` in the runner root `{}` or above it",
        tool.name(),
        tool.name(),
        config.root
    ))
    .help(format!(
        "make `setup:` install the project's dependencies (for example `setup: npm ci`), with {} among them",
        tool.name()
    )))
}

fn missing_bin_problem(tool: JsTool, config: &RunnerConfig) -> String {
    format!(
        "`node_modules/.bin/{}` not found in the runner's root `{}` or above it: run npm ci (or \
         set `setup:` for the runner, e.g. `setup: npm ci`)",
        tool.name(),
        config.root
    )
}

/// The test id of a result: the file relative to the runner's root, then the titles.
pub(super) fn test_id(file: &str, ancestors: &[String], title: &str) -> String {
    let mut id = file.to_string();
    for a in ancestors {
        id.push_str(SEP);
        id.push_str(a);
    }
    id.push_str(SEP);
    id.push_str(title);
    id
}

/// The file part of an id and its titles part; `None` when the id has no titles.
pub(super) fn split_id(id: &str) -> Option<(&str, &str)> {
    let (file, titles) = id.split_once(SEP)?;
    (!file.is_empty() && !titles.is_empty()).then_some((file, titles))
}

/// The titles part of a test id (`describe > test`), the name [`parse`] gives the
/// test item.
pub(super) fn test_item(id: &str) -> Option<String> {
    split_id(id).map(|(_, titles)| titles.to_string())
}

/// The test items and imports of a test file (relative to the runner's root).
pub(super) fn item_map(ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
    if !safe_relative(rel_path) {
        return None;
    }
    let source = std::fs::read_to_string(ctx.dir.join(rel_path)).ok()?;
    parse::item_map(&source, rel_path)
}

/// The vitest or the jest adapter: the same steps, each naming its tool.
pub struct JsRunner {
    tool: JsTool,
    config: RunnerConfig,
}

impl JsRunner {
    pub fn new(tool: JsTool, config: RunnerConfig) -> Self {
        JsRunner { tool, config }
    }
}

impl Runner for JsRunner {
    fn config(&self) -> &RunnerConfig {
        &self.config
    }

    /// `node --version` works; the project's own vitest or jest is looked for when listing.
    fn check_tool(&self, probe: &Probe) -> Result<(), InputError> {
        check_node(probe)
    }

    fn check_checkout(&self, checkout: &Path) -> Result<(), InputError> {
        check_checkout_bin(self.tool, &self.config, checkout)
    }

    fn check_setup(&self, ctx: &RunCtx) -> Result<(), InputError> {
        check_setup_bin(self.tool, &self.config, ctx)
    }

    /// `*.test.*` / `*.spec.*` JavaScript or TypeScript files, or anything under `__tests__`,
    /// `test` or `tests`.
    fn is_test_file(&self, rel_path: &str) -> bool {
        is_js_test_file(rel_path)
    }

    fn list(&self, ctx: &RunCtx, scope: &ListScope) -> ListReport {
        list::list(self.tool, &self.config, ctx, scope)
    }

    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
        run::run(self.tool, &self.config, ctx, ids)
    }

    fn items(&self) -> &dyn TestItems {
        &JsItems
    }

    fn family(&self) -> Family {
        Family::Js
    }

    fn version_probes(&self) -> &'static [&'static [&'static str]] {
        VERSION_PROBES
    }

    fn path_dirs(&self, dir: &Path, worktree: &Path) -> Vec<PathBuf> {
        bin_dirs(dir, worktree)
    }

    fn without_setup(&self, dir: &Path, checkout: &Path) -> Option<Prepared> {
        reuse_node_modules(dir, checkout)
    }
}

#[cfg(test)]
mod tests;
