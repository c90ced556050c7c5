//! The admission policy (DESIGN 10): the YAML rules every platform team needs, and a Rego
//! module for anything else.
//!
//! [`load`] reads and validates a policy file, reporting every problem at once with its file,
//! line and a fix (as the acceptance file does); the types below are what admission checks
//! against.

use std::path::PathBuf;

use crate::attest::keys::VerifyingKey;
use crate::verdict::Verdict;

/// The policy format this release reads (`version: 1`).
pub const POLICY_VERSION: u64 = 1;

/// A validated admission policy.
#[derive(Debug)]
pub struct Policy {
    /// The policy file as given (for messages and the decision's record).
    pub file: String,
    /// SHA-256 (hex) of the policy file's bytes, recorded in the decision.
    pub sha256: String,
    /// The `verifier.id`s admitted, for signers that name none of their own.
    /// Default: `["https://github.com/shipmoor/claim-check"]`.
    pub verifier_ids: Vec<String>,
    /// The verdicts admitted. Default: READY and READY WITH GAPS.
    pub allowed_verdicts: Vec<Verdict>,
    /// Criteria (by id) that must be `satisfied`, by the floor itself (floor result `satisfied`),
    /// not left to a person or a judge.
    pub floor_required: Vec<String>,
    /// The oldest fusion policy admitted (`v3` → 3); `None` admits any.
    pub min_policy_version: Option<u32>,
    /// The oldest `timeVerified` admitted, as an age in seconds (`7d`, `12h`, `30m`, `90s`).
    pub max_age_seconds: Option<u64>,
    /// Globs over `resourceUri` without its `@<commit>` (`*` crosses `/`). Required: `["*"]`
    /// admits any repository, and says so.
    pub repositories: Vec<String>,
    /// Levels `verifiedLevels` must all contain. Empty: the level of an allowed verdict
    /// (`SHIPMOOR_CLAIM_CHECK_READY`, …) must be there.
    pub verified_levels: Vec<String>,
    /// Signers trusted; any one may match. Empty when the command line names the signer.
    pub signers: Vec<Signer>,
    /// The Sigstore trusted root for identity signers (relative to the policy's directory);
    /// `None`: the command line's `--trusted-root`, else the public-good root.
    pub trusted_root: Option<PathBuf>,
    /// The compiled Rego module, when the policy names one.
    pub rego: Option<super::rego::RegoPolicy>,
}

/// One trusted signer: a public key, or a Fulcio certificate identity and its OIDC issuer.
#[derive(Debug)]
pub struct Signer {
    pub who: SignerKind,
    /// The `verifier.id`s this signer is trusted for; `None`: the policy's `verifier_ids`.
    pub verifier_ids: Option<Vec<String>>,
}

#[derive(Debug)]
pub enum SignerKind {
    /// A PEM public key (SPKI), read when the policy is loaded; `path` as written in the policy.
    Key {
        path: String,
        resolved: PathBuf,
        key: VerifyingKey,
    },
    Identity {
        identity: String,
        issuer: String,
    },
}

impl Signer {
    /// The `verifier.id`s this signer may vouch for under `policy`.
    pub fn verifier_ids<'a>(&'a self, policy: &'a Policy) -> &'a [String] {
        self.verifier_ids.as_deref().unwrap_or(&policy.verifier_ids)
    }
}
