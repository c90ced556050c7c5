//! The base cache (book: floor/base-cache.md): base's observations of the bound tests kept
//! across the runs of one pull request, so that a push that changes no test file, setting,
//! toolchain or lock file reuses base's answer instead of running base again.
//!
//! On disk, under the directory `--base-cache` names (a `CACHEDIR.TAG` marks it):
//! - `v1/entries/<hex>`: one [`Entry`] per base run, named by the SHA-256 of its canonical JSON;
//! - `v1/sha256/<hex>`: the evidence records and blobs the entries cite, as in an evidence
//!   store;
//! - `v1/listed`: the entries the last run that completed left there ([`LISTED_SCHEMA`]).
//!
//! Trust: the code under check runs in a sandbox that cannot write the cache (book:
//! security.md), and every defence below holds without it, for a run with `--sandbox off`
//! or code that reached the directory another way. The cache is read once, before any of that
//! code runs ([`BaseCache::open`]): only entries a completed run listed are read (anything
//! else appeared while a run was killed before it could tidy up, and is ignored with a note and
//! removed at the end of this run), each checked against its name and parsed, or ignored with
//! a note; every item checked against its name when a hit reads it; and a hit counts only
//! when the head it was observed at is a commit of this repository (the floor checks, see
//! `reuse.rs`). When the run is done and nothing it started runs any more, the directory is
//! made to hold exactly what was read and what this run observed ([`BaseCache::commit`]),
//! and the list says so. A cache is never an error or a verdict by itself: whatever is wrong
//! with it, base runs again.

pub mod entry;
pub mod error;
pub mod gc;
pub mod key;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;
use crate::error::IoContext;
use crate::evidence::is_digest;
use crate::nofollow::{is_real_dir, read_regular, OutputPath};
pub use entry::{CachedObservation, Entry, Made, ENTRY_SCHEMA};
pub use error::{CacheError, EntryError};
pub use key::KeyInputs;

/// The schema of `v1/listed`: the entries a completed run left in the cache.
pub const LISTED_SCHEMA: &str = "claim_check.base_cache.listed.v1";

/// `v1/listed`, as a completed run writes it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Listed {
    schema: String,
    /// The entries' names (hex), sorted.
    entries: Vec<String>,
}

/// The largest entry read: an entry holds observations and pointers, not logs.
const ENTRY_LIMIT: u64 = 16 << 20;

/// The largest item read back (a log, a results file).
const ITEM_LIMIT: u64 = crate::evidence::ITEM_LIMIT;

/// The cache directory tag (<https://bford.info/cachedir/>): backup tools skip the directory.
const CACHEDIR_TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
# This file is a cache directory tag created by shipmoor claim-check: its base cache.\n\
# For information about cache directory tags, see https://bford.info/cachedir/\n";

/// The cache's directory as `--base-cache` (or `SHIPMOOR_BASE_CACHE`) names it: `None` for
/// `none`; a relative path from the current directory; by default `.shipmoor/cache` in the
/// repository whose root is `root`.
pub fn dir_of(given: Option<&str>, root: &Path) -> Option<PathBuf> {
    match given {
        Some("none") => None,
        Some(p) if Path::new(p).is_absolute() => Some(PathBuf::from(p)),
        Some(p) => Some(
            std::env::current_dir()
                .unwrap_or_else(|_| root.to_path_buf())
                .join(p),
        ),
        None => Some(root.join(".shipmoor/cache")),
    }
}

/// The base cache as this run read it.
#[derive(Debug)]
pub struct BaseCache {
    /// The directory, as given.
    dir: PathBuf,
    /// The directory as reports name it (relative to the repository when inside it).
    shown: String,
    /// Where it is written, through no symlink.
    out: OutputPath,
    /// Every entry that checked out, by key: its name and contents.
    held: BTreeMap<String, Held>,
    /// What was wrong with what was not read (an entry ignored, the directory refused).
    notes: Vec<String>,
    /// Why the cache cannot be used at all (its directory is a symlink, say): nothing is read
    /// or written.
    refused: Option<String>,
    /// How long reading it took.
    opened_in: std::time::Duration,
}

