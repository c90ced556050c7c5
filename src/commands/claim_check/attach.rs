//! `--attach REF`: the image named before any work (its manifest resolved and made a subject
//! of the statement), and the signed bundle pushed to its registry once the outputs are written
//! (phase 8).

use std::io::Write;

use crate::attest::SubjectArg;
use crate::cli::{ClaimCheckArgs, Sign};
use crate::error::{Error, InputError};
use crate::oci;

/// The image `--attach` names, its manifest resolved, and the registry client that resolved
/// it.
pub(super) struct AttachTarget {
    reference: oci::Reference,
    registry: oci::Registry,
}

/// `--attach REF`: a reference with a tag or digest, and a signed statement (the attachment is
/// the Sigstore bundle).
pub(super) fn attach_reference(args: &ClaimCheckArgs) -> Result<Option<oci::Reference>, Error> {
    let Some(given) = &args.attach else {
        if args.registry.allow_http_registry {
            return Err(Error::input(
                InputError::new(format!(
                    "{} is used only with --attach",
                    oci::PLAIN_HTTP_FLAG
                ))
                .help("add --attach REF, or drop the flag"),
            ));
        }
        return Ok(None);
    };
    let reference = oci::Reference::parse(given).map_err(|e| {
        let message = format!("--attach: {}", e.message);
        Error::input(InputError { message, ..e })
    })?;
    if args.sign == Sign::None {
        return Err(Error::input(
            InputError::new(
                "--attach pushes the signed VSA (its Sigstore bundle), and the run is unsigned",
            )
            .help("add --sign key --key PATH, or --sign keyless in CI"),
        ));
    }
    Ok(Some(reference))
}

/// Resolves the image `--attach` names: the registry client, and the statement's subject for
/// it (the repository's name and the manifest's SHA-256).
pub(super) fn resolve_attach_target(
    args: &ClaimCheckArgs,
    reference: oci::Reference,
) -> Result<(AttachTarget, SubjectArg), Error> {
    let registry = oci::Registry::new(&oci::Options {
        plain_http: args.registry.allow_http_registry,
    })?;
    let manifest = registry.resolve(&reference)?;
    let sha256 = manifest
        .digest
        .strip_prefix("sha256:")
        .ok_or_else(|| {
            Error::input(
                InputError::new(format!(
                    "--attach {reference}: the registry names the image by {}, not a SHA-256 digest",
                    manifest.digest
                ))
                .help("attestations name SHA-256 subjects: push the image to a registry that digests manifests with SHA-256 (the OCI default)"),
            )
        })?
        .to_string();
    let subject = SubjectArg {
        name: reference.name(),
        sha256,
    };
    Ok((
        AttachTarget {
            reference,
            registry,
        },
        subject,
    ))
}

/// Phase 8: the signed bundle, written, pushed to the image's registry.
pub(super) fn attach(
    target: &AttachTarget,
    bundle: Option<&[u8]>,
    quiet: bool,
) -> Result<(), Error> {
    let Some(bundle) = bundle else {
        // Keyless signing found no OIDC identity: the statement was written unsigned.
        return Err(Error::input(
            InputError::new(format!(
                "--attach {}: nothing attached, as the statement is unsigned (the outputs are written)",
                target.reference
            ))
            .help("give keyless signing an OIDC identity (SIGSTORE_ID_TOKEN, or `id-token: write` in GitHub Actions), or sign with --sign key"),
        ));
    };
    let attached = target
        .registry
        .attach(&target.reference, bundle, oci::Form::Both)?;
    if !quiet {
        let _ = writeln!(
            std::io::stderr(),
            "claim-check: attached to {} ({})",
            target.reference,
            attached.subject.digest
        );
        for line in crate::commands::attach::described(&target.reference, &attached) {
            let _ = writeln!(std::io::stderr(), "  {line}");
        }
    }
    Ok(())
}
