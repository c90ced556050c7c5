//! Sigstore: verifying bundles offline, signing statements keyless, finding the identity token.
//!
//! Built on the official sigstore-rust crates (`sigstore-verify`, `sigstore-sign`,
//! `sigstore-oidc`); this module only chooses their inputs and words their failures.
//!
//! **Verification** ([`verify_bundle`]). In: a bundle's JSON, the artifact (its bytes or its
//! SHA-256), what to trust (a public key, or a certificate identity and its OIDC issuer) and an
//! optional trusted root file. Out: a [`VerifiedBundle`] (the DSSE payload, the signer's identity
//! and issuer), or an error naming the check that failed. Never touches the network: the trusted
//! root comes from the file, else from the Sigstore public-good root embedded in
//! `sigstore-trust-root` (no TUF refresh).
//!
//! 1. Load the trusted root.
//! 2. Parse the bundle (structure before crypto).
//! 3. Choose the policy: the key (a keyed bundle without a transparency log entry is refused
//!    here: [`verify_keyed_bundle_without_log`] and `shipmoor replay --key` verify those), or
//!    the identity and issuer.
//! 4. `sigstore-verify` checks signing times (signed entry timestamps, RFC 3161 timestamps), the
//!    certificate chain at those times, its SCT, the identity policy, the inclusion proof against
//!    its signed checkpoint, the signature, the artifact binding and the log entry's consistency.
//!    For a DSSE bundle the artifact binding means: the artifact's SHA-256 (or SHA-512) equals the
//!    digest of one subject of the in-toto statement, so a statement whose subjects carry only
//!    other digests (`gitCommit`) cannot be verified this way.
//! 5. Return what was verified.
//!
//! **A keyed bundle without a log entry** ([`verify_keyed_bundle_without_log`], on request
//! only, as cosign's `--insecure-ignore-tlog`): the same bundle with no transparency log entry
//! and no timestamp, as `claim-check --sign key` writes it, which `sigstore-verify` refuses
//! for want of any signing time. It proves who signed, not when, nor that the signing was
//! logged where others can see it.
//!
//! 1. The bundle's structure, the key its hint names and its DSSE signature
//!    ([`keyed_bundle::verify_keyed_bundle`]).
//! 2. The artifact binding of step 4: the signed payload is an in-toto statement and the
//!    artifact's SHA-256 is the digest of one of its subjects.
//!
//! **Keyless signing** ([`sign_keyless`]). In: the in-toto statement's bytes, an OIDC identity
//! token, the [`Services`]. Out: a bundle v0.3 (JSON) holding a DSSE envelope, the Fulcio
//! certificate and the Rekor (API v1) entry.
//!
//! 1. Read the token's claims (Fulcio, not us, authenticates it); refuse an expired one.
//! 2. `Signer::sign_raw_statement`: an ephemeral P-256 key, a certificate from Fulcio, the DSSE
//!    signature over the statement's PAE, the Rekor entry, and an RFC 3161 timestamp when a TSA
//!    is configured.
//! 3. Serialize the bundle.
//!
//! **The identity token** ([`ambient_token`]). In: the environment. Out: a JWT, or `None` when no
//! identity exists (a pull request from a fork gets none).
//!
//! 1. `SIGSTORE_ID_TOKEN`, when set.
//! 2. In GitHub Actions (`ACTIONS_ID_TOKEN_REQUEST_URL` and `ACTIONS_ID_TOKEN_REQUEST_TOKEN`):
//!    `GET $ACTIONS_ID_TOKEN_REQUEST_URL&audience=sigstore` with `Authorization: bearer
//!    $ACTIONS_ID_TOKEN_REQUEST_TOKEN`, answer `{"value": "<JWT>"}`.
//! 3. Otherwise none.
//!
//! `sigstore-oidc`'s `IdentityToken::detect_ambient` is not used for step 2: it only looks when
//! `GITHUB_ACTIONS=true`, treats a job without `id-token: write` (a fork's pull request) as an
//! error rather than "no identity", and also probes GitLab, Buildkite and CircleCI. The request
//! goes through the `reqwest` that the Sigstore crates already use (re-exported by
//! `sigstore-oidc`), so there is one HTTP and TLS stack.

use std::path::{Path, PathBuf};
#[cfg(feature = "claim-check")]
use std::time::Duration;

