//! DSSE envelopes: the signature over the statement's bytes.
//!
//! In, to sign: the payload bytes (the statement from [`super::statement_bytes`]), its
//! payloadType ([`PAYLOAD_TYPE`]) and a [`SigningKey`]. Out: an [`Envelope`], serialized as
//! `{"payload", "payloadType", "signatures": [{"keyid", "sig"}]}` with standard base64.
//!
//! In, to verify: envelope JSON (or an [`Envelope`]) and a [`VerifyingKey`]. Out: a
//! [`Verified`] payload and payloadType, which only [`verify`] can construct, or a [`DsseError`]
//! naming what failed.
//!
//! Signing: the signature is over PAE(payloadType, payload) ([`pae`]); ECDSA P-256 with SHA-256
//! gives an ASN.1 DER signature (what Sigstore, securesystemslib and Go DSSE expect; not the raw
//! r‖s of the DSSE spec's own test vector), Ed25519 the raw 64 bytes; `keyid` is the key's
//! [`VerifyingKey::keyid`].
//!
//! Verification steps (the same numbers mark the code in [`verify`] and [`parse`]):
//!
//! 1. Structure, before any crypto: a JSON object with a string `payload`, a string
//!    `payloadType` and a non-empty array `signatures` of objects, each with a string `sig` and
//!    an optional string `keyid` (unset is the same as empty). Unknown fields are ignored, as
//!    the DSSE spec requires of consumers.
//! 2. `payload` and every `sig` decode as base64, standard or URL-safe, padded or not.
//! 3. Select: a signature whose `keyid` is empty or equals the key's keyid is tried; one whose
//!    non-empty `keyid` names another key is skipped. The keyid is an unauthenticated hint: it
//!    only narrows which signatures are tried, it never makes one acceptable.
//! 4. Verify each selected signature over PAE(payloadType, decoded payload) with the key: a P-256
//!    signature must be DER, an Ed25519 one 64 bytes (checked with `verify_strict`). At least
//!    one must verify.
//! 5. Return the decoded payload and payloadType as [`Verified`].
//!
//! Checking that the payloadType is the one expected, and what the payload says, is the
//! caller's job.

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::keys::{SigningKey, VerifyingKey};

/// The payloadType of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

const LENIENT: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const STANDARD_ANY_PAD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, LENIENT);
const URL_SAFE_ANY_PAD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, LENIENT);

/// A DSSE JSON envelope as it travels. Its fields are unchecked: [`parse`] checks the
/// structure, [`verify`] checks it again and then the signatures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// The payload, base64 (we write standard base64 with padding).
    pub payload: String,
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    pub signatures: Vec<Signature>,
}

/// One signature of an [`Envelope`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// A hint naming the key; we write the key's keyid, readers treat unset as empty.
    #[serde(default)]
    pub keyid: String,
    /// The signature over PAE, base64.
    pub sig: String,
}

/// A payload whose signature verified with the given key. Only [`verify`] builds one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    payload: Vec<u8>,
    payload_type: String,
}

impl Verified {
    /// The decoded payload bytes the signature covers.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The payloadType the signature covers.
    pub fn payload_type(&self) -> &str {
        &self.payload_type
    }

    /// The payload bytes, owned.
    pub fn into_payload(self) -> Vec<u8> {
        self.payload
    }
}

