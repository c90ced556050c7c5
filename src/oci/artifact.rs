//! The documents an attachment is made of, built and read without a registry: the bundle's
//! facts, the artifact manifest, and the referrers tag schema's image index.
//!
//! The artifact manifest is the one cosign (`WriteAttestationNewBundleFormat`, its
//! `--new-bundle-format` attestations) writes, field for field:
//!
//! - `artifactType` and the layer's `mediaType`: the bundle v0.3 media type;
//! - `config`: the OCI empty descriptor (`application/vnd.oci.empty.v1+json`, the two bytes
//!   `{}`), carrying the same `artifactType`, as cosign's does;
//! - the layer annotated `org.opencontainers.image.title: sha256-<hex>.sigstore.json`;
//! - the manifest annotated `dev.sigstore.bundle.content: dsse-envelope`,
//!   `dev.sigstore.bundle.predicateType` (the DSSE payload's `predicateType`) and
//!   `org.opencontainers.image.created`;
//! - `subject`: the image manifest's descriptor.
//!
//! One difference, and why: cosign's `created` is the push time; ours is the statement's
//! `predicate.timeVerified` when it has one (the VSA always does), so the same bundle attached
//! twice is the same manifest, and the index gains no second entry for it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::attest::dsse::DsseError;
use crate::attest::keyed_bundle;

/// The Sigstore bundle v0.3 media type: the artifact's type and its layer's.
pub const BUNDLE_MEDIA_TYPE: &str = keyed_bundle::MEDIA_TYPE;
/// The OCI image manifest media type (the artifact manifest is one).
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// The OCI image index media type (the referrers tag schema's document).
pub const INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// The image-spec's empty descriptor: media type, the bytes `{}`, their digest.
pub const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
pub const EMPTY_CONFIG: &[u8] = b"{}";
pub const EMPTY_DIGEST: &str =
    "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
/// The annotations cosign's bundle format puts on the artifact manifest.
pub const CONTENT_ANNOTATION: &str = "dev.sigstore.bundle.content";
pub const PREDICATE_TYPE_ANNOTATION: &str = "dev.sigstore.bundle.predicateType";
pub const CREATED_ANNOTATION: &str = "org.opencontainers.image.created";
pub const TITLE_ANNOTATION: &str = "org.opencontainers.image.title";
/// `dev.sigstore.bundle.content` for a bundle holding a DSSE envelope.
pub const DSSE_CONTENT: &str = "dsse-envelope";

/// A content descriptor (OCI image-spec): the image manifest a VSA is for, or an artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
}

/// What an attachment needs to know of a bundle, read without checking its signature
/// (admission verifies it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleFacts {
    /// The statement's `predicateType`.
    pub predicate_type: String,
    /// Every `subject[].digest.sha256` of the statement, lowercase hex.
    pub subject_sha256: Vec<String>,
    /// `predicate.timeVerified`, when the statement has one.
    pub time_verified: Option<String>,
}

