//! `shipmoor evidence gc`: the evidence store keeps what the kept statements cite (their
//! records, and the blobs those records point to) and loses the rest, which runs that
//! were overwritten left behind; the base cache keeps the newest entries a run can reuse,
//! within `--cache-keep` and `--cache-max-size`, and the items they cite
//! ([`Sweep`]). Exit 0, 2 input error.
//!
//! The kept attestations are read unverified, so what they cite is checked before it becomes
//! a path: only evidence names (64 lowercase hex digits) are looked up, only in the store, and
//! only regular files there are read. The store itself is no symlink, nor is any directory on
//! the way to it in the repository, since gc removes files in it.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::attest::verify::Attestation;
use crate::cli::EvidenceCommand;
use crate::error::{Error, InputError, IoContext};
use crate::evidence::{is_digest, StoreReader};
use crate::floor::cache::{self, gc::Limits, gc::Sweep};
use crate::format::evidence::Record;
use crate::format::statement::Statement;
use crate::nofollow::OutputPath;

use super::shown_path;

pub fn run(cmd: EvidenceCommand) -> Result<i32, Error> {
    match cmd {
        EvidenceCommand::Gc {
            evidence_dir,
            keep,
            dry_run,
            base_cache,
            cache_keep,
            cache_max_size,
        } => {
            let limits = Limits {
                keep: cache_keep,
                max_size: cache_max_size,
            };
            gc(
                &evidence_dir,
                &keep,
                dry_run,
                base_cache.as_deref(),
                &limits,
            )
        }
    }
}

/// The base cache gc tidies, worked out before anything is removed.
enum CachePlan {
    /// `--base-cache none`.
    Off,
    /// No directory there: `Some` with its name when it was named (`--base-cache`,
    /// `SHIPMOOR_BASE_CACHE`), `None` for the default.
    Missing(Option<String>),
    Found(String, Sweep),
}

/// The base cache at `--base-cache` (`given`), resolved as claim-check resolves it, and what gc
/// removes from it. A directory gc cannot tidy (a symlink, a file) is an input error naming it.
fn plan_cache(
    given: Option<&str>,
    repository: Option<&Path>,
    limits: &Limits,
) -> Result<CachePlan, Error> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let root = repository.unwrap_or(&cwd);
    let Some(dir) = cache::dir_of(given, root) else {
        return Ok(CachePlan::Off);
    };
    let shown = shown_path(&dir, root);
    match Sweep::plan(&dir, repository, limits) {
        Ok(Some(sweep)) => Ok(CachePlan::Found(shown, sweep)),
        Ok(None) => Ok(CachePlan::Missing(given.map(|_| shown))),
        Err(r) => {
            let through = if r.why == crate::nofollow::Why::Symlink {
                ", and gc reads and removes nothing through a symlink (it could point anywhere)"
            } else {
                ""
            };
            Err(Error::input(
                InputError::new(format!(
                    "cannot tidy --base-cache {shown}: {r}{through}; nothing is removed"
                ))
                .help(format!(
                    "remove {} (claim-check makes the cache again), or pass --base-cache none to leave it alone",
                    r.shown_at()
                )),
            ))
        }
    }
}

