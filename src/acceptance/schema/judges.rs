//! The `judge` block: one judge (a mapping) or a panel (a list of named judges), each a local
//! `command` or a `url` with its `model`, and their timeout, concurrency, diff size and excluded
//! files. An API key written into the file is refused.

use super::criteria::{is_valid_id, suggest_id};
use super::Reader;
use crate::acceptance::judges::{self as judge, JudgeSpec, Transport};
use crate::spanned_yaml::{describe, scalar_text, short, Entry, Kind, Pos, Validator};

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

impl Reader {
    /// `judge:` is one judge (a mapping) or a panel (a list of mappings, each with a `name`).
    pub(super) fn judges(&mut self, e: &Entry) -> Option<Vec<JudgeSpec>> {
        const EXAMPLE: &str = "judge: { command: [\"python3\", \"tools/judge.py\"] }";
        let items = match &e.value.kind {
            Kind::Map(entries) => {
                return self
                    .judge(entries, e.key_pos, Validator::value_pos(e), None)
                    .map(|j| vec![j]);
            }
            Kind::Seq(items) => items,
            _ => {
                // Neither one judge nor a panel: the message of any mapping wanted.
                self.v.mapping(e, EXAMPLE)?;
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
                    self.v.report(
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
                self.v.report(
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
            self.v.report(
                e.key_pos,
                format!(
                    "`{}` in `judge`: an API key is never read from the acceptance file",
                    e.key
                ),
                "remove it (once committed it is in the history: rotate the key), put the key in an environment variable and name it with `api_key_env: OPENAI_API_KEY`",
            );
        }
        let f = self
            .v
            .fields_except(entries, JUDGE_KEYS, "`judge`", &secrets);
        let command_e = f.get("command");
        let url_e = f.get("url");
        let mut ok = true;
        match (command_e, url_e) {
            (Some(c), Some(u)) => {
                let later = if c.key_pos > u.key_pos { c } else { u };
                self.v.report(
                    later.key_pos,
                    "`judge` has both `command` and `url`",
                    "keep one: `command` runs a local judge, `url` calls an OpenAI-compatible endpoint",
                );
                ok = false;
            }
            (None, None) => {
                self.v.report(
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
                self.v.report(
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
            Some(m) => self.v.text(m, "model: gpt-4o").map(Some),
            None => Some(None),
        };
        let api_key_env = match f.get("api_key_env") {
            Some(k) => self.api_key_env(k).map(Some),
            None => Some(None),
        };
        if let (Some(u), None) = (url_e, f.get("model")) {
            self.v.report(
                u.key_pos,
                "a judge `url` needs `model`",
                "add `model: <the model name the endpoint serves>`",
            );
            ok = false;
        }
        if url_e.is_none() && command_e.is_some() {
            for key in ["model", "api_key_env"] {
                if let Some(stray) = f.get(key) {
                    self.v.report(
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
            Some(x) => self.v.globs(x, "exclude: [\"**/*.lock\", \".env*\"]"),
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
        let name = self.v.text(e, "name: security")?;
        if !is_valid_id(&name) {
            self.v.report(
                Validator::value_pos(e),
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
        let argv = self.v.strings(e, &example)?;
        match argv.first() {
            None => {
                self.v.report(
                    Validator::value_pos(e),
                    "judge `command` is empty",
                    format!("name the program and its arguments, e.g. `{example}`"),
                );
                None
            }
            Some((program, pos)) if program.trim().is_empty() => {
                self.v.report(
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
        let url = self
            .v
            .text(e, "url: \"https://api.example.com/v1/chat/completions\"")?;
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            self.v.report(
                Validator::value_pos(e),
                format!("judge `url` `{}` is not an http(s) URL", short(&url)),
                "write the full endpoint, e.g. `url: \"https://api.example.com/v1/chat/completions\"`",
            );
            return None;
        }
        Some(url)
    }

    fn api_key_env(&mut self, e: &Entry) -> Option<String> {
        let name = self.v.text(e, "api_key_env: OPENAI_API_KEY")?;
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            self.v.report(
                Validator::value_pos(e),
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
        let n = self.v.integer(e, example)?;
        match u64::try_from(n) {
            Ok(n) if n > 0 => Some(n),
            _ => {
                self.v.report(
                    Validator::value_pos(e),
                    format!("`{}` must be a positive {what}, found `{n}`", e.key),
                    format!("write it like `{example}`"),
                );
                None
            }
        }
    }
}
