//! The evidence store: every observation is a record in canonical JSON (RFC 8785), and every
//! log or results file it cites is a blob; both are content-addressed, `sha256/<hex>` under the
//! evidence directory, and cited as `sha256:<hex>` by the reports, the fix packet and the VSA.
//!
//! Records and blobs are staged in memory during a run and written only when the run completes,
//! each file atomically, so a failed or interrupted run leaves no partial evidence.
//!
//! Logs are made reproducible before they are hashed: the run's temporary paths become
//! `$WORKTREE`, `$SCRATCH` and `$TMP`, and the timings runners print (`in 0.03s`, JUnit `time=`,
//! `timestamp=`, `hostname=`), the thread ids of Rust's panic messages, the addresses in
//! Python's default reprs and cargo's notes that it waits for another cargo's lock are masked, so the same inputs give the same evidence
//! pointers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use crate::digest::{canonical_json, sha256_hex, CanonicalError};

use regex::bytes::Regex;

use crate::nofollow::{
    is_real_dir, read_regular, OutputPath, ReadError, Refused, Staged, WriteError,
};
use serde::Serialize;

pub use crate::format::evidence::RECORD_SCHEMA;

/// `sha256:<hex>` of the bytes.
pub fn pointer(bytes: &[u8]) -> String {
    format!("sha256:{}", sha256_hex(bytes))
}

/// In-memory staging of records and blobs for one run.
#[derive(Debug, Default, Clone)]
pub struct EvidenceStore {
    items: BTreeMap<String, Vec<u8>>,
    records: Vec<String>,
}

impl EvidenceStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores a blob and returns its pointer.
    pub fn put_blob(&mut self, bytes: Vec<u8>) -> String {
        let hex = sha256_hex(&bytes);
        self.items.entry(hex.clone()).or_insert(bytes);
        format!("sha256:{hex}")
    }

    /// Stores a record (canonical JSON) and returns its pointer.
    pub fn put_record<T: Serialize>(&mut self, record: &T) -> Result<String, CanonicalError> {
        let bytes = canonical_json(record)?;
        let p = self.put_blob(bytes);
        if !self.records.contains(&p) {
            self.records.push(p.clone());
        }
        Ok(p)
    }

    pub fn get(&self, pointer: &str) -> Option<&[u8]> {
        let hex = pointer.strip_prefix("sha256:")?;
        self.items.get(hex).map(|v| v.as_slice())
    }

    /// Pointers of every record, in the order first stored.
    pub fn records(&self) -> &[String] {
        &self.records
    }

    /// A record already in its canonical bytes (a shard's, as `fuse` merges them): stored, and
    /// listed after the records before it.
    pub fn put_record_bytes(&mut self, bytes: Vec<u8>) -> String {
        let p = self.put_blob(bytes);
        if !self.records.contains(&p) {
            self.records.push(p.clone());
        }
        p
    }

    /// The hex SHA-256 of every item (its file's name in the store), in order.
    pub fn digests(&self) -> impl Iterator<Item = &str> {
        self.items.keys().map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Writes every item to `<dir>/sha256/<hex>` (atomically; existing items are left alone),
    /// after [`check_store`] finds nothing in the way: no item is written if any is refused.
    pub fn commit(&self, dir: &OutputPath) -> Result<(), WriteError> {
        for staged in self.stage(dir, &mut || false)?.unwrap_or_default() {
            staged.commit()?;
        }
        Ok(())
    }

    /// Every item not yet in the store at `dir`, staged beside its place (written and synced,
    /// not yet renamed; dropping a [`Staged`] removes it), after [`check_store`] finds nothing
    /// in the way. `stop` is asked before each item: when it says so, what was staged is
    /// removed and `None` returned, so that an interrupted write stops at once and leaves
    /// nothing.
    pub fn stage(
        &self,
        dir: &OutputPath,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<Option<Vec<Staged>>, WriteError> {
        check_store(dir).map_err(WriteError::Refused)?;
        let sub = dir.child_dir("sha256");
        sub.create_dir()?;
        let mut staged = Vec::new();
        for (hex, bytes) in &self.items {
            if stop() {
                return Ok(None);
            }
            let item = sub.child_file(hex);
            // An item already there is a regular file ([`check_store`]) with these bytes, as
            // its name says.
            if std::fs::symlink_metadata(item.path()).is_ok() {
                continue;
            }
            staged.push(item.stage(bytes)?);
        }
        Ok(Some(staged))
    }
}

/// The evidence store at `dir` can be written: neither it nor its `sha256` directory is a
/// symlink (or a file), nor any directory on the way to it ([`OutputPath::check`]), and every
/// item in it is a regular file, since an item is never rewritten and a symlink there would
/// stand for evidence it is not.
pub fn check_store(dir: &OutputPath) -> Result<(), Refused> {
    dir.check()?;
    let sub = dir.child_dir("sha256");
    sub.check()?;
    let Ok(entries) = std::fs::read_dir(sub.path()) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let regular = entry.file_type().is_ok_and(|t| t.is_file());
        if !regular {
            sub.child_file(&entry.file_name().to_string_lossy())
                .check()?;
        }
    }
    Ok(())
}

