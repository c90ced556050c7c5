//! The command line, as clap types only; [`crate::commands`] runs them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::floor::cache::gc::Size;

mod agent;
mod claim_check;
mod sandbox;
mod verify_bundle;
pub use agent::{own_flags, ExplainArgs, HookArgs, HookCommand, McpArgs};
use agent::{EXPLAIN_AFTER_HELP, HOOK_AFTER_HELP, MCP_AFTER_HELP};
pub use claim_check::{ClaimCheckArgs, Format, Mode, Sign};
pub use sandbox::{SandboxArgs, SandboxMode};
pub use verify_bundle::VerifyBundleArgs;
use verify_bundle::VERIFY_BUNDLE_AFTER_HELP;

#[derive(Debug, Parser)]
#[command(
    name = "shipmoor",
    version,
    about = "Shipmoor Claim Check: decide, criterion by criterion, whether a change meets its acceptance criteria",
    after_help = TOP_AFTER_HELP
)]
pub struct Cli {
    /// When to colour the terminal report and the help
    ///
    /// auto colours a terminal unless NO_COLOR is set (non-empty) or TERM=dumb, and a pipe too
    /// when CLICOLOR_FORCE is set (not 0); always and never beat the environment.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value_t = ColorChoice::Auto,
        value_name = "WHEN"
    )]
    pub color: ColorChoice,
    #[command(subcommand)]
    pub command: Commands,
}

const TOP_AFTER_HELP: &str = "\
Get started:
  shipmoor acceptance tags          each criterion's tag, for its test's name
  shipmoor claim-check --base main  the floor at base and head, to a verdict
  shipmoor replay .shipmoor/claim-check.vsa.json --allow-unsigned
                                    verify the statement offline, step by step
  shipmoor admit --policy policy.yaml --image REGISTRY/REPO:TAG
                                    admit an image on its attached VSA, or not

Exit codes (claim-check):
  0  READY or READY WITH GAPS
  1  BLOCKED
  4  INCONCLUSIVE
  2  usage or input error (nothing is written)
  3  engine crash (a bug; never reported as a verdict)
  130  interrupted (Ctrl-C)

Each command's flags, examples and exit codes: shipmoor <command> --help";

pub use crate::colour::ColorChoice;

#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Run the whole check: load intent, bind, floor, fuse, write the outputs
    #[command(after_help = CLAIM_CHECK_AFTER_HELP)]
    ClaimCheck(Box<ClaimCheckArgs>),
    /// Work with the acceptance set
    #[command(subcommand, after_help = ACCEPTANCE_AFTER_HELP)]
    Acceptance(AcceptanceCommand),
    /// Verify a prior attestation offline, step by step
    #[command(after_help = REPLAY_AFTER_HELP)]
    Replay(Box<ReplayArgs>),
    /// Admit an artifact or not: its VSA checked in the SLSA order, then against a policy
    #[command(after_help = ADMIT_AFTER_HELP)]
    Admit(Box<AdmitArgs>),
    /// Verify a Sigstore bundle (cosign's flag names; the sigstore-conformance CLI protocol)
    #[command(after_help = VERIFY_BUNDLE_AFTER_HELP)]
    VerifyBundle(VerifyBundleArgs),
    /// GitHub Actions integration, used by the Action's steps
    // Plumbing for action.yml, not for people: runnable, but kept out of the top-level help.
    #[command(subcommand, hide = true, after_help = ACTION_AFTER_HELP)]
    Action(ActionCommand),
    /// Attach a signed VSA (its Sigstore bundle) to an image in its OCI registry
    #[command(after_help = ATTACH_AFTER_HELP)]
    Attach(AttachArgs),
    /// Work with the evidence store
    #[command(subcommand, after_help = EVIDENCE_AFTER_HELP)]
    Evidence(EvidenceCommand),
    /// Write a key pair for `claim-check --sign key`: shipmoor.key and shipmoor.pub (P-256)
    Keygen(KeygenArgs),
    /// Serve the tools to a coding agent over the Model Context Protocol, on stdio
    #[command(after_help = MCP_AFTER_HELP)]
    Mcp(McpArgs),
    /// Answer a coding agent's Stop hook: keep it working while a required criterion is open
    #[command(subcommand, after_help = HOOK_AFTER_HELP)]
    Hook(HookCommand),
    /// Explain one criterion of the last run: its rule, its evidence, what would change it
    #[command(after_help = EXPLAIN_AFTER_HELP)]
    Explain(ExplainArgs),
    /// Fuse `claim-check --shard` results into one verdict and its outputs, signed once
    ///
    /// Checks that the shards agree and that their evidence is as they wrote it, merges their
    /// evidence, runs the judge (--mode full), and writes and signs every output exactly as one
    /// claim-check run in --repo would.
    // claim-check's flags, shared; those of the floor and of a shard are the shards' business.
    #[command(
        after_help = FUSE_AFTER_HELP,
        mut_arg("shard", |a| a.hide(true)),
        mut_arg("shard_out", |a| a.hide(true)),
        mut_arg("shard_by", |a| a.hide(true)),
        mut_arg("runs", |a| a.hide(true)),
        mut_arg("timeout", |a| a.hide(true)),
        mut_arg("attach", |a| a.hide(true))
    )]
    Fuse(Box<FuseArgs>),
}

