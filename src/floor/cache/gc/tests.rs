use std::collections::BTreeSet;

use super::*;
use crate::digest::sha256_hex;
use crate::floor::cache::key::KeyInputs;
use crate::floor::cache::{BaseCache, Made, Pending, ENTRY_SCHEMA};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn inputs(base: &str) -> KeyInputs {
    KeyInputs {
        shipmoor: VERSION.into(),
        observation: OBSERVATION_VERSION,
        base: base.into(),
        runs: 1,
        timeout_seconds: 1800,
        environment: Vec::new(),
        runners: Vec::new(),
        laid_over: Vec::new(),
        spliced: Vec::new(),
        deleted: Vec::new(),
        lock_files: Vec::new(),
        sandbox: String::new(),
    }
}

/// An entry observed at the base commit `base` at `at`, citing `items`; with its items as
/// `Pending::new` takes them.
fn entry(base: &str, at: &str, items: &[&[u8]]) -> (Entry, Vec<(String, Vec<u8>)>) {
    let items: Vec<(String, Vec<u8>)> = items.iter().map(|b| (sha256_hex(b), b.to_vec())).collect();
    let inputs = inputs(base);
    let entry = Entry {
        schema: ENTRY_SCHEMA.into(),
        key: inputs.digest(),
        inputs,
        made: Made {
            head: "e".repeat(40),
            at: at.into(),
            by: VERSION.into(),
        },
        observed: Vec::new(),
        rewritten: Vec::new(),
        records: Vec::new(),
        items: items.iter().map(|(h, _)| format!("sha256:{h}")).collect(),
        summary: "1 failed".into(),
    };
    (entry, items)
}

/// Writes `entry` and its items into the cache at `dir` as claim-check does: its name.
fn store(dir: &Path, made: (Entry, Vec<(String, Vec<u8>)>)) -> String {
    let cache = BaseCache::open(dir, None, "cache".into());
    assert_eq!(cache.refused(), None);
    let pending = Pending::new(&made.0, made.1).unwrap();
    let done = cache.commit(Some(&pending)).unwrap();
    assert!(done.stored);
    pending.name
}

fn limits(keep: usize, size: &str) -> Limits {
    Limits {
        keep,
        max_size: Size::parse(size).unwrap(),
    }
}

fn plan(dir: &Path, limits: &Limits) -> Sweep {
    Sweep::plan(dir, None, limits)
        .expect("not refused")
        .expect("a cache there")
}

/// Every file and directory under `dir`, relative, with the bytes of each file.
fn tree(dir: &Path) -> BTreeSet<(String, Vec<u8>)> {
    fn walk(root: &Path, at: &Path, out: &mut BTreeSet<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(at).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().display().to_string();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                out.insert((format!("{rel}/"), Vec::new()));
                walk(root, &p, out);
            } else if t.is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.insert((format!("{rel} ->"), to.display().to_string().into_bytes()));
            } else {
                out.insert((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

fn names(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn entries_of(cache: &Path) -> BTreeSet<String> {
    names(&cache.join("v1/entries"))
}

fn items_of(cache: &Path) -> BTreeSet<String> {
    names(&cache.join("v1/sha256"))
}

fn why<'a>(sweep: &'a Sweep, name: &str) -> Option<&'a Why> {
    sweep
        .entries
        .iter()
        .find(|g| g.name == name)
        .map(|g| &g.why)
}

/// Rewrites the entry file `name` as `edit` makes it (its name stays).
fn edit_entry(cache: &Path, name: &str, edit: impl FnOnce(&mut Entry)) {
    let path = cache.join("v1/entries").join(name);
    let mut e: Entry = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    edit(&mut e);
    std::fs::write(&path, serde_json::to_vec(&e).unwrap()).unwrap();
}

/// An entry written by another release, named by its own hash so that it checks out, and
/// listed as that release's completed run listed it.
fn store_as(cache: &Path, e: Entry) -> String {
    let name = store_unlisted(cache, e);
    let path = cache.join("v1/listed");
    let mut listed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    listed["entries"]
        .as_array_mut()
        .unwrap()
        .push(name.clone().into());
    std::fs::write(&path, serde_json::to_vec(&listed).unwrap()).unwrap();
    name
}

/// An entry written into the cache with no completed run listing it (a run killed before
/// it tidied up, or code that wrote the directory).
fn store_unlisted(cache: &Path, e: Entry) -> String {
    let bytes = crate::digest::canonical_json(&e).unwrap();
    let name = sha256_hex(&bytes);
    std::fs::write(cache.join("v1/entries").join(&name), bytes).unwrap();
    name
}

#[test]
fn an_entry_no_completed_run_listed_goes_and_the_list_names_what_is_left() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let listed = store(&dir, entry("a", "2026-01-01T00:00:00Z", &[b"log a"]));
    let (forged, _) = entry("b", "2026-01-02T00:00:00Z", &[b"log a"]);
    let forged = store_unlisted(&dir, forged);
    // A run does not read it.
    let cache = BaseCache::open(&dir, None, "cache".into());
    assert!(cache.lookup(&inputs("b").digest()).is_none());
    assert!(
        cache.notes()[0].contains("no run that completed left it there"),
        "{:?}",
        cache.notes()
    );
    let sweep = plan(&dir, &limits(20, "1G"));
    assert_eq!(why(&sweep, &forged), Some(&Why::Unlisted));
    assert_eq!(sweep.kept, vec![listed.clone()]);
    sweep.apply().unwrap();
    assert_eq!(entries_of(&dir), BTreeSet::from([listed.clone()]));
    let list: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("v1/listed")).unwrap()).unwrap();
    assert_eq!(list["entries"], serde_json::json!([listed]));
}

