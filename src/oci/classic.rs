//! cosign's classic attestation form, built and read without a registry: the image at the tag
//! `sha256-<hex>.att` whose layers are DSSE envelopes, which Kyverno's `verifyImages`, the
//! Sigstore policy-controller and `cosign verify-attestation` read (book: attach.md).
//!
//! Laid out as cosign lays it out (sigstore/cosign d6d86c224e5899b54f56cbb063b79dc43abc11c2:
//! `pkg/oci/static/signature.go`, `pkg/oci/mutate/signatures.go`, `pkg/oci/empty/empty.go`,
//! `pkg/oci/remote/remote.go` `AttestationTag`; go-containerregistry `pkg/v1/config.go` and
//! `pkg/v1/mutate/image.go` for the config's bytes):
//!
//! - the manifest: an OCI image manifest, no annotations; its config
//!   `application/vnd.oci.image.config.v1+json` with empty `architecture` and `os`, the zero
//!   `created`, one `history` entry and one `rootfs.diff_ids` entry per layer (a layer's diff id
//!   is its digest: the layers are not compressed);
//! - each layer: `application/vnd.dsse.envelope.v1+json`, the envelope's bytes as cosign v2
//!   writes them (`payloadType`, `payload`, `signatures` with an empty `keyid`: a key id the
//!   verifier's key does not give makes cosign's DSSE verifier skip the signature); annotated
//!   `dev.cosignproject.cosign/signature` (empty, required by every reader) and `predicateType`;
//!   keyless, the Fulcio certificate and its chain (`dev.sigstore.cosign/certificate`,
//!   `dev.sigstore.cosign/chain`) and the Rekor entry (`dev.sigstore.cosign/bundle`, when the
//!   entry covers the layer's bytes exactly, which cosign checks).
//!
//! A later attestation of the same predicate type replaces the earlier ones (cosign's
//! `--replace`): Kyverno's ClusterPolicy requires every attestation of a type to pass, so a
//! stale VSA left beside a new one would deny the image. The same envelope attached twice
//! changes nothing.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::artifact::{sha256_digest, OciError, MANIFEST_MEDIA_TYPE};

/// The layer's media type: a DSSE envelope.
pub const LAYER_MEDIA_TYPE: &str = "application/vnd.dsse.envelope.v1+json";
/// The config's media type.
pub const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
/// The DSSE payload type of an in-toto statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
pub const PREDICATE_TYPE_ANNOTATION: &str = "predicateType";
pub const CERTIFICATE_ANNOTATION: &str = "dev.sigstore.cosign/certificate";
pub const CHAIN_ANNOTATION: &str = "dev.sigstore.cosign/chain";
pub const REKOR_BUNDLE_ANNOTATION: &str = "dev.sigstore.cosign/bundle";
/// go-containerregistry's zero time, as a config without a creation time spells it.
const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

/// The classic form's tag for an image digest: `sha256:<hex>` → `sha256-<hex>.att`.
pub fn attestation_tag(subject_digest: &str) -> String {
    format!("{}.att", subject_digest.replacen(':', "-", 1))
}

/// One layer of the `.att` image: the envelope's bytes and the layer's annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub envelope: Vec<u8>,
    pub annotations: BTreeMap<String, String>,
    /// Whether the Rekor entry rides along (`dev.sigstore.cosign/bundle`): keyless bundles
    /// whose entry covers exactly these bytes.
    pub logged: bool,
}

/// A layer descriptor as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayerDescriptor {
    pub media_type: String,
    pub size: u64,
    pub digest: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The DSSE envelope in cosign v2's field order, compact.
#[derive(Serialize)]
struct CosignEnvelope<'a> {
    #[serde(rename = "payloadType")]
    payload_type: &'a str,
    payload: &'a str,
    signatures: Vec<CosignSignature<'a>>,
}

#[derive(Serialize)]
struct CosignSignature<'a> {
    keyid: &'a str,
    sig: &'a str,
}