const FUSE_AFTER_HELP: &str = "\
Examples:
  shipmoor claim-check --base main --shard 1/3 --shard-out shard-1   (one per CI job)
  shipmoor fuse --base main shard-1 shard-2 shard-3

The shards must agree (base, head, acceptance digest, policy, shard count, split, tool
version), each K of 1..N present once, every criterion in exactly one shard, every evidence
file as the shard wrote it; anything else is an input error (exit 2) naming the shard, and
nothing is written. --base and --head, when given, must name the shards' commits.

Exit codes: as claim-check (0 READY or READY WITH GAPS, 1 BLOCKED, 4 INCONCLUSIVE, 2 input
error, 3 crash).";

/// `shipmoor fuse`: claim-check's own flags (outputs, mode, judge and signing), then the shards.
#[derive(Debug, Args)]
pub struct FuseArgs {
    #[command(flatten)]
    pub run: ClaimCheckArgs,
    /// Each shard's shard.json SHA-256 as its observe job published it (JSON, keys `digest-K`)
    #[arg(long, value_name = "JSON")]
    pub expect_digests: Option<String>,
    /// The shards' directories (each `claim-check --shard-out`)
    #[arg(required = true, value_name = "SHARD_DIR")]
    pub shards: Vec<PathBuf>,
}

/// How `--shard` splits the entries (book: sharding.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShardBy {
    /// Round robin over the criteria in acceptance order (the pass-to-pass guard last)
    Criterion,
    /// Round robin over the runners; each criterion goes with the runner its tests are in, a
    /// criterion bound to no runner to shard 1
    Runner,
}

impl ShardBy {
    pub fn as_str(self) -> &'static str {
        match self {
            ShardBy::Criterion => "criterion",
            ShardBy::Runner => "runner",
        }
    }
}

#[derive(Debug, Args)]
#[command(after_help = KEYGEN_AFTER_HELP)]
pub struct KeygenArgs {
    /// Where to write shipmoor.key and shipmoor.pub
    #[arg(long, value_name = "DIR", default_value = ".", help_heading = "Output")]
    pub output_dir: PathBuf,
    /// Replace key files that exist (whoever holds the old public key can no longer verify new
    /// signatures)
    #[arg(long, help_heading = "Output")]
    pub force: bool,
}

#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Remove the blobs and records no kept statement cites, and tidy the base cache
    ///
    /// The kept statements are the attestations beside the store (every `*.vsa.json`,
    /// `*.vsa.dsse.json` and `*.vsa.sigstore.json` in its parent directory) and every --keep
    /// file. What they cite stays: their evidence records, and the logs and results files
    /// those records point to. Signatures are not checked: this is housekeeping, not a
    /// verification.
    ///
    /// The base cache (--base-cache) loses the entries no run can reuse (one that does not
    /// check out, one another shipmoor release made, one whose items are missing or changed,
    /// one a later entry of the same key hides), then the oldest entries beyond --cache-keep
    /// and until the rest, with the items they cite, fit --cache-max-size, then every item no
    /// kept entry cites and anything else in its v1/ directory. Its CACHEDIR.TAG stays.
    #[command(after_help = GC_AFTER_HELP)]
    Gc {
        /// The evidence store
        #[arg(
            long,
            value_name = "DIR",
            default_value = ".shipmoor/evidence",
            help_heading = "Inputs"
        )]
        evidence_dir: PathBuf,
        /// Another attestation whose evidence must stay (repeatable)
        #[arg(long, value_name = "FILE", help_heading = "Inputs")]
        keep: Vec<PathBuf>,
        /// List what would be removed, and remove nothing
        #[arg(long, help_heading = "Output")]
        dry_run: bool,
        /// The base cache to tidy as well; `none` leaves it alone [default: .shipmoor/cache in
        /// the repository]
        #[arg(
            long,
            value_name = "DIR",
            env = "SHIPMOOR_BASE_CACHE",
            help_heading = "Base cache"
        )]
        base_cache: Option<String>,
        /// Keep at most N base cache entries, the newest
        #[arg(
            long,
            value_name = "N",
            default_value_t = 20,
            help_heading = "Base cache"
        )]
        cache_keep: usize,
        /// Keep at most SIZE of base cache entries and the items they cite, the newest: bytes,
        /// or K, M, G (powers of 1024)
        #[arg(
            long,
            value_name = "SIZE",
            default_value = "1G",
            value_parser = Size::parse,
            help_heading = "Base cache"
        )]
        cache_max_size: Size,
    },
}

