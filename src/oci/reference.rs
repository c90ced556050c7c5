//! Image references as docker and cosign write them: `host:port/repo:tag`, `repo@sha256:…`,
//! `host/repo:tag@sha256:…`; a name without a registry host is on Docker Hub
//! (`app` is `docker.io/library/app`), as docker resolves it.
//!
//! The grammar is the distribution reference grammar (`distribution/reference`), checked here by
//! hand rather than through `oci-spec`'s parser: that one compiles a large regular expression on
//! first use, 58 ms of every `admit --image` process here, longer than all its requests to a
//! registry on loopback. On top of the grammar, admission needs a tag or a digest written
//! (docker's implicit `:latest` names whatever was pushed last, which is no artifact to admit or
//! attach to), and a SHA-256 digest, the only algorithm an in-toto subject of ours carries.

use std::fmt;

use crate::error::InputError;

/// A parsed image reference with an explicit tag, digest, or both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    inner: oci_client::Reference,
    /// As the user wrote it, for messages.
    given: String,
}

impl Reference {
    /// Parses a docker-style reference; one with neither `:tag` nor `@sha256:…` is an input
    /// error, and so is a digest that is not 64 lowercase hex digits of SHA-256.
    pub fn parse(s: &str) -> Result<Reference, InputError> {
        let given = s.trim();
        let bad = |why: String| {
            InputError::new(format!("`{given}` is not an image reference: {why}"))
                .help("write `registry/repository:tag` or `registry/repository@sha256:<64 hex digits>`, e.g. `127.0.0.1:5000/app:v1`")
        };
        let (name, digest) = match given.split_once('@') {
            Some((name, digest)) => (name, Some(digest)),
            None => (given, None),
        };
        if let Some(digest) = digest {
            check_digest(digest).map_err(|why| bad(why.to_string()))?;
        }
        // A tag is a `:` after the last `/` (a `:` before it is the registry's port).
        let last_component = name.rsplit('/').next().unwrap_or(name);
        let has_tag = last_component.contains(':');
        if digest.is_none() && !has_tag {
            return Err(InputError::new(format!(
                "the image reference `{given}` names neither a tag nor a digest"
            ))
            .help(format!(
                "add `:tag` or `@sha256:…`, e.g. `{given}:v1` or `{given}@sha256:<digest>`: \
                 an attestation is for one image, never whatever `latest` is now"
            )));
        }
        let (name, tag) = match has_tag {
            true => name
                .rsplit_once(':')
                .map_or((name, None), |(n, t)| (n, Some(t))),
            false => (name, None),
        };
        if let Some(tag) = tag {
            check_tag(tag).map_err(|why| bad(why.to_string()))?;
        }
        let (registry, repository) = split_name(name).map_err(|why| bad(why.to_string()))?;
        let inner = match (tag, digest) {
            (Some(t), Some(d)) => {
                oci_client::Reference::with_tag_and_digest(registry, repository, t.into(), d.into())
            }
            (Some(t), None) => oci_client::Reference::with_tag(registry, repository, t.into()),
            (None, Some(d)) => oci_client::Reference::with_digest(registry, repository, d.into()),
            // Refused above; kept as an error rather than a panic.
            (None, None) => return Err(bad("it names neither a tag nor a digest".into())),
        };
        Ok(Reference {
            inner,
            given: given.to_string(),
        })
    }

    /// The registry's host (and port), as written: `127.0.0.1:5000`, `docker.io`.
    pub fn registry(&self) -> &str {
        self.inner.registry()
    }

    /// The repository within the registry: `app`, `library/nginx`.
    pub fn repository(&self) -> &str {
        self.inner.repository()
    }

    /// `registry/repository`, the name a statement's subject gives the image:
    /// `127.0.0.1:5000/app`.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry(), self.repository())
    }

    pub fn tag(&self) -> Option<&str> {
        self.inner.tag()
    }

    /// The digest written in the reference, `sha256:<hex>`.
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    /// As the user wrote it.
    pub fn as_str(&self) -> &str {
        &self.given
    }

    /// The same repository at another digest (an artifact, or the subject by digest).
    pub(crate) fn at_digest(&self, digest: &str) -> oci_client::Reference {
        oci_client::Reference::with_digest(
            self.registry().to_string(),
            self.repository().to_string(),
            digest.to_string(),
        )
    }

    /// The same repository at another tag (the referrers tag schema's `sha256-<hex>`).
    pub(crate) fn at_tag(&self, tag: &str) -> oci_client::Reference {
        oci_client::Reference::with_tag(
            self.registry().to_string(),
            self.repository().to_string(),
            tag.to_string(),
        )
    }

    pub(crate) fn oci(&self) -> &oci_client::Reference {
        &self.inner
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.given)
    }
}

