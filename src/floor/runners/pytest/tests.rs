use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use super::diagnostics::{parse_collect_errors, parse_conftest_errors, traceback_files};
use super::list::parse_collect_only;
use super::report::{failure_kind, junit_collect_errors, junit_key};
use super::*;
use crate::floor::runners::junit::{parse_junit, JunitCase, JunitStatus};
use crate::floor::runners::kit::safe_relative;
use crate::floor::runners::FailureKind;

fn ctx() -> RunCtx {
    RunCtx {
        worktree: PathBuf::from("/tmp/wt"),
        dir: PathBuf::from("/tmp/wt/py"),
        scratch: PathBuf::from("/tmp/scratch"),
        timeout: Duration::from_secs(5),
        env: vec![],
        jail: crate::sandbox::Jail::none(),
    }
}

#[test]
fn test_files() {
    assert!(is_pytest_test_file("test_a.py"));
    assert!(is_pytest_test_file("pkg/a_test.py"));
    assert!(is_pytest_test_file("pkg/conftest.py"));
    assert!(is_pytest_test_file("tests/helpers.py"));
    assert!(is_pytest_test_file("tests/data/x.json"));
    assert!(is_pytest_test_file("src/test/util.py"));
    assert!(!is_pytest_test_file("src/app.py"));
    assert!(!is_pytest_test_file("src/testing.py"));
    assert!(!is_pytest_test_file("tests"));
    assert!(!is_pytest_test_file("test_a.txt"));
}

#[test]
fn junit_keys() {
    let k = |s: &str| junit_key(s);
    assert_eq!(
        k("tests/test_a.py::test_pass"),
        ("tests.test_a".into(), "test_pass".into())
    );
    assert_eq!(
        k("tests/test_a.py::TestA::TestInner::test_c"),
        ("tests.test_a.TestA.TestInner".into(), "test_c".into())
    );
    assert_eq!(
        k("tests/test_a.py::test_param[x::y]"),
        ("tests.test_a".into(), "test_param[x::y]".into())
    );
    assert_eq!(
        k("tests/test_a.py::test_weird[a/b]"),
        ("tests.test_a".into(), "test_weird[a/b]".into())
    );
    assert_eq!(k("test_top.py::t"), ("test_top".into(), "t".into()));
}

#[test]
fn collect_only_output() {
    let out = "tests/sub/test_b.py::test_other\ntests/test_a.py::test_param[a b]\ntests/test_a.py::TestA::test_b\n\n==================================== ERRORS ====================================\n____________________ ERROR collecting tests/test_broken.py _____________________\nImportError while importing test module '/tmp/wt/py/tests/test_broken.py'.\nTraceback:\n/usr/lib/python3.11/importlib/__init__.py:126: in import_module\n    return _bootstrap._gcd_import(name[level:], package, level)\ntests/test_broken.py:1: in <module>\n    import nonexistent_module_xyz\nE   ModuleNotFoundError: No module named 'nonexistent_module_xyz'\n____________________ ERROR collecting tests/test_syntax.py _____________________\n/usr/lib/python3.11/site-packages/_pytest/python.py:528: in importtestmodule\n    mod = import_path(\nE     File \"/tmp/wt/py/tests/test_syntax.py\", line 1\nE       def test_y(:\nE                  ^\nE   SyntaxError: invalid syntax\n=========================== short test summary info ============================\nERROR tests/test_broken.py\nERROR tests/test_syntax.py\n!!!!!!!!!!!!!!!!!!! Interrupted: 2 errors during collection !!!!!!!!!!!!!!!!!!!!\n3 tests collected, 2 errors in 0.21s\n";
    assert_eq!(
        parse_collect_only(out),
        vec![
            "tests/sub/test_b.py::test_other",
            "tests/test_a.py::test_param[a b]",
            "tests/test_a.py::TestA::test_b"
        ]
    );
    let errors = parse_collect_errors(out);
    assert_eq!(errors.len(), 2);
    assert_eq!(errors[0].node, "tests/test_broken.py");
    assert_eq!(errors[1].node, "tests/test_syntax.py");
    let c = ctx();
    assert_eq!(errors[0].files(&c), vec!["py/tests/test_broken.py"]);
    assert_eq!(errors[1].files(&c), vec!["py/tests/test_syntax.py"]);
    assert!(errors[0].covers("tests/test_broken.py::test_x"));
    assert!(!errors[0].covers("tests/test_broken.py2::test_x"));
    assert!(!errors[0].covers("tests/test_a.py::test_x"));

    // Nothing collected and only errors.
    let only_errors = "\n==================================== ERRORS ====================================\n____ ERROR collecting tests/test_x.py ____\nE   NameError: x\n";
    assert!(parse_collect_only(only_errors).is_empty());
    assert_eq!(parse_collect_errors(only_errors).len(), 1);
    assert!(parse_collect_only("\nno tests collected in 0.00s\n").is_empty());
}

#[test]
fn collection_failures_in_the_junit_file() {
    let xml = br#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="0" skipped="0" tests="2"><testcase classname="" name="tests.test_broken" time="0.000"><error message="collection failure">Traceback:
tests/test_broken.py:2: in &lt;module&gt;
    from app import newname
E   ImportError: cannot import name 'newname' from 'app'</error></testcase><testcase classname="tests.test_a" name="test_c" time="0.001" /></testsuite></testsuites>"#;
    let cases = parse_junit(xml).unwrap();
    let files: BTreeSet<&str> = ["tests/test_broken.py", "tests/test_a.py"].into();
    let errors = junit_collect_errors(&cases, &files);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].node, "tests/test_broken.py");
    assert!(errors[0].covers("tests/test_broken.py::test_x"));
    let d = errors[0].diagnostic(&ctx()).unwrap();
    assert_eq!((d.file.as_str(), d.line), ("py/tests/test_broken.py", 2));
    assert_eq!(d.names, vec!["newname"]);
    // Two requested files that mangle to one name: left to the output's sections.
    let both: BTreeSet<&str> = ["tests/test_broken.py", "tests.test_broken.py"].into();
    assert!(junit_collect_errors(&cases, &both).is_empty());
}

