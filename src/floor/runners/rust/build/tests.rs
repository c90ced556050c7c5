use super::*;
use crate::floor::runners::rust::diagnostics::SpanAt;

#[test]
fn cargo_messages_are_kept_in_target_order_whatever_order_the_builds_finished_in() {
    let line = |name: &str, n: u32| {
        format!(
            r#"{{"reason":"compiler-message","package_id":"p","target":{{"kind":["test"],"name":"{name}"}},"n":{n}}}"#
        )
    };
    let done = r#"{"reason":"build-finished","success":true}"#;
    let one = [
        line("b", 1),
        line("a", 1),
        line("b", 2),
        line("a", 2),
        done.into(),
    ]
    .join("\n")
        + "\n";
    let other = [
        line("a", 1),
        line("b", 1),
        line("a", 2),
        line("b", 2),
        done.into(),
    ]
    .join("\n")
        + "\n";
    let want = [
        line("a", 1),
        line("a", 2),
        line("b", 1),
        line("b", 2),
        done.into(),
    ]
    .join("\n")
        + "\n";
    assert_eq!(
        String::from_utf8(in_target_order(one.as_bytes())).unwrap(),
        want
    );
    assert_eq!(
        in_target_order(one.as_bytes()),
        in_target_order(other.as_bytes())
    );
    assert_eq!(in_target_order(b"not json\n{}"), b"not json\n{}");
}

#[test]
fn test_binaries_come_by_binary_id_whatever_order_their_builds_finished_in() {
    let artifact = |kind: &str, name: &str| {
        format!(
            r#"{{"reason":"compiler-artifact","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{{"kind":["{kind}"],"crate_types":["{kind}"],"name":"{name}","src_path":"/tmp/wt/tests/{name}.rs","test":true}},"profile":{{"test":true}},"executable":"/tmp/target/debug/deps/{name}-1"}}"#
        )
    };
    let stdout = [
        artifact("test", "zeta"),
        artifact("lib", "fx_crate"),
        artifact("test", "alpha"),
    ]
    .join("\n");
    let ids: Vec<String> = parse_cargo_messages(stdout.as_bytes())
        .binaries
        .into_iter()
        .map(|b| b.binary_id)
        .collect();
    assert_eq!(ids, ["fx-crate", "fx-crate::alpha", "fx-crate::zeta"]);
}

#[test]
fn cargo_messages() {
    let stdout = br#"   Compiling noise
{"reason":"compiler-artifact","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"fx_crate","src_path":"/tmp/wt/src/lib.rs","test":true},"profile":{"test":true},"executable":"/tmp/target/debug/deps/fx_crate-1"}
{"reason":"compiler-artifact","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"fx_crate","src_path":"/tmp/wt/src/lib.rs","test":true},"profile":{"test":false},"executable":null}
{"reason":"compiler-artifact","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{"kind":["bin"],"crate_types":["bin"],"name":"tool","src_path":"/tmp/wt/src/bin/tool.rs","test":true},"profile":{"test":false},"executable":"/tmp/target/debug/tool"}
{"reason":"compiler-message","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{"kind":["test"],"name":"t","src_path":"/tmp/wt/tests/t.rs"},"message":{"rendered":"error[E0308]: mismatched types\n --> tests/t.rs:2:28\n","level":"error","message":"mismatched types","spans":[{"file_name":"tests/t.rs","is_primary":true,"line_start":2,"column_start":28,"expansion":null},{"file_name":"src/lib.rs","is_primary":false,"expansion":null}],"children":[{"level":"note","message":"defined here","spans":[{"file_name":"src/other.rs","is_primary":true}]}]}}
{"reason":"compiler-message","package_id":"path+file:///tmp/wt#fx-crate@0.1.0","manifest_path":"/tmp/wt/Cargo.toml","target":{"kind":["test"],"name":"t","src_path":"/tmp/wt/tests/t.rs"},"message":{"rendered":"error: in macro\n","level":"error","message":"in macro","spans":[{"file_name":"/home/u/.cargo/registry/src/x/mac.rs","is_primary":true,"line_start":9,"column_start":1,"expansion":{"span":{"file_name":"tests/helpers/mod.rs","is_primary":false,"line_start":4,"column_start":5,"expansion":null},"macro_decl_name":"m!"}}],"children":[]}}
{"reason":"compiler-message","message":{"rendered":"warning: unused\n","level":"warning","message":"unused","spans":[{"file_name":"src/lib.rs","is_primary":true}],"children":[]}}
{"reason":"compiler-message","message":{"rendered":"error: aborting due to 1 previous error\n","level":"error","message":"aborting due to 1 previous error","spans":[],"children":[]}}
{"reason":"build-finished","success":false}
{"rust-suites":{}}
"#;
    let msgs = parse_cargo_messages(stdout);
    assert_eq!(msgs.binaries.len(), 1);
    let b = &msgs.binaries[0];
    assert_eq!(b.binary_id, "fx-crate");
    assert_eq!(b.kind, "lib");
    assert_eq!(b.src_path, PathBuf::from("/tmp/wt/src/lib.rs"));
    assert_eq!(b.package_version.as_deref(), Some("0.1.0"));
    assert_eq!(msgs.build_success, Some(false));
    assert_eq!(msgs.errors.len(), 2);
    assert_eq!(msgs.errors[0].files, vec!["tests/t.rs"]);
    assert_eq!(
        msgs.errors[1].files,
        vec![
            "/home/u/.cargo/registry/src/x/mac.rs",
            "tests/helpers/mod.rs"
        ]
    );
    assert_eq!(msgs.other_json.len(), 1);
    // Positions, innermost first: the macro's own file, then the call site in the tests.
    let at = |f: &str, line, column| SpanAt {
        file: f.into(),
        line,
        column: Some(column),
    };
    assert_eq!(
        msgs.errors[0].positions,
        vec![vec![at("tests/t.rs", 2, 28)]]
    );
    assert_eq!(msgs.errors[0].message, "mismatched types");
    assert_eq!(
        msgs.errors[1].positions,
        vec![vec![
            at("/home/u/.cargo/registry/src/x/mac.rs", 9, 1),
            at("tests/helpers/mod.rs", 4, 5)
        ]]
    );
}
