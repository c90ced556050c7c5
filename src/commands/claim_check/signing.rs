//! How the statement is signed (phase 5): the signing key, read with the input checks, the
//! OIDC token of keyless signing, and the signed forms.

use std::io::Write;
use std::path::Path;

use crate::attest::{self, keys::SigningKey, sigstore::Services};
use crate::cli::{ClaimCheckArgs, Sign};
use crate::error::{Error, InputError};
use crate::report::{Signing, SigningState};

use crate::commands::pretty_json;

/// How the statement will be signed, with the OIDC token of keyless signing: decided before
/// the statement is written, since the statement records it. `sign`: `--sign`; `key`: the key
/// `--sign key` signs with.
pub(super) fn signing(
    sign: Sign,
    key: Option<&SigningKey>,
    quiet: bool,
) -> Result<(Signing, Option<String>), Error> {
    let token = match sign {
        Sign::Keyless => attest::sigstore::ambient_token().map_err(|e| {
            Error::crash(format!("keyless signing: cannot get the OIDC token: {e}"))
        })?,
        _ => None,
    };
    let signing = match (sign, key, &token) {
        (Sign::Key, Some(k), _) => Signing {
            state: SigningState::Key,
            note: format!("signed with key {} ({})", k.keyid(), k.algorithm()),
        },
        (Sign::Keyless, _, Some(_)) => Signing {
            state: SigningState::Keyless,
            note: "signed keyless with Sigstore (Fulcio certificate, Rekor entry)".into(),
        },
        (Sign::Keyless, _, None) => Signing {
            state: SigningState::Unsigned,
            note: "UNSIGNED: --sign keyless found no OIDC identity (SIGSTORE_ID_TOKEN, or GitHub Actions with `id-token: write`; a pull request from a fork gets none): the attestation records the verdict but proves nothing about who produced it".into(),
        },
        _ => Signing {
            state: SigningState::Unsigned,
            note: "the attestation is unsigned (--sign none): it records the verdict but proves nothing about who produced it".into(),
        },
    };
    if sign == Sign::Keyless && token.is_none() && !quiet {
        let _ = writeln!(std::io::stderr(), "claim-check: warning: {}", signing.note);
    }
    Ok((signing, token))
}

/// The key `--sign key` signs with; `--key` only with `--sign key`.
pub(super) fn signing_key(args: &ClaimCheckArgs) -> Result<Option<SigningKey>, Error> {
    match (args.sign, &args.key) {
        (Sign::Key, Some(path)) => Ok(Some(load_key(path)?)),
        (Sign::Key, None) => Err(Error::input(
            InputError::new("--sign key needs --key PATH (a PKCS#8 PEM private key)")
                .help("pass --key, or sign keyless in CI with --sign keyless"),
        )),
        (_, Some(_)) => Err(Error::input(
            InputError::new("--key is used only with --sign key")
                .help("add --sign key, or drop --key"),
        )),
        _ => Ok(None),
    }
}

/// Loads the signing key, its password from `SHIPMOOR_KEY_PASSWORD` when it is encrypted.
fn load_key(path: &Path) -> Result<SigningKey, Error> {
    let bytes =
        crate::nofollow::read_named(path, crate::commands::replay::KEY_LIMIT).map_err(|e| {
            Error::input(crate::nofollow::named_input_error(
                path,
                "the signing key",
                &e,
            ))
        })?;
    let pem = String::from_utf8_lossy(&bytes);
    let password = std::env::var("SHIPMOOR_KEY_PASSWORD").ok();
    attest::keys::load_signing_key(&pem, password.as_deref().map(str::as_bytes))
        .map_err(|e| Error::input(e.to_input_error(path.display().to_string())))
}

/// The DSSE envelope and the Sigstore bundle, as written (either may be absent).
pub(super) type SignedForms = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Phase 5: the signed forms of the statement: with a key, a DSSE envelope and a Sigstore bundle
/// carrying it; keyless, a Sigstore bundle from Fulcio and Rekor.
pub(super) fn sign(
    statement: &[u8],
    signing: &Signing,
    key: Option<&SigningKey>,
    token: Option<&str>,
    services: &Services,
) -> Result<SignedForms, Error> {
    match (signing.state, key) {
        (SigningState::Key, Some(k)) => {
            let env = attest::dsse::sign(statement, attest::dsse::PAYLOAD_TYPE, k);
            let bundle = attest::keyed_bundle::to_bundle(&env)
                .map_err(|e| Error::crash(format!("bundle: {e}")))?;
            let env_json = serde_json::to_value(&env).map_err(Error::crash)?;
            Ok((Some(pretty_json(&env_json)?), Some(pretty_json(&bundle)?)))
        }
        (SigningState::Keyless, _) => {
            let token = token.ok_or_else(|| Error::crash("keyless signing without a token"))?;
            let bundle =
                attest::sigstore::sign_keyless(statement, token, services).map_err(|e| {
                    Error::crash(format!("keyless signing failed (nothing written): {e}"))
                })?;
            let mut b = bundle.into_bytes();
            if !b.ends_with(b"\n") {
                b.push(b'\n');
            }
            Ok((None, Some(b)))
        }
        _ => Ok((None, None)),
    }
}