use serde_json::Value;
use sha2::{Digest, Sha256};
use sigstore_trust_root::{TrustedRoot, SIGSTORE_PRODUCTION_TRUSTED_ROOT};
use sigstore_types::{Bundle, DerPublicKey, Sha256Hash, SignatureContent};
use sigstore_verify::{PublicKeyVerificationPolicy, VerificationPolicy};

// Keyless signing (step 2 above): in the full build only, as `claim-check --sign keyless` is.
#[cfg(feature = "claim-check")]
mod sign;
#[cfg(feature = "claim-check")]
pub use sign::{ambient_token, ambient_token_from, sign_keyless, Services};

/// The public-good Fulcio.
pub const PUBLIC_GOOD_FULCIO: &str = "https://fulcio.sigstore.dev";
/// The public-good Rekor (API v1).
pub const PUBLIC_GOOD_REKOR: &str = "https://rekor.sigstore.dev";
/// The audience of the identity token Fulcio accepts.
pub const OIDC_AUDIENCE: &str = "sigstore";

#[cfg(feature = "claim-check")]
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// What a bundle speaks for: the artifact's bytes, or only its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Artifact {
    Bytes(Vec<u8>),
    Sha256([u8; 32]),
}

impl Artifact {
    /// The artifact's SHA-256.
    pub fn sha256(&self) -> [u8; 32] {
        match self {
            Artifact::Bytes(bytes) => Sha256::digest(bytes).into(),
            Artifact::Sha256(digest) => *digest,
        }
    }
}

/// Why a bundle was not verified or made, or an artifact or identity token not read: the
/// step that failed, in the words of the crate that did it.
#[derive(Debug, thiserror::Error)]
pub enum SigstoreError {
    #[error("`{arg}`: the digest is not hexadecimal ({source})")]
    ArtifactHex {
        arg: String,
        source: hex::FromHexError,
    },
    #[error("`{arg}`: a SHA-256 digest has 64 hex digits, this one has {digits}")]
    ArtifactLength { arg: String, digits: usize },
    #[error("cannot read the artifact `{arg}`: {source}")]
    ArtifactRead { arg: String, source: std::io::Error },
    #[error("trusted root `{}`: {source}", path.display())]
    TrustedRoot {
        path: PathBuf,
        source: sigstore_trust_root::Error,
    },
    #[error("the embedded public-good trusted root: {0}")]
    EmbeddedRoot(sigstore_trust_root::Error),
    #[error("bundle: {0}")]
    Bundle(sigstore_types::Error),
    #[error(
        "the bundle has no transparency log entry: keyed bundles without a \
                            transparency log are verified by `shipmoor replay --key`"
    )]
    NoLogEntry,
    #[error("key `{}`: cannot read it: {source}", path.display())]
    KeyRead {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("key `{}`: not a PEM public key: {source}", path.display())]
    KeyPem {
        path: PathBuf,
        source: sigstore_types::Error,
    },
    /// A check of sigstore-verify that failed: one line naming it, then its own words.
    #[error("{}: {}", check_of(.0), .0)]
    Check(sigstore_verify::Error),
    #[error("bundle: not JSON: {0}")]
    BundleJson(serde_json::Error),
    #[error("signature: {0}")]
    Signature(super::dsse::DsseError),
    #[error("artifact binding: the signed payload is `{0}`, not an in-toto statement")]
    PayloadType(String),
    #[error("artifact binding: the signed statement is not JSON: {0}")]
    StatementJson(serde_json::Error),
    /// No subject carries the artifact's SHA-256 (hex).
    #[error(
        "artifact binding: no subject of the signed statement has the artifact's SHA-256 ({0})"
    )]
    Unbound(String),
    #[cfg(feature = "claim-check")]
    #[error("the identity token is not a JWT: {0}")]
    Token(sigstore_oidc::Error),
    #[cfg(feature = "claim-check")]
    #[error("the identity token expired at {0}")]
    Expired(String),
    #[cfg(feature = "claim-check")]
    #[error("keyless signing failed: {0}")]
    Sign(sigstore_sign::Error),
    #[cfg(feature = "claim-check")]
    #[error("cannot serialize the bundle: {0}")]
    Serialize(sigstore_types::Error),
    #[cfg(feature = "claim-check")]
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    /// The GitHub Actions OIDC token request: what went wrong (see [`TokenRequest`]).
    #[cfg(feature = "claim-check")]
    #[error("{TOKEN_REQUEST}{0}")]
    TokenRequest(TokenRequest),
}

