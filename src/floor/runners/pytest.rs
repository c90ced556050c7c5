//! pytest adapter.
//!
//! Test ids are pytest node ids relative to the runner's root, which is also pytest's rootdir
//! (`tests/test_refund.py::TestA::test_b[1]`). pytest is started as `python3 -m pytest` (or
//! `python -m pytest`) when that works, else as `pytest`: run as a module, pytest also puts its
//! working directory (the runner's root) on `sys.path`, so a test under `tests/` can import the
//! project's packages the way `python -m pytest` users expect; the bare `pytest` script does not
//! (the project's modules then fail to import). Always with `-p no:cacheprovider` and
//! `PYTHONDONTWRITEBYTECODE=1` so nothing is written into the worktree, and `--rootdir=<dir>` so
//! the ids do not depend on where an ini file happens to be.
//!
//! # list
//! In: the project in `ctx.dir`, every test or only those of some files. Out: the node ids
//! pytest collects there.
//! `pytest --collect-only -q -p no:cacheprovider --rootdir=<dir> <args> --verbosity=-1 [files]`
//! prints one node id per line (the trailing `--verbosity=-1` beats any `-v`/`-q` in `addopts`
//! or `args`, which would change that format). With [`ListScope::Files`] only the scope's test
//! modules (`test_*.py`, `*_test.py`) that exist are collected; pytest collects a file named on
//! its command line whatever its name, so a scope file with another `.py` name (a helper, or a
//! project with its own `python_files`) cannot be told apart from a test module by its name and
//! the whole suite is listed instead; files that are not Python hold no node id and are dropped.
//! Exit 5 is an empty suite. A file that cannot be collected (exit 2: an `ImportError`,
//! `SyntaxError` or any error while importing it) or a `conftest.py` that cannot be loaded
//! (exit 4) is Python's compile error: `build_failure`, with the failing file and the files of
//! the traceback inside the worktree as `diagnostic_files`, and in `diagnostics` the innermost
//! position inside the worktree that the traceback names (`tests/test_x.py:3: in <module>`, a
//! `SyntaxError`'s `File "…", line 4`), with the name an `ImportError: cannot import name 'x'`
//! says is missing (only that name of its `from … import` fails). The tests that did collect
//! are still listed next to it.
//! Any other exit is a problem.
//!
//! # run
//! In: node ids (the floor passes the bound tests of one file, or the guard's tests). Out: one
//! outcome per id, from one pytest process.
//! 1. Ids whose file does not exist are `NotObserved` (pytest would stop with a usage error,
//!    exit 4, and run nothing).
//! 2. `pytest -q -p no:cacheprovider --rootdir=<dir> --junitxml=$SCRATCH/pytest-junit.xml -o
//!    junit_family=xunit2 <args> --continue-on-collection-errors -p shipmoor_pytest_select
//!    <files>`: the ids' *files* on the command line, and the exact ids in a file the floor's
//!    plugin (`py/select.py`, written to `$SCRATCH` and put on `PYTHONPATH`) reads to deselect
//!    every other test. Not the node ids on the command line: one id that does not exist, or
//!    whose file does not import, makes pytest stop with a usage error (exit 4) and run
//!    nothing, which is why an earlier version collected first in a process of its own.
//! 3. What was collected comes from the same run: a file that could not be collected is a
//!    `collection failure` error case of the JUnit file, named after the file, with the
//!    traceback (or, where the file lacks it, an `ERROR collecting <file>` section of the
//!    output); its requested ids are `BuildFail` with the build failure as for `list`. A
//!    conftest that cannot be loaded (exit 4) stops pytest before it collects anything and
//!    fails every id below it the same way, read from the output.
//! 4. Read the JUnit file. pytest names a case `classname` = the file's path with `/` → `.` and
//!    without `.py`, plus the class names; `name` = the function name with its parameters. A test
//!    passes only when its case says passed and the exit code agrees (0 with no failures or
//!    errors in the file, 1 with some, 5 with no case at all: nothing requested was collected);
//!    `failure`/`error` (an error in setup is a real miss too) are `Fail`, with the failure's
//!    kind from the exception type the traceback ends with (`AssertionError`, or pytest's own
//!    `Failed` of `pytest.fail`: an assertion; anything else: an exception); `skipped` (also
//!    `xfail`) and absent cases (ids that do not exist, deselected by `args`) are
//!    `NotObserved`. Other exit codes, or a missing or unreadable file, are problems (failures
//!    already read stay `Fail`).
//!
//! # Attribution (DESIGN 5.4)
//! [`Runner::test_item`] is the node id's path after the file without parameters
//! (`TestA::test_b`); [`Runner::item_map`] runs `py/items.py` (Python's own `ast`, by the same
//! Python that starts pytest, `-I` so that nothing of the project is imported) over the file.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use super::contract::PYTEST;
use super::junit::{
    any_failed, case_outcome, failure_messages, parse_junit, JunitCase, JunitStatus,
};
use super::kit::{
    exec, exit_problem, join_problems, safe_relative, truncate, worktree_relative, Ran,
};
use super::*;
use crate::floor::attribute::{Import, Lines, TestItem};
use crate::process;

pub struct Pytest {
    config: RunnerConfig,
    command: OnceLock<Option<PytestCommand>>,
    tool: OnceLock<Option<String>>,
}

