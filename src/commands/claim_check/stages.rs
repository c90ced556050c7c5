//! The phases between the input checks and the outputs: the floor (phase 2), the judge
//! (phase 2b), the base cache kept, and the result concluded from them (phase 3).

use std::io::Write;
use std::path::Path;

use super::claim::{acceptance_info, draft_reason, ClaimInfo};
use super::inputs::temp_dir_error;
use super::resolved::{Job, Resolved};
use super::shown_path;
use crate::attest;
use crate::cli::Mode;
use crate::clock::rfc3339;
use crate::error::Error;
use crate::evidence::EvidenceStore;
use crate::floor::cache::BaseCache;
use crate::floor::{self, FloorInput, FloorOrder, FloorReport};
use crate::format;
use crate::format::observation::{JobRef, Observation};
use crate::git::{CommitId, Git};
use crate::judge::{self, chat::ChatJudge, command::CommandJudge, Ask, JudgeSpec};
use crate::report::{self, JudgeRun, Outputs, RunResult, Shards, Signing};
use crate::verdict;

/// What the run knows besides the floor's findings and the claim, for [`conclude`].
pub(super) struct Facts {
    pub mode: Mode,
    pub repository: String,
    pub base: CommitId,
    pub head: CommitId,
    /// The claim's file as reports show it (or the text it was derived from).
    pub acceptance_path: String,
    pub started_at: String,
    pub completed_at: String,
    pub duration_seconds: u64,
    pub outputs: Outputs,
    pub signing: Signing,
    /// A fused run's shard jobs (none for a single run).
    pub shards: Option<Shards>,
    pub observation: Observation,
}

/// One progress line on stderr, unless `--quiet`.
fn progress(quiet: bool, msg: &str) {
    if !quiet {
        let _ = writeln!(
            std::io::stderr(),
            "claim-check: {}",
            crate::report::terminal::one_line(msg)
        );
    }
}

/// The worktrees and temporary directories runs that were killed (SIGKILL, a lost machine) left
/// in this run's temporary directory's place, removed, and said in one line.
pub(super) fn remove_left_by_killed_runs(git: &Git, temp_base: &Path, quiet: bool) {
    let removed = crate::git::remove_left_by_killed_runs(git, temp_base);
    if removed.is_empty() {
        return;
    }
    let worktrees: usize = removed.iter().map(|(_, n)| n).sum();
    let dirs: Vec<String> = removed
        .iter()
        .map(|(d, _)| d.display().to_string())
        .collect();
    progress(
        quiet,
        &format!(
            "removed what {} killed run{} left: {worktrees} worktree{} ({})",
            removed.len(),
            if removed.len() == 1 { "" } else { "s" },
            if worktrees == 1 { "" } else { "s" },
            dirs.join(", ")
        ),
    );
}

/// Phase 2: the floor, in `temp_root`.
pub(super) fn run_floor(
    resolved: &Resolved,
    temp_root: &Path,
    store: &mut EvidenceStore,
) -> Result<(FloorReport, FloorOrder), Error> {
    let set = &resolved.claim.set;
    progress(
        resolved.quiet,
        &format!(
            "{} from {} ({}); base {} · head {}",
            crate::report::criteria_count(set.criteria.len()),
            set.display_path,
            set.state.as_str(),
            resolved.base.short(),
            resolved.head.short()
        ),
    );
    if !set.inherited_criteria.is_empty() {
        progress(
            resolved.quiet,
            &format!(
                "{} inherited from earlier changes ({})",
                crate::report::criteria_count(set.inherited_criteria.len()),
                if set.guarded_criteria().is_empty() {
                    "not checked"
                } else {
                    "kept as regression guards"
                }
            ),
        );
    }
    let sandbox = &resolved.confinement.sandbox;
    if let Some(why) = sandbox.unavailable() {
        progress(
            resolved.quiet,
            &format!(
                "warning: no sandbox ({why}): the change's code runs with all the reach of this run's user (book: security.md)"
            ),
        );
    }
    let quiet = resolved.quiet;
    let progress = move |msg: &str| progress(quiet, msg);
    let input = FloorInput {
        git: &resolved.git,
        acceptance: set,
        runners: resolved.runners.clone(),
        base: resolved.base.clone(),
        head: resolved.head.clone(),
        runs: resolved.runs,
        timeout: resolved.timeout,
        temp_root: temp_root.to_path_buf(),
        clock: &resolved.clock,
        progress: &progress,
        live: resolved.live.clone(),
        // An explicit file's own settings are checked by path as before; the claim read from
        // git carries its settings edits itself (`settings_edits`).
        acceptance_path: resolved.located.as_ref().and_then(|l| {
            let p = l.path.canonicalize().ok()?;
            let root = resolved.git.root().canonicalize().ok()?;
            p.strip_prefix(root).ok().map(|r| r.display().to_string())
        }),
        shard: resolved.job.share(),
        base_cache: resolved.base_cache.as_ref(),
        confinement: &resolved.confinement,
        registry: &crate::floor::runners::registry::Registry::builtin(),
    };
    floor::run_ordered(&input, store)
}

