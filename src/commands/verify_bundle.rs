//! `shipmoor verify-bundle`: generic Sigstore bundle verification, with cosign's flag names, as the
//! sigstore-conformance CLI protocol calls it.
//!
//! In: `--bundle`, either `--key` or both `--certificate-identity` and
//! `--certificate-oidc-issuer`, an optional `--trusted-root` (default: the embedded Sigstore
//! public-good root; `--staging` is accepted and ignored, verification is always offline), and the
//! artifact as a file or `sha256:HEX`, and `--offline-key`. Out: exit 0 when the bundle is valid
//! (one `verified` line on stderr, and a `note` line when no log entry was checked), 1 when it
//! is not (the failed check on stderr), 2 for a usage error (the trust flags, an unreadable
//! file).
//!
//! 1. Choose the trust from the flags.
//! 2. Read every named file; one that cannot be read is a usage error.
//! 3. Verify and print the outcome: a keyed bundle that holds no transparency log entry (as
//!    `claim-check --sign key` writes it) with the key alone when `--offline-key` says so
//!    ([`crate::attest::sigstore::verify_keyed_bundle_without_log`]), and is refused, naming
//!    the flag, when it does not; any other bundle with
//!    [`crate::attest::sigstore::verify_bundle`].

use std::io::Write;
use std::path::Path;

use crate::attest::keys;
use crate::attest::sigstore::{self, Identity, Trust};
use crate::cli::VerifyBundleArgs;
use crate::error::{Error, InputError, EXIT_BLOCKED, EXIT_OK};

pub fn run(args: VerifyBundleArgs) -> Result<i32, Error> {
    // 1. The trust.
    let sig = &args.signature;
    let trust = match (
        &sig.key,
        &sig.certificate_identity,
        &sig.certificate_oidc_issuer,
    ) {
        (Some(key), None, None) => Trust::Key(key.clone()),
        (Some(_), _, _) => {
            return Err(usage(
                "`--key` cannot be combined with `--certificate-identity` or \
                 `--certificate-oidc-issuer`",
            ))
        }
        (None, Some(identity), Some(issuer)) => {
            Trust::Identity(Identity::new(identity.as_str(), issuer.as_str()))
        }
        (None, _, _) => {
            return Err(usage(
                "say what the bundle must be signed by: `--key PATH`, or both \
                 `--certificate-identity` and `--certificate-oidc-issuer`",
            ))
        }
    };

    // 2. The files.
    let bundle_bytes = read(&args.bundle, "bundle", super::replay::ATTESTATION_LIMIT)?;
    let mut key_pem = Vec::new();
    if let Trust::Key(key) = &trust {
        key_pem = read(key, "key", super::replay::KEY_LIMIT)?;
        keys::refuse_private_key(key)?;
    }
    if let Some(root) = &sig.trusted_root {
        read(root, "trusted root", super::replay::ATTESTATION_LIMIT)?;
    }
    let artifact = sigstore::parse_artifact(&args.artifact).map_err(|e| usage(e.to_string()))?;

    // 3. The verification.
    let json = String::from_utf8(bundle_bytes).map_err(|_| "bundle: not UTF-8 text".to_string());
    let without_log =
        matches!(trust, Trust::Key(_)) && json.as_deref().is_ok_and(sigstore::is_keyed_without_log);
    let outcome = json.and_then(|json| {
        match &trust {
        Trust::Key(_) if without_log && args.offline_key => {
            let key = std::str::from_utf8(&key_pem)
                .map_err(|_| "key: not UTF-8 text".to_string())
                .and_then(|pem| keys::load_verifying_key(pem).map_err(|e| format!("key: {e}")))?;
            sigstore::verify_keyed_bundle_without_log(&json, &artifact, &key)
                .map_err(|e| e.to_string())
        }
        Trust::Key(_) if without_log => Err(
            "the bundle is signed with a key and has no transparency log entry, so nothing shows \
             when it was signed or that the signing was logged\n  help: pass `--offline-key` to \
             verify it with the key alone (its signature and the artifact; no log entry is checked)"
                .to_string(),
        ),
        _ => sigstore::verify_bundle(&json, &artifact, &trust, sig.trusted_root.as_deref())
            .map_err(|e| e.to_string()),
    }
    });
    let mut stderr = std::io::stderr();
    match outcome {
        Ok(verified) => {
            let by = match (&trust, verified.identity(), verified.issuer()) {
                (Trust::Key(key), _, _) => format!("the key {}", key.display()),
                (_, Some(identity), Some(issuer)) => format!("{identity} ({issuer})"),
                _ => "the required identity".to_string(),
            };
            let _ = writeln!(stderr, "verified: {} signed by {by}", args.bundle.display());
            if without_log {
                let _ = writeln!(
                    stderr,
                    "note: no transparency log entry was checked (--offline-key): the bundle has none, so it shows who signed, not when, nor that the signing was logged"
                );
            }
            Ok(EXIT_OK)
        }
        Err(reason) => {
            let _ = writeln!(
                stderr,
                "verification failed: {}: {reason}",
                args.bundle.display()
            );
            Ok(EXIT_BLOCKED)
        }
    }
}

fn usage(message: impl Into<String>) -> Error {
    Error::input(InputError::new(message).help(
        "shipmoor verify-bundle --bundle FILE (--key KEY | --certificate-identity ID \
         --certificate-oidc-issuer URL) [--trusted-root FILE] FILE_OR_sha256:DIGEST",
    ))
}

/// The bytes of a file the user named, a regular file of at most `limit` bytes.
fn read(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, Error> {
    crate::nofollow::read_named(path, limit).map_err(|e| {
        Error::input(crate::nofollow::named_input_error(
            path,
            &format!("the {what}"),
            &e,
        ))
    })
}
