//! `claim-check --shard K/N` and `shipmoor fuse` (book: sharding.md): shards run as separate processes
//! on separate clones, fused, give the single run's fix packet, verify.md and VSA byte for
//! byte, which replay and admit accept; every disagreement between shards is an input error
//! that names the shard and writes nothing.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{ident, require_pytest, require_tool, Repo, Run, GOLDEN_KEY, GOLDEN_PUBLIC_KEY};

const IMAGE: &str = "sha256:5eed000000000000000000000000000000000000000000000000000000000042";

/// The outputs a run writes in the repository, by their default paths.
const OUTPUTS: [&str; 5] = [
    ".shipmoor/claim-check.fixes.json",
    ".shipmoor/verify.md",
    ".shipmoor/claim-check.vsa.json",
    ".shipmoor/claim-check.vsa.dsse.json",
    ".shipmoor/claim-check.vsa.sigstore.json",
];
const EVIDENCE: &str = ".shipmoor/evidence";

/// A crate and a Python module over two runners (cargo, pytest), fixed from base to head, with
/// nine criteria: three bound to cargo tests (one test file each), five to pytest tests (two of them
/// in one file), one a
/// `check.pattern` (bound to no runner). Returns the repository and base.
fn two_runner_repo() -> (Repo, String) {
    require_pytest();
    require_tool("cargo", &["--version"], "install Rust with rustup");
    let r = Repo::new();
    r.git(&[
        "remote",
        "set-url",
        "origin",
        "https://github.com/acme/calc.git",
    ]);
    r.write(
        "Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    r.write(".gitignore", "/target\n__pycache__/\n");
    r.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\npub fn mul(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn neg(a: i32) -> i32 {\n    a\n}\n",
    );
    r.write("pytest.ini", "[pytest]\ntestpaths = py\npythonpath = .\n");
    r.write(
        "pycalc.py",
        "def upper(s):\n    return s\n\ndef strip(s):\n    return s\n\ndef double(x):\n    return x\n",
    );
    let base = r.commit("base");
    r.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\npub fn mul(a: i32, b: i32) -> i32 {\n    a * b\n}\n\n/// The negation of a.\npub fn neg(a: i32) -> i32 {\n    -a\n}\n",
    );
    r.write(
        "pycalc.py",
        "def upper(s):\n    return s.upper()\n\ndef strip(s):\n    return s.strip()\n\ndef double(x):\n    return 2 * x\n",
    );
    for (id, call, want) in [
        ("adds", "calc::add(2, 3)", "5"),
        ("multiplies", "calc::mul(2, 3)", "6"),
        ("negates", "calc::neg(2)", "-2"),
    ] {
        r.write(
            &format!("tests/calc_{}.rs", ident(id)),
            &format!("#[test]\nfn works() {{\n    assert_eq!({call}, {want});\n}}\n"),
        );
    }
    for (id, call, want) in [
        ("uppercases", "upper('ab')", "'AB'"),
        ("strips", "strip(' a ')", "'a'"),
        ("doubles", "double(4)", "8"),
    ] {
        r.write(
            &format!("py/test_{}.py", ident(id)),
            &format!("from pycalc import *\n\ndef test_works():\n    assert {call} == {want}\n"),
        );
    }
    // Two criteria whose tests share one file, and so one invocation, in different shards.
    r.write(
        "py/test_trims.py",
        &format!(
            "from pycalc import *\n\ndef test_left_{}():\n    assert strip(' a') == 'a'\n\ndef test_right_{}():\n    assert strip('a ') == 'a'\n",
            ident("trims-left"),
            ident("trims-right")
        ),
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: adds\n    ac: Two numbers add up.\n  - id: uppercases\n    ac: Text is upper-cased.\n  - id: multiplies\n    ac: Two numbers multiply.\n  - id: strips\n    ac: Text is stripped.\n  - id: negates\n    ac: A number is negated.\n  - id: doubles\n    ac: A number is doubled.\n  - id: documents-neg\n    ac: The negation is documented.\n    check:\n      pattern:\n        paths: [\"src/**\"]\n        regex: \"The negation of\"\n  - id: trims-left\n    ac: Text is trimmed on the left.\n  - id: trims-right\n    ac: Text is trimmed on the right.\n",
    );
    let base_short = base.clone();
    r.commit("head");
    (r, base_short)
}

/// A clone of `r` in a directory of its own, as a CI job checks the repository out.
fn clone(r: &Repo) -> Repo {
    let dir = tempfile::Builder::new()
        .prefix("cc-clone-")
        .tempdir()
        .unwrap();
    let tmp = tempfile::Builder::new()
        .prefix("cc-tmp-")
        .tempdir()
        .unwrap();
    let out = std::process::Command::new("git")
        .args(["clone", "--quiet"])
        .arg(r.path())
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let shared = tempfile::Builder::new()
        .prefix("cc-shared-")
        .tempdir()
        .unwrap();
    let c = Repo { dir, tmp, shared };
    c.git(&["remote", "set-url", "origin", crate::common::ORIGIN]);
    c.git(&["config", "user.name", "Test"]);
    c.git(&["config", "user.email", "test@example.com"]);
    c
}

/// What a run wrote: every output's bytes (absent ones left out) and the evidence the
/// statement cites (its records and the logs they point to), each checked to be in the store;
/// the outputs are then removed, so that the next run in the same place writes afresh.
///
/// The cited evidence is compared, not the whole store: the store also keeps the output of
/// cargo's build steps, which no record cites and whose `fresh` flags say what the worktree had
/// built before (a shard builds fewer targets at base than a single run does).
struct Written {
    files: BTreeMap<&'static str, Vec<u8>>,
    evidence: BTreeSet<String>,
}

fn take_outputs(r: &Repo) -> Written {
    let mut files = BTreeMap::new();
    for f in OUTPUTS {
        let p = r.path().join(f);
        if let Ok(b) = std::fs::read(&p) {
            files.insert(f, b);
            std::fs::remove_file(p).unwrap();
        }
    }
    let dir = r.path().join(EVIDENCE).join("sha256");
    let statement: serde_json::Value =
        serde_json::from_slice(&files[".shipmoor/claim-check.vsa.json"]).unwrap();
    let mut evidence = BTreeSet::new();
    for input in statement["predicate"]["https://shipmoor.dev/claim-check/v1"]["evidence"]
        .as_array()
        .unwrap()
    {
        let hex = input.as_str().unwrap()["sha256:".len()..].to_string();
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(&hex)).unwrap()).unwrap();
        for log in ["stdout", "stderr", "results"] {
            if let Some(p) = record[log].as_str() {
                let blob = p.trim_start_matches("sha256:").to_string();
                assert!(
                    dir.join(&blob).exists(),
                    "{log} of record {hex} is in the store"
                );
                evidence.insert(blob);
            }
        }
        evidence.insert(hex);
    }
    std::fs::remove_dir_all(r.path().join(EVIDENCE)).unwrap();
    Written { files, evidence }
}

