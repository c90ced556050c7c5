//! Where the change's code was observed, against where the statement was signed (book:
//! trust-boundary.md): the record the result and the statement carry, which an admission policy
//! can require (`require_isolated_signer`).
//!
//! A keyless signature names the workflow that made it, never what else ran in its job. A job
//! that ran the change's code (a `setup`, the floor) could have taken the job's OIDC identity; a
//! job that only fused shards other jobs observed could not. Claim Check records which of the two
//! signed: `isolated` is true only for a fuse in GitHub Actions whose every shard names another
//! job of the same workflow run and attempt.

use serde::{Deserialize, Serialize};

/// A job of a GitHub Actions workflow run, as the runner names it in the environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobRef {
    /// `GITHUB_RUN_ID`.
    pub run_id: String,
    /// `GITHUB_RUN_ATTEMPT`.
    pub run_attempt: String,
    /// `GITHUB_JOB`: the job's id in its workflow (every leg of a matrix shares it).
    pub job: String,
}

impl JobRef {
    /// This process's job: [`JobRef::from_env`] over the process's environment.
    pub fn here() -> Option<JobRef> {
        JobRef::from_env(&|name| std::env::var(name).ok())
    }

    /// This process's job, read from the environment the runner sets; `None` outside Actions.
    pub fn from_env(var: &dyn Fn(&str) -> Option<String>) -> Option<JobRef> {
        if var("GITHUB_ACTIONS").as_deref() != Some("true") {
            return None;
        }
        let get = |name: &str| var(name).filter(|v| !v.is_empty());
        Some(JobRef {
            run_id: get("GITHUB_RUN_ID")?,
            run_attempt: get("GITHUB_RUN_ATTEMPT").unwrap_or_else(|| "1".into()),
            job: get("GITHUB_JOB")?,
        })
    }
}

/// How the run's observations reached its signer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observation {
    /// No process of the signing job ran the change's code: a fuse whose every shard was
    /// observed in another job of the signing job's own workflow run and attempt.
    pub isolated: bool,
    /// The workflow run and attempt, in GitHub Actions (absent elsewhere).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_attempt: Option<String>,
    /// The job that decided and signed (`GITHUB_JOB`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_in: Option<String>,
    /// The jobs whose floor was observed, each id once (a matrix's legs share theirs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observed_in: Vec<String>,
}

impl Observation {
    /// A single run: the floor ran in this process's own job, which also signs.
    pub fn single(here: Option<&JobRef>) -> Observation {
        Observation {
            isolated: false,
            run_id: here.map(|j| j.run_id.clone()),
            run_attempt: here.map(|j| j.run_attempt.clone()),
            signed_in: here.map(|j| j.job.clone()),
            observed_in: here.map(|j| vec![j.job.clone()]).unwrap_or_default(),
        }
    }

    /// A fuse in the job `here` (`None` outside Actions) of shards each observed in the job it
    /// names (`None` for a shard written outside Actions).
    pub fn fused(here: Option<&JobRef>, shards: &[Option<JobRef>]) -> Observation {
        let mut observed_in: Vec<String> = Vec::new();
        for j in shards.iter().flatten() {
            if !observed_in.contains(&j.job) {
                observed_in.push(j.job.clone());
            }
        }
        observed_in.sort();
        let isolated = here.is_some_and(|h| {
            !shards.is_empty()
                && shards.iter().all(|s| {
                    s.as_ref().is_some_and(|s| {
                        s.run_id == h.run_id && s.run_attempt == h.run_attempt && s.job != h.job
                    })
                })
        });
        Observation {
            isolated,
            run_id: here.map(|j| j.run_id.clone()),
            run_attempt: here.map(|j| j.run_attempt.clone()),
            signed_in: here.map(|j| j.job.clone()),
            observed_in,
        }
    }

    /// What a report says of it, in one line.
    pub fn line(&self) -> String {
        match (&self.signed_in, self.isolated) {
            (Some(job), true) => format!(
                "observed in job {} of run {} (attempt {}), signed in job {job}, which ran none of the change's code",
                self.observed_in.join(", "),
                self.run_id.as_deref().unwrap_or("?"),
                self.run_attempt.as_deref().unwrap_or("?"),
            ),
            (Some(job), false) if self.observed_in.iter().any(|o| o == job) => format!(
                "observed and signed in the same job ({job}): the change's code ran where the signing identity was"
            ),
            (Some(job), false) => format!(
                "signed in job {job} from observations that are not all from other jobs of run {}",
                self.run_id.as_deref().unwrap_or("?")
            ),
            (None, _) => "observed and signed outside GitHub Actions, by one process".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(run: &str, attempt: &str, job: &str) -> JobRef {
        JobRef {
            run_id: run.into(),
            run_attempt: attempt.into(),
            job: job.into(),
        }
    }

    #[test]
    fn a_fuse_is_isolated_only_when_every_shard_is_another_job_of_its_own_run_and_attempt() {
        let here = job("7", "1", "sign");
        let observe = Some(job("7", "1", "observe"));
        let o = Observation::fused(Some(&here), &[observe.clone(), observe.clone()]);
        assert!(o.isolated);
        assert_eq!(o.observed_in, ["observe"]);
        assert_eq!(o.signed_in.as_deref(), Some("sign"));
        // One shard observed in the signing job itself.
        let o = Observation::fused(Some(&here), &[observe.clone(), Some(job("7", "1", "sign"))]);
        assert!(!o.isolated);
        // Another run, another attempt, a shard written outside Actions.
        for other in [
            Some(job("8", "1", "observe")),
            Some(job("7", "2", "observe")),
            None,
        ] {
            assert!(!Observation::fused(Some(&here), &[observe.clone(), other]).isolated);
        }
        // A fuse outside Actions vouches for no job.
        assert!(!Observation::fused(None, &[observe]).isolated);
        assert!(!Observation::fused(Some(&here), &[]).isolated);
    }

    #[test]
    fn a_single_run_is_never_isolated() {
        let here = job("7", "1", "claim-check");
        let o = Observation::single(Some(&here));
        assert!(!o.isolated);
        assert_eq!(o.observed_in, ["claim-check"]);
        assert!(o.line().contains("same job (claim-check)"), "{}", o.line());
        let local = Observation::single(None);
        assert_eq!(
            serde_json::to_string(&local).unwrap(),
            r#"{"isolated":false}"#
        );
    }

    #[test]
    fn the_job_is_read_only_in_actions() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        let actions = env(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_RUN_ID", "42"),
            ("GITHUB_JOB", "observe"),
        ]);
        assert_eq!(JobRef::from_env(&actions), Some(job("42", "1", "observe")));
        let elsewhere = env(&[("GITHUB_RUN_ID", "42"), ("GITHUB_JOB", "observe")]);
        assert_eq!(JobRef::from_env(&elsewhere), None);
    }
}
