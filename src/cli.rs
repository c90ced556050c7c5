//! The command line, as clap types only; [`crate::commands`] runs them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "shipmoor",
    version,
    about = "Shipmoor Claim Check: decide, criterion by criterion, whether a change meets its acceptance criteria",
    after_help = "Exit codes: 0 READY or READY WITH GAPS · 1 BLOCKED · 4 INCONCLUSIVE · 2 usage or input error · 3 engine crash"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Commands,
}

#[derive(Debug, Subcommand)]
pub enum Commands {
    /// Run the whole check: load intent, bind, floor, fuse, write the outputs
    ClaimCheck(Box<ClaimCheckArgs>),
    /// Work with the acceptance set
    #[command(subcommand)]
    Acceptance(AcceptanceCommand),
    /// Verify a prior attestation offline, step by step
    Replay(Box<ReplayArgs>),
    /// Admit an artifact or not: its VSA checked in the SLSA order, then against a policy
    Admit(Box<AdmitArgs>),
    /// Verify a Sigstore bundle (cosign's flag names; the sigstore-conformance CLI protocol)
    VerifyBundle(VerifyBundleArgs),
    /// GitHub Actions integration, used by the Action's steps
    #[command(subcommand)]
    Action(ActionCommand),
    /// Attach a signed VSA (its Sigstore bundle) to an image in its OCI registry
    Attach(AttachArgs),
}

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The image: `registry/repository:tag` or `registry/repository@sha256:HEX`
    #[arg(value_name = "REF")]
    pub reference: String,
    /// The Sigstore bundle v0.3 (`claim-check.vsa.sigstore.json`) whose statement names the
    /// image's digest among its subjects
    #[arg(long, value_name = "FILE")]
    pub attestation: PathBuf,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// How an OCI registry is spoken to.
#[derive(Debug, Args, Clone, Copy)]
pub struct RegistryArgs {
    /// Speak plain HTTP to the registry (a local test registry), never HTTPS
    #[arg(long)]
    pub allow_http_registry: bool,
}

#[derive(Debug, Subcommand)]
pub enum ActionCommand {
    /// Write step outputs, the job summary and annotations for a run
    Report {
        /// The result JSON written by `claim-check --result-out` (absent when the run failed)
        #[arg(long, value_name = "PATH")]
        result: PathBuf,
        /// claim-check's exit code
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        exit_code: i32,
        /// The repository the run was in (relative output paths are resolved from it)
        #[arg(long, default_value = ".", value_name = "DIR")]
        repo: PathBuf,
    },
    /// Print the pull request's base and head commits from GITHUB_EVENT_PATH (`base=`, `head=`
    /// lines; empty outside pull requests) and write its body to a file
    Event {
        /// Where to write the body (an empty file when the body is null)
        #[arg(long, value_name = "PATH")]
        body_out: Option<PathBuf>,
    },
    /// Fail (exit 1) when the verdict is listed in fail-on, or when no verdict was reached
    Gate {
        #[arg(long, value_name = "VERDICT")]
        verdict: String,
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        exit_code: i32,
        /// Comma-separated verdicts that fail the job
        #[arg(long, value_name = "LIST", default_value = "BLOCKED,INCONCLUSIVE")]
        fail_on: String,
    },
}

