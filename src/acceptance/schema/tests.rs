//! The validator: types, defaults, unknown keys, ids, lanes, checks, runners, judge, harness.

use super::criteria::{suggest_id, CRITERION_KEYS};
use crate::acceptance::test_support::{at, help, minimal, one_err, parse_err, parse_ok};
use crate::acceptance::{tag_for, HarnessConfig, InheritedPolicy, Lane, RunnerConfig, RunnerKind};
use crate::text::{closest, edit_distance};

#[test]
fn defaults_are_applied() {
    let set = parse_ok(&minimal(""));
    let c = &set.criteria[0];
    assert!(c.required);
    assert_eq!(c.lane, Lane::Floor);
    assert_eq!(c.check, None);
    assert_eq!(c.tag, tag_for("a"));
    assert_eq!(c.line, 3);
    assert!(set.runners.is_empty());
    assert_eq!(set.judge, []);
    assert_eq!(set.harness, HarnessConfig::default());

    let set = parse_ok(&minimal("runners:\n  - kind: cargo\n"));
    assert_eq!(
        set.runners,
        vec![RunnerConfig {
            kind: RunnerKind::Cargo,
            root: ".".into(),
            args: vec![],
            setup: None,
            command: None,
            line: 6,
            env_pass: Vec::new(),
        }]
    );
}

#[test]
fn null_optional_sections_count_as_absent() {
    let set = parse_ok(&minimal(
        "runners:\n#  - kind: cargo\njudge:\nharness:\n  allow_changes:\n",
    ));
    assert!(set.runners.is_empty());
    assert_eq!(set.judge, []);
    assert!(set.harness.allow_changes.is_empty());
}

#[test]
fn core_schema_booleans_are_accepted() {
    for (word, value) in [
        ("True", true),
        ("TRUE", true),
        ("False", false),
        ("FALSE", false),
    ] {
        let set = parse_ok(&format!(
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    required: {word}\n"
        ));
        assert_eq!(set.criteria[0].required, value, "{word}");
    }
}

#[test]
fn plain_scalars_are_strings_where_strings_are_wanted() {
    let set = parse_ok(
            "version: 1\ncriteria:\n  - id: 2024\n    ac: 42\nrunners:\n  - kind: cargo\n    args: [-j, 4, true]\n",
        );
    assert_eq!(set.criteria[0].id, "2024");
    assert_eq!(set.criteria[0].ac, "42");
    assert_eq!(set.runners[0].args, ["-j", "4", "true"]);
}

#[test]
fn a_quoted_boolean_is_an_error() {
    let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    required: \"true\"\n");
    assert_eq!(at(&e), (5, 15));
    assert!(e.message.contains("`required` must be a boolean"), "{e}");
    assert!(e.message.contains("\"true\""), "{e}");
    assert_eq!(help(&e), "remove the quotes: `required: true`");

    let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    required: yes\n");
    assert!(e.message.contains("the string `yes`"), "{e}");
    assert!(help(&e).contains("`required: true` or `required: false`"));
}

#[test]
fn unknown_keys_suggest_the_closest_and_list_the_allowed() {
    let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    requird: false\n");
    assert_eq!(at(&e), (5, 5));
    assert_eq!(e.message, "unknown key `requird` in a criterion");
    assert_eq!(
        help(&e),
        "did you mean `required`? allowed keys here: `id`, `ac`, `required`, `lane`, `check`, `confidence`, `source`"
    );

    let e = one_err(&minimal("colour: blue\n"));
    assert_eq!(at(&e), (5, 1));
    assert_eq!(e.message, "unknown key `colour` in the top level");
    assert_eq!(
            help(&e),
            "remove it; allowed keys here: `version`, `criteria`, `runners`, `judge`, `harness`, `guard`, `inherited`, `floor`"
        );

    // `timeout_seconds` was the key's name before the judge's settings named it `timeout`: the old
    // spelling is unknown now, with a did-you-mean the edit distance alone would not find.
    let e = one_err(&minimal("judge:\n  command: [j]\n  timeout_seconds: 5\n"));
    assert_eq!(at(&e), (7, 3));
    assert!(e.message.contains("`timeout_seconds` in `judge`"), "{e}");
    assert!(help(&e).starts_with("did you mean `timeout`?"), "{e}");
}

