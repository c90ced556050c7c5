//! The base cache (`claim-check --base-cache`) end to end, with real runners: a push is the same
//! base commit and a new head commit on the branch, then a run. A push that changes only code
//! reuses what base observed on the push before; one that changes a test file, a runner's
//! settings, a lock file or `--runs` runs base again and says why; an entry that does not check
//! out is ignored; what the code under check writes into the cache is gone after its run; a
//! flake is never kept.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;
use common::{ident, require_pytest, require_tool, Repo, Run};

// ----------------------------------------------------------------------------------------------
// Pushes
// ----------------------------------------------------------------------------------------------

/// One push's run and its result document (`--format json`).
struct Push {
    run: Run,
    v: Value,
}

impl Push {
    fn from(run: Run) -> Push {
        let v = serde_json::from_str(&run.stdout)
            .unwrap_or_else(|e| panic!("no result JSON on stdout ({e}): {run:?}"));
        Push { run, v }
    }

    fn result(&self) -> &Value {
        &self.v["result"]
    }

    fn cache(&self) -> &Value {
        &self.v["result"]["base_cache"]
    }

    fn state(&self) -> &str {
        self.cache()["state"].as_str().unwrap_or_default()
    }

    fn entry(&self) -> &str {
        self.cache()["entry"].as_str().unwrap_or_default()
    }

    fn note(&self) -> &str {
        self.cache()["note"].as_str().unwrap_or_default()
    }

    fn verdict(&self) -> &str {
        self.result()["verdict"].as_str().unwrap_or_default()
    }

    fn rows(&self) -> Vec<&Value> {
        self.result()["runtime"]
            .as_array()
            .expect("result.runtime")
            .iter()
            .collect()
    }

    /// The runtime rows of `runner`'s runs at base.
    fn base_rows(&self, runner: &str) -> Vec<&Value> {
        self.rows()
            .into_iter()
            .filter(|r| r["side"].as_str().unwrap_or_default().starts_with("base"))
            .filter(|r| r["runner"] == runner)
            .collect()
    }

    /// The results of the `base cache` rows.
    fn cache_rows(&self) -> Vec<String> {
        self.rows()
            .into_iter()
            .filter(|r| r["runner"] == "base cache")
            .map(|r| r["result"].as_str().unwrap_or_default().to_string())
            .collect()
    }

    /// Each criterion's tests as base observed them: criterion, test, outcome, failure kind,
    /// evidence.
    fn base_outcomes(&self) -> Vec<(String, String, Value, Value, Value)> {
        let mut out = Vec::new();
        for c in self.result()["criteria"].as_array().expect("criteria") {
            for t in c["floor"]["tests"].as_array().into_iter().flatten() {
                out.push((
                    c["id"].as_str().unwrap_or_default().to_string(),
                    t["id"].as_str().unwrap_or_default().to_string(),
                    t["base"].clone(),
                    t["base_failure"].clone(),
                    t["base_evidence"].clone(),
                ));
            }
        }
        out
    }

    /// Each criterion's disposition.
    fn dispositions(&self) -> Vec<(String, String)> {
        common::dispositions(&self.result()["criteria"])
    }
}

impl std::fmt::Debug for Push {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "base_cache: {}\nruntime: {:#}\n{:?}",
            self.cache(),
            self.result()["runtime"],
            self.run
        )
    }
}

