//! The composite Action's steps (the scripts action.yml runs) under a simulated GitHub runner:
//! a `pull_request` event payload, a shallow clone, `GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`,
//! `GITHUB_PATH`, `RUNNER_TEMP`, `INPUT_*` with hyphens kept, no OIDC variables (a fork's pull
//! request). Also the installer's checksum check against a release served on loopback.

use crate::common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{ident, require_pytest, Repo};

pub(crate) const ACTION: &str = env!("CARGO_MANIFEST_DIR");
/// The workflow run every simulated job belongs to.
pub(crate) const RUN_ID: &str = "4242";

/// Parses `GITHUB_OUTPUT`: `name=value` lines and `name<<DELIM … DELIM` blocks.
pub(crate) fn outputs(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delim)) = line.split_once("<<") {
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                value.push(l);
            }
            out.insert(name.to_string(), value.join("\n"));
        } else if let Some((k, v)) = line.split_once('=') {
            out.insert(k.to_string(), v.to_string());
        }
    }
    out
}

pub(crate) struct Runner {
    _dir: tempfile::TempDir,
    pub(crate) workspace: PathBuf,
    pub(crate) temp: PathBuf,
    pub(crate) output: PathBuf,
    pub(crate) summary: PathBuf,
    path_file: PathBuf,
    pub(crate) event: PathBuf,
    /// `GITHUB_JOB`: the job's id in its workflow.
    pub(crate) job: &'static str,
}

