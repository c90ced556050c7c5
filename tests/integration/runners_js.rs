//! The vitest and jest adapters against real tiny projects: listing (skipped and todo tests
//! included), running passing, failing, skipped and filtered tests, names that are prefixes of
//! each other, test files that do not load (build failures), ids that do not exist (never a
//! pass), a project without `node_modules`, scoped listings, failure kinds, and the positions
//! and item maps that attribute a file that does not load to a test (book: floor/attribution.md).
//!
//! The tools are installed once per `cargo test` run (and kept between runs) with npm into
//! `$CARGO_TARGET_TMPDIR/js-tools/<tool>`, under a lock directory because nextest runs each test
//! in its own process; each fixture project links that `node_modules`. These tests need `node`
//! and `npm` and fail, naming what is missing, without them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use std::time::Duration;

use shipmoor::acceptance::RunnerKind;

use crate::common;
use common::js::node_modules;
use shipmoor::decision::attribute::{attribute, Attribution};
use shipmoor::floor::runners::{self, FailureKind, ListScope, Outcome, RunCtx, Runner};

// ---------------------------------------------------------------------------------------------
// Installing the tools once
// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

struct Fixture {
    _tmp: tempfile::TempDir,
    worktree: PathBuf,
    dir: PathBuf,
    scratch_root: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A project in `<worktree>/web`, with the tool's `node_modules` linked in when `install`.
fn fixture(kind: RunnerKind, files: &[(&str, &str)], install: bool) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let worktree = tmp.path().join("wt");
    let dir = worktree.join("web");
    for (path, text) in files {
        write(&dir.join(path), text);
    }
    if install {
        std::os::unix::fs::symlink(node_modules(kind), dir.join("node_modules")).unwrap();
    }
    let scratch_root = tmp.path().join("scratch");
    Fixture {
        worktree,
        dir,
        scratch_root,
        _tmp: tmp,
    }
}

impl Fixture {
    fn ctx(&self, label: &str) -> RunCtx {
        let scratch = self.scratch_root.join(label);
        std::fs::create_dir_all(&scratch).unwrap();
        RunCtx {
            worktree: self.worktree.clone(),
            dir: self.dir.clone(),
            scratch,
            timeout: Duration::from_secs(300),
            env: vec![],
            jail: shipmoor::sandbox::Jail::none(),
        }
    }
}

