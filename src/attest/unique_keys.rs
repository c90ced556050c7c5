//! Duplicate keys in an attestation's JSON, at any depth.
//!
//! In: JSON bytes (an envelope, a bundle, a statement). Out: `Ok` when no object of it repeats
//! a key, else an error naming the key, the object it repeats in (`signatures[0]`,
//! `dsseEnvelope`, the top level) and the line and column of the repetition.
//!
//! Why: JSON leaves duplicate keys undefined, and parsers disagree on them (first wins, last
//! wins, an error). `serde_json` keeps the last silently, so `{"payload": A, "payload": B}`
//! would verify here as B while another verifier reads A. A statement is read into structs,
//! whose derive refuses a repeated field; the envelope and the bundle around it are read as
//! [`serde_json::Value`], so they are checked here, at every level, before anything reads them.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// A key repeated in an object of an attestation's JSON: the key, where, and the line and
/// column, in the parser's words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DuplicateKey(serde_json::Error);

/// `Ok` when no object in `bytes` repeats a key. Bytes that are not JSON are also `Ok`: that is
/// for the parser that reads them to report, in its own words.
pub fn check(bytes: &[u8]) -> Result<(), DuplicateKey> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let root = Node {
        path: String::new(),
    };
    match root.deserialize(&mut de).and_then(|()| de.end()) {
        Err(e) if e.is_data() => Err(DuplicateKey(e)),
        _ => Ok(()),
    }
}

/// One value at `path` (`""` for the top level, `a.b[2]` below).
struct Node {
    path: String,
}

impl Node {
    fn place(&self) -> String {
        if self.path.is_empty() {
            "at the top level".to_string()
        } else {
            format!("in `{}`", self.path)
        }
    }

    fn child(&self, key: &str) -> Node {
        Node {
            path: if self.path.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.path)
            },
        }
    }
}

impl<'de> DeserializeSeed<'de> for Node {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_i128<E>(self, _: i128) -> Result<(), E> {
        Ok(())
    }

    fn visit_u128<E>(self, _: u128) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0usize;
        loop {
            let item = Node {
                path: format!("{}[{i}]", self.path),
            };
            if seq.next_element_seed(item)?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen: HashSet<String> = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                return Err(de::Error::custom(format!(
                    "duplicate key `{key}` {}",
                    self.place()
                )));
            }
            map.next_value_seed(self.child(&key))?;
            seen.insert(key);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn a_repeated_key_is_named_with_its_object_and_position_at_any_depth() {
        let cases = [
            (
                r#"{"payload": "a", "payload": "b"}"#,
                "duplicate key `payload` at the top level at line 1 column",
            ),
            (
                r#"{"signatures": [{"sig": "a"}, {"keyid": "", "sig": "b", "keyid": "k"}]}"#,
                "duplicate key `keyid` in `signatures[1]`",
            ),
            (
                r#"{"dsseEnvelope": {"signatures": [{"sig": "a", "sig": "a"}]}}"#,
                "duplicate key `sig` in `dsseEnvelope.signatures[0]`",
            ),
            (
                r#"{"a": [[{"b": {"c": 1, "c": 1}}]]}"#,
                "duplicate key `c` in `a[0][0].b`",
            ),
            // The same key after an escape is the same key.
            (
                r#"{"payload": 1, "p\u0061yload": 1}"#,
                "duplicate key `payload` at the top level",
            ),
        ];
        for (json, want) in cases {
            let e = check(json.as_bytes()).unwrap_err().to_string();
            assert!(e.starts_with(want), "{json}: {e}");
        }
    }

    #[test]
    fn the_same_key_in_sibling_objects_and_every_json_type_pass() {
        let ok = r#"{"s": [{"k": 1}, {"k": -2.5e3}], "t": {"k": null, "u": {"k": true}},
                     "k": "x", "n": 18446744073709551615, "e": {}, "a": []}"#;
        assert_eq!(check(ok.as_bytes()).map_err(|e| e.to_string()), Ok(()));
        // Not JSON is for the reader to report.
        assert_eq!(check(b"{").map_err(|e| e.to_string()), Ok(()));
        assert_eq!(check(b"{} {}").map_err(|e| e.to_string()), Ok(()));
        // A repetition before the bytes stop being JSON is still one.
        assert!(check(br#"{"a": 1, "a": "#).is_err());
    }
}