/// Writes the floor's new base cache entry, when it made one, and leaves the cache holding
/// only what it held when it was read and what this run observed: called once nothing the
/// run started still runs. A cache that cannot be written is a warning, never an error.
pub(super) fn keep_base(
    cache: Option<&BaseCache>,
    quiet: bool,
    mut floor: FloorReport,
) -> FloorReport {
    let Some(cache) = cache else {
        return floor;
    };
    let pending = floor.cache_entry.take();
    match cache.commit(pending.as_ref()) {
        Ok(done) => {
            if done.removed > 0 {
                progress(
                    quiet,
                    &format!(
                        "base cache {}: removed {} file(s) that appeared in it during the run",
                        cache.shown(),
                        done.removed
                    ),
                );
            }
        }
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "claim-check: warning: the base cache {} was not written: {e}",
                cache.shown()
            );
            if let Some(u) = floor.base_cache.as_mut() {
                if u.state == floor::BaseCacheState::Stored {
                    u.state = floor::BaseCacheState::Ran;
                    u.entry = None;
                    u.note = Some(format!("base's results could not be kept: {e}"));
                }
            }
        }
    }
    floor
}

/// Phase 2b (full mode): the judge on what the floor left open, in views of head made in a
/// directory of the run's own; fast mode has no findings.
pub(super) fn run_judge(
    resolved: &Resolved,
    chat_judges: Vec<Option<ChatJudge>>,
    floor: &FloorReport,
    store: &mut EvidenceStore,
) -> Result<JudgeRun, Error> {
    let judged = floor.entries.iter().filter(|e| judge::is_judged(e)).count();
    if resolved.mode != Mode::Full || judged == 0 {
        return Ok(JudgeRun::default());
    }
    let set = &resolved.claim.set;
    progress(
        resolved.quiet,
        &format!(
            "judge: {judged} criteria the floor left open, {} judge{} ({})",
            set.judge.len(),
            if set.judge.len() == 1 { "" } else { "s" },
            set.judge
                .iter()
                .map(|j| j.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    let scratch = tempfile::Builder::new()
        .prefix("shipmoor-judge-")
        .tempdir_in(&resolved.temp_base)
        .map_err(|e| temp_dir_error(&resolved.temp_base, e))?;
    let mut panel: Vec<(JudgeSpec, Box<dyn Ask>)> = Vec::new();
    for (spec, chat) in set.judge.iter().zip(chat_judges) {
        let ask: Box<dyn Ask> = match chat {
            Some(j) => Box::new(j),
            None => match CommandJudge::from_spec(
                spec,
                &resolved.git,
                &resolved.head,
                scratch.path(),
                &resolved.confinement,
            ) {
                Some(j) => Box::new(j),
                None => return Err(Error::crash("a chat judge not made by the input checks")),
            },
        };
        panel.push((spec.clone(), ask));
    }
    let repo = resolved.repository.clone();
    let run = judge::run(
        judge::RunInput {
            git: &resolved.git,
            repo: &repo,
            base: &resolved.base,
            head: &resolved.head,
            entries: &floor.entries,
            panel: &panel,
        },
        store,
    )?;
    for note in &run.notes {
        progress(resolved.quiet, note);
    }
    Ok(run)
}

/// The run's facts once the floor is done: its times, the repository, the outputs as reports
/// name them.
pub(super) fn facts(resolved: &Resolved, signing: Signing) -> Result<Facts, Error> {
    let root = resolved.git.root();
    Ok(Facts {
        mode: resolved.mode,
        completed_at: rfc3339(resolved.clock.now()),
        repository: resolved.repository.clone(),
        base: resolved.base.clone(),
        head: resolved.head.clone(),
        acceptance_path: match &resolved.located {
            Some(l) => shown_path(&l.path, root),
            None => resolved.claim.set.display_path.clone(),
        },
        started_at: rfc3339(resolved.started),
        duration_seconds: resolved.stopwatch.elapsed().as_secs(),
        outputs: Outputs {
            vsa: shown_path(resolved.paths.vsa.path(), root),
            fixes: shown_path(resolved.paths.fixes.path(), root),
            report: shown_path(resolved.paths.report.path(), root),
            evidence: shown_path(resolved.paths.evidence.path(), root),
        },
        signing,
        shards: match &resolved.job {
            Job::Fused { shards, .. } => Some(shards.clone()),
            Job::Whole | Job::Shard { .. } => None,
        },
        observation: match &resolved.job {
            Job::Fused { observation, .. } => observation.clone(),
            Job::Whole | Job::Shard { .. } => Observation::single(JobRef::here().as_ref()),
        },
    })
}

/// Phase 3 (pure): the floor's entries and the judge's findings (none in fast mode) fused into
/// the run's verdict, with the claim and the run's facts.
pub(super) fn conclude(
    claim: &ClaimInfo,
    floor: &FloorReport,
    judge: &JudgeRun,
    facts: &Facts,
) -> RunResult {
    let set = &claim.set;
    let criteria = report::criteria_results(
        floor,
        &set.origin,
        &judge.outcomes(),
        facts.mode == Mode::Full,
    );
    let inputs: Vec<_> = criteria.iter().map(|c| c.fusion_input()).collect();
    let fused = verdict::fuse(set.state, &inputs);
    RunResult {
        schema: report::RESULT_SCHEMA,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        policy: verdict::POLICY,
        mode: format::Mode::from(facts.mode).into(),
        verdict: fused.verdict,
        rule: fused.rule.into(),
        rule_reason: draft_reason(&fused, set, &claim.source),
        exit_code: fused.verdict.exit_code(),
        repository: facts.repository.clone(),
        base: facts.base.clone().into(),
        head: facts.head.clone().into(),
        acceptance: acceptance_info(
            set,
            &facts.acceptance_path,
            &claim.source,
            (&facts.base, &facts.head),
        ),
        started_at: facts.started_at.clone(),
        completed_at: facts.completed_at.clone(),
        duration_seconds: facts.duration_seconds,
        criteria,
        overlay: floor.overlay.clone(),
        overlay_spliced: floor.overlay_spliced.clone(),
        harness_changes: floor.harness.iter().map(|h| h.label()).collect(),
        runtime: floor.runtime.clone(),
        outputs: facts.outputs.clone(),
        signing: facts.signing.clone(),
        findings: judge.findings.clone(),
        judge_notes: judge.notes.clone(),
        shards: facts.shards.clone(),
        base_cache: floor.base_cache.clone(),
        sandbox: Some(floor.sandbox.clone()),
        observation: Some(facts.observation.clone()),
    }
}

/// The SHA-256 of head's commit object, which the statement's subject carries.
pub(super) fn head_object_sha256(git: &Git, head: &CommitId) -> Result<String, Error> {
    let Some(head_object) = git.commit_object(head.as_str())? else {
        return Err(Error::crash(format!(
            "git cat-file commit {head}: no such commit"
        )));
    };
    Ok(attest::commit_object_sha256(&head_object))
}
