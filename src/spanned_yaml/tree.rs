//! YAML events → a spanned tree.
//!
//! `saphyr-parser` events are folded into a small tree of mappings, sequences and scalars, each
//! node with its 1-based line and column, and each mapping entry with its key's own position.
//! Duplicate keys, anchors, aliases, tags and extra documents are reported here. A syntax error
//! stops everything: it is reported once, at the parser's position, because nothing after it can
//! be trusted. Messages name the file as its [`FileKind`] says (the acceptance file, the
//! admission policy).
use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span, Tag};

// ---------------------------------------------------------------------------------------------
// Positions and problems
// ---------------------------------------------------------------------------------------------

/// A 1-based line and column (columns count characters, as editors do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Pos {
    pub(crate) line: usize,
    pub(crate) col: usize,
}

impl Pos {
    pub(crate) const START: Pos = Pos { line: 1, col: 1 };

    fn of(span: &Span) -> Pos {
        // saphyr's lines are 1-based but its columns 0-based.
        Pos {
            line: span.start.line().max(1),
            col: span.start.col() + 1,
        }
    }
}

/// One thing wrong with the file; becomes an [`InputError`](crate::error::InputError) once the
/// file name is attached.
#[derive(Debug)]
pub(crate) struct Problem {
    pub(crate) pos: Pos,
    pub(crate) message: String,
    pub(crate) help: String,
}

impl Problem {
    pub(crate) fn new(pos: Pos, message: impl Into<String>, help: impl Into<String>) -> Problem {
        Problem {
            pos,
            message: message.into(),
            help: help.into(),
        }
    }
}

/// Marks a problem after which the tree cannot be built (already recorded as a [`Problem`]).
#[derive(Debug)]
pub(crate) struct Fatal;

// ---------------------------------------------------------------------------------------------
// The spanned tree
// ---------------------------------------------------------------------------------------------

/// The schema nests five levels at most; the cap keeps hostile input from building a tree so deep
/// that dropping it (which recurses) would overflow the stack.
const MAX_DEPTH: usize = 64;

/// What `saphyr-parser`'s scanner says at 256 levels of flow nesting (its level is a `u8`).
const SCANNER_DEPTH_LIMIT: &str = "recursion limit exceeded";

#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) pos: Pos,
    pub(crate) kind: Kind,
}

#[derive(Debug)]
pub(crate) enum Kind {
    Scalar {
        text: String,
        style: ScalarStyle,
    },
    Seq(Vec<Node>),
    Map(Vec<Entry>),
    /// Stands in for an alias, already reported: the validator skips it so that one mistake is
    /// not reported twice.
    Rejected,
}

#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) key: String,
    pub(crate) key_pos: Pos,
    pub(crate) value: Node,
}

/// What the next node in a mapping becomes: the value of `Key`, or dropped (`Skip`) because its
/// key was a duplicate or not a scalar, both already reported.
enum Slot {
    Key(String, Pos),
    Skip,
}

enum Frame {
    Seq {
        pos: Pos,
        items: Vec<Node>,
    },
    Map {
        pos: Pos,
        entries: Vec<Entry>,
        slot: Option<Slot>,
        first_seen: HashMap<String, Pos>,
    },
}

/// The kind of file a tree is built from, as messages name it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileKind {
    /// After "the" and "an" (`acceptance file`), so it starts with a vowel.
    pub(crate) name: &'static str,
    /// What says how deep it nests (`acceptance schema`).
    pub(crate) schema: &'static str,
}

struct TreeBuilder {
    file_kind: FileKind,
    stack: Vec<Frame>,
    root: Option<Node>,
    documents: usize,
    problems: Vec<Problem>,
}

/// Folds the parser's events into a tree, naming the file in messages as `file_kind` says;
/// `Ok(None)` when the file holds no document at all.
pub(crate) fn build_tree_of(
    text: &str,
    file_kind: FileKind,
    problems: &mut Vec<Problem>,
) -> Result<Option<Node>, Fatal> {
    let mut b = TreeBuilder {
        file_kind,
        stack: Vec::new(),
        root: None,
        documents: 0,
        problems: Vec::new(),
    };
    let result = b.run(text);
    problems.append(&mut b.problems);
    result.map(|()| b.root)
}