impl Runner {
    /// An upstream repository with a base and a pull request head, cloned shallow at the head.
    pub(crate) fn pull_request(upstream: &Repo, base: &str, head: &str) -> Runner {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("workspace");
        let url = format!("file://{}", upstream.path().display());
        let ok = Command::new("git")
            .args([
                "clone", "--quiet", "--depth", "1", "--branch", "feature", &url,
            ])
            .arg(&workspace)
            .status()
            .unwrap();
        assert!(ok.success());
        let shallow = Command::new("git")
            .args(["rev-parse", "--is-shallow-repository"])
            .current_dir(&workspace)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&shallow.stdout).trim(), "true");
        let temp = dir.path().join("runner-temp");
        std::fs::create_dir_all(&temp).unwrap();
        let event = dir.path().join("event.json");
        // The shape of octokit/webhooks' pull_request.opened example, trimmed; a null body.
        let payload = serde_json::json!({
            "action": "opened",
            "number": 2,
            "pull_request": {
                "number": 2, "state": "open", "title": "Refunds", "body": null,
                "head": {"ref": "feature", "sha": head, "repo": {"fork": true}},
                "base": {"ref": "main", "sha": base},
            },
            "repository": {"full_name": "acme/app", "clone_url": url},
        });
        std::fs::write(&event, serde_json::to_vec_pretty(&payload).unwrap()).unwrap();
        Runner {
            output: dir.path().join("output"),
            summary: dir.path().join("summary.md"),
            path_file: dir.path().join("path"),
            workspace,
            temp,
            event,
            job: "claim-check",
            _dir: dir,
        }
    }

    pub(crate) fn command(&self, script: &str, inputs: &[(&str, &str)]) -> Command {
        let mut c = Command::new("bash");
        c.arg(Path::new(ACTION).join("scripts/action").join(script))
            .current_dir(&self.workspace)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_REPOSITORY", "acme/app")
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_EVENT_PATH", &self.event)
            .env("GITHUB_OUTPUT", &self.output)
            .env("GITHUB_STEP_SUMMARY", &self.summary)
            .env("GITHUB_PATH", &self.path_file)
            .env("GITHUB_WORKSPACE", &self.workspace)
            .env("GITHUB_ACTION_PATH", ACTION)
            .env("GITHUB_JOB", self.job)
            .env("GITHUB_RUN_ATTEMPT", "1")
            .env("GITHUB_RUN_ID", RUN_ID)
            .env("RUNNER_TEMP", &self.temp)
            .env("SHIPMOOR_BIN", env!("CARGO_BIN_EXE_shipmoor"))
            .env("SOURCE_DATE_EPOCH", common::PINNED_EPOCH)
            .env_remove("ACTIONS_ID_TOKEN_REQUEST_URL")
            .env_remove("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
            .env_remove("SIGSTORE_ID_TOKEN")
            .env_remove("SHIPMOOR_BASE_CACHE")
            .env_remove("CARGO_TARGET_DIR");
        for (k, v) in inputs {
            c.env(format!("INPUT_{k}"), v);
        }
        c
    }

    /// install.sh, then run.sh with PATH extended as GITHUB_PATH says; returns run.sh's stdout.
    pub(crate) fn run(&self, inputs: &[(&str, &str)]) -> String {
        let out = self.command("install.sh", &[]).output().unwrap();
        assert!(
            out.status.success(),
            "install.sh: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let added = std::fs::read_to_string(&self.path_file).unwrap();
        let path = format!("{}:{}", added.trim(), std::env::var("PATH").unwrap());
        let out = self
            .command("run.sh", inputs)
            .env("PATH", &path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(
            out.status.success(),
            "run.sh must not fail the step: {stdout}\n{stderr}"
        );
        // The job log holds both; stderr comes after, marked, for the assertions' messages.
        format!("{stdout}\n--- stderr\n{stderr}")
    }

    pub(crate) fn gate(&self, fail_on: &str) -> (i32, String) {
        let o = outputs(&std::fs::read_to_string(&self.output).unwrap());
        let out = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
            .args([
                "action",
                "gate",
                "--verdict",
                &o["verdict"],
                "--exit-code",
                &o["exit-code"],
                "--fail-on",
                fail_on,
            ])
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    }
}

pub(crate) fn upstream_with_a_blocked_change() -> (Repo, String, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("svc/__init__.py", "");
    r.write("svc/m.py", "def f():\n    return 1\n");
    let base = r.commit("base");
    r.git(&["switch", "--quiet", "-c", "feature"]);
    r.write("svc/m.py", "def f():\n    return 2\n");
    r.write(
        &format!("tests/test_two_{}.py", ident("two")),
        "from svc.m import f\n\ndef test_two():\n    assert f() == 2\n",
    );
    r.write(
        &format!("tests/test_three_{}.py", ident("three")),
        "from svc.m import f\n\ndef test_three():\n    assert f() == 3, 'f is not three'\n",
    );
    r.write(".shipmoor/acceptance.yaml", "version: 1\ncriteria:\n  - id: two\n    ac: \"f is two.\\n::error title=Forged::all is well\"\n  - id: three\n    ac: \"f is three, even with commas: and colons.\"\n");
    let head = r.commit("head");
    (r, base, head)
}

#[test]
fn the_action_on_a_shallow_fork_pull_request() {
    let (upstream, base, head) = upstream_with_a_blocked_change();
    let runner = Runner::pull_request(&upstream, &base, &head);
    let stdout = runner.run(&[
        ("FAIL-ON", "BLOCKED,INCONCLUSIVE"),
        ("RUNS", "1"),
        ("SIGN", "auto"),
    ]);
    assert!(stdout.contains("the checkout is shallow"), "{stdout}");

    // Outputs.
    let o = outputs(&std::fs::read_to_string(&runner.output).unwrap());
    assert_eq!(o["verdict"], "BLOCKED", "{o:?}\n{stdout}");
    assert_eq!(o["exit-code"], "1");
    for k in ["vsa-path", "fixes-path", "report-path"] {
        assert!(Path::new(&o[k]).is_file(), "{k} = {}", o[k]);
    }
    assert!(
        o["vsa-path"].ends_with(".shipmoor/claim-check.vsa.json"),
        "unsigned: the statement itself"
    );
    assert!(
        o["artifact-name"].starts_with("claim-check-1-"),
        "{}",
        o["artifact-name"]
    );
    let paths: Vec<&str> = o["artifact-paths"].lines().collect();
    assert_eq!(paths.len(), 4, "{paths:?}");
    for p in &paths {
        assert!(
            Path::new(p).exists(),
            "{p} is to be uploaded but does not exist"
        );
    }

    // Summary: the verdict first, then the unsigned note of a fork's pull request with its fix.
    let summary = std::fs::read_to_string(&runner.summary).unwrap();
    assert!(summary.starts_with("## ❌ BLOCKED — "), "{summary}");
    let unsigned = summary
        .find("🔓 **Unsigned:** UNSIGNED")
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(
        summary[unsigned..].contains("add `permissions: id-token: write` to the job"),
        "{summary}"
    );
    assert!(summary.contains("| ❌\u{a0}unsatisfied |"), "{summary}");
    assert!(summary.len() <= shipmoor::action::SUMMARY_LIMIT);

    // Annotations: the failed criterion at its line in the acceptance file, escaped.
    let error = stdout
        .lines()
        .find(|l| l.starts_with("::error "))
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(error.starts_with("::error file=.shipmoor/acceptance.yaml,line=5,title=Claim Check%3A stage1.floor.three::"), "{error}");
    assert!(
        error.contains("f is three, even with commas: and colons."),
        "{error}"
    );
    assert!(stdout.contains("UNSIGNED"), "{stdout}");
    // The acceptance set's text cannot forge a workflow command: claim-check prints it on one
    // line, and workflow commands are stopped while the code under check runs.
    assert!(
        !stdout
            .lines()
            .any(|l| l.starts_with("::error title=Forged")),
        "{stdout}"
    );
    let stop = stdout
        .lines()
        .find_map(|l| l.strip_prefix("::stop-commands::"))
        .expect("commands are stopped during the run");
    assert!(
        stdout.contains(&format!("::{stop}::")),
        "and resumed after it: {stdout}"
    );

    // The gate, per fail-on.
    let (code, msg) = runner.gate("BLOCKED,INCONCLUSIVE");
    assert_eq!(code, 1, "{msg}");
    assert!(
        msg.starts_with("::error title=Claim Check::the verdict is BLOCKED"),
        "{msg}"
    );
    assert_eq!(runner.gate("INCONCLUSIVE").0, 0);
}

#[test]
fn without_an_acceptance_set_a_draft_is_derived_from_the_pull_request_body() {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("a.txt", "a");
    let base = r.commit("base");
    r.git(&["switch", "--quiet", "-c", "feature"]);
    r.write("a.txt", "b");
    let head = r.commit("head");
    let runner = Runner::pull_request(&r, &base, &head);
    let mut event: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&runner.event).unwrap()).unwrap();
    event["pull_request"]["body"] = "## Acceptance criteria\n- [ ] The letter is b.\n".into();
    std::fs::write(&runner.event, serde_json::to_vec(&event).unwrap()).unwrap();
    let stdout = runner.run(&[("FAIL-ON", "BLOCKED")]);
    let o = outputs(&std::fs::read_to_string(&runner.output).unwrap());
    assert_eq!(o["verdict"], "INCONCLUSIVE", "{stdout}");
    // claim-check derives the draft claim itself, from the event's pull request text; the
    // checkout gets no file of it.
    let vsa: serde_json::Value = serde_json::from_slice(
        &std::fs::read(runner.workspace.join(".shipmoor/claim-check.vsa.json")).unwrap(),
    )
    .unwrap();
    let acceptance = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"]["acceptance"];
    assert_eq!(acceptance["source"], "derived", "{vsa}");
    assert_eq!(
        acceptance["path"],
        "pull request #2's description (derived draft)"
    );
    // The job summary lists the draft's criteria with their confidence, and how to commit it.
    let summary = std::fs::read_to_string(&runner.summary).unwrap();
    assert!(
        summary.contains("**Draft criteria — 1 criterion, agreed to by nobody yet.**"),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "- 0.95 `{}` — The letter is b. _(pull request #2, line 2)_\n",
            common::tag("the-letter-is-b")
        )),
        "{summary}"
    );
    assert!(
        summary.contains("**Commit this draft:** `gh pr view 2 --json body -q .body | shipmoor acceptance derive --from - && shipmoor acceptance commit` on the branch"),
        "{summary}"
    );
    assert_eq!(runner.gate("BLOCKED").0, 0);
}

