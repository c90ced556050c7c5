//! Binding criteria to checks, and choosing the files laid over the base worktree. Pure: it
//! reads listings and the change's file list, and returns bindings and paths.

use crate::acceptance::{tag_matches, Check, Criterion, Lane};
use crate::floor::runners::{RunnerId, TestCase};
use crate::git::Change;

/// A test, by the runner that listed it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BoundTest {
    pub runner: RunnerId,
    pub id: String,
    pub file: Option<String>,
}

impl BoundTest {
    /// The key of this test's observations.
    pub fn key(&self) -> TestKey {
        TestKey {
            runner: self.runner,
            id: self.id.clone(),
        }
    }
}

/// A test as the floor's observations are keyed: its runner, then its runner-native id (in
/// that order, so the keys sort by runner first).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TestKey {
    pub runner: RunnerId,
    pub id: String,
}

/// How a criterion is bound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// A judgment criterion: no floor check.
    JudgeLane,
    /// Tests whose id or file path carries the tag (empty: unbound).
    Tag(Vec<BoundTest>),
    /// `check.test`: the tests that id names (empty: it names no test at head, and `near`
    /// holds the listed ids closest to it, for "did you mean").
    ExplicitTest {
        id: String,
        tests: Vec<BoundTest>,
        near: Vec<String>,
    },
    Command(String),
    Pattern {
        paths: Vec<String>,
        regex: String,
    },
}

impl Binding {
    pub fn kind(&self) -> &'static str {
        match self {
            Binding::JudgeLane => "judge_lane",
            Binding::Tag(_) => "tag",
            Binding::ExplicitTest { .. } => "check.test",
            Binding::Command(_) => "check.command",
            Binding::Pattern { .. } => "check.pattern",
        }
    }

    pub fn tests(&self) -> &[BoundTest] {
        match self {
            Binding::Tag(t) => t,
            Binding::ExplicitTest { tests, .. } => tests,
            _ => &[],
        }
    }
}

/// Whether the criterion needs test listings to be bound.
pub fn needs_tests(c: &Criterion) -> bool {
    c.lane == Lane::Floor && matches!(c.check, None | Some(Check::Test(_)))
}

/// Binds one criterion given every runner's head listing (`listings[i]` for runner i).
pub fn bind(c: &Criterion, listings: &[impl AsRef<[TestCase]>]) -> Binding {
    if c.lane == Lane::Judge {
        return Binding::JudgeLane;
    }
    match &c.check {
        Some(Check::Command(cmd)) => Binding::Command(cmd.clone()),
        Some(Check::Pattern { paths, regex }) => Binding::Pattern {
            paths: paths.clone(),
            regex: regex.clone(),
        },
        Some(Check::Test(id)) => {
            let tests = explicit(id, listings);
            let near = if tests.is_empty() {
                near_ids(id, listings)
            } else {
                Vec::new()
            };
            Binding::ExplicitTest {
                id: id.clone(),
                tests,
                near,
            }
        }
        None => {
            let mut tests = Vec::new();
            for (runner, listing) in listings.iter().enumerate() {
                for t in listing.as_ref() {
                    let by_id = tag_matches(&t.id, &c.tag);
                    let by_file = t.file.as_deref().is_some_and(|f| tag_matches(f, &c.tag));
                    if by_id || by_file {
                        tests.push(BoundTest {
                            runner: RunnerId(runner),
                            id: t.id.clone(),
                            file: t.file.clone(),
                        });
                    }
                }
            }
            tests.sort();
            tests.dedup();
            Binding::Tag(tests)
        }
    }
}

/// The tests an explicit `check.test` id names: the exact id; a pytest node id that names every
/// parametrization (`test_x` for `test_x[1]`, `test_x[2]`); or, for cargo and nextest, a bare
/// test name that exactly one binary holds; or a Go subtest of a listed test.
fn explicit(id: &str, listings: &[impl AsRef<[TestCase]>]) -> Vec<BoundTest> {
    let mut found = Vec::new();
    let mut by_name = Vec::new();
    for (runner, listing) in listings.iter().enumerate() {
        for t in listing.as_ref() {
            let param =
                t.id.strip_prefix(id)
                    .is_some_and(|rest| rest.starts_with('[') && rest.ends_with(']'));
            // A Go subtest (`pkg TestA/sub`) that no run of its listed parent reported.
            let subtest = id
                .strip_prefix(t.id.as_str())
                .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'));
            let bt = BoundTest {
                runner: RunnerId(runner),
                id: t.id.clone(),
                file: t.file.clone(),
            };
            if subtest {
                found.push(BoundTest {
                    id: id.to_string(),
                    ..bt
                });
            } else if t.id == id || param {
                found.push(bt);
            } else if t.id.split_once(' ').map(|(_, name)| name) == Some(id) {
                by_name.push(bt);
            }
        }
    }
    if found.is_empty() && by_name.len() == 1 {
        found = by_name;
    }
    found.sort();
    // A listed Go subtest is found both as itself and below its listed parent.
    found.dedup();
    found
}

