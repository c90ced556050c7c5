//! JavaScript and TypeScript test files read with a real parser, for attribution (book:
//! floor/attribution.md): the test items of a file (`it`/`test` calls with their title paths
//! through `describe`), the imports with the names they bind, where a module specifier is imported,
//! where a name is bound by an import, and the first syntax error.
//!
//! In: a file's source and its name (the extension picks the grammar). Out: an [`ItemMap`], a
//! position, or `None`.
//!
//! The parser is tree-sitter with its TypeScript grammars: `typescript` for `.ts`/`.mts`/`.cts`
//! (where `<T>x` is a cast) and `tsx` for everything else (it reads plain JavaScript, JSX and
//! TypeScript with JSX). Chosen over `oxc_parser` for its cost on this 2-core machine, measured
//! on empty probe crates built cold: tree-sitter adds 4 crates and 12 s of CPU to a debug build
//! (oxc: 45 crates, 19 s, and the oxc versions that build on our minimum Rust are a year old);
//! in this project its two generated C parsers take 4 s in a debug build and, at `opt-level = 1`
//! (set in `Cargo.toml`), 2 s in a release build (25 s at the default `-O3`). It also gives rows
//! and columns without a line index, and recovers from errors, so a file that does not parse
//! still yields its other items and the error's position.
//!
//! Steps of [`item_map`]:
//! 1. top-level functions, classes and `const f = () => …` by name, with the identifiers each
//!    mentions (a test that calls a helper needing the new API needs it too);
//! 2. imports: `import d, { a as b } from 'm'` binds `d`, `b`; `import * as ns` binds `ns`;
//!    `import x = require('m')` binds `x`; `const { a, b: c } = require('m')` binds `a`, `c`;
//!    `const m = require('m')` (also `require('m').x`) binds `m`; a bare `import 'm'` binds
//!    nothing;
//! 3. test items: a call of `it`, `test` (and jest's `xit`, `fit`, `xtest`, with `.only`,
//!    `.skip`, `.concurrent`, … after them) whose first argument is a literal title, inside
//!    `describe` (`fdescribe`, `xdescribe`, vitest's `suite`) calls with literal titles: the
//!    title path is the describe titles and the test's title joined by ` > `, as the adapters'
//!    test ids name it. A title that is not a literal (`test.each`'s formats, a variable) cannot
//!    be matched to an id, so that item and the items below it are left out. The extent is the
//!    call's lines; `uses` holds every identifier in the call (property names and type names
//!    included), the identifiers of the enclosing describe bodies outside their own tests (hooks,
//!    shared setup) and of the file's top-level hooks (`beforeEach(…)`, which run around every
//!    test), and the helpers of step 1 they reach by name.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::{Language, Node, Parser, Tree};

use super::SEP;
use crate::decision::attribute::{Import, ItemMap, Lines, TestItem};

fn language(path: &str) -> Language {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if matches!(ext, "ts" | "mts" | "cts") {
        tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into()
    } else {
        tree_sitter_typescript::LANGUAGE_TSX.into()
    }
}

fn parse(source: &str, path: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&language(path)).ok()?;
    parser.parse(source, None)
}

/// 1-based line and column of a node's start.
fn start(node: Node<'_>) -> (u32, u32) {
    let p = node.start_position();
    (p.row as u32 + 1, p.column as u32 + 1)
}

fn lines(node: Node<'_>) -> Lines {
    Lines {
        start: node.start_position().row as u32 + 1,
        end: node.end_position().row as u32 + 1,
    }
}

fn text<'a>(node: Node<'_>, src: &'a str) -> &'a str {
    node.utf8_text(src.as_bytes()).unwrap_or("")
}

fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// The value of a string literal, or of a template literal without substitutions; `None` for
/// anything else. Escapes are decoded for the common cases (`\'`, `\"`, `\\`, `\n`, `\t`,
/// `` \` ``); a title with another escape is not matched rather than matched wrongly.
fn literal(node: Node<'_>, src: &str) -> Option<String> {
    if !matches!(node.kind(), "string" | "template_string") {
        return None;
    }
    let mut out = String::new();
    for child in named_children(node) {
        match child.kind() {
            "string_fragment" => out.push_str(text(child, src)),
            "escape_sequence" => match text(child, src) {
                "\\'" => out.push('\''),
                "\\\"" => out.push('"'),
                "\\\\" => out.push('\\'),
                "\\`" => out.push('`'),
                "\\n" => out.push('\n'),
                "\\t" => out.push('\t'),
                _ => return None,
            },
            _ => return None,
        }
    }
    Some(out)
}

