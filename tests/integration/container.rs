//! The container images: built by `scripts/build-image.sh --dev` (buildah with the vfs driver,
//! `FROM scratch`) from the binary these tests run (the full image) and from the verifier build
//! of the same sources (`cargo build --no-default-features`, the verifier image), then run with
//! `buildah run --isolation chroot`: the binary's version, an offline replay of the format-1
//! fixture and an admission of the admission fixture in each image, `claim-check`'s one line in
//! the verifier, and the Docker action's entrypoint under a simulated GitHub Actions runner (a
//! workspace owned by another uid, the `INPUT_*` variables with their hyphens, `GITHUB_OUTPUT`,
//! `GITHUB_STEP_SUMMARY`, a pull request event).
//!
//! These tests need root (buildah, and chown for the workspace); the script installs buildah with
//! apt-get when it is missing. Without it they fail, naming what is missing: they never skip.
//! The release images (static, fat LTO, the verifier's size budget) are built and smoke-tested by
//! the release workflow (`scripts/build-image.sh --smoke`). An image that already holds the same
//! content is not rebuilt.

use crate::common;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::{ident, Repo};

const TAG: &str = "localhost/shipmoor/claim-check:test";
const VERIFIER_TAG: &str = "localhost/shipmoor/claim-check-verifier:test";
const STORAGE: [&str; 2] = ["--storage-driver", "vfs"];
/// The uid and gid of the runner's user that owns the workspace on GitHub-hosted runners.
const RUNNER_UID: u32 = 1001;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn shown(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// Builds both images once per test process (the script serialises concurrent builds and skips
/// an unchanged image, so other test processes pay little): the full one from the binary under
/// test, the verifier from `cargo build --no-default-features` of the same sources.
fn build_images() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/build-image.sh");
        let out = Command::new("bash")
            .args([script, "--dev", "--binary", env!("CARGO_BIN_EXE_shipmoor")])
            .args(["--tag", TAG, "--verifier-tag", VERIFIER_TAG])
            .env_remove("SHIPMOOR_STORAGE_DRIVER")
            .output()
            .unwrap_or_else(|e| panic!("cannot run bash {script}: {e}"));
        assert!(
            out.status.success(),
            "scripts/build-image.sh failed: the container tests need buildah (Debian's `buildah`, \
             installed by the script when run as root), git, busybox and cargo.\n{}",
            shown(&out)
        );
        eprintln!("{}", text(&out.stdout).trim());
    });
}

fn image() -> &'static str {
    build_images();
    TAG
}

fn verifier_image() -> &'static str {
    build_images();
    VERIFIER_TAG
}

/// A working container of the image, removed on drop.
struct Container(String);

impl Container {
    /// A container of the full image.
    fn new() -> Container {
        Container::of(image())
    }

    fn of(image: &str) -> Container {
        let out = Command::new("buildah")
            .args(STORAGE)
            .args(["from", "--quiet", image])
            .output()
            .expect("buildah runs");
        assert!(out.status.success(), "buildah from: {}", shown(&out));
        Container(text(&out.stdout).trim().to_string())
    }

