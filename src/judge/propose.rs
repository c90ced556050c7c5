//! A judge's proposals for a draft (`acceptance derive --judge`).
//!
//! In: the texts the draft is derived from, the criteria derived from them, and a judge of the
//! project settings (book: judge.md): a command or a chat endpoint. Out: the criteria the judge proposes beyond those, each
//! marked as proposed by the judge, with a confidence of at most [`PROPOSED_CONFIDENCE`]: nobody
//! wrote them, a model read them into the text.
//!
//! Steps: (1) the request, `claim_check.propose.v1`: the texts, the criteria already derived,
//! and what to answer; (2) a command judge gets it on stdin and runs in the repository's top
//! directory as the floor runs code ([`crate::process::run_with`]: its own process
//! group, the timeout, the secrets left out of its environment, stdout bounded); a chat judge
//! gets it as the user message under [`PROPOSE_SYSTEM_PROMPT`], with the endpoint's retries and
//! timeout; (3) the answer is read as `{"criteria": [{"ac": …, "required": …, "text": …,
//! "line": …}]}` (from a chat answer: its JSON object, code fences and prose around it
//! allowed); a criterion whose words a derived one has already is dropped.

use std::path::Path;
use std::process::Command;

use serde::Deserialize;
use serde_json::json;

use super::{JudgeSpec, Transport};
use crate::acceptance::derive::{Derived, Origin, Text};

pub const PROPOSE_SCHEMA: &str = "claim_check.propose.v1";
/// What a chat judge is told: the request's own `task` says what to answer.
pub const PROPOSE_SYSTEM_PROMPT: &str = concat!(
    "You help a team write the acceptance criteria of a change for Shipmoor Claim Check. ",
    "The user message is one JSON request (schema \"claim_check.propose.v1\"): the texts the ",
    "change was described in (`texts`, each with its `name`) and the criteria already derived ",
    "from them (`derived`). Do what its `task` says, and reply with one JSON object and nothing ",
    "else."
);
/// The most confidence a proposed criterion is given.
pub const PROPOSED_CONFIDENCE: f64 = 0.5;
/// The most a judge may print.
const OUTPUT_LIMIT: usize = 1 << 20;

