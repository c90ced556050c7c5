//! Where head lives, as the statement names it: one spelling of the repository's URL, never a
//! local path (book: attestations.md, "The statement").
//!
//! In: the `origin` remote's URL (or `--resource-uri`). Out: the repository's URL without
//! credentials, without a trailing `/` or `.git`, an scp-like `user@host:path` as the
//! `ssh://user@host/path` it stands for. A local path or a `file:` URL is refused: it cannot be
//! fetched by whoever reads the statement, and it puts a local directory's name (often a user's
//! name) into a signed document.

use crate::git::CommitId;

/// The schemes a repository URL may have: the ones git fetches from over a network.
const SCHEMES: [&str; 4] = ["https", "http", "ssh", "git"];

/// Why a URL cannot name the repository in a statement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    #[error("the repository URL is empty")]
    Empty,
    #[error(
        "`{url}` is a {scheme}: URL; the statement names a repository others can fetch ({})",
        SCHEMES.map(|s| format!("{s}://")).join(", ")
    )]
    Scheme { url: String, scheme: String },
    #[error("`{0}` names no host")]
    NoHost(String),
    #[error("`{0}` is a local path; the statement names a repository others can fetch")]
    Local(String),
    #[error("`{0}` names a host but no repository")]
    NoRepository(String),
}

/// The repository's URL as the statement spells it, or why `url` cannot be one.
pub fn canonical(url: &str) -> Result<String, ResourceError> {
    let url = url.trim();
    if url.is_empty() {
        return Err(ResourceError::Empty);
    }
    let absolute = match url.split_once("://") {
        Some((scheme, rest)) => {
            let scheme = scheme.to_ascii_lowercase();
            if !SCHEMES.contains(&scheme.as_str()) {
                return Err(ResourceError::Scheme {
                    url: url.to_string(),
                    scheme,
                });
            }
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            // Credentials never reach a document: `user:token@host` keeps only the host.
            let host = match authority.rsplit_once('@') {
                Some((user, host)) if user.contains(':') || scheme.starts_with("http") => host,
                _ => authority,
            };
            if host.is_empty() {
                return Err(ResourceError::NoHost(url.to_string()));
            }
            format!("{scheme}://{host}/{path}")
        }
        None => match scp_like(url) {
            Some((host, path)) => format!("ssh://{host}/{}", path.trim_start_matches('/')),
            None => return Err(ResourceError::Local(url.to_string())),
        },
    };
    let trimmed = without_git_suffix(absolute.trim_end_matches('/'));
    if trimmed.ends_with("://")
        || trimmed
            .split_once("://")
            .is_some_and(|(_, r)| !r.contains('/'))
    {
        return Err(ResourceError::NoRepository(url.to_string()));
    }
    Ok(trimmed.to_string())
}

/// `user@host:path` (git's scp-like syntax): the host (with its user) and the path. A Windows
/// drive (`C:\…`) or a path with `/` before the `:` is a local path, as git reads it.
fn scp_like(url: &str) -> Option<(&str, &str)> {
    let (host, path) = url.split_once(':')?;
    if host.is_empty() || host.contains('/') || host.len() == 1 || path.is_empty() {
        return None;
    }
    Some((host, path))
}

/// The repository without a final `.git`: `shop.git` and `shop` are one repository.
pub fn without_git_suffix(repository: &str) -> &str {
    repository.strip_suffix(".git").unwrap_or(repository)
}

/// What the claim was read from, for the statement's `policy` descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOrigin {
    /// One acceptance file at head: its path, the SHA-256 of its bytes, its blob id.
    File {
        path: String,
        sha256: String,
        blob: String,
    },
    /// Several acceptance files at head: the directory that holds them, and its tree id.
    Tree { path: String, tree: String },
    /// No file at head holds the claim (a draft derived from text, or an explicit file head
    /// does not hold as read): the claim's own canonical document is what the policy names.
    Document,
}

/// The statement's `policy` (SLSA VSA v1: a resource descriptor, an absolute URI and the digest
/// of what it names): a file or directory at head as `git+<repository>@<head>#<path>`, or the
/// claim's canonical document as `urn:shipmoor:claim:sha256:<hex>` with that digest.
pub fn policy(
    repository: &str,
    head: &CommitId,
    origin: &ClaimOrigin,
    claim_sha256: &str,
) -> crate::format::statement::Policy {
    use crate::format::statement::{Policy, PolicyDigest};
    match origin {
        ClaimOrigin::File { path, sha256, blob } => Policy {
            uri: format!("git+{repository}@{head}#{path}"),
            digest: PolicyDigest {
                sha256: Some(sha256.clone()),
                git_blob: Some(blob.clone()),
                git_tree: None,
            },
        },
        ClaimOrigin::Tree { path, tree } => Policy {
            uri: format!("git+{repository}@{head}#{path}"),
            digest: PolicyDigest {
                git_tree: Some(tree.clone()),
                ..PolicyDigest::default()
            },
        },
        ClaimOrigin::Document => Policy {
            uri: format!("{CLAIM_URN}{claim_sha256}"),
            digest: PolicyDigest {
                sha256: Some(claim_sha256.to_string()),
                ..PolicyDigest::default()
            },
        },
    }
}

/// The prefix of a `policy.uri` that names the claim's own canonical document by its digest.
pub const CLAIM_URN: &str = "urn:shipmoor:claim:sha256:";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_for_every_form_of_the_same_repository() {
        for url in [
            "https://github.com/acme/shop",
            "https://github.com/acme/shop.git",
            "https://github.com/acme/shop/",
            "https://x-access-token:ghs_secret@github.com/acme/shop.git",
            "HTTPS://github.com/acme/shop.git/",
        ] {
            assert_eq!(
                canonical(url).as_deref(),
                Ok("https://github.com/acme/shop"),
                "{url}"
            );
        }
        assert_eq!(
            canonical("git@github.com:acme/shop.git").as_deref(),
            Ok("ssh://git@github.com/acme/shop")
        );
        assert_eq!(
            canonical("ssh://git@github.com/acme/shop.git").as_deref(),
            Ok("ssh://git@github.com/acme/shop")
        );
    }

    #[test]
    fn a_local_repository_is_refused() {
        for url in [
            "/home/alice/shop",
            "./shop",
            "file:///home/alice/shop",
            "C:\\src\\shop",
            "../shop:odd",
            "https://github.com",
            "https:///acme/shop",
            "",
        ] {
            let e = canonical(url).unwrap_err().to_string();
            assert!(!e.is_empty(), "{url}");
        }
        assert!(canonical("/home/alice/shop")
            .unwrap_err()
            .to_string()
            .contains("local path"));
        assert!(canonical("file:///home/alice/shop")
            .unwrap_err()
            .to_string()
            .contains("file: URL"));
    }

    #[test]
    fn no_credential_survives() {
        let u = canonical("https://user:tok@example.com/a/b.git").unwrap();
        assert!(!u.contains("tok"), "{u}");
        let u = canonical("https://tok@example.com/a/b").unwrap();
        assert!(!u.contains("tok"), "{u}");
    }
}
