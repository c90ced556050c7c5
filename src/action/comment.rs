//! The Action's pull request comment (`comment: true`): one sticky comment per pull request and
//! job, updated in place on every run.
//!
//! In: the run's result document, the event payload (`GITHUB_EVENT_PATH`), the repository
//! (`GITHUB_REPOSITORY`), the REST API's address (`GITHUB_API_URL`), a token (`GITHUB_TOKEN`) and
//! what names the job (the workflow, the job's id, the working directory). Out: one line for the
//! job log: what was posted or updated, or a `::notice`/`::warning` saying why nothing was.
//!
//! Steps:
//! 1. Where: the event's pull request and the repository; no pull request, no comment.
//! 2. Whether: a fork's pull request on `pull_request` gets a read-only token; skipped, saying
//!    where the verdict is instead.
//! 3. Find: the issue comments, page by page, and the first whose body starts with this job's
//!    hidden marker (a digest of the workflow, the job and the working directory, so two claim
//!    check jobs keep two comments; a comment that only quotes the marker is not ours).
//! 4. Write: PATCH that comment, else POST a new one, the body cut to GitHub's limit.
//!
//! Nothing here fails the job: the verdict's gate is its own step. A token that may not read or
//! write the pull request's comments (HTTP 403 or 404) is a notice; any other failure a
//! warning with the status and GitHub's own message. The token is sent only in the
//! `Authorization` header, never printed, and never over plain HTTP except to loopback.

use serde::Deserialize;
use serde_json::Value;

use super::escape_data;
#[cfg(test)]
use super::rest::github_message;
use super::rest::{Api, Failure};

/// GitHub's limit for a comment's body, in characters.
pub const BODY_LIMIT: usize = 65_536;
/// Comments asked for per page (GitHub's maximum).
pub const PER_PAGE: usize = 100;
/// Pages read before giving up: 10,000 comments.
const MAX_PAGES: usize = 100;
const TITLE: &str = "Claim Check";

/// The pull request to comment on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `owner/name`.
    pub repo: String,
    pub number: u64,
}

/// Why no comment is posted, before any request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    /// The event is not about a pull request.
    NoPullRequest { event: String },
    /// A fork's pull request on `pull_request`: the token is read-only.
    Fork { head: String, base: String },
    /// The repository is not `owner/name`.
    NoRepository,
}

impl Skip {
    pub fn notice(&self) -> String {
        let text = match self {
            Skip::NoPullRequest { event } => format!(
                "no pull request comment: the `{event}` event is about no pull request (the verdict is in the job summary)"
            ),
            Skip::Fork { head, base } => format!(
                "no pull request comment: this pull request comes from the fork {head}, not {base}, and a fork's pull request gets a read-only token on `pull_request`; the verdict is in the job summary (to comment, run the check on `pull_request_target`, whose token may write; it runs the fork's tests in a job that holds that token)"
            ),
            Skip::NoRepository => "no pull request comment: GITHUB_REPOSITORY names no `owner/name`".to_string(),
        };
        format!("::notice title={TITLE}::{}", escape_data(&text))
    }
}