impl Pytest {
    pub fn new(config: RunnerConfig) -> Self {
        Pytest {
            config,
            command: OnceLock::new(),
            tool: OnceLock::new(),
        }
    }
}

/// The Python a pytest command runs under: the program itself for `python3 -m pytest`, the
/// interpreter its `#!` line names for a `pytest` script.
fn interpreter(command: &PytestCommand) -> Option<OsString> {
    let (program, prefix) = command;
    if !prefix.is_empty() {
        return Some(program.clone());
    }
    let script = process::which(&program.to_string_lossy())?;
    let text = std::fs::read(&script).ok()?;
    let first = text.split(|b| *b == b'\n').next()?;
    let shebang = std::str::from_utf8(first.strip_prefix(b"#!")?).ok()?.trim();
    // `#!/usr/bin/env python3` names the interpreter by its second word.
    let mut words = shebang.split_whitespace();
    let first = words.next()?;
    let python = if first.ends_with("/env") {
        words.next()?
    } else {
        first
    };
    Some(OsString::from(python))
}

/// `pytest 8.3.3, Python 3.11.2 at /usr/bin/python3`, asked of the interpreter itself.
fn describe(command: &PytestCommand) -> Option<String> {
    let python = interpreter(command)?;
    let mut cmd = Command::new(&python);
    cmd.args([
        "-c",
        "import sys, pytest; print(pytest.__version__); print(sys.version.split()[0]); print(sys.executable)",
    ])
    .env("PYTHONDONTWRITEBYTECODE", "1");
    let out = process::run(cmd, Duration::from_secs(60)).ok()?;
    if !out.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines().map(str::trim);
    let (pytest, version, executable) = (lines.next()?, lines.next()?, lines.next()?);
    Some(format!("pytest {pytest}, Python {version} at {executable}"))
}

/// How pytest is started: the program and the arguments before pytest's own.
type PytestCommand = (OsString, Vec<OsString>);

/// `python3 -m pytest` (or `python -m pytest`) when that answers `--version`, else `pytest` when
/// it is on `PATH`; `None` when neither works.
fn find_pytest() -> Option<PytestCommand> {
    let module = |python: &str| -> PytestCommand {
        (
            OsString::from(python),
            vec![OsString::from("-m"), OsString::from("pytest")],
        )
    };
    let mut candidates: Vec<PytestCommand> = vec![module("python3"), module("python")];
    candidates.push((OsString::from("pytest"), Vec::new()));
    candidates.into_iter().find(|(program, prefix)| {
        if process::which(&program.to_string_lossy()).is_none() {
            return false;
        }
        let mut cmd = Command::new(program);
        cmd.args(prefix)
            .arg("--version")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        matches!(process::run(cmd, Duration::from_secs(60)), Ok(c) if c.success())
    })
}

impl Pytest {
    /// The command to start pytest with, found once per adapter.
    fn pytest_command(&self) -> PytestCommand {
        self.command
            .get_or_init(find_pytest)
            .clone()
            // Nothing works: run the module anyway, so the failure shows in the invocation.
            .unwrap_or_else(|| {
                (
                    OsString::from("python3"),
                    vec![OsString::from("-m"), OsString::from("pytest")],
                )
            })
    }
}

impl Runner for Pytest {
    fn config(&self) -> &RunnerConfig {
        &self.config
    }

    fn check_tool(&self) -> Result<(), InputError> {
        match self.command.get_or_init(find_pytest) {
            Some(_) => Ok(()),
            None => Err(InputError::new("pytest not found").help("pip install pytest")),
        }
    }

    fn tool(&self) -> Option<String> {
        self.tool
            .get_or_init(|| {
                self.command
                    .get_or_init(find_pytest)
                    .as_ref()
                    .and_then(describe)
            })
            .clone()
    }

    /// `test_*.py`, `*_test.py`, `conftest.py`, or any file under a directory named `tests` or
    /// `test` (helpers and fixture data included).
    fn is_test_file(&self, rel_path: &str) -> bool {
        is_pytest_test_file(rel_path)
    }