/// The largest item read back from a store (by `replay`, `evidence gc` and `fuse`): 1 GiB.
/// The store has no limit of its own: a log is stored whole, as the run held it in memory,
/// and a run's logs are megabytes. An item past a gigabyte is no log a run wrote; it is
/// refused rather than read into memory.
pub const ITEM_LIMIT: u64 = 1 << 30;

/// Whether `hex` is an evidence name: exactly 64 lowercase hex digits, the only names the
/// store gives its items, so that a name from an attestation or a shard is never a path
/// (`../`, `/dev/zero`) before it is joined to the store's directory.
pub fn is_digest(hex: &str) -> bool {
    hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The name of the item a pointer (`sha256:<hex>`) cites, when it is one ([`is_digest`]).
pub fn pointer_digest(pointer: &str) -> Option<&str> {
    pointer.strip_prefix("sha256:").filter(|h| is_digest(h))
}

/// Why an item of a store was not read.
#[derive(Debug)]
pub enum ItemError {
    /// The name is not 64 lowercase hex digits.
    NotAName(String),
    /// The store's `sha256` directory is a symlink or a file.
    Store(PathBuf, ReadError),
    Item(ReadError),
}

impl ItemError {
    pub fn is_missing(&self) -> bool {
        matches!(self, ItemError::Item(ReadError::Missing(_)))
    }
}

impl std::fmt::Display for ItemError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ItemError::NotAName(name) => write!(
                f,
                "`{name}` is not an evidence name (64 lowercase hex digits)"
            ),
            ItemError::Store(dir, e) => write!(f, "{} {e}", dir.display()),
            ItemError::Item(e) => write!(f, "{e}"),
        }
    }
}

/// A store read back: its items are regular files in its `sha256` directory, which is no
/// symlink, each read with [`read_regular`] up to [`ITEM_LIMIT`].
#[derive(Debug, Clone)]
pub struct StoreReader {
    items: PathBuf,
}

impl StoreReader {
    /// The store at `dir` (as the user named it); its `sha256` directory may be missing (every
    /// read then says the item is).
    pub fn open(dir: &Path) -> Result<StoreReader, ItemError> {
        let items = dir.join("sha256");
        is_real_dir(&items).map_err(|e| ItemError::Store(items.clone(), e))?;
        Ok(StoreReader { items })
    }

    /// The bytes of the item named `hex` ([`is_digest`]).
    pub fn read(&self, hex: &str) -> Result<Vec<u8>, ItemError> {
        if !is_digest(hex) {
            return Err(ItemError::NotAName(hex.to_string()));
        }
        read_regular(&self.items.join(hex), ITEM_LIMIT).map_err(ItemError::Item)
    }
}