/// An entry read and checked.
#[derive(Debug, Clone)]
pub struct Held {
    /// The entry's hex SHA-256, its file's name.
    pub name: String,
    pub entry: Entry,
}

/// A new entry, made by this run, to be written with [`BaseCache::commit`].
#[derive(Debug, Clone)]
pub struct Pending {
    pub name: String,
    bytes: Vec<u8>,
    items: Vec<(String, Vec<u8>)>,
}

impl Pending {
    /// The entry in its canonical bytes, and every item it cites (hex name, bytes).
    pub fn new(entry: &Entry, items: Vec<(String, Vec<u8>)>) -> Result<Pending, CacheError> {
        let bytes = crate::digest::canonical_json(entry)?;
        Ok(Pending {
            name: sha256_hex(&bytes),
            bytes,
            items,
        })
    }
}

/// What [`BaseCache::commit`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Committed {
    /// Whether a new entry was written.
    pub stored: bool,
    /// Files removed that neither an entry read at the start nor this run's had put there.
    pub removed: usize,
}

impl BaseCache {
    /// Reads the cache at `dir` (`repository`: the repository's root, when the command works
    /// on one; `shown`: the directory as reports name it). Never fails: what cannot be read is
    /// a note, and a directory that cannot be used at all is refused (nothing read or written).
    pub fn open(dir: &Path, repository: Option<&Path>, shown: String) -> BaseCache {
        let started = std::time::Instant::now();
        let mut cache = Self::read(dir, repository, shown);
        cache.opened_in = started.elapsed();
        cache
    }

