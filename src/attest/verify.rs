//! Reading an attestation back: its form and structure ([`Attestation::parse`]), then its
//! signature by one candidate signer ([`Attestation::verify_with_key`],
//! [`Attestation::verify_with_identity`]). `replay` (steps 1 and 2) and `admit` (the SLSA
//! check "signature") both verify through here, so the two cannot disagree on what a valid
//! signature is. Everything after the signature reads [`Verified::payload`], never the file.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::dsse::{self, DsseError};
use super::keyed_bundle;
use super::keys::VerifyingKey;
use super::sigstore::{self, Identity};
use super::unique_keys::DuplicateKey;
use crate::format::statement;

/// The attestation's form.
enum Form {
    Statement,
    Envelope(dsse::Envelope),
    Bundle(Value),
}

impl Form {
    fn label(&self) -> &'static str {
        match self {
            Form::Statement => "in-toto statement (unsigned)",
            Form::Envelope(_) => "DSSE envelope",
            Form::Bundle(_) => "Sigstore bundle v0.3",
        }
    }
}

/// An attestation whose structure has been checked, and whose signature has not.
pub struct Attestation {
    form: Form,
    /// The statement's bytes as the file carries them: not to be trusted before a signature
    /// check, read only for the format version and what a Sigstore bundle is bound to.
    unverified: Vec<u8>,
    /// The statement's format version (one this release reads).
    pub version: u64,
}

/// Who signed a statement, as the signature check established it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Signer {
    /// Unsigned, accepted on request: it proves nothing about who produced it.
    Unsigned,
    /// A public key, by its key id (base64 of the SHA-256 of its SPKI DER).
    Key { keyid: String, algorithm: String },
    /// A Fulcio certificate naming this identity and issuer.
    Certificate { identity: String, issuer: String },
}

impl Signer {
    /// `key <id>`, `certificate for <identity> (issuer <issuer>)`, `unsigned`.
    pub fn describe(&self) -> String {
        match self {
            Signer::Unsigned => "unsigned".into(),
            Signer::Key { keyid, .. } => format!("key {keyid}"),
            Signer::Certificate { identity, issuer } => {
                format!("certificate for {identity} (issuer {issuer})")
            }
        }
    }
}

/// Why an attestation's form was not read, or its signature not verified by a signer.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("the statement is unsigned")]
    Unsigned,
    #[error("DSSE signature: {0}")]
    Signature(DsseError),
    #[error("keyed bundle: {0}")]
    KeyedBundle(DsseError),
    #[error("a DSSE envelope carries no certificate: it is verified with a key")]
    NoCertificate,
    #[error("this bundle is signed with a key, not a certificate")]
    KeySigned,
    #[error("the statement has no sha256 subject to bind the bundle to")]
    NoSubject,
    #[error("{0}")]
    Json(serde_json::Error),
    #[error("{0}")]
    Sigstore(#[from] sigstore::SigstoreError),
    #[error("the verified bundle has no DSSE payload")]
    NoPayload,
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("{0}")]
    DuplicateKey(#[from] DuplicateKey),
    #[error("not a JSON object")]
    NotObject,
    #[error("DSSE envelope: {0}")]
    Envelope(DsseError),
    #[error("bundle media type `{0}`: this release reads Sigstore bundles v0.3")]
    MediaType(String),
    #[error("the bundle carries no DSSE envelope: it is not an attestation")]
    NoEnvelope,
    #[error("neither an in-toto statement (`_type`), a DSSE envelope (`payloadType`) nor a Sigstore bundle (`mediaType`)")]
    UnknownForm,
    #[error("payloadType `{}` is not `{}`", .0, dsse::PAYLOAD_TYPE)]
    PayloadType(String),
    #[error("the envelope's payload: {0}")]
    Payload(DsseError),
    #[error("the bundle's DSSE envelope: {0}")]
    BundleEnvelope(DsseError),
}

/// What a successful signature check established.
pub struct Verified {
    /// The statement's bytes the signature covers.
    pub payload: Vec<u8>,
    pub signer: Signer,
    /// One line for a report: what was checked.
    pub detail: String,
}

