//! `shipmoor acceptance tags --where`: the floor's tag scan over a checkout's tracked files.

use crate::common;

use common::{ident, tag, Repo};

fn repo() -> Repo {
    let r = Repo::new();
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: refund-idempotent\n    ac: A.\n  - id: audit-log\n    ac: B.\n",
    );
    r.write("src/lib.rs", "pub fn refund() {}\n");
    r.write(
        "tests/refund.rs",
        &format!(
            "#[test]\nfn plain() {{}}\n\n#[test]\nfn twice_{}() {{}}\n",
            ident("refund-idempotent")
        ),
    );
    r.write(
        &format!("tests/test_{}.py", ident("refund-idempotent")),
        "def test_x():\n    pass\n",
    );
    // Untracked files never bind: a build's or an install's leftovers.
    r.write(
        "target/debug/leftover.rs",
        &format!("fn {}() {{}}\n", ident("audit-log")),
    );
    r.write(".gitignore", "/target\n");
    r.commit("tagged");
    r
}

#[test]
fn where_prints_the_tracked_files_that_carry_each_tag() {
    let r = repo();
    let run = r.shipmoor(&["acceptance", "tags", "--where"]);
    assert_eq!(run.code, 0, "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    // One commit: base is head, so both criteria read as inherited, listed per file.
    assert_eq!(
        lines[..6],
        [
            ".shipmoor/acceptance.yaml",
            format!(
                "  refund-idempotent  {}  inherited",
                tag("refund-idempotent")
            )
            .as_str(),
            "      tests/refund.rs:5",
            format!("      tests/test_{}.py (path)", ident("refund-idempotent")).as_str(),
            format!("  audit-log          {}  inherited", tag("audit-log")).as_str(),
            "      (in no tracked file)",
        ],
        "{run:?}"
    );
    assert!(
        lines[6].starts_with("searched 5 tracked files (0 binary, 0 not readable)"),
        "{run:?}"
    );

    let json = r.shipmoor(&["acceptance", "tags", "--where", "--format", "json"]);
    assert_eq!(json.code, 0, "{json:?}");
    common::assert_matches_schema("claim_check.tags.v1", &json.stdout);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let v = &v["criteria"];
    assert_eq!(v[0]["where"][0]["path"], "tests/refund.rs");
    assert_eq!(v[0]["where"][0]["line"], 5);
    assert_eq!(v[0]["where"][1]["in_path"], true);
    assert_eq!(v[1]["where"], serde_json::json!([]));
    // Without --where, the output is as it always was.
    let plain = r.shipmoor(&["acceptance", "tags", "--format", "json"]);
    common::assert_matches_schema("claim_check.tags.v1", &plain.stdout);
    let v: serde_json::Value = serde_json::from_str(&plain.stdout).unwrap();
    assert!(v["criteria"][0].get("where").is_none(), "{plain:?}");
}

#[test]
fn where_outside_a_checkout_is_an_input_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".shipmoor")).unwrap();
    std::fs::write(
        dir.path().join(".shipmoor/acceptance.yaml"),
        "version: 1\ncriteria:\n  - id: a\n    ac: A.\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .args(["acceptance", "tags", "--where", "--repo"])
        .arg(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not inside a git repository"),
        "{out:?}"
    );
}
