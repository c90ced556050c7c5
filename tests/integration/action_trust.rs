//! The trust boundary of the reusable workflow (book: trust-boundary.md), under the simulated
//! runner of `action.rs`: observe jobs that run the change's code and hold no signing identity,
//! then one sign job that runs none of it, takes nothing from a cache, checks every shard
//! against the digest its observe job published, and signs. Also the composite Action used
//! alone, and workflow commands printed by the change's code.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::action::{
    action_metadata, action_source_without_a_release, condition_holds, executable, expand, outputs,
    stand_in_cargo, upstream_with_a_blocked_change, yaml_as_json, Runner, ACTION, RUN_ID,
};
use common::{ident, Repo};

/// The composite Action's inputs a step's `with:` gives, expanded in `context`, as the runner
/// hands them to the Action's scripts (`INPUT_<NAME>`, upper-cased, hyphens kept).
fn with_inputs(step: &serde_json::Value, context: &BTreeMap<&str, &str>) -> Vec<(String, String)> {
    step["with"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.to_uppercase(), expand(v.as_str().unwrap(), context)))
        .collect()
}

fn step_using<'a>(job: &'a serde_json::Value, prefix: &str) -> &'a serde_json::Value {
    job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(prefix)))
        .unwrap_or_else(|| panic!("no step uses {prefix}"))
}

fn step_with_id<'a>(job: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no step {id}"))
}