/// What the GitHub Actions OIDC token request is called in its errors.
#[cfg(feature = "claim-check")]
const TOKEN_REQUEST: &str = "the GitHub Actions OIDC token request";

/// How the GitHub Actions OIDC token request failed; its text follows the request's name.
/// Never carries the request token or the URL.
#[cfg(feature = "claim-check")]
#[derive(Debug, thiserror::Error)]
pub enum TokenRequest {
    #[error(": cannot build the HTTP client: {0}")]
    Client(sigstore_oidc::reqwest::Error),
    #[error(" failed: {0}")]
    Send(sigstore_oidc::reqwest::Error),
    #[error(" failed: HTTP {0}")]
    Status(sigstore_oidc::reqwest::StatusCode),
    #[error(": cannot read the answer: {0}")]
    Read(sigstore_oidc::reqwest::Error),
    #[error(": the answer is not JSON: {0}")]
    Json(serde_json::Error),
    #[error(": the answer has no `value` string holding the token")]
    NoValue,
}

/// Reads `sha256:HEX` as a digest, anything else as a file to read.
pub fn parse_artifact(arg: &str) -> Result<Artifact, SigstoreError> {
    if let Some(hex_digest) = arg.strip_prefix("sha256:") {
        let bytes = hex::decode(hex_digest).map_err(|source| SigstoreError::ArtifactHex {
            arg: arg.to_string(),
            source,
        })?;
        let digest: [u8; 32] =
            bytes
                .try_into()
                .map_err(|b: Vec<u8>| SigstoreError::ArtifactLength {
                    arg: arg.to_string(),
                    digits: b.len() * 2,
                })?;
        return Ok(Artifact::Sha256(digest));
    }
    std::fs::read(arg)
        .map(Artifact::Bytes)
        .map_err(|source| SigstoreError::ArtifactRead {
            arg: arg.to_string(),
            source,
        })
}

/// A signer a certificate must name: its identity (the certificate's SAN, exactly) and the OIDC
/// issuer that vouched for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub identity: String,
    pub issuer: String,
}

impl Identity {
    pub fn new(identity: impl Into<String>, issuer: impl Into<String>) -> Identity {
        Identity {
            identity: identity.into(),
            issuer: issuer.into(),
        }
    }
}

/// What a bundle must be signed by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// A PEM public key (SPKI) file.
    Key(PathBuf),
    /// A Fulcio certificate naming this identity and issuer.
    Identity(Identity),
}

/// What a successful verification established. Built only by [`verify_bundle`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedBundle {
    payload_type: Option<String>,
    payload: Option<Vec<u8>>,
    identity: Option<String>,
    issuer: Option<String>,
}

impl VerifiedBundle {
    /// The DSSE envelope's payload (the in-toto statement's bytes), when the bundle holds one.
    pub fn dsse_payload(&self) -> Option<&[u8]> {
        self.payload.as_deref()
    }

    /// The DSSE envelope's payload type, when the bundle holds one.
    pub fn payload_type(&self) -> Option<&str> {
        self.payload_type.as_deref()
    }

    /// The signing certificate's identity (SAN), for a keyless bundle.
    pub fn identity(&self) -> Option<&str> {
        self.identity.as_deref()
    }

    /// The signing certificate's OIDC issuer, for a keyless bundle.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }
}