/// A run against `base` with the base cache in `cache` (a path, or `none`), `extra` flags and
/// `env` on top.
fn push(r: &Repo, base: &str, cache: &str, extra: &[&str], env: &[(&str, &str)]) -> Push {
    let mut args = vec![
        "claim-check",
        "--base",
        base,
        "--base-cache",
        cache,
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    Push::from(r.shipmoor_env(&args, env))
}

/// A directory for a test's cache and counters, outside the repository and its temporary root.
struct Place(tempfile::TempDir);

impl Place {
    fn new() -> Place {
        Place(
            tempfile::Builder::new()
                .prefix("cc-cache-")
                .tempdir()
                .expect("temp dir"),
        )
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }

    /// The cache directory (created by the first run that keeps an entry).
    fn cache(&self) -> String {
        self.path("cache").display().to_string()
    }
}

/// Every regular file under `dir`, by its path relative to `dir`, with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(listing) = std::fs::read_dir(dir) else {
            return;
        };
        for e in listing.flatten() {
            let p = e.path();
            let t = e.file_type().expect("file type");
            if t.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The names of the files in `DIR/v1/<sub>`.
fn names(cache: &str, sub: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(Path::new(cache).join("v1").join(sub))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// What a push that reused base shows, against `first`, the push that stored the entry, made at
/// head `first_head`.
fn assert_reused(second: &Push, first: &Push, first_head: &str, runner: &str) {
    assert_eq!(first.state(), "stored", "{first:?}");
    assert_eq!(second.state(), "reused", "{second:?}");
    assert!(second.entry().starts_with("sha256:"), "{second:?}");
    assert_eq!(second.entry(), first.entry(), "{second:?}");
    assert_eq!(second.cache()["key"], first.cache()["key"]);
    assert_eq!(second.cache()["observed_at_head"], first_head, "{second:?}");
    assert!(second.cache()["observed_at"].is_string(), "{second:?}");
    // Base's runner did not run: its only row at base is the cache's.
    assert!(second.base_rows(runner).is_empty(), "{second:?}");
    let rows = second.cache_rows();
    assert_eq!(rows.len(), 1, "{second:?}");
    assert!(
        rows[0].starts_with("reused from the base cache: ")
            && rows[0].contains(&format!("observed at head {}", &first_head[..7])),
        "{second:?}"
    );
    assert_eq!(second.verdict(), first.verdict());
    assert_eq!(second.run.code, first.run.code);
    assert_eq!(second.dispositions(), first.dispositions());
    assert!(!first.base_outcomes().is_empty(), "{first:?}");
    assert_eq!(second.base_outcomes(), first.base_outcomes(), "{second:?}");
}

/// What a push that ran base again shows: base's runner rows, and no reuse.
fn assert_ran(p: &Push, runner: &str) {
    assert!(
        p.state() == "stored" || p.state() == "ran",
        "base should have run again: {p:?}"
    );
    assert_ne!(p.state(), "reused", "{p:?}");
    assert!(!p.base_rows(runner).is_empty(), "{p:?}");
    assert!(
        !p.cache_rows()
            .iter()
            .any(|r| r.starts_with("reused from the base cache")),
        "{p:?}"
    );
}

// ----------------------------------------------------------------------------------------------
// pytest
// ----------------------------------------------------------------------------------------------

const ID: &str = "order-refunded";
const SERVICE_BASE: &str = "def refund(order):\n    return order\n";
const SERVICE_HEAD: &str =
    "def refund(order):\n    order['status'] = 'refunded'\n    return order\n";

fn test_file() -> String {
    format!("tests/test_refund_{}.py", ident(ID))
}

/// The tagged test: fails at base (no status), passes at head.
fn refunded_test() -> String {
    format!(
        "from svc.refund import refund\n\ndef test_marks_{}():\n    assert refund({{}})['status'] == 'refunded'\n",
        ident(ID)
    )
}

/// A base commit with a service and one plain test; returns (repo, base sha).
fn pytest_base() -> (Repo, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    r.write("svc/__init__.py", "");
    r.write("svc/refund.py", SERVICE_BASE);
    r.write(
        "tests/test_plain.py",
        "def test_plain():\n    assert True\n",
    );
    let base = r.commit("base");
    (r, base)
}

/// The acceptance set, with `settings` (a `runners:` block, say) after the criteria.
fn pytest_acceptance(r: &Repo, settings: &str) {
    r.write(
        ".shipmoor/acceptance.yaml",
        &format!(
            "version: 1\ncriteria:\n  - id: {ID}\n    ac: Order is marked refunded.\n{settings}"
        ),
    );
}

/// The first head: the fix, its tagged test, the acceptance set with `settings`. Returns
/// (repo, base, head).
fn pytest_change(settings: &str) -> (Repo, String, String) {
    let (r, base) = pytest_base();
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write(&test_file(), &refunded_test());
    pytest_acceptance(&r, settings);
    let head = r.commit("head 1");
    (r, base, head)
}

/// A push that changes only code (no test file, setting or lock file): the service gains a
/// comment.
fn touch_code(r: &Repo, n: usize) -> String {
    r.write("svc/refund.py", &format!("{SERVICE_HEAD}\n# push {n}\n"));
    r.commit(&format!("head {n}"))
}

#[test]
fn pytest_a_push_that_changes_only_code_reuses_base_and_replays() {
    let place = Place::new();
    let cache = place.cache();
    let (r, base, head1) = pytest_change("");
    let first = push(&r, &base, &cache, &[], &[]);
    assert_eq!(first.run.code, 0, "{first:?}");
    assert_eq!(first.verdict(), "READY", "{first:?}");
    assert_eq!(first.state(), "stored", "{first:?}");
    assert_eq!(first.base_rows("pytest").len(), 1, "{first:?}");
    assert!(
        first.note().contains("no entry for base")
            && first
                .note()
                .contains("kept for the next push as entry sha256:"),
        "{first:?}"
    );
    // The entry is on disk under its name, with the items it cites, in a tagged directory.
    let hex = first.entry().strip_prefix("sha256:").unwrap().to_string();
    let entry_bytes = std::fs::read(Path::new(&cache).join("v1/entries").join(&hex)).unwrap();
    assert_eq!(sha256_hex(&entry_bytes), hex);
    let entry: Value = serde_json::from_slice(&entry_bytes).unwrap();
    assert_eq!(entry["made"]["head"], head1.as_str());
    for item in entry["items"].as_array().unwrap() {
        let h = item.as_str().unwrap().strip_prefix("sha256:").unwrap();
        let bytes = std::fs::read(Path::new(&cache).join("v1/sha256").join(h)).unwrap();
        assert_eq!(sha256_hex(&bytes), h);
    }
    assert!(
        std::fs::read_to_string(Path::new(&cache).join("CACHEDIR.TAG"))
            .unwrap()
            .starts_with("Signature: 8a477f597d28d172789f06886806bc55")
    );

    let head2 = touch_code(&r, 2);
    let second = push(&r, &base, &cache, &[], &[]);
    assert_reused(&second, &first, &head1, "pytest");
    assert!(second.cache()["note"].is_null(), "{second:?}");
    assert!(
        second.run.stderr.contains("reused from the base cache"),
        "{second:?}"
    );
    // The statement says whose observation of base it carries.
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    assert_eq!(vsa["subject"][0]["digest"]["gitCommit"], head2.as_str());
    let ext = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["base_cache"];
    assert_eq!(ext["entry"], first.entry(), "{ext}");
    assert_eq!(ext["key"], first.cache()["key"], "{ext}");
    assert_eq!(ext["observed_at_head"], head1.as_str(), "{ext}");
    // It replays: the reused records re-hash, and re-running the floor gives the same outcomes.
    let replay = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
    ]);
    assert_eq!(replay.code, 0, "{replay:?}");
    assert!(replay.stdout.starts_with("Replay  VALID"), "{replay:?}");
    assert!(
        replay
            .stdout
            .contains(&format!("base cache entry sha256:{}", &hex[..12])),
        "{replay:?}"
    );
    let rerun = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--rerun",
        "--repo",
        ".",
    ]);
    assert_eq!(rerun.code, 0, "{rerun:?}");
    assert!(rerun.stdout.starts_with("Replay  VALID"), "{rerun:?}");
    assert!(rerun.stdout.contains("6 rerun      ok"), "{rerun:?}");
    // The terminal report says it too.
    r.write("svc/refund.py", &format!("{SERVICE_HEAD}\n# push 3\n"));
    r.commit("head 3");
    let text = r.shipmoor(&["claim-check", "--base", &base, "--base-cache", &cache]);
    assert_eq!(text.code, 0, "{text:?}");
    assert!(
        text.stdout.contains(&format!(
            "base reused from the base cache: entry sha256:{}",
            &hex[..12]
        )),
        "{text:?}"
    );
    // And verify.md's runtime section.
    let report = r.read(".shipmoor/verify.md");
    assert!(
        report.contains(&format!(
            "- base did not run: its results were reused from the base cache {cache} (entry `sha256:{hex}`"
        )),
        "{report}"
    );
}

