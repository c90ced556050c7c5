//! Criterion tags and the exact, case-folded match that binds a test to a criterion.
//!
//! A tag is `AC-` + the id upper-cased + `-` + the first 4 hex digits of
//! SHA-256(`claim-check/tag/v1\0<id>`). A test binds when its runner-native id or its file path
//! contains the tag, comparing after folding ASCII case and treating `-` and `_` as one
//! character, with a non-alphanumeric character (or the end) on each side. Nothing fuzzier.

use sha2::{Digest, Sha256};

pub fn tag_for(id: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"claim-check/tag/v1\0");
    h.update(id.as_bytes());
    let digest = h.finalize();
    let short = &hex::encode(digest)[..4];
    format!("AC-{}-{}", id.to_ascii_uppercase(), short)
}

fn fold(b: u8) -> u8 {
    match b {
        b'_' => b'-',
        _ => b.to_ascii_lowercase(),
    }
}

/// Whether `haystack` contains `tag` as a whole token (see the module doc).
pub fn tag_matches(haystack: &str, tag: &str) -> bool {
    let h: Vec<u8> = haystack.bytes().map(fold).collect();
    let t: Vec<u8> = tag.bytes().map(fold).collect();
    if t.is_empty() || t.len() > h.len() {
        return false;
    }
    (0..=h.len() - t.len()).any(|start| {
        let end = start + t.len();
        h[start..end] == t[..]
            && (start == 0 || !h[start - 1].is_ascii_alphanumeric())
            && (end == h.len() || !h[end].is_ascii_alphanumeric())
    })
}

/// Pairs of criteria whose tags collide: the first's tag occurs, as a whole token, inside the
/// second's (`AC-ADDS-NUMBERS-25d1` inside `AC-ADDS-NUMBERS-25D1-4a86`), so a test named with
/// the second's tag binds both, and one test would satisfy two criteria. In the order given.
pub fn tag_collisions<'a>(
    criteria: &[&'a super::Criterion],
) -> Vec<(&'a super::Criterion, &'a super::Criterion)> {
    let mut out = Vec::new();
    for (i, a) in criteria.iter().enumerate() {
        for (j, b) in criteria.iter().enumerate() {
            if i != j && a.id != b.id && tag_matches(&b.tag, &a.tag) {
                out.push((*a, *b));
            }
        }
    }
    out
}

#[cfg(test)]
#[path = "tags_tests.rs"]
mod tests;
