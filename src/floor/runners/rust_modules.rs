//! Where a Rust file sits in its crate's module tree, resolved as rustc resolves `mod` items
//! (the Reference, "Modules" and "The `path` attribute"), for the item map that attributes a
//! build failure at base and for deciding which files are test code as a whole (the book's
//! floor page, "A test that does not compile at base").
//!
//! In: the crate roots (every target's root file: `src/lib.rs`, `src/main.rs`, `src/bin/*.rs`,
//! `tests/*.rs`, a `[[test]] path`, as `cargo metadata` lists them) and a reader of the files of
//! one tree (a worktree, or a commit). Out: a [`ModuleTree`]: for each file reached from a root,
//! its [`Place`]s: the root, the module path inside that crate (`tests::recursive::`), and
//! whether it is compiled only for tests (some `mod` on the way carries `#[cfg(test)]`).
//!
//! Steps, from every root, breadth first:
//! 1. parse the file (`syn`); a file that does not parse, or cannot be read, adds no children;
//! 2. for every `mod NAME;` at any depth of the file's inline modules, the file it names:
//!    - with `#[path = "P"]` outside an inline module: `P` beside the declaring file;
//!    - with `#[path = "P"]` inside inline modules `a::b`: `DIR/a/b/P`, where `DIR` is the
//!      declaring file's directory for a mod-rs file (a crate root, a `mod.rs`, or a file loaded
//!      through `#[path]`) and that directory plus the file's stem for any other file;
//!    - without: `DIR/a/b/NAME.rs`, else `DIR/a/b/NAME/mod.rs`, `DIR` as above;
//! 3. the child's module path is the declaring module's path plus the inline modules and
//!    `NAME`; it is test-only when its parent is, or when the `mod` item or an inline module
//!    around it carries `#[cfg(test)]` (or `#[cfg(all(…, test, …))]`);
//! 4. a file reached again (two roots, a `#[path]` shared by two modules) gains another place.
//!
//! The walk reads only files a `mod` names, so a crate's unrelated files cost nothing; a cycle
//! of `#[path]`s ends at the first file seen twice on one path.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use syn::Item;

/// One place a file has in a crate.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    /// The crate root the file is reached from, relative to the tree.
    pub root: String,
    /// The module path inside the crate with a trailing `::`, empty for the root itself.
    pub path: String,
    /// Whether every way to this file passes a `#[cfg(test)]`: the file is compiled only for
    /// tests.
    pub test_only: bool,
}

/// Every file reached from the roots, with its places (see the module doc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleTree {
    pub files: BTreeMap<String, Vec<Place>>,
}

