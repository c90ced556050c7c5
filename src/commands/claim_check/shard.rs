//! Shards (book: sharding.md): `claim-check --shard K/N --shard-out DIR` writes one shard's floor as a
//! shard result (`DIR/shard.json`, `claim_check.shard.v1`, and `DIR/evidence/`, laid out as the
//! run's evidence store); `shipmoor fuse` reads the shards, checks that they agree, that
//! their evidence is as written and that every entry's stated floor follows from the records it
//! cites, and merges them back into the floor of one run.
//!
//! A shard job runs the change's code (book: security.md), which can rewrite the shard's own result:
//! fuse trusts a shard's records no more than replay trusts a statement's, and its stated
//! results not at all. Every entry is re-derived from its records by [`replay::check_floor`],
//! the floor's rule re-run as replay re-runs it over the statement the fuse then signs.
//!
//! Every shard runs the floor's shared steps (tag scan, seeding, setup, listing, binding) as a
//! single run does, and the tests and checks of its own entries only. Each runtime row and
//! evidence record carries its [`Position`] in the whole run's order, so that the fused rows and
//! records come back in the single run's order, the records shared by shards deduplicated by
//! pointer: with the clock pinned, the fused outputs are the single run's, byte for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::resolved::Resolved;
use super::sharding::ShardPlan;
use crate::cli::{ClaimCheckArgs, ShardBy};
use crate::error::{Error, InputError};
use crate::evidence::{self, sha256_hex, EvidenceStore, StoreReader};
use crate::floor::harness::HarnessChange;
use crate::floor::{
    self, CriterionFloor, EntryKind, FloorEntry, FloorOrder, FloorReport, Position, RuntimeRow,
    Split,
};
use crate::format::evidence::Record;
use crate::format::observation::{JobRef, Observation};
use crate::format::statement::DispositionFloor;
use crate::git::{CommitId, Git};
use crate::nofollow::{self, OutputPath};
use crate::replay::{self, Cited};

pub const SHARD_SCHEMA: &str = "claim_check.shard.v1";
const SHARD_FILE: &str = "shard.json";

