//! Claim Check for coding agents (book: agents.md): an agent checks its own claim while it still
//! works, through the interfaces agents speak.
//!
//! - [`mcp`]: `shipmoor mcp`, the tools as a Model Context Protocol server on stdio;
//! - [`hook`]: `shipmoor hook claude-code` and `codex`, the agents' Stop hooks;
//! - [`summary`]: what both tell the agent of a run (verdict, dispositions, next steps);
//! - [`child`]: each run as a `shipmoor` child process of its own, cancellable;
//! - [`words`]: a child's message in the words of the hook or the tool that ran it;
//! - [`jsonrpc`]: the MCP server's stdio transport, which answers what the SDK does not.

pub mod child;
pub mod hook;
pub mod jsonrpc;
pub mod mcp;
pub mod summary;
pub mod words;
