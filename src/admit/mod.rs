//! Admission (book: admission.md): a VSA for an artifact, checked in the SLSA verification order and then
//! against a written policy, gives allow or deny with every reason.
//!
//! The checks, in order (each named so in the decision):
//! 1. **parse**: the attestation's form and structure ([`Attestation::parse`], as `replay`);
//! 2. **signature**: by one of the trusted signers (the command line's, else the policy's), with
//!    the same verification code as `replay`. A failure here stops the attestation: nothing
//!    unsigned is read further, so a tampered input is denied at this step and nowhere later;
//! 3. **statement**: the signed payload is a Claim Check statement of a format this release
//!    reads, with replay's `_type` check (a failure stops here too), and then replay's check
//!    that the statement agrees with itself (one commit subject, `resourceUri` naming it, the
//!    claim digest and head the extension records), which adds its reason and goes on;
//!
//! then the SLSA VSA checks, each of which adds its own reason: **subject** (the artifact's
//! digest among the statement's subjects), **predicate_type** (replay's check),
//! **verifier** (replay's `verifier.id` check, and the id one the matching signer is trusted
//! for), **resource_uri** (the policy's repositories), **verification_result** (`PASSED`),
//! **verified_levels**; **fusion** (replay's step 5: the recorded policy re-run over the
//! dispositions gives the recorded verdict, `verificationResult` and `verifiedLevels`, so a
//! signer cannot state READY over dispositions that fuse to something else); then the
//! policy's own rules: **verdict**, **floor_required**, **sandbox**, **policy_version**,
//! **age**, and
//! **rego** (which can only add reasons: it runs after the rules and cannot admit what they
//! denied).
//!
//! Every check `replay` makes that needs no evidence store is made here, through replay's own
//! functions, so that what admission admits, replay could reject only for its evidence.
//!
//! An artifact is admitted when one of its attestations passes every check.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use serde::Serialize;
use serde_json::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use crate::attest::keys::VerifyingKey;
use crate::attest::sigstore::Identity;
use crate::attest::verify::{Attestation, Signer, Verified};
use crate::format::statement::Statement;
use crate::format::Disposition;
use crate::replay::{self, Expectations};
use crate::verdict::FloorResult;

pub mod export;
pub mod policy;
pub mod rego;

use policy::{Policy, SignerKind};

pub const DECISION_SCHEMA: &str = "claim_check.admit.v1";

/// How far in the future a `timeVerified` may lie (clock skew between verifier and admission).
const CLOCK_SKEW_SECONDS: i64 = 300;

/// A signer the command line names (`--key`, or `--certificate-identity` with its issuer); it
/// replaces the policy's `signers` and is trusted for the policy's `verifier_ids`.
pub enum CliSigner {
    Key { path: PathBuf, key: VerifyingKey },
    Identity(Identity),
}

/// One attestation to decide on: where it came from, and its bytes.
pub struct Candidate {
    /// A file path, or `REF@DIGEST (artifact sha256:…)` for one found in a registry.
    pub source: String,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Ok,
    Failed,
    Skipped,
    NotRun,
}

impl CheckStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CheckStatus::Ok => "ok",
            CheckStatus::Failed => "FAILED",
            CheckStatus::Skipped => "skipped",
            CheckStatus::NotRun => "not run",
        }
    }
}

/// Every check's name, in the order they run.
pub const CHECKS: [&str; 17] = [
    "parse",
    "signature",
    "statement",
    "subject",
    "predicate_type",
    "verifier",
    "resource_uri",
    "verification_result",
    "verified_levels",
    "fusion",
    "verdict",
    "floor_required",
    "sandbox",
    "isolated_signer",
    "policy_version",
    "age",
    "rego",
];

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: CheckStatus,
    pub detail: String,
}

