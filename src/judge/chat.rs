//! The chat-completions transport (book: judge.md): a judge behind any OpenAI-compatible endpoint
//! (OpenAI, GitHub Models, a local Ollama or vLLM server), asked over HTTP with `reqwest` on a
//! `tokio` runtime of its own, as the rest of the program is synchronous.
//!
//! In: the judge's [`JudgeSpec`] (`url`, `model`, the name of the environment variable holding
//! the API key, the per-criterion `timeout`, the `concurrency`) and the requests. Out: one
//! [`Reply`] per request, in the requests' order: the message content as the judge wrote it
//! (the engine reads it, code fences and leading prose included), or why there is none.
//!
//! Steps, per criterion (up to `concurrency` at once; the timeout starts when a criterion's
//! turn comes, not while it waits for one):
//! 1. the request JSON goes as the user message, after a system message that says what the
//!    judge must do and the exact response schema; `temperature: 0`, and JSON output asked for
//!    with `response_format: {"type": "json_object"}`;
//! 2. a server that rejects `response_format` (a 400 that names it) is asked once more without
//!    it, and so is every later criterion of the run;
//! 3. 429, 5xx and connection errors are retried with exponential backoff and jitter, or after
//!    the server's `Retry-After` (seconds or an HTTP date), up to [`Retry::attempts`] attempts
//!    and never past the criterion's timeout, so an endpoint failing throughout ends in a
//!    bounded time;
//! 4. a 2xx answer gives `choices[0].message.content` and the token usage; a refusal, no
//!    choices, no content, a body that is not a chat completion, any other status, or the
//!    timeout gives [`Reply::Failed`] with the HTTP status and a bounded excerpt of what the
//!    server said (never the key).

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::{
    HeaderMap, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER, USER_AGENT,
};
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::Semaphore;

use super::{Ask, Identity, JudgeSpec, Reply, Transport, Usage};
use crate::error::InputError;
use crate::format::judge::Request;

/// What the judge is told to do, and the exact shape of its answer. The request comes as the
/// user message; OpenAI's JSON mode also wants the word "JSON" in the messages, which this has.
pub const SYSTEM_PROMPT: &str = concat!(
    "You are a code reviewer acting as the judge of Shipmoor Claim Check. ",
    "The user message is one JSON request (schema \"claim_check.judge.request.v1\"): an ",
    "acceptance criterion (`criterion.ac`), the commits `base` and `head` of a change, the files ",
    "it changes, its unified diff base..head (`diff`, cut short when `diff_truncated` is true) ",
    "and what the floor (the tests bound to the criterion) found.\n\n",
    "Your one job: find a divergence between the criterion and the code at `head` that the ",
    "floor cannot see, and point at it; or say honestly that you cannot decide. You never pass ",
    "a criterion: the only decisions are \"block\" and \"abstain\".\n\n",
    "1. Decompose the criterion into obligations. Give each a status (\"met\", \"divergent\" or ",
    "\"unclear\") and a citation into the code at head: `path` relative to the repository root, ",
    "`line` the 1-based line number in that file at head (the diff's hunk headers give head's ",
    "line numbers), and `quote` copied exactly from that line.\n",
    "2. Answer \"block\" only when an obligation is clearly divergent, with `pointer` the ",
    "citation of the divergence. Every citation is checked against the head tree: a block whose ",
    "pointer does not resolve counts as an abstention, and when most of your citations do not ",
    "resolve, all your blocks are discarded.\n",
    "3. Otherwise answer \"abstain\", saying in `rationale` what a human should look at.\n",
    "4. Echo `base` and `head` exactly as the request gives them.\n\n",
    "Reply with one JSON object and nothing else (no prose, no code fence), of this shape:\n",
    "{\"schema\": \"claim_check.judge.response.v1\", \"base\": \"<base>\", \"head\": \"<head>\", ",
    "\"decision\": \"block\" or \"abstain\", \"rationale\": \"<one or two sentences>\", ",
    "\"pointer\": {\"path\": \"src/refund.py\", \"line\": 42, \"quote\": \"return order\"} or null, ",
    "\"obligations\": [{\"text\": \"<what the criterion requires>\", \"status\": \"divergent\", ",
    "\"citation\": {\"path\": \"src/refund.py\", \"line\": 42, \"quote\": \"return order\"}}]}"
);