/// The flags both the single run and the fuse take: signed with the committed key (a
/// deterministic signature), the image a subject.
fn signing_flags() -> Vec<String> {
    vec![
        "--sign".into(),
        "key".into(),
        "--key".into(),
        GOLDEN_KEY.into(),
        "--subject".into(),
        format!("calc={IMAGE}"),
    ]
}

fn args<'a>(fixed: &'a [&'a str], more: &'a [String]) -> Vec<&'a str> {
    fixed
        .iter()
        .copied()
        .chain(more.iter().map(String::as_str))
        .collect()
}

/// Runs the N shards in parallel, each in a clone of its own, into `out/shard-K`.
fn run_shards(r: &Repo, base: &str, n: usize, by: &str, epoch: &str, out: &Path) -> Vec<PathBuf> {
    let clones: Vec<Repo> = (0..n).map(|_| clone(r)).collect();
    let dirs: Vec<PathBuf> = (1..=n).map(|k| out.join(format!("shard-{k}"))).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = clones
            .iter()
            .zip(&dirs)
            .enumerate()
            .map(|(i, (c, dir))| {
                let share = format!("{}/{n}", i + 1);
                s.spawn(move || {
                    c.shipmoor_env(
                        &[
                            "claim-check",
                            "--base",
                            base,
                            "--shard",
                            &share,
                            "--shard-by",
                            by,
                            "--shard-out",
                            dir.to_str().unwrap(),
                        ],
                        &[("SOURCE_DATE_EPOCH", epoch)],
                    )
                })
            })
            .collect();
        for (k, h) in handles.into_iter().enumerate() {
            let run = h.join().unwrap();
            assert_eq!(run.code, 0, "shard {}: {run:?}", k + 1);
            assert!(
                run.stderr.contains(&format!("shard {}/{n}", k + 1))
                    && run.stderr.contains("shard.json"),
                "{run:?}"
            );
        }
    });
    // A shard decides no verdict and writes none of a run's outputs.
    for c in &clones {
        for f in OUTPUTS.iter().chain([&EVIDENCE]) {
            assert!(!c.exists(f), "a shard wrote {f}");
        }
    }
    dirs
}

