//! The admission policy (book: admission.md): the YAML rules every platform team needs, and a Rego
//! module for anything else.
//!
//! [`load`] reads and validates a policy file, reporting every problem at once with its file,
//! line and a fix (as the acceptance file does); the types below are what admission checks
//! against.
//!
//! Steps of [`load`]:
//! 1. read the file and hash its bytes;
//! 2. build the spanned YAML tree ([`crate::spanned_yaml`], the acceptance file's reader too; a
//!    syntax error stops here, reported once at its position);
//! 3. validate the tree key by key with the [`Validator`]'s typed readers, collecting
//!    every problem: unknown keys (with a did-you-mean), wrong types, values out of their
//!    domain; read each signer key and check the trusted root exists, relative to the policy's
//!    directory; compile the Rego module (its errors name the module's own file and line);
//! 4. report every problem sorted by position (the Rego module's after the policy's), or
//!    return the [`Policy`] with its defaults filled in.

use std::path::{Path, PathBuf};

use saphyr_parser::ScalarStyle;

use crate::attest::keys::VerifyingKey;
use crate::error::{Error, InputError};
use crate::spanned_yaml::{
    build_tree_of, core_int, describe, is_null, short, Entry, Fatal, FileKind, Kind, Node, Pos,
    Problem, Validator,
};
use crate::text::closest;
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
    /// Admit only a statement whose floor ran sandboxed: `no_new_privs` and Landlock's
    /// filesystem rules and ptrace restriction at head and base (book: security.md).
    pub require_sandbox: bool,
    /// Admit only a statement signed by a job that ran none of the change's code: a fuse of
    /// shards other jobs of its workflow run observed (book: trust-boundary.md).
    pub require_isolated_signer: bool,
    /// The oldest `timeVerified` admitted, as an age in seconds (`7d`, `12h`, `30m`, `90s`).
    pub max_age_seconds: Option<u64>,
    /// Globs over `resourceUri` without its `@<commit>` (`*` crosses `/`). Required: `["*"]`
    /// admits any repository, and says so.
    pub repositories: Vec<String>,
    /// Levels `verifiedLevels` must all contain. Empty: the level of the statement's own verdict
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

/// The `verifier.id` a policy admits when it names none: Claim Check's own.
pub const DEFAULT_VERIFIER_ID: &str = crate::format::statement::VERIFIER_ID;

const POLICY_FILE: FileKind = FileKind {
    name: "admission policy",
    schema: "policy schema",
};

const TOP_KEYS: &[&str] = &[
    "version",
    "verifier_ids",
    "allowed_verdicts",
    "floor_required",
    "min_policy_version",
    "require_sandbox",
    "require_isolated_signer",
    "max_age",
    "repositories",
    "verified_levels",
    "signers",
    "trusted_root",
    "rego",
];
const SIGNER_KEYS: &[&str] = &["key", "identity", "issuer", "verifier_ids"];

const VERDICTS: [Verdict; 4] = [
    Verdict::Ready,
    Verdict::ReadyWithGaps,
    Verdict::Inconclusive,
    Verdict::Blocked,
];

const SKELETON: &str =
    "start with `version: 1` and `repositories: [\"git+https://github.com/acme/*\"]` \
    (see the policy reference, https://shipmoor.github.io/claim-check/book/admission.html#the-policy-file)";
const REPOSITORIES_EXAMPLE: &str = "repositories: [\"git+https://github.com/acme/*\"]";
const REPOSITORIES_HELP: &str = "list the repositories to admit, as globs over `resourceUri` \
    without its `@<commit>`, e.g. `repositories: [\"git+https://github.com/acme/*\"]`; a policy \
    that admits every repository says so: `repositories: [\"*\"]`";
const SIGNER_HELP: &str = "write `- key: keys/claim-check.pub` (a PEM public key), or \
    `- identity: \"https://github.com/acme/app/.github/workflows/ci.yml@refs/heads/main\"` with \
    `issuer: \"https://token.actions.githubusercontent.com\"`";
const RELATIVE_HELP: &str = "paths in the policy are relative to the policy file's directory";