/// Why an envelope (or a bundle carrying one) was rejected. Each names the failing field or
/// step.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DsseError {
    /// The bytes are not JSON.
    #[error("not JSON: {0}")]
    Json(String),
    /// An object of the envelope repeats a key (step 1): parsers disagree on which one counts.
    #[error("{0}")]
    DuplicateKey(String),
    /// A field is missing or has the wrong JSON type (step 1).
    #[error("`{field}` must be {expected}")]
    Structure {
        field: String,
        expected: &'static str,
    },
    /// `signatures` is an empty array (step 1).
    #[error("the envelope has no signatures")]
    NoSignatures,
    /// A field does not decode as base64 (step 2).
    #[error("`{field}` is not valid base64 (standard or URL-safe): {reason}")]
    Base64 { field: String, reason: String },
    /// Every signature names another key (step 3).
    #[error("no signature is for this key: the key's keyid is `{key}`, the signatures name {}", .named.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", "))]
    NoSignatureForKey { key: String, named: Vec<String> },
    /// No selected signature verifies (step 4).
    #[error("no signature verifies with the {algorithm} key `{keyid}`: {}", .failures.join("; "))]
    SignatureInvalid {
        algorithm: &'static str,
        keyid: String,
        /// `signatures[i]: why`, one per signature tried.
        failures: Vec<String>,
    },
    /// The bundle's mediaType is not a v0.3 bundle.
    #[error("unsupported bundle mediaType `{0}`: expected `application/vnd.dev.sigstore.bundle.v0.3+json`")]
    BundleMediaType(String),
    /// The bundle carries something else than a DSSE envelope.
    #[error("the bundle carries {0}, not a DSSE envelope (`dsseEnvelope`)")]
    BundleContent(&'static str),
    /// A DSSE bundle carries exactly one signature.
    #[error("a DSSE bundle carries exactly one signature; this one has {0}")]
    BundleSignatureCount(usize),
    /// The bundle names its key by certificate, not by public key hint.
    #[error("the bundle is not a keyed bundle: its verification material is {0}, not `publicKey`")]
    NotKeyed(&'static str),
    /// The bundle's `verificationMaterial.publicKey.hint` names another key.
    #[error("the bundle's public key hint `{hint}` is not the key's keyid `{keyid}`")]
    HintMismatch { hint: String, keyid: String },
}

/// The DSSE pre-authentication encoding:
/// `"DSSEv1" SP len(type) SP type SP len(body) SP body`, lengths in ASCII decimal bytes.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "DSSEv1 {} {} {} ",
        payload_type.len(),
        payload_type,
        payload.len()
    )
    .into_bytes();
    out.extend_from_slice(payload);
    out
}

/// Signs `payload` as `payload_type` with `key`: one signature, standard base64.
pub fn sign(payload: &[u8], payload_type: &str, key: &SigningKey) -> Envelope {
    let message = pae(payload_type, payload);
    let sig = match key {
        SigningKey::P256(k) => {
            let sig: p256::ecdsa::DerSignature = p256::ecdsa::signature::Signer::sign(k, &message);
            sig.as_bytes().to_vec()
        }
        SigningKey::Ed25519(k) => ed25519_dalek::Signer::sign(k, &message).to_bytes().to_vec(),
    };
    let b64 = base64::engine::general_purpose::STANDARD;
    Envelope {
        payload: b64.encode(payload),
        payload_type: payload_type.to_string(),
        signatures: vec![Signature {
            keyid: key.keyid(),
            sig: b64.encode(sig),
        }],
    }
}

/// Parses envelope JSON, checking its structure and base64 (steps 1 and 2), no crypto.
pub fn parse(bytes: &[u8]) -> Result<Envelope, DsseError> {
    // 1. Structure.
    let value: Value = serde_json::from_slice(bytes).map_err(|e| DsseError::Json(e.to_string()))?;
    super::unique_keys::check(bytes).map_err(|e| DsseError::DuplicateKey(e.to_string()))?;
    let env = Envelope::from_value(&value, "")?;
    // 2. Base64.
    decode(&env)?;
    Ok(env)
}

impl Envelope {
    /// Step 1 for an envelope found at `prefix` (`""` for a bare envelope, `dsseEnvelope.` in a
    /// bundle), so errors name the field where the user will find it.
    pub(crate) fn from_value(v: &Value, prefix: &str) -> Result<Envelope, DsseError> {
        let field = |name: &str| format!("{prefix}{name}");
        let obj = v.as_object().ok_or_else(|| DsseError::Structure {
            field: if prefix.is_empty() {
                "the envelope".to_string()
            } else {
                prefix.trim_end_matches('.').to_string()
            },
            expected: "a JSON object",
        })?;
        let payload = string_field(obj, "payload", || field("payload"))?;
        let payload_type = string_field(obj, "payloadType", || field("payloadType"))?;
        let Some(Value::Array(sigs)) = obj.get("signatures") else {
            return Err(DsseError::Structure {
                field: field("signatures"),
                expected: "an array",
            });
        };
        if sigs.is_empty() {
            return Err(DsseError::NoSignatures);
        }
        let mut signatures = Vec::with_capacity(sigs.len());
        for (i, s) in sigs.iter().enumerate() {
            let at = field(&format!("signatures[{i}]"));
            let o = s.as_object().ok_or_else(|| DsseError::Structure {
                field: at.clone(),
                expected: "an object",
            })?;
            let sig = string_field(o, "sig", || format!("{at}.sig"))?;
            let keyid = match o.get("keyid") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(k)) => k.clone(),
                Some(_) => {
                    return Err(DsseError::Structure {
                        field: format!("{at}.keyid"),
                        expected: "a string",
                    })
                }
            };
            signatures.push(Signature { keyid, sig });
        }
        Ok(Envelope {
            payload,
            payload_type,
            signatures,
        })
    }
}

