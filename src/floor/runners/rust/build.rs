//! Building the test targets with cargo, for the `cargo test` adapter, and reading cargo's
//! `--message-format=json` stream, for both Rust runners (nextest forwards cargo's messages):
//! the test binaries cargo built, the compiler errors ([`super::diagnostics`]), and whether the
//! build finished; a build that fails is a build failure when the compiler says why, else an
//! operational problem. Where a build of several targets fails, each target is built alone, so
//! that only the targets that do not compile count as build failures. The stream is kept as
//! evidence in target order, whatever order cargo's parallel builds finished in.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

use serde_json::Value;

use super::binary::TestBinary;
use super::cargo_meta::{binary_id, exec, nextest_kind, WorkspacePackage};
use super::diagnostics::{build_failure, compiler_error, CompilerError};
use crate::floor::runners::kit::{exit_problem, parse_package_id};
use crate::floor::runners::Problem;
use crate::floor::runners::{BuildFailure, Invocation, RunCtx};

/// What cargo's `--message-format=json` stream said.
#[derive(Debug, Clone, Default)]
pub(super) struct CargoMessages {
    /// Test binaries, one per binary id, by binary id: cargo reports them as their builds
    /// finish, in no fixed order, and the listing and its evidence follow this order.
    pub binaries: Vec<TestBinary>,
    pub errors: Vec<CompilerError>,
    /// The `build-finished` message's `success`, when there was one.
    pub build_success: Option<bool>,
    /// JSON lines that are not cargo messages (nextest prints its test list among them).
    pub other_json: Vec<Value>,
}

/// Reads cargo's JSON message stream; lines that are not JSON are skipped.
pub(super) fn parse_cargo_messages(stdout: &[u8]) -> CargoMessages {
    let mut msgs = CargoMessages::default();
    let mut seen_ids = BTreeSet::new();
    for line in String::from_utf8_lossy(stdout).lines() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match v.get("reason").and_then(Value::as_str) {
            Some("compiler-artifact") => {
                if let Some(bin) = test_binary(&v) {
                    if seen_ids.insert(bin.binary_id.clone()) {
                        msgs.binaries.push(bin);
                    }
                }
            }
            Some("compiler-message") => {
                if let Some(err) = compiler_error(&v) {
                    msgs.errors.push(err);
                }
            }
            Some("build-finished") => {
                msgs.build_success = v.get("success").and_then(Value::as_bool);
            }
            Some(_) => {}
            None => msgs.other_json.push(v),
        }
    }
    msgs.binaries.sort_by(|a, b| a.binary_id.cmp(&b.binary_id));
    msgs
}

/// The test binary a `compiler-artifact` message reports: one built with the test profile that
/// has an executable.
fn test_binary(v: &Value) -> Option<TestBinary> {
    if v.pointer("/profile/test").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let executable = v.get("executable").and_then(Value::as_str)?;
    let target = v.get("target")?;
    let kinds: Vec<&str> = target
        .get("kind")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let target_name = target.get("name")?.as_str()?.to_string();
    let src_path = PathBuf::from(target.get("src_path")?.as_str()?);
    let manifest_path = PathBuf::from(v.get("manifest_path")?.as_str()?);
    let (package_name, package_version) = parse_package_id(v.get("package_id")?.as_str()?)?;
    let kind = nextest_kind(&kinds)?;
    let binary_id = binary_id(&package_name, &kind, &target_name);
    Some(TestBinary {
        binary_id,
        package_name,
        package_version,
        kind,
        target_name,
        src_path,
        executable: PathBuf::from(executable),
        manifest_path,
    })
}

/// The outcome of building the tests.
pub(super) enum Build {
    Built(CargoMessages),
    Failed(BuildFailure),
    Problem(String),
}

/// What building the selected targets gave: the binaries that built, and per binary id that
/// did not, its build failure.
pub(super) struct SelectedBuild {
    pub binaries: Vec<TestBinary>,
    pub failed: BTreeMap<String, BuildFailure>,
}

/// The cargo target selection for a binary id: `pkg` → `--lib`, `pkg::name` → `--test name`,
/// `pkg::bin/name` → `--bin name` (likewise `example/`, `bench/`).
fn target_selector(binary_id: &str) -> (String, Vec<String>) {
    match binary_id.split_once("::") {
        None => (binary_id.to_string(), vec!["--lib".into()]),
        Some((pkg, rest)) => {
            let sel = match rest.split_once('/') {
                Some((kind @ ("bin" | "example" | "bench" | "test"), name)) => {
                    vec![format!("--{kind}"), name.to_string()]
                }
                _ => vec!["--test".into(), rest.to_string()],
            };
            (pkg.to_string(), sel)
        }
    }
}

