//! `shipmoor claim-check`: the run as named phases.
//!
//! 1. [`plan`]: every input check (flags, repository, commits, a dirty tree, the claim, the
//!    runners' tools, the outputs) before any work starts, so an input error writes nothing and
//!    leaves the checkout untouched;
//! 2. the floor ([`floor::run`]): worktrees at base and head, the runners, the observations,
//!    every one stored in the evidence store;
//! 3. [`conclude`] (pure): the floor's entries, the claim and the run's [`Facts`] to the
//!    [`RunResult`];
//! 4. [`render`] (pure): the result to its [`Documents`] (fix packet, `verify.md`, statement,
//!    result JSON, terminal text);
//! 5. [`sign`]: the statement's signed forms, when it is signed;
//! 6. [`write`]: evidence first, then the documents, each atomically;
//! 7. [`print`]: the terminal text;
//! 8. [`attach`]: with `--attach REF`, the signed bundle pushed to the image's registry (whose
//!    digest the input checks resolved and made a subject of the statement).

mod attach;
mod policy;
mod shard;
#[cfg(test)]
mod tests;

use super::shown_path;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use time::OffsetDateTime;

use crate::acceptance::{self, claim, AcceptanceSet, RunnerConfig};
use crate::attest::{self, keys::SigningKey, sigstore::Services, Subject};
use crate::cli::{ClaimCheckArgs, Format, FuseArgs, Mode, Sign};
use crate::clock::{rfc3339, Clock, Stopwatch};
use crate::error::{Error, InputError};
use crate::evidence::EvidenceStore;
use crate::floor::cache::BaseCache;
use crate::floor::{self, FloorInput, FloorOrder, FloorReport};
use crate::format::observation::{JobRef, Observation};
use crate::git::{CommitId, Git};
use crate::judge::{self, chat::ChatJudge, command::CommandJudge, Ask, JudgeSpec, Transport};
use crate::nofollow::{NewDirs, OutputPath, Refused};
use crate::report::{
    self, fixes, terminal, verify_md, AcceptanceInfo, InheritedCriterion, JudgeRun, Outputs,
    ResultDocument, RunResult, Shards, Signing, SigningState,
};
use crate::verdict;
use attach::{attach, attach_reference, resolve_attach_target, AttachTarget};

/// The outputs, each written through no symlink ([`OutputPath`]).
struct Paths {
    vsa: OutputPath,
    fixes: OutputPath,
    report: OutputPath,
    evidence: OutputPath,
}

/// The claim the run checks: the acceptance set and where it came from (`explicit`, `files` or
/// `derived`, as [`load_claim`] says).
struct ClaimInfo {
    set: AcceptanceSet,
    source: String,
}

/// Everything the input checks established, for the phases after them.
struct Plan {
    clock: Clock,
    started: OffsetDateTime,
    stopwatch: Stopwatch,
    quiet: bool,
    mode: Mode,
    sign: Sign,
    services: Services,
    terminal: Terminal,
    runs: u32,
    timeout: Duration,
    git: Git,
    /// The repository's URL as the statement names it ([`policy::resource_uri`]).
    repository: String,
    subjects: Vec<Subject>,
    signing_key: Option<SigningKey>,
    base: CommitId,
    head: CommitId,
    located: Option<acceptance::Located>,
    claim: ClaimInfo,
    runners: Vec<RunnerConfig>,
    paths: Paths,
    /// `--result-out`.
    result_out: Option<OutputPath>,
    /// Where the run's temporary directory goes (it exists).
    temp_base: PathBuf,
    /// Full mode's chat judges, made (their keys read) by the input checks, in panel order;
    /// `None` for a command judge, which needs the run's scratch directory.
    chat_judges: Vec<Option<ChatJudge>>,
    /// `--attach`: the image, resolved by the input checks.
    attach: Option<AttachTarget>,
    /// The floor's lines per finished test and heartbeats; `None` with `--quiet`.
    live: Option<floor::progress::Live>,
    /// `--shard K/N`: the run writes its shard result there and stops before the judge.
    shard: Option<shard::ShardPlan>,
    /// `fuse`: the shard jobs the floor ran in, for the result.
    fused: Option<Shards>,
    /// A fuse's: where its shards were observed (a single run's is read from the environment).
    observation: Option<Observation>,
    /// `--shard-out` as the input checks found it, which the shard result is written through.
    shard_dir: Option<OutputPath>,
    /// `--base-cache`, read before any of the change's code runs; `None`: off.
    base_cache: Option<BaseCache>,
    /// The sandbox of every command of the floor and of a command judge.
    confinement: crate::sandbox::Confinement,
}

/// What a run of [`plan`] checks its inputs for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// `claim-check`: the whole run, or one shard of it.
    Run,
    /// `fuse`: the shards ran the floor, so their runners' tools are not needed here.
    Fuse,
}

/// What the run knows besides the floor's findings and the claim, for [`conclude`].
struct Facts {
    mode: Mode,
    repository: String,
    base: String,
    head: String,
    /// The claim's file as reports show it (or the text it was derived from).
    acceptance_path: String,
    started_at: String,
    completed_at: String,
    duration_seconds: u64,
    outputs: Outputs,
    signing: Signing,
    /// A fused run's shard jobs (none for a single run).
    shards: Option<Shards>,
    observation: Observation,
}

/// What the statement says beside the result: the evidence records it cites, the further
/// subjects, the SHA-256 of head's commit object.
struct StatementInputs<'a> {
    evidence_records: &'a [String],
    /// What the claim was read from ([`policy::policy`]).
    policy: crate::format::statement::Policy,
    subjects: &'a [Subject],
    head_object_sha256: &'a str,
}

/// How the terminal text is written: `--format`, and colour (`--color`, see [`crate::colour`]).
#[derive(Debug, Clone, Copy)]
struct Terminal {
    format: Format,
    colour: bool,
}

/// The rendered outputs of one run, byte for byte as they are written.
struct Documents {
    fixes: Vec<u8>,
    verify_md: String,
    statement: Vec<u8>,
    /// `{"result": …, "fixes": …}`: `--result-out`, and the terminal text of `--format json`.
    result_json: Vec<u8>,
    terminal: String,
}

/// The phases in order (see the module doc); returns the verdict's exit code.
/// `colour`: whether the terminal report is coloured, decided once by [`crate::colour`];
/// `colour_stderr`: the same for the progress lines.
pub fn run(args: ClaimCheckArgs, colour: bool, colour_stderr: bool) -> Result<i32, Error> {
    let plan = plan(&args, colour, colour_stderr, Role::Run)?;
    withhold_judge_keys(&plan.claim.set);
    remove_left_by_killed_runs(&plan);
    // The floor's worktrees and build outputs, removed as soon as the floor is done; locked
    // while this run lives, so that a later run removes them should this one be killed.
    let temp = tempfile::Builder::new()
        .prefix(crate::git::RUN_DIR_PREFIX)
        .tempdir_in(&plan.temp_base)
        .map_err(|e| temp_dir_error(&plan.temp_base, e))?;
    crate::process::register_temp_dir(temp.path());
    let _alive =
        crate::git::RunLock::hold(temp.path()).map_err(|e| temp_dir_error(&plan.temp_base, e))?;
    let mut store = EvidenceStore::new();
    let (floor_report, order) = run_floor(&plan, temp.path(), &mut store)?;
    drop(temp);
    // A signal during the last test may have stopped it after the floor took its outcome.
    stop_if_interrupted()?;
    if let Some(target) = &plan.shard {
        crate::process::reap_orphans();
        let floor_report = keep_base(&plan, floor_report);
        shard::write(&plan, target, &floor_report, &order, &store)?;
        return Ok(crate::error::EXIT_OK);
    }
    finish(plan, store, floor_report)
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
    let mut plan = plan(&run, colour, false, Role::Fuse)?;
    withhold_judge_keys(&plan.claim.set);
    shard::check_plan(&plan, &shards, given)?;
    plan.fused = Some(shard::sharding(&shards));
    plan.observation = Some(shard::observation(&shards));
    let (store, floor_report) = shard::merge(&plan, shards)?;
    finish(plan, store, floor_report)
}