/// Time allowed to open a connection (TCP and TLS), within the criterion's timeout.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a response body read; a chat completion is a few kilobytes.
pub const MAX_BODY_BYTES: usize = 4 << 20;
/// The most of a server's words quoted in a reason.
const EXCERPT_CHARS: usize = 300;

/// How failing attempts are retried (429, 5xx, connection errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Attempts in all, the first included (at least 1).
    pub attempts: u32,
    /// The backoff before the second attempt; it doubles each time, up to `max_backoff`, and is
    /// jittered down to half so that criteria failing together do not retry together.
    pub base_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            attempts: 4,
            base_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(20),
        }
    }
}

impl Retry {
    /// The wait before attempt `failed + 1`, after `failed` failed attempts, without a
    /// `Retry-After`.
    fn backoff(&self, failed: u32) -> Duration {
        let doubled = self
            .base_backoff
            .saturating_mul(1u32 << failed.saturating_sub(1).min(16));
        let capped = doubled.min(self.max_backoff);
        capped.mul_f64(0.5 + 0.5 * unit_random())
    }
}

/// A chat-completions judge, ready to ask.
#[derive(Debug, Clone)]
pub struct ChatJudge {
    inner: Arc<Inner>,
}

struct Inner {
    url: String,
    model: String,
    /// Read from the environment when the judge is built; never written anywhere (excerpts
    /// of what a server says have it taken out).
    api_key: Option<String>,
    /// `Bearer <key>`, marked sensitive so that no debug output of a request shows it.
    authorization: Option<HeaderValue>,
    timeout: Duration,
    connect_timeout: Duration,
    concurrency: usize,
    retry: Retry,
    /// Cleared once the server rejects `response_format`, so later criteria do not ask again.
    json_mode: AtomicBool,
}

/// Written out without the key, so that a judge in a debug message or a panic shows none.
impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatJudge")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("concurrency", &self.concurrency)
            .field("retry", &self.retry)
            .field("json_mode", &self.json_mode)
            .finish()
    }
}

impl ChatJudge {
    /// The judge a chat-completions spec configures, its key read from the environment
    /// variable `api_key_env` names.
    pub fn from_spec(spec: &JudgeSpec) -> Result<ChatJudge, InputError> {
        ChatJudge::from_spec_with_env(spec, |name| std::env::var(name).ok())
    }

