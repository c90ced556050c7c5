use super::*;

/// A keyed bundle as `claim-check --sign key` writes it: its envelope, hint, no log entry.
fn keyed_bundle_bytes() -> (Vec<u8>, crate::attest::keys::VerifyingKey) {
    let (_, key) = crate::attest::keys::generate_p256(None).unwrap();
    let statement = br#"{"_type":"https://in-toto.io/Statement/v1","predicateType":"https://slsa.dev/verification_summary/v1","predicate":{},"subject":[]}"#;
    let envelope = crate::attest::dsse::sign(statement, PAYLOAD_TYPE, &key);
    let bundle = crate::attest::keyed_bundle::to_bundle(&envelope).unwrap();
    (serde_json::to_vec(&bundle).unwrap(), key.verifying_key())
}

#[test]
fn the_tag_is_cosigns() {
    assert_eq!(
        attestation_tag(&format!("sha256:{}", "ab".repeat(32))),
        format!("sha256-{}.att", "ab".repeat(32))
    );
}

/// The config and manifest of one layer, byte for byte as go-containerregistry serializes
/// cosign's `.att` image (cosign d6d86c2, pkg/oci/mutate/signatures.go over empty.Signatures).
#[test]
fn one_layer_is_laid_out_as_cosign_lays_it() {
    let layer = Layer {
        envelope: b"{}".to_vec(),
        annotations: BTreeMap::from([
            (SIGNATURE_ANNOTATION.to_string(), String::new()),
            (
                PREDICATE_TYPE_ANNOTATION.to_string(),
                "https://slsa.dev/verification_summary/v1".to_string(),
            ),
        ]),
        logged: false,
    };
    let (config, manifest) = image_with(&[], &layer).unwrap().unwrap();
    let l = sha256_digest(b"{}");
    assert_eq!(
        String::from_utf8(config.clone()).unwrap(),
        format!(
            r#"{{"architecture":"","created":"0001-01-01T00:00:00Z","history":[{{"created":"0001-01-01T00:00:00Z"}}],"os":"","rootfs":{{"type":"layers","diff_ids":["{l}"]}},"config":{{}}}}"#
        )
    );
    assert_eq!(
        String::from_utf8(manifest).unwrap(),
        format!(
            r#"{{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{{"mediaType":"application/vnd.oci.image.config.v1+json","size":{},"digest":"{}"}},"layers":[{{"mediaType":"application/vnd.dsse.envelope.v1+json","size":2,"digest":"{l}","annotations":{{"dev.cosignproject.cosign/signature":"","predicateType":"https://slsa.dev/verification_summary/v1"}}}}]}}"#,
            config.len(),
            sha256_digest(&config)
        )
    );
}

