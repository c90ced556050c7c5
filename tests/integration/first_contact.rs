//! A new user's first run, as the README's first screen walks it: on a change's branch,
//! `shipmoor acceptance init`, a test named with the tag it prints, a commit, `shipmoor
//! claim-check` with no flags, a verdict. Then `shipmoor keygen` and a signed run that replays
//! with the public key it wrote.

use crate::common;

use std::os::unix::fs::PermissionsExt;

use common::{require_pytest, Repo};

/// A repository whose default branch has one commit, checked out on a change's branch.
fn on_a_branch() -> Repo {
    let r = Repo::new();
    r.write("app.py", "def greet(name):\n    return name\n");
    r.commit("base");
    r.git(&["branch", "-M", "main"]);
    r.git(&["checkout", "-q", "-b", "feature/greeting"]);
    r
}

/// On a branch, a change whose one criterion a command checks: READY, no runner needed.
fn a_command_checked_change() -> Repo {
    let r = on_a_branch();
    r.write("check.sh", "grep -q hello app.py\n");
    r.write(
        ".shipmoor/changes/feature-greeting.yaml",
        "version: 1\ncriteria:\n  - id: says-hello\n    ac: It says hello.\n    check:\n      command: sh check.sh\n",
    );
    r.write("app.py", "def greet(name):\n    return \"hello \" + name\n");
    r.commit("greet");
    r
}

