//! Step 1 of parsing an acceptance file: YAML events → a spanned tree, read by
//! [`crate::spanned_yaml`] with its messages naming the acceptance file.
//!
//! Duplicate keys, anchors, aliases, tags and extra documents are reported there. A syntax error
//! stops everything: it is reported once, at the parser's position, because nothing after it can
//! be trusted.

use crate::spanned_yaml::{build_tree_of, Fatal, FileKind, Node, Problem};

const ACCEPTANCE_FILE: FileKind = FileKind {
    name: "acceptance file",
    schema: "acceptance schema",
};

/// Folds the parser's events into a tree; `Ok(None)` when the file holds no document at all.
pub(crate) fn build_tree(text: &str, problems: &mut Vec<Problem>) -> Result<Option<Node>, Fatal> {
    build_tree_of(text, ACCEPTANCE_FILE, problems)
}

#[cfg(test)]
#[path = "yaml_tests.rs"]
mod tests;
