//! The base cache tidied by `shipmoor evidence gc` (book: floor/base-cache.md): first the
//! entries no run can reuse, then the oldest entries beyond a count and a size, then every item
//! no kept entry cites and whatever else is in `v1/`. Nothing outside `DIR/v1` is touched (the
//! `CACHEDIR.TAG` stays), and nothing is read or removed through a symlink: a cache directory
//! that is one, or has one where `v1`, `v1/entries` or `v1/sha256` go, is refused.
//!
//! An entry no run can reuse: one no completed run listed (`v1/listed`); one that does not
//! check out as [`BaseCache::open`] reads it (its name, its schema, its key); one another shipmoor release made or keyed (the key covers
//! the release, so it never hits); one with an item missing or not hashing to its name (a hit
//! on it would fail); one a later entry of the same key hides (the later one is found).
//!
//! [`BaseCache::open`]: super::BaseCache::open

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::path::Path;

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::key::OBSERVATION_VERSION;
use super::{
    check_dirs, read_entries, read_item, read_listed, remove_any, short, write_listed, CacheError,
    Entry, EntryError,
};
use crate::evidence::is_digest;
use crate::nofollow::{is_real_dir, OutputPath, Refused};

/// How much the cache keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The most entries (`--cache-keep`).
    pub keep: usize,
    /// The most bytes of entries and the items they cite, each item once (`--cache-max-size`).
    pub max_size: Size,
}

/// A size as it was written (`1G`), with its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Size {
    bytes: u64,
    shown: String,
}

impl Size {
    /// A number of bytes, or of `K`, `M` or `G` (powers of 1024, either case): `500M`.
    pub fn parse(s: &str) -> Result<Size, SizeError> {
        let t = s.trim();
        let (digits, shift) = match t.as_bytes().last().map(u8::to_ascii_uppercase) {
            Some(b'K') => (&t[..t.len() - 1], 10),
            Some(b'M') => (&t[..t.len() - 1], 20),
            Some(b'G') => (&t[..t.len() - 1], 30),
            _ => (t, 0),
        };
        let bad = || SizeError(s.to_string());
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let n: u64 = digits.parse().map_err(|_| bad())?;
        let bytes = n.checked_mul(1u64 << shift).ok_or_else(bad)?;
        Ok(Size {
            bytes,
            shown: t.to_string(),
        })
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// A `--cache-max-size` that is no size (the text as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a size: a number of bytes, or of K, M or G (powers of 1024), e.g. 500M or 2G"
)]
pub struct SizeError(String);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

/// Why an entry goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// It does not check out: its name, its schema, its key.
    Unreadable(String),
    /// No run that completed listed it: it appeared while a run was stopped.
    Unlisted,
    /// Another release made it (`made.by`).
    MadeBy(String),
    /// Its key names another release (`inputs.shipmoor`).
    KeyedFor(String),
    /// Its key names another observation version.
    Observation(u32),
    /// An item of it is missing or does not hash to its name.
    Items(String),
    /// The later entry of the same key (its name), which a run finds instead.
    Superseded(String),
    /// Older than the newest `--cache-keep` entries.
    OverKeep(usize),
    /// Among the oldest, until the rest fits `--cache-max-size`.
    OverSize(Size),
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Why::Unreadable(w) => write!(f, "it does not check out: {w}"),
            Why::Unlisted => f.write_str("no run that completed listed it"),
            Why::MadeBy(v) => write!(f, "made by shipmoor {v}"),
            Why::KeyedFor(v) => write!(f, "keyed for shipmoor {v}"),
            Why::Observation(n) => write!(
                f,
                "of observation version {n}, not this release's {OBSERVATION_VERSION}"
            ),
            Why::Items(w) => f.write_str(w),
            Why::Superseded(name) => write!(
                f,
                "superseded by entry sha256:{} of the same key",
                short(name)
            ),
            Why::OverKeep(n) => write!(f, "over --cache-keep {n}"),
            Why::OverSize(s) => write!(f, "over --cache-max-size {s}"),
        }
    }
}

/// An entry that goes: its file's name, why, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gone {
    pub name: String,
    pub why: Why,
    pub bytes: u64,
}

impl Gone {
    /// The entry as reports name it: `entry sha256:<12 hex>`, or its file's name when that is
    /// no entry name.
    pub fn label(&self) -> String {
        if is_digest(&self.name) {
            format!("entry sha256:{}", short(&self.name))
        } else {
            format!("entry `{}`", self.name)
        }
    }
}