#[test]
fn init_a_tagged_test_a_commit_and_claim_check_reach_a_verdict() {
    require_pytest();
    let r = on_a_branch();

    // 1. `shipmoor acceptance init`: the change's file, named after the branch, and the
    //    shared files a first run needs.
    let init = r.shipmoor(&["acceptance", "init"]);
    assert_eq!(init.code, 0, "{init:?}");
    let file = ".shipmoor/changes/feature-greeting.yaml";
    assert!(init.stdout.starts_with(&format!(
        "wrote {file}, .shipmoor/config.yaml, .shipmoor/.gitignore\n"
    )));
    let tag = common::tag("describe-the-behaviour");
    assert!(init.stdout.contains(&tag), "{}", init.stdout);
    let test_name = format!("test_{}", common::ident("describe-the-behaviour"));
    assert!(
        init.stdout.contains(&format!("`def {test_name}():`")),
        "the next steps name the test to write: {}",
        init.stdout
    );
    let lint = r.shipmoor(&["acceptance", "lint"]);
    assert_eq!(lint.code, 0, "the starter validates: {lint:?}");

    // 2. The test the printed tag names, and the change it checks.
    r.write("app.py", "def greet(name):\n    return \"hello \" + name\n");
    r.write(
        "tests/test_app.py",
        &format!("from app import greet\n\n\ndef {test_name}():\n    assert greet(\"ann\") == \"hello ann\"\n"),
    );
    // 3. A commit (the .gitignore keeps the run's outputs out of it).
    r.commit("greet people");

    // 4. `shipmoor claim-check`, no flags: the base is the merge-base with main.
    let run = r.shipmoor(&["claim-check"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("Claim Check  READY"),
        "{}",
        run.stdout
    );
    assert_eq!(
        r.status(),
        "",
        "the outputs are ignored, the checkout clean"
    );

    // Starting again is refused; --force starts the file again.
    let again = r.shipmoor(&["acceptance", "init"]);
    assert_eq!(again.code, 2, "{again:?}");
    assert!(again.stderr.contains("exists already"), "{}", again.stderr);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
}

#[test]
fn init_drafts_the_criteria_from_a_checklist_and_on_main_writes_the_acceptance_file() {
    let r = Repo::new();
    r.write("README", "x\n");
    r.commit("base");
    r.git(&["branch", "-M", "main"]);
    r.write(
        "pr.md",
        "## Acceptance criteria\n- [ ] A refund voids the payment intent.\n- [ ] The order is marked refunded.\n",
    );
    let init = r.shipmoor(&["acceptance", "init", "--from", "pr.md"]);
    assert_eq!(init.code, 0, "{init:?}");
    let yaml = r.read(".shipmoor/acceptance.yaml");
    assert!(yaml.contains("# Drafted from pr.md"), "{yaml}");
    assert!(
        yaml.contains("ac: \"A refund voids the payment intent.\""),
        "{yaml}"
    );
    assert!(
        yaml.contains("ac: \"The order is marked refunded.\""),
        "{yaml}"
    );
    assert!(!init.stdout.contains("1. edit"), "{}", init.stdout);
    // A config that exists is kept.
    r.write(".shipmoor/config.yaml", "version: 1\nguard: true\n");
    let again = r.shipmoor(&["acceptance", "init", "--force"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(r.read(".shipmoor/config.yaml"), "version: 1\nguard: true\n");
    assert!(
        again
            .stdout
            .starts_with("wrote .shipmoor/acceptance.yaml\n"),
        "{}",
        again.stdout
    );
    // Text without a checklist is an input error that says what to write.
    r.write("empty.md", "no criteria here\n");
    let none = r.shipmoor(&["acceptance", "init", "--force", "--from", "empty.md"]);
    assert_eq!(none.code, 2, "{none:?}");
    assert!(none.stderr.contains("checklist"), "{}", none.stderr);
}

#[test]
fn keygen_writes_a_pair_that_signs_and_replays() {
    let r = a_command_checked_change();
    let keys = tempfile::tempdir().unwrap();
    let dir = keys.path().to_str().unwrap();
    let gen = r.shipmoor_env(
        &["keygen", "--output-dir", dir],
        &[("SHIPMOOR_KEY_PASSWORD", "")],
    );
    assert_eq!(gen.code, 0, "{gen:?}");
    let private = keys.path().join("shipmoor.key");
    let public = keys.path().join("shipmoor.pub");
    let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the private key is the owner's alone");
    let pem = std::fs::read_to_string(&private).unwrap();
    assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----"), "{pem}");
    assert!(
        gen.stdout
            .contains("unencrypted: set SHIPMOOR_KEY_PASSWORD"),
        "{}",
        gen.stdout
    );

    // A second keygen keeps the pair unless --force.
    let again = r.shipmoor(&["keygen", "--output-dir", dir]);
    assert_eq!(again.code, 2, "{again:?}");
    assert_eq!(std::fs::read_to_string(&private).unwrap(), pem);

    let sign = r.shipmoor(&[
        "claim-check",
        "--sign",
        "key",
        "--key",
        private.to_str().unwrap(),
    ]);
    assert_eq!(sign.code, 0, "{sign:?}");
    let replay = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.sigstore.json",
        "--key",
        public.to_str().unwrap(),
    ]);
    assert_eq!(replay.code, 0, "{replay:?}");
    assert!(replay.stdout.contains("ECDSA P-256"), "{}", replay.stdout);

    // With SHIPMOOR_KEY_PASSWORD the private key is encrypted, and claim-check reads it back
    // with the same variable.
    let forced = r.shipmoor_env(
        &["keygen", "--output-dir", dir, "--force"],
        &[("SHIPMOOR_KEY_PASSWORD", "correct horse")],
    );
    assert_eq!(forced.code, 0, "{forced:?}");
    let pem = std::fs::read_to_string(&private).unwrap();
    assert!(
        pem.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"),
        "{pem}"
    );
    let sign = r.shipmoor_env(
        &[
            "claim-check",
            "--sign",
            "key",
            "--key",
            private.to_str().unwrap(),
        ],
        &[("SHIPMOOR_KEY_PASSWORD", "correct horse")],
    );
    assert_eq!(sign.code, 0, "{sign:?}");
}

/// Outputs are created as any command creates files: 0666 less the user's umask (here 027), not
/// private to the writer.
#[test]
fn outputs_follow_the_users_umask() {
    let r = a_command_checked_change();
    let bin = env!("CARGO_BIN_EXE_shipmoor");
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            &format!("umask 027 && exec '{bin}' claim-check --quiet"),
        ])
        .current_dir(r.path())
        .env("SOURCE_DATE_EPOCH", common::PINNED_EPOCH)
        .env_remove("GITHUB_EVENT_PATH")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    for file in [
        ".shipmoor/claim-check.vsa.json",
        ".shipmoor/claim-check.fixes.json",
        ".shipmoor/verify.md",
    ] {
        let mode = std::fs::metadata(r.path().join(file))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o640, "{file}: {mode:o}");
    }
    let blobs = std::fs::read_dir(r.path().join(".shipmoor/evidence/sha256")).unwrap();
    for blob in blobs {
        let mode = blob.unwrap().metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "evidence blob: {mode:o}");
    }
}