/// Every identifier under `node` (values, properties, shorthand properties, types).
fn identifiers(node: Node<'_>, src: &str, out: &mut BTreeSet<String>) {
    if matches!(
        node.kind(),
        "identifier"
            | "property_identifier"
            | "shorthand_property_identifier"
            | "shorthand_property_identifier_pattern"
            | "type_identifier"
    ) {
        out.insert(text(node, src).to_string());
    }
    for child in named_children(node) {
        identifiers(child, src, out);
    }
}

/// Plain identifiers only (`helper()` reaches a top-level helper, `obj.helper()` does not).
fn plain_identifiers(node: Node<'_>, src: &str, out: &mut BTreeSet<String>) {
    if node.kind() == "identifier" {
        out.insert(text(node, src).to_string());
    }
    for child in named_children(node) {
        plain_identifiers(child, src, out);
    }
}

/// What a call is, by its callee: a test, a describe block, or neither. `each` (and any other
/// call in the callee) gives titles by format, which no id matches literally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CallKind {
    Test,
    Describe,
    Other,
}

fn call_kind(callee: Node<'_>, src: &str) -> CallKind {
    let mut node = callee;
    loop {
        match node.kind() {
            "identifier" => {
                return match text(node, src) {
                    "it" | "test" | "xit" | "fit" | "xtest" => CallKind::Test,
                    "describe" | "fdescribe" | "xdescribe" | "suite" => CallKind::Describe,
                    _ => CallKind::Other,
                }
            }
            "member_expression" => {
                let property = node.child_by_field_name("property");
                if property.is_some_and(|p| text(p, src) == "each") {
                    return CallKind::Other;
                }
                match node.child_by_field_name("object") {
                    Some(object) => node = object,
                    None => return CallKind::Other,
                }
            }
            _ => return CallKind::Other,
        }
    }
}

/// A call expression's callee and its argument nodes.
fn call_parts<'t>(call: Node<'t>) -> Option<(Node<'t>, Vec<Node<'t>>)> {
    let callee = call.child_by_field_name("function")?;
    let args = call.child_by_field_name("arguments")?;
    if args.kind() != "arguments" {
        return None;
    }
    Some((callee, named_children(args)))
}

/// The names a binding pattern binds (`a`, `{ a, b: c, d = 1, ...rest }`, `[a, b]`).
fn pattern_names(node: Node<'_>, src: &str, out: &mut BTreeSet<String>) {
    match node.kind() {
        "identifier" | "shorthand_property_identifier_pattern" => {
            out.insert(text(node, src).to_string());
        }
        "pair_pattern" => {
            if let Some(v) = node.child_by_field_name("value") {
                pattern_names(v, src, out);
            }
        }
        "object_assignment_pattern" | "assignment_pattern" => {
            if let Some(l) = node.child_by_field_name("left") {
                pattern_names(l, src, out);
            }
        }
        "object_pattern" | "array_pattern" | "rest_pattern" => {
            for c in named_children(node) {
                pattern_names(c, src, out);
            }
        }
        _ => {}
    }
}

/// The module specifier of a `require('m')` at the root of `value` (`require('m')`,
/// `require('m').x`, `await require('m')`).
fn required<'a, 't>(value: Node<'t>, src: &'a str) -> Option<(&'a str, Node<'t>)> {
    let mut node = value;
    loop {
        match node.kind() {
            "call_expression" => {
                let (callee, args) = call_parts(node)?;
                if callee.kind() == "identifier" && text(callee, src) == "require" {
                    let spec = args.first()?;
                    return Some((literal_str(*spec, src)?, *spec));
                }
                node = callee;
            }
            "member_expression" => node = node.child_by_field_name("object")?,
            "await_expression" | "parenthesized_expression" => {
                node = *named_children(node).first()?
            }
            _ => return None,
        }
    }
}

