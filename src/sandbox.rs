//! The kernel sandbox every process the floor starts runs in (book: security.md, "The
//! sandbox"): a runner's `setup`, its listings and tests, a `check.command`, a command judge,
//! the toolchain probes. The change's code gets no new privileges (`PR_SET_NO_NEW_PRIVS`: no
//! `sudo`, no setuid helper) and a Landlock domain: it writes only what its [`Policy`] names,
//! reads everything but what the policy hides, and can neither read the memory or environment
//! of, trace, nor (where the kernel scopes signals) signal any process outside the domain:
//! Claim Check itself, its parents, the job's other processes.
//!
//! In: the [`Mode`] a run asked for (`--sandbox`), and for each command a [`Policy`]. Out: a
//! [`Sandbox`] that knows what this kernel enforces ([`Enforced`]), and restricts a command so
//! that it enters the sandbox between `fork` and `exec`: nothing of the change runs before the
//! restriction holds. The rules are made here, in the parent; the child only makes the system
//! calls that enter them (`shipmoor-confine`, the one crate of the project with `unsafe` code,
//! so that this one forbids it).
//!
//! Steps:
//! 1. [`Sandbox::probe`], once per run: `shipmoor __sandbox v1 --probe`, a fresh process,
//!    restricts itself as a command would be and says what the kernel enforced ([`helper`]);
//!    `require` refuses to go on without the filesystem rules, `no_new_privs` and the ptrace
//!    restriction (every Landlock ABI), `auto` goes on and says what is missing, `off` starts
//!    no probe;
//! 2. [`Sandbox::command`], per command: the read grants carved out of `/` around what the
//!    policy hides, the write grants, the Landlock ruleset with them, and for root the
//!    capabilities to keep ([`helper::restriction`]);
//! 3. in the child, after `fork`: `no_new_privs`, the capability cut, `landlock_restrict_self`,
//!    then `exec` of the program.

pub mod env;
pub mod helper;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

/// The first argument that makes `shipmoor` the sandbox's helper.
pub const HELPER_ARG: &str = "__sandbox";
/// The helper's protocol version: the parent and the helper are the same binary, but a
/// version makes a mismatch (a binary replaced while a run goes on) an error, not a guess.
const PROTOCOL: &str = "v1";

/// What `--sandbox` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Refuse to run the floor where the kernel cannot sandbox it.
    Require,
    /// Sandbox where the kernel can, and say what it could not enforce.
    Auto,
    /// Start the commands as they are (a person who knows why).
    Off,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Require => "require",
            Mode::Auto => "auto",
            Mode::Off => "off",
        }
    }

    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "require" => Some(Mode::Require),
            "auto" => Some(Mode::Auto),
            "off" => Some(Mode::Off),
            _ => None,
        }
    }
}

/// What the kernel enforced when the probe restricted itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Enforced {
    /// The Landlock ABI the kernel offers (0: none), as far as this build knows ABIs.
    pub landlock_abi: u32,
    /// `PR_SET_NO_NEW_PRIVS`: no `sudo`, no setuid or file-capability gain.
    pub no_new_privs: bool,
    /// Landlock's filesystem rules (the write allow-list, the hidden paths).
    pub filesystem: bool,
    /// A Landlock domain: no ptrace, no `/proc/<pid>/environ` or `mem` of a process outside it
    /// (for a user other than root: root still reads other processes' `environ`).
    pub ptrace: bool,
    /// Signals to processes outside the domain refused (Landlock ABI 6, Linux 6.12).
    pub signals: bool,
    /// Abstract UNIX sockets outside the domain unreachable (Landlock ABI 6).
    pub abstract_sockets: bool,
    /// The run's user is root.
    pub as_root: bool,
    /// Root's capabilities were cut to a container's default set (without `CAP_SYS_ADMIN` and
    /// `CAP_PERFMON`, whose holder still reads other processes' environments under Landlock).
    #[serde(default)]
    pub capabilities_cut: bool,
}

impl Enforced {
    /// What `require` needs: the filesystem rules, `no_new_privs` and the ptrace restriction.
    pub fn meets_require(&self) -> bool {
        self.filesystem && self.no_new_privs && self.ptrace
    }

    /// The protections not enforced, in words, for the one line a report shows.
    pub fn missing(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if !self.filesystem {
            out.push("filesystem rules");
        }
        if !self.ptrace {
            out.push("ptrace restriction");
        }
        if !self.no_new_privs {
            out.push("no_new_privs");
        }
        if !self.signals {
            out.push("signal scoping (Landlock ABI 6, Linux 6.12)");
        }
        if !self.abstract_sockets {
            out.push("abstract socket scoping (Landlock ABI 6)");
        }
        out
    }
}

