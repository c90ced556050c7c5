//! The `runners` list (each runner's kind, root, arguments, setup, command and `env_pass`) and
//! the `floor` section, whose `env_pass` names the variables every runner gets.

use super::Reader;
use crate::acceptance::{RunnerConfig, RunnerKind};
use crate::spanned_yaml::{describe, short, Entry, Kind, Node, Validator};
use crate::text::closest;

const RUNNER_KEYS: &[&str] = &["kind", "root", "args", "setup", "command", "env_pass"];
const FLOOR_KEYS: &[&str] = &["env_pass"];

impl Reader {
    pub(super) fn runners(&mut self, e: &Entry) -> Option<Vec<RunnerConfig>> {
        let items = self.v.sequence(e, "runners: [{ kind: cargo }]")?;
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
        let known: &[RunnerKind] = &self.runner_kinds;
        let kinds = known
            .iter()
            .map(|k| format!("`{}`", k.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        let entries = match &item.kind {
            Kind::Map(entries) => entries,
            Kind::Rejected => return None,
            _ => {
                self.v.report(
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
        let f = self.v.fields(entries, RUNNER_KEYS, "a runner");

        let kind = match f.raw("kind") {
            Some(e) => {
                let text = self.v.text(e, "kind: cargo");
                match text.as_deref().map(|t| (RunnerKind::parse_in(t, known), t)) {
                    Some((Some(kind), _)) => Some(kind),
                    Some((None, t)) => {
                        let names: Vec<&str> = known.iter().map(|k| k.as_str()).collect();
                        let near = closest(t, &names)
                            .map(|n| format!("did you mean `{n}`? "))
                            .unwrap_or_default();
                        self.v.report(
                            Validator::value_pos(e),
                            format!("unknown runner kind `{}`", short(t)),
                            format!("{near}use one of {kinds}"),
                        );
                        None
                    }
                    None => None,
                }
            }
            None => {
                self.v.report(
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
                .v
                .strings(e, "args: [\"--features\", \"x\"]")
                .map(|v| v.into_iter().map(|(s, _)| s).collect()),
            None => Some(Vec::new()),
        };
        let setup = match f.get("setup") {
            Some(e) => self.v.text(e, "setup: \"npm ci\"").map(Some),
            None => Some(None),
        };
        let env_pass = match f.get("env_pass") {
            Some(e) => self.env_names(e),
            None => Some(Vec::new()),
        };
        let command = match (f.get("command"), kind) {
            (Some(e), Some(RunnerKind::JunitCommand)) => {
                self.v.text(e, "command: \"make junit\"").map(Some)
            }
            (Some(e), Some(other)) => {
                self.v.report(
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
                self.v.report(
                    item.pos,
                    "a `junit-command` runner needs `command`",
                    "add `command: <a command that runs the tests and writes JUnit XML to $SHIPMOOR_JUNIT_OUT>`",
                );
                None
            }
            (Some(e), None) => {
                // The kind is already reported; still check the value so its own problems surface.
                let _ = self.v.text(e, "command: \"make junit\"");
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
        let names = self.v.strings(e, EXAMPLE)?;
        let mut ok = true;
        for (name, pos) in &names {
            let valid = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                self.v.report(
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
        let root = self.v.text(e, "root: web")?;
        let absolute = root.starts_with('/')
            || root.starts_with('\\')
            || has_drive_prefix(&root)
            || std::path::Path::new(&root).is_absolute();
        let escapes = root.split(['/', '\\']).any(|part| part == "..");
        if absolute || escapes {
            self.v.report(
                Validator::value_pos(e),
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

    /// `floor: { env_pass: [NAME, …] }`.
    pub(super) fn floor_settings(&mut self, e: &Entry) -> Option<Vec<String>> {
        let entries = self.v.mapping(e, "floor: { env_pass: [\"NPM_TOKEN\"] }")?;
        let f = self.v.fields(entries, FLOOR_KEYS, "`floor`");
        match f.get("env_pass") {
            Some(a) => self.env_names(a),
            None => Some(Vec::new()),
        }
    }
}

/// `C:` and the like: absolute on Windows, where `Path::is_absolute` on Unix would not notice.
fn has_drive_prefix(path: &str) -> bool {
    let mut chars = path.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.next() == Some(':')
}
