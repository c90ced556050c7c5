//! Runs a parsed command line and maps its outcome to one exit code (see [`crate::error`]).

#[cfg(feature = "claim-check")]
pub(crate) mod acceptance;
#[cfg(feature = "claim-check")]
mod action;
mod admit;
#[cfg(feature = "claim-check")]
mod agent;
mod attach;
#[cfg(feature = "claim-check")]
mod claim_check;
#[cfg(feature = "claim-check")]
mod confinement;
mod evidence;
mod explain;
mod keygen;
mod replay;
mod verify_bundle;

#[cfg(feature = "claim-check")]
use std::io::IsTerminal;
use std::io::Write;
use std::path::Path;

use clap::{CommandFactory, FromArgMatches};

use crate::cli::{AcceptanceCommand, Cli, Commands, Format};
#[cfg(feature = "claim-check")]
use crate::colour::colour;
use crate::colour::ColourEnv;
use crate::error::{Error, InputError, EXIT_CRASH, EXIT_INPUT};
use crate::format::error::ErrorDocument;

/// The whole program: parse, run, print errors, return the exit code.
pub fn main_entry() -> i32 {
    // The sandbox's helper (started by the floor, never by a person): it restricts itself and
    // becomes the command, before anything else of this program runs.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args
        .first()
        .is_some_and(|a| a == crate::sandbox::HELPER_ARG)
    {
        return crate::sandbox::helper::main(&args);
    }
    // Before anything else: no process of the same user (the code a run checks) can open this
    // one's /proc entries: its stdout (a result another program reads), its environment.
    crate::process::not_dumpable();
    #[cfg(feature = "claim-check")]
    crate::agent::child::stop_with_parent();
    // The colour choice is read before clap parses, so that clap's help and errors follow it.
    let env = ColourEnv::from_process();
    let choice = crate::colour::choice_from_args(std::env::args_os());
    let parsed = Cli::command()
        .color(crate::colour::clap_choice(choice, &env))
        .try_get_matches()
        .and_then(|mut matches| {
            // As `Cli::try_parse` does: an error found after parsing is told with the usage.
            Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut Cli::command()))
        });
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => 0,
                // An agent reads a Stop hook's exit 2 as "keep working, stderr is why", and
                // Codex shows nothing of another code but the code: a mistyped hook command in
                // the agent's settings lets it stop, and says why (book: agents.md).
                #[cfg(feature = "claim-check")]
                _ if is_hook(std::env::args_os()) => {
                    agent::hook_unanswered(&format!(
                        "its command line is wrong: {}",
                        e.render().to_string().trim().trim_start_matches("error: ")
                    ));
                    crate::error::EXIT_OK
                }
                _ => {
                    if asks_for_json(std::env::args_os()) {
                        let text = e.render().to_string();
                        let message = text.trim().trim_start_matches("error: ");
                        let error = InputError::new(message).help("run the command with --help");
                        print_json(&ErrorDocument::of(&Error::input(error)));
                    }
                    EXIT_INPUT
                }
            };
        }
    };
    install_interrupt_handler();
    let json = format_of(&cli) == Some(Format::Json);
    let error_out = match &cli.command {
        Commands::ClaimCheck(args) => args.error_out.clone().map(|p| (p, args.repo.clone())),
        Commands::Fuse(args) => args
            .run
            .error_out
            .clone()
            .map(|p| (p, args.run.repo.clone())),
        _ => None,
    };
    let write_error = |doc: &ErrorDocument| {
        if let Some((path, repo)) = &error_out {
            if let Ok(text) = serde_json::to_vec_pretty(doc) {
                // Through no symlink in the repository, as every output; a path in the way
                // leaves the error on stderr only.
                let repository = crate::git::Git::discover(repo).ok();
                let root = repository.as_ref().map(|g| g.root());
                let _ = crate::nofollow::write_atomic(path, root, &text);
            }
        }
    };
    let outcome = std::panic::catch_unwind(|| run(cli, &env));
    match outcome {
        Ok(Ok(code)) => code,
        Ok(Err(e)) => {
            crate::git::remove_live_worktrees();
            let _ = writeln!(std::io::stderr(), "{e}");
            let doc = ErrorDocument::of(&e);
            write_error(&doc);
            if json {
                print_json(&doc);
            }
            e.exit_code()
        }
        Err(_) => {
            crate::git::remove_live_worktrees();
            let message = "internal error: the engine crashed (a bug); nothing was written. Please report it with the output above.";
            let _ = writeln!(std::io::stderr(), "{message}");
            let doc = ErrorDocument::panic(message);
            write_error(&doc);
            if json {
                print_json(&doc);
            }
            #[cfg(feature = "claim-check")]
            if is_hook(std::env::args_os()) {
                agent::hook_unanswered(message);
                return crate::error::EXIT_OK;
            }
            EXIT_CRASH
        }
    }
}

