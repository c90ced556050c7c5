//! OCI registries (DESIGN 10): a signed VSA (its Sigstore bundle) attached to an image as an
//! OCI 1.1 artifact whose `subject` is the image manifest, typed and annotated as cosign's
//! bundle format types attestations; found again through the referrers API, or the referrers
//! tag schema (`sha256-<hex>`) where the registry lacks it.
//!
//! The interface the commands use (`attach`, `claim-check --attach`, `admit --image`):
//!
//! - `Reference::parse(&str) -> Result<Reference, InputError>`: `registry/repo:tag` or
//!   `registry/repo@sha256:…`; a reference with neither tag nor digest is an input error.
//! - `Options { plain_http: bool }`: plain HTTP only with the explicit flag.
//! - `Registry::new(&Options) -> Result<Registry, Error>`: credentials from the Docker config
//!   file (`$DOCKER_CONFIG/config.json`, `~/.docker/config.json`) or the environment.
//! - `Registry::resolve(&self, &Reference) -> Result<Descriptor, Error>`: the image manifest's
//!   digest, media type and size (an unreachable registry is an input error that names it).
//! - `Registry::attach(&self, &Reference, bundle: &[u8]) -> Result<Attached, Error>`.
//! - `Registry::attestations(&self, &Reference, &Descriptor) -> Result<Vec<Attachment>, Error>`:
//!   every attached VSA bundle (`Attachment { digest, bundle: Vec<u8>, via }`).