/// Why a bundle, an index or a manifest is not what an attestation in a registry is made of or
/// read from, or (a bug) could not be written.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    #[error("not JSON (a Sigstore bundle is): {0}")]
    BundleJson(serde_json::Error),
    #[error("not a Sigstore bundle v0.3 with a DSSE envelope: {0}")]
    NotBundle(DsseError),
    #[error("the DSSE envelope's payload: {0}")]
    Payload(DsseError),
    #[error("the DSSE payload is not JSON (an in-toto statement is): {0}")]
    PayloadJson(serde_json::Error),
    #[error("the DSSE payload has no `predicateType`: it is not an in-toto statement")]
    NoPredicateType,
    #[error("the statement has no `subject` list")]
    NoSubjects,
    /// JSON this release writes that serde could not write.
    #[error("{0}")]
    Write(serde_json::Error),
    #[error("the referrers index is not JSON: {0}")]
    IndexJson(serde_json::Error),
    #[error("the referrers index is not a JSON object")]
    IndexNotObject,
    /// What the referrers tag holds instead of an image index (its media type).
    #[error("it holds a {0}, not an image index")]
    NotIndex(String),
    #[error("the referrers index's `manifests` is not a list")]
    ManifestsNotList,
    #[error("the referrers list is not an image index: {0}")]
    ReferrersList(serde_json::Error),
    #[error("the manifest is not JSON: {0}")]
    ManifestJson(serde_json::Error),
    /// A manifest about another image: its subject (`missing` when it names none), the image.
    #[error("its subject is {0}, not the image {1}")]
    OtherSubject(String, String),
    #[error("the manifest has no layers")]
    NoLayers,
    #[error("the manifest has no bundle layer")]
    NoBundleLayer,
    #[error("its bundle layer: {0}")]
    BundleLayer(serde_json::Error),
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("the bundle holds no DSSE envelope")]
    NoEnvelope,
    #[error("the DSSE envelope has no payload")]
    NoPayload,
    #[error("the DSSE envelope has no payloadType")]
    NoPayloadType,
    #[error("the DSSE payload type is `{0}`, not an in-toto statement's")]
    PayloadType(String),
    #[error("the DSSE signature has no `sig`")]
    NoSig,
    #[error("the DSSE envelope must carry exactly one signature")]
    Signatures,
    #[error("the `.att` manifest is not an OCI image manifest: {0}")]
    AttManifest(serde_json::Error),
}

impl BundleFacts {
    /// A Sigstore bundle v0.3 holding a DSSE envelope whose payload is an in-toto statement;
    /// the error says which of these it is not.
    pub fn read(bundle: &[u8]) -> Result<BundleFacts, OciError> {
        let value: Value = serde_json::from_slice(bundle).map_err(OciError::BundleJson)?;
        let envelope = keyed_bundle::from_bundle(&value).map_err(OciError::NotBundle)?;
        let payload = envelope.unverified_payload().map_err(OciError::Payload)?;
        let statement: Value = serde_json::from_slice(&payload).map_err(OciError::PayloadJson)?;
        let predicate_type = statement
            .get("predicateType")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or(OciError::NoPredicateType)?
            .to_string();
        let subject_sha256 = statement
            .get("subject")
            .and_then(Value::as_array)
            .ok_or(OciError::NoSubjects)?
            .iter()
            .filter_map(|s| s.pointer("/digest/sha256").and_then(Value::as_str))
            .map(str::to_ascii_lowercase)
            .collect();
        let time_verified = statement
            .pointer("/predicate/timeVerified")
            .and_then(Value::as_str)
            .map(str::to_string);
        Ok(BundleFacts {
            predicate_type,
            subject_sha256,
            time_verified,
        })
    }

    /// Whether `digest` (`sha256:<hex>`) is among the statement's subjects.
    pub fn names(&self, digest: &str) -> bool {
        digest
            .strip_prefix("sha256:")
            .is_some_and(|hex| self.subject_sha256.iter().any(|s| s == hex))
    }
}

/// `sha256:<hex>` of `bytes`.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The referrers tag schema's tag for a subject: `sha256:<hex>` → `sha256-<hex>`.
pub fn tag_schema_tag(subject_digest: &str) -> String {
    subject_digest.replacen(':', "-", 1)
}

