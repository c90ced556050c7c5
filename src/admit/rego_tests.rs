use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::RegoPolicy;
use crate::error::InputError;

fn compile(text: &str) -> Result<RegoPolicy, InputError> {
    RegoPolicy::compile("policies/extra.rego", "extra.rego", text)
}

fn compiled(text: &str) -> RegoPolicy {
    compile(text).unwrap_or_else(|e| panic!("the module should compile:\n{e}"))
}

/// A statement as `claim-check` writes it, from the command's own snapshot, so that the example
/// rules are tested against the real shape.
fn statement(snapshot: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/commands/claim_check/snapshots")
        .join(snapshot);
    let text = std::fs::read_to_string(path).unwrap();
    // An insta snapshot: a `---` header block, then the statement.
    let body = text.splitn(3, "---\n").nth(2).unwrap();
    serde_json::from_str(body).unwrap()
}

/// The Rego input for `statement`, as admission builds it.
fn input(statement: Value) -> Value {
    json!({
        "statement": statement,
        "signer": {"kind": "key", "keyid": "0nqd0p2nqKJHzwJ5mUhvjoBcX8u0g9qEcxkA6HcjvV8="},
        "subject": {"digest": format!("sha256:{}", "ab".repeat(32)), "name": "shop.whl"},
        "age_seconds": 120,
        "verified": true,
    })
}

fn claim_mut(input: &mut Value) -> &mut Value {
    &mut input["statement"]["predicate"]["https://shipmoor.dev/claim-check/v1"]
}

const AGE_RULE: &str = r#"package shipmoor.admit

deny contains msg if {
  input.age_seconds > 3600
  msg := sprintf("verified %d seconds ago, more than an hour", [input.age_seconds])
}
"#;

#[test]
fn a_rule_that_does_not_fire_admits() {
    let rego = compiled(AGE_RULE);
    assert_eq!(rego.deny(&json!({"age_seconds": 60})), Ok(vec![]));
    assert_eq!(rego.deny(&json!({})), Ok(vec![]));
}

#[test]
fn deny_messages_are_sorted_without_duplicates_and_non_strings_are_json() {
    let rego = compiled(
        r#"package shipmoor.admit

deny contains "zebra" if input.x
deny contains "apple" if input.x
deny contains msg if {
  input.x
  msg := "apple"
}
deny contains {"msg": "as Gatekeeper writes it", "code": 7} if input.x
"#,
    );
    assert_eq!(
        rego.deny(&json!({"x": true})),
        Ok(vec![
            "apple".to_string(),
            "zebra".to_string(),
            r#"{"code":7,"msg":"as Gatekeeper writes it"}"#.to_string(),
        ])
    );
    assert_eq!(rego.deny(&json!({"x": false})), Ok(vec![]));
}

#[test]
fn each_evaluation_is_independent_of_the_last() {
    let rego = compiled(AGE_RULE);
    let old = json!({"age_seconds": 7200});
    let new = json!({"age_seconds": 10});
    let denied = Ok(vec![
        "verified 7200 seconds ago, more than an hour".to_string()
    ]);
    assert_eq!(rego.deny(&old), denied);
    assert_eq!(rego.deny(&new), Ok(vec![]));
    assert_eq!(rego.deny(&old), denied);
}

#[test]
fn import_rego_v1_is_accepted() {
    let rego =
        compiled("package shipmoor.admit\nimport rego.v1\n\ndeny contains \"no\" if input.no\n");
    assert_eq!(rego.deny(&json!({"no": true})), Ok(vec!["no".to_string()]));
}

#[test]
fn rego_v0_syntax_is_accepted() {
    // The syntax of OPA before 1.0: no `if`, a partial set rule written `deny[msg]`.
    let rego = compiled(
        r#"package shipmoor.admit

deny[msg] {
  input.age_seconds > 3600
  msg := "too old"
}
"#,
    );
    assert_eq!(
        rego.deny(&json!({"age_seconds": 4000})),
        Ok(vec!["too old".to_string()])
    );
    assert_eq!(rego.deny(&json!({"age_seconds": 1})), Ok(vec![]));
    // And v0 with the keywords imported from `future.keywords`.
    let rego = compiled(
        "package shipmoor.admit\nimport future.keywords.if\nimport future.keywords.contains\n\ndeny contains \"no\" if input.no\n",
    );
    assert_eq!(rego.deny(&json!({"no": true})), Ok(vec!["no".to_string()]));
}