#[test]
fn a_tampered_or_unreadable_entry_goes_and_the_items_only_it_cited_with_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let a = store(&dir, entry("a", "2026-01-01T00:00:00Z", &[b"log a"]));
    let b = store(&dir, entry("b", "2026-01-02T00:00:00Z", &[b"log b"]));
    let c = store(&dir, entry("c", "2026-01-03T00:00:00Z", &[b"log c"]));
    // `a` edited in place: its bytes no longer hash to its name.
    edit_entry(&dir, &a, |e| e.summary = "0 failed".into());
    // `b` is not JSON any more; a file whose name is no entry name sits beside them.
    std::fs::write(dir.join("v1/entries").join(&b), b"{not json").unwrap();
    std::fs::write(dir.join("v1/entries/notes.txt"), b"hello").unwrap();
    let sweep = plan(&dir, &limits(20, "1G"));
    assert_eq!(
        why(&sweep, &a),
        Some(&Why::Unreadable(
            "its contents do not hash to its name".into()
        ))
    );
    assert!(
        matches!(why(&sweep, &b), Some(Why::Unreadable(w)) if w.contains("hash")),
        "{sweep:?}"
    );
    let odd = sweep
        .entries
        .iter()
        .find(|g| g.name == "notes.txt")
        .unwrap();
    assert_eq!(odd.label(), "entry `notes.txt`");
    assert_eq!(sweep.kept, vec![c.clone()]);
    assert_eq!(
        sweep.entries[0].label(),
        format!("entry sha256:{}", &sweep.entries[0].name[..12])
    );
    sweep.apply().unwrap();
    assert_eq!(entries_of(&dir), BTreeSet::from([c]));
    assert_eq!(items_of(&dir), BTreeSet::from([sha256_hex(b"log c")]));
    // What stays is what a run reads.
    let again = BaseCache::open(&dir, None, "cache".into());
    assert!(again.notes().is_empty(), "{:?}", again.notes());
}

#[test]
fn an_entry_another_release_made_or_keyed_goes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let mine = store(&dir, entry("a", "2026-01-01T00:00:00Z", &[b"shared"]));
    let (mut old, _) = entry("b", "2026-01-02T00:00:00Z", &[b"shared"]);
    old.made.by = "0.0.9".into();
    let old = store_as(&dir, old);
    let (mut keyed, _) = entry("c", "2026-01-03T00:00:00Z", &[b"shared"]);
    keyed.inputs.shipmoor = "0.0.8".into();
    keyed.key = keyed.inputs.digest();
    let keyed = store_as(&dir, keyed);
    let (mut observed, _) = entry("d", "2026-01-04T00:00:00Z", &[]);
    observed.inputs.observation = OBSERVATION_VERSION + 1;
    observed.key = observed.inputs.digest();
    let observed = store_as(&dir, observed);

    let sweep = plan(&dir, &limits(20, "1G"));
    assert_eq!(why(&sweep, &old), Some(&Why::MadeBy("0.0.9".into())));
    assert_eq!(
        why(&sweep, &old).unwrap().to_string(),
        "made by shipmoor 0.0.9"
    );
    assert_eq!(why(&sweep, &keyed), Some(&Why::KeyedFor("0.0.8".into())));
    assert!(matches!(
        why(&sweep, &observed),
        Some(Why::Observation(n)) if *n == OBSERVATION_VERSION + 1
    ));
    assert_eq!(sweep.kept, vec![mine.clone()]);
    // The item the kept entry shares with them stays.
    assert!(sweep.items.is_empty(), "{:?}", sweep.items);
    sweep.apply().unwrap();
    assert_eq!(entries_of(&dir), BTreeSet::from([mine]));
    assert_eq!(items_of(&dir), BTreeSet::from([sha256_hex(b"shared")]));
}

