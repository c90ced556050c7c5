//! Hostile code under check, run as a GitHub-hosted runner runs it: `shipmoor` started by a
//! `bash` parent that holds the job's credentials, as an unprivileged user with passwordless
//! `sudo` (book: security.md). The tests run as root in CI, so this makes that user itself
//! (`shipmoor-runner`), once per machine, under a lock: nextest runs each test in a process of
//! its own. Without root it uses the current user's passwordless `sudo` to do the same, and fails
//! naming what is missing when there is none; it never skips.
//!
//! The user has a `HOME` of its own per test (a temporary directory), so that what one test's
//! hostile code leaves under `~` (a user site-packages) reaches no other test; the repository and
//! shipmoor's temporary root are the user's for the length of each run and given back after, so
//! the test's own `git` keeps working on them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use super::lock::Lock;
use super::{Repo, Run, NEXTEST_PROFILE, PINNED_EPOCH};

/// The unprivileged user the hostile tests run `shipmoor` as.
pub const USER: &str = "shipmoor-runner";
/// Debian's Python: root's (a pyenv under `/root`, mode 700) is out of the user's reach.
pub const PYTHON: &str = "/usr/bin/python3";
/// The `PATH` the user's runs get.
pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The job's credentials, each with a value no test or report would hold by chance: the parent
/// shell of every run as the user holds them, and so does `shipmoor`.
pub const SECRETS: [(&str, &str); 5] = [
    (
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "oidc-request-token-7c1e55d0b2a94f3e",
    ),
    (
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "https://oidc.example.invalid/token?sig=3b9f4e2a61c8",
    ),
    (
        "ACTIONS_RUNTIME_TOKEN",
        "actions-runtime-token-e04d9a7b5c31",
    ),
    ("AWS_SECRET_ACCESS_KEY", "aws-secret-key-5f2c8e1d9a7b"),
    ("ANTHROPIC_API_KEY", "sk-ant-api-key-6a0d3f9c2e84"),
];

/// The effective user id of this process.
fn euid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|u| u.parse().ok())
        .expect("an effective uid in /proc/self/status")
}

fn egid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Gid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|u| u.parse().ok())
        .expect("an effective gid in /proc/self/status")
}

fn is_root() -> bool {
    euid() == 0
}

/// `program` run as root: directly when this is root, else through passwordless `sudo`.
fn as_root(program: &str) -> Command {
    if is_root() {
        Command::new(program)
    } else {
        let mut cmd = Command::new("sudo");
        cmd.args(["-n", program]);
        cmd
    }
}