/// Without `--base-cache` the cache is `.shipmoor/cache` in the repository; an empty
/// `SHIPMOOR_BASE_CACHE` (a workflow's unset input) is that default too, never the repository
/// itself.
#[test]
fn pytest_the_default_cache_is_in_dot_shipmoor() {
    let (r, base, head1) = pytest_change("");
    let args = ["claim-check", "--base", &base, "--format", "json"];
    let first = Push::from(r.shipmoor_unset(&args, &["SHIPMOOR_BASE_CACHE"]));
    assert_eq!(first.state(), "stored", "{first:?}");
    assert_eq!(first.cache()["dir"], ".shipmoor/cache", "{first:?}");
    let hex = first.entry().strip_prefix("sha256:").unwrap().to_string();
    assert!(r.exists(&format!(".shipmoor/cache/v1/entries/{hex}")));
    assert!(r.exists(".shipmoor/cache/CACHEDIR.TAG"));
    touch_code(&r, 2);
    let second = Push::from(r.shipmoor_env(&args, &[("SHIPMOOR_BASE_CACHE", "")]));
    assert_reused(&second, &first, &head1, "pytest");
    assert_eq!(second.cache()["dir"], ".shipmoor/cache", "{second:?}");
    assert!(
        !r.exists("CACHEDIR.TAG") && !r.exists("v1"),
        "{}",
        r.status()
    );
}

