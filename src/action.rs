//! GitHub Actions integration: what the Action does with a run's result.
//!
//! In: the result JSON `claim-check --result-out` wrote (or nothing, when the run ended with an
//! input error or a crash), its exit code, and the runner's environment (`GITHUB_OUTPUT`,
//! `GITHUB_STEP_SUMMARY`, `GITHUB_JOB`, `GITHUB_RUN_ATTEMPT`, `RUNNER_NAME`).
//! Out: step outputs (`verdict`, `exit-code`, `vsa-path`, `fixes-path`, `report-path`, for
//! the upload step `artifact-name`, `artifact-paths`, and for the base cache's save step
//! `base-cache-stored`), the job summary ([`crate::report::github`]), and
//! `::error`/`::warning` annotations, within GitHub's limits and escaping rules; then the gate
//! that fails the job per `fail-on`; with `comment: true`, the sticky pull request comment
//! ([`comment`]).

pub mod comment;
pub mod linked;
#[cfg(test)]
mod prop_tests;
pub mod rest;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{IoContext, IoError};
use crate::format::error::{ErrorDocument, ErrorEntry};
use crate::format::result::ResultDocument;
use crate::format::{Disposition, SigningState};
use crate::verdict::JudgeResult;

pub use crate::report::github::{summary, SUMMARY_LIMIT};
/// GitHub shows at most 10 annotations of each kind per step.
pub const ANNOTATIONS_PER_KIND: usize = 10;

/// Escapes annotation data (`%`, `\r`, `\n`).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes an annotation property (data escaping, and `:` and `,`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// A `name<<DELIM … DELIM` block for `GITHUB_OUTPUT`, with a delimiter that is not in the value.
pub fn output_entry(name: &str, value: &str, seed: &str) -> String {
    let mut n = 0u32;
    let delim = loop {
        let d = format!(
            "ghadelimiter_{}",
            &crate::evidence::sha256_hex(format!("{seed}{n}").as_bytes())[..16]
        );
        if !value.contains(&d) {
            break d;
        }
        n += 1;
    };
    format!("{name}<<{delim}\n{value}\n{delim}\n")
}

/// The annotations for a result: an error per fix, a warning per criterion routed to a person
/// or asking for an author check, each pointing at the criterion's line in the acceptance file.
pub fn annotations(doc: &ResultDocument<'_>) -> Vec<String> {
    let r = &doc.result;
    let claim_file = r.acceptance.path.as_str();
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    if r.signing.state == SigningState::Unsigned {
        warnings.push(format!(
            "::warning title={}::{}",
            escape_property("Claim Check: unsigned"),
            escape_data(&format!(
                "{} (to sign keyless in GitHub Actions, give the job `permissions: id-token: write`)",
                r.signing.note
            ))
        ));
    }
    for c in &r.criteria {
        // Each criterion points at its own file: a claim may span several.
        let file = c.file.as_deref().unwrap_or(claim_file);
        let line = c.line;
        // A judge's confirmed block points into the change itself, where the pull request's
        // diff shows it: there rather than at the criterion's line.
        let pointer = r
            .findings
            .iter()
            .filter(|f| f.criterion == c.id && f.result == JudgeResult::Block)
            .find_map(|f| f.pointer.as_ref())
            .filter(|_| c.disposition == Disposition::Blocked);
        let (file, line) = match pointer {
            Some(p) => (p.path.as_str(), usize::try_from(p.line).unwrap_or(0)),
            None => (file, line),
        };
        let location = if file.is_empty() || line == 0 {
            String::new()
        } else {
            format!("file={},line={line},", escape_property(file))
        };
        let title = format!("Claim Check: {}", c.requirement);
        let reason = c
            .judge
            .rationale
            .as_deref()
            .filter(|_| !c.floor.result.settled())
            .unwrap_or(&c.floor.reason);
        let msg = format!("{} — {}", c.ac, reason);
        let line = |kind: &str| {
            format!(
                "::{kind} {location}title={}::{}",
                escape_property(&title),
                escape_data(&msg)
            )
        };
        match c.disposition {
            Disposition::Unsatisfied | Disposition::Blocked => errors.push(line("error")),
            Disposition::Satisfied => {}
            Disposition::Unbound => warnings.push(format!(
                "::warning {location}title={}::{}",
                escape_property(&title),
                escape_data(&format!(
                    "{} — no test carries the tag {}: write a test whose id or filename contains it; it must fail at the base commit and pass at the head commit",
                    c.ac,
                    c.tag
                ))
            )),
            Disposition::Undecided | Disposition::Abstained | Disposition::NotJudged => {
                warnings.push(line("warning"))
            }
        }
    }
    let more = |kind: &str, n: usize| {
        format!("::{kind} title=Claim Check::{n} more not shown here (GitHub shows 10 per step); see verify.md")
    };
    let mut out = Vec::new();
    let (ne, nw) = (errors.len(), warnings.len());
    out.extend(
        errors
            .into_iter()
            .take(ANNOTATIONS_PER_KIND - usize::from(ne > ANNOTATIONS_PER_KIND)),
    );
    if ne > ANNOTATIONS_PER_KIND {
        out.push(more("error", ne - (ANNOTATIONS_PER_KIND - 1)));
    }
    out.extend(
        warnings
            .into_iter()
            .take(ANNOTATIONS_PER_KIND - usize::from(nw > ANNOTATIONS_PER_KIND)),
    );
    if nw > ANNOTATIONS_PER_KIND {
        out.push(more("warning", nw - (ANNOTATIONS_PER_KIND - 1)));
    }
    out
}