    /// As [`ChatJudge::from_spec`], with the environment looked up through `env`.
    pub fn from_spec_with_env(
        spec: &JudgeSpec,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<ChatJudge, InputError> {
        let Transport::Chat {
            url,
            model,
            api_key_env,
        } = &spec.transport
        else {
            return Err(InputError::new(format!(
                "the judge `{}` is a command, not a chat-completions endpoint",
                spec.name
            ))
            .at(&spec.file, spec.line, 1)
            .help("give the judge `url`, `model` and `api_key_env` instead of `command`"));
        };
        let api_key = match api_key_env {
            None => None,
            Some(var) => match env(var).filter(|key| !key.trim().is_empty()) {
                Some(key) => Some(key.trim().to_string()),
                None => {
                    return Err(InputError::new(format!(
                        "the judge `{}` reads its API key from the environment variable `{var}`, \
                         which is not set (or is empty)",
                        spec.name
                    ))
                    .at(&spec.file, spec.line, 1)
                    .help(format!(
                        "set `{var}` in the environment that runs shipmoor (in GitHub Actions: \
                         `env: {var}: ${{{{ secrets.{var} }}}}`), or remove `api_key_env` for an \
                         endpoint that needs no key"
                    )));
                }
            },
        };
        let authorization = match &api_key {
            None => None,
            Some(key) => match HeaderValue::from_str(&format!("Bearer {key}")) {
                Ok(mut value) => {
                    value.set_sensitive(true);
                    Some(value)
                }
                Err(_) => {
                    let var = api_key_env.as_deref().unwrap_or_default();
                    return Err(InputError::new(format!(
                        "the API key in the environment variable `{var}` (for the judge `{}`) \
                         has characters an HTTP header cannot carry",
                        spec.name
                    ))
                    .at(&spec.file, spec.line, 1)
                    .help(format!(
                        "set `{var}` to the key alone, as the provider gives it"
                    )));
                }
            },
        };
        Ok(ChatJudge {
            inner: Arc::new(Inner {
                url: url.clone(),
                model: model.clone(),
                api_key,
                authorization,
                timeout: spec.timeout,
                connect_timeout: CONNECT_TIMEOUT.min(spec.timeout),
                concurrency: spec.concurrency.max(1),
                retry: Retry::default(),
                json_mode: AtomicBool::new(true),
            }),
        })
    }

    /// The same judge with another retry policy (tests and benches shorten the backoff).
    pub fn with_retry(self, retry: Retry) -> ChatJudge {
        let inner = &self.inner;
        ChatJudge {
            inner: Arc::new(Inner {
                url: inner.url.clone(),
                model: inner.model.clone(),
                api_key: inner.api_key.clone(),
                authorization: inner.authorization.clone(),
                timeout: inner.timeout,
                connect_timeout: inner.connect_timeout,
                concurrency: inner.concurrency,
                retry: Retry {
                    attempts: retry.attempts.max(1),
                    ..retry
                },
                json_mode: AtomicBool::new(inner.json_mode.load(Ordering::Relaxed)),
            }),
        }
    }

    /// Asks about every request, up to `concurrency` at once, on the caller's runtime; the
    /// replies come in the requests' order.
    pub async fn ask_all_async(&self, requests: &[Request]) -> Vec<Reply> {
        let client = match reqwest::Client::builder()
            .connect_timeout(self.inner.connect_timeout)
            .build()
        {
            Ok(client) => client,
            Err(e) => {
                return failed_all(
                    requests,
                    &format!("the HTTP client could not be set up: {e}"),
                )
            }
        };
        let turns = Arc::new(Semaphore::new(self.inner.concurrency));
        let tasks: Vec<_> = requests
            .iter()
            .map(|request| {
                let inner = Arc::clone(&self.inner);
                let client = client.clone();
                let turns = Arc::clone(&turns);
                let request = request.clone();
                tokio::spawn(async move {
                    // The semaphore is never closed, so acquiring only fails if it were.
                    let Ok(_turn) = turns.acquire_owned().await else {
                        return Reply::Failed {
                            reason: "the run ended before this criterion's turn".to_string(),
                        };
                    };
                    inner.ask_one(&client, &request).await
                })
            })
            .collect();
        let mut replies = Vec::with_capacity(tasks.len());
        for task in tasks {
            replies.push(task.await.unwrap_or_else(|e| Reply::Failed {
                reason: format!("asking the judge failed inside shipmoor: {e}"),
            }));
        }
        replies
    }
}

impl ChatJudge {
    /// One question outside a run's criteria (the proposals of `acceptance derive --judge`):
    /// `user` under `system`, blocking on a runtime of its own, with the endpoint's usual
    /// retries and timeout.
    pub fn ask_once(&self, system: &str, user: &str) -> Reply {
        let ask = || -> Reply {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    return Reply::Failed {
                        reason: format!("the judge's async runtime could not start: {e}"),
                    }
                }
            };
            runtime.block_on(async {
                match reqwest::Client::builder()
                    .connect_timeout(self.inner.connect_timeout)
                    .build()
                {
                    Ok(client) => self.inner.ask_text(&client, system, user).await,
                    Err(e) => Reply::Failed {
                        reason: format!("the HTTP client could not be set up: {e}"),
                    },
                }
            })
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            return std::thread::scope(|scope| {
                scope.spawn(ask).join().unwrap_or_else(|_| Reply::Failed {
                    reason: "asking the judge failed inside shipmoor".to_string(),
                })
            });
        }
        ask()
    }
}