    fn list(&self, ctx: &RunCtx, scope: &ListScope) -> ListReport {
        let mut report = ListReport::default();
        let paths = match scoped_files(ctx, scope) {
            Some(paths) if paths.is_empty() => return report,
            Some(paths) => paths,
            None => Vec::new(),
        };
        let collect = self.collect(ctx, &paths, &mut report.invocations);
        report.build_failure = collect.build_failure(ctx, |_| true);
        report.problem = collect.problem;
        report.tests = collect
            .ids
            .iter()
            .map(|id| TestCase {
                id: id.clone(),
                file: file_of(ctx, id),
            })
            .collect();
        report
    }

    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
        let mut report = RunReport::not_observed(ids);
        // 1. Only ids whose file exists under the root.
        let mut to_run: Vec<&str> = ids
            .iter()
            .map(String::as_str)
            .filter(|id| {
                node_file(id).is_some_and(|f| safe_relative(f) && ctx.dir.join(f).is_file())
            })
            .collect();
        to_run.sort_unstable();
        to_run.dedup();
        if to_run.is_empty() {
            return report;
        }
        let files: BTreeSet<&str> = to_run.iter().filter_map(|id| node_file(id)).collect();
        // 2. One process: the files on the command line, the exact ids through the plugin.
        let junit_path = ctx.scratch.join("pytest-junit.xml");
        // A file left by an earlier run must never be read as this run's results.
        let _ = std::fs::remove_file(&junit_path);
        let select = match write_select_plugin(ctx, &to_run) {
            Ok(select) => select,
            Err(e) => {
                report.problem = Some(format!(
                    "could not write the test selection into the scratch dir: {e}"
                ));
                return report;
            }
        };
        let (program, mut args) = self.pytest_command();
        args.extend(["-q", "-p", "no:cacheprovider"].map(OsString::from));
        args.push(rootdir_arg(ctx));
        let mut junit_arg = OsString::from("--junitxml=");
        junit_arg.push(&junit_path);
        args.push(junit_arg);
        args.extend(["-o", "junit_family=xunit2"].map(OsString::from));
        args.extend(self.config.args.iter().map(OsString::from));
        args.push(OsString::from("--continue-on-collection-errors"));
        args.extend(["-p", SELECT_PLUGIN].map(OsString::from));
        args.extend(files.iter().map(OsString::from));
        let mut env = python_env();
        env.extend(select);
        let mut ran = exec(ctx, &program, &args, &ctx.dir, &env);
        let problem = ran.operational_problem("pytest");
        let exit = ran.captured().exit_code;
        let exit_text = exit_problem("pytest", ran.captured());
        let stdout = ran.captured().stdout_lossy();
        let stderr = ran.captured().stderr_lossy();
        let junit = std::fs::read(&junit_path).ok();
        if let Some(bytes) = &junit {
            ran.invocation.results = Some(bytes.clone());
            ran.invocation.results_type = Some("application/xml".into());
        }
        report.invocations.push(ran.invocation);
        if let Some(p) = problem {
            report.problem = Some(p);
            return report;
        }
        if let Some(p) = imported_from_outside(ctx) {
            report.problem = Some(p);
            return report;
        }
        // 3. What did not collect, from the same run's results: the JUnit file's collection
        // failures, and the report's sections for what the file does not hold (a conftest that
        // could not be loaded stops pytest before it collects anything).
        let cases_read = junit.as_deref().map(parse_junit);
        let mut errors: Vec<CollectError> = match &cases_read {
            Some(Ok(cases)) => junit_collect_errors(cases, &files),
            _ => Vec::new(),
        };
        for e in collect_errors(&stdout, &stderr) {
            if !errors.iter().any(|known| known.node == e.node) {
                errors.push(e);
            }
        }
        let mut build_failed = false;
        to_run.retain(|id| {
            if errors.iter().any(|e| e.covers(id)) {
                report.outcomes.insert(id.to_string(), Outcome::BuildFail);
                build_failed = true;
                false
            } else {
                true
            }
        });
        if build_failed {
            let requested: Vec<&str> = ids.iter().map(String::as_str).collect();
            let collected = Collected {
                errors,
                ..Collected::default()
            };
            report.build_failure =
                collected.build_failure(ctx, |e| requested.iter().any(|id| e.covers(id)));
        }
        // 4. Read the results.
        let mut problems: Vec<String> = Vec::new();
        let explained = build_failed && matches!(exit, Some(2) | Some(4));
        let exit_believed = PYTEST.is_result_code(exit) || exit == Some(5);
        if !exit_believed && !explained {
            problems.push(exit_text);
        }
        let Some(cases_read) = cases_read else {
            if exit_believed {
                problems.push(format!(
                    "pytest exited with code {} but wrote no JUnit file",
                    exit.unwrap_or(-1)
                ));
            }
            report.problem = join_problems(problems);
            return report;
        };
        let cases = match cases_read {
            Ok(c) => c,
            Err(e) => {
                problems.push(format!("pytest's JUnit file is unreadable: {e}"));
                report.problem = join_problems(problems);
                return report;
            }
        };
        let any_failed = any_failed(&cases);
        // Exit 5 ("nothing collected") agrees only with an empty file; 0 and 1 by the contract.
        let agreement = match exit {
            Some(5) if cases.is_empty() => Ok(()),
            Some(5) => Err("pytest exited with code 5 but its JUnit file has test cases".into()),
            _ => PYTEST.agree(exit, any_failed),
        };
        let agrees = agreement.is_ok();
        if exit_believed {
            problems.extend(agreement.err());
        }
        let by_key: BTreeMap<(&str, &str), &JunitCase> = cases
            .iter()
            .map(|c| ((c.classname.as_str(), c.name.as_str()), c))
            .collect();
        let messages = failure_messages(&cases);
        // Two ids with the same JUnit identity (`a/b.py::C::t` and `a/b/C.py::t`) cannot be told
        // apart in the file: neither is believed.
        let mut key_count: BTreeMap<(String, String), usize> = BTreeMap::new();
        for id in &to_run {
            *key_count.entry(junit_key(id)).or_default() += 1;
        }
        for id in &to_run {
            let key = junit_key(id);
            if key_count.get(&key).copied().unwrap_or(0) > 1 {
                problems.push(format!(
                    "{id}: its JUnit identity is shared with another id"
                ));
                continue;
            }
            let key = (key.0.as_str(), key.1.as_str());
            if let Some(m) = messages.get(&key) {
                report.messages.insert(id.to_string(), m.clone());
            }
            let case = by_key.get(&key);
            let outcome = case_outcome(case.map(|c| c.status), agrees);
            if outcome == Outcome::Fail {
                if let Some(kind) = case.and_then(|c| failure_kind(c)) {
                    report.failure_kinds.insert(id.to_string(), kind);
                }
            }
            report.outcomes.insert(id.to_string(), outcome);
        }
        report.problem = join_problems(problems);
        report
    }

    /// The node id's path after the file, without parameters: `TestA::test_b` of
    /// `tests/test_x.py::TestA::test_b[1]`, as `py/items.py` names items.
    fn test_item(&self, id: &str) -> Option<String> {
        let path = id.split_once('[').map_or(id, |(p, _)| p);
        let (_, item) = path.split_once("::")?;
        (!item.is_empty()).then(|| item.to_string())
    }

    fn item_map(&self, ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
        if !safe_relative(rel_path) {
            return None;
        }
        let file = ctx.dir.join(rel_path);
        if !file.is_file() {
            return None;
        }
        let (program, prefix) = self.pytest_command();
        // The Python that starts pytest parses the file (its grammar is the one the tests run
        // under); a bare `pytest` script leaves no Python to name, so `python3`.
        let python = if prefix.is_empty() {
            OsString::from("python3")
        } else {
            program
        };
        let mut cmd = Command::new(python);
        cmd.arg("-I")
            .arg("-c")
            .arg(ITEMS_SCRIPT)
            .arg(&file)
            .current_dir(&ctx.dir)
            .env("PYTHONDONTWRITEBYTECODE", "1");
        let out = process::run(cmd, ctx.timeout).ok()?;
        if !out.success() {
            return None;
        }
        parse_item_map(&out.stdout)
    }
}