/// One shard result: `shard.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ShardDoc {
    pub schema: String,
    pub tool_version: String,
    pub policy: String,
    pub base: String,
    pub head: String,
    /// The acceptance set's digest (`acceptance.sha256` of the result).
    pub acceptance_sha256: String,
    pub shard: ShardId,
    /// `--runs`.
    pub runs: u32,
    /// This shard's entries, each with its position in the whole run's report.
    pub entries: Vec<ShardEntry>,
    pub runtime: Vec<ShardRow>,
    /// Every evidence record, where in the whole run's order it was first stored.
    pub records: Vec<ShardRecord>,
    pub overlay: Vec<String>,
    pub overlay_deleted: Vec<String>,
    pub overlay_spliced: Vec<String>,
    pub changed_files: usize,
    pub harness: Vec<HarnessChange>,
    /// The sandbox the shard's floor ran under (every shard's must be the same).
    pub sandbox: crate::format::sandbox::SandboxRecord,
    /// The SHA-256 of every file in `evidence/sha256/` (each file's name).
    pub evidence: Vec<String>,
    /// The GitHub Actions job the shard's floor ran in (absent outside Actions). Written by a
    /// job that ran the change's code: it can only say that job was another one of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_in: Option<JobRef>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ShardId {
    pub k: usize,
    pub n: usize,
    /// `criterion` or `runner` (`--shard-by`).
    pub by: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ShardEntry {
    pub position: usize,
    pub id: String,
    /// The pass-to-pass guard rather than one of the claim's criteria.
    pub guard: bool,
    pub floor: CriterionFloor,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ShardRow {
    pub position: Position,
    pub row: RuntimeRow,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ShardRecord {
    pub pointer: String,
    pub position: Position,
}

/// A shard read by `fuse`: its directory, its result and its evidence files (by hex), checked.
pub(super) struct Loaded {
    dir: PathBuf,
    doc: ShardDoc,
    blobs: BTreeMap<String, Vec<u8>>,
}

/// The shard's directory can be written: absent, empty, or an earlier shard result (which the
/// new one replaces), with no symlink where its files go or on the way to it
/// ([`OutputPath::check`]); anything else is an input error, so that no stray file is fused.
/// Returns the directory as the result is then written through.
pub(super) fn check_out(dir: &Path, root: &Path) -> Result<OutputPath, Error> {
    let fail = |m: String| {
        Err(Error::input(
            InputError::new(m).help("pass an empty or new directory with --shard-out"),
        ))
    };
    let out = OutputPath::dir(dir, Some(root));
    for p in [&out, &out.child_file(SHARD_FILE)] {
        p.check()
            .map_err(|r| Error::input(r.input_error("--shard-out")))?;
    }
    evidence::check_store(&out.child_dir("evidence"))
        .map_err(|r| Error::input(r.input_error("--shard-out")))?;
    if !dir.exists() {
        return Ok(out);
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return fail(format!("--shard-out {} is not a directory", dir.display()));
    };
    let names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if !names.is_empty() && !names.iter().any(|n| n == SHARD_FILE) {
        return fail(format!(
            "--shard-out {} holds files but no shard result",
            dir.display()
        ));
    }
    if tempfile::tempfile_in(dir).is_err() {
        return fail(format!("--shard-out {} is not writable", dir.display()));
    }
    Ok(out)
}

/// Writes the shard result: the evidence first, then `shard.json`, which names it; both are
/// checked first, since the floor ran the change's code since the input checks.
/// `out`: `--shard-out` as the input checks found it.
pub(super) fn write(
    resolved: &Resolved,
    (target, out): (&ShardPlan, &OutputPath),
    report: &FloorReport,
    order: &FloorOrder,
    store: &EvidenceStore,
) -> Result<(), Error> {
    let refused = |r: nofollow::Refused| Error::input(r.input_error("--shard-out"));
    let evidence = out.child_dir("evidence");
    let file = out.child_file(SHARD_FILE);
    out.check().map_err(refused)?;
    file.check().map_err(refused)?;
    evidence::check_store(&evidence).map_err(refused)?;
    // An earlier shard result's evidence would be fused as this one's. It is a directory and
    // no symlink (checked just now), and `remove_dir_all` follows no symlink inside it.
    if evidence.path().exists() {
        std::fs::remove_dir_all(evidence.path()).map_err(|e| {
            Error::crash(format!("cannot remove {}: {e}", evidence.path().display()))
        })?;
    }
    store
        .commit(&evidence)
        .map_err(|e| e.into_error(Some("--shard-out")))?;
    let set = &resolved.claim.set;
    let entries = report
        .entries
        .iter()
        .zip(&order.entries)
        .map(|(e, &position)| ShardEntry {
            position,
            id: e.criterion.id.clone(),
            guard: e.kind == EntryKind::Guard,
            floor: e.floor.clone(),
        })
        .collect();
    let doc = ShardDoc {
        schema: SHARD_SCHEMA.into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        policy: crate::verdict::POLICY.into(),
        base: resolved.base.to_string(),
        head: resolved.head.to_string(),
        acceptance_sha256: set.sha256.clone(),
        shard: ShardId {
            k: target.share.k,
            n: target.share.n,
            by: split_name(target.share.split).into(),
        },
        runs: resolved.runs,
        entries,
        runtime: report
            .runtime
            .iter()
            .zip(&order.rows)
            .map(|(row, position)| ShardRow {
                position: position.clone(),
                row: row.clone(),
            })
            .collect(),
        records: order
            .records
            .iter()
            .map(|(pointer, position)| ShardRecord {
                pointer: pointer.clone(),
                position: position.clone(),
            })
            .collect(),
        overlay: report.overlay.clone(),
        overlay_deleted: report.overlay_deleted.clone(),
        overlay_spliced: report.overlay_spliced.clone(),
        changed_files: report.changed_files,
        harness: report.harness.clone(),
        sandbox: report.sandbox.clone(),
        observed_in: JobRef::here(),
        evidence: store.digests().map(str::to_string).collect(),
    };
    let bytes = crate::commands::pretty_json(&doc)?;
    file.write(&bytes)
        .map_err(|e| e.into_error(Some("--shard-out")))?;
    if !resolved.quiet {
        eprintln!(
            "claim-check: shard {}/{} ({} of {} entries, split by {}): wrote {} and {} ({} files)",
            target.share.k,
            target.share.n,
            doc.entries.len(),
            set.criteria.len() + usize::from(has_guard(set)),
            doc.shard.by,
            file.path().display(),
            evidence.path().display(),
            doc.evidence.len()
        );
    }
    Ok(())
}

fn split_name(split: Split) -> &'static str {
    match split {
        Split::Criterion => ShardBy::Criterion.as_str(),
        Split::Runner => ShardBy::Runner.as_str(),
    }
}

/// Whether the report ends with the pass-to-pass guard (as the floor decides it).
fn has_guard(set: &crate::acceptance::AcceptanceSet) -> bool {
    !set.guard.is_empty() || !set.guarded_criteria().is_empty()
}

/// `fuse` takes claim-check's outputs, mode, judge and signing flags; not the shard's own.
pub(super) fn check_fuse_flags(args: &ClaimCheckArgs) -> Result<(), Error> {
    let refused = [
        ("--shard", args.shard.is_some()),
        ("--shard-out", args.shard_out.is_some()),
        ("--attach", args.attach.is_some()),
    ];
    match refused.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(Error::input(
            InputError::new(format!("fuse does not take {flag}"))
                .help("pass the shards' directories, and the output and signing flags a claim-check run would take"),
        )),
        None => Ok(()),
    }
}

