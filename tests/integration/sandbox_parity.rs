//! Nothing honest breaks in the sandbox: the same honest change, on each runner that writes
//! caches of its own (pytest, cargo test, nextest, go test with its build cache, jest and
//! vitest with node's), reads the same verdict sandboxed (`--sandbox require`) as with
//! `--sandbox off`, and every output is byte for byte the same but for the sandbox's own line:
//! the terminal report, the fix packet, `verify.md`, the statement and the evidence store.
//! jest and vitest write the wall-clock time of each run into their logs and reports, so two
//! runs of theirs differ with or without a sandbox: there the comparison is made with those
//! times, and the digests of what holds them, read as placeholders.

use std::collections::BTreeMap;

use crate::common;

use common::{ident, Repo};

/// What a run leaves, by name: the outputs and the evidence store.
fn outputs(r: &Repo) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let dir = r.path().join(".shipmoor");
    for name in [
        "claim-check.fixes.json",
        "verify.md",
        "claim-check.vsa.json",
    ] {
        out.insert(name.to_string(), std::fs::read(dir.join(name)).unwrap());
    }
    for e in std::fs::read_dir(dir.join("evidence/sha256")).unwrap() {
        let e = e.unwrap();
        out.insert(
            format!("evidence/{}", e.file_name().to_string_lossy()),
            std::fs::read(e.path()).unwrap(),
        );
    }
    out
}

