//! The sigstore-conformance `bundle-verify` cases, run through the real `shipmoor verify-bundle`
//! as the conformance suite runs a client: each case twice, once with the artifact's path and
//! once with its `sha256:` digest. A folder whose name ends in `_fail` must exit 1, any other
//! must exit 0. Every mismatch is reported at once, by case name.

use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

const SUITE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/vectors/sigstore-conformance"
);
const DEFAULT_IDENTITY: &str = "https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/.github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main";
const DEFAULT_ISSUER: &str = "https://token.actions.githubusercontent.com";

fn suite() -> PathBuf {
    let dir = Path::new(SUITE).join("bundle-verify");
    assert!(
        dir.is_dir(),
        "the conformance vectors are missing: expected {} (vendored under tests/vectors; see \
         its README)",
        dir.display()
    );
    dir
}

/// A case's optional text file (`identity`, `issuer`), trimmed.
fn optional_text(case: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(case.join(name))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The `verify-bundle` arguments for a case, with the artifact given as a path or a digest.
fn arguments(case: &Path, by_digest: bool) -> Vec<String> {
    let mut args = vec![
        "verify-bundle".to_string(),
        "--bundle".to_string(),
        case.join("bundle.sigstore.json").display().to_string(),
    ];
    let key = case.join("key.pub");
    if key.exists() {
        args.extend(["--key".to_string(), key.display().to_string()]);
    } else {
        args.extend([
            "--certificate-identity".to_string(),
            optional_text(case, "identity").unwrap_or_else(|| DEFAULT_IDENTITY.to_string()),
            "--certificate-oidc-issuer".to_string(),
            optional_text(case, "issuer").unwrap_or_else(|| DEFAULT_ISSUER.to_string()),
        ]);
    }
    let root = case.join("trusted_root.json");
    let root = if root.exists() {
        root
    } else {
        Path::new(SUITE).join("production_trusted_root.json")
    };
    args.extend(["--trusted-root".to_string(), root.display().to_string()]);
    let artifact = case.join("artifact");
    let artifact = if artifact.exists() {
        artifact
    } else {
        suite().join("a.txt")
    };
    if by_digest {
        let bytes = std::fs::read(&artifact).unwrap();
        args.push(format!("sha256:{}", hex::encode(Sha256::digest(bytes))));
    } else {
        args.push(artifact.display().to_string());
    }
    args
}

#[test]
fn every_bundle_verify_case_gets_the_expected_exit_code() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(suite())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("bundle.sigstore.json").exists())
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 50,
        "only {} cases in {}: is the vector folder complete?",
        cases.len(),
        suite().display()
    );

    let mut outcomes = Vec::new();
    let mut mismatches = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let expected = if name.ends_with("_fail") { 1 } else { 0 };
        for (by_digest, form) in [(false, "path"), (true, "digest")] {
            let out = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
                .args(arguments(case, by_digest))
                .output()
                .unwrap();
            let code = out.status.code();
            let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
            outcomes.push(format!("{name} [{form}]: exit {code:?}: {stderr}"));
            if code != Some(expected) {
                mismatches.push(format!(
                    "{name} [{form}]: expected exit {expected}, got {code:?}\n    {stderr}"
                ));
            }
        }
    }
    // Shown with `--nocapture`: every case with the reason it passed or failed.
    println!("{}", outcomes.join("\n"));
    assert!(
        mismatches.is_empty(),
        "{} of {} runs disagree with the conformance suite:\n{}",
        mismatches.len(),
        outcomes.len(),
        mismatches.join("\n")
    );
}

#[test]
fn usage_errors_exit_2() {
    let case = suite().join("happy-path-v0.3");
    let bundle = case.join("bundle.sigstore.json").display().to_string();
    let artifact = suite().join("a.txt").display().to_string();
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
            .arg("verify-bundle")
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    // Neither a key nor both identity flags.
    let (code, stderr) = run(&["--bundle", &bundle, &artifact]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("--certificate-identity"), "{stderr}");
    let (code, stderr) = run(&[
        "--bundle",
        &bundle,
        "--certificate-identity",
        DEFAULT_IDENTITY,
        &artifact,
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    // Files that cannot be read.
    let with_identity = |bundle: &str, artifact: &str| {
        run(&[
            "--bundle",
            bundle,
            "--certificate-identity",
            DEFAULT_IDENTITY,
            "--certificate-oidc-issuer",
            DEFAULT_ISSUER,
            artifact,
        ])
    };
    let (code, stderr) = with_identity("/nonexistent/bundle.json", &artifact);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("the bundle is missing"), "{stderr}");
    let (code, stderr) = with_identity(&bundle, "/nonexistent/artifact");
    assert_eq!(code, Some(2), "{stderr}");
    let (code, stderr) = with_identity(&bundle, "sha256:1234");
    assert_eq!(code, Some(2), "{stderr}");
    let (code, stderr) = run(&[
        "--bundle",
        &bundle,
        "--key",
        "/nonexistent/key.pub",
        &artifact,
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    // A wrong identity is not a usage error: the bundle is invalid for it.
    let (code, stderr) = run(&[
        "--bundle",
        &bundle,
        "--certificate-identity",
        "https://example.com/someone-else",
        "--certificate-oidc-issuer",
        DEFAULT_ISSUER,
        "--trusted-root",
        &Path::new(SUITE)
            .join("production_trusted_root.json")
            .display()
            .to_string(),
        &artifact,
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("certificate identity"), "{stderr}");
}
