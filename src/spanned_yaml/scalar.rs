//! What a scalar is under the YAML 1.2 core schema (null, boolean, integer), asked only where a
//! schema wants a type, and how a node is shown in a message (`found the string `x``).

use saphyr_parser::ScalarStyle;

use super::tree::{Kind, Node};

pub(crate) fn is_null(node: &Node) -> bool {
    matches!(&node.kind, Kind::Scalar { text, style: ScalarStyle::Plain }
        if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL"))
}

pub(crate) fn core_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// A core-schema integer (`12`, `-3`, `0o17`, `0x1F`); `None` for anything else or an overflow.
pub(crate) fn core_int(text: &str) -> Option<i128> {
    let digits_in = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    if let Some(oct) = text.strip_prefix("0o") {
        return digits_in(oct, 8)
            .then(|| i128::from_str_radix(oct, 8).ok())
            .flatten();
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return digits_in(hex, 16)
            .then(|| i128::from_str_radix(hex, 16).ok())
            .flatten();
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits_in(unsigned, 10)
        .then(|| text.parse::<i128>().ok())
        .flatten()
}

fn looks_numeric(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    core_int(text).is_some()
        || matches!(unsigned, ".inf" | ".Inf" | ".INF")
        || matches!(text, ".nan" | ".NaN" | ".NAN")
        || (text.chars().any(|c| c.is_ascii_digit()) && text.parse::<f64>().is_ok())
}

/// Shortens a value for a message: one line, at most 40 characters.
pub(crate) fn short(text: &str) -> String {
    let one_line = text.trim().replace('\n', "\\n");
    if one_line.chars().count() > 40 {
        let head: String = one_line.chars().take(37).collect();
        format!("{head}...")
    } else {
        one_line
    }
}

/// What a node is, for "found ..." in messages.
pub(crate) fn describe(node: &Node) -> String {
    match &node.kind {
        Kind::Map(_) => "a mapping".to_string(),
        Kind::Seq(_) => "a sequence".to_string(),
        Kind::Rejected => "an alias".to_string(),
        Kind::Scalar { text, style } => match style {
            _ if is_null(node) => "nothing (null)".to_string(),
            ScalarStyle::Plain if core_bool(text).is_some() => format!("the boolean `{text}`"),
            ScalarStyle::Plain if looks_numeric(text) => format!("the number `{text}`"),
            ScalarStyle::Plain => format!("the string `{}`", short(text)),
            ScalarStyle::SingleQuoted => format!("the quoted string `'{}'`", short(text)),
            ScalarStyle::DoubleQuoted => format!("the quoted string `\"{}\"`", short(text)),
            ScalarStyle::Literal | ScalarStyle::Folded => {
                format!("the block string `{}`", short(text))
            }
        },
    }
}

pub(crate) fn scalar_text(node: &Node) -> Option<&str> {
    match &node.kind {
        Kind::Scalar { text, .. } => Some(text),
        _ => None,
    }
}