impl Ask for ChatJudge {
    fn identity(&self) -> Identity {
        Identity::Chat {
            url: self.inner.url.clone(),
            model: self.inner.model.clone(),
        }
    }

    /// Blocks on a runtime of its own: one thread is enough, as every criterion mostly waits
    /// on the network. A caller already inside a tokio runtime (where blocking on another one
    /// would panic) gets the same on a thread of its own.
    fn ask_all(&self, requests: &[Request]) -> Vec<Reply> {
        if requests.is_empty() {
            return Vec::new();
        }
        if tokio::runtime::Handle::try_current().is_ok() {
            return std::thread::scope(|scope| {
                scope
                    .spawn(|| self.block_on_all(requests))
                    .join()
                    .unwrap_or_else(|_| {
                        failed_all(requests, "asking the judge failed inside shipmoor")
                    })
            });
        }
        self.block_on_all(requests)
    }
}

impl ChatJudge {
    fn block_on_all(&self, requests: &[Request]) -> Vec<Reply> {
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime.block_on(self.ask_all_async(requests)),
            Err(e) => failed_all(
                requests,
                &format!("the judge's async runtime could not start: {e}"),
            ),
        }
    }
}

fn failed_all(requests: &[Request], reason: &str) -> Vec<Reply> {
    requests
        .iter()
        .map(|_| Reply::Failed {
            reason: reason.to_string(),
        })
        .collect()
}

/// What one attempt came to.
enum Attempt {
    /// A 2xx status and its body.
    Answered { body: Vec<u8> },
    /// Worth another attempt (429, 5xx, a connection error): why, and the server's
    /// `Retry-After` when it gave one.
    Transient {
        reason: String,
        retry_after: Option<Duration>,
    },
    /// A 400 that names `response_format`: the server does not take JSON mode.
    JsonModeRejected { reason: String },
    /// No point in asking again.
    Final { reason: String },
}

impl Inner {
    async fn ask_one(&self, client: &reqwest::Client, request: &Request) -> Reply {
        match serde_json::to_string(request) {
            Ok(user) => self.ask_text(client, SYSTEM_PROMPT, &user).await,
            Err(e) => Reply::Failed {
                reason: format!("the request could not be written as JSON: {e}"),
            },
        }
    }