/// The decision on one attestation.
#[derive(Debug, Clone, Serialize)]
pub struct AttestationDecision {
    pub source: String,
    pub allowed: bool,
    pub signer: Option<Signer>,
    pub verdict: Option<String>,
    pub checks: Vec<Check>,
    /// Every failed check's reason, `check: why`.
    pub reasons: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PolicyRef {
    pub file: String,
    pub sha256: String,
}

/// The decision on an artifact.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    pub schema: &'static str,
    /// `allow` or `deny`.
    pub decision: &'static str,
    pub subject: String,
    /// The image reference (with its resolved digest), for `--image`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    pub policy: PolicyRef,
    pub attestations: Vec<AttestationDecision>,
    /// Every reason the artifact is denied (empty when allowed): each attestation's reasons,
    /// or why there is none to decide on.
    pub reasons: Vec<String>,
}

impl Decision {
    pub fn allowed(&self) -> bool {
        self.decision == "allow"
    }
}

/// What admission checks against.
pub struct Admission<'a> {
    pub policy: &'a Policy,
    /// The artifact's digest, lowercase hex (no `sha256:`).
    pub subject: String,
    /// Replaces the policy's signers when given.
    pub cli_signer: Option<&'a CliSigner>,
    /// Replaces the policy's `trusted_root` when given.
    pub trusted_root: Option<&'a Path>,
    pub now: OffsetDateTime,
}

