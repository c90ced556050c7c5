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
//! 2. check its nesting against admission's limits ([`limits::nesting`]: regorus's parser
//!    recurses once per level and doubles its work for each bracket opened in a row), then parse
//!    it, on the evaluation thread within [`limits::PARSE_TIME_LIMIT`], as Rego v1
//!    (`deny contains msg if { … }`, with or without `import rego.v1`); a module that does not
//!    parse as v1 but does as v0 (`deny[msg] { … }`, the syntax of OPA before 1.0 and of most
//!    Gatekeeper and conftest policies written then) is read as v0, as `opa --v0-compatible`
//!    would; when neither parses, the error of the parse that got further into the file is
//!    reported, with its line and column;
//! 3. check the package is `shipmoor.admit` and that it declares a `deny` rule;
//! 4. refuse a function that calls itself, directly or through others ([`limits::recursion`]):
//!    Rego forbids it, and regorus would recurse until the stack overflows and the process aborts;
//! 5. install admission's limits (regorus's execution timer at [`limits::EVAL_TIME_LIMIT`],
//!    `numbers.range` bounded at [`limits::MAX_RANGE`] numbers), and evaluate `deny` once over
//!    an empty input, so that what regorus finds only when it evaluates (a call to an unknown
//!    function, a `deny` that is not a set, a loop past the time limit) is reported when the
//!    policy loads rather than at the first admission. An unsafe variable in a body the empty
//!    input never reaches is still found only at evaluation: [`RegoPolicy::deny`] then errs.
//!
//! Every evaluation runs on one long-lived thread with a large stack ([`limits::run_limited`]),
//! stopped by regorus's timer at the time limit, or abandoned (with its thread) a little after it.
//!
//! Builtin errors are strict (regorus's default, OPA's `--strict-builtin-errors`): a rule that
//! calls a builtin wrongly is an evaluation error, which admission must treat as a deny, rather
//! than silently undefined, which would drop a deny reason.

use std::path::Path;

use crate::error::InputError;

#[path = "rego_limits.rs"]
pub mod limits;

/// The package the module must declare, and the rule admission reads.
const PACKAGE: &str = "data.shipmoor.admit";
const DENY_RULE: &str = "data.shipmoor.admit.deny";