/// A `run:` step's script in bash with `env`, as the runner runs it; its `GITHUB_OUTPUT`.
fn run_step(
    step: &serde_json::Value,
    env: &[(&str, &str)],
    dir: &Path,
) -> (BTreeMap<String, String>, String) {
    let output = dir.join(format!("output-{}", ident("step")));
    std::fs::write(&output, "").unwrap();
    let out = Command::new("bash")
        .args(["-e", "-c", step["run"].as_str().unwrap()])
        .envs(env.iter().copied())
        .env("GITHUB_OUTPUT", &output)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    (
        outputs(&std::fs::read_to_string(&output).unwrap()),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// One run of the reusable workflow.
struct WorkflowRun {
    /// The sign job's Action outputs (`GITHUB_OUTPUT` of its run step).
    sign: BTreeMap<String, String>,
    /// The sign job's log.
    log: String,
    /// The sign job's runner.
    runner: Runner,
    /// The observe jobs' outputs, merged as the runner merges a matrix's.
    observe: BTreeMap<String, String>,
}

/// The reusable workflow with `shards`, every job on a runner of its own: the plan job's
/// script; each observe leg's Action (`shard: K/N`) on its own shallow clone of the pull
/// request at `observed_head`, its upload, its handoff step's output; `tamper` on the uploaded
/// artifacts (what another job of the run could do with the runtime token); then the sign job
/// on a fresh clone at the event's head: the download by the workflow's pattern, the Action
/// with `fuse:` and the observe jobs' outputs.
fn reusable_workflow(
    upstream: &Repo,
    base: &str,
    observed_head: &str,
    head: &str,
    shards: usize,
    tamper: &dyn Fn(&Path),
) -> WorkflowRun {
    let workflow = yaml_as_json(".github/workflows/claim-check.yml");
    let jobs = &workflow["jobs"];
    let dir = tempfile::tempdir().unwrap();

    // plan
    let shards_text = shards.to_string();
    let (planned, _) = run_step(
        &jobs["plan"]["steps"][0],
        &[("SHARDS", &shards_text)],
        dir.path(),
    );
    let matrix: Vec<usize> = serde_json::from_str(&planned["shards"]).unwrap();
    assert_eq!(matrix, (1..=shards).collect::<Vec<_>>());
    let nonce = planned["nonce"].clone();
    assert!(
        nonce.len() == 32 && nonce.chars().all(|c| c.is_ascii_hexdigit()),
        "{nonce}"
    );

    // observe
    let observe = &jobs["observe"];
    let artifacts = dir.path().join("artifacts");
    let mut merged: BTreeMap<String, String> = BTreeMap::new();
    for k in &matrix {
        let k = k.to_string();
        let mut runner = Runner::pull_request(upstream, base, observed_head);
        runner.job = "observe";
        let context = BTreeMap::from([
            ("matrix.shard", k.as_str()),
            ("inputs.shards", shards_text.as_str()),
            ("inputs.shard-by", "criterion"),
            ("inputs.runs", "1"),
            ("inputs.working-directory", "."),
            ("needs.plan.outputs.nonce", nonce.as_str()),
        ]);
        let inputs = with_inputs(step_with_id(observe, "check"), &context);
        let mut inputs: Vec<(&str, &str)> = inputs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        inputs.push(("BASE-CACHE", "false"));
        let log = runner.run(&inputs);
        let o = outputs(&std::fs::read_to_string(&runner.output).unwrap());
        assert_eq!(o["exit-code"], "0", "{log}");
        let name = &o["artifact-name"];
        assert_eq!(name, &format!("claim-check-shard-{nonce}-{k}-of-{shards}"));
        common::copy_dir(Path::new(&o["artifact-paths"]), &artifacts.join(name));
        // The handoff step, then the job's outputs from it.
        let handoff = step_with_id(observe, "handoff");
        let env: Vec<(String, String)> = handoff["env"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(name, v)| {
                let value = expand(
                    v.as_str().unwrap(),
                    &BTreeMap::from([
                        ("matrix.shard", k.as_str()),
                        (
                            "steps.check.outputs.shard-digest",
                            o["shard-digest"].as_str(),
                        ),
                    ]),
                );
                (name.clone(), value)
            })
            .collect();
        let env: Vec<(&str, &str)> = env.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let (step_outputs, _) = run_step(handoff, &env, dir.path());
        for (name, expr) in observe["outputs"].as_object().unwrap() {
            let source = expr
                .as_str()
                .unwrap()
                .strip_prefix("${{ steps.handoff.outputs.")
                .and_then(|e| e.strip_suffix(" }}"))
                .unwrap_or_else(|| panic!("{name}: {expr}"));
            // A leg's empty output leaves the merged one as the leg that set it left it.
            if let Some(v) = step_outputs.get(source).filter(|v| !v.is_empty()) {
                merged.insert(name.clone(), v.clone());
            }
        }
    }
    tamper(&artifacts);

    // sign
    let sign = &jobs["sign"];
    let mut runner = Runner::pull_request(upstream, base, head);
    runner.job = "sign";
    let temp = runner.temp.to_str().unwrap().to_string();
    let observed = serde_json::to_string_pretty(&merged).unwrap();
    let context = BTreeMap::from([
        ("needs.plan.outputs.nonce", nonce.as_str()),
        ("runner.temp", temp.as_str()),
        ("toJSON(needs.observe.outputs)", observed.as_str()),
        ("inputs.fail-on", "BLOCKED,INCONCLUSIVE"),
        ("inputs.working-directory", "."),
    ]);
    let download = step_using(sign, "actions/download-artifact@");
    let pattern = expand(download["with"]["pattern"].as_str().unwrap(), &context);
    let prefix = pattern.strip_suffix('*').expect("a prefix pattern");
    let into = PathBuf::from(expand(download["with"]["path"].as_str().unwrap(), &context));
    for entry in std::fs::read_dir(&artifacts).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.starts_with(prefix) {
            common::copy_dir(&artifacts.join(&name), &into.join(&name));
        }
    }
    let inputs = with_inputs(step_with_id(sign, "check"), &context);
    let inputs: Vec<(&str, &str)> = inputs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let log = runner.run(&inputs);
    let sign_outputs = outputs(&std::fs::read_to_string(&runner.output).unwrap());
    WorkflowRun {
        sign: sign_outputs,
        log,
        runner,
        observe: merged,
    }
}

fn statement(path: &str) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn observation(statement: &serde_json::Value) -> serde_json::Value {
    statement["predicate"]["https://shipmoor.dev/claim-check/v1"]["observation"].clone()
}

/// The reusable workflow, with one shard and with two, reaches the single run's verdict: its
/// fix packet and `verify.md` are the single run's byte for byte, and its statement is too but
/// for the record of where the change's code was observed, which says that the sign job ran
/// none of it. The one-shard and two-shard statements are the same, byte for byte.
#[test]
fn the_reusable_workflow_observes_then_signs_and_reaches_the_single_runs_outputs() {
    let (upstream, base, head) = upstream_with_a_blocked_change();
    let single = Runner::pull_request(&upstream, &base, &head);
    let log = single.run(&[("RUNS", "1"), ("SIGN", "auto"), ("BASE-CACHE", "false")]);
    let single_out = outputs(&std::fs::read_to_string(&single.output).unwrap());
    assert_eq!(single_out["verdict"], "BLOCKED", "{log}");
    let single_statement = statement(&single_out["vsa-path"]);
    assert_eq!(
        observation(&single_statement),
        serde_json::json!({"isolated": false, "run_id": RUN_ID, "run_attempt": "1", "signed_in": "claim-check", "observed_in": ["claim-check"]})
    );

    let mut statements = Vec::new();
    for shards in [1, 2] {
        let run = reusable_workflow(&upstream, &base, &head, &head, shards, &|_| {});
        assert_eq!(run.sign["verdict"], single_out["verdict"], "{}", run.log);
        assert_eq!(
            run.sign["exit-code"], single_out["exit-code"],
            "{}",
            run.log
        );
        assert_eq!(run.observe.len(), shards, "{:?}", run.observe);
        for key in ["fixes-path", "report-path"] {
            assert_eq!(
                std::fs::read(&run.sign[key]).unwrap(),
                std::fs::read(&single_out[key]).unwrap(),
                "{key}: the sign job's is the single run's"
            );
        }
        let fused = std::fs::read(&run.sign["vsa-path"]).unwrap();
        let mut fused_statement: serde_json::Value = serde_json::from_slice(&fused).unwrap();
        assert_eq!(
            observation(&fused_statement),
            serde_json::json!({"isolated": true, "run_id": RUN_ID, "run_attempt": "1", "signed_in": "sign", "observed_in": ["observe"]})
        );
        let mut expected = single_statement.clone();
        for s in [&mut fused_statement, &mut expected] {
            s["predicate"]["https://shipmoor.dev/claim-check/v1"]
                .as_object_mut()
                .unwrap()
                .remove("observation");
        }
        assert_eq!(fused_statement, expected);
        statements.push(fused);
        let (code, _) = run.runner.gate("BLOCKED,INCONCLUSIVE");
        assert_eq!(code, 1, "the gate applies fail-on to the fused verdict");
    }
    assert_eq!(statements[0], statements[1]);
}

/// Another job of the run (one that ran the change's code, with the runtime token) replaces a
/// shard's artifact: the sign job refuses it for its digest, naming the shard, and reaches no
/// verdict.
#[test]
fn the_sign_job_refuses_a_shard_whose_digest_differs_from_its_observe_jobs_output() {
    let (upstream, base, head) = upstream_with_a_blocked_change();
    let run = reusable_workflow(&upstream, &base, &head, &head, 2, &|artifacts| {
        let shard = std::fs::read_dir(artifacts)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with("-1-of-2"))
            .unwrap()
            .join("shard.json");
        // The same shard, its JSON laid out anew: every record as it was, the bytes not.
        let doc: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&shard).unwrap()).unwrap();
        std::fs::write(&shard, serde_json::to_vec(&doc).unwrap()).unwrap();
    });
    assert_eq!(run.sign["verdict"], "ERROR", "{}", run.log);
    assert_eq!(run.sign["exit-code"], "2", "{}", run.log);
    assert!(
        run.log.contains("shard 1's shard.json has SHA-256")
            && run.log.contains("and its observe job published"),
        "{}",
        run.log
    );
    assert!(!Path::new(&run.runner.workspace.join(".shipmoor/claim-check.vsa.json")).exists());
}

