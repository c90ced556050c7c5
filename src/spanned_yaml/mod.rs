//! Reading a YAML file with every node's line and column, and validating it against a schema so
//! that every problem is reported at once, each at its position with a fix.
//!
//! The acceptance file ([`crate::acceptance`]) and the admission policy ([`crate::admit`]) are
//! both read this way, so a wrong type or an unknown key reads the same in either. Each writes
//! its own schema, keys and messages on top of these parts:
//! - [`tree`]: YAML events → a spanned tree ([`build_tree_of`]), with the YAML features no file
//!   of ours needs (anchors, aliases, tags, a second document) reported;
//! - [`scalar`]: what a scalar is under the YAML 1.2 core schema, and how a node is shown in a
//!   message;
//! - [`validator`]: the [`Validator`], which collects the problems: unknown keys with a
//!   did-you-mean, and the typed readers.
//!
//! Nothing here knows a schema: a file's name in messages comes from its [`FileKind`].

pub(crate) mod scalar;
pub(crate) mod tree;
pub(crate) mod validator;

pub(crate) use scalar::{core_int, describe, is_null, scalar_text, short};
pub(crate) use tree::{build_tree_of, Entry, Fatal, FileKind, Kind, Node, Pos, Problem};
pub(crate) use validator::Validator;