/// The plugin that keeps exactly the requested ids (see the module doc, run step 2).
const SELECT_PLUGIN: &str = "shipmoor_pytest_select";
const SELECT_SCRIPT: &str = include_str!("py/select.py");
/// The `ast` walk that finds a file's test items and imports.
const ITEMS_SCRIPT: &str = include_str!("py/items.py");

/// Writes the selection plugin and the ids it keeps into the scratch dir; the environment that
/// makes pytest find both.
fn write_select_plugin(ctx: &RunCtx, ids: &[&str]) -> std::io::Result<Vec<(OsString, OsString)>> {
    let dir = ctx.scratch.join("pytest-plugin");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join(format!("{SELECT_PLUGIN}.py")), SELECT_SCRIPT)?;
    // A record left by an earlier run must never be read as this run's.
    let _ = std::fs::remove_file(imports_path(ctx));
    let _ = std::fs::remove_file(progress_path(ctx));
    let list = dir.join("selected.txt");
    let mut text = ids.join("\n");
    text.push('\n');
    std::fs::write(&list, text)?;
    // Ahead of what the project sets, which is kept.
    let mut path = dir.clone().into_os_string();
    let existing = ctx
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PYTHONPATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("PYTHONPATH"));
    if let Some(existing) = existing.filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(existing);
    }
    Ok(vec![
        (OsString::from("PYTHONPATH"), path),
        (
            OsString::from("SHIPMOOR_PYTEST_SELECT"),
            list.into_os_string(),
        ),
        (
            OsString::from("SHIPMOOR_PYTEST_IMPORTS"),
            imports_path(ctx).into_os_string(),
        ),
        (
            OsString::from("SHIPMOOR_PYTEST_PROGRESS"),
            progress_path(ctx).into_os_string(),
        ),
        (
            OsString::from("SHIPMOOR_WORKTREE"),
            ctx.worktree.clone().into_os_string(),
        ),
        (
            OsString::from("SHIPMOOR_PYTEST_ROOT"),
            ctx.dir.clone().into_os_string(),
        ),
    ])
}

/// Where the selection plugin appends a JSON line per finished test (`nodeid`, `outcome`,
/// `duration`) while pytest runs: read only for the progress lines of
/// [`crate::floor::progress`], never for an outcome (those come from the JUnit file).
pub fn progress_path(ctx: &RunCtx) -> std::path::PathBuf {
    ctx.scratch.join("pytest-plugin").join("progress.jsonl")
}

/// Where the selection plugin records the worktree's own packages that the run imported from
/// outside the worktree.
fn imports_path(ctx: &RunCtx) -> std::path::PathBuf {
    ctx.scratch.join("pytest-plugin").join("imports.json")
}

/// The worktree's own packages a run imported from outside it (an installed copy, or one that
/// pytest itself loaded first, as it does `iniconfig`): the tests then exercised that copy, not
/// the commit under check, so nothing they report is an observation of this side.
fn imported_from_outside(ctx: &RunCtx) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Outside {
        module: String,
        file: String,
        worktree: String,
    }
    let bytes = std::fs::read(imports_path(ctx)).ok()?;
    let outside: Vec<Outside> = serde_json::from_slice(&bytes).ok()?;
    let first = outside.first()?;
    Some(format!(
        "the tests imported `{}` from {}, not from the worktree's {} ({} module(s) in all): the run observed that copy, not this commit's code; install the checkout in the runner's `setup` (`pip install -e .`) or put its source first on the path (`args: [\"-o\", \"pythonpath=src\"]`); a package pytest itself imports (iniconfig, pluggy, packaging) can only be tested installed",
        first.module,
        first.file,
        first.worktree,
        outside.len()
    ))
}