/// Reads, validates and compiles the admission policy at `path`: every problem at once, each
/// with its file, line and a fix.
pub fn load(path: &Path) -> Result<Policy, Error> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        InputError::new(format!("cannot read the admission policy: {e}"))
            .in_file(file.clone())
            .help("check the path given to `--policy`")
    })?;
    let sha256 = crate::evidence::sha256_hex(&bytes);
    let text = String::from_utf8(bytes).map_err(|_| {
        InputError::new("the admission policy is not UTF-8 text")
            .in_file(file.clone())
            .help("save the policy as UTF-8")
    })?;
    let dir = path.parent().unwrap_or(Path::new(""));
    parse(&text, &file, dir, sha256).map_err(Error::Input)
}

/// [`load`] of `text`, read from `file`, whose relative paths start at `dir`.
pub(crate) fn parse(
    text: &str,
    file: &str,
    dir: &Path,
    sha256: String,
) -> Result<Policy, Vec<InputError>> {
    let mut problems = Vec::new();
    let mut module_errors = Vec::new();
    let rules = match build_tree_of(text, POLICY_FILE, &mut problems) {
        Ok(root) => {
            let mut reader = Reader {
                v: Validator::default(),
                dir,
                module_errors: Vec::new(),
            };
            let rules = reader.document(root.as_ref());
            problems.append(&mut reader.v.problems);
            module_errors = reader.module_errors;
            rules
        }
        Err(Fatal) => None,
    };
    match rules {
        Some(rules) if problems.is_empty() && module_errors.is_empty() => Ok(Policy {
            file: file.to_string(),
            sha256,
            verifier_ids: rules.verifier_ids,
            allowed_verdicts: rules.allowed_verdicts,
            floor_required: rules.floor_required,
            min_policy_version: rules.min_policy_version,
            require_sandbox: rules.require_sandbox,
            require_isolated_signer: rules.require_isolated_signer,
            max_age_seconds: rules.max_age_seconds,
            repositories: rules.repositories,
            verified_levels: rules.verified_levels,
            signers: rules.signers,
            trusted_root: rules.trusted_root,
            rego: rules.rego,
        }),
        _ => {
            if problems.is_empty() && module_errors.is_empty() {
                // Every path that yields no policy records why; this keeps the promise that an
                // `Err` explains itself should a later edit break that.
                problems.push(Problem::new(
                    Pos::START,
                    "the admission policy could not be read",
                    "check the file against the policy reference, https://shipmoor.github.io/claim-check/book/admission.html#the-policy-file",
                ));
            }
            problems.sort_by_key(|p| p.pos);
            let mut errors: Vec<InputError> = problems
                .into_iter()
                .map(|p| {
                    InputError::new(p.message)
                        .at(file, p.pos.line, p.pos.col)
                        .help(p.help)
                })
                .collect();
            // The Rego module's errors point into the module, after the policy's own.
            errors.append(&mut module_errors);
            Err(errors)
        }
    }
}

/// The validated rules, before the file's identity is attached.
struct Rules {
    verifier_ids: Vec<String>,
    allowed_verdicts: Vec<Verdict>,
    floor_required: Vec<String>,
    min_policy_version: Option<u32>,
    require_sandbox: bool,
    require_isolated_signer: bool,
    max_age_seconds: Option<u64>,
    repositories: Vec<String>,
    verified_levels: Vec<String>,
    signers: Vec<Signer>,
    trusted_root: Option<PathBuf>,
    rego: Option<super::rego::RegoPolicy>,
}

/// Walks the policy's tree with the typed readers the acceptance file is read with too (so that
/// a wrong type reads the same in both files) and the policy's own rules. Each method returns
/// `None` when what it reads is invalid, having recorded why.
struct Reader<'d> {
    v: Validator,
    /// The policy file's directory, where its relative paths start.
    dir: &'d Path,
    /// Errors inside the Rego module, which carry the module's own file and line.
    module_errors: Vec<InputError>,
}

