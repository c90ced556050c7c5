//! Shared helpers for the integration tests: real git repositories in temporary directories and
//! the real `shipmoor` binary.
#![allow(dead_code)]

pub mod chat_judge;
pub mod chat_server;
pub mod command_judge;
pub mod github_api;
pub mod hostile;
pub mod js;
pub mod lock;
pub mod registry;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use shipmoor::acceptance::{RunnerConfig, RunnerKind};
use shipmoor::floor::runners::registry::Registry;
use shipmoor::floor::runners::Runner;

pub const PINNED_EPOCH: &str = "1796032800"; // 2026-11-30T10:00:00Z

/// For every `cargo nextest` the tests start (the floor's, in the tests' own repositories):
/// nextest's default profile. nextest tells each test the profile it runs under in
/// `NEXTEST_PROFILE`, and a nextest started inside the test reads that variable as its own
/// `--profile`: under `scripts/test.sh --profile ci` it would look for this repository's `ci`
/// profile in a workspace that has only nextest's built-in ones, and fail. `default` is what
/// those runs were told under `cargo nextest run` without `--profile`.
pub const NEXTEST_PROFILE: (&str, &str) = ("NEXTEST_PROFILE", "default");

/// The committed Ed25519 test key (PKCS#8): an Ed25519 signature is deterministic, so the
/// envelope of the same statement is the same bytes on every machine. A test fixture, never a
/// secret.
pub const GOLDEN_KEY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/keys/golden-ed25519.pem"
);
/// Its public key (SPKI PEM).
pub const GOLDEN_PUBLIC_KEY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/keys/golden-ed25519.pub"
);

/// The `origin` every test repository has, as a clone of it would (with the `.git` suffix the
/// statement drops).
pub const ORIGIN: &str = "https://git.example.com/acme/shop.git";

/// A git repository in a temporary directory.
pub struct Repo {
    pub dir: tempfile::TempDir,
    /// Where the runs' worktrees and build outputs go (inspected by the tests).
    pub tmp: tempfile::TempDir,
    /// A directory outside the repository that the floor's commands may write
    /// (`SHIPMOOR_SANDBOX_WRITE`): for the counters, markers and dumps a test's own tests leave
    /// for it to read.
    pub shared: tempfile::TempDir,
}

impl Repo {
    pub fn new() -> Repo {
        let dir = tempfile::Builder::new()
            .prefix("cc-repo-")
            .tempdir()
            .expect("temp dir");
        let tmp = tempfile::Builder::new()
            .prefix("cc-tmp-")
            .tempdir()
            .expect("temp dir");
        let shared = tempfile::Builder::new()
            .prefix("cc-shared-")
            .tempdir()
            .expect("temp dir");
        let r = Repo { dir, tmp, shared };
        r.git(&["init", "--quiet", "--initial-branch=main"]);
        r.git(&["config", "user.name", "Test"]);
        r.git(&["config", "user.email", "test@example.com"]);
        r.git(&["config", "commit.gpgsign", "false"]);
        // Where the statement says head lives (`resourceUri`): never the temporary directory.
        r.git(&["remote", "add", "origin", ORIGIN]);
        r
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(self.path())
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            // Fixed dates make commit ids, and so evidence, the same on every run.
            .env("GIT_AUTHOR_DATE", "2026-11-01T10:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-11-01T10:00:00Z")
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    pub fn write(&self, rel: &str, content: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, content).expect("write");
    }

    pub fn remove(&self, rel: &str) {
        std::fs::remove_file(self.path().join(rel)).expect("remove");
    }

