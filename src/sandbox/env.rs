//! The environment a command of the run gets (the book's security page): the head commit is
//! untrusted, so what our environment holds reaches the commands the floor and a command judge
//! start only through the rules here, and through the run's [`EnvPolicy`], which the sandbox's
//! [`Confinement`](super::Confinement) carries to every [`Jail`](super::Jail).

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::process::Command;

/// Whether an environment variable must never reach the code the floor runs (the book's
/// security page): the head commit is untrusted, and these would let it sign statements (the
/// OIDC token, the key's password), steer the rest of a GitHub Actions job (the workflow
/// command files), or read a credential of the job (anything named like one). Denied by
/// default: a user passes a name deliberately with `env_pass`.
pub fn is_secret_env(name: &str) -> bool {
    const EXACT: &[&str] = &[
        "SIGSTORE_ID_TOKEN",
        "SHIPMOOR_KEY_PASSWORD",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_OUTPUT",
        "GITHUB_STATE",
        "GITHUB_STEP_SUMMARY",
        "ACTIONS_CACHE_URL",
        "ACTIONS_RESULTS_URL",
        "AWS_ACCESS_KEY_ID",
        "DOCKER_AUTH_CONFIG",
        "NPM_TOKEN",
        "CARGO_REGISTRY_TOKEN",
        // The agents that sign or log in for the person: their sockets' paths.
        "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO",
    ];
    const PREFIXES: &[&str] = &[
        "ACTIONS_ID_TOKEN_REQUEST_",
        "ACTIONS_RUNTIME_",
        "INPUT_",
        "PYPI_",
        "SIGSTORE_",
    ];
    // Looks like a credential, whatever its case.
    const INSIDE: &[&str] = &[
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "CREDENTIAL",
        "PRIVATE_KEY",
        "JWT",
        "WEBHOOK",
        "COOKIE",
    ];
    // Ends like one: `MYSQL_PWD`, `DOCKER_PASS`, `DEPLOY_PAT`, `SENTRY_DSN` (never `PWD`, the
    // working directory, nor `OLDPWD`).
    const SUFFIXES: &[&str] = &["_PWD", "_PASS", "_PASSPHRASE", "_PAT", "_DSN"];
    let upper = name.to_ascii_uppercase();
    // `_AUTHOR` (`CARGO_PKG_AUTHORS`) is no `_AUTH`; `_AUTHORIZATION` is.
    let author = |rest: &str| rest.starts_with("OR") && !rest.starts_with("ORIZ");
    let auth = upper
        .match_indices("_AUTH")
        .any(|(i, m)| !author(&upper[i + m.len()..]));
    let upper = upper.as_str();
    EXACT.contains(&upper)
        || PREFIXES.iter().any(|p| upper.starts_with(p))
        || INSIDE.iter().any(|p| upper.contains(p))
        || auth
        || upper.ends_with("_KEY")
        || SUFFIXES.iter().any(|s| upper.ends_with(s))
        || (upper.starts_with("AWS_") && upper.contains("KEY"))
}

/// Whether a variable's value holds a credential whatever its name: a URL with a password in
/// it (`postgres://app:s3cret@db/app` in a `DATABASE_URL`).
pub fn is_secret_value(value: &OsStr) -> bool {
    let Some(v) = value.to_str() else {
        return false;
    };
    v.split_whitespace().any(|word| {
        word.split_once("://")
            .and_then(|(_, rest)| rest.split(['/', '?', '#']).next())
            .and_then(|authority| authority.rsplit_once('@'))
            .is_some_and(|(userinfo, _)| {
                userinfo.split_once(':').is_some_and(|(_, p)| !p.is_empty())
            })
    })
}

/// Whether our environment's variable `name` is withheld from the floor's commands: named like
/// a credential ([`is_secret_env`]), or holding one ([`is_secret_value`]).
pub fn is_withheld(name: &OsStr, value: &OsStr) -> bool {
    name.to_str().is_some_and(is_secret_env) || is_secret_value(value)
}

/// Names no `env_pass` can pass: the ones that let the change sign statements or steer the job.
pub fn is_never_passed(name: &str) -> bool {
    const NEVER: &[&str] = &[
        "SIGSTORE_ID_TOKEN",
        "SHIPMOOR_KEY_PASSWORD",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_OUTPUT",
        "GITHUB_STATE",
        "GITHUB_STEP_SUMMARY",
    ];
    NEVER.contains(&name)
        || name.starts_with("ACTIONS_ID_TOKEN_REQUEST_")
        || name.starts_with("ACTIONS_RUNTIME_")
}

/// Which variables of our environment reach the commands of a run: the rules above
/// ([`is_secret_env`], [`is_secret_value`], [`is_never_passed`]), the names the run withholds
/// whatever they are called (a chat judge's `api_key_env`), and the names `floor.env_pass`
/// passes to a command judge. Made once, when the run's arguments are resolved; the default
/// holds the rules alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvPolicy {
    /// Names withheld beyond the rules, and never passed.
    withheld: BTreeSet<String>,
    /// `floor.env_pass`, for the commands that are not a runner's (a command judge).
    judges_pass: Vec<String>,
    /// The environment the commands would inherit; `None`: this process's own.
    inherited: Option<Vec<(OsString, OsString)>>,
}

impl EnvPolicy {
    /// The policy of a run that withholds `withheld` (never passed either) and passes
    /// `judges_pass` (`floor.env_pass`) to a command judge.
    pub fn new(withheld: impl IntoIterator<Item = String>, judges_pass: &[String]) -> EnvPolicy {
        EnvPolicy {
            withheld: withheld.into_iter().collect(),
            judges_pass: judges_pass.to_vec(),
            inherited: None,
        }
    }

