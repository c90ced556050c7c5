use super::*;

fn target(kind: &str, name: &str, src: &str, test: bool) -> Target {
    Target {
        kind: kind.into(),
        name: name.into(),
        src_path: src.into(),
        test,
        required_features: false,
    }
}

fn workspace() -> Vec<Package> {
    vec![
        Package {
            name: "alpha".into(),
            id: "path+file:///w/alpha#0.1.0".into(),
            dir: "alpha/".into(),
            selected: true,
            targets: vec![
                target("lib", "alpha", "alpha/src/lib.rs", true),
                target("bin", "tool", "alpha/src/bin/tool.rs", true),
                target("test", "it", "alpha/tests/it.rs", true),
                target("test", "other", "alpha/tests/other.rs", true),
                target("example", "demo", "alpha/examples/demo.rs", false),
                target(
                    "custom-build",
                    "build-script-build",
                    "alpha/build.rs",
                    false,
                ),
            ],
        },
        Package {
            name: "beta".into(),
            id: "path+file:///w/beta#0.1.0".into(),
            dir: "beta/".into(),
            selected: true,
            targets: vec![
                target("lib", "beta", "beta/src/lib.rs", true),
                target("test", "b", "beta/tests/b.rs", true),
            ],
        },
    ]
}

fn ids(s: Selection) -> Vec<String> {
    match s {
        Selection::Everything => vec!["*".into()],
        Selection::Targets(t) => t.into_iter().map(|t| t.binary_id).collect(),
    }
}

#[test]
fn files_map_to_the_narrowest_targets() {
    let ws = workspace();
    let one = |f: &str| ids(select(&ws, &[f.to_string()]));
    assert_eq!(one("alpha/tests/it.rs"), ["alpha::it"]);
    assert_eq!(one("alpha/src/lib.rs"), ["alpha"]);
    assert_eq!(one("alpha/src/deep/mod.rs"), ["alpha", "alpha::bin/tool"]);
    assert_eq!(one("alpha/src/bin/tool.rs"), ["alpha::bin/tool"]);
    let all_alpha = ["alpha", "alpha::bin/tool", "alpha::it", "alpha::other"];
    assert_eq!(one("alpha/tests/common/mod.rs"), all_alpha);
    assert_eq!(one("alpha/Cargo.toml"), all_alpha);
    assert_eq!(one("alpha/build.rs"), all_alpha);
    assert_eq!(one("alpha/examples/demo.rs"), all_alpha);
    // Any file of a package can reach a test's name (`include!`, a build script).
    assert_eq!(one("alpha/tests/data/cases.txt"), all_alpha);
    assert_eq!(one("alpha/README.md"), all_alpha);
    // A file in no package: the full listing.
    assert_eq!(one("scripts/gen.rs"), ["*"]);
    assert_eq!(one("README.md"), ["*"]);
    assert_eq!(
        ids(select(
            &ws,
            &[
                "beta/tests/b.rs".to_string(),
                "alpha/tests/it.rs".to_string()
            ]
        )),
        ["alpha::it", "beta::b"]
    );
    let t = match select(&ws, &["alpha/src/bin/tool.rs".to_string()]) {
        Selection::Targets(t) => t,
        Selection::Everything => panic!("targets expected"),
    };
    assert_eq!(t[0].selector, ["--bin", "tool"]);
    assert_eq!(
        package_args(&ws[t[0].package])[1],
        "path+file:///w/alpha#0.1.0"
    );
}

#[test]
fn unselected_packages_and_required_features() {
    let mut ws = workspace();
    ws[1].selected = false;
    assert!(ids(select(&ws, &["beta/tests/b.rs".to_string()])).is_empty());
    ws[0].targets[3].required_features = true;
    assert_eq!(
        ids(select(&ws, &["alpha/tests/other.rs".to_string()])),
        ["*"]
    );
    assert_eq!(
        ids(select(&ws, &["alpha/tests/it.rs".to_string()])),
        ["alpha::it"]
    );
}

#[test]
fn user_selections_stand() {
    let a = |s: &[&str]| user_selects_targets(&s.iter().map(|x| x.to_string()).collect::<Vec<_>>());
    assert!(a(&["--workspace"]));
    assert!(a(&["-p", "x"]));
    assert!(a(&["-px"]));
    assert!(a(&["--package=x"]));
    assert!(!a(&["--features", "serde", "--release"]));
}

#[test]
fn metadata_members_and_default_selection() {
    let v = serde_json::json!({
        "workspace_root": "/w",
        "workspace_members": ["path+file:///w/alpha#0.1.0", "path+file:///w/beta#0.1.0"],
        "workspace_default_members": ["path+file:///w/alpha#0.1.0"],
        "packages": [
            {"name": "alpha", "id": "path+file:///w/alpha#0.1.0", "manifest_path": "/w/alpha/Cargo.toml",
             "targets": [{"kind": ["rlib", "cdylib"], "name": "alpha", "src_path": "/w/alpha/src/lib.rs", "test": true},
                         {"kind": ["test"], "name": "it", "src_path": "/w/alpha/tests/it.rs", "test": true, "required-features": ["x"]}]},
            {"name": "beta", "id": "path+file:///w/beta#0.1.0", "manifest_path": "/w/beta/Cargo.toml",
             "targets": [{"kind": ["lib"], "name": "beta", "src_path": "/w/beta/src/lib.rs", "test": true}]},
            {"name": "dep", "id": "registry+https://x#dep@1.0.0", "manifest_path": "/home/.cargo/dep/Cargo.toml", "targets": []}
        ]
    });
    let rel = |p: &Path| {
        p.strip_prefix("/w")
            .ok()
            .map(|r| r.to_string_lossy().into_owned())
            .filter(|r| !r.is_empty())
    };
    let at_root = parse_metadata(&v, &rel, None).unwrap();
    assert_eq!(at_root.len(), 2);
    assert_eq!(at_root[0].dir, "alpha/");
    assert_eq!(at_root[0].targets[0].kind, "lib");
    assert!(at_root[0].targets[1].required_features);
    // `beta` is not a default member, but its tagged files still select it.
    assert_eq!(
        at_root.iter().map(|p| p.selected).collect::<Vec<_>>(),
        [true, true]
    );
    let in_beta = parse_metadata(&v, &rel, Some("beta")).unwrap();
    assert_eq!(
        in_beta.iter().map(|p| p.selected).collect::<Vec<_>>(),
        [false, true]
    );
}
