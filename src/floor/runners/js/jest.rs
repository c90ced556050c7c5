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

use std::sync::Arc;

use super::{self as js, JsRunner, JsTool};
use crate::acceptance::RunnerKind;
use crate::floor::runners::registered::{Detect, Registered};

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
    make: |config| Arc::new(JsRunner::new(JsTool::Jest, config)),
    harness: js::harness::harness,
    written: js::harness::written,
};