/// The observe jobs checked a head other than the sign job's own event's: the sign job
/// refuses their shards, whatever they say.
#[test]
fn the_sign_job_refuses_shards_that_checked_other_commits() {
    let (upstream, base, head) = upstream_with_a_blocked_change();
    upstream.write("svc/m.py", "def f():\n    return 3\n");
    let later = upstream.commit("a later push");
    let run = reusable_workflow(&upstream, &base, &head, &later, 1, &|_| {});
    assert_eq!(run.sign["verdict"], "ERROR", "{}", run.log);
    assert_eq!(run.sign["exit-code"], "2", "{}", run.log);
    assert!(
        run.log
            .contains(&format!("the shards checked head {}", &head[..7])),
        "{}",
        run.log
    );
}

/// No job that may sign runs the change's code or restores a cache, and no checkout leaves the
/// job's token in `.git/config`: read from the workflow and the Action as the runner reads them.
#[test]
fn no_job_that_may_sign_runs_the_changes_code_or_restores_a_cache() {
    let workflow = yaml_as_json(".github/workflows/claim-check.yml");
    let action = action_metadata();
    let mut signers = 0;
    for (name, job) in workflow["jobs"].as_object().unwrap() {
        let steps = job["steps"].as_array().unwrap();
        for step in steps {
            if step["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with("actions/checkout@"))
            {
                assert_eq!(
                    step["with"]["persist-credentials"], false,
                    "{name}: a checkout keeps the job's token in .git/config"
                );
            }
        }
        if job["permissions"]["id-token"] != "write" {
            continue;
        }
        signers += 1;
        for step in steps {
            let text = serde_json::to_string(step).unwrap();
            assert!(!text.contains("inputs.setup"), "{name} runs setup: {text}");
            if let Some(uses) = step["uses"].as_str() {
                assert!(!uses.starts_with("actions/cache"), "{name} uses {uses}");
            } else {
                panic!("{name} runs a script of its own: {text}");
            }
            if step["uses"] == "shipmoor/claim-check@v1" {
                let fuse = step["with"]["fuse"].as_str().unwrap_or_default();
                assert!(
                    !fuse.is_empty(),
                    "{name}: the Action runs the floor: {text}"
                );
                assert!(step["with"].get("shard").is_none(), "{text}");
                assert_eq!(
                    step["with"]["shard-digests"],
                    "${{ toJSON(needs.observe.outputs) }}"
                );
                // Inside the Action with `fuse:`, no cache step can run, whatever the
                // outputs of the steps before it.
                let context = BTreeMap::from([("inputs.fuse", fuse)]);
                for inner in action["runs"]["steps"].as_array().unwrap() {
                    let Some(uses) = inner["uses"].as_str() else {
                        continue;
                    };
                    if uses.starts_with("actions/cache/") {
                        let condition = inner["if"].as_str().unwrap();
                        let term = condition
                            .trim_start_matches("${{")
                            .trim_end_matches("}}")
                            .split("&&")
                            .map(str::trim)
                            .find(|t| t.starts_with("inputs.fuse"))
                            .unwrap_or_else(|| {
                                panic!("{uses}: `{condition}` does not test inputs.fuse")
                            });
                        assert!(!condition_holds(term, &context), "{uses}: {condition}");
                    }
                }
            }
        }
    }
    assert_eq!(signers, 1, "one job signs");
    // Each shard's digest by a name of its own: a matrix's legs would overwrite a shared one.
    let observe = &workflow["jobs"]["observe"];
    assert!(observe["permissions"].get("id-token").is_none());
    let outputs = observe["outputs"].as_object().unwrap();
    assert_eq!(outputs.len(), 64);
    for k in 1..=64 {
        assert_eq!(
            outputs[&format!("digest-{k}")],
            format!("${{{{ steps.handoff.outputs.digest-{k} }}}}")
        );
    }
    let download = step_using(&workflow["jobs"]["sign"], "actions/download-artifact@");
    assert!(download["with"]["pattern"]
        .as_str()
        .unwrap()
        .contains("needs.plan.outputs.nonce"));
    // The README's workflows too.
    let readme = std::fs::read_to_string(Path::new(ACTION).join("README.md")).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        if l.contains("uses: actions/checkout@") {
            assert!(
                lines[i..(i + 5).min(lines.len())]
                    .iter()
                    .any(|l| l.trim() == "persist-credentials: false"),
                "README.md:{}: a checkout without persist-credentials: false",
                i + 1
            );
        }
    }
}