/// What gc does to one cache: worked out by [`Sweep::plan`], which removes nothing, and done
/// by [`Sweep::apply`].
#[derive(Debug)]
pub struct Sweep {
    out: OutputPath,
    /// The entries that stay, by name, oldest first.
    pub kept: Vec<String>,
    /// The bytes of the kept entries and the items they cite, each item once.
    pub kept_bytes: u64,
    /// The entries that go, in the order gc decided, each with why.
    pub entries: Vec<Gone>,
    /// The files of `v1/sha256` that go (no kept entry cites them, or they are no regular
    /// file), by name, with their bytes.
    pub items: Vec<(String, u64)>,
    /// How many files `v1/sha256` holds.
    pub items_total: usize,
    /// Whatever else is in `v1/` (neither `entries` nor `sha256`), by name, with its bytes.
    pub stray: Vec<(String, u64)>,
}

/// An entry that checked out, with what it takes.
struct Candidate {
    name: String,
    entry: Entry,
    bytes: u64,
    /// The hex names of its items.
    items: Vec<String>,
}

impl Sweep {
    /// What gc would remove from the cache at `dir` under `limits` (`repository`: the root of
    /// the repository the command works in, when there is one). `None`: there is no such
    /// directory. `Err`: the directory, or one below it gc reads, is a symlink or a file.
    pub fn plan(
        dir: &Path,
        repository: Option<&Path>,
        limits: &Limits,
    ) -> Result<Option<Sweep>, Refused> {
        let out = OutputPath::dir(dir, repository);
        check_dirs(&out)?;
        // A directory without the cache directory tag is no base cache this tool made: gc
        // never removes anything from it.
        if !is_real_dir(out.path()).unwrap_or(false) || !out.path().join("CACHEDIR.TAG").is_file() {
            return Ok(None);
        }
        let v1 = out.path().join("v1");
        let items_dir = v1.join("sha256");
        // Each item read and checked once, however many entries cite it: its bytes.
        let mut sizes: BTreeMap<String, u64> = BTreeMap::new();
        let (mut gone, good) = read_candidates(&v1, &mut sizes);
        // Of two entries of one key, a run finds the later (by `made.at`, then by name), as
        // `BaseCache::open` picks it.
        let mut found: BTreeMap<String, usize> = BTreeMap::new();
        for (i, c) in good.iter().enumerate() {
            let later = found
                .get(&c.entry.key)
                .is_none_or(|&j| good[j].entry.made.at <= c.entry.made.at);
            if later {
                found.insert(c.entry.key.clone(), i);
            }
        }
        let winners: BTreeMap<String, String> = found
            .iter()
            .map(|(key, &j)| (key.clone(), good[j].name.clone()))
            .collect();
        let mut left: Vec<Candidate> = Vec::new();
        for (i, c) in good.into_iter().enumerate() {
            match found.get(&c.entry.key) {
                Some(&j) if j != i => gone.push(Gone {
                    why: Why::Superseded(winners[&c.entry.key].clone()),
                    name: c.name,
                    bytes: c.bytes,
                }),
                _ => left.push(c),
            }
        }
        // Oldest first: by `made.at`, then by name.
        left.sort_by(|a, b| (made_at(&a.entry), &a.name).cmp(&(made_at(&b.entry), &b.name)));
        let mut left: VecDeque<Candidate> = left.into();
        while left.len() > limits.keep {
            let c = left.pop_front().expect("more than keep");
            gone.push(Gone {
                name: c.name,
                why: Why::OverKeep(limits.keep),
                bytes: c.bytes,
            });
        }
        let mut cites: BTreeMap<String, usize> = BTreeMap::new();
        for c in &left {
            for hex in &c.items {
                *cites.entry(hex.clone()).or_default() += 1;
            }
        }
        let mut total: u64 = left.iter().map(|c| c.bytes).sum::<u64>()
            + cites
                .keys()
                .map(|h| sizes.get(h).copied().unwrap_or(0))
                .sum::<u64>();
        let mut over: Vec<Candidate> = Vec::new();
        while total > limits.max_size.bytes() {
            let Some(c) = left.pop_front() else { break };
            total -= c.bytes;
            for hex in &c.items {
                if let Some(n) = cites.get_mut(hex) {
                    *n -= 1;
                    if *n == 0 {
                        cites.remove(hex);
                        total -= sizes.get(hex).copied().unwrap_or(0);
                    }
                }
            }
            over.push(c);
        }
        let kept_items: BTreeSet<String> = cites.into_keys().collect();
        for c in over {
            gone.push(Gone {
                name: c.name,
                why: Why::OverSize(limits.max_size.clone()),
                bytes: c.bytes,
            });
        }
        let mut items = Vec::new();
        let mut items_total = 0;
        for (name, regular) in listing(&items_dir) {
            items_total += 1;
            if !(regular && kept_items.contains(&name)) {
                let bytes = size_of(&items_dir.join(&name));
                items.push((name, bytes));
            }
        }
        let stray = listing(&v1)
            .into_iter()
            .filter(|(name, _)| name != "entries" && name != "sha256" && name != "listed")
            .map(|(name, _)| {
                let bytes = size_of(&v1.join(&name));
                (name, bytes)
            })
            .collect();
        Ok(Some(Sweep {
            out,
            kept: left.into_iter().map(|c| c.name).collect(),
            kept_bytes: total,
            entries: gone,
            items,
            items_total,
            stray,
        }))
    }

