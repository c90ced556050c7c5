//! The entry points end to end: a full file to its set, the vendored example, every problem of
//! a file in one pass, the project settings file, and mangled input.

use super::parse_config;
use crate::acceptance::test_support::{at, parse_err, parse_ok, run, FILE};
use crate::acceptance::{
    tag_for, AcceptanceState, Check, Criterion, Lane, RunnerConfig, RunnerKind,
};
use crate::judge::{
    JudgeSpec, Transport, DEFAULT_CONCURRENCY, DEFAULT_EXCLUDE, DEFAULT_MAX_DIFF_BYTES,
};

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
  timeout: 90
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
        confidence: None,
        source: None,
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
                env_pass: Vec::new(),
            },
            RunnerConfig {
                kind: RunnerKind::JunitCommand,
                root: "web".into(),
                args: vec![],
                setup: None,
                command: Some("make junit".into()),
                line: 27,
                env_pass: Vec::new(),
            },
        ]
    );
    assert_eq!(
        set.judge,
        vec![JudgeSpec {
            name: "judge".into(),
            transport: Transport::Chat {
                url: "https://api.example.com/v1/chat/completions".into(),
                model: "gpt-x".into(),
                api_key_env: Some("OPENAI_API_KEY".into()),
            },
            timeout: std::time::Duration::from_secs(90),
            concurrency: DEFAULT_CONCURRENCY,
            max_diff_bytes: DEFAULT_MAX_DIFF_BYTES,
            exclude: DEFAULT_EXCLUDE.iter().map(|g| g.to_string()).collect(),
            file: FILE.into(),
            line: 30,
        }]
    );
    assert_eq!(
        set.harness.allow_changes,
        vec!["conftest.py".to_string(), "tests/helpers/**".to_string()]
    );
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
        set.judge.iter().map(|j| &j.transport).collect::<Vec<_>>(),
        [&Transport::Command {
            argv: vec!["python3".to_string(), "tools/judge.py".to_string()]
        }]
    );
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
fn the_runner_kinds_a_set_may_name_are_the_callers() {
    use super::parse_with_runners;
    let yaml = "version: 1\ncriteria:\n  - id: a\n    ac: A.\nrunners:\n  - kind: toy\n";
    let read = |runners: &[RunnerKind]| {
        parse_with_runners(
            yaml,
            FILE,
            AcceptanceState::Committed,
            String::new(),
            runners,
        )
    };
    // The builtin kinds: `toy` is unknown, and the help lists them in their order.
    let errors = read(&RunnerKind::ALL).unwrap_err();
    assert_eq!(errors[0].message, "unknown runner kind `toy`");
    assert_eq!(
        errors[0].help.as_deref(),
        Some("did you mean `go`? use one of `cargo`, `nextest`, `pytest`, `go`, `vitest`, `jest`, `junit-command`")
    );
    // A caller that knows a runner of that name.
    let toy = RunnerKind::named("toy");
    assert_eq!(read(&[toy]).unwrap().runners[0].kind, toy);
}
