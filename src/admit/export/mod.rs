//! Export (book: admission.md, the engines' policies): an admission policy written in the language
//! of an admission engine a cluster runs, so that the cluster admits what `shipmoor admit` would.
//!
//! In: a loaded [`Policy`], the engine, the globs of the images it governs, and the command
//! line's signer and trusted root (which replace the policy's, as when deciding).
//! Out: the engine's policy as one YAML document, and every check of [`super::CHECKS`] it does
//! not make (a [`Gap`]), which the document's head comment lists too.
//!
//! Steps of [`export`]:
//! 1. check the image globs: only the characters every engine's glob reads alike;
//! 2. the signers, each with the `verifier.id`s it is trusted for;
//! 3. the rules over the statement ([`Rules`]), in the order `shipmoor admit` checks them; a
//!    repository glob that has no exact regular expression here is a gap;
//! 4. the gaps: what only `shipmoor admit` checks;
//! 5. the engine's document ([`kyverno`], [`policy_controller`]), written by [`yaml`].

use std::path::Path;

use super::policy::{Policy, SignerKind};
use super::CliSigner;
use crate::error::InputError;
use crate::format::statement::VERIFIER_ID;

pub(crate) mod kyverno;
pub(crate) mod policy_controller;
pub(crate) mod yaml;

/// The engines a policy is exported for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A Kyverno ClusterPolicy (`verifyImages`, conditions in JMESPath).
    Kyverno,
    /// A Kyverno ImageValidatingPolicy (CEL).
    KyvernoIvp,
    /// A Sigstore policy-controller ClusterImagePolicy (Rego).
    PolicyController,
}

impl Engine {
    /// The `--export` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Kyverno => "kyverno",
            Engine::KyvernoIvp => "kyverno-ivp",
            Engine::PolicyController => "policy-controller",
        }
    }

    fn title(self) -> &'static str {
        match self {
            Engine::Kyverno => "Kyverno ClusterPolicy",
            Engine::KyvernoIvp => "Kyverno ImageValidatingPolicy",
            Engine::PolicyController => "Sigstore policy-controller ClusterImagePolicy",
        }
    }
}

/// A check of `shipmoor admit` that the engine's policy does not make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// The check's name, as [`super::CHECKS`] and the decision spell it.
    pub check: &'static str,
    pub why: String,
}

impl Gap {
    fn new(check: &'static str, why: impl Into<String>) -> Gap {
        Gap {
            check,
            why: why.into(),
        }
    }
}

/// An exported policy.
#[derive(Debug)]
pub struct Export {
    /// The engine's policy: YAML, its head comment listing the gaps.
    pub document: String,
    pub gaps: Vec<Gap>,
}

/// What to export.
pub struct Request<'a> {
    pub policy: &'a Policy,
    pub engine: Engine,
    /// Globs of the images the engine's policy governs (`*`: any characters, `/` too).
    pub images: &'a [String],
    /// Replaces the policy's signers when given.
    pub cli_signer: Option<&'a CliSigner>,
    /// `--trusted-root`, which replaces the policy's `trusted_root`.
    pub trusted_root: Option<&'a Path>,
}

/// A trusted signer as the engines name it.
#[derive(Debug, Clone)]
pub(crate) struct Trusted {
    pub who: Who,
    /// The `verifier.id`s this signer is trusted for.
    pub verifier_ids: Vec<String>,
}

#[derive(Debug, Clone)]
pub(crate) enum Who {
    /// A public key: where it was read from, and its SPKI PEM.
    Key { label: String, pem: String },
    /// A Fulcio certificate's identity (its SAN) and OIDC issuer, both matched exactly.
    Identity { identity: String, issuer: String },
}

/// What the engine's policy checks, in the order `shipmoor admit` checks it.
#[derive(Debug)]
pub(crate) struct Rules {
    /// The policy's name in the cluster.
    pub name: String,
    pub images: Vec<String>,
    pub signers: Vec<Trusted>,
    /// The policy's `repositories` as written, for messages.
    pub repositories: Vec<String>,
    /// One anchored regular expression over the repository (`resourceUri` without its
    /// `@<commit>`) that matches what one of `repositories` matches; `None` when a glob has none
    /// here (a gap).
    pub repository_regex: Option<String>,
    pub allowed_verdicts: Vec<&'static str>,
    pub floor_required: Vec<String>,
    pub require_sandbox: bool,
    pub require_isolated_signer: bool,
    pub max_age_seconds: Option<u64>,
}

