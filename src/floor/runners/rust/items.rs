//! Rust test items, found with a real parser (`syn`, with span locations): the item map that
//! attributes a build failure at base (book: floor/attribution.md), and the splice that lays
//! head's test items over base's version of a source file (book: floor/base-overlay.md).
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
//! not spliced: the floor lays it over whole, as a test file ([`super::modules`]).

use std::collections::BTreeSet;
use std::ops::Range;

use proc_macro2::{LineColumn, Span, TokenStream, TokenTree};
use syn::visit::Visit;

use crate::decision::attribute::{Import, ItemMap, Lines, TestItem};
use crate::floor::runners::{ParseError, SpliceError};

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

fn parse(text: &str) -> Result<Parsed, ParseError> {
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
        ParseError {
            line: at.line,
            column: at.column + 1,
            message: e.to_string(),
        }
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
pub fn item_map(text: &str, prefix: &str) -> Result<ItemMap, ParseError> {
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
fn pieces(text: &str) -> Result<Scope, ParseError> {
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
pub fn splice_source(
    rel_path: &str,
    base: &str,
    head: &str,
) -> Option<Result<String, SpliceError>> {
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
pub fn has_test_items(text: &str) -> Result<bool, ParseError> {
    Ok(!pieces(text)?.is_empty())
}

/// Base's text with head's test items spliced in (see the module doc). An error names the side
/// and the place that does not parse.
pub fn splice(base: &str, head: &str) -> Result<String, SpliceError> {
    let theirs = pieces(head).map_err(SpliceError::Head)?;
    let ours = pieces(base).map_err(SpliceError::Base)?;
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
mod tests;