#[test]
fn an_entry_whose_item_is_missing_or_changed_goes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let missing = store(&dir, entry("a", "2026-01-01T00:00:00Z", &[b"gone"]));
    let changed = store(&dir, entry("b", "2026-01-02T00:00:00Z", &[b"as written"]));
    let fine = store(&dir, entry("c", "2026-01-03T00:00:00Z", &[b"fine"]));
    std::fs::remove_file(dir.join("v1/sha256").join(sha256_hex(b"gone"))).unwrap();
    std::fs::write(
        dir.join("v1/sha256").join(sha256_hex(b"as written")),
        b"rewritten",
    )
    .unwrap();
    let sweep = plan(&dir, &limits(20, "1G"));
    assert!(
        matches!(why(&sweep, &missing), Some(Why::Items(w)) if w.contains("is missing")),
        "{sweep:?}"
    );
    assert!(
        matches!(why(&sweep, &changed), Some(Why::Items(w)) if w.contains("does not hash to its name")),
        "{sweep:?}"
    );
    assert_eq!(sweep.kept, vec![fine.clone()]);
    assert_eq!(
        sweep.items,
        vec![(sha256_hex(b"as written"), "rewritten".len() as u64)]
    );
    sweep.apply().unwrap();
    assert_eq!(entries_of(&dir), BTreeSet::from([fine]));
    assert_eq!(items_of(&dir), BTreeSet::from([sha256_hex(b"fine")]));
}

#[test]
fn cache_keep_keeps_the_newest_and_removes_the_oldest_first() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    // Written out of order; two made at the same second, ordered by name.
    let third = store(&dir, entry("c", "2026-01-03T00:00:00Z", &[b"3"]));
    let first = store(&dir, entry("a", "2026-01-01T00:00:00Z", &[b"1"]));
    let fourth = store(&dir, entry("d", "2026-01-04T00:00:00Z", &[b"4"]));
    let tie_x = store(&dir, entry("x", "2026-01-02T00:00:00Z", &[b"2x"]));
    let tie_y = store(&dir, entry("y", "2026-01-02T00:00:00Z", &[b"2y"]));
    let (tie_lo, tie_hi) = if tie_x < tie_y {
        (tie_x, tie_y)
    } else {
        (tie_y, tie_x)
    };

    let sweep = plan(&dir, &limits(2, "1G"));
    let gone: Vec<(&str, &Why)> = sweep
        .entries
        .iter()
        .map(|g| (g.name.as_str(), &g.why))
        .collect();
    assert_eq!(
        gone,
        vec![
            (first.as_str(), &Why::OverKeep(2)),
            (tie_lo.as_str(), &Why::OverKeep(2)),
            (tie_hi.as_str(), &Why::OverKeep(2)),
        ]
    );
    assert_eq!(Why::OverKeep(2).to_string(), "over --cache-keep 2");
    assert_eq!(sweep.kept, vec![third.clone(), fourth.clone()]);
    assert_eq!(sweep.items.len(), 3);
    sweep.apply().unwrap();
    assert_eq!(entries_of(&dir), BTreeSet::from([third, fourth]));
    assert_eq!(
        items_of(&dir),
        BTreeSet::from([sha256_hex(b"3"), sha256_hex(b"4")])
    );

    // --cache-keep 0 empties it.
    let sweep = plan(&dir, &limits(0, "1G"));
    assert!(sweep.kept.is_empty());
    sweep.apply().unwrap();
    assert!(entries_of(&dir).is_empty());
    assert!(items_of(&dir).is_empty());
    assert!(dir.join("v1/entries").is_dir(), "the directories stay");
}

