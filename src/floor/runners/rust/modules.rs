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
        let cfg_test = test_only || m.attrs.iter().any(super::items::is_cfg_test);
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
mod tests;