/// Replaces run-specific paths and timings in captured output (see the module doc).
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    replacements: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Normalizer {
    /// `paths` pairs each temporary directory with its placeholder; longer paths are replaced
    /// first so that a worktree inside the temporary root keeps its own name.
    pub fn new(paths: &[(PathBuf, &str)]) -> Self {
        let mut replacements: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for (p, name) in paths {
            let s = p.display().to_string();
            replacements.push((s.clone().into_bytes(), name.as_bytes().to_vec()));
            // The same directory reached through symlinks (macOS /private/tmp, say).
            if let Ok(c) = std::fs::canonicalize(p) {
                let c = c.display().to_string();
                if c != s {
                    replacements.push((c.into_bytes(), name.as_bytes().to_vec()));
                }
            }
        }
        replacements.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        Normalizer { replacements }
    }

    /// Also replaces each value of `masks` (`(NAME, value)`: a variable the commands did not
    /// get, see [`crate::sandbox::env::EnvPolicy::withheld_values`]) with `[withheld NAME]`, wherever it
    /// still shows up in what they printed.
    pub fn masking(mut self, masks: &[(String, String)]) -> Self {
        for (name, value) in masks {
            self.replacements.push((
                value.clone().into_bytes(),
                format!("[withheld {name}]").into_bytes(),
            ));
        }
        self.replacements
            .sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
        self
    }

    pub fn apply(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for (from, to) in &self.replacements {
            if !from.is_empty() {
                out = replace_all(&out, from, to);
            }
        }
        for (re, with) in timing_patterns() {
            out = re.replace_all(&out, with.as_slice()).into_owned();
        }
        out
    }

    /// [`Normalizer::apply`] on a text a runner printed and a report quotes (a failure's
    /// message): a thread id or a time in it is new on every run.
    pub fn apply_text(&self, s: &str) -> String {
        String::from_utf8_lossy(&self.apply(s.as_bytes())).into_owned()
    }

    /// The same replacements on a string (commands shown in reports).
    pub fn apply_str(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (from, to) in &self.replacements {
            if let (Ok(f), Ok(t)) = (std::str::from_utf8(from), std::str::from_utf8(to)) {
                if !f.is_empty() {
                    out = out.replace(f, t);
                }
            }
        }
        out
    }
}