impl Admission<'_> {
    /// Decides on an artifact from its candidate attestations; `image` (the reference with its
    /// digest) names what has none attached in the reason.
    pub fn decide(&self, candidates: &[Candidate], image: Option<String>) -> Decision {
        let attestations: Vec<AttestationDecision> =
            candidates.iter().map(|c| self.decide_one(c)).collect();
        let allowed = attestations.iter().any(|a| a.allowed);
        let reasons = if allowed {
            Vec::new()
        } else if attestations.is_empty() {
            vec![match &image {
                Some(image) => format!("no Claim Check VSA is attached to {image}"),
                None => "no attestation to decide on".to_string(),
            }]
        } else if attestations.len() == 1 {
            attestations[0].reasons.clone()
        } else {
            attestations
                .iter()
                .flat_map(|a| a.reasons.iter().map(move |r| format!("{}: {r}", a.source)))
                .collect()
        };
        Decision {
            schema: DECISION_SCHEMA,
            decision: if allowed { "allow" } else { "deny" },
            subject: format!("sha256:{}", self.subject),
            image,
            policy: PolicyRef {
                file: self.policy.file.clone(),
                sha256: self.policy.sha256.clone(),
            },
            attestations,
            reasons,
        }
    }

    fn decide_one(&self, candidate: &Candidate) -> AttestationDecision {
        let mut d = Record {
            checks: Vec::new(),
            reasons: Vec::new(),
        };
        let mut out = AttestationDecision {
            source: candidate.source.clone(),
            allowed: false,
            signer: None,
            verdict: None,
            checks: Vec::new(),
            reasons: Vec::new(),
        };
        if let Some((verified, trusted_for)) = self.verify(candidate, &mut d) {
            out.signer = Some(verified.signer.clone());
            if let Some(statement) = d.statement(&verified.payload) {
                out.verdict = Some(statement.extension().verdict.as_str().to_string());
                self.slsa_checks(&statement, &trusted_for, &mut d);
                self.policy_checks(&statement, &mut d);
                self.rego(&verified, &statement, &mut d);
            }
        }
        d.fill_not_run();
        out.allowed = d.reasons.is_empty();
        out.checks = d.checks;
        out.reasons = d.reasons;
        out
    }

    /// Checks 1 and 2: the form, then the signature by a trusted signer. Returns the verified
    /// payload and the `verifier.id`s its signer is trusted for.
    fn verify(&self, candidate: &Candidate, d: &mut Record) -> Option<(Verified, Vec<String>)> {
        let attestation = match Attestation::parse(&candidate.bytes) {
            Ok(a) => a,
            Err((_, why)) => {
                d.fail("parse", format!("the attestation cannot be read: {why}"));
                return None;
            }
        };
        d.ok(
            "parse",
            format!(
                "{}, statement format {}",
                attestation.label(),
                attestation.version
            ),
        );
        if attestation.is_unsigned() {
            d.fail(
                "signature",
                "the statement is unsigned: admission needs a signed VSA (a DSSE envelope or a Sigstore bundle)",
            );
            return None;
        }
        let trusted_root = self.trusted_root.or(self.policy.trusted_root.as_deref());
        let mut failures = Vec::new();
        match self.cli_signer {
            Some(CliSigner::Key { path, key }) => {
                match attestation.verify_with_key(key, path, trusted_root) {
                    Ok(v) => return Some(d.signed(v, self.policy.verifier_ids.clone())),
                    Err(e) => failures.push(format!("key {}: {e}", key.keyid())),
                }
            }
            Some(CliSigner::Identity(who)) => {
                match attestation.verify_with_identity(who, trusted_root) {
                    Ok(v) => return Some(d.signed(v, self.policy.verifier_ids.clone())),
                    Err(e) => failures.push(format!("identity {}: {e}", who.identity)),
                }
            }
            None => {
                for signer in &self.policy.signers {
                    let tried = match &signer.who {
                        SignerKind::Key { resolved, key, .. } => attestation
                            .verify_with_key(key, resolved, trusted_root)
                            .map_err(|e| format!("key {}: {e}", key.keyid())),
                        SignerKind::Identity { identity, issuer } => attestation
                            .verify_with_identity(
                                &Identity::new(identity.as_str(), issuer.as_str()),
                                trusted_root,
                            )
                            .map_err(|e| format!("identity {identity}: {e}")),
                    };
                    match tried {
                        Ok(v) => {
                            let ids = signer.verifier_ids(self.policy).to_vec();
                            return Some(d.signed(v, ids));
                        }
                        Err(e) => failures.push(e),
                    }
                }
            }
        }
        let why = if failures.is_empty() {
            "the policy trusts no signer (add `signers`, or pass --key or --certificate-identity)"
                .to_string()
        } else {
            format!(
                "not signed by a signer the policy trusts ({})",
                failures.join("; ")
            )
        };
        d.fail("signature", why);
        None
    }

    /// The SLSA VSA checks after the signature, in the specification's order.
    fn slsa_checks(&self, statement: &Statement, trusted_for: &[String], d: &mut Record) {
        let subject = &self.subject;
        let named = statement
            .subject
            .iter()
            .find(|s| s.digest.sha256.as_deref() == Some(subject.as_str()));
        match named {
            Some(s) => d.ok(
                "subject",
                format!("sha256:{subject} is subject `{}`", s.name),
            ),
            None => d.fail(
                "subject",
                format!(
                    "sha256:{subject} is not among the statement's subjects ({})",
                    statement
                        .subject
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
        }
        match replay::check_predicate_type(statement) {
            Ok(()) => d.ok("predicate_type", &statement.predicate_type),
            Err(why) => d.fail("predicate_type", why.to_string()),
        }
        let verifier = &statement.predicate.verifier.id;
        // Replay's check (the id is Claim Check's) and the policy's (this signer vouches for
        // it): each failure is a reason of its own.
        let written = replay::check_verifier_id(statement);
        let trusted = trusted_for.iter().any(|id| id == verifier);
        if let Err(why) = &written {
            d.fail("verifier", why.to_string());
        }
        if !trusted {
            d.fail(
                "verifier",
                format!(
                    "verifier.id `{verifier}` is not one this signer is trusted for ({})",
                    trusted_for.join(", ")
                ),
            );
        }
        if written.is_ok() && trusted {
            d.ok("verifier", format!("{verifier}, trusted for this signer"));
        }
        let uri = &statement.predicate.resource_uri;
        // `shop.git` and `shop` are one repository, in the statement (format 5 drops the
        // suffix, earlier ones kept the remote's) and in the policy alike.
        let repository = crate::attest::resource::without_git_suffix(resource_repository(uri));
        match self
            .policy
            .repositories
            .iter()
            .find(|g| glob_matches(g, repository))
        {
            Some(g) => d.ok("resource_uri", format!("{uri} matches `{g}`")),
            None => d.fail(
                "resource_uri",
                format!(
                    "{uri}: the repository is not one the policy admits ({})",
                    self.policy.repositories.join(", ")
                ),
            ),
        }
        let result = &statement.predicate.verification_result;
        if result == "PASSED" {
            d.ok("verification_result", "PASSED");
        } else {
            d.fail(
                "verification_result",
                format!("verificationResult is {result}, not PASSED"),
            );
        }
        // Without levels of its own, the policy expects the level of the statement's verdict,
        // so that `verifiedLevels` (what generic VSA consumers read) agrees with the verdict
        // the policy's rules read.
        let levels = &statement.predicate.verified_levels;
        let expected = if self.policy.verified_levels.is_empty() {
            vec![crate::attest::level(statement.extension().verdict)]
        } else {
            self.policy.verified_levels.clone()
        };
        let missing: Vec<&str> = expected
            .iter()
            .filter(|l| !levels.contains(l))
            .map(String::as_str)
            .collect();
        if missing.is_empty() {
            d.ok("verified_levels", expected.join(", "));
        } else {
            d.fail(
                "verified_levels",
                format!(
                    "verifiedLevels [{}] lacks {}",
                    levels.join(", "),
                    missing.join(", ")
                ),
            );
        }
        // What the verdict, `verificationResult` and `verifiedLevels` say must be what the
        // dispositions fuse to: the checks above and the policy's rules read those fields,
        // and a statement whose fields disagree with its own dispositions is one replay rejects.
        match replay::check_fusion(statement) {
            Ok((_, detail)) => d.ok("fusion", detail),
            Err(why) => d.fail("fusion", why.to_string()),
        }
    }

    /// The policy's own rules.
    fn policy_checks(&self, statement: &Statement, d: &mut Record) {
        let policy = self.policy;
        let ext = statement.extension();
        if policy.allowed_verdicts.contains(&ext.verdict) {
            d.ok("verdict", ext.verdict.as_str());
        } else {
            d.fail(
                "verdict",
                format!(
                    "the verdict is {}; the policy admits {}",
                    ext.verdict.as_str(),
                    policy
                        .allowed_verdicts
                        .iter()
                        .map(|v| v.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }

        if policy.floor_required.is_empty() {
            d.skipped("floor_required", "the policy requires no criterion");
        } else {
            let mut misses = Vec::new();
            for id in &policy.floor_required {
                match ext.dispositions.iter().find(|c| &c.id == id) {
                    None => misses.push(format!("`{id}` is not among the attestation's criteria")),
                    Some(c)
                        if c.disposition == Disposition::Satisfied
                            && c.floor.result == FloorResult::Satisfied => {}
                    Some(c) => misses.push(format!(
                        "`{id}` is {} (floor: {}), not satisfied by the floor",
                        c.disposition.as_str(),
                        c.floor.result.as_str()
                    )),
                }
            }
            if misses.is_empty() {
                d.ok(
                    "floor_required",
                    format!(
                        "{} satisfied by the floor",
                        policy.floor_required.join(", ")
                    ),
                );
            } else {
                d.fail("floor_required", misses.join("; "));
            }
        }

        // The sandbox the floor ran under, as the statement records it (one made before the
        // record existed, or with `--sandbox off`, has none to show).
        match (&ext.sandbox, policy.require_sandbox) {
            (_, false) => d.skipped("sandbox", "the policy does not require a sandbox"),
            (Some(s), true) if s.enforced => d.ok("sandbox", s.line()),
            (Some(s), true) => d.fail(
                "sandbox",
                format!(
                    "the floor did not run sandboxed ({}); the policy requires it",
                    s.line()
                ),
            ),
            (None, true) => d.fail(
                "sandbox",
                "the statement records no sandbox (a release before the sandbox made it); the policy requires one",
            ),
        }

        // Where the change's code ran against where the statement was signed.
        match (&ext.observation, policy.require_isolated_signer) {
            (_, false) => d.skipped(
                "isolated_signer",
                "the policy does not require an isolated signer",
            ),
            (Some(o), true) if o.isolated => d.ok("isolated_signer", o.line()),
            (Some(o), true) => d.fail(
                "isolated_signer",
                format!(
                    "{}; the policy requires a signer that ran none of the change's code (the reusable workflow's sign job)",
                    o.line()
                ),
            ),
            (None, true) => d.fail(
                "isolated_signer",
                "the statement records no observation (a release before it recorded one); the policy requires an isolated signer",
            ),
        }

        match policy.min_policy_version {
            None => d.skipped("policy_version", "the policy sets no minimum"),
            Some(min) => match fusion_version(&ext.policy) {
                Some(v) if v >= min => d.ok(
                    "policy_version",
                    format!("{} (at least v{min})", ext.policy),
                ),
                Some(_) => d.fail(
                    "policy_version",
                    format!(
                        "the verdict was fused under {}, older than v{min}",
                        ext.policy
                    ),
                ),
                None => d.fail(
                    "policy_version",
                    format!("fusion policy `{}` is not a version like v3", ext.policy),
                ),
            },
        }

        match age_seconds(&statement.predicate.time_verified, self.now) {
            Err(why) => d.fail("age", why.to_string()),
            Ok(age) if age < -CLOCK_SKEW_SECONDS => d.fail(
                "age",
                format!(
                    "timeVerified {} is {}s in the future",
                    statement.predicate.time_verified, -age
                ),
            ),
            Ok(age) => match policy.max_age_seconds {
                Some(max) if age > max as i64 => d.fail(
                    "age",
                    format!(
                        "verified {} ago, older than the policy's {}",
                        human_duration(age as u64),
                        human_duration(max)
                    ),
                ),
                Some(max) => d.ok(
                    "age",
                    format!(
                        "verified {} ago (at most {})",
                        human_duration(age.max(0) as u64),
                        human_duration(max)
                    ),
                ),
                None => d.skipped("age", "the policy sets no maximum age"),
            },
        }
    }

    /// The Rego module's `deny` set, over the verified statement and the verification facts.
    fn rego(&self, verified: &Verified, statement: &Statement, d: &mut Record) {
        let Some(rego) = &self.policy.rego else {
            d.skipped("rego", "the policy names no Rego module");
            return;
        };
        let input = self.rego_input(verified, statement);
        match rego.deny(&input) {
            Ok(messages) if messages.is_empty() => d.ok("rego", format!("{}: no deny", rego.file)),
            Ok(messages) => {
                for m in messages {
                    d.fail("rego", m);
                }
            }
            Err(e) => d.fail("rego", format!("{} cannot be evaluated: {e}", rego.file)),
        }
    }

    /// The Rego input (its shape is documented in the book: admission.md#rego).
    pub fn rego_input(&self, verified: &Verified, statement: &Statement) -> Value {
        let signed: Value = serde_json::from_slice(&verified.payload).unwrap_or(Value::Null);
        let subject = statement
            .subject
            .iter()
            .find(|s| s.digest.sha256.as_deref() == Some(self.subject.as_str()));
        let age = age_seconds(&statement.predicate.time_verified, self.now)
            .unwrap_or(0)
            .max(0);
        serde_json::json!({
            "statement": signed,
            "signer": verified.signer,
            "subject": {
                "digest": format!("sha256:{}", self.subject),
                "name": subject.map(|s| s.name.clone()),
            },
            "age_seconds": age,
            "verified": true,
        })
    }
}

/// The checks of one attestation as they are made.
struct Record {
    checks: Vec<Check>,
    reasons: Vec<String>,
}

impl Record {
    fn ok(&mut self, name: &'static str, detail: impl Into<String>) {
        self.push(name, CheckStatus::Ok, detail.into());
    }
    fn skipped(&mut self, name: &'static str, detail: impl Into<String>) {
        self.push(name, CheckStatus::Skipped, detail.into());
    }
    fn fail(&mut self, name: &'static str, why: impl Into<String>) {
        let why = why.into();
        self.reasons.push(format!("{name}: {why}"));
        // A check with several reasons (Rego's messages) is one failed check.
        if let Some(last) = self.checks.last_mut().filter(|c| c.name == name) {
            last.detail.push_str("; ");
            last.detail.push_str(&why);
            return;
        }
        self.push(name, CheckStatus::Failed, why);
    }
    fn push(&mut self, name: &'static str, status: CheckStatus, detail: String) {
        self.checks.push(Check {
            name,
            status,
            detail,
        });
    }

    fn signed(&mut self, v: Verified, trusted_for: Vec<String>) -> (Verified, Vec<String>) {
        self.ok("signature", v.detail.clone());
        (v, trusted_for)
    }

    /// Check 3: the signed payload as a statement of its format, of in-toto's `_type` (else
    /// nothing more is read), that agrees with itself as replay checks it (else a reason, and
    /// the checks go on: the statement is readable).
    fn statement(&mut self, payload: &[u8]) -> Option<Statement> {
        match serde_json::from_slice::<Statement>(payload) {
            Ok(s) => {
                if let Err(why) = replay::check_type(&s) {
                    self.fail("statement", why.to_string());
                    return None;
                }
                // The artifact's subject is checked on its own; what the statement must speak
                // for beyond it, admission does not know (no repository, no expected commit).
                match replay::check_consistency(&s, &Expectations::default()) {
                    Ok(_) => self.ok("statement", "in-toto Statement v1 written by Claim Check"),
                    Err(why) => self.fail("statement", why.to_string()),
                }
                Some(s)
            }
            Err(e) => {
                self.fail(
                    "statement",
                    format!("the signed payload is not a Claim Check statement: {e}"),
                );
                None
            }
        }
    }

    /// The checks an earlier failure kept from running.
    fn fill_not_run(&mut self) {
        let done: Vec<&str> = self.checks.iter().map(|c| c.name).collect();
        let missing: Vec<&'static str> = CHECKS
            .iter()
            .copied()
            .filter(|n| !done.contains(n))
            .collect();
        for name in missing {
            self.push(
                name,
                CheckStatus::NotRun,
                "an earlier check failed".to_string(),
            );
        }
    }
}

/// `resourceUri` without its `@<commit>`: `git+https://github.com/acme/app@<sha>` →
/// `git+https://github.com/acme/app`.
fn resource_repository(uri: &str) -> &str {
    match uri.rsplit_once('@') {
        Some((repo, rev)) if !rev.contains('/') => repo,
        _ => uri,
    }
}

/// A repository glob (`*` crosses `/`), over the whole repository URI.
fn glob_matches(glob: &str, repository: &str) -> bool {
    GlobBuilder::new(crate::attest::resource::without_git_suffix(glob))
        .literal_separator(false)
        .build()
        .map(|g| g.compile_matcher().is_match(repository))
        .unwrap_or(false)
}

/// `v3` → 3.
fn fusion_version(policy: &str) -> Option<u32> {
    policy.strip_prefix('v')?.parse().ok()
}

/// A `timeVerified` that is no RFC 3339 time.
#[derive(Debug, thiserror::Error)]
#[error("timeVerified `{given}` is not RFC 3339: {source}")]
struct TimeError {
    given: String,
    source: time::error::Parse,
}

/// Seconds from `timeVerified` to `now` (negative when it lies in the future).
fn age_seconds(time_verified: &str, now: OffsetDateTime) -> Result<i64, TimeError> {
    let t = OffsetDateTime::parse(time_verified, &Rfc3339).map_err(|source| TimeError {
        given: time_verified.to_string(),
        source,
    })?;
    Ok((now - t).whole_seconds())
}

/// `3d 4h`, `12m`, `40s`.
pub(crate) fn human_duration(seconds: u64) -> String {
    let (d, h, m, s) = (
        seconds / 86_400,
        seconds % 86_400 / 3600,
        seconds % 3600 / 60,
        seconds % 60,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m"),
        (0, _, _) if m == 0 => format!("{h}h"),
        (0, _, _) => format!("{h}h {m}m"),
        _ if h == 0 => format!("{d}d"),
        _ => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod tests;