/// The phases after the floor (see the module doc), for a single run and a fused one.
fn finish(
    mut plan: Plan,
    mut store: EvidenceStore,
    floor_report: FloorReport,
) -> Result<i32, Error> {
    let chat_judges = std::mem::take(&mut plan.chat_judges);
    let judged = run_judge(&plan, chat_judges, &floor_report, &mut store)?;
    // A judge stopped by the interruption abstains; the run stops rather than report it.
    stop_if_interrupted()?;
    // Nothing the floor or a command judge started still runs while the outputs are written.
    crate::process::reap_orphans();
    let floor_report = keep_base(&plan, floor_report);
    let (signing, token) = signing(&plan)?;
    let facts = facts(&plan, signing)?;
    let result = conclude(&plan.claim, &floor_report, &judged, &facts);
    let head_object_sha256 = head_object_sha256(&plan.git, &plan.head)?;
    let inputs = StatementInputs {
        evidence_records: store.records(),
        policy: policy::policy(&plan)?,
        subjects: &plan.subjects,
        head_object_sha256: &head_object_sha256,
    };
    let docs = render(
        &result,
        &inputs,
        plan.terminal,
        &footer_outputs(&plan.paths),
    )?;
    let signed = sign(
        &docs.statement,
        &result.signing,
        plan.signing_key.as_ref(),
        token.as_deref(),
        &plan.services,
    )?;
    stop_if_interrupted()?;
    write(
        &plan.paths,
        plan.result_out.as_ref(),
        &store,
        &docs,
        &signed,
    )?;
    print(&docs);
    if let Some(target) = &plan.attach {
        attach(target, signed.1.as_deref(), plan.quiet)?;
    }
    Ok(result.exit_code)
}

/// The judges' key variables never reach the code the floor and the command judges run,
/// whatever they are named.
fn withhold_judge_keys(set: &AcceptanceSet) {
    crate::process::pass_to_judges(&set.env_pass);
    crate::process::withhold(set.judge.iter().filter_map(|j| match &j.transport {
        crate::judge::Transport::Chat {
            api_key_env: Some(var),
            ..
        } => Some(var.clone()),
        _ => None,
    }));
}

/// Phase 1: every input check, in the order a person fixes them, before any work.
fn plan(
    args: &ClaimCheckArgs,
    colour: bool,
    colour_stderr: bool,
    role: Role,
) -> Result<Plan, Error> {
    let shard = match role {
        Role::Run => shard::plan(args, &|name| std::env::var(name).ok())?,
        Role::Fuse => None,
    };
    let clock = Clock::from_env(args.current_time.as_deref()).map_err(|m| {
        Error::input(
            InputError::new(m)
                .help("give seconds since 1970 (SOURCE_DATE_EPOCH) or an RFC 3339 time"),
        )
    })?;
    let started = clock.now();
    let stopwatch = clock.stopwatch();
    let git = Git::discover(&args.repo)?;
    let repository = policy::resource_uri(args, &git)?;
    let mut subjects = parse_subjects(&args.subjects)?;
    let signing_key = signing_key(args)?;
    let attach_reference = attach_reference(args)?;
    // The pull request's event names base, head and the text intent is derived from: a payload
    // that cannot be read or is not JSON is an input error here, before anything is taken from
    // it (the later readers find it valid).
    crate::action::read_event()?;
    let (base, head) = commits(args, &git)?;
    // The claim's file, when named explicitly; otherwise the claim is read from git below.
    let located = match &args.acceptance {
        Some(p) => Some(acceptance::locate(git.root(), Some(p))?),
        None => None,
    };
    check_clean(&git, &head, located.as_ref())?;
    let (claim, source) = load_claim(args, &git, &base, &head, located.as_ref())?;
    let set = claim.set;
    // A shard does not judge: only the fuse needs the judge's configuration.
    let chat_judges = match shard {
        Some(_) => Vec::new(),
        None => check_panel(args.mode, &set)?,
    };
    let paths = output_paths(args, git.root());
    let temp_base = temp_base(args)?;
    let confinement = run_confinement(args, &git, &paths, &temp_base)?;
    let runners = runners(&git, &head, &set, role == Role::Run, &confinement)?;
    // Relative to where claim-check was started, as the other outputs' flags.
    let result_out = args
        .result_out
        .as_ref()
        .map(|p| OutputPath::file(p, Some(git.root())));
    let shard_dir = match &shard {
        Some(s) => Some(shard::check_out(&s.out, git.root())?),
        None => {
            check_writable(&paths, result_out.as_ref())?;
            None
        }
    };
    let base_cache = match role {
        Role::Run => open_base_cache(args, git.root()),
        Role::Fuse => None,
    };
    // The registry last: the local checks are quicker, and fixed first.
    let attach = match attach_reference {
        Some(reference) => {
            let (target, subject) = resolve_attach_target(args, reference)?;
            subjects.push(subject);
            Some(target)
        }
        None => None,
    };
    Ok(Plan {
        clock,
        started,
        stopwatch,
        quiet: args.quiet,
        mode: args.mode,
        sign: args.sign,
        services: Services {
            fulcio_url: args.fulcio_url.clone(),
            rekor_url: args.rekor_url.clone(),
            tsa_url: args.tsa_url.clone(),
        },
        terminal: Terminal {
            format: args.format,
            colour,
        },
        runs: args.runs,
        timeout: Duration::from_secs(args.timeout),
        git,
        repository,
        subjects,
        signing_key,
        base,
        head,
        located,
        claim: ClaimInfo { set, source },
        runners,
        paths,
        result_out,
        temp_base,
        chat_judges,
        attach,
        live: match role {
            Role::Run => live(args.quiet, colour_stderr),
            Role::Fuse => None,
        },
        shard,
        fused: None,
        observation: None,
        shard_dir,
        base_cache,
        confinement,
    })
}

/// The sandbox of the run's commands (`--sandbox`), probed now, before any of the change's code
/// runs (a toolchain probe is the first), with what the run keeps from them: the checkout and
/// the temporary directory (see [`super::confinement`]), and whatever the run reads or writes
/// outside them (the signing key, the evidence store, the base cache). `--sandbox-write`
/// directories are left writable.
fn run_confinement(
    args: &ClaimCheckArgs,
    git: &Git,
    paths: &Paths,
    temp_base: &Path,
) -> Result<crate::sandbox::Confinement, Error> {
    let mut extra = super::confinement::Extra::default();
    extra.hide.extend(args.key.iter().cloned());
    extra.hide.push(paths.evidence.path().to_path_buf());
    let given = args.base_cache.as_deref().filter(|p| !p.trim().is_empty());
    extra
        .hide
        .extend(crate::floor::cache::dir_of(given, git.root()));
    let mut confinement = super::confinement::confinement(
        args.sandbox.sandbox.mode(),
        Some(git),
        Some(temp_base),
        extra,
    )?;
    for dir in &args.sandbox.sandbox_write {
        if !dir.is_dir() {
            return Err(Error::input(
                InputError::new(format!(
                    "--sandbox-write {}: not a directory",
                    dir.display()
                ))
                .help("create the directory first, or drop the flag"),
            ));
        }
        confinement.write.push(crate::sandbox::canonical(dir));
    }
    Ok(confinement)
}