const EVIDENCE_AFTER_HELP: &str = "\
Examples:
  shipmoor evidence gc --dry-run
  shipmoor evidence gc

Exit codes:
  0  done
  2  usage or input error
  3  engine crash";

const GC_AFTER_HELP: &str = "\
Examples:
  shipmoor evidence gc --dry-run
  shipmoor evidence gc --keep releases/1.4/claim-check.vsa.sigstore.json
  shipmoor evidence gc --cache-keep 5 --cache-max-size 500M
  shipmoor evidence gc --base-cache none

Exit codes:
  0  done (or, with --dry-run, listed)
  2  usage or input error: no store there, no statement to keep, a kept
     file that is no attestation, a size --cache-max-size does not read, or
     a base cache directory that is a symlink
  3  engine crash";

const KEYGEN_AFTER_HELP: &str = "\
The private key is encrypted when SHIPMOOR_KEY_PASSWORD is set (claim-check
reads the same variable). Keep shipmoor.key secret (a CI secret); give
shipmoor.pub to whoever replays or admits.

Examples:
  shipmoor keygen
  SHIPMOOR_KEY_PASSWORD=... shipmoor keygen --output-dir ~/.config/shipmoor
  shipmoor claim-check --sign key --key shipmoor.key

Exit codes:
  0  the key pair is written
  2  usage or input error: a key file exists already (pass --force), or the
     directory cannot be written
  3  engine crash";

const CLAIM_CHECK_AFTER_HELP: &str = "\
Examples:
  shipmoor claim-check --base main
  shipmoor claim-check --acceptance .shipmoor/changes/refund.yaml --runs 3
  shipmoor claim-check --sign key --key claim-check.key --subject app=sha256:HEX
  shipmoor claim-check --mode full --format json > result.json

Environment:
  SOURCE_DATE_EPOCH        pin the clock: the same inputs give the same bytes
  COLUMNS                  wrap the report at this width (a terminal's own
                           width when stdout is one; a pipe: no wrapping)
  SHIPMOOR_HEARTBEAT_SECS  seconds of silence before a progress heartbeat
                           on stderr [default: 10]

Exit codes:
  0  READY or READY WITH GAPS
  1  BLOCKED
  4  INCONCLUSIVE
  2  usage or input error: bad flags, an invalid acceptance file, a dirty
     tree, a missing runner tool, a change that claims nothing; nothing is
     written
  3  engine crash (a bug; never reported as a verdict); nothing is written
  130  interrupted (Ctrl-C): the tests stopped, the worktrees removed,
     nothing written";

const ACCEPTANCE_AFTER_HELP: &str = "\
Examples:
  shipmoor acceptance init
  shipmoor acceptance lint
  shipmoor acceptance tags --where
  shipmoor acceptance commit

Exit codes:
  0  done (lint: every acceptance file is valid)
  2  usage or input error: every problem, with its file, line and fix
  3  engine crash";

const REPLAY_AFTER_HELP: &str = "\
Examples:
  shipmoor replay .shipmoor/claim-check.vsa.sigstore.json --key claim-check.pub
  shipmoor replay .shipmoor/claim-check.vsa.json --allow-unsigned --rerun
  shipmoor replay claim-check.vsa.sigstore.json \\
    --certificate-identity \\
    https://github.com/acme/shop/.github/workflows/ci.yml@refs/heads/main \\
    --certificate-oidc-issuer https://token.actions.githubusercontent.com

Exit codes:
  0  valid: every step passed
  1  invalid: the failed step is named
  2  usage or input error
  3  engine crash";

