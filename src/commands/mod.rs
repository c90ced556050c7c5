//! Runs a parsed command line and maps its outcome to one exit code (see [`crate::error`]).

mod acceptance;
mod action;
mod admit;
mod attach;
mod claim_check;
mod keygen;
mod replay;
mod verify_bundle;

use std::io::Write;

use clap::Parser;

use crate::cli::{Cli, Commands};
use crate::error::{Error, EXIT_CRASH, EXIT_INPUT};

/// The whole program: parse, run, print errors, return the exit code.
pub fn main_entry() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                _ => EXIT_INPUT,
            };
        }
    };
    install_interrupt_handler();
    let outcome = std::panic::catch_unwind(|| run(cli));
    match outcome {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            crate::git::remove_live_worktrees();
            let _ = writeln!(std::io::stderr(), "{e}");
            e.exit_code()
        }
        Err(_) => {
            crate::git::remove_live_worktrees();
            let _ = writeln!(
                std::io::stderr(),
                "internal error: the engine crashed (a bug); nothing was written. Please report it with the output above."
            );
            EXIT_CRASH
        }
    }
}

fn run(cli: Cli) -> Result<i32, Error> {
    match cli.command {
        Commands::ClaimCheck(args) => claim_check::run(*args),
        Commands::Acceptance(cmd) => acceptance::run(cmd),
        Commands::Replay(args) => replay::run(*args),
        Commands::Admit(args) => admit::run(*args),
        Commands::Keygen(args) => keygen::run(args),
        Commands::VerifyBundle(args) => verify_bundle::run(args),
        Commands::Action(cmd) => action::run(cmd),
        Commands::Attach(args) => attach::run(args),
    }
}

/// Ctrl-C and SIGTERM: stop every child's process group so the run unwinds, remove the
/// worktrees, and, should the run not unwind promptly, exit anyway.
fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        crate::floor::process::interrupt_all();
        std::thread::spawn(|| {
            std::thread::sleep(std::time::Duration::from_secs(10));
            crate::git::remove_live_worktrees();
            let _ = writeln!(
                std::io::stderr(),
                "interrupted: worktrees removed, nothing written"
            );
            std::process::exit(crate::error::EXIT_INTERRUPTED);
        });
    });
}
