//! Whether a build or import failure at base is the bound test's own (book:
//! floor/attribution.md).
//!
//! A test file laid over base can fail to compile or import there for reasons that have nothing
//! to do with the bound test: another new test in the same file needs the new API, or base does
//! not build at all. Only a failure that lies in the test item itself counts as the test failing
//! at base; anything else leaves the test not observed there.
//!
//! In: the test item's name inside its file, the file's [`ItemMap`] (its test items and imports,
//! found with a real parser of the language by the runner adapter), and the diagnostics the
//! compiler or the import machinery reported, with positions.
//! Out: an [`Attribution`].
//!
//! Steps (the first that holds decides):
//! 1. no diagnostic has a position, or the item is not in the map → [`Attribution::Unknown`];
//! 2. a diagnostic lies inside the item's extent (its body, signature or attributes) →
//!    [`Attribution::InTest`];
//! 3. a diagnostic lies on an import whose bound names the item uses →
//!    [`Attribution::InUsedImport`]; when the diagnostic names what failed
//!    ([`Diagnostic::names`]: Python's `cannot import name 'x'`), only those names count, so a
//!    test that uses another name of the same statement (`from m import old, new`) is not
//!    taken for the one that needs `new`;
//! 4. otherwise → [`Attribution::Elsewhere`], naming the first diagnostic.
//!
//! This module is pure: parsing lives with the adapters, which know their language.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// A range of lines in a file, 1-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lines {
    pub start: u32,
    pub end: u32,
}

impl Lines {
    pub fn contains(&self, line: u32) -> bool {
        self.start <= line && line <= self.end
    }
}

/// One test item of a file: a `#[test]` function, a pytest function or method, a Go `TestX`
/// function, a JavaScript `it`/`test` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestItem {
    /// The item's name inside its file, as [`crate::floor::runners::TestItems::test_item`] maps a
    /// test id to it: `module::function` (Rust, without the crate), `Class::method` or
    /// `function` (Python), `TestName` (Go), `describe > test` title path (JavaScript).
    pub name: String,
    /// The item's extent, attributes and decorators included.
    pub lines: Lines,
    /// Every identifier the item mentions (paths and attribute chains contribute each segment),
    /// to match against the names imports bind.
    pub uses: BTreeSet<String>,
}

/// One import of a file and the names it binds there (`use a::{b, c as d}` binds `b` and `d`;
/// `from m import x` binds `x`; `import m` binds `m`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    pub lines: Lines,
    pub names: BTreeSet<String>,
}

/// A file's test items and imports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ItemMap {
    pub items: Vec<TestItem>,
    pub imports: Vec<Import>,
}

impl ItemMap {
    pub fn item(&self, name: &str) -> Option<&TestItem> {
        self.items.iter().find(|i| i.name == name)
    }

    /// The map a language's own parser printed as JSON (Go's `go/parser`, Python's `ast`).
    pub fn from_parsed(items: Vec<ParsedItem>, imports: Vec<ParsedImport>) -> ItemMap {
        ItemMap {
            items: items
                .into_iter()
                .map(|i| TestItem {
                    name: i.name,
                    lines: Lines {
                        start: i.start,
                        end: i.end,
                    },
                    uses: i.uses,
                })
                .collect(),
            imports: imports
                .into_iter()
                .map(|i| Import {
                    lines: Lines {
                        start: i.start,
                        end: i.end,
                    },
                    names: i.names,
                })
                .collect(),
        }
    }
}

/// A test item as a parser that runs outside the floor prints it: its name, its lines, the
/// names it uses.
#[derive(Debug, Deserialize)]
pub struct ParsedItem {
    pub name: String,
    pub start: u32,
    pub end: u32,
    pub uses: BTreeSet<String>,
}

/// An import as such a parser prints it: its lines and the names it binds.
#[derive(Debug, Deserialize)]
pub struct ParsedImport {
    pub start: u32,
    pub end: u32,
    pub names: BTreeSet<String>,
}

/// One error the compiler (or the import machinery) reported, at a position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Relative to the repository root, `/`-separated.
    pub file: String,
    /// 1-based.
    pub line: u32,
    pub column: Option<u32>,
    /// The first line of the message.
    pub message: String,
    /// The names the error says cannot be imported, where it says (`cannot import name 'x'`);
    /// empty when the whole statement failed (a module that is not there) or the compiler does
    /// not tell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
}

impl Diagnostic {
    pub fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// Whose failure a build or import failure at base is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Attribution {
    /// A diagnostic inside the test item: the test itself does not build against base.
    InTest { diagnostic: Diagnostic },
    /// A diagnostic at an import whose names the test item uses.
    InUsedImport {
        diagnostic: Diagnostic,
        names: Vec<String>,
    },
    /// Every diagnostic lies outside the test item: the test was never observed at base.
    Elsewhere { diagnostic: Diagnostic },
    /// Nothing to decide with.
    Unknown { reason: String },
}

impl Attribution {
    /// Whether the failure counts as the bound test failing at base.
    pub fn is_own(&self) -> bool {
        matches!(
            self,
            Attribution::InTest { .. } | Attribution::InUsedImport { .. }
        )
    }

