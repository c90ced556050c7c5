//! Which pytest the runner starts, under which Python: the command found once per adapter, the
//! tool line of the report (`pytest 8.3.3, Python 3.11.2 at /usr/bin/python3`), and the
//! arguments and environment every pytest command of the floor takes.

use std::ffi::OsString;
use std::time::Duration;

use super::Pytest;
use crate::floor::runners::{Probe, RunCtx};
use crate::process;

/// How pytest is started: the program and the arguments before pytest's own.
pub(super) type PytestCommand = (OsString, Vec<OsString>);

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
pub(super) fn describe(command: &PytestCommand, probe: &Probe) -> Option<String> {
    let python = interpreter(command)?;
    let mut cmd = probe.command(&python);
    cmd.args([
        "-c",
        "import sys, pytest; print(pytest.__version__); print(sys.version.split()[0]); print(sys.executable)",
    ])
    .env("PYTHONDONTWRITEBYTECODE", "1");
    let out = probe.run(cmd, Duration::from_secs(60)).ok()?;
    if !out.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines().map(str::trim);
    let (pytest, version, executable) = (lines.next()?, lines.next()?, lines.next()?);
    Some(format!("pytest {pytest}, Python {version} at {executable}"))
}

/// `python3 -m pytest` (or `python -m pytest`) when that answers `--version`, else `pytest` when
/// it is on `PATH`; `None` when neither works.
pub(super) fn find_pytest(probe: &Probe) -> Option<PytestCommand> {
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
        let mut cmd = probe.command(program);
        cmd.args(prefix)
            .arg("--version")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        matches!(probe.run(cmd, Duration::from_secs(60)), Ok(c) if c.success())
    })
}

impl Pytest {
    /// The command to start pytest with, found once per adapter.
    pub(super) fn pytest_command(&self, probe: &Probe) -> PytestCommand {
        self.command
            .get_or_init(|| find_pytest(probe))
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

pub(super) fn rootdir_arg(ctx: &RunCtx) -> OsString {
    let mut a = OsString::from("--rootdir=");
    a.push(&ctx.dir);
    a
}

pub(super) fn python_env() -> Vec<(OsString, OsString)> {
    vec![(
        OsString::from("PYTHONDONTWRITEBYTECODE"),
        OsString::from("1"),
    )]
}