/// The string at `key`, or an error naming `field`.
fn string_field(
    o: &serde_json::Map<String, Value>,
    key: &str,
    field: impl Fn() -> String,
) -> Result<String, DsseError> {
    match o.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(DsseError::Structure {
            field: field(),
            expected: "a string",
        }),
    }
}

impl TryFrom<&Value> for Envelope {
    type Error = DsseError;

    /// Steps 1 and 2 over a JSON value.
    fn try_from(v: &Value) -> Result<Envelope, DsseError> {
        let env = Envelope::from_value(v, "")?;
        decode(&env)?;
        Ok(env)
    }
}

impl Envelope {
    /// The payload's bytes, decoded as verification decodes them but NOT verified: for
    /// structural checks that come before the signature.
    pub fn unverified_payload(&self) -> Result<Vec<u8>, DsseError> {
        base64_any(&self.payload, || "payload".to_string())
    }
}

/// An envelope whose base64 fields decoded (step 2).
struct Decoded {
    payload: Vec<u8>,
    sigs: Vec<Vec<u8>>,
}

/// Standard or URL-safe base64, padded or not.
fn base64_any(s: &str, field: impl Fn() -> String) -> Result<Vec<u8>, DsseError> {
    let engine = if s.contains(['-', '_']) {
        &URL_SAFE_ANY_PAD
    } else {
        &STANDARD_ANY_PAD
    };
    engine.decode(s).map_err(|e| DsseError::Base64 {
        field: field(),
        reason: e.to_string(),
    })
}

/// Step 2 for an envelope found at `prefix` (as in [`Envelope::from_value`]).
pub(crate) fn check_encoding(env: &Envelope, prefix: &str) -> Result<(), DsseError> {
    decode(env).map(|_| ()).map_err(|e| match e {
        DsseError::Base64 { field, reason } => DsseError::Base64 {
            field: format!("{prefix}{field}"),
            reason,
        },
        other => other,
    })
}

