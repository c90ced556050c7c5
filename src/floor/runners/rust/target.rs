//! Seeding a side's cargo target dir (base's from head's, head's from the checkout's) without
//! letting the other build's code run: a copy of what a test build reuses, with every unit of
//! the workspace's own path packages removed (book: floor/environment.md, "Build outputs").

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::process;

use super::super::kit::first_line;
use super::cargo_meta::cargo_error;

/// What seeding a target dir did.
#[derive(Debug, Clone)]
pub struct Seeded {
    /// The path packages whose units were removed from the copy, as `name@version`.
    pub cleaned: Vec<String>,
    /// Whether the project had no `Cargo.lock` and was given the one passed in (see
    /// [`seed_cargo_target`]).
    pub lock_given: bool,
    pub duration: Duration,
}
/// Why a target dir was not seeded: the side then builds from scratch, and its runtime row
/// says why.
#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    /// A command (`cargo metadata`, `cp`, …) that could not be run.
    #[error("{what}: {source}")]
    Spawn {
        what: &'static str,
        source: std::io::Error,
    },
    /// A command that ran and failed, with the first words of its error.
    #[error("{what} failed: {message}")]
    Failed { what: &'static str, message: String },
    #[error("cargo locate-project printed {}", .0.display())]
    Located(PathBuf),
    #[error("copying {} into place: {source}", path.display())]
    CopyLock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("restoring {}: {source}", path.display())]
    RestoreLock {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A directory of the target dir that could not be listed.
    #[error("{}: {source}", path.display())]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cargo metadata: {0}")]
    Metadata(serde_json::Error),
    #[error("cargo metadata lists no path package")]
    NoPathPackage,
    #[error("rustc -vV names no host: {0}")]
    NoHost(String),
}

/// The [`SeedError`] of a command `what` that could not be run.
fn spawn(what: &'static str) -> impl FnOnce(std::io::Error) -> SeedError {
    move |source| SeedError::Spawn { what, source }
}

/// Makes `to` a copy of the cargo target dir `from` (reflinked where the file system can) and
/// removes from it every unit of the path packages of the project in `project_dir`, so that
/// only registry crates (keyed by name, version and features) are reused.
///
/// Why not share or plainly copy: cargo's fingerprints compare mtimes and dep-info records
/// package-relative paths, so sources older than the copied artifacts look fresh and the other
/// checkout's test binary runs, reporting a wrong pass. `cargo clean -p` of the path packages
/// forces them to rebuild from this checkout's sources.
///
/// Only what a test build reuses is copied (see [`copy_target`]). Finding the path packages
/// needs the dependency graph resolved, offline. A project that does not track its
/// `Cargo.lock` has none in a fresh worktree, and a fresh resolution can pick other registry
/// versions than the build the copy comes from (or, offline, find some index entries missing);
/// so when `lock` names a lock file (the one the build `from` was made with) and the project
/// has none, that lock is put in place and left there, an untracked file: the build that
/// follows then resolves the same registry versions, which is what makes the copy worth
/// having. A lock the project does have is left as it was (restored should resolution rewrite
/// it). Packages are named by their package id spec, since a name alone can be ambiguous (see
/// [`crate::floor::runners::rust::cargo`]).
/// Cargo runs in `jail` (a side's: `to` and the project's worktree writable): it reads the
/// change's manifests, and a `rust-toolchain.toml` there can name a toolchain of the change's own.
pub fn seed_cargo_target(
    from: &Path,
    to: &Path,
    project_dir: &Path,
    lock: Option<&Path>,
    timeout: Duration,
    jail: &crate::sandbox::Jail,
) -> Result<Seeded, SeedError> {
    let confine = process::Confine::Sandboxed(jail);
    let started = std::time::Instant::now();
    let cargo = |args: &[&str]| {
        let mut cmd = Command::new("cargo");
        cmd.args(args)
            .current_dir(project_dir)
            .env("CARGO_TARGET_DIR", to)
            .env("CARGO_TERM_COLOR", "never");
        cmd
    };
    copy_target(
        from,
        to,
        &own_unit_names(&cargo, timeout, confine),
        timeout,
        &jail.env,
    )?;
    let loc = cargo(&[
        "locate-project",
        "--workspace",
        "--message-format",
        "plain",
        "--offline",
    ]);
    let l = process::run(loc, timeout, confine).map_err(spawn("cargo locate-project"))?;
    if !l.success() {
        return Err(SeedError::Failed {
            what: "cargo locate-project",
            message: cargo_error(&l.stderr_lossy()),
        });
    }
    let root_manifest = PathBuf::from(l.stdout_lossy().trim());
    let lock_path = root_manifest
        .parent()
        .map(|d| d.join("Cargo.lock"))
        .ok_or_else(|| SeedError::Located(root_manifest.clone()))?;
    let kept = std::fs::read(&lock_path).ok();
    let mut lock_given = false;
    if let (None, Some(lock)) = (&kept, lock) {
        if lock.is_file() {
            std::fs::copy(lock, &lock_path).map_err(|source| SeedError::CopyLock {
                path: lock.to_path_buf(),
                source,
            })?;
            lock_given = true;
        }
    }
    let result = clean_path_packages(&cargo, project_dir, timeout, confine);
    if let Some(bytes) = kept {
        if std::fs::read(&lock_path).ok().as_ref() != Some(&bytes) {
            std::fs::write(&lock_path, bytes).map_err(|source| SeedError::RestoreLock {
                path: lock_path.clone(),
                source,
            })?;
        }
    }
    Ok(Seeded {
        cleaned: result?,
        lock_given,
        duration: started.elapsed(),
    })
}

