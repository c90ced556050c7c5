//! The statement's SLSA fields to the letter of in-toto's ResourceDescriptor and SLSA VSA v1,
//! checked on real runs: absolute URIs, the digests of what they name (re-read with git), `FAILED`
//! in `verifiedLevels`, no local path anywhere, the evidence cited in the extension; and the
//! statements an earlier release wrote still replay and admit.

use std::process::Command;

use crate::common;

use common::{require_pytest, Repo, Run};
use serde_json::Value;

const EXT: &str = "https://shipmoor.dev/claim-check/v1";

/// A pytest repository whose change claims `files` (each `(path, criterion id)`), with the
/// tagged test of each passing at head and failing at base: READY.
fn claiming(files: &[(&str, &str)]) -> (Repo, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("calc.py", "def add(a, b):\n    return 0\n");
    let mut tests = String::from("from calc import add\n\n");
    for (_, id) in files {
        tests.push_str(&format!(
            "def test_{ident}():\n    # {tag}\n    assert add(1, 2) == 3\n\n",
            ident = common::ident(id),
            tag = common::tag(id)
        ));
    }
    r.write("test_calc.py", &tests);
    let base = r.commit("base");
    r.write("calc.py", "def add(a, b):\n    return a + b\n");
    for (path, id) in files {
        r.write(
            path,
            &format!("version: 1\ncriteria:\n  - id: {id}\n    ac: Adding works ({id}).\n"),
        );
    }
    r.commit("head");
    (r, base)
}

fn statement(r: &Repo) -> Value {
    r.json(".shipmoor/claim-check.vsa.json")
}

/// Asserts what every format-5 statement holds, whatever its claim: returns the predicate.
fn to_the_letter(r: &Repo, st: &Value) -> Value {
    let head = r.git(&["rev-parse", "HEAD"]);
    let p = st["predicate"].clone();
    let repo = common::ORIGIN.trim_end_matches(".git");
    assert_eq!(p["resourceUri"], format!("git+{repo}@{head}"), "{p}");
    assert_eq!(st["subject"][0]["name"], repo);
    let text = st.to_string();
    let root = r.path().canonicalize().unwrap();
    assert!(
        !text.contains(root.to_str().unwrap()),
        "a local path: {text}"
    );
    assert!(!text.contains("file://"), "{text}");
    assert!(p.get("inputAttestations").is_none(), "{p}");
    let evidence = p[EXT]["evidence"].as_array().unwrap();
    assert!(!evidence.is_empty());
    for e in evidence {
        let hex = e.as_str().unwrap().strip_prefix("sha256:").unwrap();
        assert!(r.exists(&format!(".shipmoor/evidence/sha256/{hex}")), "{e}");
    }
    assert_eq!(p[EXT]["format_version"], 5);
    let uri = p["policy"]["uri"].as_str().unwrap();
    assert!(
        uri.starts_with(&format!("git+{repo}@{head}#")) || uri.starts_with("urn:"),
        "not absolute: {uri}"
    );
    p
}

/// One acceptance file: `policy` names it at head, with its bytes' SHA-256 and its blob id as
/// git gives them; READY is PASSED with no `FAILED` level.
#[test]
fn one_claimed_file_is_the_policy_with_its_own_digests() {
    let (r, base) = claiming(&[(".shipmoor/changes/add.yaml", "adds")]);
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    let st = statement(&r);
    let p = to_the_letter(&r, &st);
    let head = r.git(&["rev-parse", "HEAD"]);
    let path = ".shipmoor/changes/add.yaml";
    assert_eq!(
        p["policy"]["uri"],
        format!("git+https://git.example.com/acme/shop@{head}#{path}")
    );
    let blob = r.git(&["rev-parse", &format!("{head}:{path}")]);
    assert_eq!(p["policy"]["digest"]["gitBlob"], blob);
    let bytes = Command::new("git")
        .args(["cat-file", "blob", &blob])
        .current_dir(r.path())
        .output()
        .unwrap()
        .stdout;
    assert_eq!(
        p["policy"]["digest"]["sha256"],
        shipmoor::evidence::sha256_hex(&bytes)
    );
    // The claim's canonical digest stays in the extension, and differs from the file's.
    let claim = p[EXT]["acceptance"]["sha256"].as_str().unwrap();
    assert_ne!(p["policy"]["digest"]["sha256"], claim);
    assert_eq!(p["verificationResult"], "PASSED");
    assert_eq!(
        p["verifiedLevels"],
        serde_json::json!(["SHIPMOOR_CLAIM_CHECK_READY"])
    );
    // Replay with the repository at hand re-reads the file the policy names.
    let replay = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
    ]);
    assert_eq!(replay.code, 0, "{replay:?}");
    assert!(replay.stdout.contains("statement format 5"), "{replay:?}");
}

/// Several files: `policy` names the directory that holds them, by its tree id; BLOCKED is
/// FAILED, with `FAILED` beside Claim Check's level.
#[test]
fn several_files_are_their_directory_and_a_failure_says_failed() {
    let (r, base) = claiming(&[
        (".shipmoor/changes/add.yaml", "adds"),
        (".shipmoor/changes/more.yaml", "adds-more"),
    ]);
    // The second criterion's test fails at head.
    let tests = r
        .read("test_calc.py")
        .rsplit_once("assert add(1, 2) == 3")
        .map(|(a, b)| format!("{a}assert add(1, 2) == 4{b}"))
        .unwrap();
    r.write("test_calc.py", &tests);
    r.commit("head, with a failing test");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    let st = statement(&r);
    let p = to_the_letter(&r, &st);
    let head = r.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        p["policy"]["uri"],
        format!("git+https://git.example.com/acme/shop@{head}#.shipmoor")
    );
    assert_eq!(
        p["policy"]["digest"],
        serde_json::json!({"gitTree": r.git(&["rev-parse", &format!("{head}:.shipmoor")])})
    );
    assert_eq!(p["verificationResult"], "FAILED");
    assert_eq!(
        p["verifiedLevels"],
        serde_json::json!(["SHIPMOOR_CLAIM_CHECK_BLOCKED", "FAILED"])
    );
    let replay = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
    ]);
    assert_eq!(replay.code, 0, "{replay:?}");
}