impl ModuleTree {
    /// The places of a file (relative to the tree), empty when no root reaches it.
    pub fn places(&self, file: &str) -> &[Place] {
        self.files.get(file).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Whether the file is reached, and only ever as test code.
    pub fn is_test_only(&self, file: &str) -> bool {
        let places = self.places(file);
        !places.is_empty() && places.iter().all(|p| p.test_only)
    }
}

/// One file to visit: where it sits, and whether it owns its directory (mod-rs).
struct Visit {
    file: String,
    place: Place,
    mod_rs: bool,
}

/// Walks the module tree from `roots` (see the module doc). `read` gives a file's text by its
/// path relative to the tree, `None` where there is none.
pub fn resolve(roots: &[String], read: &dyn Fn(&str) -> Option<String>) -> ModuleTree {
    let mut tree = ModuleTree::default();
    let mut queue: VecDeque<Visit> = roots
        .iter()
        .map(|r| Visit {
            file: r.clone(),
            place: Place {
                root: r.clone(),
                path: String::new(),
                test_only: false,
            },
            mod_rs: true,
        })
        .collect();
    let mut seen: BTreeSet<(String, String, String)> = BTreeSet::new();
    while let Some(v) = queue.pop_front() {
        let Some(text) = read(&v.file) else {
            continue;
        };
        // A file gets one visit per place; a `#[path]` cycle grows the module path forever, so
        // a file met again under the same root ends the walk there.
        let again = tree
            .files
            .get(&v.file)
            .is_some_and(|ps| ps.iter().any(|p| p.root == v.place.root));
        if !seen.insert((v.file.clone(), v.place.root.clone(), v.place.path.clone())) {
            continue;
        }
        tree.files
            .entry(v.file.clone())
            .or_default()
            .push(v.place.clone());
        if again {
            continue;
        }
        let Ok(file) = syn::parse_file(strip_shebang(&text)) else {
            continue;
        };
        proc_macro2::extra::invalidate_current_thread_spans();
        let mut decls = Vec::new();
        declarations(&file.items, &[], false, &mut decls);
        let (dir, stem) = split_file(&v.file);
        for d in decls {
            let owner = if v.mod_rs {
                dir.to_string()
            } else {
                join(dir, stem)
            };
            let inline = d.inline.join("/");
            let candidates: Vec<(String, bool)> = match (&d.path_attr, d.inline.is_empty()) {
                (Some(p), true) => vec![(join(dir, p), true)],
                (Some(p), false) => vec![(join(&join(&owner, &inline), p), true)],
                (None, _) => {
                    let at = join(&owner, &inline);
                    vec![
                        (join(&at, &format!("{}.rs", d.name)), false),
                        (join(&join(&at, &d.name), "mod.rs"), true),
                    ]
                }
            };
            let Some((child, mod_rs)) = candidates
                .iter()
                .find(|(c, _)| read(c).is_some())
                .or(candidates.first())
                .cloned()
            else {
                continue;
            };
            let mut path = v.place.path.clone();
            for m in d.inline.iter().chain(std::iter::once(&d.name)) {
                path.push_str(m);
                path.push_str("::");
            }
            queue.push_back(Visit {
                file: normalize(&child),
                place: Place {
                    root: v.place.root.clone(),
                    path,
                    test_only: v.place.test_only || d.test_only,
                },
                mod_rs,
            });
        }
    }
    for places in tree.files.values_mut() {
        places.sort();
        places.dedup();
    }
    tree
}

/// A `mod NAME;` item and where it sits in its file.
struct Declaration {
    /// The inline modules around it, outermost first.
    inline: Vec<String>,
    name: String,
    path_attr: Option<String>,
    test_only: bool,
}

fn declarations(items: &[Item], inline: &[String], test_only: bool, out: &mut Vec<Declaration>) {
    for item in items {
        let Item::Mod(m) = item else {
            continue;
        };
        let cfg_test = test_only || m.attrs.iter().any(super::rust_items::is_cfg_test);
        let path_attr = m.attrs.iter().find_map(path_attr);
        match &m.content {
            None => out.push(Declaration {
                inline: inline.to_vec(),
                name: m.ident.to_string(),
                path_attr,
                test_only: cfg_test,
            }),
            Some((_, inner)) => {
                // `#[path]` on an inline module names the directory its children resolve in.
                let mut scope = inline.to_vec();
                scope.push(path_attr.unwrap_or_else(|| m.ident.to_string()));
                declarations(inner, &scope, cfg_test, out);
            }
        }
    }
}

/// `#[path = "…"]`.
fn path_attr(a: &syn::Attribute) -> Option<String> {
    if !a.path().is_ident("path") {
        return None;
    }
    let syn::Meta::NameValue(nv) = &a.meta else {
        return None;
    };
    match &nv.value {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Some(s.value()),
        _ => None,
    }
}

fn strip_shebang(text: &str) -> &str {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match text.strip_prefix("#!") {
        Some(after) if !after.trim_start().starts_with('[') => {
            &text[text.find('\n').unwrap_or(text.len())..]
        }
        _ => text,
    }
}

/// A file's directory (empty at the top) and its stem.
fn split_file(file: &str) -> (&str, &str) {
    let (dir, name) = file.rsplit_once('/').unwrap_or(("", file));
    (dir, name.strip_suffix(".rs").unwrap_or(name))
}

fn join(dir: &str, rest: &str) -> String {
    match (dir.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_string(),
        (_, true) => dir.to_string(),
        _ => format!("{dir}/{rest}"),
    }
}

/// Resolves `.` and `..` in a relative path (a `#[path = "../x.rs"]`); a path that climbs out of
/// the tree keeps its leading `..`, which no reader of the tree finds.
fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if matches!(out.last(), None | Some(&"..")) {
                    out.push("..");
                } else {
                    out.pop();
                }
            }
            p => out.push(p),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)], roots: &[&str]) -> ModuleTree {
        let files: BTreeMap<String, String> = files
            .iter()
            .map(|(p, t)| (p.to_string(), t.to_string()))
            .collect();
        let roots: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
        resolve(&roots, &|p| files.get(p).cloned())
    }

    fn place(t: &ModuleTree, file: &str) -> Vec<(String, bool)> {
        t.places(file)
            .iter()
            .map(|p| (p.path.clone(), p.test_only))
            .collect()
    }

    #[test]
    fn modules_resolve_as_rustc_resolves_them() {
        let t = tree(
            &[
                ("src/lib.rs", "#[cfg(test)]\nmod tests;\npub mod a;\nmod outer { pub mod inner; }\n#[path = \"elsewhere/p.rs\"]\nmod p;\n"),
                ("src/tests/mod.rs", "mod recursive;\nmod deep;\n"),
                ("src/tests/recursive.rs", "#[test] fn x() {}\n"),
                ("src/tests/deep.rs", "mod deeper;\n"),
                // A non-mod-rs file owns the directory named after it.
                ("src/tests/deep/deeper.rs", ""),
                ("src/a.rs", "pub mod b;\n#[cfg(all(unix, test))]\nmod t;\n"),
                ("src/a/b.rs", ""),
                ("src/a/t.rs", ""),
                ("src/outer/inner.rs", ""),
                // A file loaded through `#[path]` is mod-rs: its children sit beside it.
                ("src/elsewhere/p.rs", "mod q;\n"),
                ("src/elsewhere/q.rs", ""),
                ("src/unreached.rs", ""),
            ],
            &["src/lib.rs"],
        );
        let want = [
            ("src/lib.rs", "", false),
            ("src/tests/mod.rs", "tests::", true),
            ("src/tests/recursive.rs", "tests::recursive::", true),
            ("src/tests/deep/deeper.rs", "tests::deep::deeper::", true),
            ("src/a.rs", "a::", false),
            ("src/a/b.rs", "a::b::", false),
            ("src/a/t.rs", "a::t::", true),
            ("src/outer/inner.rs", "outer::inner::", false),
            ("src/elsewhere/p.rs", "p::", false),
            ("src/elsewhere/q.rs", "p::q::", false),
        ];
        for (file, path, test_only) in want {
            assert_eq!(
                place(&t, file),
                [(path.to_string(), test_only)],
                "{file}: {t:#?}"
            );
        }
        assert!(t.places("src/unreached.rs").is_empty());
        assert!(t.is_test_only("src/tests/recursive.rs"));
        assert!(!t.is_test_only("src/a.rs"));
        assert!(!t.is_test_only("src/unreached.rs"));
    }

    #[test]
    fn path_attributes_inside_inline_modules_and_mod_rs_fallback() {
        let t = tree(
            &[
                (
                    "src/main.rs",
                    "mod a {\n    #[path = \"x.rs\"]\n    mod b;\n    #[cfg(test)]\n    mod tests { mod helpers; }\n}\nmod c;\n",
                ),
                ("src/a/x.rs", ""),
                ("src/a/tests/helpers.rs", ""),
                ("src/c/mod.rs", "#[path = \"../../common/s.rs\"]\nmod s;\n"),
                ("common/s.rs", ""),
                ("src/bin/tool.rs", "mod m { #[path = \"y.rs\"] mod n; }\nmod d;\n"),
                ("src/bin/m/y.rs", ""),
                // In a non-mod-rs file, `#[path]` inside an inline module starts at the
                // directory named after the file.
                ("src/bin/d.rs", "mod m { #[path = \"y.rs\"] mod n; }\n"),
                ("src/bin/d/m/y.rs", ""),
            ],
            &["src/main.rs", "src/bin/tool.rs"],
        );
        assert_eq!(place(&t, "src/a/x.rs"), [("a::b::".into(), false)]);
        assert_eq!(
            place(&t, "src/a/tests/helpers.rs"),
            [("a::tests::helpers::".into(), true)]
        );
        assert_eq!(place(&t, "src/c/mod.rs"), [("c::".into(), false)]);
        assert_eq!(place(&t, "common/s.rs"), [("c::s::".into(), false)]);
        // A binary's root is mod-rs, whatever its name.
        assert_eq!(place(&t, "src/bin/m/y.rs"), [("m::n::".into(), false)]);
        assert_eq!(place(&t, "src/bin/d/m/y.rs"), [("d::m::n::".into(), false)]);
    }

    #[test]
    fn a_file_reached_twice_has_both_places_and_cycles_end() {
        let t = tree(
            &[
                ("src/lib.rs", "mod shared;\n"),
                (
                    "src/main.rs",
                    "#[cfg(test)]\n#[path = \"shared.rs\"]\nmod s;\n",
                ),
                ("src/shared.rs", "#[path = \"shared.rs\"]\nmod again;\n"),
            ],
            &["src/lib.rs", "src/main.rs"],
        );
        let places = place(&t, "src/shared.rs");
        assert!(places.contains(&("shared::".into(), false)), "{places:?}");
        assert!(places.contains(&("s::".into(), true)), "{places:?}");
        // Reached outside tests once: not test-only.
        assert!(!t.is_test_only("src/shared.rs"));
    }

    #[test]
    fn unreadable_and_unparsable_files_add_no_children() {
        let t = tree(
            &[
                ("src/lib.rs", "mod a;\nmod missing;\n"),
                ("src/a.rs", "mod b; fn ("),
            ],
            &["src/lib.rs"],
        );
        assert_eq!(place(&t, "src/a.rs"), [("a::".into(), false)]);
        assert!(t.places("src/missing.rs").is_empty());
        assert!(t.places("src/a/b.rs").is_empty());
        assert_eq!(normalize("src/c/../../common/./s.rs"), "common/s.rs");
        assert_eq!(normalize("../x.rs"), "../x.rs");
    }
}