const ADMIT_AFTER_HELP: &str = "\
Examples:
  shipmoor admit --policy policy.yaml --subject sha256:HEX \\
    --attestation claim-check.vsa.sigstore.json
  shipmoor admit --policy policy.yaml --image registry.example.com/acme/shop:1.4
  shipmoor admit --policy policy.yaml --image 127.0.0.1:5000/app:v1 \\
    --allow-http-registry --format json
  shipmoor admit --policy policy.yaml --export kyverno \\
    --image 'registry.example.com/acme/*' > kyverno-policy.yaml

--export kyverno|kyverno-ivp|policy-controller writes the engine's policy and decides
nothing; what the engine cannot check is listed at the top of it and on stderr.

Exit codes:
  0  allow (with --export: the policy is written)
  1  deny: every reason is listed
  2  usage or input error (a bad policy, an unreachable registry, a policy an engine
     cannot take)
  3  engine crash";

const ACTION_AFTER_HELP: &str = "\
Examples:
  shipmoor action event --body-out pr-body.md
  shipmoor action report --result claim-check.result.json --exit-code 1
  shipmoor action gate --verdict BLOCKED --exit-code 1 --fail-on BLOCKED
  GITHUB_TOKEN=… shipmoor action comment --result claim-check.result.json

Exit codes:
  0  done (gate: the verdict does not fail the job; comment: posted, updated, or
     skipped with a notice or warning)
  1  gate: the verdict fails the job, or no verdict was reached
  2  usage or input error
  3  engine crash";

const ATTACH_AFTER_HELP: &str = "\
Examples:
  shipmoor attach registry.example.com/acme/shop:1.4 \\
    --attestation .shipmoor/claim-check.vsa.sigstore.json
  shipmoor attach 127.0.0.1:5000/app:v1 --allow-http-registry \\
    --attestation .shipmoor/claim-check.vsa.sigstore.json

Exit codes:
  0  attached (the artifact's digest and how it is indexed are printed)
  2  usage or input error: a reference without tag or digest, a file that is
     no bundle of a statement about the image, a registry that cannot be
     reached or refuses
  3  engine crash";

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The image: `registry/repository:tag` or `registry/repository@sha256:HEX`
    #[arg(value_name = "REF")]
    pub reference: String,
    /// The Sigstore bundle v0.3 (`claim-check.vsa.sigstore.json`) whose statement names the
    /// image's digest among its subjects
    #[arg(long, value_name = "FILE", help_heading = "Inputs")]
    pub attestation: PathBuf,
    /// Which of cosign's forms to write: the bundle as an OCI 1.1 referrer (cosign v3), the
    /// classic `sha256-<hex>.att` image (what Kyverno's verifyImages and the policy-controller
    /// read), or both
    #[arg(long, value_enum, default_value_t = AttachForm::Both, help_heading = "Inputs")]
    pub form: AttachForm,
    #[command(flatten, next_help_heading = "Registry")]
    pub registry: RegistryArgs,
    /// human: what was attached, as lines; json: the artifact, its subject and `via` as
    /// `claim_check.attach.v1`
    #[arg(long, value_enum, default_value_t = Format::Human, help_heading = "Output")]
    pub format: Format,
}

/// `attach --form`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AttachForm {
    /// The Sigstore bundle as an OCI 1.1 referrer (or the referrers tag schema's index)
    Bundle,
    /// The DSSE envelope as a layer of the `sha256-<hex>.att` image
    Classic,
    /// Both forms
    Both,
}

impl From<AttachForm> for crate::oci::Form {
    fn from(f: AttachForm) -> Self {
        match f {
            AttachForm::Bundle => crate::oci::Form::Bundle,
            AttachForm::Classic => crate::oci::Form::Classic,
            AttachForm::Both => crate::oci::Form::Both,
        }
    }
}

/// How an OCI registry is spoken to.
#[derive(Debug, Args, Clone, Copy)]
pub struct RegistryArgs {
    /// Talk plain HTTP to the registry (a registry on loopback or a private network) [default:
    /// HTTPS]
    #[arg(long)]
    pub allow_http_registry: bool,
}

