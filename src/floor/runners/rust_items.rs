//! Rust test items, found with a real parser (`syn`, with span locations): the item map that
//! attributes a build failure at base (DESIGN 5.4), and the splice that lays head's test items
//! over base's version of a source file (DESIGN 5.1).
//!
//! # Item map
//! In: a file's text and the module path the file has inside its crate ([`module_prefix`]).
//! Out: an [`ItemMap`]:
//! - test items: every `fn` carrying an attribute whose last path segment is `test` (`#[test]`,
//!   `#[tokio::test]`), at any depth of inline modules, named `module::function` the way libtest
//!   names it without the crate (`tests::adds`; in `tests/x.rs` the path inside that file); the
//!   extent runs from the first outer attribute (doc comments included) to the closing brace;
//!   `uses` is every identifier in the item, inside macro calls and attributes too (a test body is
//!   mostly `assert_eq!(…)`, whose arguments are tokens, not syntax);
//! - imports: every `use` item at any depth, with the names it binds there (`use a::{b, c as d}`
//!   binds `b` and `d`; `use a::b::{self}` binds `b`).
//!
//! A glob import (`use a::*`) binds no specific name, so its failure is attributed to no test:
//! rustc reports only the unresolved import, not the names a test takes from it, and counting it
//! for every test in scope would let a trivial test beside a new one read as failing. The usual
//! `use super::*` of a test module cannot fail by itself; a name it no longer supplies at base is
//! reported where the test uses it, inside the test.
//!
//! # Splice
//! In: base's and head's text of one source file. Out: base's text with its test items replaced
//! by head's: a `#[cfg(test)]` inline module or `fn`, or a top-level test `fn`, keyed by kind and
//! name; head's version replaces base's in place, one head added is appended at the end of its
//! scope, one head removed is removed; every other byte stays as base has it. Inside an inline
//! module that is not a test module and that both sides have (`pub mod parse { … #[test] fn t()
//! … }`), the same splice runs over the module's own items; a module only head has is new code
//! and stays out. Test functions beside code in a scope use that scope's imports: head's `use`
//! items of the scope that base lacks come with them, appended, so that a test never loses an
//! import and fails to build at base for that alone (which would read as its own failure). A
//! module file compiled only for tests (`src/x/tests.rs` behind `#[cfg(test)] mod tests;`) is
//! not spliced: the floor lays it over whole, as a test file ([`super::rust_modules`]).

use std::collections::BTreeSet;
use std::ops::Range;

use proc_macro2::{LineColumn, Span, TokenStream, TokenTree};
use syn::visit::Visit;

use crate::floor::attribute::{Import, ItemMap, Lines, TestItem};

/// The test name inside a runner-native cargo or nextest id (`<binary-id> <name>`).
pub fn test_item(id: &str) -> Option<String> {
    let (_, name) = id.split_once(' ')?;
    (!name.is_empty()).then(|| name.to_string())
}

/// The module path (with a trailing `::`, or empty) that a file has inside its crate, from its
/// place under `src/`, `tests/`, `benches/` or `examples/`: `src/lib.rs` and `tests/x.rs` are
/// crate roots (empty), `src/a/b.rs` and `src/a/b/mod.rs` are `a::b::`, `src/bin/x/y.rs` is
/// `y::` of the binary `x`. `None` for a file in none of those directories.
pub fn module_prefix(rel_path: &str) -> Option<String> {
    let parts: Vec<&str> = rel_path.split('/').filter(|p| !p.is_empty()).collect();
    // `src/tests/x.rs` is a module of the library, not an integration test: a `src` on the way
    // decides before a `tests` below it.
    let at = parts.iter().rposition(|p| *p == "src").or_else(|| {
        parts
            .iter()
            .rposition(|p| matches!(*p, "tests" | "benches" | "examples"))
    })?;
    let under_src = parts[at] == "src";
    let mut rest: Vec<&str> = parts[at + 1..].to_vec();
    let last = rest.pop()?;
    let stem = last.strip_suffix(".rs")?;
    // A binary's own directory (`src/bin/x/…`), or a test target's (`tests/x/main.rs`), is the
    // root of that target.
    if under_src && rest.first() == Some(&"bin") {
        rest.remove(0);
        if rest.is_empty() {
            return Some(String::new());
        }
        rest.remove(0);
    } else if !under_src && !rest.is_empty() && stem == "main" {
        return Some(String::new());
    }
    if rest.is_empty() && matches!(stem, "lib" | "main") && under_src {
        return Some(String::new());
    }
    if rest.is_empty() && !under_src {
        return Some(String::new());
    }
    if stem != "mod" {
        rest.push(stem);
    }
    Some(rest.iter().map(|p| format!("{p}::")).collect())
}

