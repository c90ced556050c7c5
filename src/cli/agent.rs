//! The commands for coding agents (book: agents.md): `shipmoor mcp`, `shipmoor hook <agent>` and
//! `shipmoor explain`, as clap types only.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{Format, Mode};

pub(super) const MCP_AFTER_HELP: &str = "\
Examples:
  shipmoor mcp
  shipmoor mcp --repo ~/src/shop

The tools (each takes a JSON object; `repo` defaults to --repo):
  claim_check        run the floor (and the judge with mode full) to a verdict:
                     each criterion's disposition and reason, the next steps;
                     progress notifications while it runs; cancellable
  acceptance_tags    each criterion's tag, and where it is already used
  acceptance_init    start this change's acceptance file (from a checklist)
  acceptance_derive  draft criteria from a text (an issue, a task)
  explain            one criterion of the last run: its rule, its evidence,
                     what would change the answer
  replay             verify an attestation offline

A verdict, BLOCKED too, is a result; bad input (an unknown revision, an
invalid acceptance file, a dirty tree) is a tool error whose text is the
command line's message with its file, line and fix, naming the tool's own
arguments (`force: true`, `head`). A call writes only the repository's
.shipmoor/ and the temporary directory. A line that is not JSON is answered
-32700, and a call whose arguments are not an object -32602.

Claude Code (.mcp.json in the repository, or `claude mcp add`):
  claude mcp add shipmoor -- shipmoor mcp
  {\"mcpServers\": {\"shipmoor\": {\"command\": \"shipmoor\", \"args\": [\"mcp\"]}}}

Codex (~/.codex/config.toml):
  [mcp_servers.shipmoor]
  command = \"shipmoor\"
  args = [\"mcp\"]
  tool_timeout_sec = 1800

Exit codes:
  0  the client closed the connection
  2  usage error
  3  engine crash";

pub(super) const HOOK_AFTER_HELP: &str = "\
Examples:
  shipmoor hook claude-code --base main
  shipmoor hook codex --base main --max-blocks 5

The hook reads the agent's Stop payload on stdin and checks the committed
change. While a required criterion is unsatisfied, undecided or unbound, or
the working tree has uncommitted changes, it blocks the stop, with the next
steps (or \"commit your changes and stop again\") as the reason; once the
claim holds it says nothing and the agent stops. After --max-blocks blocks in
a row in one session (the agent's stop_hook_active says it is already
continuing) it lets the agent stop and tells the person, so an agent is never
held in a loop. Without a verdict (a bad payload, an unknown base, a run that
cannot complete) it lets the agent stop and tells the person why.

Claude Code (.claude/settings.json):
  {\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\",
    \"command\": \"shipmoor hook claude-code --base main\", \"timeout\": 1800}]}]}}

Codex (.codex/hooks.json):
  {\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\",
    \"command\": \"shipmoor hook codex --base main\", \"timeout\": 1800}]}]}}

Exit codes (the agents read stdout only on exit 0, and exit 2 as a block):
  0  always: a block on stdout ({\"decision\": \"block\", \"reason\": …}), a
     message for the person ({\"systemMessage\": …}; without a verdict, why),
     or nothing (the agent may stop)";

pub(super) const EXPLAIN_AFTER_HELP: &str = "\
Examples:
  shipmoor explain refund-voids-payment-intent
  shipmoor explain AC-REFUND-IDEMPOTENCY-9845 --format json

It reads the last run's statement (.shipmoor/claim-check.vsa.json) and the
evidence it cites (.shipmoor/evidence); run claim-check first.

Exit codes:
  0  explained
  2  usage or input error: no such criterion, no statement, a statement that
     does not parse
  3  engine crash";

/// The long flags of `shipmoor <path>` (`["acceptance", "init"]`), with their dashes, as the
/// command line defines them; none for a path that is not a command. The hook and the server
/// leave out of a command's messages the hints that need one they lack.
pub fn own_flags(path: &[&str]) -> Vec<String> {
    use clap::CommandFactory;
    let mut command = super::Cli::command();
    // Built, so that each command has the global flags (`--color`) and `--help` too.
    command.build();
    for name in path {
        match command.find_subcommand(name) {
            Some(sub) => command = sub.clone(),
            None => return Vec::new(),
        }
    }
    command
        .get_arguments()
        .filter_map(|a| a.get_long())
        .map(|long| format!("--{long}"))
        .collect()
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The repository a tool call works in when it names none
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub repo: PathBuf,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// Claude Code's Stop hook: `{"decision": "block", "reason": …}` while the claim is open
    #[command(after_help = HOOK_AFTER_HELP)]
    ClaudeCode(HookArgs),
    /// Codex's Stop hook (the same protocol, in .codex/hooks.json)
    #[command(after_help = HOOK_AFTER_HELP)]
    Codex(HookArgs),
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// The repository [default: the payload's `cwd`]
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
    /// The base commit, as claim-check takes it
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// fast: the floor only; full: the floor and the judge
    #[arg(long, value_enum, default_value_t = Mode::Fast)]
    pub mode: Mode,
    /// Name the claim explicitly, as claim-check's --acceptance
    #[arg(long, value_name = "PATH")]
    pub acceptance: Option<PathBuf>,
    /// Run each bound test K times at each side
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=20))]
    pub runs: u32,
    /// The limit for each command the floor runs, in seconds
    #[arg(long, default_value_t = 1800, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// Block at most N stops in a row in one session; 0 never blocks (the person is told)
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub max_blocks: u32,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The criterion: its id or its tag
    #[arg(value_name = "CRITERION")]
    pub criterion: String,
    /// The repository
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub repo: PathBuf,
    /// The statement of the run to explain [default: .shipmoor/claim-check.vsa.json in the
    /// repository]
    #[arg(long, value_name = "PATH")]
    pub vsa: Option<PathBuf>,
    /// The evidence the statement cites [default: .shipmoor/evidence in the repository]
    #[arg(long, value_name = "DIR")]
    pub evidence_dir: Option<PathBuf>,
    /// human: the explanation; json: `claim_check.explain.v1`
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}
