//! Bad input: every case is a clear message naming the file, line and fix, exit 2, nothing
//! written, and the checkout exactly as it was.

use crate::common;

use common::{require_pytest, Repo};

fn repo_with(acceptance: &str) -> (Repo, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("tests/test_a.py", "def test_a():\n    assert True\n");
    let base = r.commit("base");
    r.write("tests/test_b.py", "def test_b():\n    assert True\n");
    r.write(".shipmoor/acceptance.yaml", acceptance);
    r.commit("head");
    (r, base)
}

/// Runs claim-check and asserts exit 2, no outputs, the same `git status`; returns stderr.
fn rejected(r: &Repo, args: &[&str]) -> String {
    rejected_env(r, args, &[])
}

fn rejected_env(r: &Repo, args: &[&str], env: &[(&str, &str)]) -> String {
    let before = r.status();
    let run = r.shipmoor_env(args, env);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(r.status(), before, "the checkout changed");
    for out in [
        "claim-check.vsa.json",
        "claim-check.fixes.json",
        "verify.md",
        "evidence",
    ] {
        assert!(!r.exists(&format!(".shipmoor/{out}")), "{out} was written");
    }
    assert!(r.extra_worktrees().is_empty());
    assert!(run.stdout.is_empty(), "{run:?}");
    run.stderr
}

#[test]
fn malformed_yaml_names_file_line_and_fix() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: [unclosed\n");
    let err = rejected(&r, &["claim-check", "--base", &base]);
    assert!(err.contains(".shipmoor/acceptance.yaml:"), "{err}");
    assert!(err.contains("help:"), "{err}");
}

#[test]
fn unknown_keys_are_reported_with_a_suggestion_all_at_once() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    requird: true\n  - id: b\n    ac: B.\n    lanes: floor\n");
    let err = rejected(&r, &["claim-check", "--base", &base]);
    assert!(err.contains(".shipmoor/acceptance.yaml:5:5:"), "{err}");
    assert!(err.contains("`requird`"), "{err}");
    assert!(err.contains("did you mean `required`?"), "{err}");
    assert!(err.contains(".shipmoor/acceptance.yaml:8:5:"), "{err}");
    let lint = r.shipmoor(&["acceptance", "lint"]);
    assert_eq!(lint.code, 2);
    assert!(lint.stderr.contains("2 errors"), "{lint:?}");
}

#[test]
fn duplicate_ids_name_both_lines() {
    let (r, base) =
        repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n  - id: a\n    ac: B.\n");
    let err = rejected(&r, &["claim-check", "--base", &base]);
    assert!(err.contains(".shipmoor/acceptance.yaml:5:"), "{err}");
    assert!(err.contains("line 3"), "{err}");
}

#[test]
fn an_empty_acceptance_set_is_an_input_error_never_ready() {
    let (r, base) = repo_with("version: 1\ncriteria: []\n");
    let err = rejected(&r, &["claim-check", "--base", &base]);
    assert!(err.contains("no criteria"), "{err}");
}

#[test]
fn a_base_that_is_not_an_ancestor() {
    let (r, _) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n");
    r.git(&["switch", "--quiet", "--orphan", "other"]);
    r.write("x.txt", "x");
    let other = r.commit("unrelated");
    r.git(&["switch", "--quiet", "main"]);
    let err = rejected(&r, &["claim-check", "--base", &other]);
    assert!(err.contains("is not an ancestor"), "{err}");
    assert!(err.contains("help:"), "{err}");
    let err = rejected(&r, &["claim-check", "--base", "no-such-ref"]);
    assert!(err.contains("`no-such-ref` is not a commit"), "{err}");
}

#[test]
fn a_dirty_tree_is_refused() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n");
    r.write("tests/test_a.py", "def test_a():\n    assert False\n");
    let err = rejected(&r, &["claim-check", "--base", &base]);
    assert!(
        err.contains("uncommitted changes to tracked files: tests/test_a.py"),
        "{err}"
    );
    assert!(err.contains("git stash"), "{err}");
}