#[derive(Debug, Subcommand)]
pub enum ActionCommand {
    /// Write step outputs, the job summary and annotations for a run
    #[command(after_help = ACTION_REPORT_AFTER_HELP)]
    Report {
        /// The result JSON written by `claim-check --result-out` (absent when the run failed)
        #[arg(long, value_name = "PATH", help_heading = "Inputs")]
        result: PathBuf,
        /// claim-check's exit code
        #[arg(
            long,
            value_name = "N",
            allow_hyphen_values = true,
            help_heading = "Inputs"
        )]
        exit_code: i32,
        /// The repository the run was in (relative output paths are resolved from it)
        #[arg(long, default_value = ".", value_name = "DIR", help_heading = "Inputs")]
        repo: PathBuf,
        /// The error document `claim-check --error-out` wrote when the run reached no verdict:
        /// each of its problems becomes an `::error` at its file and line
        #[arg(long, value_name = "PATH", help_heading = "Inputs")]
        errors: Option<PathBuf>,
        /// The run was given the Action's base cache: also write the output `base-cache-stored`,
        /// `true` when the run stored a new base cache entry (the cache is saved then), else
        /// `false`
        #[arg(long, help_heading = "Output")]
        base_cache_stored_output: bool,
    },
    /// Print the pull request's number and its base and head commits from GITHUB_EVENT_PATH
    /// (`number=`, `base=`, `head=` lines; empty outside pull requests) and write its body to a
    /// file
    #[command(after_help = ACTION_EVENT_AFTER_HELP)]
    Event {
        /// Where to write the body (an empty file when the body is null) [default: not written]
        #[arg(long, value_name = "PATH", help_heading = "Output")]
        body_out: Option<PathBuf>,
    },
    /// Fail (exit 1) when the verdict is listed in fail-on, or when no verdict was reached
    #[command(after_help = ACTION_GATE_AFTER_HELP)]
    Gate {
        /// The run's verdict (READY, READY WITH GAPS, INCONCLUSIVE, BLOCKED), as the report step
        /// wrote it
        #[arg(long, value_name = "VERDICT", help_heading = "Inputs")]
        verdict: String,
        /// claim-check's exit code, which must go with the verdict
        #[arg(
            long,
            value_name = "N",
            allow_hyphen_values = true,
            help_heading = "Inputs"
        )]
        exit_code: i32,
        /// Comma-separated verdicts that fail the job
        #[arg(
            long,
            value_name = "LIST",
            default_value = "BLOCKED,INCONCLUSIVE",
            help_heading = "Policy"
        )]
        fail_on: String,
    },
    /// Post the run's pull request comment, or update it in place (one per pull request,
    /// workflow, job and working directory, found by a hidden marker); the token comes from
    /// GITHUB_TOKEN, the pull request from GITHUB_EVENT_PATH
    #[command(after_help = ACTION_COMMENT_AFTER_HELP)]
    Comment {
        /// The result JSON written by `claim-check --result-out`
        #[arg(long, value_name = "PATH", help_heading = "Inputs")]
        result: PathBuf,
        /// The Action's working directory, part of what tells this job's comment from another
        /// claim-check job's
        #[arg(long, default_value = ".", value_name = "DIR", help_heading = "Inputs")]
        working_directory: String,
    },
}

const ACTION_REPORT_AFTER_HELP: &str = "\
Examples:
  shipmoor action report --result claim-check.result.json --exit-code 1
  shipmoor action report --result missing.json --exit-code 2 --repo app

Exit codes:
  0  the outputs, summary and annotations are written
  2  usage or input error (an unreadable result)
  3  engine crash";

const ACTION_EVENT_AFTER_HELP: &str = "\
Examples:
  shipmoor action event
  shipmoor action event --body-out pr-body.md

Exit codes:
  0  printed (empty outside pull requests)
  2  usage or input error (an unreadable event file)
  3  engine crash";

const ACTION_COMMENT_AFTER_HELP: &str = "\
Examples:
  shipmoor action comment --result claim-check.result.json
  shipmoor action comment --result claim-check.result.json --working-directory app