/// The pull request of `event` (named `event_name`), in `repository` (`GITHUB_REPOSITORY`; the
/// event's own repository when unset).
pub fn target(event: &Value, event_name: &str, repository: Option<&str>) -> Result<Target, Skip> {
    let no_pull_request = || Skip::NoPullRequest {
        event: if event_name.is_empty() {
            "unknown".to_string()
        } else {
            event_name.to_string()
        },
    };
    let pr = event.get("pull_request").ok_or_else(no_pull_request)?;
    let number = pr
        .get("number")
        .or_else(|| event.get("number"))
        .and_then(Value::as_u64)
        .ok_or_else(no_pull_request)?;
    let full_name = |v: Option<&Value>| {
        v.and_then(|v| v.pointer("/full_name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let base = full_name(pr.pointer("/base/repo"))
        .or_else(|| full_name(event.get("repository")))
        .or_else(|| repository.map(str::to_string))
        .unwrap_or_default();
    let repo = repository
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| base.clone());
    if !is_repository(&repo) {
        return Err(Skip::NoRepository);
    }
    // `pull_request_target` runs in the base repository with its token, forks included.
    if event_name != "pull_request_target" {
        // A deleted fork has a null head repository: a fork all the same.
        let head = full_name(pr.pointer("/head/repo")).unwrap_or_default();
        if !head.eq_ignore_ascii_case(&base) {
            return Err(Skip::Fork {
                head: if head.is_empty() {
                    "(a deleted repository)".to_string()
                } else {
                    head
                },
                base,
            });
        }
    }
    Ok(Target { repo, number })
}

/// `owner/name`, each part of the characters GitHub allows, so it is one path segment each.
fn is_repository(s: &str) -> bool {
    let ok = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    matches!(s.split_once('/'), Some((owner, name)) if ok(owner) && ok(name))
}

/// The hidden marker that finds this job's comment again: a digest of the workflow, the job's id
/// and the working directory (`./app/` and `app` are one directory).
pub fn marker(workflow: &str, job: &str, working_directory: &str) -> String {
    let dir = working_directory.trim();
    let dir = dir.strip_prefix("./").unwrap_or(dir).trim_end_matches('/');
    let dir = if dir.is_empty() { "." } else { dir };
    let id = crate::evidence::sha256_hex(format!("{workflow}\n{job}\n{dir}").as_bytes());
    format!("<!-- shipmoor-claim-check {} -->", &id[..16])
}

/// The comment's body: the marker first, then the report, cut at a line to fit GitHub's limit.
pub fn body(marker: &str, report: &str) -> String {
    let whole = format!("{marker}\n{report}");
    if whole.chars().count() <= BODY_LIMIT {
        return whole;
    }
    let note = "\n\n_This comment was cut to fit GitHub's limit of 65,536 characters; the whole report is in the job summary and in `verify.md` among the run's artifacts._\n";
    let keep = BODY_LIMIT - note.chars().count();
    let at = whole
        .char_indices()
        .nth(keep)
        .map_or(whole.len(), |(i, _)| i);
    // At a line, but never before the marker's own line.
    let end = whole[..at]
        .rfind('\n')
        .filter(|&i| i >= marker.len())
        .unwrap_or(at);
    format!("{}{note}", &whole[..end])
}

/// What the runner's environment says about where and how to comment.
pub struct Settings {
    pub api_url: String,
    pub repository: Option<String>,
    pub event_name: String,
    pub event: Value,
    pub token: Option<String>,
    pub marker: String,
}

impl Settings {
    /// From the environment GitHub gives a step; `working_directory` is the Action's input.
    pub fn from_env(working_directory: &str) -> Settings {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        // The workflow's file (`owner/repo/.github/workflows/x.yml@ref`, the ref dropped) outlives
        // a rename of its `name:`; GITHUB_WORKFLOW where the runner gives no reference.
        let workflow = var("GITHUB_WORKFLOW_REF")
            .map(|r| r.split('@').next().unwrap_or_default().to_string())
            .or_else(|| var("GITHUB_WORKFLOW"))
            .unwrap_or_default();
        let job = var("GITHUB_JOB").unwrap_or_default();
        Settings {
            api_url: var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".to_string()),
            repository: var("GITHUB_REPOSITORY"),
            event_name: var("GITHUB_EVENT_NAME").unwrap_or_default(),
            event: super::event().unwrap_or_default(),
            token: var("GITHUB_TOKEN").map(|t| t.trim().to_string()),
            marker: marker(&workflow, &job, working_directory),
        }
    }
}

/// Posts or updates the comment with `report`; returns the line for the job log.
pub fn run(settings: &Settings, report: &str) -> String {
    let target = match target(
        &settings.event,
        &settings.event_name,
        settings.repository.as_deref(),
    ) {
        Ok(t) => t,
        Err(skip) => return skip.notice(),
    };
    let Some(token) = settings.token.as_deref() else {
        return format!(
            "::notice title={TITLE}::{}",
            escape_data(
                "no pull request comment: no token (the Action's `github-token` input is empty)"
            )
        );
    };
    let api = match Api::new(&settings.api_url, token) {
        Ok(api) => api,
        Err(why) => {
            return format!(
                "::warning title={TITLE}::{}",
                escape_data(&format!("the pull request comment failed: {why}"))
            )
        }
    };
    let body = body(&settings.marker, report);
    match api.upsert(&target, &settings.marker, &body) {
        Ok(Written::Created(url)) => format!("Claim Check: posted the pull request comment {url}"),
        Ok(Written::Updated(url)) => {
            format!("Claim Check: updated the pull request comment {url}")
        }
        Err(f) => f.annotation(&target),
    }
}

/// What was written.
#[derive(Debug)]
pub enum Written {
    Created(String),
    Updated(String),
}

impl Failure {
    fn annotation(&self, target: &Target) -> String {
        let pr = format!("{}#{}", target.repo, target.number);
        match self {
            Failure::Status {
                what,
                status: status @ (403 | 404),
                message,
                rate_limited: false,
            } => format!(
                "::notice title={TITLE}::{}",
                escape_data(&format!(
                    "no pull request comment: {what} {pr}'s comments answered HTTP {status} ({message}): the token may not write to this pull request (give the job `permissions: pull-requests: write`); the verdict is in the job summary"
                ))
            ),
            Failure::Status {
                what,
                status,
                message,
                ..
            } => format!(
                "::warning title={TITLE}::{}",
                escape_data(&format!(
                    "the pull request comment failed: {what} {pr}'s comments answered HTTP {status} ({message}); the verdict is in the job summary"
                ))
            ),
            Failure::Transport { what, error } => format!(
                "::warning title={TITLE}::{}",
                escape_data(&format!(
                    "the pull request comment failed: {what} {pr}'s comments: {error}; the verdict is in the job summary"
                ))
            ),
        }
    }
}

#[derive(Deserialize)]
struct IssueComment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    html_url: Option<String>,
}

impl Api {
    fn upsert(&self, target: &Target, marker: &str, body: &str) -> Result<Written, Failure> {
        self.runtime.block_on(async {
            let payload = serde_json::json!({ "body": body });
            match self.find(target, marker).await? {
                Some(id) => {
                    let url = format!("{}/repos/{}/issues/comments/{id}", self.base, target.repo);
                    let c: IssueComment = self
                        .send("updating", self.client.patch(url).json(&payload))
                        .await?;
                    Ok(Written::Updated(
                        c.html_url.unwrap_or_else(|| c.id.to_string()),
                    ))
                }
                None => {
                    let url = format!(
                        "{}/repos/{}/issues/{}/comments",
                        self.base, target.repo, target.number
                    );
                    let c: IssueComment = self
                        .send("posting to", self.client.post(url).json(&payload))
                        .await?;
                    Ok(Written::Created(
                        c.html_url.unwrap_or_else(|| c.id.to_string()),
                    ))
                }
            }
        })
    }

    /// The id of the first comment whose body starts with `marker`, reading every page.
    async fn find(&self, target: &Target, marker: &str) -> Result<Option<u64>, Failure> {
        for page in 1..=MAX_PAGES {
            let url = format!(
                "{}/repos/{}/issues/{}/comments?per_page={PER_PAGE}&page={page}",
                self.base, target.repo, target.number
            );
            let comments: Vec<IssueComment> = self.send("listing", self.client.get(url)).await?;
            if let Some(c) = comments.iter().find(|c| {
                c.body
                    .as_deref()
                    .is_some_and(|b| b.trim_start().starts_with(marker))
            }) {
                return Ok(Some(c.id));
            }
            if comments.len() < PER_PAGE {
                return Ok(None);
            }
        }
        Err(Failure::Transport {
            what: "listing",
            error: format!(
                "more than {} comments; the marked one was not among them",
                MAX_PAGES * PER_PAGE
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(head: Option<&str>) -> Value {
        json!({
            "number": 7,
            "pull_request": {
                "number": 7,
                "head": {"repo": head.map(|h| json!({"full_name": h}))},
                "base": {"repo": {"full_name": "acme/app"}},
            },
            "repository": {"full_name": "acme/app"},
        })
    }

    #[test]
    fn the_target_is_the_events_pull_request() {
        let t = target(&event(Some("acme/app")), "pull_request", Some("acme/app")).unwrap();
        assert_eq!(
            t,
            Target {
                repo: "acme/app".into(),
                number: 7
            }
        );
        // GITHUB_REPOSITORY unset: the event's repository.
        assert_eq!(
            target(&event(Some("acme/app")), "pull_request", None)
                .unwrap()
                .repo,
            "acme/app"
        );
    }

    #[test]
    fn a_forks_pull_request_is_skipped_on_pull_request_only() {
        let fork = target(
            &event(Some("mallory/app")),
            "pull_request",
            Some("acme/app"),
        );
        assert_eq!(
            fork,
            Err(Skip::Fork {
                head: "mallory/app".into(),
                base: "acme/app".into()
            })
        );
        let notice = fork.unwrap_err().notice();
        assert!(
            notice.starts_with("::notice title=Claim Check::"),
            "{notice}"
        );
        assert!(
            notice.contains("mallory/app")
                && notice.contains("pull_request_target")
                && notice.contains("job summary"),
            "{notice}"
        );
        assert!(matches!(
            target(&event(None), "pull_request", Some("acme/app")),
            Err(Skip::Fork { .. })
        ));
        assert!(target(
            &event(Some("mallory/app")),
            "pull_request_target",
            Some("acme/app")
        )
        .is_ok());
    }

    #[test]
    fn no_pull_request_no_comment() {
        let push = json!({"ref": "refs/heads/main", "repository": {"full_name": "acme/app"}});
        let skip = target(&push, "push", Some("acme/app")).unwrap_err();
        assert_eq!(
            skip,
            Skip::NoPullRequest {
                event: "push".into()
            }
        );
        assert!(skip.notice().contains("`push` event"));
        assert_eq!(
            target(&event(Some("acme/app")), "pull_request", Some("acme/../x")),
            Err(Skip::NoRepository)
        );
    }

    #[test]
    fn the_marker_names_the_workflow_job_and_directory() {
        let m = marker("acme/app/.github/workflows/ci.yml", "claim-check", ".");
        assert!(
            m.starts_with("<!-- shipmoor-claim-check ") && m.ends_with(" -->"),
            "{m}"
        );
        assert_eq!(
            m,
            marker("acme/app/.github/workflows/ci.yml", "claim-check", "./")
        );
        assert_eq!(marker("w", "j", "./app/"), marker("w", "j", "app"),);
        assert_ne!(
            m,
            marker("acme/app/.github/workflows/ci.yml", "claim-check", "app")
        );
        assert_ne!(
            m,
            marker("acme/app/.github/workflows/ci.yml", "claim-check-py", ".")
        );
        assert_ne!(
            m,
            marker("acme/app/.github/workflows/other.yml", "claim-check", ".")
        );
    }

    #[test]
    fn the_body_fits_githubs_limit_and_keeps_the_marker() {
        let m = marker("w", "j", ".");
        assert_eq!(body(&m, "## READY\n"), format!("{m}\n## READY\n"));
        // Multi-byte characters: the limit counts characters, not bytes.
        let big = "| ✅ | criterion |\n".repeat(10_000);
        let b = body(&m, &big);
        assert!(b.chars().count() <= BODY_LIMIT, "{}", b.chars().count());
        assert!(b.chars().count() > BODY_LIMIT - 200);
        assert!(b.starts_with(&m));
        assert!(b.contains("cut to fit GitHub's limit"));
        assert!(
            b.contains("\n| ✅ | criterion |\n\n_This comment was cut"),
            "cut at a line"
        );
        // One enormous line: cut inside it, the marker kept.
        let b = body(&m, &"x".repeat(100_000));
        assert!(b.chars().count() <= BODY_LIMIT);
        assert!(b.starts_with(&m));
    }

    #[test]
    fn githubs_message_is_read_from_the_error() {
        assert_eq!(
            github_message(
                br#"{"message":"Resource not accessible by integration","documentation_url":"x"}"#
            ),
            "Resource not accessible by integration"
        );
        assert_eq!(github_message(b"bad\ngateway"), "bad gateway");
        assert_eq!(github_message(b""), "no message");
        assert!(github_message(&[b'a'; 1000]).chars().count() <= 301);
    }

    #[test]
    fn only_a_refusal_of_the_token_is_a_notice() {
        let t = Target {
            repo: "acme/app".into(),
            number: 2,
        };
        let status = |status, rate_limited| Failure::Status {
            what: "posting to",
            status,
            message: "m".into(),
            rate_limited,
        };
        let a = status(403, false).annotation(&t);
        assert!(a.starts_with("::notice title=Claim Check::no pull request comment: posting to acme/app#2's comments answered HTTP 403 (m)"), "{a}");
        assert!(status(404, false).annotation(&t).starts_with("::notice "));
        // A spent rate limit is no lack of permission.
        assert!(status(403, true).annotation(&t).starts_with("::warning "));
        assert!(status(422, false).annotation(&t).starts_with("::warning "));
        let a = Failure::Transport {
            what: "listing",
            error: "connection refused".into(),
        }
        .annotation(&t);
        assert!(
            a.starts_with("::warning ") && a.contains("connection refused"),
            "{a}"
        );
    }

    #[test]
    fn the_token_is_never_sent_in_the_clear() {
        let err = Api::new("http://api.example.com", "t0ken")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("not HTTPS") && !err.contains("t0ken"), "{err}");
        assert!(Api::new("http://127.0.0.1:9", "t").is_ok());
        assert!(Api::new("https://api.github.com/", "t").is_ok());
        assert!(Api::new("not a url", "t").is_err());
        let err = Api::new("https://api.github.com", "t0ken\n")
            .err()
            .unwrap()
            .to_string();
        assert!(!err.contains("t0ken"), "{err}");
    }
}