#[test]
fn a_missing_runner_tool_is_an_input_error() {
    let (r, base) =
        repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\nrunners:\n  - kind: pytest\n");
    // A PATH with git and nothing else.
    let bin = tempfile::tempdir().unwrap();
    let git = which("git");
    std::os::unix::fs::symlink(git, bin.path().join("git")).unwrap();
    let path = bin.path().display().to_string();
    let err = rejected_env(&r, &["claim-check", "--base", &base], &[("PATH", &path)]);
    assert!(err.contains("pytest"), "{err}");
    assert!(err.contains("help:"), "{err}");
}

/// jest and vitest as pytest above: without `node` on PATH, with node but without the
/// project's own binary in the checkout (no `npm ci`, no `setup:`), or with a `setup:` that
/// installs no binary, exit 2, never an INCONCLUSIVE verdict over empty evidence.
#[test]
fn a_missing_javascript_runner_tool_is_an_input_error() {
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(which("git"), bin.path().join("git")).unwrap();
    let git_only = bin.path().display().to_string();
    for kind in ["jest", "vitest"] {
        let r = Repo::new();
        r.write("package.json", "{\"name\": \"web\", \"private\": true}\n");
        r.write("src/sum.js", "module.exports = (a, b) => a - b;\n");
        let base = r.commit("base");
        r.write("src/sum.js", "module.exports = (a, b) => a + b;\n");
        r.write(
            &format!("test/sum_{}.test.js", common::ident("adds")),
            "const sum = require('../src/sum');\ntest('adds', () => expect(sum(1, 2)).toBe(3));\n",
        );
        r.write(
            ".shipmoor/acceptance.yaml",
            &format!(
                "version: 1\ncriteria:\n  - id: adds\n    ac: Adds.\nrunners:\n  - kind: {kind}\n"
            ),
        );
        r.commit("head");
        let err = rejected_env(
            &r,
            &["claim-check", "--base", &base],
            &[("PATH", &git_only)],
        );
        assert!(
            err.contains("`node` was not found on PATH"),
            "{kind}: {err}"
        );
        assert!(err.contains("help:"), "{kind}: {err}");
        let err = rejected(&r, &["claim-check", "--base", &base]);
        assert!(
            err.contains(&format!(
                "`node_modules/.bin/{kind}` is not installed in the checkout"
            )),
            "{kind}: {err}"
        );
        assert!(err.contains("help: run `npm ci` in `.`"), "{kind}: {err}");
        assert!(err.contains("`setup: npm ci`"), "{kind}: {err}");
        // A setup that succeeds without installing the tool: the same, once it has run.
        r.write(
            ".shipmoor/acceptance.yaml",
            &format!("version: 1\ncriteria:\n  - id: adds\n    ac: Adds.\nrunners:\n  - kind: {kind}\n    setup: \"true\"\n"),
        );
        r.commit("setup");
        let err = rejected(&r, &["claim-check", "--base", &base]);
        assert!(
            err.contains(&format!(
                "the runner's setup `true` succeeded but installed no `node_modules/.bin/{kind}`"
            )),
            "{kind}: {err}"
        );
        assert!(err.contains("help: make `setup:` install"), "{kind}: {err}");
    }
}

/// A base branch that exists only as a remote-tracking branch (what a CI checkout has) names
/// the one to pass; passed, it resolves.
#[test]
fn a_base_that_exists_only_on_the_remote_suggests_the_remote_tracking_branch() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n");
    // What `git fetch` leaves for a branch of the remote that was never checked out here.
    r.git(&["update-ref", "refs/remotes/origin/trunk", &base]);
    let err = rejected(&r, &["claim-check", "--base", "trunk"]);
    assert!(
        err.contains("--base `trunk` is not a commit in this repository: there is no local branch `trunk`, only the remote-tracking `origin/trunk`"),
        "{err}"
    );
    assert!(
        err.contains("help: pass `--base origin/trunk` (or create the branch: `git branch trunk origin/trunk`)"),
        "{err}"
    );
    // A name that is nowhere keeps the general help.
    let err = rejected(&r, &["claim-check", "--base", "nowhere"]);
    assert!(err.contains("--base `nowhere` is not a commit"), "{err}");
    assert!(!err.contains("remote-tracking"), "{err}");
    assert!(err.contains("fetch-depth: 0"), "{err}");
    let run = r.shipmoor(&["claim-check", "--base", "origin/trunk"]);
    assert_ne!(run.code, 2, "{run:?}");
}