/// A shard whose `shard.json` is not the one its observe job published the digest of.
fn tampered(dir: &Path, what: impl std::fmt::Display) -> InputError {
    InputError::new(format!("shard {}: {what}", dir.display())).help(
        "the artifact was replaced or written by another job; fuse only the artifacts of this run's observe jobs, as they uploaded them (book: trust-boundary.md)",
    )
}

/// `fuse --expect-digests`: the SHA-256 of each shard's `shard.json`, by K.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ExpectedDigests(BTreeMap<usize, String>);

impl ExpectedDigests {
    /// A JSON object whose keys end in a shard's number (`digest-3`, or `3`) and whose values
    /// are SHA-256 digests (hex, with or without `sha256:`); an empty value is no digest (the
    /// output of a leg that did not run).
    pub(super) fn parse(json: &str) -> Result<ExpectedDigests, Error> {
        let bad = |what: String| {
            Error::input(InputError::new(format!("--expect-digests: {what}")).help(
                r#"give a JSON object such as {"digest-1": "<sha256 of shard 1's shard.json>", "digest-2": "..."} (the reusable workflow passes toJSON(needs.observe.outputs))"#,
            ))
        };
        let map: BTreeMap<String, serde_json::Value> =
            serde_json::from_str(json).map_err(|e| bad(format!("not a JSON object: {e}")))?;
        let mut out = BTreeMap::new();
        for (key, value) in map {
            let Some(value) = value.as_str() else {
                return Err(bad(format!("`{key}` is not a string")));
            };
            if value.is_empty() {
                continue;
            }
            let digits = key.rsplit('-').next().unwrap_or(&key);
            let k = match digits.parse::<usize>() {
                Ok(k) if k >= 1 => k,
                _ => return Err(bad(format!("`{key}` does not end in a shard number"))),
            };
            let hex = value.strip_prefix("sha256:").unwrap_or(value);
            if !evidence::is_digest(hex) {
                return Err(bad(format!(
                    "`{key}` is `{value}`, not a SHA-256 (64 lowercase hex digits)"
                )));
            }
            if out.insert(k, hex.to_string()).is_some() {
                return Err(bad(format!("shard {k} is named twice")));
            }
        }
        if out.is_empty() {
            return Err(bad("no digest in it".into()));
        }
        Ok(ExpectedDigests(out))
    }
}

