//! The acceptance set: the change's intent, as acceptance files (`.shipmoor/acceptance.yaml`,
//! `.shipmoor/changes/*.yaml`, each also as `.draft`) and the shared `.shipmoor/config.yaml`.
//!
//! In: each file's bytes and the name to show for it. Out: a validated [`AcceptanceSet`] whose
//! criteria carry their tags, or every problem in the file at once, each with line, column and a
//! `help:` saying how to fix it; then, over every file at base and head, the change's claim
//! ([`claim`]).
//!
//! Steps: (1) parse YAML into a tree that keeps each node's position (`yaml.rs`, over
//! [`crate::spanned_yaml`]); (2) validate the tree against the schema (`schema/`, a file per
//! section): unknown keys, types, id syntax, duplicates, lanes, checks; [`parse`] runs both and
//! reports every problem at once; (3) derive each criterion's tag ([`tags`]); (4) tell this
//! change's claim from inherited criteria ([`claim`]).

pub mod claim;
pub mod derive;
pub mod draft;
pub mod judges;
pub mod parse;
pub(crate) mod schema;
pub mod tags;
pub(crate) mod yaml;

#[cfg(test)]
mod diagnostics_tests;
#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod test_support;

use std::path::{Path, PathBuf};

use crate::error::{Error, InputError};

pub use tags::{tag_for, tag_matches};

/// Whether a person has agreed to the acceptance set: `acceptance.yaml` is committed,
/// `acceptance.yaml.draft` is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AcceptanceState {
    Committed,
    Draft,
}

impl AcceptanceState {
    pub fn as_str(self) -> &'static str {
        match self {
            AcceptanceState::Committed => "committed",
            AcceptanceState::Draft => "draft",
        }
    }
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Lane {
    /// A mechanical check decides.
    Floor,
    /// A judgment criterion: only the judge looks at it (full mode), and it can never pass.
    Judge,
}

impl Lane {
    pub fn as_str(self) -> &'static str {
        match self {
            Lane::Floor => "floor",
            Lane::Judge => "judge",
        }
    }
}

/// An explicit binding of a criterion to a mechanical check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// A runner-native test id.
    Test(String),
    /// A shell command: must exit non-zero at base and 0 at head.
    Command(String),
    /// A regex that must match, at head, inside files the change touched that match `paths`.
    Pattern { paths: Vec<String>, regex: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criterion {
    pub id: String,
    pub ac: String,
    pub required: bool,
    pub lane: Lane,
    pub check: Option<Check>,
    /// `AC-<ID>-<4 hex>`, see [`tag_for`].
    pub tag: String,
    /// 1-based line of the criterion's `id` in the acceptance file.
    pub line: usize,
    /// How sure `acceptance derive` was of the criterion (`confidence:`), when it drafted it.
    pub confidence: Option<Confidence>,
    /// Where `acceptance derive` read it (`source:`, e.g. `pull request #12, line 7`).
    pub source: Option<String>,
}

/// A derivation's confidence in a criterion: a number from 0 to 1.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Confidence(f64);

// Never NaN (see `new`), so equality is total.
impl Eq for Confidence {}

impl Confidence {
    /// `None` unless `v` is a number from 0 to 1.
    pub fn new(v: f64) -> Option<Confidence> {
        (0.0..=1.0).contains(&v).then_some(Confidence(v))
    }

    pub fn value(self) -> f64 {
        self.0
    }
}

impl std::fmt::Display for Confidence {
    /// Two decimals, as drafts write it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:.2}", self.0)
    }
}

impl Criterion {
    /// `stage1.floor.<id with - as _>` for the floor lane, `stage3.byo_judge` for the judge lane.
    pub fn requirement(&self) -> String {
        match self.lane {
            Lane::Floor => format!("stage1.floor.{}", self.id.replace('-', "_")),
            Lane::Judge => "stage3.byo_judge".to_string(),
        }
    }
}

/// A runner's kind: its name in `runners: [{ kind: … }]`. The builtin kinds are the associated
/// constants, in the order the floor's registry of runners holds them; a registry may hold a
/// runner of another name (a test's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RunnerKind(&'static str);

#[allow(non_upper_case_globals)]
impl RunnerKind {
    pub const Cargo: RunnerKind = RunnerKind("cargo");
    pub const Nextest: RunnerKind = RunnerKind("nextest");
    pub const Pytest: RunnerKind = RunnerKind("pytest");
    pub const Go: RunnerKind = RunnerKind("go");
    pub const Vitest: RunnerKind = RunnerKind("vitest");
    pub const Jest: RunnerKind = RunnerKind("jest");
    pub const JunitCommand: RunnerKind = RunnerKind("junit-command");

