//! vitest adapter.
//!
//! Test ids are `<file relative to the runner root> > <describe> > … > <test name>`
//! (`tests/refund.test.ts > refund > rejects twice`): the file, then vitest's own ` > ` join of
//! the test's full name. The shared machinery, and why each step is done the way it is, is in
//! [`super`]; this file only names the commands.
//!
//! The binary is the project's own `node_modules/.bin/vitest` (in the runner's root or the
//! nearest directory above it inside the worktree), with `CI=1 NO_COLOR=1`.
//!
//! # list
//! In: the project in `ctx.dir`. Out: every test of every test file vitest finds, including
//! `test.skip` and `test.todo` (which `vitest list` would omit).
//! `vitest run --reporter=json --reporter=junit --outputFile.json=$SCRATCH/vitest-list.json
//! --outputFile.junit=$SCRATCH/vitest-list.xml --no-coverage --no-cache --retry=0
//! --passWithNoTests <args> --testNamePattern=(?!)`: the pattern matches no name, so
//! every file is loaded and collected and no test runs; a file that fails to load (a syntax
//! error, an import of a missing module) shows as a failed file without tests: a build failure.
//! (`vitest list --json` writes nothing at all as soon as one file fails to load.)
//!
//! # run
//! In: test ids. Out: one outcome per id.
//! `vitest run --reporter=json --reporter=junit --outputFile.json=$SCRATCH/vitest.json
//! --outputFile.junit=$SCRATCH/vitest.xml --no-coverage --no-cache --retry=0 --passWithNoTests
//! <args> --testNamePattern=^(?:<names>)$ <files>`: the ids' files as
//! filters (vitest matches them as substrings of the test files' paths, so a similarly named
//! file may run too; harmless, results are mapped by exact id) and an anchored pattern over the
//! full names as vitest builds them for `-t` (titles joined by single spaces). A test passes only
//! when its exact id says `passed` and the exit code agrees (0 when nothing failed, 1 when a test
//! or a file failed). vitest's JSON statuses: `passed`, `failed`, `skipped` (also what `-t`
//! filtered out), `pending`, `todo`.
//!
//! The outcomes come from the JSON report. The JUnit report is read for one thing only: the
//! stack of a file that fails to load, which the JSON report reduces to the error's message
//! (`(0 , clamp) is not a function`, without `TypeError`, or where it was thrown); see
//! `add_vitest_stacks` in [`super::report`].
//!
//! Note: vitest (through vite's SSR transform) does not check named imports, so a test file that
//! imports a name the module does not export loads fine and its tests fail at run time (`Fail`,
//! "… is not a function"). The file fails to load when it has a syntax error, imports a module
//! that is not there, or calls such a name while it loads (at the top level, in a `describe`
//! body): `TypeError: (0 , clamp) is not a function` at the call, which is also placed at the
//! import that binds `clamp` (book: floor/attribution.md).

use std::sync::Arc;

use super::{self as js, JsRunner, JsTool};
use crate::acceptance::RunnerKind;
use crate::floor::runners::registered::{Detect, Registered};

/// `vitest`: a runner rooted at each `package.json` of head that depends on vitest.
pub const REGISTERED: Registered = Registered {
    kind: RunnerKind::Vitest,
    detect: Detect::EachFile(|name, text| {
        Ok(name == "package.json" && js::depends_on(&text()?, "vitest"))
    }),
    make: |config| Arc::new(JsRunner::new(JsTool::Vitest, config)),
    harness: js::harness::harness,
    written: js::harness::written,
};