fn problem(dir: &Path, what: impl std::fmt::Display) -> InputError {
    InputError::new(format!("shard {}: {what}", dir.display())).help(
        "fuse the shard directories one `claim-check --shard K/N` run of each K wrote, unchanged",
    )
}

/// Reads every shard and checks them before anything else: each `shard.json` valid, each
/// evidence file as written, each entry's stated floor what its records give, then that the
/// shards agree and each K is there once.
pub(super) fn read_all(
    dirs: &[PathBuf],
    expected: Option<&ExpectedDigests>,
) -> Result<Vec<Loaded>, Error> {
    let mut loaded = Vec::new();
    let mut problems = Vec::new();
    for dir in dirs {
        match read_one(dir, expected) {
            Ok(l) => {
                problems.extend(derive(&l));
                loaded.push(l);
            }
            Err(p) => problems.push(p),
        }
    }
    if let (true, Some(expected)) = (problems.is_empty(), expected) {
        let found: BTreeSet<usize> = loaded.iter().map(|l| l.doc.shard.k).collect();
        for k in expected.0.keys().filter(|k| !found.contains(k)) {
            problems.push(
                InputError::new(format!(
                    "shard {k}: its observe job published the digest of its shard.json, and no shard directory given holds shard {k}"
                ))
                .help("download every shard artifact of this run (the pattern names the run's nonce), unchanged"),
            );
        }
    }
    if problems.is_empty() {
        problems = agreement(&loaded);
    }
    if problems.is_empty() {
        loaded.sort_by_key(|l| l.doc.shard.k);
        Ok(loaded)
    } else {
        Err(Error::Input(problems))
    }
}

/// The largest `shard.json` read: as large as an evidence item may be.
const SHARD_FILE_LIMIT: u64 = evidence::ITEM_LIMIT;