    /// This policy over `vars` in place of this process's environment: what the commands would
    /// inherit (a test's environment, which need not be the test process's own).
    pub fn inheriting(mut self, vars: impl IntoIterator<Item = (OsString, OsString)>) -> EnvPolicy {
        self.inherited = Some(vars.into_iter().collect());
        self
    }

    /// The environment the commands would inherit, before the policy.
    fn vars(&self) -> Vec<(OsString, OsString)> {
        match &self.inherited {
            Some(vars) => vars.clone(),
            None => std::env::vars_os().collect(),
        }
    }

    fn var_os(&self, name: &str) -> Option<OsString> {
        match &self.inherited {
            Some(vars) => vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            None => std::env::var_os(name),
        }
    }

    /// [`is_secret_env`], and the names this run withholds.
    pub fn is_secret_env(&self, name: &str) -> bool {
        is_secret_env(name) || self.withheld.contains(name)
    }

    /// [`is_withheld`], and the names this run withholds.
    pub fn is_withheld(&self, name: &OsStr, value: &OsStr) -> bool {
        name.to_str().is_some_and(|n| self.is_secret_env(n)) || is_secret_value(value)
    }

    /// [`is_never_passed`], and the names this run withholds.
    pub fn is_never_passed(&self, name: &str) -> bool {
        is_never_passed(name) || self.withheld.contains(name)
    }

    /// The variables `env_pass` names that need passing (withheld otherwise, and passable), as
    /// our environment has them, for a command to set explicitly.
    pub fn passed_values(&self, names: &[String]) -> Vec<(String, OsString)> {
        names
            .iter()
            .filter(|n| self.is_secret_env(n) && !self.is_never_passed(n))
            .filter_map(|n| self.var_os(n).map(|v| (n.clone(), v)))
            .collect()
    }

    /// The variables `floor.env_pass` names, as our environment has them, for a command judge
    /// to set explicitly (names no pass may pass are left out).
    pub fn passed_to_judges(&self) -> Vec<(String, OsString)> {
        self.passed_values(&self.judges_pass)
    }

    /// What a command gets of our environment, for the report: the names withheld (in our
    /// environment and looking like credentials, or named by the run) and the names `env_pass`
    /// passes although they would be; never values. Sorted. The CI system's own plumbing, which
    /// every job withholds whatever it holds (`INPUT_*`, the Actions runtime's and the workflow
    /// command files), is left out of the list: it differs between the jobs of one workflow
    /// (a shard's `INPUT_SHARD`) and is no credential of the project's.
    pub fn environment_names(&self, pass: &[String]) -> (Vec<String>, Vec<String>) {
        let plumbing = |k: &str| {
            k.starts_with("INPUT_")
                || k.starts_with("ACTIONS_")
                || matches!(
                    k,
                    "GITHUB_ENV"
                        | "GITHUB_PATH"
                        | "GITHUB_OUTPUT"
                        | "GITHUB_STATE"
                        | "GITHUB_STEP_SUMMARY"
                )
        };
        let mut withheld = Vec::new();
        let mut passed = Vec::new();
        for (k, v) in self.vars() {
            if !self.is_withheld(&k, &v) {
                continue;
            }
            let Some(k) = k.to_str() else { continue };
            if plumbing(k) {
                continue;
            }
            if pass.iter().any(|p| p == k) && !self.is_never_passed(k) {
                passed.push(k.to_string());
            } else {
                withheld.push(k.to_string());
            }
        }
        withheld.sort();
        passed.sort();
        (withheld, passed)
    }

    /// The values of every variable of our environment named like a credential, longest first,
    /// for masking what leaks into captured output anyway (a test that reads a parent's
    /// `/proc/<pid>/environ`, a file a setup wrote): the withheld ones, the CI system's own
    /// plumbing among them (the Actions runtime's tokens, which the report's list leaves out), and
    /// the ones `env_pass` passes on purpose, which no stored log needs either. Values shorter
    /// than 6 bytes are left: they would mask ordinary words.
    pub fn withheld_values(&self) -> Vec<(String, String)> {
        let mut values: Vec<(String, String)> = self
            .vars()
            .into_iter()
            .filter(|(k, v)| self.is_withheld(k, v))
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(_, v)| v.len() >= 6)
            .collect();
        values.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        values
    }

    /// `cmd`'s environment as the policy leaves it. Inherited names are withheld by the rules.
    /// A name the caller set on the command is what our own code chose to give it (the floor
    /// copies a variable `env_pass` passes), kept unless no pass may pass it.
    pub fn apply(&self, cmd: &mut Command) {
        let explicit: BTreeSet<OsString> = cmd
            .get_envs()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| k.to_os_string())
            .collect();
        let never = |k: &OsString| k.to_str().is_some_and(|n| self.is_never_passed(n));
        let Some(inherited) = &self.inherited else {
            let secret: Vec<OsString> = std::env::vars_os()
                .filter(|(k, v)| !explicit.contains(k) && self.is_withheld(k, v))
                .map(|(k, _)| k)
                .chain(explicit.iter().filter(|k| never(k)).cloned())
                .collect();
            for name in secret {
                cmd.env_remove(name);
            }
            return;
        };
        // An environment of its own: the command inherits that one, not ours.
        let removed: BTreeSet<OsString> = cmd
            .get_envs()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| k.to_os_string())
            .collect();
        let set: Vec<(OsString, OsString)> = cmd
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_os_string(), v?.to_os_string())))
            .filter(|(k, _)| !never(k))
            .collect();
        cmd.env_clear();
        for (k, v) in inherited {
            if !explicit.contains(k) && !removed.contains(k) && !self.is_withheld(k, v) {
                cmd.env(k, v);
            }
        }
        cmd.envs(set);
    }
}