    pub const ALL: [RunnerKind; 7] = [
        RunnerKind::Cargo,
        RunnerKind::Nextest,
        RunnerKind::Pytest,
        RunnerKind::Go,
        RunnerKind::Vitest,
        RunnerKind::Jest,
        RunnerKind::JunitCommand,
    ];

    /// A kind by its name.
    pub const fn named(name: &'static str) -> RunnerKind {
        RunnerKind(name)
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// The kind of `kinds` (the runners a registry holds) named `s`.
    pub fn parse_in(s: &str, kinds: &[RunnerKind]) -> Option<RunnerKind> {
        kinds.iter().copied().find(|k| k.as_str() == s)
    }
}

/// As its name (`junit-command`).
impl serde::Serialize for RunnerKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerConfig {
    pub kind: RunnerKind,
    /// Directory of the runner's project, relative to the repository root (`.` by default).
    pub root: String,
    /// Extra arguments for the runner.
    pub args: Vec<String>,
    /// A shell command run in each worktree (in `root`) before its tests.
    pub setup: Option<String>,
    /// For `junit-command`: the command that runs tests and writes JUnit XML to
    /// `$SHIPMOOR_JUNIT_OUT`.
    pub command: Option<String>,
    /// 1-based line of this runner entry.
    pub line: usize,
    /// Environment variables passed to this runner's commands although their names look like
    /// credentials (`env_pass: [NPM_TOKEN]`): the floor withholds such names by default.
    pub env_pass: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HarnessConfig {
    /// Globs of test-harness files this change may touch.
    pub allow_changes: Vec<String>,
}

/// What the floor does with criteria inherited from earlier changes (`inherited:` in the
/// project settings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InheritedPolicy {
    /// Listed in the reports, not checked (the default).
    #[default]
    List,
    /// Regression guards: their bound tests must still pass at head (`stage1.floor.guard`).
    Guard,
}

impl InheritedPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            InheritedPolicy::List => "list",
            InheritedPolicy::Guard => "guard",
        }
    }
}