/// A repository without a commit says so, and how to make the two commits a check compares.
#[test]
fn an_empty_repository_says_it_has_no_commits() {
    let r = Repo::new();
    for args in [&["claim-check"][..], &["claim-check", "--base", "main"]] {
        let err = rejected(&r, args);
        assert!(err.contains("the repository has no commits yet"), "{err}");
        assert!(err.contains("git add -A && git commit -m base"), "{err}");
    }
}

/// The error document of `--format json`: stdout holds it alone (exit 2 still), every problem
/// with its place and hint; stderr keeps the human form.
fn error_document(run: &common::Run) -> serde_json::Value {
    assert_eq!(run.code, 2, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("stdout is one JSON document ({e}): {run:?}"));
    assert_eq!(v["schema"], "claim_check.error.v1", "{v}");
    common::assert_matches_schema("claim_check.error.v1", &run.stdout);
    assert_eq!(v["exit_code"], 2, "{v}");
    assert_eq!(v["kind"], "input", "{v}");
    assert!(run.stderr.contains("error: "), "{run:?}");
    for e in v["errors"].as_array().expect("errors") {
        let keys: Vec<&str> = e.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["column", "file", "help", "line", "message"], "{e}");
    }
    v
}

#[test]
fn with_format_json_an_input_error_is_a_json_document_on_stdout() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n    requird: true\n  - id: b\n    ac: B.\n    lanes: floor\n");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    let v = error_document(&run);
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{v}");
    assert_eq!(errors[0]["file"], ".shipmoor/acceptance.yaml");
    assert_eq!(
        (errors[0]["line"].as_u64(), errors[0]["column"].as_u64()),
        (Some(5), Some(5))
    );
    assert!(
        errors[0]["message"].as_str().unwrap().contains("`requird`"),
        "{v}"
    );
    assert!(
        errors[0]["help"]
            .as_str()
            .unwrap()
            .contains("did you mean `required`?"),
        "{v}"
    );
    assert_eq!(errors[1]["line"], 8, "{v}");
    // The same file through `acceptance lint --format json`.
    let lint = r.shipmoor(&["acceptance", "lint", "--format", "json"]);
    assert_eq!(error_document(&lint)["errors"], v["errors"]);
    // A flag error of the command itself, and the other commands with a format.
    let v = error_document(&r.shipmoor(&["claim-check", "--base", "nowhere", "--format", "json"]));
    assert!(
        v["errors"][0]["help"]
            .as_str()
            .unwrap()
            .contains("fetch-depth"),
        "{v}"
    );
    let v = error_document(&r.shipmoor(&["replay", "gone.json", "--format", "json"]));
    assert_eq!(v["errors"][0]["file"], "gone.json", "{v}");
    let v = error_document(&r.shipmoor(&[
        "admit",
        "--policy",
        "gone.yaml",
        "--attestation",
        "gone.json",
        "--format",
        "json",
    ]));
    assert_eq!(v["errors"][0]["file"], "gone.yaml", "{v}");
    // A command line that does not parse, when it asks for JSON.
    let v = error_document(&r.shipmoor(&["admit", "--policy", "gone.yaml", "--format=json"]));
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("--attestation"),
        "{v}"
    );
    let v = error_document(&r.shipmoor(&[
        "attach",
        "registry.invalid/app:1",
        "--attestation",
        "gone.json",
        "--format",
        "json",
    ]));
    assert!(v["errors"][0]["message"].as_str().is_some(), "{v}");
    // Without --format json stdout stays empty.
    let run = r.shipmoor(&["claim-check", "--base", "nowhere"]);
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty(), "{run:?}");
}

