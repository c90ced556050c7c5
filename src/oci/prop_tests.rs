//! Properties of the readers of what a registry serves: an image index (the referrers API's
//! answer, or the referrers tag schema's index), an artifact manifest, and the Sigstore bundle
//! attached. Any bytes, and valid ones mutated, end in the value or a reason (which the caller
//! prefixes with the registry and repository), never in a panic (see [`crate::prop_tests`]).

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::artifact::{
    artifact_manifest, bundle_entries, bundle_layer, index_with, BundleFacts, Descriptor,
    IndexEntry, BUNDLE_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, PREDICATE_TYPE_ANNOTATION,
};
use crate::prop_tests::{bytes, config, mutate_json, mutations, within};

const VSA: &str = "https://slsa.dev/verification_summary/v1";
const BUNDLE: &[u8] = include_bytes!("../../tests/fixtures/admit/vsa.sigstore.json");

fn subject() -> Descriptor {
    Descriptor {
        media_type: MANIFEST_MEDIA_TYPE.to_string(),
        digest: format!("sha256:{}", "a".repeat(64)),
        size: 512,
    }
}

fn entry() -> IndexEntry {
    IndexEntry {
        media_type: MANIFEST_MEDIA_TYPE.to_string(),
        size: 900,
        digest: format!("sha256:{}", "b".repeat(64)),
        artifact_type: Some(BUNDLE_MEDIA_TYPE.to_string()),
        annotations: BTreeMap::from([(PREDICATE_TYPE_ANNOTATION.to_string(), VSA.to_string())]),
    }
}

fn manifest() -> Vec<u8> {
    artifact_manifest(&subject(), BUNDLE, VSA, "2026-11-30T10:00:00Z")
        .expect("a manifest")
        .0
}

fn index() -> Vec<u8> {
    index_with(None, &entry())
        .expect("an index")
        .expect("changed")
}

/// Every reader over `input`: an error is a reason, never empty.
fn read_all(input: &[u8]) -> Result<(), String> {
    let subject = subject().digest;
    let reasons = within(20, "reading registry documents", || {
        [
            bundle_entries(input, VSA).err().map(|e| e.to_string()),
            bundle_layer(input, &subject).err().map(|e| e.to_string()),
            index_with(Some(input), &entry())
                .err()
                .map(|e| e.to_string()),
            BundleFacts::read(input).err().map(|e| e.to_string()),
        ]
    });
    match reasons.iter().flatten().find(|r| r.trim().is_empty()) {
        Some(_) => Err("an error without a reason".to_string()),
        None => Ok(()),
    }
}

#[test]
fn the_examples_start_valid() {
    assert_eq!(
        bundle_entries(&mutate_json(&index(), &[]), VSA)
            .unwrap()
            .len(),
        1
    );
    bundle_layer(&mutate_json(&manifest(), &[]), &subject().digest).unwrap();
    BundleFacts::read(&mutate_json(BUNDLE, &[])).unwrap();
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_bytes_are_read_or_refused(input in bytes()) {
        read_all(&input).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn a_mutated_index_manifest_or_bundle_is_read_or_refused(m in mutations(), which in 0..3u8) {
        let example = match which {
            0 => index(),
            1 => manifest(),
            _ => BUNDLE.to_vec(),
        };
        read_all(&mutate_json(&example, &m)).map_err(TestCaseError::fail)?;
    }
}
