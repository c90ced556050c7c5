//! The runners this build knows, one registered entry each, in the order detection tries them
//! and the acceptance schema names them. A runner is its folder under `runners/` and one line
//! here: its entry says how it is detected in a repository, how its adapter is made, and which
//! files decide how its tests run (the harness guard's, and those a command may write).
//!
//! The order is part of the evidence: detection adds runners in it (every root-level runner
//! first, then per file of head, in this order for each file), and a runner's position is its
//! index in every observation.

use std::sync::Arc;

use super::registered::{Detect, HarnessRule, Registered};
use super::{go, js, junit_command, pytest, rust, Runner};
use crate::acceptance::RunnerConfig;
use crate::error::Error;

/// Every runner of this build, in `RunnerKind::ALL` order.
pub const REGISTRY: &[Registered] = &[
    rust::cargo::REGISTERED,
    rust::nextest::REGISTERED,
    pytest::REGISTERED,
    go::REGISTERED,
    js::vitest::REGISTERED,
    js::jest::REGISTERED,
    junit_command::REGISTERED,
];

/// A set of registered runners: the builtin ones, and any a test adds.
#[derive(Clone)]
pub struct Registry {
    entries: Vec<Registered>,
}

impl Registry {
    /// The runners of this build ([`REGISTRY`]).
    pub fn builtin() -> Registry {
        Registry {
            entries: REGISTRY.to_vec(),
        }
    }

    /// This registry and one more runner after its own: how a runner that is not builtin (a
    /// test's own) is added.
    pub fn with(mut self, entry: Registered) -> Registry {
        self.entries.push(entry);
        self
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[Registered] {
        &self.entries
    }

    /// The adapter of a configured runner; `None` for a kind this registry does not hold.
    pub fn make(&self, config: RunnerConfig) -> Option<Arc<dyn Runner>> {
        let entry = self.entries.iter().find(|e| e.kind == config.kind)?;
        Some((entry.make)(config))
    }

    /// The runners' names, in order, as a help line lists them.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.kind.as_str()).collect()
    }

    /// The runners detected in head's `files`: first every [`Detect::Root`] runner, then, per
    /// file not skipped, every [`Detect::EachFile`] runner that accepts it (`read(path)` reads a
    /// file at head).
    pub fn detect(
        &self,
        files: &[String],
        read: &dyn Fn(&str) -> Result<String, Error>,
    ) -> Result<Vec<RunnerConfig>, Error> {
        let cfg = |kind, root: &str| RunnerConfig {
            kind,
            root: root.to_string(),
            args: vec![],
            setup: None,
            command: None,
            line: 0,
            env_pass: Vec::new(),
        };
        let mut found = Vec::new();
        for e in &self.entries {
            if let Detect::Root(at_root) = e.detect {
                if at_root(files) {
                    found.push(cfg(e.kind, "."));
                }
            }
        }
        let skip = |f: &str| {
            f.split('/')
                .any(|c| matches!(c, "node_modules" | "vendor" | "testdata" | ".git"))
        };
        // Every Go module and every JavaScript package with vitest or jest is a runner of its
        // own, rooted where its go.mod or package.json is.
        for f in files.iter().filter(|f| !skip(f)) {
            let (dir, name) = match f.rsplit_once('/') {
                Some((d, n)) => (d, n),
                None => (".", f.as_str()),
            };
            // Read once, when a runner first asks (each read is a `git show`).
            let once: std::cell::OnceCell<String> = std::cell::OnceCell::new();
            let text = || -> Result<String, Error> {
                if let Some(t) = once.get() {
                    return Ok(t.clone());
                }
                let t = read(f)?;
                Ok(once.get_or_init(|| t).clone())
            };
            for e in &self.entries {
                if let Detect::EachFile(accepts) = e.detect {
                    if accepts(name, &text)? {
                        found.push(cfg(e.kind, dir));
                    }
                }
            }
        }
        Ok(found)
    }

    /// The harness guard's rules, one per registered runner.
    pub fn harness_rules(&self) -> Vec<HarnessRule> {
        self.entries.iter().map(|e| e.harness).collect()
    }
}

/// What a file a command wrote decides, by its path relative to the worktree or home: the
/// first of `entries` whose family names it.
pub fn written(entries: &[Registered], rel: &str) -> Option<&'static str> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let dir = rel.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
    let under = |d: &str| dir == d || dir.ends_with(&format!("/{d}"));
    entries.iter().find_map(|e| (e.written)(name, &under))
}

#[cfg(test)]
mod tests {
    use super::{written, REGISTRY};
    use crate::acceptance::RunnerKind;
    use crate::floor::harness::HarnessFile;

    #[test]
    fn a_package_json_is_read_once_however_many_runners_ask() {
        let reads = std::cell::Cell::new(0);
        let read = |_: &str| {
            reads.set(reads.get() + 1);
            Ok(r#"{"devDependencies": {"jest": "29"}}"#.to_string())
        };
        let found = super::Registry::builtin()
            .detect(&["web/package.json".to_string()], &read)
            .unwrap();
        let kinds: Vec<(&str, &str)> = found
            .iter()
            .map(|r| (r.kind.as_str(), r.root.as_str()))
            .collect();
        assert_eq!(kinds, [("jest", "web")]);
        assert_eq!(
            reads.get(),
            1,
            "vitest and jest both read it: one `git show`"
        );
    }

    /// Every file name a family's rules name, with a directory where the rule needs one.
    const NAMES: &[&str] = &[
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "pyproject.toml",
        "setup.cfg",
        "tox.ini",
        "pytest.py",
        "sitecustomize.py",
        "usercustomize.py",
        "x.pth",
        "Cargo.toml",
        "build.rs",
        ".cargo/config",
        ".cargo/config.toml",
        ".config/nextest.toml",
        "rust-toolchain",
        "rust-toolchain.toml",
        "go.mod",
        "go.work",
        "x.go",
        "x_test.go",
        "package.json",
        ".npmrc",
        ".yarnrc",
        ".yarnrc.yml",
        ".pnpmfile.cjs",
        "jest.config.js",
        "vitest.config.ts",
        "vite.config.mts",
        "setupTests.ts",
        ".babelrc",
        "tsconfig.json",
        "run-tests.sh",
    ];

    #[test]
    fn the_registry_holds_every_runner_kind_in_its_order() {
        let kinds: Vec<RunnerKind> = REGISTRY.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, RunnerKind::ALL);
    }

    /// The families' rules are asked in the registry's order and the first that names a file
    /// decides it: that is only the same as asking them in any other order while no name
    /// belongs to two families.
    #[test]
    fn no_file_belongs_to_two_families() {
        let scripts = vec!["run-tests.sh".to_string()];
        for path in NAMES {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            let differs = |_: &dyn Fn(&str) -> String| true;
            let file = HarnessFile {
                path,
                name,
                dir,
                differs: &differs,
                command_scripts: &scripts,
            };
            let mut harness: Vec<_> = REGISTRY
                .iter()
                .filter_map(|e| (e.harness)(&file).map(|h| h.family))
                .collect();
            harness.dedup();
            assert!(harness.len() <= 1, "{path}: {harness:?}");
            let written: Vec<&str> = REGISTRY
                .iter()
                .filter_map(|e| written(std::slice::from_ref(e), path))
                .collect();
            let mut distinct = written.clone();
            distinct.dedup();
            assert!(distinct.len() <= 1, "{path}: {written:?}");
        }
    }
}