/// `acceptance lint --format json` of a valid set: one document with a `schema` key.
#[test]
fn acceptance_lint_prints_json() {
    let (r, _base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n");
    let run = r.shipmoor(&["acceptance", "lint", "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    common::assert_schema_is_strict("claim_check.lint.v1", &run.stdout);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["schema"], "claim_check.lint.v1");
    assert_eq!(v["ok"], true);
    assert_eq!(v["files"][0]["file"], ".shipmoor/acceptance.yaml", "{v}");
    assert_eq!(v["files"][0]["state"], "committed", "{v}");
    assert_eq!(v["files"][0]["criteria"][0]["id"], "a", "{v}");
    assert!(
        v["files"][0]["criteria"][0]["tag"]
            .as_str()
            .unwrap()
            .starts_with("AC-A-"),
        "{v}"
    );
    // Outside a git repository, with the shared settings: the note and the config.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".shipmoor")).unwrap();
    for file in ["acceptance.yaml", "config.yaml"] {
        let text = if file == "config.yaml" {
            "version: 1\ninherited: guard\n".to_string()
        } else {
            r.read(".shipmoor/acceptance.yaml")
        };
        std::fs::write(dir.path().join(".shipmoor").join(file), text).unwrap();
    }
    let run = r.shipmoor(&[
        "acceptance",
        "lint",
        "--repo",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    common::assert_matches_schema("claim_check.lint.v1", &run.stdout);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        v["note"].as_str().unwrap().contains("no base commit"),
        "{v}"
    );
    assert_eq!(
        v["config"]["settings"],
        serde_json::json!(["inherited"]),
        "{v}"
    );
}

#[test]
fn bad_flags_are_usage_errors() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n");
    rejected(&r, &["claim-check", "--base", &base, "--runs", "0"]);
    rejected(
        &r,
        &["claim-check", "--base", &base, "--subject", "app=sha1:00"],
    );
    rejected(&r, &["claim-check", "--no-such-flag"]);
}

fn which(p: &str) -> std::path::PathBuf {
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(p))
                .find(|c| c.is_file())
        })
        .unwrap_or_else(|| panic!("{p} not on PATH"))
}

#[test]
fn an_output_that_cannot_be_written_is_an_input_error_and_nothing_is_written() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n");
    let err = rejected(
        &r,
        &[
            "claim-check",
            "--base",
            &base,
            "--report-out",
            "/proc/no-such/verify.md",
        ],
    );
    assert!(err.contains("--report-out"), "{err}");
    assert!(err.contains("not a writable directory"), "{err}");
}

#[test]
fn a_runner_root_that_does_not_exist_is_an_input_error() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\nrunners:\n  - kind: pytest\n    root: services/api\n");
    let err = rejected(&r, &["claim-check", "--base", &base]);
    assert!(err.contains(".shipmoor/acceptance.yaml:6:1:"), "{err}");
    assert!(
        err.contains("runner root `services/api` is not a directory"),
        "{err}"
    );
}

