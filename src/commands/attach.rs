//! `shipmoor attach REF --attestation FILE [--form bundle|classic|both]`: a signed VSA's
//! Sigstore bundle attached to an image in its registry, in cosign's bundle form (an OCI 1.1
//! referrer) and its classic form (a layer of the `sha256-<hex>.att` image), where cosign,
//! Kyverno and the Sigstore policy-controller look for it.
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
//! 3. Push each form ([`crate::oci::Registry::attach`]: the classic layer is built before
//!    anything is pushed); print the outcome.

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
    /// The bundle form's artifact manifest, when that form was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    artifact: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    via: Option<&'static str>,
    /// The referrers tag schema's index tag, only when the artifact is listed there.
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<&'a str>,
    /// The classic form, when it was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    classic: Option<ClassicDocument<'a>>,
}

#[derive(Serialize)]
struct ClassicDocument<'a> {
    tag: &'a str,
    /// The `.att` image's manifest; absent when the tag already held this layer.
    #[serde(skip_serializing_if = "str::is_empty")]
    manifest: &'a str,
    layer: &'a str,
    logged: bool,
    unchanged: bool,
}

impl<'a> AttachDocument<'a> {
    fn of(reference: &'a Reference, attached: &'a Attached, tag: &'a str) -> Self {
        AttachDocument {
            schema: ATTACH_SCHEMA,
            reference: reference.as_str(),
            repository: reference.name(),
            subject: &attached.subject,
            artifact: attached.bundle.as_ref().map(|(d, _)| d.as_str()),
            via: attached.bundle.as_ref().map(|(_, v)| v.as_str()),
            tag: attached
                .bundle
                .as_ref()
                .filter(|(_, v)| *v == Via::TagSchema)
                .map(|_| tag),
            classic: attached.classic.as_ref().map(|c| ClassicDocument {
                tag: &c.tag,
                manifest: &c.manifest,
                layer: &c.layer,
                logged: c.logged,
                unchanged: c.unchanged,
            }),
        }
    }
}

/// What was attached, a line per form, as `attach` and `claim-check --attach` print it.
pub(crate) fn described(reference: &Reference, attached: &Attached) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some((digest, via)) = &attached.bundle {
        let how = match via {
            Via::ReferrersApi => "indexed by the registry's referrers API".to_string(),
            _ => format!(
                "listed in the referrers tag schema's index `{}:{}` (the registry has no referrers API)",
                reference.name(),
                tag_schema_tag(&attached.subject.digest)
            ),
        };
        lines.push(format!("bundle form: the artifact {digest}, {how}"));
    }
    if let Some(c) = &attached.classic {
        let what = if c.unchanged {
            "already there".to_string()
        } else {
            format!("image {}", c.manifest)
        };
        let log = if c.logged {
            ", with its Rekor entry"
        } else {
            ""
        };
        lines.push(format!(
            "classic form: the layer {} at `{}:{}` ({what}{log})",
            c.layer,
            reference.name(),
            c.tag
        ));
    }
    lines
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
    let attached = registry.attach(&reference, &bundle, args.form.into())?;

    let tag = tag_schema_tag(&attached.subject.digest);
    let text = match args.format {
        Format::Human => {
            let mut text = format!("attached to {} ({})\n", reference, attached.subject.digest);
            for line in described(&reference, &attached) {
                text.push_str(&format!("  {line}\n"));
            }
            text
        }
        Format::Json => {
            let doc = AttachDocument::of(&reference, &attached, &tag);
            String::from_utf8(super::pretty_json(&doc)?).map_err(Error::crash)?
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
                bundle: Some((format!("sha256:{}", "cd".repeat(32)), via)),
                classic: Some(crate::oci::ClassicAttached {
                    tag: crate::oci::classic::attestation_tag(&image),
                    manifest: format!("sha256:{}", "ef".repeat(32)),
                    layer: format!("sha256:{}", "12".repeat(32)),
                    logged: false,
                    unchanged: false,
                }),
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
                _ => {
                    v.as_object_mut().unwrap().remove("tag");
                }
            }
            assert!(!check(&v.to_string()), "{v}");
        }
    }
}