fn read_one(dir: &Path, expected: Option<&ExpectedDigests>) -> Result<Loaded, InputError> {
    // The shard's directory is the user's to name; what is in it came from a job that ran the
    // change's code, so no file or directory in it is read through a symlink.
    let file = dir.join(SHARD_FILE);
    let text = nofollow::read_regular(&file, SHARD_FILE_LIMIT)
        .map_err(|e| problem(dir, format!("{SHARD_FILE} {e}")))?;
    let doc: ShardDoc = serde_json::from_slice(&text)
        .map_err(|e| problem(dir, format!("{SHARD_FILE} is not a shard result: {e}")))?;
    if doc.schema != SHARD_SCHEMA {
        return Err(problem(
            dir,
            format!("{SHARD_FILE} is `{}`, not `{SHARD_SCHEMA}`", doc.schema),
        ));
    }
    // The digest its observe job published through a channel the change cannot write: a
    // shard.json that differs was not the one that job wrote.
    if let Some(expected) = expected {
        let k = doc.shard.k;
        let got = sha256_hex(&text);
        match expected.0.get(&k) {
            Some(want) if *want == got => {}
            Some(want) => {
                return Err(tampered(
                    dir,
                    format!("shard {k}'s {SHARD_FILE} has SHA-256 {got}, and its observe job published {want}"),
                ))
            }
            None => {
                return Err(tampered(
                    dir,
                    format!("it says it is shard {k}, and no observe job published a digest for shard {k}"),
                ))
            }
        }
    }
    if let Some(bad) = doc.evidence.iter().find(|h| !evidence::is_digest(h)) {
        return Err(problem(
            dir,
            format!("{SHARD_FILE}'s evidence list names `{bad}`, which is not an evidence name (64 lowercase hex digits)"),
        ));
    }
    // Every file of the store is one the shard listed, a regular file, and hashes to its name.
    let store_dir = dir.join("evidence");
    nofollow::is_real_dir(&store_dir).map_err(|e| problem(dir, format!("evidence {e}")))?;
    let reader = StoreReader::open(&store_dir).map_err(|e| problem(dir, e))?;
    let store = store_dir.join("sha256");
    let listed: BTreeSet<&str> = doc.evidence.iter().map(String::as_str).collect();
    let mut found = BTreeSet::new();
    if store.exists() {
        let entries = std::fs::read_dir(&store)
            .map_err(|e| problem(dir, format!("cannot read evidence/sha256: {e}")))?;
        for entry in entries {
            let entry = entry.map_err(|e| problem(dir, format!("evidence/sha256: {e}")))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !listed.contains(name.as_str()) {
                return Err(problem(
                    dir,
                    format!("evidence/sha256/{name} is not in {SHARD_FILE}'s evidence list"),
                ));
            }
            found.insert(name);
        }
    }
    if let Some(missing) = listed.iter().find(|h| !found.contains(**h)) {
        return Err(problem(
            dir,
            format!("evidence/sha256/{missing} is missing"),
        ));
    }
    let mut blobs = BTreeMap::new();
    for hex in &listed {
        let bytes = reader
            .read(hex)
            .map_err(|e| problem(dir, format!("evidence/sha256/{hex} {e}")))?;
        if sha256_hex(&bytes) != *hex {
            return Err(problem(
                dir,
                format!("evidence/sha256/{hex} does not hash to its name (changed after the shard wrote it)"),
            ));
        }
        blobs.insert(hex.to_string(), bytes);
    }
    for r in &doc.records {
        let hex = r.pointer.strip_prefix("sha256:").unwrap_or_default();
        if !listed.contains(hex) {
            return Err(problem(
                dir,
                format!("record {} is not in its evidence", r.pointer),
            ));
        }
    }
    // What a disposition rests on is one of the shard's records.
    let records: BTreeSet<&str> = doc.records.iter().map(|r| r.pointer.as_str()).collect();
    for e in &doc.entries {
        let f = &e.floor;
        let cited = f
            .evidence_all
            .iter()
            .chain(f.evidence.as_ref().map(|r| &r.pointer))
            .chain(
                f.tests
                    .iter()
                    .flat_map(|t| t.head_evidence.iter().chain(&t.base_evidence)),
            );
        if let Some(missing) = cited.into_iter().find(|p| !records.contains(p.as_str())) {
            return Err(problem(
                dir,
                format!(
                    "criterion `{}` cites {missing}, which is none of its records",
                    e.id
                ),
            ));
        }
    }
    Ok(Loaded {
        dir: dir.to_path_buf(),
        doc,
        blobs,
    })
}

/// Each entry's stated floor (its result, and each bound test's outcome at each side) follows
/// from the shard's own records that it cites, by the floor's rule re-run as replay re-runs it;
/// each record parses and its logs are in the shard's evidence. A shard whose records were
/// rewritten and renamed to their new hashes passes [`read_one`]'s checks, and is caught here
/// when what its records show is not what it states. One problem per entry that does not
/// follow, so that every forged criterion is named.
fn derive(shard: &Loaded) -> Vec<InputError> {
    let doc = &shard.doc;
    let mut problems = Vec::new();
    let mut records = BTreeMap::new();
    for r in &doc.records {
        // [`read_one`] found every record in the evidence, by a `sha256:` pointer.
        let hex = r.pointer.strip_prefix("sha256:").unwrap_or_default();
        let Some(bytes) = shard.blobs.get(hex) else {
            continue;
        };
        let record: Record = match serde_json::from_slice(bytes) {
            Ok(record) => record,
            Err(e) => {
                problems.push(problem(
                    &shard.dir,
                    format!("record {} is not an evidence record: {e}", r.pointer),
                ));
                continue;
            }
        };
        let missing = record.blobs().into_iter().find(|b| {
            !b.strip_prefix("sha256:")
                .is_some_and(|h| shard.blobs.contains_key(h))
        });
        if let Some(b) = missing {
            problems.push(problem(
                &shard.dir,
                format!(
                    "record {} names {b}, which is not in its evidence",
                    r.pointer
                ),
            ));
            continue;
        }
        records.insert(r.pointer.clone(), record);
    }
    if !problems.is_empty() {
        return problems;
    }
    let cited = Cited {
        records: &records,
        base: &doc.base,
        head: &doc.head,
        among: "the shard's records",
    };
    for e in &doc.entries {
        if let Err(why) = replay::check_floor(&e.id, &DispositionFloor::from(&e.floor), &cited) {
            problems.push(problem(
                &shard.dir,
                format!("what it states does not follow from its records: {why}"),
            ));
        }
    }
    problems
}

