//! `shipmoor claim-check` end to end against real `cargo test` and `cargo nextest` projects.

use crate::common;

use common::{ident, require_tool, Repo};

const LIB_BASE: &str = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else { x }\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn clamps_low() {\n        assert_eq!(super::clamp(-5, 0, 10), 0);\n    }\n}\n";
const LIB_HEAD: &str = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else if x > hi { hi } else { x }\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn clamps_low() {\n        assert_eq!(super::clamp(-5, 0, 10), 0);\n    }\n}\n";

fn crate_repo(runner: Option<&str>) -> (Repo, String) {
    require_tool("cargo", &["--version"], "install Rust with rustup");
    if runner == Some("nextest") {
        require_tool(
            "cargo",
            &["nextest", "--version"],
            "cargo install cargo-nextest --locked",
        );
    }
    let r = Repo::new();
    r.write(
        "Cargo.toml",
        "[package]\nname = \"clamp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    r.write(".gitignore", "/target\n");
    r.write("src/lib.rs", LIB_BASE);
    let base = r.commit("base");
    (r, base)
}

fn acceptance(r: &Repo, runner: Option<&str>, body: &str) {
    let runners = runner
        .map(|k| format!("runners:\n  - kind: {k}\n"))
        .unwrap_or_default();
    r.write(
        ".shipmoor/acceptance.yaml",
        &format!("version: 1\ncriteria:\n{body}{runners}"),
    );
}

fn fail_to_pass(runner: Option<&str>) {
    let (r, base) = crate_repo(runner);
    r.write("src/lib.rs", LIB_HEAD);
    let id = ident("clamps-high");
    r.write(
        &format!("tests/clamp_{id}.rs"),
        "#[test]\nfn clamps_high() {\n    assert_eq!(clamp::clamp(50, 0, 10), 10);\n}\n",
    );
    // A unit test named with the tag in an existing source file, extended at head.
    acceptance(
        &r,
        runner,
        "  - id: clamps-high\n    ac: Values above the range are clamped to its top.\n",
    );
    let head = r.commit("head");
    let before = r.status();
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("Claim Check  READY"), "{run:?}");
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    let d = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["dispositions"][0];
    assert_eq!(d["floor"]["result"], "satisfied", "{run:?}");
    assert_eq!(
        d["floor"]["tests"][0]["id"],
        format!("clamp::clamp_{id} clamps_high")
    );
    assert_eq!(d["floor"]["tests"][0]["base"], "fail");
    assert_eq!(vsa["subject"][0]["digest"]["gitCommit"], head.as_str());
    assert!(
        r.status()
            .lines()
            .all(|l| l.contains(".shipmoor/") && !l.contains("acceptance")),
        "{}",
        r.status()
    );
    let _ = before;
    assert!(r.extra_worktrees().is_empty());
    // Base and head never share a target dir, and neither uses the checkout's.
    assert!(!r.exists("target"));
}

#[test]
fn cargo_test_fail_to_pass_is_ready() {
    fail_to_pass(None);
}

#[test]
fn nextest_fail_to_pass_is_ready() {
    fail_to_pass(Some("nextest"));
}

