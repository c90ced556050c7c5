//! OCI registries (book: attach.md): a signed VSA attached to an image in cosign's two forms:
//! its Sigstore bundle as an OCI 1.1 artifact whose `subject` is the image manifest, typed and
//! annotated as cosign's bundle format types attestations, found again through the referrers
//! API or the referrers tag schema (`sha256-<hex>`) where the registry lacks it; and its DSSE
//! envelope as a layer of the classic `sha256-<hex>.att` image ([`classic`]), which Kyverno's
//! `verifyImages` and the policy-controller read.
//!
//! The interface the commands use (`attach`, `claim-check --attach`, `admit --image`):
//!
//! - `Reference::parse(&str) -> Result<Reference, InputError>`: `registry/repo:tag`,
//!   `registry/repo@sha256:…` or both; a reference with neither tag nor digest is an input
//!   error (add `:tag` or `@sha256:…`), and so is a digest other than 64 hex digits of SHA-256.
//!   A name without a registry host is on Docker Hub, as docker reads it.
//! - `Options { plain_http: bool }`: plain HTTP only with the explicit flag
//!   (`--allow-http-registry`); HTTPS (rustls) otherwise.
//! - `Registry::new(&Options) -> Result<Registry, Error>`: credentials, looked up per registry
//!   host, from `SHIPMOOR_REGISTRY_USERNAME` and `SHIPMOOR_REGISTRY_PASSWORD`, else the Docker
//!   config file's `auths.<host>.auth` (`$DOCKER_CONFIG/config.json`, `~/.docker/config.json`),
//!   else anonymous; credential helpers are not run (see [`credentials`]).
//! - `Registry::resolve(&self, &Reference) -> Result<Descriptor, Error>`: the image manifest's
//!   (or image index's) digest, media type and size. An unreachable registry is an input error
//!   that names it (with a hint at `--allow-http-registry` when an HTTPS handshake met a plain
//!   HTTP registry); an unknown tag is an input error that names the tag.
//! - `Registry::attach(&self, &Reference, bundle: &[u8], Form) -> Result<Attached, Error>`:
//!   in the classic form, the `.att` image [`classic`] describes; in the bundle form, pushes
//!   the bundle as the artifact [`artifact`] describes (the empty config, the bundle layer, the
//!   manifest), after checking that the bundle's statement names the image's digest. When the
//!   manifest PUT answers with `OCI-Subject` the registry indexes referrers itself
//!   ([`Via::ReferrersApi`]); otherwise the `sha256-<hex>` tag's image index gains the
//!   artifact's descriptor, once ([`Via::TagSchema`]).
//!   `Attached { subject, bundle: Option<(digest, via)>, classic: Option<ClassicAttached> }`.
//! - `Registry::attestations(&self, &Reference, &Descriptor) -> Result<Vec<Attachment>, Error>`:
//!   every attached VSA bundle (`Attachment { digest, bundle: Vec<u8>, via }`): the referrers
//!   API's list, or on its 404 the tag schema's index, filtered to the bundle artifact type with
//!   the VSA predicate type annotation; each artifact's manifest is pulled by digest, must name
//!   the subject, and its bundle layer must match its digest; then the `.att` image's VSA
//!   layers (DSSE envelopes, [`Via::ClassicTag`]), each matching its digest. None found is an
//!   empty list.
//!
//! The client is `oci-client`, run on a current-thread tokio runtime the [`Registry`] owns, so
//! callers stay synchronous. Two requests go around it with its own tokens: the artifact
//! manifest's PUT (its `OCI-Subject` response header, which `oci-client` does not return) and
//! the referrers API's GET (to know which of the two ways answered).

pub mod artifact;
pub mod classic;
pub mod credentials;
#[cfg(test)]
mod prop_tests;
mod reference;

use std::future::Future;
use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::RegistryOperation;

pub use artifact::Descriptor;
pub use reference::Reference;

use crate::clock::{rfc3339, Clock};
use crate::error::{Error, InputError};
use artifact::{BundleFacts, IndexEntry, BUNDLE_MEDIA_TYPE, INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE};

