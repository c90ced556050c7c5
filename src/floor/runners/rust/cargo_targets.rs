//! Which cargo test targets hold a scoped listing's files (only what is bound gets built;
//! book: floor.md), shared by the `cargo test` and `cargo nextest` adapters.
//!
//! In: the files the tag scan found under the runner's root, and the workspace's packages and
//! targets from `cargo metadata --no-deps`. Out: a [`Selection`]: the test targets to build and
//! list, or "everything" where a file cannot be placed.
//!
//! How a file maps (paths relative to the worktree):
//! 1. a target's root file (`tests/x.rs`, `src/lib.rs`, `src/bin/t.rs`) → that target, when
//!    `cargo test` tests it;
//! 2. another file under a package's `src/` → the package's library and binary unit tests;
//! 3. any other file of a package (`tests/common/mod.rs`, `Cargo.toml`, `build.rs`, an
//!    example's root, a data file a test `include!`s, a README) → every test target of that
//!    package: any file can reach a test's name through `include!` or a build script, so no
//!    file is ruled out by its kind;
//! 4. a file in no package of the workspace, or a selected target that needs features
//!    (`required-features`, which an explicit `--test` turns into an error where the unscoped
//!    build skips it quietly) → everything, as the unscoped listing does.
//!
//! Binding starts from the tag scan, so the tagged file decides which package is built, whatever
//! `cargo test` would test by default: at the workspace root, a file of any member selects that
//! member (`-p <package id>`), also where the root is itself a package (which `cargo test` there
//! tests alone) or `default-members` leaves the member out. A runner whose root is a member's
//! directory binds that member's files only; the others belong to the runner of their own.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::Path;

use serde_json::Value;

use super::cargo_meta::{
    cargo_error, exec, nextest_kind, parse_workspace_packages, MetadataError, WorkspacePackage,
};
use crate::floor::runners::kit::worktree_relative;
use crate::floor::runners::{Invocation, RunCtx};

/// A workspace member as `cargo metadata` describes it, paths relative to the worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    /// The package id spec (`path+file:///…#name@version`): names exactly one package even
    /// where the lock file holds two of the same name.
    pub id: String,
    /// The package's directory, `""` for the worktree's root, else ending in `/`.
    pub dir: String,
    /// Whether a file of this package binds through the runner (see the module doc): every
    /// member at the workspace root, the member alone in a member's directory.
    pub selected: bool,
    pub targets: Vec<Target>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The nextest kind (`lib`, `proc-macro`, `bin`, `test`, `example`, `bench`, `custom-build`).
    pub kind: String,
    pub name: String,
    /// The root file, relative to the worktree (absolute when outside it).
    pub src_path: String,
    /// Whether `cargo test` builds and runs it by default (`test = true`).
    pub test: bool,
    pub required_features: bool,
}

impl Target {
    fn is_test_target(&self) -> bool {
        self.test && self.kind != "custom-build"
    }

    /// The cargo option that selects this target alone.
    pub fn selector(&self) -> Vec<String> {
        match self.kind.as_str() {
            "lib" | "proc-macro" => vec!["--lib".into()],
            kind => vec![format!("--{kind}"), self.name.clone()],
        }
    }
}

/// One test target a scoped listing builds.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Selected {
    /// Index into the packages.
    pub package: usize,
    /// As nextest spells it (`pkg`, `pkg::x`, `pkg::bin/t`).
    pub binary_id: String,
    pub selector: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The unscoped listing: a file could not be placed.
    Everything,
    /// These targets (empty: nothing to build).
    Targets(Vec<Selected>),
}

/// [`select`] for files named relative to the runner's directory (`ctx.dir`), as a scoped
/// listing receives them: `None` where a file could not be placed (list everything).
pub fn select_in(ctx: &RunCtx, packages: &[Package], files: &[String]) -> Option<Vec<Selected>> {
    let files: Vec<String> = files
        .iter()
        .filter_map(|f| worktree_relative(ctx, &ctx.dir.join(f)))
        .collect();
    match select(packages, &files) {
        Selection::Targets(targets) => Some(targets),
        Selection::Everything => None,
    }
}