#[test]
fn keywords_in_strings_and_comments_do_not_make_a_v0_module_v1() {
    let rego = compiled(
        r#"package shipmoor.admit

# deny if the judge blocked: contains, every, in
deny[msg] {
  input.judge == "block"
  msg := "denied if the judge \"blocked\" it, in every case"
}
"#,
    );
    assert_eq!(
        rego.deny(&json!({"judge": "block"})),
        Ok(vec![
            r#"denied if the judge "blocked" it, in every case"#.to_string()
        ])
    );
}

#[test]
fn code_words_skip_comments_and_strings() {
    assert_eq!(
        super::code_words("import rego.v1 # if\nx := \"if \\\" contains\" + `in` + every\n"),
        ["import", "rego.v1", "x", "every"]
    );
}

#[test]
fn a_syntax_error_names_the_file_line_and_column() {
    let err = compile(
        r#"package shipmoor.admit

deny contains msg if {
  input.age_seconds > 3600
  msg :=
}
"#,
    )
    .unwrap_err();
    assert_eq!(err.file.as_deref(), Some("policies/extra.rego"));
    assert_eq!((err.line, err.column), (Some(6), Some(1)));
    assert_eq!(err.message, "expecting expression");
    assert!(err.help.unwrap().contains("fix the Rego syntax"));
}

#[test]
fn a_v0_module_with_a_syntax_error_reports_the_v0_parse_that_got_further() {
    let err = compile(
        r#"package shipmoor.admit

deny[msg] {
  input.age_seconds > 3600
  msg := "too old"
}

deny[msg] {
  msg := (
}
"#,
    )
    .unwrap_err();
    // The v1 parse stops at line 3 (`deny[msg] {` lacks `if`); the v0 parse reads the first
    // rule and stops at the second (regorus points at its body's `{`).
    assert_eq!((err.line, err.column), (Some(8), Some(11)), "{err}");
}

#[test]
fn another_package_is_an_error_at_the_package_line() {
    let err =
        compile("# extra rules\n\npackage kubernetes.admission\n\ndeny contains \"x\" if true\n")
            .unwrap_err();
    assert_eq!((err.line, err.column), (Some(3), Some(1)));
    assert_eq!(
        err.message,
        "the Rego module's package is `kubernetes.admission`: admission reads `data.shipmoor.admit.deny`"
    );
    assert_eq!(
        err.help.as_deref(),
        Some("declare `package shipmoor.admit`")
    );
}

#[test]
fn a_module_without_a_package_is_a_syntax_error() {
    let err = compile("deny contains \"x\" if true\n").unwrap_err();
    assert_eq!(err.line, Some(1), "{err}");
}

#[test]
fn a_module_without_a_deny_rule_is_an_error_with_a_fix() {
    let err = compile("package shipmoor.admit\n\nallow if input.verified\n").unwrap_err();
    assert_eq!(
        err.message,
        "the Rego module declares no `deny` rule: admission reads `data.shipmoor.admit.deny`, a set of messages"
    );
    assert_eq!(err.file.as_deref(), Some("policies/extra.rego"));
    assert!(err.help.unwrap().contains("deny contains msg if"));
}

#[test]
fn an_unknown_function_is_an_error_when_the_policy_loads() {
    let err = compile(
        "package shipmoor.admit\n\ndeny contains msg if {\n  msg := no_such_function(input.x)\n}\n",
    )
    .unwrap_err();
    assert_eq!((err.line, err.column), (Some(4), Some(26)), "{err}");
    assert_eq!(
        err.message,
        "the Rego module fails to evaluate: could not find function no_such_function"
    );
}

#[test]
fn a_builtin_error_is_an_evaluation_error_not_an_admission() {
    // `sprintf` wants an array of arguments: strict builtin errors make this an error rather
    // than an undefined message, which would silently drop the deny reason.
    let rego = compiled(
        "package shipmoor.admit\n\ndeny contains msg if {\n  msg := sprintf(\"%d\", input.n)\n}\n",
    );
    let err = rego.deny(&json!({"n": 3})).unwrap_err().to_string();
    assert!(
        err.starts_with("policies/extra.rego:4:"),
        "the error names where: {err}"
    );
    assert!(err.contains("sprintf"), "{err}");
    assert!(!err.contains('\n'), "one line: {err}");
}

#[test]
fn a_deny_that_is_not_a_set_is_an_evaluation_error() {
    let rego = compiled("package shipmoor.admit\n\ndeny := 3 if input.x\n");
    assert_eq!(rego.deny(&json!({})), Ok(vec![]));
    assert_eq!(
        rego.deny(&json!({"x": true})).map_err(|e| e.to_string()),
        Err(
            "`data.shipmoor.admit.deny` must be a set of messages (`deny contains msg if { … }`), found 3"
                .to_string()
        )
    );
}

#[test]
fn a_deny_that_is_never_a_set_is_an_error_when_the_policy_loads() {
    let err = compile("package shipmoor.admit\n\ndeny := \"no\"\n").unwrap_err();
    assert_eq!(
        err.message,
        "`data.shipmoor.admit.deny` must be a set of messages, found \"no\""
    );
    assert!(err.help.unwrap().contains("partial set rule"));
}

#[test]
fn load_reads_the_module_relative_to_the_policy_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("policies")).unwrap();
    std::fs::write(dir.path().join("policies/age.rego"), AGE_RULE).unwrap();
    let rego = RegoPolicy::load(dir.path(), "policies/age.rego").unwrap();
    assert_eq!(rego.file, "policies/age.rego");
    assert_eq!(rego.deny(&json!({"age_seconds": 4000})).unwrap().len(), 1);

    let err = RegoPolicy::load(dir.path(), "policies/missing.rego").unwrap_err();
    let shown = dir
        .path()
        .join("policies/missing.rego")
        .display()
        .to_string();
    assert_eq!(err.file.as_deref(), Some(shown.as_str()));
    assert!(
        err.message.starts_with("cannot read the Rego module: "),
        "{err}"
    );
    assert_eq!(err.line, None);
}