/// The request on the judge's stdin.
pub fn request(texts: &[Text<'_>], derived: &[Derived]) -> Vec<u8> {
    let texts: Vec<_> = texts
        .iter()
        .map(|t| json!({"name": t.name, "body": t.body}))
        .collect();
    let derived: Vec<_> = derived
        .iter()
        .map(|d| json!({"id": d.id, "ac": d.ac, "required": d.required}))
        .collect();
    json!({
        "schema": PROPOSE_SCHEMA,
        "task": "Propose the acceptance criteria these texts state or clearly imply that `derived` does not already list: one observable behaviour each, in the texts' own words where they have them. Answer with JSON only: {\"criteria\": [{\"ac\": \"...\", \"required\": true, \"text\": \"<the text's name>\", \"line\": <1-based line>}]}; `required` false for what the texts call optional or nice to have; an empty list when there is nothing to add.",
        "texts": texts,
        "derived": derived,
    })
    .to_string()
    .into_bytes()
}

#[derive(Deserialize)]
struct Answer {
    criteria: Vec<Proposal>,
}

#[derive(Deserialize)]
struct Proposal {
    ac: String,
    #[serde(default = "yes")]
    required: bool,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    line: Option<usize>,
}

fn yes() -> bool {
    true
}

fn words(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// An id from a criterion's words: its first six, lower-case, joined by `-`.
fn id_for(ac: &str) -> String {
    let id: String = ac
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .take(6)
        .collect::<Vec<_>>()
        .join("-");
    let mut id = if id.is_empty() {
        "proposed".to_string()
    } else {
        id
    };
    id.truncate(48);
    id.trim_end_matches('-').to_string()
}

/// Why a judge proposed nothing.
#[derive(Debug, thiserror::Error)]
pub enum ProposeError {
    #[error("its answer is not {{\"criteria\": [{{\"ac\": …}}]}}: {0}")]
    Answer(serde_json::Error),
    #[error("its command is empty")]
    EmptyCommand,
    #[error("`{program}` could not be started: {source}")]
    Start {
        program: String,
        source: std::io::Error,
    },
    /// It ran longer than its timeout (in seconds).
    #[error("timeout after {0} s")]
    Timeout(u64),
    #[error("output over the limit of {} bytes", OUTPUT_LIMIT)]
    OverLimit,
    #[error("it exited with code {0}")]
    Exit(i32),
    #[error("it was killed by a signal")]
    Signal,
    /// The chat judge's settings, refused (the input error's message).
    #[error("{0}")]
    Chat(String),
    #[error("its answer holds no JSON object")]
    NoJson,
    /// The chat judge gave no answer (its reason).
    #[error("{0}")]
    Failed(String),
}

/// The criteria of the judge's answer `stdout` that `derived` does not have.
pub fn read_answer(
    stdout: &[u8],
    judge: &str,
    derived: &[Derived],
) -> Result<Vec<Derived>, ProposeError> {
    let answer: Answer = serde_json::from_slice(stdout).map_err(ProposeError::Answer)?;
    let mut seen: Vec<String> = derived.iter().map(|d| words(&d.ac)).collect();
    let mut out = Vec::new();
    for p in answer.criteria {
        let ac = p.ac.trim().to_string();
        if ac.is_empty() || seen.contains(&words(&ac)) {
            continue;
        }
        seen.push(words(&ac));
        out.push(Derived {
            id: id_for(&ac),
            source: Origin {
                text: p.text.unwrap_or_else(|| format!("judge {judge}")),
                line: p.line.unwrap_or(1).max(1),
            },
            ac,
            required: p.required,
            confidence: PROPOSED_CONFIDENCE,
            reason: format!("proposed by the judge `{judge}`"),
        });
    }
    Ok(out)
}

/// Asks the command judge `spec`, run in `dir`; `Err` says why it gave no proposals.
///
/// The judge runs in `jail` (the repository readable, nothing written but its own home).
pub fn ask(
    spec: &JudgeSpec,
    dir: &Path,
    request: Vec<u8>,
    derived: &[Derived],
    jail: &crate::sandbox::Jail,
) -> Result<Vec<Derived>, ProposeError> {
    let argv = match &spec.transport {
        Transport::Command { argv } => argv,
        Transport::Chat { .. } => return ask_chat(spec, &request, derived),
    };
    let Some((program, args)) = argv.split_first() else {
        return Err(ProposeError::EmptyCommand);
    };
    // A relative program path names a file of the repository, as for the judge of a run.
    let mut cmd = if program.contains('/') && !Path::new(program).is_absolute() {
        Command::new(dir.join(program))
    } else {
        Command::new(program)
    };
    cmd.args(args).current_dir(dir);
    let limits = crate::process::Limits {
        stdin: Some(request),
        stdout_bytes: Some(OUTPUT_LIMIT),
    };
    let ran = crate::process::run_with(
        cmd,
        spec.timeout,
        limits,
        crate::process::Confine::Sandboxed(jail),
    )
    .map_err(|source| ProposeError::Start {
        program: program.clone(),
        source,
    })?;
    if ran.timed_out {
        return Err(ProposeError::Timeout(spec.timeout.as_secs()));
    }
    if ran.stdout_over_limit {
        return Err(ProposeError::OverLimit);
    }
    if !ran.success() {
        return Err(match ran.exit_code {
            Some(code) => ProposeError::Exit(code),
            None => ProposeError::Signal,
        });
    }
    read_answer(&ran.stdout, &spec.name, derived)
}

/// Asks the chat judge `spec` (its key read from its variable, as in a run).
fn ask_chat(
    spec: &JudgeSpec,
    request: &[u8],
    derived: &[Derived],
) -> Result<Vec<Derived>, ProposeError> {
    let judge =
        super::chat::ChatJudge::from_spec(spec).map_err(|e| ProposeError::Chat(e.message))?;
    let user = String::from_utf8_lossy(request);
    match judge.ask_once(PROPOSE_SYSTEM_PROMPT, &user) {
        super::Reply::Answer { body, .. } => {
            let text = String::from_utf8_lossy(&body);
            let object = super::audit::extract_json(&text).ok_or(ProposeError::NoJson)?;
            read_answer(object.to_string().as_bytes(), &spec.name, derived)
        }
        super::Reply::Failed { reason } => Err(ProposeError::Failed(reason)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn derived(ac: &str) -> Derived {
        Derived {
            id: "x".into(),
            ac: ac.into(),
            required: true,
            confidence: 0.9,
            reason: "checklist item".into(),
            source: Origin {
                text: "t".into(),
                line: 1,
            },
        }
    }

    #[test]
    fn proposals_are_marked_less_certain_and_never_repeat_a_derived_criterion() {
        let answer = br#"{"criteria": [
            {"ac": "The limit is  TEN."},
            {"ac": "Refunds are logged.", "required": false, "text": "issue #3", "line": 4},
            {"ac": "Refunds are logged."},
            {"ac": "  "}
        ]}"#;
        let got = read_answer(answer, "intent", &[derived("the limit is ten.")]).unwrap();
        assert_eq!(got.len(), 1, "{got:?}");
        let p = &got[0];
        assert_eq!(p.id, "refunds-are-logged");
        assert!(!p.required);
        assert_eq!(p.confidence, PROPOSED_CONFIDENCE);
        assert_eq!(p.reason, "proposed by the judge `intent`");
        assert_eq!((p.source.text.as_str(), p.source.line), ("issue #3", 4));
        let err = read_answer(b"I think so", "intent", &[])
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("its answer is not"), "{err}");
    }

    #[test]
    fn the_request_carries_the_texts_and_what_is_derived() {
        let r: serde_json::Value = serde_json::from_slice(&request(
            &[Text {
                name: "pull request #2",
                body: "b",
            }],
            &[derived("A.")],
        ))
        .unwrap();
        assert_eq!(r["schema"], PROPOSE_SCHEMA);
        assert_eq!(r["texts"][0]["name"], "pull request #2");
        assert_eq!(r["derived"][0]["ac"], "A.");
        assert!(r["task"].as_str().unwrap().contains("\"criteria\""));
    }
}