/// The event payload of GITHUB_EVENT_PATH (its path, as messages name it), `None` when unset;
/// a file that cannot be read or is not JSON is an input error at its line.
pub fn read_event() -> Result<Option<(String, Value)>, crate::error::Error> {
    let Some(path) = std::env::var_os("GITHUB_EVENT_PATH").filter(|p| !p.is_empty()) else {
        return Ok(None);
    };
    read_event_at(Path::new(&path)).map(Some)
}

/// The largest event payload read: GitHub caps a webhook's payload at 25 MB.
pub const EVENT_LIMIT: u64 = 25 << 20;

/// The fix for an event payload that cannot be read or is not JSON.
const EVENT_HELP: &str = "GitHub Actions writes it; outside a workflow, unset GITHUB_EVENT_PATH \
    (and give `acceptance derive` its text with --from FILE)";

/// [`read_event`] of the payload at `path`: its path as messages name it, and its JSON.
pub fn read_event_at(path: &Path) -> Result<(String, Value), crate::error::Error> {
    let shown = path.display().to_string();
    let bytes = crate::nofollow::read_named(path, EVENT_LIMIT).map_err(|e| {
        crate::error::Error::input(
            crate::error::InputError::new(format!("the event payload (GITHUB_EVENT_PATH) {e}"))
                .in_file(shown.clone())
                .help(format!(
                    "{}; {EVENT_HELP}",
                    crate::nofollow::read_help("the event payload", &e)
                )),
        )
    })?;
    let event = serde_json::from_slice(&bytes).map_err(|e| {
        crate::error::Error::input(
            crate::error::InputError::new(format!(
                "the event payload (GITHUB_EVENT_PATH) is not JSON: {e}"
            ))
            .at(shown.clone(), e.line().max(1), e.column().max(1))
            .help(EVENT_HELP),
        )
    })?;
    let problems = check_event(&event);
    if !problems.is_empty() {
        return Err(crate::error::Error::Input(
            problems
                .into_iter()
                .map(|p| {
                    crate::error::InputError::new(format!("the event payload (GITHUB_EVENT_PATH): {p}"))
                        .in_file(shown.clone())
                        .help("GitHub Actions writes each of these fields with this type; outside a workflow, unset GITHUB_EVENT_PATH (or point it at a payload GitHub wrote)")
                })
                .collect(),
        ));
    }
    Ok((shown, event))
}

