//! One `shipmoor` command run as a child of the server or the hook: the same binary, so the same
//! engine, messages and outputs as on the command line, with the run's process-wide state (the
//! interrupt flag, the withheld variables, the reaper) its own.
//!
//! In: the arguments (`claim-check --format json …`), a directory, an optional text for stdin,
//! a sink for progress lines, and a cancellation.
//! Out: [`Ran`]: the exit code, stdout, and stderr without its progress lines.
//!
//! Steps:
//! 1. the child starts in a process group of its own, stdin a pipe (the server's own stdin is
//!    the protocol's channel), and is registered with [`crate::process::register_own_run`] so an
//!    interruption of this process stops it too;
//! 2. stdout is read whole (up to [`STDOUT_LIMIT`]); each stderr line that starts with
//!    `claim-check: ` goes to the progress sink, the rest (the error message) is kept;
//! 3. on cancellation the child gets SIGTERM, as Ctrl-C in a terminal: it stops its tests,
//!    removes its worktrees and writes nothing; after [`GRACE`] it is killed.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// The most of a child's stdout that is kept (a result document is far smaller).
pub const STDOUT_LIMIT: usize = 64 << 20;
/// The most of a child's non-progress stderr that is kept.
pub const STDERR_LIMIT: usize = 256 << 10;
/// How long a cancelled child has to stop by itself (its own interrupt handler exits within 10 s).
pub const GRACE: Duration = Duration::from_secs(15);
/// The most of one stderr line that is kept.
pub const LINE_LIMIT: usize = 16 << 10;
/// What starts each progress line a `claim-check` run prints on stderr.
pub const PROGRESS_PREFIX: &str = "claim-check: ";

/// What a finished child left.
#[derive(Debug, Clone, Default)]
pub struct Ran {
    /// `None` when a signal ended it.
    pub exit_code: Option<i32>,
    pub stdout: Vec<u8>,
    /// Every stderr line that was not a progress line.
    pub stderr: String,
    /// Whether the run was cancelled (and so stopped) before it ended.
    pub cancelled: bool,
}

impl Ran {
    /// The child's own message for a run that ended without a result: its stderr, else what
    /// ended it.
    pub fn message(&self) -> String {
        let text = self.stderr.trim();
        if !text.is_empty() {
            return text.to_string();
        }
        match self.exit_code {
            Some(code) => format!("shipmoor exited {code} without a message"),
            None => "shipmoor was stopped by a signal".to_string(),
        }
    }
}

/// The variable that tells a child run the pid of the server or hook that started it.
pub const PARENT_ENV: &str = "SHIPMOOR_PARENT_PID";

/// In a child run: stop (SIGTERM, as Ctrl-C) when the server or hook that started it dies,
/// killed by its agent on a timeout say, rather than run on and write outputs for nobody.
pub fn stop_with_parent() {
    let Some(parent) = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|p| p.trim().parse::<i32>().ok())
    else {
        return;
    };
    // Not passed on to the commands this run starts.
    std::env::remove_var(PARENT_ENV);
    #[cfg(target_os = "linux")]
    {
        let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM);
    }
    // The parent may have died before the signal was asked for.
    if nix::unistd::getppid().as_raw() != parent {
        let _ = nix::sys::signal::kill(nix::unistd::getpid(), nix::sys::signal::Signal::SIGTERM);
    }
}

/// Runs `shipmoor <args>` in `dir` (see the module doc). `cancel` resolves when the caller
/// cancels; `progress` gets each progress line without its prefix.
pub async fn run(
    args: Vec<OsString>,
    dir: &Path,
    input: Option<Vec<u8>>,
    mut progress: impl FnMut(String),
    cancel: impl std::future::Future<Output = ()>,
) -> std::io::Result<Ran> {
    let exe = std::env::current_exe()?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.args(&args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Progress lines are read as text: no colour codes in them.
        .env("NO_COLOR", "1")
        .env_remove("CLICOLOR_FORCE")
        .env(PARENT_ENV, std::process::id().to_string())
        .process_group(0);
    let mut child = cmd.spawn()?;
    let pid = child.id();
    if let Some(pid) = pid {
        crate::process::register_own_run(pid);
    }
    let _registered = Registered(pid);
    let mut stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let write_input = async move {
        if let (Some(stdin), Some(bytes)) = (stdin.as_mut(), input) {
            let _ = stdin.write_all(&bytes).await;
        }
        drop(stdin);
    };
    let read_stdout = async move {
        let mut buf = Vec::new();
        if let Some(out) = stdout {
            let _ = out.take(STDOUT_LIMIT as u64).read_to_end(&mut buf).await;
        }
        buf
    };
    let mut rest = String::new();
    let read_stderr = async {
        if let Some(err) = stderr {
            let mut reader = BufReader::new(err);
            let mut bytes = Vec::new();
            loop {
                bytes.clear();
                match reader.read_until(b'\n', &mut bytes).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                bytes.truncate(LINE_LIMIT);
                let line = String::from_utf8_lossy(&bytes);
                let line = line.trim_end_matches(['\n', '\r']);
                match line.strip_prefix(PROGRESS_PREFIX) {
                    Some(p) => progress(p.to_string()),
                    None if rest.len() < STDERR_LIMIT => {
                        rest.push_str(line);
                        rest.push('\n');
                    }
                    None => {}
                }
            }
        }
    };
    let (cancelled, (_, out, _, status)) = {
        let work = async { tokio::join!(write_input, read_stdout, read_stderr, child.wait()) };
        tokio::pin!(work);
        tokio::pin!(cancel);
        tokio::select! {
        biased;
        done = &mut work => (false, done),
        _ = &mut cancel => {
            if let Some(pid) = pid {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGTERM,
                );
            }
            match tokio::time::timeout(GRACE, &mut work).await {
                Ok(done) => (true, done),
                Err(_) => {
                    // The child leads its own process group: the whole group goes.
                    if let Some(pid) = pid {
                        let _ = nix::sys::signal::killpg(
                            nix::unistd::Pid::from_raw(pid as i32),
                            nix::sys::signal::Signal::SIGKILL,
                        );
                    }
                    (true, work.await)
                }
            }
        }
        }
    };
    let status = status?;
    Ok(Ran {
        exit_code: status.code(),
        stdout: out,
        stderr: rest,
        cancelled,
    })
}

/// Unregisters the child when its run is over, however it ended.
struct Registered(Option<u32>);

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            crate::process::unregister_own_run(pid);
        }
    }
}