#[test]
fn cache_max_size_drops_the_oldest_until_the_rest_fits_each_item_counted_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let big_a = vec![b'a'; 1000];
    let big_b = vec![b'b'; 2000];
    let big_c = vec![b'c'; 3000];
    let e1 = store(&dir, entry("1", "2026-01-01T00:00:00Z", &[&big_a]));
    let e2 = store(&dir, entry("2", "2026-01-02T00:00:00Z", &[&big_a, &big_b]));
    let e3 = store(&dir, entry("3", "2026-01-03T00:00:00Z", &[&big_c]));
    let len = |n: &str| {
        std::fs::metadata(dir.join("v1/entries").join(n))
            .unwrap()
            .len()
    };
    let (s1, s2, s3) = (len(&e1), len(&e2), len(&e3));
    // `a` is cited twice and counted once.
    let all = s1 + s2 + s3 + 1000 + 2000 + 3000;

    let sweep = plan(&dir, &limits(20, &all.to_string()));
    assert!(sweep.entries.is_empty(), "{sweep:?}");
    assert_eq!(sweep.kept_bytes, all);

    // One byte less: the oldest goes, and frees only its entry (`a` is e2's too).
    let max = Size::parse(&(all - 1).to_string()).unwrap();
    let sweep = plan(&dir, &limits(20, &(all - 1).to_string()));
    assert_eq!(sweep.entries.len(), 1);
    assert_eq!(sweep.entries[0].name, e1);
    assert_eq!(sweep.entries[0].why, Why::OverSize(max));
    assert_eq!(sweep.kept, vec![e2.clone(), e3.clone()]);
    assert_eq!(sweep.kept_bytes, all - s1);
    assert!(sweep.items.is_empty(), "{:?}", sweep.items);
    assert_eq!(sweep.freed(), s1);

    // Room for the newest alone: e1 and e2 go, and their items.
    let fits = s3 + 3000;
    let sweep = plan(&dir, &limits(20, &fits.to_string()));
    let gone: Vec<&str> = sweep.entries.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(gone, vec![e1.as_str(), e2.as_str()]);
    assert_eq!(sweep.kept_bytes, fits);
    assert_eq!(sweep.freed(), s1 + s2 + 1000 + 2000);
    sweep.apply().unwrap();
    assert_eq!(entries_of(&dir), BTreeSet::from([e3]));
    assert_eq!(items_of(&dir), BTreeSet::from([sha256_hex(&big_c)]));

    // With the keep count and the size both limiting, the count goes first.
    let e4 = store(&dir, entry("4", "2026-01-04T00:00:00Z", &[b"small"]));
    let sweep = plan(&dir, &limits(1, "1K"));
    assert_eq!(sweep.entries.len(), 1);
    assert_eq!(sweep.entries[0].why, Why::OverKeep(1));
    assert_eq!(sweep.kept, vec![e4]);
    assert_eq!(
        Why::OverSize(Size::parse("1G").unwrap()).to_string(),
        "over --cache-max-size 1G"
    );
}

#[test]
fn items_no_kept_entry_cites_and_stray_files_in_v1_go_and_nothing_outside_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let kept = store(&dir, entry("a", "2026-01-01T00:00:00Z", &[b"cited"]));
    let orphan = sha256_hex(b"orphan");
    std::fs::write(dir.join("v1/sha256").join(&orphan), b"orphan").unwrap();
    std::fs::write(dir.join("v1/sha256/not-a-name"), b"x").unwrap();
    std::fs::create_dir(dir.join("v1/sha256/sub")).unwrap();
    std::fs::write(dir.join("v1/sha256/sub/deep"), b"deep").unwrap();
    std::fs::write(dir.join("v1/stray.txt"), b"stray").unwrap();
    std::fs::create_dir_all(dir.join("v1/old/x")).unwrap();
    std::fs::write(dir.join("v1/old/x/y"), b"yy").unwrap();
    // Outside v1: the tag, a file of the user's, an older layout.
    std::fs::write(dir.join("README"), b"mine").unwrap();
    std::fs::create_dir_all(dir.join("v0")).unwrap();
    std::fs::write(dir.join("v0/entry"), b"old").unwrap();
    let outside = tmp.path().join("outside");
    std::fs::write(&outside, b"outside").unwrap();
    // A symlink in v1/sha256 is removed, never what it points to.
    std::os::unix::fs::symlink(&outside, dir.join("v1/sha256/link")).unwrap();

    let sweep = plan(&dir, &limits(20, "1G"));
    assert_eq!(sweep.kept, vec![kept.clone()]);
    let items: BTreeSet<&str> = sweep.items.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        items,
        BTreeSet::from([orphan.as_str(), "not-a-name", "sub", "link"])
    );
    assert_eq!(sweep.items_total, 5);
    let stray: Vec<(&str, u64)> = sweep.stray.iter().map(|(n, b)| (n.as_str(), *b)).collect();
    assert_eq!(stray, vec![("old", 2), ("stray.txt", 5)]);
    sweep.apply().unwrap();
    assert_eq!(items_of(&dir), BTreeSet::from([sha256_hex(b"cited")]));
    assert_eq!(
        names(&dir.join("v1")),
        BTreeSet::from(["entries".into(), "listed".into(), "sha256".into()])
    );
    assert_eq!(
        names(&dir),
        BTreeSet::from([
            "CACHEDIR.TAG".to_string(),
            "README".into(),
            "v0".into(),
            "v1".into()
        ])
    );
    assert_eq!(std::fs::read(dir.join("v0/entry")).unwrap(), b"old");
    assert_eq!(std::fs::read(&outside).unwrap(), b"outside");
    assert_eq!(entries_of(&dir), BTreeSet::from([kept]));
}