/// A claim no file at head holds (a draft derived from text): `policy` names the claim's own
/// canonical document, whose digest is the claim's.
#[test]
fn a_derived_claim_names_its_own_document() {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("calc.py", "def add(a, b):\n    return 0\n");
    r.write(
        "test_calc.py",
        &format!(
            "from calc import add\n\ndef test_adds():\n    # {}\n    assert add(1, 2) == 3\n",
            common::tag("adding-works")
        ),
    );
    let base = r.commit("base");
    r.write("calc.py", "def add(a, b):\n    return a + b\n");
    r.commit("head");
    let from = r.tmp.path().join("pr.md");
    std::fs::write(&from, "- [ ] Adding works\n").unwrap();
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--from",
        from.to_str().unwrap(),
    ]);
    assert!(matches!(run.code, 0 | 1 | 4), "{run:?}");
    let st = statement(&r);
    let p = to_the_letter(&r, &st);
    let claim = p[EXT]["acceptance"]["sha256"].as_str().unwrap();
    assert_eq!(
        p["policy"]["uri"],
        format!("urn:shipmoor:claim:sha256:{claim}")
    );
    assert_eq!(p["policy"]["digest"], serde_json::json!({"sha256": claim}));
}

/// No remote, or a local one: an input error that says how to name the repository, nothing
/// written; `--resource-uri` names it, in the statement's one spelling.
#[test]
fn a_repository_without_a_remote_is_named_or_refused() {
    let (r, base) = claiming(&[(".shipmoor/changes/add.yaml", "adds")]);
    let before = r.status();
    for setup in [
        vec!["remote", "remove", "origin"],
        vec!["remote", "add", "origin", "/srv/git/shop.git"],
    ] {
        r.git(&setup.iter().map(|s| &**s).collect::<Vec<_>>());
        let run = r.shipmoor(&["claim-check", "--base", &base]);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(run.stderr.contains("--resource-uri"), "{run:?}");
        assert!(run.stderr.contains("git remote add origin"), "{run:?}");
        assert!(!r.exists(".shipmoor/claim-check.vsa.json"));
        assert!(!r.exists(".shipmoor/evidence"));
        assert_eq!(r.status(), before);
    }
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--resource-uri",
        "https://x-access-token:ghs_secret@github.com/acme/shop.git/",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let st = statement(&r);
    let head = r.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        st["predicate"]["resourceUri"],
        format!("git+https://github.com/acme/shop@{head}")
    );
    assert!(!st.to_string().contains("ghs_secret"));
    let bad = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--resource-uri",
        "file:///srv/shop",
    ]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(
        bad.stderr
            .contains("--resource-uri: `file:///srv/shop` is a file: URL"),
        "{bad:?}"
    );
}

/// A statement the previous format wrote (format 3: a relative `policy`, the evidence as
/// `inputAttestations`, a `.git` suffix), signed with a key: replay verifies it, and a policy
/// that names the repository without `.git` admits its repository.
#[test]
fn a_format_3_statement_still_replays_and_its_repository_still_matches() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/format-3"
    );
    let shipmoor = |args: &[&str]| -> Run {
        Command::new(env!("CARGO_BIN_EXE_shipmoor"))
            .args(args)
            .current_dir(fixture)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
            .into()
    };
    let head = "3d231e30ca8608f5c526eff725398be132ecc793";
    for form in ["claim-check.vsa.sigstore.json", "claim-check.vsa.dsse.json"] {
        let run = shipmoor(&[
            "replay",
            form,
            "--key",
            "shipmoor.pub",
            "--commit",
            head,
            "--evidence",
            "evidence",
            "--format",
            "json",
        ]);
        assert_eq!(run.code, 0, "{run:?}");
        let v: Value = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(v["format_version"], 3);
        assert_eq!(v["verdict"], "BLOCKED");
    }
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.yaml");
    std::fs::write(
        &policy,
        format!(
            "version: 1\nrepositories: [\"git+https://github.com/example/refund\"]\nsigners:\n  - key: {fixture}/shipmoor.pub\n"
        ),
    )
    .unwrap();
    // The artifact it speaks for: the commit object, by the SHA-256 its subject carries.
    let st: Value =
        serde_json::from_slice(&std::fs::read(format!("{fixture}/claim-check.vsa.json")).unwrap())
            .unwrap();
    let subject = format!(
        "sha256:{}",
        st["subject"][0]["digest"]["sha256"].as_str().unwrap()
    );
    let run = shipmoor(&[
        "admit",
        "--subject",
        &subject,
        "--policy",
        policy.to_str().unwrap(),
        "--attestation",
        "claim-check.vsa.sigstore.json",
        "--format",
        "json",
    ]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    let checks = v["attestations"][0]["checks"].as_array().unwrap();
    let check = |name: &str| checks.iter().find(|c| c["name"] == name).unwrap()["status"].clone();
    assert_eq!(check("resource_uri"), "ok", "{v}");
    // BLOCKED is denied all the same, for its verdict.
    assert_eq!(v["decision"], "deny", "{v}");
    assert_eq!(check("verification_result"), "failed", "{v}");
}
