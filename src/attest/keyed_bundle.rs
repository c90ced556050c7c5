//! Keyed Sigstore bundles: our DSSE envelope in a Sigstore bundle v0.3, signed offline with a
//! key, with no transparency-log entry and no timestamp.
//!
//! In: an [`Envelope`] from [`dsse::sign`] (exactly one signature, keyid set). Out: the bundle
//! as protobuf-JSON (the field names of `sigstore_bundle.proto`):
//!
//! ```json
//! {"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
//!  "verificationMaterial": {"publicKey": {"hint": "<keyid>"}, "tlogEntries": [],
//!                           "timestampVerificationData": {"rfc3161Timestamps": []}},
//!  "dsseEnvelope": {"payload": "…", "payloadType": "…", "signatures": [{"sig": "…", "keyid": "<keyid>"}]}}
//! ```
//!
//! The hint is the keyid: base64(SHA-256(SPKI DER)), as Sigstore clients compute it for keyed
//! bundles. Verifiers such as `@sigstore/verify` look the key up by that hint and need
//! `tlogThreshold` and the timestamp threshold set to 0 to accept a bundle without log entries.
//!
//! Verification steps ([`verify_keyed_bundle`]; the same numbers mark the code):
//!
//! 1. Structure: an object whose `mediaType` is the v0.3 bundle media type (either spelling),
//!    holding `dsseEnvelope` (not `messageSignature`) with exactly one signature; the envelope
//!    passes DSSE steps 1 and 2 (see [`dsse`]).
//! 2. Verification material: `verificationMaterial.publicKey` (not a certificate); its `hint`,
//!    when present and non-empty, is the key's keyid.
//! 3. The DSSE signature verifies with the key (DSSE steps 3 to 5).
//!
//! Transparency-log entries and RFC 3161 timestamps, if a bundle carries them, are not checked
//! here: this is offline verification with a known key.

use serde_json::{json, Value};

use super::dsse::{self, DsseError, Envelope, Verified};
use super::keys::VerifyingKey;

/// The bundle v0.3 media type we write.
pub const MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
/// The older spelling of the same version, also accepted.
pub const MEDIA_TYPE_LEGACY: &str = "application/vnd.dev.sigstore.bundle+json;version=0.3";

/// The bundle for `env`, which must carry exactly one signature with a non-empty keyid (as
/// [`dsse::sign`] makes); the keyid becomes the public key hint.
pub fn to_bundle(env: &Envelope) -> Result<Value, DsseError> {
    let [signature] = env.signatures.as_slice() else {
        return Err(DsseError::BundleSignatureCount(env.signatures.len()));
    };
    if signature.keyid.is_empty() {
        return Err(DsseError::Structure {
            field: "signatures[0].keyid".to_string(),
            expected: "the signing key's keyid (the bundle's public key hint)",
        });
    }
    Ok(json!({
        "mediaType": MEDIA_TYPE,
        "verificationMaterial": {
            "publicKey": {"hint": signature.keyid},
            "tlogEntries": [],
            "timestampVerificationData": {"rfc3161Timestamps": []},
        },
        "dsseEnvelope": {
            "payload": env.payload,
            "payloadType": env.payload_type,
            "signatures": [{"sig": signature.sig, "keyid": signature.keyid}],
        },
    }))
}

/// The envelope in a v0.3 bundle (step 1), unverified.
pub fn from_bundle(v: &Value) -> Result<Envelope, DsseError> {
    // 1. Structure.
    let obj = v.as_object().ok_or_else(|| DsseError::Structure {
        field: "the bundle".to_string(),
        expected: "a JSON object",
    })?;
    match obj.get("mediaType") {
        Some(Value::String(m)) if m == MEDIA_TYPE || m == MEDIA_TYPE_LEGACY => {}
        Some(Value::String(m)) => return Err(DsseError::BundleMediaType(m.clone())),
        _ => {
            return Err(DsseError::Structure {
                field: "mediaType".to_string(),
                expected: "a string",
            })
        }
    }
    let Some(envelope) = obj.get("dsseEnvelope") else {
        if obj.contains_key("messageSignature") {
            return Err(DsseError::BundleContent("a message signature"));
        }
        return Err(DsseError::Structure {
            field: "dsseEnvelope".to_string(),
            expected: "an object",
        });
    };
    let env = Envelope::from_value(envelope, "dsseEnvelope.")?;
    if env.signatures.len() != 1 {
        return Err(DsseError::BundleSignatureCount(env.signatures.len()));
    }
    // DSSE step 2, so a bundle with bad base64 fails here rather than at verification.
    dsse::check_encoding(&env, "dsseEnvelope.")?;
    Ok(env)
}