/// How a signature is checked: a public key, or a certificate identity and issuer against a
/// trusted root.
#[derive(Debug, Args, Clone)]
pub struct SignatureArgs {
    /// A PEM public key (SPKI) the statement must be signed with
    #[arg(long, value_name = "PATH")]
    pub key: Option<PathBuf>,
    /// The identity (SAN) the signing certificate must name
    #[arg(long, value_name = "IDENTITY")]
    pub certificate_identity: Option<String>,
    /// The OIDC issuer the signing certificate must name
    #[arg(long, value_name = "URL")]
    pub certificate_oidc_issuer: Option<String>,
    /// The Sigstore trusted root (JSON) [default: the Sigstore public-good root]
    #[arg(long, value_name = "PATH")]
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
    #[arg(long)]
    pub allow_unsigned: bool,
    /// The commit the attestation must be about [default: the repository's HEAD]
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
    /// An artifact the attestation must also name (repeatable)
    #[arg(long = "subject", value_name = "NAME=sha256:HEX")]
    pub subjects: Vec<String>,
    /// The evidence store the attestation cites [default: .shipmoor/evidence beside it]
    #[arg(long, value_name = "DIR")]
    pub evidence: Option<PathBuf>,
    /// The repository (for HEAD, and for --rerun)
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub repo: PathBuf,
    /// Re-execute the floor at the recorded commits and compare outcomes
    #[arg(long)]
    pub rerun: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Exit codes: 0 allow · 1 deny · 2 usage or input error (a bad policy, an unreachable registry) · 3 engine crash"
)]
pub struct AdmitArgs {
    /// The admission policy (YAML; see the README's policy reference)
    #[arg(long, value_name = "FILE")]
    pub policy: PathBuf,
    /// The artifact's digest, sha256:HEX [default with --image: the image's manifest digest]
    #[arg(long, value_name = "sha256:HEX")]
    pub subject: Option<String>,
    /// The attestation: a DSSE envelope or a Sigstore bundle
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "image",
        conflicts_with = "image"
    )]
    pub attestation: Option<PathBuf>,
    /// An image whose attached VSAs are checked (REGISTRY/REPO:TAG or …@sha256:HEX)
    #[arg(long, value_name = "REF")]
    pub image: Option<String>,
    /// The signer, replacing the policy's `signers`
    #[command(flatten)]
    pub signature: SignatureArgs,
    /// Talk plain HTTP to the registry (a registry on loopback or a private network)
    #[arg(long)]
    pub allow_http_registry: bool,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct VerifyBundleArgs {
    /// The Sigstore bundle
    #[arg(long, value_name = "PATH")]
    pub bundle: PathBuf,
    #[command(flatten)]
    pub signature: SignatureArgs,
    /// Accepted for the conformance protocol; verification is always offline
    #[arg(long, hide = true)]
    pub staging: bool,
    /// The artifact, as a file or as `sha256:HEX`
    #[arg(value_name = "FILE_OR_DIGEST")]
    pub artifact: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// The deterministic floor only
    Fast,
    /// The floor, then the judge on what the floor left open
    Full,
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
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub repo: PathBuf,
    /// The base commit [default: the pull request's base in GitHub Actions, else the merge-base
    /// of HEAD with the default branch]
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The head commit [default: the pull request's head in GitHub Actions, else HEAD]
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,
    /// fast: the floor only; full: the floor and the judge
    #[arg(long, value_enum, default_value_t = Mode::Fast)]
    pub mode: Mode,
    /// Name the claim explicitly: this file's criteria are the claim, whatever base holds
    /// [default: the criteria base..head adds or changes in .shipmoor/acceptance.yaml and
    /// .shipmoor/changes/*.yaml, each also as .draft]
    #[arg(long, value_name = "PATH")]
    pub acceptance: Option<PathBuf>,
    /// Text to derive a draft claim from (a Markdown checklist) when the change claims no
    /// criterion; without it, the pull request's description, then the commit messages
    #[arg(long, value_name = "FILE")]
    pub from: Option<PathBuf>,
    /// Run each bound test K times at each side; mixed results are `undecided`
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u32).range(1..=20))]
    pub runs: u32,
    /// The limit for each command the floor runs, in seconds
    #[arg(long, default_value_t = 1800, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,
    /// How to sign the attestation
    #[arg(long, value_enum, default_value_t = Sign::None)]
    pub sign: Sign,
    /// The private key for --sign key (PKCS#8 PEM, ECDSA P-256 or Ed25519; the password of an
    /// encrypted key comes from SHIPMOOR_KEY_PASSWORD)
    #[arg(long, value_name = "PATH")]
    pub key: Option<PathBuf>,
    /// Fulcio for --sign keyless
    #[arg(
        long,
        value_name = "URL",
        env = "SHIPMOOR_FULCIO_URL",
        default_value = "https://fulcio.sigstore.dev"
    )]
    pub fulcio_url: String,
    /// Rekor for --sign keyless
    #[arg(
        long,
        value_name = "URL",
        env = "SHIPMOOR_REKOR_URL",
        default_value = "https://rekor.sigstore.dev"
    )]
    pub rekor_url: String,
    /// An RFC 3161 timestamp authority for --sign keyless (optional)
    #[arg(long, value_name = "URL", env = "SHIPMOOR_TSA_URL")]
    pub tsa_url: Option<String>,
    /// An artifact the attestation also speaks for (repeatable)
    #[arg(long = "subject", value_name = "NAME=sha256:HEX")]
    pub subjects: Vec<String>,
    /// An image the attestation speaks for: its digest is resolved in the registry before any
    /// work and made a subject, and the signed bundle is attached to it once the outputs are
    /// written (needs --sign key or keyless)
    #[arg(long, value_name = "REF")]
    pub attach: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// human: the terminal report; json: the whole result on stdout
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    #[arg(long, value_name = "PATH")]
    pub vsa_out: Option<PathBuf>,
    #[arg(long, value_name = "PATH")]
    pub fixes_out: Option<PathBuf>,
    #[arg(long, value_name = "PATH")]
    pub report_out: Option<PathBuf>,
    #[arg(long, value_name = "DIR")]
    pub evidence_dir: Option<PathBuf>,
    /// Also write the whole result as JSON (as --format json prints it) to this file
    #[arg(long, value_name = "PATH")]
    pub result_out: Option<PathBuf>,
    /// Where worktrees and build outputs go [default: the system's temporary directory]
    #[arg(long, value_name = "DIR", env = "SHIPMOOR_TMPDIR")]
    pub temp_dir: Option<PathBuf>,
    /// No progress lines on stderr
    #[arg(long, short)]
    pub quiet: bool,
    /// Pin the clock (RFC 3339), as SOURCE_DATE_EPOCH does
    #[arg(long, hide = true, value_name = "RFC3339")]
    pub current_time: Option<String>,
}

