//! A command's message in the words of the interface that ran it: the Stop hook and the MCP
//! server run `shipmoor` commands as children, and what a child says names its own flags
//! (`pass --head`, `pass --force to start it again`), which the hook or the tool may not have.
//!
//! In: the child's message (its stderr, without progress lines), the child command's own long
//! flags, and the interface's [`Words`] for the flags it shares.
//! Out: the message, as the interface's user can act on it.
//!
//! Steps, line by line:
//! 1. the usage lines a usage error ends with (`Usage: …`, `For more information, try
//!    '--help'.`) are left out: the interface has no `--help` to try;
//! 2. a hint (`help: …`) is cut into its alternatives (`, or `, `; `), and an alternative that
//!    names a flag of the child the interface lacks is left out; a hint with none left goes;
//! 3. each flag the interface shares is put in its words (`--force` → `` `force: true` ``,
//!    `` `--base main` `` → `` `base: "main"` ``), and each phrase is replaced whole. Another
//!    program's flags (`git fetch --unshallow`, `cargo install --locked`) are never the child's
//!    own, so they stay as they are.

use std::sync::OnceLock;

use regex::{Captures, Regex};

/// How an interface says one of the child's flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// The same flag (the hook's `--base` is claim-check's).
    Same,
    /// A tool argument that takes a value: `` `name` ``, or `` `name: "value"` ``.
    Value(&'static str),
    /// A tool argument that is a switch: `` `name: true` ``.
    Switch(&'static str),
}

/// An interface's words for one child command.
#[derive(Debug, Clone, Default)]
pub struct Words {
    /// The child command's own long flags, with their dashes (`--base`).
    pub own: Vec<String>,
    /// The flags the interface shares, and how it says each.
    pub shared: Vec<(&'static str, Arg)>,
    /// Phrases replaced whole, before the flags (`` run `shipmoor claim-check` ``).
    pub phrases: Vec<(&'static str, &'static str)>,
}

/// A long flag, in backticks with what follows it up to the closing backtick, or bare with a
/// placeholder in capitals (`--acceptance PATH`).
fn flag() -> Option<&'static Regex> {
    static FLAG: OnceLock<Option<Regex>> = OnceLock::new();
    FLAG.get_or_init(|| {
        Regex::new(r"`--([a-z][a-z0-9-]*)(?: ([^`]*))?`|(^|[^A-Za-z0-9_`-])--([a-z][a-z0-9-]*)(?: [A-Z][A-Z_]*\b)?").ok()
    })
    .as_ref()
}

impl Words {
    /// The message, in the interface's words (see the module doc).
    pub fn speak(&self, message: &str) -> String {
        let mut out = Vec::new();
        for line in message.lines() {
            let trimmed = line.trim_start();
            // 1. Usage lines.
            if trimmed.starts_with("Usage:") || trimmed.contains("try '--help'") {
                continue;
            }
            // 2. A hint's alternatives the interface cannot follow.
            let line = match trimmed.strip_prefix("help:") {
                Some(hint) => {
                    let kept: Vec<&str> = alternatives(hint)
                        .into_iter()
                        .filter(|a| !self.names_a_missing_flag(a))
                        .collect();
                    if kept.is_empty() {
                        continue;
                    }
                    let indent = &line[..line.len() - trimmed.len()];
                    format!("{indent}help: {}", join(&kept))
                }
                None => line.to_string(),
            };
            // 3. The shared flags, in the interface's words.
            out.push(self.translate(&line));
        }
        let mut text = out.join("\n");
        // A blank line left behind by a usage line at the end.
        text.truncate(text.trim_end().len());
        text
    }

    fn names_a_missing_flag(&self, text: &str) -> bool {
        let Some(flag) = flag() else { return false };
        flag.captures_iter(text).any(|c| {
            let name = c.get(1).or_else(|| c.get(4)).map_or("", |m| m.as_str());
            let flag = format!("--{name}");
            (self.own.contains(&flag) || name == "help") && self.arg(&flag).is_none()
        })
    }

    fn arg(&self, flag: &str) -> Option<&Arg> {
        self.shared
            .iter()
            .find(|(f, _)| *f == flag)
            .map(|(_, arg)| arg)
    }

    fn translate(&self, line: &str) -> String {
        let mut line = line.to_string();
        for (phrase, words) in &self.phrases {
            line = line.replace(phrase, words);
        }
        let Some(flag) = flag() else { return line };
        flag.replace_all(&line, |c: &Captures| {
            let whole = c.get(0).map_or("", |m| m.as_str()).to_string();
            let (name, value, lead) = match (c.get(1), c.get(4)) {
                (Some(name), _) => (name.as_str(), c.get(2).map(|v| v.as_str()), ""),
                (None, Some(name)) => (name.as_str(), None, c.get(3).map_or("", |m| m.as_str())),
                (None, None) => return whole,
            };
            let words = match self.arg(&format!("--{name}")) {
                None | Some(Arg::Same) => return whole,
                Some(Arg::Switch(arg)) => format!("`{arg}: true`"),
                Some(Arg::Value(arg)) => match value {
                    Some(v) => format!("`{arg}: {}`", serde_json::Value::from(v)),
                    None => format!("`{arg}`"),
                },
            };
            format!("{lead}{words}")
        })
        .into_owned()
    }
}

/// A hint's alternatives: its text cut after each `, or ` and `; `.
fn alternatives(hint: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = hint.trim();
    while let Some(at) = [", or ", "; "]
        .iter()
        .filter_map(|sep| rest.find(sep).map(|i| (i, sep.len())))
        .min()
    {
        parts.push(&rest[..at.0 + at.1]);
        rest = &rest[at.0 + at.1..];
    }
    parts.push(rest);
    parts
}

/// Alternatives joined again: each kept as written, without a separator left dangling at the
/// end.
fn join(kept: &[&str]) -> String {
    let text: String = kept.concat();
    let text = text.trim_end();
    let text = text
        .strip_suffix(", or")
        .or_else(|| text.strip_suffix(';'))
        .unwrap_or(text);
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::{Arg, Words};

    fn claim_check_tool() -> Words {
        Words {
            own: [
                "--base",
                "--head",
                "--temp-dir",
                "--mode",
                "--repo",
                "--vsa",
            ]
            .map(String::from)
            .to_vec(),
            shared: vec![
                ("--base", Arg::Value("base")),
                ("--head", Arg::Value("head")),
                ("--mode", Arg::Value("mode")),
                ("--force", Arg::Switch("force")),
            ],
            phrases: vec![("run `shipmoor claim-check`", "call `claim_check`")],
        }
    }

    #[test]
    fn a_hint_names_only_what_the_interface_has() {
        let w = claim_check_tool();
        assert_eq!(
            w.speak("error: the working tree has uncommitted changes to tracked files: a.py\n  help: claim-check checks committed code: commit or stash the changes (`git stash`), or pass --head"),
            "error: the working tree has uncommitted changes to tracked files: a.py\n  help: claim-check checks committed code: commit or stash the changes (`git stash`), or pass `head`"
        );
        assert_eq!(
            w.speak(
                "error: no space\n  help: free space, or pass another directory with --temp-dir"
            ),
            "error: no space\n  help: free space",
            "an alternative with a flag the tool lacks goes"
        );
        assert_eq!(
            w.speak("error: x\n  help: pass --vsa"),
            "error: x",
            "a hint with nothing left goes"
        );
        assert_eq!(
            w.speak("error: cannot read the statement\n  help: run `shipmoor claim-check` first (it writes .shipmoor/claim-check.vsa.json), or pass --vsa"),
            "error: cannot read the statement\n  help: call `claim_check` first (it writes .shipmoor/claim-check.vsa.json)"
        );
    }

    #[test]
    fn flags_become_arguments_and_other_programs_flags_stay() {
        let w = claim_check_tool();
        assert_eq!(
            w.speak("error: exists\n  help: edit it, or pass --force to start it again"),
            "error: exists\n  help: edit it, or pass `force: true` to start it again"
        );
        assert_eq!(
            w.speak("error: --base `main` is not a commit\n  help: pass `--base origin/main` (or create the branch: `git branch main origin/main`)"),
            "error: `base` `main` is not a commit\n  help: pass `base: \"origin/main\"` (or create the branch: `git branch main origin/main`)"
        );
        assert_eq!(
            w.speak("error: x\n  help: pass a commit that exists here; in a shallow clone fetch it first (`git fetch --unshallow` or `fetch-depth: 0`)"),
            "error: x\n  help: pass a commit that exists here; in a shallow clone fetch it first (`git fetch --unshallow` or `fetch-depth: 0`)"
        );
        assert_eq!(
            w.speak(
                "error: cargo-nextest is missing\n  help: cargo install cargo-nextest --locked"
            ),
            "error: cargo-nextest is missing\n  help: cargo install cargo-nextest --locked"
        );
    }

    #[test]
    fn usage_lines_go_and_the_same_flag_stays() {
        let w = claim_check_tool();
        assert_eq!(
            w.speak("error: invalid value '0' for '--runs <K>'\n\nFor more information, try '--help'.\n"),
            "error: invalid value '0' for '--runs <K>'"
        );
        assert_eq!(
            w.speak("error: bad\n  help: run the command with --help"),
            "error: bad"
        );
        let hook = Words {
            own: vec!["--base".into(), "--head".into()],
            shared: vec![("--base", Arg::Same)],
            phrases: vec![],
        };
        assert_eq!(
            hook.speak("error: --base `x` is not a commit\n  help: pass the commit the change starts from with --base, or pass --head"),
            "error: --base `x` is not a commit\n  help: pass the commit the change starts from with --base"
        );
    }
}
