//! Properties of the shard result's reader (`shard.json`, which a job that ran the change's
//! code wrote): any bytes, and a valid result mutated, end in the result or in an error naming
//! the shard's directory, never in a panic (see [`crate::prop_tests`]).

use proptest::prelude::*;

use super::{read_one, SHARD_SCHEMA};
use crate::prop_tests::{bytes, config, file_with, mutate_json, mutations, within};

fn example() -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "schema": SHARD_SCHEMA,
        "tool_version": "0.1.0",
        "policy": "v3",
        "base": "a".repeat(40),
        "head": "b".repeat(40),
        "acceptance_sha256": "c".repeat(64),
        "shard": {"k": 1, "n": 2, "by": "criterion"},
        "runs": 1,
        "entries": [],
        "runtime": [],
        "records": [],
        "overlay": ["tests/test_a.py"],
        "overlay_deleted": [],
        "overlay_spliced": [],
        "changed_files": 3,
        "harness": [],
        "sandbox": {
            "mode": "require",
            "enforced": true,
            "landlock_abi": 7,
            "protections": ["filesystem", "ptrace", "no_new_privs"],
            "not_enforced": [],
            "as_root": false,
        },
        "evidence": [],
    }))
    .expect("JSON")
}

/// A shard's directory: `bytes` as its `shard.json`, and an empty evidence store.
fn shard_dir(bytes: &[u8]) -> tempfile::TempDir {
    let (dir, _) = file_with("shard.json", bytes);
    std::fs::create_dir_all(dir.path().join("evidence/sha256")).expect("made");
    dir
}

/// `bytes` as a shard's `shard.json`, read: the result, or an error naming the directory.
fn read_bytes(bytes: &[u8]) -> Result<(), String> {
    let dir = shard_dir(bytes);
    match within(20, "reading a shard", || read_one(dir.path(), None)) {
        Ok(_) => Ok(()),
        Err(e) => {
            let shown = format!("shard {}", dir.path().display());
            if e.message.starts_with(&shown) && e.help.is_some() {
                Ok(())
            } else {
                Err(format!("an error that does not name the shard: {e:?}"))
            }
        }
    }
}

#[test]
fn the_example_starts_valid() {
    let dir = shard_dir(&mutate_json(&example(), &[]));
    if let Err(e) = read_one(dir.path(), None) {
        panic!("{e}");
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_are_a_shard_or_name_it(input in bytes()) {
        read_bytes(&input).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_shard_is_read_or_named(m in mutations()) {
        read_bytes(&mutate_json(&example(), &m)).map_err(TestCaseError::fail)?;
    }
}