    /// `user` as the user message under `system`: the retries, the timeout and the JSON-mode
    /// fallback of every question to the endpoint.
    async fn ask_text(&self, client: &reqwest::Client, system: &str, user: &str) -> Reply {
        let started = Instant::now();
        let deadline = started + self.timeout;
        let mut failed = 0u32;
        let mut json_fallback_tried = false;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Reply::Failed {
                    reason: self.timed_out(),
                };
            }
            let json_mode = self.json_mode.load(Ordering::Relaxed);
            let attempt = self.attempt(client, system, user, json_mode, left).await;
            let (reason, retry_after) = match attempt {
                Attempt::Answered { body } => return self.read_completion(&body),
                Attempt::Final { reason } => return Reply::Failed { reason },
                Attempt::JsonModeRejected { reason } => {
                    if json_mode && !json_fallback_tried {
                        // Not a failure of the endpoint: ask again, as plainly, at once.
                        json_fallback_tried = true;
                        self.json_mode.store(false, Ordering::Relaxed);
                        continue;
                    }
                    return Reply::Failed { reason };
                }
                Attempt::Transient {
                    reason,
                    retry_after,
                } => (reason, retry_after),
            };
            failed += 1;
            if failed >= self.retry.attempts {
                return Reply::Failed {
                    reason: format!("{reason} (gave up after {failed} attempts)"),
                };
            }
            // Never sooner than the server asked; a little later so that criteria it turned
            // away together do not all come back in the same instant.
            let wait = match retry_after {
                Some(after) => after.mul_f64(1.0 + 0.1 * unit_random()),
                None => self.retry.backoff(failed),
            };
            if Instant::now() + wait >= deadline {
                return Reply::Failed {
                    reason: format!(
                        "{reason} (gave up after {failed} attempts: the next one, in {}, would \
                         pass the {} timeout)",
                        seconds(wait),
                        seconds(self.timeout)
                    ),
                };
            }
            tokio::time::sleep(wait).await;
        }
    }

    /// One POST, bounded by what is left of the criterion's timeout.
    async fn attempt(
        &self,
        client: &reqwest::Client,
        system: &str,
        user: &str,
        json_mode: bool,
        left: Duration,
    ) -> Attempt {
        let mut payload = json!({
            "model": self.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        });
        if json_mode {
            payload["response_format"] = json!({"type": "json_object"});
        }
        let mut post = client
            .post(&self.url)
            .timeout(left)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .header(
                USER_AGENT,
                concat!("shipmoor-claim-check/", env!("CARGO_PKG_VERSION")),
            )
            .body(payload.to_string());
        if let Some(authorization) = &self.authorization {
            post = post.header(AUTHORIZATION, authorization.clone());
        }
        let response = match post.send().await {
            Ok(response) => response,
            Err(e) => return self.transport_error(&e),
        };
        let status = response.status();
        let retry_after = retry_after(response.headers(), SystemTime::now());
        let body = match read_bounded(response).await {
            Ok(body) => body,
            Err(BodyError::TooLarge) => {
                return Attempt::Final {
                    reason: format!(
                        "HTTP {status}: the response is over {} MiB",
                        MAX_BODY_BYTES >> 20
                    ),
                }
            }
            Err(BodyError::Http(e)) => return self.transport_error(&e),
        };
        if status.is_success() {
            return Attempt::Answered { body };
        }
        let reason = format!("HTTP {}: {}", status, self.excerpt(&error_text(&body)));
        if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
            return Attempt::Transient {
                reason,
                retry_after,
            };
        }
        if status == StatusCode::BAD_REQUEST
            && String::from_utf8_lossy(&body)
                .to_ascii_lowercase()
                .contains("response_format")
        {
            return Attempt::JsonModeRejected { reason };
        }
        Attempt::Final { reason }
    }

    fn transport_error(&self, e: &reqwest::Error) -> Attempt {
        if e.is_timeout() {
            return Attempt::Final {
                reason: self.timed_out(),
            };
        }
        if e.is_builder() {
            // The request itself cannot be made (a URL that is not one): asking again would
            // not help.
            return Attempt::Final {
                reason: self.excerpt(&format!(
                    "no request could be made to `{}`: {}",
                    self.url,
                    error_chain(e)
                )),
            };
        }
        // Connection refused or reset, TLS failures, a body cut short: the network, not the
        // judge, so worth another attempt. The URL is the spec's own; the key is never in it.
        Attempt::Transient {
            reason: self.excerpt(&format!("no answer from {}: {}", self.url, error_chain(e))),
            retry_after: None,
        }
    }

    fn timed_out(&self) -> String {
        format!("timeout after {}", seconds(self.timeout))
    }

    /// `choices[0].message.content` and the usage, or why there is no answer.
    fn read_completion(&self, body: &[u8]) -> Reply {
        let completion: Completion = match serde_json::from_slice(body) {
            Ok(completion) => completion,
            Err(e) => {
                return Reply::Failed {
                    reason: format!(
                        "HTTP 200, but the body is not a chat completion ({e}): {}",
                        self.excerpt(&String::from_utf8_lossy(body))
                    ),
                }
            }
        };
        if let Some(error) = completion.error {
            return Reply::Failed {
                reason: format!(
                    "HTTP 200 with an error: {}",
                    self.excerpt(&error_value_text(&error))
                ),
            };
        }
        let usage = completion.usage.and_then(WireUsage::usage);
        let Some(choice) = completion.choices.into_iter().next() else {
            return Reply::Failed {
                reason: "the endpoint answered with no choices".to_string(),
            };
        };
        let finish = choice
            .finish_reason
            .map(|r| format!(" (finish_reason: {r})"))
            .unwrap_or_default();
        let Some(message) = choice.message else {
            return Reply::Failed {
                reason: format!("the endpoint's first choice has no message{finish}"),
            };
        };
        if let Some(refusal) = message.refusal.filter(|r| !r.trim().is_empty()) {
            return Reply::Failed {
                reason: format!("the model refused: {}", self.excerpt(&refusal)),
            };
        }
        let content = message
            .content
            .as_ref()
            .map(content_text)
            .unwrap_or_default();
        if content.trim().is_empty() {
            return Reply::Failed {
                reason: format!("the endpoint's answer has no content{finish}"),
            };
        }
        Reply::Answer {
            body: content.into_bytes(),
            usage,
        }
    }

    /// A bounded, single-line excerpt of what a server said, the key taken out should a server
    /// echo it back.
    fn excerpt(&self, text: &str) -> String {
        let mut text = text.to_string();
        if let Some(key) = &self.api_key {
            text = text.replace(key.as_str(), "<api key>");
        }
        let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if flat.is_empty() {
            return "(empty body)".to_string();
        }
        match flat.char_indices().nth(EXCERPT_CHARS) {
            Some((cut, _)) => format!("{}…", &flat[..cut]),
            None => flat,
        }
    }
}