/// `py/items.py`'s JSON as an [`ItemMap`].
fn parse_item_map(stdout: &[u8]) -> Option<ItemMap> {
    #[derive(serde::Deserialize)]
    struct Raw {
        items: Vec<RawItem>,
        imports: Vec<RawImport>,
    }
    #[derive(serde::Deserialize)]
    struct RawItem {
        name: String,
        start: u32,
        end: u32,
        uses: BTreeSet<String>,
    }
    #[derive(serde::Deserialize)]
    struct RawImport {
        start: u32,
        end: u32,
        names: BTreeSet<String>,
    }
    let raw: Raw = serde_json::from_slice(stdout).ok()?;
    Some(ItemMap {
        items: raw
            .items
            .into_iter()
            .map(|i| TestItem {
                name: i.name,
                lines: Lines {
                    start: i.start,
                    end: i.end,
                },
                uses: i.uses,
            })
            .collect(),
        imports: raw
            .imports
            .into_iter()
            .map(|i| Import {
                lines: Lines {
                    start: i.start,
                    end: i.end,
                },
                names: i.names,
            })
            .collect(),
    })
}

/// The kind of a failed or errored case: the exception type its traceback ends with (the long
/// style's `tests/test_a.py:2: AssertionError`, or the last `E   ValueError: x` line), else
/// the message's (`assert 1 == 2` is pytest's rewritten assertion).
pub(super) fn failure_kind(case: &JunitCase) -> Option<FailureKind> {
    let text = case.text.as_deref().unwrap_or("");
    let from_location = text.lines().rev().find_map(|l| {
        let (at, ty) = l.trim().rsplit_once(": ")?;
        let (_, line) = at.rsplit_once(':')?;
        (line.chars().all(|c| c.is_ascii_digit()) && !line.is_empty() && is_exception_name(ty))
            .then_some(ty)
    });
    let from_e_line = || {
        text.lines().rev().find_map(|l| {
            let rest = l.strip_prefix('E')?.trim_start();
            exception_name_of(rest)
        })
    };
    let message = case.message.as_deref().unwrap_or("").trim();
    let message = message
        .strip_prefix("failed on setup with \"")
        .or_else(|| message.strip_prefix("failed on teardown with \""))
        .unwrap_or(message);
    let from_message = || {
        if message.starts_with("assert ") || message == "assert" {
            Some("AssertionError")
        } else {
            exception_name_of(message)
        }
    };
    let ty = from_location.or_else(from_e_line).or_else(from_message)?;
    let short = ty.rsplit('.').next().unwrap_or(ty);
    Some(match short {
        // `pytest.fail(…)` is the test saying it failed, as an assertion does.
        "AssertionError" | "Failed" => FailureKind::Assertion,
        _ => FailureKind::Exception,
    })
}

/// `ValueError` of `ValueError: x` (also dotted: `mod.Error: x`).
fn exception_name_of(line: &str) -> Option<&str> {
    let (ty, _) = line.split_once(':')?;
    is_exception_name(ty).then_some(ty)
}