/// The parsed file and how far into the original text the parser's text starts (a byte-order
/// mark and a shebang line are not Rust tokens).
struct Parsed {
    file: syn::File,
    offset: usize,
}

fn parse(text: &str) -> Result<Parsed, String> {
    let mut offset = 0;
    let mut content = text;
    if let Some(rest) = content.strip_prefix('\u{feff}') {
        offset += '\u{feff}'.len_utf8();
        content = rest;
    }
    // The same shebang rule as `syn::parse_file`: `#!` not followed by `[` starts a line to skip.
    if let Some(after) = content.strip_prefix("#!") {
        if !after.trim_start().starts_with('[') {
            let cut = content.find('\n').unwrap_or(content.len());
            offset += cut;
            content = &content[cut..];
        }
    }
    let file = syn::parse_str::<syn::File>(content).map_err(|e| {
        let at = e.span().start();
        format!("line {}:{}: {e}", at.line, at.column + 1)
    });
    file.map(|file| Parsed { file, offset })
}

/// Frees the thread's span table: each parse adds the file's text to it.
struct SpanTable;

impl Drop for SpanTable {
    fn drop(&mut self) {
        proc_macro2::extra::invalidate_current_thread_spans();
    }
}

/// The item map of one file (see the module doc); an error names where the file does not parse.
pub fn item_map(text: &str, prefix: &str) -> Result<ItemMap, String> {
    let _table = SpanTable;
    let parsed = parse(text)?;
    let mut map = ItemMap::default();
    collect(&parsed.file.items, prefix, &mut map);
    Ok(map)
}

fn collect(items: &[syn::Item], path: &str, map: &mut ItemMap) {
    for item in items {
        match item {
            syn::Item::Fn(f) if f.attrs.iter().any(is_test_attr) => {
                let mut idents = Idents::default();
                idents.visit_item_fn(f);
                map.items.push(TestItem {
                    name: format!("{path}{}", f.sig.ident),
                    lines: Lines {
                        start: first_line(&f.attrs, f.sig.fn_token.span),
                        end: line(f.block.brace_token.span.close().end()),
                    },
                    uses: idents.0,
                });
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect(inner, &format!("{path}{}::", m.ident), map);
                }
            }
            syn::Item::Use(u) => {
                let mut names = BTreeSet::new();
                bound_names(&u.tree, None, &mut names);
                map.imports.push(Import {
                    lines: Lines {
                        start: first_line(&u.attrs, u.use_token.span),
                        end: line(u.semi_token.span.end()),
                    },
                    names,
                });
            }
            _ => {}
        }
    }
}

fn line(at: LineColumn) -> u32 {
    u32::try_from(at.line).unwrap_or(u32::MAX)
}

/// The first line of an item: its first outer attribute's, else its first keyword's.
fn first_line(attrs: &[syn::Attribute], keyword: Span) -> u32 {
    attrs
        .iter()
        .filter(|a| matches!(a.style, syn::AttrStyle::Outer))
        .map(|a| line(a.pound_token.span.start()))
        .chain(std::iter::once(line(keyword.start())))
        .min()
        .unwrap_or(0)
}

