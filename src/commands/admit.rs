//! `shipmoor admit`: the decision of [`crate::admit`] on one attestation file, or on every VSA
//! attached to an image. Exit 0 allow, 1 deny, 2 usage or input error, 3 crash.

use std::io::Write as _;
use std::path::Path;

use time::OffsetDateTime;

use crate::admit::export::{self, Engine};
use crate::admit::{policy, Admission, Candidate, CheckStatus, CliSigner, Decision};
use crate::attest::keys;
use crate::attest::sigstore::Identity;
use crate::cli::{AdmitArgs, ExportEngine, SignatureArgs};
use crate::error::{Error, InputError, EXIT_BLOCKED, EXIT_OK};
use crate::oci;

pub fn run(args: AdmitArgs) -> Result<i32, Error> {
    let cli_signer = cli_signer(&args.signature)?;
    let policy = policy::load(&args.policy)?;
    if let Some(engine) = args.export {
        return export(&args, engine, &policy, cli_signer.as_ref());
    }
    if policy.signers.is_empty() && cli_signer.is_none() {
        return Err(Error::input(
            InputError::new("no signer to verify the attestation with")
                .in_file(policy.file.clone())
                .help("name `signers` in the policy, or pass --key, or --certificate-identity with --certificate-oidc-issuer"),
        ));
    }
    let subject = args.subject.as_deref().map(parse_digest).transpose()?;
    if args.image.len() > 1 {
        return Err(Error::input(
            InputError::new("--image names one image to decide on").help(
                "run `shipmoor admit` once per image; several --image globs are for --export",
            ),
        ));
    }
    let (subject, candidates, image) = match (&args.attestation, args.image.first()) {
        (Some(path), _) => {
            let Some(subject) = subject else {
                return Err(Error::input(
                    InputError::new("--attestation needs --subject: the artifact the VSA must speak for")
                        .help("pass --subject sha256:<64 hex digits> (an image's manifest digest, a file's SHA-256)"),
                ));
            };
            (subject, vec![read_candidate(path)?], None)
        }
        (None, Some(reference)) => from_image(reference, subject, args.allow_http_registry)?,
        (None, None) => {
            return Err(Error::input(
                InputError::new("nothing to admit").help("pass --attestation FILE or --image REF"),
            ))
        }
    };
    let admission = Admission {
        policy: &policy,
        subject,
        cli_signer: cli_signer.as_ref(),
        trusted_root: args.signature.trusted_root.as_deref(),
        // Admission reads the real clock: a pinned one (SOURCE_DATE_EPOCH) would make an old
        // attestation look fresh.
        now: OffsetDateTime::now_utc(),
    };
    let decision = admission.decide(&candidates, image);
    super::print_result(args.format, &decision, render)?;
    Ok(if decision.allowed() {
        EXIT_OK
    } else {
        EXIT_BLOCKED
    })
}

/// `--export`: the engine's policy on stdout, what it leaves to `shipmoor admit` on stderr.
fn export(
    args: &AdmitArgs,
    engine: ExportEngine,
    policy: &policy::Policy,
    cli_signer: Option<&CliSigner>,
) -> Result<i32, Error> {
    let engine = match engine {
        ExportEngine::Kyverno => Engine::Kyverno,
        ExportEngine::KyvernoIvp => Engine::KyvernoIvp,
        ExportEngine::PolicyController => Engine::PolicyController,
    };
    let out = export::export(&export::Request {
        policy,
        engine,
        images: &args.image,
        cli_signer,
        trusted_root: args.signature.trusted_root.as_deref(),
    })
    .map_err(Error::input)?;
    let mut notice = format!(
        "shipmoor admit --export {}: the engine's policy leaves these checks to `shipmoor admit`:\n",
        engine.as_str()
    );
    for gap in &out.gaps {
        notice.push_str(&format!("  - {}: {}\n", gap.check, gap.why));
    }
    eprint!("{notice}");
    std::io::stdout()
        .write_all(out.document.as_bytes())
        .map_err(|e| Error::crash(format!("cannot write the policy to stdout: {e}")))?;
    Ok(EXIT_OK)
}

/// The signer the command line names, if any (the same flags as `replay`).
fn cli_signer(s: &SignatureArgs) -> Result<Option<CliSigner>, Error> {
    match (&s.key, &s.certificate_identity, &s.certificate_oidc_issuer) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(Error::input(
            InputError::new("--key and a certificate identity exclude each other").help(
                "name one signer on the command line, or list several in the policy's `signers`",
            ),
        )),
        (Some(path), None, None) => {
            keys::refuse_private_key(path)?;
            let bytes =
                crate::nofollow::read_named(path, super::replay::KEY_LIMIT).map_err(|e| {
                    Error::input(crate::nofollow::named_input_error(path, "the key", &e))
                })?;
            let pem = String::from_utf8_lossy(&bytes);
            let key = keys::load_verifying_key(&pem)
                .map_err(|e| Error::input(e.to_input_error(path.display().to_string())))?;
            Ok(Some(CliSigner::Key {
                path: path.clone(),
                key,
            }))
        }
        (None, Some(i), Some(o)) => Ok(Some(CliSigner::Identity(Identity::new(i, o)))),
        (None, None, None) => Ok(None),
        (None, _, _) => Err(Error::input(
            InputError::new("--certificate-identity and --certificate-oidc-issuer go together")
                .help("pass both, or verify with --key"),
        )),
    }
}