/// The profile directories a copy keeps: what `cargo test` builds into (`debug`), and
/// `release` for runners given `--release`.
const PROFILE_DIRS: [&str; 2] = ["debug", "release"];

/// Copies of the target dir `from` what a test build can reuse: its top-level files and the
/// [`PROFILE_DIRS`], without their `incremental` directories and without the units of the
/// workspace's own crates (`own`: package and target names, see [`owned`]). A checkout's
/// target dir can also hold docs, packaged crates, coverage builds or other targets' builds,
/// gigabytes that no test build here reads, and its own test binaries are both the largest
/// files and the ones that must never run here. Leaving out more than needed is always safe:
/// cargo builds what is missing.
fn copy_target(
    from: &Path,
    to: &Path,
    own: &BTreeSet<String>,
    timeout: Duration,
    env: &crate::sandbox::env::EnvPolicy,
) -> Result<(), SeedError> {
    let listing = |dir: &Path| {
        let path = dir.to_path_buf();
        move |source| SeedError::Dir { path, source }
    };
    let entries = |dir: &Path| -> Result<Vec<(PathBuf, bool)>, SeedError> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).map_err(listing(dir))? {
            let e = e.map_err(listing(dir))?;
            let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
            out.push((e.path(), is_dir));
        }
        out.sort();
        Ok(out)
    };
    let cp = |sources: &[PathBuf], into: &Path| -> Result<(), SeedError> {
        std::fs::create_dir_all(into).map_err(listing(into))?;
        // A `deps` directory can hold thousands of files: bounded argument lists.
        for chunk in sources.chunks(256) {
            let mut cmd = Command::new("cp");
            cmd.arg("-a").arg("--reflink=auto").args(chunk).arg(into);
            // `cp` copies the build directory as data: nothing in it runs.
            let c = process::run(cmd, timeout, process::Confine::Unconfined(env))
                .map_err(spawn("cp"))?;
            if !c.success() {
                return Err(SeedError::Failed {
                    what: "cp",
                    message: first_line(&c.stderr_lossy()),
                });
            }
        }
        Ok(())
    };
    let name_of = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let not_owned = |p: &Path| name_of(p).is_some_and(|n| !owned(&n, own));
    let top = entries(from)?;
    let files: Vec<PathBuf> = top
        .iter()
        .filter(|(_, d)| !d)
        .map(|(p, _)| p.clone())
        .collect();
    cp(&files, to)?;
    for (profile, _) in top
        .iter()
        .filter(|(p, d)| *d && name_of(p).is_some_and(|n| PROFILE_DIRS.contains(&n.as_str())))
    {
        let into = to.join(profile.file_name().unwrap_or_default());
        let inner = entries(profile)?;
        // Uplifted artifacts (`debug/libm1.rlib`, `debug/tool`) and other files.
        let files: Vec<PathBuf> = inner
            .iter()
            .filter(|(p, d)| !d && not_owned(p))
            .map(|(p, _)| p.clone())
            .collect();
        cp(&files, &into)?;
        for (sub, _) in inner.iter().filter(|(_, d)| *d) {
            let sub_name = name_of(sub).unwrap_or_default();
            match sub_name.as_str() {
                "incremental" => {}
                "deps" | ".fingerprint" | "build" | "examples" => {
                    let keep: Vec<PathBuf> = entries(sub)?
                        .into_iter()
                        .filter(|(p, _)| not_owned(p))
                        .map(|(p, _)| p)
                        .collect();
                    cp(&keep, &into.join(&sub_name))?;
                }
                _ => cp(std::slice::from_ref(sub), &into)?,
            }
        }
    }
    Ok(())
}