Environment:
  GITHUB_TOKEN       the token (never printed); none: a notice, no comment
  GITHUB_API_URL     the REST API [default: https://api.github.com]
  GITHUB_REPOSITORY  owner/name [default: the event's repository]
  GITHUB_EVENT_PATH, GITHUB_EVENT_NAME, GITHUB_WORKFLOW_REF, GITHUB_JOB

Exit codes:
  0  posted or updated; or skipped with a notice (no pull request, a fork's
     pull request, a token that may not write) or a warning (another HTTP
     failure): the comment never fails the job
  2  usage or input error (an unreadable result)
  3  engine crash";

const ACTION_GATE_AFTER_HELP: &str = "\
Examples:
  shipmoor action gate --verdict BLOCKED --exit-code 1
  shipmoor action gate --verdict INCONCLUSIVE --exit-code 4 --fail-on BLOCKED

Exit codes:
  0  the verdict does not fail the job
  1  the verdict is listed in --fail-on, or no verdict was reached
  2  usage error";

/// How a signature is checked: a public key, or a certificate identity and issuer against a
/// trusted root.
#[derive(Debug, Args, Clone)]
pub struct SignatureArgs {
    /// A PEM public key (SPKI) whose private key must have made the signature
    #[arg(long, value_name = "PATH", help_heading = "Signature")]
    pub key: Option<PathBuf>,
    /// The identity (SAN) the signing certificate must name
    #[arg(long, value_name = "IDENTITY", help_heading = "Signature")]
    pub certificate_identity: Option<String>,
    /// The OIDC issuer the signing certificate must name
    #[arg(long, value_name = "URL", help_heading = "Signature")]
    pub certificate_oidc_issuer: Option<String>,
    /// The Sigstore trusted root (JSON) [default: the Sigstore public-good root]
    #[arg(long, value_name = "PATH", help_heading = "Signature")]
    pub trusted_root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The attestation: the statement, a DSSE envelope or a Sigstore bundle
    #[arg(value_name = "ATTESTATION")]
    pub attestation: PathBuf,
    #[command(flatten)]
    pub signature: SignatureArgs,
    /// Accept an unsigned statement (the signature step is then skipped, and says so)
    #[arg(long, help_heading = "Signature")]
    pub allow_unsigned: bool,
    /// The commit the attestation must be about [default: the repository's HEAD]
    #[arg(long, value_name = "SHA", help_heading = "Expectations")]
    pub commit: Option<String>,
    /// An artifact the attestation must also name (repeatable)
    #[arg(
        long = "subject",
        value_name = "NAME=sha256:HEX",
        help_heading = "Expectations"
    )]
    pub subjects: Vec<String>,
    /// Re-execute the floor at the recorded commits and compare outcomes
    #[arg(long, help_heading = "Expectations")]
    pub rerun: bool,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// The evidence store the attestation cites [default: .shipmoor/evidence beside it]
    // The same name as claim-check's flag that writes it; `--evidence` was its first name.
    #[arg(
        long = "evidence-dir",
        visible_alias = "evidence",
        value_name = "DIR",
        help_heading = "Inputs"
    )]
    pub evidence: Option<PathBuf>,
    /// The repository (for HEAD, and for --rerun)
    #[arg(long, default_value = ".", value_name = "DIR", help_heading = "Inputs")]
    pub repo: PathBuf,
    /// human: each step and its outcome; json: the steps as claim_check.replay.v1
    #[arg(long, value_enum, default_value_t = Format::Human, help_heading = "Output")]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct AdmitArgs {
    /// The admission policy (YAML; see the book's admission page); a signer given under
    /// Signature replaces its `signers`
    #[arg(long, value_name = "FILE", help_heading = "Expectations")]
    pub policy: PathBuf,
    /// The artifact's digest, sha256:HEX [default with --image: the image's manifest digest]
    #[arg(long, value_name = "sha256:HEX", help_heading = "Expectations")]
    pub subject: Option<String>,
    /// The attestation: a DSSE envelope or a Sigstore bundle
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present_any = ["image", "export"],
        conflicts_with_all = ["image", "export"],
        help_heading = "Inputs"
    )]
    pub attestation: Option<PathBuf>,
    /// An image whose attached VSAs are checked (REGISTRY/REPO:TAG or …@sha256:HEX); with
    /// --export, a glob of the images the engine's policy governs (`*`: any characters, `/`
    /// too; repeatable)
    #[arg(long, value_name = "REF", help_heading = "Inputs")]
    pub image: Vec<String>,
    /// Talk plain HTTP to the registry (a registry on loopback or a private network) [default:
    /// HTTPS]
    #[arg(long, conflicts_with = "export", help_heading = "Inputs")]
    pub allow_http_registry: bool,
    #[command(flatten)]
    pub signature: SignatureArgs,
    /// human: allow or deny with every reason; json: the decision as claim_check.admit.v1
    #[arg(long, value_enum, default_value_t = Format::Human, help_heading = "Output")]
    pub format: Format,
    /// Decide nothing: write to stdout the engine's policy that checks what the policy checks,
    /// and on stderr what only `shipmoor admit` checks (needs --image)
    #[arg(
        long,
        value_enum,
        value_name = "ENGINE",
        conflicts_with = "subject",
        help_heading = "Output"
    )]
    pub export: Option<ExportEngine>,
}