/// The listed ids nearest to a `check.test` id that names none (a typo, a renamed test), at
/// most three, each once however many runners list it.
fn near_ids(id: &str, listings: &[impl AsRef<[TestCase]>]) -> Vec<String> {
    let mut ids: Vec<&str> = listings
        .iter()
        .flat_map(|l| l.as_ref())
        .map(|t| t.id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    crate::text::nearest(id, &ids, 3)
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// The files laid over the base worktree: changed files a runner treats as tests, and every
/// changed file whose path carries a bound criterion's tag, plus a `check.command` script the
/// change added or edited. Returns (paths to take from head, paths to delete).
pub fn overlay(
    changes: &[Change],
    is_test_file: &dyn Fn(&str) -> bool,
    tags: &[&str],
    command_scripts: &[String],
) -> (Vec<String>, Vec<String>) {
    let mut take = Vec::new();
    let mut delete = Vec::new();
    for ch in changes {
        let p = ch.path.as_str();
        let wanted = is_test_file(p)
            || tags.iter().any(|t| tag_matches(p, t))
            || command_scripts.iter().any(|s| s == p);
        if !wanted {
            continue;
        }
        if ch.status == 'D' {
            delete.push(ch.path.clone());
        } else {
            take.push(ch.path.clone());
        }
    }
    take.sort();
    delete.sort();
    (take, delete)
}

/// The script a command runs, to lay over base when the change added or edited it: the first
/// word when it is a relative path (`scripts/check.sh --x`), or the first operand of an
/// interpreter (`python3 scripts/check.py`, `sh -e check.sh`). Only the script: a data file the
/// command reads (`grep -q x a.txt`) must stay as base has it.
pub fn command_paths(cmd: &str) -> Vec<String> {
    const INTERPRETERS: &[&str] = &[
        "sh", "bash", "dash", "zsh", "python", "python3", "node", "ruby", "perl", "php", "deno",
        "bun",
    ];
    let words: Vec<&str> = cmd
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
        .collect();
    let clean = |w: &str| w.strip_prefix("./").unwrap_or(w).to_string();
    let Some(first) = words.first() else {
        return Vec::new();
    };
    if first.contains('/') && !first.starts_with('/') {
        return vec![clean(first)];
    }
    let program = first.rsplit('/').next().unwrap_or(first);
    if INTERPRETERS.contains(&program) {
        if let Some(script) = words[1..].iter().find(|w| !w.starts_with('-')) {
            if !script.starts_with('/') && !script.is_empty() {
                return vec![clean(script)];
            }
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acceptance::tag_for;

    fn crit(id: &str, check: Option<Check>) -> Criterion {
        Criterion {
            id: id.into(),
            ac: "x".into(),
            required: true,
            lane: Lane::Floor,
            check,
            tag: tag_for(id),
            line: 1,
            confidence: None,
            source: None,
        }
    }

    fn tc(id: &str, file: &str) -> TestCase {
        TestCase {
            id: id.into(),
            file: Some(file.into()),
        }
    }

    #[test]
    fn binds_by_id_or_file_path() {
        let c = crit("refund-idempotent", None);
        let listing = vec![
            tc(
                "tests/test_a.py::test_refund_ac_refund_idempotent_10fd",
                "tests/test_a.py",
            ),
            tc(
                "tests/test_AC_REFUND_IDEMPOTENT_10fd.py::test_one",
                "tests/test_AC_REFUND_IDEMPOTENT_10fd.py",
            ),
            tc("tests/test_a.py::test_other", "tests/test_a.py"),
        ];
        let b = bind(&c, &[listing]);
        assert_eq!(b.tests().len(), 2);
        let c2 = crit("audit-log", None);
        assert_eq!(bind(&c2, &[vec![tc("a::b", "x.rs")]]), Binding::Tag(vec![]));
    }

    #[test]
    fn explicit_ids_are_exact() {
        let listing = vec![
            tc("tests/t.py::test_x[1]", "tests/t.py"),
            tc("tests/t.py::test_x[2]", "tests/t.py"),
            tc("tests/t.py::test_xy", "tests/t.py"),
            tc("crate::it void_called", "tests/it.rs"),
        ];
        let b = bind(
            &crit("a", Some(Check::Test("tests/t.py::test_x".into()))),
            std::slice::from_ref(&listing),
        );
        assert_eq!(b.tests().len(), 2);
        let b = bind(
            &crit("a", Some(Check::Test("void_called".into()))),
            std::slice::from_ref(&listing),
        );
        assert_eq!(b.tests().len(), 1);
        let go = vec![tc("example.com/m TestA", "a_test.go")];
        let b = bind(
            &crit("a", Some(Check::Test("example.com/m TestA/sub".into()))),
            std::slice::from_ref(&go),
        );
        assert_eq!(b.tests()[0].id, "example.com/m TestA/sub");
        let b = bind(
            &crit("a", Some(Check::Test("example.com/m TestAB".into()))),
            std::slice::from_ref(&go),
        );
        assert!(b.tests().is_empty());
        // Listed subtests (found by running their parent): the full id binds once, and the
        // name alone binds where one package has it.
        let mut listed = go.clone();
        listed.push(tc("example.com/m TestA/sub", "a_test.go"));
        listed.push(tc("example.com/m TestA/sub/deep", "a_test.go"));
        for id in ["example.com/m TestA/sub/deep", "TestA/sub/deep"] {
            let b = bind(
                &crit("a", Some(Check::Test(id.into()))),
                std::slice::from_ref(&listed),
            );
            let ids: Vec<&str> = b.tests().iter().map(|t| t.id.as_str()).collect();
            assert_eq!(ids, vec!["example.com/m TestA/sub/deep"], "{id}");
        }
        let b = bind(
            &crit("a", Some(Check::Test("tests/t.py::test_z".into()))),
            &[listing],
        );
        assert!(b.tests().is_empty());
    }

    /// A `check.test` that names no listed test carries the nearest listed ids, each once
    /// across runners, nearest first; one that binds, or is near nothing, carries none.
    #[test]
    fn an_explicit_id_that_names_nothing_carries_the_nearest_listed_ids() {
        let py = vec![
            tc(
                "tests/test_refund.py::test_refund_twice",
                "tests/test_refund.py",
            ),
            tc(
                "tests/test_refund.py::test_refund_once",
                "tests/test_refund.py",
            ),
            tc("tests/test_audit.py::test_audit_log", "tests/test_audit.py"),
        ];
        let near = |id: &str, listings: &[Vec<TestCase>]| match bind(
            &crit("a", Some(Check::Test(id.into()))),
            listings,
        ) {
            Binding::ExplicitTest { near, .. } => near,
            other => panic!("{other:?}"),
        };
        let both = [py.clone(), py.clone()];
        assert_eq!(
            near("tests/test_refund.py::test_refund_twise", &both),
            vec![
                "tests/test_refund.py::test_refund_twice",
                "tests/test_refund.py::test_refund_once"
            ]
        );
        assert!(near("tests/test_refund.py::test_refund_twice", &both).is_empty());
        assert!(near("crate::it void_called", &both).is_empty());
    }

    #[test]
    fn overlay_takes_test_files_tagged_files_and_scripts() {
        let ch = |s: char, p: &str| Change {
            status: s,
            path: p.into(),
        };
        let changes = vec![
            ch('M', "src/lib.rs"),
            ch('A', "tests/new.rs"),
            ch('D', "tests/old.rs"),
            ch('A', "fixtures/ac_audit_log_fb7d.json"),
            ch('A', "scripts/check.sh"),
        ];
        let (take, delete) = overlay(
            &changes,
            &|p| p.starts_with("tests/"),
            &["AC-AUDIT-LOG-fb7d"],
            &["scripts/check.sh".to_string()],
        );
        assert_eq!(
            take,
            [
                "fixtures/ac_audit_log_fb7d.json",
                "scripts/check.sh",
                "tests/new.rs"
            ]
        );
        assert_eq!(delete, ["tests/old.rs"]);
        assert_eq!(
            command_paths("python3 scripts/check.py --strict"),
            ["scripts/check.py"]
        );
        assert_eq!(command_paths("sh -e check.sh"), ["check.sh"]);
        assert!(command_paths("grep -q x a.txt").is_empty());
        assert!(command_paths("make check").is_empty());
    }
}