// --- the example in examples/admit ---

fn example() -> RegoPolicy {
    RegoPolicy::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/admit"),
        "extra.rego",
    )
    .unwrap_or_else(|e| panic!("examples/admit/extra.rego should compile:\n{e}"))
}

#[test]
fn the_example_admits_a_statement_with_no_judge_block_harness_edit_or_pattern() {
    // BLOCKED, but these rules only look at the judge, the harness and the bindings: the
    // verdict is the YAML policy's to deny.
    assert_eq!(
        example().deny(&input(statement("blocked_statement.snap"))),
        Ok(vec![])
    );
}

#[test]
fn the_example_denies_a_judge_block() {
    assert_eq!(
        example().deny(&input(statement("full_statement.snap"))),
        Ok(vec![
            "criterion `refund-idempotency`: the judge blocked it".to_string()
        ])
    );
}

#[test]
fn the_example_denies_a_harness_edit() {
    let mut input = input(statement("blocked_statement.snap"));
    claim_mut(&mut input)["harness_changes"] = json!(["conftest.py", "pytest.ini"]);
    assert_eq!(
        example().deny(&input),
        Ok(vec![
            "the change edits its harness: conftest.py, pytest.ini".to_string()
        ])
    );
}

#[test]
fn the_example_denies_a_required_criterion_bound_by_pattern_only() {
    let mut input = input(statement("blocked_statement.snap"));
    let dispositions = claim_mut(&mut input)["dispositions"]
        .as_array_mut()
        .unwrap();
    for d in dispositions.iter_mut() {
        if d["id"] == "order-marked-refunded" || d["id"] == "receipt-email" {
            d["floor"]["binding"] = json!("check.pattern");
        }
    }
    // `receipt-email` is optional: only the required criterion is a reason.
    assert_eq!(
        example().deny(&input),
        Ok(vec![
            "required criterion `order-marked-refunded` rests on a `check.pattern`, not a test"
                .to_string()
        ])
    );
}

/// Admission evaluates once per VSA, and one loaded module serves every evaluation: a statement
/// of the real size gives the same answer on every call (the engine's clone per call shares
/// nothing that one evaluation changes). Its speed (about 45 µs in a release build) is measured
/// by `bench/admit.sh`, not here.
#[test]
fn evaluation_of_a_real_statement_is_repeatable() {
    let rego = example();
    let input = input(statement("full_statement.snap"));
    let first = rego.deny(&input).unwrap();
    assert_eq!(first.len(), 1);
    for _ in 0..50 {
        assert_eq!(rego.deny(&input).unwrap(), first);
    }
}