/// Docker Hub's name, and the namespace of its one-component names (`app` is `library/app`).
const DOCKER_HUB: &str = "docker.io";
const DOCKER_HUB_LEGACY: &str = "index.docker.io";
const OFFICIAL: &str = "library";

/// Why the name of an image reference (before its tag or digest) is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("the name is empty")]
    Empty,
    #[error("the name is longer than 255 characters")]
    TooLong,
    #[error("`{0}` is not a registry host")]
    Host(String),
    #[error("`{0}`: the port must be digits")]
    Port(String),
    #[error("a path component is empty")]
    EmptyComponent,
    #[error("`{0}`: a repository's path components are lowercase letters and digits, separated by `.`, `_`, `__` or `-`")]
    Component(String),
}

/// `[registry/]path` → the registry and the repository, as docker resolves a name: the first
/// component is a registry when it has a `.` or a `:` or is `localhost`; else the name is on
/// Docker Hub.
fn split_name(name: &str) -> Result<(String, String), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > 255 {
        return Err(NameError::TooLong);
    }
    let (registry, path) = match name.split_once('/') {
        Some((first, rest))
            if first.contains('.') || first.contains(':') || first == "localhost" =>
        {
            check_host(first)?;
            (first.to_string(), rest)
        }
        _ => (DOCKER_HUB.to_string(), name),
    };
    for component in path.split('/') {
        check_component(component)?;
    }
    let registry = if registry == DOCKER_HUB_LEGACY {
        DOCKER_HUB.to_string()
    } else {
        registry
    };
    let repository = if registry == DOCKER_HUB && !path.contains('/') {
        format!("{OFFICIAL}/{path}")
    } else {
        path.to_string()
    };
    Ok((registry, repository))
}

/// `host[:port]`: DNS labels (letters, digits, inner `-`) joined by `.`, or `[ipv6]`.
fn check_host(host: &str) -> Result<(), NameError> {
    let bad = || NameError::Host(host.to_string());
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => {
            let (v6, after) = rest.split_once(']').ok_or_else(bad)?;
            if v6.is_empty() || !v6.bytes().all(|b| b.is_ascii_hexdigit() || b == b':') {
                return Err(bad());
            }
            let port = match after {
                "" => None,
                _ => Some(after.strip_prefix(':').ok_or_else(bad)?),
            };
            (None, port)
        }
        None => match host.rsplit_once(':') {
            Some((n, p)) => (Some(n), Some(p)),
            None => (Some(host), None),
        },
    };
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if name.is_some_and(|n| !n.split('.').all(label_ok)) {
        return Err(bad());
    }
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return Err(NameError::Port(host.to_string()));
    }
    Ok(())
}

/// A path component: lowercase letters and digits, separated by `.`, `_`, `__` or dashes.
fn check_component(c: &str) -> Result<(), NameError> {
    let bytes = c.as_bytes();
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let ok = !bytes.is_empty()
        && alnum(bytes[0])
        && alnum(bytes[bytes.len() - 1])
        && bytes
            .iter()
            .all(|&b| alnum(b) || matches!(b, b'.' | b'_' | b'-'))
        && !c.contains("..")
        && !c.contains("___")
        && !c.contains("._")
        && !c.contains("_.")
        && !c.contains(".-")
        && !c.contains("-.")
        && !c.contains("_-")
        && !c.contains("-_");
    if ok {
        Ok(())
    } else if c.is_empty() {
        Err(NameError::EmptyComponent)
    } else {
        Err(NameError::Component(c.to_string()))
    }
}

/// A tag: a word character, then up to 127 word characters, `.` or `-`.
fn check_tag(tag: &str) -> Result<(), &'static str> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let bytes = tag.as_bytes();
    if bytes.is_empty() {
        return Err("the tag after `:` is empty");
    }
    if bytes.len() > 128
        || !word(bytes[0])
        || !bytes.iter().all(|&b| word(b) || b == b'.' || b == b'-')
    {
        return Err(
            "a tag is up to 128 letters, digits, `_`, `.` and `-`, not starting with `.` or `-`",
        );
    }
    Ok(())
}

