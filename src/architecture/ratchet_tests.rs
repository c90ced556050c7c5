//! Ratchets: checks whose offenders today are listed by name, one per line, in an allowlist
//! beside each check. A new offender fails the check, and so does a listed one that no longer
//! offends, so that each list only shrinks: delete an entry's line once its offence is gone.
//! Test code is left out, as in the layer check.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;
use syn::visit::Visit;

use super::tests::{is_test_attr, modules, use_paths, ModPath};

/// Crate-internal glob imports outside test code, as `file: use path::*` (see
/// [`no_crate_glob_imports_outside_tests`]).
const GLOB_IMPORTS: &[&str] = &[];

/// Source files over 1,000 lines outside their test items (see
/// [`no_source_file_is_over_a_thousand_lines_before_its_tests`]).
const LONG_FILES: &[&str] = &[];

/// Production functions over 150 lines, as `file: fn` (see [`no_function_is_over_150_lines`]).
const LONG_FUNCTIONS: &[&str] = &[];

/// Files whose production code spells a `Result` with `String` as its error (see
/// [`no_string_errors_in_production`]).
const STRING_ERRORS: &[&str] = &[];

/// The repository's root: allowlist entries name files from it (`src/floor/mod.rs`).
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every production source file: its module path, its path from the root, its text and its
/// syntax tree.
fn sources() -> Vec<(ModPath, String, String, syn::File)> {
    let src = root().join("src");
    modules(&src)
        .into_iter()
        .map(|(m, file): (ModPath, PathBuf)| {
            let text = std::fs::read_to_string(&file).expect("source file");
            let parsed = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", file.display()));
            let rel = file.strip_prefix(root()).unwrap_or(&file);
            (m, rel.display().to_string(), text, parsed)
        })
        .collect()
}

/// Compares what a check found with its allowlist `list`: the entries found but not listed are
/// new offenders, those listed but not found no longer offend. Either fails.
fn ratchet(list: &str, found: &BTreeMap<String, String>, known: &[&str]) {
    let listed: BTreeSet<&str> = known.iter().copied().collect();
    assert_eq!(listed.len(), known.len(), "`{list}` lists an entry twice");
    let new: Vec<String> = found
        .iter()
        .filter(|(k, _)| !listed.contains(k.as_str()))
        .map(|(k, why)| format!("  {k:?}, // {why}"))
        .collect();
    let gone: Vec<String> = listed
        .iter()
        .filter(|k| !found.contains_key(**k))
        .map(|k| format!("  {k:?}"))
        .collect();
    let mut out = Vec::new();
    if !new.is_empty() {
        out.push(format!(
            "new offenders (fix them; `{list}` in src/architecture/ratchet_tests.rs lists \
             only older ones):\n{}",
            new.join("\n")
        ));
    }
    if !gone.is_empty() {
        out.push(format!(
            "no longer offending: delete these lines from `{list}` in \
             src/architecture/ratchet_tests.rs:\n{}",
            gone.join("\n")
        ));
    }
    assert!(out.is_empty(), "{}", out.join("\n"));
}

/// The attributes of an item.
fn item_attrs(i: &syn::Item) -> &[syn::Attribute] {
    match i {
        syn::Item::Const(x) => &x.attrs,
        syn::Item::Enum(x) => &x.attrs,
        syn::Item::ExternCrate(x) => &x.attrs,
        syn::Item::Fn(x) => &x.attrs,
        syn::Item::ForeignMod(x) => &x.attrs,
        syn::Item::Impl(x) => &x.attrs,
        syn::Item::Macro(x) => &x.attrs,
        syn::Item::Mod(x) => &x.attrs,
        syn::Item::Static(x) => &x.attrs,
        syn::Item::Struct(x) => &x.attrs,
        syn::Item::Trait(x) => &x.attrs,
        syn::Item::TraitAlias(x) => &x.attrs,
        syn::Item::Type(x) => &x.attrs,
        syn::Item::Union(x) => &x.attrs,
        syn::Item::Use(x) => &x.attrs,
        _ => &[],
    }
}