fn replace_all(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

fn timing_patterns() -> &'static [(Regex, Vec<u8>)] {
    static PATTERNS: OnceLock<Vec<(Regex, Vec<u8>)>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        let p = |re: &str, with: &str| Regex::new(re).ok().map(|r| (r, with.as_bytes().to_vec()));
        [
            // pytest `1 passed in 0.03s`, libtest `finished in 0.00s`, cargo `target(s) in 1.2s`,
            // nextest `[   0.004s]` and `0.012s`, go `ok  pkg 0.01s`.
            p(r"\bin [0-9]+(\.[0-9]+)?m?s\b", "in <t>"),
            p(r"\[ *[0-9]+\.[0-9]+s\]", "[<t>]"),
            p(r#"\b(time|timestamp|hostname)="[^"]*""#, r#"$1="<t>""#),
            p(r"\b[0-9]+\.[0-9]{2,}s\b", "<t>"),
            // `go test -json` events: the wall-clock `Time` of each and the `Elapsed` seconds
            // (kept a JSON number, so the stored log stays valid JSON lines).
            p(r#""Time":"[^"]*""#, r#""Time":"<t>""#),
            p(r#""Elapsed":[0-9]+(\.[0-9]+)?"#, r#""Elapsed":0"#),
            // Their `Output` escapes go's `ok  \tpkg\t0.002s`: no word boundary before the time.
            p(r"(\\t)[0-9]+\.[0-9]+s\b", "${1}<t>"),
            // Rust's panic message names the OS thread id (`thread 'works' (14145) panicked`),
            // new on every run.
            p(
                r"(thread '[^'\n]*') \([0-9]+\) panicked",
                "$1 (<tid>) panicked",
            ),
            // The same inside a JUnit XML attribute or text, its quotes escaped.
            p(
                r"(thread &apos;[^&\n]*&apos;) \([0-9]+\) panicked",
                "$1 (<tid>) panicked",
            ),
            // nextest's run id, new on every run: in its log and on its JUnit report.
            p(
                r#"(Nextest run ID |uuid=")[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"#,
                "${1}<uuid>",
            ),
            // Python's default repr names the object's address (`<list_iterator object at
            // 0x7ff43c580880>`, `<function f at 0x7f…>`), new on every run (ASLR): pytest's
            // assertion rewriting prints it in every failure that mentions such an object.
            // The same in a JUnit XML attribute (`&gt;`); the mask has no markup of its own.
            p(r"\bat 0x[0-9a-fA-F]{4,}(>|&gt;)", "at 0xADDR$1"),
            // cargo waiting for another cargo on the same machine (shards run side by side, or
            // any build beside the run): a note about the machine, not about the change.
            p(r"(?m)^ *Blocking waiting for file lock on [^\n]*\n", ""),
        ]
        .into_iter()
        .flatten()
        .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_are_sha256_of_the_bytes() {
        assert_eq!(
            pointer(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn records_are_canonical_json() {
        #[derive(Serialize)]
        struct R {
            z: u32,
            a: &'static str,
        }
        let bytes = canonical_json(&R { z: 1, a: "é\n" }).unwrap();
        assert_eq!(bytes, "{\"a\":\"é\\n\",\"z\":1}".as_bytes());
    }

    #[test]
    fn store_dedups_and_commits_atomically() {
        let mut s = EvidenceStore::new();
        let a = s.put_blob(b"x".to_vec());
        let b = s.put_blob(b"x".to_vec());
        assert_eq!(a, b);
        let r = s.put_record(&serde_json::json!({"k": 1})).unwrap();
        assert_eq!(s.records(), std::slice::from_ref(&r));
        let dir = tempfile::tempdir().unwrap();
        s.commit(&OutputPath::dir(dir.path(), None)).unwrap();
        let hex = r.strip_prefix("sha256:").unwrap();
        let back = std::fs::read(dir.path().join("sha256").join(hex)).unwrap();
        assert_eq!(pointer(&back), r);
        let names: Vec<_> = std::fs::read_dir(dir.path().join("sha256"))
            .unwrap()
            .collect();
        assert_eq!(names.len(), 2);
    }

    #[test]
    fn normalizer_masks_the_times_of_go_test_json_events() {
        let n = Normalizer::new(&[]);
        let out = n.apply(
            br#"{"Time":"2026-12-01T10:11:12.345678901Z","Action":"pass","Package":"m","Test":"TestA","Elapsed":0.013}
{"Time":"2026-12-01T10:11:12.4Z","Action":"output","Package":"m","Output":"ok  \tm\t0.002s\n"}"#,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#"{"Time":"<t>","Action":"pass","Package":"m","Test":"TestA","Elapsed":0}
{"Time":"<t>","Action":"output","Package":"m","Output":"ok  \tm\t<t>\n"}"#
        );
    }

    #[test]
    fn normalizer_drops_cargos_notes_that_it_waits_for_a_lock() {
        let n = Normalizer::new(&[]);
        let out = n.apply(b"    Blocking waiting for file lock on package cache\n    Blocking waiting for file lock on build directory\n   Compiling calc v0.1.0\n");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "   Compiling calc v0.1.0\n"
        );
    }

    #[test]
    fn normalizer_masks_the_address_in_a_python_repr() {
        let n = Normalizer::new(&[]);
        let got = n.apply(
            b"E  +  where 4 = ilen(<list_iterator object at 0x7ff43c580880>)\nE  at 0x1f is kept\n\
              <failure message=\"ilen(&lt;list_iterator object at 0x7f2a07a0b280&gt;)\"/>\n",
        );
        assert_eq!(
            String::from_utf8(got).unwrap(),
            "E  +  where 4 = ilen(<list_iterator object at 0xADDR>)\nE  at 0x1f is kept\n\
             <failure message=\"ilen(&lt;list_iterator object at 0xADDR&gt;)\"/>\n"
        );
    }

    #[test]
    fn normalizer_masks_the_thread_id_of_a_rust_panic() {
        let n = Normalizer::new(&[]);
        let out = n.apply(
            b"thread 'works' (14145) panicked at tests/a.rs:3:5:\nthread 'main' panicked at x",
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "thread 'works' (<tid>) panicked at tests/a.rs:3:5:\nthread 'main' panicked at x"
        );
    }

    #[test]
    fn normalizer_masks_paths_and_timings() {
        let n = Normalizer::new(&[
            (PathBuf::from("/tmp/shipmoor-x"), "$TMP"),
            (PathBuf::from("/tmp/shipmoor-x/head"), "$WORKTREE"),
        ]);
        let out = n.apply(
            b"Compiling a v0.1.0 (/tmp/shipmoor-x/head)\n1 passed in 0.03s\n<testsuite time=\"0.1\" timestamp=\"2026\">\n/tmp/shipmoor-x/scratch",
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Compiling a v0.1.0 ($WORKTREE)\n1 passed in <t>\n<testsuite time=\"<t>\" timestamp=\"<t>\">\n$TMP/scratch"
        );
    }
}
