//! What a Rego module may cost admission (book: security.md#input-limits): a module is the
//! policy author's code, run in-process, and without these a hostile or careless one aborts the
//! process or hangs it.
//!
//! - Nesting: before regorus sees the text, [`nesting`] measures how deep its brackets, braces
//!   and parentheses nest and how many open in a row. regorus 0.14's parser recurses once per
//!   level (a deep module overflows its stack) and parses again, from the start, an array, set or
//!   object whose first item is itself one: each bracket opened in a row doubles the parse (14 in
//!   a row took 2 s, 20 took 54 s).
//! - Recursion: Rego forbids it, and regorus 0.14 finds only a rule that depends on itself, when
//!   it evaluates; a function that calls itself, directly or through others, recurses until the
//!   stack overflows and the process aborts. [`recursion`] finds the cycle in the module's
//!   function calls when the policy loads.
//! - Time: regorus's cooperative execution timer stops an evaluation past [`EVAL_TIME_LIMIT`];
//!   [`run_limited`] runs the parse and each evaluation on one long-lived thread with a large
//!   stack (started once, not per evaluation), and stops waiting for it at the limit (plus [`GRACE`] for an evaluation, whose own
//!   timer should have stopped it): a step that has not answered by then (one long builtin call,
//!   which the timer does not see inside) is abandoned, and the command exits soon after.
//! - Memory: `numbers.range` and `numbers.range_step` build their whole array at once (a range of
//!   10^12 numbers asks for terabytes and aborts the process); admission's own versions of them
//!   refuse more than [`MAX_RANGE`] numbers.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc;
use std::time::Duration;

use regorus::unstable::{Expr, Literal, Module, Query, Ref, Rule, RuleHead};

/// The deepest a module's brackets, braces and parentheses may nest.
pub const MAX_NESTING: usize = 32;
/// The most brackets or braces a module may open in a row (only spaces or comments between
/// them): each doubles regorus's parse.
pub const MAX_OPENED_IN_A_ROW: usize = 8;
/// How long the module's parse may take.
pub const PARSE_TIME_LIMIT: Duration = Duration::from_secs(2);
/// How long one evaluation of `deny` may take.
pub const EVAL_TIME_LIMIT: Duration = Duration::from_secs(2);
/// How much longer than [`EVAL_TIME_LIMIT`] admission waits for an evaluation whose timer did
/// not stop it, before abandoning it.
pub const GRACE: Duration = Duration::from_secs(1);
/// The stack of the thread a parse or an evaluation runs on (reserved, not committed: pages are
/// used as the recursion reaches them).
pub const STACK_SIZE: usize = 256 << 20;
/// The most numbers `numbers.range` and `numbers.range_step` may produce in one call.
pub const MAX_RANGE: u64 = 1_000_000;

/// Where a module breaks a nesting limit, and what it breaks.
#[derive(Debug, PartialEq, Eq)]
pub struct TooDeep {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Checks `text`'s nesting against [`MAX_NESTING`] and [`MAX_OPENED_IN_A_ROW`], outside
/// comments and string literals. Linear in the text; an unbalanced module is left to the parser.
pub fn nesting(text: &str) -> Result<(), TooDeep> {
    let mut depth = 0usize;
    let mut in_a_row = 0usize;
    let (mut line, mut column) = (1usize, 0usize);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        column += 1;
        if c == '\n' {
            line += 1;
            column = 0;
            continue;
        }
        match c {
            '(' | '[' | '{' => {
                depth += 1;
                if c == '(' {
                    in_a_row = 0;
                } else {
                    in_a_row += 1;
                }
                if depth > MAX_NESTING {
                    return Err(TooDeep {
                        line,
                        column,
                        message: format!(
                            "the Rego module nests brackets, braces and parentheses deeper than \
                             {MAX_NESTING} levels"
                        ),
                    });
                }
                if in_a_row > MAX_OPENED_IN_A_ROW {
                    return Err(TooDeep {
                        line,
                        column,
                        message: format!(
                            "the Rego module opens more than {MAX_OPENED_IN_A_ROW} brackets or \
                             braces in a row (each one doubles the time the module takes to \
                             parse)"
                        ),
                    });
                }
            }
            ')' | ']' | '}' => {
                depth = depth.saturating_sub(1);
                in_a_row = 0;
            }
            '#' => {
                // A comment runs to the end of the line, which the loop then counts.
                while chars.next_if(|c| *c != '\n').is_some() {}
            }
            '`' | '"' => {
                in_a_row = 0;
                let quote = c;
                while let Some(s) = chars.next() {
                    column += 1;
                    match s {
                        '\n' => {
                            line += 1;
                            column = 0;
                            if quote == '"' {
                                break;
                            }
                        }
                        '\\' if quote == '"' && chars.next().is_some() => column += 1,
                        s if s == quote => break,
                        _ => {}
                    }
                }
            }
            c if c.is_whitespace() => {}
            _ => in_a_row = 0,
        }
    }
    Ok(())
}