fn adapter(kind: RunnerKind) -> std::sync::Arc<dyn Runner> {
    common::builtin_runner(kind, "web", &[])
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn outcomes(list: &[(&str, Outcome)]) -> BTreeMap<String, Outcome> {
    list.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// The status of each test in the last invocation's results file, by full name.
fn statuses(report: &runners::RunReport) -> BTreeMap<String, String> {
    let results = report
        .invocations
        .last()
        .and_then(|i| i.results.as_ref())
        .expect("a results file");
    let v: serde_json::Value = serde_json::from_slice(results).unwrap();
    let mut out = BTreeMap::new();
    for f in v["testResults"].as_array().unwrap() {
        for t in f["assertionResults"].as_array().unwrap() {
            out.insert(
                t["fullName"].as_str().unwrap().to_string(),
                t["status"].as_str().unwrap().to_string(),
            );
        }
    }
    out
}

const VITEST_PACKAGE: &str = r#"{"name": "fx", "private": true, "type": "module"}"#;
const JEST_PACKAGE: &str = r#"{"name": "fx", "private": true}"#;

const VITEST_MATH: &str = "export function add(a, b) {\n  return a + b;\n}\n";
const JEST_MATH: &str = "function add(a, b) {\n  return a + b;\n}\nmodule.exports = { add };\n";

const VITEST_TEST: &str = r#"import { describe, expect, test } from 'vitest';
import { add } from '../src/math.js';

test('adds', () => {
  expect(add(1, 2)).toBe(3);
});

// Fails; its name starts with the name of the test above.
test('adds twice', () => {
  expect(add(add(1, 2), 2)).toBe(4);
});

test.skip('skipped', () => {});

test.todo('later');

describe('math', () => {
  test('adds (a|b) [x]', () => {
    expect(add(0, 0)).toBe(0);
  });
  describe('inner', () => {
    test('deep', () => {
      expect(add(-1, 1)).toBe(0);
    });
  });
});
"#;

const VITEST_OTHER: &str = r#"import { expect, test } from 'vitest';
import { add } from '../src/math.js';

test('adds', () => {
  expect(add(2, 2)).toBe(4);
});
"#;

const JEST_TEST: &str = r#"const { add } = require('../src/math');

test('adds', () => {
  expect(add(1, 2)).toBe(3);
});

// Fails; its name starts with the name of the test above.
test('adds twice', () => {
  expect(add(add(1, 2), 2)).toBe(4);
});

// Fails; jest's -t is case-insensitive, so asking for `adds` runs this one too.
test('ADDS', () => {
  expect(add(1, 1)).toBe(3);
});

test.skip('skipped', () => {});

test.todo('later');

describe('math', () => {
  test('adds (a|b) [x]', () => {
    expect(add(0, 0)).toBe(0);
  });
  describe('inner', () => {
    test('deep', () => {
      expect(add(-1, 1)).toBe(0);
    });
  });
});
"#;

const JEST_OTHER: &str = r#"const { add } = require('../src/math');

test('adds', () => {
  expect(add(2, 2)).toBe(4);
});
"#;

fn good_project(kind: RunnerKind) -> Vec<(&'static str, &'static str)> {
    match kind {
        RunnerKind::Vitest => vec![
            ("package.json", VITEST_PACKAGE),
            ("src/math.js", VITEST_MATH),
            ("tests/math.test.js", VITEST_TEST),
            ("tests/other.test.js", VITEST_OTHER),
        ],
        _ => vec![
            ("package.json", JEST_PACKAGE),
            ("src/math.js", JEST_MATH),
            ("tests/math.test.js", JEST_TEST),
            ("tests/other.test.js", JEST_OTHER),
        ],
    }
}

/// The good project plus a test file importing a module that does not exist, one importing a
/// module with a syntax error, and a test that passes only when retried.
fn broken_project(kind: RunnerKind) -> Vec<(&'static str, &'static str)> {
    let mut files = good_project(kind);
    match kind {
        RunnerKind::Vitest => files.extend([
            (
                "tests/gone.test.js",
                "import { expect, test } from 'vitest';\nimport { gone } from '../src/gone.js';\n\ntest('uses gone', () => {\n  expect(gone()).toBe(1);\n});\n",
            ),
            (
                "tests/bad.test.js",
                "import { expect, test } from 'vitest';\nimport { bad } from '../src/bad.js';\n\ntest('uses bad', () => {\n  expect(bad).toBe(1);\n});\n",
            ),
            ("src/bad.js", "export const bad = ;\n"),
            // Passes on its second attempt only; the test's own `retry` beats `--retry=0`.
            (
                "tests/flaky.test.js",
                "import { expect, test } from 'vitest';\n\nlet n = 0;\ntest('flaky', { retry: 2 }, () => {\n  n += 1;\n  expect(n).toBe(2);\n});\n",
            ),
        ]),
        _ => files.extend([
            (
                "tests/gone.test.js",
                "const { gone } = require('../src/gone');\n\ntest('uses gone', () => {\n  expect(gone()).toBe(1);\n});\n",
            ),
            (
                "tests/bad.test.js",
                "const { bad } = require('../src/bad');\n\ntest('uses bad', () => {\n  expect(bad).toBe(1);\n});\n",
            ),
            ("src/bad.js", "const bad = ;\nmodule.exports = { bad };\n"),
            // Passes on its second attempt only.
            (
                "tests/flaky.test.js",
                "jest.retryTimes(2);\n\nlet n = 0;\ntest('flaky', () => {\n  n += 1;\n  expect(n).toBe(2);\n});\n",
            ),
        ]),
    }
    files
}

// ---------------------------------------------------------------------------------------------
// The tests, each run for both tools
// ---------------------------------------------------------------------------------------------

fn lists_and_runs(kind: RunnerKind) {
    let fx = fixture(kind, &good_project(kind), true);
    let runner = adapter(kind);
    runner
        .check_tool(&shipmoor::floor::runners::Probe::unconfined())
        .unwrap();

    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    assert!(listed.build_failure.is_none(), "{:?}", listed.build_failure);
    let listed_ids: Vec<&str> = listed.tests.iter().map(|t| t.id.as_str()).collect();
    let mut expected = vec![
        "tests/math.test.js > adds",
        "tests/math.test.js > adds twice",
    ];
    if kind == RunnerKind::Jest {
        expected.push("tests/math.test.js > ADDS");
    }
    expected.extend([
        "tests/math.test.js > skipped",
        "tests/math.test.js > later",
        "tests/math.test.js > math > adds (a|b) [x]",
        "tests/math.test.js > math > inner > deep",
        "tests/other.test.js > adds",
    ]);
    assert_eq!(listed_ids, expected);
    for t in &listed.tests {
        let file = format!("web/{}", t.id.split(" > ").next().unwrap());
        assert_eq!(t.file.as_deref(), Some(file.as_str()), "{}", t.id);
    }
    // vitest's JSON beside its JUnit (which holds the stacks of files that do not load).
    let output = if kind == RunnerKind::Vitest {
        "--outputFile.json"
    } else {
        "--outputFile"
    };
    let list_cmd = &listed.invocations[0].command;
    assert!(
        list_cmd
            .iter()
            .any(|a| a == &format!("{output}=$SCRATCH/{}-list.json", kind.as_str())),
        "{list_cmd:?}"
    );
    if kind == RunnerKind::Vitest {
        assert!(
            list_cmd
                .iter()
                .any(|a| a == "--outputFile.junit=$SCRATCH/vitest-list.xml"),
            "{list_cmd:?}"
        );
    }
    assert!(listed.invocations[0].results.is_some());

    let requested = ids(&[
        "tests/math.test.js > adds",
        "tests/math.test.js > adds twice",
        "tests/math.test.js > skipped",
        "tests/math.test.js > later",
        "tests/math.test.js > math > adds (a|b) [x]",
        "tests/math.test.js > math > inner > deep",
        "tests/other.test.js > adds",
        // Do not exist: a prefix of two names, a describe block, a missing test, a missing file,
        // the titles joined the way the tools join full names.
        "tests/math.test.js > add",
        "tests/math.test.js > math",
        "tests/math.test.js > math > nope",
        "tests/gone.test.js > adds",
        "tests/math.test.js > math inner deep",
    ]);
    let report = runner.run(&fx.ctx("run"), &requested);
    let expected = outcomes(&[
        ("tests/math.test.js > adds", Outcome::Pass),
        ("tests/math.test.js > adds twice", Outcome::Fail),
        ("tests/math.test.js > skipped", Outcome::NotObserved),
        ("tests/math.test.js > later", Outcome::NotObserved),
        ("tests/math.test.js > math > adds (a|b) [x]", Outcome::Pass),
        ("tests/math.test.js > math > inner > deep", Outcome::Pass),
        ("tests/other.test.js > adds", Outcome::Pass),
        ("tests/math.test.js > add", Outcome::NotObserved),
        ("tests/math.test.js > math", Outcome::NotObserved),
        ("tests/math.test.js > math > nope", Outcome::NotObserved),
        ("tests/gone.test.js > adds", Outcome::NotObserved),
        ("tests/math.test.js > math inner deep", Outcome::NotObserved),
    ]);
    assert_eq!(report.outcomes(), expected, "problem: {:?}", report.problem);
    assert!(report.problem.is_none(), "{:?}", report.problem);
    assert!(report.build_failure.is_none());
    let message = &report.messages()["tests/math.test.js > adds twice"];
    assert!(
        message.contains("expect") || message.contains("expected"),
        "{message}"
    );
    assert_eq!(report.messages().len(), 1, "{:?}", report.messages());
    let last = report.invocations.last().unwrap();
    assert!(
        last.command
            .iter()
            .any(|a| a == &format!("{output}=$SCRATCH/{}.json", kind.as_str())),
        "{:?}",
        last.command
    );
    assert_eq!(last.results_type.as_deref(), Some("application/json"));

    // Only `adds`: `adds twice` (which fails) does not run, and `adds` passes.
    let report = runner.run(
        &fx.ctx("one"),
        &ids(&["tests/math.test.js > adds", "tests/math.test.js > add"]),
    );
    assert_eq!(
        report.outcomes(),
        outcomes(&[
            ("tests/math.test.js > adds", Outcome::Pass),
            ("tests/math.test.js > add", Outcome::NotObserved),
        ]),
        "problem: {:?}",
        report.problem
    );
    let ran = statuses(&report);
    assert_eq!(ran["adds"], "passed");
    assert_ne!(ran["adds twice"], "passed");
    assert_ne!(ran["adds twice"], "failed");
    if kind == RunnerKind::Jest {
        // Case-insensitive: `ADDS` ran and failed; it is not mistaken for `adds`.
        assert_eq!(ran["ADDS"], "failed");
        let r = runner.run(&fx.ctx("upper"), &ids(&["tests/math.test.js > ADDS"]));
        assert_eq!(r.outcomes()["tests/math.test.js > ADDS"], Outcome::Fail);
    } else {
        assert_eq!(last_exit(&report), Some(0));
    }

    // Only a skipped test, a todo and ids that do not exist: nothing passes.
    let report = runner.run(
        &fx.ctx("none"),
        &ids(&[
            "tests/math.test.js > skipped",
            "tests/math.test.js > later",
            "tests/math.test.js > adds twic",
        ]),
    );
    assert!(
        report
            .outcomes()
            .values()
            .all(|o| *o == Outcome::NotObserved),
        "{:?}",
        report.outcomes()
    );
    assert!(report.problem.is_none(), "{:?}", report.problem);
}

fn last_exit(report: &runners::RunReport) -> Option<i32> {
    report.invocations.last().and_then(|i| i.captured.exit_code)
}

fn files_that_do_not_load_are_build_failures(kind: RunnerKind) {
    let fx = fixture(kind, &broken_project(kind), true);
    let runner = adapter(kind);

    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    let bf = listed.build_failure.expect("a build failure");
    assert_eq!(
        bf.diagnostic_files,
        vec![
            "web/tests/bad.test.js",
            "web/src/bad.js",
            "web/tests/gone.test.js"
        ],
        "{}",
        bf.excerpt
    );
    assert!(bf.excerpt.contains("gone"), "{}", bf.excerpt);
    // The files that load are still listed.
    assert!(listed
        .tests
        .iter()
        .any(|t| t.id == "tests/other.test.js > adds"));
    assert!(!listed.tests.iter().any(|t| t.id.contains("gone")));

    let report = runner.run(
        &fx.ctx("run"),
        &ids(&[
            "tests/gone.test.js > uses gone",
            "tests/bad.test.js > uses bad",
            "tests/other.test.js > adds",
            "tests/flaky.test.js > flaky",
        ]),
    );
    assert_eq!(
        report.outcomes(),
        outcomes(&[
            ("tests/gone.test.js > uses gone", Outcome::BuildFail),
            ("tests/bad.test.js > uses bad", Outcome::BuildFail),
            ("tests/other.test.js > adds", Outcome::Pass),
            // Passed only on a retry: never a pass.
            ("tests/flaky.test.js > flaky", Outcome::Fail),
        ]),
        "problem: {:?}",
        report.problem
    );
    assert!(report.problem.is_none(), "{:?}", report.problem);
    let message = &report.messages()["tests/flaky.test.js > flaky"];
    assert!(
        message.starts_with("passed only after a retry"),
        "{message}"
    );
    let bf = report.build_failure.expect("a build failure");
    assert_eq!(
        bf.diagnostic_files,
        vec![
            "web/tests/bad.test.js",
            "web/src/bad.js",
            "web/tests/gone.test.js"
        ]
    );

    // Only the broken file that holds the requested test is named.
    let report = runner.run(&fx.ctx("gone"), &ids(&["tests/gone.test.js > uses gone"]));
    assert_eq!(
        report.outcomes()["tests/gone.test.js > uses gone"],
        Outcome::BuildFail
    );
    assert_eq!(
        report
            .build_failure
            .expect("a build failure")
            .diagnostic_files,
        vec!["web/tests/gone.test.js"]
    );
}

fn without_node_modules(kind: RunnerKind) {
    let fx = fixture(kind, &good_project(kind), false);
    let runner = adapter(kind);
    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.tests.is_empty());
    let problem = listed.problem.expect("a problem");
    assert!(problem.contains("npm ci"), "{problem}");
    assert!(
        problem.contains(&format!("node_modules/.bin/{}", kind.as_str())),
        "{problem}"
    );
    let report = runner.run(&fx.ctx("run"), &ids(&["tests/math.test.js > adds"]));
    assert_eq!(
        report.outcomes()["tests/math.test.js > adds"],
        Outcome::NotObserved
    );
    assert!(report.problem.is_some_and(|p| p.contains("npm ci")));
}

fn empty_project(kind: RunnerKind) {
    let package = if kind == RunnerKind::Vitest {
        VITEST_PACKAGE
    } else {
        JEST_PACKAGE
    };
    let fx = fixture(kind, &[("package.json", package), ("src/a.js", "")], true);
    let listed = adapter(kind).list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.tests.is_empty());
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    assert!(listed.build_failure.is_none());
}