#[test]
fn a_later_pull_request_without_criteria_reads_a_draft_derived_from_its_text() {
    require_pytest();
    // Pull request 1 merged: its criterion and passing test are on main.
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("a.txt", "a");
    r.write(
        &format!("test_first_{}.py", ident("first-change")),
        "def test_first():\n    assert True\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: first-change\n    ac: The first change holds.\n",
    );
    let base = r.commit("pull request 1, merged");
    r.git(&["switch", "--quiet", "-c", "feature"]);
    r.write("a.txt", "b");
    let head = r.commit("pull request 2");
    let runner = Runner::pull_request(&r, &base, &head);

    // No text either: the input error, no verdict, the gate fails.
    let stdout = runner.run(&[("FAIL-ON", "BLOCKED")]);
    let o = outputs(&std::fs::read_to_string(&runner.output).unwrap());
    assert_eq!(o["exit-code"], "2", "{stdout}");
    assert!(stdout.contains("this change claims nothing"), "{stdout}");
    assert_eq!(runner.gate("BLOCKED").0, 1);

    // With a checklist in the description: a derived draft, INCONCLUSIVE, inherited listed.
    let mut event: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&runner.event).unwrap()).unwrap();
    event["pull_request"]["body"] = "## Acceptance criteria\n- [ ] The letter is b.\n".into();
    std::fs::write(&runner.event, serde_json::to_vec(&event).unwrap()).unwrap();
    // A second job on the same runner: fresh step files.
    for f in [&runner.output, &runner.path_file, &runner.summary] {
        std::fs::write(f, "").unwrap();
    }
    let stdout = runner.run(&[("FAIL-ON", "BLOCKED")]);
    let text = std::fs::read_to_string(&runner.output).unwrap();
    let o = outputs(&text);
    assert_eq!(
        o.get("verdict").map(String::as_str),
        Some("INCONCLUSIVE"),
        "{text}\n{stdout}"
    );
    let summary = std::fs::read_to_string(&runner.summary).unwrap();
    assert!(
        summary.contains("1 criterion inherited from an earlier change, not checked"),
        "{summary}"
    );
    assert_eq!(runner.gate("BLOCKED").0, 0);
}

#[test]
fn an_input_error_reaches_no_verdict_and_fails_the_gate() {
    let (upstream, base, head) = upstream_with_a_blocked_change();
    let runner = Runner::pull_request(&upstream, &base, &head);
    let stdout = runner.run(&[("ACCEPTANCE", "missing.yaml")]);
    let o = outputs(&std::fs::read_to_string(&runner.output).unwrap());
    assert_eq!(o["exit-code"], "2", "{stdout}");
    assert_eq!(o["verdict"], "ERROR");
    assert!(
        !o.contains_key("result-path"),
        "no result for the comment step: {o:?}"
    );
    let summary = std::fs::read_to_string(&runner.summary).unwrap();
    assert!(summary.contains("no verdict"), "{summary}");
    assert_eq!(runner.gate("").0, 1);
}

/// Serves one file on loopback, once per request, for the installer's download.
fn serve(bytes: Vec<u8>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                bytes.len()
            );
            let _ = s.write_all(&bytes);
        }
    });
    format!("http://{addr}")
}

#[test]
fn the_installer_checks_the_pinned_checksum() {
    assert!(
        Command::new("curl")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "this test needs curl (apt-get install curl)"
    );
    let binary = std::fs::read(env!("CARGO_BIN_EXE_shipmoor")).unwrap();
    let sha = shipmoor::evidence::sha256_hex(&binary);
    let url = serve(binary);
    for (pinned, ok) in [(sha.clone(), true), ("0".repeat(64), false)] {
        let action = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(action.path().join("action")).unwrap();
        std::fs::create_dir_all(action.path().join("scripts/action")).unwrap();
        std::fs::copy(
            Path::new(ACTION).join("scripts/action/install.sh"),
            action.path().join("scripts/action/install.sh"),
        )
        .unwrap();
        std::fs::write(
            action.path().join("Cargo.toml"),
            "[package]\nname = \"shipmoor\"\nversion = \"9.9.9\"\n",
        )
        .unwrap();
        std::fs::write(
            action.path().join("action/releases.txt"),
            format!("9.9.9 x86_64-unknown-linux-gnu {pinned} https://github.com/shipmoor/claim-check/releases/download/v9.9.9/shipmoor-9.9.9-x86_64-unknown-linux-gnu\n"),
        )
        .unwrap();
        let temp = tempfile::tempdir().unwrap();
        let out = Command::new("bash")
            .arg(action.path().join("scripts/action/install.sh"))
            .env("GITHUB_ACTION_PATH", action.path())
            .env("RUNNER_TEMP", temp.path())
            .env("SHIPMOOR_RELEASE_BASE_URL", &url)
            .env_remove("SHIPMOOR_BIN")
            .env_remove("GITHUB_PATH")
            .env_remove("GITHUB_OUTPUT")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.success(),
            ok,
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let installed = temp.path().join("shipmoor-bin/shipmoor");
        if ok {
            assert!(stdout.contains("shipmoor "), "{stdout}");
            assert!(installed.exists());
        } else {
            assert!(stdout.contains("refusing to run it"), "{stdout}");
            assert!(!installed.exists());
        }
    }
}