/// Full mode's input checks: the acceptance set configures a judge, and every chat judge's key
/// variable is set (a command judge needs nothing more). Returns the chat judges so made, in
/// panel order (`None` for each command judge). Fast mode never looks at the panel.
fn check_panel(mode: Mode, set: &AcceptanceSet) -> Result<Vec<Option<ChatJudge>>, Error> {
    if mode != Mode::Full {
        return Ok(Vec::new());
    }
    if set.judge.is_empty() {
        let file = set
            .settings_files
            .get("judge")
            .cloned()
            .unwrap_or_else(|| set.display_path.clone());
        return Err(Error::Input(vec![InputError::new(
            "--mode full needs a judge, and the acceptance set configures none",
        )
        .at(file, 1, 1)
        .help(
            "add a `judge:` block (for example `judge: { command: [\"python3\", \"examples/judge/forward.py\"] }`), or run with --mode fast",
        )]));
    }
    let mut judges = Vec::new();
    let mut missing = Vec::new();
    for spec in &set.judge {
        match &spec.transport {
            Transport::Command { .. } => judges.push(None),
            Transport::Chat { .. } => match ChatJudge::from_spec(spec) {
                Ok(j) => judges.push(Some(j)),
                Err(e) => missing.push(e),
            },
        }
    }
    if missing.is_empty() {
        Ok(judges)
    } else {
        Err(Error::Input(missing))
    }
}

/// Phase 2b (full mode): the judge on what the floor left open, in views of head made in a
/// directory of the run's own; fast mode has no findings.
fn run_judge(
    plan: &Plan,
    chat_judges: Vec<Option<ChatJudge>>,
    floor: &FloorReport,
    store: &mut EvidenceStore,
) -> Result<JudgeRun, Error> {
    let judged = floor.entries.iter().filter(|e| judge::is_judged(e)).count();
    if plan.mode != Mode::Full || judged == 0 {
        return Ok(JudgeRun::default());
    }
    let set = &plan.claim.set;
    progress(
        plan.quiet,
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
        .tempdir_in(&plan.temp_base)
        .map_err(|e| temp_dir_error(&plan.temp_base, e))?;
    let mut panel: Vec<(JudgeSpec, Box<dyn Ask>)> = Vec::new();
    for (spec, chat) in set.judge.iter().zip(chat_judges) {
        let ask: Box<dyn Ask> = match chat {
            Some(j) => Box::new(j),
            None => match CommandJudge::from_spec(
                spec,
                &plan.git,
                &plan.head,
                scratch.path(),
                &plan.confinement,
            ) {
                Some(j) => Box::new(j),
                None => return Err(Error::crash("a chat judge not made by the input checks")),
            },
        };
        panel.push((spec.clone(), ask));
    }
    let repo = plan.repository.clone();
    let run = judge::run(
        judge::RunInput {
            git: &plan.git,
            repo: &repo,
            base: &plan.base,
            head: &plan.head,
            entries: &floor.entries,
            panel: &panel,
        },
        store,
    )?;
    for note in &run.notes {
        progress(plan.quiet, note);
    }
    Ok(run)
}

/// The worktrees and temporary directories runs that were killed (SIGKILL, a lost machine) left
/// in this run's temporary directory's place, removed, and said in one line.
fn remove_left_by_killed_runs(plan: &Plan) {
    let removed = crate::git::remove_left_by_killed_runs(&plan.git, &plan.temp_base);
    if removed.is_empty() {
        return;
    }
    let worktrees: usize = removed.iter().map(|(_, n)| n).sum();
    let dirs: Vec<String> = removed
        .iter()
        .map(|(d, _)| d.display().to_string())
        .collect();
    progress(
        plan.quiet,
        &format!(
            "removed what {} killed run{} left: {worktrees} worktree{} ({})",
            removed.len(),
            if removed.len() == 1 { "" } else { "s" },
            if worktrees == 1 { "" } else { "s" },
            dirs.join(", ")
        ),
    );
}

/// Where the run's temporary directory goes: `--temp-dir` (`SHIPMOOR_TMPDIR`) or the system's
/// (`TMPDIR`). It must already be a directory this user can create files in: one that is
/// missing is not made (it would outlive the run), and a read-only or full one is named here,
/// before any work, rather than found when the worktrees are made.
fn temp_base(args: &ClaimCheckArgs) -> Result<PathBuf, Error> {
    let (temp_base, named_by) = match &args.temp_dir {
        Some(d) => (d.clone(), "--temp-dir (SHIPMOOR_TMPDIR)"),
        None => (std::env::temp_dir(), "TMPDIR"),
    };
    let unusable = |why: String, fix: &str| {
        Error::input(
            InputError::new(format!(
                "cannot use {} for temporary files ({named_by}): {why}",
                temp_base.display()
            ))
            .help(fix.to_string()),
        )
    };
    match std::fs::metadata(&temp_base) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(unusable(
                "it does not exist".into(),
                "create the directory, or pass an existing writable directory with --temp-dir",
            ))
        }
        Err(e) => return Err(unusable(e.to_string(), "pass a writable --temp-dir")),
        Ok(m) if !m.is_dir() => {
            return Err(unusable(
                "it is not a directory".into(),
                "pass a writable directory with --temp-dir",
            ))
        }
        Ok(_) => {}
    }
    // An anonymous file of one block: it leaves no trace, and fails on a read-only or full
    // file system as a worktree would.
    let probe = tempfile::tempfile_in(&temp_base)
        .and_then(|mut f| f.write_all(&[0; 4096]).and_then(|()| f.sync_all()));
    if let Err(e) = probe {
        return Err(unusable(
            e.to_string(),
            "free space there or make it writable, or pass another directory with --temp-dir",
        ));
    }
    Ok(temp_base)
}

/// A temporary directory that cannot be made: the operator's to fix (a full or read-only file
/// system, a permission) or a crash.
fn temp_dir_error(temp_base: &Path, e: std::io::Error) -> Error {
    if crate::nofollow::is_operator_fault(&e) {
        Error::input(
            InputError::new(format!(
                "cannot make a temporary directory in {}: {e}",
                temp_base.display()
            ))
            .help(format!(
                "{}, or pass another directory with --temp-dir",
                crate::nofollow::operator_fix(&e, &temp_base.join("x"))
            )),
        )
    } else {
        Error::crash(format!("temporary directory: {e}"))
    }
}

fn parse_subjects(given: &[String]) -> Result<Vec<Subject>, Error> {
    given
        .iter()
        .map(|s| Subject::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| {
            Error::input(
                InputError::new(format!("--subject {m}"))
                    .help("pass --subject NAME=sha256:<64 hex digits>"),
            )
        })
}