impl Rules {
    /// The `verifier.id`s every signer is trusted for, when they all share one list.
    pub fn shared_verifier_ids(&self) -> Option<&[String]> {
        let first = &self.signers.first()?.verifier_ids;
        self.signers
            .iter()
            .all(|s| &s.verifier_ids == first)
            .then_some(first.as_slice())
    }
}

/// How far in the future a `timeVerified` may lie: admission's allowance for clock skew.
pub(crate) const CLOCK_SKEW_SECONDS: u64 = super::CLOCK_SKEW_SECONDS as u64;

/// The `verifier.id` `shipmoor admit` requires of every statement (replay's check).
pub(crate) const CLAIM_CHECK_VERIFIER: &str = VERIFIER_ID;

/// The characters an image glob may hold: those the policy-controller's globs accept, which
/// Kyverno's wildcards and globs read the same way but for `*` (see [`pc_glob`]).
const IMAGE_GLOB_CHARS: &str = "letters, digits, `.`, `-`, `_`, `:`, `/`, `@` and `*`";

/// The engine's policy for `req`, with what it leaves to `shipmoor admit`.
pub fn export(req: &Request) -> Result<Export, InputError> {
    // 1. the image globs
    if req.images.is_empty() {
        return Err(InputError::new(format!(
            "--export {} needs the images the engine's policy governs",
            req.engine.as_str()
        ))
        .help(
            "pass --image GLOB, once per glob, e.g. --image 'registry.example.com/acme/*' \
             (`*` matches any characters, `/` too)",
        ));
    }
    for glob in req.images {
        check_image_glob(glob)?;
    }
    // 2. the signers
    let mut signers = signers(req)?;
    // 3. the rules
    let (repository_regex, untranslated) = repository_regex(&req.policy.repositories);
    let mut gaps = Vec::new();
    if req.engine == Engine::KyvernoIvp {
        let (identities, keys): (Vec<Trusted>, Vec<Trusted>) = signers
            .into_iter()
            .partition(|s| matches!(s.who, Who::Identity { .. }));
        if identities.is_empty() {
            return Err(InputError::new(
                "Kyverno's ImageValidatingPolicy cannot verify a VSA signed with a key: it \
                 requires a transparency-log entry of a key-signed attestation \
                 (kyverno/kyverno#17109), and a VSA signed with `--sign key` has none",
            )
            .in_file(req.policy.file.clone())
            .help(
                "export `kyverno` (a ClusterPolicy) or `policy-controller` for key signers, or \
                 sign keyless (`--sign keyless`) and name that identity among `signers`",
            ));
        }
        for k in keys {
            if let Who::Key { label, .. } = &k.who {
                gaps.push(Gap::new(
                    "signature",
                    format!(
                        "the key signer `{label}` is left out: Kyverno's ImageValidatingPolicy \
                         requires a transparency-log entry of a key-signed attestation \
                         (kyverno/kyverno#17109), which a VSA signed with `--sign key` does not \
                         have; export `kyverno` or `policy-controller` for it"
                    ),
                ));
            }
        }
        signers = identities;
    }
    let rules = Rules {
        name: policy_name(&req.policy.file),
        images: req.images.to_vec(),
        signers,
        repositories: req.policy.repositories.clone(),
        repository_regex,
        allowed_verdicts: req
            .policy
            .allowed_verdicts
            .iter()
            .map(|v| v.as_str())
            .collect(),
        floor_required: req.policy.floor_required.clone(),
        require_sandbox: req.policy.require_sandbox,
        require_isolated_signer: req.policy.require_isolated_signer,
        max_age_seconds: req.policy.max_age_seconds,
    };
    if matches!(req.engine, Engine::Kyverno | Engine::KyvernoIvp)
        && rules.shared_verifier_ids().is_none()
    {
        return Err(InputError::new(format!(
            "the signers are trusted for different `verifier_ids`, and a {} cannot tie a \
             condition to the signer that verified the attestation",
            req.engine.title()
        ))
        .in_file(req.policy.file.clone())
        .help(
            "give every signer the same `verifier_ids` (or none, for the policy's), or export \
             `policy-controller`, whose authorities each carry a policy of their own",
        ));
    }
    // 4. the gaps
    gaps.extend(common_gaps(req, &rules, &untranslated));
    gaps.sort_by_key(|g| super::CHECKS.iter().position(|c| *c == g.check));
    // 5. the document
    let body = match req.engine {
        Engine::Kyverno => {
            kyverno::cluster_policy(&rules).map_err(|e| e.in_file(req.policy.file.clone()))?
        }
        Engine::KyvernoIvp => kyverno::image_validating_policy(&rules)
            .map_err(|e| e.in_file(req.policy.file.clone()))?,
        Engine::PolicyController => policy_controller::cluster_image_policy(&rules),
    };
    let header = header(req, &rules, &gaps);
    Ok(Export {
        document: yaml::document(&header, &body),
        gaps,
    })
}

