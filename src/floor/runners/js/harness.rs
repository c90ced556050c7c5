//! The files that decide how vitest and jest run a test: the test settings of `package.json`,
//! the runners' configuration files, the package manager's and TypeScript's configuration.

use crate::floor::harness::{Family, HarnessFile, HarnessHit};

/// The harness guard's rule for JavaScript (vitest and jest alike).
pub fn harness(f: &HarnessFile<'_>) -> Option<HarnessHit> {
    let hit = |what| {
        Some(HarnessHit {
            what,
            family: Family::Js,
            scope: f.dir.to_string(),
        })
    };
    match f.name {
        "package.json" if (f.differs)(&package_json_test_settings) => {
            hit("test settings in package.json")
        }
        _ if is_js_config(f.name) => hit("test runner configuration"),
        _ => None,
    }
}

/// The parts of a package.json that decide how JS tests run.
fn package_json_test_settings(text: &str) -> String {
    let v: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // Unreadable JSON: compare the whole text.
        Err(_) => return text.to_string(),
    };
    let pick = |p: &str| v.pointer(p).cloned().unwrap_or(serde_json::Value::Null);
    serde_json::json!({
        "test": pick("/scripts/test"),
        "pretest": pick("/scripts/pretest"),
        "posttest": pick("/scripts/posttest"),
        "jest": pick("/jest"),
        "vitest": pick("/vitest"),
        "type": pick("/type"),
    })
    .to_string()
}

/// A vitest, jest, vite or babel configuration or setup file, by its name.
pub fn is_js_config(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or("");
    let js_ext = [".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".json"]
        .iter()
        .any(|e| name.ends_with(e));
    js_ext
        && matches!(
            stem,
            "jest" | "vitest" | "vite" | "babel" | "setupTests" | "jest-setup" | "vitest-setup"
        )
        && (name.contains(".config.")
            || name.contains(".workspace.")
            || name.contains(".setup.")
            || stem == "setupTests")
        || name == ".babelrc"
}

/// What a JavaScript file a command wrote decides for a later vitest or jest run.
pub fn written(name: &str, _under: &dyn Fn(&str) -> bool) -> Option<&'static str> {
    Some(match name {
        "package.json" => "package.json",
        ".npmrc" | ".yarnrc" | ".yarnrc.yml" | ".pnpmfile.cjs" => "package manager configuration",
        _ if is_js_config(name) => "test runner configuration",
        _ if name.starts_with("tsconfig") && name.ends_with(".json") => "TypeScript configuration",
        _ => return None,
    })
}