/// Whether a file or directory in a profile directory (`deps/libm1-0a1b….rlib`,
/// `.fingerprint/m1-0a1b…`, `build/m1-0a1b…`, `deps/words-0a1b…`, `m1.d`) belongs to one of the
/// `own` names (package or target names, `-` read as `_`): its name without extensions, hash
/// or `lib` prefix is one of them. A registry crate of the same name matches too, and is only
/// rebuilt.
fn owned(file_name: &str, own: &BTreeSet<String>) -> bool {
    let stem = file_name.split('.').next().unwrap_or(file_name);
    let unhashed = stem.rsplit_once('-').map(|(n, _)| n);
    [Some(stem), unhashed]
        .into_iter()
        .flatten()
        .flat_map(|n| [n, n.strip_prefix("lib").unwrap_or(n)])
        .any(|n| own.contains(&n.replace('-', "_")))
}

/// The names the workspace's own units carry in a target dir: each member's package name and
/// target names, `-` read as `_`, from `cargo metadata --no-deps` (no resolution needed).
/// Empty when cargo cannot tell; `cargo clean -p` then removes those units after the copy.
fn own_unit_names(
    cargo: &dyn Fn(&[&str]) -> Command,
    timeout: Duration,
    confine: process::Confine<'_>,
) -> BTreeSet<String> {
    let meta = cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ]);
    let Some(v) = process::run(meta, timeout, confine)
        .ok()
        .filter(|m| m.success())
        .and_then(|m| serde_json::from_slice::<serde_json::Value>(&m.stdout).ok())
    else {
        return BTreeSet::new();
    };
    let mut own = BTreeSet::new();
    for p in v["packages"].as_array().into_iter().flatten() {
        let names = std::iter::once(&p["name"]).chain(
            p["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| &t["name"]),
        );
        own.extend(
            names
                .filter_map(serde_json::Value::as_str)
                .map(|n| n.replace('-', "_")),
        );
    }
    own
}