impl Reader<'_> {
    fn document(&mut self, root: Option<&Node>) -> Option<Rules> {
        let root = match root {
            Some(node) if !is_null(node) => node,
            _ => {
                self.v
                    .report(Pos::START, "the admission policy is empty", SKELETON);
                return None;
            }
        };
        let entries = match &root.kind {
            Kind::Map(entries) => entries,
            Kind::Rejected => return None,
            _ => {
                self.v.report(
                    Pos::START,
                    format!(
                        "the admission policy must be a mapping of rules, found {}",
                        describe(root)
                    ),
                    SKELETON,
                );
                return None;
            }
        };
        let f = self.v.fields(entries, TOP_KEYS, "the admission policy");

        let version = match f.raw("version") {
            Some(e) => self.version(e),
            None => {
                self.v.report(
                    root.pos,
                    "missing `version`",
                    "add `version: 1` at the top of the file (the policy format this release reads)",
                );
                None
            }
        };
        let verifier_ids = match f.get("verifier_ids") {
            Some(e) => self.verifier_ids(e),
            None => Some(vec![DEFAULT_VERIFIER_ID.to_string()]),
        };
        let allowed_verdicts = match f.get("allowed_verdicts") {
            Some(e) => self.verdicts(e),
            None => Some(vec![Verdict::Ready, Verdict::ReadyWithGaps]),
        };
        let floor_required = match f.get("floor_required") {
            Some(e) => self.items(
                e,
                "a criterion id",
                "floor_required: [\"refund-voids-payment-intent\"]",
            ),
            None => Some(Vec::new()),
        };
        let min_policy_version = match f.get("min_policy_version") {
            Some(e) => self.policy_version(e).map(Some),
            None => Some(None),
        };
        let require_sandbox = match f.get("require_sandbox") {
            Some(e) => self.v.flag(e),
            None => Some(false),
        };
        let require_isolated_signer = match f.get("require_isolated_signer") {
            Some(e) => self.v.flag(e),
            None => Some(false),
        };
        let max_age_seconds = match f.get("max_age") {
            Some(e) => self.max_age(e).map(Some),
            None => Some(None),
        };
        let repositories = match f.raw("repositories") {
            Some(e) => self.repositories(e),
            None => {
                self.v
                    .report(root.pos, "missing `repositories`", REPOSITORIES_HELP);
                None
            }
        };
        let verified_levels = match f.get("verified_levels") {
            Some(e) => self.items(
                e,
                "a level",
                "verified_levels: [\"SHIPMOOR_CLAIM_CHECK_READY\"]",
            ),
            None => Some(Vec::new()),
        };
        let signers = match f.get("signers") {
            Some(e) => self.signers(e),
            None => Some(Vec::new()),
        };
        let trusted_root = match f.get("trusted_root") {
            Some(e) => self.trusted_root(e).map(Some),
            None => Some(None),
        };
        let rego = match f.get("rego") {
            Some(e) => self.rego(e).map(Some),
            None => Some(None),
        };
        version?;
        Some(Rules {
            verifier_ids: verifier_ids?,
            allowed_verdicts: allowed_verdicts?,
            floor_required: floor_required?,
            min_policy_version: min_policy_version?,
            require_sandbox: require_sandbox?,
            require_isolated_signer: require_isolated_signer?,
            max_age_seconds: max_age_seconds?,
            repositories: repositories?,
            verified_levels: verified_levels?,
            signers: signers?,
            trusted_root: trusted_root?,
            rego: rego?,
        })
    }

    fn version(&mut self, e: &Entry) -> Option<()> {
        match &e.value.kind {
            Kind::Rejected => None,
            Kind::Scalar {
                text,
                style: ScalarStyle::Plain,
            } => match core_int(text) {
                Some(n) if n == i128::from(POLICY_VERSION) => Some(()),
                Some(n) if n > i128::from(POLICY_VERSION) => {
                    self.v.report(
                        Validator::value_pos(e),
                        format!(
                            "policy format version {n} is newer than this release reads \
                             (version {POLICY_VERSION})"
                        ),
                        format!(
                            "upgrade shipmoor, or write the policy in format `version: {POLICY_VERSION}`"
                        ),
                    );
                    None
                }
                _ => self.bad_version(e),
            },
            _ => self.bad_version(e),
        }
    }

    fn bad_version(&mut self, e: &Entry) -> Option<()> {
        self.v.report(
            Validator::value_pos(e),
            format!(
                "`version` must be the integer `{POLICY_VERSION}`, found {}",
                describe(&e.value)
            ),
            format!("set `version: {POLICY_VERSION}` (the policy format this release reads)"),
        );
        None
    }

    /// A list of non-blank strings, as written; an empty list is no items.
    fn items(&mut self, e: &Entry, what: &str, example: &str) -> Option<Vec<String>> {
        let items = self.v.strings(e, example)?;
        let mut ok = true;
        for (item, pos) in &items {
            if item.trim().is_empty() {
                self.v.report(
                    *pos,
                    format!("an item of `{}` is empty", e.key),
                    format!("remove it or write {what}, e.g. `{example}`"),
                );
                ok = false;
            }
        }
        ok.then(|| items.into_iter().map(|(item, _)| item).collect())
    }

    fn verifier_ids(&mut self, e: &Entry) -> Option<Vec<String>> {
        const EXAMPLE: &str = "verifier_ids: [\"https://github.com/shipmoor/claim-check\"]";
        let ids = self.items(e, "a `verifier.id`", EXAMPLE)?;
        if ids.is_empty() {
            self.v.report(
                Validator::value_pos(e),
                "`verifier_ids` is empty: no `verifier.id` would be trusted",
                format!(
                    "list the `verifier.id`s to admit, e.g. `{EXAMPLE}`, or remove the key for \
                     that default"
                ),
            );
            return None;
        }
        Some(ids)
    }

    fn verdicts(&mut self, e: &Entry) -> Option<Vec<Verdict>> {
        const EXAMPLE: &str = "allowed_verdicts: [\"READY\", \"READY WITH GAPS\"]";
        let items = self.v.strings(e, EXAMPLE)?;
        let names = VERDICTS
            .iter()
            .map(|v| format!("`{}`", v.as_str()))
            .collect::<Vec<_>>()
            .join(", ");
        let mut verdicts = Vec::new();
        let mut ok = true;
        for (text, pos) in &items {
            match Verdict::parse(text) {
                Some(v) if !verdicts.contains(&v) => verdicts.push(v),
                Some(_) => {}
                None => {
                    let help = match suggest_verdict(text) {
                        Some(v) => {
                            format!("did you mean `{}`? the verdicts are {names}", v.as_str())
                        }
                        None => format!("write one of the verdicts: {names}"),
                    };
                    self.v
                        .report(*pos, format!("`{}` is not a verdict", short(text)), help);
                    ok = false;
                }
            }
        }
        if ok && verdicts.is_empty() {
            self.v.report(
                Validator::value_pos(e),
                "`allowed_verdicts` is empty: no VSA would be admitted",
                format!(
                    "list the verdicts to admit, e.g. `{EXAMPLE}`, or remove the key for that default"
                ),
            );
            return None;
        }
        ok.then_some(verdicts)
    }

    fn policy_version(&mut self, e: &Entry) -> Option<u32> {
        let Kind::Scalar { text, style } = &e.value.kind else {
            if !matches!(e.value.kind, Kind::Rejected) {
                self.bad_policy_version(e, "write it like `min_policy_version: v3`".to_string());
            }
            return None;
        };
        let Some(n) = fusion_policy_number(text) else {
            let help = if *style == ScalarStyle::Plain && core_int(text).is_some() {
                format!("write `min_policy_version: v{}`", text.trim())
            } else {
                "write it like `min_policy_version: v3` (the fusion policy a VSA records)"
                    .to_string()
            };
            self.bad_policy_version(e, help);
            return None;
        };
        let known = fusion_policy_number(crate::verdict::POLICY);
        if known.is_some_and(|known| n > known) {
            self.v.report(
                Validator::value_pos(e),
                format!(
                    "`min_policy_version` is v{n}, newer than the fusion policy this release \
                     knows ({})",
                    crate::verdict::POLICY
                ),
                format!(
                    "no VSA this release can check would be admitted: lower it to `{}`, or \
                     upgrade shipmoor",
                    crate::verdict::POLICY
                ),
            );
            return None;
        }
        Some(n)
    }

    fn bad_policy_version(&mut self, e: &Entry, help: String) {
        self.v.report(
            Validator::value_pos(e),
            format!(
                "`min_policy_version` must be a fusion policy like `v3`, found {}",
                describe(&e.value)
            ),
            help,
        );
    }

    fn max_age(&mut self, e: &Entry) -> Option<u64> {
        let Kind::Scalar { text, style } = &e.value.kind else {
            if !matches!(e.value.kind, Kind::Rejected) {
                self.bad_age(
                    e,
                    "write one number and one unit, e.g. `max_age: 7d`".to_string(),
                );
            }
            return None;
        };
        match duration_seconds(text) {
            Some(0) => {
                self.v.report(
                    Validator::value_pos(e),
                    "`max_age` is zero: no VSA would be admitted",
                    "give the oldest age to admit, e.g. `max_age: 7d`",
                );
                None
            }
            Some(seconds) => Some(seconds),
            None => {
                let help = if *style == ScalarStyle::Plain && core_int(text).is_some() {
                    format!("add a unit: `max_age: {}s` for seconds", text.trim())
                } else {
                    "write one number and one unit (`d`, `h`, `m` or `s`), e.g. `max_age: 36h`"
                        .to_string()
                };
                self.bad_age(e, help);
                None
            }
        }
    }

    fn bad_age(&mut self, e: &Entry, help: String) {
        self.v.report(
            Validator::value_pos(e),
            format!(
                "`max_age` must be a duration like `7d`, `12h`, `30m` or `90s`, found {}",
                describe(&e.value)
            ),
            help,
        );
    }

    fn repositories(&mut self, e: &Entry) -> Option<Vec<String>> {
        if is_null(&e.value) {
            self.v.report(
                Validator::value_pos(e),
                "`repositories` is empty: no repository would be admitted",
                REPOSITORIES_HELP,
            );
            return None;
        }
        let globs = self.v.globs(e, REPOSITORIES_EXAMPLE)?;
        if globs.is_empty() {
            self.v.report(
                Validator::value_pos(e),
                "`repositories` is empty: no repository would be admitted",
                REPOSITORIES_HELP,
            );
            return None;
        }
        Some(globs)
    }

    fn signers(&mut self, e: &Entry) -> Option<Vec<Signer>> {
        let items = self
            .v
            .sequence(e, "signers: [{key: keys/claim-check.pub}]")?;
        if items.is_empty() {
            self.v.report(
                Validator::value_pos(e),
                "`signers` is empty: no signer would be trusted",
                "name at least one signer, or remove `signers` to take the signer from the \
                 command line (`--key`, or `--certificate-identity` with `--certificate-oidc-issuer`)",
            );
            return None;
        }
        let mut signers = Vec::with_capacity(items.len());
        let mut ok = true;
        for item in items {
            let signer = match &item.kind {
                Kind::Map(entries) => self.signer(item, entries),
                Kind::Rejected => None,
                _ => {
                    self.v.report(
                        item.pos,
                        format!("each signer must be a mapping, found {}", describe(item)),
                        SIGNER_HELP,
                    );
                    None
                }
            };
            match signer {
                Some(s) => signers.push(s),
                None => ok = false,
            }
        }
        ok.then_some(signers)
    }

    fn signer(&mut self, item: &Node, entries: &[Entry]) -> Option<Signer> {
        const IDENTITY_EXAMPLE: &str =
            "identity: \"https://github.com/acme/app/.github/workflows/ci.yml@refs/heads/main\"";
        const ISSUER_EXAMPLE: &str = "issuer: \"https://token.actions.githubusercontent.com\"";
        let f = self.v.fields(entries, SIGNER_KEYS, "a signer");
        let verifier_ids = match f.get("verifier_ids") {
            Some(e) => self.verifier_ids(e).map(Some),
            None => Some(None),
        };
        let who = match (f.get("key"), f.get("identity"), f.get("issuer")) {
            (Some(key), None, None) => self.key(key),
            (Some(key), _, _) => {
                self.v.report(
                    key.key_pos,
                    "a signer names both a `key` and a certificate `identity` or `issuer`",
                    "make them two signers: `- key: PATH`, and `- identity: …` with `issuer: …`",
                );
                None
            }
            (None, Some(identity), Some(issuer)) => {
                let identity = self.v.text(identity, IDENTITY_EXAMPLE);
                let issuer = self.v.text(issuer, ISSUER_EXAMPLE);
                Some(SignerKind::Identity {
                    identity: identity?,
                    issuer: issuer?,
                })
            }
            (None, Some(identity), None) => {
                self.v.report(
                    identity.key_pos,
                    "the signer's `identity` has no `issuer`",
                    format!("add the OIDC issuer of the identity's token, e.g. `{ISSUER_EXAMPLE}`"),
                );
                None
            }
            (None, None, Some(issuer)) => {
                self.v.report(
                    issuer.key_pos,
                    "the signer's `issuer` has no `identity`",
                    format!(
                        "add the certificate identity it vouches for, e.g. `{IDENTITY_EXAMPLE}`"
                    ),
                );
                None
            }
            (None, None, None) => {
                self.v.report(
                    item.pos,
                    "a signer must name a `key`, or an `identity` and its `issuer`",
                    SIGNER_HELP,
                );
                None
            }
        };
        Some(Signer {
            who: who?,
            verifier_ids: verifier_ids?,
        })
    }

    /// A signer's public key, read now so that a wrong path fails when the policy loads, not
    /// at the first admission.
    fn key(&mut self, e: &Entry) -> Option<SignerKind> {
        let path = self.v.text(e, "key: keys/claim-check.pub")?;
        let resolved = self.dir.join(&path);
        let bytes = match std::fs::read(&resolved) {
            Ok(bytes) => bytes,
            Err(err) => {
                self.v.report(
                    Validator::value_pos(e),
                    format!(
                        "cannot read the signer key `{}` ({}): {err}",
                        short(&path),
                        resolved.display()
                    ),
                    RELATIVE_HELP,
                );
                return None;
            }
        };
        let Ok(pem) = String::from_utf8(bytes) else {
            self.v.report(
                Validator::value_pos(e),
                format!(
                    "the signer key `{}` is not PEM text (a DER key?)",
                    short(&path)
                ),
                "convert it to PEM with `openssl pkey -pubin -inform DER -in KEY.der -out key.pub`",
            );
            return None;
        };
        match crate::attest::keys::load_verifying_key(&pem) {
            Ok(key) => Some(SignerKind::Key {
                path,
                resolved,
                key,
            }),
            Err(err) => {
                self.v.report(
                    Validator::value_pos(e),
                    format!(
                        "the signer key `{}` is not a usable public key: {err}",
                        short(&path)
                    ),
                    err.help(),
                );
                None
            }
        }
    }

    fn trusted_root(&mut self, e: &Entry) -> Option<PathBuf> {
        let path = self.v.text(e, "trusted_root: sigstore/trusted_root.json")?;
        let resolved = self.dir.join(&path);
        if !resolved.is_file() {
            self.v.report(
                Validator::value_pos(e),
                format!(
                    "the trusted root `{}` is not a file ({})",
                    short(&path),
                    resolved.display()
                ),
                format!(
                    "{RELATIVE_HELP}; a trusted root is a Sigstore `trusted_root.json` \
                     (`cosign trusted-root create` writes one)"
                ),
            );
            return None;
        }
        Some(resolved)
    }

    fn rego(&mut self, e: &Entry) -> Option<super::rego::RegoPolicy> {
        let path = self.v.text(e, "rego: policies/extra.rego")?;
        let resolved = self.dir.join(&path);
        if !resolved.is_file() {
            self.v.report(
                Validator::value_pos(e),
                format!(
                    "the Rego module `{}` is not a file ({})",
                    short(&path),
                    resolved.display()
                ),
                RELATIVE_HELP,
            );
            return None;
        }
        match super::rego::RegoPolicy::load(self.dir, &path) {
            Ok(rego) => Some(rego),
            Err(err) => {
                self.module_errors.push(err);
                None
            }
        }
    }
}

/// The verdict a misspelt name most likely means: the same words in other case or separators
/// (`ready_with_gaps`), or within two edits (`READDY`).
fn suggest_verdict(text: &str) -> Option<Verdict> {
    let normal = text
        .to_uppercase()
        .replace(['_', '-'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let names: Vec<&str> = VERDICTS.iter().map(|v| v.as_str()).collect();
    Verdict::parse(&normal).or_else(|| closest(&normal, &names).and_then(Verdict::parse))
}

/// `v3` → 3: the fusion policy's name as statements record it.
fn fusion_policy_number(text: &str) -> Option<u32> {
    let digits = text.strip_prefix('v')?;
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|n| *n > 0)
}

/// `7d`, `12h`, `30m`, `90s` → seconds; `None` for any other form or an overflow.
fn duration_seconds(text: &str) -> Option<u64> {
    let unit = text.chars().last()?;
    let scale = match unit {
        'd' => 86_400,
        'h' => 3_600,
        'm' => 60,
        's' => 1,
        _ => return None,
    };
    let digits = &text[..text.len() - 1];
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(scale)
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