// Admission's limits on a module's cost (rego_limits.rs): each hostile module is stopped with a
// clear error, within its limit, never an abort or a hang.

/// Runs `f` on a thread of its own and fails the test if it has not answered within `limit`
/// (the thread is left behind), so that a module admission does not stop fails the test rather
/// than hanging the run (a guard against a hang, not a measure of speed).
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(answer) => answer,
        Err(_) => panic!("not stopped within {limit:?}"),
    }
}

/// A module whose `deny` runs `body` when the input says `hostile` (so that the check over an
/// empty input when the policy loads does not reach it).
fn gated(body: &str, rest: &str) -> String {
    format!("package shipmoor.admit\n\ndeny contains msg if {{\n  input.hostile\n{body}}}\n{rest}")
}

const RECURSIVE: &str = "countdown(n) := countdown(n - 1)\n";

#[test]
fn a_function_that_calls_itself_is_refused_when_the_policy_loads() {
    // Without the check, regorus recursed until the stack overflowed: SIGABRT.
    let text = gated("  msg := sprintf(\"%v\", [countdown(3)])\n", RECURSIVE);
    let err = within(Duration::from_secs(10), move || {
        compile(&text).map(|_| ()).unwrap_err().to_string()
    });
    assert!(
        err.contains("policies/extra.rego:7:1:")
            && err.contains("the Rego function `countdown` calls itself: Rego forbids recursion"),
        "{err}"
    );
    assert!(err.contains("iterate instead"), "the fix: {err}");

    // Through another function, through `data.shipmoor.admit.`, and through a `with`.
    let mutual = gated(
        "  msg := sprintf(\"%v\", [ping(3)])\n",
        "ping(n) := pong(n)\npong(n) := data.shipmoor.admit.ping(n)\n",
    );
    let err = compile(&mutual).map(|_| ()).unwrap_err().to_string();
    assert!(
        err.contains("policies/extra.rego:7:1:")
            && err.contains("`ping` calls itself through ping → pong → ping"),
        "{err}"
    );
    let with = gated(
        "  msg := sprintf(\"%v\", [outer(3)])\n",
        "inner(n) := n\nouter(n) := y if {\n  y := inner(n) with inner as outer\n}\n",
    );
    let err = compile(&with).map(|_| ()).unwrap_err().to_string();
    assert!(err.contains("`outer` calls itself"), "{err}");

    // A function calling others, and a builtin, is no recursion.
    compiled(&gated(
        "  msg := sprintf(\"%v\", [twice(3)])\n",
        "once(n) := abs(n)\ntwice(n) := once(once(n))\n",
    ));
}

#[test]
fn a_rule_that_depends_on_itself_denies_at_evaluation() {
    // regorus stops a rule (not a function) that depends on itself; this keeps it so.
    let rego = compiled(&gated("  msg := a\n", "a := b\nb := a\n"));
    let answer = within(Duration::from_secs(10), move || {
        rego.deny(&json!({"hostile": true}))
    });
    let err = answer.unwrap_err().to_string();
    assert!(err.contains("recursion detected"), "{err}");
}

#[test]
fn deep_nesting_is_refused_before_the_parse() {
    // 20 brackets in a row took regorus's parser 54 s (each doubles it): now refused at once,
    // at the bracket past the limit.
    let deep = gated(
        &format!(
            "  y := {}1{}\n  msg := sprintf(\"%v\", [y])\n",
            "[".repeat(20),
            "]".repeat(20)
        ),
        "",
    );
    let err = within(Duration::from_secs(10), move || {
        compile(&deep).map(|_| ()).unwrap_err().to_string()
    });
    assert!(
        err.contains("policies/extra.rego:5:16:")
            && err.contains("opens more than 8 brackets or braces in a row"),
        "{err}"
    );
    assert!(err.contains("name the inner value"), "the fix: {err}");

    // Deeper than 32 levels, even when no two open in a row; brackets in strings and comments
    // do not count.
    let nested = gated(
        &format!(
            "  y := {}1{}\n  msg := sprintf(\"%v\", [y])\n",
            "[0, ".repeat(40),
            "]".repeat(40)
        ),
        "",
    );
    let err = compile(&nested).map(|_| ()).unwrap_err().to_string();
    assert!(
        err.contains("policies/extra.rego:5:")
            && err.contains("nests brackets, braces and parentheses deeper than 32 levels"),
        "{err}"
    );
    compiled(&gated(
        &format!(
            "  # {}\n  y := [[[[[[[1]]]]]]]\n  msg := sprintf(\"%v%s\", [y, \"{}\"])\n",
            "[".repeat(40),
            "{".repeat(40)
        ),
        "",
    ));
}