/// What a field of the event payload must be when it is there (`null` counts as not there).
#[derive(Clone, Copy)]
enum EventField {
    Object,
    Text,
    Number,
    Commit,
}

/// Every field of the event payload Claim Check reads, parents before their children: a field of
/// the wrong type would otherwise be read as missing, and the run would go on without it (a
/// base sha of `12` silently replaced by the default branch's merge-base).
const EVENT_FIELDS: &[(&str, EventField)] = &[
    ("/number", EventField::Number),
    ("/repository", EventField::Object),
    ("/repository/full_name", EventField::Text),
    ("/pull_request", EventField::Object),
    ("/pull_request/number", EventField::Number),
    ("/pull_request/title", EventField::Text),
    ("/pull_request/body", EventField::Text),
    ("/pull_request/base", EventField::Object),
    ("/pull_request/base/sha", EventField::Commit),
    ("/pull_request/base/repo", EventField::Object),
    ("/pull_request/base/repo/full_name", EventField::Text),
    ("/pull_request/head", EventField::Object),
    ("/pull_request/head/sha", EventField::Commit),
    ("/pull_request/head/repo", EventField::Object),
    ("/pull_request/head/repo/full_name", EventField::Text),
];

/// The fields of `event` that are not what [`EVENT_FIELDS`] says, one message each.
fn check_event(event: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for &(pointer, want) in EVENT_FIELDS {
        let Some(v) = event.pointer(pointer).filter(|v| !v.is_null()) else {
            continue;
        };
        let ok = match want {
            EventField::Object => v.is_object(),
            EventField::Text => v.is_string(),
            EventField::Number => v.is_u64(),
            EventField::Commit => v
                .as_str()
                .is_some_and(|s| crate::git::CommitId::parse(s).is_some()),
        };
        if ok {
            continue;
        }
        let expected = match want {
            EventField::Object => "an object",
            EventField::Text => "a string",
            EventField::Number => "a whole number of 0 or more",
            EventField::Commit => "a commit id (40 or 64 lowercase hex digits)",
        };
        let field = pointer.trim_start_matches('/').replace('/', ".");
        problems.push(format!(
            "`{field}` is {}, where {expected} is read",
            describe_json(v)
        ));
    }
    problems
}