/// Verifies a Sigstore bundle offline (see the module documentation for the steps).
pub fn verify_bundle(
    bundle_json: &str,
    artifact: &Artifact,
    trust: &Trust,
    trusted_root: Option<&Path>,
) -> Result<VerifiedBundle, SigstoreError> {
    // 1. The trusted root.
    let root = match trusted_root {
        Some(path) => {
            TrustedRoot::from_file(path).map_err(|source| SigstoreError::TrustedRoot {
                path: path.to_path_buf(),
                source,
            })?
        }
        None => TrustedRoot::from_json(SIGSTORE_PRODUCTION_TRUSTED_ROOT)
            .map_err(SigstoreError::EmbeddedRoot)?,
    };

    // 2. The bundle's structure.
    let bundle = Bundle::from_json(bundle_json).map_err(SigstoreError::Bundle)?;

    // 3. The policy, and 4. the checks.
    let digest;
    let input = match artifact {
        Artifact::Bytes(bytes) => sigstore_types::Artifact::from_blob(bytes),
        Artifact::Sha256(d) => {
            digest = Sha256Hash::from(*d);
            sigstore_types::Artifact::from_digest(digest)
        }
    };
    let result = match trust {
        Trust::Key(path) => {
            if bundle.verification_material.tlog_entries.is_empty() {
                return Err(SigstoreError::NoLogEntry);
            }
            let pem = std::fs::read_to_string(path).map_err(|source| SigstoreError::KeyRead {
                path: path.to_path_buf(),
                source,
            })?;
            let key = DerPublicKey::from_pem(&pem).map_err(|source| SigstoreError::KeyPem {
                path: path.to_path_buf(),
                source,
            })?;
            sigstore_verify::verify(
                input,
                &bundle,
                &PublicKeyVerificationPolicy::new(key),
                &root,
            )
        }
        Trust::Identity(who) => sigstore_verify::verify(
            input,
            &bundle,
            &VerificationPolicy::new(who.identity.as_str(), who.issuer.as_str()),
            &root,
        ),
    }
    .map_err(SigstoreError::Check)?;

    // 5. What was verified.
    let (payload_type, payload) = match &bundle.content {
        SignatureContent::DsseEnvelope(envelope) => (
            Some(envelope.payload_type.clone()),
            Some(envelope.payload.as_bytes().to_vec()),
        ),
        _ => (None, None),
    };
    Ok(VerifiedBundle {
        payload_type,
        payload,
        identity: result.identity().map(|san| san.as_str().to_string()),
        issuer: result.issuer().map(str::to_string),
    })
}

/// Whether a bundle's JSON is signed with a key (its verification material a public key) and
/// holds no transparency log entry; false when it does not parse ([`verify_bundle`] then says
/// what is wrong with it).
pub fn is_keyed_without_log(bundle_json: &str) -> bool {
    serde_json::from_str::<Value>(bundle_json).is_ok_and(|v| {
        v.pointer("/verificationMaterial/publicKey").is_some()
            && v.pointer("/verificationMaterial/tlogEntries")
                .and_then(Value::as_array)
                .is_none_or(|entries| entries.is_empty())
    })
}

/// Verifies a keyed bundle that holds no transparency log entry, with the key alone (see the
/// module documentation for the steps).
pub fn verify_keyed_bundle_without_log(
    bundle_json: &str,
    artifact: &Artifact,
    key: &super::keys::VerifyingKey,
) -> Result<VerifiedBundle, SigstoreError> {
    // 1. Structure, key and signature.
    let bundle: Value = serde_json::from_str(bundle_json).map_err(SigstoreError::BundleJson)?;
    let verified =
        super::keyed_bundle::verify_keyed_bundle(&bundle, key).map_err(SigstoreError::Signature)?;

    // 2. The artifact binding.
    if verified.payload_type() != super::dsse::PAYLOAD_TYPE {
        return Err(SigstoreError::PayloadType(
            verified.payload_type().to_string(),
        ));
    }
    let statement: Value =
        serde_json::from_slice(verified.payload()).map_err(SigstoreError::StatementJson)?;
    let want = hex::encode(artifact.sha256());
    let bound = statement
        .get("subject")
        .and_then(Value::as_array)
        .is_some_and(|subjects| {
            subjects.iter().any(|s| {
                s.pointer("/digest/sha256")
                    .and_then(Value::as_str)
                    .is_some_and(|d| d.eq_ignore_ascii_case(&want))
            })
        });
    if !bound {
        return Err(SigstoreError::Unbound(want));
    }
    Ok(VerifiedBundle {
        payload_type: Some(verified.payload_type().to_string()),
        payload: Some(verified.payload().to_vec()),
        identity: None,
        issuer: None,
    })
}