/// Verifies a keyed bundle with `key` (steps 1 to 3 in the module doc).
pub fn verify_keyed_bundle(v: &Value, key: &VerifyingKey) -> Result<Verified, DsseError> {
    // 1. Structure.
    let env = from_bundle(v)?;
    // 2. The verification material names this key.
    let material = v.get("verificationMaterial").ok_or(DsseError::Structure {
        field: "verificationMaterial".to_string(),
        expected: "an object",
    })?;
    let Some(public_key) = material.get("publicKey") else {
        for (field, what) in [
            ("certificate", "a certificate"),
            ("x509CertificateChain", "a certificate chain"),
        ] {
            if material.get(field).is_some() {
                return Err(DsseError::NotKeyed(what));
            }
        }
        return Err(DsseError::Structure {
            field: "verificationMaterial.publicKey".to_string(),
            expected: "an object",
        });
    };
    let hint = match public_key.get("hint") {
        None | Some(Value::Null) => "",
        Some(Value::String(h)) => h.as_str(),
        Some(_) => {
            return Err(DsseError::Structure {
                field: "verificationMaterial.publicKey.hint".to_string(),
                expected: "a string",
            })
        }
    };
    let keyid = key.keyid();
    if !hint.is_empty() && hint != keyid {
        return Err(DsseError::HintMismatch {
            hint: hint.to_string(),
            keyid,
        });
    }
    // 3. The signature.
    dsse::verify(&env, key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attest::dsse::{sign, PAYLOAD_TYPE};
    use crate::attest::keys::tests::Keys;

    const VECTORS: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/sigstore-conformance/bundle-verify"
    );

    #[test]
    fn bundle_round_trips_and_verifies_for_both_key_types() {
        let keys = Keys::new();
        for name in ["ed25519", "p256"] {
            let vk = keys.verifying(name);
            let env = sign(b"{\"_type\":\"x\"}", PAYLOAD_TYPE, &keys.signing(name));
            let bundle = to_bundle(&env).unwrap();
            assert_eq!(bundle["mediaType"], MEDIA_TYPE);
            assert_eq!(
                bundle["verificationMaterial"]["publicKey"]["hint"],
                vk.keyid()
            );
            assert_eq!(bundle["dsseEnvelope"]["signatures"][0]["keyid"], vk.keyid());
            assert_eq!(from_bundle(&bundle).unwrap(), env);
            let v = verify_keyed_bundle(&bundle, &vk).unwrap();
            assert_eq!(v.payload(), b"{\"_type\":\"x\"}");

            let mut legacy = bundle.clone();
            legacy["mediaType"] = MEDIA_TYPE_LEGACY.into();
            assert!(verify_keyed_bundle(&legacy, &vk).is_ok());

            // No hint is fine: the signature still decides.
            let mut no_hint = bundle.clone();
            no_hint["verificationMaterial"]["publicKey"] = json!({});
            assert!(verify_keyed_bundle(&no_hint, &vk).is_ok());
        }
    }

    /// Sigstore's own Rust types read our bundle as a v0.3 DSSE bundle with a public key.
    #[test]
    fn sigstore_types_parse_our_bundle() {
        let keys = Keys::new();
        let env = sign(b"{}", PAYLOAD_TYPE, &keys.signing("p256"));
        let bundle = to_bundle(&env).unwrap();
        let parsed = sigstore_types::Bundle::from_json(&bundle.to_string()).unwrap();
        let back: Value = serde_json::from_str(&parsed.to_json().unwrap()).unwrap();
        assert_eq!(back["mediaType"], MEDIA_TYPE);
        assert_eq!(
            back["dsseEnvelope"]["payload"],
            bundle["dsseEnvelope"]["payload"]
        );
        assert_eq!(
            back["dsseEnvelope"]["signatures"][0]["sig"],
            bundle["dsseEnvelope"]["signatures"][0]["sig"]
        );
        assert_eq!(
            back["verificationMaterial"]["publicKey"]["hint"],
            bundle["verificationMaterial"]["publicKey"]["hint"]
        );
    }

    /// The field names we read and write are the ones in the conformance suite's bundles.
    #[test]
    fn field_names_match_the_conformance_vectors() {
        let read = |case: &str| -> Value {
            let path = format!("{VECTORS}/{case}/bundle.sigstore.json");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!("{path}: {e} (the shared vectors must be beside the repo)")
            });
            serde_json::from_str(&text).unwrap()
        };
        let keyed = read("managed-key-happy-path");
        assert_eq!(keyed["mediaType"], MEDIA_TYPE);
        assert!(keyed["verificationMaterial"]["publicKey"]["hint"].is_string());
        assert!(keyed["verificationMaterial"]["tlogEntries"].is_array());
        assert!(
            keyed["verificationMaterial"]["timestampVerificationData"]["rfc3161Timestamps"]
                .is_array()
        );
        // The conformance key's hint is base64(SHA-256(SPKI DER)) of its key.pub.
        let pem =
            std::fs::read_to_string(format!("{VECTORS}/managed-key-happy-path/key.pub")).unwrap();
        let vk = crate::attest::keys::load_verifying_key(&pem).unwrap();
        assert_eq!(
            keyed["verificationMaterial"]["publicKey"]["hint"],
            vk.keyid()
        );

        let dsse = read("happy-path-intoto-in-dsse-v3");
        let env = from_bundle(&dsse).unwrap();
        assert_eq!(env.payload_type, PAYLOAD_TYPE);
        let sig = &dsse["dsseEnvelope"]["signatures"][0];
        assert!(sig["sig"].is_string());
        // That bundle is keyless: not a keyed bundle.
        let e = verify_keyed_bundle(&dsse, &vk).unwrap_err();
        assert!(matches!(e, DsseError::NotKeyed(_)), "{e:?}");
        // A message-signature bundle is not a DSSE bundle.
        let e = from_bundle(&keyed).unwrap_err();
        assert_eq!(e, DsseError::BundleContent("a message signature"));
    }

    #[test]
    fn tampered_or_malformed_bundles_are_rejected_naming_what() {
        let keys = Keys::new();
        let vk = keys.verifying("ed25519");
        let env = sign(b"statement", PAYLOAD_TYPE, &keys.signing("ed25519"));
        let bundle = to_bundle(&env).unwrap();
        let other = sign(b"statement", PAYLOAD_TYPE, &keys.signing("p256"));

        let mut b = bundle.clone();
        b["verificationMaterial"]["publicKey"]["hint"] = other.signatures[0].keyid.clone().into();
        let e = verify_keyed_bundle(&b, &vk).unwrap_err();
        assert!(matches!(e, DsseError::HintMismatch { .. }), "{e:?}");

        let mut b = bundle.clone();
        b["dsseEnvelope"]["payload"] =
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, b"statemenT").into();
        assert!(matches!(
            verify_keyed_bundle(&b, &vk),
            Err(DsseError::SignatureInvalid { .. })
        ));

        let mut b = bundle.clone();
        b["dsseEnvelope"]["payloadType"] = "application/json".into();
        assert!(matches!(
            verify_keyed_bundle(&b, &vk),
            Err(DsseError::SignatureInvalid { .. })
        ));

        let mut b = bundle.clone();
        b["dsseEnvelope"]["signatures"] = json!([
            bundle["dsseEnvelope"]["signatures"][0],
            bundle["dsseEnvelope"]["signatures"][0]
        ]);
        assert_eq!(from_bundle(&b), Err(DsseError::BundleSignatureCount(2)));
        let mut b = bundle.clone();
        b["dsseEnvelope"]["signatures"] = json!([]);
        assert_eq!(from_bundle(&b), Err(DsseError::NoSignatures));

        for m in [
            "application/vnd.dev.sigstore.bundle+json;version=0.2",
            "application/vnd.dev.sigstore.bundle.v0.4+json",
            "",
        ] {
            let mut b = bundle.clone();
            b["mediaType"] = m.into();
            assert_eq!(
                from_bundle(&b),
                Err(DsseError::BundleMediaType(m.to_string()))
            );
        }
        let mut b = bundle.clone();
        b.as_object_mut().unwrap().remove("mediaType");
        assert!(from_bundle(&b)
            .unwrap_err()
            .to_string()
            .contains("mediaType"));

        let mut b = bundle.clone();
        b["dsseEnvelope"]["signatures"][0]["sig"] = "!!".into();
        let e = from_bundle(&b).unwrap_err();
        assert!(
            e.to_string().contains("dsseEnvelope.signatures[0].sig"),
            "{e}"
        );
        let mut b = bundle.clone();
        b["dsseEnvelope"]["payload"] = 7.into();
        let e = from_bundle(&b).unwrap_err();
        assert!(e.to_string().contains("dsseEnvelope.payload"), "{e}");

        let mut b = bundle.clone();
        b["verificationMaterial"] = json!({"certificate": {"rawBytes": "AA=="}});
        assert_eq!(
            verify_keyed_bundle(&b, &vk),
            Err(DsseError::NotKeyed("a certificate"))
        );
        let mut b = bundle.clone();
        b.as_object_mut().unwrap().remove("verificationMaterial");
        assert!(verify_keyed_bundle(&b, &vk).is_err());
        assert!(from_bundle(&json!([])).is_err());

        // to_bundle refuses what cannot be a keyed DSSE bundle.
        let mut two = env.clone();
        two.signatures.push(env.signatures[0].clone());
        assert_eq!(to_bundle(&two), Err(DsseError::BundleSignatureCount(2)));
        let mut anonymous = env.clone();
        anonymous.signatures[0].keyid.clear();
        assert!(to_bundle(&anonymous).is_err());
    }
}
