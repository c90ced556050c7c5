//! The files that decide how cargo builds and runs a test: the manifest's test settings, a
//! build script, cargo's and nextest's configuration, the toolchain file.

use crate::floor::harness::{section, Family, HarnessFile, HarnessHit};

/// The harness guard's rule for Rust (cargo and nextest alike).
pub fn harness(f: &HarnessFile<'_>) -> Option<HarnessHit> {
    let hit = |what, scope: &str| {
        Some(HarnessHit {
            what,
            family: Family::Rust,
            scope: scope.to_string(),
        })
    };
    let dir = f.dir;
    match f.name {
        "Cargo.toml" if (f.differs)(&cargo_test_settings) => {
            hit("cargo test settings ([[test]], harness)", dir)
        }
        "build.rs" => hit("cargo build script", dir),
        "config" | "config.toml" if dir.ends_with(".cargo") || dir == ".cargo" => hit(
            "cargo configuration",
            dir.trim_end_matches(".cargo").trim_end_matches('/'),
        ),
        "nextest.toml" if dir.ends_with(".config") || dir == ".config" => hit(
            "nextest configuration",
            dir.trim_end_matches(".config").trim_end_matches('/'),
        ),
        _ => None,
    }
}

/// The `[[test]]`, `[lib]`, `[[bin]]` and `[profile.test]` tables and every `harness`,
/// `test =` and `build =` line of a Cargo.toml: what decides how cargo builds and runs tests.
fn cargo_test_settings(text: &str) -> String {
    let mut out = section(text, &["test", "lib", "bin", "profile.test", "target"]);
    for line in text.lines() {
        let t = line.trim();
        let key = t.split('=').next().unwrap_or("").trim();
        if matches!(key, "harness" | "test" | "build" | "links") {
            out.push_str(t);
            out.push('\n');
        }
    }
    out
}

/// What a Rust file a command wrote decides for a later build.
pub fn written(name: &str, under: &dyn Fn(&str) -> bool) -> Option<&'static str> {
    Some(match name {
        "Cargo.toml" => "cargo manifest",
        "build.rs" => "cargo build script",
        "config" | "config.toml" if under(".cargo") => "cargo configuration",
        "nextest.toml" if under(".config") => "nextest configuration",
        "rust-toolchain" | "rust-toolchain.toml" => "Rust toolchain file",
        _ => return None,
    })
}
