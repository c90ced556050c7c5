//! The run's arguments, resolved (phase 1 of the module doc): every input check (flags,
//! repository, commits, a dirty tree, the claim, the runners' tools, the outputs) made once,
//! before any work starts, so that an input error writes nothing and leaves the checkout
//! untouched.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use time::OffsetDateTime;

use super::attach::{attach_reference, resolve_attach_target};
use super::claim::{load_claim, ClaimInfo};
use super::inputs::{check_clean, check_panel, commits, parse_subjects, runners, temp_base};
use super::outputs::{check_writable, Paths, Terminal};
use super::resolved::{Job, Resolved};
use super::shard::{self, Loaded};
use super::sharding;
use super::signing::signing_key;
use super::{policy, shown_path};
use crate::acceptance::{self, AcceptanceSet};
use crate::attest::{keys::SigningKey, sigstore::Services, SubjectArg};
use crate::cli::ClaimCheckArgs;
use crate::clock::{Clock, Stopwatch};
use crate::error::{Error, InputError};
use crate::floor::{self, cache::BaseCache};
use crate::git::{CommitId, Git};
use crate::judge::{chat::ChatJudge, Transport};
use crate::nofollow::OutputPath;
use crate::sandbox::env::EnvPolicy;

/// What a run of [`resolve`] checks its inputs for.
pub(super) enum Role<'a> {
    /// `claim-check`: the whole run, or one shard of it.
    Run,
    /// `fuse`: the shards ran the floor, so their runners' tools are not needed here; what
    /// they checked must be what the fuse's own input checks find (`given`: the `--base` and
    /// `--head` the flags named, if any).
    Fuse {
        shards: &'a [Loaded],
        given: (Option<String>, Option<String>),
    },
}

/// What the input checks establish about the change before the outputs are checked: the
/// clock, the repository, the commits and the claim, with the subjects, the signing key and
/// `--attach`'s reference.
struct Change {
    clock: Clock,
    started: OffsetDateTime,
    stopwatch: Stopwatch,
    git: Git,
    repository: String,
    subjects: Vec<SubjectArg>,
    signing_key: Option<SigningKey>,
    attach_reference: Option<crate::oci::Reference>,
    base: CommitId,
    head: CommitId,
    located: Option<acceptance::Located>,
    claim: ClaimInfo,
}

/// Phase 1: every input check, in the order a person fixes them, before any work. Returns
/// the run's arguments, and full mode's chat judges, made (their keys read) by the input
/// checks, in panel order (`None` for a command judge, which needs the run's scratch
/// directory).
pub(super) fn resolve(
    args: &ClaimCheckArgs,
    colour: bool,
    colour_stderr: bool,
    role: Role<'_>,
) -> Result<(Resolved, Vec<Option<ChatJudge>>), Error> {
    let is_run = matches!(role, Role::Run);
    let shard = match role {
        Role::Run => sharding::resolve(args, &|name| std::env::var(name).ok())?,
        Role::Fuse { .. } => None,
    };
    let Change {
        clock,
        started,
        stopwatch,
        git,
        repository,
        mut subjects,
        signing_key,
        attach_reference,
        base,
        head,
        located,
        claim,
    } = change(args)?;
    // A shard does not judge: only the fuse needs the judge's configuration.
    let chat_judges = match shard {
        Some(_) => Vec::new(),
        None => check_panel(args.mode, &claim.set)?,
    };
    let paths = output_paths(args, git.root());
    let temp_base = temp_base(args)?;
    let confinement = run_confinement(args, &git, &paths, &temp_base, &claim.set)?;
    let runners = runners(&git, &head, &claim.set, is_run, &confinement)?;
    // Relative to where claim-check was started, as the other outputs' flags.
    let result_out = args
        .result_out
        .as_ref()
        .map(|p| OutputPath::file(p, Some(git.root())));
    let shard = match shard {
        Some(plan) => Some((shard::check_out(&plan.out, git.root())?, plan)),
        None => {
            check_writable(&paths, result_out.as_ref())?;
            None
        }
    };
    let base_cache = match is_run {
        true => open_base_cache(args, git.root()),
        false => None,
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
    let job = match (role, shard) {
        (Role::Fuse { shards, given }, _) => {
            shard::check_plan((&git, &base, &head), &claim.set.sha256, shards, given)?;
            Job::Fused {
                shards: shard::sharding(shards),
                observation: shard::observation(shards),
            }
        }
        (Role::Run, Some((out, plan))) => Job::Shard { plan, out },
        (Role::Run, None) => Job::Whole,
    };
    let resolved = Resolved {
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
        claim,
        runners,
        paths,
        result_out,
        temp_base,
        attach,
        live: match is_run {
            true => live(args.quiet, colour_stderr),
            false => None,
        },
        job,
        base_cache,
        confinement,
    };
    Ok((resolved, chat_judges))
}

/// The input checks of [`resolve`] up to the claim, in the order a person fixes them.
fn change(args: &ClaimCheckArgs) -> Result<Change, Error> {
    let clock = Clock::from_env(args.current_time.as_deref()).map_err(|m| {
        Error::input(
            InputError::new(m.to_string())
                .help("give seconds since 1970 (SOURCE_DATE_EPOCH) or an RFC 3339 time"),
        )
    })?;
    let started = clock.now();
    let stopwatch = clock.stopwatch();
    let git = Git::discover(&args.repo)?;
    let repository = policy::resource_uri(args, &git)?;
    let subjects = parse_subjects(&args.subjects)?;
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
    Ok(Change {
        clock,
        started,
        stopwatch,
        git,
        repository,
        subjects,
        signing_key,
        attach_reference,
        base,
        head,
        located,
        claim: ClaimInfo {
            set: claim.set,
            source,
        },
    })
}

/// The sandbox of the run's commands (`--sandbox`), probed now, before any of the change's code
/// runs (a toolchain probe is the first), with what the run keeps from them: the checkout and
/// the temporary directory (see [`crate::commands::confinement`]), and whatever the run reads or writes
/// outside them (the signing key, the evidence store, the base cache). `--sandbox-write`
/// directories are left writable. The claim's `set` says what they get of our environment
/// ([`env_policy`]).
fn run_confinement(
    args: &ClaimCheckArgs,
    git: &Git,
    paths: &Paths,
    temp_base: &Path,
    set: &AcceptanceSet,
) -> Result<crate::sandbox::Confinement, Error> {
    let mut extra = crate::commands::confinement::Extra::default();
    extra.hide.extend(args.key.iter().cloned());
    extra.hide.push(paths.evidence.path().to_path_buf());
    let given = args.base_cache.as_deref().filter(|p| !p.trim().is_empty());
    extra
        .hide
        .extend(crate::floor::cache::dir_of(given, git.root()));
    let mut confinement = crate::commands::confinement::confinement(
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
    confinement.env = env_policy(set);
    Ok(confinement)
}

/// What the run's commands get of our environment: the judges' key variables never reach the
/// code the floor and the command judges run, whatever they are named; `floor.env_pass`
/// reaches a command judge too.
fn env_policy(set: &AcceptanceSet) -> EnvPolicy {
    let keys = set.judge.iter().filter_map(|j| match &j.transport {
        Transport::Chat {
            api_key_env: Some(var),
            ..
        } => Some(var.clone()),
        _ => None,
    });
    EnvPolicy::new(keys, &set.env_pass)
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