/// The raw contents of a plain string literal (for module specifiers).
fn literal_str<'a>(node: Node<'_>, src: &'a str) -> Option<&'a str> {
    if node.kind() != "string" {
        return None;
    }
    let t = text(node, src);
    (t.len() >= 2).then(|| &t[1..t.len() - 1])
}

/// One import statement or require declaration: its node, specifier and bound names.
struct ImportStmt<'t> {
    node: Node<'t>,
    spec: String,
    /// Where the specifier is written.
    spec_at: (u32, u32),
    names: BTreeSet<String>,
}

fn imports<'t>(root: Node<'t>, src: &str) -> Vec<ImportStmt<'t>> {
    let mut out = Vec::new();
    for stmt in named_children(root) {
        match stmt.kind() {
            "import_statement" => {
                let mut names = BTreeSet::new();
                let mut spec_node = stmt.child_by_field_name("source");
                for c in named_children(stmt) {
                    match c.kind() {
                        "import_clause" => {
                            for part in named_children(c) {
                                match part.kind() {
                                    "identifier" => {
                                        names.insert(text(part, src).to_string());
                                    }
                                    "namespace_import" => {
                                        for id in named_children(part) {
                                            names.insert(text(id, src).to_string());
                                        }
                                    }
                                    "named_imports" => {
                                        for s in named_children(part) {
                                            let bound = s
                                                .child_by_field_name("alias")
                                                .or_else(|| s.child_by_field_name("name"));
                                            if let Some(b) = bound {
                                                let t = literal_str(b, src)
                                                    .unwrap_or_else(|| text(b, src));
                                                names.insert(t.to_string());
                                            }
                                        }
                                    }
                                    _ => {}
                                }
                            }
                        }
                        "import_require_clause" => {
                            for id in named_children(c) {
                                if id.kind() == "identifier" {
                                    names.insert(text(id, src).to_string());
                                }
                            }
                            spec_node = c.child_by_field_name("source");
                        }
                        _ => {}
                    }
                }
                if let Some(s) = spec_node {
                    out.push(ImportStmt {
                        node: stmt,
                        spec: literal_str(s, src).unwrap_or("").to_string(),
                        spec_at: start(s),
                        names,
                    });
                }
            }
            "lexical_declaration" | "variable_declaration" => {
                for decl in named_children(stmt) {
                    if decl.kind() != "variable_declarator" {
                        continue;
                    }
                    let (Some(name), Some(value)) = (
                        decl.child_by_field_name("name"),
                        decl.child_by_field_name("value"),
                    ) else {
                        continue;
                    };
                    let Some((spec, spec_node)) = required(value, src) else {
                        continue;
                    };
                    let mut names = BTreeSet::new();
                    pattern_names(name, src, &mut names);
                    out.push(ImportStmt {
                        node: stmt,
                        spec: spec.to_string(),
                        spec_at: start(spec_node),
                        names,
                    });
                }
            }
            "expression_statement" => {
                // A bare `require('m')` for its side effects: an import that binds nothing.
                if let Some(expr) = named_children(stmt).first() {
                    if let Some((spec, spec_node)) = required(*expr, src) {
                        out.push(ImportStmt {
                            node: stmt,
                            spec: spec.to_string(),
                            spec_at: start(spec_node),
                            names: BTreeSet::new(),
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Top-level helpers by name: (identifiers mentioned, plain identifiers reached).
type Helpers = BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)>;

fn helpers(root: Node<'_>, src: &str) -> Helpers {
    let mut out = Helpers::new();
    let mut add = |name: &str, body: Node<'_>| {
        let mut uses = BTreeSet::new();
        identifiers(body, src, &mut uses);
        let mut calls = BTreeSet::new();
        plain_identifiers(body, src, &mut calls);
        out.insert(name.to_string(), (uses, calls));
    };
    for stmt in named_children(root) {
        let decl = if stmt.kind() == "export_statement" {
            match stmt.child_by_field_name("declaration") {
                Some(d) => d,
                None => continue,
            }
        } else {
            stmt
        };
        match decl.kind() {
            "function_declaration"
            | "generator_function_declaration"
            | "class_declaration"
            | "abstract_class_declaration" => {
                if let Some(name) = decl.child_by_field_name("name") {
                    add(text(name, src), decl);
                }
            }
            "lexical_declaration" | "variable_declaration" => {
                for d in named_children(decl) {
                    if d.kind() != "variable_declarator" {
                        continue;
                    }
                    let (Some(name), Some(value)) = (
                        d.child_by_field_name("name"),
                        d.child_by_field_name("value"),
                    ) else {
                        continue;
                    };
                    if name.kind() == "identifier"
                        && matches!(
                            value.kind(),
                            "arrow_function" | "function_expression" | "function" | "class"
                        )
                    {
                        add(text(name, src), value);
                    }
                }
            }
            _ => {}
        }
    }
    out
}

fn closure(
    mut uses: BTreeSet<String>,
    reached: &BTreeSet<String>,
    helpers: &Helpers,
) -> BTreeSet<String> {
    let mut todo: Vec<&String> = reached
        .iter()
        .filter(|n| helpers.contains_key(*n))
        .collect();
    let mut done: BTreeSet<&String> = BTreeSet::new();
    while let Some(n) = todo.pop() {
        if !done.insert(n) {
            continue;
        }
        if let Some((u, calls)) = helpers.get(n) {
            uses.extend(u.iter().cloned());
            todo.extend(
                calls
                    .iter()
                    .filter(|c| helpers.contains_key(*c) && !done.contains(c)),
            );
        }
    }
    uses
}

/// What the enclosing describe blocks contribute to a test: their titles, and the identifiers
/// of their bodies outside their own tests and describes.
#[derive(Clone, Default)]
struct Scope {
    titles: Vec<String>,
    uses: BTreeSet<String>,
    reached: BTreeSet<String>,
}

struct Walk<'s> {
    src: &'s str,
    helpers: Helpers,
    items: Vec<TestItem>,
}

impl Walk<'_> {
    /// Visits `node` inside `scope`; `None` scope: below a describe whose title is not a
    /// literal, where no item can be named.
    fn visit(&mut self, node: Node<'_>, scope: Option<&Scope>) {
        if node.kind() == "call_expression" {
            if let Some((callee, args)) = call_parts(node) {
                match call_kind(callee, self.src) {
                    CallKind::Test => {
                        self.test(node, &args, scope);
                        return;
                    }
                    CallKind::Describe => {
                        self.describe(&args, scope);
                        return;
                    }
                    CallKind::Other => {}
                }
            }
        }
        for child in named_children(node) {
            self.visit(child, scope);
        }
    }

    fn test(&mut self, call: Node<'_>, args: &[Node<'_>], scope: Option<&Scope>) {
        let (Some(scope), Some(title)) = (scope, args.first().and_then(|a| literal(*a, self.src)))
        else {
            return;
        };
        let mut uses = scope.uses.clone();
        identifiers(call, self.src, &mut uses);
        let mut reached = scope.reached.clone();
        plain_identifiers(call, self.src, &mut reached);
        let mut name = scope.titles.clone();
        name.push(title);
        self.items.push(TestItem {
            name: name.join(SEP),
            lines: lines(call),
            uses: closure(uses, &reached, &self.helpers),
        });
    }

    fn describe(&mut self, args: &[Node<'_>], scope: Option<&Scope>) {
        let title = args.first().and_then(|a| literal(*a, self.src));
        let inner = match (scope, title) {
            (Some(s), Some(t)) => {
                let mut inner = s.clone();
                inner.titles.push(t);
                for body in args.iter().skip(1) {
                    self.context(*body, &mut inner);
                }
                Some(inner)
            }
            _ => None,
        };
        for body in args.iter().skip(1) {
            self.visit(*body, inner.as_ref());
        }
    }

    /// The identifiers of a describe body outside its tests and nested describes.
    fn context(&self, node: Node<'_>, scope: &mut Scope) {
        if node.kind() == "call_expression" {
            if let Some((callee, _)) = call_parts(node) {
                if call_kind(callee, self.src) != CallKind::Other {
                    return;
                }
            }
        }
        match node.kind() {
            "identifier" => {
                let t = text(node, self.src).to_string();
                scope.uses.insert(t.clone());
                scope.reached.insert(t);
            }
            "property_identifier"
            | "shorthand_property_identifier"
            | "shorthand_property_identifier_pattern"
            | "type_identifier" => {
                scope.uses.insert(text(node, self.src).to_string());
            }
            _ => {}
        }
        for child in named_children(node) {
            self.context(child, scope);
        }
    }
}

/// The test items and imports of a JavaScript or TypeScript test file (see the module doc).
pub fn item_map(source: &str, path: &str) -> Option<ItemMap> {
    let tree = parse(source, path)?;
    let root = tree.root_node();
    let mut walk = Walk {
        src: source,
        helpers: helpers(root, source),
        items: Vec::new(),
    };
    // Hooks at the top of the file run around every test in it.
    let mut top = Scope::default();
    for stmt in named_children(root) {
        let Some(call) = named_children(stmt)
            .into_iter()
            .next()
            .filter(|c| stmt.kind() == "expression_statement" && c.kind() == "call_expression")
        else {
            continue;
        };
        let is_hook = call_parts(call).is_some_and(|(callee, _)| {
            callee.kind() == "identifier"
                && matches!(
                    text(callee, source),
                    "beforeAll" | "beforeEach" | "afterAll" | "afterEach"
                )
        });
        if is_hook {
            walk.context(call, &mut top);
        }
    }
    walk.visit(root, Some(&top));
    let imports = imports(root, source)
        .into_iter()
        .map(|i| Import {
            lines: lines(i.node),
            names: i.names,
        })
        .collect();
    Some(ItemMap {
        items: walk.items,
        imports,
    })
}

/// Where a file imports (or requires) the module specifier `spec`: 1-based line and column of
/// the specifier.
pub fn import_position(source: &str, path: &str, spec: &str) -> Option<(u32, u32)> {
    let tree = parse(source, path)?;
    imports(tree.root_node(), source)
        .into_iter()
        .find(|i| i.spec == spec)
        .map(|i| i.spec_at)
}

/// Where a file's import (or require declaration) binds `name`: 1-based line and column of the
/// bound name (`limit` in `import { clamp as limit }`, `clamp` in `const { clamp } =
/// require('m')`); `None` when no import binds it.
pub fn import_binding(source: &str, path: &str, name: &str) -> Option<(u32, u32)> {
    let tree = parse(source, path)?;
    let stmt = imports(tree.root_node(), source)
        .into_iter()
        .find(|i| i.names.contains(name))?;
    fn find(node: Node<'_>, src: &str, name: &str) -> Option<(u32, u32)> {
        if matches!(
            node.kind(),
            "identifier" | "shorthand_property_identifier_pattern"
        ) && text(node, src) == name
        {
            return Some(start(node));
        }
        named_children(node)
            .into_iter()
            .find_map(|c| find(c, src, name))
    }
    find(stmt.node, source, name).or_else(|| Some(start(stmt.node)))
}

/// The first syntax error of a file (an error or a missing token, in source order): 1-based
/// line and column.
pub fn first_syntax_error(source: &str, path: &str) -> Option<(u32, u32)> {
    let tree = parse(source, path)?;
    fn find(node: Node<'_>) -> Option<(u32, u32)> {
        if node.is_error() || node.is_missing() {
            return Some(start(node));
        }
        if !node.has_error() {
            return None;
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        children.into_iter().find_map(find)
    }
    find(tree.root_node())
}

#[cfg(test)]
mod tests {
    use super::*;

    const VITEST: &str = r#"import { describe, expect, test } from 'vitest';
import add, { clamp as limit, double } from '../src/math.js';
import * as ns from '../src/ns.js';
import '../src/side.js';

function helper() {
  return limit(1);
}

test('adds', () => {
  expect(add(1, 2)).toBe(3);
});

describe('math', () => {
  const shared = double(2);
  beforeEach(() => ns.reset());
  test.only("clamps 'high'", () => {
    expect(helper()).toBe(1);
  });
  describe(`inner`, () => {
    it('deep', async () => {
      expect(obj.limit).toBe(undefined);
    });
  });
  test.each([1, 2])('each %s', (n) => {});
});
describe(name, () => {
  test('unnamed', () => {});
});
"#;

    #[test]
    fn items_and_imports_of_a_javascript_file() {
        let map = item_map(VITEST, "tests/a.test.js").unwrap();
        let names: Vec<&str> = map.items.iter().map(|i| i.name.as_str()).collect();
        assert_eq!(
            names,
            vec!["adds", "math > clamps 'high'", "math > inner > deep"]
        );
        let adds = map.item("adds").unwrap();
        assert_eq!(adds.lines, Lines { start: 10, end: 12 });
        assert!(adds.uses.contains("add") && !adds.uses.contains("limit"));
        assert!(!adds.uses.contains("setup"));
        let high = map.item("math > clamps 'high'").unwrap();
        assert_eq!(high.lines, Lines { start: 17, end: 19 });
        // Through the helper it calls, the describe's shared setup and its hook.
        for n in ["helper", "limit", "double", "ns", "reset"] {
            assert!(high.uses.contains(n), "{n}: {:?}", high.uses);
        }
        // A property named like an import is a segment of what it uses.
        assert!(map
            .item("math > inner > deep")
            .unwrap()
            .uses
            .contains("limit"));
        let imports: Vec<(u32, Vec<&str>)> = map
            .imports
            .iter()
            .map(|i| (i.lines.start, i.names.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            imports,
            vec![
                (1, vec!["describe", "expect", "test"]),
                (2, vec!["add", "double", "limit"]),
                (3, vec!["ns"]),
                (4, vec![]),
            ]
        );
        assert_eq!(
            import_position(VITEST, "a.test.js", "../src/ns.js"),
            Some((3, 21))
        );
        assert_eq!(first_syntax_error(VITEST, "a.test.js"), None);
    }

    #[test]
    fn top_level_hooks_are_every_tests_need() {
        let src = "import { setup } from './fixtures.js';\nbeforeEach(() => setup());\ntest('a', () => {});\ndescribe('d', () => {\n  it('b', () => {});\n});\n";
        let map = item_map(src, "a.test.js").unwrap();
        assert!(map.item("a").unwrap().uses.contains("setup"));
        assert!(map.item("d > b").unwrap().uses.contains("setup"));
    }

    #[test]
    fn requires_and_typescript() {
        let src = "const { add, clamp: limit } = require('../src/math');\nconst m = require('../src/m').default;\nimport x = require('./x');\nrequire('./setup');\n\ntest('uses limit', (): void => {\n  const v: Limit<number> = limit(5) as number;\n  expect(<number>v).toBe(3);\n});\n";
        let map = item_map(src, "tests/a.test.ts").unwrap();
        let imports: Vec<Vec<&str>> = map
            .imports
            .iter()
            .map(|i| i.names.iter().map(String::as_str).collect())
            .collect();
        assert_eq!(
            imports,
            vec![vec!["add", "limit"], vec!["m"], vec!["x"], vec![]]
        );
        let item = map.item("uses limit").unwrap();
        assert_eq!(item.lines, Lines { start: 6, end: 9 });
        assert!(item.uses.contains("limit") && item.uses.contains("Limit"));
        assert_eq!(
            import_position(src, "a.test.ts", "../src/math"),
            Some((1, 39))
        );
        // Where each name is bound: the alias, not the exported name.
        assert_eq!(import_binding(src, "a.test.ts", "limit"), Some((1, 21)));
        assert_eq!(import_binding(src, "a.test.ts", "add"), Some((1, 9)));
        assert_eq!(import_binding(src, "a.test.ts", "x"), Some((3, 8)));
        assert_eq!(import_binding(src, "a.test.ts", "clamp"), None);
        assert_eq!(import_binding(VITEST, "a.test.js", "limit"), Some((2, 24)));
        assert_eq!(import_binding(VITEST, "a.test.js", "ns"), Some((3, 13)));
        assert_eq!(import_binding(VITEST, "a.test.js", "helper"), None);
    }

    #[test]
    fn syntax_errors_have_a_position_and_the_rest_still_maps() {
        let src = "test('ok', () => {\n  expect(1).toBe(1);\n});\n\ntest('bad', () => {\n  expect(add(1, 2).toBe(3);\n});\n";
        let (line, _) = first_syntax_error(src, "tests/a.test.js").unwrap();
        assert!((5..=7).contains(&line), "{line}");
        let map = item_map(src, "tests/a.test.js").unwrap();
        assert!(map.item("ok").is_some());
    }
}