fn decode(env: &Envelope) -> Result<Decoded, DsseError> {
    if env.signatures.is_empty() {
        return Err(DsseError::NoSignatures);
    }
    let payload = base64_any(&env.payload, || "payload".to_string())?;
    let sigs = env
        .signatures
        .iter()
        .enumerate()
        .map(|(i, s)| base64_any(&s.sig, || format!("signatures[{i}].sig")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Decoded { payload, sigs })
}

/// Verifies `env` with `key` (steps 1 to 5 in the module doc).
pub fn verify(env: &Envelope, key: &VerifyingKey) -> Result<Verified, DsseError> {
    // 1 and 2. Structure and base64. An `Envelope` has its JSON types by construction; the
    // signatures may still be empty and the base64 invalid.
    let decoded = decode(env)?;
    let message = pae(&env.payload_type, &decoded.payload);
    let keyid = key.keyid();

    let mut failures = Vec::new();
    for (i, (signature, sig)) in env.signatures.iter().zip(&decoded.sigs).enumerate() {
        // 3. The keyid narrows, never decides.
        if !signature.keyid.is_empty() && signature.keyid != keyid {
            continue;
        }
        // 4. The signature over PAE.
        match verify_one(key, &message, sig) {
            Ok(()) => {
                // 5. The payload as signed.
                return Ok(Verified {
                    payload: decoded.payload,
                    payload_type: env.payload_type.clone(),
                });
            }
            Err(why) => failures.push(format!("signatures[{i}]: {why}")),
        }
    }
    if failures.is_empty() {
        return Err(DsseError::NoSignatureForKey {
            key: keyid,
            named: env.signatures.iter().map(|s| s.keyid.clone()).collect(),
        });
    }
    Err(DsseError::SignatureInvalid {
        algorithm: key.algorithm(),
        keyid,
        failures,
    })
}

/// Step 4 for one signature.
fn verify_one(key: &VerifyingKey, message: &[u8], sig: &[u8]) -> Result<(), &'static str> {
    match key {
        VerifyingKey::P256(k) => {
            let sig = p256::ecdsa::Signature::from_der(sig)
                .map_err(|_| "not a DER-encoded ECDSA P-256 signature")?;
            p256::ecdsa::signature::Verifier::verify(k, message, &sig)
                .map_err(|_| "the signature does not match the payload and payloadType")
        }
        VerifyingKey::Ed25519(k) => {
            let sig = ed25519_dalek::Signature::from_slice(sig)
                .map_err(|_| "an Ed25519 signature is 64 bytes")?;
            k.verify_strict(message, &sig)
                .map_err(|_| "the signature does not match the payload and payloadType")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attest::keys::tests::Keys;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE, URL_SAFE_NO_PAD};

    fn statement() -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [{"name": "repo", "digest": {"gitCommit": "0123456789abcdef0123456789abcdef01234567"}}],
            "predicateType": "https://slsa.dev/verification_summary/v1",
            "predicate": {"verificationResult": "PASSED"},
        }))
        .unwrap()
    }

    fn with_sig_bytes(env: &Envelope, f: impl Fn(&mut Vec<u8>)) -> Envelope {
        let mut env = env.clone();
        let mut sig = STANDARD.decode(&env.signatures[0].sig).unwrap();
        f(&mut sig);
        env.signatures[0].sig = STANDARD.encode(sig);
        env
    }

    #[test]
    fn pae_matches_the_dsse_spec_example() {
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
        assert_eq!(pae("", b""), b"DSSEv1 0  0 ");
        assert!(pae(PAYLOAD_TYPE, b"{}").starts_with(b"DSSEv1 28 application/vnd.in-toto+json 2 "));
        // Lengths are byte lengths, not character counts.
        assert_eq!(pae("é", "ü".as_bytes()), "DSSEv1 2 é 2 ü".as_bytes());
    }

    #[test]
    fn sign_then_verify_round_trips_for_both_key_types() {
        let keys = Keys::new();
        for name in ["ed25519", "p256"] {
            let sk = keys.signing(name);
            let vk = keys.verifying(name);
            let env = sign(&statement(), PAYLOAD_TYPE, &sk);
            assert_eq!(env.signatures.len(), 1);
            assert_eq!(env.signatures[0].keyid, vk.keyid());
            assert_eq!(STANDARD.decode(&env.payload).unwrap(), statement());

            // Through JSON with exactly the DSSE field names.
            let json = serde_json::to_value(&env).unwrap();
            let mut fields: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
            fields.sort();
            assert_eq!(fields, ["payload", "payloadType", "signatures"]);
            let mut sig_fields: Vec<_> = json["signatures"][0]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            sig_fields.sort();
            assert_eq!(sig_fields, ["keyid", "sig"]);
            let parsed = parse(&serde_json::to_vec(&json).unwrap()).unwrap();
            assert_eq!(parsed, env);
            assert_eq!(Envelope::try_from(&json).unwrap(), env);

            let v = verify(&parsed, &vk).unwrap();
            assert_eq!(v.payload(), statement());
            assert_eq!(v.payload_type(), PAYLOAD_TYPE);

            // The other key type, and another key of the same type, do not verify it.
            let other = Keys::new();
            for wrong in ["ed25519", "p256"] {
                let mut e = env.clone();
                e.signatures[0].keyid.clear();
                assert!(matches!(
                    verify(&e, &other.verifying(wrong)),
                    Err(DsseError::SignatureInvalid { .. })
                ));
            }
        }
    }

    #[test]
    fn p256_signatures_are_der_and_ed25519_signatures_raw() {
        let keys = Keys::new();
        let env = sign(b"x", PAYLOAD_TYPE, &keys.signing("p256"));
        let sig = STANDARD.decode(&env.signatures[0].sig).unwrap();
        assert_eq!(sig[0], 0x30, "a DER SEQUENCE");
        assert_eq!(sig[1] as usize, sig.len() - 2);
        // A raw r||s signature of the same message is refused.
        let der = p256::ecdsa::Signature::from_der(&sig).unwrap();
        let raw = with_sig_bytes(&env, |s| *s = der.to_bytes().to_vec());
        let e = verify(&raw, &keys.verifying("p256")).unwrap_err();
        assert!(e.to_string().contains("DER"), "{e}");

        let env = sign(b"x", PAYLOAD_TYPE, &keys.signing("ed25519"));
        assert_eq!(STANDARD.decode(&env.signatures[0].sig).unwrap().len(), 64);
        // Ed25519 is deterministic: signing twice gives the same envelope.
        assert_eq!(env, sign(b"x", PAYLOAD_TYPE, &keys.signing("ed25519")));
    }

    /// Every single-byte change to what the signature covers, to the signature, or to the keyid
    /// is rejected.
    #[test]
    fn tamper_matrix() {
        let keys = Keys::new();
        for name in ["ed25519", "p256"] {
            let sk = keys.signing(name);
            let vk = keys.verifying(name);
            let payload = statement();
            let env = sign(&payload, PAYLOAD_TYPE, &sk);
            assert!(verify(&env, &vk).is_ok());

            for i in 0..payload.len() {
                let mut p = payload.clone();
                p[i] ^= 0xff;
                let mut e = env.clone();
                e.payload = STANDARD.encode(&p);
                assert!(
                    matches!(verify(&e, &vk), Err(DsseError::SignatureInvalid { .. })),
                    "{name}: payload byte {i} flipped was accepted"
                );
            }

            let sig_len = STANDARD.decode(&env.signatures[0].sig).unwrap().len();
            for i in 0..sig_len {
                for mask in [0x01, 0x80, 0xff] {
                    let e = with_sig_bytes(&env, |s| s[i] ^= mask);
                    assert!(
                        matches!(verify(&e, &vk), Err(DsseError::SignatureInvalid { .. })),
                        "{name}: signature byte {i} ^ {mask:#x} was accepted"
                    );
                }
            }
            // Truncated and extended signatures.
            for cut in 0..sig_len {
                let e = with_sig_bytes(&env, |s| s.truncate(cut));
                assert!(verify(&e, &vk).is_err(), "{name}: signature cut at {cut}");
            }
            let e = with_sig_bytes(&env, |s| s.push(0));
            assert!(
                verify(&e, &vk).is_err(),
                "{name}: signature with a trailing byte"
            );

            // The payloadType is covered by the signature.
            for i in 0..env.payload_type.len() {
                let mut t = env.payload_type.clone().into_bytes();
                t[i] ^= 0x01;
                let mut e = env.clone();
                e.payload_type = String::from_utf8(t).unwrap();
                assert!(
                    matches!(verify(&e, &vk), Err(DsseError::SignatureInvalid { .. })),
                    "{name}: payloadType byte {i} flipped was accepted"
                );
            }
            for t in ["", "application/vnd.in-toto+json ", "application/json"] {
                let mut e = env.clone();
                e.payload_type = t.to_string();
                assert!(verify(&e, &vk).is_err(), "{name}: payloadType `{t}`");
            }

            // A non-empty keyid naming another key is never tried, even with a good signature.
            for i in 0..env.signatures[0].keyid.len() {
                let mut k = env.signatures[0].keyid.clone().into_bytes();
                k[i] ^= 0x01;
                let mut e = env.clone();
                e.signatures[0].keyid = String::from_utf8(k).unwrap();
                assert!(
                    matches!(verify(&e, &vk), Err(DsseError::NoSignatureForKey { .. })),
                    "{name}: keyid byte {i} flipped was accepted"
                );
            }
            // An empty (or unset) keyid is tried.
            let mut e = env.clone();
            e.signatures[0].keyid.clear();
            assert!(verify(&e, &vk).is_ok());
        }
    }

    #[test]
    fn keyid_narrows_which_signatures_are_tried() {
        let keys = Keys::new();
        let sk = keys.signing("p256");
        let vk = keys.verifying("p256");
        let env = sign(b"payload", PAYLOAD_TYPE, &sk);
        let good = env.signatures[0].clone();
        let other = sign(b"payload", PAYLOAD_TYPE, &keys.signing("ed25519")).signatures[0].clone();
        let bad_sig = Signature {
            keyid: good.keyid.clone(),
            sig: STANDARD.encode([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]),
        };
        let with = |sigs: Vec<Signature>| Envelope {
            signatures: sigs,
            ..env.clone()
        };
        // Another key's signature first, then ours.
        assert!(verify(&with(vec![other.clone(), good.clone()]), &vk).is_ok());
        // A bad signature with our keyid, then a good one.
        assert!(verify(&with(vec![bad_sig.clone(), good.clone()]), &vk).is_ok());
        // Only another key's signature: not for this key.
        let e = verify(&with(vec![other.clone()]), &vk).unwrap_err();
        assert!(matches!(e, DsseError::NoSignatureForKey { .. }), "{e:?}");
        assert!(e.to_string().contains(&vk.keyid()));
        // Our good signature under another keyid: skipped, so rejected.
        let disguised = Signature {
            keyid: other.keyid.clone(),
            sig: good.sig.clone(),
        };
        assert!(verify(&with(vec![disguised]), &vk).is_err());
        // Only bad signatures: each failure is named.
        let e = verify(&with(vec![bad_sig.clone(), bad_sig]), &vk).unwrap_err();
        assert!(e.to_string().contains("signatures[1]"), "{e}");
        // No signatures at all.
        assert_eq!(verify(&with(vec![]), &vk), Err(DsseError::NoSignatures));
    }

    #[test]
    fn url_safe_and_unpadded_base64_are_accepted() {
        let keys = Keys::new();
        for name in ["ed25519", "p256"] {
            let vk = keys.verifying(name);
            // Search for a payload and signature whose base64 has `+`, `/` and padding, so the
            // URL-safe spelling really differs.
            let (payload, env) = (0u32..)
                .map(|n| {
                    let p = format!("{{\"n\":{n},\"x\":\"\u{fbff}?>\"}}").into_bytes();
                    let e = sign(&p, PAYLOAD_TYPE, &keys.signing(name));
                    (p, e)
                })
                .find(|(_, e)| {
                    let both = format!("{}{}", e.payload, e.signatures[0].sig);
                    both.contains(['+', '/']) && both.contains('=')
                })
                .unwrap();
            let sig = STANDARD.decode(&env.signatures[0].sig).unwrap();
            for (p, s) in [
                (URL_SAFE.encode(&payload), URL_SAFE.encode(&sig)),
                (
                    URL_SAFE_NO_PAD.encode(&payload),
                    URL_SAFE_NO_PAD.encode(&sig),
                ),
                (
                    STANDARD.encode(&payload).trim_end_matches('=').to_string(),
                    STANDARD.encode(&sig).trim_end_matches('=').to_string(),
                ),
            ] {
                let mut e = env.clone();
                e.payload = p;
                e.signatures[0].sig = s;
                let json = serde_json::to_vec(&e).unwrap();
                let v = verify(&parse(&json).unwrap(), &vk).unwrap();
                assert_eq!(v.payload(), payload);
            }
        }
    }

    #[test]
    fn malformed_envelopes_name_what_is_wrong() {
        let keys = Keys::new();
        let env = sign(b"payload", PAYLOAD_TYPE, &keys.signing("ed25519"));
        let good = serde_json::to_value(&env).unwrap();
        let field_of = |e: DsseError| match e {
            DsseError::Structure { field, .. } | DsseError::Base64 { field, .. } => field,
            other => panic!("not a field error: {other:?}"),
        };
        type Change = Box<dyn Fn(&mut Value)>;
        let cases: Vec<(Change, &str)> = vec![
            (Box::new(|v| *v = Value::Array(vec![])), "the envelope"),
            (Box::new(|v| v["payload"] = 1.into()), "payload"),
            (
                Box::new(|v| {
                    v.as_object_mut().unwrap().remove("payload");
                }),
                "payload",
            ),
            (Box::new(|v| v["payloadType"] = Value::Null), "payloadType"),
            (Box::new(|v| v["signatures"] = "x".into()), "signatures"),
            (
                Box::new(|v| v["signatures"][0] = "x".into()),
                "signatures[0]",
            ),
            (
                Box::new(|v| v["signatures"][0]["sig"] = 5.into()),
                "signatures[0].sig",
            ),
            (
                Box::new(|v| v["signatures"][0]["keyid"] = 5.into()),
                "signatures[0].keyid",
            ),
            (Box::new(|v| v["payload"] = "not base64!".into()), "payload"),
            (Box::new(|v| v["payload"] = "a+b-".into()), "payload"),
            (
                Box::new(|v| v["signatures"][0]["sig"] = "%%%".into()),
                "signatures[0].sig",
            ),
        ];
        for (change, field) in cases {
            let mut v = good.clone();
            change(&mut v);
            let e = parse(&serde_json::to_vec(&v).unwrap()).unwrap_err();
            assert_eq!(field_of(e.clone()), field, "{e}");
            assert!(e.to_string().contains(field), "{e}");
        }
        let mut v = good.clone();
        v["signatures"] = Value::Array(vec![]);
        assert_eq!(
            parse(&serde_json::to_vec(&v).unwrap()),
            Err(DsseError::NoSignatures)
        );
        assert!(matches!(parse(b"{"), Err(DsseError::Json(_))));
        assert!(matches!(parse(b""), Err(DsseError::Json(_))));

        // Unset keyid is empty; unknown fields are ignored (DSSE: consumers MUST ignore them).
        let mut v = good.clone();
        v["signatures"][0].as_object_mut().unwrap().remove("keyid");
        v["extension"] = "x".into();
        v["signatures"][0]["extra"] = 1.into();
        let parsed = parse(&serde_json::to_vec(&v).unwrap()).unwrap();
        assert_eq!(parsed.signatures[0].keyid, "");
        assert!(verify(&parsed, &keys.verifying("ed25519")).is_ok());

        // An Envelope built by hand with bad base64 is an error from verify, not a panic.
        let mut e = env.clone();
        e.signatures[0].sig = "***".into();
        assert!(matches!(
            verify(&e, &keys.verifying("ed25519")),
            Err(DsseError::Base64 { .. })
        ));
    }

    #[test]
    fn a_repeated_key_at_any_level_of_the_envelope_is_refused_and_named() {
        let keys = Keys::new();
        let env = sign(&statement(), PAYLOAD_TYPE, &keys.signing("p256"));
        let text = serde_json::to_string(&env).unwrap();
        let good = |field: &str| {
            format!(
                "\"{field}\":{}",
                serde_json::to_string(&serde_json::to_value(&env).unwrap()[field]).unwrap()
            )
        };
        // Each repetition repeats a value the envelope has (the last one is what serde keeps),
        // so only the repetition itself is wrong.
        let sig = serde_json::to_string(&env.signatures[0].sig).unwrap();
        let cases = [
            (
                "payload",
                text.replacen('{', &format!("{{{},", good("payload")), 1),
                "at the top level",
            ),
            (
                "payloadType",
                text.replacen('{', &format!("{{{},", good("payloadType")), 1),
                "at the top level",
            ),
            (
                "signatures",
                text.replacen('{', &format!("{{{},", good("signatures")), 1),
                "at the top level",
            ),
            (
                "sig",
                text.replacen("\"sig\":", &format!("\"sig\":{sig},\"sig\":"), 1),
                "in `signatures[0]`",
            ),
        ];
        for (key, bytes, place) in cases {
            assert!(bytes != text, "{key}: nothing repeated");
            let e = parse(bytes.as_bytes()).unwrap_err();
            assert!(matches!(e, DsseError::DuplicateKey(_)), "{key}: {e:?}");
            assert!(
                e.to_string()
                    .starts_with(&format!("duplicate key `{key}` {place} at line 1 column")),
                "{key}: {e}"
            );
        }
        // Unchanged, it parses and verifies.
        assert!(verify(&parse(text.as_bytes()).unwrap(), &keys.verifying("p256")).is_ok());
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let keys = Keys::new();
        let vk = keys.verifying("p256");
        let env = sign(b"payload", PAYLOAD_TYPE, &keys.signing("p256"));
        let json = serde_json::to_vec(&env).unwrap();
        for i in 0..json.len() {
            let mut b = json.clone();
            b[i] ^= 0x20;
            if let Ok(e) = parse(&b) {
                // Some flips leave a valid envelope; only the original, or the original with
                // its keyid unset (`keyid` spelled differently), may verify.
                let mut unset = env.clone();
                unset.signatures[0].keyid.clear();
                if e != env && e != unset {
                    assert!(verify(&e, &vk).is_err(), "flip at {i} accepted");
                }
            }
        }
    }
}