/// Why the module's `deny` could not be evaluated for an input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DenyError {
    /// The engine's error, on one line.
    #[error("{0}")]
    Failed(String),
    /// Where evaluation stood when its time limit stopped it.
    #[error("stopped at its time limit: {0}; {TIME_HELP}")]
    Stopped(String),
    /// `deny` evaluated to something other than a set (as JSON).
    #[error(
        "`{DENY_RULE}` must be a set of messages (`deny contains msg if {{ … }}`), \
                     found {0}"
    )]
    NotSet(String),
}

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
        // 2. Within the limits (rego_limits.rs): the nesting, then the parse on a thread of its
        // own, v1 first.
        limits::nesting(text).map_err(|e| {
            InputError::new(e.message)
                .at(shown, e.line, e.column)
                .help(format!(
                    "name the inner value with a rule or a variable of its own (`inner := [1]`, \
                     then `[inner]`): admission reads modules nested at most {} deep, with at \
                     most {} brackets or braces opened in a row",
                    limits::MAX_NESTING,
                    limits::MAX_OPENED_IN_A_ROW
                ))
        })?;
        let parsed = {
            let (shown, text) = (shown.to_string(), text.to_string());
            limits::run_limited(limits::PARSE_TIME_LIMIT, move || {
                parse_either(&shown, &text)
            })
        };
        let (mut engine, package) =
            match parsed {
                Ok(Ok(ok)) => ok,
                Ok(Err(further)) => return Err(at(further).help(
                    "fix the Rego syntax at this position (`opa check` reports the same); rules \
                     are written `deny contains msg if { … }`",
                )),
                Err(stopped) => return Err(InputError::new(format!(
                    "the Rego module was stopped at its parse limit: {}",
                    stopped_text(&stopped, "parsing it")
                ))
                .in_file(shown)
                .help(
                    "split the module's deepest expressions into rules or variables of their own \
                     (`inner := [1]`, then `[inner]`)",
                )),
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
        // 4. No function that calls itself: Rego forbids it, and regorus would recurse until the
        // stack overflows.
        if let Some(r) = limits::recursion(engine.get_modules()) {
            let name = &r.cycle[0];
            let how = if r.cycle.len() == 2 {
                format!("the Rego function `{name}` calls itself")
            } else {
                format!(
                    "the Rego function `{name}` calls itself through {}",
                    r.cycle.join(" → ")
                )
            };
            return Err(InputError::new(format!(
                "{how}: Rego forbids recursion, and admission stops a recursive module when it \
                 loads"
            ))
            .at(shown, r.line, r.column)
            .help(
                "iterate instead (`some x in …`, `every`, `walk(input, [path, value])`), or write \
                 the levels out to a fixed depth",
            ));
        }
        // 5. Prepare: admission's limits (the execution timer, the bounded `numbers.range`), then
        // evaluate `deny` once over an empty input: regorus finds a call to an unknown function
        // or a conflict only when it evaluates, and such a module would fail every admission;
        // so would one that runs past the time limit even over no input.
        limits::install_ranges(&mut engine).map_err(|e| {
            InputError::new(format!("cannot prepare the Rego module: {e}"))
                .in_file(shown)
                .help(
                    "admission could not install its bounded `numbers.range`; this is a fault \
                     of shipmoor's own: report it with the module",
                )
        })?;
        engine.set_execution_timer_config(regorus::utils::limits::ExecutionTimerConfig {
            limit: limits::EVAL_TIME_LIMIT,
            check_interval: std::num::NonZeroU32::new(64).expect("64 is not zero"),
        });
        let value = match evaluate(&engine, regorus::Value::new_object()) {
            Ok(value) => value,
            Err(Evaluation::Failed(e)) => {
                let e = locate(&e.to_string());
                let message = format!("the Rego module fails to evaluate: {}", e.message);
                return Err(at(RegorusError { message, ..e }).help(
                    "fix the rule at this position (checked by evaluating `deny` over an empty \
                     input)",
                ));
            }
            Err(Evaluation::Stopped(stopped)) => {
                return Err(InputError::new(format!(
                    "the Rego module was stopped at its time limit: {} (checked by evaluating \
                     `deny` over an empty input)",
                    stopped_text(&stopped, "evaluating `deny`")
                ))
                .in_file(shown)
                .help(TIME_HELP))
            }
        };
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
    /// An evaluation stopped at admission's time limit ([`limits::EVAL_TIME_LIMIT`]) is an `Err`
    /// that says so, which limit, and how to stay within it.
    ///
    /// Each call evaluates on its own copy of the compiled engine, so that nothing of one
    /// admission (input, cached rule values) reaches the next. The copy shares the compiled
    /// modules by reference count (under a microsecond); converting the input into regorus's
    /// values is most of a call, about 40 µs for a real statement in a release build.
    pub fn deny(&self, input: &serde_json::Value) -> Result<Vec<String>, DenyError> {
        let value = match evaluate(&self.engine, regorus::Value::from(input.clone())) {
            Ok(value) => value,
            Err(Evaluation::Failed(e)) => return Err(DenyError::Failed(one_line(&e.to_string()))),
            Err(Evaluation::Stopped(stopped)) => {
                return Err(DenyError::Stopped(stopped_text(
                    &stopped,
                    "evaluating `deny`",
                )))
            }
        };
        let members: Vec<&regorus::Value> = match &value {
            regorus::Value::Undefined => Vec::new(),
            regorus::Value::Set(set) => set.iter().collect(),
            other => return Err(DenyError::NotSet(json_text(other))),
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

/// The module parsed as v1, else as v0 (when it may be v0); when neither parses, the error of the
/// parse that got further into the file, likelier the syntax the author meant.
fn parse_either(shown: &str, text: &str) -> Result<(regorus::Engine, String), RegorusError> {
    let v1 = match parse(shown, text, false) {
        Ok(ok) => return Ok(ok),
        Err(v1) => v1,
    };
    if !may_be_v0(text) {
        return Err(v1);
    }
    match parse(shown, text, true) {
        Ok(ok) => Ok(ok),
        Err(v0) if v0.line > v1.line => Err(v0),
        Err(_) => Err(v1),
    }
}

const TIME_HELP: &str = "bound the module's loops: iterate over the input (`some d in \
    claim.dispositions`) rather than over a large `numbers.range`, and avoid `some` over \
    several large collections at once";

/// Why an evaluation of `deny` has no value.
enum Evaluation {
    /// regorus's error: a builtin's, a conflict, a rule that depends on itself.
    Failed(anyhow::Error),
    /// Stopped at admission's time limit, by regorus's timer or by the wait.
    Stopped(limits::Stopped),
}

/// `deny` over `input`, on a copy of `engine` (so that nothing of one admission, its input or
/// cached rule values, reaches the next; the copy shares the compiled modules by reference
/// count), on the evaluation thread within [`limits::EVAL_TIME_LIMIT`].
fn evaluate(engine: &regorus::Engine, input: regorus::Value) -> Result<regorus::Value, Evaluation> {
    let mut engine = engine.clone();
    let answer = limits::run_limited(limits::EVAL_TIME_LIMIT + limits::GRACE, move || {
        engine.set_input(input);
        engine.eval_rule(DENY_RULE.to_string())
    });
    match answer {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(e)) if limits::is_time_limit(&e) => Err(Evaluation::Stopped(
            limits::Stopped::Timer(limits::EVAL_TIME_LIMIT),
        )),
        Ok(Err(e)) => Err(Evaluation::Failed(e)),
        Err(stopped) => Err(Evaluation::Stopped(stopped)),
    }
}

/// What stopped a parse or an evaluation, for its message.
fn stopped_text(stopped: &limits::Stopped, doing: &str) -> String {
    match stopped {
        limits::Stopped::Timer(limit) => format!("{doing} ran past {} s", limit.as_secs_f64()),
        limits::Stopped::Deadline(limit) => format!(
            "{doing} ran past {} s and was abandoned (it runs on until the command exits)",
            limit.as_secs_f64()
        ),
        limits::Stopped::Panicked => {
            format!("regorus panicked {doing} (its message is above)")
        }
        limits::Stopped::NoThread(e) => format!("no thread could be started for {doing}: {e}"),
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
