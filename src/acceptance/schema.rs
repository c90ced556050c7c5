//! Step 2 of parsing an acceptance file: the spanned tree → the typed pieces of a set.
//!
//! The tree ([`super::yaml`]) is walked against the schema. Every problem is collected instead of
//! stopping at the first: unknown keys (with a did-you-mean), wrong types, id syntax, duplicate
//! ids, lanes, checks, runners, judge, harness.
//!
//! How scalars are read (YAML 1.2 core schema, applied only where the schema wants a type):
//! - booleans and integers must be plain (unquoted) scalars: `required: "true"` is an error,
//!   because quoting usually means the author wanted something other than a boolean;
//! - where a string is wanted, any non-null scalar is taken as written (`id: 2024`,
//!   `args: [-j, 4]`), because numbers and words are equally valid ids and arguments to us;
//! - an optional key whose value is null (`runners:` with every entry commented out) counts as
//!   absent; a required key whose value is null is reported as empty.

use std::collections::HashMap;

use saphyr_parser::ScalarStyle;

use super::judges::{self as judge, JudgeSpec, Transport};
use super::yaml::{
    core_bool, core_int, describe, is_null, scalar_text, short, Entry, Kind, Node, Pos, Problem,
};
use super::{
    tag_for, Check, Confidence, Criterion, HarnessConfig, InheritedPolicy, Lane, RunnerConfig,
    RunnerKind, SETTINGS_KEYS,
};

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
const CRITERION_KEYS: &[&str] = &[
    "id",
    "ac",
    "required",
    "lane",
    "check",
    "confidence",
    "source",
];
const CHECK_KEYS: &[&str] = &["test", "command", "pattern"];
const PATTERN_KEYS: &[&str] = &["paths", "regex"];
const RUNNER_KEYS: &[&str] = &["kind", "root", "args", "setup", "command", "env_pass"];
const JUDGE_KEYS: &[&str] = &[
    "name",
    "command",
    "url",
    "model",
    "api_key_env",
    "timeout",
    "concurrency",
    "max_diff_bytes",
    "exclude",
];
/// Keys an earlier release spelled otherwise: the old spelling gets a did-you-mean to the new
/// one, which the edit distance alone would not find.
const RENAMED_KEYS: &[(&str, &str)] = &[("timeout_seconds", "timeout")];
const HARNESS_KEYS: &[&str] = &["allow_changes"];
const FLOOR_KEYS: &[&str] = &["env_pass"];

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

/// The keys of one mapping, after unknown keys have been reported.
pub(crate) struct Fields<'n> {
    entries: &'n [Entry],
}

impl<'n> Fields<'n> {
    /// The entry for `key`, even when its value is null (for required keys).
    pub(crate) fn raw(&self, key: &str) -> Option<&'n Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// The entry for `key` unless its value is null: an optional key set to null is absent.
    pub(crate) fn get(&self, key: &str) -> Option<&'n Entry> {
        self.raw(key).filter(|e| !is_null(&e.value))
    }
}

/// Walks the tree and collects every problem. Each method returns `None` when the part it reads
/// is invalid, having recorded why; the caller keeps going so that later problems surface too.
#[derive(Default)]
pub(crate) struct Validator {
    pub(crate) problems: Vec<Problem>,
    /// Reading `.shipmoor/config.yaml`: settings only, no criteria.
    pub(super) config: bool,
}

impl Validator {
    pub(crate) fn report(&mut self, pos: Pos, message: impl Into<String>, help: impl Into<String>) {
        self.problems.push(Problem::new(pos, message, help));
    }

    /// Where to point for a problem with `e`'s value: the key when the value is empty, since an
    /// empty value's position is just past the `:`.
    pub(crate) fn value_pos(e: &Entry) -> Pos {
        match &e.value.kind {
            Kind::Scalar { text, .. } if text.is_empty() && is_null(&e.value) => e.key_pos,
            _ => e.value.pos,
        }
    }