    fn read(dir: &Path, repository: Option<&Path>, shown: String) -> BaseCache {
        let out = OutputPath::dir(dir, repository);
        let mut cache = BaseCache {
            dir: dir.to_path_buf(),
            shown,
            out,
            held: BTreeMap::new(),
            notes: Vec::new(),
            refused: None,
            opened_in: std::time::Duration::ZERO,
        };
        if let Err(r) = check_dirs(&cache.out) {
            cache.refused = Some(format!(
                "the base cache {} is not used: {r}, and nothing is read or written through a symlink",
                cache.shown
            ));
            return cache;
        }
        // Only a directory this tool made is ever tidied: one that holds files and no cache
        // directory tag is someone else's (`--base-cache docs` by mistake), left alone.
        let holds_files = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some());
        if holds_files && !dir.join("CACHEDIR.TAG").is_file() {
            cache.refused = Some(format!(
                "the base cache {} is not used: the directory holds files and no CACHEDIR.TAG, so it is no base cache this tool made (name a new or empty directory)",
                cache.shown
            ));
            return cache;
        }
        let listed = read_listed(&dir.join("v1").join("listed"));
        for (name, read) in read_entries(&cache.entries_dir()) {
            let unlisted = listed.as_ref().is_none_or(|l| !l.contains(&name));
            if unlisted && read.is_ok() {
                cache.notes.push(format!(
                    "base cache entry {} ignored: no run that completed left it there (it appeared while a run was stopped before it could tidy the cache), and it is removed",
                    short(&name)
                ));
                continue;
            }
            match read {
                Ok(entry) => {
                    // Two entries of one key (two runs of the same push): the later one.
                    let later = cache
                        .held
                        .get(&entry.key)
                        .is_none_or(|h| h.entry.made.at <= entry.made.at);
                    if later {
                        cache.held.insert(entry.key.clone(), Held { name, entry });
                    }
                }
                Err(why) if name.starts_with(".shipmoor-tmp-") => {
                    let _ = why;
                }
                Err(why) => cache
                    .notes
                    .push(format!("base cache entry {} ignored: {why}", short(&name))),
            }
        }
        cache
    }

    /// How long [`BaseCache::open`] took.
    pub fn opened_in(&self) -> std::time::Duration {
        self.opened_in
    }

    /// The directory as reports name it.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Why the cache is not used at all, when it is not.
    pub fn refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// What was ignored when the cache was read.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The entry of `key` (hex), when the cache holds one.
    pub fn lookup(&self, key: &str) -> Option<&Held> {
        self.held.get(key)
    }

    /// The entries observed at the base commit `base`, newest first (to say why a key missed).
    pub fn at_base(&self, base: &str) -> Vec<&Held> {
        let mut v: Vec<&Held> = self
            .held
            .values()
            .filter(|h| h.entry.inputs.base == base)
            .collect();
        v.sort_by(|a, b| b.entry.made.at.cmp(&a.entry.made.at));
        v
    }

    /// Every item of `held`, read and checked against its name: `Err` names the first that is
    /// missing or does not hash to its name.
    pub fn read_items(&self, held: &Held) -> Result<Vec<(String, Vec<u8>)>, EntryError> {
        let dir = self.items_dir();
        held.entry
            .items
            .iter()
            .map(|pointer| read_item(&dir, pointer))
            .collect()
    }

    /// Writes `pending` (when there is one) and leaves the directory holding exactly the
    /// entries read at the start, `pending`, and the items they cite: every other file in
    /// `v1/` appeared while the change's code ran, and is removed. Called when nothing the
    /// run started still runs.
    pub fn commit(&self, pending: Option<&Pending>) -> Result<Committed, CacheError> {
        if self.refused.is_some() {
            return Ok(Committed::default());
        }
        let mut done = Committed::default();
        let v1 = self.out.child_dir("v1");
        let entries = v1.child_dir("entries");
        let items = v1.child_dir("sha256");
        let mut keep_entries: BTreeSet<String> =
            self.held.values().map(|h| h.name.clone()).collect();
        let mut keep_items: BTreeSet<String> = self
            .held
            .values()
            .flat_map(|h| h.entry.items.iter())
            .filter_map(|p| crate::evidence::pointer_digest(p).map(str::to_string))
            .collect();
        if let Some(p) = pending {
            let tag = self.out.child_file("CACHEDIR.TAG");
            if std::fs::symlink_metadata(tag.path()).is_err() {
                tag.write(CACHEDIR_TAG.as_bytes())?;
            }
            items.create_dir()?;
            for (hex, bytes) in &p.items {
                let item = items.child_file(hex);
                let there =
                    read_regular(item.path(), ITEM_LIMIT).is_ok_and(|b| sha256_hex(&b) == *hex);
                if !there {
                    item.write(bytes)?;
                }
                keep_items.insert(hex.clone());
            }
            entries.child_file(&p.name).write(&p.bytes)?;
            keep_entries.insert(p.name.clone());
            done.stored = true;
        }
        // What the code under check may have put there since the cache was read.
        done.removed += prune(&entries, &keep_entries)?;
        done.removed += prune(&items, &keep_items)?;
        if let Ok(listing) = std::fs::read_dir(v1.path()) {
            for e in listing.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name != "entries" && name != "sha256" {
                    remove_any(&e.path())?;
                    // The list is written again below, and counts as nothing that appeared.
                    done.removed += usize::from(name != "listed");
                }
            }
        }
        // What a completed run leaves: the next run reads these entries and no others.
        write_listed(&self.out, keep_entries)?;
        Ok(done)
    }

    fn entries_dir(&self) -> PathBuf {
        self.dir.join("v1").join("entries")
    }

    fn items_dir(&self) -> PathBuf {
        self.dir.join("v1").join("sha256")
    }
}

/// The cache's directory and those below it that are read and written (`v1`, `v1/entries`,
/// `v1/sha256`): none a symlink, nor a file where a directory goes. One that does not exist
/// is no refusal.
fn check_dirs(out: &OutputPath) -> Result<(), crate::nofollow::Refused> {
    let v1 = out.child_dir("v1");
    for sub in [
        out.clone(),
        v1.clone(),
        v1.child_dir("entries"),
        v1.child_dir("sha256"),
    ] {
        sub.check()?;
    }
    Ok(())
}