/// What a sandboxed command may touch, beyond reading everything else.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Directories (or files) it may read, write, create and remove under.
    pub write: Vec<PathBuf>,
    /// Paths it may not read (nor execute), carved out of the grant of `/`.
    pub hide: Vec<PathBuf>,
    /// Paths under a hidden one that it may still read (the repository's `.git` inside the
    /// hidden checkout).
    pub read: Vec<PathBuf>,
}

/// The run's sandbox: the mode asked for and what the kernel enforces.
#[derive(Debug, Clone)]
pub struct Sandbox {
    mode: Mode,
    /// Whether commands are restricted: not under `off`, nor under `auto` where nothing can be
    /// enforced.
    active: bool,
    enforced: Enforced,
    /// Why nothing is enforced, when `auto` found so.
    unavailable: Option<String>,
}

impl Sandbox {
    /// No sandbox: commands start as they are.
    pub fn off() -> Sandbox {
        Sandbox {
            mode: Mode::Off,
            active: false,
            enforced: Enforced::default(),
            unavailable: None,
        }
    }

    /// Step 1: finds what this kernel enforces by starting the helper (`helper`, this binary),
    /// which restricts itself as a command would be and says what held. `require` without the
    /// filesystem rules, `no_new_privs` and the ptrace restriction is an error that says what
    /// is missing.
    pub fn probe(mode: Mode, helper: &Path) -> Result<Sandbox, ProbeError> {
        if mode == Mode::Off {
            return Ok(Sandbox::off());
        }
        let inactive = |why: ProbeError, as_root: bool| Sandbox {
            mode,
            active: false,
            enforced: Enforced {
                as_root,
                ..Enforced::default()
            },
            unavailable: Some(why.to_string()),
        };
        match run_probe(helper) {
            Ok(enforced)
                if enforced.meets_require() || (enforced.filesystem && mode == Mode::Auto) =>
            {
                Ok(Sandbox {
                    mode,
                    active: true,
                    enforced,
                    unavailable: None,
                })
            }
            Ok(enforced) => {
                let missing: Vec<&str> = enforced
                    .missing()
                    .into_iter()
                    .filter(|m| !m.starts_with("signal") && !m.starts_with("abstract"))
                    .collect();
                let why = ProbeError::Kernel {
                    abi: enforced.landlock_abi,
                    missing: missing.join(", no "),
                };
                match mode {
                    Mode::Require => Err(why),
                    _ => Ok(inactive(why, enforced.as_root)),
                }
            }
            Err(why) => match mode {
                Mode::Require => Err(why),
                _ => Ok(inactive(why, is_root())),
            },
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// What the kernel enforces for each wrapped command (all false when none is wrapped).
    pub fn enforced(&self) -> &Enforced {
        &self.enforced
    }

    /// Whether commands are restricted.
    pub fn active(&self) -> bool {
        self.active
    }

    /// Why `auto` found nothing to enforce.
    pub fn unavailable(&self) -> Option<&str> {
        self.unavailable.as_deref()
    }

    /// Steps 2 and 3: `cmd`, restricted under `policy` when it starts; `cmd` as it is when
    /// the sandbox is not active. The rules are made now: a rule that cannot be made is an
    /// error, and the command is not started.
    pub fn command(&self, mut cmd: Command, policy: &Policy) -> std::io::Result<Command> {
        if !self.active {
            return Ok(cmd);
        }
        let restriction = helper::restriction(policy).map_err(|e| {
            std::io::Error::other(format!("the sandbox's rules could not be made: {e}"))
        })?;
        shipmoor_confine::confine(&mut cmd, restriction);
        Ok(cmd)
    }
}

/// A sandbox and the policy of one kind of command (a side's runs, a probe, a judge): what
/// [`crate::process::Confine::Sandboxed`] starts a command under.
#[derive(Debug, Clone)]
pub struct Jail {
    pub sandbox: std::sync::Arc<Sandbox>,
    pub policy: Policy,
    /// What a command gets of our environment.
    pub env: env::EnvPolicy,
}

impl Jail {
    /// No sandbox and no policy: for tests of code that starts commands.
    pub fn none() -> Jail {
        Jail {
            sandbox: std::sync::Arc::new(Sandbox::off()),
            policy: Policy::default(),
            env: env::EnvPolicy::default(),
        }
    }

    /// [`Sandbox::command`] under this jail's policy.
    pub fn command(&self, cmd: Command) -> std::io::Result<Command> {
        self.sandbox.command(cmd, &self.policy)
    }

    /// The same sandbox with `policy`.
    pub fn with(&self, policy: Policy) -> Jail {
        Jail {
            sandbox: self.sandbox.clone(),
            policy,
            env: self.env.clone(),
        }
    }
}

/// The sandbox of a run and what every command's policy shares: the paths hidden from all of
/// them and the paths under those that stay readable. A kind of command adds what it writes
/// ([`Confinement::jail`]).
#[derive(Debug, Clone)]
pub struct Confinement {
    pub sandbox: std::sync::Arc<Sandbox>,
    pub hide: Vec<PathBuf>,
    pub read: Vec<PathBuf>,
    /// Directories every command may write besides its own (`--sandbox-write`).
    pub write: Vec<PathBuf>,
    /// What every command gets of our environment.
    pub env: env::EnvPolicy,
}

impl Confinement {
    /// No sandbox: for tests, and for code that must start no command of the change.
    pub fn off() -> Confinement {
        Confinement {
            sandbox: std::sync::Arc::new(Sandbox::off()),
            hide: Vec::new(),
            read: Vec::new(),
            write: Vec::new(),
            env: env::EnvPolicy::default(),
        }
    }

    /// The jail of a command that writes `write` (which exist): each path canonical, so that a
    /// rule holds for the directory itself and not for a link to it.
    pub fn jail(&self, write: &[&Path]) -> Jail {
        self.jail_reading(write, &[])
    }

    /// [`Confinement::jail`], with `read` readable too where they lie under a hidden path
    /// (the tree a judge is shown).
    pub fn jail_reading(&self, write: &[&Path], read: &[&Path]) -> Jail {
        let mut readable = self.read.clone();
        readable.extend(read.iter().map(|p| canonical(p)));
        let mut writable: Vec<PathBuf> = write.iter().map(|p| canonical(p)).collect();
        writable.extend(self.write.iter().cloned());
        Jail {
            sandbox: self.sandbox.clone(),
            policy: Policy {
                write: writable,
                hide: self.hide.clone(),
                read: readable,
            },
            env: self.env.clone(),
        }
    }
}

/// `p` with every symbolic link resolved, or as given when it does not exist.
pub fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// The files and directories under a home directory that hold credentials, hidden from every
/// command (book: security.md): SSH keys, cloud and registry logins, package index tokens,
/// git's stored credentials and the configuration that can hold tokens, GitHub's CLI.
pub const CREDENTIAL_FILES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    ".gitconfig",
    ".config/git",
    ".config/gh",
    ".config/hub",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".m2/settings.xml",
    ".gradle/gradle.properties",
    ".terraform.d/credentials.tfrc.json",
    ".config/containers/auth.json",
    ".local/share/keyrings",
    ".password-store",
];

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Why the kernel's sandbox is not used: the helper did not start or answer, or the kernel
/// enforces too little. An error under `--sandbox require`, a note otherwise.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("the sandbox helper {} did not start: {source}", helper.display())]
    Start {
        helper: PathBuf,
        source: std::io::Error,
    },
    /// The helper failed: the last line it printed on stderr.
    #[error("the sandbox helper {} could not restrict itself: {why}", helper.display())]
    Restrict { helper: PathBuf, why: String },
    #[error("the sandbox helper answered `{line}`: {source}")]
    Answer {
        line: String,
        source: serde_json::Error,
    },
    /// What the kernel lacks (joined by ", no ").
    #[error("the kernel cannot sandbox the floor's commands (Landlock ABI {abi}): no {missing}")]
    Kernel { abi: u32, missing: String },
}

/// The helper's answer to `--probe`, or why there is none.
fn run_probe(helper: &Path) -> Result<Enforced, ProbeError> {
    let out = Command::new(helper)
        .args([HELPER_ARG, PROTOCOL, "--probe"])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|source| ProbeError::Start {
            helper: helper.to_path_buf(),
            source,
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with('{')).unwrap_or("");
    if !out.status.success() || line.is_empty() {
        let why = String::from_utf8_lossy(&out.stderr);
        return Err(ProbeError::Restrict {
            helper: helper.to_path_buf(),
            why: why.lines().last().unwrap_or("no answer").trim().to_string(),
        });
    }
    serde_json::from_str(line).map_err(|source| ProbeError::Answer {
        line: line.to_string(),
        source,
    })
}

#[cfg(test)]
mod tests;