/// A cycle in the module's function calls: the functions in call order, the first repeated at
/// the end, and where the first is declared.
#[derive(Debug, PartialEq, Eq)]
pub struct Recursion {
    pub cycle: Vec<String>,
    pub line: usize,
    pub column: usize,
}

/// The first cycle among the functions of `modules` (in name order), through their calls and
/// the functions their `with … as` modifiers substitute. A call to a name the module does not
/// declare as a function (a builtin) is no edge. Rules are left out: regorus stops a rule that
/// depends on itself when it evaluates, and a local variable may share a rule's name.
pub fn recursion(modules: &[Ref<Module>]) -> Option<Recursion> {
    let mut functions: BTreeMap<String, (usize, usize, BTreeSet<String>)> = BTreeMap::new();
    for module in modules {
        let package = path(&module.package.refr).map(|p| format!("data.{p}."));
        for rule in &module.policy {
            let Rule::Spec { head, bodies, .. } = rule.as_ref() else {
                continue;
            };
            let RuleHead::Func {
                refr, args, assign, ..
            } = head
            else {
                continue;
            };
            let Some(name) = path(refr) else { continue };
            let mut calls = Vec::new();
            for arg in args {
                expr_calls(arg, &mut calls);
            }
            if let Some(assign) = assign {
                expr_calls(&assign.value, &mut calls);
            }
            for body in bodies {
                if let Some(assign) = &body.assign {
                    expr_calls(&assign.value, &mut calls);
                }
                query_calls(&body.query, &mut calls);
            }
            let span = refr.span();
            let entry = functions
                .entry(name)
                .or_insert_with(|| (span.line as usize, span.col as usize, BTreeSet::new()));
            for call in calls {
                let call = match &package {
                    Some(p) => call
                        .strip_prefix(p.as_str())
                        .map_or(call.clone(), str::to_string),
                    None => call,
                };
                entry.2.insert(call);
            }
        }
    }
    // Depth-first, keeping the path: a call back into it closes a cycle.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        name: &str,
        functions: &BTreeMap<String, (usize, usize, BTreeSet<String>)>,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(name.to_string(), Mark::Open);
        stack.push(name.to_string());
        for callee in &functions[name].2 {
            if !functions.contains_key(callee) {
                continue;
            }
            match marks.get(callee) {
                Some(Mark::Open) => {
                    let from = stack.iter().position(|n| n == callee).unwrap_or(0);
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(callee.clone());
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    if let Some(cycle) = visit(callee, functions, marks, stack) {
                        return Some(cycle);
                    }
                }
            }
        }
        stack.pop();
        marks.insert(name.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for name in functions.keys() {
        if marks.contains_key(name) {
            continue;
        }
        if let Some(cycle) = visit(name, &functions, &mut marks, &mut Vec::new()) {
            let (line, column, _) = functions[&cycle[0]];
            return Some(Recursion {
                cycle,
                line,
                column,
            });
        }
    }
    None
}

/// A reference as a dotted path (`data.shipmoor.admit.f`, `f`, `x["y"]` as `x.y`); `None` for
/// anything else.
fn path(e: &Ref<Expr>) -> Option<String> {
    match e.as_ref() {
        Expr::Var { value, .. } => value.as_string().ok().map(|s| s.to_string()),
        Expr::RefDot { refr, field, .. } => {
            Some(format!("{}.{}", path(refr)?, field.1.as_string().ok()?))
        }
        Expr::RefBrack { refr, index, .. } => match index.as_ref() {
            Expr::String { value, .. } | Expr::RawString { value, .. } => {
                Some(format!("{}.{}", path(refr)?, value.as_string().ok()?))
            }
            _ => None,
        },
        _ => None,
    }
}

fn query_calls(q: &Ref<Query>, calls: &mut Vec<String>) {
    for stmt in &q.stmts {
        for with in &stmt.with_mods {
            expr_calls(&with.refr, calls);
            if let Some(p) = path(&with.r#as) {
                calls.push(p);
            }
            expr_calls(&with.r#as, calls);
        }
        match &stmt.literal {
            Literal::SomeVars { .. } => {}
            Literal::SomeIn {
                key,
                value,
                collection,
                ..
            } => in_calls(key.as_ref(), value, collection, calls),
            Literal::Expr { expr, .. } | Literal::NotExpr { expr, .. } => expr_calls(expr, calls),
            Literal::Every { domain, query, .. } => {
                expr_calls(domain, calls);
                query_calls(query, calls);
            }
        }
    }
}

/// The functions `e` calls, anywhere inside it.
fn expr_calls(e: &Ref<Expr>, calls: &mut Vec<String>) {
    match e.as_ref() {
        Expr::String { .. }
        | Expr::RawString { .. }
        | Expr::Number { .. }
        | Expr::Bool { .. }
        | Expr::Null { .. }
        | Expr::Var { .. } => {}
        Expr::Array { items, .. } | Expr::Set { items, .. } => {
            for item in items {
                expr_calls(item, calls);
            }
        }
        Expr::Object { fields, .. } => {
            for (_, key, value) in fields {
                expr_calls(key, calls);
                expr_calls(value, calls);
            }
        }
        Expr::ArrayCompr { term, query, .. } | Expr::SetCompr { term, query, .. } => {
            expr_calls(term, calls);
            query_calls(query, calls);
        }
        Expr::ObjectCompr {
            key, value, query, ..
        } => {
            expr_calls(key, calls);
            expr_calls(value, calls);
            query_calls(query, calls);
        }
        Expr::Call { fcn, params, .. } => {
            if let Some(p) = path(fcn) {
                calls.push(p);
            }
            for param in params {
                expr_calls(param, calls);
            }
        }
        Expr::UnaryExpr { expr, .. } => expr_calls(expr, calls),
        Expr::RefDot { refr, .. } => expr_calls(refr, calls),
        Expr::RefBrack { refr, index, .. } => {
            expr_calls(refr, calls);
            expr_calls(index, calls);
        }
        Expr::BinExpr { lhs, rhs, .. }
        | Expr::BoolExpr { lhs, rhs, .. }
        | Expr::ArithExpr { lhs, rhs, .. }
        | Expr::AssignExpr { lhs, rhs, .. } => {
            expr_calls(lhs, calls);
            expr_calls(rhs, calls);
        }
        Expr::Membership {
            key,
            value,
            collection,
            ..
        } => in_calls(key.as_ref(), value, collection, calls),
    }
}

/// The functions a `key, value in collection` (a `some … in` or a membership test) calls.
fn in_calls(
    key: Option<&Ref<Expr>>,
    value: &Ref<Expr>,
    collection: &Ref<Expr>,
    calls: &mut Vec<String>,
) {
    if let Some(key) = key {
        expr_calls(key, calls);
    }
    expr_calls(value, calls);
    expr_calls(collection, calls);
}

/// Why [`run_limited`] has no answer.
#[derive(Debug)]
pub enum Stopped {
    /// regorus's execution timer stopped the evaluation at this limit.
    Timer(Duration),
    /// The step ran past this limit and was abandoned.
    Deadline(Duration),
    /// The step panicked inside regorus (its message is on stderr).
    Panicked,
    /// No thread could be started for it.
    NoThread(String),
}

/// A job for the evaluation thread: it sends its own answer.
type Job = Box<dyn FnOnce() + Send>;

/// The long-lived thread parses and evaluations run on, one at a time: a [`STACK_SIZE`] stack is
/// reserved once per process instead of once per evaluation (an admission controller decides
/// for every pod that starts). `None` until first used, and again after a step was abandoned on
/// it (the next step starts a new one).
static WORKER: std::sync::Mutex<Option<mpsc::Sender<Job>>> = std::sync::Mutex::new(None);

fn start_worker() -> std::io::Result<mpsc::Sender<Job>> {
    let (jobs, queue) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("shipmoor-rego".to_string())
        .stack_size(STACK_SIZE)
        .spawn(move || {
            for job in queue {
                // A panic inside regorus drops the job's answer channel (the caller reads it as
                // [`Stopped::Panicked`]) and leaves the thread serving the next job.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            }
        })?;
    Ok(jobs)
}

/// Runs `step` on the evaluation thread (its [`STACK_SIZE`] stack), and waits at most `limit`
/// for it. Past that the step is abandoned with its thread: it runs on until it ends or the
/// process exits, which a command that was stopped at a limit does soon after (with a deny or an
/// input error), and a later step gets a new thread. Callers take turns: the limit counts from
/// the step's start, never from a queue.
pub fn run_limited<T: Send + 'static>(
    limit: Duration,
    step: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Stopped> {
    let mut worker = WORKER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let jobs = match worker.take() {
        Some(jobs) => jobs,
        None => start_worker().map_err(|e| Stopped::NoThread(e.to_string()))?,
    };
    let (tx, rx) = mpsc::sync_channel(1);
    // The thread ends only once its queue is closed (a step abandoned on it): a thread that has
    // ended refuses the job and stays forgotten, so that the next step starts another.
    jobs.send(Box::new(move || {
        let _ = tx.send(step());
    }))
    .map_err(|_| Stopped::NoThread("the evaluation thread has ended".to_string()))?;
    *worker = Some(jobs);
    match rx.recv_timeout(limit) {
        Ok(answer) => Ok(answer),
        Err(mpsc::RecvTimeoutError::Timeout) => {
            // Abandoned with its thread: the queue closes, and the thread ends with the step.
            *worker = None;
            Err(Stopped::Deadline(limit))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(Stopped::Panicked),
    }
}

/// Whether regorus's error is its execution timer's.
pub fn is_time_limit(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<regorus::LimitError>(),
        Some(regorus::LimitError::TimeLimitExceeded { .. })
    ) || e.to_string().contains("execution exceeded time limit")
}

/// `numbers.range(a, b)` and `numbers.range_step(a, b, step)` as Rego defines them, but for more
/// than [`MAX_RANGE`] numbers, which is an error. Installed as extensions, which regorus consults
/// before its builtins.
pub fn install_ranges(engine: &mut regorus::Engine) -> anyhow::Result<()> {
    engine.add_extension(
        "numbers.range".to_string(),
        2,
        Box::new(|args: Vec<regorus::Value>| range("numbers.range", &args[0], &args[1], None)),
    )?;
    engine.add_extension(
        "numbers.range_step".to_string(),
        3,
        Box::new(|args: Vec<regorus::Value>| {
            range("numbers.range_step", &args[0], &args[1], Some(&args[2]))
        }),
    )?;
    Ok(())
}

fn range(
    name: &str,
    from: &regorus::Value,
    to: &regorus::Value,
    step: Option<&regorus::Value>,
) -> anyhow::Result<regorus::Value> {
    let int = |v: &regorus::Value, what: &str| {
        v.as_i64()
            .map_err(|_| anyhow::anyhow!("{name}: {what} must be an integer"))
    };
    let (from, to) = (
        int(from, "the first operand")?,
        int(to, "the second operand")?,
    );
    let step = match step {
        Some(s) => {
            let s = int(s, "the step")?;
            if s <= 0 {
                anyhow::bail!("{name}: the step must be a positive integer");
            }
            s as u64
        }
        None => 1,
    };
    let count = from.abs_diff(to) / step + 1;
    if count > MAX_RANGE {
        anyhow::bail!(
            "{name} of {count} numbers exceeds admission's limit of {MAX_RANGE} numbers in one \
             range"
        );
    }
    let step = step as i64;
    let values: Vec<regorus::Value> = if from <= to {
        (0..count as i64)
            .map(|i| regorus::Value::from(from + i * step))
            .collect()
    } else {
        (0..count as i64)
            .map(|i| regorus::Value::from(from - i * step))
            .collect()
    };
    Ok(regorus::Value::from(values))
}