/// A copy of the Action's installer beside the files its source digest covers (a manifest
/// version 9.9.9, a lock file, `src/`, `crates/`), with no release pinned: `install.sh` there
/// builds with whatever `cargo` is on `PATH`.
pub(crate) fn action_source_without_a_release() -> tempfile::TempDir {
    let action = tempfile::tempdir().unwrap();
    let a = action.path();
    for dir in ["action", "scripts/action", "src", "crates/confine/src"] {
        std::fs::create_dir_all(a.join(dir)).unwrap();
    }
    std::fs::copy(
        Path::new(ACTION).join("scripts/action/install.sh"),
        a.join("scripts/action/install.sh"),
    )
    .unwrap();
    std::fs::write(
        a.join("Cargo.toml"),
        "[package]\nname = \"shipmoor\"\nversion = \"9.9.9\"\n",
    )
    .unwrap();
    std::fs::write(a.join("Cargo.lock"), "# lock\n").unwrap();
    std::fs::write(a.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(a.join("crates/confine/src/lib.rs"), "\n").unwrap();
    std::fs::write(a.join("action/releases.txt"), "").unwrap();
    action
}

/// An executable script at `path`.
pub(crate) fn executable(path: &Path, body: &str) {
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
}

/// A stand-in `cargo` in `dir` that "builds" by copying the test binary into
/// `$CARGO_TARGET_DIR/release`, first appending `note` (shell words, expanded) to `log`.
pub(crate) fn stand_in_cargo(dir: &Path, log: &Path, note: &str) {
    executable(
        &dir.join("cargo"),
        &format!(
            "#!/bin/sh\necho \"{note}\" >> '{}'\nmkdir -p \"$CARGO_TARGET_DIR/release\"\ncp '{}' \"$CARGO_TARGET_DIR/release/shipmoor\"\n",
            log.display(),
            env!("CARGO_BIN_EXE_shipmoor")
        ),
    );
}

/// Until a release is published the action builds shipmoor with cargo; the binary is cached
/// (actions/cache, keyed by the runner and a digest of the source cargo builds from), so only
/// a repository's first run builds. Here the cache is what actions/cache would do with the
/// step's `dir`: saved after the first job, restored before the second into a fresh RUNNER_TEMP.
/// A stand-in `cargo` on PATH "builds" by copying the test binary and counts its calls.
#[test]
fn the_second_run_installs_shipmoor_from_the_cache_without_building() {
    let action = action_source_without_a_release();
    let a = action.path();
    let tools = tempfile::tempdir().unwrap();
    let calls = tools.path().join("cargo-calls");
    stand_in_cargo(tools.path(), &calls, "build");
    let path = format!(
        "{}:{}",
        tools.path().display(),
        std::env::var("PATH").unwrap()
    );

    let runner_temp = tempfile::tempdir().unwrap();
    let step = |args: &[&str], output: &Path, cache_dir: Option<&str>| {
        let mut cmd = Command::new("bash");
        cmd.arg(a.join("scripts/action/install.sh"))
            .args(args)
            .env("GITHUB_ACTION_PATH", a)
            .env("RUNNER_TEMP", runner_temp.path())
            .env("PATH", &path)
            .env("GITHUB_OUTPUT", output)
            .env_remove("SHIPMOOR_BIN")
            .env_remove("GITHUB_PATH")
            .env_remove("SHIPMOOR_CARGO_PROFILE");
        if let Some(dir) = cache_dir {
            cmd.env("SHIPMOOR_CACHE_DIR", dir);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let outputs = |file: &Path| -> BTreeMap<String, String> {
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let job = |n: u32| -> (BTreeMap<String, String>, String) {
        let out_file = runner_temp.path().join(format!("output-{n}"));
        step(&["--cache-key"], &out_file, None);
        let keys = outputs(&out_file);
        let log = step(&[], &out_file, Some(keys["dir"].as_str()));
        (keys, log)
    };

    // Job 1: a cache miss; cargo builds, and the binary is left in the cache's dir.
    let (keys, log) = job(1);
    assert_eq!(keys["needed"], "true");
    assert!(keys["key"].starts_with("shipmoor-9.9.9-"), "{keys:?}");
    assert!(
        log.contains("building it from the Action's source"),
        "{log}"
    );
    assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().count(), 1);
    let cached = Path::new(&keys["dir"]).join("shipmoor");
    assert!(cached.exists(), "the build is left for actions/cache/save");

    // actions/cache/save, then a new job: a fresh RUNNER_TEMP, and the restore.
    let saved = tempfile::tempdir().unwrap();
    std::fs::copy(&cached, saved.path().join("shipmoor")).unwrap();
    for entry in std::fs::read_dir(runner_temp.path()).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            std::fs::remove_dir_all(&p).unwrap();
        } else {
            std::fs::remove_file(&p).unwrap();
        }
    }
    std::fs::create_dir_all(&keys["dir"]).unwrap();
    std::fs::copy(saved.path().join("shipmoor"), &cached).unwrap();

    // Job 2: the same key, installed from the cache, no build.
    let (again, log) = job(2);
    assert_eq!(again["key"], keys["key"], "the same source, the same key");
    assert!(log.contains("installed shipmoor 9.9.9 from cache"), "{log}");
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap().lines().count(),
        1,
        "the second job did not build"
    );
    assert!(runner_temp.path().join("shipmoor-bin/shipmoor").exists());

    // Another source, another key; a binary provided by the workflow needs no cache.
    std::fs::write(a.join("src/main.rs"), "fn main() { println!(); }\n").unwrap();
    let out_file = runner_temp.path().join("output-3");
    step(&["--cache-key"], &out_file, None);
    assert_ne!(outputs(&out_file)["key"], keys["key"]);
    let out = Command::new("bash")
        .arg(a.join("scripts/action/install.sh"))
        .arg("--cache-key")
        .env("GITHUB_ACTION_PATH", a)
        .env("SHIPMOOR_BIN", env!("CARGO_BIN_EXE_shipmoor"))
        .env_remove("GITHUB_OUTPUT")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "needed=false\n");
}

/// An acceptance file with two errors: the run reaches no verdict, and each error reaches the
/// job as an `::error` at its file, line and column (GitHub places those on the pull
/// request's files), with its fix; the job summary lists both.
#[test]
fn input_errors_reach_the_job_as_annotations_at_their_place() {
    let r = Repo::new();
    r.write("README", "x\n");
    let base = r.commit("base");
    r.git(&["switch", "--quiet", "-c", "feature"]);
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: Bad Id\n    ac: The limit is ten.\n  - id: two\n    acc: typo\n",
    );
    let head = r.commit("head");
    let runner = Runner::pull_request(&r, &base, &head);
    let log = runner.run(&[]);
    let errors: Vec<&str> = log.lines().filter(|l| l.starts_with("::error ")).collect();
    assert!(errors.len() >= 2, "{log}");
    for e in &errors {
        assert!(
            e.starts_with("::error file=.shipmoor/acceptance.yaml,line="),
            "{e}\n{log}"
        );
        assert!(e.contains(",col="), "{e}");
        assert!(e.contains("title=Claim Check%3A input error::"), "{e}");
        assert!(e.contains("%0Ahelp: "), "the fix rides along: {e}");
    }
    assert!(errors.iter().any(|e| e.contains("line=3,")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("line=6,")), "{errors:?}");
    let o = outputs(&std::fs::read_to_string(&runner.output).unwrap());
    assert_eq!(o["verdict"], "ERROR");
    assert_eq!(o["exit-code"], "2");
    let summary = std::fs::read_to_string(&runner.summary).unwrap();
    assert!(
        summary.contains("usage or input error):\n\n- `.shipmoor/acceptance.yaml:3:"),
        "{summary}"
    );
}