/// The output format a command was asked for, for those that have one: with JSON, a command
/// that ends without its result prints an [`ErrorDocument`] on stdout in its place.
fn format_of(cli: &Cli) -> Option<Format> {
    match &cli.command {
        Commands::ClaimCheck(args) => Some(args.format),
        Commands::Fuse(args) => Some(args.run.format),
        Commands::Replay(args) => Some(args.format),
        Commands::Admit(args) => Some(args.format),
        Commands::Attach(args) => Some(args.format),
        Commands::Acceptance(
            AcceptanceCommand::Lint { format, .. } | AcceptanceCommand::Tags { format, .. },
        ) => Some(*format),
        Commands::Explain(args) => Some(args.format),
        Commands::Acceptance(_)
        | Commands::VerifyBundle(_)
        | Commands::Action(_)
        | Commands::Keygen(_)
        | Commands::Evidence(_)
        | Commands::Mcp(_)
        | Commands::Hook(_) => None,
    }
}

/// Whether the command line asks for `shipmoor hook …` (the first word that is no option).
#[cfg(feature = "claim-check")]
fn is_hook(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    let mut args = args.into_iter().skip(1);
    while let Some(a) = args.next() {
        if a == "--color" {
            args.next();
        } else if !a.to_string_lossy().starts_with('-') {
            return a == "hook";
        }
    }
    false
}

/// `--format json` (or `--format=json`) on a command line that did not parse: the script that
/// asked for JSON still gets the error document.
fn asks_for_json(args: impl IntoIterator<Item = std::ffi::OsString>) -> bool {
    let args: Vec<std::ffi::OsString> = args.into_iter().collect();
    args.iter().any(|a| a == "--format=json")
        || args
            .windows(2)
            .any(|w| w[0] == "--format" && w[1] == "json")
}

/// A command's result on stdout: pretty JSON with `--format json`, else its terminal text.
fn print_result<T: serde::Serialize>(
    format: Format,
    doc: &T,
    human: impl FnOnce(&T) -> String,
) -> Result<(), Error> {
    let mut out = std::io::stdout();
    match format {
        Format::Json => {
            let text = serde_json::to_string_pretty(doc).map_err(Error::crash)?;
            let _ = writeln!(out, "{text}");
        }
        Format::Human => {
            let _ = write!(out, "{}", human(doc));
        }
    }
    Ok(())
}

