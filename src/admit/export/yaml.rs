//! The YAML the exports are written in: a tree built in the order a person reads it, written
//! block style with comments where the tree has them.
//!
//! In: a [`Node`] tree. Out: YAML text that every YAML 1.1 and 1.2 reader (Kubernetes's
//! go-yaml, libyaml, ruamel) reads back as the same tree.
//!
//! A string is written plain only when it is a word no reader could take for anything else
//! (no bool, null or number look-alike, no indicator); any other single-line string is written
//! JSON-quoted, which YAML's double-quoted style reads back unchanged; a string of several lines
//! (a PEM key, a Rego module, a CEL expression) is a literal block.

/// A YAML value.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Str(String),
    Bool(bool),
    Int(u64),
    Seq(Vec<Node>),
    Map(Vec<Item>),
}

/// One line of a mapping: an entry, or a comment above the next one.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Entry(String, Node),
    Comment(String),
}

/// A mapping in the order given: `map([("a", x), ("b", y)])`.
pub fn map<K: Into<String>>(entries: impl IntoIterator<Item = (K, Node)>) -> Node {
    Node::Map(
        entries
            .into_iter()
            .map(|(k, v)| Item::Entry(k.into(), v))
            .collect(),
    )
}

pub fn s(text: impl Into<String>) -> Node {
    Node::Str(text.into())
}

/// A list of strings.
pub fn strs<S: AsRef<str>>(items: &[S]) -> Node {
    Node::Seq(items.iter().map(|i| s(i.as_ref())).collect())
}

impl Node {
    /// Adds a comment line above the entry `key` of this mapping (nothing for another node).
    pub fn comment_before(mut self, key: &str, comment: impl Into<String>) -> Node {
        if let Node::Map(items) = &mut self {
            if let Some(at) = items
                .iter()
                .position(|i| matches!(i, Item::Entry(k, _) if k == key))
            {
                items.insert(at, Item::Comment(comment.into()));
            }
        }
        self
    }
}

/// The document: `header` as comment lines (each prefixed `# `), then the tree.
pub fn document(header: &[String], root: &Node) -> String {
    let mut out = String::new();
    for line in header {
        if line.is_empty() {
            out.push_str("#\n");
        } else {
            out.push_str("# ");
            out.push_str(line);
            out.push('\n');
        }
    }
    write_block(&mut out, root, 0);
    out
}

/// `node` as the lines of a block collection at `indent`, or as a scalar line.
fn write_block(out: &mut String, node: &Node, indent: usize) {
    match node {
        Node::Map(items) if !items.is_empty() => write_map(out, items, indent),
        Node::Seq(items) if !items.is_empty() => write_seq(out, items, indent),
        scalar => {
            out.push_str(&" ".repeat(indent));
            write_inline(out, scalar, indent + 2);
            out.push('\n');
        }
    }
}

fn write_map(out: &mut String, items: &[Item], indent: usize) {
    let pad = " ".repeat(indent);
    for item in items {
        match item {
            Item::Comment(c) => {
                for line in c.lines() {
                    out.push_str(&pad);
                    out.push_str("# ");
                    out.push_str(line);
                    out.push('\n');
                }
            }
            Item::Entry(key, value) => {
                out.push_str(&pad);
                out.push_str(&scalar_text(key));
                out.push(':');
                write_value(out, value, indent);
            }
        }
    }
}

fn write_seq(out: &mut String, items: &[Node], indent: usize) {
    let pad = " ".repeat(indent);
    for item in items {
        out.push_str(&pad);
        out.push('-');
        match item {
            // A mapping's first entry goes on the dash's line, the rest under it.
            Node::Map(entries) if !entries.is_empty() => {
                let mut first = String::new();
                write_map(&mut first, entries, indent + 2);
                out.push(' ');
                out.push_str(&first[indent + 2..]);
            }
            // Anything else as it follows a key.
            other => write_value(out, other, indent),
        }
    }
}

/// What follows `key:` for `value`, the entry at `indent`.
fn write_value(out: &mut String, value: &Node, indent: usize) {
    match value {
        Node::Map(items) if !items.is_empty() => {
            out.push('\n');
            write_map(out, items, indent + 2);
        }
        Node::Seq(items) if !items.is_empty() => {
            out.push('\n');
            write_seq(out, items, indent + 2);
        }
        scalar => {
            out.push(' ');
            write_inline(out, scalar, indent + 2);
            out.push('\n');
        }
    }
}

/// A scalar, an empty collection, or a literal block whose lines sit at `indent`.
fn write_inline(out: &mut String, node: &Node, indent: usize) {
    match node {
        Node::Str(text) if is_literal(text) => write_literal(out, text, indent),
        Node::Str(text) => out.push_str(&scalar_text(text)),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Int(n) => out.push_str(&n.to_string()),
        Node::Seq(_) => out.push_str("[]"),
        Node::Map(_) => out.push_str("{}"),
    }
}

/// `|` and the text's lines at `indent` (without the line break `write_inline`'s caller adds).
fn write_literal(out: &mut String, text: &str, indent: usize) {
    let body = text.trim_end_matches('\n');
    let trailing = text.len() - body.len();
    out.push('|');
    // The first line with text sets the block's indentation: one that starts with a blank
    // needs the indentation said.
    if body
        .split('\n')
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with([' ', '\t']))
    {
        out.push('2');
    }
    match trailing {
        0 => out.push('-'),
        1 => {}
        _ => out.push('+'),
    }
    let pad = " ".repeat(indent);
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    for _ in 1..trailing {
        out.push('\n');
    }
}

/// Several lines of printable text (tabs too), written as a literal block; a line of only
/// blanks would read back empty, and any other control character needs quoting.
fn is_literal(text: &str) -> bool {
    text.contains('\n')
        && text
            .chars()
            .all(|c| c == '\n' || c == '\t' || !c.is_control())
        && !text
            .split('\n')
            .any(|l| !l.is_empty() && l.trim_start_matches([' ', '\t']).is_empty())
        && !text.starts_with('\n')
        && !text.contains('\u{feff}')
}

/// `text` plain when no reader could read it as anything but this string, else JSON-quoted.
fn scalar_text(text: &str) -> String {
    if is_plain(text) {
        text.to_string()
    } else {
        serde_json::Value::from(text).to_string()
    }
}

/// A word of letters, digits and `.`, `/`, `-`, `_` that starts with a letter and is not one
/// of YAML 1.1's booleans or nulls.
fn is_plain(text: &str) -> bool {
    const SPECIAL: [&str; 12] = [
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf", "~",
    ];
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_'))
        && !SPECIAL.contains(&text.to_ascii_lowercase().as_str())
}