/// Attribution at the adapter (book: floor/attribution.md): a file laid over base imports a module base lacks, next to a
/// trivial test; another calls a function base lacks in its body; a third does not parse; a
/// fourth calls, while it loads, a name the module does not export.
fn load_failures_are_attributed(kind: RunnerKind) {
    let vitest = kind == RunnerKind::Vitest;
    let (import_gone, import_math) = if vitest {
        (
            "import { clampHigh } from '../src/clamp.js';",
            "import { expect, test } from 'vitest';\nimport * as math from '../src/math.js';",
        )
    } else {
        (
            "const { clampHigh } = require('../src/clamp');",
            "const math = require('../src/math');",
        )
    };
    let header = if vitest {
        "import { describe, expect, test } from 'vitest';\n"
    } else {
        "\n"
    };
    // Line 2: the import of a module that only exists at head.
    let new_module = format!(
        "{header}{import_gone}\n\ndescribe('clamp', () => {{\n  test('trivial', () => {{\n    expect(1).toBe(1);\n  }});\n\n  test('clamps high', () => {{\n    expect(clampHigh(5)).toBe(3);\n  }});\n}});\n"
    );
    let body = format!(
        "{import_math}\n\ntest('calls new api', () => {{\n  expect(math.clamp(5)).toBe(3);\n}});\n\ntest('asserts', () => {{\n  expect(math.add(1, 1)).toBe(3);\n}});\n"
    );
    let syntax = format!("{header}\ntest('ok', () => {{\n  expect(1).toBe(1);\n}});\n\ntest('bad', () => {{\n  expect(1.toBe(1);\n}});\n");
    // Line 2 imports `clampHigh`, which the module lacks; line 4 calls it while the file loads.
    let import_add = if vitest {
        "import { add, clampHigh } from '../src/math.js';"
    } else {
        "const { add, clampHigh } = require('../src/math');"
    };
    let module_level = format!(
        "{header}{import_add}\n\nconst HIGH = clampHigh(50);\n\ntest('trivial', () => {{\n  expect(add(1, 1)).toBe(2);\n}});\n\ntest('clamps high', () => {{\n  expect(clampHigh(50)).toBe(HIGH);\n}});\n"
    );
    let mut files: Vec<(&str, &str)> = good_project(kind);
    files.extend([
        ("tests/clamp.test.js", new_module.as_str()),
        ("tests/body.test.js", body.as_str()),
        ("tests/syntax.test.js", syntax.as_str()),
        ("tests/toplevel.test.js", module_level.as_str()),
    ]);
    let fx = fixture(kind, &files, true);
    let runner = adapter(kind);
    let file = "web/tests/clamp.test.js";
    let trivial = "tests/clamp.test.js > clamp > trivial";
    let uses = "tests/clamp.test.js > clamp > clamps high";
    let report = runner.run(&fx.ctx("run"), &ids(&[trivial, uses]));
    assert_eq!(report.invocations.len(), 1, "one process");
    assert_eq!(
        report.outcomes()[trivial],
        Outcome::BuildFail,
        "{:?}",
        report.problem
    );
    assert_eq!(report.outcomes()[uses], Outcome::BuildFail);
    let bf = report.build_failure.expect("a build failure");
    assert_eq!(bf.diagnostics.len(), 1, "{:?}", bf.diagnostics);
    let d = &bf.diagnostics[0];
    assert_eq!((d.file.as_str(), d.line), (file, 2), "{d:?}");
    assert!(d.message.contains("Cannot find module"), "{d:?}");
    // vitest names the importing file: relative to the repository, as every path it reports.
    let worktree = fx.worktree.display().to_string();
    assert!(!d.message.contains(&worktree), "{d:?}");
    assert!(!bf.excerpt.contains(&worktree), "{}", bf.excerpt);

    let map = runner
        .items()
        .item_map(&fx.ctx("map"), "tests/clamp.test.js")
        .expect("it parses");
    assert_eq!(
        runner.items().test_item(trivial).as_deref(),
        Some("clamp > trivial")
    );
    let a = attribute(
        file,
        &runner.items().test_item(trivial).unwrap(),
        &map,
        &bf.diagnostics,
    );
    assert!(matches!(a, Attribution::Elsewhere { .. }), "{a:?}");
    let a = attribute(
        file,
        &runner.items().test_item(uses).unwrap(),
        &map,
        &bf.diagnostics,
    );
    assert!(
        matches!(&a, Attribution::InUsedImport { names, .. } if names == &["clampHigh"]),
        "{a:?}"
    );

    // New API called in the body: a plain failure, an exception; `expect` failing: an assertion.
    let api = "tests/body.test.js > calls new api";
    let asserts = "tests/body.test.js > asserts";
    let report = runner.run(&fx.ctx("body"), &ids(&[api, asserts]));
    assert_eq!(
        report.outcomes()[api],
        Outcome::Fail,
        "{:?}",
        report.problem
    );
    assert_eq!(
        report.failure_kinds()[api],
        FailureKind::Exception,
        "{:?}",
        report.messages()
    );
    assert!(
        report.messages()[api].contains("TypeError"),
        "{:?}",
        report.messages()
    );
    assert_eq!(report.outcomes()[asserts], Outcome::Fail);
    assert_eq!(
        report.failure_kinds()[asserts],
        FailureKind::Assertion,
        "{:?}",
        report.messages()
    );
    assert!(report.build_failure.is_none());

    // A name the module does not export, called while the file loads: the call's position,
    // then the import that binds the name, naming it.
    let file = "web/tests/toplevel.test.js";
    let trivial = "tests/toplevel.test.js > trivial";
    let uses = "tests/toplevel.test.js > clamps high";
    let report = runner.run(&fx.ctx("toplevel"), &ids(&[trivial, uses]));
    assert_eq!(
        report.outcomes()[trivial],
        Outcome::BuildFail,
        "{:?}",
        report.problem
    );
    assert_eq!(report.outcomes()[uses], Outcome::BuildFail);
    let bf = report.build_failure.expect("a build failure");
    let at: Vec<(&str, u32, Option<u32>, &[String])> = bf
        .diagnostics
        .iter()
        .map(|d| (d.file.as_str(), d.line, d.column, d.names.as_slice()))
        .collect();
    let names = ["clampHigh".to_string()];
    // vitest places the call at its parenthesis, jest at the callee.
    let (call, binding) = if vitest { (23, 15) } else { (14, 14) };
    assert_eq!(
        at,
        vec![
            (file, 4, Some(call), &names[..]),
            (file, 2, Some(binding), &names[..])
        ],
        "{:?}",
        bf.diagnostics
    );
    let thrown = &bf.diagnostics[0].message;
    assert!(
        thrown.starts_with("TypeError: ")
            && thrown.contains("clampHigh")
            && thrown.ends_with("is not a function"),
        "{thrown}"
    );
    let map = runner
        .items()
        .item_map(&fx.ctx("map-toplevel"), "tests/toplevel.test.js")
        .unwrap();
    let a = attribute(file, "trivial", &map, &bf.diagnostics);
    assert!(
        matches!(&a, Attribution::Elsewhere { diagnostic } if diagnostic.line == 4),
        "{a:?}"
    );
    assert!(
        a.describe().contains("tests/toplevel.test.js:4"),
        "{}",
        a.describe()
    );
    let a = attribute(file, "clamps high", &map, &bf.diagnostics);
    assert!(
        matches!(&a, Attribution::InUsedImport { names, .. } if names == &["clampHigh"]),
        "{a:?}"
    );

    // A syntax error: its position, inside the item that holds it.
    let report = runner.run(&fx.ctx("syntax"), &ids(&["tests/syntax.test.js > ok"]));
    assert_eq!(
        report.outcomes()["tests/syntax.test.js > ok"],
        Outcome::BuildFail
    );
    let bf = report.build_failure.unwrap();
    let d = &bf.diagnostics[0];
    assert_eq!(d.file, "web/tests/syntax.test.js");
    assert!((6..=8).contains(&d.line), "{d:?}");
    let map = runner
        .items()
        .item_map(&fx.ctx("map2"), "tests/syntax.test.js")
        .unwrap();
    let a = attribute("web/tests/syntax.test.js", "ok", &map, &bf.diagnostics);
    assert!(matches!(a, Attribution::Elsewhere { .. }), "{a:?}");
    // The parser's recovery may not keep the broken call as an item (then nothing is
    // attributed to it); it is never the neighbour's.
    let a = attribute("web/tests/syntax.test.js", "bad", &map, &bf.diagnostics);
    assert!(
        matches!(a, Attribution::InTest { .. } | Attribution::Unknown { .. }),
        "{a:?} {map:?}"
    );
}