#[test]
fn conftest_errors() {
    let err = "ImportError while loading conftest '/tmp/wt/py/tests/conftest.py'.\ntests/conftest.py:1: in <module>\n    import nope_mod\nE   ModuleNotFoundError: No module named 'nope_mod'\n";
    let errors = parse_conftest_errors(err);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].conftest);
    assert!(errors[0].covers("anything.py::t"));
    assert_eq!(errors[0].files(&ctx()), vec!["py/tests/conftest.py"]);
}

#[test]
fn traceback_file_lines() {
    let body = "tests/test_x.py:1: in <module>\n    from app import f\napp.py:3: in <module>\n    raise X\nE     File \"/tmp/wt/py/app2.py\", line 4\n<frozen importlib._bootstrap>:1204: in _gcd_import\n";
    assert_eq!(
        traceback_files(body),
        vec!["tests/test_x.py", "app.py", "/tmp/wt/py/app2.py"]
    );
}

#[test]
fn failure_kinds() {
    let case = |message: &str, text: &str| JunitCase {
        classname: "tests.test_a".into(),
        name: "t".into(),
        file: None,
        status: JunitStatus::Failed,
        message: Some(message.into()),
        text: Some(text.into()),
    };
    let k = |m: &str, t: &str| failure_kind(&case(m, t));
    assert_eq!(
            k("assert 1 == 2", "def test_a():\n>       assert 1 == 2\nE       assert 1 == 2\n\ntests/test_a.py:2: AssertionError"),
            Some(FailureKind::Assertion)
        );
    assert_eq!(
        k(
            "ValueError: x",
            "E       ValueError: x\n\ntests/test_a.py:4: ValueError"
        ),
        Some(FailureKind::Exception)
    );
    // `--tb=short`: only `E` lines.
    assert_eq!(
            k("AttributeError: module 'app' has no attribute 'f'", "tests/test_a.py:4: in test_a\n    app.f()\nE   AttributeError: module 'app' has no attribute 'f'"),
            Some(FailureKind::Exception)
        );
    assert_eq!(k("Failed: nope", ""), Some(FailureKind::Assertion));
    assert_eq!(
        k("failed on setup with \"RuntimeError: setup boom\"", ""),
        Some(FailureKind::Exception)
    );
    assert_eq!(k("", ""), None);
}

#[test]
fn collection_error_positions() {
    let tmp = tempfile::tempdir().unwrap();
    let wt = tmp.path().join("wt");
    for f in ["py/tests/test_x.py", "py/helper.py"] {
        std::fs::create_dir_all(wt.join(f).parent().unwrap()).unwrap();
        std::fs::write(wt.join(f), "").unwrap();
    }
    let c = RunCtx {
        worktree: wt.clone(),
        dir: wt.join("py"),
        ..ctx()
    };
    let d = |out: &str| {
        parse_collect_errors(out)[0]
            .diagnostic(&c)
            .map(|d| (d.file, d.line, d.message))
    };
    let import = "____ ERROR collecting tests/test_x.py ____\nImportError while importing test module '/x/tests/test_x.py'.\nTraceback:\n/usr/lib/python3.11/importlib/__init__.py:126: in import_module\n    return _bootstrap._gcd_import(name[level:], package, level)\ntests/test_x.py:3: in <module>\n    from app import new\nE   ImportError: cannot import name 'new' from 'app'\n";
    assert_eq!(
        d(import),
        Some((
            "py/tests/test_x.py".into(),
            3,
            "ImportError: cannot import name 'new' from 'app'".into()
        ))
    );
    // Raised inside a module the test imports: that module's line, not the test's.
    let via = "____ ERROR collecting tests/test_x.py ____\ntests/test_x.py:1: in <module>\n    from helper import h\nhelper.py:2: in <module>\n    from app import nothere\nE   ImportError: cannot import name 'nothere'\n";
    assert_eq!(d(via).map(|d| (d.0, d.1)), Some(("py/helper.py".into(), 2)));
    let syntax = format!("____ ERROR collecting tests/test_x.py ____\n/usr/lib/python3.11/ast.py:50: in parse\n    return compile(source, filename, mode, flags,\nE     File \"{}/py/tests/test_x.py\", line 4\nE       bad indent\nE                 ^\nE   IndentationError: unindent does not match any outer indentation level\n", wt.display());
    assert_eq!(
        d(&syntax),
        Some((
            "py/tests/test_x.py".into(),
            4,
            "IndentationError: unindent does not match any outer indentation level".into()
        ))
    );
    // Only installed packages in the traceback: no position to attribute by.
    let outside = "____ ERROR collecting tests/test_x.py ____\n/usr/lib/python3.11/site-packages/p.py:3: in f\nE   RuntimeError: x\n";
    assert_eq!(d(outside), None);
}

#[test]
fn node_files() {
    assert_eq!(node_file("tests/a.py::t[x::y]"), Some("tests/a.py"));
    assert!(safe_relative("tests/a.py"));
    assert!(!safe_relative("../a.py"));
    assert!(!safe_relative("/etc/a.py"));
}
