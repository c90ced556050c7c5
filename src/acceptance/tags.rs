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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn design_vectors() {
        assert_eq!(tag_for("refund-idempotent"), "AC-REFUND-IDEMPOTENT-10fd");
        assert_eq!(tag_for("audit-log"), "AC-AUDIT-LOG-fb7d");
    }

    #[test]
    fn matches_file_names_and_function_names() {
        let tag = "AC-REFUND-IDEMPOTENT-10fd";
        assert!(tag_matches("test_refund_AC_REFUND_IDEMPOTENT_10fd.py", tag));
        assert!(tag_matches("fn ac_refund_idempotent_10fd()", tag));
        assert!(tag_matches(
            "tests/AC-REFUND-IDEMPOTENT-10fd/test_x.py::test_y",
            tag
        ));
        assert!(tag_matches("ac_refund_idempotent_10fd", tag));
        assert!(tag_matches(
            "tests/test_r.py::test_refund_ac_refund_idempotent_10fd",
            tag
        ));
    }

    #[test]
    fn needs_a_boundary_on_both_sides() {
        let tag = "AC-REFUND-IDEMPOTENT-10fd";
        assert!(!tag_matches("xac_refund_idempotent_10fd", tag));
        assert!(!tag_matches("ac_refund_idempotent_10fda", tag));
        assert!(!tag_matches("ac_refund_idempotent_10fd0", tag));
        assert!(!tag_matches("ac_refund_idempotent_10fe", tag));
        assert!(!tag_matches("ac refund idempotent 10fd", tag));
        assert!(!tag_matches("", tag));
    }
}