/// `sha256:` and 64 lowercase hex digits.
pub(crate) fn check_digest(digest: &str) -> Result<(), &'static str> {
    let Some(hex) = digest.strip_prefix("sha256:") else {
        return Err("the digest must be `sha256:` and 64 hex digits");
    };
    if hex.len() != 64 || !hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err("the digest must be `sha256:` and 64 lowercase hex digits");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Reference;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn a_host_port_repository_and_tag() {
        let r = Reference::parse("127.0.0.1:5000/app:v1").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "app");
        assert_eq!(r.tag(), Some("v1"));
        assert_eq!(r.digest(), None);
        assert_eq!(r.name(), "127.0.0.1:5000/app");
    }

    #[test]
    fn a_digest_without_a_registry_is_on_docker_hub() {
        let r = Reference::parse(&format!("app@sha256:{HEX}")).unwrap();
        assert_eq!(r.registry(), "docker.io");
        assert_eq!(r.repository(), "library/app");
        assert_eq!(r.tag(), None);
        assert_eq!(r.digest(), Some(format!("sha256:{HEX}").as_str()));
        assert_eq!(r.name(), "docker.io/library/app");
    }

    #[test]
    fn a_tag_and_a_digest_together() {
        let r = Reference::parse(&format!("ghcr.io/acme/app:v2@sha256:{HEX}")).unwrap();
        assert_eq!(r.registry(), "ghcr.io");
        assert_eq!(r.repository(), "acme/app");
        assert_eq!(r.tag(), Some("v2"));
        assert_eq!(r.digest(), Some(format!("sha256:{HEX}").as_str()));
        assert_eq!(r.to_string(), format!("ghcr.io/acme/app:v2@sha256:{HEX}"));
    }

    #[test]
    fn neither_tag_nor_digest_is_an_input_error_that_says_what_to_add() {
        for given in ["127.0.0.1:5000/app", "app", "localhost:5000/team/app"] {
            let e = Reference::parse(given).unwrap_err();
            assert!(e.message.contains("neither a tag nor a digest"), "{e}");
            let help = e.help.unwrap();
            assert!(
                help.contains("`:tag`") && help.contains("`@sha256:…`"),
                "{help}"
            );
        }
    }

    #[test]
    fn a_bad_digest_is_an_input_error() {
        for given in [
            "127.0.0.1:5000/app@sha256:abc".to_string(),
            format!("127.0.0.1:5000/app@sha512:{HEX}{HEX}"),
            format!("127.0.0.1:5000/app@sha256:{}", HEX.to_uppercase()),
            format!("127.0.0.1:5000/app@{HEX}"),
        ] {
            let e = Reference::parse(&given).unwrap_err();
            assert!(e.message.contains("digest"), "{given}: {e}");
        }
    }

    #[test]
    fn names_read_as_docker_reads_them() {
        for (given, registry, repository) in [
            ("localhost/app:v1", "localhost", "app"),
            ("localhost:5000/team/app:v1", "localhost:5000", "team/app"),
            ("index.docker.io/app:v1", "docker.io", "library/app"),
            ("acme/app:v1", "docker.io", "acme/app"),
            ("[::1]:5000/app:v1", "[::1]:5000", "app"),
            (
                "registry.example.com/a.b/c__d/e-f--g:1.0_rc-1",
                "registry.example.com",
                "a.b/c__d/e-f--g",
            ),
        ] {
            let r = Reference::parse(given).unwrap_or_else(|e| panic!("{given}: {e}"));
            assert_eq!(
                (r.registry(), r.repository()),
                (registry, repository),
                "{given}"
            );
        }
    }

    #[test]
    fn a_malformed_name_is_an_input_error() {
        for given in [
            "127.0.0.1:5000/App:v1",
            "127.0.0.1:5000/app:",
            "/app:v1",
            "127.0.0.1:5000//app:v1",
            "127.0.0.1:50a0/app:v1",
            "-bad.example/app:v1",
            "127.0.0.1:5000/app-:v1",
            "127.0.0.1:5000/a..b:v1",
            "127.0.0.1:5000/app:.v1",
            "127.0.0.1:5000/app:v 1",
            "",
        ] {
            let e = Reference::parse(given).unwrap_err();
            assert!(e.help.is_some(), "{given}: {e}");
        }
    }
}