/// The base cache's part of gc's output: each entry that goes with why, with --dry-run each
/// other file that would go, then a summary line.
fn tidy_cache(plan: CachePlan, dry_run: bool, out: &mut impl Write) -> Result<(), Error> {
    let (shown, sweep) = match plan {
        CachePlan::Off | CachePlan::Missing(None) => return Ok(()),
        CachePlan::Missing(Some(shown)) => {
            let _ = writeln!(out, "no base cache at {shown}: nothing to tidy");
            return Ok(());
        }
        CachePlan::Found(shown, sweep) => (shown, sweep),
    };
    if !dry_run {
        sweep.apply().map_err(|e| {
            Error::input(
                InputError::new(format!("the base cache {shown} could not be tidied: {e}")).help(
                    "make the base cache's directory writable for this user, then run the gc again",
                ),
            )
        })?;
    }
    let verb = if dry_run { "would remove" } else { "removed" };
    for g in &sweep.entries {
        let _ = writeln!(out, "{verb} {} ({})", g.label(), g.why);
    }
    if dry_run {
        let v1 = sweep.dir().join("v1");
        for (name, _) in &sweep.items {
            let _ = writeln!(
                out,
                "would remove {}",
                v1.join("sha256").join(name).display()
            );
        }
        for (name, _) in &sweep.stray {
            let _ = writeln!(out, "would remove {}", v1.join(name).display());
        }
    }
    let entries_total = sweep.entries.len() + sweep.kept.len();
    let stray = match sweep.stray.len() {
        0 => String::new(),
        1 => " and 1 other file".to_string(),
        n => format!(" and {n} other files"),
    };
    let _ = writeln!(
        out,
        "base cache {shown}: {verb} {} of {}, {} of {}{stray} ({} bytes); {} kept ({} bytes)",
        sweep.entries.len(),
        counted(entries_total, "entry", "entries"),
        sweep.items.len(),
        counted(sweep.items_total, "item", "items"),
        sweep.freed(),
        counted(sweep.kept.len(), "entry", "entries"),
        sweep.kept_bytes,
    );
    Ok(())
}