/// The classic layer of a Sigstore bundle v0.3 holding a DSSE envelope: the envelope re-laid
/// as cosign lays it (the signature covers the payload, not the envelope's layout), the
/// predicate type, and for a keyless bundle its certificate chain and Rekor entry.
pub fn layer_of_bundle(bundle: &[u8], predicate_type: &str) -> Result<Layer, OciError> {
    let value: Value = serde_json::from_slice(bundle).map_err(OciError::NotJson)?;
    let dsse = value.get("dsseEnvelope").ok_or(OciError::NoEnvelope)?;
    let payload = dsse
        .get("payload")
        .and_then(Value::as_str)
        .ok_or(OciError::NoPayload)?;
    let payload_type = dsse
        .get("payloadType")
        .and_then(Value::as_str)
        .ok_or(OciError::NoPayloadType)?;
    if payload_type != PAYLOAD_TYPE {
        return Err(OciError::PayloadType(payload_type.to_string()));
    }
    let sig = match dsse
        .get("signatures")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([one]) => one
            .get("sig")
            .and_then(Value::as_str)
            .ok_or(OciError::NoSig)?,
        _ => return Err(OciError::Signatures),
    };
    let envelope = serde_json::to_vec(&CosignEnvelope {
        payload_type,
        payload,
        signatures: vec![CosignSignature { keyid: "", sig }],
    })
    .map_err(OciError::Write)?;
    let mut annotations = BTreeMap::from([
        (SIGNATURE_ANNOTATION.to_string(), String::new()),
        (
            PREDICATE_TYPE_ANNOTATION.to_string(),
            predicate_type.to_string(),
        ),
    ]);
    let mut logged = false;
    let material = value.get("verificationMaterial");
    let certs = certificates(material);
    if let Some((leaf, chain)) = certs.split_first() {
        annotations.insert(CERTIFICATE_ANNOTATION.to_string(), pem(leaf));
        annotations.insert(
            CHAIN_ANNOTATION.to_string(),
            chain.iter().map(|c| pem(c)).collect::<String>(),
        );
        if let Some(entry) = rekor_bundle(material, &envelope) {
            annotations.insert(REKOR_BUNDLE_ANNOTATION.to_string(), entry);
            logged = true;
        }
    }
    Ok(Layer {
        envelope,
        annotations,
        logged,
    })
}

/// The DER certificates of the bundle's verification material, leaf first.
fn certificates(material: Option<&Value>) -> Vec<Vec<u8>> {
    let Some(m) = material else {
        return Vec::new();
    };
    let raw: Vec<&Value> = if let Some(c) = m.get("certificate") {
        vec![c]
    } else if let Some(chain) = m
        .pointer("/x509CertificateChain/certificates")
        .and_then(Value::as_array)
    {
        chain.iter().collect()
    } else {
        Vec::new()
    };
    raw.iter()
        .filter_map(|c| c.get("rawBytes").and_then(Value::as_str))
        .filter_map(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .collect()
}

fn pem(der: &[u8]) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for chunk in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(chunk));
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

/// cosign's `RekorBundle` of the bundle's first log entry, when that entry has a signed entry
/// timestamp and its body hashes exactly `envelope` (cosign compares the entry's envelope hash
/// with the layer's digest, so an entry over other bytes would make the layer fail).
fn rekor_bundle(material: Option<&Value>, envelope: &[u8]) -> Option<String> {
    let entry = material?.get("tlogEntries")?.as_array()?.first()?;
    let body_b64 = entry.get("canonicalizedBody")?.as_str()?;
    let body = base64::engine::general_purpose::STANDARD
        .decode(body_b64)
        .ok()?;
    let body: Value = serde_json::from_slice(&body).ok()?;
    let hex = sha256_digest(envelope);
    let hex = hex.strip_prefix("sha256:")?;
    let covered = [
        "/spec/envelopeHash/value",
        "/spec/content/hash/value",
        "/spec/content/envelope/hash/value",
    ]
    .iter()
    .any(|p| body.pointer(p).and_then(Value::as_str) == Some(hex));
    if !covered {
        return None;
    }
    let set = entry
        .pointer("/inclusionPromise/signedEntryTimestamp")?
        .as_str()?;
    let number = |k: &str| -> Option<i64> {
        let v = entry.get(k)?;
        v.as_i64().or_else(|| v.as_str()?.parse().ok())
    };
    let log_id = entry.pointer("/logId/keyId")?.as_str()?;
    let log_id = hex::encode(
        base64::engine::general_purpose::STANDARD
            .decode(log_id)
            .ok()?,
    );
    // cosign's field names and order (`pkg/cosign/bundle/rekor.go`).
    let text = format!(
        r#"{{"SignedEntryTimestamp":{},"Payload":{{"body":{},"integratedTime":{},"logIndex":{},"logID":{}}}}}"#,
        Value::from(set),
        Value::from(body_b64),
        number("integratedTime")?,
        number("logIndex")?,
        Value::from(log_id)
    );
    Some(text)
}

