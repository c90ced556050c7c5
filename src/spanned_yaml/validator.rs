//! The validator: walks a spanned tree and collects every problem, each at its position with a
//! fix, instead of stopping at the first.
//!
//! [`Validator::fields`] reports the unknown keys of a mapping (with a did-you-mean and the keys
//! allowed there); the typed readers (a string, a boolean, an integer, a mapping, a sequence of
//! strings or of globs) report a wrong type in the same words whichever file is read. A schema
//! (the acceptance file's, the admission policy's) is written on top of them.
//!
//! How scalars are read (YAML 1.2 core schema, applied only where the schema wants a type):
//! - booleans and integers must be plain (unquoted) scalars: `required: "true"` is an error,
//!   because quoting usually means the author wanted something other than a boolean;
//! - where a string is wanted, any non-null scalar is taken as written (`id: 2024`,
//!   `args: [-j, 4]`), because numbers and words are equally valid ids and arguments to us;
//! - an optional key whose value is null (`runners:` with every entry commented out) counts as
//!   absent; a required key whose value is null is reported as empty.

use saphyr_parser::ScalarStyle;

use super::scalar::{core_bool, core_int, describe, is_null, short};
use super::tree::{Entry, Kind, Node, Pos, Problem};
use crate::text::closest;

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
    /// Keys an earlier release spelled otherwise, `(old, new)`: the old spelling gets a
    /// did-you-mean to the new one, which the edit distance alone would not find.
    pub(crate) renamed: &'static [(&'static str, &'static str)],
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
    pub(crate) fn fields_except<'n>(
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
            let renamed = self
                .renamed
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

    pub(crate) fn flag(&mut self, e: &Entry) -> Option<bool> {
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
    pub(crate) fn integer(&mut self, e: &Entry, example: &str) -> Option<i128> {
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
            } else if glob.starts_with('/') || glob.split(['/', '\\']).any(|part| part == "..") {
                // Globs match repository paths: one outside the repository matches nothing,
                // which would make a search of it (or a guard over it) vacuous.
                self.report(
                    *pos,
                    format!(
                        "`{}` in `{}` names paths outside the repository: globs match repository paths, relative and without `..`",
                        short(glob),
                        e.key
                    ),
                    format!("write it relative to the repository root, e.g. `{example}`"),
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
}
