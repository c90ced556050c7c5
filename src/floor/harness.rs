//! The harness guard: the head commit is untrusted, and it can rewrite how its own tests are
//! run or reported (a `conftest.py` hook that marks every report passed, `harness = false`, a
//! `build.rs`, `.cargo/config.toml`, nextest or pytest settings, the `test` script of
//! `package.json`, a Go `TestMain`). Changes to such files in base..head are found here; the
//! criteria whose tests they govern read `undecided` unless `harness.allow_changes` covers them.
//!
//! In: the changed files and a way to read a file at base and at head. Out: every
//! [`HarnessChange`], with the runner family and the directory whose tests it governs. Pure but
//! for the reads.

use serde::{Deserialize, Serialize};

use crate::git::Change;

/// The runners a harness file affects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Python,
    Rust,
    Go,
    Js,
    /// A `junit-command` runner's own script.
    Command,
    /// Every runner: the acceptance set's own `runners`, `harness` or `guard`.
    All,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HarnessChange {
    pub path: String,
    /// What the file decides, for reports (`pytest conftest`, `cargo build script`, …).
    pub what: String,
    pub family: Family,
    /// The directory whose tests it governs (`""`: the whole repository).
    pub scope: String,
    /// Covered by `harness.allow_changes`.
    pub allowed: bool,
}

impl HarnessChange {
    /// Whether this change governs a test of a runner of `family` held in `file`
    /// (repo-relative; `None` when the runner does not say, which counts as governed).
    pub fn governs(&self, family: Family, file: Option<&str>) -> bool {
        (self.family == Family::All || family == self.family)
            && match file {
                None => true,
                Some(f) => self.scope.is_empty() || f.starts_with(&format!("{}/", self.scope)),
            }
    }

    /// `path (what)`, or `path (what; allowed)`.
    pub fn label(&self) -> String {
        if self.allowed {
            format!(
                "{} ({}; allowed by harness.allow_changes)",
                self.path, self.what
            )
        } else {
            format!("{} ({})", self.path, self.what)
        }
    }
}

fn dir_of(path: &str) -> String {
    path.rsplit_once('/')
        .map(|(d, _)| d.to_string())
        .unwrap_or_default()
}

fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The text of an INI or TOML section (`[name]` up to the next `[`-header), for comparing.
pub fn section(text: &str, names: &[&str]) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            let header = t.trim_start_matches('[').trim_end_matches(']').trim();
            inside = names
                .iter()
                .any(|n| header == *n || header.starts_with(&format!("{n}.")));
        }
        if inside {
            out.push_str(t);
            out.push('\n');
        }
    }
    out
}

/// What a harness rule compares of a file's text at base and at head.
pub type Extract<'e> = &'e dyn Fn(&str) -> String;

/// A changed file, as a family's harness rule sees it.
pub struct HarnessFile<'a> {
    /// Its path in the repository.
    pub path: &'a str,
    /// Its file name.
    pub name: &'a str,
    /// Its directory (`""`: the repository's root).
    pub dir: &'a str,
    /// Whether the part of the file `extract` takes differs between base and head.
    pub differs: &'a dyn Fn(Extract<'_>) -> bool,
    /// The `junit-command` runners' scripts.
    pub command_scripts: &'a [String],
}

/// What a harness rule found: what the file decides, for reports, the family of the runners
/// it affects, and the directory whose tests it governs (`""`: the whole repository).
pub struct HarnessHit {
    pub what: &'static str,
    pub family: Family,
    pub scope: String,
}