    /// Commits everything and returns the commit id.
    pub fn commit(&self, msg: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "--quiet", "--allow-empty", "-m", msg]);
        self.git(&["rev-parse", "HEAD"])
    }

    pub fn status(&self) -> String {
        self.git(&["status", "--porcelain=v1", "--untracked-files=all"])
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path().join(rel).exists()
    }

    pub fn json(&self, rel: &str) -> serde_json::Value {
        serde_json::from_str(&self.read(rel)).expect("json")
    }

    /// Runs `shipmoor ARGS` in the repository with a pinned clock.
    pub fn shipmoor(&self, args: &[&str]) -> Run {
        self.shipmoor_env(args, &[])
    }

    pub fn shipmoor_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let out = self.command(args, env).output().expect("shipmoor runs");
        Run::from(out)
    }

    /// `shipmoor ARGS` as [`Repo::shipmoor`] runs it, without the variables `unset` (one the
    /// helper sets, `SHIPMOOR_BASE_CACHE` say, so that the run sees its default).
    pub fn shipmoor_unset(&self, args: &[&str], unset: &[&str]) -> Run {
        let mut cmd = self.command(args, &[]);
        for k in unset {
            cmd.env_remove(k);
        }
        Run::from(cmd.output().expect("shipmoor runs"))
    }

    /// `shipmoor ARGS` as [`Repo::shipmoor`] runs it, stopped after `seconds`: `None` if it
    /// had not finished by then (it blocked, on a FIFO say).
    pub fn shipmoor_within(&self, args: &[&str], seconds: u64) -> Option<Run> {
        let mut child = self
            .command(args, &[])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("shipmoor runs");
        let until = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
        while std::time::Instant::now() < until {
            if child.try_wait().expect("wait").is_some() {
                return Some(Run::from(child.wait_with_output().expect("output")));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    fn command(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_shipmoor"));
        cmd.args(args)
            .current_dir(self.path())
            .env("SOURCE_DATE_EPOCH", PINNED_EPOCH)
            .env("SHIPMOOR_TMPDIR", self.tmp.path())
            .env("SHIPMOOR_SANDBOX_WRITE", self.shared.path())
            .env("NO_COLOR", "1")
            // Each test's runs are independent unless it asks for the base cache by name.
            .env("SHIPMOOR_BASE_CACHE", "none")
            .env(NEXTEST_PROFILE.0, NEXTEST_PROFILE.1)
            // The terminal report wraps at COLUMNS when it is set: tests ask for a width.
            .env_remove("COLUMNS")
            .env_remove("GITHUB_EVENT_PATH")
            // Where the run was observed and signed: outside Actions unless a test says so,
            // also when the suite itself runs in GitHub Actions.
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_RUN_ID")
            .env_remove("GITHUB_RUN_ATTEMPT")
            .env_remove("GITHUB_JOB")
            .env_remove("CARGO_TARGET_DIR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    /// `shipmoor ARGS` on a Go project, offline, with a Go build cache of its own that is removed
    /// afterwards.
    pub fn shipmoor_go(&self, args: &[&str]) -> Run {
        let gocache = self.tmp.path().parent().expect("parent").join(format!(
            "cc-gocache-{}",
            self.tmp.path().display().to_string().replace('/', "-")
        ));
        let run = self.shipmoor_env(
            args,
            &[
                ("GOCACHE", gocache.to_str().expect("utf-8 path")),
                ("GOFLAGS", "-buildvcs=false"),
                ("GOPROXY", "off"),
            ],
        );
        let _ = std::fs::remove_dir_all(&gocache);
        run
    }

    /// Worktrees git knows of, other than the main one.
    pub fn extra_worktrees(&self) -> Vec<String> {
        self.git(&["worktree", "list", "--porcelain"])
            .lines()
            .filter_map(|l| l.strip_prefix("worktree "))
            .filter(|p| Path::new(p).canonicalize().ok() != self.path().canonicalize().ok())
            .map(str::to_string)
            .collect()
    }

    /// Waits up to `seconds` for a stopped run's worktrees and temporary directories to go.
    pub fn wait_for_cleanup(&self, seconds: u64) {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
        while (!self.extra_worktrees().is_empty() || !self.tmp_leftovers().is_empty())
            && std::time::Instant::now() < until
        {
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// Leftovers in the temporary root (worktrees, target dirs).
    pub fn tmp_leftovers(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.tmp.path())
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default()
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// Fails with a clear message when a tool the test needs is missing.
/// Now, in seconds since 1970 (for attestations an admission policy must find fresh).
pub fn now_epoch() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        .to_string()
}

/// Copies the directory `from` into `to` (created), files and subdirectories.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A scripted command judge for the refund fixtures of full mode: blocks `audit-log` with a
/// pointer that resolves at head (`svc/refund.py` line 2), abstains on anything else.
pub const BLOCKING_JUDGE: &str = r#"
import json, sys
req = json.load(sys.stdin)
ptr = {"path": "svc/refund.py", "line": 2, "quote": "return order"}
if req["criterion"]["id"] == "audit-log":
    print(json.dumps({"schema": "claim_check.judge.response.v1", "base": req["base"], "head": req["head"],
                      "decision": "block", "rationale": "refund() returns before the audit entry is written",
                      "pointer": ptr,
                      "obligations": [{"text": "an entry is written", "status": "divergent", "citation": ptr}]}))
else:
    print(json.dumps({"decision": "abstain", "rationale": "the diff does not show it"}))
"#;

pub fn require_tool(program: &str, args: &[&str], install_hint: &str) {
    let ok = Command::new(program)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    assert!(
        ok,
        "this test needs `{program} {}`, which is missing: {install_hint}",
        args.join(" ")
    );
}

pub fn require_pytest() {
    let ok = ["pytest", "python3"].iter().any(|p| {
        let args: &[&str] = if *p == "pytest" {
            &["--version"]
        } else {
            &["-m", "pytest", "--version"]
        };
        Command::new(p)
            .args(args)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    });
    assert!(
        ok,
        "this test needs pytest, which is missing: pip install pytest"
    );
}

/// A pytest repository whose change claims `slow`: its tagged test (a file whose name also
/// carries `marker`) writes `started` (in the repository's shared directory, which the floor's
/// commands may write) when it begins, then sleeps two minutes. Returns the repository, its
/// base commit and `started`.
pub fn slow_change(marker: &str) -> (Repo, String, PathBuf) {
    require_pytest();
    let r = Repo::new();
    let started = r.shared.path().join("started");
    r.write("pytest.ini", "[pytest]\n");
    r.write("tests/test_a.py", "def test_a():\n    assert True\n");
    let base = r.commit("base");
    r.write(
        &format!("tests/test_slow_{}_{marker}.py", ident("slow")),
        &format!(
            "import time\n\ndef test_slow():\n    open({:?}, 'w').write('x')\n    time.sleep(120)\n",
            started.display().to_string()
        ),
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: slow\n    ac: Slow.\n",
    );
    r.commit("head");
    (r, base, started)
}

/// Waits until the file `started` exists (a slow test began), failing after a minute.
pub fn wait_for_start(started: &Path) {
    let start = std::time::Instant::now();
    while !started.exists() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the slow test never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Each criterion of a result's `criteria` array, as (id, disposition).
pub fn dispositions(criteria: &serde_json::Value) -> Vec<(String, String)> {
    criteria
        .as_array()
        .expect("criteria")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().to_string(),
                c["disposition"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// The tag of a criterion id, as `shipmoor acceptance tags` prints it.
pub fn tag(id: &str) -> String {
    shipmoor::acceptance::tag_for(id)
}

/// The tag as it appears in Python or Rust identifiers.
pub fn ident(id: &str) -> String {
    tag(id).to_lowercase().replace('-', "_")
}

/// Redacts what differs between runs of the same inputs on different machines: temporary
/// paths and commit ids.
pub fn redact(s: &str, repo: &Repo, commits: &[(&str, &str)]) -> String {
    let mut out = s.to_string();
    for (sha, name) in commits {
        out = out.replace(sha, name);
        out = out.replace(&sha[..7], &name.to_lowercase());
    }
    let repo_path = repo.path().display().to_string();
    let canon = repo
        .path()
        .canonicalize()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    out = out.replace(&canon, "[REPO]").replace(&repo_path, "[REPO]");
    out
}

/// Attribution on Go (book: floor/attribution.md): a change whose new test file calls a function that exists only at head, so
/// base does not build. The error lies in `TestDoubles_…`'s body (criterion `doubles`); its
/// neighbour `TestKeeps_…` (the optional `keeps-mid`) never runs at base. Returns the repository
/// and the base commit.
pub fn go_build_failure_at_base() -> (Repo, String) {
    let r = Repo::new();
    r.write("go.mod", "module example.com/clamp\n\ngo 1.19\n");
    r.write("clamp.go", "package clamp\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\treturn x\n}\n");
    let base = r.commit("base");
    r.write("clamp.go", "package clamp\n\nfunc Clamp(x, lo, hi int) int {\n\tif x < lo {\n\t\treturn lo\n\t}\n\treturn x\n}\n\nfunc Double(x int) int { return 2 * x }\n");
    r.write(
        "mixed_test.go",
        &format!(
            "package clamp\n\nimport \"testing\"\n\n\
             func TestKeeps_{}(t *testing.T) {{\n\tif Clamp(5, 0, 10) != 5 {{\n\t\tt.Fatal(\"moved\")\n\t}}\n}}\n\n\
             func TestDoubles_{}(t *testing.T) {{\n\tif Double(2) != 4 {{\n\t\tt.Fatal(\"bad\")\n\t}}\n}}\n",
            ident("keeps-mid"),
            ident("doubles")
        ),
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: keeps-mid\n    ac: A value in range is kept.\n    required: false\n  - id: doubles\n    ac: Doubling exists.\n",
    );
    r.commit("head");
    (r, base)
}

/// Asserts that `json` validates against the repository's JSON Schema `schemas/<schema>.json`
/// (check-jsonschema, from PyPI), so the documented shape and the written one cannot drift.
pub fn assert_matches_schema(schema: &str, json: &str) {
    let (file, out) = check_against_schema(schema, json);
    assert!(
        out.status.success(),
        "the document does not match {}:\n{}{}\n{json}",
        file.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The schema is strict: `json` (a document that matches it) with one key it does not
/// describe added, at the top and in every object one level down, fails it each time.
pub fn assert_schema_is_strict(schema: &str, json: &str) {
    assert_matches_schema(schema, json);
    let doc: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut places: Vec<String> = vec![String::new()];
    for (key, value) in doc.as_object().expect("a document is an object") {
        match value {
            serde_json::Value::Object(_) => places.push(format!("/{key}")),
            serde_json::Value::Array(items) if items.first().is_some_and(|v| v.is_object()) => {
                places.push(format!("/{key}/0"))
            }
            _ => {}
        }
    }
    for place in places {
        let mut v = doc.clone();
        v.pointer_mut(&place)
            .and_then(|o| o.as_object_mut())
            .unwrap()
            .insert("surprise".into(), true.into());
        let (file, out) = check_against_schema(schema, &v.to_string());
        assert!(
            !out.status.success(),
            "an undescribed key at `{place}/surprise` passed {}",
            file.display()
        );
    }
}

/// `check-jsonschema` of `json` against `schemas/<schema>.json`: the schema's path and the run.
fn check_against_schema(schema: &str, json: &str) -> (PathBuf, Output) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("schemas/{schema}.json"));
    check_against_schema_file(file, json)
}

/// Asserts that `json` validates against the JSON Schema in `file` (a path in the repository),
/// with check-jsonschema as [`assert_matches_schema`]: another program's published schema.
pub fn assert_matches_schema_file(file: &str, json: &str) {
    let (file, out) =
        check_against_schema_file(Path::new(env!("CARGO_MANIFEST_DIR")).join(file), json);
    assert!(
        out.status.success(),
        "the document does not match {}:\n{}{}\n{json}",
        file.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn check_against_schema_file(file: PathBuf, json: &str) -> (PathBuf, Output) {
    assert!(file.exists(), "no schema at {}", file.display());
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("document.json");
    std::fs::write(&doc, json).unwrap();
    let out = Command::new("check-jsonschema")
        .arg("--schemafile")
        .arg(&file)
        .arg(&doc)
        .output()
        .unwrap_or_else(|e| {
            panic!("this test needs check-jsonschema (pip install check-jsonschema): {e}")
        });
    (file, out)
}

/// Makes a FIFO at `path` (nothing ever writes to it: opening it to read blocks).
pub fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "mkfifo {}", path.display());
}

/// Whether `path` is a symlink (itself, not what it points to).
pub fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The builtin adapter of `kind` for a `runners:` item at `root` with `args` and nothing else.
pub fn builtin_runner(kind: RunnerKind, root: &str, args: &[&str]) -> Arc<dyn Runner> {
    Registry::builtin()
        .make(RunnerConfig {
            kind,
            root: root.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            setup: None,
            command: None,
            line: 1,
            env_pass: Vec::new(),
        })
        .expect("a builtin runner kind")
}