/// A JSON value as a message shows it: its kind, and a short excerpt of a scalar.
fn describe_json(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("a boolean (`{b}`)"),
        Value::Number(n) => format!("a number (`{}`)", crate::text::cut(&n.to_string(), 40)),
        Value::String(s) => format!(
            "the string `{}`",
            crate::text::visible(&crate::text::cut(s, 40))
        ),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// The GitHub Actions event payload (`GITHUB_EVENT_PATH`), when there is one.
/// Read leniently, by steps that run after the input checks have read it with [`read_event`].
pub fn event() -> Option<Value> {
    let path = std::env::var_os("GITHUB_EVENT_PATH")?;
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// `pull_request.base.sha` or `.head.sha` of an event: on pull request events `GITHUB_SHA` is a
/// test merge commit, not the change's head.
pub fn pull_request_sha(event: &Value, which: &str) -> Option<String> {
    event
        .pointer(&format!("/pull_request/{which}/sha"))?
        .as_str()
        .map(str::to_string)
}

/// The pull request's number (`pull_request.number`), on pull request events.
pub fn pull_request_number(event: &Value) -> Option<u64> {
    event.pointer("/pull_request/number")?.as_u64()
}

/// Whether the run stored a new base cache entry (`result.base_cache.state` is `stored`): the
/// Action then saves its base cache directory.
pub fn base_cache_stored(result: Option<&ResultDocument<'_>>) -> bool {
    result
        .and_then(|d| d.result.base_cache.as_ref())
        .is_some_and(|u| u.state == crate::format::floor::BaseCacheState::Stored)
}

/// Why the job fails (the Action's gate step prints it).
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    #[error("claim-check did not reach a verdict (exit {0}); see the log above")]
    NoVerdict(i32),
    #[error("`{0}` is not a verdict: the run's outputs are incomplete")]
    NotVerdict(String),
    #[error("the verdict {verdict} does not go with exit code {exit_code}")]
    Mismatch { verdict: String, exit_code: i32 },
    /// `fail-on` lists something that is not a verdict (what).
    #[error("fail-on lists `{0}`, which is not a verdict (READY, READY WITH GAPS, INCONCLUSIVE, BLOCKED)")]
    FailOn(String),
    #[error("the verdict is {verdict}, and fail-on lists it ({fail_on})")]
    Fails { verdict: String, fail_on: String },
}

/// Whether the job fails: an error exit (2, 3, or any unknown code), or a verdict in `fail_on`.
pub fn gate(verdict: &str, exit_code: i32, fail_on: &str) -> Result<String, GateError> {
    if !matches!(exit_code, 0 | 1 | 4) {
        return Err(GateError::NoVerdict(exit_code));
    }
    let Some(v) = crate::verdict::Verdict::parse(verdict) else {
        return Err(GateError::NotVerdict(verdict.to_string()));
    };
    if v.exit_code() != exit_code {
        return Err(GateError::Mismatch {
            verdict: verdict.to_string(),
            exit_code,
        });
    }
    let listed: Vec<String> = fail_on
        .split(',')
        .map(|v| v.trim().to_ascii_uppercase())
        .filter(|v| !v.is_empty())
        .collect();
    // A misspelt verdict would never fail the job: refuse it.
    if let Some(bad) = listed
        .iter()
        .find(|v| crate::verdict::Verdict::parse(v).is_none())
    {
        return Err(GateError::FailOn(bad.clone()));
    }
    if listed.iter().any(|v| v == verdict) {
        Err(GateError::Fails {
            verdict: verdict.to_string(),
            fail_on: fail_on.to_string(),
        })
    } else {
        Ok(format!(
            "the verdict is {verdict}; fail-on ({fail_on}) lets it pass"
        ))
    }
}

/// `claim-check-<job>-<attempt>-<unique>`, the job's name once: a job named `claim-check` (or
/// `claim-check-py`) is not repeated after the prefix.
fn artifact_name(job: &str, attempt: &str, unique: &str) -> String {
    let job = job
        .strip_prefix("claim-check")
        .map(|rest| rest.trim_start_matches(['-', '_']))
        .unwrap_or(job);
    if job.is_empty() {
        format!("claim-check-{attempt}-{unique}")
    } else {
        format!("claim-check-{job}-{attempt}-{unique}")
    }
}

/// Everything `report` writes, for a result (or none) and an exit code.
pub struct Report {
    pub outputs: String,
    pub summary: String,
    pub annotations: Vec<String>,
}

/// Builds the outputs, the summary and the annotations. `repo` is where relative output paths
/// in the result are resolved; `seed` makes the artifact name and delimiters unique.
pub fn report(
    result: Option<&ResultDocument<'_>>,
    exit_code: i32,
    repo: &Path,
    seed: &str,
    errors: Option<&ErrorDocument>,
) -> Report {
    let job = std::env::var("GITHUB_JOB").unwrap_or_else(|_| "job".into());
    let attempt = std::env::var("GITHUB_RUN_ATTEMPT").unwrap_or_else(|_| "1".into());
    let unique = &crate::evidence::sha256_hex(format!("{seed}{}", repo.display()).as_bytes())[..8];
    let artifact = artifact_name(&job, &attempt, unique);
    let mut outputs = String::new();
    let mut put = |k: &str, v: &str| outputs.push_str(&output_entry(k, v, seed));
    put("exit-code", &exit_code.to_string());
    let Some(result) = result else {
        put("verdict", "ERROR");
        put("vsa-path", "");
        put("fixes-path", "");
        put("report-path", "");
        put("artifact-name", &artifact);
        put("artifact-paths", "");
        let what = if exit_code == 2 {
            "usage or input error"
        } else {
            "engine crash"
        };
        let entries = errors.map(|d| d.errors.as_slice()).unwrap_or_default();
        let mut summary = format!(
            "# Claim Check — no verdict\n\nclaim-check exited with code {exit_code} ({what})"
        );
        if entries.is_empty() {
            summary.push_str("; see the job log for the message, file and line.\n");
        } else {
            summary.push_str(":\n\n");
            for e in entries {
                let place = error_place(e);
                let _ = write!(
                    summary,
                    "- {}{}",
                    if place.is_empty() {
                        String::new()
                    } else {
                        format!("`{place}`: ")
                    },
                    e.message
                );
                if let Some(help) = &e.help {
                    let _ = write!(summary, " (help: {help})");
                }
                summary.push('\n');
            }
        }
        let mut annotations: Vec<String> = entries
            .iter()
            .take(ANNOTATIONS_PER_KIND - usize::from(entries.len() > ANNOTATIONS_PER_KIND))
            .map(error_annotation)
            .collect();
        if entries.len() > ANNOTATIONS_PER_KIND {
            annotations.push(format!(
                "::error title=Claim Check::{} more not shown here (GitHub shows 10 per step); see the log",
                entries.len() - (ANNOTATIONS_PER_KIND - 1)
            ));
        }
        if annotations.is_empty() {
            annotations.push(format!(
                "::error title=Claim Check::{}",
                escape_data(&format!(
                    "claim-check exited with code {exit_code} and reached no verdict; see the log"
                ))
            ));
        }
        return Report {
            outputs,
            summary,
            annotations,
        };
    };
    let r = &result.result;
    let abs = |p: &str| -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            repo.join(p)
        }
    };
    let vsa = r.outputs.vsa.as_str();
    let signed: Vec<String> = ["sigstore.json", "dsse.json"]
        .iter()
        .map(|s| format!("{}.{s}", vsa.strip_suffix(".json").unwrap_or(vsa)))
        .filter(|p| abs(p).exists())
        .collect();
    let vsa_path = signed.first().cloned().unwrap_or_else(|| vsa.to_string());
    put("verdict", r.verdict.as_str());
    put("vsa-path", &abs(&vsa_path).display().to_string());
    put("fixes-path", &abs(&r.outputs.fixes).display().to_string());
    put("report-path", &abs(&r.outputs.report).display().to_string());
    put("artifact-name", &artifact);
    let mut paths = vec![
        abs(vsa),
        abs(&r.outputs.fixes),
        abs(&r.outputs.report),
        abs(&r.outputs.evidence),
    ];
    paths.extend(signed.iter().map(|p| abs(p)));
    let list = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join("\n");
    put("artifact-paths", &list);
    // Built from the result, not from `verify.md`: the verdict first, signing after it.
    let summary_text = crate::report::github::job_summary(result, &artifact);
    Report {
        outputs,
        summary: summary_text,
        annotations: annotations(result),
    }
}