/// The targets that hold `files` (relative to the worktree), by the rules in the module doc.
pub fn select(packages: &[Package], files: &[String]) -> Selection {
    let mut chosen: BTreeSet<(usize, usize)> = BTreeSet::new();
    for f in files {
        let owner = packages
            .iter()
            .enumerate()
            .filter(|(_, p)| f.starts_with(&p.dir))
            .max_by_key(|(_, p)| p.dir.len());
        let Some((pi, pkg)) = owner else {
            return Selection::Everything;
        };
        if !pkg.selected {
            continue;
        }
        let tests: Vec<usize> = (0..pkg.targets.len())
            .filter(|&t| pkg.targets[t].is_test_target())
            .collect();
        let rooted = pkg.targets.iter().position(|t| &t.src_path == f);
        let picked: Vec<usize> = match rooted {
            Some(t) if pkg.targets[t].is_test_target() => vec![t],
            Some(_) => tests.clone(),
            None if f.starts_with(&format!("{}src/", pkg.dir)) => {
                let unit: Vec<usize> = tests
                    .iter()
                    .copied()
                    .filter(|&t| {
                        matches!(pkg.targets[t].kind.as_str(), "lib" | "proc-macro" | "bin")
                    })
                    .collect();
                if unit.is_empty() {
                    tests.clone()
                } else {
                    unit
                }
            }
            None => tests.clone(),
        };
        chosen.extend(picked.into_iter().map(|t| (pi, t)));
    }
    if chosen
        .iter()
        .any(|&(p, t)| packages[p].targets[t].required_features)
    {
        return Selection::Everything;
    }
    Selection::Targets(
        chosen
            .into_iter()
            .map(|(p, t)| {
                let target = &packages[p].targets[t];
                Selected {
                    package: p,
                    binary_id: super::cargo_meta::binary_id(
                        &packages[p].name,
                        &target.kind,
                        &target.name,
                    ),
                    selector: target.selector(),
                }
            })
            .collect(),
    )
}

/// The arguments that select one package: its package id spec, never its bare name (cargo:
/// `-p NAME` is ambiguous when the lock file holds two packages of that name). Every scoped
/// build names its package through here.
pub fn package_args(pkg: &Package) -> [String; 2] {
    ["-p".to_string(), pkg.id.clone()]
}

/// Whether the runner's cargo arguments already choose packages or targets: then the user's
/// selection stands and the listing is not narrowed.
pub fn user_selects_targets(cargo_args: &[String]) -> bool {
    cargo_args.iter().any(|a| {
        let flag = a.split('=').next().unwrap_or(a);
        matches!(
            flag,
            "-p" | "--package"
                | "--workspace"
                | "--all"
                | "--exclude"
                | "--lib"
                | "--bin"
                | "--bins"
                | "--test"
                | "--tests"
                | "--example"
                | "--examples"
                | "--bench"
                | "--benches"
                | "--all-targets"
                | "--manifest-path"
        ) || (a.starts_with("-p") && a.len() > 2)
    })
}

/// `cargo metadata --format-version 1 --no-deps` in `ctx.dir` (no resolution, no network),
/// read into [`Package`]s.
pub fn workspace_packages(
    ctx: &RunCtx,
    invocations: &mut Vec<Invocation>,
) -> Result<Vec<Package>, MetadataError> {
    workspace(ctx, invocations).map(|(packages, _)| packages)
}

/// The workspace members of the project in `ctx.dir`, by name (unique within a workspace), from
/// `cargo metadata --no-deps`: reads the manifests only, so it needs no lock file and no
/// network.
pub(super) fn workspace_members(
    ctx: &RunCtx,
) -> Result<BTreeMap<String, WorkspacePackage>, MetadataError> {
    let mut invocations = Vec::new();
    workspace(ctx, &mut invocations).map(|(_, members)| members)
}