/// The head commit is untrusted: the code the floor runs never sees the job's signing secrets or
/// GitHub's workflow command files.
#[test]
fn the_code_under_check_gets_no_secrets() {
    let r = Repo::new();
    r.write("a.txt", "a");
    let base = r.commit("base");
    let dump = r.shared.path().join("env");
    r.write("check.sh", &format!("env > {}\nexit 0\n", dump.display()));
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    check:\n      command: sh check.sh\n",
    );
    r.commit("head");
    let run = r.shipmoor_env(
        &["claim-check", "--base", &base],
        &[
            ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "oidc-request-secret"),
            ("ACTIONS_ID_TOKEN_REQUEST_URL", "http://127.0.0.1:9/token"),
            ("SIGSTORE_ID_TOKEN", "jwt-secret"),
            ("SHIPMOOR_KEY_PASSWORD", "key-secret"),
            ("GITHUB_PATH", "/tmp/github-path-file"),
            ("INPUT_KEY", "/keys/signer.pem"),
            ("KEEP_ME", "visible"),
        ],
    );
    assert_eq!(run.code, 1, "{run:?}");
    let env = std::fs::read_to_string(&dump).unwrap();
    let _ = std::fs::remove_file(&dump);
    assert!(env.contains("KEEP_ME=visible"));
    for secret in [
        "oidc-request-secret",
        "127.0.0.1:9",
        "jwt-secret",
        "key-secret",
        "github-path-file",
        "signer.pem",
    ] {
        assert!(
            !env.contains(secret),
            "{secret} reached the code under check"
        );
    }
}

#[test]
fn an_id_in_two_acceptance_files_names_both_places() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n");
    r.write(
        ".shipmoor/changes/pr-2.yaml",
        "version: 1\ncriteria:\n  - id: b\n    ac: B.\n  - id: a\n    ac: Another A.\n",
    );
    r.write(".shipmoor/config.yaml", "version: 1\ncriteria: []\n");
    r.commit("a second file");
    let err = rejected(&r, &["claim-check", "--base", &base]);
    assert!(
        err.contains(".shipmoor/changes/pr-2.yaml:5:5: duplicate criterion id `a`: also defined at .shipmoor/acceptance.yaml:3"),
        "{err}"
    );
    // Every file's problems in one run: the settings file's too.
    assert!(err.contains(".shipmoor/config.yaml:2:1:"), "{err}");
    assert!(err.contains("holds project settings only"), "{err}");
    assert!(err.matches("help:").count() >= 2, "{err}");
}

/// Two criteria whose tags collide (`AC-ADDS-NUMBERS-25d1` is part of
/// `AC-ADDS-NUMBERS-25D1-4a86`): one test named with the longer tag would satisfy both. An
/// input error naming both, in one file and across files, for `lint` and `claim-check`.
#[test]
fn colliding_tags_are_an_input_error_naming_both() {
    let (r, base) = repo_with(
        "version: 1\ncriteria:\n  - id: adds-numbers\n    ac: Numbers add.\n  - id: adds-numbers-25d1\n    ac: A sum is shown.\n",
    );
    let err = rejected(&r, &["claim-check", "--base", &base]);
    assert!(
        err.contains("AC-ADDS-NUMBERS-25d1") && err.contains("AC-ADDS-NUMBERS-25D1-4a86"),
        "{err}"
    );
    assert!(err.contains(".shipmoor/acceptance.yaml:5"), "{err}");
    assert!(err.contains("rename one of the two ids"), "{err}");
    let lint = r.shipmoor(&["acceptance", "lint"]);
    assert_eq!(lint.code, 2, "{lint:?}");
    assert!(
        lint.stderr.contains("AC-ADDS-NUMBERS-25D1-4a86"),
        "{lint:?}"
    );

    // Across files: a change's own file against the shared one.
    let (r, base) =
        repo_with("version: 1\ncriteria:\n  - id: adds-numbers\n    ac: Numbers add.\n");
    r.write(
        ".shipmoor/changes/sum.yaml",
        "version: 1\ncriteria:\n  - id: adds-numbers-25d1\n    ac: A sum is shown.\n",
    );
    r.commit("a colliding criterion in a change's own file");
    let err = rejected(&r, &["claim-check", "--base", &base]);
    assert!(err.contains(".shipmoor/changes/sum.yaml:3"), "{err}");
    assert!(err.contains(".shipmoor/acceptance.yaml:3"), "{err}");
}