impl Attestation {
    /// Step 1: the form (statement, envelope, bundle), its structure, and a statement format
    /// this release reads. A failure says what is wrong and, when the form was recognised,
    /// its [`label`](Self::label).
    pub fn parse(bytes: &[u8]) -> Result<Attestation, (Option<&'static str>, String)> {
        let form = parse_form(bytes).map_err(|e| (None, e.to_string()))?;
        let label = form.label();
        let unverified = match &form {
            Form::Statement => Ok(bytes.to_vec()),
            Form::Envelope(env) => envelope_payload(env),
            Form::Bundle(b) => keyed_bundle::from_bundle(b)
                .map_err(VerifyError::BundleEnvelope)
                .and_then(|env| envelope_payload(&env)),
        }
        .map_err(|e| (Some(label), e.to_string()))?;
        super::unique_keys::check(&unverified)
            .map_err(|e| (Some(label), format!("the statement: {e}")))?;
        let version =
            statement::format_version(&unverified).map_err(|e| (Some(label), e.to_string()))?;
        Ok(Attestation {
            form,
            unverified,
            version,
        })
    }

    pub fn label(&self) -> &'static str {
        self.form.label()
    }

    /// The statement's bytes as the file carries them, signature unchecked: for bookkeeping
    /// that trusts nothing (which evidence a statement cites, for `evidence gc`), never for a
    /// decision.
    pub fn unverified_statement(&self) -> &[u8] {
        &self.unverified
    }

    pub fn is_unsigned(&self) -> bool {
        matches!(self.form, Form::Statement)
    }

    pub fn is_envelope(&self) -> bool {
        matches!(self.form, Form::Envelope(_))
    }

    /// A bundle signed with a key and carrying no transparency log entry: only a key verifies
    /// it, offline, as a DSSE signature.
    pub fn is_keyed_bundle_without_log(&self) -> bool {
        match &self.form {
            Form::Bundle(b) => {
                let keyed = b.pointer("/verificationMaterial/publicKey").is_some();
                let no_tlog = b
                    .pointer("/verificationMaterial/tlogEntries")
                    .and_then(Value::as_array)
                    .is_none_or(|a| a.is_empty());
                keyed && no_tlog
            }
            _ => false,
        }
    }

    /// The statement unverified, for an unsigned attestation accepted on request.
    pub fn accept_unsigned(&self) -> Option<Verified> {
        self.is_unsigned().then(|| Verified {
            payload: self.unverified.clone(),
            signer: Signer::Unsigned,
            detail: "unsigned statement accepted with --allow-unsigned: it proves nothing about who produced it".into(),
        })
    }

    /// The signature by `key` (read from `key_path`): a DSSE envelope's, a keyed bundle's, or a
    /// Sigstore bundle's with its transparency log entry checked under `trusted_root`.
    pub fn verify_with_key(
        &self,
        key: &VerifyingKey,
        key_path: &Path,
        trusted_root: Option<&Path>,
    ) -> Result<Verified, VerifyError> {
        let signer = Signer::Key {
            keyid: key.keyid(),
            algorithm: key.algorithm().to_string(),
        };
        match &self.form {
            Form::Statement => Err(VerifyError::Unsigned),
            Form::Envelope(env) => {
                let verified = dsse::verify(env, key).map_err(VerifyError::Signature)?;
                Ok(Verified {
                    payload: verified.into_payload(),
                    detail: format!(
                        "DSSE signature by key {} ({})",
                        key.keyid(),
                        key.algorithm()
                    ),
                    signer,
                })
            }
            Form::Bundle(b) if self.is_keyed_bundle_without_log() => {
                let verified =
                    keyed_bundle::verify_keyed_bundle(b, key).map_err(VerifyError::KeyedBundle)?;
                Ok(Verified {
                    payload: verified.into_payload(),
                    detail: format!(
                        "bundle's DSSE signature by key {} ({})",
                        key.keyid(),
                        key.algorithm()
                    ),
                    signer,
                })
            }
            Form::Bundle(b) => {
                let trust = sigstore::Trust::Key(key_path.to_path_buf());
                self.verify_bundle(b, &trust, trusted_root).map(|(payload, who)| Verified {
                    payload,
                    detail: format!("Sigstore bundle verified offline: {who}; transparency log inclusion checked"),
                    signer,
                })
            }
        }
    }

    /// A Sigstore bundle's certificate for `identity`, under `trusted_root` (default: the
    /// public-good root), offline.
    pub fn verify_with_identity(
        &self,
        identity: &Identity,
        trusted_root: Option<&Path>,
    ) -> Result<Verified, VerifyError> {
        match &self.form {
            Form::Statement => Err(VerifyError::Unsigned),
            Form::Envelope(_) => Err(VerifyError::NoCertificate),
            Form::Bundle(_) if self.is_keyed_bundle_without_log() => Err(VerifyError::KeySigned),
            Form::Bundle(b) => {
                let trust = sigstore::Trust::Identity(identity.clone());
                let (payload, who) = self.verify_bundle(b, &trust, trusted_root)?;
                Ok(Verified {
                    payload,
                    detail: format!("Sigstore bundle verified offline: {who}; transparency log inclusion checked"),
                    signer: Signer::Certificate {
                        identity: identity.identity.clone(),
                        issuer: identity.issuer.clone(),
                    },
                })
            }
        }
    }

    fn verify_bundle(
        &self,
        bundle: &Value,
        trust: &sigstore::Trust,
        trusted_root: Option<&Path>,
    ) -> Result<(Vec<u8>, String), VerifyError> {
        // sigstore-verify binds a DSSE bundle to an artifact through a sha256 subject; the
        // subject itself is checked after the signature.
        let digest = first_sha256_subject(&self.unverified).ok_or(VerifyError::NoSubject)?;
        let json = serde_json::to_string(bundle).map_err(VerifyError::Json)?;
        let verified = sigstore::verify_bundle(
            &json,
            &sigstore::Artifact::Sha256(digest),
            trust,
            trusted_root,
        )?;
        let payload = verified
            .dsse_payload()
            .ok_or(VerifyError::NoPayload)?
            .to_vec();
        let who = match (verified.identity(), verified.issuer()) {
            (Some(i), Some(o)) => format!("certificate for {i} (issuer {o})"),
            _ => "the given key".to_string(),
        };
        Ok((payload, who))
    }
}