/// Builds the test targets that hold `ids`, one `cargo test --no-run -p SPEC <targets>` per
/// package; when a build with several targets fails, each target is built alone so that only
/// the targets that do not compile count as build failures. A target that does not exist at
/// this side (its file is new) is skipped: its tests stay not observed.
pub(super) fn build_selected(
    ctx: &RunCtx,
    cargo_args: &[String],
    members: &BTreeMap<String, WorkspacePackage>,
    ids: &[String],
    invocations: &mut Vec<Invocation>,
) -> Result<SelectedBuild, Problem> {
    // Keyed by the package id spec: a bare name is ambiguous when the lock file holds a
    // registry package of that name too. A package that is no member at this side (new at
    // head) has nothing to build; its tests stay not observed.
    let mut by_package: BTreeMap<String, BTreeSet<(String, Vec<String>)>> = BTreeMap::new();
    for id in ids {
        if let Some((binary_id, _)) = id.split_once(' ') {
            let (pkg, sel) = target_selector(binary_id);
            let Some(member) = members.get(&pkg) else {
                continue;
            };
            by_package
                .entry(member.id.clone())
                .or_default()
                .insert((binary_id.to_string(), sel));
        }
    }
    let mut out = SelectedBuild {
        binaries: Vec::new(),
        failed: BTreeMap::new(),
    };
    let mut problems = Vec::new();
    for (pkg, targets) in &by_package {
        let mut groups: Vec<Vec<&(String, Vec<String>)>> = vec![targets.iter().collect()];
        while let Some(group) = groups.pop() {
            let mut args = cargo_args.to_vec();
            args.extend(["-p".to_string(), pkg.clone()]);
            for (_, sel) in &group {
                args.extend(sel.iter().cloned());
            }
            match build_tests(ctx, &args, invocations) {
                Build::Built(msgs) => out.binaries.extend(msgs.binaries),
                Build::Failed(_) | Build::Problem(_) if group.len() > 1 => {
                    groups.extend(group.iter().map(|t| vec![*t]));
                }
                Build::Failed(bf) => {
                    for (binary_id, _) in &group {
                        out.failed.insert(binary_id.clone(), bf.clone());
                    }
                }
                Build::Problem(p) => problems.push(p),
            }
        }
    }
    // Problems that are only "no such target" leave those tests unobserved; any other stops.
    let real: Vec<String> = problems
        .into_iter()
        .filter(|p| {
            !p.contains("no test target")
                && !p.contains("no bin target")
                && !p.contains("no library targets")
                && !p.contains("did not match any packages")
                && !p.contains("no example target")
                && !p.contains("no bench target")
        })
        .collect();
    if real.is_empty() {
        Ok(out)
    } else {
        Err(Problem(real.join("; ")))
    }
}

/// `cargo test --no-run --message-format=json <cargo args>` in `ctx.dir`.
pub(super) fn build_tests(
    ctx: &RunCtx,
    cargo_args: &[String],
    invocations: &mut Vec<Invocation>,
) -> Build {
    let mut args: Vec<OsString> = ["test", "--no-run", "--message-format=json"]
        .map(OsString::from)
        .to_vec();
    args.extend(cargo_args.iter().map(OsString::from));
    let ran = exec(ctx, OsStr::new("cargo"), &args, &ctx.dir, &[]);
    let problem = ran.operational_problem("cargo test --no-run");
    let msgs = parse_cargo_messages(&ran.captured().stdout);
    let exit_ok = ran.captured().success();
    let exit_text = exit_problem("cargo test --no-run", ran.captured());
    let mut invocation = ran.invocation;
    invocation.captured.stdout = in_target_order(&invocation.captured.stdout);
    invocations.push(invocation);
    if let Some(p) = problem {
        return Build::Problem(p);
    }
    classify_build(ctx, msgs, exit_ok, &exit_text, invocations)
}

/// Cargo's JSON message stream with each target's messages together, targets by package and
/// target, `build-finished` last: cargo emits them as its parallel builds finish, in no fixed
/// order, and the stream is evidence, whose bytes the same inputs must reproduce. Each target's
/// own messages keep their order (one compiler wrote them); lines that are not JSON come first,
/// as they were.
pub(super) fn in_target_order(stdout: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(stdout);
    let mut lines: Vec<(u8, String, String, String, &str)> = text
        .lines()
        .map(|line| {
            let Ok(v) = serde_json::from_str::<Value>(line.trim()) else {
                return (0, String::new(), String::new(), String::new(), line);
            };
            let field = |p: &str| v.pointer(p).map(|f| f.to_string()).unwrap_or_default();
            let last = u8::from(v.get("reason").and_then(Value::as_str) == Some("build-finished"));
            (
                1 + last,
                field("/package_id"),
                field("/target/kind"),
                field("/target/name"),
                line,
            )
        })
        .collect();
    // Stable: each target's messages stay in the order cargo printed them.
    lines.sort_by(|a, b| (a.0, &a.1, &a.2, &a.3).cmp(&(b.0, &b.1, &b.2, &b.3)));
    let mut out = Vec::with_capacity(stdout.len());
    for (_, _, _, _, line) in lines {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    // As printed: no final newline added to a stream that had none.
    if !stdout.ends_with(b"\n") {
        out.pop();
    }
    out
}

/// Decides between a good build, a build failure (compiler errors) and an operational problem
/// (cargo failed without a compiler error: a bad manifest, a network error, a build script).
pub(super) fn classify_build(
    ctx: &RunCtx,
    msgs: CargoMessages,
    exit_ok: bool,
    exit_text: &str,
    invocations: &mut Vec<Invocation>,
) -> Build {
    let failed = !exit_ok || msgs.build_success == Some(false);
    if !failed {
        return Build::Built(msgs);
    }
    if msgs.errors.is_empty() {
        return Build::Problem(exit_text.to_string());
    }
    Build::Failed(build_failure(ctx, &msgs.errors, invocations))
}

#[cfg(test)]
mod tests;
