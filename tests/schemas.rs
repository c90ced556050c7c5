//! The Action's metadata and the workflows validate against GitHub's published schemas
//! (check-jsonschema's vendored copies, offline).

use std::path::Path;
use std::process::Command;

fn check(schema: &str, file: &Path) {
    let out = Command::new("check-jsonschema")
        .args(["--builtin-schema", schema])
        .arg(file)
        .output()
        .unwrap_or_else(|e| {
            panic!("this test needs check-jsonschema (pip install check-jsonschema): {e}")
        });
    assert!(
        out.status.success(),
        "{} does not validate against {schema}:\n{}{}",
        file.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn action_metadata_validates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    check("vendor.github-actions", &root.join("action.yml"));
    let container = root.join("container/action.yml");
    assert!(container.exists(), "container/action.yml is missing");
    check("vendor.github-actions", &container);
}

#[test]
fn workflows_validate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(".github/workflows");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yml" || e == "yaml") {
            check("vendor.github-workflows", &path);
            n += 1;
        }
    }
    assert!(
        n >= 4,
        "expected the CI, release, self-test and reusable workflows, found {n}"
    );
}
