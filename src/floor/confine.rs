//! Where each side's commands run (book: security.md, "The sandbox"): the jail of a command
//! (it writes only its side's worktree, its side's build directory, its side's private home
//! and temporary directory and its own scratch directory; it reads everything else but what
//! the run hides), and the environment that points the tools there.
//!
//! Each side gets a home of its own, made for this run and removed with it: whatever a command
//! writes under `~` (a user site-packages, `~/.config`, `~/.cache`) never reaches the person's
//! home, the other side or a later run. The tools that find their toolchain through `HOME`
//! are told where it really is (`CARGO_HOME`, `RUSTUP_HOME`, `GOPATH`, `GOENV`), read-only;
//! the build caches that must be written are each side's own (Go's `GOCACHE`, seeded from the
//! person's as the cargo target dir is, see [`super::seed`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::Error;
use crate::format::floor::{RuntimeRow, Side};
use crate::git::Worktree;
use crate::process;

use super::events::{row_side, Event};
use super::record::{code, side_index};
use super::runners::kit::first_line;
use super::runners::RunnerId;
use super::{runners, Ctx, Env};

impl Env<'_> {
    /// Makes both sides' homes and temporary directories, with the directories the XDG
    /// variables name, and a git configuration holding only the person's name and email (the
    /// person's own can hold credentials, and is hidden): a test that commits in a repository
    /// of its own finds an identity, as outside the sandbox.
    pub(super) fn make_homes(&self) -> Result<(), Error> {
        let identity: String = ["name", "email"]
            .iter()
            .filter_map(|k| {
                crate::git::Git::global_value(&format!("user.{k}"))
                    .filter(|v| !v.contains(['\n', '"', '\\']))
                    .map(|v| format!("\t{k} = \"{v}\"\n"))
            })
            .collect();
        for side in [Side::Head, Side::Base] {
            let home = self.home(side);
            for dir in [
                home.clone(),
                home.join(".cache"),
                home.join(".config"),
                home.join(".local/share"),
                home.join(".local/state"),
                home.join(".local/bin"),
                home.join("go/bin"),
                self.side_tmp(side),
                self.input.temp_root.join("target").join(side.as_str()),
            ] {
                std::fs::create_dir_all(&dir)
                    .map_err(|e| Error::crash(format!("cannot make {}: {e}", dir.display())))?;
            }
            if !identity.is_empty() {
                let path = home.join(".gitconfig");
                std::fs::write(&path, format!("[user]\n{identity}"))
                    .map_err(|e| Error::crash(format!("cannot write {}: {e}", path.display())))?;
            }
        }
        Ok(())
    }

    /// The private home of `side`: `$TMP/home/<side>`.
    pub(super) fn home(&self, side: Side) -> PathBuf {
        self.input.temp_root.join("home").join(side.as_str())
    }

    /// The private temporary directory of `side`: `$TMP/tmp/<side>` (outside the home, whose
    /// files the guard against run-time harness files watches).
    pub(super) fn side_tmp(&self, side: Side) -> PathBuf {
        self.input.temp_root.join("tmp").join(side.as_str())
    }

    /// Where the runners' tools are asked who they are.
    pub(super) fn probe(&self) -> runners::Probe {
        runners::Probe::new(self.input.confinement)
    }

    /// The environment that puts a command's writes in its side's own directories: `HOME`,
    /// `TMPDIR` and the XDG directories, Go's build cache and `GOBIN`, and where the toolchains
    /// found through `HOME` really are (as the person's environment names them, else where
    /// they are under the person's home, when they are there).
    pub(super) fn home_env(&self, side: Side) -> Vec<(OsString, OsString)> {
        let home = self.home(side);
        let mut env: Vec<(OsString, OsString)> = vec![
            ("HOME".into(), home.clone().into_os_string()),
            ("TMPDIR".into(), self.side_tmp(side).into_os_string()),
            (
                "XDG_CACHE_HOME".into(),
                home.join(".cache").into_os_string(),
            ),
            (
                "XDG_CONFIG_HOME".into(),
                home.join(".config").into_os_string(),
            ),
            (
                "XDG_DATA_HOME".into(),
                home.join(".local/share").into_os_string(),
            ),
            (
                "XDG_STATE_HOME".into(),
                home.join(".local/state").into_os_string(),
            ),
            (
                "GOCACHE".into(),
                home.join(runners::go::GOCACHE_HOME).into_os_string(),
            ),
            ("GOBIN".into(), home.join("go/bin").into_os_string()),
            // npm asks the registry for its own newer version and writes the answer to HOME.
            ("npm_config_update_notifier".into(), "false".into()),
        ];
        env.extend(toolchain_homes());
        env
    }
}

