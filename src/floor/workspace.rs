//! The worktrees' files: laying head's test files over base, noticing tracked files a run
//! rewrote, and seeding base's cargo target dir from head's without letting head's code run.

use super::*;

/// Lock files a build or an install may rightly rewrite.
pub(super) const LOCKFILES: [&str; 7] = [
    "Cargo.lock",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "go.sum",
    "poetry.lock",
];
/// `git status` entries (`XY path`) of tracked files in a worktree.
pub(super) fn status_entries(wt: &Worktree) -> Result<Vec<String>, Error> {
    let out = wt
        .git()
        .run(["status", "--porcelain=v1", "-z", "--untracked-files=no"])?;
    if !out.ok {
        return Err(Error::crash(format!(
            "git status in a worktree: {}",
            out.stderr
        )));
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|e| e.len() > 3)
        .map(|e| String::from_utf8_lossy(e).into_owned())
        .collect())
}
/// Tracked files whose state in a worktree differs from `baseline` (its commit, with the
/// overlay where there is one), other than lock files: what a build step or a test rewrote.
pub(super) fn rewritten_files(wt: &Worktree, baseline: &[String]) -> Result<Vec<String>, Error> {
    Ok(status_entries(wt)?
        .into_iter()
        .filter(|e| !baseline.contains(e))
        .map(|e| e[3..].to_string())
        .filter(|p| !LOCKFILES.contains(&p.rsplit('/').next().unwrap_or(p)))
        .collect())
}
pub(super) fn apply_overlay(
    wt: &Worktree,
    head: &CommitId,
    take: &[String],
    delete: &[String],
) -> Result<(), Error> {
    let git = wt.git();
    for chunk in take.chunks(200) {
        let mut args: Vec<String> = vec!["checkout".into(), head.to_string(), "--".into()];
        args.extend(chunk.iter().cloned());
        let out = git.run(&args)?;
        if !out.ok {
            return Err(Error::crash(format!(
                "cannot lay head's test files over base: {}",
                out.stderr
            )));
        }
    }
    for p in delete {
        let path = wt.path().join(p);
        if path.exists() {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}
/// Writes the spliced source files (base's text with head's test items, DESIGN 5.1) into the
/// base worktree.
pub(super) fn apply_splices(wt: &Worktree, splices: &[(String, String)]) -> Result<(), Error> {
    for (path, text) in splices {
        std::fs::write(wt.path().join(path), text).map_err(|e| {
            Error::crash(format!(
                "cannot splice head's test items into base's {path}: {e}"
            ))
        })?;
    }
    Ok(())
}
/// What seeding a target dir did.
#[derive(Debug, Clone)]
pub struct Seeded {
    /// The path packages whose units were removed from the copy.
    pub cleaned: Vec<String>,
    pub duration: Duration,
}
/// Makes `to` a copy of the cargo target dir `from` (reflinked where the file system can) and
/// removes from it every unit of the path packages of the project in `project_dir`, so that
/// only registry crates (keyed by name, version and features) are reused.
///
/// Why not share or plainly copy: cargo's fingerprints compare mtimes and dep-info records
/// package-relative paths, so sources older than the copied artifacts look fresh and the other
/// checkout's test binary runs, reporting a wrong pass. `cargo clean -p` of the path packages
/// forces them to rebuild from this checkout's sources.
pub fn seed_cargo_target(
    from: &std::path::Path,
    to: &std::path::Path,
    project_dir: &std::path::Path,
    timeout: Duration,
) -> Result<Seeded, String> {
    let started = std::time::Instant::now();
    let mut cp = Command::new("cp");
    cp.arg("-a").arg("--reflink=auto").arg(from).arg(to);
    let c = process::run(cp, timeout).map_err(|e| format!("cp: {e}"))?;
    if !c.success() {
        return Err(format!("cp failed: {}", first_line(&c.stderr_lossy())));
    }
    let mut meta = Command::new("cargo");
    meta.args(["metadata", "--format-version", "1", "--offline"])
        .current_dir(project_dir)
        .env("CARGO_TARGET_DIR", to);
    let m = process::run(meta, timeout).map_err(|e| format!("cargo metadata: {e}"))?;
    if !m.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            first_line(&m.stderr_lossy())
        ));
    }
    let v: serde_json::Value =
        serde_json::from_slice(&m.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let mut specs: Vec<String> = v["packages"]
        .as_array()
        .map(|ps| {
            ps.iter()
                .filter(|p| p["source"].is_null())
                .filter_map(|p| {
                    Some(format!(
                        "{}@{}",
                        p["name"].as_str()?,
                        p["version"].as_str()?
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    specs.sort();
    specs.dedup();
    if specs.is_empty() {
        return Err("cargo metadata lists no path package".into());
    }
    let mut clean = Command::new("cargo");
    clean
        .args(["clean", "--offline"])
        .current_dir(project_dir)
        .env("CARGO_TARGET_DIR", to);
    for s in &specs {
        clean.arg("-p").arg(s);
    }
    let c = process::run(clean, timeout).map_err(|e| format!("cargo clean: {e}"))?;
    if !c.success() {
        return Err(format!(
            "cargo clean -p failed: {}",
            first_line(&c.stderr_lossy())
        ));
    }
    Ok(Seeded {
        cleaned: specs,
        duration: started.elapsed(),
    })
}