/// `cargo clean -p` of every path package in the resolved graph; returns them as
/// `name@version`.
///
/// The graph is filtered to the host platform: unfiltered, `cargo metadata` wants every
/// package's manifest, also those of dependencies for other platforms (`winapi` under
/// `cfg(windows)`), which no build here downloaded, so offline it fails ("failed to download
/// `winapi v0.3.9`"). Path packages only another platform uses have no units here to clean.
fn clean_path_packages(
    cargo: &dyn Fn(&[&str]) -> Command,
    project_dir: &Path,
    timeout: Duration,
    confine: process::Confine<'_>,
) -> Result<Vec<String>, SeedError> {
    let host = host_triple(project_dir, timeout, confine)?;
    let meta = cargo(&[
        "metadata",
        "--format-version",
        "1",
        "--offline",
        "--filter-platform",
        &host,
    ]);
    let m = process::run(meta, timeout, confine).map_err(spawn("cargo metadata"))?;
    if !m.success() {
        return Err(SeedError::Failed {
            what: "cargo metadata",
            message: cargo_error(&m.stderr_lossy()),
        });
    }
    let v: serde_json::Value = serde_json::from_slice(&m.stdout).map_err(SeedError::Metadata)?;
    let mut packages: Vec<(String, String)> = v["packages"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter(|p| p["source"].is_null())
                .filter_map(|p| {
                    Some((
                        p["id"].as_str()?.to_string(),
                        format!("{}@{}", p["name"].as_str()?, p["version"].as_str()?),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    packages.sort_by(|a, b| a.1.cmp(&b.1));
    packages.dedup();
    if packages.is_empty() {
        return Err(SeedError::NoPathPackage);
    }
    let mut args = vec!["clean", "--offline"];
    for (id, _) in &packages {
        args.extend(["-p", id.as_str()]);
    }
    let c = process::run(cargo(&args), timeout, confine).map_err(spawn("cargo clean"))?;
    if !c.success() {
        return Err(SeedError::Failed {
            what: "cargo clean -p",
            message: cargo_error(&c.stderr_lossy()),
        });
    }
    Ok(packages.into_iter().map(|(_, name)| name).collect())
}

/// The host's target triple, from `rustc -vV` (asked in the project's directory, so that a
/// toolchain file there picks the same rustc as cargo).
fn host_triple(
    dir: &Path,
    timeout: Duration,
    confine: process::Confine<'_>,
) -> Result<String, SeedError> {
    let mut cmd = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()));
    cmd.arg("-vV").current_dir(dir);
    let out = process::run(cmd, timeout, confine).map_err(spawn("rustc -vV"))?;
    out.stdout_lossy()
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(|h| h.trim().to_string())
        .ok_or_else(|| SeedError::NoHost(first_line(&out.stderr_lossy())))
}

/// The `Cargo.lock` cargo uses for the project in `dir`: the first one in `dir` or a parent,
/// up to `root`.
pub fn find_lock(root: &Path, dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .take_while(|d| d.starts_with(root))
        .map(|d| d.join("Cargo.lock"))
        .find(|l| l.is_file())
}

/// The checkout's cargo target dir, when it holds a build: `target_directory` as `cargo
/// metadata --no-deps` reports it (which follows `CARGO_TARGET_DIR` and the cargo config's
/// `build.target-dir`), kept only when it exists and carries cargo's `CACHEDIR.TAG` or a
/// `debug` profile directory.
///
/// Asked in head's worktree (`dir`, the project's directory there, in `jail`), whose manifests
/// and cargo configuration are the checkout's in CI, so that the sandbox never has to show the
/// checkout itself: a target directory inside the worktree is the same place in the checkout
/// (`checkout`, the project's directory there; `worktree`, the worktree's root).
pub fn checkout_target_dir(
    dir: &Path,
    worktree: &Path,
    checkout: &Path,
    timeout: Duration,
    jail: &crate::sandbox::Jail,
) -> Option<PathBuf> {
    let mut meta = Command::new("cargo");
    meta.args([
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ])
    .current_dir(dir)
    .env("CARGO_TERM_COLOR", "never");
    let m = process::run(meta, timeout, process::Confine::Sandboxed(jail)).ok()?;
    if !m.success() {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&m.stdout).ok()?;
    let reported = PathBuf::from(v["target_directory"].as_str()?);
    let worktree = crate::sandbox::canonical(worktree);
    let target = match reported.strip_prefix(&worktree) {
        Ok(rel) => checkout.join(rel),
        Err(_) => reported,
    };
    (target.join("CACHEDIR.TAG").is_file() || target.join("debug").is_dir()).then_some(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_copy_keeps_what_a_test_build_reuses() {
        let tmp = tempfile::tempdir().unwrap();
        let from = tmp.path().join("target");
        for f in [
            "CACHEDIR.TAG",
            ".rustc_info.json",
            "debug/deps/libitoa-1.rlib",
            "debug/.fingerprint/itoa-1/lib-itoa",
            "debug/build/x-1/out/gen.rs",
            "debug/incremental/m1-1/s-1/dep-graph.bin",
            "release/deps/libitoa-2.rlib",
            "doc/itoa/index.html",
            "x86_64-unknown-linux-gnu/debug/deps/libitoa-3.rlib",
            "llvm-cov-target/debug/deps/big",
            // The workspace's own units: package `fx-crate`, test target `words`.
            "debug/deps/libfx_crate-0123456789abcdef.rlib",
            "debug/deps/fx_crate-0123456789abcdef",
            "debug/deps/fx_crate-0123456789abcdef.d",
            "debug/deps/words-0123456789abcdef",
            "debug/.fingerprint/fx-crate-0123456789abcdef/lib-fx_crate",
            "debug/build/fx-crate-0123456789abcdef/output",
            "debug/libfx_crate.rlib",
            "debug/libfx_crate.d",
            "debug/examples/demo-0123456789abcdef",
        ] {
            let p = from.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, f).unwrap();
        }
        let to = tmp.path().join("seeded").join("head");
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let own: BTreeSet<String> = ["fx_crate", "words"].map(String::from).into();
        copy_target(
            &from,
            &to,
            &own,
            Duration::from_secs(60),
            &crate::sandbox::env::EnvPolicy::default(),
        )
        .unwrap();
        for kept in [
            "CACHEDIR.TAG",
            ".rustc_info.json",
            "debug/deps/libitoa-1.rlib",
            "debug/.fingerprint/itoa-1/lib-itoa",
            "debug/build/x-1/out/gen.rs",
            "release/deps/libitoa-2.rlib",
            "debug/examples/demo-0123456789abcdef",
        ] {
            assert_eq!(
                std::fs::read_to_string(to.join(kept)).unwrap(),
                kept,
                "{kept}"
            );
        }
        for dropped in [
            "debug/incremental",
            "doc",
            "x86_64-unknown-linux-gnu",
            "llvm-cov-target",
            "debug/deps/libfx_crate-0123456789abcdef.rlib",
            "debug/deps/fx_crate-0123456789abcdef",
            "debug/deps/fx_crate-0123456789abcdef.d",
            "debug/deps/words-0123456789abcdef",
            "debug/.fingerprint/fx-crate-0123456789abcdef",
            "debug/build/fx-crate-0123456789abcdef",
            "debug/libfx_crate.rlib",
            "debug/libfx_crate.d",
        ] {
            assert!(!to.join(dropped).exists(), "{dropped}");
        }
        assert!(owned("libfx_crate-0a.rmeta", &own));
        assert!(owned("fx-crate-0a", &own));
        assert!(!owned("libitoa-0a.rlib", &own));
        assert!(!owned("fx_crate_extra-0a", &own));
    }
}