    /// `buildah run --isolation chroot OPTIONS CONTAINER -- COMMAND`.
    fn run(&self, options: &[String], command: &[&str]) -> Output {
        Command::new("buildah")
            .args(STORAGE)
            .args(["run", "--isolation", "chroot"])
            .args(options)
            .arg(&self.0)
            .arg("--")
            .args(command)
            .output()
            .expect("buildah runs")
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("buildah")
            .args(STORAGE)
            .args(["rm", &self.0])
            .output();
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_image_runs_shipmoor_git_and_sh() {
    let c = Container::new();
    let out = c.run(&[], &["shipmoor", "--version"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert_eq!(
        text(&out.stdout).trim(),
        concat!("shipmoor ", env!("CARGO_PKG_VERSION"))
    );

    let out = c.run(&[], &["git", "--version"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(
        text(&out.stdout).starts_with("git version "),
        "{}",
        shown(&out)
    );

    // /tmp is writable by anyone (shipmoor's worktrees and staging go there), the busybox shell
    // works, the certificates are there, and git trusts workspaces owned by other users.
    let out = c.run(
        &[],
        &[
            "sh",
            "-c",
            "stat -c '%a' /tmp && test -s /etc/ssl/certs/ca-certificates.crt && git config --system --get-all safe.directory",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert_eq!(text(&out.stdout), "1777\n*\n", "{}", shown(&out));
}

#[test]
fn replay_of_the_format_1_fixture_in_each_image() {
    for image in [image(), verifier_image()] {
        replay_in(image);
    }
}

fn replay_in(image: &str) {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/format-1"
    );
    let c = Container::of(image);
    let options = strings(&[
        "--volume",
        &format!("{fixture}:/fixture:ro"),
        "--workingdir",
        "/fixture",
    ]);
    let args = [
        "shipmoor",
        "replay",
        "claim-check.vsa.json",
        "--allow-unsigned",
        "--commit",
        "fbac99915b71a5f8645bf21e20c54f0cfb18a1cb",
        "--evidence",
        "evidence",
    ];
    let out = c.run(&options, &args);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("Replay  VALID"),
        "{image}: {}",
        shown(&out)
    );
    assert!(
        stdout.contains("recorded verdict: READY WITH GAPS"),
        "{}",
        shown(&out)
    );

    // The same without --commit: the subject is checked against the HEAD of the repository it
    // runs in, which git reads inside the image (here the fixture is in no repository).
    let out = c.run(&options, &args[..args.len() - 4]);
    assert_ne!(out.status.code(), Some(0), "{}", shown(&out));
}

/// `docker run IMAGE admit …` as it is: the committed admission fixture (a keyed bundle, its
/// policy and key) is admitted inside each image, and denied there for another subject.
#[test]
fn admit_of_the_admission_fixture_in_each_image() {
    for image in [image(), verifier_image()] {
        admit_in(image);
    }
}

fn admit_in(image: &str) {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/admit");
    let subject = std::fs::read_to_string(format!("{fixture}/subject.txt")).unwrap();
    let c = Container::of(image);
    let options = strings(&[
        "--volume",
        &format!("{fixture}:/fixture:ro"),
        "--workingdir",
        "/fixture",
    ]);
    let admit = |subject: &str| {
        c.run(
            &options,
            &[
                "shipmoor",
                "admit",
                "--policy",
                "policy.yaml",
                "--attestation",
                "vsa.sigstore.json",
                "--subject",
                subject,
            ],
        )
    };
    let out = admit(subject.trim());
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(
        text(&out.stdout).starts_with("Admit  ALLOW"),
        "{}",
        shown(&out)
    );
    let out = admit(&format!("sha256:{}", "0".repeat(64)));
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    assert!(
        text(&out.stdout).contains("- subject: sha256:0000"),
        "{}",
        shown(&out)
    );
}

/// The verifier image holds the verifier build: the commands that run the change's code say in
/// one line that this build verifies only and where the full one is (exit 2); neither the Docker
/// action's entrypoint nor git is there.
#[test]
fn the_verifier_image_verifies_only() {
    let c = Container::of(verifier_image());
    for command in [
        &["shipmoor", "claim-check"][..],
        &["shipmoor", "mcp"],
        &["shipmoor", "acceptance", "lint"],
        &[
            "shipmoor", "replay", "x.json", "--rerun", "--commit", "HEAD",
        ],
    ] {
        let out = c.run(&[], command);
        assert_eq!(out.status.code(), Some(2), "{command:?}: {}", shown(&out));
        let stderr = text(&out.stderr);
        // One line says it all (and a help line gives the fix, as every input error's does);
        // buildah adds lines of its own about the exit status.
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.contains("is not in this build, which verifies only")
                && first.contains("the full build is the image ghcr.io/shipmoor/claim-check"),
            "{command:?}: {}",
            shown(&out)
        );
        assert!(
            stderr
                .lines()
                .nth(1)
                .unwrap_or_default()
                .starts_with("  help: run it with the full build"),
            "{command:?}: {}",
            shown(&out)
        );
    }
    let out = c.run(
        &[],
        &[
            "sh",
            "-c",
            "test ! -e /usr/local/bin/shipmoor-action && test ! -e /usr/bin/git && echo ok",
        ],
    );
    assert_eq!(text(&out.stdout), "ok\n", "{}", shown(&out));

    // It holds no git: a replay without --commit says that, not that the directory is no
    // repository.
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/replay/format-1"
    );
    let out = c.run(
        &strings(&[
            "--volume",
            &format!("{fixture}:/fixture:ro"),
            "--workingdir",
            "/fixture",
        ]),
        &[
            "shipmoor",
            "replay",
            "claim-check.vsa.json",
            "--allow-unsigned",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", shown(&out));
    assert!(
        text(&out.stderr).contains("git cannot run here"),
        "{}",
        shown(&out)
    );
}

// ----------------------------------------------------------------------------------------------
// The Docker action's entrypoint
// ----------------------------------------------------------------------------------------------

/// The junit-command harness of tests/claim_check_ecosystems.rs: runs under busybox sh.
const HARNESS: &str = r#"#!/bin/sh
out="$SHIPMOOR_JUNIT_OUT"
status=0
echo '<testsuites><testsuite name="sh">' > "$out"
for t in tests/*.sh; do
  name=$(basename "$t" .sh)
  if sh "$t" > /dev/null 2>&1; then
    echo "<testcase classname=\"sh\" name=\"$name\" file=\"$t\"/>" >> "$out"
  else
    echo "<testcase classname=\"sh\" name=\"$name\" file=\"$t\"><failure message=\"$name failed\"/></testcase>" >> "$out"
    status=1
  fi
done
echo '</testsuite></testsuites>' >> "$out"
exit $status
"#;

/// A repository whose head adds a clamp: `clamps-high` holds; `clamps-low` holds only when
/// `low_fixed` (otherwise its test fails at head too). Returns it with its base and head commits.
fn clamp_repo(low_fixed: bool) -> (Repo, String, String) {
    let r = Repo::new();
    r.write("run-tests.sh", HARNESS);
    r.write("clamp.sh", "clamp() { echo \"$1\"; }\n");
    r.write("tests/plain.sh", "true\n");
    let base = r.commit("base");
    let low = if low_fixed { "$2" } else { "$1" };
    r.write(
        "clamp.sh",
        &format!("clamp() {{ if [ \"$1\" -lt \"$2\" ]; then echo \"{low}\"; elif [ \"$1\" -gt \"$3\" ]; then echo \"$3\"; else echo \"$1\"; fi; }}\n"),
    );
    r.write(
        &format!("tests/high_{}.sh", ident("clamps-high")),
        ". ./clamp.sh\n[ \"$(clamp 50 0 10)\" = 10 ]\n",
    );
    r.write(
        &format!("tests/low_{}.sh", ident("clamps-low")),
        ". ./clamp.sh\n[ \"$(clamp -5 0 10)\" = 0 ]\n",
    );
    r.write(".shipmoor/acceptance.yaml", "version: 1\ncriteria:\n  - id: clamps-high\n    ac: High values clamp.\n  - id: clamps-low\n    ac: Low values clamp.\nrunners:\n  - kind: junit-command\n    command: sh run-tests.sh\n");
    let head = r.commit("head");
    (r, base, head)
}

fn chown_r(path: &Path, uid: u32) {
    let out = Command::new("chown")
        .args(["-R", &format!("{uid}:{uid}")])
        .arg(path)
        .output()
        .expect("chown runs");
    assert!(
        out.status.success(),
        "chown (these tests run as root): {}",
        shown(&out)
    );
}

/// Every path under `dir` (itself included) not owned by `uid`.
fn not_owned_by(dir: &Path, uid: u32) -> Vec<String> {
    let mut bad = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let m = std::fs::symlink_metadata(&p).unwrap();
        if m.uid() != uid {
            bad.push(p.display().to_string());
        }
        if m.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
    }
    bad
}

/// Parses a `GITHUB_OUTPUT` file of `name<<DELIM` … `DELIM` entries.
fn parse_outputs(s: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = s.lines();
    while let Some(line) = lines.next() {
        let (name, delim) = line
            .split_once("<<")
            .unwrap_or_else(|| panic!("not a multiline output: {line:?} in\n{s}"));
        assert!(
            delim.starts_with("ghadelimiter_") && delim.len() > 20,
            "delimiter {delim:?}"
        );
        let mut value = Vec::new();
        loop {
            let l = lines
                .next()
                .unwrap_or_else(|| panic!("unterminated {name} in\n{s}"));
            if l == delim {
                break;
            }
            value.push(l);
        }
        out.insert(name.to_string(), value.join("\n"));
    }
    out
}

struct ActionRun {
    out: Output,
    outputs: BTreeMap<String, String>,
    summary: String,
    /// $HOME/.gitconfig after the run.
    global_gitconfig: String,
    /// Paths in the workspace not owned by the runner's user after the run.
    not_the_runners: Vec<String>,
}

/// Runs the entrypoint in the image as a Docker action runs: the workspace at /github/workspace
/// (owned by the runner's uid), HOME at /github/home, the file commands and the event under
/// /github, and the inputs as INPUT_<NAME> with hyphens kept.
fn run_action(repo: &Repo, inputs: &[(&str, &str)], event: Option<&str>) -> ActionRun {
    run_action_env(repo, inputs, event, &[])
}

/// [`run_action`] with more of the runner's environment (`NAME=value`).
fn run_action_env(
    repo: &Repo,
    inputs: &[(&str, &str)],
    event: Option<&str>,
    extra_env: &[&str],
) -> ActionRun {
    let github = tempfile::Builder::new()
        .prefix("cc-github-")
        .tempdir()
        .unwrap();
    for d in ["home", "file_commands", "workflow"] {
        std::fs::create_dir(github.path().join(d)).unwrap();
    }
    std::fs::write(github.path().join("file_commands/output"), "").unwrap();
    std::fs::write(github.path().join("file_commands/summary"), "").unwrap();
    if let Some(e) = event {
        std::fs::write(github.path().join("workflow/event.json"), e).unwrap();
    }
    chown_r(repo.path(), RUNNER_UID);
    chown_r(github.path(), RUNNER_UID);

    // /github first, then the workspace inside it.
    let mut options = strings(&[
        "--volume",
        &format!("{}:/github", github.path().display()),
        "--volume",
        &format!("{}:/github/workspace", repo.path().display()),
        "--workingdir",
        "/github/workspace",
    ]);
    let mut env = vec![
        "GITHUB_ACTIONS=true".to_string(),
        "CI=true".to_string(),
        "HOME=/github/home".to_string(),
        "GITHUB_WORKSPACE=/github/workspace".to_string(),
        "GITHUB_OUTPUT=/github/file_commands/output".to_string(),
        "GITHUB_STEP_SUMMARY=/github/file_commands/summary".to_string(),
        "GITHUB_EVENT_NAME=pull_request".to_string(),
    ];
    if event.is_some() {
        env.push("GITHUB_EVENT_PATH=/github/workflow/event.json".to_string());
    }
    env.extend(extra_env.iter().map(|e| e.to_string()));
    // The defaults of container/action.yml, then the test's own inputs.
    let mut all: BTreeMap<&str, &str> = [
        ("mode", "fast"),
        ("acceptance", ""),
        ("runs", "1"),
        ("sign", "auto"),
        ("key", ""),
        ("extra-args", ""),
        ("working-directory", "."),
        ("fail-on", "BLOCKED,INCONCLUSIVE"),
        ("base", ""),
        ("head", ""),
        ("comment", "false"),
        ("github-token", ""),
    ]
    .into_iter()
    .collect();
    all.extend(inputs.iter().copied());
    for (name, value) in all {
        env.push(format!("INPUT_{}={value}", name.to_uppercase()));
    }
    for e in env {
        options.push("--env".to_string());
        options.push(e);
    }

    let c = Container::new();
    let out = c.run(&options, &["shipmoor-action"]);
    let outputs = parse_outputs(
        &std::fs::read_to_string(github.path().join("file_commands/output")).unwrap(),
    );
    let summary = std::fs::read_to_string(github.path().join("file_commands/summary")).unwrap();
    let global_gitconfig =
        std::fs::read_to_string(github.path().join("home/.gitconfig")).unwrap_or_default();
    let not_the_runners = not_owned_by(repo.path(), RUNNER_UID);
    // Back to root, for the host's git in the test's own checks.
    chown_r(repo.path(), 0);
    ActionRun {
        out,
        outputs,
        summary,
        global_gitconfig,
        not_the_runners,
    }
}

#[test]
fn the_workspace_is_untrusted_without_the_images_git_config() {
    // What the entrypoint and /etc/gitconfig guard against: git in the image refuses a
    // repository owned by another user.
    let (r, _, head) = clamp_repo(true);
    chown_r(r.path(), RUNNER_UID);
    let c = Container::new();
    let options = strings(&[
        "--volume",
        &format!("{}:/github/workspace", r.path().display()),
    ]);
    let out = c.run(
        &options,
        &[
            "sh",
            "-c",
            "GIT_CONFIG_NOSYSTEM=1 git -C /github/workspace rev-parse HEAD",
        ],
    );
    assert_ne!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(
        text(&out.stderr).contains("dubious ownership"),
        "{}",
        shown(&out)
    );
    let out = c.run(
        &options,
        &["git", "-C", "/github/workspace", "rev-parse", "HEAD"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert_eq!(text(&out.stdout).trim(), head);
}

#[test]
fn the_action_entrypoint_reports_ready_from_a_pull_request_event() {
    let (r, base, head) = clamp_repo(true);
    let event = format!(
        r#"{{"pull_request": {{"number": 7, "body": null, "base": {{"sha": "{base}"}}, "head": {{"sha": "{head}"}}}}}}"#
    );
    let run = run_action(&r, &[], Some(&event));
    let stdout = text(&run.out.stdout);
    assert_eq!(run.out.status.code(), Some(0), "{}", shown(&run.out));
    assert!(stdout.contains("Claim Check  READY"), "{}", shown(&run.out));
    assert!(
        stdout.contains("fail-on (BLOCKED,INCONCLUSIVE) lets it pass"),
        "{}",
        shown(&run.out)
    );
    // Paths relative to the workspace, as the workflow's other steps see it.
    for (k, v) in [
        ("verdict", "READY"),
        ("exit-code", "0"),
        ("vsa-path", "./.shipmoor/claim-check.vsa.json"),
        ("fixes-path", "./.shipmoor/claim-check.fixes.json"),
        ("report-path", "./.shipmoor/verify.md"),
    ] {
        assert_eq!(
            run.outputs.get(k).map(String::as_str),
            Some(v),
            "{k} in {:?}",
            run.outputs
        );
    }
    assert!(run.outputs["artifact-name"].starts_with("claim-check-"));
    assert!(
        run.outputs["artifact-paths"]
            .lines()
            .any(|l| l == "./.shipmoor/evidence"),
        "{:?}",
        run.outputs
    );
    // No OIDC identity here (as in a fork's pull request): keyless falls back to unsigned, and
    // the summary says so after the verdict, with the fix.
    let md = r.read(".shipmoor/verify.md");
    assert!(run.summary.starts_with("## ✅ READY"), "{}", run.summary);
    let unsigned = run.summary.find("🔓 **Unsigned:**");
    assert!(unsigned.is_some(), "{}", run.summary);
    assert!(
        run.summary.contains("`permissions: id-token: write`"),
        "{}",
        run.summary
    );
    assert!(md.contains("- verdict: READY\n"), "{md}");

    // The statement speaks for the pull request's head, and is unsigned.
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    assert_eq!(vsa["subject"][0]["digest"]["gitCommit"], head.as_str());
    assert!(!r.exists(".shipmoor/claim-check.vsa.sigstore.json"));

    // The entrypoint trusts the workspace in the global git config too.
    assert!(
        run.global_gitconfig
            .contains("directory = /github/workspace"),
        "{:?}",
        run.global_gitconfig
    );
    // Everything the run wrote is handed back to the runner's user (git's index was not
    // rewritten by root either); no worktree is left over; no tracked file changed.
    assert_eq!(
        run.not_the_runners,
        Vec::<String>::new(),
        "root-owned after the run"
    );
    assert_eq!(r.extra_worktrees(), Vec::<String>::new());
    let status = r.status();
    let changed: Vec<&str> = status
        .lines()
        .filter(|l| !l.starts_with("?? .shipmoor/"))
        .collect();
    assert_eq!(changed, Vec::<&str>::new(), "{status}");
}

/// With `comment: true`, the entrypoint posts the verdict to the pull request (a REST API on the
/// host's loopback here), and the token reaches no output.
#[test]
fn the_action_entrypoint_comments_on_the_pull_request_when_asked() {
    const TOKEN: &str = "ghs_container0123456789";
    let (r, base, head) = clamp_repo(true);
    let gh = common::github_api::FakeGitHub::start("acme/app", 7, TOKEN);
    let event = format!(
        r#"{{"number": 7, "pull_request": {{"number": 7, "body": null, "base": {{"sha": "{base}", "repo": {{"full_name": "acme/app"}}}}, "head": {{"sha": "{head}", "repo": {{"full_name": "acme/app"}}}}}}, "repository": {{"full_name": "acme/app"}}}}"#
    );
    let api = format!("GITHUB_API_URL={}", gh.api);
    let extra = [
        api.as_str(),
        "GITHUB_REPOSITORY=acme/app",
        "GITHUB_JOB=check",
    ];
    let inputs = [("comment", "true"), ("github-token", TOKEN)];
    let run = run_action_env(&r, &inputs, Some(&event), &extra);
    assert_eq!(run.out.status.code(), Some(0), "{}", shown(&run.out));
    let comments = gh.comments();
    assert_eq!(comments.len(), 1, "{comments:?}\n{}", shown(&run.out));
    assert!(comments[0].body.contains("READY"), "{}", comments[0].body);
    // A second run updates that comment in place.
    let run = run_action_env(&r, &inputs, Some(&event), &extra);
    assert_eq!(run.out.status.code(), Some(0), "{}", shown(&run.out));
    let again = gh.comments();
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(again[0].id, comments[0].id);
    assert!(!shown(&run.out).contains(TOKEN), "{}", shown(&run.out));
}

#[test]
fn the_action_entrypoint_fails_per_fail_on() {
    let (r, base, _) = clamp_repo(false);
    let extra = format!("--base {base}");

    // Default fail-on (BLOCKED, INCONCLUSIVE): a BLOCKED run fails the step with its exit code,
    // with an annotation on the criterion's line of the acceptance set.
    let run = run_action(&r, &[("extra-args", &extra)], None);
    assert_eq!(run.out.status.code(), Some(1), "{}", shown(&run.out));
    let stdout = text(&run.out.stdout);
    assert!(
        stdout.contains("::error file=.shipmoor/acceptance.yaml,line="),
        "{}",
        shown(&run.out)
    );
    assert!(
        stdout.contains("::error title=Claim Check::the verdict is BLOCKED, and fail-on lists it"),
        "{}",
        shown(&run.out)
    );
    assert_eq!(run.outputs["verdict"], "BLOCKED");
    assert_eq!(run.outputs["exit-code"], "1");
    assert!(run.summary.starts_with("## ❌ BLOCKED"), "{}", run.summary);
    let fixes = r.json(".shipmoor/claim-check.fixes.json");
    assert_eq!(fixes["fixes"].as_array().map(Vec::len), Some(1), "{fixes}");
    assert_eq!(
        run.not_the_runners,
        Vec::<String>::new(),
        "root-owned after the run"
    );

    // fail-on: READY WITH GAPS only (read from INPUT_FAIL-ON, a name no shell can expand): the
    // same verdict passes the step.
    let run = run_action(
        &r,
        &[("extra-args", &extra), ("fail-on", "READY WITH GAPS")],
        None,
    );
    assert_eq!(run.out.status.code(), Some(0), "{}", shown(&run.out));
    assert!(
        text(&run.out.stdout)
            .contains("the verdict is BLOCKED; fail-on (READY WITH GAPS) lets it pass"),
        "{}",
        shown(&run.out)
    );
    assert_eq!(run.outputs["verdict"], "BLOCKED");

    // A bad input is a usage error: no verdict, exit 2, whatever fail-on says.
    let run = run_action(
        &r,
        &[
            ("extra-args", &extra),
            ("mode", "thorough"),
            ("fail-on", "never"),
        ],
        None,
    );
    assert_eq!(run.out.status.code(), Some(2), "{}", shown(&run.out));
    assert_eq!(run.outputs["verdict"], "ERROR");
    assert_eq!(run.outputs["exit-code"], "2");
    assert!(run.summary.contains("no verdict"), "{}", run.summary);

    // working-directory that does not exist: the same, before claim-check runs.
    let run = run_action(&r, &[("working-directory", "nowhere")], None);
    assert_eq!(run.out.status.code(), Some(2), "{}", shown(&run.out));
    assert!(
        text(&run.out.stdout).contains("::error title=Claim Check::working-directory 'nowhere'"),
        "{}",
        shown(&run.out)
    );
    assert_eq!(run.outputs["verdict"], "ERROR");
}