/// The SLSA VSA predicate type: the attestations [`Registry::attestations`] lists.
pub const VSA_PREDICATE_TYPE: &str = "https://slsa.dev/verification_summary/v1";
/// The flag that allows plain HTTP, as messages name it.
pub const PLAIN_HTTP_FLAG: &str = "--allow-http-registry";

/// The manifest media types an image reference may resolve to.
const IMAGE_MEDIA_TYPES: &[&str] = &[
    MANIFEST_MEDIA_TYPE,
    INDEX_MEDIA_TYPE,
    "application/vnd.docker.distribution.manifest.v2+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
];

/// How the registry is spoken to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// Plain HTTP instead of HTTPS (`--allow-http-registry`).
    pub plain_http: bool,
}

/// How an attachment is found by others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The registry's referrers API (it answered the push with `OCI-Subject`, or listed it).
    ReferrersApi,
    /// The referrers tag schema: the image index at the `sha256-<hex>` tag.
    TagSchema,
    /// cosign's classic form: a layer of the image at the `sha256-<hex>.att` tag.
    ClassicTag,
}

impl Via {
    /// As the JSON outputs name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::ReferrersApi => "referrers-api",
            Via::TagSchema => "tag-schema",
            Via::ClassicTag => "classic-tag",
        }
    }
}

/// Which of cosign's two forms an attachment writes (`attach --form`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The Sigstore bundle as an OCI 1.1 referrer (cosign v3's default).
    Bundle,
    /// The DSSE envelope as a layer at the `sha256-<hex>.att` tag (what Kyverno's
    /// `verifyImages` and the policy-controller read by default).
    Classic,
    /// Both.
    Both,
}

impl Form {
    fn bundle(self) -> bool {
        matches!(self, Form::Bundle | Form::Both)
    }
    fn classic(self) -> bool {
        matches!(self, Form::Classic | Form::Both)
    }
}

/// An attachment, as pushed: the image it is about, and each form written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    /// The image manifest the attestation is about.
    pub subject: Descriptor,
    /// The bundle form: the artifact manifest's digest and how it is indexed.
    pub bundle: Option<(String, Via)>,
    /// The classic form.
    pub classic: Option<ClassicAttached>,
}

/// The classic form, as pushed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicAttached {
    /// `sha256-<hex>.att`.
    pub tag: String,
    /// The `.att` image manifest's digest.
    pub manifest: String,
    /// The layer's digest (the envelope's).
    pub layer: String,
    /// Whether the layer carries its Rekor entry (keyless, and the entry covers the layer).
    pub logged: bool,
    /// Whether the tag already held this very layer (nothing was written).
    pub unchanged: bool,
}

/// An attached bundle, as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The artifact manifest's digest.
    pub digest: String,
    /// The bundle's bytes (checked against the layer's digest).
    pub bundle: Vec<u8>,
    pub via: Via,
}

/// A registry client (any registry: the host comes with each reference).
pub struct Registry {
    client: oci_client::Client,
    /// For the two requests `oci-client` does not expose (see the module doc).
    http: reqwest::Client,
    options: Options,
    runtime: tokio::runtime::Runtime,
}

