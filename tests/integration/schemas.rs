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

/// Every object a node of `v` describes, by its JSON pointer.
fn objects<'a>(v: &'a serde_json::Value, at: &str, out: &mut Vec<(String, &'a serde_json::Value)>) {
    match v {
        serde_json::Value::Object(map) => {
            if map.get("type").and_then(|t| t.as_str()) == Some("object") {
                out.push((at.to_string(), v));
            }
            for (k, child) in map {
                objects(child, &format!("{at}/{k}"), out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                objects(child, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The repository's own document schemas (`schemas/*.json`): each is a valid draft 2020-12
/// schema whose `$id` is its file name, every object it describes admits no key it does not
/// list (a script can rely on the keys it reads being all there is), and the README names it.
#[test]
fn the_document_schemas_are_valid_strict_and_listed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root.join("schemas")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let out = Command::new("check-jsonschema")
            .arg("--check-metaschema")
            .arg(&path)
            .output()
            .unwrap_or_else(|e| {
                panic!("this test needs check-jsonschema (pip install check-jsonschema): {e}")
            });
        assert!(
            out.status.success(),
            "{name} is not a valid schema:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert_eq!(
            schema["$id"],
            format!("https://github.com/shipmoor/claim-check/schemas/{name}"),
            "{name}"
        );
        assert_eq!(
            schema["properties"]["schema"]["const"],
            name.trim_end_matches(".json"),
            "{name}: the document's `schema` key names the file"
        );
        let mut found = Vec::new();
        objects(&schema, "", &mut found);
        assert!(!found.is_empty(), "{name}");
        for (at, object) in found {
            assert_eq!(
                object["additionalProperties"], false,
                "{name}: the object at `{at}` admits keys it does not describe"
            );
        }
        assert!(
            readme.contains(&format!("(schemas/{name})")),
            "the README does not link schemas/{name}"
        );
        names.push(name);
    }
    names.sort();
    assert_eq!(
        names,
        [
            "claim_check.admit.v1.json",
            "claim_check.attach.v1.json",
            "claim_check.error.v1.json",
            "claim_check.explain.v1.json",
            "claim_check.lint.v1.json",
            "claim_check.replay.v1.json",
            "claim_check.run.v1.json",
            "claim_check.shard.v1.json",
            "claim_check.tags.v1.json",
        ]
    );
}
