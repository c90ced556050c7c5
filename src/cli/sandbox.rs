//! The sandbox flags of the commands that run the change's code (`claim-check`, `fuse`,
//! `replay --rerun`).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// `--sandbox`: the kernel sandbox of every command the floor and a command judge run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxMode {
    /// Refuse to run without no_new_privs and Landlock's filesystem and ptrace restrictions
    Require,
    /// Use what the kernel has, and say what it lacks
    Auto,
    /// No sandbox (the book's security page says what that gives up)
    Off,
}

impl SandboxMode {
    pub fn mode(self) -> crate::sandbox::Mode {
        match self {
            SandboxMode::Require => crate::sandbox::Mode::Require,
            SandboxMode::Auto => crate::sandbox::Mode::Auto,
            SandboxMode::Off => crate::sandbox::Mode::Off,
        }
    }
}

/// The sandbox flags of the commands that run the change's code.
#[derive(Debug, Clone, Args)]
pub struct SandboxArgs {
    /// The kernel sandbox of every command the floor and a command judge run (Linux:
    /// no_new_privs and Landlock; they write only their side's worktree, build and temporary
    /// directories, and read nothing hidden: the checkout, credential files, the evidence)
    #[arg(
        long,
        value_enum,
        default_value_t = SandboxMode::Auto,
        env = "SHIPMOOR_SANDBOX",
        value_name = "MODE",
        help_heading = "Floor"
    )]
    pub sandbox: SandboxMode,
    /// A directory the floor's commands may also write and read (repeatable; in the
    /// environment, `:`-separated): a directory the tests share with a service of the
    /// workflow, say
    #[arg(
        long = "sandbox-write",
        value_name = "DIR",
        env = "SHIPMOOR_SANDBOX_WRITE",
        value_delimiter = ':',
        help_heading = "Floor"
    )]
    pub sandbox_write: Vec<PathBuf>,
}
