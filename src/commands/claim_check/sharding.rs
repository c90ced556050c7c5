//! Which shard this run is (book: sharding.md): `--shard K/N`, else, with `--shard-out`, the
//! CI's own parallel-job variables.

use std::path::PathBuf;

use crate::cli::{ClaimCheckArgs, ShardBy};
use crate::error::{Error, InputError};
use crate::floor::{Share, Split};

/// `--shard K/N --shard-out DIR`, as the input checks read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ShardPlan {
    pub share: Share,
    pub out: PathBuf,
}
/// The shard this run is, if any: `--shard`, else with `--shard-out` the CI's own variables
/// (`env` reads one). A plain run never becomes a shard because a CI variable is set.
pub(super) fn resolve(
    args: &ClaimCheckArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<ShardPlan>, Error> {
    let Some(out) = &args.shard_out else {
        return match args.shard {
            Some(_) => Err(Error::input(
                InputError::new("--shard needs --shard-out DIR, where the shard result goes").help(
                    "add --shard-out DIR (and run `shipmoor fuse` on the shards' directories)",
                ),
            )),
            None => Ok(None),
        };
    };
    let (k, n) = match &args.shard {
        Some(text) => parse_share(text).map_err(|m| {
            Error::input(InputError::new(format!("--shard {text}: {m}")).help(SHARD_HELP))
        })?,
        None => match from_ci(env) {
            Some(Ok(kn)) => kn,
            Some(Err(e)) => {
                return Err(Error::input(
                    InputError::new(e.to_string()).help(SHARD_HELP),
                ))
            }
            None => {
                return Err(Error::input(
                    InputError::new(
                        "--shard-out needs --shard K/N, and no CI variable (CI_NODE_INDEX/CI_NODE_TOTAL, BUILDKITE_PARALLEL_JOB/BUILDKITE_PARALLEL_JOB_COUNT) says which shard this is",
                    )
                    .help(SHARD_HELP),
                ))
            }
        },
    };
    let out = if out.is_absolute() {
        out.clone()
    } else {
        std::env::current_dir().unwrap_or_default().join(out)
    };
    Ok(Some(ShardPlan {
        share: Share {
            k,
            n,
            split: match args.shard_by {
                ShardBy::Criterion => Split::Criterion,
                ShardBy::Runner => Split::Runner,
            },
        },
        out,
    }))
}

const SHARD_HELP: &str =
    "pass --shard K/N with 1 ≤ K ≤ N (for example --shard 2/3: the second of three shards)";

/// Why a `K/N` names no shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum ShareError {
    #[error("not of the form K/N")]
    NotKOfN,
    #[error("`{0}` is not a whole number")]
    NotANumber(String),
    #[error("K must be from 1 to N (here K = {k}, N = {n})")]
    OutOfRange { k: usize, n: usize },
}

/// Why the CI's parallel-job variables name no shard: the variables and their values, and
/// what is wrong with them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum CiShareError {
    #[error("{index}={i}, {total}={t}: {share}")]
    Share {
        index: &'static str,
        i: String,
        total: &'static str,
        t: String,
        share: ShareError,
    },
    #[error("{index}={i}: not a whole number")]
    Index { index: &'static str, i: String },
}

/// `K/N`, 1 ≤ K ≤ N.
fn parse_share(text: &str) -> Result<(usize, usize), ShareError> {
    let (k, n) = text.split_once('/').ok_or(ShareError::NotKOfN)?;
    let number = |s: &str| {
        s.trim()
            .parse::<usize>()
            .map_err(|_| ShareError::NotANumber(s.to_string()))
    };
    let (k, n) = (number(k)?, number(n)?);
    if k == 0 || n == 0 || k > n {
        return Err(ShareError::OutOfRange { k, n });
    }
    Ok((k, n))
}

/// K/N from the CI's parallel-job variables: GitLab's `CI_NODE_INDEX` (1-based) and
/// `CI_NODE_TOTAL`, then Buildkite's `BUILDKITE_PARALLEL_JOB` (0-based) and
/// `BUILDKITE_PARALLEL_JOB_COUNT`. `None`: neither pair is set.
fn from_ci(env: &dyn Fn(&str) -> Option<String>) -> Option<Result<(usize, usize), CiShareError>> {
    let pair = |index: &'static str, total: &'static str, zero_based: bool| {
        let (i, t) = (env(index)?, env(total)?);
        let parsed = i
            .trim()
            .parse::<usize>()
            .ok()
            .map(|i| if zero_based { i + 1 } else { i });
        Some(match parsed {
            Some(k) => parse_share(&format!("{k}/{t}")).map_err(|share| CiShareError::Share {
                index,
                i,
                total,
                t,
                share,
            }),
            None => Err(CiShareError::Index { index, i }),
        })
    };
    pair("CI_NODE_INDEX", "CI_NODE_TOTAL", false).or_else(|| {
        pair(
            "BUILDKITE_PARALLEL_JOB",
            "BUILDKITE_PARALLEL_JOB_COUNT",
            true,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{from_ci, parse_share};

    #[test]
    fn a_share_is_k_of_n_with_k_from_1_to_n() {
        assert_eq!(parse_share("2/3"), Ok((2, 3)));
        assert_eq!(parse_share("1/1"), Ok((1, 1)));
        for bad in ["0/3", "4/3", "1/0", "3", "a/3", "1/b", "-1/3"] {
            assert!(parse_share(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_ci_variables_name_the_shard_gitlab_from_1_buildkite_from_0() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let gitlab = env(&[("CI_NODE_INDEX", "3"), ("CI_NODE_TOTAL", "3")]);
        assert_eq!(from_ci(&gitlab), Some(Ok((3, 3))));
        let buildkite = env(&[
            ("BUILDKITE_PARALLEL_JOB", "0"),
            ("BUILDKITE_PARALLEL_JOB_COUNT", "4"),
        ]);
        assert_eq!(from_ci(&buildkite), Some(Ok((1, 4))));
        // Buildkite's last job is N - 1.
        let last = env(&[
            ("BUILDKITE_PARALLEL_JOB", "3"),
            ("BUILDKITE_PARALLEL_JOB_COUNT", "4"),
        ]);
        assert_eq!(from_ci(&last), Some(Ok((4, 4))));
        // GitLab's index is 1-based: 0 is out of range, and said to be.
        let zero = env(&[("CI_NODE_INDEX", "0"), ("CI_NODE_TOTAL", "3")]);
        assert!(
            matches!(from_ci(&zero), Some(Err(e)) if e.to_string().contains("CI_NODE_INDEX=0"))
        );
        // Half a pair is no pair.
        assert_eq!(from_ci(&env(&[("CI_NODE_TOTAL", "3")])), None);
        assert_eq!(from_ci(&env(&[])), None);
    }
}
