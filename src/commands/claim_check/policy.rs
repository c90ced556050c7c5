//! What the statement's `policy` names: the acceptance file the claim was read from at head,
//! the directory of several, or the claim's own document ([`attest::resource::ClaimOrigin`]).

use super::{shown_path, Plan};
use crate::acceptance::claim;
use crate::attest::{self, resource::ClaimOrigin};
use crate::error::Error;
use crate::format::statement::Policy;

/// The statement's `policy` for the run's claim.
pub(super) fn policy(plan: &Plan) -> Result<Policy, Error> {
    let origin = origin(plan)?;
    Ok(attest::resource::policy(
        &plan.repository,
        plan.head.as_str(),
        &origin,
        &plan.claim.set.sha256,
    ))
}

fn origin(plan: &Plan) -> Result<ClaimOrigin, Error> {
    let head = plan.head.as_str();
    match plan.claim.source.as_str() {
        "files" => {
            let files: Vec<&str> = plan.claim.set.display_path.split(',').collect();
            match files.as_slice() {
                [one] => file_at_head(plan, one, None),
                _ => {
                    // Every acceptance file lives under `.shipmoor`: the directory names them all.
                    let dir = claim::LEGACY
                        .split_once('/')
                        .map_or(".shipmoor", |(d, _)| d);
                    match plan.git.object_id(head, dir)? {
                        Some(tree) => Ok(ClaimOrigin::Tree {
                            path: dir.to_string(),
                            tree,
                        }),
                        None => Ok(ClaimOrigin::Document),
                    }
                }
            }
        }
        "explicit" => match &plan.located {
            Some(l) if l.path.starts_with(plan.git.root()) => {
                // Only the file head holds, byte for byte, is the policy at head.
                let read = std::fs::read(&l.path).ok();
                file_at_head(plan, &shown_path(&l.path, plan.git.root()), read)
            }
            _ => Ok(ClaimOrigin::Document),
        },
        _ => Ok(ClaimOrigin::Document),
    }
}

/// `path` at head as the policy, when head holds it (and its bytes are `read`, when given).
fn file_at_head(plan: &Plan, path: &str, read: Option<Vec<u8>>) -> Result<ClaimOrigin, Error> {
    let (Some(blob), Some(bytes)) = (
        plan.git.object_id(plan.head.as_str(), path)?,
        plan.git.show(&plan.head, path)?,
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