/// A repository whose head commits a symlink at `link` (to `target`, outside it), and whose
/// one criterion is checked by a command that leaves a file at `ran` (so a test can tell
/// whether the floor ran).
fn repo_with_symlink(
    link: &str,
    target: &std::path::Path,
    ran: &std::path::Path,
) -> (Repo, String) {
    let r = Repo::new();
    r.write("a.txt", "a");
    let base = r.commit("base");
    r.write("check.sh", &format!("echo ran > '{}'\n", ran.display()));
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    check:\n      command: sh check.sh\n",
    );
    std::os::unix::fs::symlink(target, r.path().join(link)).unwrap();
    r.commit("head");
    (r, base)
}

/// A symlink committed where an output goes (the evidence store, the report) is an input
/// error before any work: exit 2 naming it and saying how to clear it; the floor never ran,
/// nothing is written where the symlink points nor anywhere else, and the checkout is as it
/// was.
#[test]
fn a_committed_symlink_where_an_output_goes_is_refused_before_any_work() {
    let elsewhere = tempfile::tempdir().unwrap();
    let store = elsewhere.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let victim = elsewhere.path().join("victim.md");
    std::fs::write(&victim, "the user's own file\n").unwrap();
    let ran = elsewhere.path().join("ran");
    for (link, target, flag) in [
        (".shipmoor/evidence", &store, "--evidence-dir"),
        (".shipmoor/verify.md", &victim, "--report-out"),
    ] {
        let (r, base) = repo_with_symlink(link, target, &ran);
        let before = r.status();
        let run = r.shipmoor(&["claim-check", "--base", &base]);
        assert_eq!(run.code, 2, "{link}: {run:?}");
        for words in [
            format!("{link} is a symlink"),
            format!("git rm {link}"),
            format!("another output path with {flag}"),
        ] {
            assert!(run.stderr.contains(&words), "{link}: {words}: {run:?}");
        }
        assert!(!ran.exists(), "{link}: the floor ran");
        assert_eq!(r.status(), before, "{link}: the checkout changed");
        assert!(
            common::is_symlink(&r.path().join(link)),
            "{link} was replaced"
        );
        assert_eq!(std::fs::read_dir(&store).unwrap().count(), 0, "{link}");
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "the user's own file\n",
            "{link}"
        );
        for out in ["claim-check.vsa.json", "claim-check.fixes.json"] {
            assert!(
                !r.exists(&format!(".shipmoor/{out}")),
                "{link}: {out} was written"
            );
        }
        assert!(r.extra_worktrees().is_empty());
    }
}

/// A symlink the code under check makes where an output goes while the floor runs is refused
/// when the outputs are written: exit 2, and nothing is written, neither where it points nor
/// any other output. In the sandbox the checkout is out of the code's reach and no link is
/// made; the outputs' own defence is checked with `--sandbox off`, where the code reaches it.
#[test]
fn a_symlink_made_during_the_run_where_an_output_goes_is_refused_and_nothing_is_written() {
    let elsewhere = tempfile::tempdir().unwrap();
    let store = elsewhere.path().join("store");
    std::fs::create_dir(&store).unwrap();
    let r = Repo::new();
    r.write("a.txt", "a");
    let base = r.commit("base");
    // The check, run by the floor, makes the user's `.shipmoor/evidence` a symlink.
    let link = r.path().join(".shipmoor/evidence");
    r.write(
        "check.sh",
        &format!(
            "[ -L '{link}' ] || ln -s '{store}' '{link}'\n",
            store = store.display(),
            link = link.display()
        ),
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    check:\n      command: sh check.sh\n",
    );
    r.commit("head");
    let sandboxed = r.shipmoor(&["claim-check", "--base", &base, "--sandbox", "require"]);
    assert!(!common::is_symlink(&link), "{sandboxed:?}");
    assert_eq!(sandboxed.code, 1, "{sandboxed:?}");
    std::fs::remove_dir_all(r.path().join(".shipmoor/evidence")).unwrap();
    for out in [
        "claim-check.vsa.json",
        "claim-check.fixes.json",
        "verify.md",
    ] {
        std::fs::remove_file(r.path().join(".shipmoor").join(out)).unwrap();
    }
    let run = r.shipmoor(&["claim-check", "--base", &base, "--sandbox", "off"]);
    assert!(
        common::is_symlink(&link),
        "the check made no symlink: {run:?}"
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(".shipmoor/evidence is a symlink"),
        "{run:?}"
    );
    assert_eq!(std::fs::read_dir(&store).unwrap().count(), 0);
    for out in [
        "claim-check.vsa.json",
        "claim-check.fixes.json",
        "verify.md",
    ] {
        assert!(!r.exists(&format!(".shipmoor/{out}")), "{out} was written");
    }
    assert!(r.extra_worktrees().is_empty());
}

