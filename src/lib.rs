//! Shipmoor Claim Check.
//!
//! A change claims to meet its acceptance criteria; `shipmoor claim-check` decides, criterion by
//! criterion, whether the claim holds. The modules follow the pipeline in the order data flows:
//!
//! 1. [`acceptance`]: the acceptance set (intent), its validation and the criteria's tags;
//! 2. [`floor`]: worktrees at base and head, test runners, observations, the floor's rule;
//! 3. [`verdict`]: the pure fusion (policy v3) of dispositions into one verdict;
//! 4. [`evidence`]: canonical evidence records and content-addressed blobs;
//! 5. [`report`]: the terminal report, the fix packet and `verify.md`;
//! 6. [`attest`]: the in-toto statement carrying the Verification Summary Attestation.
//!
//! [`format`] types every document written and read back (the statement, evidence records, the
//! run result, the fix packet) once, for the writers and for the readers (`replay`, the Action).
//! [`commands`] wires the stages to the command line; [`error`] maps every failure to one exit
//! code. [`nofollow`] writes every output, and reads every file that came from elsewhere,
//! without following a symlink.
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
