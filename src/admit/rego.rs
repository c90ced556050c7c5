//! Rego for what the YAML rules do not say: `data.shipmoor.admit.deny`, a set of messages, as
//! Gatekeeper and conftest users write it, evaluated in-process with `regorus`.
//!
//! In: the module's path (relative to the policy's directory) and, per admission, the input
//! document (the verified statement and the verification facts; its shape is in the book:
//! admission.md#rego).
//! Out: the deny messages, sorted and without duplicates; empty admits.
//!
//! Steps of [`RegoPolicy::load`]:
//! 1. read the module;
//! 2. parse it as Rego v1 (`deny contains msg if { … }`, with or without `import rego.v1`);
//!    a module that does not parse as v1 but does as v0 (`deny[msg] { … }`, the syntax of OPA
//!    before 1.0 and of most Gatekeeper and conftest policies written then) is read as v0, as
//!    `opa --v0-compatible` would; when neither parses, the error of the parse that got further
//!    into the file is reported, with its line and column;
//! 3. check the package is `shipmoor.admit` and that it declares a `deny` rule;
//! 4. evaluate `deny` once over an empty input, so that what regorus finds only when it
//!    evaluates (a call to an unknown function, a `deny` that is not a set) is reported when the
//!    policy loads rather than at the first admission. An unsafe variable in a body the empty
//!    input never reaches is still found only at evaluation: [`RegoPolicy::deny`] then errs.
//!
//! Builtin errors are strict (regorus's default, OPA's `--strict-builtin-errors`): a rule that
//! calls a builtin wrongly is an evaluation error, which admission must treat as a deny, rather
//! than silently undefined, which would drop a deny reason.

use std::path::Path;

use crate::error::InputError;

/// The package the module must declare, and the rule admission reads.
const PACKAGE: &str = "data.shipmoor.admit";
const DENY_RULE: &str = "data.shipmoor.admit.deny";

const DENY_EXAMPLE: &str =
    "deny contains msg if { input.age_seconds > 86400; msg := \"older than a day\" }";

/// A compiled Rego module.
pub struct RegoPolicy {
    /// The module's path as the policy names it (relative to the policy's directory).
    pub file: String,
    engine: regorus::Engine,
}

impl std::fmt::Debug for RegoPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegoPolicy")
            .field("file", &self.file)
            .finish()
    }
}

/// Where regorus says an error is, and what it says.
#[derive(Default)]
struct RegorusError {
    file: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    message: String,
}

impl RegoPolicy {
    /// Reads and compiles the module `rego_path_as_written`, relative to `policy_dir`. Errors name
    /// the module by its path from the working directory (the policy's directory joined with
    /// the path as written), so that an editor opens it.
    pub fn load(policy_dir: &Path, rego_path_as_written: &str) -> Result<RegoPolicy, InputError> {
        let shown = policy_dir.join(rego_path_as_written).display().to_string();
        // 1. Read.
        let text = std::fs::read_to_string(&shown).map_err(|e| {
            InputError::new(format!("cannot read the Rego module: {e}"))
                .in_file(shown.clone())
                .help("the `rego` path is relative to the policy file's directory")
        })?;
        RegoPolicy::compile(&shown, rego_path_as_written, &text)
    }