/// The engines `admit --export` writes a policy for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportEngine {
    /// A Kyverno ClusterPolicy (`verifyImages`, conditions in JMESPath)
    Kyverno,
    /// A Kyverno ImageValidatingPolicy (CEL; keyless signers only)
    KyvernoIvp,
    /// A Sigstore policy-controller ClusterImagePolicy (Rego)
    PolicyController,
}

#[derive(Debug, Args)]
pub struct AcceptanceArgs {
    /// The repository
    #[arg(long, default_value = ".", value_name = "DIR", help_heading = "Inputs")]
    pub repo: PathBuf,
    /// One acceptance file [default: every acceptance file, .shipmoor/acceptance.yaml and
    /// .shipmoor/changes/*.yaml, each also as .draft, with .shipmoor/config.yaml]
    #[arg(long, value_name = "PATH", help_heading = "Inputs")]
    pub acceptance: Option<PathBuf>,
    /// The commit the change starts from, to tell its claim from inherited criteria
    /// [default: as for claim-check]
    #[arg(long, value_name = "REV", help_heading = "Inputs")]
    pub base: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum AcceptanceCommand {
    /// Validate the acceptance set, reporting every problem at once
    #[command(after_help = LINT_AFTER_HELP)]
    Lint {
        #[command(flatten)]
        args: AcceptanceArgs,
        /// human: the report; json: the lint result as `claim_check.lint.v1`
        #[arg(long, value_enum, default_value_t = Format::Human, help_heading = "Output")]
        format: Format,
    },
    /// Print each criterion's tag
    #[command(after_help = TAGS_AFTER_HELP)]
    Tags {
        #[command(flatten)]
        args: AcceptanceArgs,
        /// human: one criterion a line; json: the criteria and their tags as `claim_check.tags.v1`
        #[arg(long, value_enum, default_value_t = Format::Human, help_heading = "Output")]
        format: Format,
        /// Also print where each tag occurs: the tracked files whose path or contents carry it,
        /// as they are in the checkout (the same scan the floor runs on the head worktree)
        #[arg(long = "where", help_heading = "Output")]
        where_: bool,
    },
    /// Promote the change's own draft (`<file>.yaml.draft`) to `<file>.yaml` once it validates
    #[command(after_help = COMMIT_AFTER_HELP)]
    Commit {
        #[command(flatten)]
        args: AcceptanceArgs,
        /// Drop the draft's criteria whose `confidence` is below X (0 to 1), naming each;
        /// criteria without a confidence are kept
        #[arg(long, value_name = "X", value_parser = confidence, help_heading = "Output")]
        min_confidence: Option<f64>,
    },
    /// Start this change's acceptance file, named after the branch
    ///
    /// A commented starter as .shipmoor/changes/<branch>.yaml (on the default branch:
    /// .shipmoor/acceptance.yaml), its criteria drafted from --from when given, else an example
    /// to edit; plus .shipmoor/config.yaml and .shipmoor/.gitignore (which keeps the run's
    /// outputs out of commits) when they are missing.
    #[command(after_help = INIT_AFTER_HELP)]
    Init {
        /// The repository
        #[arg(long, default_value = ".", value_name = "DIR", help_heading = "Inputs")]
        repo: PathBuf,
        /// Text to draft the criteria from (a Markdown checklist): a file, or `-` for standard
        /// input [default: an example criterion to edit]
        #[arg(long, value_name = "FILE", help_heading = "Inputs")]
        from: Option<PathBuf>,
        /// Replace the change's acceptance file when it exists
        #[arg(long, help_heading = "Output")]
        force: bool,
    },
    /// Draft criteria from the change's own words as the branch's own
    /// .shipmoor/changes/<branch>.yaml.draft (on the default branch or detached:
    /// .shipmoor/acceptance.yaml.draft)
    ///
    /// The text: --from, --from-commits, or both; without either, the pull request in
    /// GITHUB_EVENT_PATH (its title and description). --linked-issues adds the issues the pull
    /// request closes. Each criterion is written with `required`, its `confidence` (0 to 1, the
    /// reason beside it) and its `source` (which text, which line); a criterion whose text an
    /// existing draft already has keeps that draft's id, and so its tag.
    #[command(after_help = DERIVE_AFTER_HELP)]
    Derive {
        /// The repository
        #[arg(long, default_value = ".", value_name = "DIR", help_heading = "Inputs")]
        repo: PathBuf,
        /// A text to derive from (an issue, a task, a pull request's description): a file, or
        /// `-` for standard input
        #[arg(long, value_name = "FILE", help_heading = "Inputs")]
        from: Option<PathBuf>,
        /// Derive from the messages of the commits in BASE..HEAD (oldest first)
        #[arg(long, value_name = "BASE..HEAD", help_heading = "Inputs")]
        from_commits: Option<String>,
        /// Also derive from the issues the pull request in GITHUB_EVENT_PATH closes (`Fixes
        /// #N`, `Closes owner/repo#N`, `Resolves #N`), read through the REST API
        /// (GITHUB_API_URL) with GITHUB_TOKEN
        #[arg(long, help_heading = "Inputs")]
        linked_issues: bool,
        /// Also ask the judges of the project settings (a command judge: the request,
        /// `claim_check.propose.v1`, on its stdin; a chat judge: as the user message) to propose
        /// criteria the text implies; each is marked `proposed by the judge`, with a confidence
        /// of 0.5
        #[arg(long, help_heading = "Inputs")]
        judge: bool,
        /// Write the draft even when this change's acceptance file is committed already, or
        /// when the existing draft does not validate (its ids are then not kept)
        #[arg(long, help_heading = "Output")]
        force: bool,
    },
}

const LINT_AFTER_HELP: &str = "\
Examples:
  shipmoor acceptance lint
  shipmoor acceptance lint --acceptance .shipmoor/changes/refund.yaml
  shipmoor acceptance lint --base main

Exit codes:
  0  every acceptance file is valid
  2  usage or input error: every problem, with its file, line and fix
  3  engine crash";

const TAGS_AFTER_HELP: &str = "\
Examples:
  shipmoor acceptance tags
  shipmoor acceptance tags --where
  shipmoor acceptance tags --format json

Exit codes:
  0  printed
  2  usage or input error: an invalid acceptance file
  3  engine crash";

const COMMIT_AFTER_HELP: &str = "\
Examples:
  shipmoor acceptance commit
  shipmoor acceptance commit --acceptance .shipmoor/changes/refund.yaml.draft
  shipmoor acceptance commit --min-confidence 0.8

Exit codes:
  0  the draft is promoted, or there is no draft to commit
  2  usage or input error: a draft that does not validate, several drafts and
     no --acceptance, the committed file already there, or --min-confidence
     that would drop every criterion
  3  engine crash";

/// A `--min-confidence` that is no number from 0 to 1 (as given).
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not a number from 0 to 1 (e.g. 0.8)")]
struct ConfidenceError(String);

/// `--min-confidence`: a number from 0 to 1.
fn confidence(s: &str) -> Result<f64, ConfidenceError> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(ConfidenceError(s.to_string())),
    }
}