/// What a command of the floor is told about where things are, beyond its side's build
/// directory and terminal size.
impl Ctx<'_> {
    /// Seeds `side`'s copy of a runner's build cache from the person's (its variable, else its
    /// default under the person's cache directory), once.
    pub(super) fn seed_build_cache(&mut self, side: Side, cache: &runners::BuildCache) {
        let from = std::env::var_os(cache.env)
            .map(PathBuf::from)
            .or_else(|| person_cache().map(|c| c.join(cache.person_dir)));
        self.seed_cache(side, cache.name, cache.what, from, cache.home, None);
    }

    /// Seeds `side`'s pip and npm caches from the person's, once, for a runner whose `setup`
    /// installs packages, when each holds at most [`PACKAGE_CACHE_LIMIT`] bytes (a bigger one
    /// costs more to copy than the downloads it saves; the setup then downloads).
    pub(super) fn seed_package_caches(&mut self, side: Side) {
        let pip = std::env::var_os("PIP_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| person_cache().map(|c| c.join("pip")));
        self.seed_cache(
            side,
            "pip",
            "pip's cache",
            pip,
            ".cache/pip",
            Some(PACKAGE_CACHE_LIMIT),
        );
        let npm = std::env::var_os("npm_config_cache")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".npm")));
        self.seed_cache(
            side,
            "npm",
            "npm's cache",
            npm,
            ".npm",
            Some(PACKAGE_CACHE_LIMIT),
        );
    }

    /// Seeds the cache `rel` of `side`'s private home from the person's `from`, once: a copy
    /// (reflinked where the file system can), so that what a command writes into it never
    /// reaches the person's cache, the other side or a later run, and an honest run works no
    /// more than it did. `limit`: the most bytes worth copying. A runtime row only when the
    /// seeding failed: the side then starts cold, which the report says.
    fn seed_cache(
        &mut self,
        side: Side,
        runner: &str,
        what: &str,
        from: Option<PathBuf>,
        rel: &str,
        limit: Option<u64>,
    ) {
        let home = self.env.home(side);
        let to = home.join(rel);
        // `cp` runs outside the sandbox, into a home an earlier command of the side wrote:
        // never through a link it may have put on the way (`~/.cache` pointing elsewhere), and
        // never over something already there.
        if std::fs::symlink_metadata(&to).is_ok() || !real_dirs_on_the_way(&home, rel) {
            return;
        }
        let from = from
            .filter(|p| p.is_dir())
            .filter(|p| limit.is_none_or(|l| size_within(p, l)));
        let started = std::time::Instant::now();
        // Why the copy failed; `None`: copied, or nothing to copy.
        let problem: Option<String> = match &from {
            None => None,
            Some(from) => {
                let mut cmd = Command::new("cp");
                cmd.arg("-a").arg("--reflink=auto").arg(from).arg(&to);
                // `cp` copies the cache as data: nothing in it runs.
                match process::run(
                    cmd,
                    self.env.input.timeout,
                    process::Confine::Unconfined(&self.env.input.confinement.env),
                ) {
                    Ok(c) if c.success() => None,
                    Ok(c) => Some(format!("cp failed: {}", first_line(&c.stderr_lossy()))),
                    Err(e) => Some(format!("cp: {e}")),
                }
            }
        };
        let Some(e) = problem else {
            let _ = std::fs::create_dir_all(&to);
            return;
        };
        let _ = std::fs::remove_dir_all(&to);
        let _ = std::fs::create_dir_all(&to);
        self.rec.observe(Event::Row(RuntimeRow {
            side: row_side(side).into(),
            runner: runner.into(),
            command: what.into(),
            tests: 0,
            result: format!("{what} was not seeded ({e}); the side starts cold"),
            seconds: self.env.seconds(started.elapsed()),
            exit_code: None,
            excerpt: None,
            tool: None,
        }));
    }

    /// The jail of a command at `side` that writes `scratch` besides its side's own
    /// directories (the worktree, the cargo target dir, the home, the temporary directory).
    pub(super) fn jail(&self, side: Side, scratch: Option<&Path>) -> crate::sandbox::Jail {
        let worktree = self.env.input.temp_root.join(side.as_str());
        let target = self.env.input.temp_root.join("target").join(side.as_str());
        let home = self.env.home(side);
        let tmp = self.env.side_tmp(side);
        let mut write: Vec<&Path> = vec![&worktree, &target, &home, &tmp];
        write.extend(scratch);
        // The checkout's `node_modules` a JavaScript runner reuses (a link in the worktree):
        // readable, never writable.
        let reused: Vec<&Path> = self.reused.iter().map(PathBuf::as_path).collect();
        self.env.input.confinement.jail_reading(&write, &reused)
    }

    /// Downloads what runner `i`'s project at `side` depends on into the person's package
    /// store, once per side and runner, before any of its commands: the store is read-only
    /// inside the sandbox (a test could otherwise rewrite a package every later build
    /// compiles), so what base's older lock file names, or head's newer one, is fetched here.
    /// Nothing of the change runs: cargo fetches from a directory outside the project (so that
    /// neither its `.cargo/config.toml` nor its `rust-toolchain.toml` is read) for the host's
    /// platform only; Go's `go mod download` runs no code and checks every module against
    /// `go.sum` and the checksum database. Both write only the store, the project's lock file
    /// and a scratch directory. A runtime row only when it failed: the build that follows then
    /// says what is missing.
    pub(super) fn fetch_dependencies(&mut self, i: usize, side: Side, wt: &Worktree) {
        let adapter = self.env.adapters[i].clone();
        if !self.fetched.insert((side_index(side), RunnerId(i))) {
            return;
        }
        let root = &adapter.config().root;
        let dir = if root == "." {
            wt.path().to_path_buf()
        } else {
            wt.path().join(root)
        };
        let Some(runners::Fetch {
            mut cmd,
            store,
            what,
            env,
        }) = adapter.fetch(&dir, &self.env.probe(), self.env.input.timeout)
        else {
            return;
        };
        for d in store.iter().filter(|d| !d.exists()) {
            let _ = std::fs::create_dir_all(d);
        }
        let Ok(scratch) = self.scratch(&format!("{}-fetch", side.as_str())) else {
            return;
        };
        if cmd.get_current_dir().is_none() {
            cmd.current_dir(&scratch);
        }
        cmd.envs(self.env.side_env(side))
            .envs(self.env.passed_env(Some(i)))
            .env("CARGO_TERM_COLOR", "never")
            .envs(env);
        let worktree = self.env.input.temp_root.join(side.as_str());
        let tmp = self.env.side_tmp(side);
        // The side's home and build directory too: cargo keeps what it learnt of the toolchain
        // there (`.rustc_info.json`), which the build that follows reads instead of asking
        // `rustc` again.
        let home = self.env.home(side);
        let target = self.env.input.temp_root.join("target").join(side.as_str());
        let mut write: Vec<&Path> = vec![&worktree, &scratch, &tmp, &home, &target];
        write.extend(store.iter().map(PathBuf::as_path));
        let jail = self.env.input.confinement.jail(&write);
        let started = std::time::Instant::now();
        let ran = process::run(
            cmd,
            self.env.input.timeout,
            process::Confine::Sandboxed(&jail),
        );
        let failed = match &ran {
            Ok(c) if c.success() => return,
            Ok(c) => format!(
                "{what} failed (exit {}): {}",
                code(c.exit_code),
                first_line(&self.env.norm.apply_str(&c.stderr_lossy()))
            ),
            Err(e) => format!("{what} could not start: {e}"),
        };
        self.rec.observe(Event::Row(RuntimeRow {
            side: row_side(side).into(),
            runner: adapter.kind().as_str().into(),
            command: what.into(),
            tests: 0,
            result: format!("{failed}; the build that follows says what is missing"),
            seconds: self.env.seconds(started.elapsed()),
            exit_code: ran.ok().and_then(|c| c.exit_code),
            excerpt: None,
            tool: None,
        }));
    }
}