#[derive(Debug, Args)]
pub struct AcceptanceArgs {
    /// The repository
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub repo: PathBuf,
    /// One acceptance file [default: every acceptance file, .shipmoor/acceptance.yaml and
    /// .shipmoor/changes/*.yaml, each also as .draft, with .shipmoor/config.yaml]
    #[arg(long, value_name = "PATH")]
    pub acceptance: Option<PathBuf>,
    /// The commit the change starts from, to tell its claim from inherited criteria
    /// [default: as for claim-check]
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum AcceptanceCommand {
    /// Validate the acceptance set, reporting every problem at once
    Lint {
        #[command(flatten)]
        args: AcceptanceArgs,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Print each criterion's tag
    Tags {
        #[command(flatten)]
        args: AcceptanceArgs,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Also print where each tag occurs: the tracked files whose path or contents carry it,
        /// as they are in the checkout (the same scan the floor runs on the head worktree)
        #[arg(long = "where")]
        where_: bool,
    },
    /// Promote the change's own draft (`<file>.yaml.draft`) to `<file>.yaml` once it validates
    Commit(AcceptanceArgs),
    /// Draft criteria from text (a pull request body's checklist) as the branch's own
    /// .shipmoor/changes/<branch>.yaml.draft (on the default branch or detached:
    /// .shipmoor/acceptance.yaml.draft)
    Derive {
        /// The repository
        #[arg(long, default_value = ".", value_name = "DIR")]
        repo: PathBuf,
        /// The text: a file, or `-` for standard input
        #[arg(long, value_name = "FILE")]
        from: PathBuf,
        /// Replace an existing draft
        #[arg(long)]
        force: bool,
    },
}
