//! `shipmoor evidence gc`: the evidence store keeps what the kept statements cite (their
//! records, and the blobs those records point to) and loses the rest, which runs that
//! were overwritten left behind. Exit 0, 2 input error.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::attest::verify::Attestation;
use crate::cli::EvidenceCommand;
use crate::error::{Error, InputError};
use crate::format::evidence::Record;
use crate::format::statement::Statement;

pub fn run(cmd: EvidenceCommand) -> Result<i32, Error> {
    match cmd {
        EvidenceCommand::Gc {
            evidence_dir,
            keep,
            dry_run,
        } => gc(&evidence_dir, &keep, dry_run),
    }
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

/// The pointers (`sha256:<hex>`) a statement cites: its records, and their blobs.
fn cited(statement: &Statement, blobs: &Path, into: &mut BTreeSet<String>) {
    for input in &statement.predicate.input_attestations {
        let hex = &input.digest.sha256;
        into.insert(hex.clone());
        let Ok(bytes) = std::fs::read(blobs.join(hex)) else {
            continue;
        };
        if let Ok(record) = serde_json::from_slice::<Record>(&bytes) {
            for b in record.blobs() {
                into.insert(b.trim_start_matches("sha256:").to_string());
            }
        }
    }
}

fn gc(store: &Path, keep: &[PathBuf], dry_run: bool) -> Result<i32, Error> {
    let blobs = store.join("sha256");
    if !blobs.is_dir() {
        return Err(Error::input(
            InputError::new(format!("{} holds no evidence store", store.display())).help(
                "pass the store claim-check wrote with --evidence-dir (default .shipmoor/evidence)",
            ),
        ));
    }
    let mut kept_files = beside(store);
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
    for file in &kept_files {
        let shown = file.display().to_string();
        let bytes = std::fs::read(file).map_err(|e| {
            Error::input(InputError::new(format!("cannot read it: {e}")).in_file(&shown))
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
        cited(&statement, &blobs, &mut cites);
    }
    let mut removed = 0usize;
    let mut freed = 0u64;
    let mut out = std::io::stdout();
    let entries = std::fs::read_dir(&blobs)?;
    let mut names: Vec<(String, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| Some((e.file_name().to_str()?.to_string(), e.path())))
        .collect();
    names.sort();
    let total = names.len();
    for (name, path) in names {
        if cites.contains(&name) || !path.is_file() {
            continue;
        }
        freed += path.metadata().map(|m| m.len()).unwrap_or(0);
        removed += 1;
        if dry_run {
            let _ = writeln!(out, "would remove {}", path.display());
        } else {
            std::fs::remove_file(&path)?;
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
    Ok(0)
}
