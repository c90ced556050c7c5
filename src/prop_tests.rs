//! What the property tests over every parser of outside input share (each module's
//! `prop_tests.rs` holds its own): the case count, and the inputs they are fed.
//!
//! Every parser gets two properties: arbitrary bytes, and a valid example of its input (a
//! fixture) mutated with its structure in mind: keys deleted, duplicated and renamed, values
//! retyped (numbers past `u64` and `f64`, strings that are long, empty, hold a NUL or a lone
//! surrogate), nesting far past any limit, invalid UTF-8 and NUL bytes spliced in. Each must end,
//! for every input, with the value or an error that names the input (its file, or what it is),
//! never with a panic.
//!
//! [`CASES`] cases per property keeps the whole suite under a minute on two cores (debug build);
//! `cargo test --lib prop_tests` runs them all, `PROPTEST_CASES=N` changes the count.

use proptest::prelude::*;
use proptest::test_runner::Config;

/// Cases per property.
pub(crate) const CASES: u32 = 256;

/// The runner's settings: [`CASES`] cases (unless `PROPTEST_CASES` says otherwise), no
/// regression files written into the source tree (a case found becomes a regular test).
pub(crate) fn config() -> Config {
    Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(CASES),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Nesting far deeper than any reader of ours accepts (a stack overflow, were one to recurse).
pub(crate) const DEEP: usize = 100_000;

/// Arbitrary bytes, up to 4 KiB, biased towards the bytes JSON and YAML give meaning to.
pub(crate) fn bytes() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        3 => any::<u8>(),
        2 => prop::sample::select(b"{}[]:,\"'\\-&*!|>#% \n\t0123456789.eE+ntfrul".to_vec()),
    ];
    prop::collection::vec(byte, 0..4096)
}

/// One mutation: what it does (`kind`), where (`at`, an index among the nodes or bytes) and
/// with what (`with`, an index among the replacements).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mutation {
    kind: u8,
    at: usize,
    with: usize,
}

/// Between one and six mutations.
pub(crate) fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec(
        (0u8..8, any::<usize>(), any::<usize>()).prop_map(|(kind, at, with)| Mutation {
            kind,
            at,
            with,
        }),
        1..6,
    )
}

// ---------------------------------------------------------------------------------------------
// JSON
// ---------------------------------------------------------------------------------------------

/// A document as a tree of its text: scalars as written (raw, so that they may be what no parsed
/// value holds), sequences, and mappings as their entries in order (so that a key may repeat).
/// `S` is how a scalar or a key is written: bytes for JSON, text for YAML.
#[derive(Debug, Clone)]
enum Tree<S> {
    /// A scalar as written, or anything spliced in.
    Raw(S),
    Seq(Vec<Tree<S>>),
    Map(Vec<(S, Tree<S>)>),
}

impl<S: Clone> Tree<S> {
    /// The number of nodes, in preorder.
    fn count(&self) -> usize {
        1 + match self {
            Tree::Raw(_) => 0,
            Tree::Seq(items) => items.iter().map(Tree::count).sum(),
            Tree::Map(entries) => entries.iter().map(|(_, v)| v.count()).sum(),
        }
    }

    /// The `n`th node in preorder.
    fn nth(&mut self, n: usize) -> Option<&mut Tree<S>> {
        if n == 0 {
            return Some(self);
        }
        let mut n = n - 1;
        let children: Vec<&mut Tree<S>> = match self {
            Tree::Raw(_) => return None,
            Tree::Seq(items) => items.iter_mut().collect(),
            Tree::Map(entries) => entries.iter_mut().map(|(_, v)| v).collect(),
        };
        for c in children {
            let size = c.count();
            if n < size {
                return c.nth(n);
            }
            n -= size;
        }
        None
    }

    /// Applies the structural `mutations` (a node retyped, an entry or item deleted or
    /// duplicated, a key renamed, a node wrapped in a sequence or in a mapping under `wrap_key`),
    /// and returns the byte-level ones, to [`splice`] once the document is written.
    fn mutate(
        &mut self,
        mutations: &[Mutation],
        replacements: &[S],
        keys: &[S],
        wrap_key: &S,
    ) -> Vec<(usize, usize)> {
        let mut spliced = Vec::new();
        for m in mutations {
            let count = self.count();
            let Some(node) = self.nth(m.at % count) else {
                continue;
            };
            let value = replacements[m.with % replacements.len()].clone();
            match (m.kind, node) {
                // Retype the node.
                (0 | 1, node) => *node = Tree::Raw(value),
                // Delete an entry or an item.
                (2, Tree::Map(entries)) if !entries.is_empty() => {
                    entries.remove(m.with % entries.len());
                }
                (2, Tree::Seq(items)) if !items.is_empty() => {
                    items.remove(m.with % items.len());
                }
                // Duplicate an entry (its value retyped) or an item.
                (3, Tree::Map(entries)) if !entries.is_empty() => {
                    let (k, _) = entries[m.with % entries.len()].clone();
                    entries.push((k, Tree::Raw(value)));
                }
                (3, Tree::Seq(items)) if !items.is_empty() => {
                    let item = items[m.with % items.len()].clone();
                    items.push(item);
                }
                // Rename a key.
                (4, Tree::Map(entries)) if !entries.is_empty() => {
                    let i = m.with % entries.len();
                    entries[i].0 = keys[m.with % keys.len()].clone();
                }
                // Wrap the node in a sequence or a mapping.
                (5, node) => {
                    let inner = std::mem::replace(node, Tree::Seq(Vec::new()));
                    *node = if m.with % 2 == 0 {
                        Tree::Seq(vec![inner])
                    } else {
                        Tree::Map(vec![(wrap_key.clone(), inner)])
                    };
                }
                // Byte-level changes, once the document is written.
                (6 | 7, _) => spliced.push((m.at, m.with)),
                _ => {}
            }
        }
        spliced
    }
}