impl TreeBuilder {
    fn run(&mut self, text: &str) -> Result<(), Fatal> {
        for event in Parser::new_from_str(text) {
            let (event, span) = match event {
                Ok(ok) => ok,
                Err(e) => {
                    let pos = Pos {
                        line: e.marker().line().max(1),
                        col: e.marker().col() + 1,
                    };
                    // The parser's scanner looks ahead through flow nesting (`[[[…`) and
                    // refuses its 256th level before the tree sees its 65th: the same problem.
                    let problem = if e.info() == SCANNER_DEPTH_LIMIT {
                        self.too_deep(pos)
                    } else {
                        Problem::new(
                            pos,
                            format!("invalid YAML: {}", e.info()),
                            "fix the YAML syntax at this position",
                        )
                    };
                    self.problems.push(problem);
                    return Err(Fatal);
                }
            };
            let pos = Pos::of(&span);
            match event {
                Event::DocumentStart(_) => {
                    self.documents += 1;
                    if self.documents == 2 {
                        self.problems.push(Problem::new(
                            pos,
                            format!(
                                "the {} holds more than one YAML document (a second `---`)",
                                self.file_kind.name
                            ),
                            "keep a single document: remove this `---` and merge what follows into the first",
                        ));
                    }
                }
                Event::Scalar(text, style, anchor, tag) => {
                    self.check_properties(pos, anchor, tag.as_deref());
                    let text = text.into_owned();
                    self.emit(Node {
                        pos,
                        kind: Kind::Scalar { text, style },
                    });
                }
                Event::Alias(_) => {
                    self.problems.push(Problem::new(
                        pos,
                        format!(
                            "aliases (`*name`) are not supported in an {}",
                            self.file_kind.name
                        ),
                        "write the value out in full here instead of referring to an anchor",
                    ));
                    self.emit(Node {
                        pos,
                        kind: Kind::Rejected,
                    });
                }
                Event::SequenceStart(anchor, tag) => {
                    self.check_properties(pos, anchor, tag.as_deref());
                    self.push(
                        pos,
                        Frame::Seq {
                            pos,
                            items: Vec::new(),
                        },
                    )?;
                }
                Event::MappingStart(anchor, tag) => {
                    self.check_properties(pos, anchor, tag.as_deref());
                    self.push(
                        pos,
                        Frame::Map {
                            pos,
                            entries: Vec::new(),
                            slot: None,
                            first_seen: HashMap::new(),
                        },
                    )?;
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    if let Some(frame) = self.stack.pop() {
                        let node = match frame {
                            Frame::Seq { pos, items } => Node {
                                pos,
                                kind: Kind::Seq(items),
                            },
                            Frame::Map { pos, entries, .. } => Node {
                                pos,
                                kind: Kind::Map(entries),
                            },
                        };
                        self.emit(node);
                    }
                }
                Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
            }
        }
        Ok(())
    }

    fn push(&mut self, pos: Pos, frame: Frame) -> Result<(), Fatal> {
        if self.stack.len() >= MAX_DEPTH {
            let problem = self.too_deep(pos);
            self.problems.push(problem);
            return Err(Fatal);
        }
        self.stack.push(frame);
        Ok(())
    }

    fn too_deep(&self, pos: Pos) -> Problem {
        Problem::new(
            pos,
            format!(
                "the {} nests deeper than {MAX_DEPTH} levels",
                self.file_kind.name
            ),
            format!(
                "the {} nests at most five levels; remove the extra nesting",
                self.file_kind.schema
            ),
        )
    }

    /// Anchors and tags are YAML features no acceptance file or policy needs; rejecting them
    /// keeps what the reviewer reads identical to what shipmoor reads.
    fn check_properties(&mut self, pos: Pos, anchor: usize, tag: Option<&Tag>) {
        if anchor != 0 {
            self.problems.push(Problem::new(
                pos,
                format!(
                    "anchors (`&name`) are not supported in an {}",
                    self.file_kind.name
                ),
                "remove the anchor and write the value out in full wherever it is used",
            ));
        }
        if let Some(tag) = tag {
            let shown = if tag.is_yaml_core_schema() {
                format!("!!{}", tag.suffix)
            } else if tag.handle == "!" {
                format!("!{}", tag.suffix)
            } else {
                format!("!<{}{}>", tag.handle, tag.suffix)
            };
            self.problems.push(Problem::new(
                pos,
                format!(
                    "YAML tags (`{shown}`) are not supported in an {}",
                    self.file_kind.name
                ),
                "remove the tag; quote the value if it must be read as a string",
            ));
        }
    }

    /// Places a finished node: as the document root, a sequence item, a mapping key or a value.
    fn emit(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => {
                // Only the first document counts; later ones were reported at their `---`.
                if self.documents <= 1 && self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries,
                slot,
                first_seen,
                ..
            }) => match slot.take() {
                None => {
                    let next = match node.kind {
                        Kind::Scalar { text, .. } => {
                            if let Some(first) = first_seen.get(&text) {
                                self.problems.push(Problem::new(
                                    node.pos,
                                    format!(
                                        "duplicate key `{text}` (first on line {})",
                                        first.line
                                    ),
                                    format!("remove one of the two `{text}` keys"),
                                ));
                                Slot::Skip
                            } else {
                                first_seen.insert(text.clone(), node.pos);
                                Slot::Key(text, node.pos)
                            }
                        }
                        Kind::Rejected => Slot::Skip,
                        Kind::Seq(_) | Kind::Map(_) => {
                            self.problems.push(Problem::new(
                                node.pos,
                                "a mapping key must be a plain word, not a sequence or mapping",
                                "write the key as a single word followed by `:`",
                            ));
                            Slot::Skip
                        }
                    };
                    *slot = Some(next);
                }
                Some(Slot::Key(key, key_pos)) => entries.push(Entry {
                    key,
                    key_pos,
                    value: node,
                }),
                Some(Slot::Skip) => {}
            },
        }
    }
}
