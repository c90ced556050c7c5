//! `shipmoor attach REF --attestation FILE`: a signed VSA's Sigstore bundle attached to an image
//! in its registry, where cosign, Kyverno and the Sigstore policy-controller look for it.
//!
//! In: the image reference, the bundle, `--allow-http-registry`, `--format`. Out: the artifact's
//! digest and how it is indexed (the referrers API or the `sha256-<hex>` tag), exit 0; exit 2
//! for a reference without tag or digest, a file that is no bundle of a statement about the
//! image, or a registry that cannot be reached or refuses.
//!
//! 1. Parse the reference, read the bundle and check its shape (a Sigstore bundle v0.3 with a
//!    DSSE envelope holding an in-toto statement): before any request, so a wrong file never
//!    reaches the registry. The signature is not checked: admission verifies it.
//! 2. Resolve the image's digest; the statement must name it among its subjects.
//! 3. Push the artifact and index it ([`crate::oci::Registry::attach`]); print the outcome.

use std::io::Write;

use serde::Serialize;

use crate::cli::{AttachArgs, Format};
use crate::error::{Error, InputError, EXIT_OK};
use crate::oci::{
    artifact::tag_schema_tag, artifact::BundleFacts, artifact::Descriptor, Attached, Options,
    Reference, Registry, Via,
};

/// The schema of `attach --format json` (`schemas/claim_check.attach.v1.json`).
pub const ATTACH_SCHEMA: &str = "claim_check.attach.v1";

/// What `attach --format json` prints: the schema first, as every document does.
#[derive(Serialize)]
struct AttachDocument<'a> {
    schema: &'static str,
    reference: &'a str,
    repository: String,
    subject: &'a Descriptor,
    artifact: &'a str,
    via: &'static str,
    /// The referrers tag schema's index tag, only when the artifact is listed there.
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<&'a str>,
}

impl<'a> AttachDocument<'a> {
    fn of(reference: &'a Reference, attached: &'a Attached, tag: &'a str) -> Self {
        AttachDocument {
            schema: ATTACH_SCHEMA,
            reference: reference.as_str(),
            repository: reference.name(),
            subject: &attached.subject,
            artifact: &attached.digest,
            via: attached.via.as_str(),
            tag: (attached.via == Via::TagSchema).then_some(tag),
        }
    }
}

pub fn run(args: AttachArgs) -> Result<i32, Error> {
    // 1. The reference and the bundle.
    let reference = Reference::parse(&args.reference)?;
    let shown = args.attestation.display().to_string();
    let bundle = crate::nofollow::read_named(&args.attestation, super::replay::ATTESTATION_LIMIT)
        .map_err(|e| {
        Error::input(crate::nofollow::named_input_error(
            &args.attestation,
            "the attestation",
            &e,
        ))
    })?;
    BundleFacts::read(&bundle).map_err(|why| {
        Error::input(
            InputError::new(format!("not an attestation to attach: {why}"))
                .in_file(&shown)
                .help("attach the Sigstore bundle `shipmoor claim-check --sign key|keyless` writes (`.shipmoor/claim-check.vsa.sigstore.json`)"),
        )
    })?;

    // 2 and 3. The registry.
    let registry = Registry::new(&Options {
        plain_http: args.registry.allow_http_registry,
    })?;
    let attached = registry.attach(&reference, &bundle)?;

    let tag = tag_schema_tag(&attached.subject.digest);
    let text = match args.format {
        Format::Human => {
            let how = match attached.via {
                Via::ReferrersApi => "indexed by the registry's referrers API".to_string(),
                Via::TagSchema => format!(
                    "listed in the referrers tag schema's index `{}:{tag}` (the registry has no referrers API)",
                    reference.name()
                ),
            };
            format!(
                "attached {} to {} ({})\n  {how}\n",
                attached.digest, reference, attached.subject.digest
            )
        }
        Format::Json => {
            let doc = AttachDocument::of(&reference, &attached, &tag);
            let mut b = serde_json::to_vec_pretty(&doc).map_err(Error::crash)?;
            b.push(b'\n');
            String::from_utf8(b).map_err(Error::crash)?
        }
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(EXIT_OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(json: &str) -> bool {
        crate::format::matches_schema("claim_check.attach.v1", json)
    }

    /// Both ways a registry indexes the artifact match the schema (the integration tests'
    /// registry has no referrers API, so only this test sees that form), and the schema ties
    /// `tag` to the tag schema: a referrers-API document with a tag fails it, and so does a
    /// tag-schema one without.
    #[test]
    fn the_document_matches_its_json_schema_for_either_index() {
        let reference = Reference::parse("registry.example/shop/app:1").unwrap();
        let image = format!("sha256:{}", "ab".repeat(32));
        for via in [Via::ReferrersApi, Via::TagSchema] {
            let attached = Attached {
                digest: format!("sha256:{}", "cd".repeat(32)),
                via,
                subject: Descriptor {
                    media_type: "application/vnd.oci.image.manifest.v1+json".into(),
                    digest: image.clone(),
                    size: 512,
                },
            };
            let tag = tag_schema_tag(&attached.subject.digest);
            let json =
                serde_json::to_string(&AttachDocument::of(&reference, &attached, &tag)).unwrap();
            assert!(
                json.starts_with(r#"{"schema":"claim_check.attach.v1","#),
                "{json}"
            );
            assert!(check(&json), "{json}");
            let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
            match via {
                Via::ReferrersApi => v["tag"] = tag.into(),
                Via::TagSchema => {
                    v.as_object_mut().unwrap().remove("tag");
                }
            }
            assert!(!check(&v.to_string()), "{v}");
        }
    }
}