/// The parts of a chat completion the judge reads; everything else is ignored.
#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// Some gateways answer 200 with an error object.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    /// A string, or (some servers) a list of content parts.
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    refusal: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
}

impl WireUsage {
    fn usage(self) -> Option<Usage> {
        if self.prompt_tokens.is_none() && self.completion_tokens.is_none() {
            return None;
        }
        Some(Usage {
            prompt_tokens: self.prompt_tokens.unwrap_or(0),
            completion_tokens: self.completion_tokens.unwrap_or(0),
        })
    }
}

/// A message's text: the string itself, or the text parts of a list, joined.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| match part {
                Value::String(text) => Some(text.as_str()),
                _ => part.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// The message of an OpenAI-style error body (`{"error": {"message": ...}}`), else the body.
fn error_text(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<Value>(body) {
        if let Some(error) = value.get("error") {
            return error_value_text(error);
        }
    }
    String::from_utf8_lossy(body).into_owned()
}

fn error_value_text(error: &Value) -> String {
    match error.get("message").and_then(Value::as_str) {
        Some(message) => message.to_string(),
        None => match error {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        },
    }
}

/// A reqwest error with its causes (the top level alone often says only "error sending
/// request").
fn error_chain(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

enum BodyError {
    TooLarge,
    Http(reqwest::Error),
}

async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, BodyError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Http)? {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The wait a `Retry-After` header asks for: delay-seconds, or an HTTP date (RFC 9110's
/// IMF-fixdate) counted from `now`. A date already past means "now".
fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    parse_retry_after(headers.get(RETRY_AFTER)?.to_str().ok()?, now)
}

/// See [`retry_after`].
fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        return value.parse::<u64>().ok().map(Duration::from_secs);
    }
    let format = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    let at = time::PrimitiveDateTime::parse(value, format)
        .ok()?
        .assume_utc();
    let now = time::OffsetDateTime::from(now);
    let wait = at - now;
    Some(if wait.is_negative() {
        Duration::ZERO
    } else {
        wait.unsigned_abs()
    })
}

/// A number in [0, 1) for jitter; not for anything that needs to be unpredictable.
fn unit_random() -> f64 {
    // Each RandomState is seeded afresh, so hashing nothing gives a new value every call.
    let bits = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// `120 s`, `0.5 s`.
fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

#[cfg(test)]
#[path = "chat_tests.rs"]
mod tests;
