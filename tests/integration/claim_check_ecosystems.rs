//! `shipmoor claim-check` end to end on Go, vitest, jest and junit-command projects: in each, a
//! true fail-to-pass, a tagged test that already passes at base (proves nothing), a new test
//! that does not compile or load at base because it uses the new code (a failure at base), and
//! a flaky test under `--runs 2` (undecided). On Go, vitest and jest, a test file that does not
//! build or load at base is a failure there only for the test it fails in, or the test that uses
//! the name whose import fails. Each runs the real toolchain.

use crate::common;

use std::path::Path;

use common::{ident, Repo};

fn floor_results(run: &common::Run) -> Vec<(String, String)> {
    let v: serde_json::Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    v["result"]["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["floor"]["result"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn expect(run: &common::Run, want: &[(&str, &str)]) {
    let got = floor_results(run);
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(got, want, "{run:?}");
}

const ACCEPTANCE: &str = "version: 1\ncriteria:\n  - id: clamps-high\n    ac: High values clamp.\n  - id: clamps-low\n    ac: Low values clamp.\n  - id: doubles\n    ac: Doubling exists.\n  - id: steady\n    ac: A flaky check.\n    required: false\n";

/// A counter file a flaky test keeps outside the worktrees, where the floor's commands may
/// write (the repository's shared directory).
fn counter(r: &Repo, name: &str) -> String {
    r.shared
        .path()
        .join(format!("cc-{name}"))
        .display()
        .to_string()
}

// ----------------------------------------------------------------------------------------------
// go test
// ----------------------------------------------------------------------------------------------

#[test]
fn go_test_end_to_end() {
    common::require_tool("go", &["version"], "apt-get install golang-go");
    let r = Repo::new();
    r.write("go.mod", "module example.com/clamp\n\ngo 1.19\n");
    r.write("clamp.go", "package clamp\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\treturn x\n}\n");
    let base = r.commit("base");
    r.write("clamp.go", "package clamp\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\tif x > hi {\n\t\treturn hi\n\t}\n\treturn x\n}\n\nfunc Double(x int) int { return 2 * x }\n");
    r.write(&format!("high_{}_test.go", ident("clamps-high")), "package clamp\n\nimport \"testing\"\n\nfunc TestHigh(t *testing.T) {\n\tif Clamp(50, 0, 10) != 10 {\n\t\tt.Fatal(\"not clamped\")\n\t}\n}\n");
    r.write(&format!("low_{}_test.go", ident("clamps-low")), "package clamp\n\nimport \"testing\"\n\nfunc TestLow(t *testing.T) {\n\tif Clamp(-5, 0, 10) != 0 {\n\t\tt.Fatal(\"not clamped\")\n\t}\n}\n");
    // Uses the new function: does not compile at base, and takes the whole package with it;
    // the other tests are then run without it.
    r.write(&format!("double_{}_test.go", ident("doubles")), "package clamp\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tif Double(2) != 4 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n");
    let c = counter(&r, "go");
    r.write(&format!("steady_{}_test.go", ident("steady")), &format!("package clamp\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestSteady(t *testing.T) {{\n\tb, _ := os.ReadFile({c:?})\n\tos.WriteFile({c:?}, append(b, 'x'), 0o644)\n\tif len(b)%2 == 1 {{\n\t\tt.Fatal(\"odd run\")\n\t}}\n}}\n"));
    r.write(".shipmoor/acceptance.yaml", ACCEPTANCE);
    r.commit("head");
    let run = r.shipmoor_go(&[
        "claim-check",
        "--base",
        &base,
        "--runs",
        "2",
        "--format",
        "json",
    ]);
    let _ = std::fs::remove_file(&c);
    assert_eq!(run.code, 1, "{run:?}");
    expect(
        &run,
        &[
            ("clamps-high", "satisfied"),
            ("clamps-low", "unsatisfied"),
            ("doubles", "satisfied"),
            ("steady", "undecided"),
        ],
    );
}

/// Attribution on Go (book: floor/attribution.md): a test file new at head does not compile at base. The compiler's error
/// lies in one test's body (it calls the new function), so that test fails at base; its
/// neighbour in the same file never ran there, and is not observed.
#[test]
fn go_a_build_failure_at_base_counts_only_for_the_test_it_lies_in() {
    common::require_tool("go", &["version"], "apt-get install golang-go");
    let (r, base) = common::go_build_failure_at_base();
    let run = r.shipmoor_go(&["claim-check", "--base", &base, "--format", "json"]);
    expect(
        &run,
        &[("keeps-mid", "undecided"), ("doubles", "satisfied")],
    );
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let keeps = &v["result"]["criteria"][0]["floor"];
    let reason = keeps["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("never observed at base"), "{reason}");
    assert!(reason.contains("mixed_test.go:"), "{reason}");
    let doubles = &v["result"]["criteria"][1]["floor"];
    assert_eq!(doubles["tests"][0]["base_failure"], "build_failure_in_test");
    // Only the optional criterion is open.
    assert_eq!(run.code, 0, "{run:?}");
}

/// Go's table-driven tests: the tag is only in a `t.Run` row's name.
const GO_SUBTESTS: &str = r#"package clamp

import "testing"

func TestClamp(t *testing.T) {
	cases := []struct {
		name     string
		in, want int
	}{
		{"keeps mid", 5, 5},
		{"clamps high HIGH_TAG", 50, 10},
		{"clamps low", -5, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Clamp(c.in, 0, 10); got != c.want {
				t.Fatalf("Clamp(%d) = %d, want %d", c.in, got, c.want)
			}
		})
	}
}

// At base the parent fails, after its tagged subtest passed.
func TestParentFails(t *testing.T) {
	t.Run("PARENT_TAG", func(t *testing.T) {})
	if !Fixed {
		t.Fatal("not fixed")
	}
}

// At base the parent passes without running its tagged subtest at all.
func TestOnlyWhenFixed(t *testing.T) {
	if Fixed {
		t.Run("ONLY_TAG", func(t *testing.T) {})
	}
}
"#;

#[test]
fn go_subtests_end_to_end() {
    common::require_tool("go", &["version"], "apt-get install golang-go");
    let r = Repo::new();
    r.write("go.mod", "module example.com/clamp\n\ngo 1.19\n");
    r.write(
        "clamp.go",
        "package clamp\n\nconst Fixed = false\n\nfunc Clamp(x, lo, hi int) int { return x }\n",
    );
    let base = r.commit("base");
    r.write("clamp.go", "package clamp\n\nconst Fixed = true\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\tif x > hi {\n\t\treturn hi\n\t}\n\treturn x\n}\n");
    r.write(
        "clamp_test.go",
        &GO_SUBTESTS
            .replace("HIGH_TAG", &common::tag("clamps-high"))
            .replace("PARENT_TAG", &common::tag("parent-fails"))
            .replace("ONLY_TAG", &common::tag("only-when-fixed")),
    );
    r.write(".shipmoor/acceptance.yaml", "version: 1\ncriteria:\n  - id: clamps-high\n    ac: High values clamp.\n  - id: clamps-low\n    ac: Low values clamp.\n    check:\n      test: TestClamp/clamps_low\n  - id: parent-fails\n    ac: The parent's own check.\n  - id: only-when-fixed\n    ac: A case that exists once fixed.\n");
    r.commit("head");
    let run = r.shipmoor_go(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    expect(
        &run,
        &[
            ("clamps-high", "satisfied"),
            ("clamps-low", "satisfied"),
            // The tagged subtest passed at base while its parent failed: it proves nothing.
            ("parent-fails", "unsatisfied"),
            // Not observed at base.
            ("only-when-fixed", "undecided"),
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let reason = |id: &str| -> String {
        v["result"]["criteria"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .and_then(|c| c["floor"]["reason"].as_str())
            .unwrap_or("")
            .to_string()
    };
    let parent = reason("parent-fails");
    assert!(
        parent.contains("TestParentFails/") && parent.contains("already passes at base"),
        "{parent}"
    );
    let only = reason("only-when-fixed");
    assert!(
        only.contains("TestOnlyWhenFixed/") && only.contains("not observed at base"),
        "{only}"
    );
    let bound: Vec<String> = v["result"]["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["floor"]["tests"].as_array().cloned().unwrap_or_default())
        .map(|t| t["id"].as_str().unwrap_or("").to_string())
        .collect();
    let high = format!(
        "example.com/clamp TestClamp/clamps_high_{}",
        common::tag("clamps-high")
    );
    assert!(bound.contains(&high), "{bound:?} {run:?}");
    assert!(
        bound.contains(&"example.com/clamp TestClamp/clamps_low".to_string()),
        "{bound:?}"
    );
}

// ----------------------------------------------------------------------------------------------
// vitest and jest
// ----------------------------------------------------------------------------------------------

/// A repository holding the tool's package files (ESM for vitest, CommonJS for jest), with the
/// checkout's dependencies installed, as a workflow's `npm ci` leaves them; the worktrees reuse
/// them because the lockfile is the same at both commits.
/// A JavaScript project for `tool` whose `node_modules` is the tests' installed one (a link).
pub(crate) fn js_project(kind: shipmoor::acceptance::RunnerKind, tool: &str) -> Repo {
    let nm = common::js::node_modules(kind);
    let install = nm.parent().unwrap();
    let r = Repo::new();
    let mut pkg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(install.join("package.json")).unwrap())
            .unwrap();
    if tool == "vitest" {
        pkg["type"] = "module".into();
    }
    r.write("package.json", &serde_json::to_string_pretty(&pkg).unwrap());
    r.write(
        "package-lock.json",
        &std::fs::read_to_string(install.join("package-lock.json")).unwrap(),
    );
    r.write(".gitignore", "node_modules\n");
    std::os::unix::fs::symlink(&nm, r.path().join("node_modules")).unwrap();
    r
}

fn js_repo(kind: shipmoor::acceptance::RunnerKind, tool: &str) -> (Repo, String, String) {
    let r = js_project(kind, tool);
    let esm = tool == "vitest";
    let export = if esm { "export " } else { "" };
    let import = |names: &str, from: &str| {
        if esm {
            format!(
                "import {{ {names} }} from '{from}';\nimport {{ expect, test }} from 'vitest';\n"
            )
        } else {
            format!("const {{ {names} }} = require('{from}');\n")
        }
    };
    let tail = if esm {
        ""
    } else {
        "module.exports = { clamp };\n"
    };
    r.write(
        "src/clamp.js",
        &format!("{export}function clamp(x, lo, hi) {{\n  return x < lo ? lo : x;\n}}\n{tail}"),
    );
    let base = r.commit("base");
    let tail = if esm {
        ""
    } else {
        "module.exports = { clamp };\n"
    };
    r.write("src/clamp.js", &format!("{export}function clamp(x, lo, hi) {{\n  return x < lo ? lo : x > hi ? hi : x;\n}}\n{tail}"));
    let dtail = if esm {
        ""
    } else {
        "module.exports = { double };\n"
    };
    r.write(
        "src/double.js",
        &format!("{export}function double(x) {{\n  return 2 * x;\n}}\n{dtail}"),
    );
    r.write(
        &format!("test/high_{}.test.js", ident("clamps-high")),
        &format!(
            "{}test('clamps high', () => {{\n  expect(clamp(50, 0, 10)).toBe(10);\n}});\n",
            import("clamp", "../src/clamp.js")
        ),
    );
    r.write(
        &format!("test/low_{}.test.js", ident("clamps-low")),
        &format!(
            "{}test('clamps low', () => {{\n  expect(clamp(-5, 0, 10)).toBe(0);\n}});\n",
            import("clamp", "../src/clamp.js")
        ),
    );
    // Imports a module new at head: does not load at base.
    r.write(
        &format!("test/double_{}.test.js", ident("doubles")),
        &format!(
            "{}test('doubles', () => {{\n  expect(double(2)).toBe(4);\n}});\n",
            import("double", "../src/double.js")
        ),
    );
    let c = counter(&r, tool);
    let fs_import = if esm {
        "import fs from 'node:fs';\nimport { expect, test } from 'vitest';\n"
    } else {
        "const fs = require('node:fs');\n"
    };
    r.write(&format!("test/steady_{}.test.js", ident("steady")), &format!("{fs_import}test('steady', () => {{\n  const p = {c:?};\n  const n = fs.existsSync(p) ? fs.readFileSync(p, 'utf8').length : 0;\n  fs.writeFileSync(p, 'x'.repeat(n + 1));\n  expect(n % 2).toBe(0);\n}});\n"));
    r.write(".shipmoor/acceptance.yaml", ACCEPTANCE);
    r.commit("head");
    (r, base, c)
}

fn js_end_to_end(kind: shipmoor::acceptance::RunnerKind, tool: &str) {
    let (r, base, c) = js_repo(kind, tool);
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--runs",
        "2",
        "--format",
        "json",
    ]);
    let _ = std::fs::remove_file(&c);
    assert_eq!(run.code, 1, "{run:?}");
    expect(
        &run,
        &[
            ("clamps-high", "satisfied"),
            ("clamps-low", "unsatisfied"),
            ("doubles", "satisfied"),
            ("steady", "undecided"),
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let reused = v["result"]["runtime"]
        .as_array()
        .unwrap()
        .iter()
        .any(|row| {
            row["result"]
                .as_str()
                .unwrap_or("")
                .starts_with("reused the checkout's node_modules")
        });
    assert!(reused, "{run:?}");
    assert!(!Path::new(&r.path().join("node_modules/.shipmoor")).exists());
}

#[test]
fn vitest_end_to_end() {
    js_end_to_end(shipmoor::acceptance::RunnerKind::Vitest, "vitest");
}

#[test]
fn jest_end_to_end() {
    js_end_to_end(shipmoor::acceptance::RunnerKind::Jest, "jest");
}

/// Attribution on vitest and jest (book: floor/attribution.md): head adds `clampAll` to an existing module, and a test file
/// whose `describe` body calls it while the file loads. At base the import binds nothing (vite
/// and CommonJS do not check named imports), so the call throws at module level and the file
/// does not load. The failing name is imported by the test file, and the tagged test inside that
/// `describe` uses it: its own failure, a build failure in the test. The tagged test beside it
/// uses only `clamp`, of the same import statement: it was never observed at base, and its
/// criterion is undecided, with the position of the error.
fn js_a_module_level_failure_at_base_counts_only_for_the_test_that_uses_the_name(
    kind: shipmoor::acceptance::RunnerKind,
    tool: &str,
) {
    let r = js_project(kind, tool);
    let esm = tool == "vitest";
    let (export, tail) = if esm {
        ("export ", "")
    } else {
        ("", "module.exports = { clamp, clampAll };\n")
    };
    let clamp = "function clamp(x, lo, hi) {\n  return x < lo ? lo : x > hi ? hi : x;\n}\n";
    r.write(
        "src/clamp.js",
        &format!(
            "{export}{clamp}{}",
            if esm {
                ""
            } else {
                "module.exports = { clamp };\n"
            }
        ),
    );
    let base = r.commit("base");
    r.write(
        "src/clamp.js",
        &format!("{export}{clamp}\n{export}function clampAll(xs, lo, hi) {{\n  return xs.map((x) => clamp(x, lo, hi));\n}}\n{tail}"),
    );
    let header = if esm {
        "import { describe, expect, test } from 'vitest';\nimport { clamp, clampAll } from '../src/clamp.js';\n"
    } else {
        "\nconst { clamp, clampAll } = require('../src/clamp.js');\n"
    };
    // Line 2: the import; line 9: the call at module level.
    r.write(
        "test/clamp.test.js",
        &format!(
            "{header}\ntest('keeps a value in range {}', () => {{\n  expect(clamp(5, 0, 10)).toBe(5);\n}});\n\ndescribe('clampAll', () => {{\n  const clamped = clampAll([50, -5, 5], 0, 10);\n  test('clamps every value {}', () => {{\n    expect(clamped).toEqual([10, 0, 5]);\n  }});\n}});\n",
            common::tag("keeps-mid"),
            common::tag("clamp-all")
        ),
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: keeps-mid\n    ac: A value in range is kept.\n    required: false\n  - id: clamp-all\n    ac: A list can be clamped.\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    expect(
        &run,
        &[("keeps-mid", "undecided"), ("clamp-all", "satisfied")],
    );
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let keeps = &v["result"]["criteria"][0]["floor"];
    assert_eq!(keeps["tests"][0]["base"], "build_fail", "{keeps}");
    assert!(keeps["tests"][0].get("base_failure").is_none(), "{keeps}");
    let reason = keeps["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("never observed at base"), "{reason}");
    // The error named is the call in the `describe` body, at its line, relative to the
    // repository.
    assert!(reason.contains("clampAll"), "{reason}");
    assert!(reason.contains("test/clamp.test.js:9"), "{reason}");
    let all = &v["result"]["criteria"][1]["floor"];
    assert_eq!(all["tests"][0]["base"], "build_fail", "{all}");
    assert_eq!(
        all["tests"][0]["base_failure"], "build_failure_in_test",
        "{all}"
    );
    let reason = all["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("fails at base (a build failure in the test)"),
        "{reason}"
    );
    let tmp = r.tmp.path().display().to_string();
    assert!(!run.stdout.contains(&tmp), "{}", run.stdout);
    // Only the optional criterion is open.
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn vitest_a_module_level_failure_at_base_counts_only_for_the_test_that_uses_the_name() {
    js_a_module_level_failure_at_base_counts_only_for_the_test_that_uses_the_name(
        shipmoor::acceptance::RunnerKind::Vitest,
        "vitest",
    );
}

#[test]
fn jest_a_module_level_failure_at_base_counts_only_for_the_test_that_uses_the_name() {
    js_a_module_level_failure_at_base_counts_only_for_the_test_that_uses_the_name(
        shipmoor::acceptance::RunnerKind::Jest,
        "jest",
    );
}

// ----------------------------------------------------------------------------------------------
// junit-command
// ----------------------------------------------------------------------------------------------

/// A test harness in shell that writes JUnit XML: the generic runner's contract.
const HARNESS: &str = r#"#!/bin/sh
# Runs every tests/*.sh and writes JUnit XML to $SHIPMOOR_JUNIT_OUT.
out="$SHIPMOOR_JUNIT_OUT"
status=0
echo '<testsuites><testsuite name="sh">' > "$out"
for t in tests/*.sh; do
  name=$(basename "$t" .sh)
  if sh "$t" > /dev/null 2>&1; then
    echo "<testcase classname=\"sh\" name=\"$name\" file=\"$t\"/>" >> "$out"
  else
    echo "<testcase classname=\"sh\" name=\"$name\" file=\"$t\"><failure message=\"$name failed\"/></testcase>" >> "$out"
    status=1
  fi
done
echo '</testsuite></testsuites>' >> "$out"
exit $status
"#;

#[test]
fn junit_command_end_to_end() {
    let r = Repo::new();
    r.write("run-tests.sh", HARNESS);
    r.write(
        "clamp.sh",
        "clamp() { if [ \"$1\" -lt \"$2\" ]; then echo \"$2\"; else echo \"$1\"; fi; }\n",
    );
    r.write("tests/plain.sh", "true\n");
    let base = r.commit("base");
    r.write("clamp.sh", "clamp() { if [ \"$1\" -lt \"$2\" ]; then echo \"$2\"; elif [ \"$1\" -gt \"$3\" ]; then echo \"$3\"; else echo \"$1\"; fi; }\n");
    r.write(
        &format!("tests/high_{}.sh", ident("clamps-high")),
        ". ./clamp.sh\n[ \"$(clamp 50 0 10)\" = 10 ]\n",
    );
    r.write(
        &format!("tests/low_{}.sh", ident("clamps-low")),
        ". ./clamp.sh\n[ \"$(clamp -5 0 10)\" = 0 ]\n",
    );
    r.write(".shipmoor/acceptance.yaml", "version: 1\ncriteria:\n  - id: clamps-high\n    ac: High values clamp.\n  - id: clamps-low\n    ac: Low values clamp.\nrunners:\n  - kind: junit-command\n    command: sh run-tests.sh\n");
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    assert_eq!(run.code, 1, "{run:?}");
    expect(
        &run,
        &[("clamps-high", "satisfied"), ("clamps-low", "unsatisfied")],
    );
}