/// The keyed bundle's envelope becomes the layer in cosign v2's layout with an empty keyid,
/// and still verifies with the key (the signature covers the payload, not the layout).
#[test]
fn a_keyed_bundle_becomes_a_layer_that_still_verifies() {
    let (bundle, key) = keyed_bundle_bytes();
    let layer = layer_of_bundle(&bundle, "https://slsa.dev/verification_summary/v1").unwrap();
    let text = String::from_utf8(layer.envelope.clone()).unwrap();
    assert!(
        text.starts_with(r#"{"payloadType":"application/vnd.in-toto+json","payload":""#),
        "{text}"
    );
    assert!(
        text.contains(r#""signatures":[{"keyid":"","sig":""#),
        "{text}"
    );
    assert_eq!(layer.annotations.len(), 2, "{:?}", layer.annotations);
    assert!(!layer.logged);
    let parsed = crate::attest::dsse::parse(&layer.envelope).unwrap();
    assert!(crate::attest::dsse::verify(&parsed, &key).is_ok());
}

/// A later VSA replaces the earlier one, other predicate types stay after it, and the same
/// layer again writes nothing.
#[test]
fn a_later_vsa_replaces_the_earlier_and_the_same_one_is_a_no_op() {
    let vsa = |body: &[u8]| Layer {
        envelope: body.to_vec(),
        annotations: BTreeMap::from([
            (SIGNATURE_ANNOTATION.to_string(), String::new()),
            (
                PREDICATE_TYPE_ANNOTATION.to_string(),
                "https://slsa.dev/verification_summary/v1".to_string(),
            ),
        ]),
        logged: false,
    };
    let (_, first) = image_with(&[], &vsa(b"one")).unwrap().unwrap();
    let mut existing = layers_of(&first).unwrap();
    existing.push(LayerDescriptor {
        media_type: LAYER_MEDIA_TYPE.into(),
        size: 3,
        digest: sha256_digest(b"sbo"),
        annotations: BTreeMap::from([(
            PREDICATE_TYPE_ANNOTATION.to_string(),
            "https://spdx.dev/Document".to_string(),
        )]),
    });
    assert_eq!(image_with(&existing, &vsa(b"one")).unwrap(), None);
    let (config, second) = image_with(&existing, &vsa(b"two")).unwrap().unwrap();
    let layers = layers_of(&second).unwrap();
    assert_eq!(layers.len(), 2);
    assert_eq!(layers[0].digest, sha256_digest(b"two"));
    assert_eq!(layers[1].digest, sha256_digest(b"sbo"));
    let config = String::from_utf8(config).unwrap();
    assert!(
        config.contains(&format!(
            r#""diff_ids":["{}","{}"]"#,
            layers[0].digest, layers[1].digest
        )),
        "{config}"
    );
    assert_eq!(config.matches("0001-01-01T00:00:00Z").count(), 3);
}

#[test]
fn a_bundle_without_an_in_toto_envelope_is_no_layer() {
    assert!(layer_of_bundle(b"{", "x").is_err());
    assert!(layer_of_bundle(br#"{"messageSignature":{}}"#, "x")
        .unwrap_err()
        .to_string()
        .contains("no DSSE envelope"));
    let e = layer_of_bundle(
        br#"{"dsseEnvelope":{"payload":"e30=","payloadType":"text/plain","signatures":[{"sig":"AA=="}]}}"#,
        "x",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("not an in-toto statement's"), "{e}");
}

/// A keyless bundle's certificate chain becomes PEM annotations; its Rekor entry rides along
/// only when the entry's body covers exactly the layer's bytes.
#[test]
fn a_keyless_bundle_carries_its_certificate_and_a_covering_log_entry() {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let payload = b64(b"{}");
    let envelope = format!(
        r#"{{"payloadType":"application/vnd.in-toto+json","payload":"{payload}","signatures":[{{"keyid":"","sig":"AA=="}}]}}"#
    );
    let hash = sha256_digest(envelope.as_bytes());
    let body = |h: &str| {
        b64(format!(
            r#"{{"kind":"dsse","spec":{{"envelopeHash":{{"algorithm":"sha256","value":"{h}"}}}}}}"#
        )
        .as_bytes())
    };
    let bundle = |h: &str| {
        format!(
            r#"{{"dsseEnvelope":{{"payload":"{payload}","payloadType":"application/vnd.in-toto+json","signatures":[{{"sig":"AA=="}}]}},"verificationMaterial":{{"certificate":{{"rawBytes":"{}"}},"tlogEntries":[{{"logIndex":"7","logId":{{"keyId":"{}"}},"integratedTime":"1700000000","inclusionPromise":{{"signedEntryTimestamp":"U0VU"}},"canonicalizedBody":"{}"}}]}}}}"#,
            b64(b"leaf"),
            b64(&[0xab, 0xcd]),
            body(h)
        )
    };
    let covered = layer_of_bundle(bundle(&hash[7..]).as_bytes(), "p").unwrap();
    assert_eq!(covered.envelope, envelope.as_bytes());
    assert!(covered.logged);
    assert_eq!(
        covered.annotations[CERTIFICATE_ANNOTATION],
        format!(
            "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
            b64(b"leaf")
        )
    );
    assert_eq!(covered.annotations[CHAIN_ANNOTATION], "");
    assert_eq!(
        covered.annotations[REKOR_BUNDLE_ANNOTATION],
        format!(
            r#"{{"SignedEntryTimestamp":"U0VU","Payload":{{"body":"{}","integratedTime":1700000000,"logIndex":7,"logID":"abcd"}}}}"#,
            body(&hash[7..])
        )
    );
    let other = layer_of_bundle(bundle(&"0".repeat(64)).as_bytes(), "p").unwrap();
    assert!(!other.logged);
    assert!(!other.annotations.contains_key(REKOR_BUNDLE_ANNOTATION));
    assert!(other.annotations.contains_key(CERTIFICATE_ANNOTATION));
}
