//! The pytest adapter against real tiny projects: listing, running, files that do not import,
//! a broken conftest, ids that do not exist (never a pass), scoped listings, and the positions
//! and item maps that attribute an import failure to a test (book: floor/attribution.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use shipmoor::acceptance::RunnerKind;
use shipmoor::decision::attribute::{attribute, Attribution};
use shipmoor::floor::runners::{FailureKind, ListScope, Outcome, RunCtx, Runner};

const TEST_A: &str = r#"import pytest

def test_pass():
    assert True

def test_fail():
    # A failing test that prints what a passing one would look like.
    print("tests/test_a.py::test_pass PASSED")
    assert False

@pytest.mark.skip(reason="not today")
def test_skip():
    pass

@pytest.mark.parametrize("x", [1, 2, "a b", "x::y"])
def test_param(x):
    assert x != 2

class TestA:
    def test_b(self):
        pass

    class TestInner:
        def test_c(self):
            pass

@pytest.fixture
def broken():
    raise RuntimeError("setup boom")

def test_setup_error(broken):
    pass

@pytest.mark.xfail
def test_xfail():
    assert False
"#;

const TEST_B: &str = "def test_other():\n    pass\n";

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

fn fixture(files: &[(&str, &str)]) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let worktree = tmp.path().join("wt");
    let dir = worktree.join("py");
    for (path, text) in files {
        write(&dir.join(path), text);
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

fn adapter() -> std::sync::Arc<dyn Runner> {
    crate::common::builtin_runner(RunnerKind::Pytest, "py", &[])
}

/// pytest must be installed for these tests (`.ci/run` and `scripts/test.sh` install it): a
/// missing pytest fails them, naming it, rather than skipping them quietly.
fn require_pytest() {
    if let Err(e) = adapter().check_tool(&shipmoor::floor::runners::Probe::unconfined()) {
        panic!("these tests need pytest (python3 -m pip install pytest): {e:?}");
    }
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn lists_and_runs() {
    require_pytest();
    let fx = fixture(&[("tests/test_a.py", TEST_A), ("tests/sub/test_b.py", TEST_B)]);
    let runner = adapter();

    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    assert!(listed.build_failure.is_none());
    let listed_ids: Vec<&str> = listed.tests.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        listed_ids,
        vec![
            "tests/sub/test_b.py::test_other",
            "tests/test_a.py::test_pass",
            "tests/test_a.py::test_fail",
            "tests/test_a.py::test_skip",
            "tests/test_a.py::test_param[1]",
            "tests/test_a.py::test_param[2]",
            "tests/test_a.py::test_param[a b]",
            "tests/test_a.py::test_param[x::y]",
            "tests/test_a.py::TestA::test_b",
            "tests/test_a.py::TestA::TestInner::test_c",
            "tests/test_a.py::test_setup_error",
            "tests/test_a.py::test_xfail",
        ]
    );
    assert_eq!(listed.tests[1].file.as_deref(), Some("py/tests/test_a.py"));
    assert!(
        listed.invocations[0]
            .command
            .iter()
            .any(|a| a == "--rootdir=py"),
        "{:?}",
        listed.invocations[0].command
    );

    let requested = ids(&[
        "tests/sub/test_b.py::test_other",
        "tests/test_a.py::test_pass",
        "tests/test_a.py::test_fail",
        "tests/test_a.py::test_skip",
        "tests/test_a.py::test_param[1]",
        "tests/test_a.py::test_param[2]",
        "tests/test_a.py::test_param[x::y]",
        "tests/test_a.py::TestA::test_b",
        "tests/test_a.py::TestA::TestInner::test_c",
        "tests/test_a.py::test_setup_error",
        "tests/test_a.py::test_xfail",
        // Do not exist: a missing function, a missing parameter, a missing file.
        "tests/test_a.py::test_nope",
        "tests/test_a.py::test_param[3]",
        "tests/test_gone.py::test_pass",
    ]);
    let report = runner.run(&fx.ctx("run"), &requested);
    let expected: BTreeMap<String, Outcome> = [
        ("tests/sub/test_b.py::test_other", Outcome::Pass),
        ("tests/test_a.py::test_pass", Outcome::Pass),
        ("tests/test_a.py::test_fail", Outcome::Fail),
        ("tests/test_a.py::test_skip", Outcome::NotObserved),
        ("tests/test_a.py::test_param[1]", Outcome::Pass),
        ("tests/test_a.py::test_param[2]", Outcome::Fail),
        ("tests/test_a.py::test_param[x::y]", Outcome::Pass),
        ("tests/test_a.py::TestA::test_b", Outcome::Pass),
        ("tests/test_a.py::TestA::TestInner::test_c", Outcome::Pass),
        ("tests/test_a.py::test_setup_error", Outcome::Fail),
        ("tests/test_a.py::test_xfail", Outcome::NotObserved),
        ("tests/test_a.py::test_nope", Outcome::NotObserved),
        ("tests/test_a.py::test_param[3]", Outcome::NotObserved),
        ("tests/test_gone.py::test_pass", Outcome::NotObserved),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(report.outcomes(), expected, "problem: {:?}", report.problem);
    assert!(report.problem.is_none(), "{:?}", report.problem);
    assert!(report.build_failure.is_none());
    let last = report.invocations.last().unwrap();
    assert!(last.results.as_ref().is_some_and(|r| !r.is_empty()));
    assert!(
        last.command
            .iter()
            .any(|a| a == "--junitxml=$SCRATCH/pytest-junit.xml"),
        "{:?}",
        last.command
    );
    // Nothing was written into the worktree.
    assert!(!fx.dir.join(".pytest_cache").exists());
    assert!(!fx.dir.join("tests/__pycache__").exists());

    // Only a skipped test and ids that do not exist: nothing passes.
    let report = runner.run(
        &fx.ctx("none"),
        &ids(&["tests/test_a.py::test_skip", "tests/test_a.py::test_nope"]),
    );
    assert!(report
        .outcomes()
        .values()
        .all(|o| *o == Outcome::NotObserved));
}

#[test]
fn files_that_do_not_import_are_build_failures() {
    require_pytest();
    let fx = fixture(&[
        ("tests/sub/test_b.py", TEST_B),
        (
            "tests/test_broken.py",
            "from app import new_function\n\ndef test_new():\n    assert new_function()\n",
        ),
        ("tests/test_syntax.py", "def test_y(:\n    pass\n"),
        ("app.py", "def old_function():\n    return 1\n"),
    ]);
    let runner = adapter();

    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    let bf = listed.build_failure.expect("a build failure");
    assert_eq!(
        bf.diagnostic_files,
        vec!["py/tests/test_broken.py", "py/tests/test_syntax.py"]
    );
    assert!(bf.excerpt.contains("new_function"), "{}", bf.excerpt);
    // What did collect is still listed.
    let listed_ids: Vec<&str> = listed.tests.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(listed_ids, vec!["tests/sub/test_b.py::test_other"]);

    let report = runner.run(
        &fx.ctx("run"),
        &ids(&[
            "tests/test_broken.py::test_new",
            "tests/sub/test_b.py::test_other",
        ]),
    );
    assert_eq!(
        report.outcomes()["tests/test_broken.py::test_new"],
        Outcome::BuildFail
    );
    assert_eq!(
        report.outcomes()["tests/sub/test_b.py::test_other"],
        Outcome::Pass,
        "{:?}",
        report.problem
    );
    let bf = report.build_failure.expect("a build failure");
    assert_eq!(bf.diagnostic_files, vec!["py/tests/test_broken.py"]);
}

#[test]
fn broken_conftest_fails_everything_below_it() {
    require_pytest();
    let fx = fixture(&[
        ("tests/sub/test_b.py", TEST_B),
        ("tests/conftest.py", "import module_that_is_not_there\n"),
    ]);
    let runner = adapter();
    let listed = runner.list(&fx.ctx("list"), &ListScope::All);
    let bf = listed.build_failure.expect("a build failure");
    assert_eq!(bf.diagnostic_files, vec!["py/tests/conftest.py"]);

    let report = runner.run(&fx.ctx("run"), &ids(&["tests/sub/test_b.py::test_other"]));
    assert_eq!(
        report.outcomes()["tests/sub/test_b.py::test_other"],
        Outcome::BuildFail
    );
}

#[test]
fn tests_import_the_project_from_the_root() {
    require_pytest();
    // No `__init__.py` in tests/: the project's package imports only with the root on sys.path,
    // as `python -m pytest` puts it.
    let fx = fixture(&[
        ("pytest.ini", "[pytest]\ntestpaths = tests\n"),
        ("svc/__init__.py", ""),
        ("svc/refund.py", "def refund(order):\n    return order\n"),
        (
            "tests/test_refund.py",
            "from svc.refund import refund\n\ndef test_refund():\n    assert refund({}) == {}\n",
        ),
    ]);
    let id = "tests/test_refund.py::test_refund".to_string();
    let report = adapter().run(&fx.ctx("run"), std::slice::from_ref(&id));
    assert_eq!(
        report.outcomes()[&id],
        Outcome::Pass,
        "{:?}",
        report.problem
    );
}

#[test]
fn empty_project() {
    require_pytest();
    let fx = fixture(&[("app.py", "x = 1\n")]);
    let listed = adapter().list(&fx.ctx("list"), &ListScope::All);
    assert!(listed.tests.is_empty());
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    assert!(listed.build_failure.is_none());
}

#[test]
fn test_files() {
    let r = adapter();
    assert!(r.is_test_file("tests/test_a.py"));
    assert!(r.is_test_file("pkg/foo_test.py"));
    assert!(r.is_test_file("conftest.py"));
    assert!(r.is_test_file("test/data.json"));
    assert!(!r.is_test_file("app.py"));
}

/// Attribution at the adapter (book: floor/attribution.md): a file laid over base imports a name base lacks. The import
/// error's position is the import line; the parser tells which test uses that import.
#[test]
fn import_failures_are_attributed_with_the_files_ast() {
    require_pytest();
    let new_api = "import app\nfrom app import old_function, new_function\n\n\ndef test_trivial():\n    assert old_function() == 1\n\n\ndef test_uses_import():\n    assert new_function() == 2\n\n\nclass TestK:\n    @staticmethod\n    def test_method():\n        assert helper()\n\n\ndef helper():\n    return new_function()\n";
    let fx = fixture(&[
        ("app.py", "def old_function():\n    return 1\n"),
        ("tests/test_new.py", new_api),
        (
            "tests/test_body.py",
            "import app\n\n\ndef test_calls_new_api():\n    assert app.new_function() == 2\n\n\ndef test_asserts():\n    assert app.old_function() == 2\n",
        ),
        ("tests/test_syntax.py", "def test_ok():\n    pass\n\n\ndef test_bad(:\n    pass\n"),
    ]);
    let runner = adapter();
    let file = "py/tests/test_new.py";
    let report = runner.run(
        &fx.ctx("run"),
        &ids(&[
            "tests/test_new.py::test_trivial",
            "tests/test_new.py::test_uses_import",
            "tests/test_new.py::TestK::test_method",
        ]),
    );
    assert_eq!(report.invocations.len(), 1, "one process");
    assert!(
        report.outcomes().values().all(|o| *o == Outcome::BuildFail),
        "{:?}",
        report.outcomes()
    );
    let bf = report.build_failure.expect("a build failure");
    assert_eq!(bf.diagnostics.len(), 1, "{:?}", bf.diagnostics);
    let d = &bf.diagnostics[0];
    assert_eq!((d.file.as_str(), d.line), (file, 2), "{d:?}");
    assert!(
        d.message
            .starts_with("ImportError: cannot import name 'new_function'"),
        "{d:?}"
    );

    let map = runner
        .items()
        .item_map(&fx.ctx("map"), "tests/test_new.py")
        .expect("the file parses");
    let item = |id: &str| runner.items().test_item(id).unwrap();
    assert_eq!(
        item("tests/test_new.py::TestK::test_method"),
        "TestK::test_method"
    );
    assert_eq!(item("tests/test_a.py::test_param[x::y]"), "test_param");
    let trivial = attribute(
        file,
        &item("tests/test_new.py::test_trivial"),
        &map,
        &bf.diagnostics,
    );
    // The statement also binds `old_function`, which the trivial test uses, but only
    // `new_function` failed: not the trivial test's failure.
    assert_eq!(d.names, vec!["new_function"]);
    assert!(
        matches!(trivial, Attribution::Elsewhere { .. }),
        "{trivial:?}"
    );
    let uses = attribute(file, "test_uses_import", &map, &bf.diagnostics);
    assert!(
        matches!(&uses, Attribution::InUsedImport { names, .. } if names == &["new_function"]),
        "{uses:?}"
    );

    // A module that is not there fails the whole statement: every name it binds.
    write(
        &fx.dir.join("tests/test_new.py"),
        &new_api.replacen("from app import", "from app_v2 import", 1),
    );
    let report = runner.run(
        &fx.ctx("module"),
        &ids(&["tests/test_new.py::test_trivial"]),
    );
    let bf = report.build_failure.expect("a build failure");
    assert!(bf.diagnostics[0].names.is_empty(), "{:?}", bf.diagnostics);
    assert!(
        bf.diagnostics[0].message.starts_with("ModuleNotFoundError"),
        "{:?}",
        bf.diagnostics
    );
    let trivial = attribute(file, "test_trivial", &map, &bf.diagnostics);
    assert!(
        matches!(&trivial, Attribution::InUsedImport { names, .. } if names == &["old_function"]),
        "{trivial:?}"
    );

    // The same file with the new name imported alone: the trivial test does not use it.
    let split = new_api.replacen(
        "from app import old_function, new_function\n",
        "from app import old_function\nfrom app import new_function\n",
        1,
    );
    write(&fx.dir.join("tests/test_new.py"), &split);
    let report = runner.run(&fx.ctx("run2"), &ids(&["tests/test_new.py::test_trivial"]));
    let bf = report.build_failure.expect("a build failure");
    let map = runner
        .items()
        .item_map(&fx.ctx("map2"), "tests/test_new.py")
        .unwrap();
    let trivial = attribute(file, "test_trivial", &map, &bf.diagnostics);
    assert!(
        matches!(trivial, Attribution::Elsewhere { .. }),
        "{trivial:?} {:?}",
        bf.diagnostics
    );
    let uses = attribute(file, "test_uses_import", &map, &bf.diagnostics);
    assert!(
        matches!(uses, Attribution::InUsedImport { ref names, .. } if names == &["new_function"]),
        "{uses:?}"
    );
    // Through a module-level helper it calls.
    let method = attribute(file, "TestK::test_method", &map, &bf.diagnostics);
    assert!(method.is_own(), "{method:?}");

    // New API called in the body through a module import: a plain failure, an exception; a
    // failed assert is an assertion.
    let report = runner.run(
        &fx.ctx("body"),
        &ids(&[
            "tests/test_body.py::test_calls_new_api",
            "tests/test_body.py::test_asserts",
        ]),
    );
    assert_eq!(
        report.outcomes()["tests/test_body.py::test_calls_new_api"],
        Outcome::Fail
    );
    assert_eq!(
        report.failure_kinds()["tests/test_body.py::test_calls_new_api"],
        FailureKind::Exception
    );
    assert!(
        report.messages()["tests/test_body.py::test_calls_new_api"].contains("AttributeError"),
        "{:?}",
        report.messages()
    );
    assert_eq!(
        report.failure_kinds()["tests/test_body.py::test_asserts"],
        FailureKind::Assertion
    );
    assert!(report.build_failure.is_none());

    // A name base lacks, used in a decorator at import time: inside that item's extent.
    write(
        &fx.dir.join("tests/test_deco.py"),
        "import pytest\nimport app\n\n\ndef test_trivial():\n    pass\n\n\n@pytest.mark.parametrize(\"x\", app.new_values())\ndef test_values(x):\n    assert x\n",
    );
    let report = runner.run(&fx.ctx("deco"), &ids(&["tests/test_deco.py::test_trivial"]));
    let bf = report.build_failure.expect("a build failure");
    let d = &bf.diagnostics[0];
    assert_eq!(
        (d.file.as_str(), d.line),
        ("py/tests/test_deco.py", 9),
        "{d:?}"
    );
    assert!(d.message.starts_with("AttributeError"), "{d:?}");
    let map = runner
        .items()
        .item_map(&fx.ctx("map-deco"), "tests/test_deco.py")
        .unwrap();
    let deco = "py/tests/test_deco.py";
    let a = attribute(deco, "test_values", &map, &bf.diagnostics);
    assert!(matches!(a, Attribution::InTest { .. }), "{a:?}");
    let a = attribute(deco, "test_trivial", &map, &bf.diagnostics);
    assert!(matches!(a, Attribution::Elsewhere { .. }), "{a:?}");

    // A fixture the test requests, and an autouse fixture, need what they use.
    write(
        &fx.dir.join("tests/test_fixtures.py"),
        "import pytest\nfrom app import old_function\nfrom app import new_function\n\n\n@pytest.fixture\ndef made():\n    return new_function()\n\n\ndef test_trivial():\n    assert old_function() == 1\n\n\ndef test_requests(made):\n    assert made\n",
    );
    let report = runner.run(
        &fx.ctx("fixtures"),
        &ids(&["tests/test_fixtures.py::test_trivial"]),
    );
    let bf = report.build_failure.expect("a build failure");
    let map = runner
        .items()
        .item_map(&fx.ctx("map-fixtures"), "tests/test_fixtures.py")
        .unwrap();
    let f = "py/tests/test_fixtures.py";
    assert!(!attribute(f, "test_trivial", &map, &bf.diagnostics).is_own());
    assert!(attribute(f, "test_requests", &map, &bf.diagnostics).is_own());
    write(
        &fx.dir.join("tests/test_fixtures.py"),
        "import pytest\nfrom app import old_function\nfrom app import new_function\n\n\n@pytest.fixture(autouse=True)\ndef everywhere():\n    new_function()\n\n\ndef test_trivial():\n    assert old_function() == 1\n",
    );
    let map = runner
        .items()
        .item_map(&fx.ctx("map-autouse"), "tests/test_fixtures.py")
        .unwrap();
    assert!(attribute(f, "test_trivial", &map, &bf.diagnostics).is_own());

    // A syntax error: its line, inside the item that holds it.
    let report = runner.run(&fx.ctx("syntax"), &ids(&["tests/test_syntax.py::test_ok"]));
    assert_eq!(
        report.outcomes()["tests/test_syntax.py::test_ok"],
        Outcome::BuildFail
    );
    let d = &report.build_failure.unwrap().diagnostics[0];
    assert_eq!(
        (d.file.as_str(), d.line),
        ("py/tests/test_syntax.py", 5),
        "{d:?}"
    );
    assert!(d.message.starts_with("SyntaxError"), "{d:?}");
    // The file does not parse: no map, so nothing is attributed.
    assert!(runner
        .items()
        .item_map(&fx.ctx("map3"), "tests/test_syntax.py")
        .is_none());
    assert!(runner
        .items()
        .item_map(&fx.ctx("map4"), "../outside.py")
        .is_none());
}

#[test]
fn a_scoped_listing_collects_only_those_files() {
    require_pytest();
    let fx = fixture(&[
        ("tests/test_a.py", "def test_one():\n    pass\n"),
        ("tests/sub/test_b.py", TEST_B),
        (
            "tests/helpers.py",
            "def test_not_collected_normally():\n    pass\n",
        ),
    ]);
    let runner = adapter();
    let listed_ids = |scope: ListScope| -> Vec<String> {
        let listed = runner.list(&fx.ctx("list"), &scope);
        assert!(listed.problem.is_none(), "{:?}", listed.problem);
        listed.tests.into_iter().map(|t| t.id).collect()
    };
    let files = |f: &[&str]| ListScope::Files(f.iter().map(|s| s.to_string()).collect());
    assert_eq!(
        listed_ids(files(&["tests/test_a.py"])),
        vec!["tests/test_a.py::test_one"]
    );
    // Not Python, or gone: no test there, and no pytest process.
    let none = runner.list(
        &fx.ctx("none"),
        &files(&["README.md", "tests/test_gone.py"]),
    );
    assert!(none.tests.is_empty() && none.invocations.is_empty());
    // A Python file that is not a test module by its name: the whole suite, as configured.
    assert_eq!(
        listed_ids(files(&["tests/helpers.py", "tests/test_a.py"])),
        vec![
            "tests/sub/test_b.py::test_other",
            "tests/test_a.py::test_one"
        ]
    );
}

#[test]
fn the_worktrees_own_package_imported_from_elsewhere_is_never_observed() {
    require_pytest();
    let fx = fixture(&[
        ("src/pkgx/__init__.py", "def answer():\n    return 41\n"),
        (
            "tests/test_pkgx.py",
            "import pkgx\n\ndef test_answer():\n    assert pkgx.answer() == 42\n",
        ),
    ]);
    // An installed copy of the same package outside the worktree, first on the path: the test
    // would pass against it although the worktree's code is wrong.
    let installed = fx.scratch_root.join("site-packages");
    write(
        &installed.join("pkgx/__init__.py"),
        "def answer():\n    return 42\n",
    );
    let id = "tests/test_pkgx.py::test_answer".to_string();
    let mut ctx = fx.ctx("installed");
    ctx.env
        .push(("PYTHONPATH".into(), installed.clone().into_os_string()));
    let report = adapter().run(&ctx, std::slice::from_ref(&id));
    assert_eq!(
        report
            .outcomes()
            .get(&id)
            .copied()
            .unwrap_or(Outcome::NotObserved),
        Outcome::NotObserved,
        "{report:?}"
    );
    let problem = report.problem.clone().unwrap_or_default();
    assert!(problem.contains("imported `pkgx` from"), "{problem}");
    assert!(
        problem.contains("site-packages/pkgx/__init__.py"),
        "{problem}"
    );
    assert!(problem.contains("py/src/pkgx"), "{problem}");

    // With the worktree's source first on the path, the same run observes the worktree's code.
    let on_path =
        crate::common::builtin_runner(RunnerKind::Pytest, "py", &["-o", "pythonpath=src"]);
    let mut ctx = fx.ctx("source-first");
    ctx.env
        .push(("PYTHONPATH".into(), installed.into_os_string()));
    let report = on_path.run(&ctx, std::slice::from_ref(&id));
    assert_eq!(report.outcomes()[&id], Outcome::Fail, "{report:?}");
    assert_eq!(report.problem, None);
}