fn is_exception_name(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|part| {
            part.chars()
                .next()
                .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// The scope's files to collect: `None` for the whole suite (the scope is `All`, or it holds a
/// Python file that is not a test module by its name, see the module doc).
fn scoped_files(ctx: &RunCtx, scope: &ListScope) -> Option<Vec<String>> {
    let ListScope::Files(files) = scope else {
        return None;
    };
    let mut out = BTreeSet::new();
    for f in files {
        if !f.ends_with(".py") {
            continue;
        }
        let base = f.rsplit('/').next().unwrap_or(f);
        let test_module = base.starts_with("test_") || base.ends_with("_test.py");
        if !test_module || !safe_relative(f) {
            return None;
        }
        if ctx.dir.join(f).is_file() {
            out.insert(f.clone());
        }
    }
    Some(out.into_iter().collect())
}

/// What a `--collect-only` run found.
#[derive(Debug, Default)]
struct Collected {
    ids: Vec<String>,
    errors: Vec<CollectError>,
    problem: Option<String>,
}

impl Collected {
    /// The build failure of the errors `wanted` keeps (`None` when it keeps none).
    fn build_failure(
        &self,
        ctx: &RunCtx,
        wanted: impl Fn(&CollectError) -> bool,
    ) -> Option<BuildFailure> {
        let errors: Vec<&CollectError> = self.errors.iter().filter(|e| wanted(e)).collect();
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
}

/// The files that could not be collected, from pytest's JUnit file: an error case named after
/// the file (`classname=""`, `name="tests.test_x"`, message `collection failure`) whose text is
/// the traceback. The dotted name is matched back to the requested file it mangles to; a name
/// two requested files share is left to the report's own section.
fn junit_collect_errors(cases: &[JunitCase], files: &BTreeSet<&str>) -> Vec<CollectError> {
    let mangled = |f: &str| -> String {
        let dotted = f.replace('/', ".");
        dotted.strip_suffix(".py").unwrap_or(&dotted).to_string()
    };
    cases
        .iter()
        .filter(|c| {
            c.classname.is_empty()
                && c.status == JunitStatus::Errored
                && c.message.as_deref() == Some("collection failure")
        })
        .filter_map(|c| {
            let mut matching = files.iter().filter(|f| mangled(f) == c.name);
            let file = matching.next()?;
            if matching.next().is_some() {
                return None;
            }
            Some(CollectError {
                node: file.to_string(),
                header: format!("ERROR collecting {file}"),
                body: c.text.clone().unwrap_or_default(),
                conftest: false,
            })
        })
        .collect()
}

/// The collection errors in a pytest run's output: `ERROR collecting` sections (stdout) and
/// conftests that could not be loaded (either stream).
fn collect_errors(stdout: &str, stderr: &str) -> Vec<CollectError> {
    let mut errors = parse_collect_errors(stdout);
    errors.extend(parse_conftest_errors(stderr));
    errors.extend(parse_conftest_errors(stdout));
    errors
}

impl Pytest {
    /// `pytest --collect-only` over `paths` (the whole suite when empty).
    fn collect(
        &self,
        ctx: &RunCtx,
        paths: &[String],
        invocations: &mut Vec<Invocation>,
    ) -> Collected {
        let (program, mut args) = self.pytest_command();
        args.extend(["--collect-only", "-q", "-p", "no:cacheprovider"].map(OsString::from));
        args.push(rootdir_arg(ctx));
        args.extend(self.config.args.iter().map(OsString::from));
        // Last, so that it overrides any -v/-q before it: one node id per line.
        args.push(OsString::from("--verbosity=-1"));
        args.extend(paths.iter().map(OsString::from));
        let ran: Ran = exec(ctx, &program, &args, &ctx.dir, &python_env());
        let mut out = Collected::default();
        if let Some(p) = ran.operational_problem("pytest --collect-only") {
            out.problem = Some(p);
            invocations.push(ran.invocation);
            return out;
        }
        let stdout = ran.captured().stdout_lossy();
        let stderr = ran.captured().stderr_lossy();
        out.ids = parse_collect_only(&stdout);
        out.errors = collect_errors(&stdout, &stderr);
        match ran.captured().exit_code {
            Some(0) | Some(5) => {}
            // Collection errors (2), or a conftest that cannot be loaded (4): build failures when
            // we could tell which file; otherwise an operational problem.
            _ if !out.errors.is_empty() => {}
            _ => out.problem = Some(exit_problem("pytest --collect-only", ran.captured())),
        }
        invocations.push(ran.invocation);
        out
    }
}

fn rootdir_arg(ctx: &RunCtx) -> OsString {
    let mut a = OsString::from("--rootdir=");
    a.push(&ctx.dir);
    a
}

fn python_env() -> Vec<(OsString, OsString)> {
    vec![(
        OsString::from("PYTHONDONTWRITEBYTECODE"),
        OsString::from("1"),
    )]
}

/// Whether a `/`-separated path relative to the runner's root belongs to the test suite.
pub(super) fn is_pytest_test_file(rel_path: &str) -> bool {
    let parts: Vec<&str> = rel_path.split('/').filter(|p| !p.is_empty()).collect();
    let Some((base, dirs)) = parts.split_last() else {
        return false;
    };
    if dirs.iter().any(|d| *d == "tests" || *d == "test") {
        return true;
    }
    *base == "conftest.py"
        || (base.starts_with("test_") && base.ends_with(".py"))
        || base.ends_with("_test.py")
}

/// The file part of a node id (`tests/test_a.py` of `tests/test_a.py::TestA::test_b[1]`).
fn node_file(id: &str) -> Option<&str> {
    let file = id.split("::").next()?;
    (!file.is_empty()).then_some(file)
}

/// The repo-relative file of a node id.
fn file_of(ctx: &RunCtx, id: &str) -> Option<String> {
    let file = node_file(id)?;
    worktree_relative(ctx, &ctx.dir.join(file))
}

/// pytest's JUnit `(classname, name)` for a node id (pytest's `mangle_test_address`).
pub(super) fn junit_key(id: &str) -> (String, String) {
    let (path, params) = match id.find('[') {
        Some(i) => (&id[..i], &id[i..]),
        None => (id, ""),
    };
    let mut names: Vec<String> = path.split("::").map(str::to_string).collect();
    if let Some(first) = names.first_mut() {
        let dotted = first.replace('/', ".");
        *first = dotted.strip_suffix(".py").unwrap_or(&dotted).to_string();
    }
    if let Some(last) = names.last_mut() {
        last.push_str(params);
    }
    let name = names.pop().unwrap_or_default();
    (names.join("."), name)
}

/// Node ids in `--collect-only -q` output: the lines before the first blank line or section
/// header that look like node ids.
pub(super) fn parse_collect_only(stdout: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for line in stdout.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            if ids.is_empty() {
                continue;
            }
            break;
        }
        if line.starts_with('=') || line.starts_with('_') || line.starts_with('!') {
            break;
        }
        if line.starts_with(char::is_whitespace) || !line.contains("::") {
            continue;
        }
        ids.push(line.to_string());
    }
    ids
}

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
    fn covers(&self, id: &str) -> bool {
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
    fn files(&self, ctx: &RunCtx) -> Vec<String> {
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
fn traceback_files(body: &str) -> Vec<String> {
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
    fn diagnostic(&self, ctx: &RunCtx) -> Option<Diagnostic> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn ctx() -> RunCtx {
        RunCtx {
            worktree: PathBuf::from("/tmp/wt"),
            dir: PathBuf::from("/tmp/wt/py"),
            scratch: PathBuf::from("/tmp/scratch"),
            timeout: Duration::from_secs(5),
            env: vec![],
        }
    }

    #[test]
    fn test_files() {
        assert!(is_pytest_test_file("test_a.py"));
        assert!(is_pytest_test_file("pkg/a_test.py"));
        assert!(is_pytest_test_file("pkg/conftest.py"));
        assert!(is_pytest_test_file("tests/helpers.py"));
        assert!(is_pytest_test_file("tests/data/x.json"));
        assert!(is_pytest_test_file("src/test/util.py"));
        assert!(!is_pytest_test_file("src/app.py"));
        assert!(!is_pytest_test_file("src/testing.py"));
        assert!(!is_pytest_test_file("tests"));
        assert!(!is_pytest_test_file("test_a.txt"));
    }

    #[test]
    fn junit_keys() {
        let k = |s: &str| junit_key(s);
        assert_eq!(
            k("tests/test_a.py::test_pass"),
            ("tests.test_a".into(), "test_pass".into())
        );
        assert_eq!(
            k("tests/test_a.py::TestA::TestInner::test_c"),
            ("tests.test_a.TestA.TestInner".into(), "test_c".into())
        );
        assert_eq!(
            k("tests/test_a.py::test_param[x::y]"),
            ("tests.test_a".into(), "test_param[x::y]".into())
        );
        assert_eq!(
            k("tests/test_a.py::test_weird[a/b]"),
            ("tests.test_a".into(), "test_weird[a/b]".into())
        );
        assert_eq!(k("test_top.py::t"), ("test_top".into(), "t".into()));
    }

    #[test]
    fn collect_only_output() {
        let out = "tests/sub/test_b.py::test_other\ntests/test_a.py::test_param[a b]\ntests/test_a.py::TestA::test_b\n\n==================================== ERRORS ====================================\n____________________ ERROR collecting tests/test_broken.py _____________________\nImportError while importing test module '/tmp/wt/py/tests/test_broken.py'.\nTraceback:\n/usr/lib/python3.11/importlib/__init__.py:126: in import_module\n    return _bootstrap._gcd_import(name[level:], package, level)\ntests/test_broken.py:1: in <module>\n    import nonexistent_module_xyz\nE   ModuleNotFoundError: No module named 'nonexistent_module_xyz'\n____________________ ERROR collecting tests/test_syntax.py _____________________\n/usr/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule\n    mod = import_path(\nE     File \"/tmp/wt/py/tests/test_syntax.py\", line 1\nE       def test_y(:\nE                  ^\nE   SyntaxError: invalid syntax\n=========================== short test summary info ============================\nERROR tests/test_broken.py\nERROR tests/test_syntax.py\n!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!\n3 tests collected, 2 errors in 0.21s\n";
        assert_eq!(
            parse_collect_only(out),
            vec![
                "tests/sub/test_b.py::test_other",
                "tests/test_a.py::test_param[a b]",
                "tests/test_a.py::TestA::test_b"
            ]
        );
        let errors = parse_collect_errors(out);
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].node, "tests/test_broken.py");
        assert_eq!(errors[1].node, "tests/test_syntax.py");
        let c = ctx();
        assert_eq!(errors[0].files(&c), vec!["py/tests/test_broken.py"]);
        assert_eq!(errors[1].files(&c), vec!["py/tests/test_syntax.py"]);
        assert!(errors[0].covers("tests/test_broken.py::test_x"));
        assert!(!errors[0].covers("tests/test_broken.py2::test_x"));
        assert!(!errors[0].covers("tests/test_a.py::test_x"));

        // Nothing collected and only errors.
        let only_errors = "\n==================================== ERRORS ====================================\n____ ERROR collecting tests/test_x.py ____\nE   NameError: x\n";
        assert!(parse_collect_only(only_errors).is_empty());
        assert_eq!(parse_collect_errors(only_errors).len(), 1);
        assert!(parse_collect_only("\nno tests collected in 0.00s\n").is_empty());
    }

    #[test]
    fn collection_failures_in_the_junit_file() {
        let xml = br#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="0" skipped="0" tests="2"><testcase classname="" name="tests.test_broken" time="0.000"><error message="collection failure">Traceback:
tests/test_broken.py:2: in &lt;module&gt;
    from app import newname
E   ImportError: cannot import name 'newname' from 'app'</error></testcase><testcase classname="tests.test_a" name="test_c" time="0.001" /></testsuite></testsuites>"#;
        let cases = parse_junit(xml).unwrap();
        let files: BTreeSet<&str> = ["tests/test_broken.py", "tests/test_a.py"].into();
        let errors = junit_collect_errors(&cases, &files);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].node, "tests/test_broken.py");
        assert!(errors[0].covers("tests/test_broken.py::test_x"));
        let d = errors[0].diagnostic(&ctx()).unwrap();
        assert_eq!((d.file.as_str(), d.line), ("py/tests/test_broken.py", 2));
        assert_eq!(d.names, vec!["newname"]);
        // Two requested files that mangle to one name: left to the output's sections.
        let both: BTreeSet<&str> = ["tests/test_broken.py", "tests.test_broken.py"].into();
        assert!(junit_collect_errors(&cases, &both).is_empty());
    }

    #[test]
    fn conftest_errors() {
        let err = "ImportError while loading conftest '/tmp/wt/py/tests/conftest.py'.\ntests/conftest.py:1: in <module>\n    import nope_mod\nE   ModuleNotFoundError: No module named 'nope_mod'\n";
        let errors = parse_conftest_errors(err);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].conftest);
        assert!(errors[0].covers("anything.py::t"));
        assert_eq!(errors[0].files(&ctx()), vec!["py/tests/conftest.py"]);
    }

    #[test]
    fn traceback_file_lines() {
        let body = "tests/test_x.py:1: in <module>\n    from app import f\napp.py:3: in <module>\n    raise X\nE     File \"/tmp/wt/py/app2.py\", line 4\n<frozen importlib._bootstrap>:1204: in _gcd_import\n";
        assert_eq!(
            traceback_files(body),
            vec!["tests/test_x.py", "app.py", "/tmp/wt/py/app2.py"]
        );
    }

    #[test]
    fn failure_kinds() {
        let case = |message: &str, text: &str| JunitCase {
            classname: "tests.test_a".into(),
            name: "t".into(),
            file: None,
            status: JunitStatus::Failed,
            message: Some(message.into()),
            text: Some(text.into()),
        };
        let k = |m: &str, t: &str| failure_kind(&case(m, t));
        assert_eq!(
            k("assert 1 == 2", "def test_a():\n>       assert 1 == 2\nE       assert 1 == 2\n\ntests/test_a.py:2: AssertionError"),
            Some(FailureKind::Assertion)
        );
        assert_eq!(
            k(
                "ValueError: x",
                "E       ValueError: x\n\ntests/test_a.py:4: ValueError"
            ),
            Some(FailureKind::Exception)
        );
        // `--tb=short`: only `E` lines.
        assert_eq!(
            k("AttributeError: module 'app' has no attribute 'f'", "tests/test_a.py:4: in test_a\n    app.f()\nE   AttributeError: module 'app' has no attribute 'f'"),
            Some(FailureKind::Exception)
        );
        assert_eq!(k("Failed: nope", ""), Some(FailureKind::Assertion));
        assert_eq!(
            k("failed on setup with \"RuntimeError: setup boom\"", ""),
            Some(FailureKind::Exception)
        );
        assert_eq!(k("", ""), None);
    }

    #[test]
    fn collection_error_positions() {
        let tmp = tempfile::tempdir().unwrap();
        let wt = tmp.path().join("wt");
        for f in ["py/tests/test_x.py", "py/helper.py"] {
            std::fs::create_dir_all(wt.join(f).parent().unwrap()).unwrap();
            std::fs::write(wt.join(f), "").unwrap();
        }
        let c = RunCtx {
            worktree: wt.clone(),
            dir: wt.join("py"),
            ..ctx()
        };
        let d = |out: &str| {
            parse_collect_errors(out)[0]
                .diagnostic(&c)
                .map(|d| (d.file, d.line, d.message))
        };
        let import = "____ ERROR collecting tests/test_x.py ____\nImportError while importing test module '/x/tests/test_x.py'.\nTraceback:\n/usr/lib/python3.11/importlib/__init__.py:126: in import_module\n    return _bootstrap._gcd_import(name[level:], package, level)\ntests/test_x.py:3: in <module>\n    from app import new\nE   ImportError: cannot import name 'new' from 'app'\n";
        assert_eq!(
            d(import),
            Some((
                "py/tests/test_x.py".into(),
                3,
                "ImportError: cannot import name 'new' from 'app'".into()
            ))
        );
        // Raised inside a module the test imports: that module's line, not the test's.
        let via = "____ ERROR collecting tests/test_x.py ____\ntests/test_x.py:1: in <module>\n    from helper import h\nhelper.py:2: in <module>\n    from app import nothere\nE   ImportError: cannot import name 'nothere'\n";
        assert_eq!(d(via).map(|d| (d.0, d.1)), Some(("py/helper.py".into(), 2)));
        let syntax = format!("____ ERROR collecting tests/test_x.py ____\n/usr/lib/python3.11/ast.py:50: in parse\n    return compile(source, filename, mode, flags,\nE     File \"{}/py/tests/test_x.py\", line 4\nE       bad indent\nE                 ^\nE   IndentationError: unindent does not match any outer indentation level\n", wt.display());
        assert_eq!(
            d(&syntax),
            Some((
                "py/tests/test_x.py".into(),
                4,
                "IndentationError: unindent does not match any outer indentation level".into()
            ))
        );
        // Only installed packages in the traceback: no position to attribute by.
        let outside = "____ ERROR collecting tests/test_x.py ____\n/usr/lib/python3.11/site-packages/p.py:3: in f\nE   RuntimeError: x\n";
        assert_eq!(d(outside), None);
    }

    #[test]
    fn node_files() {
        assert_eq!(node_file("tests/a.py::t[x::y]"), Some("tests/a.py"));
        assert!(safe_relative("tests/a.py"));
        assert!(!safe_relative("../a.py"));
        assert!(!safe_relative("/etc/a.py"));
    }
}