    pub(crate) fn fields<'n>(
        &mut self,
        entries: &'n [Entry],
        allowed: &[&str],
        owner: &str,
    ) -> Fields<'n> {
        self.fields_except(entries, allowed, owner, &[])
    }

    /// [`Self::fields`], leaving the keys in `reported` to a message of their own.
    fn fields_except<'n>(
        &mut self,
        entries: &'n [Entry],
        allowed: &[&str],
        owner: &str,
        reported: &[&str],
    ) -> Fields<'n> {
        for e in entries {
            if allowed.contains(&e.key.as_str()) || reported.contains(&e.key.as_str()) {
                continue;
            }
            let listed = allowed
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let renamed = RENAMED_KEYS
                .iter()
                .find(|(old, new)| *old == e.key && allowed.contains(new))
                .map(|(_, new)| *new);
            let help = match renamed.or_else(|| closest(&e.key, allowed)) {
                Some(near) => format!("did you mean `{near}`? allowed keys here: {listed}"),
                None => format!("remove it; allowed keys here: {listed}"),
            };
            self.report(
                e.key_pos,
                format!("unknown key `{}` in {owner}", short(&e.key)),
                help,
            );
        }
        Fields { entries }
    }

    // --- typed readers: each reports its own problem and returns `None` on a bad value ---

    /// A non-blank string, as written.
    pub(crate) fn text(&mut self, e: &Entry, example: &str) -> Option<String> {
        match &e.value.kind {
            Kind::Rejected => None,
            Kind::Scalar { text, .. } if !is_null(&e.value) && !text.trim().is_empty() => {
                Some(text.clone())
            }
            Kind::Scalar { .. } => {
                self.report(
                    Self::value_pos(e),
                    format!("`{}` is empty", e.key),
                    format!("give it a value, e.g. `{example}`"),
                );
                None
            }
            Kind::Seq(_) | Kind::Map(_) => {
                self.report(
                    Self::value_pos(e),
                    format!("`{}` must be a string, found {}", e.key, describe(&e.value)),
                    format!("write a single string, e.g. `{example}`"),
                );
                None
            }
        }
    }

    fn flag(&mut self, e: &Entry) -> Option<bool> {
        match &e.value.kind {
            Kind::Rejected => None,
            Kind::Scalar {
                text,
                style: ScalarStyle::Plain,
            } if core_bool(text).is_some() => core_bool(text),
            Kind::Scalar {
                text,
                style: ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted,
            } if core_bool(text).is_some() => {
                self.report(
                    Self::value_pos(e),
                    format!(
                        "`{}` must be a boolean, found {}",
                        e.key,
                        describe(&e.value)
                    ),
                    format!(
                        "remove the quotes: `{}: {}`",
                        e.key,
                        text.to_ascii_lowercase()
                    ),
                );
                None
            }
            _ => {
                self.report(
                    Self::value_pos(e),
                    format!(
                        "`{}` must be a boolean, found {}",
                        e.key,
                        describe(&e.value)
                    ),
                    format!("write `{0}: true` or `{0}: false`", e.key),
                );
                None
            }
        }
    }

    /// A plain integer; `None` (reported) for anything else, including a quoted number.
    fn integer(&mut self, e: &Entry, example: &str) -> Option<i128> {
        match &e.value.kind {
            Kind::Rejected => None,
            Kind::Scalar {
                text,
                style: ScalarStyle::Plain,
            } if core_int(text).is_some() => core_int(text),
            Kind::Scalar {
                text,
                style: ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted,
            } if core_int(text).is_some() => {
                self.report(
                    Self::value_pos(e),
                    format!(
                        "`{}` must be an integer, found {}",
                        e.key,
                        describe(&e.value)
                    ),
                    format!("remove the quotes: `{}: {}`", e.key, text),
                );
                None
            }
            _ => {
                self.report(
                    Self::value_pos(e),
                    format!(
                        "`{}` must be an integer, found {}",
                        e.key,
                        describe(&e.value)
                    ),
                    format!("write it like `{example}`"),
                );
                None
            }
        }
    }

    pub(crate) fn mapping<'n>(&mut self, e: &'n Entry, example: &str) -> Option<&'n [Entry]> {
        match &e.value.kind {
            Kind::Map(entries) => Some(entries),
            Kind::Rejected => None,
            _ => {
                self.report(
                    Self::value_pos(e),
                    format!(
                        "`{}` must be a mapping, found {}",
                        e.key,
                        describe(&e.value)
                    ),
                    format!("write it as a mapping, e.g. `{example}`"),
                );
                None
            }
        }
    }

    pub(crate) fn sequence<'n>(&mut self, e: &'n Entry, example: &str) -> Option<&'n [Node]> {
        match &e.value.kind {
            Kind::Seq(items) => Some(items),
            Kind::Rejected => None,
            _ => {
                self.report(
                    Self::value_pos(e),
                    format!(
                        "`{}` must be a sequence, found {}",
                        e.key,
                        describe(&e.value)
                    ),
                    format!("write it as a list, e.g. `{example}`"),
                );
                None
            }
        }
    }

    /// A sequence of strings, each with its position. Empty strings are kept (an empty argument
    /// is legitimate); null items are not.
    pub(crate) fn strings(&mut self, e: &Entry, example: &str) -> Option<Vec<(String, Pos)>> {
        let items = self.sequence(e, example)?;
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for item in items {
            match &item.kind {
                Kind::Scalar { text, .. } if !is_null(item) => out.push((text.clone(), item.pos)),
                Kind::Rejected => ok = false,
                _ => {
                    self.report(
                        item.pos,
                        format!(
                            "each item of `{}` must be a string, found {}",
                            e.key,
                            describe(item)
                        ),
                        format!("write it as a list of strings, e.g. `{example}`"),
                    );
                    ok = false;
                }
            }
        }
        ok.then_some(out)
    }

    /// A sequence of globs, each checked by `globset` so that a bad pattern fails here, with its
    /// position, rather than later when it is matched.
    pub(crate) fn globs(&mut self, e: &Entry, example: &str) -> Option<Vec<String>> {
        let items = self.strings(e, example)?;
        let mut ok = true;
        for (glob, pos) in &items {
            if glob.trim().is_empty() {
                self.report(
                    *pos,
                    format!("an item of `{}` is empty", e.key),
                    format!("remove it or write a glob, e.g. `{example}`"),
                );
                ok = false;
            } else if let Err(err) = globset::Glob::new(glob) {
                self.report(
                    *pos,
                    format!(
                        "`{}` in `{}` is not a valid glob: {}",
                        short(glob),
                        e.key,
                        err.kind()
                    ),
                    format!("fix the pattern, e.g. `{example}`"),
                );
                ok = false;
            }
        }
        ok.then(|| items.into_iter().map(|(g, _)| g).collect())
    }

    // --- the schema ---

    pub(super) fn document(&mut self, root: Option<&Node>) -> Option<Parts> {
        const SKELETON: &str = "start with `version: 1` and a `criteria:` list \
            (see the README's acceptance file reference)";
        let root = match root {
            Some(node) if !is_null(node) => node,
            _ => {
                self.report(Pos::START, "the acceptance file is empty", SKELETON);
                return None;
            }
        };
        let entries = match &root.kind {
            Kind::Map(entries) => entries,
            Kind::Rejected => return None,
            _ => {
                self.report(
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
                self.report(
                    e.key_pos,
                    "`.shipmoor/config.yaml` holds project settings only, not criteria",
                    "move the criteria into the change's own file, `.shipmoor/changes/<name>.yaml`",
                );
            }
            // `criteria` is reported above, with its own help; the other keys as anywhere.
            self.fields_except(entries, CONFIG_KEYS, "the project settings", &["criteria"])
        } else {
            self.fields(entries, TOP_KEYS, "the top level")
        };

        let version = match f.raw("version") {
            Some(e) => self.version(e),
            None => {
                self.report(
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
                self.report(
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
            Some(e) => self.globs(e, "guard: [\"tests/**\"]"),
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
                self.report(
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
                self.report(
                    Self::value_pos(e),
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
                self.report(
                    Self::value_pos(e),
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

    fn criteria(&mut self, e: &Entry) -> Option<Vec<Criterion>> {
        const EXAMPLE: &str = "- id: refund-voids-payment-intent";
        let items = if is_null(&e.value) {
            &[][..]
        } else {
            self.sequence(e, EXAMPLE)?
        };
        if items.is_empty() {
            self.report(
                e.key_pos,
                "`criteria` is empty: an acceptance set with no criteria can never be READY",
                "add at least one criterion, e.g. `- id: refund-voids-payment-intent` with `ac: <what must be true>`",
            );
            return None;
        }
        // id -> line of its first use, for duplicate reports.
        let mut first_line: HashMap<String, usize> = HashMap::new();
        let mut out = Vec::with_capacity(items.len());
        let mut at: HashMap<String, Pos> = HashMap::new();
        let mut ok = true;
        for item in items {
            match self.criterion(item, &mut first_line) {
                Some(c) => {
                    at.insert(c.id.clone(), item.pos);
                    out.push(c)
                }
                None => ok = false,
            }
        }
        let all: Vec<&Criterion> = out.iter().collect();
        for (shorter, longer) in super::tags::tag_collisions(&all) {
            self.report(
                at.get(&longer.id).copied().unwrap_or(Pos::START),
                format!(
                    "the tag `{}` of criterion `{}` is part of the tag `{}` of criterion `{}`: a test named with the longer tag would bind both",
                    shorter.tag, shorter.id, longer.tag, longer.id
                ),
                "rename one of the two ids so that neither tag holds the other (a tag is made from its id; `shipmoor acceptance tags` prints them)",
            );
            ok = false;
        }
        ok.then_some(out)
    }

    fn criterion(
        &mut self,
        item: &Node,
        first_line: &mut HashMap<String, usize>,
    ) -> Option<Criterion> {
        let entries = match &item.kind {
            Kind::Map(entries) => entries,
            Kind::Rejected => return None,
            _ => {
                self.report(
                    item.pos,
                    format!(
                        "each criterion must be a mapping with `id` and `ac`, found {}",
                        describe(item)
                    ),
                    "write it as `- id: <id>` with `ac: <what must be true>` on the next line",
                );
                return None;
            }
        };
        let f = self.fields(entries, CRITERION_KEYS, "a criterion");

        let id_entry = f.raw("id");
        let line = id_entry.map_or(item.pos.line, |e| e.key_pos.line);
        let id = match id_entry {
            Some(e) => self.criterion_id(e, first_line),
            None => {
                self.report(
                    item.pos,
                    "criterion is missing `id`",
                    "add `id: <lowercase-words-with-dashes>`, e.g. `id: refund-voids-payment-intent`",
                );
                None
            }
        };
        let ac = match f.raw("ac") {
            Some(e) => self
                .text(e, "ac: The order is marked refunded.")
                .map(|s| s.trim().to_string()),
            None => {
                let which = id_entry
                    .and_then(|e| scalar_text(&e.value))
                    .map(|id| format!("criterion `{}`", short(id)))
                    .unwrap_or_else(|| "criterion".to_string());
                self.report(
                    item.pos,
                    format!("{which} is missing `ac`"),
                    "add `ac: <the criterion's text: what must be true once the change is made>`",
                );
                None
            }
        };
        let required = match f.get("required") {
            Some(e) => self.flag(e),
            None => Some(true),
        };
        let lane = match f.get("lane") {
            Some(e) => self.lane(e),
            None => Some(Lane::Floor),
        };
        let check = match f.get("check") {
            None => Some(None),
            Some(e) if lane == Some(Lane::Judge) => {
                self.report(
                    e.key_pos,
                    "`check` on a `lane: judge` criterion: a judgment criterion is decided by the judge, not a check",
                    "remove `check` or set `lane: floor`",
                );
                None
            }
            Some(e) => self.check(e).map(Some),
        };
        // Written by `acceptance derive`: how sure the derivation was, and where it read the
        // criterion. Neither changes what the criterion claims.
        let confidence = match f.get("confidence") {
            None => Some(None),
            Some(e) => self.confidence(e).map(Some),
        };
        let source = match f.get("source") {
            None => Some(None),
            Some(e) => self
                .text(e, "source: pull request #12, line 7")
                .map(|s| Some(s.trim().to_string())),
        };
        let id = id?;
        Some(Criterion {
            tag: tag_for(&id),
            id,
            ac: ac?,
            required: required?,
            lane: lane?,
            check: check?,
            line,
            confidence: confidence?,
            source: source?,
        })
    }

    /// A plain number from 0 to 1.
    fn confidence(&mut self, e: &Entry) -> Option<Confidence> {
        let value = match &e.value.kind {
            Kind::Rejected => return None,
            Kind::Scalar {
                text,
                style: ScalarStyle::Plain,
            } => text.trim().parse::<f64>().ok().and_then(Confidence::new),
            _ => None,
        };
        if value.is_none() {
            self.report(
                Self::value_pos(e),
                format!(
                    "`confidence` must be a number from 0 to 1, found {}",
                    describe(&e.value)
                ),
                "write it like `confidence: 0.9`, or remove it (it records how sure `acceptance derive` was)",
            );
        }
        value
    }

    fn criterion_id(
        &mut self,
        e: &Entry,
        first_line: &mut HashMap<String, usize>,
    ) -> Option<String> {
        let id = self.text(e, "id: refund-voids-payment-intent")?;
        let pos = Self::value_pos(e);
        if !is_valid_id(&id) {
            self.report(
                pos,
                format!(
                    "criterion id `{}` is not valid: an id is lowercase letters, digits and `-`, starting with a letter or digit",
                    short(&id)
                ),
                format!("rename it, e.g. `id: {}`", suggest_id(&id)),
            );
            return None;
        }
        if let Some(first) = first_line.get(&id) {
            self.report(
                pos,
                format!("duplicate criterion id `{id}` (first used on line {first})"),
                "give each criterion its own id",
            );
            return None;
        }
        first_line.insert(id.clone(), e.key_pos.line);
        Some(id)
    }

    fn lane(&mut self, e: &Entry) -> Option<Lane> {
        let text = self.text(e, "lane: floor")?;
        match text.as_str() {
            "floor" => Some(Lane::Floor),
            "judge" => Some(Lane::Judge),
            other => {
                let near = closest(other, &["floor", "judge"])
                    .map(|n| format!("did you mean `{n}`? "))
                    .unwrap_or_default();
                self.report(
                    Self::value_pos(e),
                    format!("unknown lane `{}`", short(other)),
                    format!("{near}use `lane: floor` (a mechanical check decides) or `lane: judge` (only the judge looks at it)"),
                );
                None
            }
        }
    }

    fn check(&mut self, e: &Entry) -> Option<Check> {
        const KINDS_HELP: &str = "use exactly one of `test: <runner test id>`, \
            `command: <shell command>` or `pattern: {paths: [<glob>], regex: <regex>}`";
        let entries = self.mapping(e, "check: { test: \"tests/test_refund.py::test_voids\" }")?;
        let _ = self.fields(entries, CHECK_KEYS, "`check`");
        let kinds: Vec<&Entry> = entries
            .iter()
            .filter(|k| CHECK_KEYS.contains(&k.key.as_str()))
            .collect();
        match kinds.as_slice() {
            [] => {
                self.report(
                    Self::value_pos(e),
                    "`check` names no check",
                    format!("{KINDS_HELP}, or remove `check`"),
                );
                None
            }
            [one] => match one.key.as_str() {
                "test" => self
                    .text(one, "test: \"tests/test_refund.py::test_voids\"")
                    .map(Check::Test),
                "command" => self
                    .text(one, "command: \"scripts/check_refund.sh\"")
                    .map(Check::Command),
                _ => self.pattern(one),
            },
            [first, rest @ ..] => {
                for other in rest {
                    self.report(
                        other.key_pos,
                        format!(
                            "`check` has both `{}` and `{}`: a check is exactly one kind",
                            first.key, other.key
                        ),
                        format!("{KINDS_HELP}; split the criterion in two if both matter"),
                    );
                }
                None
            }
        }
    }

    fn pattern(&mut self, e: &Entry) -> Option<Check> {
        let entries = self.mapping(
            e,
            "pattern: { paths: [\"src/**\"], regex: \"PaymentIntent\\\\.cancel\" }",
        )?;
        let f = self.fields(entries, PATTERN_KEYS, "`pattern`");
        let paths = match f.raw("paths") {
            Some(p) => {
                let globs = if is_null(&p.value) {
                    Some(Vec::new())
                } else {
                    self.globs(p, "paths: [\"src/**\"]")
                };
                match globs {
                    Some(g) if g.is_empty() => {
                        self.report(
                            Self::value_pos(p),
                            "`paths` is empty: the pattern would search no files",
                            "list at least one glob, e.g. `paths: [\"src/**\"]`",
                        );
                        None
                    }
                    other => other,
                }
            }
            None => {
                self.report(
                    Self::value_pos(e),
                    "`pattern` is missing `paths`",
                    "add `paths: [<glob>, ...]`, the files to search, e.g. `paths: [\"src/**\"]`",
                );
                None
            }
        };
        let regex = match f.raw("regex") {
            Some(r) => {
                let text = self.text(r, "regex: \"PaymentIntent\\\\.cancel\"");
                match text.map(|t| (regex::Regex::new(&t), t)) {
                    Some((Ok(_), t)) => Some(t),
                    Some((Err(err), t)) => {
                        self.report(
                            Self::value_pos(r),
                            format!(
                                "`regex` `{}` is not a valid regular expression: {}",
                                short(&t),
                                regex_reason(&err)
                            ),
                            "fix the expression (Rust `regex` syntax; in a double-quoted YAML string write `\\\\` for one backslash)",
                        );
                        None
                    }
                    None => None,
                }
            }
            None => {
                self.report(
                    Self::value_pos(e),
                    "`pattern` is missing `regex`",
                    "add `regex: <what must match at head>`, e.g. `regex: \"PaymentIntent\\\\.cancel\"`",
                );
                None
            }
        };
        Some(Check::Pattern {
            paths: paths?,
            regex: regex?,
        })
    }

    fn runners(&mut self, e: &Entry) -> Option<Vec<RunnerConfig>> {
        let items = self.sequence(e, "runners: [{ kind: cargo }]")?;
        let mut out = Vec::with_capacity(items.len());
        let mut ok = true;
        for item in items {
            match self.runner(item) {
                Some(r) => out.push(r),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    fn runner(&mut self, item: &Node) -> Option<RunnerConfig> {
        let kinds = RunnerKind::ALL
            .iter()
            .map(|k| format!("`{}`", k.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        let entries = match &item.kind {
            Kind::Map(entries) => entries,
            Kind::Rejected => return None,
            _ => {
                self.report(
                    item.pos,
                    format!(
                        "each runner must be a mapping with `kind`, found {}",
                        describe(item)
                    ),
                    format!("write it as `- kind: <one of {kinds}>`"),
                );
                return None;
            }
        };
        let f = self.fields(entries, RUNNER_KEYS, "a runner");

        let kind = match f.raw("kind") {
            Some(e) => {
                let text = self.text(e, "kind: cargo");
                match text.as_deref().map(|t| (RunnerKind::parse(t), t)) {
                    Some((Some(kind), _)) => Some(kind),
                    Some((None, t)) => {
                        let names: Vec<&str> = RunnerKind::ALL.iter().map(|k| k.as_str()).collect();
                        let near = closest(t, &names)
                            .map(|n| format!("did you mean `{n}`? "))
                            .unwrap_or_default();
                        self.report(
                            Self::value_pos(e),
                            format!("unknown runner kind `{}`", short(t)),
                            format!("{near}use one of {kinds}"),
                        );
                        None
                    }
                    None => None,
                }
            }
            None => {
                self.report(
                    item.pos,
                    "runner is missing `kind`",
                    format!("add `kind:` with one of {kinds}"),
                );
                None
            }
        };
        let root = match f.get("root") {
            Some(e) => self.runner_root(e),
            None => Some(".".to_string()),
        };
        let args = match f.get("args") {
            Some(e) => self
                .strings(e, "args: [\"--features\", \"x\"]")
                .map(|v| v.into_iter().map(|(s, _)| s).collect()),
            None => Some(Vec::new()),
        };
        let setup = match f.get("setup") {
            Some(e) => self.text(e, "setup: \"npm ci\"").map(Some),
            None => Some(None),
        };
        let env_pass = match f.get("env_pass") {
            Some(e) => self.env_names(e),
            None => Some(Vec::new()),
        };
        let command = match (f.get("command"), kind) {
            (Some(e), Some(RunnerKind::JunitCommand)) => {
                self.text(e, "command: \"make junit\"").map(Some)
            }
            (Some(e), Some(other)) => {
                self.report(
                    e.key_pos,
                    format!(
                        "`command` is only for `kind: junit-command`, not `kind: {}`",
                        other.as_str()
                    ),
                    format!(
                        "remove `command` (pass extra arguments to {} with `args`) or set `kind: junit-command`",
                        other.as_str()
                    ),
                );
                None
            }
            (None, Some(RunnerKind::JunitCommand)) => {
                self.report(
                    item.pos,
                    "a `junit-command` runner needs `command`",
                    "add `command: <a command that runs the tests and writes JUnit XML to $SHIPMOOR_JUNIT_OUT>`",
                );
                None
            }
            (Some(e), None) => {
                // The kind is already reported; still check the value so its own problems surface.
                let _ = self.text(e, "command: \"make junit\"");
                None
            }
            (None, _) => Some(None),
        };
        Some(RunnerConfig {
            kind: kind?,
            root: root?,
            args: args?,
            setup: setup?,
            command: command?,
            line: item.pos.line,
            env_pass: env_pass?,
        })
    }

    /// `env_pass: [NAME, …]`: environment variable names, each as the shell spells one.
    fn env_names(&mut self, e: &Entry) -> Option<Vec<String>> {
        const EXAMPLE: &str = "env_pass: [\"NPM_TOKEN\"]";
        let names = self.strings(e, EXAMPLE)?;
        let mut ok = true;
        for (name, pos) in &names {
            let valid = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                self.report(
                    *pos,
                    format!("`{}` is not an environment variable name", short(name)),
                    format!("name variables with letters, digits and `_`, like {EXAMPLE}"),
                );
                ok = false;
            }
        }
        ok.then(|| names.into_iter().map(|(n, _)| n).collect())
    }

    /// `root` is joined to each worktree, so it must stay inside it: relative, without `..`.
    fn runner_root(&mut self, e: &Entry) -> Option<String> {
        let root = self.text(e, "root: web")?;
        let absolute = root.starts_with('/')
            || root.starts_with('\\')
            || has_drive_prefix(&root)
            || std::path::Path::new(&root).is_absolute();
        let escapes = root.split(['/', '\\']).any(|part| part == "..");
        if absolute || escapes {
            self.report(
                Self::value_pos(e),
                format!(
                    "runner `root` `{}` must be a path inside the repository, relative and without `..`",
                    short(&root)
                ),
                "write it relative to the repository root, e.g. `root: web` (or `.` for the root itself)",
            );
            return None;
        }
        Some(root)
    }

    /// `judge:` is one judge (a mapping) or a panel (a list of mappings, each with a `name`).
    fn judges(&mut self, e: &Entry) -> Option<Vec<JudgeSpec>> {
        const EXAMPLE: &str = "judge: { command: [\"python3\", \"tools/judge.py\"] }";
        let items = match &e.value.kind {
            Kind::Map(entries) => {
                return self
                    .judge(entries, e.key_pos, Self::value_pos(e), None)
                    .map(|j| vec![j]);
            }
            Kind::Seq(items) => items,
            _ => {
                // Neither one judge nor a panel: the message of any mapping wanted.
                self.mapping(e, EXAMPLE)?;
                return None;
            }
        };
        let mut out: Vec<JudgeSpec> = Vec::with_capacity(items.len());
        let mut ok = true;
        for item in items {
            let entries = match &item.kind {
                Kind::Map(entries) => entries,
                Kind::Rejected => {
                    ok = false;
                    continue;
                }
                _ => {
                    self.report(
                        item.pos,
                        format!(
                            "each judge of a panel must be a mapping with `name`, found {}",
                            describe(item)
                        ),
                        "write it as `- { name: security, command: [\"python3\", \"tools/judge.py\"] }`",
                    );
                    ok = false;
                    continue;
                }
            };
            let Some(spec) = self.judge(entries, item.pos, item.pos, Some(item.pos)) else {
                ok = false;
                continue;
            };
            if let Some(first) = out.iter().find(|j| j.name == spec.name) {
                self.report(
                    item.pos,
                    format!(
                        "two judges of the panel are named `{}` (first on line {})",
                        short(&spec.name),
                        first.line
                    ),
                    "give each judge its own name: its lens, e.g. `security` or `intent`",
                );
                ok = false;
                continue;
            }
            out.push(spec);
        }
        ok.then_some(out)
    }

    /// One judge. `at` is where the judge is configured (its line is recorded), `pos` where to
    /// point when it names no judge; `in_panel` is the panel item's position, whose judges
    /// need a `name`.
    fn judge(
        &mut self,
        entries: &[Entry],
        at: Pos,
        pos: Pos,
        in_panel: Option<Pos>,
    ) -> Option<JudgeSpec> {
        // A key written into the file is a secret in the repository: say so, not "unknown key".
        let secrets = ["api_key", "apikey", "key", "token", "api_token"];
        for e in entries.iter().filter(|e| secrets.contains(&e.key.as_str())) {
            self.report(
                e.key_pos,
                format!(
                    "`{}` in `judge`: an API key is never read from the acceptance file",
                    e.key
                ),
                "remove it (once committed it is in the history: rotate the key), put the key in an environment variable and name it with `api_key_env: OPENAI_API_KEY`",
            );
        }
        let f = self.fields_except(entries, JUDGE_KEYS, "`judge`", &secrets);
        let command_e = f.get("command");
        let url_e = f.get("url");
        let mut ok = true;
        match (command_e, url_e) {
            (Some(c), Some(u)) => {
                let later = if c.key_pos > u.key_pos { c } else { u };
                self.report(
                    later.key_pos,
                    "`judge` has both `command` and `url`",
                    "keep one: `command` runs a local judge, `url` calls an OpenAI-compatible endpoint",
                );
                ok = false;
            }
            (None, None) => {
                self.report(
                    pos,
                    "`judge` names no judge: it needs `command` or `url`",
                    "add `command: [<program>, <args>...]` or `url: <endpoint>` with `model: <name>`",
                );
                ok = false;
            }
            _ => {}
        }
        let name = match (f.get("name"), in_panel) {
            (Some(n), _) => self.judge_name(n),
            (None, Some(item)) => {
                self.report(
                    item,
                    "a judge of a panel needs `name`",
                    "add `name: <its lens>`, e.g. `name: security` or `name: intent`",
                );
                None
            }
            (None, None) => Some(judge::SINGLE_JUDGE_NAME.to_string()),
        };
        let command = match command_e {
            Some(c) => self.judge_command(c).map(Some),
            None => Some(None),
        };
        let url = match url_e {
            Some(u) => self.judge_url(u).map(Some),
            None => Some(None),
        };
        let model = match f.get("model") {
            Some(m) => self.text(m, "model: gpt-4o").map(Some),
            None => Some(None),
        };
        let api_key_env = match f.get("api_key_env") {
            Some(k) => self.api_key_env(k).map(Some),
            None => Some(None),
        };
        if let (Some(u), None) = (url_e, f.get("model")) {
            self.report(
                u.key_pos,
                "a judge `url` needs `model`",
                "add `model: <the model name the endpoint serves>`",
            );
            ok = false;
        }
        if url_e.is_none() && command_e.is_some() {
            for key in ["model", "api_key_env"] {
                if let Some(stray) = f.get(key) {
                    self.report(
                        stray.key_pos,
                        format!("`{key}` applies only to a judge `url`, not a `command`"),
                        format!("remove `{key}`, or replace `command` with `url`"),
                    );
                    ok = false;
                }
            }
        }
        let timeout = match f.get("timeout") {
            Some(t) => self.positive(t, "number of seconds", "timeout: 120"),
            None => Some(judge::DEFAULT_TIMEOUT_SECONDS),
        };
        let concurrency = match f.get("concurrency") {
            Some(c) => self.positive(c, "number of criteria", "concurrency: 4"),
            None => Some(judge::DEFAULT_CONCURRENCY as u64),
        };
        let max_diff_bytes = match f.get("max_diff_bytes") {
            Some(m) => self.positive(m, "number of bytes", "max_diff_bytes: 200000"),
            None => Some(judge::DEFAULT_MAX_DIFF_BYTES as u64),
        };
        let exclude = match f.get("exclude") {
            Some(x) => self.globs(x, "exclude: [\"**/*.lock\", \".env*\"]"),
            None => Some(
                judge::DEFAULT_EXCLUDE
                    .iter()
                    .map(|g| g.to_string())
                    .collect(),
            ),
        };
        if !ok {
            return None;
        }
        let transport = match (command?, url?) {
            (Some(argv), None) => Transport::Command { argv },
            (None, Some(url)) => Transport::Chat {
                url,
                model: model??,
                api_key_env: api_key_env?,
            },
            // Both or neither: reported above.
            _ => return None,
        };
        Some(JudgeSpec {
            name: name?,
            transport,
            timeout: std::time::Duration::from_secs(timeout?),
            concurrency: usize::try_from(concurrency?).unwrap_or(usize::MAX),
            max_diff_bytes: usize::try_from(max_diff_bytes?).unwrap_or(usize::MAX),
            exclude: exclude?,
            // The parser attaches the file's name once the whole file is valid.
            file: String::new(),
            line: at.line,
        })
    }

    /// A judge's name is its lens; it shows in reports and in evidence, so it keeps to the
    /// criterion ids' alphabet.
    fn judge_name(&mut self, e: &Entry) -> Option<String> {
        let name = self.text(e, "name: security")?;
        if !is_valid_id(&name) {
            self.report(
                Self::value_pos(e),
                format!(
                    "judge `name` `{}` must be lowercase letters, digits and `-`",
                    short(&name)
                ),
                format!("write it like `name: {}`", suggest_id(&name)),
            );
            return None;
        }
        Some(name)
    }

    fn judge_command(&mut self, e: &Entry) -> Option<Vec<String>> {
        // A single string is the likeliest mistake; suggest its words as a list.
        let example = match scalar_text(&e.value) {
            Some(line) if !line.trim().is_empty() => format!(
                "command: [{}]",
                line.split_whitespace()
                    .map(|w| format!("\"{w}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => "command: [\"python3\", \"tools/judge.py\"]".to_string(),
        };
        let argv = self.strings(e, &example)?;
        match argv.first() {
            None => {
                self.report(
                    Self::value_pos(e),
                    "judge `command` is empty",
                    format!("name the program and its arguments, e.g. `{example}`"),
                );
                None
            }
            Some((program, pos)) if program.trim().is_empty() => {
                self.report(
                    *pos,
                    "the judge `command`'s program is empty",
                    format!("name the program first, e.g. `{example}`"),
                );
                None
            }
            Some(_) => Some(argv.into_iter().map(|(s, _)| s).collect()),
        }
    }

    fn judge_url(&mut self, e: &Entry) -> Option<String> {
        let url = self.text(e, "url: \"https://api.example.com/v1/chat/completions\"")?;
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            self.report(
                Self::value_pos(e),
                format!("judge `url` `{}` is not an http(s) URL", short(&url)),
                "write the full endpoint, e.g. `url: \"https://api.example.com/v1/chat/completions\"`",
            );
            return None;
        }
        Some(url)
    }

    fn api_key_env(&mut self, e: &Entry) -> Option<String> {
        let name = self.text(e, "api_key_env: OPENAI_API_KEY")?;
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            self.report(
                Self::value_pos(e),
                format!(
                    "`api_key_env` `{}` is not an environment variable name",
                    short(&name)
                ),
                "name the variable that holds the key, e.g. `api_key_env: OPENAI_API_KEY` (never the key itself)",
            );
            return None;
        }
        Some(name)
    }

    /// A positive integer: `what` says of what (`number of seconds`), `example` how to write it.
    fn positive(&mut self, e: &Entry, what: &str, example: &str) -> Option<u64> {
        let n = self.integer(e, example)?;
        match u64::try_from(n) {
            Ok(n) if n > 0 => Some(n),
            _ => {
                self.report(
                    Self::value_pos(e),
                    format!("`{}` must be a positive {what}, found `{n}`", e.key),
                    format!("write it like `{example}`"),
                );
                None
            }
        }
    }

    /// `floor: { env_pass: [NAME, …] }`.
    fn floor_settings(&mut self, e: &Entry) -> Option<Vec<String>> {
        let entries = self.mapping(e, "floor: { env_pass: [\"NPM_TOKEN\"] }")?;
        let f = self.fields(entries, FLOOR_KEYS, "`floor`");
        match f.get("env_pass") {
            Some(a) => self.env_names(a),
            None => Some(Vec::new()),
        }
    }

    fn harness(&mut self, e: &Entry) -> Option<HarnessConfig> {
        let entries = self.mapping(e, "harness: { allow_changes: [\"conftest.py\"] }")?;
        let f = self.fields(entries, HARNESS_KEYS, "`harness`");
        let allow_changes = match f.get("allow_changes") {
            Some(a) => self.globs(a, "allow_changes: [\"conftest.py\"]")?,
            None => Vec::new(),
        };
        Some(HarnessConfig { allow_changes })
    }
}

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

/// `C:` and the like: absolute on Windows, where `Path::is_absolute` on Unix would not notice.
fn has_drive_prefix(path: &str) -> bool {
    let mut chars = path.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.next() == Some(':')
}

/// `^[a-z0-9][a-z0-9-]*$`, written out: ids also become tags and test-name fragments, so the
/// alphabet is kept to what survives every runner's naming rules.
fn is_valid_id(id: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    id.chars().next().is_some_and(ok) && id.chars().all(|c| ok(c) || c == '-')
}

/// A valid id close to `id`, for the help text: lower-cased, other characters turned into `-`.
fn suggest_id(id: &str) -> String {
    let mut out = String::new();
    for c in id.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "refund-voids-payment-intent".to_string()
    } else {
        out.to_string()
    }
}

/// The closest of `options` to `word` within an edit distance of 2, for "did you mean".
pub(crate) fn closest<'a>(word: &str, options: &[&'a str]) -> Option<&'a str> {
    options
        .iter()
        .map(|o| (edit_distance(word, o), *o))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, o)| o)
}

/// The names of `options` nearest to `word`, at most `n`, for "did you mean" over long names
/// (test ids): within an edit distance of a quarter of the word's length (at least 2), nearest
/// first, ties in the options' order.
pub(crate) fn nearest<'a>(word: &str, options: &[&'a str], n: usize) -> Vec<&'a str> {
    let limit = (word.chars().count() / 4).max(2);
    let mut near: Vec<(usize, usize, &str)> = options
        .iter()
        .enumerate()
        .map(|(i, o)| (edit_distance(word, o), i, *o))
        .filter(|(d, _, _)| *d <= limit)
        .collect();
    near.sort();
    near.into_iter().take(n).map(|(_, _, o)| o).collect()
}

/// Levenshtein distance over characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != *cb);
            cur.push(substitute.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The one-line reason from a `regex` error, whose display spans several lines with a caret.
fn regex_reason(err: &regex::Error) -> String {
    let full = err.to_string();
    full.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .map(str::to_string)
        .unwrap_or_else(|| full.split_whitespace().collect::<Vec<_>>().join(" "))
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
