//! jest adapter.
//!
//! Test ids are `<file relative to the runner root> > <describe> > … > <test title>`
//! (`tests/refund.test.js > refund > rejects twice`): the file, then the result's
//! `ancestorTitles` and `title` joined by ` > `. The shared machinery, and why each step is done
//! the way it is, is in [`super`]; this file only names the commands.
//!
//! The binary is the project's own `node_modules/.bin/jest` (in the runner's root or the nearest
//! directory above it inside the worktree), with `CI=1 NO_COLOR=1`.
//!
//! # list
//! In: the project in `ctx.dir`. Out: every test of every test file jest finds, skipped and todo
//! tests included. `jest --listTests` names files only, so:
//! `jest --ci --watchAll=false --no-coverage --json --outputFile=$SCRATCH/jest-list.json
//! --passWithNoTests <args> --testNamePattern=(?!)`: the pattern matches no name, so every file
//! is loaded and collected, no test (and no hook of a describe without enabled tests) runs, and
//! every test appears as `pending` with its `ancestorTitles` and `title`. A file that fails to
//! load (`status: failed`, a `message`, no `assertionResults`: a syntax error, a missing module)
//! is a build failure.
//!
//! # run
//! In: test ids. Out: one outcome per id.
//! `jest --ci --watchAll=false --no-coverage --json --outputFile=$SCRATCH/jest.json
//! --passWithNoTests <args> --testNamePattern=^(?:<names>)$ --runTestsByPath <files>`: exactly
//! the ids' files, and an anchored pattern over the full names as jest builds them for `-t`
//! (titles joined by single spaces; jest matches case-insensitively, which only widens what runs:
//! results are mapped by exact id). In jest's JSON a test filtered out by the pattern is
//! `pending`, like a skipped one, so only `passed` with the exit code agreeing (0 when nothing
//! failed, 1 when a test or a file failed) is a pass; a test that passed only after a
//! `jest.retryTimes` retry (`retryReasons` not empty) is a failure.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{self as js, JsItems, JsTool};
use crate::acceptance::{RunnerConfig, RunnerKind};
use crate::error::InputError;
use crate::floor::harness::Family;
use crate::floor::runners::registered::{Detect, Registered};
use crate::floor::runners::{
    ListReport, ListScope, Prepared, Probe, RunCtx, RunReport, Runner, TestItems,
};

/// `jest`: a runner rooted at each `package.json` of head that depends on jest and not on vitest.
pub const REGISTERED: Registered = Registered {
    kind: RunnerKind::Jest,
    detect: Detect::EachFile(|name, text| {
        if name != "package.json" {
            return Ok(false);
        }
        let text = text()?;
        Ok(!js::depends_on(&text, "vitest") && js::depends_on(&text, "jest"))
    }),
    make: |config| Arc::new(Jest::new(config)),
    harness: js::harness::harness,
    written: js::harness::written,
};

pub struct Jest {
    config: RunnerConfig,
}

impl Jest {
    pub fn new(config: RunnerConfig) -> Self {
        Jest { config }
    }
}

impl Runner for Jest {
    fn config(&self) -> &RunnerConfig {
        &self.config
    }

    /// `node --version` works; the project's own jest is looked for when listing.
    fn check_tool(&self, probe: &Probe) -> Result<(), InputError> {
        js::check_node(probe)
    }

    fn check_checkout(&self, checkout: &Path) -> Result<(), InputError> {
        js::check_checkout_bin(JsTool::Jest, &self.config, checkout)
    }

    fn check_setup(&self, ctx: &RunCtx) -> Result<(), InputError> {
        js::check_setup_bin(JsTool::Jest, &self.config, ctx)
    }

    /// `*.test.*` / `*.spec.*` JavaScript or TypeScript files, or anything under `__tests__`,
    /// `test` or `tests`.
    fn is_test_file(&self, rel_path: &str) -> bool {
        js::is_js_test_file(rel_path)
    }

    fn list(&self, ctx: &RunCtx, scope: &ListScope) -> ListReport {
        js::list::list(JsTool::Jest, &self.config, ctx, scope)
    }

    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
        js::run::run(JsTool::Jest, &self.config, ctx, ids)
    }

    fn items(&self) -> &dyn TestItems {
        &JsItems
    }

    fn family(&self) -> Family {
        Family::Js
    }

    fn version_probes(&self) -> &'static [&'static [&'static str]] {
        js::VERSION_PROBES
    }

    fn path_dirs(&self, dir: &Path, worktree: &Path) -> Vec<PathBuf> {
        js::bin_dirs(dir, worktree)
    }

    fn without_setup(&self, dir: &Path, checkout: &Path) -> Option<Prepared> {
        js::reuse_node_modules(dir, checkout)
    }
}
