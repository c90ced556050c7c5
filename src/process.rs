//! Running child processes for the floor (and the judge's commands): each in its own process
//! group, with a timeout, output captured, the secrets of its [`EnvPolicy`] left out of its
//! environment, and registered so that Ctrl-C can stop the whole tree before worktrees are
//! removed. A command started inside [`watching`] is also reported to its [`Watch`] while it
//! runs (its output as it arrives, and a tick every 10 ms), for the progress lines of long work.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::sandbox::env::EnvPolicy;

static CHILD_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
/// Children that are `shipmoor` runs of their own (the MCP server's and the hooks' calls): an
/// interruption asks each to stop (SIGTERM), so that it removes its own worktrees.
static OWN_RUNS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Marks the run as interrupted, stops every running child's process group, and asks every
/// child `shipmoor` run to stop.
pub fn interrupt_all() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    if let Ok(groups) = CHILD_GROUPS.lock() {
        for pgid in groups.iter() {
            let _ = killpg(Pid::from_raw(*pgid), Signal::SIGKILL);
        }
    }
    terminate_own_runs();
}

/// The run's temporary directories (worktrees, build outputs), removed by [`remove_temp_dirs`]
/// when an interrupted run does not unwind in time to remove them itself.
static TEMP_DIRS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Registers a temporary directory of this run for [`remove_temp_dirs`].
pub fn register_temp_dir(path: &Path) {
    if let Ok(mut dirs) = TEMP_DIRS.lock() {
        dirs.push(path.to_path_buf());
    }
}

/// Removes every registered temporary directory that is still there.
pub fn remove_temp_dirs() {
    if let Ok(dirs) = TEMP_DIRS.lock() {
        for d in dirs.iter() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

/// Registers a child `shipmoor` run (its pid), for [`interrupt_all`] and [`terminate_own_runs`].
pub fn register_own_run(pid: u32) {
    if let Ok(mut runs) = OWN_RUNS.lock() {
        runs.insert(pid as i32);
    }
}

/// Forgets a child `shipmoor` run once it has been waited for.
pub fn unregister_own_run(pid: u32) {
    if let Ok(mut runs) = OWN_RUNS.lock() {
        runs.remove(&(pid as i32));
    }
}

/// Asks every registered child `shipmoor` run to stop, as Ctrl-C asks a run in a terminal: it
/// stops its commands, removes its worktrees and writes nothing.
pub fn terminate_own_runs() {
    if let Ok(runs) = OWN_RUNS.lock() {
        for pid in runs.iter() {
            let _ = nix::sys::signal::kill(Pid::from_raw(*pid), Signal::SIGTERM);
        }
    }
}

/// How many child `shipmoor` runs are registered.
pub fn own_runs() -> usize {
    OWN_RUNS.lock().map(|r| r.len()).unwrap_or(0)
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

/// Which of a child's streams some bytes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// What is told about the commands started inside [`watching`], on the thread that started
/// them. It only observes: what a child prints is captured exactly as without a watch.
pub trait Watch {
    /// A command starts; `program` is what runs (its file name).
    fn started(&mut self, program: &str);
    /// Bytes the command wrote, as they arrive, including any past the limits of what is kept.
    fn output(&mut self, stream: Stream, bytes: &[u8]);
    /// About every 10 ms while the command runs.
    fn tick(&mut self);
}

thread_local! {
    // The watch of the step running on this thread. Scoped by `watching`, as a tracing
    // subscriber is by `with_default`: the adapters start their commands through the kit on the
    // floor's own thread, so a step's commands are watched without threading a watch through
    // every adapter and its contexts, and a command started outside a watched step is not.
    static WATCH: RefCell<Option<Rc<RefCell<dyn Watch>>>> = const { RefCell::new(None) };
}

/// Runs `f` with `watch` told about every command started on this thread meanwhile (nested:
/// the inner watch only); the watch before is back when `f` returns or unwinds.
pub fn watching<T>(watch: Rc<RefCell<dyn Watch>>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<Rc<RefCell<dyn Watch>>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            WATCH.with(|w| *w.borrow_mut() = before);
        }
    }
    let before = WATCH.with(|w| w.borrow_mut().replace(watch));
    let _restore = Restore(before);
    f()
}

fn current_watch() -> Option<Rc<RefCell<dyn Watch>>> {
    WATCH.with(|w| w.borrow().clone())
}

/// Reads `from` to its end in chunks: the first `keep` bytes (all, when `None`) into the
/// returned buffer, every chunk also sent to the watch's channel; past `keep`, reading stops
/// when `drain` is false, else the rest is read and dropped so the child never blocks on a full
/// pipe.
fn read_stream(
    mut from: impl Read,
    keep: Option<usize>,
    drain: bool,
    stream: Stream,
    tx: Option<mpsc::Sender<(Stream, Vec<u8>)>>,
) -> Vec<u8> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let room = keep.map(|k| k.saturating_sub(buf.len()));
        if room == Some(0) && !drain {
            break;
        }
        let want = room.map_or(chunk.len(), |r| {
            if r == 0 {
                chunk.len()
            } else {
                r.min(chunk.len())
            }
        });
        let n = match from.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if room != Some(0) {
            buf.extend_from_slice(&chunk[..n]);
        }
        if let Some(tx) = &tx {
            let _ = tx.send((stream, chunk[..n].to_vec()));
        }
    }
    buf
}

