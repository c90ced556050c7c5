//! Properties of the acceptance file's and `.shipmoor/config.yaml`'s readers: any bytes, and the
//! documented example mutated, end in the set or in errors that each name the file, never in a
//! panic (see [`crate::prop_tests`]).

use proptest::prelude::*;

use super::{load, parse, AcceptanceState, Located};
use crate::error::Error;
use crate::prop_tests::{bytes, config, file_with, mutate_yaml, mutations, unmutated_yaml, within};

/// The documented acceptance file (the book's acceptance page), every section of it.
const EXAMPLE: &str = r#"version: 1
criteria:
  - id: refund-voids-payment-intent
    ac: The Stripe PaymentIntent is voided.
    required: true
    lane: floor
    check:
      test: "tests/refund/test_stripe_void.py::test_void_called"
  - id: refund-audit-log
    ac: An audit log entry is written for every refund.
    lane: judge
  - id: refund-pattern
    ac: The refund path calls cancel.
    check:
      pattern: { paths: ["src/refund/**"], regex: "PaymentIntent\\.cancel" }
runners:
  - kind: nextest
    root: .
    args: ["--features", "preserve_order"]
    setup: "npm ci"
    env_pass: [NPM_TOKEN]
  - kind: junit-command
    root: tools
    command: "make junit"
harness:
  allow_changes: []
guard: ["tests/**"]
inherited: guard
floor:
  env_pass: []
"#;

/// The settings alone, as `.shipmoor/config.yaml` holds them.
const CONFIG: &str = r#"version: 1
runners:
  - kind: pytest
    root: .
guard: ["tests/**"]
inherited: guard
harness:
  allow_changes: ["conftest.py"]
floor:
  env_pass: [NPM_TOKEN]
"#;

/// The acceptance file at a temporary path, loaded as `claim-check --acceptance` loads it: `Ok`,
/// or input errors that each name the file.
fn load_bytes(bytes: &[u8]) -> Result<(), String> {
    let (_dir, path) = file_with("acceptance.yaml", bytes);
    let located = Located {
        path: path.clone(),
        display_path: "shown/acceptance.yaml".to_string(),
        state: AcceptanceState::Committed,
    };
    match within(20, "loading the acceptance file", || load(&located)) {
        Ok(_) => Ok(()),
        Err(Error::Input(errors)) if !errors.is_empty() => {
            for e in &errors {
                if e.file.as_deref() != Some("shown/acceptance.yaml") || e.help.is_none() {
                    return Err(format!("an error without the file or a help: {e:?}"));
                }
            }
            Ok(())
        }
        Err(other) => Err(format!("not an input error: {other:?}")),
    }
}

/// `.shipmoor/config.yaml`'s text read as the claim reads it (after its UTF-8 check).
fn config_text(bytes: &[u8]) -> Result<(), String> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(());
    };
    match within(20, "reading the config", || {
        parse::parse_config(text, ".shipmoor/config.yaml")
    }) {
        Ok(_) => Ok(()),
        Err(errors) if !errors.is_empty() => errors
            .iter()
            .find(|e| e.file.as_deref() != Some(".shipmoor/config.yaml") || e.help.is_none())
            .map_or(Ok(()), |e| Err(format!("{e:?}"))),
        Err(_) => Err("no error said why".to_string()),
    }
}

#[test]
fn the_examples_start_valid() {
    for (name, example) in [("acceptance", EXAMPLE), ("config", CONFIG)] {
        let rendered = unmutated_yaml(example);
        let config = name == "config";
        let read = if config {
            parse::parse_config(&rendered, "c.yaml")
        } else {
            parse::parse(
                &rendered,
                "a.yaml",
                AcceptanceState::Committed,
                String::new(),
            )
        };
        assert!(read.is_ok(), "{name}: {rendered}\n{read:?}");
    }
}

/// 100,000 levels of flow nesting, of each kind, and block nesting: one error at the depth
/// limit, quickly, no stack overflow (the parser's and the tree's).
#[test]
fn deep_nesting_is_one_error_at_the_limit() {
    let deep = crate::prop_tests::DEEP;
    for text in [
        "[".repeat(deep),
        format!("{}1{}", "[".repeat(deep), "]".repeat(deep)),
        "{a: ".repeat(deep),
        format!("{}1", "- ".repeat(deep)),
        (0..2000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect(),
    ] {
        let errors = within(20, "a deep file", || {
            parse::parse(&text, "a.yaml", AcceptanceState::Committed, String::new())
        })
        .expect_err("too deep");
        assert!(
            errors
                .iter()
                .any(|e| e.message.contains("nests deeper than")),
            "{errors:?}"
        );
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_load_or_name_the_acceptance_file(input in bytes()) {
        load_bytes(&input).map_err(TestCaseError::fail)?;
        config_text(&input).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_acceptance_file_loads_or_names_the_file(m in mutations()) {
        let input = mutate_yaml(EXAMPLE, &m);
        load_bytes(&input).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_config_reads_or_names_the_file(m in mutations()) {
        let input = mutate_yaml(CONFIG, &m);
        config_text(&input).map_err(TestCaseError::fail)?;
    }
}