    fn compile(shown: &str, as_written: &str, text: &str) -> Result<RegoPolicy, InputError> {
        let at = |e: RegorusError| {
            let err = InputError::new(e.message).in_file(shown);
            match (e.line, e.column) {
                (Some(line), Some(column)) => err.at(shown, line, column),
                _ => err,
            }
        };
        // 2. Parse, v1 first.
        let (mut engine, package) = match parse(shown, text, false) {
            Ok(ok) => ok,
            Err(v1) => {
                let v0 = if may_be_v0(text) {
                    parse(shown, text, true)
                } else {
                    Err(RegorusError::default())
                };
                match v0 {
                    Ok(ok) => ok,
                    Err(v0) => {
                        // The parse that got further is likelier the syntax the author meant.
                        let further = if v0.line > v1.line { v0 } else { v1 };
                        return Err(at(further).help(
                            "fix the Rego syntax at this position (`opa check` reports the \
                             same); rules are written `deny contains msg if { … }`",
                        ));
                    }
                }
            }
        };
        // 3. The package and the deny rule.
        if package != PACKAGE {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with("package"))
                .map_or(1, |i| i + 1);
            let package = package.strip_prefix("data.").unwrap_or(&package);
            return Err(InputError::new(format!(
                "the Rego module's package is `{package}`: admission reads `{DENY_RULE}`"
            ))
            .at(shown, line, 1)
            .help("declare `package shipmoor.admit`"));
        }
        let has_deny = engine
            .has_declared_rule_rooted_at(shown, "deny")
            .map_err(|e| {
                at(locate(&e.to_string())).help(format!("declare the rule as `{DENY_EXAMPLE}`"))
            })?;
        if !has_deny {
            return Err(InputError::new(format!(
                "the Rego module declares no `deny` rule: admission reads `{DENY_RULE}`, a set \
                 of messages"
            ))
            .in_file(shown)
            .help(format!("add a rule such as `{DENY_EXAMPLE}`")));
        }
        // 4. Prepare, and evaluate `deny` once over an empty input: regorus finds a call to an
        // unknown function or a conflict only when it evaluates, and such a module would fail
        // every admission.
        engine.set_input(regorus::Value::new_object());
        let value = engine.eval_rule(DENY_RULE.to_string()).map_err(|e| {
            let e = locate(&e.to_string());
            let message = format!("the Rego module fails to evaluate: {}", e.message);
            at(RegorusError { message, ..e }).help(
                "fix the rule at this position (checked by evaluating `deny` over an empty input)",
            )
        })?;
        if !matches!(value, regorus::Value::Set(_) | regorus::Value::Undefined) {
            return Err(InputError::new(format!(
                "`{DENY_RULE}` must be a set of messages, found {}",
                json_text(&value)
            ))
            .in_file(shown)
            .help(format!(
                "write it as a partial set rule, e.g. `{DENY_EXAMPLE}`"
            )));
        }
        Ok(RegoPolicy {
            file: as_written.to_string(),
            engine,
        })
    }

    /// The deny messages for `input`: the members of `data.shipmoor.admit.deny`, a string member
    /// as it is, any other as its JSON text; sorted, without duplicates. Empty: no Rego reason
    /// to deny. `Err`: evaluation failed (a builtin error, a conflict, `deny` not a set), which
    /// the caller must treat as a deny.
    ///
    /// Each call evaluates on its own copy of the compiled engine, so that nothing of one
    /// admission (input, cached rule values) reaches the next. The copy shares the compiled
    /// modules by reference count (under a microsecond); converting the input into regorus's
    /// values is most of a call, about 40 µs for a real statement in a release build.
    pub fn deny(&self, input: &serde_json::Value) -> Result<Vec<String>, String> {
        let mut engine = self.engine.clone();
        engine.set_input(regorus::Value::from(input.clone()));
        let value = engine
            .eval_rule(DENY_RULE.to_string())
            .map_err(|e| one_line(&e.to_string()))?;
        let members: Vec<&regorus::Value> = match &value {
            regorus::Value::Undefined => Vec::new(),
            regorus::Value::Set(set) => set.iter().collect(),
            other => {
                return Err(format!(
                    "`{DENY_RULE}` must be a set of messages (`deny contains msg if {{ … }}`), \
                     found {}",
                    json_text(other)
                ))
            }
        };
        let mut messages: Vec<String> = members
            .into_iter()
            .map(|m| match m {
                regorus::Value::String(s) => s.to_string(),
                other => json_text(other),
            })
            .collect();
        messages.sort();
        messages.dedup();
        Ok(messages)
    }
}

/// A fresh engine with the module parsed (v0 or v1 syntax), and the module's package.
fn parse(
    shown: &str,
    text: &str,
    rego_v0: bool,
) -> Result<(regorus::Engine, String), RegorusError> {
    let mut engine = regorus::Engine::new();
    engine.set_rego_v0(rego_v0);
    let package = engine
        .add_policy(shown.to_string(), text.to_string())
        .map_err(|e| locate(&e.to_string()))?;
    Ok((engine, package))
}

/// Whether a module that failed to parse as v1 should be tried as v0. Not when it says it is v1
/// (`import rego.v1`), nor when it uses a keyword of v1 (`if`, `contains`, `in`, `every`)
/// without importing it from `future.keywords`: that is v1 written wrongly, and regorus's v0
/// parser would print a warning for each such word on stderr.
fn may_be_v0(text: &str) -> bool {
    let words = code_words(text);
    let imports_v1 = words.iter().any(|w| w == "rego.v1");
    let imports_future = words.iter().any(|w| w.starts_with("future.keywords"));
    let v1_words = words
        .iter()
        .any(|w| matches!(w.as_str(), "if" | "contains" | "in" | "every"));
    !imports_v1 && (imports_future || !v1_words)
}

/// The words of a module's code (dotted paths kept whole), outside comments and string
/// literals, so that `msg := "deny if old"` uses no keyword.
fn code_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c.is_alphanumeric() || c == '_' || c == '.' {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        match c {
            '#' => {
                chars.by_ref().find(|c| *c == '\n');
            }
            '`' => {
                chars.by_ref().find(|c| *c == '`');
            }
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' | '\n' => break,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// Reads regorus's error text: `\n--> FILE:LINE:COL\n  |\nN | source\n  | ^\nerror: MESSAGE`.
fn locate(text: &str) -> RegorusError {
    let place = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("--> "))
        .and_then(|p| {
            let mut parts = p.rsplitn(3, ':');
            let column = parts.next()?.trim().parse().ok()?;
            let line = parts.next()?.trim().parse().ok()?;
            Some((parts.next()?.to_string(), line, column))
        });
    let message = text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .map(str::to_string)
        .unwrap_or_else(|| one_line(text));
    let (file, line, column) = match place {
        Some((file, line, column)) => (Some(file), Some(line), Some(column)),
        None => (None, None, None),
    };
    RegorusError {
        file,
        line,
        column,
        message,
    }
}

/// An evaluation error on one line, `FILE:LINE:COL: MESSAGE` when regorus says where: its
/// errors carry the source line and a caret on lines of their own, which a deny reason does not
/// want.
fn one_line(text: &str) -> String {
    let e = locate(text);
    let message = e.message.split_whitespace().collect::<Vec<_>>().join(" ");
    match (e.file, e.line, e.column) {
        (Some(file), Some(line), Some(column)) => format!("{file}:{line}:{column}: {message}"),
        _ => message,
    }
}

/// A value as compact JSON (sets as arrays), for a deny member that is not a string.
fn json_text(value: &regorus::Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| format!("{value:?}"))
}

#[cfg(test)]
#[path = "rego_tests.rs"]
mod tests;
