//! The `criteria` list: each criterion's id, `ac`, lane and `required`, what `acceptance
//! derive` recorded (`confidence`, `source`), and its check: a `test`, a `command` or a
//! `pattern`. Ids are checked here, for their alphabet, their uniqueness and their tags.

use std::collections::HashMap;

use saphyr_parser::ScalarStyle;

use super::Reader;
use crate::acceptance::tags::tag_collisions;
use crate::acceptance::{tag_for, Check, Confidence, Criterion, Lane};
use crate::spanned_yaml::{
    describe, is_null, scalar_text, short, Entry, Kind, Node, Pos, Validator,
};
use crate::text::closest;

pub(super) const CRITERION_KEYS: &[&str] = &[
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

impl Reader {
    pub(super) fn criteria(&mut self, e: &Entry) -> Option<Vec<Criterion>> {
        const EXAMPLE: &str = "- id: refund-voids-payment-intent";
        let items = if is_null(&e.value) {
            &[][..]
        } else {
            self.v.sequence(e, EXAMPLE)?
        };
        if items.is_empty() {
            self.v.report(
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
        for (shorter, longer) in tag_collisions(&all) {
            self.v.report(
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
                self.v.report(
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
        let f = self.v.fields(entries, CRITERION_KEYS, "a criterion");

        let id_entry = f.raw("id");
        let line = id_entry.map_or(item.pos.line, |e| e.key_pos.line);
        let id = match id_entry {
            Some(e) => self.criterion_id(e, first_line),
            None => {
                self.v.report(
                    item.pos,
                    "criterion is missing `id`",
                    "add `id: <lowercase-words-with-dashes>`, e.g. `id: refund-voids-payment-intent`",
                );
                None
            }
        };
        let ac = match f.raw("ac") {
            Some(e) => self
                .v
                .text(e, "ac: The order is marked refunded.")
                .map(|s| s.trim().to_string()),
            None => {
                let which = id_entry
                    .and_then(|e| scalar_text(&e.value))
                    .map(|id| format!("criterion `{}`", short(id)))
                    .unwrap_or_else(|| "criterion".to_string());
                self.v.report(
                    item.pos,
                    format!("{which} is missing `ac`"),
                    "add `ac: <the criterion's text: what must be true once the change is made>`",
                );
                None
            }
        };
        let required = match f.get("required") {
            Some(e) => self.v.flag(e),
            None => Some(true),
        };
        let lane = match f.get("lane") {
            Some(e) => self.lane(e),
            None => Some(Lane::Floor),
        };
        let check = match f.get("check") {
            None => Some(None),
            Some(e) if lane == Some(Lane::Judge) => {
                self.v.report(
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
                .v
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
            self.v.report(
                Validator::value_pos(e),
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
        let id = self.v.text(e, "id: refund-voids-payment-intent")?;
        let pos = Validator::value_pos(e);
        if !is_valid_id(&id) {
            self.v.report(
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
            self.v.report(
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
        let text = self.v.text(e, "lane: floor")?;
        match text.as_str() {
            "floor" => Some(Lane::Floor),
            "judge" => Some(Lane::Judge),
            other => {
                let near = closest(other, &["floor", "judge"])
                    .map(|n| format!("did you mean `{n}`? "))
                    .unwrap_or_default();
                self.v.report(
                    Validator::value_pos(e),
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
        let entries = self
            .v
            .mapping(e, "check: { test: \"tests/test_refund.py::test_voids\" }")?;
        let _ = self.v.fields(entries, CHECK_KEYS, "`check`");
        let kinds: Vec<&Entry> = entries
            .iter()
            .filter(|k| CHECK_KEYS.contains(&k.key.as_str()))
            .collect();
        match kinds.as_slice() {
            [] => {
                self.v.report(
                    Validator::value_pos(e),
                    "`check` names no check",
                    format!("{KINDS_HELP}, or remove `check`"),
                );
                None
            }
            [one] => match one.key.as_str() {
                "test" => self
                    .v
                    .text(one, "test: \"tests/test_refund.py::test_voids\"")
                    .map(Check::Test),
                "command" => self
                    .v
                    .text(one, "command: \"scripts/check_refund.sh\"")
                    .map(Check::Command),
                _ => self.pattern(one),
            },
            [first, rest @ ..] => {
                for other in rest {
                    self.v.report(
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
        let entries = self.v.mapping(
            e,
            "pattern: { paths: [\"src/**\"], regex: \"PaymentIntent\\\\.cancel\" }",
        )?;
        let f = self.v.fields(entries, PATTERN_KEYS, "`pattern`");
        let paths = match f.raw("paths") {
            Some(p) => {
                let globs = if is_null(&p.value) {
                    Some(Vec::new())
                } else {
                    self.v.globs(p, "paths: [\"src/**\"]")
                };
                match globs {
                    Some(g) if g.is_empty() => {
                        self.v.report(
                            Validator::value_pos(p),
                            "`paths` is empty: the pattern would search no files",
                            "list at least one glob, e.g. `paths: [\"src/**\"]`",
                        );
                        None
                    }
                    other => other,
                }
            }
            None => {
                self.v.report(
                    Validator::value_pos(e),
                    "`pattern` is missing `paths`",
                    "add `paths: [<glob>, ...]`, the files to search, e.g. `paths: [\"src/**\"]`",
                );
                None
            }
        };
        let regex = match f.raw("regex") {
            Some(r) => {
                let text = self.v.text(r, "regex: \"PaymentIntent\\\\.cancel\"");
                match text.map(|t| (regex::Regex::new(&t), t)) {
                    Some((Ok(_), t)) => Some(t),
                    Some((Err(err), t)) => {
                        self.v.report(
                            Validator::value_pos(r),
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
                self.v.report(
                    Validator::value_pos(e),
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
}

/// `^[a-z0-9][a-z0-9-]*$`, written out: ids also become tags and test-name fragments, so the
/// alphabet is kept to what survives every runner's naming rules.
pub(super) fn is_valid_id(id: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    id.chars().next().is_some_and(ok) && id.chars().all(|c| ok(c) || c == '-')
}

/// A valid id close to `id`, for the help text: lower-cased, other characters turned into `-`.
pub(super) fn suggest_id(id: &str) -> String {
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

/// The one-line reason from a `regex` error, whose display spans several lines with a caret.
fn regex_reason(err: &regex::Error) -> String {
    let full = err.to_string();
    full.lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .map(str::to_string)
        .unwrap_or_else(|| full.split_whitespace().collect::<Vec<_>>().join(" "))
}
