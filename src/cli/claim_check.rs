//! `claim-check`'s flags (and `fuse`'s, which are the same), and the choices they take.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{RegistryArgs, SandboxArgs, ShardBy};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// The deterministic floor only
    Fast,
    /// The floor, then the judge on what the floor left open
    Full,
}

impl From<Mode> for crate::format::Mode {
    /// The mode as the run result and the statement record it.
    fn from(m: Mode) -> Self {
        match m {
            Mode::Fast => crate::format::Mode::Fast,
            Mode::Full => crate::format::Mode::Full,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Sign {
    /// Write the statement unsigned
    None,
    /// Sign with a private key (--key): a DSSE envelope and a Sigstore bundle
    Key,
    /// Sigstore keyless: a Fulcio certificate for the ambient OIDC identity, a Rekor entry
    Keyless,
}

#[derive(Debug, Args)]
pub struct ClaimCheckArgs {
    /// The repository to check
    #[arg(long, default_value = ".", value_name = "DIR", help_heading = "Inputs")]
    pub repo: PathBuf,
    /// The base commit [default: the pull request's base in GitHub Actions, else the merge-base
    /// of HEAD with the default branch]
    #[arg(long, value_name = "REV", help_heading = "Inputs")]
    pub base: Option<String>,
    /// The head commit [default: the pull request's head in GitHub Actions, else HEAD]
    #[arg(long, value_name = "REV", help_heading = "Inputs")]
    pub head: Option<String>,
    /// fast: the floor only; full: the floor and the judge
    #[arg(long, value_enum, default_value_t = Mode::Fast, help_heading = "Inputs")]
    pub mode: Mode,
    /// Name the claim explicitly: this file's criteria are the claim, whatever base holds
    /// [default: the criteria base..head adds or changes in .shipmoor/acceptance.yaml and
    /// .shipmoor/changes/*.yaml, each also as .draft]
    #[arg(long, value_name = "PATH", help_heading = "Inputs")]
    pub acceptance: Option<PathBuf>,
    /// The repository's URL as the statement names it (`resourceUri`, the commit subject)
    /// [default: the `origin` remote's URL; a repository with no remote, or a local one, needs
    /// this flag]
    #[arg(
        long,
        value_name = "URL",
        env = "SHIPMOOR_RESOURCE_URI",
        help_heading = "Inputs"
    )]
    pub resource_uri: Option<String>,
    /// Text to derive a draft claim from (a Markdown checklist) when the change claims no
    /// criterion [default: the pull request's description, then the commit messages]
    #[arg(long, value_name = "FILE", help_heading = "Inputs")]
    pub from: Option<PathBuf>,
    /// Run each bound test K times at each side; mixed results are `undecided`
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=20), help_heading = "Floor")]
    pub runs: u32,
    /// The limit for each command the floor runs, in seconds
    #[arg(long, default_value_t = 1800, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Floor")]
    pub timeout: u64,
    /// How to sign the attestation
    #[arg(long, value_enum, default_value_t = Sign::None, help_heading = "Signing")]
    pub sign: Sign,
    /// The private key for --sign key (PKCS#8 PEM, ECDSA P-256 or Ed25519; the password of an
    /// encrypted key comes from SHIPMOOR_KEY_PASSWORD)
    #[arg(long, value_name = "PATH", help_heading = "Signing")]
    pub key: Option<PathBuf>,
    /// Fulcio, the certificate authority for --sign keyless
    #[arg(
        long,
        value_name = "URL",
        env = "SHIPMOOR_FULCIO_URL",
        hide_env_values = true,
        default_value = "https://fulcio.sigstore.dev",
        help_heading = "Signing"
    )]
    pub fulcio_url: String,
    /// Rekor, the transparency log for --sign keyless
    #[arg(
        long,
        value_name = "URL",
        env = "SHIPMOOR_REKOR_URL",
        hide_env_values = true,
        default_value = "https://rekor.sigstore.dev",
        help_heading = "Signing"
    )]
    pub rekor_url: String,
    /// An RFC 3161 timestamp authority for --sign keyless [default: none]
    #[arg(
        long,
        value_name = "URL",
        env = "SHIPMOOR_TSA_URL",
        hide_env_values = true,
        help_heading = "Signing"
    )]
    pub tsa_url: Option<String>,
    /// An artifact the attestation also speaks for (repeatable)
    #[arg(
        long = "subject",
        value_name = "NAME=sha256:HEX",
        help_heading = "Signing"
    )]
    pub subjects: Vec<String>,
    /// An image the attestation speaks for: its digest is resolved in the registry before any
    /// work and made a subject, and the signed bundle is attached to it once the outputs are
    /// written (needs --sign key or keyless)
    #[arg(long, value_name = "REF", help_heading = "Signing")]
    pub attach: Option<String>,
    #[command(flatten, next_help_heading = "Signing")]
    pub registry: RegistryArgs,
    /// human: the terminal report; json: the whole result on stdout
    #[arg(long, value_enum, default_value_t = Format::Human, help_heading = "Outputs")]
    pub format: Format,
    /// Where the statement (the VSA) is written; a signed run writes its envelope and bundle
    /// beside it [default: .shipmoor/claim-check.vsa.json in the repository]
    #[arg(long, value_name = "PATH", help_heading = "Outputs")]
    pub vsa_out: Option<PathBuf>,
    /// Where the fix packet is written [default: .shipmoor/claim-check.fixes.json in the
    /// repository]
    #[arg(long, value_name = "PATH", help_heading = "Outputs")]
    pub fixes_out: Option<PathBuf>,
    /// Where verify.md, the report for people, is written [default: .shipmoor/verify.md in the
    /// repository]
    #[arg(long, value_name = "PATH", help_heading = "Outputs")]
    pub report_out: Option<PathBuf>,
    /// Where the evidence the statement cites (records and blobs) is written [default:
    /// .shipmoor/evidence in the repository]
    #[arg(long, value_name = "DIR", help_heading = "Outputs")]
    pub evidence_dir: Option<PathBuf>,
    /// Also write the whole result as JSON (as --format json prints it) to this file [default:
    /// not written]
    #[arg(long, value_name = "PATH", help_heading = "Outputs")]
    pub result_out: Option<PathBuf>,
    /// When the run ends in an error rather than a verdict, write the error document
    /// (`claim_check.error.v1`: every problem with its file, line and hint) to this file; the
    /// Action turns it into annotations
    #[arg(long, value_name = "PATH", hide = true)]
    pub error_out: Option<PathBuf>,
    /// Where base's observations are kept across pushes, to be reused while base, head's test
    /// files, the runners' settings, the toolchain and the lock files are the same; `none`
    /// turns it off (for tests that read the network or the clock) [default: .shipmoor/cache
    /// in the repository]
    #[arg(
        long,
        value_name = "DIR",
        env = "SHIPMOOR_BASE_CACHE",
        help_heading = "Floor"
    )]
    pub base_cache: Option<String>,
    /// Where worktrees and build outputs go [default: the system's temporary directory]
    #[arg(
        long,
        value_name = "DIR",
        env = "SHIPMOOR_TMPDIR",
        hide_env_values = true,
        help_heading = "Floor"
    )]
    pub temp_dir: Option<PathBuf>,
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// No progress lines on stderr
    #[arg(long, short, help_heading = "Outputs")]
    pub quiet: bool,
    /// Pin the clock (RFC 3339), as SOURCE_DATE_EPOCH does
    #[arg(long, hide = true, value_name = "RFC3339")]
    pub current_time: Option<String>,
    /// Run only shard K of N (1 ≤ K ≤ N) and write its shard result to --shard-out for
    /// `shipmoor fuse`; no verdict, no signature [default with --shard-out: CI_NODE_INDEX and
    /// CI_NODE_TOTAL (GitLab), or BUILDKITE_PARALLEL_JOB and BUILDKITE_PARALLEL_JOB_COUNT]
    #[arg(long, value_name = "K/N", help_heading = "Shards")]
    pub shard: Option<String>,
    /// Where the shard result (shard.json and evidence/) is written
    #[arg(long, value_name = "DIR", help_heading = "Shards")]
    pub shard_out: Option<PathBuf>,
    /// How the shards split the work
    #[arg(long, value_enum, default_value_t = ShardBy::Criterion, help_heading = "Shards")]
    pub shard_by: ShardBy,
}
