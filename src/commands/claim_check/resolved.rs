//! The run's arguments as the input checks resolved them ([`super::args::resolve`]): built once,
//! before any work, and only read by the phases after them.

use std::path::PathBuf;
use std::time::Duration;

use time::OffsetDateTime;

use super::attach::AttachTarget;
use super::claim::ClaimInfo;
use super::outputs::{Paths, Terminal};
use super::sharding::ShardPlan;
use crate::acceptance::{self, RunnerConfig};
use crate::attest::{keys::SigningKey, sigstore::Services, SubjectArg};
use crate::cli::{Mode, Sign};
use crate::clock::{Clock, Stopwatch};
use crate::floor::cache::BaseCache;
use crate::floor::{self, Share};
use crate::format::observation::Observation;
use crate::git::{CommitId, Git};
use crate::nofollow::OutputPath;
use crate::report::Shards;

/// Everything the input checks established, for the phases after them; never changed once
/// built.
pub(super) struct Resolved {
    pub clock: Clock,
    pub started: OffsetDateTime,
    pub stopwatch: Stopwatch,
    pub quiet: bool,
    pub mode: Mode,
    pub sign: Sign,
    pub services: Services,
    pub terminal: Terminal,
    pub runs: u32,
    pub timeout: Duration,
    pub git: Git,
    /// The repository's URL as the statement names it ([`super::policy::resource_uri`]).
    pub repository: String,
    pub subjects: Vec<SubjectArg>,
    pub signing_key: Option<SigningKey>,
    pub base: CommitId,
    pub head: CommitId,
    pub located: Option<acceptance::Located>,
    pub claim: ClaimInfo,
    pub runners: Vec<RunnerConfig>,
    pub paths: Paths,
    /// `--result-out`.
    pub result_out: Option<OutputPath>,
    /// Where the run's temporary directory goes (it exists).
    pub temp_base: PathBuf,
    /// `--attach`: the image, resolved by the input checks.
    pub attach: Option<AttachTarget>,
    /// The floor's lines per finished test and heartbeats; `None` with `--quiet`.
    pub live: Option<floor::progress::Live>,
    /// Which part of the whole run this one is.
    pub job: Job,
    /// `--base-cache`, read before any of the change's code runs; `None`: off.
    pub base_cache: Option<BaseCache>,
    /// The sandbox of every command of the floor and of a command judge.
    pub confinement: crate::sandbox::Confinement,
}

/// Which part of the whole run a run is.
pub(super) enum Job {
    /// The whole run.
    Whole,
    /// `--shard K/N`: the run writes its shard result to `out` (`--shard-out` as the input
    /// checks found it) and stops before the judge.
    Shard { plan: ShardPlan, out: OutputPath },
    /// `fuse`: the shard jobs the floor ran in, for the result, and where they were observed
    /// (a single run's observation is read from the environment).
    Fused {
        shards: Shards,
        observation: Observation,
    },
}

impl Job {
    /// The share of the floor's work this run does; `None`: all of it.
    pub(super) fn share(&self) -> Option<Share> {
        match self {
            Job::Shard { plan, .. } => Some(plan.share),
            Job::Whole | Job::Fused { .. } => None,
        }
    }
}