/// The key `--sign key` signs with; `--key` only with `--sign key`.
fn signing_key(args: &ClaimCheckArgs) -> Result<Option<SigningKey>, Error> {
    match (args.sign, &args.key) {
        (Sign::Key, Some(path)) => Ok(Some(load_key(path)?)),
        (Sign::Key, None) => Err(Error::input(
            InputError::new("--sign key needs --key PATH (a PKCS#8 PEM private key)")
                .help("pass --key, or sign keyless in CI with --sign keyless"),
        )),
        (_, Some(_)) => Err(Error::input(
            InputError::new("--key is used only with --sign key")
                .help("add --sign key, or drop --key"),
        )),
        _ => Ok(None),
    }
}

/// Base and head: two distinct commits, base an ancestor of head.
fn commits(args: &ClaimCheckArgs, git: &Git) -> Result<(CommitId, CommitId), Error> {
    let head = match (&args.head, pull_request_sha("head")) {
        (Some(h), _) => git.resolve(h, "--head")?,
        (None, Some(sha)) => git.resolve(&sha, "the pull request's head")?,
        (None, None) => git.resolve("HEAD", "HEAD")?,
    };
    let base = match &args.base {
        Some(b) => git.resolve(b, "--base")?,
        None => default_base(git, &head)?,
    };
    if base == head {
        return Err(Error::input(
            InputError::new(format!(
                "base and head are the same commit ({})",
                head.short()
            ))
            .help("pass the commit the change starts from with --base"),
        ));
    }
    if !git.is_ancestor(&base, &head)? {
        return Err(Error::input(
            InputError::new(format!(
                "--base {} is not an ancestor of --head {}",
                base.short(),
                head.short()
            ))
            .help(
                "pass the commit the change branched from (for example `git merge-base main HEAD`)",
            ),
        ));
    }
    Ok((base, head))
}

/// When head is the checkout, its tracked files are as committed (outputs and the explicit
/// acceptance file aside): claim-check checks committed code.
fn check_clean(
    git: &Git,
    head: &CommitId,
    located: Option<&acceptance::Located>,
) -> Result<(), Error> {
    let head_is_checkout = git.resolve("HEAD", "HEAD").ok().as_ref() == Some(head);
    if !head_is_checkout {
        return Ok(());
    }
    let acceptance_rel = located.and_then(|l| {
        l.path
            .strip_prefix(git.root())
            .ok()
            .map(|p| p.display().to_string())
    });
    let dirty =
        git.dirty_tracked(|p| floor::is_output_path(p) || acceptance_rel.as_deref() == Some(p))?;
    if dirty.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = dirty.iter().take(5).map(|s| s.as_str()).collect();
    Err(Error::input(
        InputError::new(format!(
            "{}: {}{}",
            crate::git::UNCOMMITTED,
            shown.join(", "),
            if dirty.len() > 5 { format!(" and {} more", dirty.len() - 5) } else { String::new() }
        ))
        .help("claim-check checks committed code: commit or stash the changes (`git stash`), or pass --head"),
    ))
}