/// A JSON document as text is written.
type J = Tree<Vec<u8>>;

impl J {
    fn of(v: &serde_json::Value) -> J {
        match v {
            serde_json::Value::Array(a) => J::Seq(a.iter().map(J::of).collect()),
            serde_json::Value::Object(o) => J::Map(
                o.iter()
                    .map(|(k, v)| (json_string(k).into_bytes(), J::of(v)))
                    .collect(),
            ),
            scalar => J::Raw(scalar.to_string().into_bytes()),
        }
    }

    fn render(&self, out: &mut Vec<u8>) {
        match self {
            J::Raw(b) => out.extend_from_slice(b),
            J::Seq(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    item.render(out);
                }
                out.push(b']');
            }
            J::Map(entries) => {
                out.push(b'{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    out.extend_from_slice(k);
                    out.push(b':');
                    v.render(out);
                }
                out.push(b'}');
            }
        }
    }
}

fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Values no valid document holds where they land: other types, numbers past every integer and
/// float, strings empty, long, with a NUL, a lone surrogate, control characters or invalid UTF-8,
/// and nesting past serde_json's limit of 128.
fn json_replacements() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = [
        "null",
        "true",
        "0",
        "-1",
        "12",
        "1.5",
        "1e400",
        "-1e400",
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890123456789e-5",
        "\"\"",
        "\"x\"",
        "\"\\u0000\"",
        "\"\\ud800\"",
        "\"a\\u001b[31mred\"",
        "[]",
        "{}",
        "[1,\"2\",null]",
        "{\"\":{}}",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    out.push(b"\"\xff\xfe\x00\"".to_vec());
    out.push(b"\"nul\x00byte\"".to_vec());
    out.push(format!("\"{}\"", "a".repeat(200_000)).into_bytes());
    out.push(format!("{}1{}", "[".repeat(127), "]".repeat(127)).into_bytes());
    out.push(format!("{}1{}", "[".repeat(200), "]".repeat(200)).into_bytes());
    out.push(format!("{}{}", "{\"a\":".repeat(DEEP), "}".repeat(DEEP)).into_bytes());
    out.push("[".repeat(DEEP).into_bytes());
    out
}

/// Keys a valid document does not hold.
fn json_keys() -> Vec<Vec<u8>> {
    vec![
        b"\"\"".to_vec(),
        b"\"\\u0000\"".to_vec(),
        b"\"\xff\"".to_vec(),
        b"\"_type\"".to_vec(),
        b"\"payloadType\"".to_vec(),
        b"\"mediaType\"".to_vec(),
        format!("\"{}\"", "k".repeat(10_000)).into_bytes(),
        b"12".to_vec(),
    ]
}

/// `example` (valid JSON) with `mutations` applied, as bytes.
pub(crate) fn mutate_json(example: &[u8], mutations: &[Mutation]) -> Vec<u8> {
    let value: serde_json::Value = serde_json::from_slice(example).expect("the example is JSON");
    let mut doc = J::of(&value);
    let spliced = doc.mutate(
        mutations,
        &json_replacements(),
        &json_keys(),
        &b"\"a\"".to_vec(),
    );
    let mut out = Vec::new();
    doc.render(&mut out);
    for (at, with) in spliced {
        splice(&mut out, at, with);
    }
    out
}

/// A byte-level change at `at`: a byte flipped, one removed, a NUL or invalid UTF-8 inserted, or
/// the document cut short.
fn splice(out: &mut Vec<u8>, at: usize, with: usize) {
    if out.is_empty() {
        out.push(0xff);
        return;
    }
    let i = at % out.len();
    match with % 5 {
        0 => out[i] ^= 1 << (with / 5 % 8),
        1 => {
            out.remove(i);
        }
        2 => out.insert(i, 0),
        3 => out.splice(i..i, [0xc3, 0x28, 0xff]).for_each(drop),
        _ => out.truncate(i),
    }
}

