//! Step 2 of parsing an acceptance file: the spanned tree → the typed pieces of a set.
//!
//! The tree ([`super::yaml`]) is walked against the schema with the typed readers of
//! [`crate::spanned_yaml::Validator`] (which also say how scalars are read). Every problem is
//! collected instead of stopping at the first: unknown keys (with a did-you-mean), wrong types,
//! id syntax, duplicate ids, lanes, checks, runners, judge, harness.
//!
//! This file reads the top level (its keys, `version`, `inherited`, `guard`) and hands each other
//! section to a file of its own:
//! - [`criteria`]: the criteria, their ids and lanes, and their checks (`test`, `command`,
//!   `pattern`);
//! - [`runners`]: the runners and the `floor` section;
//! - [`judges`]: the judge, or the panel of judges, and its settings;
//! - [`harness`]: the files the change may edit in the test harness.

use saphyr_parser::ScalarStyle;

use super::judges::JudgeSpec;
use super::{Criterion, HarnessConfig, InheritedPolicy, RunnerConfig, RunnerKind, SETTINGS_KEYS};
use crate::spanned_yaml::{core_int, describe, is_null, Entry, Kind, Node, Pos, Validator};

mod criteria;
mod harness;
mod judges;
mod runners;

const TOP_KEYS: &[&str] = &[
    "version",
    "criteria",
    "runners",
    "judge",
    "harness",
    "guard",
    "inherited",
    "floor",
];
const CONFIG_KEYS: &[&str] = &[
    "version",
    "runners",
    "judge",
    "harness",
    "guard",
    "inherited",
    "floor",
];
/// Keys an earlier release spelled otherwise: the old spelling gets a did-you-mean to the new
/// one, which the edit distance alone would not find.
const RENAMED_KEYS: &[(&str, &str)] = &[("timeout_seconds", "timeout")];

/// The validated pieces of a set, before the file's identity is attached.
pub(super) struct Parts {
    pub(super) criteria: Vec<Criterion>,
    pub(super) runners: Vec<RunnerConfig>,
    /// The panel (one judge, named `judge`, when the block is a mapping); empty for none.
    pub(super) judge: Vec<JudgeSpec>,
    pub(super) harness: HarnessConfig,
    pub(super) guard: Vec<String>,
    pub(super) inherited: InheritedPolicy,
    pub(super) env_pass: Vec<String>,
    pub(super) settings_keys: Vec<&'static str>,
}

/// Walks an acceptance file's tree against the schema and collects every problem. Each method
/// returns `None` when the part it reads is invalid, having recorded why; the caller keeps going
/// so that later problems surface too.
pub(super) struct Reader {
    pub(super) v: Validator,
    /// Reading `.shipmoor/config.yaml`: settings only, no criteria.
    config: bool,
    /// The runner kinds `runners` may name (a registry's).
    runner_kinds: Vec<RunnerKind>,
}

impl Reader {
    /// A reader of an acceptance file, or (`config`) of `.shipmoor/config.yaml`.
    pub(super) fn new(config: bool, runner_kinds: &[RunnerKind]) -> Reader {
        Reader {
            v: Validator {
                renamed: RENAMED_KEYS,
                ..Validator::default()
            },
            config,
            runner_kinds: runner_kinds.to_vec(),
        }
    }