#[test]
fn of_two_entries_of_one_key_the_earlier_goes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let earlier = store(&dir, entry("a", "2026-01-01T00:00:00Z", &[b"1"]));
    let later = store(&dir, entry("a", "2026-01-02T00:00:00Z", &[b"2"]));
    let sweep = plan(&dir, &limits(20, "1G"));
    assert_eq!(why(&sweep, &earlier), Some(&Why::Superseded(later.clone())));
    assert_eq!(sweep.kept, vec![later.clone()]);
    // The later one is the one a run finds.
    let cache = BaseCache::open(&dir, None, "cache".into());
    assert_eq!(cache.lookup(&inputs("a").digest()).unwrap().name, later);
}

#[test]
fn a_plan_removes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cache");
    let a = store(&dir, entry("a", "2026-01-01T00:00:00Z", &[b"1"]));
    store(&dir, entry("b", "2026-01-02T00:00:00Z", &[b"2"]));
    edit_entry(&dir, &a, |e| e.summary = "edited".into());
    std::fs::write(dir.join("v1/sha256").join(sha256_hex(b"x")), b"x").unwrap();
    std::fs::write(dir.join("v1/stray"), b"s").unwrap();
    let before = tree(&dir);
    let sweep = plan(&dir, &limits(0, "0"));
    assert_eq!(sweep.entries.len(), 2);
    assert_eq!(sweep.items.len(), 3);
    assert_eq!(sweep.stray.len(), 1);
    assert!(sweep.freed() > 0);
    assert_eq!(tree(&dir), before, "planning removes nothing");
    sweep.apply().unwrap();
    assert_ne!(tree(&dir), before);
}

#[test]
fn a_symlink_for_the_directory_or_one_below_it_is_refused_and_nothing_goes() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    store(&real, entry("a", "2026-01-01T00:00:00Z", &[b"1"]));
    std::fs::write(real.join("v1/stray"), b"s").unwrap();
    let before = tree(&real);

    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let refused = Sweep::plan(&link, None, &limits(0, "0")).unwrap_err();
    assert_eq!(refused.at, link);
    assert_eq!(refused.why, crate::nofollow::Why::Symlink);
    assert_eq!(tree(&real), before);

    for sub in ["v1", "v1/entries", "v1/sha256"] {
        let dir = tmp.path().join(format!("cache-{}", sub.replace('/', "-")));
        std::fs::create_dir_all(dir.join(sub).parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(real.join(sub), dir.join(sub)).unwrap();
        let refused = Sweep::plan(&dir, None, &limits(0, "0")).unwrap_err();
        assert_eq!(refused.at, dir.join(sub), "{sub}");
        assert_eq!(refused.why, crate::nofollow::Why::Symlink, "{sub}");
        assert_eq!(tree(&real), before, "{sub}");
    }

    // A file where the directory goes is refused too; no directory at all is nothing to do.
    let file = tmp.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    assert_eq!(
        Sweep::plan(&file, None, &limits(0, "0")).unwrap_err().why,
        crate::nofollow::Why::NotADirectory
    );
    assert!(Sweep::plan(&tmp.path().join("none"), None, &limits(0, "0"))
        .unwrap()
        .is_none());
}

#[test]
fn sizes_read_as_bytes_or_powers_of_1024() {
    for (s, bytes) in [
        ("0", 0),
        ("1024", 1024),
        ("2K", 2 << 10),
        ("2k", 2 << 10),
        ("500M", 500 << 20),
        ("1G", 1 << 30),
        ("16g", 16u64 << 30),
    ] {
        let size = Size::parse(s).unwrap();
        assert_eq!(size.bytes(), bytes, "{s}");
        assert_eq!(size.to_string(), s);
    }
    for s in ["", "G", "1.5G", "1T", "-1", "1 G", "1GB", "99999999999999G"] {
        let err = Size::parse(s).unwrap_err();
        assert!(err.to_string().contains("e.g. 500M"), "{s}: {err}");
    }
}