/// `bytes` without the sandbox's line (a text) or record (the statement's extension); with
/// `timed`, with the times a JavaScript runner writes, and every digest, as placeholders.
fn without_sandbox(name: &str, bytes: &[u8], timed: bool) -> String {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let text = if timed { untimed(&text) } else { text };
    if name == "claim-check.vsa.json" {
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let ext = &mut v["predicate"]["https://shipmoor.dev/claim-check/v1"];
        assert!(
            ext.get("sandbox").is_some(),
            "the statement records no sandbox"
        );
        ext.as_object_mut().unwrap().remove("sandbox");
        return serde_json::to_string_pretty(&v).unwrap();
    }
    text.lines()
        .filter(|l| !l.contains("sandbox require:") && !l.contains("sandbox off:"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with jest's and vitest's times and every digest as placeholders.
fn untimed(text: &str) -> String {
    let mut out = text.to_string();
    for (re, with) in [
        (r"sha256:[0-9a-f]{64}", "sha256:<digest>"),
        (r"sha256/[0-9a-f]{64}", "sha256/<digest>"),
        (r"sha256:[0-9a-f]{12}…", "sha256:<short>…"),
        (r#""[0-9a-f]{64}""#, "\"<digest>\""),
        (r"\([0-9]+ ms\)", "(<t>)"),
        (r"[0-9]+(\.[0-9]+)? ?m?s\b", "<t>"),
        (
            r#""[A-Za-z]*([Tt]ime|[Dd]uration|[Ss]tart|[Ee]nd|[Rr]untime|[Ss]low)":[0-9.]+"#,
            "\"<time>\":0",
        ),
        (r"\b1[0-9]{12}\b", "<epoch ms>"),
    ] {
        out = regex::Regex::new(re)
            .unwrap()
            .replace_all(&out, with)
            .into_owned();
    }
    out
}

/// Runs the change in `r` (base `base`) sandboxed, then with `--sandbox off`, each run on a
/// clean `.shipmoor/`, and compares; `go`: with a Go build cache of the run's own. A JavaScript
/// runner's run is compared without its times ([`untimed`]): the evidence store as the list of
/// what it holds.
fn same_but_the_sandbox(r: &Repo, base: &str, go: bool) {
    let timed = r.path().join("package.json").exists();
    let run = |mode: &str| {
        let _ = std::fs::remove_dir_all(r.path().join(".shipmoor/evidence"));
        let args = ["claim-check", "--base", base, "--sandbox", mode];
        let run = if go {
            r.shipmoor_go(&args)
        } else {
            r.shipmoor(&args)
        };
        (run, outputs(r))
    };
    let (sandboxed, inside) = run("require");
    assert_eq!(sandboxed.code, 0, "{sandboxed:?}");
    assert!(
        sandboxed.stdout.contains("sandbox require: Landlock ABI"),
        "{sandboxed:?}"
    );
    let verify = String::from_utf8_lossy(&inside["verify.md"]).into_owned();
    assert!(verify.contains("sandbox require: Landlock ABI"), "{verify}");
    let vsa: serde_json::Value = serde_json::from_slice(&inside["claim-check.vsa.json"]).unwrap();
    let record = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["sandbox"];
    assert_eq!(record["enforced"], true, "{record}");
    assert_eq!(record["mode"], "require", "{record}");

    let (off, outside) = run("off");
    assert_eq!(off.code, 0, "{off:?}");
    assert!(
        off.stdout.contains("sandbox off: nothing enforced"),
        "{off:?}"
    );
    assert_eq!(
        without_sandbox("stdout", sandboxed.stdout.as_bytes(), timed),
        without_sandbox("stdout", off.stdout.as_bytes(), timed),
        "the terminal reports differ beyond the sandbox line"
    );
    if timed {
        // The documents by name, the evidence store by what it holds.
        let content = |m: &BTreeMap<String, Vec<u8>>| {
            let mut v: Vec<String> = m
                .iter()
                .map(|(name, bytes)| {
                    let shown = if name.starts_with("evidence/") {
                        "evidence"
                    } else {
                        name.as_str()
                    };
                    format!("{shown}: {}", without_sandbox(name, bytes, true))
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(content(&inside), content(&outside), "the outputs differ");
        return;
    }
    let names = |m: &BTreeMap<String, Vec<u8>>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&inside),
        names(&outside),
        "the evidence stores differ"
    );
    for (name, bytes) in &inside {
        assert_eq!(
            without_sandbox(name, bytes, false),
            without_sandbox(name, &outside[name], false),
            "{name} differs beyond the sandbox's line"
        );
    }
}

#[test]
fn pytest_reads_the_same_sandboxed() {
    common::require_pytest();
    let r = Repo::new();
    r.write("calc.py", "def add(a, b):\n    return a - b\n");
    let base = r.commit("base");
    r.write("calc.py", "def add(a, b):\n    return a + b\n");
    r.write(
        &format!("tests/test_add_{}.py", ident("adds")),
        "from calc import add\n\ndef test_adds():\n    assert add(2, 2) == 4\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: adds\n    ac: Numbers add.\n",
    );
    r.commit("head");
    same_but_the_sandbox(&r, &base, false);
}

fn crate_change(runner: &str) -> (Repo, String) {
    common::require_tool("cargo", &["--version"], "install Rust with rustup");
    let r = Repo::new();
    r.write(
        "Cargo.toml",
        "[package]\nname = \"adder\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    r.write(".gitignore", "/target\n");
    r.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    );
    let base = r.commit("base");
    r.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
    );
    r.write(
        &format!("tests/add_{}.rs", ident("adds")),
        "#[test]\nfn adds() {\n    assert_eq!(adder::add(2, 2), 4);\n}\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        &format!(
            "version: 1\ncriteria:\n  - id: adds\n    ac: Numbers add.\nrunners:\n  - kind: {runner}\n"
        ),
    );
    r.commit("head");
    (r, base)
}

#[test]
fn cargo_test_reads_the_same_sandboxed() {
    let (r, base) = crate_change("cargo");
    same_but_the_sandbox(&r, &base, false);
}

#[test]
fn nextest_reads_the_same_sandboxed() {
    common::require_tool(
        "cargo",
        &["nextest", "--version"],
        "cargo install cargo-nextest --locked",
    );
    let (r, base) = crate_change("nextest");
    same_but_the_sandbox(&r, &base, false);
}

#[test]
fn go_test_reads_the_same_sandboxed() {
    common::require_tool("go", &["version"], "apt-get install golang-go");
    let r = Repo::new();
    r.write("go.mod", "module example.com/adder\n\ngo 1.19\n");
    r.write(
        "add.go",
        "package adder\n\nfunc Add(a, b int) int { return a - b }\n",
    );
    let base = r.commit("base");
    r.write(
        "add.go",
        "package adder\n\nfunc Add(a, b int) int { return a + b }\n",
    );
    r.write(
        &format!("add_{}_test.go", ident("adds")),
        "package adder\n\nimport \"testing\"\n\nfunc TestAdds(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"bad sum\")\n\t}\n}\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: adds\n    ac: Numbers add.\n",
    );
    r.commit("head");
    same_but_the_sandbox(&r, &base, true);
}

fn js_change(kind: shipmoor::acceptance::RunnerKind, tool: &str) {
    let r = crate::claim_check_ecosystems::js_project(kind, tool);
    let esm = tool == "vitest";
    let (export, tail) = if esm {
        ("export ", "")
    } else {
        ("", "module.exports = { add };\n")
    };
    r.write(
        "src/add.js",
        &format!("{export}function add(a, b) {{\n  return a - b;\n}}\n{tail}"),
    );
    let base = r.commit("base");
    r.write(
        "src/add.js",
        &format!("{export}function add(a, b) {{\n  return a + b;\n}}\n{tail}"),
    );
    let import = if esm {
        "import { add } from '../src/add.js';\nimport { expect, test } from 'vitest';\n"
    } else {
        "const { add } = require('../src/add.js');\n"
    };
    r.write(
        &format!("test/add_{}.test.js", ident("adds")),
        &format!("{import}test('adds', () => {{\n  expect(add(2, 2)).toBe(4);\n}});\n"),
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: adds\n    ac: Numbers add.\n",
    );
    r.commit("head");
    same_but_the_sandbox(&r, &base, false);
}

#[test]
fn jest_reads_the_same_sandboxed() {
    js_change(shipmoor::acceptance::RunnerKind::Jest, "jest");
}

#[test]
fn vitest_reads_the_same_sandboxed() {
    js_change(shipmoor::acceptance::RunnerKind::Vitest, "vitest");
}

/// A JavaScript test finds its project's tools by name, as under `npm test` and `npx`: the
/// runner's commands have `node_modules/.bin` on `PATH`. A real test that spawns a tool of the
/// project (here vitest itself, as a formatter or a compiler would be) read BLOCKED at both
/// sides before, the tool not found.
#[test]
fn a_js_test_finds_the_projects_tools_by_name() {
    let kind = shipmoor::acceptance::RunnerKind::Vitest;
    let r = crate::claim_check_ecosystems::js_project(kind, "vitest");
    r.write(
        "src/add.js",
        "export function add(a, b) {\n  return a - b;\n}\n",
    );
    let base = r.commit("base");
    r.write(
        "src/add.js",
        "export function add(a, b) {\n  return a + b;\n}\n",
    );
    r.write(
        &format!("test/add_{}.test.js", ident("adds")),
        "import { execSync } from 'node:child_process';\nimport { add } from '../src/add.js';\nimport { expect, test } from 'vitest';\n\ntest('adds', () => {\n  expect(execSync('vitest --version').toString()).toMatch(/vitest/);\n  expect(add(2, 2)).toBe(4);\n});\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: adds\n    ac: Numbers add.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("Claim Check  READY"), "{run:?}");
}