// ---------------------------------------------------------------------------------------------
// YAML
// ---------------------------------------------------------------------------------------------

/// A YAML document in block style: scalars as written (raw), mappings and sequences indented.
type Y = Tree<String>;

impl Y {
    fn of(node: &crate::spanned_yaml::Node) -> Y {
        use crate::spanned_yaml::Kind;
        match &node.kind {
            Kind::Scalar { text, style } => Y::Raw(match style {
                saphyr_parser::ScalarStyle::Plain => text.clone(),
                _ => json_string(text),
            }),
            Kind::Seq(items) => Y::Seq(items.iter().map(Y::of).collect()),
            Kind::Map(entries) => Y::Map(
                entries
                    .iter()
                    .map(|e| (e.key.clone(), Y::of(&e.value)))
                    .collect(),
            ),
            Kind::Rejected => Y::Raw("~".to_string()),
        }
    }

    fn render(&self, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match self {
            Y::Raw(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Y::Seq(items) if items.is_empty() => out.push_str("[]\n"),
            Y::Map(entries) if entries.is_empty() => out.push_str("{}\n"),
            Y::Seq(items) => {
                out.push('\n');
                for item in items {
                    out.push_str(&pad);
                    out.push_str("- ");
                    item.render(indent + 2, out);
                }
            }
            Y::Map(entries) => {
                out.push('\n');
                for (k, v) in entries {
                    out.push_str(&pad);
                    out.push_str(k);
                    out.push_str(": ");
                    v.render(indent + 2, out);
                }
            }
        }
    }

    /// The document, its root's leading newline left out.
    fn document(&self) -> String {
        let mut out = String::new();
        self.render(0, &mut out);
        out.trim_start_matches('\n').to_string()
    }
}

/// Scalars (and flow collections) no valid file holds where they land.
fn yaml_replacements() -> Vec<String> {
    let mut out: Vec<String> = [
        "~",
        "null",
        "true",
        "0",
        "-1",
        "12",
        "0x7fffffffffffffffff",
        "18446744073709551616",
        "1e400",
        ".nan",
        "-.inf",
        "\"\"",
        "\"\\0\"",
        "\"\\ud800\"",
        "\"a\\e[31mred\"",
        "[]",
        "{}",
        "[1, [2, {a: b}]]",
        "&anchor x",
        "*anchor",
        "!!binary aGk=",
        "!custom x",
        "|\n  a block\n",
        "'single ''quoted'''",
        "a: b: c",
        "- x",
        "\"unterminated",
        "nul\u{0}char",
        "\u{feff}bom",
        "---\nsecond: document",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    out.push("a".repeat(200_000));
    out.push(format!("{}x{}", "[".repeat(63), "]".repeat(63)));
    out.push(format!("{}x{}", "[".repeat(65), "]".repeat(65)));
    out.push(format!("{}x{}", "{a: ".repeat(DEEP), "}".repeat(DEEP)));
    out.push("[".repeat(DEEP));
    out
}

fn yaml_keys() -> Vec<String> {
    vec![
        "\"\"".to_string(),
        "\"\\0\"".to_string(),
        "version".to_string(),
        "criteria".to_string(),
        "? [complex]".to_string(),
        "k".repeat(10_000),
        "12".to_string(),
        "&a key".to_string(),
    ]
}

/// `example` (a valid file, which must parse) with `mutations` applied, as bytes (a splice may
/// leave invalid UTF-8).
pub(crate) fn mutate_yaml(example: &str, mutations: &[Mutation]) -> Vec<u8> {
    let mut problems = Vec::new();
    let root = crate::spanned_yaml::build_tree_of(
        example,
        crate::spanned_yaml::FileKind {
            name: "example",
            schema: "example's schema",
        },
        &mut problems,
    )
    .ok()
    .flatten()
    .expect("the example is YAML");
    let mut doc = Y::of(&root);
    let spliced = doc.mutate(
        mutations,
        &yaml_replacements(),
        &yaml_keys(),
        &"a".to_string(),
    );
    let mut out = doc.document().into_bytes();
    for (at, with) in spliced {
        splice(&mut out, at, with);
    }
    out
}

/// `example` rendered back without a mutation: the mutator's starting point, which must read as
/// the example does.
pub(crate) fn unmutated_yaml(example: &str) -> String {
    String::from_utf8(mutate_yaml(example, &[])).expect("UTF-8")
}

/// Runs `f`, and fails when it took longer than `seconds`: a bound generous enough never to
/// flake on a loaded machine, which an input that makes a parser loop or go quadratic on a
/// 200 KB string still exceeds.
pub(crate) fn within<T>(seconds: u64, what: &str, f: impl FnOnce() -> T) -> T {
    let start = std::time::Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(
        took.as_secs() < seconds,
        "{what} took {took:?}, more than {seconds} s"
    );
    out
}

/// A temporary file holding `bytes`, named `name`.
pub(crate) fn file_with(name: &str, bytes: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("written");
    (dir, path)
}
