//! The part of GitHub's REST API client the Action's steps share: the token in the
//! `Authorization` header only (marked sensitive, so never printed), HTTPS (plain HTTP only to
//! loopback, where the tests' API listens), no redirects (one could carry the token elsewhere),
//! GitHub's media type and API version, and GitHub's own message read from an error answer.

use std::time::Duration;

use serde_json::Value;

const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

/// A request that did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// GitHub answered with an error status.
    Status {
        what: &'static str,
        status: u16,
        message: String,
        /// The rate limit is spent: a 403 that says nothing about the token's permissions.
        rate_limited: bool,
    },
    /// No answer, or one that is not what the API sends.
    Transport { what: &'static str, error: String },
}

impl std::fmt::Display for Failure {
    /// `HTTP 404 (Not Found)`, or what went wrong on the way; never the token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Status {
                status, message, ..
            } => write!(f, "HTTP {status} ({message})"),
            Failure::Transport { error, .. } => f.write_str(error),
        }
    }
}

/// The REST API, with the token.
pub struct Api {
    pub(super) base: String,
    pub(super) client: reqwest::Client,
    pub(super) runtime: tokio::runtime::Runtime,
}

/// Why no client for GitHub's API was made. Never carries the token.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("GITHUB_API_URL `{base}` is not a URL: {source}")]
    Url {
        base: String,
        source: <reqwest::Url as std::str::FromStr>::Err,
    },
    /// Not HTTPS, and not a loopback address (the URL as given).
    #[error("GITHUB_API_URL `{0}` is not HTTPS, and the token is not sent in the clear")]
    NotHttps(String),
    #[error("the token is not a header value (a line break or a control character in it)")]
    Token,
    #[error("the HTTP client: {0}")]
    Client(reqwest::Error),
    #[error("the async runtime: {0}")]
    Runtime(std::io::Error),
}

impl Api {
    /// A client for `api_url` (`GITHUB_API_URL`) sending `token`; `Err` says why not, without
    /// the token.
    pub fn new(api_url: &str, token: &str) -> Result<Api, ApiError> {
        let base = api_url.trim().trim_end_matches('/').to_string();
        let url = reqwest::Url::parse(&base).map_err(|source| ApiError::Url {
            base: base.clone(),
            source,
        })?;
        let loopback = url.host_str().is_some_and(|h| {
            h == "localhost"
                || h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        });
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            _ => return Err(ApiError::NotHttps(base)),
        }
        let mut auth = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| ApiError::Token)?;
        auth.set_sensitive(true);
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::AUTHORIZATION, auth);
        headers.insert(
            reqwest::header::ACCEPT,
            reqwest::header::HeaderValue::from_static("application/vnd.github+json"),
        );
        headers.insert(
            "x-github-api-version",
            reqwest::header::HeaderValue::from_static("2022-11-28"),
        );
        let client = reqwest::Client::builder()
            .user_agent(concat!("shipmoor/", env!("CARGO_PKG_VERSION")))
            .default_headers(headers)
            .timeout(HTTP_TIMEOUT)
            // A redirect could carry the token elsewhere; GitHub's API answers where it is asked.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(ApiError::Client)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ApiError::Runtime)?;
        Ok(Api {
            base,
            client,
            runtime,
        })
    }

    /// `GET` of `path` (from `/repos/…`), waiting for the answer.
    pub fn get<T: serde::de::DeserializeOwned>(
        &self,
        what: &'static str,
        path: &str,
    ) -> Result<T, Failure> {
        let url = format!("{}{path}", self.base);
        self.runtime.block_on(self.send(what, self.client.get(url)))
    }

    /// Sends `request`; the answer read as `T`, or why not (`what` names the request).
    pub(super) async fn send<T: serde::de::DeserializeOwned>(
        &self,
        what: &'static str,
        request: reqwest::RequestBuilder,
    ) -> Result<T, Failure> {
        let transport = |error: String| Failure::Transport { what, error };
        let response = request
            .send()
            .await
            .map_err(|e| transport(e.without_url().to_string()))?;
        let status = response.status();
        let rate_limited = response
            .headers()
            .get("x-ratelimit-remaining")
            .is_some_and(|v| v.as_bytes() == b"0");
        let bytes = response
            .bytes()
            .await
            .map_err(|e| transport(format!("reading the answer: {}", e.without_url())))?;
        if !status.is_success() {
            return Err(Failure::Status {
                what,
                status: status.as_u16(),
                message: github_message(&bytes),
                rate_limited,
            });
        }
        serde_json::from_slice(&bytes)
            .map_err(|e| transport(format!("the answer is not the API's JSON: {e}")))
    }
}

/// GitHub's `message` from an error answer, on one line and short.
pub(super) fn github_message(bytes: &[u8]) -> String {
    let text = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(bytes).into_owned());
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return "no message".to_string();
    }
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}