/// The sign job builds shipmoor from the Action's own source into a fresh directory when no
/// release is pinned, and never runs a binary left in the cache directory, which any job of the
/// repository can write.
#[test]
fn the_sign_job_never_runs_a_shipmoor_from_the_cache() {
    let action = action_source_without_a_release();
    let a = action.path();
    let tools = tempfile::tempdir().unwrap();
    let marks = tools.path().join("marks");
    // It notes where it started.
    stand_in_cargo(
        tools.path(),
        &marks,
        "build in $(pwd) into $CARGO_TARGET_DIR",
    );
    // What a job that ran the change's code left where actions/cache restores shipmoor.
    let cache = tempfile::tempdir().unwrap();
    executable(
        &cache.path().join("shipmoor"),
        &format!("#!/bin/sh\necho planted \"$@\" >> '{}'\n", marks.display()),
    );
    let runner_temp = tempfile::tempdir().unwrap();
    let checkout = tempfile::tempdir().unwrap();
    let output = runner_temp.path().join("output");
    let step = |args: &[&str], fuse: &str| {
        std::fs::write(&output, "").unwrap();
        let out = Command::new("bash")
            .arg(a.join("scripts/action/install.sh"))
            .args(args)
            .current_dir(checkout.path())
            .env("GITHUB_ACTION_PATH", a)
            .env("RUNNER_TEMP", runner_temp.path())
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    tools.path().display(),
                    std::env::var("PATH").unwrap()
                ),
            )
            .env("GITHUB_OUTPUT", &output)
            .env("INPUT_FUSE", fuse)
            .env("SHIPMOOR_CACHE_DIR", cache.path())
            .env_remove("SHIPMOOR_BIN")
            .env_remove("GITHUB_PATH")
            .env_remove("SHIPMOOR_CARGO_PROFILE")
            .env_remove("SHIPMOOR_CARGO_TARGET_DIR")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        (
            outputs(&std::fs::read_to_string(&output).unwrap()),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // An observe job may take it from the cache (its own job could have planted it anyway).
    let (key, _) = step(&["--cache-key"], "");
    assert_eq!(key["needed"], "true");
    // The sign job: no cache at all, and a fresh build from the Action's directory.
    let (key, _) = step(&["--cache-key"], "/tmp/shards");
    assert_eq!(key["needed"], "false", "{key:?}");
    let (installed, log) = step(&[], "/tmp/shards");
    let marked = std::fs::read_to_string(&marks).unwrap_or_default();
    assert!(
        !marked.contains("planted"),
        "the planted binary ran: {marked}\n{log}"
    );
    assert_eq!(marked.lines().count(), 1, "{marked}");
    assert!(
        marked.starts_with(&format!("build in {} into ", a.display())),
        "cargo starts in the Action's directory, never the checkout: {marked}"
    );
    let run = Command::new(&installed["path"])
        .arg("--version")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&run.stdout).starts_with("shipmoor "),
        "{run:?}"
    );
}

