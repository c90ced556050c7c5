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