/// `--acceptance` naming something that is there but is no file (a directory, a FIFO) says what
/// it is, and a FIFO is never opened (which would block the run).
#[test]
fn an_acceptance_path_that_is_no_file_says_what_it_is() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n");
    let dir = r.path().join(".git/criteria");
    std::fs::create_dir(&dir).unwrap();
    let fifo = r.path().join(".git/criteria.fifo");
    common::mkfifo(&fifo);
    for (path, kind) in [(&dir, "a directory"), (&fifo, "a FIFO")] {
        let args = [
            "claim-check",
            "--base",
            &base,
            "--acceptance",
            path.to_str().unwrap(),
        ];
        let before = r.status();
        let run = r
            .shipmoor_within(&args, 30)
            .unwrap_or_else(|| panic!("{args:?} did not finish"));
        assert_eq!(run.code, 2, "{run:?}");
        assert_eq!(r.status(), before);
        assert!(
            run.stderr.contains(&format!("is {kind}, not a file")),
            "{run:?}"
        );
        assert!(!run.stderr.contains("does not exist"), "{run:?}");
        assert!(run.stderr.contains("help: "), "{run:?}");
        assert!(!r.exists(".shipmoor/verify.md"));
    }
}

/// A committed acceptance file or settings file that is a symlink is refused at its path: git
/// stores a link as the path it names, which must be neither parsed as YAML nor followed to
/// whatever the change points it at.
#[test]
fn a_committed_symlink_acceptance_or_settings_file_is_refused() {
    let (r, base) = repo_with("version: 1\ncriteria:\n  - id: a\n    ac: A.\n");
    r.write(
        "elsewhere.yaml",
        "version: 1\ncriteria:\n  - id: b\n    ac: B.\n",
    );
    std::fs::create_dir_all(r.path().join(".shipmoor/changes")).unwrap();
    std::os::unix::fs::symlink(
        "../../elsewhere.yaml",
        r.path().join(".shipmoor/changes/pr-1.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/etc/hostname", r.path().join(".shipmoor/config.yaml")).unwrap();
    r.commit("links");
    let err = rejected(&r, &["claim-check", "--base", &base]);
    for path in [".shipmoor/changes/pr-1.yaml", ".shipmoor/config.yaml"] {
        assert!(
            err.contains(&format!("{path}:1:1: `{path}` is a symlink")),
            "{err}"
        );
    }
    assert!(
        err.contains("the settings file is read as committed"),
        "{err}"
    );
    assert!(err.contains("help: commit the file itself"), "{err}");
}

/// Terminal escapes and bells in a criterion's text (YAML's `\e` and `\a`) reach neither the
/// terminal report nor `verify.md`: they are shown as their control pictures.
#[test]
fn control_characters_in_a_criterion_reach_no_output() {
    let (r, base) = repo_with(
        "version: 1\ncriteria:\n  - id: a\n    ac: \"Bold \\e[1mtext\\e[0m and a bell \\a here.\"\n",
    );
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(
        run.code, 4,
        "INCONCLUSIVE: no test carries the tag; {run:?}"
    );
    let verify = r.read(".shipmoor/verify.md");
    for out in [&verify, &run.stdout] {
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out}");
    }
    assert!(
        verify.contains("Bold ␛[1mtext␛[0m and a bell ␇ here."),
        "{verify}"
    );
}