/// The composite Action used alone, signing keyless in the job that runs the floor: an
/// annotation and the job summary say that the change's code could take this job's identity,
/// and the statement records that it was observed and signed in one job.
#[test]
fn the_composite_action_signing_keyless_where_the_floor_runs_warns() {
    let (upstream, base, head) = upstream_with_a_blocked_change();
    let runner = Runner::pull_request(&upstream, &base, &head);
    let log = runner.run(&[("SIGN", "keyless"), ("BASE-CACHE", "false")]);
    assert!(
        log.contains("::warning title=Claim Check::this job runs the change's code (its setup and the floor) and holds the signing identity"),
        "{log}"
    );
    let summary = std::fs::read_to_string(&runner.summary).unwrap();
    assert!(
        summary.contains("**Signed where the change's code ran:**"),
        "{summary}"
    );
    let o = outputs(&std::fs::read_to_string(&runner.output).unwrap());
    assert_eq!(observation(&statement(&o["vsa-path"]))["isolated"], false);

    // `sign: auto` in a job without an OIDC identity (a fork's pull request) signs nothing and
    // warns of nothing.
    let runner = Runner::pull_request(&upstream, &base, &head);
    let log = runner.run(&[("SIGN", "auto"), ("BASE-CACHE", "false")]);
    assert!(
        !log.contains("::warning title=Claim Check::this job"),
        "{log}"
    );
    assert!(!log.contains("persist-credentials"), "{log}");

    // A checkout that kept the job's token in .git/config, as actions/checkout does by
    // default: a warning with the fix, and the value nowhere in the log.
    let runner = Runner::pull_request(&upstream, &base, &head);
    let header = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA==";
    let set = Command::new("git")
        .args([
            "config",
            "--local",
            "http.https://github.com/.extraheader",
            header,
        ])
        .current_dir(&runner.workspace)
        .status()
        .unwrap();
    assert!(set.success());
    let log = runner.run(&[("SIGN", "none"), ("BASE-CACHE", "false")]);
    assert!(
        log.contains("::warning title=Claim Check::the checkout left the job's token in .git/config (http.*.extraheader), where the job's other steps (a setup that installs the change) can read it: check out with persist-credentials: false"),
        "{log}"
    );
    assert!(!log.contains("eC1hY2Nlc3M"), "{log}");
}