/// The runners in force (the configured ones, or those detected at head) and, when anything
/// needs them, their tools and their roots at head.
/// `check_tools`: whether the runners' tools must be here (not for `fuse`, whose shards ran them).
fn runners(
    git: &Git,
    head: &CommitId,
    set: &AcceptanceSet,
    check_tools: bool,
    confinement: &crate::sandbox::Confinement,
) -> Result<Vec<RunnerConfig>, Error> {
    // Where the runners in force were written, for messages about them.
    let runners_file = set
        .settings_files
        .get("runners")
        .cloned()
        .unwrap_or_else(|| set.display_path.clone());
    let runners = if set.runners.is_empty() {
        floor::detect_runners(git, head)?
    } else {
        set.runners.clone()
    };
    let needs_runner = !set.guard.is_empty()
        || !set.guarded_criteria().is_empty()
        || set.criteria.iter().any(floor::bind::needs_tests);
    if !needs_runner || !check_tools {
        return Ok(runners);
    }
    floor::check_tools(&runners, git.root(), &runners_file, confinement)?;
    let mut missing = Vec::new();
    for r in runners.iter().filter(|r| r.root != ".") {
        let kind = git.object_kind(head.as_str(), r.root.trim_end_matches('/'))?;
        if kind.as_deref() != Some("tree") {
            missing.push(
                InputError::new(format!("runner root `{}` is not a directory at head {}", r.root, head.short()))
                    .at(runners_file.clone(), r.line, 1)
                    .help("set `root` to the directory of the runner's project, relative to the repository"),
            );
        }
    }
    if !missing.is_empty() {
        return Err(Error::Input(missing));
    }
    Ok(runners)
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

/// The floor's live progress on stderr (a line per finished test, heartbeats every
/// `SHIPMOOR_HEARTBEAT_SECS`, 10 s by default), unless `--quiet`.
fn live(quiet: bool, colour: bool) -> Option<floor::progress::Live> {
    if quiet {
        return None;
    }
    let interval = std::env::var(floor::progress::HEARTBEAT_ENV).ok();
    Some(floor::progress::Live {
        sink: std::rc::Rc::new(|line: &str| {
            let _ = writeln!(std::io::stderr(), "claim-check: {line}");
        }),
        colour,
        heartbeat: floor::progress::heartbeat_interval(interval.as_deref()),
    })
}

/// Phase 2: the floor, in `temp_root`.
fn run_floor(
    plan: &Plan,
    temp_root: &Path,
    store: &mut EvidenceStore,
) -> Result<(FloorReport, FloorOrder), Error> {
    let set = &plan.claim.set;
    progress(
        plan.quiet,
        &format!(
            "{} from {} ({}); base {} · head {}",
            crate::report::criteria_count(set.criteria.len()),
            set.display_path,
            set.state.as_str(),
            plan.base.short(),
            plan.head.short()
        ),
    );
    if !set.inherited_criteria.is_empty() {
        progress(
            plan.quiet,
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
    let sandbox = &plan.confinement.sandbox;
    if let Some(why) = sandbox.unavailable() {
        progress(
            plan.quiet,
            &format!(
                "warning: no sandbox ({why}): the change's code runs with all the reach of this run's user (book: security.md)"
            ),
        );
    }
    let quiet = plan.quiet;
    let progress = move |msg: &str| progress(quiet, msg);
    let input = FloorInput {
        git: &plan.git,
        acceptance: set,
        runners: plan.runners.clone(),
        base: plan.base.clone(),
        head: plan.head.clone(),
        runs: plan.runs,
        timeout: plan.timeout,
        temp_root: temp_root.to_path_buf(),
        clock: &plan.clock,
        progress: &progress,
        live: plan.live.clone(),
        // An explicit file's own settings are checked by path as before; the claim read from
        // git carries its settings edits itself (`settings_edits`).
        acceptance_path: plan.located.as_ref().and_then(|l| {
            let p = l.path.canonicalize().ok()?;
            let root = plan.git.root().canonicalize().ok()?;
            p.strip_prefix(root).ok().map(|r| r.display().to_string())
        }),
        shard: plan.shard.as_ref().map(|s| s.share),
        base_cache: plan.base_cache.as_ref(),
        confinement: &plan.confinement,
        registry: &crate::floor::runners::registry::Registry::builtin(),
    };
    floor::run_ordered(&input, store)
}

/// The base cache's directory (`--base-cache`, `.shipmoor/cache` in the repository by default),
/// read now, before any of the change's code runs; `None` for `none`. An empty value (a
/// workflow's `SHIPMOOR_BASE_CACHE: ${{ inputs.base-cache }}` with the input unset) is the
/// default, never the current directory.
fn open_base_cache(args: &ClaimCheckArgs, root: &Path) -> Option<BaseCache> {
    // An empty value (a workflow's `SHIPMOOR_BASE_CACHE: ${{ inputs.base-cache }}` with the
    // input unset) is the default, never the current directory.
    let given = args.base_cache.as_deref().filter(|p| !p.trim().is_empty());
    let dir = crate::floor::cache::dir_of(given, root)?;
    let shown = shown_path(&dir, root);
    Some(BaseCache::open(&dir, Some(root), shown))
}

/// Writes the floor's new base cache entry, when it made one, and leaves the cache holding
/// only what it held when it was read and what this run observed: called once nothing the
/// run started still runs. A cache that cannot be written is a warning, never an error.
fn keep_base(plan: &Plan, mut floor: FloorReport) -> FloorReport {
    let Some(cache) = &plan.base_cache else {
        return floor;
    };
    let pending = floor.cache_entry.take();
    match cache.commit(pending.as_ref()) {
        Ok(done) => {
            if done.removed > 0 {
                progress(
                    plan.quiet,
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

/// How the statement will be signed, with the OIDC token of keyless signing: decided before
/// the statement is written, since the statement records it.
fn signing(plan: &Plan) -> Result<(Signing, Option<String>), Error> {
    let token = match plan.sign {
        Sign::Keyless => attest::sigstore::ambient_token().map_err(|e| {
            Error::crash(format!("keyless signing: cannot get the OIDC token: {e}"))
        })?,
        _ => None,
    };
    let signing = match (plan.sign, &plan.signing_key, &token) {
        (Sign::Key, Some(k), _) => Signing {
            state: SigningState::Key,
            note: format!("signed with key {} ({})", k.keyid(), k.algorithm()),
        },
        (Sign::Keyless, _, Some(_)) => Signing {
            state: SigningState::Keyless,
            note: "signed keyless with Sigstore (Fulcio certificate, Rekor entry)".into(),
        },
        (Sign::Keyless, _, None) => Signing {
            state: SigningState::Unsigned,
            note: "UNSIGNED: --sign keyless found no OIDC identity (SIGSTORE_ID_TOKEN, or GitHub Actions with `id-token: write`; a pull request from a fork gets none): the attestation records the verdict but proves nothing about who produced it".into(),
        },
        _ => Signing {
            state: SigningState::Unsigned,
            note: "the attestation is unsigned (--sign none): it records the verdict but proves nothing about who produced it".into(),
        },
    };
    if plan.sign == Sign::Keyless && token.is_none() && !plan.quiet {
        let _ = writeln!(std::io::stderr(), "claim-check: warning: {}", signing.note);
    }
    Ok((signing, token))
}

/// The run's facts once the floor is done: its times, the repository, the outputs as reports
/// name them.
fn facts(plan: &Plan, signing: Signing) -> Result<Facts, Error> {
    let root = plan.git.root();
    Ok(Facts {
        mode: plan.mode,
        completed_at: rfc3339(plan.clock.now()),
        repository: plan.repository.clone(),
        base: plan.base.to_string(),
        head: plan.head.to_string(),
        acceptance_path: match &plan.located {
            Some(l) => shown_path(&l.path, root),
            None => plan.claim.set.display_path.clone(),
        },
        started_at: rfc3339(plan.started),
        duration_seconds: plan.stopwatch.elapsed().as_secs(),
        outputs: Outputs {
            vsa: shown_path(plan.paths.vsa.path(), root),
            fixes: shown_path(plan.paths.fixes.path(), root),
            report: shown_path(plan.paths.report.path(), root),
            evidence: shown_path(plan.paths.evidence.path(), root),
        },
        signing,
        shards: plan.fused.clone(),
        observation: plan
            .observation
            .clone()
            .unwrap_or_else(|| Observation::single(JobRef::here().as_ref())),
    })
}

/// Phase 3 (pure): the floor's entries and the judge's findings (none in fast mode) fused into
/// the run's verdict, with the claim and the run's facts.
fn conclude(claim: &ClaimInfo, floor: &FloorReport, judge: &JudgeRun, facts: &Facts) -> RunResult {
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
        mode: match facts.mode {
            Mode::Fast => "fast".into(),
            Mode::Full => "full".into(),
        },
        verdict: fused.verdict,
        rule: fused.rule.label().to_string(),
        rule_reason: draft_reason(&fused, set, &claim.source),
        exit_code: fused.verdict.exit_code(),
        repository: facts.repository.clone(),
        base: facts.base.clone(),
        head: facts.head.clone(),
        acceptance: acceptance_info(set, &facts.acceptance_path, &claim.source, facts),
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
fn head_object_sha256(git: &Git, head: &CommitId) -> Result<String, Error> {
    let Some(head_object) = git.commit_object(head.as_str())? else {
        return Err(Error::crash(format!(
            "git cat-file commit {head}: no such commit"
        )));
    };
    Ok(attest::commit_object_sha256(&head_object))
}

/// Phase 4 (pure): the documents of one result, as they are written and printed.
fn render(
    result: &RunResult,
    inputs: &StatementInputs<'_>,
    terminal: Terminal,
    footer: &Outputs,
) -> Result<Documents, Error> {
    let packet = fixes::packet(result);
    let statement = attest::statement(
        result,
        inputs.evidence_records,
        inputs.subjects,
        inputs.head_object_sha256,
        inputs.policy.clone(),
    );
    let statement = attest::statement_bytes(&statement).map_err(Error::crash)?;
    let fixes = pretty_json(&packet)?;
    let mut result_json = ResultDocument::new(result, &packet)
        .to_json()
        .map_err(Error::crash)?
        .into_bytes();
    result_json.push(b'\n');
    let terminal = match terminal.format {
        Format::Json => String::from_utf8_lossy(&result_json).into_owned(),
        Format::Human => {
            // The terminal is read where the user stands, so its footer names the outputs from
            // the current directory; the documents keep them relative to the repository, from
            // where the Action resolves them.
            let mut shown = result.clone();
            shown.outputs = footer.clone();
            terminal::render_at(&shown, terminal.colour, terminal::width())
        }
    };
    Ok(Documents {
        verify_md: verify_md::render(result, &packet),
        fixes,
        statement,
        result_json,
        terminal,
    })
}

/// Pretty JSON with a final newline, as the JSON documents are written.
fn pretty_json<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, Error> {
    let mut b = serde_json::to_vec_pretty(v).map_err(Error::crash)?;
    b.push(b'\n');
    Ok(b)
}

/// Phase 6, all or nothing: every document is staged beside its place, then every evidence
/// item the store lacks, before anything is renamed into place; an interruption or a failure
/// before the renames removes what was staged, and the directories made for it. Every output
/// is checked again first: the floor ran the change's code, which may have put a symlink where
/// an output goes since the input checks; then nothing at all is written.
fn write(
    paths: &Paths,
    result_out: Option<&OutputPath>,
    store: &EvidenceStore,
    docs: &Documents,
    signed: &SignedForms,
) -> Result<(), Error> {
    let dsse_path = signed_path(&paths.vsa, "dsse.json");
    let bundle_path = signed_path(&paths.vsa, "sigstore.json");
    let places = outputs(paths, &dsse_path, &bundle_path, result_out);
    for (path, flag) in &places {
        path.check().map_err(|r| refused(&r, flag))?;
    }
    crate::evidence::check_store(&paths.evidence).map_err(|r| refused(&r, "--evidence-dir"))?;
    let evidence_item = paths.evidence.path().join("sha256").join("item");
    let new_dirs = NewDirs::of(
        places
            .iter()
            .map(|(p, _)| p.path())
            .chain([evidence_item.as_path()]),
    );
    let forms = (&dsse_path, &bundle_path);
    let written = write_staged(paths, result_out, store, docs, signed, forms);
    if written.is_err() {
        new_dirs.remove();
    }
    written
}

/// [`write`]'s staging and renames.
fn write_staged(
    paths: &Paths,
    result_out: Option<&OutputPath>,
    store: &EvidenceStore,
    docs: &Documents,
    (dsse_bytes, bundle_bytes): &SignedForms,
    (dsse_path, bundle_path): (&OutputPath, &OutputPath),
) -> Result<(), Error> {
    let mut all: Vec<(&OutputPath, &[u8], &str)> = vec![
        (&paths.vsa, &docs.statement, "--vsa-out"),
        (&paths.fixes, &docs.fixes, "--fixes-out"),
        (&paths.report, docs.verify_md.as_bytes(), "--report-out"),
    ];
    if let Some(b) = dsse_bytes {
        all.push((dsse_path, b, "--vsa-out"));
    }
    if let Some(p) = result_out {
        all.push((p, &docs.result_json, "--result-out"));
    }
    if let Some(b) = bundle_bytes {
        all.push((bundle_path, b, "--vsa-out"));
    }
    let mut staged = Vec::new();
    for (path, bytes, flag) in all {
        stop_if_interrupted()?;
        staged.push((
            flag,
            path.stage(bytes).map_err(|e| e.into_error(Some(flag)))?,
        ));
    }
    let items = store
        .stage(&paths.evidence, &mut crate::process::interrupted)
        .map_err(|e| e.into_error(Some("--evidence-dir")))?
        .ok_or(Error::Interrupted)?;
    // The last point an interruption stops the run: from here the renames complete.
    stop_if_interrupted()?;
    let mut renamed: Vec<PathBuf> = Vec::new();
    let commit = || -> Result<(), Error> {
        for item in items {
            let at = item.path().to_path_buf();
            item.commit()
                .map_err(|e| e.into_error(Some("--evidence-dir")))?;
            renamed.push(at);
        }
        for (flag, tmp) in staged {
            tmp.commit().map_err(|e| e.into_error(Some(flag)))?;
        }
        Ok(())
    };
    if let Err(e) = commit() {
        // A rename that fails (the file system went away) takes back the evidence items this
        // run added, so that nothing is left that no document cites.
        for at in renamed {
            let _ = std::fs::remove_file(at);
        }
        return Err(e);
    }
    // A signed form left by an earlier run must not stand beside this run's statement.
    for (path, written) in [
        (dsse_path, dsse_bytes.is_some()),
        (bundle_path, bundle_bytes.is_some()),
    ] {
        let there = std::fs::symlink_metadata(path.path()).is_ok_and(|m| m.is_file());
        if !written && there {
            std::fs::remove_file(path.path()).map_err(|e| {
                Error::crash(format!("cannot remove {}: {e}", path.path().display()))
            })?;
        }
    }
    Ok(())
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

/// Every output file a run may write or remove, with the flag that names it.
fn outputs<'a>(
    paths: &'a Paths,
    dsse: &'a OutputPath,
    bundle: &'a OutputPath,
    result_out: Option<&'a OutputPath>,
) -> Vec<(&'a OutputPath, &'static str)> {
    let mut all = vec![
        (&paths.vsa, "--vsa-out"),
        (dsse, "--vsa-out"),
        (bundle, "--vsa-out"),
        (&paths.fixes, "--fixes-out"),
        (&paths.report, "--report-out"),
    ];
    if let Some(r) = result_out {
        all.push((r, "--result-out"));
    }
    all
}

/// An output in the way (a symlink, a file where a directory goes): an input error that
/// names it and says how to clear it.
fn refused(r: &Refused, flag: &str) -> Error {
    Error::input(r.input_error(flag))
}

/// Phase 7: the terminal text on stdout.
fn print(docs: &Documents) {
    let _ = std::io::stdout().write_all(docs.terminal.as_bytes());
}

/// `claim-check.vsa.json` → `claim-check.vsa.<suffix>`.
fn signed_path(vsa: &OutputPath, suffix: &str) -> OutputPath {
    let name = vsa
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    vsa.sibling(&format!("{stem}.{suffix}"))
}

/// Loads the signing key, its password from `SHIPMOOR_KEY_PASSWORD` when it is encrypted.
fn load_key(path: &Path) -> Result<SigningKey, Error> {
    let bytes = crate::nofollow::read_named(path, super::replay::KEY_LIMIT).map_err(|e| {
        Error::input(crate::nofollow::named_input_error(
            path,
            "the signing key",
            &e,
        ))
    })?;
    let pem = String::from_utf8_lossy(&bytes);
    let password = std::env::var("SHIPMOOR_KEY_PASSWORD").ok();
    attest::keys::load_signing_key(&pem, password.as_deref().map(str::as_bytes))
        .map_err(|e| Error::input(e.to_input_error(path.display().to_string())))
}

/// The DSSE envelope and the Sigstore bundle, as written (either may be absent).
type SignedForms = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Phase 5: the signed forms of the statement: with a key, a DSSE envelope and a Sigstore bundle
/// carrying it; keyless, a Sigstore bundle from Fulcio and Rekor.
fn sign(
    statement: &[u8],
    signing: &Signing,
    key: Option<&SigningKey>,
    token: Option<&str>,
    services: &Services,
) -> Result<SignedForms, Error> {
    let pretty = |v: &serde_json::Value| -> Result<Vec<u8>, Error> {
        let mut b = serde_json::to_vec_pretty(v).map_err(Error::crash)?;
        b.push(b'\n');
        Ok(b)
    };
    match (signing.state, key) {
        (SigningState::Key, Some(k)) => {
            let env = attest::dsse::sign(statement, attest::dsse::PAYLOAD_TYPE, k);
            let bundle = attest::keyed_bundle::to_bundle(&env)
                .map_err(|e| Error::crash(format!("bundle: {e}")))?;
            let env_json = serde_json::to_value(&env).map_err(Error::crash)?;
            Ok((Some(pretty(&env_json)?), Some(pretty(&bundle)?)))
        }
        (SigningState::Keyless, _) => {
            let token = token.ok_or_else(|| Error::crash("keyless signing without a token"))?;
            let bundle =
                attest::sigstore::sign_keyless(statement, token, services).map_err(|e| {
                    Error::crash(format!("keyless signing failed (nothing written): {e}"))
                })?;
            let mut b = bundle.into_bytes();
            if !b.ends_with(b"\n") {
                b.push(b'\n');
            }
            Ok((None, Some(b)))
        }
        _ => Ok((None, None)),
    }
}

/// Every output can be written: nothing is in its way (no symlink where it goes or on a
/// directory on the way, the evidence store's items regular files: [`OutputPath::check`]), and
/// its nearest existing ancestor is a directory we can create files in (checked with an
/// anonymous file that leaves no trace). Checked before any work so that an output that cannot
/// be written is an input error, not a half-written run.
fn check_writable(paths: &Paths, result_out: Option<&OutputPath>) -> Result<(), Error> {
    let dsse = signed_path(&paths.vsa, "dsse.json");
    let bundle = signed_path(&paths.vsa, "sigstore.json");
    let mut all: Vec<(&OutputPath, &str, bool)> = outputs(paths, &dsse, &bundle, result_out)
        .into_iter()
        .map(|(p, flag)| (p, flag, false))
        .collect();
    all.push((&paths.evidence, "--evidence-dir", true));
    for (out, flag, is_dir) in all {
        let path = out.path();
        let meta = std::fs::symlink_metadata(path).ok();
        if meta
            .as_ref()
            .is_some_and(|m| !m.file_type().is_symlink() && m.is_dir() != is_dir)
        {
            return Err(Error::input(
                InputError::new(format!(
                    "{flag} {} is a {}",
                    path.display(),
                    if is_dir {
                        "file, not a directory"
                    } else {
                        "directory, not a file"
                    }
                ))
                .help(format!("pass another path with {flag}")),
            ));
        }
        out.check().map_err(|r| refused(&r, flag))?;
        let mut dir = if is_dir {
            path
        } else {
            path.parent().unwrap_or(Path::new("."))
        };
        while !dir.exists() {
            dir = dir.parent().unwrap_or(Path::new("/"));
        }
        let writable = dir.is_dir() && tempfile::tempfile_in(dir).is_ok();
        if !writable {
            return Err(Error::input(
                InputError::new(format!(
                    "cannot write {} ({flag}): {} is not a writable directory",
                    path.display(),
                    dir.display()
                ))
                .help(format!("pass a writable path with {flag}")),
            ));
        }
    }
    crate::evidence::check_store(&paths.evidence).map_err(|r| refused(&r, "--evidence-dir"))
}

/// What the result says about the claim; `path` is its file as reports show it.
fn acceptance_info(set: &AcceptanceSet, path: &str, source: &str, facts: &Facts) -> AcceptanceInfo {
    let draft = (set.state == acceptance::AcceptanceState::Draft).then(|| report::DraftInfo {
        commit: commit_command(set, source, &facts.base, &facts.head),
        criteria: set
            .criteria
            .iter()
            .map(|c| report::DraftCriterion {
                id: c.id.clone(),
                tag: c.tag.clone(),
                ac: c.ac.clone(),
                required: c.required,
                confidence: c.confidence.map(|k| k.value()),
                source: c.source.clone(),
            })
            .collect(),
    });
    AcceptanceInfo {
        draft,
        path: path.to_string(),
        state: set.state,
        sha256: set.sha256.clone(),
        source: source.to_string(),
        inherited: set
            .inherited_criteria
            .iter()
            .map(|c| InheritedCriterion {
                id: c.id.clone(),
                file: set.origin.get(&c.id).cloned().unwrap_or_default(),
            })
            .collect(),
        inherited_policy: set.inherited,
    }
}

/// The command line that turns a draft claim into this change's committed file: for a claim
/// derived from text, `acceptance derive` from the same text first.
fn commit_command(set: &AcceptanceSet, source: &str, base: &str, head: &str) -> String {
    const COMMIT: &str = "shipmoor acceptance commit";
    if source != "derived" {
        return COMMIT.to_string();
    }
    let what = set.display_path.trim_end_matches(" (derived draft)");
    let derive = if let Some(from) = what.strip_prefix("--from ") {
        format!("shipmoor acceptance derive --from {from}")
    } else if let Some(n) = what
        .strip_prefix("pull request #")
        .and_then(|r| r.split('\'').next())
    {
        format!("gh pr view {n} --json body -q .body | shipmoor acceptance derive --from -")
    } else {
        format!(
            "shipmoor acceptance derive --from-commits {}..{}",
            crate::report::short_commit(base),
            crate::report::short_commit(head)
        )
    };
    format!("{derive} && {COMMIT}")
}

/// The fused rule as a sentence; the draft gate says how to commit this claim's own draft.
fn draft_reason(fused: &verdict::Fused, set: &AcceptanceSet, source: &str) -> String {
    if fused.rule != verdict::Rule::DraftGate
        || set.display_path == ".shipmoor/acceptance.yaml.draft"
        || source == "explicit"
    {
        return report::fused_reason(fused);
    }
    if source == "derived" {
        return format!(
            "acceptance set is a draft derived from {}; write its criteria as .shipmoor/changes/<name>.yaml and commit it",
            set.display_path.trim_end_matches(" (derived draft)")
        );
    }
    let drafts: Vec<&str> = set
        .criteria
        .iter()
        .filter_map(|c| set.origin.get(&c.id))
        .filter(|f| f.ends_with(".draft"))
        .map(String::as_str)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    format!(
        "acceptance set is a draft; commit {} with `shipmoor acceptance commit`",
        drafts.join(", ")
    )
}

/// The change's claim (book: claims.md): the file named with `--acceptance`; else the criteria
/// base..head adds or changes, read from git at both sides; else, when that is nothing, a draft
/// derived from `--from`, the pull request's description or the commit messages. Nothing at
/// all is an input error that says how to give intent. Returns the claim and its source
/// (`explicit`, `files` or `derived`).
fn load_claim(
    args: &ClaimCheckArgs,
    git: &Git,
    base: &CommitId,
    head: &CommitId,
    located: Option<&acceptance::Located>,
) -> Result<(claim::Claim, String), Error> {
    let head_files = claim::Files::read(&claim::Source::Commit(git, head), true)?;
    let base_files = claim::Files::read(&claim::Source::Commit(git, base), false)?;
    if let Some(l) = located {
        let mut file = acceptance::load(l)?;
        // Named as the reports and the VSA name it, so that `replay --rerun` finds the same.
        file.display_path = shown_path(&l.path, git.root());
        return Ok((
            claim::explicit(file, &head_files, Some(&base_files)),
            "explicit".into(),
        ));
    }
    let found = claim::compare(&head_files, Some(&base_files));
    if !found.set.criteria.is_empty() {
        return Ok((found, "files".into()));
    }
    for (what, texts) in &intent_texts(args, git, base, head)? {
        let Some(criteria) = draft_criteria(texts, &found.set) else {
            continue;
        };
        let source = format!("{what} (derived draft)");
        return Ok((
            claim::derived(criteria, &source, &head_files, Some(&base_files)),
            "derived".into(),
        ));
    }
    Err(claims_nothing(git, base, head, &found, &head_files))
}

/// One text a draft may be derived from: its name in source pointers, and its words.
type NamedText = (String, String);

/// The texts a draft claim may be derived from, in order: `--from`, the pull request's title
/// and description, the commit messages of base..head; each group with what it is, in words.
fn intent_texts(
    args: &ClaimCheckArgs,
    git: &Git,
    base: &CommitId,
    head: &CommitId,
) -> Result<Vec<(String, Vec<NamedText>)>, Error> {
    let mut texts: Vec<(String, Vec<NamedText>)> = Vec::new();
    if let Some(from) = &args.from {
        let bytes = crate::nofollow::read_named(from, crate::acceptance::ACCEPTANCE_LIMIT)
            .map_err(|e| Error::input(crate::nofollow::named_input_error(from, "--from", &e)))?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::input(
                InputError::new("--from is not UTF-8 text")
                    .in_file(from.display().to_string())
                    .help("save the file as UTF-8"),
            )
        })?;
        let what = format!("--from {}", from.display());
        texts.push((what.clone(), vec![(what, text)]));
    }
    if let Some(event) = crate::action::event() {
        let text = |field: &str| {
            event
                .pointer(&format!("/pull_request/{field}"))
                .and_then(|t| t.as_str())
        };
        // A `null` description with a title is still the pull request's text.
        if text("body").is_some() || text("title").is_some() {
            let body = text("body").unwrap_or_default();
            let (what, name) = match event
                .pointer("/pull_request/number")
                .and_then(|n| n.as_u64())
            {
                Some(n) => (
                    format!("pull request #{n}'s description"),
                    format!("pull request #{n}"),
                ),
                None => (
                    "the pull request's description".to_string(),
                    "the pull request".to_string(),
                ),
            };
            let title = text("title").unwrap_or_default();
            texts.push((
                what,
                vec![
                    (format!("{name}'s title"), title.to_string()),
                    (name, body.to_string()),
                ],
            ));
        }
    }
    // As before: commits whose log cannot be read give no text (the run goes on without).
    if let Ok(messages) = git.messages(base, head) {
        let messages = messages
            .into_iter()
            .map(|(commit, message)| (format!("commit {}", commit.short()), message))
            .collect();
        texts.push(("the commit messages".into(), messages));
    }
    Ok(texts)
}

/// The criteria derived from `texts`, none when there are none; `found` holds the inherited
/// criteria, whose ids a draft does not take (as `acceptance derive` does not take another
/// file's).
fn draft_criteria(
    texts: &[NamedText],
    found: &AcceptanceSet,
) -> Option<Vec<acceptance::Criterion>> {
    let named: Vec<acceptance::derive::Text<'_>> = texts
        .iter()
        .map(|(name, body)| acceptance::derive::Text { name, body })
        .collect();
    let mut derived = acceptance::derive::derive(&named);
    if derived.is_empty() {
        return None;
    }
    let taken: std::collections::BTreeSet<String> = found
        .inherited_criteria
        .iter()
        .map(|c| c.id.clone())
        .collect();
    acceptance::draft::settle_ids(&mut derived, &[], &taken);
    Some(acceptance::draft::criteria(&derived))
}

/// The input error of a change that claims nothing, saying how to give it intent (and which
/// claim files are there but not committed).
fn claims_nothing(
    git: &Git,
    base: &CommitId,
    head: &CommitId,
    found: &claim::Claim,
    head_files: &claim::Files,
) -> Error {
    let inherited = found.set.inherited_criteria.len();
    let uncommitted: Vec<String> = claim::Files::read(&claim::Source::Worktree(git.root()), false)
        .map(|w| {
            w.files
                .into_iter()
                .map(|f| f.path)
                .filter(|p| head_files.files.iter().all(|h| &h.path != p))
                .collect()
        })
        .unwrap_or_default();
    let mut help = "give the change its intent in one of three ways: (1) add its criteria as `.shipmoor/changes/<name>.yaml` (or edit a criterion of `.shipmoor/acceptance.yaml`) and commit it; (2) derive a draft from a text with `shipmoor acceptance derive --from FILE` (or pass `--from FILE` here); (3) put a `## Acceptance criteria` checklist (`- [ ] …`) in the pull request's description or a commit message".to_string();
    if !uncommitted.is_empty() {
        help.push_str(&format!(
            "; note: {} is not committed, and claim-check reads the change from git",
            uncommitted.join(", ")
        ));
    }
    Error::input(
        InputError::new(format!(
            "this change claims nothing: base..head ({}..{}) adds or changes no acceptance criterion{}, and there is no text with criteria to derive a draft from",
            base.short(),
            head.short(),
            match inherited {
                0 => String::new(),
                1 => " (1 criterion is inherited from an earlier change)".to_string(),
                n => format!(" ({n} criteria are inherited from earlier changes)"),
            }
        ))
        .help(help),
    )
}

/// The outputs as the terminal's footer names them: paths that exist from the current
/// directory (relative to it, up to two `../`, else absolute).
fn footer_outputs(paths: &Paths) -> Outputs {
    let cwd = std::env::current_dir().ok();
    let shown = |p: &Path| match &cwd {
        Some(cwd) => from_dir(p, cwd),
        None => p.display().to_string(),
    };
    Outputs {
        vsa: shown(paths.vsa.path()),
        fixes: shown(paths.fixes.path()),
        report: shown(paths.report.path()),
        evidence: shown(paths.evidence.path()),
    }
}

/// `path` relative to `dir`, both compared as the file system resolves them (a symlinked temp
/// directory, `..` in a flag); the path as given when they share no root.
fn from_dir(path: &Path, dir: &Path) -> String {
    // The output is not written yet (nor, maybe, its directory): resolve the nearest ancestor
    // that exists and keep the rest as given.
    let resolve = |p: &Path| -> Option<PathBuf> {
        let existing = p.ancestors().find(|a| a.exists())?;
        let rest = p.strip_prefix(existing).ok()?;
        Some(std::fs::canonicalize(existing).ok()?.join(rest))
    };
    let (Some(target), Ok(base)) = (resolve(path), std::fs::canonicalize(dir)) else {
        return path.display().to_string();
    };
    let target: Vec<_> = target.components().collect();
    let base: Vec<_> = base.components().collect();
    let common = target.iter().zip(&base).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return path.display().to_string();
    }
    // Far away (a temp directory, another tree), the absolute path reads better than `../../..`.
    if base.len() - common > 2 {
        return target.iter().collect::<PathBuf>().display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in common..base.len() {
        rel.push("..");
    }
    for c in &target[common..] {
        rel.push(c);
    }
    rel.display().to_string()
}

fn output_paths(args: &ClaimCheckArgs, root: &Path) -> Paths {
    let cwd = std::env::current_dir().unwrap_or_else(|_| root.to_path_buf());
    let pick = |given: &Option<PathBuf>, default: &str| match given {
        Some(p) if p.is_absolute() => p.clone(),
        Some(p) => cwd.join(p),
        None => root.join(default),
    };
    let file = |p: PathBuf| OutputPath::file(&p, Some(root));
    Paths {
        vsa: file(pick(&args.vsa_out, ".shipmoor/claim-check.vsa.json")),
        fixes: file(pick(&args.fixes_out, ".shipmoor/claim-check.fixes.json")),
        report: file(pick(&args.report_out, ".shipmoor/verify.md")),
        evidence: OutputPath::dir(&pick(&args.evidence_dir, ".shipmoor/evidence"), Some(root)),
    }
}

/// The pull request's base in GitHub Actions, else the merge-base of head with the default
/// branch.
pub(crate) fn default_base(git: &Git, head: &CommitId) -> Result<CommitId, Error> {
    if let Some(sha) = pull_request_sha("base") {
        return git.resolve(&sha, "the pull request's base");
    }
    let Some(branch) = git.default_branch()? else {
        return Err(Error::input(
            InputError::new(
                "cannot tell the base commit: no default branch (origin/HEAD, main or master) here",
            )
            .help("pass the commit the change starts from with --base"),
        ));
    };
    let tip = git.resolve(&branch, "the default branch")?;
    match git.merge_base(&tip, head)? {
        Some(b) => Ok(b),
        None => Err(Error::input(
            InputError::new(format!("`{branch}` and head share no history"))
                .help("pass the commit the change starts from with --base"),
        )),
    }
}

/// The pull request's base or head commit in GitHub Actions.
fn pull_request_sha(which: &str) -> Option<String> {
    crate::action::pull_request_sha(&crate::action::event()?, which)
}
