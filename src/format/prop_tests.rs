//! Properties of the readers of the documents a run writes and a later command reads back: an
//! evidence record (replay, `evidence gc`, shard fusion), the run's result (the Action), and an
//! agent's hook payload (`shipmoor hook`, from the agent's stdin). Any bytes, and a valid
//! document mutated, end in the document or in a reason, never in a panic (see
//! [`crate::prop_tests`]).

use proptest::prelude::*;

use super::evidence::Record;
use super::result::ResultDocument;
use crate::prop_tests::{bytes, config, mutate_json, mutations, within};

const RESULT: &[u8] = include_bytes!("../../tests/fixtures/agents/result-blocked.json");
/// The Claude Code Stop payload, its placeholders filled in.
fn hook() -> Vec<u8> {
    include_str!("../../tests/fixtures/hooks/claude-code-stop.json")
        .replace("@CWD@", "/work/shop")
        .replace("@ACTIVE@", "false")
        .into_bytes()
}

/// The JSON records of the format-1 fixture's evidence store (a run, a listing, a tag scan).
fn records() -> Vec<Vec<u8>> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/format-1/evidence/sha256"
    );
    let mut out: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .expect("the fixture")
        .map(|e| std::fs::read(e.expect("an entry").path()).expect("read"))
        .filter(|b| serde_json::from_slice::<Record>(b).is_ok())
        .collect();
    out.sort();
    out
}

fn read_all(input: &[u8]) -> Result<(), String> {
    within(20, "reading documents", || {
        let record = serde_json::from_slice::<Record>(input)
            .err()
            .map(|e| e.to_string());
        let result = ResultDocument::parse(input).err().map(|e| e.to_string());
        let hook = crate::agent::hook::parse_payload(input)
            .err()
            .map(|e| e.to_string());
        match [record, result, hook]
            .iter()
            .flatten()
            .find(|r| r.trim().is_empty())
        {
            Some(_) => Err("an error without a reason".to_string()),
            None => Ok(()),
        }
    })
}

#[test]
fn the_examples_start_valid() {
    assert!(records().len() >= 3, "the fixture's records");
    for r in records() {
        serde_json::from_slice::<Record>(&mutate_json(&r, &[])).unwrap();
    }
    ResultDocument::parse(&mutate_json(RESULT, &[])).unwrap();
    crate::agent::hook::parse_payload(&mutate_json(&hook(), &[])).unwrap();
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_are_read_or_refused(input in bytes()) {
        read_all(&input).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_record_result_or_payload_is_read_or_refused(
        m in mutations(),
        pick in any::<prop::sample::Index>(),
    ) {
        let mut examples = records();
        examples.push(RESULT.to_vec());
        examples.push(hook());
        let example: &Vec<u8> = pick.get(&examples);
        read_all(&mutate_json(example, &m)).map_err(TestCaseError::fail)?;
    }
}