    /// A phrase for reasons a person reads.
    pub fn describe(&self) -> String {
        match self {
            Attribution::InTest { diagnostic } => format!(
                "does not build at base in the test itself ({}: {})",
                diagnostic.at(),
                diagnostic.message
            ),
            Attribution::InUsedImport { diagnostic, names } => format!(
                "does not build at base: the import of {} it uses fails ({}: {})",
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                diagnostic.at(),
                diagnostic.message
            ),
            Attribution::Elsewhere { diagnostic } => format!(
                "never observed at base: its file does not build there because of {} ({}), outside the test",
                diagnostic.message,
                diagnostic.at()
            ),
            Attribution::Unknown { reason } => {
                format!("never observed at base: does not build there ({reason})")
            }
        }
    }
}

/// Decides whose failure it is (see the module doc). `file` is the test item's file, relative
/// to the repository root; `map` is that file's items and imports as base has the file.
pub fn attribute(file: &str, item: &str, map: &ItemMap, diagnostics: &[Diagnostic]) -> Attribution {
    let Some(first) = diagnostics.first() else {
        return Attribution::Unknown {
            reason: "the compiler reported no position".into(),
        };
    };
    let Some(it) = map.item(item) else {
        return Attribution::Unknown {
            reason: format!("`{item}` was not found in {file} by the parser"),
        };
    };
    let in_file = || diagnostics.iter().filter(|d| d.file == file);
    if let Some(d) = in_file().find(|d| it.lines.contains(d.line)) {
        return Attribution::InTest {
            diagnostic: d.clone(),
        };
    }
    for d in in_file() {
        for imp in map.imports.iter().filter(|i| i.lines.contains(d.line)) {
            let used: Vec<String> = imp
                .names
                .intersection(&it.uses)
                .filter(|n| d.names.is_empty() || d.names.contains(n))
                .cloned()
                .collect();
            if !used.is_empty() {
                return Attribution::InUsedImport {
                    diagnostic: d.clone(),
                    names: used,
                };
            }
        }
    }
    Attribution::Elsewhere {
        diagnostic: first.clone(),
    }
}

