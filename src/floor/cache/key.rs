//! The key of a base run: everything that can change what base observes of the bound tests
//! (book: floor/base-cache.md), as a document whose canonical JSON's SHA-256 names the entry.
//! No secret's value is in it: a variable that looks like a credential is keyed by its name.

use serde::{Deserialize, Serialize};

use crate::digest::{canonical_json, sha256_hex};

/// What the key covers. Every field is compared when a miss is explained
/// ([`KeyInputs::differences`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyInputs {
    /// The shipmoor release, and the version of what the floor observes and how
    /// ([`OBSERVATION_VERSION`]).
    pub shipmoor: String,
    pub observation: u32,
    /// The base commit.
    pub base: String,
    /// `--runs` and `--timeout`.
    pub runs: u32,
    pub timeout_seconds: u64,
    /// The environment the floor's commands get: each variable's name and the SHA-256 of its
    /// value, without the ones that differ on every run of a CI system and mean nothing to a
    /// test ([`volatile`]); a variable that looks like a credential by its name alone (its
    /// value is never written).
    pub environment: Vec<Variable>,
    /// Each runner with its tests, in the run's order.
    pub runners: Vec<RunnerInputs>,
    /// What was laid over base from head: each file whole, each spliced file's text, each
    /// deletion.
    pub laid_over: Vec<FileDigest>,
    pub spliced: Vec<FileDigest>,
    pub deleted: Vec<String>,
    /// The lock files at base and at head (the checkout the workflow installed from).
    pub lock_files: Vec<LockFile>,
    /// The sandbox base's commands run under ([`crate::format::sandbox::SandboxRecord::key`]):
    /// an entry observed under another sandbox (or none) is no observation of this run's.
    pub sandbox: String,
}

/// One variable of the commands' environment.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variable {
    pub name: String,
    /// `None`: a credential's name, whose value stays out of the key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// A runner's part of the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunnerInputs {
    pub kind: String,
    pub root: String,
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub env_pass: Vec<String>,
    /// The toolchain as it reports itself (`rustc -vV`, `cargo -V`, pytest's and Python's
    /// versions, `go version`, `node --version`).
    pub toolchain: Vec<String>,
    /// The bound tests it runs at base, each with its file (they run a file at a time; one
    /// whose file is unknown, alone).
    pub tests: Vec<(String, Option<String>)>,
    /// The tests only the pass-to-pass guard runs (together, in one invocation).
    pub together: Vec<String>,
}

/// A file by its path and the SHA-256 of its bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileDigest {
    pub path: String,
    pub sha256: String,
}

/// A lock file at one side.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockFile {
    /// `base` or `head`.
    pub side: String,
    pub path: String,
    pub sha256: String,
}

/// The version of what the floor observes at base and how it records it. Raised whenever
/// that changes, so that no entry of an older observation is reused.
/// 2: each side's commands run with a private home and temporary directory, in the sandbox.
pub const OBSERVATION_VERSION: u32 = 2;

/// The file names that pin a project's dependencies.
pub const LOCK_FILES: &[&str] = &[
    "Cargo.lock",
    "go.sum",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lock",
    "bun.lockb",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
    "pdm.lock",
    "requirements.txt",
];

/// Variables that differ between the runs of one pull request whatever the change (the CI
/// system's run ids and paths, the terminal's session, Claim Check's own settings): left out
/// of the key, since keying on them would never reuse anything. A test that reads one is a
/// reason to turn the cache off.
pub fn volatile(name: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "GITHUB_",
        "RUNNER_",
        "ACTIONS_",
        "INPUT_",
        "STATE_",
        "SHIPMOOR_",
        "SSH_",
        "TMUX",
        "XDG_SESSION_",
        "TERM_",
        "NEXTEST_",
    ];
    const EXACT: &[&str] = &[
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
        "HOSTNAME",
        "INVOCATION_ID",
        "JOURNAL_STREAM",
        "WINDOWID",
        "STY",
        "SOURCE_DATE_EPOCH",
        "CI",
        "COLUMNS",
        "LINES",
    ];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

impl KeyInputs {
    /// The key: the hex SHA-256 of the inputs' canonical JSON.
    pub fn digest(&self) -> String {
        sha256_hex(&canonical_json(self).unwrap_or_default())
    }

    /// What differs between an entry's inputs and these, by field, for the note of a miss
    /// (`the files laid over base (tests/test_refund.py)`).
    pub fn differences(&self, other: &KeyInputs) -> Vec<String> {
        let mut out = Vec::new();
        if self.shipmoor != other.shipmoor || self.observation != other.observation {
            out.push("the shipmoor release".to_string());
        }
        if self.base != other.base {
            out.push("the base commit".to_string());
        }
        if self.runs != other.runs {
            out.push(format!("--runs ({} then, {} now)", other.runs, self.runs));
        }
        if self.timeout_seconds != other.timeout_seconds {
            out.push("--timeout".to_string());
        }
        if self.sandbox != other.sandbox {
            out.push(format!(
                "the sandbox ({} then, {} now)",
                other.sandbox, self.sandbox
            ));
        }
        let env = changed(&self.environment, &other.environment, |v| v.name.clone());
        if !env.is_empty() {
            out.push(format!("the environment ({})", shorten(&env)));
        }
        if self.runners.len() != other.runners.len() {
            out.push("the runners".to_string());
        } else {
            for (a, b) in self.runners.iter().zip(&other.runners) {
                let what = if a.tests != b.tests {
                    "its tests"
                } else if a.toolchain != b.toolchain {
                    "its toolchain"
                } else if a != b {
                    "its settings"
                } else {
                    continue;
                };
                out.push(format!("the {} runner ({what})", a.kind));
            }
        }
        let path = |f: &FileDigest| f.path.clone();
        let mut laid = changed(&self.laid_over, &other.laid_over, path);
        laid.extend(changed(&self.deleted, &other.deleted, String::clone));
        if !laid.is_empty() {
            out.push(format!("the files laid over base ({})", shorten(&laid)));
        }
        let spliced = changed(&self.spliced, &other.spliced, path);
        if !spliced.is_empty() {
            out.push(format!(
                "the test items spliced into base ({})",
                shorten(&spliced)
            ));
        }
        let locks = changed(&self.lock_files, &other.lock_files, |l| {
            format!("{} at {}", l.path, l.side)
        });
        if !locks.is_empty() {
            out.push(format!("the lock files ({})", shorten(&locks)));
        }
        out
    }
}

/// What is in one of `a` and `b` and not the other, by `label`: sorted, once each.
fn changed<T: PartialEq>(a: &[T], b: &[T], label: impl Fn(&T) -> String) -> Vec<String> {
    let mut v: Vec<String> = a
        .iter()
        .filter(|x| !b.contains(x))
        .chain(b.iter().filter(|x| !a.contains(x)))
        .map(label)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// A list for one line: the first three, and how many more.
fn shorten(v: &[String]) -> String {
    if v.len() <= 3 {
        v.join(", ")
    } else {
        format!("{} and {} more", v[..3].join(", "), v.len() - 3)
    }
}