impl Registry {
    pub fn new(options: &Options) -> Result<Registry, Error> {
        let config = ClientConfig {
            protocol: if options.plain_http {
                ClientProtocol::Http
            } else {
                ClientProtocol::Https
            },
            connect_timeout: Some(Duration::from_secs(15)),
            read_timeout: Some(Duration::from_secs(120)),
            ..ClientConfig::default()
        };
        let client = oci_client::Client::try_from(config)
            .map_err(|e| Error::crash(format!("the registry client: {e}")))?;
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .read_timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| Error::crash(format!("the registry client: {e}")))?;
        // One runtime for the client's life: its pooled connections belong to the runtime
        // they were opened on.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::crash(format!("the registry client's runtime: {e}")))?;
        Ok(Registry {
            client,
            http,
            options: *options,
            runtime,
        })
    }

    /// The image manifest `reference` names: its digest, media type and size.
    pub fn resolve(&self, reference: &Reference) -> Result<Descriptor, Error> {
        self.block_on(async {
            self.login(reference).await?;
            self.resolve_async(reference).await
        })
    }

    /// Attaches `bundle` to the image `reference` names, in the `form`s asked for (see the
    /// module doc and [`classic`]).
    pub fn attach(
        &self,
        reference: &Reference,
        bundle: &[u8],
        form: Form,
    ) -> Result<Attached, Error> {
        let not_attachable = |why: artifact::OciError| {
            Error::input(
                InputError::new(format!("the attestation is not attachable: {why}"))
                    .help("attach the Sigstore bundle `claim-check --sign key|keyless` writes (`.shipmoor/claim-check.vsa.sigstore.json`)"),
            )
        };
        let facts = BundleFacts::read(bundle).map_err(not_attachable)?;
        // Both forms are built before anything is pushed: a bundle one form cannot carry
        // leaves the registry as it was.
        let layer = match form.classic() {
            true => Some(
                classic::layer_of_bundle(bundle, &facts.predicate_type).map_err(not_attachable)?,
            ),
            false => None,
        };
        self.block_on(async {
            self.login(reference).await?;
            let subject = self.resolve_async(reference).await?;
            if !facts.names(&subject.digest) {
                return Err(Error::input(
                    InputError::new(format!(
                        "the attestation's statement does not name the image {reference} ({}) among its subjects",
                        subject.digest
                    ))
                    .help(format!(
                        "make the VSA for this image: `shipmoor claim-check --attach {reference} --sign key|keyless`, or `--subject {}={}`",
                        reference.name(),
                        subject.digest
                    )),
                ));
            }
            let bundle_form = match form.bundle() {
                true => Some(self.attach_async(reference, bundle, &facts, &subject).await?),
                false => None,
            };
            let classic = match &layer {
                Some(layer) => Some(self.attach_classic(reference, layer, &subject).await?),
                None => None,
            };
            Ok(Attached {
                subject,
                bundle: bundle_form,
                classic,
            })
        })
    }

    /// Every VSA bundle attached to `subject` in `reference`'s repository.
    pub fn attestations(
        &self,
        reference: &Reference,
        subject: &Descriptor,
    ) -> Result<Vec<Attachment>, Error> {
        self.block_on(self.attestations_async(reference, subject))
    }

    /// Runs `future` on the registry's runtime; from inside another tokio runtime (where
    /// blocking would panic), on a thread of its own.
    fn block_on<T: Send>(
        &self,
        future: impl Future<Output = Result<T, Error>> + Send,
    ) -> Result<T, Error> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return std::thread::scope(|scope| {
                scope
                    .spawn(|| self.runtime.block_on(future))
                    .join()
                    .unwrap_or_else(|_| Err(Error::crash("the registry client's thread panicked")))
            });
        }
        self.runtime.block_on(future)
    }

    /// Hands `reference`'s registry its credentials; `oci-client` fetches tokens as needed.
    /// The `RegistryAuth::Anonymous` the pulls below pass is then ignored: the client keeps
    /// the first credentials stored for a registry.
    async fn login(&self, reference: &Reference) -> Result<(), Error> {
        let auth = credentials::for_registry(reference.registry())?;
        self.client
            .store_auth_if_needed(reference.oci().resolve_registry(), &auth)
            .await;
        Ok(())
    }

    async fn resolve_async(&self, reference: &Reference) -> Result<Descriptor, Error> {
        let (body, digest) = self
            .client
            .pull_manifest_raw(reference.oci(), &RegistryAuth::Anonymous, IMAGE_MEDIA_TYPES)
            .await
            .map_err(|e| {
                if is_not_found(&e) {
                    let what = match (reference.tag(), reference.digest()) {
                        (_, Some(d)) => format!("no manifest {d}"),
                        (Some(t), None) => format!("no tag `{t}`"),
                        (None, None) => "no such manifest".to_string(),
                    };
                    return Error::input(
                        InputError::new(format!(
                            "the registry {} has {what} in the repository `{}`",
                            reference.registry(),
                            reference.repository()
                        ))
                        .help("push the image first, or check the reference's tag or digest"),
                    );
                }
                self.registry_error(reference, "resolving the image", e)
            })?;
        // `mediaType` is optional in an OCI manifest; without it, its shape says which it is.
        let json: serde_json::Value = serde_json::from_slice(&body)
            .map_err(|e| self.input(reference, format!("the image's manifest is not JSON: {e}")))?;
        let media_type = match json.get("mediaType").and_then(|m| m.as_str()) {
            Some(m) => m.to_string(),
            None if json.get("manifests").is_some() => INDEX_MEDIA_TYPE.to_string(),
            None => MANIFEST_MEDIA_TYPE.to_string(),
        };
        Ok(Descriptor {
            media_type,
            digest,
            size: body.len() as u64,
        })
    }

    async fn attach_async(
        &self,
        reference: &Reference,
        bundle: &[u8],
        facts: &BundleFacts,
        subject: &Descriptor,
    ) -> Result<(String, Via), Error> {
        let at_subject = reference.at_digest(&subject.digest);
        let bundle_digest = artifact::sha256_digest(bundle);
        for (blob, digest) in [
            (
                artifact::EMPTY_CONFIG.to_vec(),
                artifact::EMPTY_DIGEST.to_string(),
            ),
            (bundle.to_vec(), bundle_digest),
        ] {
            self.client
                .push_blob(&at_subject, blob, &digest)
                .await
                .map_err(|e| self.registry_error(reference, "pushing the bundle", e))?;
        }
        let created = match &facts.time_verified {
            Some(t) => t.clone(),
            // Not a VSA of ours: the push time, as cosign's, pinned by SOURCE_DATE_EPOCH.
            None => {
                let clock = Clock::from_env(None).map_err(|m| {
                    Error::input(
                        InputError::new(m.to_string())
                            .help("give seconds since 1970 (SOURCE_DATE_EPOCH)"),
                    )
                })?;
                rfc3339(clock.now())
            }
        };
        let (manifest, annotations) =
            artifact::artifact_manifest(subject, bundle, &facts.predicate_type, &created)
                .map_err(Error::crash)?;
        let digest = artifact::sha256_digest(&manifest);
        let size = manifest.len() as u64;
        let oci_subject = self
            .put_artifact_manifest(reference, &digest, manifest)
            .await?;
        if oci_subject.as_deref() == Some(subject.digest.as_str()) {
            return Ok((digest, Via::ReferrersApi));
        }
        // No `OCI-Subject`: the registry does not index referrers, so the tag schema's index
        // must list the artifact.
        let entry = IndexEntry {
            media_type: MANIFEST_MEDIA_TYPE.to_string(),
            size,
            digest: digest.clone(),
            artifact_type: Some(BUNDLE_MEDIA_TYPE.to_string()),
            annotations,
        };
        let tag = reference.at_tag(&artifact::tag_schema_tag(&subject.digest));
        let existing = match self
            .client
            .pull_manifest_raw(&tag, &RegistryAuth::Anonymous, &[INDEX_MEDIA_TYPE])
            .await
        {
            Ok((body, _)) => Some(body),
            Err(e) if is_not_found(&e) => None,
            Err(e) => return Err(self.registry_error(reference, "reading the referrers index", e)),
        };
        if let Some(index) = artifact::index_with(existing.as_deref(), &entry)
            .map_err(|why| self.input(reference, format!("the tag `{}`: {why}", tag_of(&tag))))?
        {
            let content_type = reqwest::header::HeaderValue::from_static(INDEX_MEDIA_TYPE);
            self.client
                .push_manifest_raw(&tag, index, content_type)
                .await
                .map_err(|e| self.registry_error(reference, "writing the referrers index", e))?;
        }
        Ok((digest, Via::TagSchema))
    }

    /// The classic form: `layer` added to the image at `sha256-<hex>.att` ([`classic`]).
    async fn attach_classic(
        &self,
        reference: &Reference,
        layer: &classic::Layer,
        subject: &Descriptor,
    ) -> Result<ClassicAttached, Error> {
        let (tag_name, tag, existing) = self.classic_layers(reference, subject).await?;
        let layer_digest = artifact::sha256_digest(&layer.envelope);
        let Some((config, manifest)) =
            classic::image_with(&existing, layer).map_err(Error::crash)?
        else {
            return Ok(ClassicAttached {
                tag: tag_name,
                manifest: String::new(),
                layer: layer_digest,
                logged: layer.logged,
                unchanged: true,
            });
        };
        let at_subject = reference.at_digest(&subject.digest);
        for (blob, digest) in [
            (config.clone(), artifact::sha256_digest(&config)),
            (layer.envelope.clone(), layer_digest.clone()),
        ] {
            self.client
                .push_blob(&at_subject, blob, &digest)
                .await
                .map_err(|e| self.registry_error(reference, "pushing the `.att` image", e))?;
        }
        let digest = artifact::sha256_digest(&manifest);
        let content_type = reqwest::header::HeaderValue::from_static(MANIFEST_MEDIA_TYPE);
        self.client
            .push_manifest_raw(&tag, manifest, content_type)
            .await
            .map_err(|e| self.registry_error(reference, "writing the `.att` image", e))?;
        Ok(ClassicAttached {
            tag: tag_name,
            manifest: digest,
            layer: layer_digest,
            logged: layer.logged,
            unchanged: false,
        })
    }

    /// PUTs the artifact manifest by its digest; returns the `OCI-Subject` header, if any.
    async fn put_artifact_manifest(
        &self,
        reference: &Reference,
        digest: &str,
        manifest: Vec<u8>,
    ) -> Result<Option<String>, Error> {
        let target = reference.at_digest(digest);
        let url = self.url(reference, &format!("manifests/{digest}"));
        let request = self
            .authorized(
                reference,
                &target,
                RegistryOperation::Push,
                self.http.put(&url),
            )
            .await?
            .header(reqwest::header::CONTENT_TYPE, MANIFEST_MEDIA_TYPE)
            .body(manifest);
        let response = request.send().await.map_err(|e| {
            self.registry_error(reference, "pushing the artifact manifest", e.into())
        })?;
        let status = response.status();
        let oci_subject = response
            .headers()
            .get("OCI-Subject")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if !status.is_success() {
            let body = response.text().await.unwrap_or_default();
            return Err(self.input(
                reference,
                format!(
                    "the registry refused the artifact manifest ({status}): {}",
                    body.trim()
                ),
            ));
        }
        Ok(oci_subject)
    }

    async fn attestations_async(
        &self,
        reference: &Reference,
        subject: &Descriptor,
    ) -> Result<Vec<Attachment>, Error> {
        self.login(reference).await?;
        let (list, via) = self.referrers(reference, &subject.digest).await?;
        let entries = match list {
            Some(list) => artifact::bundle_entries(&list, VSA_PREDICATE_TYPE)
                .map_err(|why| self.input(reference, why.to_string()))?,
            None => Vec::new(),
        };
        let mut found = Vec::new();
        for entry in entries {
            let at = reference.at_digest(&entry.digest);
            // The pull checks the manifest's bytes against the digest it was asked for.
            let (manifest, _) = self
                .client
                .pull_manifest_raw(&at, &RegistryAuth::Anonymous, &[MANIFEST_MEDIA_TYPE])
                .await
                .map_err(|e| self.registry_error(reference, "pulling an attestation", e))?;
            let layer = artifact::bundle_layer(&manifest, &subject.digest).map_err(|why| {
                self.input(
                    reference,
                    format!("the attestation {}: {why}", entry.digest),
                )
            })?;
            let mut bundle = Vec::new();
            self.client
                .pull_blob(&at, layer.digest.as_str(), &mut bundle)
                .await
                .map_err(|e| {
                    self.registry_error(reference, "pulling an attestation's bundle", e)
                })?;
            if artifact::sha256_digest(&bundle) != layer.digest {
                return Err(self.input(
                    reference,
                    format!(
                        "the attestation {}: its bundle's bytes do not match the layer digest {}",
                        entry.digest, layer.digest
                    ),
                ));
            }
            found.push(Attachment {
                digest: entry.digest,
                bundle,
                via,
            });
        }
        found.extend(self.classic_attestations(reference, subject).await?);
        Ok(found)
    }

    /// The classic `.att` image of `subject`: its tag's name, the tag, and its manifest's layer
    /// descriptors (none when the tag does not exist).
    async fn classic_layers(
        &self,
        reference: &Reference,
        subject: &Descriptor,
    ) -> Result<(String, oci_client::Reference, Vec<classic::LayerDescriptor>), Error> {
        let tag_name = classic::attestation_tag(&subject.digest);
        let tag = reference.at_tag(&tag_name);
        let layers = match self
            .client
            .pull_manifest_raw(&tag, &RegistryAuth::Anonymous, &[MANIFEST_MEDIA_TYPE])
            .await
        {
            Ok((body, _)) => classic::layers_of(&body)
                .map_err(|why| self.input(reference, format!("the tag `{tag_name}`: {why}")))?,
            Err(e) if is_not_found(&e) => Vec::new(),
            Err(e) => return Err(self.registry_error(reference, "reading the `.att` image", e)),
        };
        Ok((tag_name, tag, layers))
    }

    /// The VSA layers of the classic `.att` image: each a DSSE envelope, checked against its
    /// layer digest (none when the tag does not exist).
    async fn classic_attestations(
        &self,
        reference: &Reference,
        subject: &Descriptor,
    ) -> Result<Vec<Attachment>, Error> {
        let (_, tag, layers) = self.classic_layers(reference, subject).await?;
        let mut found = Vec::new();
        for layer in layers.iter().filter(|l| {
            l.media_type == classic::LAYER_MEDIA_TYPE
                && l.annotations
                    .get(classic::PREDICATE_TYPE_ANNOTATION)
                    .is_none_or(|t| t == VSA_PREDICATE_TYPE)
        }) {
            let mut envelope = Vec::new();
            self.client
                .pull_blob(&tag, layer.digest.as_str(), &mut envelope)
                .await
                .map_err(|e| self.registry_error(reference, "pulling an `.att` layer", e))?;
            if artifact::sha256_digest(&envelope) != layer.digest {
                return Err(self.input(
                    reference,
                    format!(
                        "the `.att` layer {}: its bytes do not match its digest",
                        layer.digest
                    ),
                ));
            }
            found.push(Attachment {
                digest: layer.digest.clone(),
                bundle: envelope,
                via: Via::ClassicTag,
            });
        }
        Ok(found)
    }

    /// The referrers of `digest`: the referrers API's list, or on its 404 the tag schema's
    /// index (`None` when that tag does not exist either), as the spec orders the fallback.
    async fn referrers(
        &self,
        reference: &Reference,
        digest: &str,
    ) -> Result<(Option<Vec<u8>>, Via), Error> {
        let target = reference.at_digest(digest);
        let url = self.url(reference, &format!("referrers/{digest}"));
        let response = self
            .authorized(
                reference,
                &target,
                RegistryOperation::Pull,
                self.http.get(&url),
            )
            .await?
            .header(reqwest::header::ACCEPT, INDEX_MEDIA_TYPE)
            .send()
            .await
            .map_err(|e| self.registry_error(reference, "listing referrers", e.into()))?;
        let status = response.status();
        if status.is_success() {
            let body = response
                .bytes()
                .await
                .map_err(|e| self.registry_error(reference, "listing referrers", e.into()))?;
            return Ok((Some(body.to_vec()), Via::ReferrersApi));
        }
        if status != reqwest::StatusCode::NOT_FOUND {
            return Err(self.input(
                reference,
                format!("the referrers API answered {status} for {digest}"),
            ));
        }
        let tag = reference.at_tag(&artifact::tag_schema_tag(digest));
        match self
            .client
            .pull_manifest_raw(&tag, &RegistryAuth::Anonymous, &[INDEX_MEDIA_TYPE])
            .await
        {
            Ok((body, _)) => Ok((Some(body.to_vec()), Via::TagSchema)),
            Err(e) if is_not_found(&e) => Ok((None, Via::TagSchema)),
            Err(e) => Err(self.registry_error(reference, "reading the referrers index", e)),
        }
    }

    /// `request` with the credentials `oci-client` would send: its bearer token for the
    /// operation, or basic credentials where the registry takes them.
    async fn authorized(
        &self,
        reference: &Reference,
        target: &oci_client::Reference,
        operation: RegistryOperation,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, Error> {
        let auth = credentials::for_registry(reference.registry())?;
        let token = self
            .client
            .auth(target, &auth, operation)
            .await
            .map_err(|e| self.registry_error(reference, "authenticating", e))?;
        Ok(match (token, auth) {
            (Some(token), _) => request.bearer_auth(token),
            (None, RegistryAuth::Basic(user, password)) => request.basic_auth(user, Some(password)),
            (None, _) => request,
        })
    }

    fn url(&self, reference: &Reference, path: &str) -> String {
        let scheme = if self.options.plain_http {
            "http"
        } else {
            "https"
        };
        format!(
            "{scheme}://{}/v2/{}/{path}",
            reference.oci().resolve_registry(),
            reference.repository()
        )
    }

    fn input(&self, reference: &Reference, message: String) -> Error {
        let registry = reference.registry();
        Error::input(
            InputError::new(format!("the registry {registry}: {message}")).help(format!(
                "{registry} answered what the OCI distribution spec does not allow: check the \
                 reference's registry, or report the answer to the registry's operator"
            )),
        )
    }

    /// A registry failure as the user can act on it: every one is about their registry, its
    /// address or their credentials, never an engine fault, so each is an input error.
    fn registry_error(&self, reference: &Reference, doing: &str, e: OciDistributionError) -> Error {
        let registry = reference.registry();
        let error = match &e {
            OciDistributionError::RequestError(re) => {
                let chain = error_chain(re);
                let plain_http_hint = !self.options.plain_http && looks_like_plain_http(&chain);
                let mut error = InputError::new(format!(
                    "cannot reach the registry {registry} ({doing}): {chain}"
                ));
                if plain_http_hint {
                    error = error.help(format!(
                        "the registry answered the HTTPS handshake with something else: if it serves plain HTTP (a local test registry), pass {PLAIN_HTTP_FLAG}"
                    ));
                } else if re.is_connect() || re.is_timeout() {
                    error =
                        error.help("check the registry's host and port, and that it is running");
                } else if re.is_body() || re.is_decode() {
                    error = error.help(
                        "the connection to the registry broke off before its answer was whole; \
                         a fault of the network or the registry passes when it is retried",
                    );
                } else {
                    error = error.help(
                        "check that the registry is reachable from here and speaks HTTPS; a \
                         fault of the network passes when it is retried",
                    );
                }
                error
            }
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_) => InputError::new(format!(
                "the registry {registry} refused the credentials ({doing}): {e}"
            ))
            .help(format!(
                "run `docker login {registry}`, or set {} and {}",
                credentials::USERNAME_ENV,
                credentials::PASSWORD_ENV
            )),
            _ => InputError::new(format!("the registry {registry} ({doing}): {e}")).help(format!(
                "check that {registry} is the registry meant and serves the OCI distribution \
                 API; a fault of its own passes when it is retried"
            )),
        };
        Error::input(error)
    }
}

/// Whether a failed pull means "there is no such manifest" (rather than a fault).
fn is_not_found(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        OciDistributionError::ServerError { code, .. } => *code == 404,
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|e| {
            matches!(
                e.code,
                OciErrorCode::ManifestUnknown | OciErrorCode::NameUnknown | OciErrorCode::NotFound
            )
        }),
        _ => false,
    }
}

/// An error and its sources on one line (reqwest's own message hides the cause).
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// rustls' words for a TLS handshake answered by a plain HTTP server (its first bytes are
/// `HTTP/1.1 400`, not a TLS record).
fn looks_like_plain_http(chain: &str) -> bool {
    [
        "InvalidContentType",
        "corrupt message",
        "wrong version number",
        "http request to an https",
    ]
    .iter()
    .any(|w| chain.to_ascii_lowercase().contains(&w.to_ascii_lowercase()))
}

/// The tag of a tag reference, for messages.
fn tag_of(r: &oci_client::Reference) -> String {
    r.tag().unwrap_or_default().to_string()
}
