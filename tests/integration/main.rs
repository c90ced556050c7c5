//! The integration tests, one binary: a module per area, each run against the real `shipmoor`
//! binary (`CARGO_BIN_EXE_shipmoor`) or the library, with the helpers of `tests/common`. One
//! binary links the crate and its dependencies once, where a binary per area linked them once
//! each. nextest runs every test in a process of its own all the same. No test changes its own
//! process's environment, which every test of the binary shares under `cargo test`: a test
//! gives the code the environment it needs as a value (an
//! [`EnvPolicy`](shipmoor::sandbox::env::EnvPolicy) over a synthetic environment, a chat
//! judge's variables looked up through a function).

#[path = "../common/mod.rs"]
mod common;

mod action;
mod action_comment;
mod action_trust;
mod admit;
mod admit_export;
mod agents;
mod base_cache;
mod cargo_packages;
mod claim_check_cargo;
mod claim_check_ecosystems;
mod claim_check_full;
mod claim_check_input;
mod claim_check_pytest;
mod claim_lifecycle;
mod colour;
mod conformance;
mod container;
mod derive;
mod derive_corpus;
mod faults;
mod first_contact;
mod golden;
mod interop_dsse;
mod interrupt;
mod judge;
mod judge_chat;
mod keyless;
mod oci;
mod progress;
mod render;
mod replay;
mod replay_judge;
mod runners_cargo;
mod runners_go;
mod runners_js;
mod runners_pytest;
mod sandbox;
mod sandbox_parity;
mod schemas;
mod shards;
mod statement_letter;
mod tag_scan;
mod target_seeding;
mod toy_runner;