/// `sha256:HEX` → lowercase hex.
pub(crate) fn parse_digest(s: &str) -> Result<String, Error> {
    let hex = s.strip_prefix("sha256:").unwrap_or("");
    if hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(hex.to_ascii_lowercase());
    }
    Err(Error::input(
        InputError::new(format!("--subject `{s}` is not a SHA-256 digest"))
            .help("pass --subject sha256:<64 hex digits>"),
    ))
}

fn read_candidate(path: &Path) -> Result<Candidate, Error> {
    let bytes =
        crate::nofollow::read_named(path, super::replay::ATTESTATION_LIMIT).map_err(|e| {
            Error::input(crate::nofollow::named_input_error(
                path,
                "the attestation",
                &e,
            ))
        })?;
    Ok(Candidate {
        source: path.display().to_string(),
        bytes,
    })
}

/// The image's digest and every VSA attached to it.
fn from_image(
    reference: &str,
    subject: Option<String>,
    allow_http: bool,
) -> Result<(String, Vec<Candidate>, Option<String>), Error> {
    let reference = oci::Reference::parse(reference)?;
    let registry = oci::Registry::new(&oci::Options {
        plain_http: allow_http,
    })?;
    let manifest = registry.resolve(&reference)?;
    let digest = manifest
        .digest
        .strip_prefix("sha256:")
        .map(str::to_ascii_lowercase)
        .ok_or_else(|| {
            Error::input(
                InputError::new(format!(
                    "{}: the registry names the manifest by `{}`, not a SHA-256 digest",
                    reference.as_str(),
                    manifest.digest
                ))
                .help("admission checks SHA-256 subjects: push the image to a registry that digests manifests with SHA-256 (the OCI default)"),
            )
        })?;
    if let Some(given) = subject.filter(|s| *s != digest) {
        return Err(Error::input(
            InputError::new(format!(
                "--subject sha256:{given} is not the image {} (sha256:{digest})",
                reference.as_str()
            ))
            .help("leave --subject out with --image: the image's manifest digest is the subject"),
        ));
    }
    let image = format!("{}@{}", reference.name(), manifest.digest);
    let candidates = registry
        .attestations(&reference, &manifest)?
        .into_iter()
        .map(|a| Candidate {
            source: match a.via {
                crate::oci::Via::ClassicTag => {
                    format!("{image} `.att` layer {} (classic-tag)", a.digest)
                }
                _ => format!("{image} referrer {} ({})", a.digest, a.via.as_str()),
            },
            bytes: a.bundle,
        })
        .collect();
    Ok((digest, candidates, Some(image)))
}

/// The decision for a terminal.
pub fn render(d: &Decision) -> String {
    let mut out = format!(
        "Admit  {}  ·  {}  ·  policy {}\n",
        if d.allowed() { "ALLOW" } else { "DENY" },
        short_digests(d.image.as_deref().unwrap_or(&d.subject)),
        d.policy.file
    );
    for a in &d.attestations {
        out.push_str(&format!(
            "  attestation {}{}\n",
            a.source,
            match &a.verdict {
                Some(v) => format!("  ·  {v}"),
                None => String::new(),
            }
        ));
        for c in &a.checks {
            if c.status == CheckStatus::NotRun {
                continue;
            }
            out.push_str(&format!(
                "    {:<8} {:<20} {}\n",
                c.status.as_str(),
                c.name,
                short_digests(&c.detail)
            ));
        }
        let not_run = a
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::NotRun)
            .count();
        if not_run > 0 {
            out.push_str(&format!(
                "    {not_run} later checks not run: nothing more is read from an attestation that fails its {}\n",
                a.checks
                    .iter()
                    .find(|c| c.status == CheckStatus::Failed)
                    .map_or("parse", |c| c.name)
            ));
        }
    }
    if !d.reasons.is_empty() {
        out.push_str("  deny reasons:\n");
        for r in &d.reasons {
            out.push_str(&format!("    - {r}\n"));
        }
    }
    out
}

/// `sha256:` and 64 hex digits shortened to their first 12 for a terminal line (the JSON
/// decision keeps them whole).
fn short_digests(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("sha256:") {
        let (before, from) = rest.split_at(at);
        out.push_str(before);
        let hex = &from[7..];
        let n = hex.bytes().take_while(u8::is_ascii_hexdigit).count();
        if n == 64 {
            out.push_str(&from[..7 + 12]);
            out.push('…');
            rest = &hex[64..];
        } else {
            out.push_str("sha256:");
            rest = hex;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn digests_are_shortened_for_the_terminal_only_when_whole() {
        let d = format!("sha256:{} and sha256:12", "ab".repeat(32));
        assert_eq!(
            super::short_digests(&d),
            "sha256:abababababab… and sha256:12"
        );
    }
}