/// One `cargo metadata --no-deps` read two ways: the members with their targets, and the
/// members by name with their package id specs and the manifest fields cargo passes to tests.
pub(super) fn workspace(
    ctx: &RunCtx,
    invocations: &mut Vec<Invocation>,
) -> Result<(Vec<Package>, BTreeMap<String, WorkspacePackage>), MetadataError> {
    let args = [
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
        "--offline",
    ]
    .map(OsString::from);
    let ran = exec(ctx, OsStr::new("cargo"), &args, &ctx.dir, &[]);
    let problem = ran.operational_problem("cargo metadata");
    let ok = ran.captured().success();
    let text = cargo_error(&ran.captured().stderr_lossy());
    let stdout = ran.captured().stdout.clone();
    invocations.push(ran.invocation);
    if let Some(p) = problem {
        return Err(MetadataError::NotRun(p));
    }
    if !ok {
        return Err(MetadataError::Failed(text));
    }
    let v: Value = serde_json::from_slice(&stdout).map_err(MetadataError::Unreadable)?;
    let dir_rel = worktree_relative(ctx, &ctx.dir);
    let packages = parse_metadata(
        &v,
        &|p: &Path| worktree_relative(ctx, p),
        dir_rel.as_deref(),
    )?;
    Ok((packages, parse_workspace_packages(&stdout)?))
}

/// Reads `cargo metadata` output. `rel` makes a path worktree-relative; `dir` is the runner's
/// root relative to the worktree (`None` for the worktree itself).
pub fn parse_metadata(
    v: &Value,
    rel: &dyn Fn(&Path) -> Option<String>,
    dir: Option<&str>,
) -> Result<Vec<Package>, MetadataError> {
    let strs = |key: &str| -> BTreeSet<String> {
        v.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let members = strs("workspace_members");
    let root = v
        .get("workspace_root")
        .and_then(Value::as_str)
        .map(|r| rel(Path::new(r)))
        .ok_or(MetadataError::NoWorkspaceRoot)?;
    let packages = v
        .get("packages")
        .and_then(Value::as_array)
        .ok_or(MetadataError::NoPackages)?;
    let mut out = Vec::new();
    let mut by_dir: BTreeMap<String, usize> = BTreeMap::new();
    for p in packages {
        let id = p.get("id").and_then(Value::as_str).unwrap_or_default();
        if !members.contains(id) {
            continue;
        }
        let manifest = p
            .get("manifest_path")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let pkg_dir = match Path::new(manifest).parent().map(rel) {
            Some(Some(d)) => format!("{d}/"),
            // The package is the worktree's root.
            Some(None) if root.is_none() => String::new(),
            _ => return Err(MetadataError::OutsideWorktree(id.to_string())),
        };
        let targets = p
            .get("targets")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| {
                let kinds: Vec<&str> = t
                    .get("kind")?
                    .as_array()?
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                let src = t.get("src_path")?.as_str()?;
                Some(Target {
                    kind: nextest_kind(&kinds)?,
                    name: t.get("name")?.as_str()?.to_string(),
                    src_path: rel(Path::new(src)).unwrap_or_else(|| src.to_string()),
                    test: t.get("test").and_then(Value::as_bool).unwrap_or(false),
                    required_features: t
                        .get("required-features")
                        .and_then(Value::as_array)
                        .is_some_and(|f| !f.is_empty()),
                })
            })
            .collect();
        by_dir.insert(pkg_dir.clone(), out.len());
        out.push(Package {
            name: p
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            id: id.to_string(),
            dir: pkg_dir,
            selected: false,
            targets,
        });
    }
    // A runner in a member's directory binds that member; at the workspace root, every member
    // (not only the default members `cargo test` there would test).
    let here = dir
        .map(|d| format!("{}/", d.trim_end_matches('/')))
        .unwrap_or_default();
    let root_dir = root.map(|r| format!("{r}/")).unwrap_or_default();
    match by_dir.get(&here) {
        Some(&i) if here != root_dir => out[i].selected = true,
        _ => {
            for p in out.iter_mut() {
                p.selected = true;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