fn a_scoped_listing_loads_only_those_files(kind: RunnerKind) {
    let fx = fixture(kind, &broken_project(kind), true);
    let runner = adapter(kind);
    let scope = |f: &[&str]| ListScope::Files(f.iter().map(|s| s.to_string()).collect());
    // `tests/math.test.js` alone: not `other.test.js`, and none of the broken files.
    let listed = runner.list(
        &fx.ctx("list"),
        &scope(&["tests/other.test.js", "src/math.js", "README.md"]),
    );
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    assert!(listed.build_failure.is_none(), "{:?}", listed.build_failure);
    let listed_ids: Vec<&str> = listed.tests.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(listed_ids, vec!["tests/other.test.js > adds"]);
    // Nothing JavaScript in scope: nothing to load, no process.
    let none = runner.list(
        &fx.ctx("none"),
        &scope(&["README.md", "tests/gone2.test.js"]),
    );
    assert!(none.tests.is_empty() && none.invocations.is_empty());
}

#[test]
fn vitest_load_failures_are_attributed() {
    load_failures_are_attributed(RunnerKind::Vitest);
}

#[test]
fn jest_load_failures_are_attributed() {
    load_failures_are_attributed(RunnerKind::Jest);
}

#[test]
fn vitest_scoped_listing() {
    a_scoped_listing_loads_only_those_files(RunnerKind::Vitest);
}