fn failing_at_head(runner: Option<&str>) {
    let (r, base) = crate_repo(runner);
    let id = ident("clamps-high");
    // The fix is missing: the new test fails at base and at head.
    r.write(
        &format!("tests/clamp_{id}.rs"),
        "#[test]\nfn clamps_high() {\n    assert_eq!(clamp::clamp(50, 0, 10), 10);\n}\n",
    );
    // A unit test carrying a tag that already passes at base: proves nothing.
    r.write(
        "src/lib.rs",
        &LIB_BASE.replace(
            "fn clamps_low()",
            &format!("fn clamps_low_{}()", ident("clamps-low")),
        ),
    );
    acceptance(&r, runner, "  - id: clamps-high\n    ac: Values above the range are clamped to its top.\n  - id: clamps-low\n    ac: Values below the range are clamped.\n    required: false\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("fails at head"), "{run:?}");
    let fixes = r.json(".shipmoor/claim-check.fixes.json");
    assert_eq!(fixes["fixes"][0]["requirement"], "stage1.floor.clamps_high");
    assert!(fixes["fixes"][0]["evidence"]["pointer"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    let d = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["dispositions"][1];
    // The unit test lives in src/lib.rs, which holds code too: only the test module is laid
    // over base, where the test already passes, so it proves nothing.
    assert_ne!(d["floor"]["result"], "satisfied", "{run:?}");
}

#[test]
fn cargo_test_failing_at_head_blocks() {
    failing_at_head(None);
}

#[test]
fn nextest_failing_at_head_blocks() {
    failing_at_head(Some("nextest"));
}

#[test]
fn a_new_test_that_needs_the_new_api_fails_to_build_at_base_and_counts_as_failing() {
    let (r, base) = crate_repo(None);
    r.write("src/lib.rs", &format!("{LIB_HEAD}\npub fn clamp_all(xs: &mut [i32], lo: i32, hi: i32) {{\n    for x in xs.iter_mut() {{ *x = clamp(*x, lo, hi); }}\n}}\n"));
    r.write(&format!("tests/all_{}.rs", ident("clamp-all")), "#[test]\nfn clamps_all() {\n    let mut v = [50, -5];\n    clamp::clamp_all(&mut v, 0, 10);\n    assert_eq!(v, [10, 0]);\n}\n");
    acceptance(
        &r,
        None,
        "  - id: clamp-all\n    ac: A slice can be clamped in place.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    let d = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["dispositions"][0];
    assert_eq!(d["floor"]["tests"][0]["base"], "build_fail", "{run:?}");
    assert_eq!(d["floor"]["result"], "satisfied");
    // The error lies in the test's body: a build failure in the test (book: floor/attribution.md).
    assert!(
        d["floor"]["reason"]
            .as_str()
            .unwrap()
            .contains("(a build failure in the test)"),
        "{}",
        d["floor"]
    );
}

#[test]
fn a_head_that_does_not_build_blocks_the_criteria_it_carries_and_leaves_others_unbound() {
    let (r, base) = crate_repo(None);
    r.write(
        &format!("tests/high_{}.rs", ident("clamps-high")),
        "#[test]\nfn clamps_high() {\n    assert_eq!(clamp::clamp_missing(50, 0, 10), 10);\n}\n",
    );
    acceptance(&r, None, "  - id: clamps-high\n    ac: Values above the range are clamped.\n  - id: clamps-nan\n    ac: NaN is rejected.\n    required: false\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("head does not build"), "{run:?}");
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    let d = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["dispositions"];
    assert_eq!(d[0]["floor"]["result"], "unsatisfied");
    assert_eq!(d[1]["floor"]["result"], "unbound");
}

/// Another test target that does not compile at base must not make an unrelated bound test
/// read as failing there (cargo builds every target by default; one broken target would taint
/// them all).
#[test]
fn a_broken_neighbour_target_at_base_does_not_fake_a_failure() {
    let (r, base) = crate_repo(None);
    r.write(
        "src/lib.rs",
        &format!("{LIB_HEAD}\npub fn double(x: i32) -> i32 {{ x * 2 }}\n"),
    );
    // Passes at base too: proves nothing.
    r.write(
        &format!("tests/low_{}.rs", ident("clamps-low")),
        "#[test]\nfn clamps_low() {\n    assert_eq!(clamp::clamp(-5, 0, 10), 0);\n}\n",
    );
    // Needs the new API: does not build at base.
    r.write(
        &format!("tests/double_{}.rs", ident("doubles")),
        "#[test]\nfn doubles() {\n    assert_eq!(clamp::double(2), 4);\n}\n",
    );
    acceptance(
        &r,
        None,
        "  - id: clamps-low\n    ac: Low values clamp.\n  - id: doubles\n    ac: Doubling works.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let c = &v["result"]["criteria"];
    assert_eq!(c[0]["floor"]["tests"][0]["base"], "pass", "{run:?}");
    assert_eq!(c[0]["floor"]["result"], "unsatisfied");
    assert!(c[0]["floor"]["reason"]
        .as_str()
        .unwrap()
        .contains("proves nothing"));
    assert_eq!(c[1]["floor"]["tests"][0]["base"], "build_fail");
    assert_eq!(c[1]["floor"]["result"], "satisfied");
}

/// A base that does not build for its own reasons proves nothing about the new test: undecided,
/// never a failure at base.
#[test]
fn a_base_that_does_not_build_on_its_own_is_undecided() {
    let (r, _) = crate_repo(None);
    r.write("src/lib.rs", "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else { x }\n} broken\n");
    let broken_base = r.commit("a base that does not compile");
    r.write("src/lib.rs", LIB_HEAD);
    r.write(
        &format!("tests/high_{}.rs", ident("clamps-high")),
        "#[test]\nfn clamps_high() {\n    assert_eq!(clamp::clamp(50, 0, 10), 10);\n}\n",
    );
    acceptance(
        &r,
        None,
        "  - id: clamps-high\n    ac: High values clamp.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &broken_base, "--format", "json"]);
    assert_eq!(run.code, 4, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let c = &v["result"]["criteria"][0]["floor"];
    assert_eq!(c["result"], "undecided", "{run:?}");
    assert_eq!(c["tests"][0]["base"], "build_fail");
    assert!(
        c["reason"]
            .as_str()
            .unwrap()
            .contains("base does not build"),
        "{run:?}"
    );
}

/// Two test binaries with a test of the same name: each observation cites its own run.
#[test]
fn evidence_cites_the_run_that_observed_the_test() {
    let (r, base) = crate_repo(None);
    let t = ident("clamps-high");
    r.write(
        "tests/a.rs",
        &format!("#[test]\nfn check_{t}() {{\n    assert_eq!(clamp::clamp(50, 0, 10), 10);\n}}\n"),
    );
    r.write(
        "tests/b.rs",
        &format!("#[test]\nfn check_{t}() {{\n    assert_eq!(clamp::clamp(5, 0, 10), 5);\n}}\n"),
    );
    acceptance(
        &r,
        None,
        "  - id: clamps-high\n    ac: High values clamp.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    for t in v["result"]["criteria"][0]["floor"]["tests"]
        .as_array()
        .unwrap()
    {
        let id = t["id"].as_str().unwrap();
        let binary = if id.starts_with("clamp::a ") {
            "/a-"
        } else {
            "/b-"
        };
        let ptr = t["head_evidence"][0]
            .as_str()
            .unwrap()
            .strip_prefix("sha256:")
            .unwrap()
            .to_string();
        let rec: serde_json::Value =
            serde_json::from_str(&r.read(&format!(".shipmoor/evidence/sha256/{ptr}"))).unwrap();
        let cmd = rec["command"][0].as_str().unwrap();
        assert!(cmd.contains(binary), "{id} cites {cmd}");
        let want = if binary == "/a-" { 101 } else { 0 };
        assert_eq!(rec["exit_code"], want, "{id}: {rec}");
    }
}

/// `--format json` of a claim-check run: the criteria's floor dispositions, and the run.
fn floor_json(r: &Repo, base: &str) -> (Vec<serde_json::Value>, serde_json::Value) {
    let run = r.shipmoor(&["claim-check", "--base", base, "--format", "json"]);
    let v: serde_json::Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    let floors = v["result"]["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["floor"].clone())
        .collect();
    (floors, v)
}

/// The library at head with a unit test added to its `#[cfg(test)]` module.
fn lib_with_unit_test(code: &str, test: &str) -> String {
    let lib = format!("{LIB_HEAD}{code}");
    lib.replacen(
        "        assert_eq!(super::clamp(-5, 0, 10), 0);\n    }\n",
        &format!("        assert_eq!(super::clamp(-5, 0, 10), 0);\n    }}\n\n{test}"),
        1,
    )
}

const CLAMP_ALL: &str = "\npub fn clamp_all(xs: &mut [i32], lo: i32, hi: i32) {\n    for x in xs.iter_mut() { *x = clamp(*x, lo, hi); }\n}\n";

/// Base overlay (book: floor/base-overlay.md): a unit test beside the code is laid over base as a test item only. The fix in
/// the same file stays at head, so the new test fails its assertion at base: READY.
fn unit_test_beside_the_code(runner: Option<&str>) {
    let (r, base) = crate_repo(runner);
    let t = ident("clamps-high");
    r.write(
        "src/lib.rs",
        &lib_with_unit_test(
            "",
            &format!("    #[test]\n    fn clamps_high_{t}() {{\n        assert_eq!(super::clamp(50, 0, 10), 10);\n    }}\n"),
        ),
    );
    acceptance(
        &r,
        runner,
        "  - id: clamps-high\n    ac: Values above the range are clamped to its top.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("Claim Check  READY"), "{run:?}");
    // The terminal says what the failure at base was.
    assert!(
        run.stdout.contains(&format!(
            "at base: an assertion (clamp tests::clamps_high_{t})"
        )),
        "{run:?}"
    );
    let md = r.read(".shipmoor/verify.md");
    assert!(
        md.contains("Test items only (head's test modules and tests spliced into base's version): src/lib.rs."),
        "{md}"
    );
    let (floors, v) = floor_json(&r, &base);
    let f = &floors[0];
    assert_eq!(f["result"], "satisfied", "{f}");
    assert_eq!(f["tests"][0]["id"], format!("clamp tests::clamps_high_{t}"));
    assert_eq!(f["tests"][0]["base"], "fail");
    assert_eq!(f["tests"][0]["base_failure"], "assertion");
    assert!(
        f["reason"]
            .as_str()
            .unwrap()
            .contains("fails at base (an assertion)"),
        "{f}"
    );
    assert_eq!(
        v["result"]["overlay_spliced"],
        serde_json::json!(["src/lib.rs"])
    );
    assert!(!v["result"]["overlay"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p == "src/lib.rs"));
}

#[test]
fn cargo_unit_test_beside_the_code_is_ready() {
    unit_test_beside_the_code(None);
}

#[test]
fn nextest_unit_test_beside_the_code_is_ready() {
    unit_test_beside_the_code(Some("nextest"));
}

/// A new unit test that calls the new function does not build at base, and the error lies in
/// its body: a build failure in the test, so it counts as failing there.
#[test]
fn a_new_unit_test_that_calls_the_new_function_fails_to_build_in_the_test_at_base() {
    let (r, base) = crate_repo(None);
    let t = ident("clamp-all");
    r.write(
        "src/lib.rs",
        &lib_with_unit_test(
            CLAMP_ALL,
            &format!("    #[test]\n    fn clamps_all_{t}() {{\n        let mut v = [50, -5];\n        super::clamp_all(&mut v, 0, 10);\n        assert_eq!(v, [10, 0]);\n    }}\n"),
        ),
    );
    acceptance(
        &r,
        None,
        "  - id: clamp-all\n    ac: A slice can be clamped in place.\n",
    );
    r.commit("head");
    let (floors, v) = floor_json(&r, &base);
    let f = &floors[0];
    assert_eq!(f["result"], "satisfied", "{v}");
    assert_eq!(f["tests"][0]["base"], "build_fail");
    assert_eq!(f["tests"][0]["base_failure"], "build_failure_in_test");
    assert!(
        f["reason"]
            .as_str()
            .unwrap()
            .contains("fails at base (a build failure in the test)"),
        "{f}"
    );
    assert_eq!(
        v["result"]["overlay_spliced"],
        serde_json::json!(["src/lib.rs"])
    );
}

/// A unit test in a module file (`src/util.rs`): the id names the crate root, the item lives in
/// the module file the compiler's error points into.
#[test]
fn a_unit_test_in_a_module_file_is_attributed_in_that_file() {
    let (r, _) = crate_repo(None);
    r.write("src/lib.rs", &format!("{LIB_BASE}\npub mod util;\n"));
    r.write(
        "src/util.rs",
        "pub fn twice(x: i32) -> i32 { x * 2 }\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn twice_works() {\n        assert_eq!(super::twice(2), 4);\n    }\n}\n",
    );
    let base = r.commit("base with a module");
    let t = ident("halves");
    r.write(
        "src/util.rs",
        &format!("pub fn twice(x: i32) -> i32 {{ x * 2 }}\n\npub fn half(x: i32) -> i32 {{ x / 2 }}\n\n#[cfg(test)]\nmod tests {{\n    #[test]\n    fn twice_works() {{\n        assert_eq!(super::twice(2), 4);\n    }}\n\n    #[test]\n    fn halves_{t}() {{\n        assert_eq!(super::half(4), 2);\n    }}\n}}\n"),
    );
    acceptance(&r, None, "  - id: halves\n    ac: Values can be halved.\n");
    r.commit("head");
    let (floors, v) = floor_json(&r, &base);
    let f = &floors[0];
    assert_eq!(
        f["tests"][0]["id"],
        format!("clamp util::tests::halves_{t}"),
        "{v}"
    );
    assert_eq!(f["result"], "satisfied", "{v}");
    assert_eq!(f["tests"][0]["base_failure"], "build_failure_in_test");
    assert_eq!(
        v["result"]["overlay_spliced"],
        serde_json::json!(["src/util.rs"])
    );
}

/// A new unit test that already passes at base proves nothing, even though it lives in the file
/// that carries the fix: only the test item is laid over base.
#[test]
fn a_new_unit_test_that_passes_at_base_proves_nothing() {
    let (r, base) = crate_repo(None);
    let t = ident("clamps-mid");
    r.write(
        "src/lib.rs",
        &lib_with_unit_test(
            "",
            &format!("    #[test]\n    fn clamps_mid_{t}() {{\n        assert_eq!(super::clamp(5, 0, 10), 5);\n    }}\n"),
        ),
    );
    acceptance(
        &r,
        None,
        "  - id: clamps-mid\n    ac: Values inside the range are kept.\n",
    );
    r.commit("head");
    let (floors, v) = floor_json(&r, &base);
    let f = &floors[0];
    assert_eq!(f["result"], "unsatisfied", "{v}");
    assert_eq!(f["tests"][0]["base"], "pass");
    assert!(
        f["reason"].as_str().unwrap().contains("proves nothing"),
        "{f}"
    );
}

/// Attribution (book: floor/attribution.md): a trivial tagged test beside a new test that needs the new API, in one test
/// file. The file does not build at base, but the error is the neighbour's: the tagged test was
/// never observed there. Before, this read `satisfied`.
#[test]
fn a_trivial_tagged_test_beside_a_new_api_test_is_undecided() {
    let (r, base) = crate_repo(None);
    r.write("src/lib.rs", &format!("{LIB_HEAD}{CLAMP_ALL}"));
    let t = ident("always");
    r.write(
        "tests/mixed.rs",
        &format!("#[test]\nfn trivial_{t}() {{\n    assert!(true);\n}}\n\n#[test]\nfn uses_new() {{\n    let mut v = [50];\n    clamp::clamp_all(&mut v, 0, 10);\n    assert_eq!(v, [10]);\n}}\n"),
    );
    acceptance(
        &r,
        None,
        "  - id: always\n    ac: Something trivially true.\n",
    );
    r.commit("head");
    let (floors, v) = floor_json(&r, &base);
    let f = &floors[0];
    assert_eq!(f["result"], "undecided", "{v}");
    assert_eq!(f["tests"][0]["base"], "build_fail");
    assert!(f["tests"][0].get("base_failure").is_none(), "{f}");
    let reason = f["reason"].as_str().unwrap();
    assert!(reason.contains("never observed at base"), "{reason}");
    // The error named is the neighbour's, at its line.
    assert!(reason.contains("clamp_all"), "{reason}");
    assert!(reason.contains("tests/mixed.rs:9"), "{reason}");
}

/// A tagged test that uses the new API through a `use` import: rustc reports the unresolved
/// import (not the uses in the body), and the import binds a name the test uses: its own
/// failure. A tagged neighbour in the same file that does not use that name was never observed.
#[test]
fn a_tagged_test_that_uses_the_new_api_through_an_import_is_satisfied() {
    let (r, base) = crate_repo(None);
    r.write("src/lib.rs", &format!("{LIB_HEAD}{CLAMP_ALL}"));
    let all = ident("clamp-all");
    let low = ident("clamps-low");
    r.write(
        "tests/import.rs",
        &format!("use clamp::clamp_all;\n\n#[test]\nfn clamps_all_{all}() {{\n    let mut v = [50, -5];\n    clamp_all(&mut v, 0, 10);\n    assert_eq!(v, [10, 0]);\n}}\n\n#[test]\nfn clamps_low_{low}() {{\n    assert_eq!(clamp::clamp(-5, 0, 10), 0);\n}}\n"),
    );
    acceptance(
        &r,
        None,
        "  - id: clamp-all\n    ac: A slice can be clamped in place.\n  - id: clamps-low\n    ac: Low values clamp.\n    required: false\n",
    );
    r.commit("head");
    let (floors, v) = floor_json(&r, &base);
    assert_eq!(floors[0]["result"], "satisfied", "{v}");
    assert_eq!(
        floors[0]["tests"][0]["base_failure"],
        "build_failure_in_test"
    );
    assert_eq!(floors[1]["result"], "undecided", "{v}");
    assert!(
        floors[1]["reason"]
            .as_str()
            .unwrap()
            .contains("never observed at base"),
        "{}",
        floors[1]
    );
}

/// A test module in a file of its own (`#[cfg(test)] mod tests;` in `src/util.rs`, the tests in
/// `src/util/tests.rs`): the file is compiled only for tests, so it is laid over base whole with
/// the imports head added for its new test, which builds at base and fails its assertion there,
/// against base's bug.
#[test]
fn a_test_module_in_a_file_of_its_own_is_laid_over_with_the_imports_its_new_tests_need() {
    let (r, _) = crate_repo(None);
    r.write("src/lib.rs", &format!("{LIB_BASE}\npub mod util;\n"));
    r.write(
        "src/util.rs",
        "pub fn twice(x: i32) -> i32 { x * 2 }\n\npub fn half(x: i32) -> i32 { x / 3 }\n\n#[cfg(test)]\nmod tests;\n",
    );
    r.write(
        "src/util/tests.rs",
        "use super::twice;\n\n#[test]\nfn twice_works() {\n    assert_eq!(twice(2), 4);\n}\n",
    );
    let base = r.commit("base with a test module file");
    let t = ident("halves");
    r.write(
        "src/util.rs",
        "pub fn twice(x: i32) -> i32 { x * 2 }\n\npub fn half(x: i32) -> i32 { x / 2 }\n\n#[cfg(test)]\nmod tests;\n",
    );
    r.write(
        "src/util/tests.rs",
        &format!("use super::twice;\nuse super::half;\n\n#[test]\nfn twice_works() {{\n    assert_eq!(twice(2), 4);\n}}\n\n#[test]\nfn halves_{t}() {{\n    assert_eq!(half(4), 2);\n}}\n"),
    );
    acceptance(&r, None, "  - id: halves\n    ac: Values are halved.\n");
    r.commit("head");
    let (floors, v) = floor_json(&r, &base);
    let f = &floors[0];
    assert_eq!(
        f["tests"][0]["id"],
        format!("clamp util::tests::halves_{t}"),
        "{v}"
    );
    assert_eq!(f["result"], "satisfied", "{v}");
    assert_eq!(f["tests"][0]["base"], "fail", "{f}");
    assert_eq!(f["tests"][0]["base_failure"], "assertion");
    // `src/util.rs` holds the fix; its test items are the same at both sides, so it stays as
    // base has it. `src/util/tests.rs` is compiled only for tests: laid over whole.
    assert!(v["result"]["overlay_spliced"].is_null(), "{v}");
    assert!(
        v["result"]["overlay"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "src/util/tests.rs"),
        "{v}"
    );
}

/// A workspace of two packages, each with its own test targets.
fn two_package_workspace(runner: Option<&str>) -> (Repo, String) {
    require_tool("cargo", &["--version"], "install Rust with rustup");
    let r = Repo::new();
    r.write(
        "Cargo.toml",
        "[workspace]\nresolver = \"2\"\nmembers = [\"alpha\", \"beta\"]\n",
    );
    r.write(".gitignore", "/target\n");
    for name in ["alpha", "beta"] {
        r.write(
            &format!("{name}/Cargo.toml"),
            &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        );
        r.write(&format!("{name}/src/lib.rs"), LIB_BASE);
        r.write(
            &format!("{name}/tests/plain.rs"),
            &format!("#[test]\nfn low() {{\n    assert_eq!({name}::clamp(-5, 0, 10), 0);\n}}\n"),
        );
    }
    let _ = runner;
    let base = r.commit("base");
    (r, base)
}

/// The commands the floor ran, from the JSON result's runtime rows.
fn runtime_rows(v: &serde_json::Value) -> Vec<String> {
    let rows: Vec<String> = v["result"]["runtime"]
        .as_array()
        .expect("the JSON result has runtime rows")
        .iter()
        .map(|r| r["command"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        rows.iter().any(|c| c.starts_with("tag scan")),
        "the tag scan is a runtime row: {rows:#?}"
    );
    rows
}

fn only_the_tagged_target_is_built(runner: Option<&str>) {
    let (r, base) = two_package_workspace(runner);
    r.write("alpha/src/lib.rs", LIB_HEAD);
    let id = ident("clamps-high");
    r.write(
        &format!("alpha/tests/high_{id}.rs"),
        "#[test]\nfn clamps_high() {\n    assert_eq!(alpha::clamp(50, 0, 10), 10);\n}\n",
    );
    acceptance(
        &r,
        runner,
        "  - id: clamps-high\n    ac: Values above the range are clamped to its top.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let c = &v["result"]["criteria"][0]["floor"];
    assert_eq!(c["result"], "satisfied", "{run:?}");
    assert_eq!(c["tests"][0]["id"], format!("alpha::high_{id} clamps_high"));
    let rows = runtime_rows(&v);
    let builds: Vec<&String> = rows
        .iter()
        .filter(|c| c.contains("--no-run") || c.contains("nextest list"))
        .collect();
    assert!(!builds.is_empty(), "{rows:#?}");
    // Every build and listing names the tagged target of alpha, and nothing of beta.
    for b in &builds {
        assert!(b.contains(&format!("--test high_{id}")), "{b}\n{rows:#?}");
        assert!(b.contains("alpha#0.1.0") || b.contains("-p alpha"), "{b}");
        assert!(!b.contains("beta"), "{b}");
    }
}

#[test]
fn cargo_test_builds_only_the_target_that_holds_the_tag() {
    only_the_tagged_target_is_built(None);
}

#[test]
fn nextest_lists_only_the_target_that_holds_the_tag() {
    require_tool(
        "cargo",
        &["nextest", "--version"],
        "cargo install cargo-nextest --locked",
    );
    only_the_tagged_target_is_built(Some("nextest"));
}

/// A tag in no tracked file at head: unbound, with the reason, and no cargo build at all.
#[test]
fn a_tag_in_no_file_is_unbound_without_a_build() {
    let (r, base) = two_package_workspace(None);
    r.write("alpha/src/lib.rs", LIB_HEAD);
    acceptance(
        &r,
        None,
        "  - id: clamps-high\n    ac: Values above the range are clamped to its top.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 4, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let c = &v["result"]["criteria"][0]["floor"];
    assert_eq!(c["result"], "unbound", "{run:?}");
    let reason = c["reason"].as_str().unwrap();
    assert!(
        reason.contains("occurs in no tracked file at head"),
        "{reason}"
    );
    assert!(reason.contains("check.test"), "{reason}");
    // The evidence is the scan: what was searched, and that nothing matched.
    let ptr = c["evidence"]["pointer"].as_str().unwrap();
    let rec: serde_json::Value = serde_json::from_str(&r.read(&format!(
        ".shipmoor/evidence/sha256/{}",
        ptr.strip_prefix("sha256:").unwrap()
    )))
    .unwrap();
    assert_eq!(rec["kind"], "tag_scan", "{rec}");
    let found = r.read(&format!(
        ".shipmoor/evidence/sha256/{}",
        rec["results"]
            .as_str()
            .unwrap()
            .strip_prefix("sha256:")
            .unwrap()
    ));
    let found: serde_json::Value = serde_json::from_str(&found).unwrap();
    assert_eq!(
        found["tags"][common::tag("clamps-high")],
        serde_json::json!([])
    );
    assert!(found["files"].as_u64().unwrap() >= 7, "{found}");
    let rows = runtime_rows(&v);
    assert!(
        !rows
            .iter()
            .any(|c| c.starts_with("cargo") || c.contains(" cargo ")),
        "no cargo command may run: {rows:#?}"
    );
}

/// A tag only in a file that is no target's root (a module the test target includes): the
/// package's test targets are all listed, and the test the module defines binds.
#[test]
fn a_tag_in_a_module_of_a_test_target_still_binds() {
    let (r, base) = two_package_workspace(None);
    r.write("alpha/src/lib.rs", LIB_HEAD);
    let id = ident("clamps-high");
    r.write(
        "alpha/tests/common/mod.rs",
        &format!(
            "#[test]\nfn clamps_high_{id}() {{\n    assert_eq!(alpha::clamp(50, 0, 10), 10);\n}}\n"
        ),
    );
    r.write(
        "alpha/tests/plain.rs",
        "mod common;\n\n#[test]\nfn low() {\n    assert_eq!(alpha::clamp(-5, 0, 10), 0);\n}\n",
    );
    acceptance(
        &r,
        None,
        "  - id: clamps-high\n    ac: Values above the range are clamped to its top.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let c = &v["result"]["criteria"][0]["floor"];
    assert_eq!(c["result"], "satisfied", "{run:?}");
    assert_eq!(
        c["tests"][0]["id"],
        format!("alpha::plain common::clamps_high_{id}")
    );
    let rows = runtime_rows(&v);
    let listing: Vec<&String> = rows.iter().filter(|c| c.contains("--no-run")).collect();
    assert!(
        listing
            .iter()
            .any(|c| c.contains("--test plain") && c.contains("--lib")),
        "{rows:#?}"
    );
    assert!(!listing.iter().any(|c| c.contains("beta")), "{rows:#?}");
}

/// A tag only in a file that is no test's source (the manifest names the test target after
/// the tag): that package's test targets are listed, and the target binds by its name.
#[test]
fn a_tag_only_in_a_manifest_binds_through_the_package_listing() {
    let (r, _) = two_package_workspace(None);
    let id = ident("clamps-high");
    r.write(
        "alpha/Cargo.toml",
        &format!("[package]\nname = \"alpha\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[[test]]\nname = \"checks_{id}\"\npath = \"tests/checks.rs\"\n"),
    );
    r.write(
        "alpha/tests/checks.rs",
        "#[test]\nfn low() {\n    assert_eq!(alpha::clamp(-5, 0, 10), 0);\n}\n",
    );
    let base = r.commit("a test target named after the tag");
    r.write("alpha/src/lib.rs", LIB_HEAD);
    r.write(
        "alpha/tests/checks.rs",
        "#[test]\nfn high() {\n    assert_eq!(alpha::clamp(50, 0, 10), 10);\n}\n",
    );
    acceptance(
        &r,
        None,
        "  - id: clamps-high\n    ac: Values above the range are clamped to its top.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let c = &v["result"]["criteria"][0]["floor"];
    assert_eq!(c["result"], "satisfied", "{run:?}");
    assert_eq!(c["tests"][0]["id"], format!("alpha::checks_{id} high"));
    let rows = runtime_rows(&v);
    let listing = rows
        .iter()
        .find(|c| c.contains("--no-run"))
        .expect("a build");
    assert!(
        listing.contains("--lib") && listing.contains(&format!("--test checks_{id}")),
        "{rows:#?}"
    );
    assert!(!listing.contains("beta"), "{rows:#?}");
}

/// Two tagged test targets of one package, one of which does not compile at head: the other is
/// still listed, bound and decided on its own (each target is built alone after a failure).
fn a_broken_tagged_target_leaves_its_neighbour_bound(runner: Option<&str>) {
    let (r, base) = two_package_workspace(runner);
    r.write("alpha/src/lib.rs", LIB_HEAD);
    let high = ident("clamps-high");
    let nan = ident("clamps-nan");
    r.write(
        &format!("alpha/tests/high_{high}.rs"),
        "#[test]\nfn clamps_high() {\n    assert_eq!(alpha::clamp(50, 0, 10), 10);\n}\n",
    );
    r.write(
        &format!("alpha/tests/nan_{nan}.rs"),
        "#[test]\nfn clamps_nan() {\n    assert_eq!(alpha::clamp_missing(1, 0, 10), 1);\n}\n",
    );
    acceptance(
        &r,
        runner,
        "  - id: clamps-high\n    ac: Values above the range are clamped.\n  - id: clamps-nan\n    ac: NaN is rejected.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let c = &v["result"]["criteria"];
    assert_eq!(c[0]["floor"]["result"], "satisfied", "{run:?}");
    assert_eq!(c[1]["floor"]["result"], "unsatisfied", "{run:?}");
    let reason = c[1]["floor"]["reason"].as_str().unwrap();
    assert!(reason.contains("head does not build"), "{reason}");
    assert!(reason.contains(&format!("nan_{nan}.rs")), "{reason}");
}

#[test]
fn cargo_test_a_broken_tagged_target_leaves_its_neighbour_bound() {
    a_broken_tagged_target_leaves_its_neighbour_bound(None);
}

#[test]
fn nextest_a_broken_tagged_target_leaves_its_neighbour_bound() {
    require_tool(
        "cargo",
        &["nextest", "--version"],
        "cargo install cargo-nextest --locked",
    );
    a_broken_tagged_target_leaves_its_neighbour_bound(Some("nextest"));
}

/// Unit tests in module files below `src/tests/` (`#[cfg(test)] mod tests;` in `lib.rs`, `mod
/// deep;` in `src/tests/mod.rs`): the item map follows the module tree, so a test calling the
/// new function fails to build at base in its own body, and a trivial neighbour in the same
/// file was never observed there.
#[test]
fn tests_in_a_module_tree_below_src_tests_are_attributed_in_their_files() {
    let (r, _) = crate_repo(None);
    r.write(
        "src/lib.rs",
        &format!("{LIB_BASE}\n#[cfg(test)]\nmod tests;\n").replace(
            "#[cfg(test)]\nmod tests {",
            "#[cfg(test)]\nmod inline_tests {",
        ),
    );
    r.write("src/tests/mod.rs", "mod deep;\n");
    r.write(
        "src/tests/deep.rs",
        "use crate::clamp;\n\n#[test]\nfn low() {\n    assert_eq!(clamp(-5, 0, 10), 0);\n}\n",
    );
    let base = r.commit("base with a test module tree");
    let all = ident("clamp-all");
    let trivial = ident("trivially");
    r.write(
        "src/lib.rs",
        &format!("{LIB_HEAD}{CLAMP_ALL}\n#[cfg(test)]\nmod tests;\n").replace(
            "#[cfg(test)]\nmod tests {",
            "#[cfg(test)]\nmod inline_tests {",
        ),
    );
    r.write(
        "src/tests/deep.rs",
        &format!("use crate::clamp;\n\n#[test]\nfn low() {{\n    assert_eq!(clamp(-5, 0, 10), 0);\n}}\n\n#[test]\nfn all_{all}() {{\n    let mut v = [50, -5];\n    crate::clamp_all(&mut v, 0, 10);\n    assert_eq!(v, [10, 0]);\n}}\n\n#[test]\nfn trivial_{trivial}() {{\n    assert!(true);\n}}\n"),
    );
    acceptance(
        &r,
        None,
        "  - id: clamp-all\n    ac: A slice can be clamped in place.\n  - id: trivially\n    ac: Something trivially true.\n",
    );
    r.commit("head");
    let (floors, v) = floor_json(&r, &base);
    assert_eq!(
        floors[0]["tests"][0]["id"],
        format!("clamp tests::deep::all_{all}"),
        "{v}"
    );
    assert_eq!(floors[0]["result"], "satisfied", "{v}");
    assert_eq!(
        floors[0]["tests"][0]["base_failure"],
        "build_failure_in_test"
    );
    assert_eq!(floors[1]["result"], "undecided", "{v}");
    let reason = floors[1]["reason"].as_str().unwrap();
    assert!(reason.contains("never observed at base"), "{reason}");
    assert!(reason.contains("src/tests/deep.rs:"), "{reason}");
}

/// A test module loaded through `#[path]`: its tests are named by the module (`unit::`), not by
/// the file's place (`checks::unit::`), and the file, compiled only for tests, is laid over
/// base whole.
#[test]
fn a_path_attribute_test_module_is_followed() {
    let (r, _) = crate_repo(None);
    r.write(
        "src/lib.rs",
        &format!("{LIB_BASE}\n#[cfg(test)]\n#[path = \"checks/unit.rs\"]\nmod unit;\n"),
    );
    r.write(
        "src/checks/unit.rs",
        "#[test]\nfn low() {\n    assert_eq!(crate::clamp(-5, 0, 10), 0);\n}\n",
    );
    let base = r.commit("base with a #[path] test module");
    let all = ident("clamp-all");
    r.write(
        "src/lib.rs",
        &format!("{LIB_HEAD}{CLAMP_ALL}\n#[cfg(test)]\n#[path = \"checks/unit.rs\"]\nmod unit;\n"),
    );
    r.write(
        "src/checks/unit.rs",
        &format!("fn helper() -> [i32; 2] {{\n    [50, -5]\n}}\n\n#[test]\nfn low() {{\n    assert_eq!(crate::clamp(-5, 0, 10), 0);\n}}\n\n#[test]\nfn all_{all}() {{\n    let mut v = helper();\n    crate::clamp_all(&mut v, 0, 10);\n    assert_eq!(v, [10, 0]);\n}}\n"),
    );
    acceptance(
        &r,
        None,
        "  - id: clamp-all\n    ac: A slice can be clamped in place.\n",
    );
    r.commit("head");
    let (floors, v) = floor_json(&r, &base);
    let f = &floors[0];
    assert_eq!(f["tests"][0]["id"], format!("clamp unit::all_{all}"), "{v}");
    assert_eq!(f["result"], "satisfied", "{v}");
    assert_eq!(f["tests"][0]["base_failure"], "build_failure_in_test");
    // Laid over whole (its new helper comes with it), not spliced.
    assert!(v["result"]["overlay_spliced"].is_null(), "{v}");
    assert!(
        v["result"]["overlay"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "src/checks/unit.rs"),
        "{v}"
    );
}

/// A test module in a file of its own that is new at head (`#[cfg(test)] mod unit_tests;` and
/// `src/unit_tests.rs`): the declaration is spliced into base's `lib.rs` and the file is laid
/// over whole, so the new test runs against base's bug and fails its assertion there.
#[test]
fn a_test_module_file_new_at_head_is_laid_over_whole() {
    let (r, base) = crate_repo(None);
    let t = ident("clamps-high");
    r.write(
        "src/lib.rs",
        &format!("{LIB_HEAD}\n#[cfg(test)]\nmod unit_tests;\n"),
    );
    r.write(
        "src/unit_tests.rs",
        &format!("use crate::clamp;\n\n#[test]\nfn high_{t}() {{\n    assert_eq!(clamp(50, 0, 10), 10);\n}}\n"),
    );
    acceptance(
        &r,
        None,
        "  - id: clamps-high\n    ac: Values above the range are clamped to its top.\n",
    );
    r.commit("head");
    let (floors, v) = floor_json(&r, &base);
    let f = &floors[0];
    assert_eq!(
        f["tests"][0]["id"],
        format!("clamp unit_tests::high_{t}"),
        "{v}"
    );
    assert_eq!(f["result"], "satisfied", "{v}");
    assert_eq!(f["tests"][0]["base"], "fail", "{f}");
    assert_eq!(f["tests"][0]["base_failure"], "assertion", "{f}");
    assert_eq!(
        v["result"]["overlay_spliced"],
        serde_json::json!(["src/lib.rs"])
    );
}

/// A workspace whose root is itself a package: `cargo test` at the root tests the root package
/// alone, but the tag scan found the tag in a member's `src/`, so that member is built and run.
fn a_tag_in_a_member_of_a_root_package(runner: Option<&str>) {
    let (r, _) = crate_repo(runner);
    r.write(
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\nmembers = [\"member\"]\n\n[dependencies]\n",
    );
    r.write("src/lib.rs", "pub fn app() {}\n");
    r.write(
        "member/Cargo.toml",
        "[package]\nname = \"member\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    r.write("member/src/lib.rs", LIB_BASE);
    let base = r.commit("base: a root package and a member");
    let t = ident("clamps-high");
    r.write(
        "member/src/lib.rs",
        &lib_with_unit_test(
            "",
            &format!("    #[test]\n    fn clamps_high_{t}() {{\n        assert_eq!(super::clamp(50, 0, 10), 10);\n    }}\n"),
        ),
    );
    acceptance(
        &r,
        runner,
        "  - id: clamps-high\n    ac: Values above the range are clamped to its top.\n",
    );
    r.commit("head");
    let (floors, v) = floor_json(&r, &base);
    let f = &floors[0];
    assert_eq!(f["result"], "satisfied", "{v}");
    assert_eq!(
        f["tests"][0]["id"],
        format!("member tests::clamps_high_{t}")
    );
    assert_eq!(f["tests"][0]["base"], "fail", "{f}");
}

#[test]
fn cargo_test_binds_a_tag_in_a_member_of_a_root_package() {
    a_tag_in_a_member_of_a_root_package(None);
}

#[test]
fn nextest_binds_a_tag_in_a_member_of_a_root_package() {
    a_tag_in_a_member_of_a_root_package(Some("nextest"));
}