/// action.yml as JSON (read with ruamel.yaml, which check-jsonschema brings).
pub(crate) fn action_metadata() -> serde_json::Value {
    yaml_as_json("action.yml")
}

/// A YAML file of this repository as JSON.
pub(crate) fn yaml_as_json(rel: &str) -> serde_json::Value {
    let out = Command::new("python3")
        .args([
            "-c",
            "import json, sys\nfrom ruamel.yaml import YAML\njson.dump(YAML(typ='safe').load(open(sys.argv[1])), sys.stdout)",
        ])
        .arg(Path::new(ACTION).join(rel))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "this test needs ruamel.yaml (pip install check-jsonschema): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A step's `if:` under GitHub's rules, for the few forms action.yml uses: `always()`, and
/// `context == 'literal'` / `!=`, joined by `&&`. Anything else fails the test rather than
/// being guessed at.
pub(crate) fn condition_holds(expr: &str, context: &BTreeMap<&str, &str>) -> bool {
    let inner = expr
        .trim()
        .strip_prefix("${{")
        .and_then(|e| e.strip_suffix("}}"))
        .unwrap_or(expr);
    inner.split("&&").all(|term| {
        let term = term.trim();
        if term == "always()" {
            return true;
        }
        let (name, op, lit) = if let Some((l, r)) = term.split_once("!=") {
            (l.trim(), "!=", r.trim())
        } else if let Some((l, r)) = term.split_once("==") {
            (l.trim(), "==", r.trim())
        } else {
            panic!("`{term}`: not a form this test evaluates");
        };
        let lit = lit
            .strip_prefix('\'')
            .and_then(|l| l.strip_suffix('\''))
            .unwrap_or_else(|| panic!("`{term}`: not a quoted literal"));
        // An unset context (a step that did not run) reads as the empty string.
        let value = context.get(name).copied().unwrap_or("");
        (op == "==") == (value == lit)
    })
}

/// A step's `env:` with each `${{ context }}` replaced by its value.
fn step_env(step: &serde_json::Value, context: &BTreeMap<&str, &str>) -> Vec<(String, String)> {
    step["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let v = v.as_str().unwrap();
            let value = match v.strip_prefix("${{").and_then(|e| e.strip_suffix("}}")) {
                Some(name) => context
                    .get(name.trim())
                    .unwrap_or_else(|| {
                        panic!("{k}: `{}` is not in this test's contexts", name.trim())
                    })
                    .to_string(),
                None => v.to_string(),
            };
            (k.clone(), value)
        })
        .collect()
}

/// The comment step of action.yml, run as the runner would after run.sh: skipped unless
/// `comment: true` and the run left a result; then `shipmoor action comment` with the token in
/// the environment posts the verdict to the pull request (GitHub's API on loopback); a fork's
/// pull request gets a notice instead.
#[test]
fn the_comment_step_posts_the_verdict_only_when_asked() {
    let meta = action_metadata();
    assert_eq!(meta["inputs"]["comment"]["default"], "false");
    assert_eq!(
        meta["inputs"]["github-token"]["default"],
        "${{ github.token }}"
    );
    let steps = meta["runs"]["steps"].as_array().unwrap();
    let at = steps
        .iter()
        .position(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("action comment"))
        })
        .expect("a comment step");
    let step = &steps[at];
    let gate = steps
        .iter()
        .position(|s| s["name"] == "Gate")
        .expect("the gate");
    assert!(at < gate, "the comment comes before the gate fails the job");
    assert_eq!(
        step["continue-on-error"], true,
        "the comment never fails the job"
    );
    let run = step["run"].as_str().unwrap();
    assert!(
        !run.contains("${{") && !run.contains("TOKEN"),
        "values reach the command by the environment only: {run}"
    );
    assert_eq!(step["env"]["GITHUB_TOKEN"], "${{ inputs.github-token }}");
    let condition = step["if"].as_str().unwrap();
    assert!(
        condition.contains("always()"),
        "after a failed run too: {condition}"
    );

    // The run: a criterion without its test yet, INCONCLUSIVE.
    let r = Repo::new();
    r.write("a.txt", "a\n");
    let base = r.commit("base");
    r.git(&["switch", "--quiet", "-c", "feature"]);
    r.write("a.txt", "b\n");
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: letter\n    ac: The letter is b.\n",
    );
    let head = r.commit("head");
    let runner = Runner::pull_request(&r, &base, &head);
    let log = runner.run(&[("SIGN", "none")]);
    let o = outputs(&std::fs::read_to_string(&runner.output).unwrap());
    assert_eq!(o["verdict"], "INCONCLUSIVE", "{log}");
    let result = o.get("result-path").expect("run.sh names the result");
    assert!(Path::new(result).is_file(), "{result}");

    let token = "ghs_actionTOKENloopback42";
    let gh = common::github_api::FakeGitHub::start("acme/app", 2, token);
    let binary = env!("CARGO_BIN_EXE_shipmoor");
    let mut context = BTreeMap::from([
        ("inputs.comment", "false"),
        ("inputs.github-token", token),
        ("inputs.working-directory", "."),
        ("steps.install.outputs.path", binary),
        ("steps.run.outputs.result-path", result.as_str()),
    ]);
    // The default: no comment step at all.
    assert!(!condition_holds(condition, &context), "{condition}");
    context.insert("inputs.comment", "true");
    assert!(condition_holds(condition, &context), "{condition}");
    // A run that reached no result (an input error) has nothing to comment.
    let mut no_result = context.clone();
    no_result.insert("steps.run.outputs.result-path", "");
    assert!(!condition_holds(condition, &no_result), "{condition}");

    let comment_step = |event: &serde_json::Value| {
        std::fs::write(&runner.event, serde_json::to_vec(event).unwrap()).unwrap();
        let out = Command::new("bash")
            .args(["-c", run])
            .current_dir(&runner.workspace)
            .envs(step_env(step, &context))
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_API_URL", &gh.api)
            .env("GITHUB_REPOSITORY", "acme/app")
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_EVENT_PATH", &runner.event)
            .env("GITHUB_WORKFLOW", "Claim check")
            .env("GITHUB_JOB", "claim-check")
            .env_remove("GITHUB_WORKFLOW_REF")
            .output()
            .unwrap();
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{log}");
        assert!(!log.contains(token), "the token is not in the log: {log}");
        log
    };
    let mut event: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&runner.event).unwrap()).unwrap();

    // The runner's event is a fork's pull request: a notice, no request.
    let log = comment_step(&event);
    assert!(
        log.starts_with("::notice title=Claim Check::no pull request comment: this pull request comes from the fork"),
        "{log}"
    );
    assert!(gh.requests().is_empty());

    // A branch of the repository itself: the verdict, posted.
    event["pull_request"]["head"]["repo"] = serde_json::json!({"full_name": "acme/app"});
    let log = comment_step(&event);
    assert!(log.contains("posted the pull request comment"), "{log}");
    let posted = gh.comments();
    assert_eq!(posted.len(), 1);
    let marker = shipmoor::action::comment::marker("Claim check", "claim-check", ".");
    assert!(posted[0].body.starts_with(&marker), "{}", posted[0].body);
    assert!(
        posted[0].body.contains("INCONCLUSIVE"),
        "{}",
        posted[0].body
    );
    // And on the next push, updated rather than posted again.
    let log = comment_step(&event);
    assert!(log.contains("updated the pull request comment"), "{log}");
    assert_eq!(gh.comments().len(), 1);
}

