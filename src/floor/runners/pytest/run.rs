//! Running pytest's tests: the requested node ids in one pytest process, the exact ids kept by
//! the floor's selection plugin (`py/select.py`).
//!
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
//! 3. and 4. What was collected and how each test ended are read from that one run (see
//!    [`super::report`]). A run that imported the worktree's own packages from outside it
//!    observed that copy, not the commit's code: a problem, and no outcome is read.

use std::collections::BTreeSet;
use std::ffi::OsString;

use super::report::{read_run, Output};
use super::tool::{python_env, rootdir_arg};
use super::{node_file, Pytest};
use crate::floor::runners::junit::JunitFile;
use crate::floor::runners::kit::{exec, exit_problem, safe_relative};
use crate::floor::runners::Probe;
use crate::floor::runners::{RunCtx, RunReport};

impl Pytest {
    /// [`crate::floor::runners::Runner::run`] for pytest (see the module doc).
    pub(super) fn run_tests(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
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
        let (program, mut args) = self.pytest_command(&Probe::of(ctx));
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
        let output = Output {
            exit: ran.captured().exit_code,
            exit_text: exit_problem("pytest", ran.captured()),
            stdout: ran.captured().stdout_lossy(),
            stderr: ran.captured().stderr_lossy(),
            junit: JunitFile::read(&junit_path, &mut ran.invocation),
        };
        report.invocations.push(ran.invocation);
        if let Some(p) = problem {
            report.problem = Some(p);
            return report;
        }
        if let Some(p) = imported_from_outside(ctx) {
            report.problem = Some(p);
            return report;
        }
        read_run(ctx, &mut report, ids, to_run, &files, output);
        report
    }
}

/// The plugin that keeps exactly the requested ids (see the module doc, step 2).
const SELECT_PLUGIN: &str = "shipmoor_pytest_select";
const SELECT_SCRIPT: &str = include_str!("../py/select.py");

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
    let existing = ctx.var("PYTHONPATH");
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
    let bytes = super::super::read_run_file(&imports_path(ctx)).ok()??;
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