/// An attribute whose last path segment is `test` (`#[test]`, `#[tokio::test]`).
fn is_test_attr(a: &syn::Attribute) -> bool {
    a.path().segments.last().is_some_and(|s| s.ident == "test")
}

/// `#[cfg(test)]`, or `#[cfg(all(…, test, …))]`: code compiled only for tests. `cfg(not(test))`
/// and `cfg(any(test, …))` are not.
pub(super) fn is_cfg_test(a: &syn::Attribute) -> bool {
    if !a.path().is_ident("cfg") {
        return false;
    }
    let Ok(list) = a.meta.require_list() else {
        return false;
    };
    cfg_requires_test(list.tokens.clone())
}

fn cfg_requires_test(tokens: TokenStream) -> bool {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    match trees.as_slice() {
        [TokenTree::Ident(i)] => i == "test",
        [TokenTree::Ident(i), TokenTree::Group(g)] if i == "all" => {
            let mut part = TokenStream::new();
            let mut any = false;
            for t in g.stream() {
                match &t {
                    TokenTree::Punct(p) if p.as_char() == ',' => {
                        any |= cfg_requires_test(std::mem::take(&mut part));
                    }
                    _ => part.extend([t]),
                }
            }
            any || cfg_requires_test(part)
        }
        _ => false,
    }
}

/// The names a `use` tree binds (see the module doc); `last` is the path segment before it.
fn bound_names(tree: &syn::UseTree, last: Option<&syn::Ident>, out: &mut BTreeSet<String>) {
    match tree {
        syn::UseTree::Path(p) => bound_names(&p.tree, Some(&p.ident), out),
        syn::UseTree::Name(n) if n.ident == "self" => {
            if let Some(l) = last {
                out.insert(l.to_string());
            }
        }
        syn::UseTree::Name(n) => {
            out.insert(n.ident.to_string());
        }
        syn::UseTree::Rename(r) => {
            out.insert(r.rename.to_string());
        }
        syn::UseTree::Glob(_) => {}
        syn::UseTree::Group(g) => {
            for t in &g.items {
                bound_names(t, last, out);
            }
        }
    }
}

/// Every identifier of a syntax tree, macro arguments and attribute arguments included.
#[derive(Default)]
struct Idents(BTreeSet<String>);

impl Idents {
    fn tokens(&mut self, tokens: TokenStream) {
        for t in tokens {
            match t {
                TokenTree::Ident(i) => {
                    self.0.insert(i.to_string());
                }
                TokenTree::Group(g) => self.tokens(g.stream()),
                _ => {}
            }
        }
    }
}

impl<'ast> Visit<'ast> for Idents {
    fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
        self.0.insert(i.to_string());
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        syn::visit::visit_macro(self, m);
        self.tokens(m.tokens.clone());
    }

    fn visit_meta_list(&mut self, m: &'ast syn::MetaList) {
        syn::visit::visit_meta_list(self, m);
        self.tokens(m.tokens.clone());
    }
}

/// A test item of a file's scope, for the splice.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    /// `mod NAME` or `fn NAME`.
    key: String,
    /// Byte range in the original text, outer attributes included.
    range: Range<usize>,
}

/// One scope of a file (the file itself, or an inline module that is not a test module): its
/// test items, its `use` items (keyed by their text without whitespace), and the inline modules
/// inside it, each with the byte range between its braces.
#[derive(Debug, Default)]
struct Scope {
    tests: Vec<Piece>,
    uses: Vec<Piece>,
    modules: Vec<(String, Range<usize>, Scope)>,
}

impl Scope {
    fn is_empty(&self) -> bool {
        self.tests.is_empty() && self.modules.iter().all(|(_, _, m)| m.is_empty())
    }
}