const INIT_AFTER_HELP: &str = "\
Examples:
  shipmoor acceptance init
  shipmoor acceptance init --from pr-body.md
  gh pr view --json body -q .body | shipmoor acceptance init --from -

Exit codes:
  0  the starter is written
  2  usage or input error: not a git repository, the change's file exists
     without --force, or no checklist item in --from
  3  engine crash";

const DERIVE_AFTER_HELP: &str = "\
Examples:
  shipmoor acceptance derive                       (in a pull request's workflow)
  shipmoor acceptance derive --linked-issues       (and the issues it closes)
  shipmoor acceptance derive --from task.md
  gh pr view --json body -q .body | shipmoor acceptance derive --from -
  shipmoor acceptance derive --from-commits main..HEAD
  shipmoor acceptance derive --from task.md --judge
  shipmoor acceptance commit --min-confidence 0.8  (then promote the draft)

Environment:
  GITHUB_EVENT_PATH  the pull request, when neither --from nor --from-commits
                     is given
  GITHUB_TOKEN       --linked-issues: the token (never printed)
  GITHUB_API_URL     --linked-issues: the REST API [default:
                     https://api.github.com]
  GITHUB_REPOSITORY  --linked-issues: owner/name of `#N` [default: the
                     event's repository]

Exit codes:
  0  the draft is written; each criterion printed with its confidence and tag
  2  usage or input error (nothing is written): a --from file that cannot be
     read, a malformed event payload, a range that does not resolve, text
     with no criterion in it, no text to derive from, --judge without a
     judge, or this change's acceptance file committed already without --force
  3  engine crash";

#[cfg(test)]
#[path = "cli_tests.rs"]
mod tests;