/// An `.att` image to write: its config's bytes and its manifest's.
pub type Image = (Vec<u8>, Vec<u8>);

/// The `.att` image with `layer` added to what the tag held (`existing`: its manifest's layer
/// descriptors, in order): the layers of other predicate types kept in their order after the
/// new one, the same predicate type's replaced. `None` when the tag already holds exactly this
/// layer, and nothing needs writing. Returns the config's and the manifest's bytes.
pub fn image_with(existing: &[LayerDescriptor], layer: &Layer) -> Result<Option<Image>, OciError> {
    let new = LayerDescriptor {
        media_type: LAYER_MEDIA_TYPE.to_string(),
        size: layer.envelope.len() as u64,
        digest: sha256_digest(&layer.envelope),
        annotations: layer.annotations.clone(),
    };
    if existing.contains(&new) {
        return Ok(None);
    }
    let predicate = layer.annotations.get(PREDICATE_TYPE_ANNOTATION);
    let mut layers = vec![new];
    layers.extend(
        existing
            .iter()
            .filter(|d| d.annotations.get(PREDICATE_TYPE_ANNOTATION) != predicate)
            .cloned(),
    );
    let config = config(&layers);
    let manifest = manifest(&config, &layers)?;
    Ok(Some((config, manifest)))
}

/// The config go-containerregistry writes for these layers, byte for byte.
fn config(layers: &[LayerDescriptor]) -> Vec<u8> {
    let history: Vec<String> = layers
        .iter()
        .map(|_| format!(r#"{{"created":"{ZERO_TIME}"}}"#))
        .collect();
    let diff_ids: Vec<String> = layers.iter().map(|l| format!("\"{}\"", l.digest)).collect();
    format!(
        r#"{{"architecture":"","created":"{ZERO_TIME}","history":[{}],"os":"","rootfs":{{"type":"layers","diff_ids":[{}]}},"config":{{}}}}"#,
        history.join(","),
        diff_ids.join(",")
    )
    .into_bytes()
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    schema_version: u32,
    media_type: String,
    config: ConfigDescriptor,
    layers: Vec<LayerDescriptor>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigDescriptor {
    media_type: String,
    size: u64,
    digest: String,
}

fn manifest(config: &[u8], layers: &[LayerDescriptor]) -> Result<Vec<u8>, OciError> {
    serde_json::to_vec(&Manifest {
        schema_version: 2,
        media_type: MANIFEST_MEDIA_TYPE.to_string(),
        config: ConfigDescriptor {
            media_type: CONFIG_MEDIA_TYPE.to_string(),
            size: config.len() as u64,
            digest: sha256_digest(config),
        },
        layers: layers.to_vec(),
    })
    .map_err(OciError::Write)
}

/// The layer descriptors of an `.att` manifest, every one of them (a reader keeps the DSSE
/// envelopes among them).
pub fn layers_of(manifest: &[u8]) -> Result<Vec<LayerDescriptor>, OciError> {
    let m: Manifest = serde_json::from_slice(manifest).map_err(OciError::AttManifest)?;
    Ok(m.layers)
}

#[cfg(test)]
#[path = "classic_tests.rs"]
mod tests;
