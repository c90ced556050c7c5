//! Registry credentials: `SHIPMOOR_REGISTRY_USERNAME` and `SHIPMOOR_REGISTRY_PASSWORD` when both
//! are set, else the Docker config file's `auths.<host>.auth` (base64 `user:pass`, as
//! `docker login` writes it) from `$DOCKER_CONFIG/config.json` or `~/.docker/config.json`,
//! else anonymous. Credential helpers (`credsStore`, `credHelpers`) and identity tokens are not
//! run: a registry that needs one takes the environment variables instead.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use oci_client::secrets::RegistryAuth;
use serde_json::Value;

use crate::error::InputError;

pub const USERNAME_ENV: &str = "SHIPMOOR_REGISTRY_USERNAME";
pub const PASSWORD_ENV: &str = "SHIPMOOR_REGISTRY_PASSWORD";

/// The credentials for `registry` (`host[:port]`), from the process environment.
pub fn for_registry(registry: &str) -> Result<RegistryAuth, InputError> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    lookup(registry, &env, config_path(&env).as_deref())
}

/// Where the Docker config file is: `$DOCKER_CONFIG/config.json`, else
/// `$HOME/.docker/config.json`.
fn config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    match env("DOCKER_CONFIG") {
        Some(dir) => Some(Path::new(&dir).join("config.json")),
        None => env("HOME").map(|home| Path::new(&home).join(".docker/config.json")),
    }
}

fn lookup(
    registry: &str,
    env: &dyn Fn(&str) -> Option<String>,
    config: Option<&Path>,
) -> Result<RegistryAuth, InputError> {
    match (env(USERNAME_ENV), env(PASSWORD_ENV)) {
        (Some(user), Some(password)) => return Ok(RegistryAuth::Basic(user, password)),
        (Some(_), None) | (None, Some(_)) => {
            return Err(InputError::new(format!(
                "only one of {USERNAME_ENV} and {PASSWORD_ENV} is set"
            ))
            .help("set both, or neither (then the Docker config file is read)"))
        }
        (None, None) => {}
    }
    let Some(path) = config else {
        return Ok(RegistryAuth::Anonymous);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RegistryAuth::Anonymous),
        Err(e) => {
            return Err(
                InputError::new(format!("cannot read the Docker config file: {e}"))
                    .in_file(path.display().to_string())
                    .help("make the file readable for this user, or point DOCKER_CONFIG at the directory of another config.json"),
            )
        }
    };
    let shown = path.display().to_string();
    let config: Value = serde_json::from_str(&text).map_err(|e| {
        InputError::new(format!("the Docker config file is not JSON: {e}"))
            .in_file(shown.clone())
            .help("fix the file's JSON (`docker login` rewrites it), or point DOCKER_CONFIG at the directory of another config.json")
    })?;
    let Some(auths) = config.get("auths").and_then(Value::as_object) else {
        return Ok(RegistryAuth::Anonymous);
    };
    let Some(auth) = auths
        .iter()
        .find(|(key, _)| same_registry(key, registry))
        .and_then(|(_, entry)| entry.get("auth"))
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
    else {
        return Ok(RegistryAuth::Anonymous);
    };
    let bad = || {
        InputError::new(format!(
            "`auths.{registry}.auth` is not base64 of `user:password`"
        ))
        .in_file(shown.clone())
        .help("run `docker login` again, or set SHIPMOOR_REGISTRY_USERNAME and SHIPMOOR_REGISTRY_PASSWORD")
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(auth.trim())
        .map_err(|_| bad())?;
    let decoded = String::from_utf8(decoded).map_err(|_| bad())?;
    let (user, password) = decoded.split_once(':').ok_or_else(bad)?;
    Ok(RegistryAuth::Basic(user.to_string(), password.to_string()))
}

/// Whether a key of `auths` is this registry: `docker login` writes the bare host, older
/// clients a URL (`https://index.docker.io/v1/` for Docker Hub).
fn same_registry(key: &str, registry: &str) -> bool {
    let host = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    let host = host.split('/').next().unwrap_or(host);
    let hub = |h: &str| matches!(h, "docker.io" | "index.docker.io" | "registry-1.docker.io");
    host == registry || (hub(host) && hub(registry))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn config(text: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), text).unwrap();
        dir
    }

    fn basic(auth: RegistryAuth) -> Option<(String, String)> {
        match auth {
            RegistryAuth::Basic(u, p) => Some((u, p)),
            _ => None,
        }
    }

    #[test]
    fn the_docker_config_files_auth_for_the_host() {
        // "alice:s3cr:et", base64: a password may hold a colon.
        let dir = config(
            r#"{"auths": {"127.0.0.1:5000": {"auth": "YWxpY2U6czNjcjpldA=="}, "other.io": {"auth": "eDp5"}}}"#,
        );
        let path = dir.path().join("config.json");
        let got = lookup("127.0.0.1:5000", &env(&[]), Some(&path)).unwrap();
        assert_eq!(
            basic(got),
            Some(("alice".to_string(), "s3cr:et".to_string()))
        );
        let none = lookup("ghcr.io", &env(&[]), Some(&path)).unwrap();
        assert!(matches!(none, RegistryAuth::Anonymous));
    }

    #[test]
    fn docker_hubs_url_key_matches_docker_io() {
        let dir = config(r#"{"auths": {"https://index.docker.io/v1/": {"auth": "eDp5"}}}"#);
        let got = lookup(
            "docker.io",
            &env(&[]),
            Some(&dir.path().join("config.json")),
        )
        .unwrap();
        assert_eq!(basic(got), Some(("x".to_string(), "y".to_string())));
    }

    #[test]
    fn the_environment_wins_and_needs_both_variables() {
        let dir = config(r#"{"auths": {"r.io": {"auth": "eDp5"}}}"#);
        let path = dir.path().join("config.json");
        let both = env(&[(USERNAME_ENV, "u"), (PASSWORD_ENV, "p")]);
        let got = lookup("r.io", &both, Some(&path)).unwrap();
        assert_eq!(basic(got), Some(("u".to_string(), "p".to_string())));
        let e = lookup("r.io", &env(&[(USERNAME_ENV, "u")]), Some(&path)).unwrap_err();
        assert!(e.message.contains("only one of"), "{e}");
    }

    #[test]
    fn no_file_is_anonymous_and_a_broken_one_is_an_input_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("config.json");
        assert!(matches!(
            lookup("r.io", &env(&[]), Some(&missing)).unwrap(),
            RegistryAuth::Anonymous
        ));
        let broken = config("{");
        let e = lookup("r.io", &env(&[]), Some(&broken.path().join("config.json"))).unwrap_err();
        assert!(e.message.contains("not JSON"), "{e}");
        let bad = config(r#"{"auths": {"r.io": {"auth": "bm8gY29sb24="}}}"#);
        let e = lookup("r.io", &env(&[]), Some(&bad.path().join("config.json"))).unwrap_err();
        assert!(e.message.contains("user:password"), "{e}");
    }

    #[test]
    fn docker_config_wins_over_home() {
        let got = config_path(&env(&[("DOCKER_CONFIG", "/d"), ("HOME", "/h")]));
        assert_eq!(got, Some(PathBuf::from("/d/config.json")));
        let got = config_path(&env(&[("HOME", "/h")]));
        assert_eq!(got, Some(PathBuf::from("/h/.docker/config.json")));
    }
}
