//! The resources the statement names: the repository (`resourceUri`, [`resource_uri`]) and what
//! its `policy` names, the acceptance file the claim was read from at head, the directory of
//! several, or the claim's own document ([`attest::resource::ClaimOrigin`]).

use super::resolved::Resolved;
use super::shown_path;
use crate::acceptance::claim;
use crate::attest::{self, resource::ClaimOrigin};
use crate::cli::ClaimCheckArgs;
use crate::error::{Error, InputError};
use crate::format::statement::Policy;
use crate::git::Git;

/// The repository's URL as the statement names it: `--resource-uri`, else the `origin` remote's,
/// in one spelling ([`attest::resource::canonical`]); never a local path, which nobody who reads
/// the statement can fetch and which puts a local directory's name into a signed document.
pub(super) fn resource_uri(args: &ClaimCheckArgs, git: &Git) -> Result<String, Error> {
    const HELP: &str = "pass `--resource-uri https://host/owner/repo` (or set SHIPMOOR_RESOURCE_URI), or give the repository its remote: `git remote add origin URL`";
    if let Some(given) = &args.resource_uri {
        return attest::resource::canonical(given).map_err(|e| {
            Error::input(
                InputError::new(format!("--resource-uri: {e}"))
                    .help("give the URL the repository is fetched from, e.g. `--resource-uri https://github.com/acme/shop`"),
            )
        });
    }
    match git.origin_url()? {
        Some(url) => attest::resource::canonical(&url).map_err(|e| {
            Error::input(
                InputError::new(format!(
                    "the `origin` remote cannot name the repository in the statement: {e}"
                ))
                .help(HELP),
            )
        }),
        None => Err(Error::input(
            InputError::new(
                "the repository has no `origin` remote, and the statement's `resourceUri` must name where head can be fetched, never a local path",
            )
            .help(HELP),
        )),
    }
}

/// The statement's `policy` for the run's claim.
pub(super) fn policy(resolved: &Resolved) -> Result<Policy, Error> {
    let origin = origin(resolved)?;
    Ok(attest::resource::policy(
        &resolved.repository,
        &resolved.head,
        &origin,
        &resolved.claim.set.sha256,
    ))
}

fn origin(resolved: &Resolved) -> Result<ClaimOrigin, Error> {
    let head = resolved.head.as_str();
    match resolved.claim.source.as_str() {
        "files" => {
            let files: Vec<&str> = resolved.claim.set.display_path.split(',').collect();
            match files.as_slice() {
                [one] => file_at_head(resolved, one, None),
                _ => {
                    // Every acceptance file lives under `.shipmoor`: the directory names them all.
                    match resolved.git.object_id(head, claim::DIR)? {
                        Some(tree) => Ok(ClaimOrigin::Tree {
                            path: claim::DIR.to_string(),
                            tree,
                        }),
                        None => Ok(ClaimOrigin::Document),
                    }
                }
            }
        }
        "explicit" => match &resolved.located {
            Some(l) if l.path.starts_with(resolved.git.root()) => {
                // Only the file head holds, byte for byte, is the policy at head.
                let read = std::fs::read(&l.path).ok();
                file_at_head(resolved, &shown_path(&l.path, resolved.git.root()), read)
            }
            _ => Ok(ClaimOrigin::Document),
        },
        _ => Ok(ClaimOrigin::Document),
    }
}

/// `path` at head as the policy, when head holds it (and its bytes are `read`, when given).
fn file_at_head(
    resolved: &Resolved,
    path: &str,
    read: Option<Vec<u8>>,
) -> Result<ClaimOrigin, Error> {
    let (Some(blob), Some(bytes)) = (
        resolved.git.object_id(resolved.head.as_str(), path)?,
        resolved.git.show(&resolved.head, path)?,
    ) else {
        return Ok(ClaimOrigin::Document);
    };
    if read.is_some_and(|r| r != bytes) {
        return Ok(ClaimOrigin::Document);
    }
    Ok(ClaimOrigin::File {
        path: path.to_string(),
        sha256: crate::evidence::sha256_hex(&bytes),
        blob,
    })
}