/// `1 entry`, `3 entries`.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The attestations beside a store: `*.vsa.json`, `*.vsa.dsse.json`, `*.vsa.sigstore.json`.
fn beside(store: &Path) -> Vec<PathBuf> {
    let parent = store
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut found: Vec<PathBuf> = std::fs::read_dir(parent)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.ends_with(".vsa.json")
                            || n.ends_with(".vsa.dsse.json")
                            || n.ends_with(".vsa.sigstore.json")
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// The items a statement cites: its records, and their blobs. A cited name that is not an
/// evidence name, or an item that is not a regular file, is an input error: gc reads nothing
/// else, and keeps nothing it cannot tell about.
fn cited(
    statement: &Statement,
    shown: &str,
    store: &StoreReader,
    into: &mut BTreeSet<String>,
) -> Result<(), Error> {
    for pointer in statement.evidence_pointers() {
        let hex = pointer.strip_prefix("sha256:").unwrap_or(&pointer);
        if !is_digest(hex) {
            return Err(Error::input(
                InputError::new(format!(
                    "it cites `{hex}`, which is not an evidence name (64 lowercase hex digits), so gc reads nothing it names and removes nothing"
                ))
                .in_file(shown)
                .help("keep only statements, DSSE envelopes or Sigstore bundles claim-check wrote, unchanged"),
            ));
        }
        into.insert(hex.to_string());
        let bytes = match store.read(hex) {
            Ok(bytes) => bytes,
            Err(e) if e.is_missing() => continue,
            Err(e) => {
                return Err(Error::input(
                    InputError::new(format!(
                        "evidence sha256:{hex}, which it cites, {e}; gc removes nothing"
                    ))
                    .in_file(shown)
                    .help("claim-check writes every item of the store as a regular file: remove this one from the store, then run gc again"),
                ))
            }
        };
        if let Ok(record) = serde_json::from_slice::<Record>(&bytes) {
            for b in record.blobs() {
                into.insert(b.trim_start_matches("sha256:").to_string());
            }
        }
    }
    Ok(())
}

/// A kept attestation's bytes. One found beside the store is a file of the checkout, so it is
/// read as evidence is (a regular file, through no symlink); one named with `--keep` is the
/// user's, followed, but still a regular file, and both no larger than an evidence item.
fn read_attestation(file: &Path, named: bool) -> Result<Vec<u8>, KeptUnread> {
    let limit = crate::evidence::ITEM_LIMIT;
    if !named {
        return crate::nofollow::read_regular(file, limit).map_err(KeptUnread::Read);
    }
    let meta = std::fs::metadata(file).map_err(KeptUnread::Io)?;
    if !meta.is_file() || meta.len() > limit {
        return Err(KeptUnread::NotRegular(limit));
    }
    std::fs::read(file).map_err(KeptUnread::Io)
}

/// Why a kept attestation was not read.
#[derive(Debug, thiserror::Error)]
enum KeptUnread {
    /// One beside the store, read as evidence is.
    #[error("it {0}")]
    Read(crate::nofollow::ReadError),
    #[error("{0}")]
    Io(std::io::Error),
    /// Not a regular file, or over the limit (in bytes).
    #[error("it is not a regular file of at most {0} bytes")]
    NotRegular(u64),
}

fn gc(
    store: &Path,
    keep: &[PathBuf],
    dry_run: bool,
    base_cache: Option<&str>,
    limits: &Limits,
) -> Result<i32, Error> {
    let blobs = store.join("sha256");
    let repository = crate::git::Git::discover(Path::new(".")).ok();
    let out = OutputPath::dir(store, repository.as_ref().map(|g| g.root()));
    for p in [&out, &out.child_dir("sha256")] {
        p.check()
            .map_err(|r| Error::input(r.input_error("--evidence-dir")))?;
    }
    if !blobs.is_dir() {
        return Err(Error::input(
            InputError::new(format!("{} holds no evidence store", store.display())).help(
                "pass the store claim-check wrote with --evidence-dir (default .shipmoor/evidence)",
            ),
        ));
    }
    let reader =
        StoreReader::open(store).map_err(|e| {
            Error::input(
                InputError::new(e.to_string())
                    .in_file(store.display().to_string())
                    .help("pass the store claim-check wrote with --evidence-dir (default .shipmoor/evidence)"),
            )
        })?;
    let mut kept_files = beside(store);
    // Those beside the store come first, then those named with `--keep`.
    let found = kept_files.len();
    kept_files.extend(keep.iter().cloned());
    if kept_files.is_empty() {
        return Err(Error::input(
            InputError::new(format!(
                "no attestation beside {} to keep its evidence: gc would remove everything",
                store.display()
            ))
            .help("pass --keep FILE for each attestation whose evidence must stay"),
        ));
    }
    let mut cites = BTreeSet::new();
    for (i, file) in kept_files.iter().enumerate() {
        let shown = file.display().to_string();
        let bytes = read_attestation(file, i >= found).map_err(|e| {
            Error::input(
                InputError::new(format!("cannot read it: {e}"))
                    .in_file(&shown)
                    .help("pass an attestation claim-check wrote, readable for this user, with --keep"),
            )
        })?;
        let statement = Attestation::parse(&bytes)
            .map_err(|(_, why)| why)
            .and_then(|a| {
                serde_json::from_slice::<Statement>(a.unverified_statement())
                    .map_err(|e| e.to_string())
            })
            .map_err(|why| {
                Error::input(
                    InputError::new(format!("not an attestation whose evidence to keep: {why}"))
                        .in_file(&shown)
                        .help("keep only statements, DSSE envelopes or Sigstore bundles claim-check wrote"),
                )
            })?;
        cited(&statement, &shown, &reader, &mut cites)?;
    }
    let cache = plan_cache(base_cache, repository.as_ref().map(|g| g.root()), limits)?;
    let mut removed = 0usize;
    let mut freed = 0u64;
    let mut out = std::io::stdout();
    let entries = std::fs::read_dir(&blobs).at("list", &blobs)?;
    let mut names: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.path())))
        .collect();
    names.sort();
    let total = names.len();
    for (name, path) in names {
        // Only the store's own regular files: a symlink is never followed, not even to size.
        let meta = std::fs::symlink_metadata(&path)
            .ok()
            .filter(|m| m.is_file());
        let Some(meta) = meta.filter(|_| !cites.contains(&name)) else {
            continue;
        };
        freed += meta.len();
        removed += 1;
        if dry_run {
            let _ = writeln!(out, "would remove {}", path.display());
        } else {
            std::fs::remove_file(&path).at("remove", &path)?;
        }
    }
    let _ = writeln!(
        out,
        "{} {removed} of {total} items ({freed} bytes); {} kept for {}",
        if dry_run { "would remove" } else { "removed" },
        total - removed,
        kept_files
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    tidy_cache(cache, dry_run, &mut out)?;
    Ok(0)
}