/// A path as reports show it: relative to the repository when inside it.
pub(crate) fn shown_path(p: &Path, root: &Path) -> String {
    let canon_root = std::fs::canonicalize(root).unwrap_or(root.to_path_buf());
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    };
    let parent_canon = abs
        .parent()
        .and_then(|d| std::fs::canonicalize(d).ok())
        .map(|d| d.join(abs.file_name().unwrap_or_default()))
        .unwrap_or(abs.clone());
    parent_canon
        .strip_prefix(&canon_root)
        .or_else(|_| abs.strip_prefix(root))
        .map(|r| r.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

fn print_json(doc: &ErrorDocument) {
    if let Ok(text) = serde_json::to_string_pretty(doc) {
        let _ = writeln!(std::io::stdout(), "{text}");
    }
}

fn run(cli: Cli, env: &ColourEnv) -> Result<i32, Error> {
    #[cfg(feature = "claim-check")]
    let colour_stdout = colour(cli.color, std::io::stdout().is_terminal(), env);
    #[cfg(not(feature = "claim-check"))]
    let _ = env;
    match cli.command {
        #[cfg(feature = "claim-check")]
        Commands::ClaimCheck(args) => {
            // Progress goes to stderr, which may be a terminal when stdout is not.
            let colour_stderr = colour(cli.color, std::io::stderr().is_terminal(), env);
            claim_check::run(*args, colour_stdout, colour_stderr)
        }
        #[cfg(feature = "claim-check")]
        Commands::Fuse(args) => claim_check::fuse(*args, colour_stdout),
        #[cfg(feature = "claim-check")]
        Commands::Acceptance(cmd) => acceptance::run(cmd),
        Commands::Replay(args) => replay::run(*args),
        Commands::Admit(args) => admit::run(*args),
        Commands::Keygen(args) => keygen::run(args),
        Commands::Evidence(cmd) => evidence::run(cmd),
        Commands::VerifyBundle(args) => verify_bundle::run(args),
        #[cfg(feature = "claim-check")]
        Commands::Action(cmd) => action::run(cmd),
        Commands::Attach(args) => attach::run(args),
        #[cfg(feature = "claim-check")]
        Commands::Mcp(args) => agent::mcp(args),
        #[cfg(feature = "claim-check")]
        Commands::Hook(cmd) => agent::hook(cmd),
        Commands::Explain(args) => explain::run(args),
        #[cfg(not(feature = "claim-check"))]
        Commands::ClaimCheck(_) => Err(verifier_only("claim-check")),
        #[cfg(not(feature = "claim-check"))]
        Commands::Fuse(_) => Err(verifier_only("fuse")),
        #[cfg(not(feature = "claim-check"))]
        Commands::Acceptance(_) => Err(verifier_only("acceptance")),
        #[cfg(not(feature = "claim-check"))]
        Commands::Action(_) => Err(verifier_only("action")),
        #[cfg(not(feature = "claim-check"))]
        Commands::Mcp(_) => Err(verifier_only("mcp")),
        #[cfg(not(feature = "claim-check"))]
        Commands::Hook(_) => Err(verifier_only("hook")),
    }
}

/// What a verifier build (`--no-default-features`, the verifier image) says, in one line, for a
/// command that runs the floor, the judge or an agent's hook (book: container.md).
#[cfg(not(feature = "claim-check"))]
pub(super) fn verifier_only(command: &str) -> Error {
    Error::input(
        InputError::new(format!(
            "`shipmoor {command}` is not in this build, which verifies only (replay, admit, \
             verify-bundle, attach, keygen, evidence, explain); the full build is the image \
             ghcr.io/shipmoor/claim-check"
        ))
        .help(
            "run it with the full build: the image ghcr.io/shipmoor/claim-check, a release's \
             `shipmoor` binary, or `cargo install shipmoor`",
        ),
    )
}

/// Ctrl-C and SIGTERM: stop every child's process group so the run unwinds, remove the
/// worktrees, and, should the run not unwind promptly, exit anyway.
fn install_interrupt_handler() {
    let _ = ctrlc::set_handler(|| {
        crate::process::interrupt_all();
        std::thread::spawn(|| {
            std::thread::sleep(std::time::Duration::from_secs(10));
            crate::git::remove_live_worktrees();
            crate::process::remove_temp_dirs();
            let _ = writeln!(
                std::io::stderr(),
                "interrupted: worktrees removed, nothing written"
            );
            std::process::exit(crate::error::EXIT_INTERRUPTED);
        });
    });
}

/// A document as every JSON output of the commands is written: pretty, with a final newline.
pub(crate) fn pretty_json<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, Error> {
    let mut b = serde_json::to_vec_pretty(v).map_err(Error::crash)?;
    b.push(b'\n');
    Ok(b)
}
