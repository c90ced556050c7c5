use super::*;
use crate::floor::runners::kit::parse_package_id;

#[test]
fn cargo_errors_skip_warnings() {
    let deprecated = "warning: `/w/.cargo/config` is deprecated in favor of `config.toml`\n  |\n  = help: if you need to support cargo 1.38 or earlier, you can symlink `config` to `config.toml`\n";
    let stderr = format!("{deprecated}     Locking 4 packages to latest compatible versions\nerror: failed to download `winapi v0.3.9`\n\nCaused by:\n  attempting to make an HTTP request, but --offline was specified\n");
    assert_eq!(
        cargo_error(&stderr),
        "error: failed to download `winapi v0.3.9` Caused by: attempting to make an HTTP \
             request, but --offline was specified"
    );
    let stderr = "error: no matching package named `zzz` found\nlocation searched: crates.io index\nrequired by package `fx v0.1.0 (/w)`\nAs a reminder, you're using offline mode\nmore\nand more\nwarning: x\n";
    assert_eq!(
        cargo_error(stderr),
        "error: no matching package named `zzz` found location searched: crates.io index \
             required by package `fx v0.1.0 (/w)` As a reminder, you're using offline mode more"
    );
    assert_eq!(
        cargo_error("warning: a\n  something odd\n\n"),
        "something odd"
    );
    assert_eq!(cargo_error(""), "(no output)");
}

#[test]
fn workspace_members_by_name() {
    let json = br#"{"packages":[
          {"name":"itoa","version":"0.9.0","id":"path+file:///w/itoa#0.9.0","source":null,
           "authors":["A <a@x>","B"],"description":"d","homepage":null,"license":"MIT",
           "license_file":null,"readme":"README.md","repository":null,"rust_version":"1.70"},
          {"name":"other","version":"1.0.0","id":"path+file:///elsewhere#other@1.0.0","source":null}
        ],"workspace_members":["path+file:///w/itoa#0.9.0"],"target_directory":"/w/target"}"#;
    let ws = parse_workspace_packages(json).unwrap();
    assert_eq!(ws.keys().collect::<Vec<_>>(), ["itoa"]);
    let p = &ws["itoa"];
    assert_eq!(p.id, "path+file:///w/itoa#0.9.0");
    assert_eq!(
        p.manifest_env,
        [
            ("AUTHORS", "A <a@x>:B".to_string()),
            ("DESCRIPTION", "d".into()),
            ("HOMEPAGE", "".into()),
            ("LICENSE", "MIT".into()),
            ("LICENSE_FILE", "".into()),
            ("README", "README.md".into()),
            ("REPOSITORY", "".into()),
            ("RUST_VERSION", "1.70".into()),
        ]
    );
    assert!(parse_workspace_packages(b"error").is_err());
}

#[test]
fn package_ids() {
    assert_eq!(
        parse_package_id("path+file:///tmp/exp/fx#fx-crate@0.1.0"),
        Some(("fx-crate".into(), Some("0.1.0".into())))
    );
    assert_eq!(
        parse_package_id("path+file:///tmp/exp/fx-crate#0.1.0"),
        Some(("fx-crate".into(), Some("0.1.0".into())))
    );
    assert_eq!(
        parse_package_id("fx-crate 0.1.0 (path+file:///tmp/exp/fx)"),
        Some(("fx-crate".into(), Some("0.1.0".into())))
    );
    assert_eq!(
        parse_package_id("git+https://github.com/a/b?branch=main#c@1.2.3-rc.1"),
        Some(("c".into(), Some("1.2.3-rc.1".into())))
    );
}

#[test]
fn binary_ids() {
    assert_eq!(nextest_kind(&["cdylib", "rlib"]).as_deref(), Some("lib"));
    assert_eq!(nextest_kind(&["proc-macro"]).as_deref(), Some("proc-macro"));
    assert_eq!(binary_id("fx-crate", "lib", "fx_crate"), "fx-crate");
    assert_eq!(binary_id("fx-crate", "proc-macro", "fx_crate"), "fx-crate");
    assert_eq!(binary_id("fx-crate", "test", "t"), "fx-crate::t");
    assert_eq!(binary_id("fx-crate", "bin", "tool"), "fx-crate::bin/tool");
    assert_eq!(
        binary_id("fx-crate", "example", "demo"),
        "fx-crate::example/demo"
    );
}
