//! Properties of the event payload's reader (`GITHUB_EVENT_PATH`): any bytes, and a pull
//! request's payload mutated, end in the payload or in input errors that each name its file
//! and say what to do, never in a panic; a payload read is one every later reader of it can
//! take as it is (see [`crate::prop_tests`]).

use proptest::prelude::*;

use crate::error::Error;
use crate::prop_tests::{bytes, config, file_with, mutate_json, mutations, within};

fn example() -> Vec<u8> {
    let sha = |c: &str| c.repeat(40);
    serde_json::to_vec(&serde_json::json!({
        "action": "opened",
        "number": 7,
        "pull_request": {
            "number": 7, "title": "Refunds", "body": "- [ ] A refund voids the intent.",
            "head": {"ref": "feature", "sha": sha("b"), "repo": {"full_name": "acme/app"}},
            "base": {"ref": "main", "sha": sha("a"), "repo": {"full_name": "acme/app"}},
        },
        "repository": {"full_name": "acme/app"},
    }))
    .expect("JSON")
}

fn read_bytes(bytes: &[u8]) -> Result<(), String> {
    let (_dir, path) = file_with("event.json", bytes);
    let shown = path.display().to_string();
    match within(20, "reading the event payload", || {
        super::read_event_at(&path)
    }) {
        Ok((named, event)) => {
            if named != shown {
                return Err(format!("named {named}"));
            }
            // What the later, lenient readers take: a sha they read is a commit id.
            for which in ["base", "head"] {
                if let Some(sha) = super::pull_request_sha(&event, which) {
                    if crate::git::CommitId::parse(&sha).is_none() {
                        return Err(format!("{which} sha `{sha}` read"));
                    }
                }
            }
            let _ = super::pull_request_number(&event);
            Ok(())
        }
        Err(Error::Input(errors)) if !errors.is_empty() => errors
            .iter()
            .find(|e| e.file.as_deref() != Some(shown.as_str()) || e.help.is_none())
            .map_or(Ok(()), |e| {
                Err(format!("an error without the file or a help: {e:?}"))
            }),
        Err(other) => Err(format!("not an input error: {other:?}")),
    }
}

#[test]
fn the_example_starts_valid() {
    read_bytes(&mutate_json(&example(), &[])).unwrap();
    let (_dir, path) = file_with("event.json", &example());
    assert!(super::read_event_at(&path).is_ok());
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_are_a_payload_or_name_its_file(input in bytes()) {
        read_bytes(&input).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_payload_is_read_or_names_its_file(m in mutations()) {
        read_bytes(&mutate_json(&example(), &m)).map_err(TestCaseError::fail)?;
    }
}
