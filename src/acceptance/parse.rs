//! Parsing and validating the acceptance file.
//!
//! Steps:
//! 1. **YAML events → spanned tree** (`build_tree`). `saphyr-parser` events are folded into a
//!    small tree of mappings, sequences and scalars, each node with its 1-based line and column,
//!    and each mapping entry with its key's own position. Duplicate keys, anchors, aliases, tags
//!    and extra documents are reported here. A syntax error stops everything: it is reported once,
//!    at the parser's position, because nothing after it can be trusted.
//! 2. **Tree → typed set** (`Validator`). The tree is walked against the schema. Every problem is
//!    collected instead of stopping at the first: unknown keys (with a did-you-mean), wrong types,
//!    id syntax, duplicate ids, lanes, checks, runners, judge, harness.
//! 3. **Report.** If anything was found, every problem is returned, sorted by line and column, as
//!    an [`InputError`] with a `help`. Otherwise the [`AcceptanceSet`] is returned, with each
//!    criterion carrying its tag ([`tag_for`]).
//!
//! How scalars are read (YAML 1.2 core schema, applied only where the schema wants a type):
//! - booleans and integers must be plain (unquoted) scalars: `required: "true"` is an error,
//!   because quoting usually means the author wanted something other than a boolean;
//! - where a string is wanted, any non-null scalar is taken as written (`id: 2024`,
//!   `args: [-j, 4]`), because numbers and words are equally valid ids and arguments to us;
//! - an optional key whose value is null (`runners:` with every entry commented out) counts as
//!   absent; a required key whose value is null is reported as empty.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};

use super::{
    tag_for, AcceptanceSet, AcceptanceState, Check, Criterion, HarnessConfig, InheritedPolicy,
    JudgeConfig, Lane, RunnerConfig, RunnerKind, SETTINGS_KEYS,
};
use crate::error::InputError;

/// Parses and validates the acceptance file `text`; `display_path` names it in every error.
///
/// Returns every problem in the file at once, sorted by position, or the validated set.
pub fn parse(
    text: &str,
    display_path: &str,
    state: AcceptanceState,
    sha256: String,
) -> Result<AcceptanceSet, Vec<InputError>> {
    parse_as(text, display_path, state, sha256, false)
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
    )
}