/// `${{ name }}` in `text` replaced by each context value.
pub(crate) fn expand(text: &str, context: &BTreeMap<&str, &str>) -> String {
    let mut out = text.to_string();
    for (name, value) in context {
        out = out.replace(&format!("${{{{ {name} }}}}"), value);
    }
    assert!(
        !out.contains("${{"),
        "`{out}`: a context this test does not set"
    );
    out
}

/// What actions/cache keeps between jobs: directories by key, oldest first.
#[derive(Default)]
struct CacheService {
    saved: Vec<(String, tempfile::TempDir)>,
}

impl CacheService {
    /// actions/cache/save: a copy of the directory under its key; a key is written once.
    fn save(&mut self, key: &str, dir: &Path) {
        assert!(
            !self.saved.iter().any(|(k, _)| k == key),
            "{key} is saved twice"
        );
        let copy = tempfile::tempdir().unwrap();
        common::copy_dir(dir, copy.path());
        self.saved.push((key.to_string(), copy));
    }

    /// actions/cache/restore: the key itself, else the newest directory whose key starts with
    /// one of the restore keys (one a line, in order), copied into `into`; the key restored.
    fn restore(&self, key: &str, restore_keys: &str, into: &Path) -> Option<String> {
        let (found, copy) = self.saved.iter().find(|(k, _)| k == key).or_else(|| {
            restore_keys
                .lines()
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .find_map(|p| self.saved.iter().rev().find(|(k, _)| k.starts_with(p)))
        })?;
        common::copy_dir(copy.path(), into);
        Some(found.clone())
    }
}

