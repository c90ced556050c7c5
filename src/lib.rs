//! Shipmoor Claim Check.
//!
//! A change claims to meet its acceptance criteria; `shipmoor claim-check` decides, criterion by
//! criterion, whether the claim holds.
//!
//! The modules sit in six named tiers, lowest first, and each tier lists its modules lowest
//! first: a module uses only the modules of lower tiers and those before it in its own
//! ([`architecture::LAYERS`] holds the table, and its test keeps the code in it; book:
//! design.md):
//!
//! 1. base: [`error`] (every failure mapped to one exit code), [`clock`], [`text`], [`digest`],
//!    [`colour`], [`sandbox`] (the kernel sandbox of the change's commands), [`process`],
//!    [`git`] (the one git wrapper), [`nofollow`] (every output written, and every file that
//!    came from elsewhere read, without following a symlink), `spanned_yaml`;
//! 2. model: [`acceptance`] (the acceptance set (intent), its validation and the criteria's
//!    tags), [`verdict`] (the pure fusion (policy v3) of dispositions into one verdict),
//!    [`format`] (every document written and read back: the statement, evidence records, the
//!    run result, the fix packet; typed once, for the writers and for the readers), [`decision`]
//!    (the floor's pure rule for tests bound to a criterion, and the attribution of a build
//!    failure at base, which the floor decides by and replay checks against), [`evidence`]
//!    (canonical evidence records and content-addressed blobs);
//! 3. stages: [`floor`] (worktrees at base and head, test runners, observations, the floor's
//!    rule), [`judge`] (the bring-your-own judge, full mode), [`report`] (the terminal report,
//!    the fix packet and `verify.md`);
//! 4. trust: [`attest`] (the in-toto statement carrying the Verification Summary Attestation),
//!    [`replay`] (offline verification), [`oci`] (the registry client);
//! 5. integrations: [`admit`] (admission), [`action`] (the GitHub Action), [`agent`] (the coding
//!    agents' hook and MCP server);
//! 6. front: [`cli`] (the command line's types), [`commands`] (the stages wired to the command
//!    line, one file per subcommand).
//!
//! The default feature `claim-check` holds what runs the change's code or speaks for it: the
//! floor's execution (its runners, the tag scan, the Rust and TypeScript parsers), the judge's
//! clients, keyless signing, [`action`] and [`agent`]. Without it (`--no-default-features`, the
//! verifier image) the crate verifies only: replay, admission, bundle verification and attaching,
//! and the commands that need the rest say so (book: container.md).
#![forbid(unsafe_code)]

pub mod acceptance;
#[cfg(feature = "claim-check")]
pub mod action;
pub mod admit;
#[cfg(feature = "claim-check")]
pub mod agent;
pub mod architecture;
pub mod attest;
pub mod cli;
pub mod clock;
pub mod colour;
pub mod commands;
pub mod decision;
pub mod digest;
pub mod error;
pub mod evidence;
pub mod floor;
pub mod format;
pub mod git;
pub mod judge;
pub mod nofollow;
pub mod oci;
pub mod process;
#[cfg(test)]
mod prop_tests;
pub mod replay;
pub mod report;
pub mod sandbox;
pub(crate) mod spanned_yaml;
pub mod text;
pub mod verdict;