/// Writes `v1/listed` naming `entries` (none: no list, and no `v1/` made for one).
fn write_listed(out: &OutputPath, entries: BTreeSet<String>) -> Result<(), CacheError> {
    let v1 = out.child_dir("v1");
    if entries.is_empty() {
        let path = v1.path().join("listed");
        if std::fs::symlink_metadata(&path).is_ok() {
            remove_any(&path)?;
        }
        return Ok(());
    }
    let listed = Listed {
        schema: LISTED_SCHEMA.to_string(),
        entries: entries.into_iter().collect(),
    };
    let bytes = serde_json::to_vec(&listed).map_err(CacheError::Json)?;
    v1.create_dir()?;
    Ok(v1.child_file("listed").write(&bytes)?)
}

/// The entries `path` (`v1/listed`) names, when it is a list a completed run wrote; `None`
/// when there is none or it cannot be read (then no entry is read).
fn read_listed(path: &Path) -> Option<BTreeSet<String>> {
    let bytes = read_regular(path, ENTRY_LIMIT).ok()?;
    let listed: Listed = serde_json::from_slice(&bytes).ok()?;
    (listed.schema == LISTED_SCHEMA).then(|| listed.entries.into_iter().collect())
}

/// Every file of the entries directory `dir` by name, in name order, each read and checked
/// ([`read_entry`]) or why not. A directory that cannot be listed holds none.
fn read_entries(dir: &Path) -> Vec<(String, Result<Entry, EntryError>)> {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = listing
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| {
            let read = read_entry(dir, &name);
            (name, read)
        })
        .collect()
}

/// The item `pointer` (`sha256:<hex>`) of the items directory `dir`, read and checked against
/// its name: its hex name and bytes, or why not (missing, not a regular file, another hash).
fn read_item(dir: &Path, pointer: &str) -> Result<(String, Vec<u8>), EntryError> {
    let hex = crate::evidence::pointer_digest(pointer)
        .ok_or_else(|| EntryError::Pointer(pointer.to_string()))?;
    let bytes = read_regular(&dir.join(hex), ITEM_LIMIT)
        .map_err(|e| EntryError::ItemRead(hex.to_string(), e))?;
    if sha256_hex(&bytes) != hex {
        return Err(EntryError::ItemHash(hex.to_string()));
    }
    Ok((hex.to_string(), bytes))
}

/// Removes every file of `dir` whose name is not in `keep`; how many.
fn prune(dir: &OutputPath, keep: &BTreeSet<String>) -> Result<usize, CacheError> {
    if dir.check().is_err() || !is_real_dir(dir.path()).unwrap_or(false) {
        return Ok(0);
    }
    let mut removed = 0;
    let Ok(listing) = std::fs::read_dir(dir.path()) else {
        return Ok(0);
    };
    for e in listing.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let regular = e.file_type().is_ok_and(|t| t.is_file());
        if !(regular && keep.contains(&name)) {
            remove_any(&e.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Removes a file, a symlink (never what it points to) or a directory.
fn remove_any(path: &Path) -> Result<(), CacheError> {
    let meta = std::fs::symlink_metadata(path).map_err(CacheError::Stat)?;
    let r = if meta.is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    };
    Ok(r.at("remove", path)?)
}

/// The entry `name` of the directory `dir`, checked: a regular file whose bytes hash to its
/// name, of this release's schema, parsed.
fn read_entry(dir: &Path, name: &str) -> Result<Entry, EntryError> {
    if !is_digest(name) {
        return Err(EntryError::Name);
    }
    let bytes = read_regular(&dir.join(name), ENTRY_LIMIT).map_err(EntryError::Read)?;
    if sha256_hex(&bytes) != name {
        return Err(EntryError::Hash);
    }
    let entry: Entry = serde_json::from_slice(&bytes).map_err(EntryError::Parse)?;
    if entry.schema != ENTRY_SCHEMA {
        return Err(EntryError::Schema(entry.schema));
    }
    if entry.inputs.digest() != entry.key {
        return Err(EntryError::Key);
    }
    Ok(entry)
}

/// The first 12 hex digits of a name, as notes show it.
pub fn short(hex: &str) -> &str {
    &hex[..hex.len().min(12)]
}

#[cfg(test)]
mod tests;