/// Finds the harness changes among `changes`. `read(path, at_head)` gives a file's text at base
/// or head (`None` where it does not exist); `allowed(path)` says whether
/// `harness.allow_changes` covers it; `command_scripts` are the `junit-command` runners' scripts;
/// `rules` are the families' own (the first that names a file decides it).
///
/// `acceptance` is the acceptance file's path in the repository, when it is there: a change that
/// edits the `runners`, `harness` or `guard` of an acceptance set that base already had is
/// rewriting how every test is judged.
pub fn detect(
    changes: &[Change],
    read: &dyn Fn(&str, bool) -> Option<String>,
    allowed: &dyn Fn(&str) -> bool,
    command_scripts: &[String],
    acceptance: Option<&str>,
    rules: &[fn(&HarnessFile<'_>) -> Option<HarnessHit>],
) -> Vec<HarnessChange> {
    let mut found = Vec::new();
    for ch in changes {
        let p = ch.path.as_str();
        if Some(p) == acceptance {
            let base = read(p, false);
            let head = read(p, true).unwrap_or_default();
            if let Some(base) = base {
                if yaml_blocks(&base, &["runners", "harness", "guard"])
                    != yaml_blocks(&head, &["runners", "harness", "guard"])
                {
                    // Never allowed by itself: it would be the change allowing its own harness.
                    found.push(HarnessChange {
                        path: p.to_string(),
                        what: "the acceptance set's runners, harness or guard".into(),
                        family: Family::All,
                        scope: String::new(),
                        allowed: false,
                    });
                }
            }
            continue;
        }
        let name = base_name(p);
        let dir = dir_of(p);
        // Each side's text read once, when a rule first asks (each read is a `git show`).
        let texts = std::cell::OnceCell::new();
        let differs = |extract: &dyn Fn(&str) -> String| {
            let (b, h) = texts.get_or_init(|| (read(p, false), read(p, true)));
            let b = b.as_deref().map(extract).unwrap_or_default();
            let h = h.as_deref().map(extract).unwrap_or_default();
            b != h
        };
        let file = HarnessFile {
            path: p,
            name,
            dir: &dir,
            differs: &differs,
            command_scripts,
        };
        let hit = rules.iter().find_map(|rule| rule(&file));
        if let Some(HarnessHit {
            what,
            family,
            scope,
        }) = hit
        {
            found.push(HarnessChange {
                path: p.to_string(),
                what: what.to_string(),
                family,
                scope,
                allowed: allowed(p),
            });
        }
    }
    found
}

/// The text of the given top-level keys of a YAML document (each key's line and the indented
/// or list lines under it), for comparing.
fn yaml_blocks(text: &str, keys: &[&str]) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.lines() {
        let top = !line.starts_with([' ', '\t', '-', '#']) && !line.trim().is_empty();
        if top {
            let key = line.split(':').next().unwrap_or("").trim();
            inside = keys.contains(&key);
        }
        if inside && !line.trim_start().starts_with('#') {
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(p: &str) -> Change {
        Change {
            status: 'M',
            path: p.into(),
        }
    }

    fn run(paths: &[&str], base: &[(&str, &str)], head: &[(&str, &str)]) -> Vec<HarnessChange> {
        let changes: Vec<Change> = paths.iter().map(|p| ch(p)).collect();
        let read = |p: &str, at_head: bool| {
            let side = if at_head { head } else { base };
            side.iter()
                .find(|(q, _)| *q == p)
                .map(|(_, t)| t.to_string())
        };
        detect(
            &changes,
            &read,
            &|p| p == "allowed/conftest.py",
            &[],
            Some(".shipmoor/acceptance.yaml"),
            &crate::floor::runners::registry::Registry::builtin().harness_rules(),
        )
    }

    #[test]
    fn finds_the_files_that_decide_how_tests_run() {
        let found = run(
            &[
                "tests/conftest.py",
                "build.rs",
                ".cargo/config.toml",
                ".config/nextest.toml",
                "web/vitest.config.ts",
                "web/jest.config.js",
                "src/lib.rs",
                "tests/test_x.py",
                "allowed/conftest.py",
            ],
            &[],
            &[],
        );
        let paths: Vec<&str> = found.iter().map(|h| h.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "tests/conftest.py",
                "build.rs",
                ".cargo/config.toml",
                ".config/nextest.toml",
                "web/vitest.config.ts",
                "web/jest.config.js",
                "allowed/conftest.py"
            ]
        );
        assert_eq!(found[0].scope, "tests");
        assert_eq!(found[2].scope, "");
        assert!(found[6].allowed);
        assert!(!found[0].allowed);
    }

    #[test]
    fn a_shared_file_is_read_once_a_side_however_many_runners_ask() {
        // cargo and nextest (vitest and jest) both ask of a `Cargo.toml` (`package.json`) whose
        // test settings did not change; each read is a `git show`.
        let reads = std::cell::Cell::new(0);
        let read = |_: &str, _: bool| {
            reads.set(reads.get() + 1);
            Some("[package]\nname='a'\n\n{\"name\": \"a\"}".to_string())
        };
        let found = detect(
            &[ch("Cargo.toml"), ch("web/package.json")],
            &read,
            &|_| false,
            &[],
            None,
            &crate::floor::runners::registry::Registry::builtin().harness_rules(),
        );
        assert!(found.is_empty(), "{found:?}");
        assert_eq!(reads.get(), 4, "each file once at base and once at head");
    }

    #[test]
    fn only_test_sections_of_shared_files_count() {
        let pyproject_b = "[project]\nname='a'\n[tool.pytest.ini_options]\naddopts='-q'\n";
        let pyproject_h = "[project]\nname='b'\n[tool.pytest.ini_options]\naddopts='-q'\n";
        assert!(run(
            &["pyproject.toml"],
            &[("pyproject.toml", pyproject_b)],
            &[("pyproject.toml", pyproject_h)]
        )
        .is_empty());
        let pyproject_h2 = "[project]\nname='a'\n[tool.pytest.ini_options]\naddopts='-p evil'\n";
        assert_eq!(
            run(
                &["pyproject.toml"],
                &[("pyproject.toml", pyproject_b)],
                &[("pyproject.toml", pyproject_h2)]
            )
            .len(),
            1
        );

        let cargo_b = "[package]\nname='a'\nversion='0.1.0'\n";
        let cargo_h = "[package]\nname='a'\nversion='0.2.0'\n";
        assert!(run(
            &["Cargo.toml"],
            &[("Cargo.toml", cargo_b)],
            &[("Cargo.toml", cargo_h)]
        )
        .is_empty());
        let cargo_h2 = "[package]\nname='a'\nversion='0.1.0'\n[[test]]\nname='t'\nharness=false\n";
        assert_eq!(
            run(
                &["Cargo.toml"],
                &[("Cargo.toml", cargo_b)],
                &[("Cargo.toml", cargo_h2)]
            )
            .len(),
            1
        );

        let pkg_b = r#"{"name":"a","scripts":{"test":"vitest run","build":"tsc"}}"#;
        let pkg_h = r#"{"name":"a","scripts":{"test":"vitest run","build":"tsc -b"},"dependencies":{"x":"1"}}"#;
        assert!(run(
            &["package.json"],
            &[("package.json", pkg_b)],
            &[("package.json", pkg_h)]
        )
        .is_empty());
        let pkg_h2 = r#"{"name":"a","scripts":{"test":"echo ok","build":"tsc"}}"#;
        assert_eq!(
            run(
                &["package.json"],
                &[("package.json", pkg_b)],
                &[("package.json", pkg_h2)]
            )
            .len(),
            1
        );

        let go_b = "package a\nfunc TestA(t *testing.T) {}\n";
        let go_h = "package a\nfunc TestMain(m *testing.M) { os.Exit(0) }\n";
        assert_eq!(
            run(
                &["a/a_test.go"],
                &[("a/a_test.go", go_b)],
                &[("a/a_test.go", go_h)]
            )
            .len(),
            1
        );
        assert!(run(
            &["a/a_test.go"],
            &[("a/a_test.go", go_b)],
            &[("a/a_test.go", "package a\n")]
        )
        .is_empty());
    }

    #[test]
    fn the_acceptance_sets_own_harness_counts_only_when_base_had_one() {
        let a = ".shipmoor/acceptance.yaml";
        let base = "version: 1\ncriteria:\n  - id: a\n    ac: A.\n";
        let more = "version: 1\ncriteria:\n  - id: a\n    ac: A.\n  - id: b\n    ac: B.\n";
        let allow =
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\nharness:\n  allow_changes: [\"**\"]\n";
        assert!(run(&[a], &[(a, base)], &[(a, more)]).is_empty());
        let found = run(&[a], &[(a, base)], &[(a, allow)]);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].family, Family::All);
        assert!(!found[0].allowed);
        assert!(run(&[a], &[], &[(a, allow)]).is_empty());
        assert!(found[0].governs(Family::Go, Some("x_test.go")));
    }

    #[test]
    fn pytest_9_toml_and_cargo_build_scripts_count() {
        assert_eq!(run(&["pytest.toml"], &[], &[]).len(), 1);
        let b = "[package]\nname='a'\n";
        let h = "[package]\nname='a'\nbuild = \"tools/gen.rs\"\n";
        assert_eq!(
            run(&["Cargo.toml"], &[("Cargo.toml", b)], &[("Cargo.toml", h)]).len(),
            1
        );
        let t = "[package]\nname='a'\n[[test]]\nname = \"x\"\npath = \"tests/x.rs\"\n";
        assert_eq!(
            run(&["Cargo.toml"], &[("Cargo.toml", b)], &[("Cargo.toml", t)]).len(),
            1
        );
    }

    #[test]
    fn governs_by_family_and_directory() {
        let h = HarnessChange {
            path: "tests/conftest.py".into(),
            what: "pytest conftest".into(),
            family: Family::Python,
            scope: "tests".into(),
            allowed: false,
        };
        assert!(h.governs(Family::Python, Some("tests/test_a.py")));
        assert!(h.governs(Family::Python, Some("tests/sub/test_a.py")));
        assert!(!h.governs(Family::Python, Some("other/test_a.py")));
        assert!(!h.governs(Family::Python, Some("tests_extra/test_a.py")));
        assert!(!h.governs(Family::Rust, Some("tests/a.rs")));
        assert!(h.governs(Family::Python, None));
    }
}
