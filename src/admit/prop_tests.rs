//! Properties of the admission policy's reader (parsing and loading; evaluating a Rego module is
//! another matter): any bytes, and the example policy mutated, end in the policy or in errors
//! that each name the policy (or the Rego module it names), never in a panic or a hang (see
//! [`crate::prop_tests`]).

use proptest::prelude::*;

use super::policy::load;
use crate::error::Error;
use crate::prop_tests::{bytes, config, mutate_yaml, mutations, unmutated_yaml, within};

/// The book's example policy (examples/admit), with a key signer besides its identity signer.
fn example() -> String {
    include_str!("../../examples/admit/policy.yaml").replace(
        "signers:\n",
        "signers:\n  - key: keys/claim-check.pub\n    verifier_ids: [\"https://example.com/v\"]\n",
    )
}

/// The policy's directory: the Rego module and the key the example names.
fn policy_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(
        dir.path().join("extra.rego"),
        include_str!("../../examples/admit/extra.rego"),
    )
    .expect("written");
    std::fs::create_dir(dir.path().join("keys")).expect("made");
    std::fs::write(
        dir.path().join("keys/claim-check.pub"),
        include_str!("../../tests/fixtures/admit/claim-check.pub"),
    )
    .expect("written");
    dir
}

/// `bytes` as the policy file: `Ok`, or input errors that each name a file of the policy's.
fn load_bytes(bytes: &[u8]) -> Result<(), String> {
    let dir = policy_dir();
    let path = dir.path().join("policy.yaml");
    std::fs::write(&path, bytes).expect("written");
    match within(20, "loading the policy", || load(&path)) {
        Ok(_) => Ok(()),
        Err(Error::Input(errors)) if !errors.is_empty() => {
            let inside = dir.path().display().to_string();
            for e in &errors {
                let named = e.file.as_deref().is_some_and(|f| f.starts_with(&inside));
                if !named || e.help.is_none() {
                    return Err(format!("an error without its file or a help: {e:?}"));
                }
            }
            Ok(())
        }
        Err(other) => Err(format!("not an input error: {other:?}")),
    }
}

#[test]
fn the_example_starts_valid() {
    let dir = policy_dir();
    let path = dir.path().join("policy.yaml");
    std::fs::write(&path, unmutated_yaml(&example())).expect("written");
    let policy = load(&path).expect("the example policy loads");
    assert_eq!(policy.signers.len(), 2);
    assert!(policy.rego.is_some());
}

#[test]
fn deep_nesting_in_a_policy_is_one_error_at_the_limit() {
    let deep = crate::prop_tests::DEEP;
    for text in [
        format!("version: 1\nrepositories: {}", "[".repeat(deep)),
        format!(
            "version: 1\nsigners: {}x{}",
            "[".repeat(deep),
            "]".repeat(deep)
        ),
    ] {
        let dir = policy_dir();
        let path = dir.path().join("policy.yaml");
        std::fs::write(&path, text).expect("written");
        let Err(Error::Input(errors)) = within(20, "a deep policy", || load(&path)) else {
            panic!("too deep");
        };
        assert!(
            errors
                .iter()
                .any(|e| e.message.contains("nests deeper than 64")),
            "{errors:?}"
        );
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_load_or_name_the_policy(input in bytes()) {
        load_bytes(&input).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_policy_loads_or_names_the_policy(m in mutations()) {
        load_bytes(&mutate_yaml(&example(), &m)).map_err(TestCaseError::fail)?;
    }
}