#[test]
fn pytest_a_changed_test_file_runs_base_again() {
    let place = Place::new();
    let cache = place.cache();
    let (r, base, head1) = pytest_change("");
    let first = push(&r, &base, &cache, &[], &[]);
    assert_eq!(first.state(), "stored", "{first:?}");
    r.write(&test_file(), &format!("{}\n# push 2\n", refunded_test()));
    r.commit("head 2");
    let second = push(&r, &base, &cache, &[], &[]);
    assert_ran(&second, "pytest");
    assert_eq!(second.state(), "stored", "{second:?}");
    assert_ne!(second.entry(), first.entry());
    assert!(
        second.note().contains(&format!(
            "no entry for this key; base runs. Since the entry observed at head {}: the files laid over base ({})",
            &head1[..7],
            test_file()
        )),
        "{second:?}"
    );
    assert_eq!(second.verdict(), first.verdict());
    // Both entries are kept: a push back to the first test file would find its own.
    assert_eq!(names(&cache, "entries").len(), 2);
}

#[test]
fn pytest_a_changed_runner_setting_runs_base_again() {
    let place = Place::new();
    let cache = place.cache();
    let (r, base, _) = pytest_change("runners:\n  - kind: pytest\n");
    let first = push(&r, &base, &cache, &[], &[]);
    assert_eq!(first.state(), "stored", "{first:?}");
    // The runner's args.
    pytest_acceptance(
        &r,
        "runners:\n  - kind: pytest\n    args: [\"-W\", \"ignore::DeprecationWarning\"]\n",
    );
    let head2 = r.commit("head 2: args");
    let second = push(&r, &base, &cache, &[], &[]);
    assert_ran(&second, "pytest");
    assert!(
        second.note().contains("the pytest runner (its settings)"),
        "{second:?}"
    );
    // Its setup.
    pytest_acceptance(
        &r,
        "runners:\n  - kind: pytest\n    args: [\"-W\", \"ignore::DeprecationWarning\"]\n    setup: \"true\"\n",
    );
    r.commit("head 3: setup");
    let third = push(&r, &base, &cache, &[], &[]);
    assert_ran(&third, "pytest");
    assert!(
        // Under the pinned clock the two entries at this base are equally new; either one
        // differs from this run in the runner's settings alone.
        third.note().contains("the pytest runner (its settings)") && !head2.is_empty(),
        "{third:?}"
    );
    assert_eq!(third.verdict(), "READY", "{third:?}");
}

#[test]
fn pytest_a_changed_lock_file_runs_base_again() {
    let place = Place::new();
    let cache = place.cache();
    let (r, base, _) = pytest_change("");
    r.write("requirements.txt", "pytest\n");
    r.commit("head 1: requirements");
    let first = push(&r, &base, &cache, &[], &[]);
    assert_eq!(first.state(), "stored", "{first:?}");
    r.write("requirements.txt", "pytest\nattrs==23.2.0\n");
    r.commit("head 2: a pin");
    let second = push(&r, &base, &cache, &[], &[]);
    assert_ran(&second, "pytest");
    assert!(
        second
            .note()
            .contains("the lock files (requirements.txt at head)"),
        "{second:?}"
    );
}