/// The shards agree on what they checked, and each K of 1..N is there once. A value the
/// shards disagree on is reported at the shards that differ from the most common value.
fn agreement(shards: &[Loaded]) -> Vec<InputError> {
    let mut problems = Vec::new();
    type Get = fn(&ShardDoc) -> String;
    let fields: [(&str, Get); 12] = [
        ("base", |d| d.base.clone()),
        ("head", |d| d.head.clone()),
        ("acceptance_sha256", |d| d.acceptance_sha256.clone()),
        ("policy", |d| d.policy.clone()),
        ("tool_version", |d| d.tool_version.clone()),
        ("shard count (N)", |d| d.shard.n.to_string()),
        ("split (--shard-by)", |d| d.shard.by.clone()),
        ("runs", |d| d.runs.to_string()),
        ("overlay", |d| {
            format!("{:?}", (&d.overlay, &d.overlay_deleted, &d.overlay_spliced))
        }),
        ("changed_files", |d| d.changed_files.to_string()),
        ("harness", |d| format!("{:?}", d.harness)),
        ("sandbox", |d| d.sandbox.line()),
    ];
    for (name, get) in fields {
        let values: Vec<String> = shards.iter().map(|s| get(&s.doc)).collect();
        let mut counts: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for (i, v) in values.iter().enumerate() {
            counts.entry(v.as_str()).or_insert((0, i)).0 += 1;
        }
        // The most common value; of equally common ones, the first shard's.
        let Some((&common, _)) = counts
            .iter()
            .max_by_key(|(_, (n, first))| (*n, std::cmp::Reverse(*first)))
        else {
            continue;
        };
        for (s, v) in shards.iter().zip(&values) {
            if v != common {
                problems.push(problem(
                    &s.dir,
                    format!("its {name} is `{v}`, the other shards' `{common}`"),
                ));
            }
        }
        if !problems.is_empty() {
            return problems;
        }
    }
    let n = shards.first().map_or(0, |s| s.doc.shard.n);
    let mut by_k: BTreeMap<usize, Vec<&Loaded>> = BTreeMap::new();
    for s in shards {
        if s.doc.shard.k == 0 || s.doc.shard.k > n {
            problems.push(problem(
                &s.dir,
                format!("it is shard {}/{n}, outside 1..{n}", s.doc.shard.k),
            ));
        }
        by_k.entry(s.doc.shard.k).or_default().push(s);
    }
    for (k, of) in &by_k {
        if let [first, rest @ ..] = of.as_slice() {
            for again in rest {
                problems.push(problem(
                    &again.dir,
                    format!(
                        "it is shard {k}/{n} again (as {} is): every shard once",
                        first.dir.display()
                    ),
                ));
            }
        }
    }
    for k in (1..=n).filter(|k| !by_k.contains_key(k)) {
        problems.push(
            InputError::new(format!(
                "shard {k}/{n} is missing: the shards given are {}",
                shards
                    .iter()
                    .map(|s| format!("{} ({}/{n})", s.dir.display(), s.doc.shard.k))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .help(format!("pass all {n} shard directories")),
        );
    }
    problems
}

/// The shards' base and head (they agree, [`read_all`]).
pub(super) fn commits(shards: &[Loaded]) -> (String, String) {
    shards
        .first()
        .map(|s| (s.doc.base.clone(), s.doc.head.clone()))
        .unwrap_or_default()
}

/// The shard jobs the shards are (they agree on N and the split, [`read_all`]), as the fused
/// result records them.
/// Where the shards were observed, against the job this fuse runs in.
pub(super) fn observation(shards: &[Loaded]) -> Observation {
    let here = JobRef::here();
    let observed: Vec<Option<JobRef>> = shards.iter().map(|s| s.doc.observed_in.clone()).collect();
    Observation::fused(here.as_ref(), &observed)
}

pub(super) fn sharding(shards: &[Loaded]) -> crate::report::Shards {
    let (n, by) = shards
        .first()
        .map(|s| (s.doc.shard.n, s.doc.shard.by.clone()))
        .unwrap_or_default();
    crate::report::Shards { n, by }
}

/// What the fuse's own input checks found is what the shards checked: the commits named by
/// `--base`/`--head` (when given) and the acceptance set's digest at head (`digest`).
pub(super) fn check_plan(
    (git, base_id, head_id): (&Git, &CommitId, &CommitId),
    digest: &str,
    shards: &[Loaded],
    (base, head): (Option<String>, Option<String>),
) -> Result<(), Error> {
    let Some(first) = shards.first() else {
        return Err(Error::crash("fuse without shards"));
    };
    for (flag, given, theirs) in [("--base", base, base_id), ("--head", head, head_id)] {
        if let Some(rev) = given {
            let named = git.resolve(&rev, flag)?;
            if &named != theirs {
                return Err(Error::input(problem(
                    &first.dir,
                    format!(
                        "the shards checked {} {}, and {flag} {rev} is {}",
                        &flag[2..],
                        theirs.short(),
                        named.short()
                    ),
                )));
            }
        }
    }
    if first.doc.acceptance_sha256 != digest {
        return Err(Error::input(problem(
            &first.dir,
            format!(
                "its acceptance set (sha256 {}) is not the one read here at head (sha256 {digest})",
                first.doc.acceptance_sha256
            ),
        )));
    }
    Ok(())
}

/// The shards' floors as one [`FloorReport`] in the single run's order, and their evidence as
/// one store whose records are in the single run's order. Every entry of the claim is in
/// exactly one shard.
pub(super) fn merge(
    resolved: &Resolved,
    shards: Vec<Loaded>,
) -> Result<(EvidenceStore, FloorReport), Error> {
    let set = &resolved.claim.set;
    let guard = has_guard(set).then(|| floor::guard_criterion(&set.guard_scope()));
    let criterion_at = |pos: usize| match set.criteria.get(pos) {
        Some(c) => Some((EntryKind::Claimed, c.clone())),
        None if pos == set.criteria.len() => guard.clone().map(|g| (EntryKind::Guard, g)),
        None => None,
    };
    let total = set.criteria.len() + usize::from(guard.is_some());
    let mut problems = Vec::new();
    let mut entries: BTreeMap<usize, (FloorEntry, &Path)> = BTreeMap::new();
    let mut rows: BTreeMap<Position, RuntimeRow> = BTreeMap::new();
    let mut records: BTreeMap<String, Position> = BTreeMap::new();
    let mut store = EvidenceStore::new();
    for s in &shards {
        for e in &s.doc.entries {
            let Some((kind, criterion)) = criterion_at(e.position) else {
                problems.push(problem(
                    &s.dir,
                    format!(
                        "entry `{}` at position {} is not in the acceptance set",
                        e.id, e.position
                    ),
                ));
                continue;
            };
            if criterion.id != e.id || (kind == EntryKind::Guard) != e.guard {
                problems.push(problem(
                    &s.dir,
                    format!(
                        "entry {} is `{}`, and the acceptance set has `{}` there",
                        e.position, e.id, criterion.id
                    ),
                ));
                continue;
            }
            if let Some((_, other)) = entries.get(&e.position) {
                problems.push(problem(
                    &s.dir,
                    format!(
                        "criterion `{}` is in this shard and in {} too",
                        e.id,
                        other.display()
                    ),
                ));
                continue;
            }
            entries.insert(
                e.position,
                (
                    FloorEntry {
                        kind,
                        criterion,
                        floor: e.floor.clone(),
                    },
                    &s.dir,
                ),
            );
        }
        for r in &s.doc.runtime {
            rows.entry(r.position.clone())
                .or_insert_with(|| r.row.clone());
        }
        for r in &s.doc.records {
            let at = records
                .entry(r.pointer.clone())
                .or_insert_with(|| r.position.clone());
            if r.position < *at {
                *at = r.position.clone();
            }
        }
    }
    for pos in (0..total).filter(|p| !entries.contains_key(p)) {
        let id = criterion_at(pos).map(|(_, c)| c.id).unwrap_or_default();
        let expected = shards
            .iter()
            .find(|s| {
                s.doc.shard.by == ShardBy::Criterion.as_str()
                    && pos % s.doc.shard.n == s.doc.shard.k - 1
            })
            .map(|s| {
                format!(
                    " (shard {}/{} at {} should hold it)",
                    s.doc.shard.k,
                    s.doc.shard.n,
                    s.dir.display()
                )
            })
            .unwrap_or_default();
        problems.push(
            InputError::new(format!("criterion `{id}` is in no shard{expected}"))
                .help("fuse the shards of one run, unchanged"),
        );
    }
    if !problems.is_empty() {
        return Err(Error::Input(problems));
    }
    // The facts every shard found alike ([`agreement`]).
    let Some(shared) = shards.first().map(|s| s.doc.clone()) else {
        return Err(Error::crash("fuse without shards"));
    };
    let entries: Vec<FloorEntry> = entries.into_values().map(|(e, _)| e).collect();
    for s in shards {
        for blob in s.blobs.into_values() {
            store.put_blob(blob);
        }
    }
    let mut ordered: Vec<(Position, String)> = records.into_iter().map(|(p, at)| (at, p)).collect();
    ordered.sort();
    for (_, pointer) in ordered {
        let bytes = store
            .get(&pointer)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Error::crash(format!("record {pointer} not in the merged evidence")))?;
        store.put_record_bytes(bytes);
    }
    let report = FloorReport {
        entries,
        runtime: rows.into_values().collect(),
        overlay: shared.overlay,
        overlay_deleted: shared.overlay_deleted,
        overlay_spliced: shared.overlay_spliced,
        changed_files: shared.changed_files,
        harness: shared.harness,
        base_cache: None,
        cache_entry: None,
        sandbox: shared.sandbox,
    };
    Ok((store, report))
}

#[cfg(test)]
#[path = "shard_prop_tests.rs"]
mod prop_tests;

#[cfg(test)]
mod tests {
    use super::ExpectedDigests;

    #[test]
    fn expected_digests_are_read_by_the_number_their_key_ends_in() {
        let hex = "ab".repeat(32);
        let json =
            format!(r#"{{"digest-1": "{hex}", "digest-2": "sha256:{hex}", "digest-3": ""}}"#);
        let e = ExpectedDigests::parse(&json).unwrap();
        assert_eq!(e.0.keys().copied().collect::<Vec<_>>(), [1, 2]);
        for (bad, says) in [
            ("[]".to_string(), "not a JSON object"),
            (
                r#"{"digest-x": "00"}"#.to_string(),
                "does not end in a shard number",
            ),
            (r#"{"digest-1": "00"}"#.to_string(), "not a SHA-256"),
            (
                format!(r#"{{"1": "{hex}", "digest-1": "{hex}"}}"#),
                "named twice",
            ),
            (r#"{"digest-1": ""}"#.to_string(), "no digest"),
        ] {
            let err = ExpectedDigests::parse(&bad).unwrap_err().to_string();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