    /// Removes what [`Sweep::plan`] found, after checking the directories again; a file that
    /// is gone already is no error.
    pub fn apply(&self) -> Result<(), CacheError> {
        check_dirs(&self.out).map_err(CacheError::Refused)?;
        let v1 = self.out.path().join("v1");
        let entries = v1.join("entries");
        let items = v1.join("sha256");
        let paths = self
            .entries
            .iter()
            .map(|g| entries.join(&g.name))
            .chain(self.items.iter().map(|(n, _)| items.join(n)))
            .chain(self.stray.iter().map(|(n, _)| v1.join(n)));
        for path in paths {
            if std::fs::symlink_metadata(&path).is_ok() {
                remove_any(&path)?;
            }
        }
        // The list names what is left, for the next run to read.
        write_listed(&self.out, self.kept.iter().cloned().collect())
    }

    /// The cache's directory, as given.
    pub fn dir(&self) -> &Path {
        self.out.path()
    }

    /// The bytes that go: the entries, the items, whatever else.
    pub fn freed(&self) -> u64 {
        self.entries.iter().map(|g| g.bytes).sum::<u64>()
            + self.items.iter().map(|(_, b)| b).sum::<u64>()
            + self.stray.iter().map(|(_, b)| b).sum::<u64>()
    }
}

/// Every entry of the cache's `v1`, read and checked: those that go (unlisted, unreadable,
/// another release's or observation version's, an item missing or not hashing to its name),
/// each with why, and those that checked out, in name order. `sizes` gets the bytes of each
/// item read.
fn read_candidates(v1: &Path, sizes: &mut BTreeMap<String, u64>) -> (Vec<Gone>, Vec<Candidate>) {
    let version = env!("CARGO_PKG_VERSION");
    let entries_dir = v1.join("entries");
    let items_dir = v1.join("sha256");
    let mut gone = Vec::new();
    let mut good: Vec<Candidate> = Vec::new();
    let listed = read_listed(&v1.join("listed"));
    for (name, read) in read_entries(&entries_dir) {
        let bytes = size_of(&entries_dir.join(&name));
        if listed.as_ref().is_none_or(|l| !l.contains(&name)) {
            gone.push(Gone {
                name,
                why: Why::Unlisted,
                bytes,
            });
            continue;
        }
        let entry = match read {
            Ok(entry) => entry,
            Err(w) => {
                gone.push(Gone {
                    name,
                    why: Why::Unreadable(w.to_string()),
                    bytes,
                });
                continue;
            }
        };
        let why = if entry.made.by != version {
            Some(Why::MadeBy(entry.made.by.clone()))
        } else if entry.inputs.shipmoor != version {
            Some(Why::KeyedFor(entry.inputs.shipmoor.clone()))
        } else if entry.inputs.observation != OBSERVATION_VERSION {
            Some(Why::Observation(entry.inputs.observation))
        } else {
            check_items(&items_dir, &entry, sizes)
                .err()
                .map(|e| Why::Items(e.to_string()))
        };
        match why {
            Some(why) => gone.push(Gone { name, why, bytes }),
            None => {
                let items = entry
                    .items
                    .iter()
                    .filter_map(|p| crate::evidence::pointer_digest(p).map(str::to_string))
                    .collect();
                good.push(Candidate {
                    name,
                    entry,
                    bytes,
                    items,
                });
            }
        }
    }
    (gone, good)
}

/// Every item of `entry` read and checked against its name, each at most once (`sizes` holds
/// those already read, with their bytes); `Err` names the first that is missing or does not
/// hash to its name.
fn check_items(
    dir: &Path,
    entry: &Entry,
    sizes: &mut BTreeMap<String, u64>,
) -> Result<(), EntryError> {
    for pointer in &entry.items {
        if crate::evidence::pointer_digest(pointer).is_some_and(|h| sizes.contains_key(h)) {
            continue;
        }
        let (hex, bytes) = read_item(dir, pointer)?;
        sizes.insert(hex, bytes.len() as u64);
    }
    Ok(())
}

/// When an entry was made, for the order oldest first; one whose time does not parse comes
/// first.
fn made_at(entry: &Entry) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(&entry.made.at, &Rfc3339).ok()
}

/// The names in `dir`, in name order, each with whether it is a regular file (a symlink is
/// not). A directory that cannot be listed holds none.
fn listing(dir: &Path) -> Vec<(String, bool)> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<(String, bool)> = read
        .flatten()
        .map(|e| {
            let regular = e.file_type().is_ok_and(|t| t.is_file());
            (e.file_name().to_string_lossy().into_owned(), regular)
        })
        .collect();
    v.sort();
    v
}

/// The bytes of a file, or of everything under a directory, never through a symlink (a
/// symlink counts as its own length).
fn size_of(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|d| d.flatten().map(|e| size_of(&e.path())).sum())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