/// Where a command runs. Every caller says which, so that no command of the floor starts
/// outside the sandbox by omission.
#[derive(Debug, Clone, Copy)]
pub enum Confine<'a> {
    /// Code of the change, or a tool that reads what the change wrote or chose (a runner, a
    /// toolchain probe, a build): started in the sandbox under the jail's policy
    /// (book: security.md, "The sandbox").
    Sandboxed(&'a crate::sandbox::Jail),
    /// A program of our own choosing on inputs it reads as data only (`cp` copying a build
    /// directory): started as it is, under the run's environment policy (what it withholds
    /// reaches no command of the run).
    Unconfined(&'a EnvPolicy),
}

/// Runs `cmd` to completion (or until `timeout`), capturing stdout and stderr, confined as
/// `confine` says. The secrets of the jail's [`EnvPolicy`] (the rules alone for a command started
/// unconfined) are removed from its environment.
///
/// Errors only when the program cannot be started at all (not found, not executable).
pub fn run(cmd: Command, timeout: Duration, confine: Confine<'_>) -> std::io::Result<Captured> {
    run_with(cmd, timeout, Limits::default(), confine)
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
pub fn run_with(
    mut cmd: Command,
    timeout: Duration,
    limits: Limits,
    confine: Confine<'_>,
) -> std::io::Result<Captured> {
    use std::os::unix::process::CommandExt;
    // A command started as it is gets the rules alone; a confined one its run's policy too.
    match confine {
        Confine::Sandboxed(jail) => jail.env.apply(&mut cmd),
        Confine::Unconfined(env) => env.apply(&mut cmd),
    }
    // What runs, by its file name (the helper's name once sandboxed), for the watch.
    let program = Path::new(cmd.get_program())
        .file_name()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut cmd = match confine {
        Confine::Sandboxed(jail) => jail.command(cmd)?,
        Confine::Unconfined(_) => cmd,
    };
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
    if let Some(w) = current_watch() {
        w.borrow_mut().started(&program);
    }
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let pgid = child.id() as i32;
    if let Ok(mut g) = CHILD_GROUPS.lock() {
        g.insert(pgid);
    }
    // An interruption between the check above and the registration found no group to stop:
    // this one is stopped now, so that nothing started after Ctrl-C outlives the run.
    if interrupted() {
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    }
    let out = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout pipe"))?;
    let err = child
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
    let watch = current_watch();
    let (tx, rx) = match &watch {
        Some(_) => {
            let (tx, rx) = mpsc::channel();
            (Some(tx), Some(rx))
        }
        None => (None, None),
    };
    let out_tx = tx.clone();
    let out_reader = std::thread::spawn(move || {
        // One byte past the cap tells "exactly the cap" from "over it".
        let mut buf = read_stream(out, cap.map(|c| c + 1), false, Stream::Stdout, out_tx);
        let over = cap.is_some_and(|cap| buf.len() > cap);
        if let (true, Some(cap)) = (over, cap) {
            buf.truncate(cap);
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        (buf, over)
    });
    // Stderr is only ever shown in part: with a cap, keep as much as stdout may hold, drain the
    // rest so that the child never blocks on a full pipe.
    let err_reader = std::thread::spawn(move || read_stream(err, cap, true, Stream::Stderr, tx));
    let tell = |rx: &Option<mpsc::Receiver<(Stream, Vec<u8>)>>| {
        if let (Some(w), Some(rx)) = (&watch, rx) {
            let mut w = w.borrow_mut();
            for (stream, bytes) in rx.try_iter() {
                w.output(stream, &bytes);
            }
            w.tick();
        }
    };
    let mut timed_out = false;
    // The child is waited for on a thread of its own, so that its end is seen at once (not at
    // the next tick), while this one ticks the watch and keeps the time.
    let (ended_tx, ended) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = ended_tx.send(());
        status
    });
    while let Err(mpsc::RecvTimeoutError::Timeout) = ended.recv_timeout(Duration::from_millis(10)) {
        if !timed_out && start.elapsed() >= timeout {
            timed_out = true;
            let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        }
        tell(&rx);
    }
    let status = waiter
        .join()
        .map_err(|_| std::io::Error::other("the wait for a command panicked"))??;
    // Grandchildren that outlive the child would keep the pipes open: stop the group.
    let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
    if let Ok(mut g) = CHILD_GROUPS.lock() {
        g.remove(&pgid);
    }
    // And what left the group (`setsid`, a double fork): nothing a command started outlives it.
    if REAP_AFTER_EACH.load(Ordering::SeqCst) {
        reap_orphans();
    }
    let (stdout, stdout_over_limit) = out_reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    // What the readers sent after the last tick (both have ended: every sender is gone).
    tell(&rx);
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

/// Whether each command's end also stops what it left running outside its process group
/// ([`reap_orphans`]); on while the floor runs its commands one at a time.
static REAP_AFTER_EACH: AtomicBool = AtomicBool::new(false);

/// Makes this process the subreaper of everything it starts (Linux, `PR_SET_CHILD_SUBREAPER`):
/// a descendant whose parent exits, such as a test that daemonized itself into a session of its
/// own, is reparented here rather than to init, where [`reap_orphans`] finds it. With `each`,
/// every command's end reaps too, which is only right while no other thread of ours has
/// children of its own (the floor's commands run one at a time; the judge's in parallel, so it
/// reaps once they all have ended).
pub fn become_subreaper(each: bool) {
    #[cfg(target_os = "linux")]
    {
        let _ = nix::sys::prctl::set_child_subreaper(true);
    }
    // Not dumpable (as `main_entry` made it already): a process of the same (non-root) user
    // cannot read this one's `/proc/<pid>/environ`, which still holds every variable withheld
    // from it.
    not_dumpable();
    REAP_AFTER_EACH.store(each, Ordering::SeqCst);
}

/// Makes this process not dumpable (Linux, `PR_SET_DUMPABLE` 0): a process of the same
/// (non-root) user, such as the code a child run checks, can then open nothing under
/// `/proc/<pid>/` of this one: not its stdin and stdout (an MCP session's channel, a hook's
/// answer), not its environment.
pub fn not_dumpable() {
    #[cfg(target_os = "linux")]
    {
        let _ = nix::sys::prctl::set_dumpable(false);
    }
}

/// Stops every process that is this one's child but no command still running, and every
/// process below it: descendants the floor's commands left behind (reparented here by
/// [`become_subreaper`]), however deep. Each round finds the whole tree of what is left (by
/// `/proc`'s parent links), stops every process in it first (`SIGSTOP`: nothing can fork away
/// while the tree is being killed), then kills them all and waits for its own children; a
/// process deeper down is reparented here when its parent dies (a zombie), and the next round
/// waits for it.
/// Rounds go on while anything is left, for at most 30 seconds. Returns how many were killed.
pub fn reap_orphans() -> usize {
    let me = std::process::id() as i32;
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut reaped = 0;
    while Instant::now() < deadline {
        let running: BTreeSet<i32> = CHILD_GROUPS.lock().map(|g| g.clone()).unwrap_or_default();
        let parents = parent_links();
        let orphans: Vec<i32> = children_in(&parents, me)
            .into_iter()
            .filter(|pid| !running.contains(pid))
            .collect();
        if orphans.is_empty() {
            break;
        }
        let tree = descendants(&parents, &orphans);
        for pid in &tree {
            let _ = nix::sys::signal::kill(Pid::from_raw(*pid), Signal::SIGSTOP);
        }
        for pid in &tree {
            let _ = nix::sys::signal::kill(Pid::from_raw(*pid), Signal::SIGKILL);
        }
        for pid in &orphans {
            // A killed process is a zombie within moments; one stuck in the kernel is left
            // after a second rather than hanging the run.
            for _ in 0..100 {
                match nix::sys::wait::waitpid(
                    Pid::from_raw(*pid),
                    Some(nix::sys::wait::WaitPidFlag::WNOHANG),
                ) {
                    Ok(nix::sys::wait::WaitStatus::StillAlive) => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    _ => break,
                }
            }
        }
        reaped += tree.len();
    }
    reaped
}

/// Every process's parent, from `/proc/<pid>/stat` (its fourth field, after the command name
/// in parentheses, which may itself hold spaces and parentheses).
fn parent_links() -> Vec<(i32, i32)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let pid: i32 = e.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let rest = &stat[stat.rfind(')')? + 1..];
        let ppid: i32 = rest.split_whitespace().nth(1)?.parse().ok()?;
        Some((pid, ppid))
    })
    .collect()
}

