//! `shipmoor claim-check`: the run as named phases.
//!
//! 1. [`args::resolve`]: every input check (flags, repository, commits, a dirty tree, the claim, the
//!    runners' tools, the outputs) before any work starts, so an input error writes nothing and
//!    leaves the checkout untouched;
//! 2. the floor ([`floor::run`]): worktrees at base and head, the runners, the observations,
//!    every one stored in the evidence store;
//! 3. [`conclude`] (pure): the floor's entries, the claim and the run's [`Facts`](stages::Facts) to the
//!    [`RunResult`](crate::report::RunResult);
//! 4. [`render`] (pure): the result to its [`Documents`](outputs::Documents) (fix packet,
//!    `verify.md`, statement, result JSON, terminal text);
//! 5. [`sign`]: the statement's signed forms, when it is signed;
//! 6. [`write`]: evidence first, then the documents, each atomically;
//! 7. [`print`]: the terminal text;
//! 8. [`attach`]: with `--attach REF`, the signed bundle pushed to the image's registry (whose
//!    digest the input checks resolved and made a subject of the statement).

mod args;
mod attach;
mod claim;
mod inputs;
mod outputs;
mod policy;
mod resolved;
mod shard;
mod sharding;
mod signing;
mod stages;
#[cfg(test)]
mod tests;

use super::shown_path;
use crate::cli::{ClaimCheckArgs, FuseArgs};
use crate::error::Error;
use crate::evidence::EvidenceStore;
use crate::floor::FloorReport;
use crate::judge::chat::ChatJudge;
use args::{resolve, Role};
use attach::attach;
pub(crate) use inputs::default_base;
use inputs::temp_dir_error;
use outputs::{footer_outputs, print, render, write, StatementInputs};
use resolved::{Job, Resolved};
use signing::{sign, signing};
use stages::{
    conclude, facts, head_object_sha256, keep_base, remove_left_by_killed_runs, run_floor,
    run_judge,
};

/// The phases in order (see the module doc); returns the verdict's exit code.
/// `colour`: whether the terminal report is coloured, decided once by [`crate::colour`];
/// `colour_stderr`: the same for the progress lines.
pub fn run(args: ClaimCheckArgs, colour: bool, colour_stderr: bool) -> Result<i32, Error> {
    let (resolved, chat_judges) = resolve(&args, colour, colour_stderr, Role::Run)?;
    remove_left_by_killed_runs(&resolved.git, &resolved.temp_base, resolved.quiet);
    // The floor's worktrees and build outputs, removed as soon as the floor is done; locked
    // while this run lives, so that a later run removes them should this one be killed.
    let temp = tempfile::Builder::new()
        .prefix(crate::git::RUN_DIR_PREFIX)
        .tempdir_in(&resolved.temp_base)
        .map_err(|e| temp_dir_error(&resolved.temp_base, e))?;
    crate::process::register_temp_dir(temp.path());
    let _alive = crate::git::RunLock::hold(temp.path())
        .map_err(|e| temp_dir_error(&resolved.temp_base, e))?;
    let mut store = EvidenceStore::new();
    let (floor_report, order) = run_floor(&resolved, temp.path(), &mut store)?;
    drop(temp);
    // A signal during the last test may have stopped it after the floor took its outcome.
    stop_if_interrupted()?;
    if let Job::Shard { plan, out } = &resolved.job {
        crate::process::reap_orphans();
        let floor_report = keep_base(resolved.base_cache.as_ref(), resolved.quiet, floor_report);
        shard::write(&resolved, (plan, out), &floor_report, &order, &store)?;
        return Ok(crate::error::EXIT_OK);
    }
    finish(&resolved, chat_judges, store, floor_report)
}

/// `shipmoor fuse`: the shards read and checked, their floors and evidence merged, then the
/// phases after the floor exactly as a single run in `--repo` has them.
pub fn fuse(args: FuseArgs, colour: bool) -> Result<i32, Error> {
    let mut run = args.run;
    shard::check_fuse_flags(&run)?;
    let expected = args
        .expect_digests
        .as_deref()
        .map(shard::ExpectedDigests::parse)
        .transpose()?;
    let shards = shard::read_all(&args.shards, expected.as_ref())?;
    let (base, head) = shard::commits(&shards);
    // The shards' commits, unless the flags name them (then they must be the same).
    let given = (run.base.take(), run.head.take());
    run.base = Some(base.clone());
    run.head = Some(head.clone());
    let role = Role::Fuse {
        shards: &shards,
        given,
    };
    let (resolved, chat_judges) = resolve(&run, colour, false, role)?;
    let (store, floor_report) = shard::merge(&resolved, shards)?;
    finish(&resolved, chat_judges, store, floor_report)
}

/// The phases after the floor (see the module doc), for a single run and a fused one.
/// `chat_judges`: full mode's chat judges, as [`resolve`] made them.
fn finish(
    resolved: &Resolved,
    chat_judges: Vec<Option<ChatJudge>>,
    mut store: EvidenceStore,
    floor_report: FloorReport,
) -> Result<i32, Error> {
    let judged = run_judge(resolved, chat_judges, &floor_report, &mut store)?;
    // A judge stopped by the interruption abstains; the run stops rather than report it.
    stop_if_interrupted()?;
    // Nothing the floor or a command judge started still runs while the outputs are written.
    crate::process::reap_orphans();
    let floor_report = keep_base(resolved.base_cache.as_ref(), resolved.quiet, floor_report);
    let (signing, token) = signing(resolved.sign, resolved.signing_key.as_ref(), resolved.quiet)?;
    let facts = facts(resolved, signing)?;
    let result = conclude(&resolved.claim, &floor_report, &judged, &facts);
    let head_object_sha256 = head_object_sha256(&resolved.git, &resolved.head)?;
    let inputs = StatementInputs {
        evidence_records: store.records(),
        policy: policy::policy(resolved)?,
        subjects: &resolved.subjects,
        head_object_sha256: &head_object_sha256,
    };
    let docs = render(
        &result,
        &inputs,
        resolved.terminal,
        &footer_outputs(&resolved.paths),
    )?;
    let signed = sign(
        &docs.statement,
        &result.signing,
        resolved.signing_key.as_ref(),
        token.as_deref(),
        &resolved.services,
    )?;
    stop_if_interrupted()?;
    write(
        &resolved.paths,
        resolved.result_out.as_ref(),
        &store,
        &docs,
        &signed,
    )?;
    print(&docs);
    if let Some(target) = &resolved.attach {
        attach(target, signed.1.as_deref(), resolved.quiet)?;
    }
    Ok(result.exit_code)
}

/// An interruption (Ctrl-C, SIGTERM) seen between the phases: the run stops there, exit 130,
/// nothing written.
fn stop_if_interrupted() -> Result<(), Error> {
    if crate::process::interrupted() {
        Err(Error::Interrupted)
    } else {
        Ok(())
    }
}