/// The project settings keys, which `.shipmoor/config.yaml` holds and an acceptance file may
/// also carry.
pub const SETTINGS_KEYS: [&str; 6] = ["runners", "judge", "harness", "guard", "inherited", "floor"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcceptanceSet {
    /// The path as the user gave it (or the default), for messages and reports.
    pub display_path: String,
    pub state: AcceptanceState,
    /// Hex SHA-256 of the file's bytes.
    pub sha256: String,
    pub criteria: Vec<Criterion>,
    pub runners: Vec<RunnerConfig>,
    /// The judge's panel (book: judge.md): one judge named `judge` when the block is a mapping, each
    /// named judge of a list otherwise; empty when no judge is configured.
    pub judge: Vec<judges::JudgeSpec>,
    pub harness: HarnessConfig,
    /// The pass-to-pass guard: globs over test ids; tests they match that pass at base must
    /// still pass at head.
    pub guard: Vec<String>,
    /// What the floor does with inherited criteria.
    pub inherited: InheritedPolicy,
    /// `floor.env_pass`: variables every command the floor runs gets although their names look
    /// like credentials (a runner's own `env_pass` adds to these for that runner).
    pub env_pass: Vec<String>,
    /// Which of [`SETTINGS_KEYS`] the file sets (absent keys take the shared settings).
    pub settings_keys: Vec<&'static str>,
    /// For a claim: the file each setting in force comes from, for messages about it.
    pub settings_files: std::collections::BTreeMap<&'static str, String>,
    /// The change's claim, as [`claim`] works it out: the file each criterion comes from (by
    /// id), for the claimed criteria and the inherited ones alike.
    pub origin: std::collections::BTreeMap<String, String>,
    /// Criteria present unchanged at base: never this change's claim.
    pub inherited_criteria: Vec<Criterion>,
    /// Settings files whose settings, present at base, this change edits (book: floor/harness.md).
    pub settings_edits: Vec<String>,
}

impl AcceptanceSet {
    /// The inherited criteria the floor keeps as regression guards: with `inherited: guard`,
    /// the floor-lane ones bound to tests (a command or pattern check is this change's to
    /// prove, not a test to keep green).
    pub fn guarded_criteria(&self) -> Vec<&Criterion> {
        if self.inherited != InheritedPolicy::Guard {
            return Vec::new();
        }
        self.inherited_criteria
            .iter()
            .filter(|c| c.lane == Lane::Floor && matches!(c.check, None | Some(Check::Test(_))))
            .collect()
    }

    /// What the pass-to-pass guard keeps, in words: its globs and the inherited criteria.
    pub fn guard_scope(&self) -> String {
        let mut parts = Vec::new();
        if !self.guard.is_empty() {
            parts.push(format!("guard: {}", self.guard.join(", ")));
        }
        let kept = self.guarded_criteria();
        if !kept.is_empty() {
            let ids: Vec<&str> = kept.iter().map(|c| c.id.as_str()).collect();
            parts.push(format!("inherited: {}", ids.join(", ")));
        }
        parts.join("; ")
    }
}

/// Where the acceptance set was found.
#[derive(Debug, Clone)]
pub struct Located {
    pub path: PathBuf,
    pub display_path: String,
    pub state: AcceptanceState,
}

/// Finds the acceptance file: the given path, or, when that is the default and missing, its
/// `.draft` sibling.
pub fn locate(repo: &Path, given: Option<&Path>) -> Result<Located, Error> {
    let default = Path::new(".shipmoor/acceptance.yaml");
    let (rel, explicit) = match given {
        Some(p) => (p.to_path_buf(), true),
        None => (default.to_path_buf(), false),
    };
    let path = if rel.is_absolute() {
        rel.clone()
    } else if explicit {
        // An explicit relative path is relative to where the user stands, as with any CLI flag.
        std::env::current_dir()
            .map(|d| d.join(&rel))
            .unwrap_or(rel.clone())
    } else {
        repo.join(&rel)
    };
    let display = rel.display().to_string();
    if path.is_file() {
        let state = if display.ends_with(".draft") {
            AcceptanceState::Draft
        } else {
            AcceptanceState::Committed
        };
        return Ok(Located {
            path,
            display_path: display,
            state,
        });
    }
    // Something that is there but no file (a directory, a FIFO, a device) is named as what it
    // is, never read (a FIFO would hang the run).
    if let Ok(meta) = std::fs::metadata(&path) {
        use std::os::unix::fs::FileTypeExt;
        let ft = meta.file_type();
        let kind = if ft.is_dir() {
            "a directory"
        } else if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_socket() {
            "a socket"
        } else if ft.is_block_device() || ft.is_char_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Err(Error::input(
            InputError::new(format!("the acceptance set `{display}` is {kind}, not a file"))
                .in_file(display.clone())
                .help("name the acceptance file itself (a YAML file, such as .shipmoor/acceptance.yaml) with --acceptance"),
        ));
    }
    let draft = PathBuf::from(format!("{}.draft", path.display()));
    if draft.is_file() {
        return Ok(Located {
            path: draft,
            display_path: format!("{display}.draft"),
            state: AcceptanceState::Draft,
        });
    }
    Err(Error::input(
        InputError::new(format!("no acceptance set: `{display}` does not exist (nor `{display}.draft`)"))
            .in_file(display.clone())
            .help("write the criteria as .shipmoor/acceptance.yaml (see the acceptance file reference, https://shipmoor.github.io/claim-check/book/acceptance.html), or name another file with --acceptance"),
    ))
}

/// The largest acceptance file read: 4 MiB (a set of a thousand criteria is a few hundred KiB).
pub const ACCEPTANCE_LIMIT: u64 = 4 << 20;

/// Reads and validates the acceptance file.
pub fn load(located: &Located) -> Result<AcceptanceSet, Error> {
    let bytes = crate::nofollow::read_named(&located.path, ACCEPTANCE_LIMIT).map_err(|e| {
        Error::input(
            InputError::new(format!("the acceptance set {e}"))
                .in_file(located.display_path.clone())
                .help(crate::nofollow::read_help("the acceptance set", &e)),
        )
    })?;
    let text = String::from_utf8(bytes.clone()).map_err(|_| {
        Error::input(
            InputError::new("the acceptance set is not UTF-8 text")
                .in_file(located.display_path.clone())
                .help("save the file as UTF-8"),
        )
    })?;
    let sha = crate::digest::sha256_hex(&bytes);
    parse::parse(&text, &located.display_path, located.state, sha).map_err(Error::Input)
}