/// Contexts owned, as the helpers above read them.
fn view(c: &BTreeMap<String, String>) -> BTreeMap<&str, &str> {
    c.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// One job of the composite Action's base cache steps, as the runner runs them from action.yml.
struct CacheJob {
    /// The outputs of "Locate the base cache".
    key: BTreeMap<String, String>,
    /// The key "Restore the base cache" restored, when it ran and found one.
    restored: Option<String>,
    /// Whether "Restore the base cache" ran.
    restore_ran: bool,
    /// The outputs of "Claim check".
    run: BTreeMap<String, String>,
    /// Whether "Save the base cache" ran.
    saved: bool,
    /// The run's result JSON, when it reached one.
    result: Option<serde_json::Value>,
    /// The key step's and the run step's logs.
    log: String,
}

/// Runs "Locate the base cache", "Restore the base cache", "Claim check" and "Save the base
/// cache" of action.yml on `runner` (workflow run `run_id`, event `event_name`): each step's
/// `if:`, `env:` and `with:` from action.yml, `inputs` over the inputs' defaults, actions/cache
/// emulated by `cache`.
fn base_cache_job(
    runner: &Runner,
    cache: &mut CacheService,
    run_id: &str,
    event_name: &str,
    inputs: &[(&str, &str)],
) -> CacheJob {
    let meta = action_metadata();
    let steps = meta["runs"]["steps"].as_array().unwrap();
    let at = |name: &str| {
        steps
            .iter()
            .position(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no step `{name}` in action.yml"))
    };
    let (key_at, restore_at, run_at, save_at) = (
        at("Locate the base cache"),
        at("Restore the base cache"),
        at("Claim check"),
        at("Save the base cache"),
    );
    assert!(key_at < restore_at && restore_at < run_at, "{steps:?}");
    assert!(
        at("Install shipmoor") < key_at,
        "the key step reads the event with shipmoor"
    );
    assert_eq!(
        save_at,
        run_at + 1,
        "the save comes right after the run: nothing else writes into the directory in between"
    );
    for (step, uses) in [
        (restore_at, "actions/cache/restore@"),
        (save_at, "actions/cache/save@"),
    ] {
        assert_eq!(
            steps[step]["uses"],
            format!("{uses}5a3ec84eff668545956fd18022155c47e93e2684"),
            "pinned by commit, as the binary's cache"
        );
    }

    // The contexts: the inputs (their defaults, then this job's), and every output of the
    // steps below as unset (the empty string) until a step sets it.
    let mut context: BTreeMap<String, String> = meta["inputs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                format!("inputs.{k}"),
                v["default"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    for (k, v) in inputs {
        assert!(
            context.contains_key(&format!("inputs.{k}")),
            "{k} is not an input of action.yml"
        );
        context.insert(format!("inputs.{k}"), v.to_string());
    }
    for out in ["needed", "dir", "key", "restore-key"] {
        context.insert(format!("steps.base-cache-key.outputs.{out}"), String::new());
    }
    context.insert("steps.run.outputs.base-cache-stored".into(), String::new());

    let installed = runner.command("install.sh", &[]).output().unwrap();
    assert!(installed.status.success(), "{installed:?}");
    let added = std::fs::read_to_string(&runner.path_file).unwrap();
    let path = format!("{}:{}", added.trim(), std::env::var("PATH").unwrap());
    let step_run = |at: usize, output: &Path, context: &BTreeMap<String, String>| {
        let step = &steps[at];
        let script = step["run"].as_str().unwrap();
        let (script, args) = script
            .strip_prefix("bash \"$GITHUB_ACTION_PATH/scripts/action/")
            .and_then(|r| r.split_once('"'))
            .unwrap_or_else(|| panic!("`{script}`: not a script of scripts/action"));
        let mut c = runner.command(script, &[]);
        c.args(args.split_whitespace())
            .envs(step_env(step, &view(context)))
            .env("PATH", &path)
            .env("GITHUB_OUTPUT", output)
            .env("GITHUB_RUN_ID", run_id)
            .env("GITHUB_EVENT_NAME", event_name);
        let out = c.output().unwrap();
        let log = format!(
            "{}\n--- stderr\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{} fails: {log}", step["name"]);
        let written = std::fs::read_to_string(output).unwrap_or_default();
        (outputs(&written), log)
    };

    let key_output = runner.output.with_file_name("output-base-cache-key");
    let (key, key_log) = step_run(key_at, &key_output, &context);
    for (k, v) in &key {
        context.insert(format!("steps.base-cache-key.outputs.{k}"), v.clone());
    }

    let with = |at: usize, name: &str, context: &BTreeMap<String, String>| {
        expand(steps[at]["with"][name].as_str().unwrap(), &view(context))
    };
    let restore_ran = condition_holds(steps[restore_at]["if"].as_str().unwrap(), &view(&context));
    let restored = if restore_ran {
        cache.restore(
            &with(restore_at, "key", &context),
            &with(restore_at, "restore-keys", &context),
            Path::new(&with(restore_at, "path", &context)),
        )
    } else {
        None
    };

    let (run, run_log) = step_run(run_at, &runner.output, &context);
    if let Some(v) = run.get("base-cache-stored") {
        context.insert("steps.run.outputs.base-cache-stored".into(), v.clone());
    }
    let saved = condition_holds(steps[save_at]["if"].as_str().unwrap(), &view(&context));
    if saved {
        cache.save(
            &with(save_at, "key", &context),
            Path::new(&with(save_at, "path", &context)),
        );
    }
    let result = run
        .get("result-path")
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap());
    CacheJob {
        key,
        restored,
        restore_ran,
        run,
        saved,
        result,
        log: format!("--- Locate the base cache\n{key_log}\n--- Claim check\n{run_log}"),
    }
}

/// A pull request whose tagged test fails at base and passes at head, then a second push that
/// changes only code: (the upstream, base, the first head, the second head).
fn upstream_with_two_pushes() -> (Repo, String, String, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("svc/__init__.py", "");
    r.write("svc/m.py", "def f():\n    return 1\n");
    let base = r.commit("base");
    r.git(&["switch", "--quiet", "-c", "feature"]);
    r.write("svc/m.py", "def f():\n    return 2\n");
    r.write(
        &format!("tests/test_two_{}.py", ident("two")),
        "from svc.m import f\n\ndef test_two():\n    assert f() == 2\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: two\n    ac: f is two.\n",
    );
    let first = r.commit("f is two");
    r.write("svc/m.py", "def f():\n    return 1 + 1\n");
    let second = r.commit("f adds");
    (r, base, first, second)
}

/// The base cache across two pushes of one pull request, each a workflow run of its own on a
/// fresh runner: the first run's base ran and stored an entry, which the save step saves under
/// the pull request's key; the second push changes only code, restores it by the pull
/// request's and base's prefix, and reuses base's results without running base.
#[test]
fn the_second_push_of_a_pull_request_reuses_base_from_the_saved_base_cache() {
    let (upstream, base, first, second) = upstream_with_two_pushes();
    let mut cache = CacheService::default();

    // Push 1: nothing to restore; base runs, and its results are stored and saved.
    upstream.git(&["switch", "--quiet", "feature"]);
    upstream.git(&["reset", "--quiet", "--hard", &first]);
    let runner = Runner::pull_request(&upstream, &base, &first);
    let job = base_cache_job(&runner, &mut cache, "5001", "pull_request", &[]);
    let prefix = format!("shipmoor-base-v1-2-{base}-");
    assert_eq!(job.key["needed"], "true", "{}", job.log);
    assert_eq!(job.key["restore-key"], prefix);
    assert_eq!(job.key["key"], format!("{prefix}5001-1"));
    let dir = PathBuf::from(&job.key["dir"]);
    assert_eq!(dir, runner.temp.join("shipmoor-base-cache"));
    assert!(
        !dir.starts_with(&runner.workspace),
        "outside the checkout: {}",
        dir.display()
    );
    assert!(job.restore_ran);
    assert_eq!(job.restored, None, "nothing saved yet");
    assert!(
        job.log.contains(&format!("--base-cache {}", dir.display())),
        "{}",
        job.log
    );
    let result = job.result.as_ref().unwrap_or_else(|| panic!("{}", job.log));
    let verdict = job.run["verdict"].clone();
    assert_eq!(verdict, "READY", "{}", job.log);
    assert_eq!(
        result["result"]["base_cache"]["state"], "stored",
        "{result}"
    );
    assert_eq!(job.run["base-cache-stored"], "true", "{:?}", job.run);
    assert!(job.saved, "the save step runs");
    assert!(
        dir.join("v1/entries").read_dir().unwrap().count() == 1,
        "one entry in {}",
        dir.display()
    );
    assert!(
        !runner.workspace.join(".shipmoor/cache").exists(),
        "the checkout holds no base cache"
    );

    // Push 2, another workflow run on a fresh runner: only code changed. Its RUNNER_TEMP is
    // empty, at the same path (a hosted runner's is `/home/runner/work/_temp` in every job):
    // the directory holds nothing the restore does not bring back.
    upstream.git(&["reset", "--quiet", "--hard", &second]);
    let mut runner2 = Runner::pull_request(&upstream, &base, &second);
    std::fs::remove_dir_all(&runner.temp).unwrap();
    std::fs::create_dir_all(&runner.temp).unwrap();
    runner2.temp = runner.temp.clone();
    assert_ne!(runner2.workspace, runner.workspace);
    let job2 = base_cache_job(&runner2, &mut cache, "5002", "pull_request", &[]);
    assert_eq!(
        job2.key["restore-key"], prefix,
        "the same pull request and base"
    );
    assert_eq!(job2.key["key"], format!("{prefix}5002-1"));
    assert_eq!(
        job2.restored.as_deref(),
        Some(job.key["key"].as_str()),
        "restored by the prefix"
    );
    let result2 = job2
        .result
        .as_ref()
        .unwrap_or_else(|| panic!("{}", job2.log));
    assert_eq!(job2.run["verdict"], verdict, "{}", job2.log);
    let used = &result2["result"]["base_cache"];
    assert_eq!(used["state"], "reused", "{result2}\n{}", job2.log);
    assert_eq!(used["observed_at_head"], first.as_str(), "{used}");
    assert_eq!(
        job2.run["base-cache-stored"], "false",
        "nothing new to save: {:?}",
        job2.run
    );
    assert!(!job2.saved, "the save step is skipped");
    assert_eq!(cache.saved.len(), 1);

    // Another pull request on the same base reads none of this one's entries.
    let mut event: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&runner2.event).unwrap()).unwrap();
    event["number"] = 3.into();
    event["pull_request"]["number"] = 3.into();
    std::fs::write(&runner2.event, serde_json::to_vec(&event).unwrap()).unwrap();
    let out = runner2.output.with_file_name("output-other-pull-request");
    let ran = runner2
        .command("run.sh", &[])
        .arg("--base-cache-key")
        .env("GITHUB_OUTPUT", &out)
        .env(
            "PATH",
            format!(
                "{}:{}",
                std::fs::read_to_string(&runner2.path_file).unwrap().trim(),
                std::env::var("PATH").unwrap()
            ),
        )
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let other = outputs(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(other["restore-key"], format!("shipmoor-base-v1-3-{base}-"));
    assert!(!cache
        .saved
        .iter()
        .any(|(k, _)| k.starts_with(&other["restore-key"])));
}

/// `base-cache: false`: no cache steps, and the run gets `--base-cache none`; a value that is
/// neither true nor false is an input error.
#[test]
fn base_cache_false_turns_the_base_cache_off() {
    let (upstream, base, first, _) = upstream_with_two_pushes();
    upstream.git(&["reset", "--quiet", "--hard", &first]);
    let runner = Runner::pull_request(&upstream, &base, &first);
    let mut cache = CacheService::default();
    let job = base_cache_job(
        &runner,
        &mut cache,
        "5101",
        "pull_request",
        &[("base-cache", "false")],
    );
    assert_eq!(job.key.get("needed").map(String::as_str), Some("false"));
    assert!(!job.restore_ran && !job.saved, "{}", job.log);
    assert!(job.log.contains("--base-cache none"), "{}", job.log);
    let result = job.result.as_ref().unwrap_or_else(|| panic!("{}", job.log));
    assert_eq!(job.run["verdict"], "READY", "{}", job.log);
    assert!(
        result["result"].get("base_cache").is_none(),
        "no base cache: {result}"
    );
    assert!(!job.run.contains_key("base-cache-stored"), "{:?}", job.run);
    assert!(!runner.workspace.join(".shipmoor/cache").exists());
    assert!(!runner.temp.join("shipmoor-base-cache").exists());

    for f in [&runner.output, &runner.path_file, &runner.summary] {
        std::fs::write(f, "").unwrap();
    }
    let job = base_cache_job(
        &runner,
        &mut cache,
        "5102",
        "pull_request",
        &[("base-cache", "off")],
    );
    assert!(!job.restore_ran && !job.saved, "{}", job.log);
    assert_eq!(job.run["exit-code"], "2", "{}", job.log);
    assert!(
        job.log.contains(
            "::error title=Claim Check::the input base-cache is `off`: give true or false"
        ),
        "{}",
        job.log
    );
    assert!(cache.saved.is_empty());
}

/// On a push there is no pull request to keep base's results for: the cache steps do not run,
/// a notice says so, and the run gets no `--base-cache` of the Action's.
#[test]
fn a_push_does_not_use_the_base_cache() {
    let (upstream, base, first, _) = upstream_with_two_pushes();
    upstream.git(&["reset", "--quiet", "--hard", &first]);
    let runner = Runner::pull_request(&upstream, &base, &first);
    let payload = serde_json::json!({
        "ref": "refs/heads/feature",
        "before": base,
        "after": first,
        "repository": {"full_name": "acme/app"},
    });
    std::fs::write(&runner.event, serde_json::to_vec(&payload).unwrap()).unwrap();
    let mut cache = CacheService::default();
    let job = base_cache_job(&runner, &mut cache, "5201", "push", &[("base", &base)]);
    assert_eq!(job.key.get("needed").map(String::as_str), Some("false"));
    assert!(
        job.log.contains("::notice title=Claim Check::the base cache is not restored or saved: this is no pull request (event push)"),
        "{}",
        job.log
    );
    assert!(!job.restore_ran, "{}", job.log);
    assert_eq!(job.run["verdict"], "READY", "{}", job.log);
    assert!(!job.log.contains("--base-cache"), "{}", job.log);
    assert!(!job.run.contains_key("base-cache-stored"), "{:?}", job.run);
    assert!(!job.saved);
    assert!(cache.saved.is_empty());
    assert!(!runner.temp.join("shipmoor-base-cache").exists());
}
