//! Parsing and validating the acceptance file: the entry points, and the set they return.
//!
//! Steps:
//! 1. **YAML events → spanned tree** (`yaml.rs`, `build_tree`, over [`crate::spanned_yaml`]).
//!    `saphyr-parser` events are folded into a small tree of mappings, sequences and scalars,
//!    each node with its 1-based line and column, and each mapping entry with its key's own
//!    position. Duplicate keys, anchors, aliases, tags and extra documents are reported here. A
//!    syntax error stops everything: it is reported once, at the parser's position, because
//!    nothing after it can be trusted.
//! 2. **Tree → typed set** (`schema/`, `Reader`). The tree is walked against the schema, section
//!    by section. Every problem is collected instead of stopping at the first: unknown keys (with
//!    a did-you-mean), wrong types, id syntax, duplicate ids, lanes, checks, runners, judge,
//!    harness. How scalars are read (YAML 1.2 core schema) is said by the
//!    [`Validator`](crate::spanned_yaml::Validator) the schema reads through.
//! 3. **Report** (here). If anything was found, every problem is returned, sorted by line and
//!    column, as an [`InputError`] with a `help`. Otherwise the [`AcceptanceSet`] is returned,
//!    with each criterion carrying its tag ([`tag_for`](super::tag_for)).

use super::schema::Reader;
use super::yaml::build_tree;
use super::{AcceptanceSet, AcceptanceState, RunnerKind};
use crate::error::InputError;
use crate::spanned_yaml::{Fatal, Pos, Problem};

/// Parses and validates the acceptance file `text`; `display_path` names it in every error.
///
/// Returns every problem in the file at once, sorted by position, or the validated set.
pub fn parse(
    text: &str,
    display_path: &str,
    state: AcceptanceState,
    sha256: String,
) -> Result<AcceptanceSet, Vec<InputError>> {
    parse_as(text, display_path, state, sha256, false, BUILD_RUNNERS)
}

/// The runner kinds a set may name: the builtin runners, in the order the floor's registry
/// holds them (the verifier build, which runs none, reads the same sets the same way).
const BUILD_RUNNERS: &[RunnerKind] = &RunnerKind::ALL;

/// [`parse`], with the runner kinds the set may name, in the order an unknown kind's error
/// lists them.
pub fn parse_with_runners(
    text: &str,
    display_path: &str,
    state: AcceptanceState,
    sha256: String,
    runners: &[RunnerKind],
) -> Result<AcceptanceSet, Vec<InputError>> {
    parse_as(text, display_path, state, sha256, false, runners)
}

/// Parses and validates `.shipmoor/config.yaml`: `version: 1` and the project settings, no
/// criteria. The set it returns has no criteria.
pub fn parse_config(text: &str, display_path: &str) -> Result<AcceptanceSet, Vec<InputError>> {
    parse_as(
        text,
        display_path,
        AcceptanceState::Committed,
        String::new(),
        true,
        BUILD_RUNNERS,
    )
}

fn parse_as(
    text: &str,
    display_path: &str,
    state: AcceptanceState,
    sha256: String,
    config: bool,
    runners: &[RunnerKind],
) -> Result<AcceptanceSet, Vec<InputError>> {
    let mut problems = Vec::new();
    let parts = match build_tree(text, &mut problems) {
        Ok(root) => {
            let mut reader = Reader::new(config, runners);
            let parts = reader.document(root.as_ref());
            problems.append(&mut reader.v.problems);
            parts
        }
        Err(Fatal) => None,
    };
    match parts {
        Some(mut parts) if problems.is_empty() => Ok(AcceptanceSet {
            display_path: display_path.to_string(),
            state,
            sha256,
            criteria: parts.criteria,
            runners: parts.runners,
            judge: {
                for j in &mut parts.judge {
                    j.file = display_path.to_string();
                }
                parts.judge
            },
            harness: parts.harness,
            guard: parts.guard,
            inherited: parts.inherited,
            env_pass: parts.env_pass,
            settings_keys: parts.settings_keys,
            settings_files: Default::default(),
            origin: Default::default(),
            inherited_criteria: Vec::new(),
            settings_edits: Vec::new(),
        }),
        _ => {
            if problems.is_empty() {
                // Every path that yields no set records why; this guards the promise that an
                // `Err` always explains itself should a future edit break that.
                problems.push(Problem::new(
                    Pos::START,
                    "the acceptance file could not be read",
                    "check the file against the acceptance file reference, https://shipmoor.github.io/claim-check/book/acceptance.html",
                ));
            }
            problems.sort_by_key(|p| p.pos);
            Err(problems
                .into_iter()
                .map(|p| {
                    InputError::new(p.message)
                        .at(display_path, p.pos.line, p.pos.col)
                        .help(p.help)
                })
                .collect())
        }
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