/// Where the toolchains found through `HOME` are, for a command whose `HOME` is a private one:
/// the person's own variable when set (inherited as it is, so nothing to add), else the
/// directory under the person's home when it exists. Read-only inside the sandbox.
fn toolchain_homes() -> Vec<(OsString, OsString)> {
    let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
        return Vec::new();
    };
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let candidates: [(&str, PathBuf); 4] = [
        ("CARGO_HOME", home.join(".cargo")),
        ("RUSTUP_HOME", home.join(".rustup")),
        ("GOPATH", home.join("go")),
        ("GOENV", config.join("go/env")),
    ];
    candidates
        .into_iter()
        .filter(|(name, path)| std::env::var_os(name).is_none() && path.exists())
        .map(|(name, path)| (OsString::from(name), path.into_os_string()))
        .collect()
}

/// Whether `base` and every directory of `rel` above its last part are real directories, none a
/// symbolic link (those that do not exist yet are made).
fn real_dirs_on_the_way(base: &Path, rel: &str) -> bool {
    let mut at = base.to_path_buf();
    let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
    let above = parts.len().saturating_sub(1);
    for part in std::iter::once("").chain(parts[..above].iter().copied()) {
        if !part.is_empty() {
            at.push(part);
        }
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return false,
            Err(_) if std::fs::create_dir(&at).is_ok() => {}
            Err(_) => return false,
        }
    }
    true
}