/// A file's scopes (see [`Scope`]).
fn pieces(text: &str) -> Result<Scope, String> {
    let _table = SpanTable;
    let parsed = parse(text)?;
    Ok(scope(text, &parsed.file.items, parsed.offset))
}

fn scope(text: &str, items: &[syn::Item], offset: usize) -> Scope {
    let mut out = Scope::default();
    for item in items {
        if let syn::Item::Use(u) = item {
            let start = u
                .attrs
                .iter()
                .map(|a| a.pound_token.span.byte_range().start)
                .chain(vis_span(&u.vis).map(|s| s.byte_range().start))
                .chain(std::iter::once(u.use_token.span.byte_range().start))
                .min()
                .unwrap_or(0)
                + offset;
            let end = u.semi_token.span.byte_range().end + offset;
            out.uses.push(Piece {
                key: text[start..end].split_whitespace().collect(),
                range: start..end,
            });
            continue;
        }
        // An inline module that is not a test module: its own test items are spliced inside it.
        if let syn::Item::Mod(m) = item {
            if let (Some((brace, inner)), false) = (&m.content, m.attrs.iter().any(is_cfg_test)) {
                let span = brace.span;
                let body =
                    span.open().byte_range().end + offset..span.close().byte_range().start + offset;
                out.modules
                    .push((m.ident.to_string(), body, scope(text, inner, offset)));
                continue;
            }
        }
        let (key, attrs, keyword, end) = match item {
            syn::Item::Mod(m) if m.attrs.iter().any(is_cfg_test) => {
                let end = match &m.content {
                    Some((brace, _)) => brace.span.close().byte_range().end,
                    None => m.semi.map(|s| s.span.byte_range().end).unwrap_or(0),
                };
                (format!("mod {}", m.ident), &m.attrs, m.mod_token.span, end)
            }
            syn::Item::Fn(f) if f.attrs.iter().any(|a| is_test_attr(a) || is_cfg_test(a)) => (
                format!("fn {}", f.sig.ident),
                &f.attrs,
                f.sig.fn_token.span,
                f.block.brace_token.span.close().byte_range().end,
            ),
            _ => continue,
        };
        // The item starts at its first outer attribute, else at its visibility or keyword.
        let vis_start = match item {
            syn::Item::Mod(m) => vis_span(&m.vis),
            syn::Item::Fn(f) => vis_span(&f.vis),
            _ => None,
        };
        let start = attrs
            .iter()
            .filter(|a| matches!(a.style, syn::AttrStyle::Outer))
            .map(|a| a.pound_token.span.byte_range().start)
            .chain(vis_start.map(|s| s.byte_range().start))
            .chain(std::iter::once(keyword.byte_range().start))
            .min()
            .unwrap_or(0);
        out.tests.push(Piece {
            key,
            range: start + offset..end + offset,
        });
    }
    out
}

fn vis_span(v: &syn::Visibility) -> Option<Span> {
    match v {
        syn::Visibility::Public(p) => Some(p.span),
        syn::Visibility::Restricted(r) => Some(r.pub_token.span),
        syn::Visibility::Inherited => None,
    }
}

/// The splice for a changed `.rs` file of a target (see the module doc): `None` when neither
/// side holds a test item, or the file is not Rust.
pub fn splice_source(rel_path: &str, base: &str, head: &str) -> Option<Result<String, String>> {
    if !rel_path.ends_with(".rs") {
        return None;
    }
    let any = |t: &str| has_test_items(t).unwrap_or(true);
    if !any(head) && !any(base) {
        return None;
    }
    Some(splice(base, head))
}

/// Whether a file's text holds a test item the splice would lay over (see the module doc).
pub fn has_test_items(text: &str) -> Result<bool, String> {
    Ok(!pieces(text)?.is_empty())
}