/// The artifact manifest, field for field as cosign writes it (Go's `encoding/json` order:
/// struct fields in declaration order, map keys sorted, no spaces).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactManifest {
    schema_version: u32,
    media_type: String,
    config: ConfigDescriptor,
    layers: Vec<LayerDescriptor>,
    annotations: BTreeMap<String, String>,
    subject: SubjectDescriptor,
    artifact_type: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigDescriptor {
    media_type: String,
    size: u64,
    digest: String,
    artifact_type: String,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LayerDescriptor {
    media_type: String,
    size: u64,
    digest: String,
    annotations: BTreeMap<String, String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SubjectDescriptor {
    media_type: String,
    size: u64,
    digest: String,
}

/// The artifact manifest for `bundle` about `subject`, and its annotations (which the tag
/// schema's index entry repeats). `created` is the `org.opencontainers.image.created` value.
pub fn artifact_manifest(
    subject: &Descriptor,
    bundle: &[u8],
    predicate_type: &str,
    created: &str,
) -> Result<(Vec<u8>, BTreeMap<String, String>), OciError> {
    let layer_digest = sha256_digest(bundle);
    let annotations = BTreeMap::from([
        (CONTENT_ANNOTATION.to_string(), DSSE_CONTENT.to_string()),
        (
            PREDICATE_TYPE_ANNOTATION.to_string(),
            predicate_type.to_string(),
        ),
        (CREATED_ANNOTATION.to_string(), created.to_string()),
    ]);
    let manifest = ArtifactManifest {
        schema_version: 2,
        media_type: MANIFEST_MEDIA_TYPE.to_string(),
        config: ConfigDescriptor {
            media_type: EMPTY_MEDIA_TYPE.to_string(),
            size: EMPTY_CONFIG.len() as u64,
            digest: EMPTY_DIGEST.to_string(),
            artifact_type: BUNDLE_MEDIA_TYPE.to_string(),
        },
        layers: vec![LayerDescriptor {
            media_type: BUNDLE_MEDIA_TYPE.to_string(),
            size: bundle.len() as u64,
            annotations: BTreeMap::from([(
                TITLE_ANNOTATION.to_string(),
                format!("{}.sigstore.json", tag_schema_tag(&layer_digest)),
            )]),
            digest: layer_digest,
        }],
        annotations: annotations.clone(),
        subject: SubjectDescriptor {
            media_type: subject.media_type.clone(),
            size: subject.size,
            digest: subject.digest.clone(),
        },
        artifact_type: BUNDLE_MEDIA_TYPE.to_string(),
    };
    let bytes = serde_json::to_vec(&manifest).map_err(OciError::Write)?;
    Ok((bytes, annotations))
}

/// An index entry of the referrers tag schema: the artifact's descriptor with its
/// `artifactType` and annotations, as the referrers API would list it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    pub media_type: String,
    pub size: u64,
    pub digest: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The tag schema's index with `entry` added: `existing` (the index already at the tag, if
/// any) keeps every entry and field it has, whoever wrote them; an entry with the same digest
/// is not added twice. `None` when nothing changes (the entry is there already).
pub fn index_with(
    existing: Option<&[u8]>,
    entry: &IndexEntry,
) -> Result<Option<Vec<u8>>, OciError> {
    let mut index = match existing {
        Some(bytes) => {
            let v: Value = serde_json::from_slice(bytes).map_err(OciError::IndexJson)?;
            if !v.is_object() {
                return Err(OciError::IndexNotObject);
            }
            match v.get("mediaType").and_then(Value::as_str) {
                None | Some(INDEX_MEDIA_TYPE) => {}
                Some(other) => {
                    return Err(OciError::NotIndex(other.to_string()));
                }
            }
            v
        }
        None => serde_json::json!({
            "schemaVersion": 2,
            "mediaType": INDEX_MEDIA_TYPE,
            "manifests": [],
        }),
    };
    let manifests = index
        .as_object_mut()
        .map(|o| {
            o.entry("manifests")
                .or_insert_with(|| Value::Array(Vec::new()))
        })
        .and_then(Value::as_array_mut)
        .ok_or(OciError::ManifestsNotList)?;
    if manifests
        .iter()
        .any(|m| m.get("digest").and_then(Value::as_str) == Some(entry.digest.as_str()))
    {
        return Ok(None);
    }
    manifests.push(serde_json::to_value(entry).map_err(OciError::Write)?);
    serde_json::to_vec(&index)
        .map(Some)
        .map_err(OciError::Write)
}

/// The entries of a referrers list (the referrers API's answer, or the tag schema's index)
/// that are VSA bundles as [`artifact_manifest`] types them.
pub fn bundle_entries(index: &[u8], predicate_type: &str) -> Result<Vec<IndexEntry>, OciError> {
    #[derive(Deserialize)]
    struct Index {
        #[serde(default)]
        manifests: Vec<IndexEntry>,
    }
    let index: Index = serde_json::from_slice(index).map_err(OciError::ReferrersList)?;
    Ok(index
        .manifests
        .into_iter()
        .filter(|m| {
            m.artifact_type.as_deref() == Some(BUNDLE_MEDIA_TYPE)
                && m.annotations
                    .get(PREDICATE_TYPE_ANNOTATION)
                    .map(String::as_str)
                    == Some(predicate_type)
        })
        .collect())
}

/// The bundle layer an artifact manifest names, after checking that the manifest is about
/// `subject`: its descriptor.
pub fn bundle_layer(manifest: &[u8], subject: &str) -> Result<Descriptor, OciError> {
    let v: Value = serde_json::from_slice(manifest).map_err(OciError::ManifestJson)?;
    let about = v.pointer("/subject/digest").and_then(Value::as_str);
    if about != Some(subject) {
        return Err(OciError::OtherSubject(
            about.unwrap_or("missing").to_string(),
            subject.to_string(),
        ));
    }
    let layers = v
        .get("layers")
        .and_then(Value::as_array)
        .ok_or(OciError::NoLayers)?;
    let layer = layers
        .iter()
        .find(|l| l.get("mediaType").and_then(Value::as_str) == Some(BUNDLE_MEDIA_TYPE))
        .ok_or(OciError::NoBundleLayer)?;
    serde_json::from_value(layer.clone()).map_err(OciError::BundleLayer)
}

/// A keyed Sigstore bundle around `statement`, for the tests of this module and its callers:
/// the signature is not checked here, so a fixed one will do.
#[cfg(test)]
pub(crate) fn test_bundle(statement: &Value) -> Vec<u8> {
    use base64::Engine as _;
    let payload = base64::engine::general_purpose::STANDARD.encode(statement.to_string());
    serde_json::to_vec(&serde_json::json!({
        "mediaType": BUNDLE_MEDIA_TYPE,
        "verificationMaterial": {"publicKey": {"hint": "k"}, "tlogEntries": []},
        "dsseEnvelope": {
            "payload": payload,
            "payloadType": "application/vnd.in-toto+json",
            "signatures": [{"sig": "c2ln", "keyid": "k"}],
        },
    }))
    .unwrap()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const VSA: &str = "https://slsa.dev/verification_summary/v1";

    fn subject() -> Descriptor {
        Descriptor {
            media_type: MANIFEST_MEDIA_TYPE.to_string(),
            digest: format!("sha256:{}", "a".repeat(64)),
            size: 528,
        }
    }

    fn statement() -> Value {
        json!({
            "_type": "https://in-toto.io/Statement/v1",
            "subject": [
                {"name": "git+https://example.com/app", "digest": {"gitCommit": "c".repeat(40)}},
                {"name": "127.0.0.1:5000/app", "digest": {"sha256": "A".repeat(64)}},
            ],
            "predicateType": VSA,
            "predicate": {"timeVerified": "2026-11-30T10:00:00Z"},
        })
    }

    #[test]
    fn the_bundle_facts_come_from_the_dsse_payload() {
        let facts = BundleFacts::read(&test_bundle(&statement())).unwrap();
        assert_eq!(facts.predicate_type, VSA);
        assert_eq!(facts.subject_sha256, vec!["a".repeat(64)]);
        assert_eq!(facts.time_verified.as_deref(), Some("2026-11-30T10:00:00Z"));
        assert!(facts.names(&subject().digest));
        assert!(!facts.names(&format!("sha256:{}", "b".repeat(64))));
        assert!(!facts.names(&"a".repeat(64)));
    }

    #[test]
    fn what_is_not_a_dsse_bundle_says_what_it_is_not() {
        let cases: [(Vec<u8>, &str); 4] = [
            (b"{not json".to_vec(), "not JSON"),
            (
                serde_json::to_vec(
                    &json!({"mediaType": BUNDLE_MEDIA_TYPE, "messageSignature": {}}),
                )
                .unwrap(),
                "DSSE envelope",
            ),
            (
                serde_json::to_vec(&json!({"mediaType": "application/json"})).unwrap(),
                "bundle v0.3",
            ),
            (test_bundle(&json!({"subject": []})), "no `predicateType`"),
        ];
        for (bytes, expected) in cases {
            let e = BundleFacts::read(&bytes).unwrap_err().to_string();
            assert!(e.contains(expected), "{e}");
        }
    }

    #[test]
    fn the_artifact_manifest_is_cosigns_bundle_format() {
        let bundle = test_bundle(&statement());
        let (bytes, annotations) =
            artifact_manifest(&subject(), &bundle, VSA, "2026-11-30T10:00:00Z").unwrap();
        // The exact bytes pushed: their digest is the artifact's name.
        let text = String::from_utf8(bytes.clone()).unwrap();
        let text = text
            .replace(&sha256_digest(&bundle), "sha256:[BUNDLE]")
            .replace(&tag_schema_tag(&sha256_digest(&bundle)), "sha256-[BUNDLE]");
        insta::assert_snapshot!("artifact_manifest", text);
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["layers"][0]["size"], bundle.len());
        assert_eq!(
            serde_json::to_value(&annotations).unwrap(),
            v["annotations"]
        );
        assert_eq!(sha256_digest(EMPTY_CONFIG), EMPTY_DIGEST);
        assert_eq!(
            bundle_layer(&bytes, &subject().digest).unwrap().digest,
            sha256_digest(&bundle)
        );
    }

    #[test]
    fn an_artifact_about_another_image_is_not_read_as_this_ones() {
        let (bytes, _) =
            artifact_manifest(&subject(), &test_bundle(&statement()), VSA, "t").unwrap();
        let e = bundle_layer(&bytes, &format!("sha256:{}", "b".repeat(64)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not the image"), "{e}");
    }

    fn entry(digest: char) -> IndexEntry {
        IndexEntry {
            media_type: MANIFEST_MEDIA_TYPE.to_string(),
            size: 900,
            digest: format!("sha256:{}", digest.to_string().repeat(64)),
            artifact_type: Some(BUNDLE_MEDIA_TYPE.to_string()),
            annotations: BTreeMap::from([
                (CONTENT_ANNOTATION.to_string(), DSSE_CONTENT.to_string()),
                (PREDICATE_TYPE_ANNOTATION.to_string(), VSA.to_string()),
            ]),
        }
    }

    #[test]
    fn a_new_tag_schema_index_holds_the_one_entry() {
        let bytes = index_with(None, &entry('e')).unwrap().unwrap();
        insta::assert_snapshot!("tag_schema_index", String::from_utf8(bytes).unwrap());
    }

    #[test]
    fn an_existing_index_keeps_what_others_wrote_and_gains_no_duplicate() {
        let theirs = json!({
            "schemaVersion": 2,
            "mediaType": INDEX_MEDIA_TYPE,
            "manifests": [{
                "mediaType": MANIFEST_MEDIA_TYPE, "size": 10, "digest": format!("sha256:{}", "f".repeat(64)),
                "artifactType": "application/spdx+json", "platform": {"os": "linux"},
            }],
            "annotations": {"x": "y"},
        });
        let theirs = serde_json::to_vec(&theirs).unwrap();
        let ours = index_with(Some(&theirs), &entry('e')).unwrap().unwrap();
        let v: Value = serde_json::from_slice(&ours).unwrap();
        assert_eq!(v["manifests"].as_array().unwrap().len(), 2);
        assert_eq!(v["manifests"][0]["platform"]["os"], "linux");
        assert_eq!(v["annotations"]["x"], "y");
        assert_eq!(index_with(Some(&ours), &entry('e')).unwrap(), None);
        assert!(index_with(Some(b"[]"), &entry('e')).is_err());
    }

    #[test]
    fn only_vsa_bundles_are_listed() {
        let mut provenance = entry('d');
        provenance.annotations.insert(
            PREDICATE_TYPE_ANNOTATION.to_string(),
            "https://slsa.dev/provenance/v1".to_string(),
        );
        let mut sbom = entry('c');
        sbom.artifact_type = Some("application/spdx+json".to_string());
        let mut index = None;
        for e in [entry('e'), provenance, sbom] {
            index = index_with(index.as_deref(), &e).unwrap();
        }
        let found = bundle_entries(&index.unwrap(), VSA).unwrap();
        assert_eq!(found, vec![entry('e')]);
    }
}