#[test]
fn inherited_is_list_or_guard() {
    assert_eq!(parse_ok(&minimal("")).inherited, InheritedPolicy::List);
    let set = parse_ok(&minimal("inherited: guard\n"));
    assert_eq!(set.inherited, InheritedPolicy::Guard);
    assert_eq!(set.settings_keys, ["inherited"]);
    let e = one_err(&minimal("inherited: keep\n"));
    assert_eq!(at(&e), (5, 12));
    assert!(e.message.contains("`list` or `guard`"), "{e}");
}

#[test]
fn duplicate_ids_name_the_first_line() {
    let e = one_err(
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\n  - id: b\n    ac: B.\n  - id: a\n    ac: C.\n",
        );
    assert_eq!(at(&e), (7, 9));
    assert_eq!(
        e.message,
        "duplicate criterion id `a` (first used on line 3)"
    );
    assert_eq!(help(&e), "give each criterion its own id");
}

#[test]
fn a_bad_id_suggests_a_valid_one() {
    let e = one_err("version: 1\ncriteria:\n  - id: Refund_X\n    ac: A.\n");
    assert_eq!(at(&e), (3, 9));
    assert!(
        e.message.contains("criterion id `Refund_X` is not valid"),
        "{e}"
    );
    assert_eq!(help(&e), "rename it, e.g. `id: refund-x`");

    for bad in ["-a", "a b", "\"\u{e9}t\u{e9}\"", "a.b"] {
        let errors = parse_err(&format!(
            "version: 1\ncriteria:\n  - id: {bad}\n    ac: A.\n"
        ));
        assert_eq!(errors.len(), 1, "{bad}: {errors:#?}");
    }
}

#[test]
fn missing_id_and_ac_point_at_the_item() {
    let errors = parse_err("version: 1\ncriteria:\n  - ac: A.\n  - id: b\n");
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(at(&errors[0]), (3, 5));
    assert_eq!(errors[0].message, "criterion is missing `id`");
    assert_eq!(at(&errors[1]), (4, 5));
    assert_eq!(errors[1].message, "criterion `b` is missing `ac`");
}

#[test]
fn a_judgment_criterion_cannot_have_a_check() {
    let e = one_err(
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    lane: judge\n    check:\n      test: t\n",
        );
    assert_eq!(at(&e), (6, 5));
    assert!(e
        .message
        .contains("a judgment criterion is decided by the judge, not a check"));
    assert_eq!(help(&e), "remove `check` or set `lane: floor`");
}

#[test]
fn a_check_is_exactly_one_kind() {
    let e = one_err(
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    check:\n      test: t\n      command: c\n",
        );
    assert_eq!(at(&e), (7, 7));
    assert!(
        e.message.contains("`check` has both `test` and `command`"),
        "{e}"
    );
    assert!(help(&e).contains("exactly one of"), "{e}");
}

#[test]
fn pattern_checks_validate_globs_and_regex() {
    let check = |body: &str| {
        parse_err(&format!(
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    check:\n      pattern: {body}\n"
        ))
    };
    let errors = check("{ paths: [\"src/[\"], regex: \"a(\" }");
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(at(&errors[0]), (6, 26));
    assert!(errors[0]
        .message
        .contains("`src/[` in `paths` is not a valid glob"));
    assert_eq!(at(&errors[1]), (6, 43));
    assert!(errors[1]
        .message
        .contains("not a valid regular expression: unclosed group"));

    let errors = check("{ paths: [], regex: x }");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].message.contains("`paths` is empty"));

    let errors = check("{ regex: x }");
    assert_eq!(errors[0].message, "`pattern` is missing `paths`");
}