/// Runs `cmd` and fails the test, saying `what`, unless it succeeds; returns its stdout.
fn must(mut cmd: Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot start {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{what}: {cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn have_sudo() -> bool {
    ["/usr/bin/sudo", "/bin/sudo", "/usr/local/bin/sudo"]
        .iter()
        .any(|p| Path::new(p).exists())
}

/// `runuser -u USER -- ARGS` (through `sudo` when this is not root).
fn as_user(args: &[&str]) -> Command {
    let mut cmd = as_root("runuser");
    cmd.args(["-u", USER, "--"]).args(args);
    cmd
}

/// Makes sure the user exists with passwordless `sudo`, and that it can run Debian's pytest.
fn ensure_user() {
    assert!(
        have_sudo(),
        "these tests run shipmoor as a user with passwordless sudo, like a GitHub-hosted \
         runner's, and `sudo` is not installed: install Debian's package `sudo` \
         (apt-get install sudo)"
    );
    if !is_root() {
        let ok = Command::new("sudo")
            .args(["-n", "true"])
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            ok,
            "these tests make a user `{USER}` and run shipmoor as it: run them as root, or as a \
             user with passwordless sudo (`sudo -n true` fails here)"
        );
    }
    let lock_dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(lock_dir).expect("the target's tmp dir");
    let _lock = Lock::acquire(lock_dir.join("shipmoor-runner-user.lock"));
    let exists = || {
        Command::new("id")
            .args(["-u", USER])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !exists() {
        let out = as_root("useradd")
            .args(["-m", "-s", "/bin/bash", USER])
            .output()
            .expect("useradd runs");
        // 9: the user exists already (made by another test run meanwhile).
        assert!(
            out.status.success() || out.status.code() == Some(9) || exists(),
            "useradd -m -s /bin/bash {USER}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let sudoers = format!("/etc/sudoers.d/{USER}");
    let line = format!("{USER} ALL=(ALL) NOPASSWD:ALL\n");
    let current = std::fs::read_to_string(&sudoers).ok();
    if current.as_deref() != Some(line.as_str()) {
        let mut cmd = as_root("sh");
        cmd.args([
            "-c",
            "umask 0337 && printf '%s' \"$1\" > \"$2.tmp\" && chmod 0440 \"$2.tmp\" && mv \"$2.tmp\" \"$2\"",
            "sh",
            &line,
            &sudoers,
        ]);
        must(cmd, "writing the sudoers file");
    }
    let sudo_ok = as_user(&["sudo", "-n", "true"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        sudo_ok,
        "`{USER}` has no passwordless sudo although {sudoers} grants it: does /etc/sudoers \
         include /etc/sudoers.d (`@includedir /etc/sudoers.d`)?"
    );
    let pytest = as_user(&[
        "env",
        "-i",
        &format!("PATH={PATH}"),
        PYTHON,
        "-m",
        "pytest",
        "--version",
    ])
    .output()
    .is_ok_and(|o| o.status.success());
    assert!(
        pytest,
        "`{PYTHON} -m pytest` does not run as `{USER}`: install Debian's packages python3 and \
         python3-pytest (apt-get install python3-pytest)"
    );
}

/// One test's user: its `HOME`, a world-writable drop directory for what hostile code tries to
/// carry out, and the `shipmoor` binary where the user can run it.
pub struct Runner {
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl Runner {
    pub fn new() -> Runner {
        ensure_user();
        let dir = tempfile::Builder::new()
            .prefix("cc-runner-")
            .tempdir()
            .expect("temp dir");
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("drop")).unwrap();
        let mut bin = PathBuf::from(env!("CARGO_BIN_EXE_shipmoor"));
        // A target dir under /root (mode 700) is out of the user's reach: run a copy.
        let reachable = as_user(&["test", "-x", &bin.display().to_string()])
            .output()
            .is_ok_and(|o| o.status.success());
        if !reachable {
            let copy = dir.path().join("bin/shipmoor");
            std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
            std::fs::copy(&bin, &copy).expect("copy the shipmoor binary");
            bin = copy;
        }
        let r = Runner { dir, bin };
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        mode(r.dir.path(), 0o755);
        mode(&r.drop_dir(), 0o1777);
        r.chown(&[r.dir.path()], USER);
        r
    }

    /// The user's `HOME` for this test.
    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// A world-writable directory outside every repository and temporary root of shipmoor's.
    pub fn drop_dir(&self) -> PathBuf {
        self.dir.path().join("drop")
    }

    /// The `shipmoor` binary the user runs.
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// `chown -R OWNER` of `paths` (`OWNER` the user's name, or `uid:gid`).
    fn chown(&self, paths: &[&Path], owner: &str) {
        let mut cmd = as_root("chown");
        cmd.arg("-R").arg(owner);
        for p in paths {
            cmd.arg(p);
        }
        must(cmd, "chown");
    }

    /// Gives `paths` to the user.
    pub fn give(&self, paths: &[&Path]) {
        self.chown(paths, &format!("{USER}:{USER}"));
    }

    /// Takes `paths` back for this process's user.
    pub fn take_back(&self, paths: &[&Path]) {
        self.chown(paths, &format!("{}:{}", euid(), egid()));
    }

    /// The variables every run of `shipmoor` in `r` gets beside [`SECRETS`] and its own `env`:
    /// the Repo helper's, with the user's `HOME` and `PATH`.
    pub fn environment(&self, r: &Repo) -> Vec<(String, String)> {
        vec![
            ("HOME".into(), self.home().display().to_string()),
            ("PATH".into(), PATH.into()),
            ("SOURCE_DATE_EPOCH".into(), PINNED_EPOCH.into()),
            ("SHIPMOOR_TMPDIR".into(), r.tmp.path().display().to_string()),
            ("NO_COLOR".into(), "1".into()),
            ("SHIPMOOR_BASE_CACHE".into(), "none".into()),
            (NEXTEST_PROFILE.0.into(), NEXTEST_PROFILE.1.into()),
        ]
    }

    /// `shipmoor ARGS` in `r`, run as the user by a `bash -c` parent whose environment holds
    /// [`SECRETS`], the Repo helper's variables and `env`; `r`, its temporary root and `also`
    /// are the user's for the run and this process's again after it.
    pub fn shipmoor(&self, r: &Repo, also: &[&Path], args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut owned: Vec<&Path> = vec![r.path(), r.tmp.path()];
        owned.extend_from_slice(also);
        self.give(&owned);
        let mut vars: Vec<String> = self
            .environment(r)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        vars.extend(SECRETS.iter().map(|(k, v)| format!("{k}={v}")));
        vars.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
        let bin = self.bin.display().to_string();
        let mut argv: Vec<&str> = vec!["env", "-i"];
        argv.extend(vars.iter().map(String::as_str));
        // `; exit $?`: bash stays the parent instead of exec'ing shipmoor.
        argv.extend(["/bin/bash", "-c", "\"$@\"; exit $?", "bash", &bin]);
        argv.extend_from_slice(args);
        let out = as_user(&argv)
            .current_dir(r.path())
            .output()
            .expect("runuser runs");
        self.take_back(&owned);
        Run::from(out)
    }

    /// Every regular file under `dir` (the user's HOME, the drop directory), with its bytes.
    pub fn files_in(&self, dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        files(dir, &mut out);
        out
    }
}

impl Default for Runner {
    fn default() -> Runner {
        Runner::new()
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        // Whatever the user left there, this process removes it with the directory.
        if !is_root() {
            let _ = as_root("chown")
                .arg("-R")
                .arg(format!("{}:{}", euid(), egid()))
                .arg(self.dir.path())
                .output();
        }
    }
}

/// Every regular file under `dir` (recursively), with its bytes.
pub fn files(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    for e in listing.flatten() {
        let p = e.path();
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            files(&p, out);
        } else if t.is_file() {
            out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
        }
    }
}

/// Every place a run stores or shows something, as (what, text): every file under `extra` (a
/// drop directory), the run's stdout and stderr, and the evidence blobs, reports and documents
/// under `.shipmoor/` (verify.md, the fix packet, the VSA, ...).
pub fn everything_shown(r: &Repo, run: &Run, extra: &[&Path]) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for dir in extra {
        files(dir, &mut found);
    }
    let mut out: Vec<(String, String)> = found
        .drain(..)
        .map(|(p, b)| {
            (
                p.display().to_string(),
                String::from_utf8_lossy(&b).into_owned(),
            )
        })
        .collect();
    out.push(("stdout".to_string(), run.stdout.clone()));
    out.push(("stderr".to_string(), run.stderr.clone()));
    files(&r.path().join(".shipmoor"), &mut found);
    for (p, bytes) in found {
        out.push((
            p.display().to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    out
}

/// Fails naming every place where a value of [`SECRETS`] shows, with the first such line.
pub fn assert_no_secret(places: &[(String, String)], run: &Run) {
    let mut seen = Vec::new();
    let mut first = String::new();
    for (name, value) in SECRETS {
        for (place, text) in places {
            if text.contains(value) {
                if first.is_empty() {
                    first = excerpt(text, value);
                }
                seen.push(format!("{name} in {place}"));
            }
        }
    }
    assert!(
        seen.is_empty(),
        "credentials were read and shown: {}\nfirst: {first}\n{run:?}",
        seen.join(", ")
    );
}

/// The line of `text` holding `needle`, cut to 400 characters.
pub fn excerpt(text: &str, needle: &str) -> String {
    text.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_default()
        .chars()
        .take(400)
        .collect()
}

/// The text of every evidence blob of `r`'s store, joined.
pub fn evidence_text(r: &Repo) -> String {
    let mut found = Vec::new();
    files(&r.path().join(".shipmoor/evidence/sha256"), &mut found);
    found
        .iter()
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Python for a test: the process's ancestors, nearest first, as (pid, comm); used by the
/// hostile tests to find shipmoor and its parents.
pub const PY_ANCESTORS: &str = r#"
def ancestors():
    out, pid = [], os.getpid()
    while True:
        try:
            status = open('/proc/%d/status' % pid).read()
        except OSError:
            break
        ppid = int([l for l in status.splitlines() if l.startswith('PPid:')][0].split()[1])
        if ppid <= 0:
            break
        try:
            comm = open('/proc/%d/comm' % ppid).read().strip()
        except OSError:
            comm = '?'
        out.append((ppid, comm))
        pid = ppid
    return out
"#;