#[test]
fn jest_scoped_listing() {
    a_scoped_listing_loads_only_those_files(RunnerKind::Jest);
}

#[test]
fn vitest_lists_and_runs() {
    lists_and_runs(RunnerKind::Vitest);
}

#[test]
fn jest_lists_and_runs() {
    lists_and_runs(RunnerKind::Jest);
}

#[test]
fn vitest_files_that_do_not_load_are_build_failures() {
    files_that_do_not_load_are_build_failures(RunnerKind::Vitest);
}

#[test]
fn jest_files_that_do_not_load_are_build_failures() {
    files_that_do_not_load_are_build_failures(RunnerKind::Jest);
}

#[test]
fn vitest_without_node_modules() {
    without_node_modules(RunnerKind::Vitest);
}

#[test]
fn jest_without_node_modules() {
    without_node_modules(RunnerKind::Jest);
}

#[test]
fn vitest_empty_project() {
    empty_project(RunnerKind::Vitest);
}

#[test]
fn jest_empty_project() {
    empty_project(RunnerKind::Jest);
}

#[test]
fn test_files() {
    for kind in [RunnerKind::Vitest, RunnerKind::Jest] {
        let r = adapter(kind);
        assert!(r.is_test_file("src/refund.test.ts"));
        assert!(r.is_test_file("src/refund.spec.jsx"));
        assert!(r.is_test_file("src/__tests__/refund.js"));
        assert!(r.is_test_file("tests/helpers/data.json"));
        assert!(!r.is_test_file("src/refund.ts"));
        assert!(!r.is_test_file("package.json"));
    }
}
