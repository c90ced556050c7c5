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
    let e = item_map("fn x( {\n", "").unwrap_err().to_string();
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
    let e = splice(base, "mod t {").unwrap_err().to_string();
    assert!(e.starts_with("head's version does not parse"), "{e}");
}