fn parse_as(
    text: &str,
    display_path: &str,
    state: AcceptanceState,
    sha256: String,
    config: bool,
) -> Result<AcceptanceSet, Vec<InputError>> {
    let mut problems = Vec::new();
    let parts = match build_tree(text, &mut problems) {
        Ok(root) => {
            let mut validator = Validator {
                config,
                ..Validator::default()
            };
            let parts = validator.document(root.as_ref());
            problems.append(&mut validator.problems);
            parts
        }
        Err(Fatal) => None,
    };
    match parts {
        Some(parts) if problems.is_empty() => Ok(AcceptanceSet {
            display_path: display_path.to_string(),
            state,
            sha256,
            criteria: parts.criteria,
            runners: parts.runners,
            judge: parts.judge,
            harness: parts.harness,
            guard: parts.guard,
            inherited: parts.inherited,
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
                    "check the file against the README's acceptance file reference",
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

// ---------------------------------------------------------------------------------------------
// Positions and problems
// ---------------------------------------------------------------------------------------------

/// A 1-based line and column (columns count characters, as editors do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Pos {
    line: usize,
    col: usize,
}

impl Pos {
    const START: Pos = Pos { line: 1, col: 1 };

    fn of(span: &Span) -> Pos {
        // saphyr's lines are 1-based but its columns 0-based.
        Pos {
            line: span.start.line().max(1),
            col: span.start.col() + 1,
        }
    }
}

/// One thing wrong with the file; becomes an [`InputError`] once the file name is attached.
#[derive(Debug)]
struct Problem {
    pos: Pos,
    message: String,
    help: String,
}

impl Problem {
    fn new(pos: Pos, message: impl Into<String>, help: impl Into<String>) -> Problem {
        Problem {
            pos,
            message: message.into(),
            help: help.into(),
        }
    }
}

/// Marks a problem after which the tree cannot be built (already recorded as a [`Problem`]).
#[derive(Debug)]
struct Fatal;

// ---------------------------------------------------------------------------------------------
// Step 1: the spanned tree
// ---------------------------------------------------------------------------------------------

/// The schema nests five levels at most; the cap keeps hostile input from building a tree so deep
/// that dropping it (which recurses) would overflow the stack.
const MAX_DEPTH: usize = 64;

#[derive(Debug)]
struct Node {
    pos: Pos,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Scalar {
        text: String,
        style: ScalarStyle,
    },
    Seq(Vec<Node>),
    Map(Vec<Entry>),
    /// Stands in for an alias, already reported: the validator skips it so that one mistake is
    /// not reported twice.
    Rejected,
}

#[derive(Debug)]
struct Entry {
    key: String,
    key_pos: Pos,
    value: Node,
}

/// What the next node in a mapping becomes: the value of `Key`, or dropped (`Skip`) because its
/// key was a duplicate or not a scalar, both already reported.
enum Slot {
    Key(String, Pos),
    Skip,
}

enum Frame {
    Seq {
        pos: Pos,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        entries: Vec<Entry>,
        slot: Option<Slot>,
        first_seen: HashMap<String, Pos>,
    },
}

#[derive(Default)]
struct TreeBuilder {
    stack: Vec<Frame>,
    root: Option<Node>,
    documents: usize,
    problems: Vec<Problem>,
}

/// Folds the parser's events into a tree; `Ok(None)` when the file holds no document at all.
fn build_tree(text: &str, problems: &mut Vec<Problem>) -> Result<Option<Node>, Fatal> {
    let mut b = TreeBuilder::default();
    let result = b.run(text);
    problems.append(&mut b.problems);
    result.map(|()| b.root)
}

impl TreeBuilder {
    fn run(&mut self, text: &str) -> Result<(), Fatal> {
        for event in Parser::new_from_str(text) {
            let (event, span) = match event {
                Ok(ok) => ok,
                Err(e) => {
                    let pos = Pos {
                        line: e.marker().line().max(1),
                        col: e.marker().col() + 1,
                    };
                    self.problems.push(Problem::new(
                        pos,
                        format!("invalid YAML: {}", e.info()),
                        "fix the YAML syntax at this position",
                    ));
                    return Err(Fatal);
                }
            };
            let pos = Pos::of(&span);
            match event {
                Event::DocumentStart(_) => {
                    self.documents += 1;
                    if self.documents == 2 {
                        self.problems.push(Problem::new(
                            pos,
                            "the acceptance file holds more than one YAML document (a second `---`)",
                            "keep a single document: remove this `---` and merge what follows into the first",
                        ));
                    }
                }
                Event::Scalar(text, style, anchor, tag) => {
                    self.check_properties(pos, anchor, tag.as_deref());
                    let text = text.into_owned();
                    self.emit(Node {
                        pos,
                        kind: Kind::Scalar { text, style },
                    });
                }
                Event::Alias(_) => {
                    self.problems.push(Problem::new(
                        pos,
                        "aliases (`*name`) are not supported in an acceptance file",
                        "write the value out in full here instead of referring to an anchor",
                    ));
                    self.emit(Node {
                        pos,
                        kind: Kind::Rejected,
                    });
                }
                Event::SequenceStart(anchor, tag) => {
                    self.check_properties(pos, anchor, tag.as_deref());
                    self.push(
                        pos,
                        Frame::Seq {
                            pos,
                            items: Vec::new(),
                        },
                    )?;
                }
                Event::MappingStart(anchor, tag) => {
                    self.check_properties(pos, anchor, tag.as_deref());
                    self.push(
                        pos,
                        Frame::Map {
                            pos,
                            entries: Vec::new(),
                            slot: None,
                            first_seen: HashMap::new(),
                        },
                    )?;
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    if let Some(frame) = self.stack.pop() {
                        let node = match frame {
                            Frame::Seq { pos, items } => Node {
                                pos,
                                kind: Kind::Seq(items),
                            },
                            Frame::Map { pos, entries, .. } => Node {
                                pos,
                                kind: Kind::Map(entries),
                            },
                        };
                        self.emit(node);
                    }
                }
                Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
            }
        }
        Ok(())
    }

    fn push(&mut self, pos: Pos, frame: Frame) -> Result<(), Fatal> {
        if self.stack.len() >= MAX_DEPTH {
            self.problems.push(Problem::new(
                pos,
                format!("the acceptance file nests deeper than {MAX_DEPTH} levels"),
                "the acceptance schema nests at most five levels; remove the extra nesting",
            ));
            return Err(Fatal);
        }
        self.stack.push(frame);
        Ok(())
    }

    /// Anchors and tags are YAML features no acceptance file needs; rejecting them keeps what the
    /// reviewer reads identical to what shipmoor reads.
    fn check_properties(&mut self, pos: Pos, anchor: usize, tag: Option<&Tag>) {
        if anchor != 0 {
            self.problems.push(Problem::new(
                pos,
                "anchors (`&name`) are not supported in an acceptance file",
                "remove the anchor and write the value out in full wherever it is used",
            ));
        }
        if let Some(tag) = tag {
            let shown = if tag.is_yaml_core_schema() {
                format!("!!{}", tag.suffix)
            } else if tag.handle == "!" {
                format!("!{}", tag.suffix)
            } else {
                format!("!<{}{}>", tag.handle, tag.suffix)
            };
            self.problems.push(Problem::new(
                pos,
                format!("YAML tags (`{shown}`) are not supported in an acceptance file"),
                "remove the tag; quote the value if it must be read as a string",
            ));
        }
    }

    /// Places a finished node: as the document root, a sequence item, a mapping key or a value.
    fn emit(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => {
                // Only the first document counts; later ones were reported at their `---`.
                if self.documents <= 1 && self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries,
                slot,
                first_seen,
                ..
            }) => match slot.take() {
                None => {
                    let next = match node.kind {
                        Kind::Scalar { text, .. } => {
                            if let Some(first) = first_seen.get(&text) {
                                self.problems.push(Problem::new(
                                    node.pos,
                                    format!(
                                        "duplicate key `{text}` (first on line {})",
                                        first.line
                                    ),
                                    format!("remove one of the two `{text}` keys"),
                                ));
                                Slot::Skip
                            } else {
                                first_seen.insert(text.clone(), node.pos);
                                Slot::Key(text, node.pos)
                            }
                        }
                        Kind::Rejected => Slot::Skip,
                        Kind::Seq(_) | Kind::Map(_) => {
                            self.problems.push(Problem::new(
                                node.pos,
                                "a mapping key must be a plain word, not a sequence or mapping",
                                "write the key as a single word followed by `:`",
                            ));
                            Slot::Skip
                        }
                    };
                    *slot = Some(next);
                }
                Some(Slot::Key(key, key_pos)) => entries.push(Entry {
                    key,
                    key_pos,
                    value: node,
                }),
                Some(Slot::Skip) => {}
            },
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scalar reading (YAML 1.2 core schema)
// ---------------------------------------------------------------------------------------------

fn is_null(node: &Node) -> bool {
    matches!(&node.kind, Kind::Scalar { text, style: ScalarStyle::Plain }
        if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"))
}

fn core_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// A core-schema integer (`12`, `-3`, `0o17`, `0x1F`); `None` for anything else or an overflow.
fn core_int(text: &str) -> Option<i128> {
    let digits_in = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    if let Some(oct) = text.strip_prefix("0o") {
        return digits_in(oct, 8)
            .then(|| i128::from_str_radix(oct, 8).ok())
            .flatten();
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return digits_in(hex, 16)
            .then(|| i128::from_str_radix(hex, 16).ok())
            .flatten();
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits_in(unsigned, 10)
        .then(|| text.parse::<i128>().ok())
        .flatten()
}

fn looks_numeric(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    core_int(text).is_some()
        || matches!(unsigned, ".inf" | ".Inf" | ".INF")
        || matches!(text, ".nan" | ".NaN" | ".NAN")
        || (text.chars().any(|c| c.is_ascii_digit()) && text.parse::<f64>().is_ok())
}

/// Shortens a value for a message: one line, at most 40 characters.
fn short(text: &str) -> String {
    let one_line = text.trim().replace('\n', "\\n");
    if one_line.chars().count() > 40 {
        let head: String = one_line.chars().take(37).collect();
        format!("{head}...")
    } else {
        one_line
    }
}

/// What a node is, for "found ..." in messages.
fn describe(node: &Node) -> String {
    match &node.kind {
        Kind::Map(_) => "a mapping".to_string(),
        Kind::Seq(_) => "a sequence".to_string(),
        Kind::Rejected => "an alias".to_string(),
        Kind::Scalar { text, style } => match style {
            _ if is_null(node) => "nothing (null)".to_string(),
            ScalarStyle::Plain if core_bool(text).is_some() => format!("the boolean `{text}`"),
            ScalarStyle::Plain if looks_numeric(text) => format!("the number `{text}`"),
            ScalarStyle::Plain => format!("the string `{}`", short(text)),
            ScalarStyle::SingleQuoted => format!("the quoted string `'{}'`", short(text)),
            ScalarStyle::DoubleQuoted => format!("the quoted string `\"{}\"`", short(text)),
            ScalarStyle::Literal | ScalarStyle::Folded => {
                format!("the block string `{}`", short(text))
            }
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Step 2: the validator
// ---------------------------------------------------------------------------------------------

const TOP_KEYS: &[&str] = &[
    "version",
    "criteria",
    "runners",
    "judge",
    "harness",
    "guard",
    "inherited",
];
const CONFIG_KEYS: &[&str] = &[
    "version",
    "runners",
    "judge",
    "harness",
    "guard",
    "inherited",
];
const CRITERION_KEYS: &[&str] = &["id", "ac", "required", "lane", "check"];
const CHECK_KEYS: &[&str] = &["test", "command", "pattern"];
const PATTERN_KEYS: &[&str] = &["paths", "regex"];
const RUNNER_KEYS: &[&str] = &["kind", "root", "args", "setup", "command"];
const JUDGE_KEYS: &[&str] = &["command", "url", "model", "api_key_env", "timeout_seconds"];
const HARNESS_KEYS: &[&str] = &["allow_changes"];

/// The validated pieces of a set, before the file's identity is attached.
struct Parts {
    criteria: Vec<Criterion>,
    runners: Vec<RunnerConfig>,
    judge: Option<JudgeConfig>,
    harness: HarnessConfig,
    guard: Vec<String>,
    inherited: InheritedPolicy,
    settings_keys: Vec<&'static str>,
}

/// The keys of one mapping, after unknown keys have been reported.
struct Fields<'n> {
    entries: &'n [Entry],
}

impl<'n> Fields<'n> {
    /// The entry for `key`, even when its value is null (for required keys).
    fn raw(&self, key: &str) -> Option<&'n Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// The entry for `key` unless its value is null: an optional key set to null is absent.
    fn get(&self, key: &str) -> Option<&'n Entry> {
        self.raw(key).filter(|e| !is_null(&e.value))
    }
}

/// Walks the tree and collects every problem. Each method returns `None` when the part it reads
/// is invalid, having recorded why; the caller keeps going so that later problems surface too.
#[derive(Default)]
struct Validator {
    problems: Vec<Problem>,
    /// Reading `.shipmoor/config.yaml`: settings only, no criteria.
    config: bool,
}

impl Validator {
    fn report(&mut self, pos: Pos, message: impl Into<String>, help: impl Into<String>) {
        self.problems.push(Problem::new(pos, message, help));
    }

    /// Where to point for a problem with `e`'s value: the key when the value is empty, since an
    /// empty value's position is just past the `:`.
    fn value_pos(e: &Entry) -> Pos {
        match &e.value.kind {
            Kind::Scalar { text, .. } if text.is_empty() && is_null(&e.value) => e.key_pos,
            _ => e.value.pos,
        }
    }

    fn fields<'n>(&mut self, entries: &'n [Entry], allowed: &[&str], owner: &str) -> Fields<'n> {
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
            let help = match closest(&e.key, allowed) {
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
    fn text(&mut self, e: &Entry, example: &str) -> Option<String> {
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

    fn mapping<'n>(&mut self, e: &'n Entry, example: &str) -> Option<&'n [Entry]> {
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

    fn sequence<'n>(&mut self, e: &'n Entry, example: &str) -> Option<&'n [Node]> {
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
    fn strings(&mut self, e: &Entry, example: &str) -> Option<Vec<(String, Pos)>> {
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
    fn globs(&mut self, e: &Entry, example: &str) -> Option<Vec<String>> {
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

    fn document(&mut self, root: Option<&Node>) -> Option<Parts> {
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
            Some(e) => self.judge(e).map(Some),
            None => Some(None),
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
        let mut ok = true;
        for item in items {
            match self.criterion(item, &mut first_line) {
                Some(c) => out.push(c),
                None => ok = false,
            }
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
        let id = id?;
        Some(Criterion {
            tag: tag_for(&id),
            id,
            ac: ac?,
            required: required?,
            lane: lane?,
            check: check?,
            line,
        })
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
        })
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

    fn judge(&mut self, e: &Entry) -> Option<JudgeConfig> {
        let entries = self.mapping(e, "judge: { command: [\"python3\", \"tools/judge.py\"] }")?;
        let f = self.fields(entries, JUDGE_KEYS, "`judge`");
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
                    Self::value_pos(e),
                    "`judge` names no judge: it needs `command` or `url`",
                    "add `command: [<program>, <args>...]` or `url: <endpoint>` with `model: <name>`",
                );
                ok = false;
            }
            _ => {}
        }
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
        let timeout_seconds = match f.get("timeout_seconds") {
            Some(t) => self.timeout(t).map(Some),
            None => Some(None),
        };
        if !ok {
            return None;
        }
        Some(JudgeConfig {
            command: command?,
            url: url?,
            model: model?,
            api_key_env: api_key_env?,
            timeout_seconds: timeout_seconds?,
        })
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

    fn timeout(&mut self, e: &Entry) -> Option<u64> {
        let n = self.integer(e, "timeout_seconds: 120")?;
        match u64::try_from(n) {
            Ok(n) if n > 0 => Some(n),
            _ => {
                self.report(
                    Self::value_pos(e),
                    format!("`timeout_seconds` must be a positive number of seconds, found `{n}`"),
                    "write it like `timeout_seconds: 120`",
                );
                None
            }
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

fn scalar_text(node: &Node) -> Option<&str> {
    match &node.kind {
        Kind::Scalar { text, .. } => Some(text),
        _ => None,
    }
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
fn closest<'a>(word: &str, options: &[&'a str]) -> Option<&'a str> {
    options
        .iter()
        .map(|o| (edit_distance(word, o), *o))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, o)| o)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
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
mod tests {
    use super::*;

    const FILE: &str = ".shipmoor/acceptance.yaml";

    fn run(text: &str) -> Result<AcceptanceSet, Vec<InputError>> {
        parse(text, FILE, AcceptanceState::Committed, "abc123".to_string())
    }

    fn parse_ok(text: &str) -> AcceptanceSet {
        match run(text) {
            Ok(set) => set,
            Err(errors) => panic!(
                "expected a valid set, got:\n{}",
                errors
                    .iter()
                    .map(|e| e.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        }
    }

    fn parse_err(text: &str) -> Vec<InputError> {
        match run(text) {
            Ok(set) => panic!("expected errors, got {set:#?}"),
            Err(errors) => {
                for e in &errors {
                    assert_eq!(e.file.as_deref(), Some(FILE), "{e}");
                    assert!(e.line.is_some() && e.column.is_some(), "{e}");
                    assert!(e.help.as_deref().is_some_and(|h| !h.is_empty()), "{e}");
                }
                errors
            }
        }
    }

    fn one_err(text: &str) -> InputError {
        let errors = parse_err(text);
        assert_eq!(errors.len(), 1, "expected one error, got {errors:#?}");
        errors.into_iter().next().unwrap()
    }

    fn at(e: &InputError) -> (usize, usize) {
        (e.line.unwrap(), e.column.unwrap())
    }

    fn help(e: &InputError) -> &str {
        e.help.as_deref().unwrap()
    }

    /// A valid file with one criterion, plus `extra` appended at the top level.
    fn minimal(extra: &str) -> String {
        format!("version: 1\ncriteria:\n  - id: a\n    ac: A holds.\n{extra}")
    }

    const FULL: &str = r#"version: 1
criteria:
  - id: refund-voids-payment-intent
    ac: The Stripe PaymentIntent is voided.
    required: true
    lane: floor
    check:
      test: "tests/x.py::test_y"
  - id: order-refunded
    ac: Order is marked refunded.
    required: false
    check:
      command: "scripts/check.sh"
  - id: cancel-called
    ac: Cancel is called.
    check:
      pattern: { paths: ["src/**"], regex: "PaymentIntent\\.cancel" }
  - id: audit-log
    ac: |
      An audit log entry is written.
    lane: judge
runners:
  - kind: nextest
    root: .
    args: ["--features", "x"]
    setup: "npm ci"
  - kind: junit-command
    root: web
    command: "make junit"
judge:
  url: "https://api.example.com/v1/chat/completions"
  model: "gpt-x"
  api_key_env: "OPENAI_API_KEY"
  timeout_seconds: 120
harness:
  allow_changes: ["conftest.py", "tests/helpers/**"]
"#;

    #[test]
    fn full_example_parses_to_the_expected_set() {
        let set = parse_ok(FULL);
        assert_eq!(set.display_path, FILE);
        assert_eq!(set.state, AcceptanceState::Committed);
        assert_eq!(set.sha256, "abc123");
        let criterion = |id: &str, ac: &str, required, lane, check, line| Criterion {
            id: id.to_string(),
            ac: ac.to_string(),
            required,
            lane,
            check,
            tag: tag_for(id),
            line,
        };
        assert_eq!(
            set.criteria,
            vec![
                criterion(
                    "refund-voids-payment-intent",
                    "The Stripe PaymentIntent is voided.",
                    true,
                    Lane::Floor,
                    Some(Check::Test("tests/x.py::test_y".into())),
                    3,
                ),
                criterion(
                    "order-refunded",
                    "Order is marked refunded.",
                    false,
                    Lane::Floor,
                    Some(Check::Command("scripts/check.sh".into())),
                    9,
                ),
                criterion(
                    "cancel-called",
                    "Cancel is called.",
                    true,
                    Lane::Floor,
                    Some(Check::Pattern {
                        paths: vec!["src/**".into()],
                        regex: r"PaymentIntent\.cancel".into(),
                    }),
                    14,
                ),
                criterion(
                    "audit-log",
                    "An audit log entry is written.",
                    true,
                    Lane::Judge,
                    None,
                    18,
                ),
            ]
        );
        assert_eq!(set.criteria[0].tag, tag_for("refund-voids-payment-intent"));
        assert_eq!(
            set.runners,
            vec![
                RunnerConfig {
                    kind: RunnerKind::Nextest,
                    root: ".".into(),
                    args: vec!["--features".into(), "x".into()],
                    setup: Some("npm ci".into()),
                    command: None,
                    line: 23,
                },
                RunnerConfig {
                    kind: RunnerKind::JunitCommand,
                    root: "web".into(),
                    args: vec![],
                    setup: None,
                    command: Some("make junit".into()),
                    line: 27,
                },
            ]
        );
        assert_eq!(
            set.judge,
            Some(JudgeConfig {
                command: None,
                url: Some("https://api.example.com/v1/chat/completions".into()),
                model: Some("gpt-x".into()),
                api_key_env: Some("OPENAI_API_KEY".into()),
                timeout_seconds: Some(120),
            })
        );
        assert_eq!(
            set.harness.allow_changes,
            vec!["conftest.py".to_string(), "tests/helpers/**".to_string()]
        );
    }

    #[test]
    fn defaults_are_applied() {
        let set = parse_ok(&minimal(""));
        let c = &set.criteria[0];
        assert!(c.required);
        assert_eq!(c.lane, Lane::Floor);
        assert_eq!(c.check, None);
        assert_eq!(c.tag, tag_for("a"));
        assert_eq!(c.line, 3);
        assert!(set.runners.is_empty());
        assert_eq!(set.judge, None);
        assert_eq!(set.harness, HarnessConfig::default());

        let set = parse_ok(&minimal("runners:\n  - kind: cargo\n"));
        assert_eq!(
            set.runners,
            vec![RunnerConfig {
                kind: RunnerKind::Cargo,
                root: ".".into(),
                args: vec![],
                setup: None,
                command: None,
                line: 6,
            }]
        );
    }

    #[test]
    fn null_optional_sections_count_as_absent() {
        let set = parse_ok(&minimal(
            "runners:\n#  - kind: cargo\njudge:\nharness:\n  allow_changes:\n",
        ));
        assert!(set.runners.is_empty());
        assert_eq!(set.judge, None);
        assert!(set.harness.allow_changes.is_empty());
    }

    #[test]
    fn the_seed_example_parses_with_four_criteria() {
        let set = parse_ok(include_str!("../../tests/vectors/acceptance-example.yaml"));
        let ids: Vec<&str> = set.criteria.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "refund-voids-payment-intent",
                "order-marked-refunded",
                "audit-log",
                "refund-idempotency"
            ]
        );
        assert_eq!(set.criteria[2].lane, Lane::Judge);
        assert!(set.criteria.iter().all(|c| c.required && c.check.is_none()));
        assert_eq!(
            set.judge.and_then(|j| j.command),
            Some(vec!["python3".to_string(), "tools/judge.py".to_string()])
        );
    }

    #[test]
    fn core_schema_booleans_are_accepted() {
        for (word, value) in [
            ("True", true),
            ("TRUE", true),
            ("False", false),
            ("FALSE", false),
        ] {
            let set = parse_ok(&format!(
                "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    required: {word}\n"
            ));
            assert_eq!(set.criteria[0].required, value, "{word}");
        }
    }

    #[test]
    fn plain_scalars_are_strings_where_strings_are_wanted() {
        let set = parse_ok(
            "version: 1\ncriteria:\n  - id: 2024\n    ac: 42\nrunners:\n  - kind: cargo\n    args: [-j, 4, true]\n",
        );
        assert_eq!(set.criteria[0].id, "2024");
        assert_eq!(set.criteria[0].ac, "42");
        assert_eq!(set.runners[0].args, ["-j", "4", "true"]);
    }

    #[test]
    fn a_quoted_boolean_is_an_error() {
        let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    required: \"true\"\n");
        assert_eq!(at(&e), (5, 15));
        assert!(e.message.contains("`required` must be a boolean"), "{e}");
        assert!(e.message.contains("\"true\""), "{e}");
        assert_eq!(help(&e), "remove the quotes: `required: true`");

        let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    required: yes\n");
        assert!(e.message.contains("the string `yes`"), "{e}");
        assert!(help(&e).contains("`required: true` or `required: false`"));
    }

    #[test]
    fn unknown_keys_suggest_the_closest_and_list_the_allowed() {
        let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    requird: false\n");
        assert_eq!(at(&e), (5, 5));
        assert_eq!(e.message, "unknown key `requird` in a criterion");
        assert_eq!(
            help(&e),
            "did you mean `required`? allowed keys here: `id`, `ac`, `required`, `lane`, `check`"
        );

        let e = one_err(&minimal("colour: blue\n"));
        assert_eq!(at(&e), (5, 1));
        assert_eq!(e.message, "unknown key `colour` in the top level");
        assert_eq!(
            help(&e),
            "remove it; allowed keys here: `version`, `criteria`, `runners`, `judge`, `harness`, `guard`, `inherited`"
        );

        let e = one_err(&minimal("judge:\n  command: [j]\n  timeout: 5\n"));
        assert_eq!(at(&e), (7, 3));
        assert!(e.message.contains("`timeout` in `judge`"), "{e}");
        assert!(help(&e).contains("`timeout_seconds`"), "{e}");
    }

    #[test]
    fn every_problem_is_reported_in_one_pass_sorted_by_position() {
        let text = "\
version: 2
criteria:
  - id: Bad_Id
    ac: A.
    lane: sideways
  - id: b
    ac: \"\"
    check: {}
runners:
  - kind: maven
judge:
  command: []
extra: 1
";
        let errors = parse_err(text);
        let got: Vec<(usize, usize)> = errors.iter().map(at).collect();
        assert_eq!(
            got,
            vec![
                (1, 10),
                (3, 9),
                (5, 11),
                (7, 9),
                (8, 12),
                (10, 11),
                (12, 12),
                (13, 1)
            ],
            "{errors:#?}"
        );
        assert!(errors[0]
            .message
            .contains("`version` must be the integer `1`"));
        assert!(errors[1].message.contains("`Bad_Id`"));
        assert!(errors[2].message.contains("unknown lane `sideways`"));
        assert!(errors[3].message.contains("`ac` is empty"));
        assert!(errors[4].message.contains("`check` names no check"));
        assert!(errors[5].message.contains("unknown runner kind `maven`"));
        assert!(errors[6].message.contains("judge `command` is empty"));
        assert!(errors[7].message.contains("unknown key `extra`"));
    }

    #[test]
    fn inherited_is_list_or_guard() {
        assert_eq!(parse_ok(&minimal("")).inherited, InheritedPolicy::List);
        let set = parse_ok(&minimal("inherited: guard\n"));
        assert_eq!(set.inherited, InheritedPolicy::Guard);
        assert_eq!(set.settings_keys, ["inherited"]);
        let e = one_err(&minimal("inherited: keep\n"));
        assert_eq!(at(&e), (5, 12));
        assert!(e.message.contains("`list` or `guard`"), "{e}");
    }

    #[test]
    fn the_project_settings_file_holds_settings_and_no_criteria() {
        let config = ".shipmoor/config.yaml";
        let set = parse_config(
            "version: 1\nrunners:\n  - kind: pytest\nguard: [\"tests/**\"]\n",
            config,
        )
        .unwrap();
        assert!(set.criteria.is_empty());
        assert_eq!(set.settings_keys, ["runners", "guard"]);
        let errors = parse_config(
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\ninherted: guard\n",
            config,
        )
        .unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert_eq!((errors[0].line, errors[0].column), (Some(2), Some(1)));
        assert!(errors[0]
            .help
            .as_deref()
            .unwrap()
            .contains(".shipmoor/changes/"));
        assert!(errors[1]
            .help
            .as_deref()
            .unwrap()
            .contains("did you mean `inherited`?"));
        assert!(!errors[1].help.as_deref().unwrap().contains("`criteria`"));
        assert!(parse_config("runners: []\n", config).is_err());
    }

    #[test]
    fn duplicate_keys_are_errors() {
        let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    ac: B.\n");
        assert_eq!(at(&e), (5, 5));
        assert_eq!(e.message, "duplicate key `ac` (first on line 4)");
        assert_eq!(help(&e), "remove one of the two `ac` keys");

        let e = one_err(&minimal("version: 1\n"));
        assert_eq!(at(&e), (5, 1));
        assert!(e.message.contains("duplicate key `version`"));
    }

    #[test]
    fn duplicate_ids_name_the_first_line() {
        let e = one_err(
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\n  - id: b\n    ac: B.\n  - id: a\n    ac: C.\n",
        );
        assert_eq!(at(&e), (7, 9));
        assert_eq!(
            e.message,
            "duplicate criterion id `a` (first used on line 3)"
        );
        assert_eq!(help(&e), "give each criterion its own id");
    }

    #[test]
    fn a_bad_id_suggests_a_valid_one() {
        let e = one_err("version: 1\ncriteria:\n  - id: Refund_X\n    ac: A.\n");
        assert_eq!(at(&e), (3, 9));
        assert!(
            e.message.contains("criterion id `Refund_X` is not valid"),
            "{e}"
        );
        assert_eq!(help(&e), "rename it, e.g. `id: refund-x`");

        for bad in ["-a", "a b", "\"\u{e9}t\u{e9}\"", "a.b"] {
            let errors = parse_err(&format!(
                "version: 1\ncriteria:\n  - id: {bad}\n    ac: A.\n"
            ));
            assert_eq!(errors.len(), 1, "{bad}: {errors:#?}");
        }
    }

    #[test]
    fn missing_id_and_ac_point_at_the_item() {
        let errors = parse_err("version: 1\ncriteria:\n  - ac: A.\n  - id: b\n");
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert_eq!(at(&errors[0]), (3, 5));
        assert_eq!(errors[0].message, "criterion is missing `id`");
        assert_eq!(at(&errors[1]), (4, 5));
        assert_eq!(errors[1].message, "criterion `b` is missing `ac`");
    }

    #[test]
    fn a_judgment_criterion_cannot_have_a_check() {
        let e = one_err(
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    lane: judge\n    check:\n      test: t\n",
        );
        assert_eq!(at(&e), (6, 5));
        assert!(e
            .message
            .contains("a judgment criterion is decided by the judge, not a check"));
        assert_eq!(help(&e), "remove `check` or set `lane: floor`");
    }

    #[test]
    fn a_check_is_exactly_one_kind() {
        let e = one_err(
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    check:\n      test: t\n      command: c\n",
        );
        assert_eq!(at(&e), (7, 7));
        assert!(
            e.message.contains("`check` has both `test` and `command`"),
            "{e}"
        );
        assert!(help(&e).contains("exactly one of"), "{e}");
    }

    #[test]
    fn pattern_checks_validate_globs_and_regex() {
        let check = |body: &str| {
            parse_err(&format!(
                "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    check:\n      pattern: {body}\n"
            ))
        };
        let errors = check("{ paths: [\"src/[\"], regex: \"a(\" }");
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert_eq!(at(&errors[0]), (6, 26));
        assert!(errors[0]
            .message
            .contains("`src/[` in `paths` is not a valid glob"));
        assert_eq!(at(&errors[1]), (6, 43));
        assert!(errors[1]
            .message
            .contains("not a valid regular expression: unclosed group"));

        let errors = check("{ paths: [], regex: x }");
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert!(errors[0].message.contains("`paths` is empty"));

        let errors = check("{ regex: x }");
        assert_eq!(errors[0].message, "`pattern` is missing `paths`");
    }

    #[test]
    fn runner_rules() {
        let e = one_err(&minimal("runners:\n  - kind: junit-command\n"));
        assert_eq!(at(&e), (6, 5));
        assert_eq!(e.message, "a `junit-command` runner needs `command`");
        assert!(help(&e).contains("$SHIPMOOR_JUNIT_OUT"));

        let e = one_err(&minimal("runners:\n  - kind: pytest\n    command: make\n"));
        assert_eq!(at(&e), (7, 5));
        assert!(e
            .message
            .contains("`command` is only for `kind: junit-command`"));
        assert!(help(&e).contains("set `kind: junit-command`"));

        let e = one_err(&minimal("runners:\n  - kind: nextst\n"));
        assert_eq!(help(&e).split('?').next(), Some("did you mean `nextest`"));

        let e = one_err(&minimal("runners:\n  - root: web\n"));
        assert_eq!(e.message, "runner is missing `kind`");

        for bad in ["/abs", "../up", "web/../../x", "C:\\x"] {
            let e = one_err(&minimal(&format!(
                "runners:\n  - kind: go\n    root: '{bad}'\n"
            )));
            assert_eq!(at(&e), (7, 11), "{bad}");
            assert!(e.message.contains("relative and without `..`"), "{e}");
        }
        let set = parse_ok(&minimal("runners:\n  - kind: go\n    root: ./svc/api\n"));
        assert_eq!(set.runners[0].root, "./svc/api");
    }

    #[test]
    fn judge_rules() {
        let e = one_err(&minimal(
            "judge:\n  command: [j]\n  url: https://x\n  model: m\n",
        ));
        assert_eq!(at(&e), (7, 3));
        assert_eq!(e.message, "`judge` has both `command` and `url`");

        let e = one_err(&minimal("judge:\n  timeout_seconds: 5\n"));
        assert_eq!(at(&e), (6, 3));
        assert!(e.message.contains("needs `command` or `url`"));

        let e = one_err(&minimal("judge:\n  url: https://x\n"));
        assert_eq!(e.message, "a judge `url` needs `model`");

        let e = one_err(&minimal("judge:\n  command: [j]\n  model: m\n"));
        assert_eq!(at(&e), (7, 3));
        assert!(e.message.contains("`model` applies only to a judge `url`"));

        let e = one_err(&minimal("judge:\n  command: [j]\n  timeout_seconds: 0\n"));
        assert!(e.message.contains("positive"), "{e}");
        let e = one_err(&minimal(
            "judge:\n  command: [j]\n  timeout_seconds: \"9\"\n",
        ));
        assert_eq!(help(&e), "remove the quotes: `timeout_seconds: 9`");

        let e = one_err(&minimal("judge:\n  command: python3 tools/judge.py\n"));
        assert!(e.message.contains("`command` must be a sequence"), "{e}");
        assert!(
            help(&e).contains("command: [\"python3\", \"tools/judge.py\"]"),
            "{e}"
        );

        let e = one_err(&minimal("judge:\n  url: ftp://x\n  model: m\n"));
        assert!(e.message.contains("not an http(s) URL"), "{e}");

        let e = one_err(&minimal(
            "judge:\n  url: https://x\n  model: m\n  api_key_env: sk-123\n",
        ));
        assert!(
            e.message.contains("not an environment variable name"),
            "{e}"
        );
    }

    #[test]
    fn harness_globs_are_checked() {
        let e = one_err(&minimal("harness:\n  allow_changes: [\"a{b\"]\n"));
        assert_eq!(at(&e), (6, 19));
        assert!(e.message.contains("not a valid glob"), "{e}");
    }

    #[test]
    fn version_is_required_and_must_be_one() {
        let e = one_err("criteria:\n  - id: a\n    ac: A.\n");
        assert_eq!((at(&e), e.message.as_str()), ((1, 1), "missing `version`"));
        for bad in ["2", "\"1\"", "1.0", "one"] {
            let e = one_err(&format!(
                "version: {bad}\ncriteria:\n  - id: a\n    ac: A.\n"
            ));
            assert_eq!(at(&e), (1, 10), "{bad}");
            assert!(
                e.message.starts_with("`version` must be the integer `1`"),
                "{e}"
            );
        }
    }

    #[test]
    fn empty_criteria_can_never_be_ready() {
        for text in ["version: 1\ncriteria: []\n", "version: 1\ncriteria:\n"] {
            let e = one_err(text);
            assert_eq!(at(&e), (2, 1));
            assert!(e
                .message
                .contains("an acceptance set with no criteria can never be READY"));
            assert!(help(&e).starts_with("add at least one criterion"));
        }
        let e = one_err("version: 1\ncriteria:\n  refund: x\n");
        assert!(e
            .message
            .contains("`criteria` must be a sequence, found a mapping"));
    }

    #[test]
    fn an_empty_or_non_mapping_file_is_an_error_at_line_one() {
        for text in [
            "",
            "   \n",
            "# just a comment\n",
            "---\n",
            "- a\n- b\n",
            "hello\n",
        ] {
            let e = one_err(text);
            assert_eq!(at(&e), (1, 1), "{text:?}");
        }
        assert_eq!(one_err("").message, "the acceptance file is empty");
        assert!(one_err("- a\n").message.contains("found a sequence"));
    }

    #[test]
    fn anchors_aliases_and_tags_are_rejected() {
        let errors = parse_err(
            "version: 1\ncriteria:\n  - id: a\n    ac: &text A.\n  - id: b\n    ac: *text\n",
        );
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert_eq!(at(&errors[0]), (4, 9));
        assert!(errors[0]
            .message
            .contains("anchors (`&name`) are not supported"));
        assert_eq!(at(&errors[1]), (6, 9));
        assert!(errors[1]
            .message
            .contains("aliases (`*name`) are not supported"));

        let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: !!str A.\n");
        assert_eq!(at(&e), (4, 9));
        assert!(e.message.contains("YAML tags (`!!str`)"), "{e}");
    }

    #[test]
    fn a_syntax_error_is_reported_at_the_parsers_position() {
        let e = one_err("version: 1\ncriteria: [a, b\n");
        assert_eq!(e.line, Some(3));
        assert!(e.message.starts_with("invalid YAML: "), "{e}");
        assert_eq!(help(&e), "fix the YAML syntax at this position");

        let e = one_err("version: 1\ncriteria:\n  - id: a\n   ac: A.\n");
        assert_eq!(e.line, Some(4), "{e}");
    }

    #[test]
    fn a_second_document_is_an_error() {
        let e = one_err(&minimal("---\nversion: 1\n"));
        assert_eq!(at(&e), (5, 1));
        assert!(e.message.contains("more than one YAML document"));
    }

    #[test]
    fn deep_nesting_is_cut_off() {
        // The YAML parser caps flow nesting at 255 itself but not block nesting, so both shapes
        // must hit our own cap before the tree gets deep enough to hurt.
        for deep in [
            format!("version: 1\ncriteria:\n{}x\n", "- ".repeat(100_000)),
            format!("version: 1\ncriteria: {}\n", "[".repeat(200)),
        ] {
            let e = one_err(&deep);
            assert!(e.message.contains("nests deeper than 64 levels"), "{e}");
        }
        let e = one_err(&format!("version: 1\ncriteria: {}\n", "[".repeat(10_000)));
        assert!(e.message.starts_with("invalid YAML"), "{e}");
    }

    #[test]
    fn mangled_input_does_not_panic() {
        // Every prefix of a rich file, and the file with each character swapped for a YAML
        // indicator, either parses or yields well-formed errors.
        let chars: Vec<char> = FULL.chars().collect();
        for end in 0..=chars.len() {
            let prefix: String = chars[..end].iter().collect();
            if let Err(errors) = run(&prefix) {
                assert!(!errors.is_empty());
            }
        }
        for (i, indicator) in chars.iter().enumerate().flat_map(|(i, _)| {
            [':', '-', '[', '"', '&', '\t']
                .into_iter()
                .map(move |c| (i, c))
        }) {
            let mut mutated = chars.clone();
            mutated[i] = indicator;
            let text: String = mutated.into_iter().collect();
            if let Err(errors) = run(&text) {
                assert!(!errors.is_empty());
                assert!(errors.iter().all(|e| e.line.is_some() && e.help.is_some()));
            }
        }
    }

    #[test]
    fn edit_distance_and_suggestions() {
        assert_eq!(edit_distance("requird", "required"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(closest("lne", CRITERION_KEYS), Some("lane"));
        assert_eq!(closest("zzzzzz", CRITERION_KEYS), None);
        assert_eq!(suggest_id("Refund_X"), "refund-x");
        assert_eq!(suggest_id("__"), "refund-voids-payment-intent");
    }
}
