//! The files that decide how `go test` runs a test: a test file's `TestMain`, the module files,
//! any Go source.

use crate::floor::harness::{Family, HarnessFile, HarnessHit};

/// The harness guard's rule for Go: a `TestMain` a test file adds or changes governs its
/// package's directory.
pub fn harness(f: &HarnessFile<'_>) -> Option<HarnessHit> {
    let test_main = |t: &str| {
        t.find("func TestMain(")
            .map(|i| t[i..].to_string())
            .unwrap_or_default()
    };
    (f.name.ends_with("_test.go") && (f.differs)(&test_main)).then(|| HarnessHit {
        what: "Go TestMain",
        family: Family::Go,
        scope: f.dir.to_string(),
    })
}

/// What a Go file a command wrote decides for a later `go test`.
pub fn written(name: &str, _under: &dyn Fn(&str) -> bool) -> Option<&'static str> {
    Some(match name {
        "go.mod" | "go.work" => "Go module file",
        _ if name.ends_with(".go") => "Go source",
        _ => return None,
    })
}