    pub(super) fn document(&mut self, root: Option<&Node>) -> Option<Parts> {
        const SKELETON: &str = "start with `version: 1` and a `criteria:` list \
            (see the acceptance file reference, https://shipmoor.github.io/claim-check/book/acceptance.html)";
        const SETTINGS: &str = "start with `version: 1` and the settings every change shares \
            (see the acceptance file reference, https://shipmoor.github.io/claim-check/book/acceptance.html)";
        let root = match root {
            Some(node) if !is_null(node) => node,
            _ if self.config => {
                self.v
                    .report(Pos::START, "the settings file is empty", SETTINGS);
                return None;
            }
            _ => {
                self.v
                    .report(Pos::START, "the acceptance file is empty", SKELETON);
                return None;
            }
        };
        let entries = match &root.kind {
            Kind::Map(entries) => entries,
            Kind::Rejected => return None,
            _ if self.config => {
                self.v.report(
                    Pos::START,
                    format!(
                        "the settings file must be a mapping with `version` and settings, found {}",
                        describe(root)
                    ),
                    SETTINGS,
                );
                return None;
            }
            _ => {
                self.v.report(
                    Pos::START,
                    format!(
                        "the acceptance file must be a mapping with `version` and `criteria`, found {}",
                        describe(root)
                    ),
                    SKELETON,
                );
                return None;
            }
        };
        let f = if self.config {
            if let Some(e) = entries.iter().find(|e| e.key == "criteria") {
                self.v.report(
                    e.key_pos,
                    "`.shipmoor/config.yaml` holds project settings only, not criteria",
                    "move the criteria into the change's own file, `.shipmoor/changes/<name>.yaml`",
                );
            }
            // `criteria` is reported above, with its own help; the other keys as anywhere.
            self.v
                .fields_except(entries, CONFIG_KEYS, "the project settings", &["criteria"])
        } else {
            self.v.fields(entries, TOP_KEYS, "the top level")
        };

        let version = match f.raw("version") {
            Some(e) => self.version(e),
            None => {
                self.v.report(
                    root.pos,
                    "missing `version`",
                    "add `version: 1` at the top of the file",
                );
                None
            }
        };
        let criteria = match f.raw("criteria") {
            _ if self.config => Some(Vec::new()),
            Some(e) => self.criteria(e),
            None => {
                self.v.report(
                    root.pos,
                    "missing `criteria`",
                    "add a `criteria:` list, each item like `- id: <id>` with `ac: <what must be true>`",
                );
                None
            }
        };
        let runners = match f.get("runners") {
            Some(e) => self.runners(e),
            None => Some(Vec::new()),
        };
        let judge = match f.get("judge") {
            Some(e) => self.judges(e),
            None => Some(Vec::new()),
        };
        let harness = match f.get("harness") {
            Some(e) => self.harness(e),
            None => Some(HarnessConfig::default()),
        };
        let guard = match f.get("guard") {
            Some(e) => self.v.globs(e, "guard: [\"tests/**\"]"),
            None => Some(Vec::new()),
        };
        let inherited = match f.get("inherited") {
            Some(e) => self.inherited(e),
            None => Some(InheritedPolicy::default()),
        };
        let env_pass = match f.get("floor") {
            Some(e) => self.floor_settings(e),
            None => Some(Vec::new()),
        };
        let settings_keys: Vec<&'static str> = SETTINGS_KEYS
            .iter()
            .copied()
            .filter(|k| f.get(k).is_some())
            .collect();
        // The pass-to-pass guard reports as `stage1.floor.guard`: a criterion of that id would
        // share its requirement.
        if let (Some(g), Some(cs), Some(e)) = (&guard, &criteria, f.get("guard")) {
            if !g.is_empty() && cs.iter().any(|c: &Criterion| c.id == "guard") {
                self.v.report(
                    e.key_pos,
                    "`guard` is set and a criterion has the id `guard`: both would report as `stage1.floor.guard`",
                    "rename that criterion (for example `guard-rail`)",
                );
                return None;
            }
        }
        version?;
        Some(Parts {
            criteria: criteria?,
            runners: runners?,
            judge: judge?,
            harness: harness?,
            guard: guard?,
            inherited: inherited?,
            env_pass: env_pass?,
            settings_keys,
        })
    }

    fn inherited(&mut self, e: &Entry) -> Option<InheritedPolicy> {
        const HELP: &str = "set `inherited: guard` (inherited criteria's tests must still pass) or `inherited: list` (the default: listed, not checked)";
        match &e.value.kind {
            Kind::Rejected => None,
            Kind::Scalar { text, .. } if text == "guard" => Some(InheritedPolicy::Guard),
            Kind::Scalar { text, .. } if text == "list" => Some(InheritedPolicy::List),
            _ => {
                self.v.report(
                    Validator::value_pos(e),
                    format!(
                        "`inherited` must be `list` or `guard`, found {}",
                        describe(&e.value)
                    ),
                    HELP,
                );
                None
            }
        }
    }

    fn version(&mut self, e: &Entry) -> Option<()> {
        const HELP: &str = "set `version: 1` (the only version of the acceptance file there is)";
        match &e.value.kind {
            Kind::Rejected => None,
            Kind::Scalar {
                text,
                style: ScalarStyle::Plain,
            } if core_int(text) == Some(1) => Some(()),
            _ => {
                self.v.report(
                    Validator::value_pos(e),
                    format!(
                        "`version` must be the integer `1`, found {}",
                        describe(&e.value)
                    ),
                    HELP,
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
