use super::key::{FileDigest, RunnerInputs};
use super::*;

fn inputs(base: &str, runs: u32) -> KeyInputs {
    KeyInputs {
        shipmoor: "1.0.0".into(),
        observation: key::OBSERVATION_VERSION,
        base: base.into(),
        runs,
        timeout_seconds: 1800,
        environment: vec![],
        runners: vec![RunnerInputs {
            kind: "pytest".into(),
            root: ".".into(),
            args: vec![],
            setup: None,
            command: None,
            env_pass: vec![],
            toolchain: vec!["pytest 8.3.3, Python 3.11.2 at /usr/bin/python3".into()],
            tests: vec![(
                "tests/test_a.py::test_a".into(),
                Some("tests/test_a.py".into()),
            )],
            together: vec![],
        }],
        laid_over: vec![FileDigest {
            path: "tests/test_a.py".into(),
            sha256: "1".repeat(64),
        }],
        spliced: vec![],
        deleted: vec![],
        lock_files: vec![],
        sandbox: String::new(),
    }
}

/// An entry of `inputs` citing one record and one blob, with its items.
fn entry(inputs: KeyInputs, at: &str) -> (Entry, Vec<(String, Vec<u8>)>) {
    let blob = b"1 failed".to_vec();
    let record = format!(r#"{{"stdout":"sha256:{}"}}"#, sha256_hex(&blob)).into_bytes();
    let (rp, bp) = (
        format!("sha256:{}", sha256_hex(&record)),
        format!("sha256:{}", sha256_hex(&blob)),
    );
    let e = Entry {
        schema: ENTRY_SCHEMA.into(),
        key: inputs.digest(),
        inputs,
        made: Made {
            head: "b".repeat(40),
            at: at.into(),
            by: "1.0.0".into(),
        },
        observed: vec![],
        rewritten: vec![],
        records: vec![rp.clone()],
        items: vec![bp, rp],
        summary: "1 failed".into(),
    };
    let items = vec![(sha256_hex(&blob), blob), (sha256_hex(&record), record)];
    (e, items)
}

fn stored(dir: &Path, e: &Entry, items: Vec<(String, Vec<u8>)>) -> String {
    let cache = BaseCache::open(dir, None, "cache".into());
    let p = Pending::new(e, items).unwrap();
    let done = cache.commit(Some(&p)).unwrap();
    assert!(done.stored);
    p.name
}

#[test]
fn an_entry_written_is_read_back_by_its_key_with_its_items() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("cache");
    let (e, items) = entry(inputs(&"a".repeat(40), 1), "2026-12-01T10:00:00Z");
    let name = stored(&dir, &e, items.clone());
    assert!(dir.join("CACHEDIR.TAG").is_file());
    let cache = BaseCache::open(&dir, None, "cache".into());
    assert!(cache.notes().is_empty(), "{:?}", cache.notes());
    let held = cache.lookup(&e.key).expect("a hit");
    assert_eq!(held.name, name);
    assert_eq!(held.entry, e);
    let mut read = cache.read_items(held).unwrap();
    read.sort();
    let mut want = items;
    want.sort();
    assert_eq!(read, want);
    // Another key misses.
    assert!(cache.lookup(&inputs(&"a".repeat(40), 2).digest()).is_none());
}

#[test]
fn a_tampered_entry_or_item_is_ignored_with_a_note() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("cache");
    let (e, items) = entry(inputs(&"a".repeat(40), 1), "2026-12-01T10:00:00Z");
    let name = stored(&dir, &e, items.clone());
    // An item whose bytes no longer hash to its name: the entry is found, its items are not.
    let item = dir.join("v1/sha256").join(&items[0].0);
    std::fs::write(&item, b"0 failed").unwrap();
    let cache = BaseCache::open(&dir, None, "cache".into());
    let e2 = cache.read_items(cache.lookup(&e.key).unwrap()).unwrap_err();
    assert!(e2.to_string().contains("does not hash to its name"), "{e2}");
    // The entry itself rewritten: ignored when read, with a note naming it.
    std::fs::write(dir.join("v1/entries").join(&name), b"{}").unwrap();
    let cache = BaseCache::open(&dir, None, "cache".into());
    assert!(cache.lookup(&e.key).is_none());
    assert_eq!(cache.notes().len(), 1, "{:?}", cache.notes());
    assert!(
        cache.notes()[0].contains("do not hash to its name"),
        "{:?}",
        cache.notes()
    );
}