/// An `--image` glob has only characters every engine reads alike.
fn check_image_glob(glob: &str) -> Result<(), InputError> {
    let bad = glob.chars().find(|c| {
        !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '/' | '@' | '*'))
    });
    match bad {
        _ if glob.is_empty() || glob.chars().all(|c| c == '*') => Err(InputError::new(format!(
            "--image `{glob}` names no registry: it would govern every image"
        ))
        .help("name the registry and repository, e.g. --image 'registry.example.com/acme/*'")),
        Some(c) => Err(InputError::new(format!(
            "--image `{glob}` holds `{c}`, which the engines' image globs do not read alike"
        ))
        .help(format!(
            "write the glob with {IMAGE_GLOB_CHARS} (`*` matches any characters, `/` too)"
        ))),
        None => Ok(()),
    }
}

/// A glob of [`check_image_glob`] as the policy-controller reads it: its `*` stops at `/` and
/// its `**` does not, so every run of `*` becomes `**`.
pub(crate) fn pc_glob(glob: &str) -> String {
    let mut out = String::with_capacity(glob.len() + 4);
    let mut in_star = false;
    for c in glob.chars() {
        if c == '*' {
            if !in_star {
                out.push_str("**");
            }
            in_star = true;
        } else {
            out.push(c);
            in_star = false;
        }
    }
    out
}

/// The signers: the command line's (trusted for the policy's `verifier_ids`), else the policy's.
fn signers(req: &Request) -> Result<Vec<Trusted>, InputError> {
    let policy = req.policy;
    let signers: Vec<Trusted> = match req.cli_signer {
        Some(CliSigner::Key { path, key }) => vec![Trusted {
            who: Who::Key {
                label: path.display().to_string(),
                pem: key.to_pem(),
            },
            verifier_ids: policy.verifier_ids.clone(),
        }],
        Some(CliSigner::Identity(id)) => vec![Trusted {
            who: Who::Identity {
                identity: id.identity.clone(),
                issuer: id.issuer.clone(),
            },
            verifier_ids: policy.verifier_ids.clone(),
        }],
        None => policy
            .signers
            .iter()
            .map(|s| Trusted {
                who: match &s.who {
                    SignerKind::Key { path, key, .. } => Who::Key {
                        label: path.clone(),
                        pem: key.to_pem(),
                    },
                    SignerKind::Identity { identity, issuer } => Who::Identity {
                        identity: identity.clone(),
                        issuer: issuer.clone(),
                    },
                },
                verifier_ids: s.verifier_ids(policy).to_vec(),
            })
            .collect(),
    };
    if signers.is_empty() {
        return Err(
            InputError::new("no signer to write into the engine's policy")
                .in_file(policy.file.clone())
                .help(
                    "name `signers` in the policy, or pass --key, or --certificate-identity with \
                 --certificate-oidc-issuer",
                ),
        );
    }
    Ok(signers)
}

