//! Keyless signing: a Fulcio certificate for the job's OIDC identity, the signature logged in
//! Rekor (see [`super`], steps 1 to 3).

use sigstore_oidc::reqwest;
use sigstore_oidc::IdentityToken;
use sigstore_sign::{SigningContext, SigningServices};

use super::{
    SigstoreError, TokenRequest, HTTP_TIMEOUT, OIDC_AUDIENCE, PUBLIC_GOOD_FULCIO, PUBLIC_GOOD_REKOR,
};

/// Where keyless signing sends its requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Services {
    /// Fulcio (certificates), e.g. `https://fulcio.sigstore.dev`.
    pub fulcio_url: String,
    /// Rekor, API v1 (the transparency log), e.g. `https://rekor.sigstore.dev`.
    pub rekor_url: String,
    /// An RFC 3161 timestamp authority's endpoint, when timestamps are wanted.
    pub tsa_url: Option<String>,
}

impl Default for Services {
    /// The Sigstore public-good Fulcio and Rekor, without a timestamp authority.
    fn default() -> Services {
        Services {
            fulcio_url: PUBLIC_GOOD_FULCIO.to_string(),
            rekor_url: PUBLIC_GOOD_REKOR.to_string(),
            tsa_url: None,
        }
    }
}

/// Signs an in-toto statement keyless: returns the bundle v0.3 JSON (see the module
/// documentation for the steps).
pub fn sign_keyless(
    statement: &[u8],
    token: &str,
    urls: &Services,
) -> Result<String, SigstoreError> {
    // 1. The token's claims.
    let token = IdentityToken::from_jwt(token.trim()).map_err(SigstoreError::Token)?;
    if token.is_expired() {
        return Err(SigstoreError::Expired(token.expiration().to_string()));
    }

    // 2. Certificate, signature, log entry (and timestamp).
    let mut services = SigningServices::new(&urls.fulcio_url, &urls.rekor_url);
    if let Some(tsa) = &urls.tsa_url {
        services = services.with_tsa_url(tsa);
    }
    let signer = SigningContext::new(services).signer(token);
    let bundle = runtime()?
        .block_on(signer.sign_raw_statement(statement))
        .map_err(SigstoreError::Sign)?;

    // 3. The bundle's JSON.
    bundle.to_json_pretty().map_err(SigstoreError::Serialize)
}

/// The ambient OIDC identity token, if this environment has one (see the module documentation).
pub fn ambient_token() -> Result<Option<String>, SigstoreError> {
    ambient_token_from(&|name| std::env::var(name).ok())
}

/// [`ambient_token`] with the environment given as a lookup function (a seam for tests).
pub fn ambient_token_from(
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, SigstoreError> {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    // 1. An explicit token.
    if let Some(token) = var("SIGSTORE_ID_TOKEN") {
        return Ok(Some(token.trim().to_string()));
    }
    // 2. GitHub Actions with `permissions: id-token: write`.
    match (
        var("ACTIONS_ID_TOKEN_REQUEST_URL"),
        var("ACTIONS_ID_TOKEN_REQUEST_TOKEN"),
    ) {
        (Some(url), Some(bearer)) => github_actions_token(&url, &bearer).map(Some),
        // 3. No identity.
        _ => Ok(None),
    }
}

/// Asks the Actions token service for a token with the `sigstore` audience. Errors never carry
/// the request token.
fn github_actions_token(request_url: &str, bearer: &str) -> Result<String, SigstoreError> {
    let separator = if request_url.contains('?') { '&' } else { '?' };
    let url = format!("{request_url}{separator}audience={OIDC_AUDIENCE}");
    let body = runtime()?
        .block_on(async {
            let client = reqwest::Client::builder()
                .timeout(HTTP_TIMEOUT)
                .build()
                .map_err(TokenRequest::Client)?;
            let response = client
                .get(&url)
                .header(reqwest::header::AUTHORIZATION, format!("bearer {bearer}"))
                .header(reqwest::header::ACCEPT, "application/json")
                .send()
                .await
                .map_err(|e| TokenRequest::Send(e.without_url()))?;
            let status = response.status();
            if !status.is_success() {
                return Err(TokenRequest::Status(status));
            }
            response
                .text()
                .await
                .map_err(|e| TokenRequest::Read(e.without_url()))
        })
        .map_err(SigstoreError::TokenRequest)?;
    let answer: serde_json::Value = serde_json::from_str(&body)
        .map_err(|e| SigstoreError::TokenRequest(TokenRequest::Json(e)))?;
    match answer.get("value").and_then(serde_json::Value::as_str) {
        Some(jwt) if !jwt.trim().is_empty() => Ok(jwt.trim().to_string()),
        _ => Err(SigstoreError::TokenRequest(TokenRequest::NoValue)),
    }
}

/// A current-thread runtime for the crates' async clients.
fn runtime() -> Result<tokio::runtime::Runtime, SigstoreError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(SigstoreError::Runtime)
}