/// The check of sigstore-verify that failed, as [`SigstoreError::Check`] names it.
fn check_of(e: &sigstore_verify::Error) -> &'static str {
    use sigstore_verify::Error as E;
    match e {
        E::IdentityMismatch { .. } => "certificate identity",
        E::IssuerMismatch { .. } => "certificate issuer",
        E::SignatureInvalid(_) => "signature",
        E::ArtifactMismatch(_) | E::UnsupportedArtifact(_) | E::ArtifactRead(_) => {
            "artifact binding"
        }
        E::Certificate(_) => "certificate",
        E::TransparencyLog(_) => "transparency log",
        E::Timestamp(_) => "signing time",
        E::InvalidBundle(_) | E::UnsupportedBundle(_) | E::Bundle(_) | E::Types(_) => "bundle",
        E::InvalidTrustRoot(_) | E::TrustRoot(_) | E::TrustedCertificate(_) => "trusted root",
        E::Crypto(_) => "cryptography",
        _ => "verification",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifacts_parse_as_digests_or_files() {
        let hex = "ab".repeat(32);
        assert_eq!(
            parse_artifact(&format!("sha256:{hex}")).unwrap(),
            Artifact::Sha256([0xab; 32])
        );
        assert!(parse_artifact("sha256:abcd")
            .unwrap_err()
            .to_string()
            .contains("64 hex"));
        assert!(parse_artifact(&format!("sha256:{}", "zz".repeat(32)))
            .unwrap_err()
            .to_string()
            .contains("not hexadecimal"));
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, b"hello").unwrap();
        let artifact = parse_artifact(file.to_str().unwrap()).unwrap();
        assert_eq!(artifact, Artifact::Bytes(b"hello".to_vec()));
        assert_eq!(
            hex::encode(artifact.sha256()),
            "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        );
        assert!(parse_artifact(dir.path().join("missing").to_str().unwrap())
            .unwrap_err()
            .to_string()
            .contains("cannot read"));
    }

    #[test]
    fn the_explicit_token_comes_first_and_no_identity_is_none() {
        let env = |name: &str| match name {
            "SIGSTORE_ID_TOKEN" => Some(" a.b.c\n".to_string()),
            "ACTIONS_ID_TOKEN_REQUEST_URL" => Some("http://127.0.0.1:9/unused".to_string()),
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN" => Some("t".to_string()),
            _ => None,
        };
        assert_eq!(ambient_token_from(&env).unwrap().as_deref(), Some("a.b.c"));
        // A fork's pull request: Actions, but no token request variables.
        let fork = |name: &str| (name == "GITHUB_ACTIONS").then(|| "true".to_string());
        assert_eq!(ambient_token_from(&fork).unwrap(), None);
    }

    #[test]
    fn a_keyed_bundle_without_a_log_entry_is_left_to_replay() {
        let bundle = r#"{
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {"publicKey": {"hint": "aGludA=="}, "tlogEntries": []},
            "dsseEnvelope": {
                "payload": "e30=", "payloadType": "application/vnd.in-toto+json",
                "signatures": [{"sig": "MEUCIQ=="}]
            }
        }"#;
        let err = verify_bundle(
            bundle,
            &Artifact::Sha256([0; 32]),
            &Trust::Key(PathBuf::from("unused.pub")),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("shipmoor replay --key"), "{err}");
        assert!(is_keyed_without_log(bundle));
    }

    /// Each step of the keyed bundle without a log entry, with one negative case each: the
    /// signature by another key, a changed payload, an artifact no subject names.
    #[test]
    fn a_keyed_bundle_without_a_log_entry_verifies_with_its_key_alone() {
        use crate::attest::keys::tests::Keys;
        use crate::attest::{dsse, keyed_bundle};
        let keys = Keys::new();
        let digest = [7u8; 32];
        let statement = serde_json::json!({
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [{"name": "app", "digest": {"sha256": hex::encode(digest)}}],
        });
        let env = dsse::sign(
            statement.to_string().as_bytes(),
            dsse::PAYLOAD_TYPE,
            &keys.signing("p256"),
        );
        let bundle = keyed_bundle::to_bundle(&env).unwrap().to_string();
        let vk = keys.verifying("p256");
        let ok = verify_keyed_bundle_without_log(&bundle, &Artifact::Sha256(digest), &vk).unwrap();
        assert_eq!(ok.dsse_payload(), Some(statement.to_string().as_bytes()));
        assert_eq!((ok.identity(), ok.issuer()), (None, None));

        let other = verify_keyed_bundle_without_log(
            &bundle,
            &Artifact::Sha256(digest),
            &keys.verifying("ed25519"),
        )
        .unwrap_err()
        .to_string();
        assert!(other.starts_with("signature: "), "{other}");
        let mut changed: Value = serde_json::from_str(&bundle).unwrap();
        let forged = serde_json::json!({"_type": "x", "subject": statement["subject"]});
        changed["dsseEnvelope"]["payload"] = base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            forged.to_string(),
        )
        .into();
        let err =
            verify_keyed_bundle_without_log(&changed.to_string(), &Artifact::Sha256(digest), &vk)
                .unwrap_err()
                .to_string();
        assert!(err.starts_with("signature: "), "{err}");
        let err = verify_keyed_bundle_without_log(&bundle, &Artifact::Sha256([8; 32]), &vk)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("artifact binding: "), "{err}");
    }
}
