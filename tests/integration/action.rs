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

const ACTION: &str = env!("CARGO_MANIFEST_DIR");
/// The workflow run every simulated job belongs to.
const RUN_ID: &str = "4242";

/// Parses `GITHUB_OUTPUT`: `name=value` lines and `name<<DELIM … DELIM` blocks.
fn outputs(text: &str) -> BTreeMap<String, String> {
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

struct Runner {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    temp: PathBuf,
    output: PathBuf,
    summary: PathBuf,
    path_file: PathBuf,
    event: PathBuf,
}

impl Runner {
    /// An upstream repository with a base and a pull request head, cloned shallow at the head.
    fn pull_request(upstream: &Repo, base: &str, head: &str) -> Runner {
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
            _dir: dir,
        }
    }

    fn command(&self, script: &str, inputs: &[(&str, &str)]) -> Command {
        let mut c = Command::new("bash");
        c.arg(Path::new(ACTION).join("scripts/action").join(script))
            .current_dir(&self.workspace)
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_EVENT_NAME", "pull_request")
            .env("GITHUB_EVENT_PATH", &self.event)
            .env("GITHUB_OUTPUT", &self.output)
            .env("GITHUB_STEP_SUMMARY", &self.summary)
            .env("GITHUB_PATH", &self.path_file)
            .env("GITHUB_WORKSPACE", &self.workspace)
            .env("GITHUB_ACTION_PATH", ACTION)
            .env("GITHUB_JOB", "claim-check")
            .env("GITHUB_RUN_ATTEMPT", "1")
            .env("GITHUB_RUN_ID", RUN_ID)
            .env("RUNNER_TEMP", &self.temp)
            .env("SHIPMOOR_BIN", env!("CARGO_BIN_EXE_shipmoor"))
            .env("SOURCE_DATE_EPOCH", common::PINNED_EPOCH)
            .env_remove("ACTIONS_ID_TOKEN_REQUEST_URL")
            .env_remove("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
            .env_remove("SIGSTORE_ID_TOKEN")
            .env_remove("CARGO_TARGET_DIR");
        for (k, v) in inputs {
            c.env(format!("INPUT_{k}"), v);
        }
        c
    }

    /// install.sh, then run.sh with PATH extended as GITHUB_PATH says; returns run.sh's stdout.
    fn run(&self, inputs: &[(&str, &str)]) -> String {
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

    fn gate(&self, fail_on: &str) -> (i32, String) {
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

fn upstream_with_a_blocked_change() -> (Repo, String, String) {
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

/// Until a release is published the action builds shipmoor with cargo; the binary is cached
/// (actions/cache, keyed by the runner and a digest of the source cargo builds from), so only
/// a repository's first run builds. Here the cache is what actions/cache would do with the
/// step's `dir`: saved after the first job, restored before the second into a fresh RUNNER_TEMP.
/// A stand-in `cargo` on PATH "builds" by copying the test binary and counts its calls.
#[test]
fn the_second_run_installs_shipmoor_from_the_cache_without_building() {
    let action = tempfile::tempdir().unwrap();
    let a = action.path();
    for dir in ["action", "scripts/action", "src"] {
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
    std::fs::write(a.join("action/releases.txt"), "").unwrap();

    let tools = tempfile::tempdir().unwrap();
    let calls = tools.path().join("cargo-calls");
    let fake_cargo = tools.path().join("cargo");
    std::fs::write(
        &fake_cargo,
        format!(
            "#!/bin/sh\necho build >> '{}'\nmkdir -p \"$CARGO_TARGET_DIR/release\"\ncp '{}' \"$CARGO_TARGET_DIR/release/shipmoor\"\n",
            calls.display(),
            env!("CARGO_BIN_EXE_shipmoor")
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &fake_cargo,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
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
fn action_metadata() -> serde_json::Value {
    yaml_as_json("action.yml")
}

/// A YAML file of this repository as JSON.
fn yaml_as_json(rel: &str) -> serde_json::Value {
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
fn condition_holds(expr: &str, context: &BTreeMap<&str, &str>) -> bool {
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
fn expand(text: &str, context: &BTreeMap<&str, &str>) -> String {
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

/// The reusable workflow's sharded jobs, each on a runner of its own: the plan job's script
/// makes the matrix; each shard job runs the Action with `shard: K/N` on its own shallow clone
/// and its upload step stores the shard under the artifact name the step outputs give; the
/// fuse job downloads them by the workflow's pattern and runs the Action with `fuse:`. Its
/// verdict and its fix packet, verify.md and attestation are the unsharded run's, byte for byte.
#[test]
fn the_sharded_workflow_hands_its_shards_to_the_fuse_job_and_reaches_the_unsharded_outputs() {
    let (upstream, base, head) = upstream_with_a_blocked_change();
    let files = |o: &BTreeMap<String, String>| -> Vec<Vec<u8>> {
        ["fixes-path", "report-path", "vsa-path"]
            .iter()
            .map(|k| std::fs::read(&o[*k]).unwrap_or_else(|e| panic!("{k}: {e}")))
            .collect()
    };
    let single = Runner::pull_request(&upstream, &base, &head);
    let log = single.run(&[("RUNS", "1"), ("SIGN", "auto")]);
    let single_out = outputs(&std::fs::read_to_string(&single.output).unwrap());
    assert_eq!(single_out["verdict"], "BLOCKED", "{log}");

    let workflow = yaml_as_json(".github/workflows/claim-check.yml");
    let jobs = &workflow["jobs"];
    // The plan job: its script, with `shards: 2`, gives the matrix.
    let plan = &jobs["plan"]["steps"][0];
    let dir = tempfile::tempdir().unwrap();
    let plan_output = dir.path().join("plan-output");
    let ran = Command::new("bash")
        .args(["-c", plan["run"].as_str().unwrap()])
        .env("SHARDS", "2")
        .env("GITHUB_OUTPUT", &plan_output)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let planned = outputs(&std::fs::read_to_string(&plan_output).unwrap());
    let matrix: Vec<u64> = serde_json::from_str(&planned["shards"]).unwrap();
    assert_eq!(matrix, [1, 2]);

    // The shard jobs, and their uploads.
    let shard_step = jobs["shard"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["uses"] == "shipmoor/claim-check@v1")
        .expect("the shard job runs the Action");
    assert!(
        jobs["shard"]["permissions"].get("id-token").is_none(),
        "a shard job signs nothing and gets no OIDC identity"
    );
    let artifacts = dir.path().join("artifacts");
    for k in &matrix {
        let k = k.to_string();
        let context = BTreeMap::from([
            ("matrix.shard", k.as_str()),
            ("inputs.shards", "2"),
            ("inputs.shard-by", "criterion"),
            ("inputs.runs", "1"),
        ]);
        let runner = Runner::pull_request(&upstream, &base, &head);
        let with = |name: &str| expand(shard_step["with"][name].as_str().unwrap(), &context);
        let log = runner.run(&[
            ("SHARD", &with("shard")),
            ("SHARD-BY", &with("shard-by")),
            ("RUNS", &with("runs")),
        ]);
        let o = outputs(&std::fs::read_to_string(&runner.output).unwrap());
        assert_eq!(o["exit-code"], "0", "{log}");
        assert!(
            !o.contains_key("verdict"),
            "a shard decides no verdict: {o:?}"
        );
        let name = &o["artifact-name"];
        assert_eq!(name, &format!("claim-check-shard-{RUN_ID}-1-{k}-of-2"));
        let shard_dir = Path::new(&o["artifact-paths"]);
        assert!(shard_dir.join("shard.json").is_file(), "{log}");
        common::copy_dir(shard_dir, &artifacts.join(name));
    }

    // The fuse job: the download step's pattern, then the Action with `fuse:`.
    let fuse_job = &jobs["fuse"];
    assert_eq!(fuse_job["permissions"]["id-token"], "write");
    let steps = fuse_job["steps"].as_array().unwrap();
    let download = steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/download-artifact@"))
        })
        .expect("the fuse job downloads the shards");
    let runner = Runner::pull_request(&upstream, &base, &head);
    let temp = runner.temp.to_str().unwrap().to_string();
    let context = BTreeMap::from([
        ("github.run_id", RUN_ID),
        ("github.run_attempt", "1"),
        ("runner.temp", temp.as_str()),
        ("inputs.fail-on", "BLOCKED,INCONCLUSIVE"),
        ("inputs.working-directory", "."),
    ]);
    let pattern = expand(download["with"]["pattern"].as_str().unwrap(), &context);
    let prefix = pattern.strip_suffix('*').expect("a prefix pattern");
    let into = PathBuf::from(expand(download["with"]["path"].as_str().unwrap(), &context));
    let mut downloaded = 0;
    for entry in std::fs::read_dir(&artifacts).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.starts_with(prefix) {
            // Several artifacts by pattern: each in a directory of its own name.
            common::copy_dir(&artifacts.join(&name), &into.join(&name));
            downloaded += 1;
        }
    }
    assert_eq!(downloaded, 2, "the pattern finds every shard of this run");
    let fuse_step = steps
        .iter()
        .find(|s| s["uses"] == "shipmoor/claim-check@v1")
        .unwrap();
    let with = |name: &str| expand(fuse_step["with"][name].as_str().unwrap(), &context);
    let log = runner.run(&[("FUSE", &with("fuse")), ("SIGN", &with("sign"))]);
    let fused_out = outputs(&std::fs::read_to_string(&runner.output).unwrap());
    assert_eq!(fused_out["verdict"], single_out["verdict"], "{log}");
    assert_eq!(fused_out["exit-code"], single_out["exit-code"], "{log}");
    assert_eq!(
        files(&fused_out),
        files(&single_out),
        "the fuse job's fix packet, verify.md and attestation are the unsharded run's"
    );
    let (code, _) = runner.gate("BLOCKED,INCONCLUSIVE");
    assert_eq!(code, 1, "the gate applies fail-on to the fused verdict");
}