#[test]
fn an_entry_whose_key_is_not_its_inputs_is_ignored() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("cache");
    let (mut e, items) = entry(inputs(&"a".repeat(40), 1), "2026-12-01T10:00:00Z");
    // A forged key: the entry claims another key than its inputs give.
    e.key = inputs(&"a".repeat(40), 2).digest();
    stored(&dir, &e, items);
    let cache = BaseCache::open(&dir, None, "cache".into());
    assert!(cache.lookup(&e.key).is_none());
    assert!(cache.notes()[0].contains("not the digest of its inputs"));
}

#[test]
fn files_that_appear_during_a_run_are_removed_when_it_commits() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("cache");
    let (e, items) = entry(inputs(&"a".repeat(40), 1), "2026-12-01T10:00:00Z");
    stored(&dir, &e, items);
    // Read before the change's code runs...
    let cache = BaseCache::open(&dir, None, "cache".into());
    // ...which then forges a well-formed entry of its own, and leaves other files.
    let (forged, forged_items) = entry(inputs(&"a".repeat(40), 3), "2026-12-01T11:00:00Z");
    let p = Pending::new(&forged, forged_items).unwrap();
    BaseCache::open(&dir, None, "cache".into())
        .commit(Some(&p))
        .unwrap();
    std::fs::write(dir.join("v1/stray"), b"x").unwrap();
    std::fs::create_dir_all(dir.join("v1/sha256/sub")).unwrap();
    let done = cache.commit(None).unwrap();
    assert!(!done.stored);
    // The forged entry, the stray file and the directory (its items are the same bytes as
    // the real entry's, so they stay).
    assert_eq!(done.removed, 3, "{done:?}");
    let after = BaseCache::open(&dir, None, "cache".into());
    assert!(
        after.lookup(&forged.key).is_none(),
        "the forged entry is gone"
    );
    assert!(
        after.lookup(&e.key).is_some(),
        "the entry read at the start stays"
    );
    assert!(!dir.join("v1/stray").exists());
    assert!(after.read_items(after.lookup(&e.key).unwrap()).is_ok());
}

#[test]
fn a_symlinked_cache_is_neither_read_nor_written() {
    let t = tempfile::tempdir().unwrap();
    let elsewhere = t.path().join("elsewhere");
    let (e, items) = entry(inputs(&"a".repeat(40), 1), "2026-12-01T10:00:00Z");
    stored(&elsewhere, &e, items.clone());
    let repo = t.path().join("repo");
    std::fs::create_dir_all(repo.join(".shipmoor")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join(".shipmoor/cache")).unwrap();
    let cache = BaseCache::open(
        &repo.join(".shipmoor/cache"),
        Some(&repo),
        ".shipmoor/cache".into(),
    );
    let why = cache.refused().expect("refused");
    assert!(why.contains("symlink"), "{why}");
    assert!(cache.lookup(&e.key).is_none());
    let (e2, items2) = entry(inputs(&"a".repeat(40), 2), "2026-12-01T10:00:00Z");
    let p = Pending::new(&e2, items2).unwrap();
    assert_eq!(cache.commit(Some(&p)).unwrap(), Committed::default());
    let entries = std::fs::read_dir(elsewhere.join("v1/entries"))
        .unwrap()
        .count();
    assert_eq!(entries, 1, "nothing written through the link");
}

#[test]
fn a_miss_says_what_differs_from_the_last_entry() {
    let a = inputs(&"a".repeat(40), 1);
    let mut b = a.clone();
    b.runs = 2;
    b.laid_over[0].sha256 = "2".repeat(64);
    b.runners[0].args = vec!["-x".into()];
    let d = b.differences(&a);
    assert_eq!(
        d,
        vec![
            "--runs (1 then, 2 now)".to_string(),
            "the pytest runner (its settings)".to_string(),
            "the files laid over base (tests/test_a.py)".to_string(),
        ]
    );
    assert!(a.differences(&a).is_empty());
    assert_ne!(a.digest(), b.digest());
}

#[test]
fn a_directory_of_other_files_is_never_used_nor_tidied() {
    let t = tempfile::tempdir().unwrap();
    let docs = t.path().join("docs");
    std::fs::create_dir_all(docs.join("v1")).unwrap();
    std::fs::write(docs.join("v1/spec.yaml"), b"openapi: 3").unwrap();
    let cache = BaseCache::open(&docs, None, "docs".into());
    assert!(cache.refused().is_some_and(|w| w.contains("CACHEDIR.TAG")));
    let (e, items) = entry(inputs(&"a".repeat(40), 1), "2026-12-01T10:00:00Z");
    let p = Pending::new(&e, items).unwrap();
    assert_eq!(cache.commit(Some(&p)).unwrap(), Committed::default());
    assert!(docs.join("v1/spec.yaml").is_file(), "the user's file stays");
    assert!(!docs.join("v1/entries").exists());
}