/// Decides whose failure it is when the item's file is not known for sure: a test id names a
/// test target's root file (`src/lib.rs`), while the item can live in a module file the
/// diagnostics point into. `item` is the runner's name for the test item (`None` where it
/// cannot name one); `maps` holds, per candidate file (the test's own file first, then each
/// file a diagnostic points into), its item map as base has it, `None` where it could not be
/// parsed. The first file whose map holds the item decides, through [`attribute`]; when none
/// holds it (a test a macro generates, a module file no error points into), nothing says where
/// the item is, and the failure is not its own.
pub fn attribute_in(
    item: Option<&str>,
    maps: &[(String, Option<ItemMap>)],
    diagnostics: &[Diagnostic],
) -> Attribution {
    let Some(item) = item else {
        return Attribution::Unknown {
            reason: "this runner cannot name the test item inside its file".into(),
        };
    };
    let Some(first) = diagnostics.first() else {
        return Attribution::Unknown {
            reason: "the compiler reported no position".into(),
        };
    };
    if let Some((file, map)) = maps.iter().find_map(|(f, m)| {
        m.as_ref()
            .filter(|m| m.item(item).is_some())
            .map(|m| (f, m))
    }) {
        return attribute(file, item, map, diagnostics);
    }
    let read: Vec<&str> = maps
        .iter()
        .filter(|(_, m)| m.is_some())
        .map(|(f, _)| f.as_str())
        .collect();
    let unread: Vec<&str> = maps
        .iter()
        .filter(|(_, m)| m.is_none())
        .map(|(f, _)| f.as_str())
        .collect();
    let looked = match (read.is_empty(), unread.is_empty()) {
        (true, true) => "no file to look in".to_string(),
        (false, true) => format!("not found in {}", read.join(", ")),
        (true, false) => format!("{} could not be parsed", unread.join(", ")),
        (false, false) => format!(
            "not found in {}, and {} could not be parsed",
            read.join(", "),
            unread.join(", ")
        ),
    };
    Attribution::Unknown {
        reason: format!(
            "`{item}`: {looked}; the first error is {} at {}",
            first.message,
            first.at()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: &[&str]) -> BTreeSet<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    fn map() -> ItemMap {
        ItemMap {
            items: vec![
                TestItem {
                    name: "tests::trivial".into(),
                    lines: Lines { start: 10, end: 13 },
                    uses: names(&["assert_eq"]),
                },
                TestItem {
                    name: "tests::uses_new".into(),
                    lines: Lines { start: 15, end: 19 },
                    uses: names(&["clamp", "assert_eq"]),
                },
            ],
            imports: vec![Import {
                lines: Lines { start: 2, end: 2 },
                names: names(&["clamp"]),
            }],
        }
    }

    fn diag(file: &str, line: u32) -> Diagnostic {
        Diagnostic {
            file: file.into(),
            line,
            column: Some(5),
            message: "cannot find function `clamp`".into(),
            names: Vec::new(),
        }
    }

    #[test]
    fn a_diagnostic_in_the_body_is_the_tests_own() {
        let a = attribute("t.rs", "tests::uses_new", &map(), &[diag("t.rs", 17)]);
        assert!(matches!(a, Attribution::InTest { .. }), "{a:?}");
        assert!(a.is_own());
    }

    #[test]
    fn a_diagnostic_in_a_neighbour_is_not() {
        let a = attribute("t.rs", "tests::trivial", &map(), &[diag("t.rs", 17)]);
        assert!(matches!(a, Attribution::Elsewhere { .. }), "{a:?}");
        assert!(!a.is_own());
        assert!(a.describe().contains("t.rs:17"), "{}", a.describe());
    }

    #[test]
    fn an_import_counts_only_for_a_test_that_uses_its_names() {
        let d = [diag("t.rs", 2)];
        let used = attribute("t.rs", "tests::uses_new", &map(), &d);
        assert_eq!(
            used,
            Attribution::InUsedImport {
                diagnostic: d[0].clone(),
                names: vec!["clamp".into()]
            }
        );
        let unused = attribute("t.rs", "tests::trivial", &map(), &d);
        assert!(
            matches!(unused, Attribution::Elsewhere { .. }),
            "{unused:?}"
        );
    }

    #[test]
    fn only_the_names_that_failed_count_when_the_diagnostic_names_them() {
        // `from m import assert_eq, clamp` fails on `clamp` alone: the trivial test uses
        // `assert_eq` of the same statement, and that is not its failure.
        let mut m = map();
        m.imports[0].names = names(&["assert_eq", "clamp"]);
        let mut d = diag("t.rs", 2);
        d.names = vec!["clamp".into()];
        let trivial = attribute("t.rs", "tests::trivial", &m, std::slice::from_ref(&d));
        assert!(
            matches!(trivial, Attribution::Elsewhere { .. }),
            "{trivial:?}"
        );
        let uses = attribute("t.rs", "tests::uses_new", &m, std::slice::from_ref(&d));
        assert!(
            matches!(&uses, Attribution::InUsedImport { names, .. } if names == &["clamp"]),
            "{uses:?}"
        );
        // Without names, every name of the statement counts.
        d.names.clear();
        assert!(attribute("t.rs", "tests::trivial", &m, &[d]).is_own());
    }

    #[test]
    fn a_diagnostic_in_another_file_is_not_the_tests_own() {
        // Same line number, other file: base's own source does not build.
        let a = attribute("t.rs", "tests::uses_new", &map(), &[diag("src/lib.rs", 17)]);
        assert!(matches!(a, Attribution::Elsewhere { .. }), "{a:?}");
    }

    #[test]
    fn nothing_to_decide_with_is_unknown() {
        assert!(matches!(
            attribute("t.rs", "tests::uses_new", &map(), &[]),
            Attribution::Unknown { .. }
        ));
        assert!(matches!(
            attribute("t.rs", "tests::gone", &map(), &[diag("t.rs", 17)]),
            Attribution::Unknown { .. }
        ));
    }

    #[test]
    fn the_file_that_holds_the_item_decides() {
        let other = ItemMap::default();
        let d = [diag("src/util.rs", 17)];
        // The id names the crate root; the item lives in the module file the error is in.
        let maps = vec![
            ("src/lib.rs".to_string(), Some(other.clone())),
            ("src/util.rs".to_string(), Some(map())),
        ];
        let a = attribute_in(Some("tests::uses_new"), &maps, &d);
        assert!(matches!(a, Attribution::InTest { .. }), "{a:?}");
        // The item is in no file read (made by a macro, or in a module file no error points
        // into): nothing says where it is.
        let maps = vec![("src/lib.rs".to_string(), Some(other.clone()))];
        let a = attribute_in(Some("tests::uses_new"), &maps, &d);
        assert!(matches!(a, Attribution::Unknown { .. }), "{a:?}");
        assert!(
            a.describe().contains("not found in src/lib.rs"),
            "{}",
            a.describe()
        );
        assert!(a.describe().contains("src/util.rs:17"), "{}", a.describe());
        // A file that did not parse, no name for the item, no position, no file: unknown.
        let maps = vec![
            ("src/lib.rs".to_string(), Some(other)),
            ("src/util.rs".to_string(), None),
        ];
        for a in [
            attribute_in(Some("tests::uses_new"), &maps, &d),
            attribute_in(None, &maps, &d),
            attribute_in(Some("tests::uses_new"), &maps, &[]),
            attribute_in(Some("tests::uses_new"), &[], &d),
        ] {
            assert!(matches!(a, Attribution::Unknown { .. }), "{a:?}");
            assert!(!a.is_own());
        }
    }

    #[test]
    fn own_in_the_body_wins_over_a_neighbours_error_listed_first() {
        let a = attribute(
            "t.rs",
            "tests::uses_new",
            &map(),
            &[diag("t.rs", 11), diag("t.rs", 18)],
        );
        assert!(
            matches!(&a, Attribution::InTest { diagnostic } if diagnostic.line == 18),
            "{a:?}"
        );
    }
}
