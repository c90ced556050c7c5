//! Running child processes for the floor (and the judge's commands): each in its own process
//! group, with a timeout, output captured, the secrets of [`is_secret_env`] left out of its
//! environment, and registered so that Ctrl-C can stop the whole tree before worktrees are
//! removed.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

static CHILD_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Marks the run as interrupted and stops every running child's process group.
pub fn interrupt_all() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    if let Ok(groups) = CHILD_GROUPS.lock() {
        for pgid in groups.iter() {
            let _ = killpg(Pid::from_raw(*pgid), Signal::SIGKILL);
        }
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// What a finished (or stopped) child left behind.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// `None` when the child was killed by a signal (including our timeout).
    pub exit_code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub duration: Duration,
    pub timed_out: bool,
    pub interrupted: bool,
    /// The child printed more than [`Limits::stdout_bytes`] on stdout and was stopped; `stdout`
    /// holds the first bytes only.
    pub stdout_over_limit: bool,
}

impl Captured {
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }

    pub fn stderr_lossy(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    pub fn stdout_lossy(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// Whether an environment variable must never reach the code the floor runs: the head commit
/// is untrusted, and these would let it sign statements (the OIDC token, the key's password),
/// or steer the rest of a GitHub Actions job (the workflow command files).
pub fn is_secret_env(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "SIGSTORE_ID_TOKEN",
        "SHIPMOOR_KEY_PASSWORD",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_OUTPUT",
        "GITHUB_STATE",
        "GITHUB_STEP_SUMMARY",
        "ACTIONS_CACHE_URL",
        "ACTIONS_RESULTS_URL",
    ];
    const PREFIXES: &[&str] = &["ACTIONS_ID_TOKEN_REQUEST_", "ACTIONS_RUNTIME_", "INPUT_"];
    EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Runs `cmd` to completion (or until `timeout`), capturing stdout and stderr. The secrets of
/// [`is_secret_env`] are removed from its environment.
///
/// Errors only when the program cannot be started at all (not found, not executable).
pub fn run(cmd: Command, timeout: Duration) -> std::io::Result<Captured> {
    run_with(cmd, timeout, Limits::default())
}

/// What a child is given and allowed beyond [`run`]'s defaults.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// Bytes written to the child's stdin (which is then closed); none: stdin is null.
    pub stdin: Option<Vec<u8>>,
    /// Stdout beyond this many bytes stops the child (its group is killed); stderr is kept up
    /// to as many bytes, the rest read and dropped.
    pub stdout_bytes: Option<usize>,
}

/// [`run`], with input on stdin and a bound on what the child may print.
pub fn run_with(mut cmd: Command, timeout: Duration, limits: Limits) -> std::io::Result<Captured> {
    use std::os::unix::process::CommandExt;
    let inherited = std::env::vars_os().map(|(k, _)| k);
    let explicit: Vec<std::ffi::OsString> = cmd.get_envs().map(|(k, _)| k.to_os_string()).collect();
    let secret: Vec<std::ffi::OsString> = inherited
        .chain(explicit)
        .filter(|k| k.to_str().is_some_and(is_secret_env))
        .collect();
    for name in secret {
        cmd.env_remove(name);
    }
    let stdin = if limits.stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    cmd.stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    if interrupted() {
        return Ok(Captured {
            interrupted: true,
            ..Captured::default()
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pgid = child.id() as i32;
    if let Ok(mut g) = CHILD_GROUPS.lock() {
        g.insert(pgid);
    }
    let mut out = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout pipe"))?;
    let mut err = child
        .stderr
        .take()
        .ok_or_else(|| std::io::Error::other("no stderr pipe"))?;
    if let (Some(bytes), Some(mut pipe)) = (limits.stdin, child.stdin.take()) {
        // A child that exits without reading makes this write fail (EPIPE): that is its
        // business, and its exit status says what happened.
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&bytes);
        });
    }
    let cap = limits.stdout_bytes;
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let Some(cap) = cap else {
            let _ = out.read_to_end(&mut buf);
            return (buf, false);
        };
        // One byte past the cap tells "exactly the cap" from "over it".
        let _ = out.by_ref().take(cap as u64 + 1).read_to_end(&mut buf);
        let over = buf.len() > cap;
        if over {
            buf.truncate(cap);
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        (buf, over)
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        match cap {
            // Stderr is only ever shown in part: keep as much as stdout may hold, drain the
            // rest so that the child never blocks on a full pipe.
            Some(cap) => {
                let _ = err.by_ref().take(cap as u64).read_to_end(&mut buf);
                let _ = std::io::copy(&mut err, &mut std::io::sink());
            }
            None => {
                let _ = err.read_to_end(&mut buf);
            }
        }
        buf
    });
    let mut timed_out = false;
    let status = loop {
        match child.try_wait()? {
            Some(status) => break status,
            None => {
                if start.elapsed() >= timeout {
                    timed_out = true;
                    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
                    break child.wait()?;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    };
    // Grandchildren that outlive the child would keep the pipes open: stop the group.
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    if let Ok(mut g) = CHILD_GROUPS.lock() {
        g.remove(&pgid);
    }
    let (stdout, stdout_over_limit) = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    Ok(Captured {
        exit_code: status.code(),
        stdout,
        stderr,
        duration: start.elapsed(),
        timed_out,
        interrupted: interrupted(),
        stdout_over_limit,
    })
}

/// Whether `program` can be found on `PATH` (or is a path to an executable file).
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exec = |p: &Path| {
        p.is_file()
            && p.metadata()
                .map(|m| m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
    };
    if program.contains('/') {
        let p = Path::new(program);
        return is_exec(p).then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_exec(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_reach_the_code_the_floor_runs() {
        assert!(is_secret_env("ACTIONS_ID_TOKEN_REQUEST_TOKEN"));
        assert!(is_secret_env("INPUT_FAIL-ON"));
        assert!(is_secret_env("GITHUB_PATH"));
        assert!(!is_secret_env("PATH"));
        assert!(!is_secret_env("GITHUB_SHA"));
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("env");
        cmd.env("SIGSTORE_ID_TOKEN", "secret-token")
            .env("KEEP_ME", "1");
        // Set in our own environment too, as in a real job.
        let out = run(cmd, Duration::from_secs(10)).unwrap();
        let env = out.stdout_lossy();
        assert!(env.contains("KEEP_ME=1"));
        assert!(!env.contains("secret-token"), "{env}");
    }

    #[test]
    fn input_goes_to_stdin_and_stdout_is_bounded() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("tr a-z A-Z");
        let limits = Limits {
            stdin: Some(b"judge me".to_vec()),
            stdout_bytes: Some(64),
        };
        let out = run_with(cmd, Duration::from_secs(10), limits).unwrap();
        assert_eq!(out.stdout, b"JUDGE ME");
        assert!(!out.stdout_over_limit && out.success());

        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("while :; do echo flood; done");
        let limits = Limits {
            stdin: None,
            stdout_bytes: Some(100),
        };
        let out = run_with(cmd, Duration::from_secs(10), limits).unwrap();
        assert!(out.stdout_over_limit && !out.timed_out, "{out:?}");
        assert_eq!(out.stdout.len(), 100);
    }
}