/// The repositories' globs as one anchored regular expression, and the globs that have none.
fn repository_regex(globs: &[String]) -> (Option<String>, Vec<String>) {
    let mut parts = Vec::new();
    let mut untranslated = Vec::new();
    for g in globs {
        match glob_regex(g) {
            Some(r) => parts.push(r),
            None => untranslated.push(g.clone()),
        }
    }
    if !untranslated.is_empty() {
        return (None, untranslated);
    }
    (Some(format!("^(?:{})$", parts.join("|"))), untranslated)
}

/// A repository glob as `shipmoor admit` matches it (globset, `*` crossing `/`) in the regular
/// expressions of RE2, Go, Rust and OPA alike, without a backslash (JMESPath, CEL and Rego
/// each escape backslashes their own way): `*` is `.*`, `?` is `.`, a metacharacter is a class
/// of one (`[.]`). `None` for a glob with `**` (globset's any-directories form), a class, an
/// alternation, an escape, or `^`.
pub(crate) fn glob_regex(glob: &str) -> Option<String> {
    if glob.contains("**") {
        return None;
    }
    let mut out = String::with_capacity(glob.len() * 2);
    for c in glob.chars() {
        match c {
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            '[' | ']' | '{' | '}' | '\\' | '^' => return None,
            '.' | '+' | '(' | ')' | '|' | '$' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c if c.is_control() => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// The regular expression that removes a `resourceUri`'s `@<commit>` as `shipmoor admit` does:
/// the text after the last `@`, when it holds no `/`.
pub(crate) const COMMIT_SUFFIX: &str = "@[^@/]*$";

/// The gaps every engine shares.
fn common_gaps(req: &Request, rules: &Rules, untranslated: &[String]) -> Vec<Gap> {
    let policy = req.policy;
    let mut gaps = vec![
        Gap::new(
            "statement",
            "that the statement agrees with itself (one subject names a commit, `resourceUri` \
             names that commit, the extension's claim digest and head are the predicate's) and \
             is in a statement format `shipmoor admit` reads",
        ),
        Gap::new(
            "verified_levels",
            if policy.verified_levels.is_empty() {
                "that `verifiedLevels` holds the level of the statement's own verdict; the \
                 engine's policy reads the verdict itself (check `verdict`)"
                    .to_string()
            } else {
                format!(
                    "that `verifiedLevels` holds {}",
                    policy.verified_levels.join(", ")
                )
            },
        ),
        Gap::new(
            "fusion",
            "that the statement's fusion policy, re-run over its dispositions, gives its verdict, \
             `verificationResult` and `verifiedLevels`: a trusted signer's READY over an \
             unsatisfied required criterion passes the engine's policy",
        ),
    ];
    let trusted_root = req.trusted_root.or(policy.trusted_root.as_deref());
    if let Some(root) = trusted_root {
        if rules
            .signers
            .iter()
            .any(|s| matches!(s.who, Who::Identity { .. }))
        {
            gaps.push(Gap::new(
                "signature",
                format!(
                    "certificates chained to the trusted root `{}`: the engine's policy trusts \
                     the public-good Sigstore (Fulcio and Rekor); give the engine your \
                     Sigstore's roots (Kyverno: `roots` and `rekor.pubkey`; policy-controller: \
                     a TrustRoot and `trustRootRef`)",
                    root.display()
                ),
            ));
        }
    }
    if !untranslated.is_empty() {
        gaps.push(Gap::new(
            "resource_uri",
            format!(
                "the repositories: {} use `**`, a class, an alternation, an escape or `^`, \
                 which the export does not write as a regular expression, so the engine's \
                 policy admits any repository",
                untranslated
                    .iter()
                    .map(|g| format!("`{g}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if let Some(min) = policy.min_policy_version {
        gaps.push(Gap::new(
            "policy_version",
            format!("that the verdict was fused under fusion policy v{min} or later"),
        ));
    }
    if let Some(rego) = &policy.rego {
        gaps.push(Gap::new(
            "rego",
            format!(
                "the policy's Rego module `{}` (`data.shipmoor.admit.deny`, over the input of \
                 `shipmoor admit`)",
                rego.file
            ),
        ));
    }
    gaps
}

/// The checks the engine's policy makes, for the head comment.
fn checked(rules: &Rules, gaps: &[Gap]) -> Vec<&'static str> {
    super::CHECKS
        .iter()
        .copied()
        .filter(|c| match *c {
            // The engine reads and verifies the attestation itself.
            "parse" | "statement" | "verified_levels" | "fusion" | "policy_version" | "rego" => {
                false
            }
            "resource_uri" => rules.repository_regex.is_some(),
            "floor_required" => !rules.floor_required.is_empty(),
            "sandbox" => rules.require_sandbox,
            "isolated_signer" => rules.require_isolated_signer,
            _ => true,
        })
        .filter(|c| *c == "signature" || !gaps.iter().any(|g| g.check == *c))
        .collect()
}

/// The head comment: what the document is, how to write it again, what it reads, and what it
/// leaves to `shipmoor admit`.
fn header(req: &Request, rules: &Rules, gaps: &[Gap]) -> Vec<String> {
    let policy = req.policy;
    let mut command = format!(
        "shipmoor admit --policy {} --export {}",
        shell_word(&policy.file),
        req.engine.as_str()
    );
    for image in req.images {
        command.push_str(&format!(" --image {}", shell_word(image)));
    }
    match req.cli_signer {
        Some(CliSigner::Key { path, .. }) => command.push_str(&format!(
            " --key {}",
            shell_word(&path.display().to_string())
        )),
        Some(CliSigner::Identity(id)) => command.push_str(&format!(
            " --certificate-identity {} --certificate-oidc-issuer {}",
            shell_word(&id.identity),
            shell_word(&id.issuer)
        )),
        None => {}
    }
    if let Some(root) = req.trusted_root {
        command.push_str(&format!(
            " --trusted-root {}",
            shell_word(&root.display().to_string())
        ));
    }
    let reads = match req.engine {
        Engine::Kyverno | Engine::PolicyController => {
            "It reads the VSA as cosign's classic attestation: a DSSE envelope in the image's \
             `sha256-<digest>.att` tag."
        }
        Engine::KyvernoIvp => {
            "It reads the VSA as a Sigstore bundle attached as an OCI 1.1 referrer, else as \
             cosign's classic attestation (the `sha256-<digest>.att` tag), and needs its \
             transparency-log entry."
        }
    };
    let mut lines = wrap(
        &format!(
            "{}: what the admission policy {} (sha256 {}) checks, in the engine's own language.",
            req.engine.title(),
            policy.file,
            policy.sha256
        ),
        "",
    );
    lines.extend([
        "Written by".to_string(),
        format!("  {command}"),
        "Write it again with that command rather than editing it.".to_string(),
        String::new(),
    ]);
    lines.extend(wrap(reads, ""));
    lines.push(String::new());
    lines.extend(wrap(
        &format!("Checked here: {}.", checked(rules, gaps).join(", ")),
        "",
    ));
    lines.push(String::new());
    lines.push("Only `shipmoor admit` checks:".to_string());
    for g in gaps {
        lines.extend(wrap(&format!("- {}: {}", g.check, g.why), "  "));
    }
    lines
}

/// `text` in lines of at most 96 characters, every line after the first led by `indent`.
fn wrap(text: &str, indent: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.len() + 1 + word.len() > 96 {
            lines.push(std::mem::take(&mut line));
            line.push_str(indent);
        } else if !line.is_empty() && !line.ends_with(' ') {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines
}

/// `word` as a shell reads it back: bare when it is plain, else in single quotes.
fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | ':' | '@' | '+' | '=')
        })
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The policy's name in the cluster: `shipmoor-admit-` and the policy file's name, as a DNS label.
fn policy_name(file: &str) -> String {
    let stem = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let mut name = String::from("shipmoor-admit");
    for part in stem
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
    {
        name.push('-');
        name.push_str(part);
    }
    name.truncate(63);
    name.trim_end_matches('-').to_string()
}

/// A duration in Go's syntax (`168h`, `90m`, `45s`), which Kyverno's and CEL's parsers read.
pub(crate) fn go_duration(seconds: u64) -> String {
    if seconds % 3600 == 0 {
        format!("{}h", seconds / 3600)
    } else if seconds % 60 == 0 {
        format!("{}m", seconds / 60)
    } else {
        format!("{seconds}s")
    }
}

#[cfg(test)]
mod tests;
