//! `shipmoor mcp` and `shipmoor hook <agent>` (see [`crate::agent`]).

use std::io::{Read, Write};

use crate::agent::{hook, mcp};
use crate::cli::{own_flags, HookCommand, McpArgs};
use crate::error::{Error, InputError};

/// Serves until the client closes the connection. Exit 0.
pub fn mcp(args: McpArgs) -> Result<i32, Error> {
    let repo = std::fs::canonicalize(&args.repo).map_err(|e| {
        Error::input(
            InputError::new(format!("--repo {}: {e}", args.repo.display()))
                .help("name the directory of a repository (or a directory in one)"),
        )
    })?;
    mcp::serve(repo, own_flags).map_err(Error::crash)?;
    Ok(crate::error::EXIT_OK)
}

/// Reads the payload, answers in the agent's protocol, exit 0 (see [`hook`]). Never an
/// [`Error`]: whatever goes wrong must not block the agent's stop, the agents read exit 2 as a
/// block, and Codex shows nothing but the code of any other.
pub fn hook(cmd: HookCommand) -> Result<i32, Error> {
    let (agent, args) = match cmd {
        HookCommand::ClaudeCode(a) => (hook::Agent::ClaudeCode, a),
        HookCommand::Codex(a) => (hook::Agent::Codex, a),
    };
    let opts = hook::Options {
        repo: args.repo,
        base: args.base,
        mode: crate::format::Mode::from(args.mode).as_str(),
        acceptance: args.acceptance,
        runs: args.runs,
        timeout: args.timeout,
        max_blocks: args.max_blocks,
        claim_check_flags: own_flags(&["claim-check"]),
    };
    let mut stdin = Vec::new();
    let read = std::io::stdin()
        .take(hook::PAYLOAD_LIMIT as u64 + 1)
        .read_to_end(&mut stdin);
    let answer = match read {
        Ok(_) => hook::run(agent, &opts, &stdin),
        Err(e) => hook::no_verdict(agent, &format!("cannot read stdin: {e}")),
    };
    if let Some(line) = answer.to_stdout() {
        let _ = writeln!(std::io::stdout(), "{line}");
    }
    Ok(crate::error::EXIT_OK)
}

/// A hook that could not run at all (its command line did not parse, it crashed): the agent
/// may stop, and the person is told why, on stdout as every answer (see [`hook`]).
pub fn hook_unanswered(message: &str) {
    let answer = hook::Answer::Allow(Some(format!(
        "Shipmoor Claim Check (shipmoor hook): no verdict, so the stop is not blocked: {message}"
    )));
    if let Some(line) = answer.to_stdout() {
        let _ = writeln!(std::io::stdout(), "{line}");
    }
}