#[test]
fn runner_rules() {
    let e = one_err(&minimal("runners:\n  - kind: junit-command\n"));
    assert_eq!(at(&e), (6, 5));
    assert_eq!(e.message, "a `junit-command` runner needs `command`");
    assert!(help(&e).contains("$SHIPMOOR_JUNIT_OUT"));

    let e = one_err(&minimal("runners:\n  - kind: pytest\n    command: make\n"));
    assert_eq!(at(&e), (7, 5));
    assert!(e
        .message
        .contains("`command` is only for `kind: junit-command`"));
    assert!(help(&e).contains("set `kind: junit-command`"));

    let e = one_err(&minimal("runners:\n  - kind: nextst\n"));
    assert_eq!(help(&e).split('?').next(), Some("did you mean `nextest`"));

    let e = one_err(&minimal("runners:\n  - root: web\n"));
    assert_eq!(e.message, "runner is missing `kind`");

    for bad in ["/abs", "../up", "web/../../x", "C:\\x"] {
        let e = one_err(&minimal(&format!(
            "runners:\n  - kind: go\n    root: '{bad}'\n"
        )));
        assert_eq!(at(&e), (7, 11), "{bad}");
        assert!(e.message.contains("relative and without `..`"), "{e}");
    }
    let set = parse_ok(&minimal("runners:\n  - kind: go\n    root: ./svc/api\n"));
    assert_eq!(set.runners[0].root, "./svc/api");
}

#[test]
fn judge_rules() {
    let e = one_err(&minimal(
        "judge:\n  command: [j]\n  url: https://x\n  model: m\n",
    ));
    assert_eq!(at(&e), (7, 3));
    assert_eq!(e.message, "`judge` has both `command` and `url`");

    let e = one_err(&minimal("judge:\n  timeout: 5\n"));
    assert_eq!(at(&e), (6, 3));
    assert!(e.message.contains("needs `command` or `url`"));

    let e = one_err(&minimal("judge:\n  url: https://x\n"));
    assert_eq!(e.message, "a judge `url` needs `model`");

    let e = one_err(&minimal("judge:\n  command: [j]\n  model: m\n"));
    assert_eq!(at(&e), (7, 3));
    assert!(e.message.contains("`model` applies only to a judge `url`"));

    let e = one_err(&minimal("judge:\n  command: [j]\n  timeout: 0\n"));
    assert!(e.message.contains("positive"), "{e}");
    let e = one_err(&minimal("judge:\n  command: [j]\n  timeout: \"9\"\n"));
    assert_eq!(help(&e), "remove the quotes: `timeout: 9`");

    let e = one_err(&minimal("judge:\n  command: python3 tools/judge.py\n"));
    assert!(e.message.contains("`command` must be a sequence"), "{e}");
    assert!(
        help(&e).contains("command: [\"python3\", \"tools/judge.py\"]"),
        "{e}"
    );

    let e = one_err(&minimal("judge:\n  url: ftp://x\n  model: m\n"));
    assert!(e.message.contains("not an http(s) URL"), "{e}");

    let e = one_err(&minimal(
        "judge:\n  url: https://x\n  model: m\n  api_key_env: sk-123\n",
    ));
    assert!(
        e.message.contains("not an environment variable name"),
        "{e}"
    );
}

#[test]
fn harness_globs_are_checked() {
    let e = one_err(&minimal("harness:\n  allow_changes: [\"a{b\"]\n"));
    assert_eq!(at(&e), (6, 19));
    assert!(e.message.contains("not a valid glob"), "{e}");
}

#[test]
fn version_is_required_and_must_be_one() {
    let e = one_err("criteria:\n  - id: a\n    ac: A.\n");
    assert_eq!((at(&e), e.message.as_str()), ((1, 1), "missing `version`"));
    for bad in ["2", "\"1\"", "1.0", "one"] {
        let e = one_err(&format!(
            "version: {bad}\ncriteria:\n  - id: a\n    ac: A.\n"
        ));
        assert_eq!(at(&e), (1, 10), "{bad}");
        assert!(
            e.message.starts_with("`version` must be the integer `1`"),
            "{e}"
        );
    }
}

#[test]
fn empty_criteria_can_never_be_ready() {
    for text in ["version: 1\ncriteria: []\n", "version: 1\ncriteria:\n"] {
        let e = one_err(text);
        assert_eq!(at(&e), (2, 1));
        assert!(e
            .message
            .contains("an acceptance set with no criteria can never be READY"));
        assert!(help(&e).starts_with("add at least one criterion"));
    }
    let e = one_err("version: 1\ncriteria:\n  refund: x\n");
    assert!(e
        .message
        .contains("`criteria` must be a sequence, found a mapping"));
}

#[test]
fn an_empty_or_non_mapping_file_is_an_error_at_line_one() {
    for text in [
        "",
        "   \n",
        "# just a comment\n",
        "---\n",
        "- a\n- b\n",
        "hello\n",
    ] {
        let e = one_err(text);
        assert_eq!(at(&e), (1, 1), "{text:?}");
    }
    assert_eq!(one_err("").message, "the acceptance file is empty");
    assert!(one_err("- a\n").message.contains("found a sequence"));
}