/// Base's text with head's test items spliced in (see the module doc). An error names the side
/// and the place that does not parse.
pub fn splice(base: &str, head: &str) -> Result<String, String> {
    let theirs = pieces(head).map_err(|e| format!("head's version does not parse: {e}"))?;
    let ours = pieces(base).map_err(|e| format!("base's version does not parse: {e}"))?;
    let mut out = String::with_capacity(base.len() + head.len() / 2);
    splice_scope(base, &ours, 0..base.len(), head, &theirs, &mut out);
    Ok(out)
}

/// One scope's splice: base's bytes in `range`, each of its test items replaced by head's of the
/// same key (or dropped), each inline module that head has too spliced in turn, and at the end
/// of the scope the `use` items head's test functions may need and head's new test items.
fn splice_scope(
    base: &str,
    ours: &Scope,
    range: Range<usize>,
    head: &str,
    theirs: &Scope,
    out: &mut String,
) {
    enum At<'s> {
        Test(&'s Piece),
        Module(&'s str, &'s Range<usize>, &'s Scope),
    }
    let mut events: Vec<(usize, At)> = ours
        .tests
        .iter()
        .map(|p| (p.range.start, At::Test(p)))
        .chain(
            ours.modules
                .iter()
                .map(|(name, body, s)| (body.start, At::Module(name, body, s))),
        )
        .collect();
    events.sort_by_key(|(at, _)| *at);
    let head_text = |p: &Piece| &head[p.range.clone()];
    let mut at = range.start;
    let mut used = BTreeSet::new();
    for (_, event) in events {
        match event {
            At::Test(p) => {
                out.push_str(&base[at..p.range.start]);
                // The first of head's items with this key replaces it; a key head no longer
                // has goes.
                if let Some((i, h)) = theirs
                    .tests
                    .iter()
                    .enumerate()
                    .find(|(i, h)| h.key == p.key && !used.contains(i))
                {
                    out.push_str(head_text(h));
                    used.insert(i);
                }
                at = p.range.end;
            }
            At::Module(name, body, inner) => {
                out.push_str(&base[at..body.start]);
                match theirs.modules.iter().find(|(n, _, _)| n == name) {
                    Some((_, _, head_inner)) => {
                        splice_scope(base, inner, body.clone(), head, head_inner, out)
                    }
                    None => out.push_str(&base[body.clone()]),
                }
                at = body.end;
            }
        }
    }
    // What base has after its last item, up to the scope's end: a module's closing brace
    // comes after what is appended.
    let tail = &base[at..range.end];
    let (keep, rest) = if range.end == base.len() {
        (tail, "")
    } else {
        let trimmed = tail.trim_end();
        (trimmed, &tail[trimmed.len()..])
    };
    out.push_str(keep);
    let added: Vec<&Piece> = theirs
        .tests
        .iter()
        .enumerate()
        .filter(|(i, _)| !used.contains(i))
        .map(|(_, p)| p)
        .collect();
    if theirs.tests.iter().any(|p| p.key.starts_with("fn ")) {
        let missing = theirs
            .uses
            .iter()
            .filter(|u| !ours.uses.iter().any(|b| b.key == u.key));
        for u in missing {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(head_text(u));
            out.push('\n');
        }
    }
    for h in added {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
        out.push_str(head_text(h));
        out.push('\n');
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = r#"//! A crate.
use std::fmt;
use crate::a::{b, c as d, e::{self, f}, g::*};

pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {
    if x < lo { lo } else { x }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extra::clamp_all;

    /// Low values.
    #[test]
    fn clamps_low() {
        assert_eq!(clamp(-5, 0, 10), 0);
    }

    #[tokio::test]
    async fn clamps_all() {
        let mut v = [1];
        clamp_all(&mut v);
    }

    fn helper() {}

    mod deeper {
        #[test]
        fn nested() {}
    }
}
"#;

    #[test]
    fn test_items_are_named_by_module_path_with_their_extent() {
        let m = item_map(LIB, "").unwrap();
        let names: Vec<&str> = m.items.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "tests::clamps_low",
                "tests::clamps_all",
                "tests::deeper::nested"
            ]
        );
        let low = m.item("tests::clamps_low").unwrap();
        // From the doc comment (an attribute) to the closing brace.
        assert_eq!(low.lines, Lines { start: 14, end: 18 });
        // Identifiers inside `assert_eq!(…)` count: they are how a test uses an API.
        assert!(low.uses.contains("clamp"), "{:?}", low.uses);
        assert!(low.uses.contains("assert_eq"));
        let all = m.item("tests::clamps_all").unwrap();
        assert_eq!(all.lines, Lines { start: 20, end: 24 });
        assert!(all.uses.contains("clamp_all"));
        assert!(!all.uses.contains("clamp"));
        assert_eq!(
            item_map(LIB, "util::").unwrap().items[0].name,
            "util::tests::clamps_low"
        );
    }

    #[test]
    fn imports_bind_the_names_they_bring_into_scope() {
        let m = item_map(LIB, "").unwrap();
        let imports: Vec<(u32, Vec<&str>)> = m
            .imports
            .iter()
            .map(|i| (i.lines.start, i.names.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            imports,
            [
                (2, vec!["fmt"]),
                // `self` binds the segment before it; the glob binds nothing specific.
                (3, vec!["b", "d", "e", "f"]),
                (11, vec![]),
                (12, vec!["clamp_all"]),
            ]
        );
        let multi = "use a::{\n    b,\n    c,\n};\n";
        assert_eq!(
            item_map(multi, "").unwrap().imports[0].lines,
            Lines { start: 1, end: 4 }
        );
    }

    #[test]
    fn a_file_that_does_not_parse_says_where() {
        let e = item_map("fn x( {\n", "").unwrap_err();
        assert!(e.starts_with("line 1:"), "{e}");
        // A shebang and a byte-order mark are not Rust, and do not move lines.
        let m = item_map("\u{feff}#!/usr/bin/env run\n#[test]\nfn t() {}\n", "").unwrap();
        assert_eq!(m.items[0].lines, Lines { start: 2, end: 3 });
    }

    #[test]
    fn module_prefixes_follow_the_file_layout() {
        for (path, want) in [
            ("src/lib.rs", Some("")),
            ("src/main.rs", Some("")),
            ("crates/a/src/lib.rs", Some("")),
            ("src/util.rs", Some("util::")),
            ("src/util/mod.rs", Some("util::")),
            ("src/a/b.rs", Some("a::b::")),
            ("src/bin/tool.rs", Some("")),
            ("src/bin/tool/main.rs", Some("")),
            ("src/bin/tool/parse.rs", Some("parse::")),
            ("tests/it.rs", Some("")),
            ("tests/it/main.rs", Some("")),
            ("tests/common/mod.rs", Some("common::")),
            ("src/tests/recursive.rs", Some("tests::recursive::")),
            ("src/tests/mod.rs", Some("tests::")),
            ("crates/a/src/tests/deep.rs", Some("tests::deep::")),
            ("build.rs", None),
            ("src/data.json", None),
        ] {
            assert_eq!(module_prefix(path).as_deref(), want, "{path}");
        }
    }

    #[test]
    fn panics_are_assertions_or_exceptions() {
        use crate::floor::runners::FailureKind::*;
        for (out, want) in [
            ("assertion `left == right` failed (tests/c.rs:3:5)", Assertion),
            ("thread 'a' panicked at tests/t.rs:4:46:\nassertion failed: x > 1\n", Assertion),
            ("thread 'a' panicked at 'assertion failed: x', src/lib.rs:1:1", Assertion),
            ("thread 'a' (12) panicked at t.rs:1:1:\nassertion failed: x\n", Assertion),
            (
                "thread 'a' panicked at src/lib.rs:9:5:\ncalled `Option::unwrap()` on a `None` value",
                Exception,
            ),
            ("panicked at src/lib.rs:9:5", Exception),
            ("", Exception),
        ] {
            assert_eq!(
                super::super::cargo::output_failure_kind(out)
                    .unwrap_or_else(|| super::super::cargo::panic_kind(out)),
                want,
                "{out}"
            );
        }
    }

    #[test]
    fn ids_name_the_test_inside_the_binary() {
        assert_eq!(
            test_item("clamp tests::adds").as_deref(),
            Some("tests::adds")
        );
        assert_eq!(test_item("clamp::it adds").as_deref(), Some("adds"));
        assert_eq!(test_item("clamp"), None);
    }

    #[test]
    fn cfg_test_means_compiled_only_for_tests() {
        let attr = |s: &str| -> syn::Attribute {
            let f: syn::ItemFn = syn::parse_str(&format!("{s} fn x() {{}}")).unwrap();
            f.attrs[0].clone()
        };
        assert!(is_cfg_test(&attr("#[cfg(test)]")));
        assert!(is_cfg_test(&attr("#[cfg(all(unix, test))]")));
        assert!(!is_cfg_test(&attr("#[cfg(not(test))]")));
        assert!(!is_cfg_test(&attr("#[cfg(any(test, unix))]")));
        assert!(!is_cfg_test(&attr("#[cfg(feature = \"test\")]")));
        assert!(is_test_attr(&attr("#[test]")));
        assert!(is_test_attr(&attr("#[tokio::test]")));
        assert!(!is_test_attr(&attr("#[testing]")));
    }

    const BASE: &str = "use std::fmt;\n\npub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else { x }\n}\n\n// Kept as base has it.\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn clamps_low() {\n        assert_eq!(super::clamp(-5, 0, 10), 0);\n    }\n}\n\n#[test]\nfn gone_at_head() {}\n";

    const HEAD: &str = "use std::fmt;\n\npub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else if x > hi { hi } else { x }\n}\n\npub fn clamp_all(xs: &mut [i32]) {}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn clamps_low() {\n        assert_eq!(super::clamp(-5, 0, 10), 0);\n    }\n\n    #[test]\n    fn clamps_high() {\n        assert_eq!(super::clamp(50, 0, 10), 10);\n    }\n}\n\n/// New at head.\n#[cfg(test)]\nmod more_tests {\n    #[test]\n    fn all() { super::clamp_all(&mut []); }\n}\n";

    #[test]
    fn the_splice_takes_heads_test_items_and_keeps_bases_code() {
        let out = splice(BASE, HEAD).unwrap();
        let want = "use std::fmt;\n\npub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else { x }\n}\n\n// Kept as base has it.\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn clamps_low() {\n        assert_eq!(super::clamp(-5, 0, 10), 0);\n    }\n\n    #[test]\n    fn clamps_high() {\n        assert_eq!(super::clamp(50, 0, 10), 10);\n    }\n}\n\n\n\n/// New at head.\n#[cfg(test)]\nmod more_tests {\n    #[test]\n    fn all() { super::clamp_all(&mut []); }\n}\n";
        assert_eq!(out, want);
        // Base's code is untouched: the fix and the new function stay at head.
        assert!(!out.contains("x > hi"));
        assert!(!out.contains("pub fn clamp_all"));
        // Splicing head into itself changes nothing; a file without test items is kept whole.
        assert_eq!(splice(HEAD, HEAD).unwrap(), HEAD);
        let plain = "pub fn a() {}\n";
        assert_eq!(splice(plain, "pub fn a() { todo!() }\n").unwrap(), plain);
        assert!(has_test_items(HEAD).unwrap());
        assert!(!has_test_items(plain).unwrap());
    }

    #[test]
    fn top_level_tests_bring_the_imports_base_lacks() {
        // `src/util/tests.rs`, a test module in a file of its own.
        let base = "use super::twice;\n\nfn helper() -> i32 { 2 }\n\n#[test]\nfn twice_works() {\n    assert_eq!(twice(helper()), 4);\n}\n";
        let head = "use super::twice;\nuse super::{half, HALF_OF_FOUR};\n\nfn helper() -> i32 { 2 }\n\n#[test]\nfn twice_works() {\n    assert_eq!(twice(helper()), 4);\n}\n\n#[test]\nfn halves() {\n    assert_eq!(half(4), HALF_OF_FOUR);\n}\n";
        assert_eq!(
            splice(base, head).unwrap(),
            "use super::twice;\n\nfn helper() -> i32 { 2 }\n\n#[test]\nfn twice_works() {\n    assert_eq!(twice(helper()), 4);\n}\nuse super::{half, HALF_OF_FOUR};\n\n#[test]\nfn halves() {\n    assert_eq!(half(4), HALF_OF_FOUR);\n}\n"
        );
        // Inside a test module the imports come with the module: file-level ones stay as base
        // has them.
        let base = "use a::b;\n#[cfg(test)]\nmod tests {}\n";
        let head = "use a::b;\nuse a::c;\n#[cfg(test)]\nmod tests { #[test] fn t() {} }\n";
        assert!(!splice(base, head).unwrap().contains("use a::c;"));
    }

    #[test]
    fn test_items_inside_modules_that_are_not_test_modules_are_spliced_too() {
        let base = "pub mod inner {\n    pub fn half(x: i32) -> i32 { x / 3 }\n\n    #[test]\n    fn old() { assert_eq!(half(3), 1); }\n\n    #[cfg(test)]\n    mod tests {}\n}\n\nmod only_base {\n    #[test]\n    fn kept() {}\n}\n";
        let head = "pub mod inner {\n    pub fn half(x: i32) -> i32 { x / 2 }\n    use std::fmt::Write;\n\n    #[test]\n    fn old() { assert_eq!(half(3), 1); assert_eq!(half(4), 2); }\n\n    #[cfg(test)]\n    mod tests { #[test] fn inside() {} }\n\n    #[test]\n    fn added() { assert_eq!(half(8), 4); }\n}\n\nmod only_head {\n    #[test]\n    fn new() {}\n}\n";
        let out = splice(base, head).unwrap();
        assert_eq!(
            out,
            "pub mod inner {\n    pub fn half(x: i32) -> i32 { x / 3 }\n\n    #[test]\n    fn old() { assert_eq!(half(3), 1); assert_eq!(half(4), 2); }\n\n    #[cfg(test)]\n    mod tests { #[test] fn inside() {} }\nuse std::fmt::Write;\n\n#[test]\n    fn added() { assert_eq!(half(8), 4); }\n\n}\n\nmod only_base {\n    #[test]\n    fn kept() {}\n}\n"
        );
        // Base's code stays; a module head alone has is new code, not laid over.
        assert!(out.contains("x / 3") && !out.contains("x / 2"));
        assert!(!out.contains("only_head"));
        assert!(syn::parse_file(&out).is_ok(), "{out}");
        assert!(has_test_items("mod m { #[test] fn t() {} }").unwrap());
        assert!(!has_test_items("mod m { fn t() {} }").unwrap());
    }

    #[test]
    fn the_splice_keeps_attributes_visibility_and_non_ascii_text() {
        let base = "/// é\npub fn é() {}\n#[cfg(test)]\npub(crate) mod t { #[test] fn a() {} }\n";
        let head = "/// é\npub fn é() { 1; }\n#[cfg(test)]\n#[allow(unused)]\npub(crate) mod t { #[test] fn a() { assert!(true) } }\n";
        assert_eq!(
            splice(base, head).unwrap(),
            "/// é\npub fn é() {}\n#[cfg(test)]\n#[allow(unused)]\npub(crate) mod t { #[test] fn a() { assert!(true) } }\n"
        );
        let e = splice(base, "mod t {").unwrap_err();
        assert!(e.starts_with("head's version does not parse"), "{e}");
    }
}