/// The most bytes of a package manager's cache copied into a side's home.
const PACKAGE_CACHE_LIMIT: u64 = 1 << 30;

/// The person's cache directory: `XDG_CACHE_HOME`, else `~/.cache`.
fn person_cache() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
}

/// Whether the files under `dir` add up to at most `limit` bytes (the walk stops past it).
fn size_within(dir: &Path, limit: u64) -> bool {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                total += meta.len();
                if total > limit {
                    return false;
                }
            }
        }
    }
    true
}

/// The `PATH` a runner's commands get: the project's own tools first where its ecosystem puts
/// them first (`first`, the runner's [`runners::Runner::path_dirs`]: for JavaScript
/// `node_modules/.bin` of the runner's root and of each directory above it up to the worktree,
/// as `npm test` and `npx` do), then the inherited `PATH`, then the side's
/// private bin directories (`GOBIN`, `~/.local/bin`), last so that nothing a command put there
/// can stand in for a tool the floor starts by name.
pub(super) fn runner_path(first: Vec<PathBuf>, home: &Path) -> Option<OsString> {
    let mut dirs = first;
    let inherited = std::env::var_os("PATH").unwrap_or_default();
    dirs.extend(std::env::split_paths(&inherited));
    dirs.push(home.join("go/bin"));
    dirs.push(home.join(".local/bin"));
    std::env::join_paths(dirs).ok()
}
