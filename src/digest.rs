//! Digests every stage shares: SHA-256 in hex, and RFC 8785 canonical JSON (what the evidence
//! store, the acceptance set's policy digest and the statement hash).

use serde::Serialize;
use sha2::{Digest, Sha256};

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A value that could not be written as canonical JSON (a map with keys that are not strings,
/// a number JSON cannot hold): a bug in what was serialized, never the user's input.
#[derive(Debug, thiserror::Error)]
#[error("canonical JSON: {0}")]
pub struct CanonicalError(#[from] serde_json::Error);

/// RFC 8785 canonical JSON of a serializable value.
pub fn canonical_json<T: Serialize>(value: &T) -> Result<Vec<u8>, CanonicalError> {
    Ok(serde_json_canonicalizer::to_vec(value)?)
}