/// The workflow commands the runner acts on in a step's log: `::name params::message` lines
/// (leading blanks trimmed, the stricter reading), none between `::stop-commands::TOKEN` and
/// `::TOKEN::`.
fn commands_seen(log: &str) -> Vec<String> {
    let mut stopped: Option<String> = None;
    let mut seen = Vec::new();
    for line in log.lines().map(str::trim_start) {
        if let Some(token) = &stopped {
            if line == format!("::{token}::") {
                stopped = None;
            }
            continue;
        }
        if let Some(token) = line.strip_prefix("::stop-commands::") {
            stopped = Some(token.to_string());
            continue;
        }
        if line.starts_with("::") && line[2..].contains("::") {
            seen.push(line.to_string());
        }
    }
    seen
}

/// One of the test's commands, as the runner would parse the line: a mask, an output, or the
/// error whose message is `forged` (Claim Check's own annotations may quote the test's text in
/// their message, escaped, which sets nothing).
fn forged_command(line: &str) -> bool {
    let rest = &line[2..];
    let Some((head, message)) = rest.split_once("::") else {
        return false;
    };
    let name = head.split(' ').next().unwrap_or_default();
    matches!(name, "add-mask" | "set-output" | "setOutput") || message.trim() == "forged"
}

/// A test of the change prints workflow commands (a mask, an error, an output); so does a
/// `setup`. The runner acts on none of them, in the Action's run step or the workflow's setup.
#[test]
fn workflow_commands_printed_by_the_changes_code_change_nothing() {
    common::require_pytest();
    let forged = [
        "::add-mask::x",
        "::error::forged",
        "::set-output name=verdict::READY",
    ];
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("m.py", "def f():\n    return 1\n");
    let base = r.commit("base");
    r.git(&["switch", "--quiet", "-c", "feature"]);
    let tag = ident("two");
    r.write(
        &format!("tests/test_two_{tag}.py"),
        &format!(
            "from m import f\n\ndef test_two():\n    print({:?})\n    assert f() == 2, {:?}\n",
            forged.join("\n"),
            forged.join("\n")
        ),
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: two\n    ac: f is two.\n",
    );
    let head = r.commit("head");
    let runner = Runner::pull_request(&r, &base, &head);
    let log = runner.run(&[("SIGN", "none"), ("BASE-CACHE", "false")]);
    let o = outputs(&std::fs::read_to_string(&runner.output).unwrap());
    assert_eq!(o["verdict"], "BLOCKED", "{log}");
    // What the test printed reached the log, as the report quotes the failure.
    let stdout = log.split("\n--- stderr\n").next().unwrap();
    assert!(
        stdout.contains("::add-mask::x"),
        "the test's output is not in the log: {log}"
    );
    for command in commands_seen(stdout) {
        assert!(
            !forged_command(&command),
            "the runner would act on `{command}`:\n{log}"
        );
    }

    // The observe job's setup step.
    let workflow = yaml_as_json(".github/workflows/claim-check.yml");
    let setup = workflow["jobs"]["observe"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Setup")
        .unwrap();
    assert_eq!(setup["env"]["SETUP"], "${{ inputs.setup }}");
    let script = forged
        .iter()
        .map(|f| format!("echo '{f}'"))
        .collect::<Vec<_>>()
        .join("; ");
    let dir = tempfile::tempdir().unwrap();
    let (_, printed) = run_step(setup, &[("SETUP", &script)], dir.path());
    assert!(printed.contains("::error::forged"), "{printed}");
    assert!(
        !commands_seen(&printed).iter().any(|c| forged_command(c)),
        "{printed}"
    );
}