fn parse_form(bytes: &[u8]) -> Result<Form, VerifyError> {
    let v: Value = serde_json::from_slice(bytes).map_err(VerifyError::NotJson)?;
    // Before any field is read: a repeated key reads as its last value here, and as its first
    // in some other verifier.
    super::unique_keys::check(bytes)?;
    let Some(obj) = v.as_object() else {
        return Err(VerifyError::NotObject);
    };
    if obj.contains_key("_type") {
        return Ok(Form::Statement);
    }
    if obj.contains_key("payloadType") {
        let env = dsse::parse(bytes).map_err(VerifyError::Envelope)?;
        return Ok(Form::Envelope(env));
    }
    if let Some(mt) = obj.get("mediaType").and_then(Value::as_str) {
        let v03 = mt == "application/vnd.dev.sigstore.bundle.v0.3+json"
            || mt == "application/vnd.dev.sigstore.bundle+json;version=0.3";
        if !v03 {
            return Err(VerifyError::MediaType(mt.to_string()));
        }
        if obj.get("dsseEnvelope").is_none() {
            return Err(VerifyError::NoEnvelope);
        }
        return Ok(Form::Bundle(v));
    }
    Err(VerifyError::UnknownForm)
}

fn envelope_payload(env: &dsse::Envelope) -> Result<Vec<u8>, VerifyError> {
    if env.payload_type != dsse::PAYLOAD_TYPE {
        return Err(VerifyError::PayloadType(env.payload_type.clone()));
    }
    env.unverified_payload().map_err(VerifyError::Payload)
}

fn first_sha256_subject(payload: &[u8]) -> Option<[u8; 32]> {
    statement::subjects(payload)?.iter().find_map(|s| {
        let hex = s.digest.sha256.as_deref()?;
        hex::decode(hex).ok()?.try_into().ok()
    })
}
