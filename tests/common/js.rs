//! The JavaScript test tools, installed once per test run with npm into
//! `$CARGO_TARGET_TMPDIR/js-tools/<tool>` under a lock directory (nextest runs each test in its
//! own process). Tests that need them fail, naming what is missing, when node or npm is absent.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use shipmoor::acceptance::RunnerKind;

use super::lock::Lock;

pub fn require_program(program: &str) {
    let ok = Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "`{program} --version` does not run: the vitest/jest adapter tests need Node.js 20+ with \
         npm on PATH (https://nodejs.org)"
    );
}

/// The `node_modules` directory holding `spec` (`vitest@3`), installed once.
pub fn install(tool: &str, spec: &str) -> PathBuf {
    require_program("node");
    require_program("npm");
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("js-tools");
    std::fs::create_dir_all(&base).unwrap();
    let dir = base.join(tool);
    let marker = dir.join(".installed");
    let done = || std::fs::read_to_string(&marker).is_ok_and(|s| s == spec);
    if done() {
        return dir.join("node_modules");
    }
    let _lock = Lock::acquire(base.join(format!("{tool}.lock")));
    if done() {
        return dir.join("node_modules");
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("package.json"),
        format!("{{\"name\": \"shipmoor-test-{tool}\", \"private\": true}}\n"),
    )
    .unwrap();
    let out = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", spec])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "`npm install {spec}` failed in {}:\n{}\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        dir.join("node_modules/.bin").join(tool).exists(),
        "npm installed {spec} but there is no node_modules/.bin/{tool}"
    );
    std::fs::write(&marker, spec).unwrap();
    dir.join("node_modules")
}

pub fn node_modules(kind: RunnerKind) -> PathBuf {
    static VITEST: OnceLock<PathBuf> = OnceLock::new();
    static JEST: OnceLock<PathBuf> = OnceLock::new();
    match kind {
        RunnerKind::Vitest => VITEST.get_or_init(|| install("vitest", "vitest@3")).clone(),
        RunnerKind::Jest => JEST.get_or_init(|| install("jest", "jest@29")).clone(),
        _ => unreachable!(),
    }
}