fn fuse(r: &Repo, dirs: &[PathBuf], extra: &[String], epoch: &str) -> Run {
    let mut a: Vec<String> = vec!["fuse".into()];
    a.extend(extra.iter().cloned());
    a.extend(dirs.iter().map(|d| d.display().to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    r.shipmoor_env(&a, &[("SOURCE_DATE_EPOCH", epoch)])
}

fn assert_same(single: &Written, fused: &Written, what: &str) {
    assert_eq!(
        single.files.keys().collect::<Vec<_>>(),
        fused.files.keys().collect::<Vec<_>>(),
        "{what}: the same outputs"
    );
    // In the order they derive from each other: the statement before its signed forms.
    for name in OUTPUTS.iter().filter(|n| single.files.contains_key(*n)) {
        let (one, other) = (&single.files[name], &fused.files[name]);
        if one != other {
            let (one, other) = (String::from_utf8_lossy(one), String::from_utf8_lossy(other));
            let at = one
                .lines()
                .zip(other.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            let around = |t: &str| {
                t.lines()
                    .skip(at.saturating_sub(3))
                    .take(30)
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            panic!(
                "{what}: {name} differs from line {}:\n--- single\n{}\n--- fused\n{}",
                at + 1,
                around(&one),
                around(&other)
            );
        }
    }
    assert_eq!(
        single.evidence, fused.evidence,
        "{what}: the same cited evidence"
    );
}

#[test]
fn three_shards_on_three_clones_fuse_to_the_single_runs_outputs_byte_for_byte() {
    let (r, base) = two_runner_repo();
    let epoch = common::now_epoch();
    let signing = signing_flags();
    let single = r.shipmoor_env(
        &args(&["claim-check", "--base", &base], &signing),
        &[("SOURCE_DATE_EPOCH", &epoch)],
    );
    assert_eq!(single.code, 0, "{single:?}");
    // Every criterion was decided by the floor, over both runners.
    let md = r.read(".shipmoor/verify.md");
    assert!(md.contains("cargo") && md.contains("pytest"), "{md}");
    let single_stdout = single.stdout.clone();
    let single = take_outputs(&r);

    let shards = tempfile::tempdir().unwrap();
    let dirs = run_shards(&r, &base, 3, "criterion", &epoch, shards.path());
    for (k, dir) in dirs.iter().enumerate() {
        let text = std::fs::read_to_string(dir.join("shard.json")).unwrap();
        common::assert_schema_is_strict("claim_check.shard.v1", &text);
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["shard"]["k"], k + 1);
        // Round robin over the nine criteria: 1 gets positions 0, 3, 6; 2 gets 1, 4, 7; 3 gets
        // 2, 5, 8.
        let positions: Vec<u64> = doc["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["position"].as_u64().unwrap())
            .collect();
        let want: Vec<u64> = (0..9).filter(|p| p % 3 == k as u64).collect();
        assert_eq!(positions, want);
        // A shard writes no verdict and no signature.
        assert!(!dir.join("claim-check.vsa.json").exists());
    }
    let run = fuse(&r, &dirs, &signing, &epoch);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout, single_stdout, "the terminal report");
    // replay and admit take the fused attestation with the merged evidence.
    let replay = r.shipmoor_env(
        &[
            "replay",
            ".shipmoor/claim-check.vsa.dsse.json",
            "--key",
            GOLDEN_PUBLIC_KEY,
        ],
        &[("SOURCE_DATE_EPOCH", &epoch)],
    );
    assert_eq!(replay.code, 0, "{replay:?}");
    assert!(replay.stdout.starts_with("Replay  VALID"), "{replay:?}");
    std::fs::create_dir_all(r.path().join("admission")).unwrap();
    std::fs::copy(
        GOLDEN_PUBLIC_KEY,
        r.path().join("admission/claim-check.pub"),
    )
    .unwrap();
    std::fs::write(
        r.path().join("admission/policy.yaml"),
        "version: 1\nallowed_verdicts: [\"READY\"]\nfloor_required: [adds, uppercases, negates]\nmin_policy_version: v3\nmax_age: 1d\nrepositories: [\"git+https://github.com/acme/*\"]\nsigners:\n  - key: claim-check.pub\n",
    )
    .unwrap();
    let admit = r.shipmoor(&[
        "admit",
        "--policy",
        "admission/policy.yaml",
        "--attestation",
        ".shipmoor/claim-check.vsa.sigstore.json",
        "--subject",
        IMAGE,
    ]);
    assert_eq!(admit.code, 0, "{admit:?}");
    std::fs::remove_dir_all(r.path().join("admission")).unwrap();
    let fused = take_outputs(&r);
    assert_same(&single, &fused, "--shard-by criterion");

    // By runner: cargo's criteria and the pattern (no runner) in shard 1, pytest's in 2, and
    // none in 3; the same outputs again.
    let by_runner = tempfile::tempdir().unwrap();
    let dirs = run_shards(&r, &base, 3, "runner", &epoch, by_runner.path());
    let ids = |dir: &Path| -> Vec<String> {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("shard.json")).unwrap())
                .unwrap();
        assert_eq!(doc["shard"]["by"], "runner");
        doc["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        ids(&dirs[0]),
        ["adds", "multiplies", "negates", "documents-neg"]
    );
    assert_eq!(
        ids(&dirs[1]),
        [
            "uppercases",
            "strips",
            "doubles",
            "trims-left",
            "trims-right"
        ]
    );
    assert!(ids(&dirs[2]).is_empty());
    let run = fuse(&r, &dirs, &signing, &epoch);
    assert_eq!(run.code, 0, "{run:?}");
    assert_same(&single, &take_outputs(&r), "--shard-by runner");
}

// ----------------------------------------------------------------------------------------------
// Shards that do not fuse
// ----------------------------------------------------------------------------------------------

/// Three pytest criteria (each its own test file), fixed from base to head, and a second head
/// on top of the first. Returns the repository, base, head and the second head.
fn pytest_repo() -> (Repo, String, String, String) {
    require_pytest();
    let r = Repo::new();
    r.write(
        "pytest.ini",
        "[pytest]\ntestpaths = tests\npythonpath = .\n",
    );
    r.write("m.py", "def one():\n    return 0\n");
    let base = r.commit("base");
    r.write("m.py", "def one():\n    return 1\n");
    let mut yaml = String::from("version: 1\ncriteria:\n");
    for id in ["first", "second", "third"] {
        r.write(
            &format!("tests/test_{}.py", ident(id)),
            "from m import one\n\ndef test_one():\n    assert one() == 1\n",
        );
        yaml.push_str(&format!("  - id: {id}\n    ac: The {id} holds.\n"));
    }
    r.write(".shipmoor/acceptance.yaml", &yaml);
    let head = r.commit("head");
    r.write("notes.txt", "more\n");
    let head2 = r.commit("another head");
    r.git(&["checkout", "--quiet", &head]);
    (r, base, head, head2)
}

fn shard(r: &Repo, base: &str, head: &str, share: &str, dir: &Path) {
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        base,
        "--head",
        head,
        "--shard",
        share,
        "--shard-out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
}

/// `fuse DIRS…` is an input error that names `named`, and writes nothing.
fn assert_refused(r: &Repo, dirs: &[&Path], named: &str, why: &str) {
    let mut a = vec!["fuse"];
    a.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    let run = r.shipmoor(&a);
    assert_eq!(run.code, 2, "{why}: {run:?}");
    assert!(run.stderr.contains(named), "{why}: names {named}: {run:?}");
    for f in OUTPUTS.iter().chain([&EVIDENCE]) {
        assert!(!r.exists(f), "{why}: {f} was written");
    }
}

#[test]
fn shards_that_disagree_or_were_changed_do_not_fuse() {
    let (r, base, head, head2) = pytest_repo();
    let out = tempfile::tempdir().unwrap();
    let at = |name: &str| out.path().join(name);
    for k in 1..=3 {
        shard(&r, &base, &head, &format!("{k}/3"), &at(&format!("s{k}")));
    }
    shard(&r, &base, &head2, "2/3", &at("other-head"));
    shard(&r, &base, &head, "2/2", &at("of-two"));
    let (s1, s2, s3) = (at("s1"), at("s2"), at("s3"));
    // The three fuse (so what follows fails for its own reason); their outputs are removed.
    let ok = r.shipmoor(&[
        "fuse",
        s1.to_str().unwrap(),
        s2.to_str().unwrap(),
        s3.to_str().unwrap(),
    ]);
    assert_eq!(ok.code, 0, "{ok:?}");
    take_outputs(&r);

    assert_refused(&r, &[&s1, &s2], "shard 3/3 is missing", "a missing shard");
    assert_refused(
        &r,
        &[&s1, &at("other-head"), &s3],
        "other-head",
        "a shard from another head",
    );
    let copy = at("copy-of-2");
    common::copy_dir(&s2, &copy);
    assert_refused(
        &r,
        &[&s1, &s2, &copy, &s3],
        "copy-of-2",
        "two copies of one shard",
    );
    assert_refused(
        &r,
        &[&s1, &at("of-two"), &s3],
        "of-two",
        "a shard count mismatch",
    );

    // A criterion in no shard: shard 2's one entry taken out of its result.
    let dropped = at("dropped");
    common::copy_dir(&s2, &dropped);
    let file = dropped.join("shard.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    doc["entries"] = serde_json::json!([]);
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    assert_refused(
        &r,
        &[&s1, &dropped, &s3],
        "criterion `second` is in no shard (shard 2/3 at",
        "a criterion in no shard",
    );
    assert_refused(
        &r,
        &[&s1, &dropped, &s3],
        dropped.to_str().unwrap(),
        "a criterion in no shard",
    );

    // An evidence blob changed after the shard wrote it.
    let tampered = at("tampered");
    common::copy_dir(&s3, &tampered);
    let blob = std::fs::read_dir(tampered.join("evidence/sha256"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&blob).unwrap();
    bytes.extend_from_slice(b" ");
    std::fs::write(&blob, bytes).unwrap();
    assert_refused(&r, &[&s1, &s2, &tampered], "tampered", "a tampered blob");
    assert_refused(
        &r,
        &[&s1, &s2, &tampered],
        "does not hash to its name",
        "a tampered blob",
    );

    // A disposition changed to cite evidence the shard does not hold.
    let forged = at("forged");
    common::copy_dir(&s1, &forged);
    let file = forged.join("shard.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    doc["entries"][0]["floor"]["evidence_all"] =
        serde_json::json!([format!("sha256:{}", "0".repeat(64))]);
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    assert_refused(
        &r,
        &[&forged, &s2, &s3],
        "which is none of its records",
        "forged evidence",
    );
    assert_refused(
        &r,
        &[&forged, &s2, &s3],
        forged.to_str().unwrap(),
        "forged evidence",
    );

    // Not a shard at all.
    let empty = at("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert_refused(&r, &[&s1, &s2, &empty], "empty", "no shard.json");
}

#[test]
fn the_shard_flags_are_checked_before_any_work() {
    let (r, base, _head, _) = pytest_repo();
    // --shard without --shard-out, and a K/N out of range: usage errors.
    for (flags, says) in [
        (vec!["--shard", "1/3"], "--shard needs --shard-out"),
        (
            vec!["--shard", "4/3", "--shard-out", "out"],
            "K must be from 1 to N",
        ),
        (
            vec!["--shard", "0/3", "--shard-out", "out"],
            "K must be from 1 to N",
        ),
        (
            vec!["--shard", "two", "--shard-out", "out"],
            "not of the form K/N",
        ),
    ] {
        let mut a = vec!["claim-check", "--base", &base];
        a.extend(flags);
        let run = r.shipmoor(&a);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(run.stderr.contains(says), "{says}: {run:?}");
        assert!(!r.exists("out"));
    }
    // A plain run stays a plain run whatever the CI's variables say.
    let run = r.shipmoor_env(
        &["claim-check", "--base", &base],
        &[("CI_NODE_INDEX", "2"), ("CI_NODE_TOTAL", "3")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(r.exists(".shipmoor/claim-check.vsa.json"));
    take_outputs(&r);
    // With --shard-out, GitLab's 1-based index and Buildkite's 0-based one name the shard.
    let out = tempfile::tempdir().unwrap();
    for (env, k) in [
        ([("CI_NODE_INDEX", "2"), ("CI_NODE_TOTAL", "3")], 2),
        (
            [
                ("BUILDKITE_PARALLEL_JOB", "0"),
                ("BUILDKITE_PARALLEL_JOB_COUNT", "3"),
            ],
            1,
        ),
    ] {
        let dir = out.path().join(format!("from-{}", env[0].0));
        let run = r.shipmoor_env(
            &[
                "claim-check",
                "--base",
                &base,
                "--shard-out",
                dir.to_str().unwrap(),
            ],
            &env,
        );
        assert_eq!(run.code, 0, "{run:?}");
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("shard.json")).unwrap())
                .unwrap();
        assert_eq!(doc["shard"]["k"], k);
        assert_eq!(doc["shard"]["n"], 3);
        assert!(!r.exists(".shipmoor/claim-check.vsa.json"));
    }
}

/// In full mode the fuse judges what the shards' floors left open, once, as a single run does:
/// the same BLOCKED verdict and the same outputs, the judge's evidence cited after the floor's.
#[test]
fn fuse_in_full_mode_judges_as_the_single_run_does() {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("svc/__init__.py", "");
    r.write("svc/refund.py", "def refund(order):\n    return order\n");
    let base = r.commit("base");
    r.write(
        "svc/refund.py",
        "def refund(order):\n    return order\n\ndef total(a, b):\n    return a + b\n",
    );
    r.write(
        &format!("tests/test_total_{}.py", ident("total")),
        "from svc.refund import total\n\ndef test_total():\n    assert total(1, 2) == 3\n",
    );
    r.write("tools/judge.py", common::BLOCKING_JUDGE);
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: total\n    ac: Totals add up.\n  - id: audit-log\n    ac: An audit log entry is written for every refund.\n    lane: judge\n  - id: receipt\n    ac: A receipt is sent.\n    required: false\njudge:\n  command: [\"python3\", \"tools/judge.py\"]\n",
    );
    r.commit("head");
    let single = r.shipmoor(&["claim-check", "--base", &base, "--mode", "full"]);
    assert_eq!(single.code, 1, "{single:?}");
    assert!(
        single.stdout.contains("stage3.byo_judge"),
        "{}",
        single.stdout
    );
    let single = take_outputs(&r);
    let out = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (1..=2).map(|k| out.path().join(format!("s{k}"))).collect();
    for (k, dir) in dirs.iter().enumerate() {
        // A shard needs no judge and writes no verdict, whatever the mode.
        let run = r.shipmoor(&[
            "claim-check",
            "--base",
            &base,
            "--mode",
            "full",
            "--shard",
            &format!("{}/2", k + 1),
            "--shard-out",
            dir.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(
            !run.stderr.contains("judge:"),
            "a shard ran the judge: {run:?}"
        );
        assert!(!r.exists(".shipmoor/claim-check.vsa.json"));
    }
    let mut a = vec!["fuse", "--mode", "full"];
    a.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    let run = r.shipmoor(&a);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("judge:"),
        "the fuse ran the judge: {run:?}"
    );
    assert_same(&single, &take_outputs(&r), "--mode full");
}

// ----------------------------------------------------------------------------------------------
// Shards whose stated results do not follow from their records
// ----------------------------------------------------------------------------------------------

/// Two pytest criteria, each its own test file: `fixed` (its test fails at base and passes at
/// head) and `unfixed` (its test fails at both), so the run is BLOCKED. Shard 1 of 2 holds
/// `fixed`, shard 2 `unfixed`. Returns the repository and base.
fn half_fixed_repo() -> (Repo, String) {
    require_pytest();
    let r = Repo::new();
    r.write(
        "pytest.ini",
        "[pytest]\ntestpaths = tests\npythonpath = .\n",
    );
    r.write("m.py", "def one():\n    return 0\n");
    let base = r.commit("base");
    r.write("m.py", "def one():\n    return 1\n");
    for (id, want) in [("fixed", 1), ("unfixed", 2)] {
        r.write(
            &format!("tests/test_{}.py", ident(id)),
            &format!("from m import one\n\ndef test_one():\n    assert one() == {want}\n"),
        );
    }
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: fixed\n    ac: One is one.\n  - id: unfixed\n    ac: One is two.\n",
    );
    r.commit("head");
    (r, base)
}

/// Shard 2's `shard.json` rewritten so that `unfixed` reads satisfied, its test passing at
/// head, as the change's code in that shard job could write it; its records untouched.
fn forge_satisfied(dir: &Path) -> serde_json::Value {
    let file = dir.join("shard.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let entry = &mut doc["entries"][0];
    assert_eq!(entry["id"], "unfixed");
    assert_eq!(entry["floor"]["result"], "unsatisfied");
    assert_eq!(entry["floor"]["tests"][0]["head"], "fail");
    entry["floor"]["result"] = "satisfied".into();
    entry["floor"]["reason"] = "the bound test fails at base and passes at head".into();
    entry["floor"]["tests"][0]["head"] = "pass".into();
    entry["floor"]["head_summary"] = "pass".into();
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    doc
}

/// `half_fixed_repo`'s two shards, each run on its own: the repository, its base, the
/// directory that holds them and the two shard directories.
fn half_fixed_shards() -> (Repo, String, tempfile::TempDir, PathBuf, PathBuf) {
    let (r, base) = half_fixed_repo();
    let out = tempfile::tempdir().unwrap();
    let (s1, s2) = (out.path().join("s1"), out.path().join("s2"));
    let head = r.git(&["rev-parse", "HEAD"]);
    shard(&r, &base, &head, "1/2", &s1);
    shard(&r, &base, &head, "2/2", &s2);
    (r, base, out, s1, s2)
}

/// The shards unchanged fuse to the single run's BLOCKED, and the fused result says its floor
/// ran in two shard jobs; a single run's result says nothing of shards.
#[test]
fn a_fused_result_records_the_shard_jobs_its_floor_ran_in() {
    let (r, base, _out, s1, s2) = half_fixed_shards();
    let run = r.shipmoor(&[
        "fuse",
        "--format",
        "json",
        s1.to_str().unwrap(),
        s2.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    common::assert_schema_is_strict("claim_check.run.v1", &run.stdout);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["result"]["verdict"], "BLOCKED");
    assert_eq!(
        doc["result"]["shards"],
        serde_json::json!({"n": 2, "by": "criterion"})
    );
    take_outputs(&r);
    let single = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(single.code, 1, "{single:?}");
    let doc: serde_json::Value = serde_json::from_str(&single.stdout).unwrap();
    assert!(doc["result"].get("shards").is_none(), "{doc:#}");
}

/// (a) Shard 2's `shard.json` says `unfixed` is satisfied, its test passing at head, while its
/// records say the test fails there: refused, naming the shard, the criterion, what it states
/// and what its records show, and nothing is written. So is the result alone changed.
#[test]
fn a_shard_whose_stated_result_its_records_contradict_does_not_fuse() {
    let (r, _base, out, s1, s2) = half_fixed_shards();
    let forged = out.path().join("forged");
    common::copy_dir(&s2, &forged);
    forge_satisfied(&forged);
    for named in [
        forged.to_str().unwrap(),
        "criterion unfixed: tests/test_ac_unfixed_",
        "reads `pass` at head but its evidence shows `fail`",
    ] {
        assert_refused(&r, &[&s1, &forged], named, "a forged result");
    }

    // Only the result changed: the records say the test fails at head, and the floor's rule
    // over them gives unsatisfied.
    let result_only = out.path().join("result-only");
    common::copy_dir(&s2, &result_only);
    let file = result_only.join("shard.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    doc["entries"][0]["floor"]["result"] = "satisfied".into();
    std::fs::write(&file, serde_json::to_vec_pretty(&doc).unwrap()).unwrap();
    assert_refused(
        &r,
        &[&s1, &result_only],
        "criterion unfixed reads satisfied but its evidence gives unsatisfied",
        "a forged result alone",
    );
}

/// (b) The forgery of (a), and the head record rewritten too (every byte of a shard may be the
/// attacker's), renamed to its new hash and relisted wherever `shard.json` names it: every
/// evidence file hashes to its name and every cited record is the shard's, and what the record
/// shows still is not what the shard states. Refused as (a) is.
#[test]
fn a_forged_shard_with_its_records_rehashed_does_not_fuse() {
    let (r, _base, out, s1, s2) = half_fixed_shards();
    let rehashed = out.path().join("rehashed");
    common::copy_dir(&s2, &rehashed);
    let doc = forge_satisfied(&rehashed);
    let pointer = doc["entries"][0]["floor"]["tests"][0]["head_evidence"][0]
        .as_str()
        .unwrap()
        .to_string();
    let old = pointer.trim_start_matches("sha256:").to_string();
    let store = rehashed.join("evidence/sha256");
    let mut record: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.join(&old)).unwrap()).unwrap();
    assert_eq!(record["outcome"], "fail");
    record["duration_ms"] = (record["duration_ms"].as_u64().unwrap() + 1).into();
    let bytes = serde_json::to_vec(&record).unwrap();
    let new = shipmoor::evidence::sha256_hex(&bytes);
    std::fs::remove_file(store.join(&old)).unwrap();
    std::fs::write(store.join(&new), &bytes).unwrap();
    let file = rehashed.join("shard.json");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.matches(&old).count() >= 3, "listed, a record, cited");
    std::fs::write(&file, text.replace(&old, &new)).unwrap();
    for named in [
        rehashed.to_str().unwrap(),
        "criterion unfixed: tests/test_ac_unfixed_",
        "reads `pass` at head but its evidence shows `fail`",
    ] {
        assert_refused(&r, &[&s1, &rehashed], named, "a forged result, rehashed");
    }
    let run = r.shipmoor(&["fuse", s1.to_str().unwrap(), rehashed.to_str().unwrap()]);
    assert!(
        !run.stderr.contains("does not hash") && !run.stderr.contains("none of its records"),
        "the evidence itself is in order: {run:?}"
    );
}

/// The shards' evidence comes from jobs that ran the change's code: a blob of a shard's store,
/// or its `sha256` directory, as a symlink (even to the very bytes it names) is refused, and
/// so is a symlink where the fuse writes the evidence store in its own checkout; exit 2 naming
/// it, nothing written. The shard as written then fuses.
#[test]
fn a_symlink_in_a_shards_evidence_or_where_the_store_goes_does_not_fuse() {
    let r = Repo::new();
    r.write("a.txt", "a");
    let base = r.commit("base");
    r.write("b.txt", "b");
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: b\n    ac: B is there.\n    check:\n      command: test -f b.txt\n",
    );
    let head = r.commit("head");
    let out = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let s1 = out.path().join("s1");
    shard(&r, &base, &head, "1/1", &s1);

    let linked = out.path().join("linked-blob");
    common::copy_dir(&s1, &linked);
    let blob = std::fs::read_dir(linked.join("evidence/sha256"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let copy = outside.path().join("blob");
    std::fs::copy(&blob, &copy).unwrap();
    std::fs::remove_file(&blob).unwrap();
    std::os::unix::fs::symlink(&copy, &blob).unwrap();
    assert_refused(&r, &[&linked], "linked-blob", "a symlinked blob");
    assert_refused(&r, &[&linked], "is a symlink", "a symlinked blob");

    let linked_dir = out.path().join("linked-dir");
    common::copy_dir(&s1, &linked_dir);
    let moved = outside.path().join("sha256");
    std::fs::rename(linked_dir.join("evidence/sha256"), &moved).unwrap();
    std::os::unix::fs::symlink(&moved, linked_dir.join("evidence/sha256")).unwrap();
    assert_refused(&r, &[&linked_dir], "linked-dir", "a symlinked store");
    assert_refused(&r, &[&linked_dir], "is a symlink", "a symlinked store");

    let store = outside.path().join("store");
    std::fs::create_dir(&store).unwrap();
    std::os::unix::fs::symlink(&store, r.path().join(EVIDENCE)).unwrap();
    let run = r.shipmoor(&["fuse", s1.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(".shipmoor/evidence is a symlink"),
        "{run:?}"
    );
    assert_eq!(std::fs::read_dir(&store).unwrap().count(), 0);
    for f in OUTPUTS {
        assert!(!r.exists(f), "{f} was written");
    }
    std::fs::remove_file(r.path().join(EVIDENCE)).unwrap();

    let ok = r.shipmoor(&["fuse", s1.to_str().unwrap()]);
    assert_eq!(ok.code, 0, "{ok:?}");
}
