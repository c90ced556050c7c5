//! Claim Check for coding agents (book: agents.md): an agent checks its own claim while it still
//! works, through the interfaces agents speak.
//!
//! - [`mcp`]: `shipmoor mcp`, the tools as a Model Context Protocol server on stdio;
//! - [`hook`]: `shipmoor hook claude-code` and `codex`, the agents' Stop hooks;
//! - [`summary`]: what both tell the agent of a run (verdict, dispositions, next steps);
//! - [`child`]: each run as a `shipmoor` child process of its own, cancellable.

pub mod child;
pub mod hook;
pub mod mcp;
pub mod summary;