/// The pids whose parent is `parent`.
fn children_in(parents: &[(i32, i32)], parent: i32) -> Vec<i32> {
    parents
        .iter()
        .filter(|(_, pp)| *pp == parent)
        .map(|(pid, _)| *pid)
        .collect()
}

/// `roots` and every process below them, each once.
fn descendants(parents: &[(i32, i32)], roots: &[i32]) -> Vec<i32> {
    let mut seen: BTreeSet<i32> = roots.iter().copied().collect();
    let mut out: Vec<i32> = roots.to_vec();
    let mut i = 0;
    while i < out.len() {
        for c in children_in(parents, out[i]) {
            if seen.insert(c) {
                out.push(c);
            }
        }
        i += 1;
    }
    out
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
    use crate::sandbox::env::{is_never_passed, is_secret_env, is_secret_value};
    use crate::sandbox::Jail;

    #[test]
    fn secrets_never_reach_the_code_the_floor_runs() {
        assert!(is_secret_env("ACTIONS_ID_TOKEN_REQUEST_TOKEN"));
        assert!(is_secret_env("INPUT_FAIL-ON"));
        assert!(is_secret_env("GITHUB_PATH"));
        assert!(!is_secret_env("PATH"));
        assert!(!is_secret_env("GITHUB_SHA"));
        // Denied by default: anything named like a credential, whatever its case.
        for name in [
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_SESSION_TOKEN",
            "NPM_TOKEN",
            "CARGO_REGISTRY_TOKEN",
            "DOCKER_AUTH_CONFIG",
            "OPENAI_API_KEY",
            "MY_SERVICE_PASSWORD",
            "DB_PASSWD",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "STRIPE_KEY",
            "PYPI_UPLOAD",
            "SHIPMOOR_SIGNING_TOKEN",
            "github_token",
            "HTTP_AUTHORIZATION_HEADER",
            "CI_JOB_JWT_V2",
            "DEPLOY_PAT",
            "MYSQL_PWD",
            "DOCKER_PASS",
            "GPG_PASSPHRASE",
            "SLACK_WEBHOOK_URL",
            "SENTRY_DSN",
            "SSH_AUTH_SOCK",
        ] {
            assert!(is_secret_env(name), "{name}");
        }
        for name in ["PWD", "OLDPWD", "PATH", "COMPASS_DIR", "PATTERN", "DSN_DIR"] {
            assert!(!is_secret_env(name), "{name}");
        }
        // A value that holds a password, whatever its name.
        for value in [
            "postgres://app:s3cret@db:5432/app",
            "redis://:pw@cache",
            "see https://user:tok@example.com/x",
        ] {
            assert!(is_secret_value(value.as_ref()), "{value}");
        }
        for value in [
            "https://example.com/a@b",
            "git@github.com:o/r.git",
            "https://user@example.com/",
            "/home/u",
        ] {
            assert!(!is_secret_value(value.as_ref()), "{value}");
        }
        for name in [
            "HOME",
            "LANG",
            "CI",
            "AWS_REGION",
            "KEYBOARD",
            "TOKENIZERS_DIR_X",
            "CARGO_PKG_AUTHORS",
            "SHIPMOOR_JUDGE_URL",
        ] {
            assert_eq!(is_secret_env(name), name.contains("TOKEN"), "{name}");
        }
        let policy = EnvPolicy::new(["A_JUDGE_VARIABLE".to_string()], &[]);
        assert!(
            policy.is_secret_env("A_JUDGE_VARIABLE") && policy.is_never_passed("A_JUDGE_VARIABLE")
        );
        assert!(is_never_passed("SIGSTORE_ID_TOKEN") && !is_never_passed("NPM_TOKEN"));
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("env");
        cmd.env("SIGSTORE_ID_TOKEN", "secret-token")
            .env("KEEP_ME", "1");
        // Set in our own environment too, as in a real job.
        let out = run(
            cmd,
            Duration::from_secs(10),
            Confine::Unconfined(&EnvPolicy::default()),
        )
        .unwrap();
        let env = out.stdout_lossy();
        assert!(env.contains("KEEP_ME=1"));
        assert!(!env.contains("secret-token"), "{env}");
        // A confined command gets its jail's policy: the run's own names are withheld too.
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("env");
        cmd.env("A_JUDGE_VARIABLE", "judge-key").env("KEEP_ME", "1");
        let jail = Jail {
            env: policy,
            ..Jail::none()
        };
        let out = run(cmd, Duration::from_secs(10), Confine::Sandboxed(&jail)).unwrap();
        let env = out.stdout_lossy();
        assert!(env.contains("KEEP_ME=1"));
        assert!(!env.contains("judge-key"), "{env}");
        // So does a program of ours started as it is (a `cp`), under the run's policy.
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("env");
        cmd.env("A_JUDGE_VARIABLE", "judge-key").env("KEEP_ME", "1");
        let out = run(cmd, Duration::from_secs(10), Confine::Unconfined(&jail.env)).unwrap();
        let env = out.stdout_lossy();
        assert!(env.contains("KEEP_ME=1"));
        assert!(!env.contains("judge-key"), "{env}");
    }

    /// Keeps everything a watch is told.
    #[derive(Default)]
    struct Recorder {
        started: Vec<String>,
        stdout: Vec<u8>,
        stderr: Vec<u8>,
        ticks: usize,
    }

    impl Watch for Recorder {
        fn started(&mut self, program: &str) {
            self.started.push(program.to_string());
        }
        fn output(&mut self, stream: Stream, bytes: &[u8]) {
            match stream {
                Stream::Stdout => self.stdout.extend_from_slice(bytes),
                Stream::Stderr => self.stderr.extend_from_slice(bytes),
            }
        }
        fn tick(&mut self) {
            self.ticks += 1;
        }
    }

    #[test]
    fn a_watch_sees_all_output_and_changes_nothing_captured() {
        let script = "echo out; sleep 0.05; printf 'err%.0s' $(seq 1 100) >&2; echo more";
        let limits = Limits {
            stdin: None,
            stdout_bytes: Some(64),
        };
        let sh = || {
            let mut cmd = Command::new("sh");
            cmd.arg("-c").arg(script);
            cmd
        };
        let plain = run_with(
            sh(),
            Duration::from_secs(10),
            limits.clone(),
            Confine::Unconfined(&EnvPolicy::default()),
        )
        .unwrap();
        let recorder = Rc::new(RefCell::new(Recorder::default()));
        let watch: Rc<RefCell<dyn Watch>> = recorder.clone();
        let watched = watching(watch, || {
            run_with(
                sh(),
                Duration::from_secs(10),
                limits.clone(),
                Confine::Unconfined(&EnvPolicy::default()),
            )
            .unwrap()
        });
        assert_eq!(
            (&watched.stdout, &watched.stderr),
            (&plain.stdout, &plain.stderr)
        );
        // Stderr past the limit is dropped from what is kept, not from what the watch sees.
        assert_eq!(watched.stderr.len(), 64);
        let r = recorder.borrow();
        assert_eq!(r.started, ["sh"]);
        assert_eq!(r.stdout, b"out\nmore\n");
        assert_eq!(r.stderr, "err".repeat(100).as_bytes());
        assert!(r.ticks >= 1);
        drop(r);
        // Outside `watching`, nothing is told.
        let _ = run(
            sh(),
            Duration::from_secs(10),
            Confine::Unconfined(&EnvPolicy::default()),
        )
        .unwrap();
        assert_eq!(recorder.borrow().started.len(), 1);
    }

    #[test]
    fn input_goes_to_stdin_and_stdout_is_bounded() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("tr a-z A-Z");
        let limits = Limits {
            stdin: Some(b"judge me".to_vec()),
            stdout_bytes: Some(64),
        };
        let out = run_with(
            cmd,
            Duration::from_secs(10),
            limits,
            Confine::Unconfined(&EnvPolicy::default()),
        )
        .unwrap();
        assert_eq!(out.stdout, b"JUDGE ME");
        assert!(!out.stdout_over_limit && out.success());

        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("while :; do echo flood; done");
        let limits = Limits {
            stdin: None,
            stdout_bytes: Some(100),
        };
        let out = run_with(
            cmd,
            Duration::from_secs(10),
            limits,
            Confine::Unconfined(&EnvPolicy::default()),
        )
        .unwrap();
        assert!(out.stdout_over_limit && !out.timed_out, "{out:?}");
        assert_eq!(out.stdout.len(), 100);
    }
}