/// `file:line:col` of an error, as much of it as is known.
fn error_place(e: &ErrorEntry) -> String {
    match (&e.file, e.line, e.column) {
        (Some(f), Some(l), Some(c)) => format!("{f}:{l}:{c}"),
        (Some(f), Some(l), None) => format!("{f}:{l}"),
        (Some(f), None, _) => f.clone(),
        _ => String::new(),
    }
}

/// An input error as an `::error` annotation at its file, line and column, as GitHub places
/// them on the pull request's files.
fn error_annotation(e: &ErrorEntry) -> String {
    let mut props = String::new();
    if let Some(f) = &e.file {
        let _ = write!(props, "file={},", escape_property(f));
    }
    if let Some(l) = e.line {
        let _ = write!(props, "line={l},");
    }
    if let Some(c) = e.column {
        let _ = write!(props, "col={c},");
    }
    let message = match &e.help {
        Some(help) => format!("{}\nhelp: {help}", e.message),
        None => e.message.clone(),
    };
    format!(
        "::error {props}title={}::{}",
        escape_property("Claim Check: input error"),
        escape_data(&message)
    )
}

/// Appends to a file named by an environment variable (`GITHUB_OUTPUT`, `GITHUB_STEP_SUMMARY`).
pub fn append_env_file(var: &str, text: &str) -> Result<bool, IoError> {
    let Some(path) = std::env::var_os(var).filter(|p| !p.is_empty()) else {
        return Ok(false);
    };
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .at("append to", &path)?;
    f.write_all(text.as_bytes()).at("append to", &path)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The payload at a temporary path, read as `read_event` reads it.
    fn read_payload(json: &str) -> (String, Result<(String, Value), crate::error::Error>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("event.json");
        std::fs::write(&path, json).unwrap();
        (path.display().to_string(), read_event_at(&path))
    }

    #[test]
    fn an_event_field_of_the_wrong_type_is_an_input_error_naming_the_file_and_the_field() {
        let (path, read) = read_payload(
            r#"{"pull_request": {"number": 7, "base": {"sha": 12}, "head": {"sha": "ab"}}}"#,
        );
        let Err(crate::error::Error::Input(errors)) = read else {
            panic!("a base sha of 12 is an input error: {read:?}");
        };
        assert_eq!(errors.len(), 2, "{errors:?}");
        for e in &errors {
            assert_eq!(e.file.as_deref(), Some(path.as_str()), "{e}");
            assert!(e.message.contains("GITHUB_EVENT_PATH"), "{e}");
            assert!(e.help.as_deref().is_some_and(|h| !h.is_empty()), "{e}");
        }
        assert!(
            errors[0].message.contains("`pull_request.base.sha`")
                && errors[0].message.contains("a number"),
            "{}",
            errors[0]
        );
        assert!(
            errors[1].message.contains("`pull_request.head.sha`")
                && errors[1].message.contains("`ab`"),
            "{}",
            errors[1]
        );
        // Each field Claim Check reads, of the wrong type.
        for (json, field) in [
            (r#"{"pull_request": []}"#, "`pull_request`"),
            (
                r#"{"pull_request": {"number": "7"}}"#,
                "`pull_request.number`",
            ),
            (
                r#"{"pull_request": {"number": -1}}"#,
                "`pull_request.number`",
            ),
            (r#"{"pull_request": {"body": 3}}"#, "`pull_request.body`"),
            (r#"{"pull_request": {"title": {}}}"#, "`pull_request.title`"),
            (
                r#"{"pull_request": {"head": "main"}}"#,
                "`pull_request.head`",
            ),
            (
                r#"{"pull_request": {"base": {"repo": {"full_name": 1}}}}"#,
                "`pull_request.base.repo.full_name`",
            ),
            (r#"{"number": 1.5}"#, "`number`"),
            (
                r#"{"repository": {"full_name": false}}"#,
                "`repository.full_name`",
            ),
        ] {
            let (_, read) = read_payload(json);
            let Err(crate::error::Error::Input(errors)) = read else {
                panic!("{json}: an input error: {read:?}");
            };
            assert!(errors[0].message.contains(field), "{json}: {errors:?}");
        }
    }

    #[test]
    fn an_event_payload_that_is_no_regular_file_is_named_never_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("event.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        for (path, what) in [
            (&fifo, "is a FIFO"),
            (&dir.path().to_path_buf(), "is a directory"),
        ] {
            let Err(crate::error::Error::Input(errors)) = read_event_at(path) else {
                panic!("{what}: an input error");
            };
            let shown = path.display().to_string();
            assert_eq!(errors[0].file.as_deref(), Some(shown.as_str()));
            assert!(
                errors[0]
                    .message
                    .starts_with(&format!("the event payload (GITHUB_EVENT_PATH) {what}")),
                "{errors:?}"
            );
            assert!(errors[0]
                .help
                .as_deref()
                .is_some_and(|h| h.contains("regular file")));
        }
    }

    #[test]
    fn an_event_with_the_fields_of_their_types_or_null_reads() {
        let sha = "a".repeat(40);
        for json in [
            "{}".to_string(),
            r#"{"ref": "refs/heads/main", "repository": {"full_name": "acme/app"}}"#.to_string(),
            format!(
                r#"{{"number": 3, "pull_request": {{"number": 3, "title": "t", "body": null,
                    "base": {{"sha": "{sha}", "repo": {{"full_name": "acme/app"}}}},
                    "head": {{"sha": "{sha}", "repo": null}}}}}}"#
            ),
            r#"{"pull_request": null}"#.to_string(),
        ] {
            let (_, read) = read_payload(&json);
            assert!(read.is_ok(), "{json}: {read:?}");
        }
    }

    #[test]
    fn the_artifact_names_the_job_once() {
        assert_eq!(artifact_name("claim-check", "1", "ab"), "claim-check-1-ab");
        assert_eq!(
            artifact_name("claim-check-py", "2", "ab"),
            "claim-check-py-2-ab"
        );
        assert_eq!(
            artifact_name("claim_check", "1", "ab"),
            "claim-check-claim_check-1-ab"
        );
        assert_eq!(artifact_name("test", "1", "ab"), "claim-check-test-1-ab");
    }

    #[test]
    fn escaping_follows_the_workflow_command_rules() {
        assert_eq!(escape_data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn outputs_use_a_delimiter_the_value_does_not_contain() {
        let e = output_entry("paths", "a\nb", "s");
        let mut lines = e.lines();
        let first = lines.next().unwrap();
        let delim = first.strip_prefix("paths<<").unwrap();
        assert_eq!(lines.collect::<Vec<_>>(), ["a", "b", delim]);
        let tricky = format!("x\n{delim}\ny");
        let e2 = output_entry("v", &tricky, "s");
        assert!(!e2.lines().next().unwrap().ends_with(delim));
    }

    #[test]
    fn the_summary_fits_in_one_mebibyte() {
        let big = "line of text\n".repeat(200_000);
        let s = summary(&big);
        assert!(s.len() <= SUMMARY_LIMIT);
        assert!(s.contains("was cut"));
        assert_eq!(summary("# small\n"), "# small\n");
    }

    #[test]
    fn gate_follows_fail_on() {
        assert!(gate("BLOCKED", 1, "BLOCKED,INCONCLUSIVE").is_err());
        assert!(gate("INCONCLUSIVE", 4, "blocked, inconclusive").is_err());
        assert!(gate("READY WITH GAPS", 0, "BLOCKED,INCONCLUSIVE").is_ok());
        assert!(gate("READY WITH GAPS", 0, "BLOCKED,READY WITH GAPS").is_err());
        assert!(gate("INCONCLUSIVE", 4, "BLOCKED").is_ok());
        assert!(gate("ERROR", 2, "").is_err());
        assert!(gate("ERROR", 3, "BLOCKED").is_err());
        assert!(gate("READY", 0, "BLOCKD")
            .unwrap_err()
            .to_string()
            .contains("not a verdict"));
    }

    /// Fourteen failed criteria give nine errors and a tenth that counts the rest.
    #[test]
    fn annotations_are_capped_per_kind() {
        use crate::format::result::tests::{criterion, run_result};
        let criteria = (0..14)
            .map(|i| {
                let mut c = criterion(i, Disposition::Unsatisfied);
                c.file = None;
                c
            })
            .collect();
        let result = run_result(criteria);
        let packet = crate::report::fixes::packet(&result);
        let a = annotations(&ResultDocument::new(&result, &packet));
        // Ten errors (the unsigned run's warning is of the other kind, and counted there).
        assert_eq!(a.iter().filter(|l| l.starts_with("::error")).count(), 10);
        assert_eq!(a.len(), 11);
        assert!(
            a[10].starts_with("::warning title=Claim Check%3A unsigned::"),
            "{}",
            a[10]
        );
        assert!(a[0].starts_with("::error file=.shipmoor/acceptance.yaml,line=3,title=Claim Check%3A stage1.floor.c0::Criterion 0 holds. — c0: fails, at head: 100%25"), "{}", a[0]);
        assert!(a[9].contains("5 more"), "{}", a[9]);
    }

    /// The annotations of a result as the run writes it and the Action reads it back: every
    /// field they show comes through the one result type, so renaming one fails here.
    #[test]
    fn annotations_come_from_the_written_result() {
        let result = crate::format::result::tests::every_disposition();
        let packet = crate::report::fixes::packet(&result);
        let written = ResultDocument::new(&result, &packet).to_json().unwrap();
        let read = ResultDocument::parse(written.as_bytes()).unwrap();
        let a = annotations(&read);
        assert_eq!(
            a,
            [
                // Errors first: unsatisfied, then blocked (the judge's words: the floor did not
                // settle it).
                "::error file=.shipmoor/changes/c1.yaml,line=4,title=Claim Check%3A stage1.floor.c1::Criterion 1 holds. — c1: fails, at head: 100%25",
                "::error file=.shipmoor/acceptance.yaml,line=7,title=Claim Check%3A stage1.floor.c4::Criterion 4 holds. — the judge blocks c4",
                // Then unbound, undecided, abstained, not judged.
                "::warning title=Claim Check%3A unsigned::the attestation is unsigned (--sign none) (to sign keyless in GitHub Actions, give the job `permissions: id-token: write`)",
                "::warning file=.shipmoor/acceptance.yaml,line=5,title=Claim Check%3A stage1.floor.c2::Criterion 2 holds. — no test carries the tag AC-C2-0000: write a test whose id or filename contains it; it must fail at the base commit and pass at the head commit",
                "::warning file=.shipmoor/changes/c3.yaml,line=6,title=Claim Check%3A stage1.floor.c3::Criterion 3 holds. — c3: fails, at head: 100%25",
                "::warning file=.shipmoor/changes/c5.yaml,line=8,title=Claim Check%3A stage1.floor.c5::Criterion 5 holds. — the judge abstains on c5",
                "::warning file=.shipmoor/acceptance.yaml,line=9,title=Claim Check%3A stage1.floor.c6::Criterion 6 holds. — judgment criterion: no judge ran (fast mode); a person decides",
            ]
        );
        // With the judge's finding behind the block, the error points at its pointer.
        let mut judged = read.result.clone().into_owned();
        judged.findings.push(crate::judge::Finding {
            criterion: "c4".into(),
            judge: "security".into(),
            identity: crate::judge::Identity::Chat {
                url: "http://127.0.0.1:1/v1/chat/completions".into(),
                model: "m".into(),
            },
            result: JudgeResult::Block,
            rationale: "the judge blocks c4".into(),
            pointer: Some(crate::format::judge::Citation {
                path: "svc/refund.py".into(),
                line: 42,
                quote: "return order".into(),
            }),
            citations: vec![],
            downgraded: None,
            request_evidence: format!("sha256:{}", "a".repeat(64)),
            response_evidence: None,
            usage: None,
        });
        let with_finding = annotations(&ResultDocument::new(&judged, &packet));
        assert_eq!(
            with_finding[1],
            "::error file=svc/refund.py,line=42,title=Claim Check%3A stage1.floor.c4::Criterion 4 holds. — the judge blocks c4"
        );
        let dir = tempfile::tempdir().unwrap();
        let r = report(Some(&read), 1, dir.path(), "seed", None);
        assert!(r.outputs.contains("\nBLOCKED\n"), "{}", r.outputs);
        // The verdict first; the signing state after it, with its fix.
        assert!(r.summary.starts_with("## ❌ BLOCKED — "), "{}", r.summary);
        assert!(
            r.summary.contains(
                "🔓 **Unsigned:** the attestation is unsigned (--sign none). To sign keyless, add `permissions: id-token: write` to the job."
            ),
            "{}",
            r.summary
        );
        assert!(
            r.outputs.contains(
                &dir.path()
                    .join(".shipmoor/claim-check.fixes.json")
                    .display()
                    .to_string()
            ),
            "{}",
            r.outputs
        );
    }
}