/// The glob imports among `items` (and in their inline modules) that reach into the crate:
/// `use super::*`, `use crate::x::*`, `use self::x::*`, or `use child::*` of a submodule of
/// `at`.
fn crate_globs(
    items: &[syn::Item],
    at: &ModPath,
    known: &BTreeSet<ModPath>,
    out: &mut Vec<String>,
) {
    for i in items {
        if is_test_attr(item_attrs(i)) {
            continue;
        }
        match i {
            syn::Item::Use(u) => {
                let globs = use_paths(&u.tree).into_iter().filter(|(_, glob)| *glob);
                for (g, _) in globs {
                    let Some(first) = g.first() else {
                        continue;
                    };
                    let child = {
                        let mut c = at.clone();
                        c.push(first.clone());
                        known.contains(&c)
                    };
                    if matches!(first.as_str(), "crate" | "super" | "self") || child {
                        out.push(format!("use {}::*", g.join("::")));
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    let mut at = at.clone();
                    at.push(m.ident.to_string());
                    crate_globs(inner, &at, known, out);
                }
            }
            _ => {}
        }
    }
}

/// No glob import reaches into the crate outside test code (a `use super::*;` inside
/// `mod tests` is fine): a file says by name what it takes from its parent, its siblings and
/// its children, so that the layer check sees every import.
#[test]
fn no_crate_glob_imports_outside_tests() {
    let sources = sources();
    let known: BTreeSet<ModPath> = sources.iter().map(|(m, ..)| m.clone()).collect();
    let mut found = BTreeMap::new();
    for (m, file, _, parsed) in &sources {
        let mut globs = Vec::new();
        crate_globs(&parsed.items, m, &known, &mut globs);
        for g in globs {
            found.insert(format!("{file}: {g}"), "a glob import".to_string());
        }
    }
    ratchet("GLOB_IMPORTS", &found, GLOB_IMPORTS);
}

/// The lines of a file outside its test items: every line but those of a top-level item under
/// `#[cfg(test)]` (an inline `mod tests { … }`, a `mod tests;` declaration, a test-only
/// import), from its first attribute to its last token.
fn lines_outside_tests(text: &str, parsed: &syn::File) -> usize {
    let test: usize = parsed
        .items
        .iter()
        .filter(|i| is_test_attr(item_attrs(i)))
        .map(|i| {
            let span = i.span();
            span.end().line - span.start().line + 1
        })
        .sum();
    text.lines().count() - test
}

/// Files by idea: no source file holds more than 1,000 lines outside its test items (big
/// modules keep their unit tests in a sibling `tests.rs`, whose `mod tests;` line hides
/// nothing after it).
#[test]
fn no_source_file_is_over_a_thousand_lines_before_its_tests() {
    let mut found = BTreeMap::new();
    for (_, file, text, parsed) in sources() {
        let lines = lines_outside_tests(&text, &parsed);
        if lines > 1000 {
            found.insert(file, format!("{lines} lines"));
        }
    }
    ratchet("LONG_FILES", &found, LONG_FILES);
}

/// The production functions of a file and their lengths, from `fn` to the closing brace.
#[derive(Default)]
struct Functions {
    /// The type or trait of the `impl` or `trait` being read.
    owner: Vec<String>,
    found: Vec<(String, usize)>,
}

impl Functions {
    fn add(&mut self, name: &syn::Ident, fn_token: &syn::token::Fn, block: &syn::Block) {
        let lines = block.brace_token.span.close().end().line - fn_token.span.start().line + 1;
        let name = match self.owner.last() {
            Some(owner) => format!("{owner}::{name}"),
            None => name.to_string(),
        };
        self.found.push((name, lines));
    }
}

impl<'ast> Visit<'ast> for Functions {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        if !is_test_attr(item_attrs(i)) {
            syn::visit::visit_item(self, i);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.add(&f.sig.ident, &f.sig.fn_token, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let owner = match &*i.self_ty {
            syn::Type::Path(p) => p
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default(),
            _ => "_".to_string(),
        };
        self.owner.push(owner);
        syn::visit::visit_item_impl(self, i);
        self.owner.pop();
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        self.owner.push(t.ident.to_string());
        syn::visit::visit_item_trait(self, t);
        self.owner.pop();
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test_attr(&f.attrs) {
            self.add(&f.sig.ident, &f.sig.fn_token, &f.block);
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.add(&f.sig.ident, &f.sig.fn_token, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// No production function is over 150 lines, from `fn` to its closing brace: a longer one is
/// steps that want names of their own.
#[test]
fn no_function_is_over_150_lines() {
    let mut found = BTreeMap::new();
    for (_, file, _, parsed) in sources() {
        let mut fns = Functions::default();
        fns.visit_file(&parsed);
        for (name, lines) in fns.found {
            if lines > 150 {
                found.insert(format!("{file}: {name}"), format!("{lines} lines"));
            }
        }
    }
    ratchet("LONG_FUNCTIONS", &found, LONG_FUNCTIONS);
}

/// The places a file's production code spells `Result<_, String>` (a return type, a field, a
/// closure's or a function pointer's type, a turbofish), counted.
#[derive(Default)]
struct StringErrors(usize);

impl<'ast> Visit<'ast> for StringErrors {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        if !is_test_attr(item_attrs(i)) {
            syn::visit::visit_item(self, i);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test_attr(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_path_segment(&mut self, s: &'ast syn::PathSegment) {
        if s.ident == "Result" {
            if let syn::PathArguments::AngleBracketed(args) = &s.arguments {
                let types: Vec<&syn::Type> = args
                    .args
                    .iter()
                    .filter_map(|a| match a {
                        syn::GenericArgument::Type(t) => Some(t),
                        _ => None,
                    })
                    .collect();
                if let [_, syn::Type::Path(error)] = types.as_slice() {
                    let last = error.path.segments.last();
                    if error.qself.is_none()
                        && last.is_some_and(|l| l.ident == "String" && l.arguments.is_none())
                    {
                        self.0 += 1;
                    }
                }
            }
        }
        syn::visit::visit_path_segment(self, s);
    }
}

/// No production code returns (or keeps) a `Result` whose error is a `String`: an error is a
/// type that says what went wrong where, and which tier it is in.
#[test]
fn no_string_errors_in_production() {
    let mut found = BTreeMap::new();
    for (_, file, _, parsed) in sources() {
        let mut errors = StringErrors::default();
        errors.visit_file(&parsed);
        if errors.0 > 0 {
            found.insert(file, format!("{} `Result<_, String>`", errors.0));
        }
    }
    ratchet("STRING_ERRORS", &found, STRING_ERRORS);
}

/// The checks find what they look for, and leave test code alone.
#[test]
fn the_ratchets_find_their_offenders() {
    let file = syn::parse_file(
        r#"
use super::*;
use crate::floor::{runners::*, Ctx};
use child::*;
use std::collections::*;
use Kind::*;
pub fn short() -> Result<BTreeMap<String, String>, Error> {
    Ok(BTreeMap::new())
}
fn long() -> Option<Result<(), String>> {
    let f: &dyn Fn() -> Result<u8, std::string::String> = &|| Ok(1);
    None
}
#[cfg(test)]
mod tests;
#[cfg(test)]
mod more {
    use super::*;
    fn worse() -> Result<(), String> {
        Ok(())
    }
}
"#,
    )
    .expect("parses");
    let at: ModPath = vec!["floor".to_string()];
    let known: BTreeSet<ModPath> = [at.clone(), vec!["floor".to_string(), "child".to_string()]]
        .into_iter()
        .collect();
    let mut globs = Vec::new();
    crate_globs(&file.items, &at, &known, &mut globs);
    assert_eq!(
        globs,
        [
            "use super::*",
            "use crate::floor::runners::*",
            "use child::*"
        ]
    );
    let mut errors = StringErrors::default();
    errors.visit_file(&file);
    assert_eq!(errors.0, 2);
    let mut fns = Functions::default();
    fns.visit_file(&file);
    assert_eq!(
        fns.found,
        [("short".to_string(), 3), ("long".to_string(), 4)]
    );
}

/// A `mod tests;` line hides nothing after it, and a test module's lines do not count.
#[test]
fn a_file_counts_every_line_outside_its_test_items() {
    let text = "//! doc\n#[cfg(test)]\nmod tests;\nfn a() {}\n\n\
                #[cfg(test)]\nmod more {\n    fn b() {}\n}\nfn c() {}\n";
    let parsed = syn::parse_file(text).expect("parses");
    assert_eq!(lines_outside_tests(text, &parsed), 4);
}

/// A ratchet fails on an offender it does not list, and on a listed one that no longer
/// offends.
#[test]
fn a_ratchet_refuses_a_new_offender_and_a_listed_one_gone() {
    let found: BTreeMap<String, String> = [("a".to_string(), "why".to_string())].into();
    ratchet("LIST", &found, &["a"]);
    assert!(std::panic::catch_unwind(|| ratchet("LIST", &found, &[])).is_err());
    assert!(std::panic::catch_unwind(|| ratchet("LIST", &found, &["a", "b"])).is_err());
}