#[test]
fn a_long_loop_is_stopped_at_the_time_limit_as_a_deny() {
    // 10^10 iterations ran for minutes; now regorus's timer stops them at the limit, and the
    // error says which limit and how to stay within it.
    let rego = compiled(&gated(
        "  some i in numbers.range(1, 100000)\n  some j in numbers.range(1, 100000)\n  i + j < 0\n  msg := \"never\"\n",
        "",
    ));
    let answer = within(Duration::from_secs(30), move || {
        rego.deny(&json!({"hostile": true}))
    });
    let err = answer.unwrap_err().to_string();
    assert!(
        err.starts_with(
            "stopped at its time limit: evaluating `deny` ran past 2 s; bound the module's loops"
        ),
        "{err}"
    );
}

#[test]
fn a_loop_over_no_input_is_refused_when_the_policy_loads() {
    let text = "package shipmoor.admit\n\ndeny contains msg if {\n  some i in numbers.range(1, 100000)\n  some j in numbers.range(1, 100000)\n  i + j < 0\n  msg := \"never\"\n}\n";
    let err = within(Duration::from_secs(30), move || {
        compile(text).map(|_| ()).unwrap_err().to_string()
    });
    assert!(
        err.contains("policies/extra.rego:")
            && err.contains(
                "the Rego module was stopped at its time limit: evaluating `deny` ran past 2 s"
            ),
        "{err}"
    );
}

#[test]
fn a_range_past_the_limit_is_an_error_and_smaller_ones_are_rego_s() {
    // numbers.range(1, 10^12) asked for terabytes at once: the allocation failed and aborted.
    let rego = compiled(&gated(
        "  n := count(numbers.range(1, 1000000000000))\n  msg := sprintf(\"%d\", [n])\n",
        "",
    ));
    let answer = within(Duration::from_secs(30), move || {
        rego.deny(&json!({"hostile": true}))
    });
    let err = answer.unwrap_err().to_string();
    assert!(
        err.contains("numbers.range of 1000000000000 numbers exceeds admission's limit of 1000000"),
        "{err}"
    );
    let rego = compiled(&gated(
        "  msg := sprintf(\"%v %v %v %v\", [numbers.range(1, 4), numbers.range(3, 1), numbers.range_step(1, 8, 3), numbers.range_step(8, 1, 3)])\n",
        "",
    ));
    assert_eq!(
        rego.deny(&json!({"hostile": true})),
        Ok(vec![
            "[1, 2, 3, 4] [3, 2, 1] [1, 4, 7] [8, 5, 2]".to_string()
        ])
    );
}

#[test]
fn a_step_past_its_deadline_is_abandoned() {
    let start = Instant::now();
    let answer = super::limits::run_limited(Duration::from_millis(100), || {
        std::thread::sleep(Duration::from_secs(5));
    });
    assert!(
        matches!(answer, Err(super::limits::Stopped::Deadline(_))),
        "{answer:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(matches!(
        super::limits::run_limited(Duration::from_secs(5), || 7),
        Ok(7)
    ));
}

/// Parses and evaluations share one long-lived thread (its large stack reserved once, not per
/// admission), which a panic inside a step does not cost.
#[test]
fn steps_share_one_thread_and_a_panic_does_not_cost_it() {
    let thread = || {
        super::limits::run_limited(Duration::from_secs(5), || std::thread::current().id()).unwrap()
    };
    let first = thread();
    assert_ne!(first, std::thread::current().id());
    assert_eq!(thread(), first);
    let answer = super::limits::run_limited(Duration::from_secs(5), || -> u8 {
        panic!("a bug inside a builtin")
    });
    assert!(
        matches!(answer, Err(super::limits::Stopped::Panicked)),
        "{answer:?}"
    );
    assert_eq!(thread(), first);
}
