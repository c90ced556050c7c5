//! A test binary cargo built, and how the `cargo test` adapter starts one as `cargo test`
//! would: in its package's directory, with the environment `cargo test` gives it and the
//! toolchain's libraries on the loader's path.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::cargo_meta::{exec, WorkspacePackage};
use crate::floor::runners::RunCtx;
use crate::process;

/// A test binary cargo built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TestBinary {
    /// As nextest spells it (see [`super`]).
    pub binary_id: String,
    pub package_name: String,
    pub package_version: Option<String>,
    /// The nextest kind: `lib`, `proc-macro`, `test`, `bin`, `example`, `bench`.
    pub kind: String,
    pub target_name: String,
    pub src_path: PathBuf,
    pub executable: PathBuf,
    pub manifest_path: PathBuf,
}

impl TestBinary {
    /// The package's directory, where cargo runs its tests.
    pub fn package_dir(&self) -> PathBuf {
        self.manifest_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// The environment `cargo test` gives a test binary, so that a direct start sees the same
    /// (checked against what a test run by `cargo test` 1.95 prints of its environment):
    /// `CARGO`, `CARGO_MANIFEST_DIR`, `CARGO_MANIFEST_PATH`, every `CARGO_PKG_*` of the
    /// package's manifest, and the dynamic library path (the build's profile and `deps`
    /// directories, then the toolchain's libraries, then what was already there), without which
    /// a proc-macro or dylib crate's test binary cannot load `libstd` and exits 127. Not set,
    /// because cargo sets them at compile time only: `CARGO_TARGET_TMPDIR`, `CARGO_CRATE_NAME`,
    /// `CARGO_PRIMARY_PACKAGE`. `[env]` of `.cargo/config.toml` is not applied.
    pub fn runtime_env(
        &self,
        ctx: &RunCtx,
        package: Option<&WorkspacePackage>,
        toolchain_lib_dirs: &[PathBuf],
    ) -> Vec<(OsString, OsString)> {
        let mut env = vec![
            (
                OsString::from("CARGO_MANIFEST_DIR"),
                self.package_dir().into_os_string(),
            ),
            (
                OsString::from("CARGO_MANIFEST_PATH"),
                self.manifest_path.clone().into_os_string(),
            ),
            (
                OsString::from("CARGO_PKG_NAME"),
                OsString::from(&self.package_name),
            ),
        ];
        if let Some(v) = &self.package_version {
            env.push((OsString::from("CARGO_PKG_VERSION"), OsString::from(v)));
            let core = v.split(['-', '+']).next().unwrap_or(v);
            let mut parts = core.split('.');
            for key in [
                "CARGO_PKG_VERSION_MAJOR",
                "CARGO_PKG_VERSION_MINOR",
                "CARGO_PKG_VERSION_PATCH",
            ] {
                env.push((
                    OsString::from(key),
                    OsString::from(parts.next().unwrap_or("")),
                ));
            }
            let pre = v
                .split_once('-')
                .map(|(_, p)| p.split('+').next().unwrap_or(""))
                .unwrap_or("");
            env.push((OsString::from("CARGO_PKG_VERSION_PRE"), OsString::from(pre)));
        }
        if let Some(p) = package {
            for (suffix, value) in &p.manifest_env {
                env.push((
                    OsString::from(format!("CARGO_PKG_{suffix}")),
                    OsString::from(value),
                ));
            }
        }
        if let Some(cargo) = process::which("cargo") {
            env.push((OsString::from("CARGO"), cargo.into_os_string()));
        }
        let mut lib_dirs: Vec<PathBuf> = Vec::new();
        if let Some(deps) = self.executable.parent() {
            if let Some(profile) = deps.parent() {
                lib_dirs.push(profile.to_path_buf());
            }
            lib_dirs.push(deps.to_path_buf());
        }
        lib_dirs.extend(toolchain_lib_dirs.iter().cloned());
        let var = dylib_path_var();
        let old = ctx
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == var)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os(var));
        match old {
            Some(old) => lib_dirs.extend(std::env::split_paths(&old)),
            // As cargo does: setting the fallback path replaces dyld's default, so add it back.
            None if cfg!(target_os = "macos") => {
                if let Some(home) = std::env::var_os("HOME") {
                    lib_dirs.push(PathBuf::from(home).join("lib"));
                }
                lib_dirs.extend(["/usr/local/lib", "/usr/lib"].map(PathBuf::from));
            }
            None => {}
        }
        let mut seen = BTreeSet::new();
        lib_dirs.retain(|d| !d.as_os_str().is_empty() && seen.insert(d.clone()));
        if let Ok(joined) = std::env::join_paths(lib_dirs) {
            env.push((OsString::from(var), joined));
        }
        env
    }
}

/// The variable the platform's loader searches for dynamic libraries, as cargo sets it.
fn dylib_path_var() -> &'static str {
    if cfg!(windows) {
        "PATH"
    } else if cfg!(target_os = "macos") {
        "DYLD_FALLBACK_LIBRARY_PATH"
    } else {
        "LD_LIBRARY_PATH"
    }
}

/// The toolchain's library directories, where `libstd-….so` lives: `rustc --print
/// target-libdir` and the sysroot's `lib` (`rustc --print sysroot`), asked in `ctx.dir` so
/// that a `rust-toolchain.toml` there picks the same toolchain as cargo. Empty when rustc
/// cannot tell; a binary that needs them then fails to start and says so.
pub(super) fn toolchain_lib_dirs(ctx: &RunCtx) -> Vec<PathBuf> {
    let rustc = ctx.var("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let args = ["--print", "target-libdir", "--print", "sysroot"].map(OsString::from);
    let ran = exec(ctx, &rustc, &args, &ctx.dir, &[]);
    if ran.operational_problem("rustc").is_some() || !ran.captured().success() {
        return Vec::new();
    }
    let out = ran.captured().stdout_lossy();
    let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
    let (Some(libdir), Some(sysroot)) = (lines.next(), lines.next()) else {
        return Vec::new();
    };
    vec![PathBuf::from(libdir), Path::new(sysroot).join("lib")]
}