#[test]
fn edit_distance_and_suggestions() {
    assert_eq!(edit_distance("requird", "required"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(edit_distance("kitten", "sitting"), 3);
    assert_eq!(closest("lne", CRITERION_KEYS), Some("lane"));
    assert_eq!(closest("zzzzzz", CRITERION_KEYS), None);
    assert_eq!(suggest_id("Refund_X"), "refund-x");
    assert_eq!(suggest_id("__"), "refund-voids-payment-intent");
}

#[test]
fn a_judge_block_is_one_judge_or_a_named_panel() {
    use crate::judge::{Transport, DEFAULT_EXCLUDE};
    use std::time::Duration;

    let set = parse_ok(&minimal("judge:\n  command: [j, x]\n  concurrency: 2\n"));
    let [j] = &set.judge[..] else {
        panic!("{:?}", set.judge)
    };
    assert_eq!((j.name.as_str(), j.line), ("judge", 5));
    assert_eq!(
        j.transport,
        Transport::Command {
            argv: vec!["j".into(), "x".into()]
        }
    );
    assert_eq!((j.timeout, j.concurrency), (Duration::from_secs(120), 2));
    assert_eq!(j.exclude, DEFAULT_EXCLUDE);

    let set = parse_ok(&minimal(
        "judge:\n  - { name: intent, url: \"https://x/v1\", model: m, api_key_env: K, timeout: 9 }\n  - name: security\n    command: [s]\n    exclude: [\"secrets/**\"]\n    max_diff_bytes: 10\n",
    ));
    let names: Vec<(&str, usize)> = set
        .judge
        .iter()
        .map(|j| (j.name.as_str(), j.line))
        .collect();
    assert_eq!(names, [("intent", 6), ("security", 7)]);
    assert_eq!(
        set.judge[0].transport,
        Transport::Chat {
            url: "https://x/v1".into(),
            model: "m".into(),
            api_key_env: Some("K".into())
        }
    );
    assert_eq!(set.judge[0].timeout, Duration::from_secs(9));
    assert_eq!(
        (set.judge[1].max_diff_bytes, &set.judge[1].exclude[..]),
        (10, &["secrets/**".to_string()][..])
    );
    assert!(set
        .judge
        .iter()
        .all(|j| j.file == crate::acceptance::test_support::FILE));

    // Each judge of a panel is checked as a single one is.
    let e = one_err(&minimal(
        "judge:\n  - { name: a, command: [j], url: https://x, model: m }\n",
    ));
    assert_eq!(e.message, "`judge` has both `command` and `url`");
    let e = one_err(&minimal("judge:\n  - { name: a, url: https://x }\n"));
    assert_eq!(e.message, "a judge `url` needs `model`");
    let e = one_err(&minimal("judge:\n  command: [j]\n  concurrency: 0\n"));
    assert!(
        e.message.contains("`concurrency` must be a positive"),
        "{e}"
    );
}

#[test]
fn a_drafts_confidence_and_source_are_read_and_checked() {
    let set = parse_ok(
        "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    confidence: 0.85\n    source: \"pull request #12, line 7\"\n  - id: b\n    ac: B.\n",
    );
    assert_eq!(set.criteria[0].confidence.map(|c| c.value()), Some(0.85));
    assert_eq!(
        set.criteria[0].source.as_deref(),
        Some("pull request #12, line 7")
    );
    assert_eq!(set.criteria[1].confidence, None);
    assert_eq!(set.criteria[1].source, None);
    for bad in ["1.5", "-0.1", "\"0.5\"", "high", ".nan", "[0.5]"] {
        let e = one_err(&format!(
            "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    confidence: {bad}\n"
        ));
        assert_eq!(at(&e), (5, 17), "{bad}: {e}");
        assert!(
            e.message
                .starts_with("`confidence` must be a number from 0 to 1"),
            "{bad}: {e}"
        );
        assert!(help(&e).contains("confidence: 0.9"), "{e}");
    }
    let e = one_err("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    source: [x]\n");
    assert!(e.message.contains("`source` must be a string"), "{e}");
}