#[test]
fn pytest_another_runs_count_runs_base_again() {
    let place = Place::new();
    let cache = place.cache();
    let (r, base, _) = pytest_change("");
    let first = push(&r, &base, &cache, &[], &[]);
    assert_eq!(first.state(), "stored", "{first:?}");
    touch_code(&r, 2);
    let second = push(&r, &base, &cache, &["--runs", "2"], &[]);
    assert_ran(&second, "pytest");
    assert_eq!(second.state(), "stored", "{second:?}");
    assert!(
        second.note().contains("--runs (1 then, 2 now)"),
        "{second:?}"
    );
    assert_eq!(second.verdict(), "READY", "{second:?}");
}

/// Overwrites a file of the cache with other bytes.
fn tamper(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes.extend_from_slice(b" ");
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn pytest_a_tampered_entry_is_ignored_and_base_runs_again() {
    let place = Place::new();
    let cache = place.cache();
    let (r, base, _) = pytest_change("");
    let first = push(&r, &base, &cache, &[], &[]);
    assert_eq!(first.state(), "stored", "{first:?}");
    let hex = first.entry().strip_prefix("sha256:").unwrap().to_string();
    let path = Path::new(&cache).join("v1/entries").join(&hex);
    tamper(&path);
    touch_code(&r, 2);
    let second = push(&r, &base, &cache, &[], &[]);
    assert_ran(&second, "pytest");
    assert_eq!(second.run.code, first.run.code, "{second:?}");
    assert_eq!(second.verdict(), first.verdict());
    assert_eq!(second.dispositions(), first.dispositions());
    assert!(
        second.note().contains(&format!(
            "base cache entry {} ignored: its contents do not hash to its name",
            &hex[..12]
        )),
        "{second:?}"
    );
    // The run keeps what it observed, and the entry that did not check out is gone.
    assert_eq!(second.state(), "stored", "{second:?}");
    assert_eq!(
        names(&cache, "entries"),
        [second.entry().strip_prefix("sha256:").unwrap()]
    );
}

#[test]
fn pytest_a_tampered_item_is_ignored_and_base_runs_again() {
    let place = Place::new();
    let cache = place.cache();
    let (r, base, _) = pytest_change("");
    let first = push(&r, &base, &cache, &[], &[]);
    assert_eq!(first.state(), "stored", "{first:?}");
    let items = names(&cache, "sha256");
    assert!(!items.is_empty());
    for item in &items {
        tamper(&Path::new(&cache).join("v1/sha256").join(item));
    }
    touch_code(&r, 2);
    let second = push(&r, &base, &cache, &[], &[]);
    assert_ran(&second, "pytest");
    assert_eq!(second.run.code, first.run.code, "{second:?}");
    assert_eq!(second.verdict(), first.verdict());
    assert_eq!(second.dispositions(), first.dispositions());
    assert!(
        second
            .note()
            .contains(&format!("entry {} ignored: its item", &first.entry()[..19]))
            && second
                .note()
                .contains("does not hash to its name; base runs again"),
        "{second:?}"
    );
    assert_eq!(second.state(), "stored", "{second:?}");
    // The new entry's items are whole again on disk.
    let entry: Value = serde_json::from_slice(
        &std::fs::read(
            Path::new(&cache)
                .join("v1/entries")
                .join(second.entry().strip_prefix("sha256:").unwrap()),
        )
        .unwrap(),
    )
    .unwrap();
    for item in entry["items"].as_array().unwrap() {
        let h = item.as_str().unwrap().strip_prefix("sha256:").unwrap();
        let bytes = std::fs::read(Path::new(&cache).join("v1/sha256").join(h)).unwrap();
        assert_eq!(sha256_hex(&bytes), h, "item {h}");
    }
}

#[test]
fn pytest_base_cache_none_reads_and_writes_nothing() {
    let place = Place::new();
    let cache = place.cache();
    let (r, base, _) = pytest_change("");
    let first = push(&r, &base, &cache, &[], &[]);
    assert_eq!(first.state(), "stored", "{first:?}");
    let before = files(Path::new(&cache));
    assert!(!before.is_empty());
    touch_code(&r, 2);
    let off = push(&r, &base, "none", &[], &[]);
    assert_eq!(off.run.code, first.run.code, "{off:?}");
    assert!(off.cache().is_null(), "{off:?}");
    assert!(off.cache_rows().is_empty(), "{off:?}");
    assert_eq!(off.base_rows("pytest").len(), 1, "{off:?}");
    assert_eq!(off.verdict(), first.verdict());
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    assert!(vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["base_cache"].is_null());
    assert_eq!(files(Path::new(&cache)), before);
    assert!(!r.exists(".shipmoor/cache"));
    // The environment's `none` is the same.
    touch_code(&r, 3);
    let args = ["claim-check", "--base", &base, "--format", "json"];
    let env_off = Push::from(r.shipmoor_env(&args, &[("SHIPMOOR_BASE_CACHE", "none")]));
    assert!(env_off.cache().is_null(), "{env_off:?}");
    assert!(!r.exists(".shipmoor/cache"));
}

// ----------------------------------------------------------------------------------------------
// Hostile code under check
// ----------------------------------------------------------------------------------------------

/// A tagged test that, wherever it runs, writes into the cache directory `$FORGE_CACHE`: a junk
/// entry and a blob, and for each real entry there, a copy that would win over it (a later
/// date, another head), correctly named. It lists what it wrote in `$FORGE_LOG/written` and
/// keeps a copy of each forged entry in `$FORGE_LOG`.
const FORGING_TEST: &str = r#"import hashlib, json, os
from svc.refund import refund

def forge():
    d, log = os.environ["FORGE_CACHE"], os.environ["FORGE_LOG"]
    entries, items = os.path.join(d, "v1", "entries"), os.path.join(d, "v1", "sha256")
    os.makedirs(entries, exist_ok=True)
    os.makedirs(items, exist_ok=True)
    written = []
    def put(path, data):
        with open(path, "wb") as f:
            f.write(data)
        written.append(path)
    blob = b"forged"
    put(os.path.join(items, hashlib.sha256(blob).hexdigest()), blob)
    put(os.path.join(entries, "de" * 32), b"{}")
    for name in sorted(os.listdir(entries)):
        data = open(os.path.join(entries, name), "rb").read()
        if hashlib.sha256(data).hexdigest() != name:
            continue
        e = json.loads(data)
        if e["made"]["head"] == "f" * 40:
            continue
        e["made"]["head"] = "f" * 40
        e["made"]["at"] = "2099-01-01T00:00:00Z"
        forged = json.dumps(e).encode()
        h = hashlib.sha256(forged).hexdigest()
        put(os.path.join(entries, h), forged)
        with open(os.path.join(log, h), "wb") as f:
            f.write(forged)
    with open(os.path.join(log, "written"), "a") as f:
        f.write("".join(p + "\n" for p in written))

def test_marks_TAG():
    forge()
    assert refund({})['status'] == 'refunded'
"#;

#[test]
fn files_the_code_under_check_writes_into_the_cache_are_removed_and_never_used() {
    let place = Place::new();
    let cache = place.cache();
    let log = place.path("log");
    std::fs::create_dir_all(&log).unwrap();
    let log_s = log.display().to_string();
    // The code reaches the cache only without the sandbox (sandbox.rs shows it cannot in it);
    // what a run does with what appeared there holds either way.
    let env = [
        ("FORGE_CACHE", cache.as_str()),
        ("FORGE_LOG", log_s.as_str()),
        ("SHIPMOOR_SANDBOX", "off"),
    ];
    let (r, base) = pytest_base();
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write(&test_file(), &FORGING_TEST.replace("TAG", &ident(ID)));
    pytest_acceptance(&r, "");
    let head1 = r.commit("head 1");
    let written = || -> Vec<String> {
        std::fs::read_to_string(log.join("written"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    };

    // Push 1: the test forges at head and at base; the run keeps only its own entry.
    let first = push(&r, &base, &cache, &[], &env);
    assert_eq!(first.run.code, 0, "{first:?}");
    assert_eq!(first.state(), "stored", "{first:?}");
    assert!(written().len() >= 4, "the test forged nothing: {first:?}");
    for p in written() {
        assert!(!Path::new(&p).exists(), "{p} is still there: {first:?}");
    }
    let own = first.entry().strip_prefix("sha256:").unwrap().to_string();
    assert_eq!(
        names(&cache, "entries"),
        std::slice::from_ref(&own),
        "{first:?}"
    );
    assert!(
        first
            .run
            .stderr
            .contains("file(s) that appeared in it during the run"),
        "{first:?}"
    );
    std::fs::remove_file(log.join("written")).unwrap();

    // Push 2: base is reused; at head the test forges a copy of the real entry that would
    // win over it. The copy is well formed: its name is its digest, its key the real one.
    touch_code(&r, 2);
    let second = push(&r, &base, &cache, &[], &env);
    assert_reused(&second, &first, &head1, "pytest");
    let forged: Vec<PathBuf> = std::fs::read_dir(&log)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().unwrap() != "written")
        .collect();
    assert_eq!(forged.len(), 1, "the test forged no entry: {second:?}");
    let bytes = std::fs::read(&forged[0]).unwrap();
    let forged_name = forged[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(sha256_hex(&bytes), forged_name);
    let copy: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        format!("sha256:{}", copy["key"].as_str().unwrap()),
        second.cache()["key"]
    );
    assert!(written().iter().any(|p| p.ends_with(&forged_name)));
    for p in written() {
        assert!(!Path::new(&p).exists(), "{p} is still there: {second:?}");
    }
    assert_eq!(
        names(&cache, "entries"),
        std::slice::from_ref(&own),
        "{second:?}"
    );

    // Push 3: what base observed is still push 1's, never the forged copy's.
    touch_code(&r, 3);
    let third = push(&r, &base, &cache, &[], &env);
    assert_reused(&third, &first, &head1, "pytest");
    assert!(!third.note().contains("ignored"), "{third:?}");
}

#[test]
fn a_cache_directory_that_is_a_symlink_is_not_used_and_nothing_is_written_through_it() {
    let place = Place::new();
    let elsewhere = place.path("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let link = place.path("cache");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let (r, base, _) = pytest_change("");
    let p = push(&r, &base, &place.cache(), &[], &[]);
    assert_eq!(p.run.code, 0, "{p:?}");
    assert_eq!(p.verdict(), "READY", "{p:?}");
    assert_eq!(p.state(), "ran", "{p:?}");
    assert!(p.entry().is_empty(), "{p:?}");
    assert_eq!(p.base_rows("pytest").len(), 1, "{p:?}");
    let rows = p.cache_rows();
    assert_eq!(rows.len(), 1, "{p:?}");
    assert!(
        rows[0].contains("is not used") && rows[0].contains("symlink"),
        "{p:?}"
    );
    assert!(common::is_symlink(&link));
    assert!(files(&elsewhere).is_empty(), "{:?}", files(&elsewhere));
}

// ----------------------------------------------------------------------------------------------
// A flake
// ----------------------------------------------------------------------------------------------

#[test]
fn a_flaky_base_test_is_not_kept() {
    let place = Place::new();
    let cache = place.cache();
    let (r, base) = pytest_base();
    let counter = r.shared.path().join("counter").display().to_string();
    r.write("svc/refund.py", SERVICE_HEAD);
    // At head (the fix is there) it passes; at base it fails on its first run and passes on
    // its second, by a counter outside the worktrees.
    r.write(
        &test_file(),
        &format!(
            "import os\nfrom svc.refund import refund\n\ndef test_marks_{}():\n    if refund({{}}).get('status') == 'refunded':\n        return\n    p = os.environ['FLAKE_COUNTER']\n    n = int(open(p).read()) if os.path.exists(p) else 0\n    open(p, 'w').write(str(n + 1))\n    assert n % 2 == 1\n",
            ident(ID)
        ),
    );
    pytest_acceptance(&r, "");
    r.commit("head 1");
    let p = push(
        &r,
        &base,
        &cache,
        &["--runs", "2"],
        &[("FLAKE_COUNTER", counter.as_str())],
    );
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "2", "{p:?}");
    assert_eq!(p.state(), "ran", "{p:?}");
    assert!(p.entry().is_empty(), "{p:?}");
    assert!(
        p.note().contains("base's results are not kept")
            && p.note().contains("gave mixed results at base (a flake)"),
        "{p:?}"
    );
    assert_eq!(p.base_rows("pytest").len(), 2, "{p:?}");
    assert!(names(&cache, "entries").is_empty(), "{p:?}");
    assert!(names(&cache, "sha256").is_empty(), "{p:?}");
}

// ----------------------------------------------------------------------------------------------
// cargo test
// ----------------------------------------------------------------------------------------------

const LIB_BASE: &str =
    "pub fn clamp(x: i32, lo: i32, _hi: i32) -> i32 {\n    if x < lo { lo } else { x }\n}\n";
const LIB_HEAD: &str = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else if x > hi { hi } else { x }\n}\n";
const CLAMP_TEST: &str =
    "#[test]\nfn clamps_high() {\n    assert_eq!(clamp::clamp(50, 0, 10), 10);\n}\n";

#[test]
fn cargo_a_push_that_changes_only_code_reuses_base_and_a_changed_test_runs_it_again() {
    require_tool("cargo", &["--version"], "install Rust with rustup");
    let place = Place::new();
    let cache = place.cache();
    let r = Repo::new();
    r.write(
        "Cargo.toml",
        "[package]\nname = \"clamp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    r.write(".gitignore", "/target\n");
    r.write("src/lib.rs", LIB_BASE);
    let base = r.commit("base");
    r.write("src/lib.rs", LIB_HEAD);
    let test = format!("tests/clamp_{}.rs", ident("clamps-high"));
    r.write(&test, CLAMP_TEST);
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: clamps-high\n    ac: Values above the range are clamped to its top.\nrunners:\n  - kind: cargo\n",
    );
    let head1 = r.commit("head 1");
    let first = push(&r, &base, &cache, &[], &[]);
    assert_eq!(first.run.code, 0, "{first:?}");
    assert_eq!(first.verdict(), "READY", "{first:?}");
    assert_eq!(first.state(), "stored", "{first:?}");
    assert!(!first.base_rows("cargo").is_empty(), "{first:?}");
    assert_eq!(first.base_outcomes()[0].2, "fail", "{first:?}");

    r.write("src/lib.rs", &format!("{LIB_HEAD}\n// push 2\n"));
    r.commit("head 2");
    let second = push(&r, &base, &cache, &[], &[]);
    assert_reused(&second, &first, &head1, "cargo");

    r.write(&test, &format!("{CLAMP_TEST}\n// push 3\n"));
    r.commit("head 3");
    let third = push(&r, &base, &cache, &[], &[]);
    assert_ran(&third, "cargo");
    assert!(
        third
            .note()
            .contains(&format!("the files laid over base ({test})")),
        "{third:?}"
    );
    assert_eq!(third.verdict(), "READY", "{third:?}");
    assert!(!r.exists("target"));
}

// ----------------------------------------------------------------------------------------------
// go test
// ----------------------------------------------------------------------------------------------

#[test]
fn go_a_push_that_changes_only_code_reuses_base() {
    require_tool("go", &["version"], "apt-get install golang-go");
    let place = Place::new();
    let cache = place.cache();
    let r = Repo::new();
    r.write("go.mod", "module example.com/clamp\n\ngo 1.19\n");
    let clamp_base = "package clamp\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\treturn x\n}\n";
    let clamp_head = "package clamp\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\tif x > hi {\n\t\treturn hi\n\t}\n\treturn x\n}\n";
    r.write("clamp.go", clamp_base);
    let base = r.commit("base");
    r.write("clamp.go", clamp_head);
    r.write(
        &format!("high_{}_test.go", ident("clamps-high")),
        "package clamp\n\nimport \"testing\"\n\nfunc TestHigh(t *testing.T) {\n\tif Clamp(50, 0, 10) != 10 {\n\t\tt.Fatal(\"not clamped\")\n\t}\n}\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: clamps-high\n    ac: High values clamp.\n",
    );
    let head1 = r.commit("head 1");
    let args = |cache: &str, base: &str| -> Vec<String> {
        [
            "claim-check",
            "--base",
            base,
            "--base-cache",
            cache,
            "--format",
            "json",
        ]
        .map(String::from)
        .to_vec()
    };
    let run =
        |a: &[String]| Push::from(r.shipmoor_go(&a.iter().map(String::as_str).collect::<Vec<_>>()));
    let first = run(&args(&cache, &base));
    assert_eq!(first.run.code, 0, "{first:?}");
    assert_eq!(first.state(), "stored", "{first:?}");
    assert!(!first.base_rows("go").is_empty(), "{first:?}");
    r.write("clamp.go", &format!("{clamp_head}\n// push 2\n"));
    r.commit("head 2");
    let second = run(&args(&cache, &base));
    assert_reused(&second, &first, &head1, "go");
}
