//! `shipmoor action report | event | gate | comment`: the Action's steps after claim-check (see [`crate::action`]).

use std::io::Write;

use crate::action;
use crate::cli::ActionCommand;
use crate::error::{Error, InputError};
use crate::format::result::ResultDocument;

pub fn run(cmd: ActionCommand) -> Result<i32, Error> {
    match cmd {
        ActionCommand::Comment {
            result,
            working_directory,
        } => {
            let bytes = std::fs::read(&result).map_err(|e| {
                Error::input(
                    InputError::new(format!("cannot read the result: {e}"))
                        .in_file(result.display().to_string())
                        .help("pass the file `claim-check --result-out` wrote"),
                )
            })?;
            let doc = ResultDocument::parse(&bytes).map_err(|e| {
                Error::input(
                    InputError::new(format!("the result is not a claim-check result: {e}"))
                        .in_file(result.display().to_string())
                        .help("pass the file `claim-check --result-out` wrote, with the same shipmoor"),
                )
            })?;
            let settings = action::comment::Settings::from_env(&working_directory);
            let line = action::comment::run(&settings, &crate::report::github::pr_comment(&doc));
            let _ = writeln!(std::io::stdout(), "{line}");
            Ok(0)
        }
        ActionCommand::Report {
            result,
            exit_code,
            repo,
            errors,
            base_cache_stored_output,
        } => {
            // Absent or unreadable: the report says to read the log instead.
            let errors: Option<crate::format::error::ErrorDocument> = errors
                .and_then(|p| std::fs::read(p).ok())
                .and_then(|b| serde_json::from_slice(&b).ok());
            let doc = match std::fs::read(&result) {
                Ok(bytes) => Some(ResultDocument::parse(&bytes).map_err(|e| {
                    Error::input(
                        InputError::new(format!("the result is not a claim-check result: {e}"))
                            .in_file(result.display().to_string())
                            .help("pass the file `claim-check --result-out` wrote, with the same shipmoor"),
                    )
                })?),
                Err(_) => None,
            };
            let seed = format!(
                "{}{}",
                std::process::id(),
                time::OffsetDateTime::now_utc().unix_timestamp_nanos()
            );
            let mut r = action::report(doc.as_ref(), exit_code, &repo, &seed, errors.as_ref());
            if base_cache_stored_output {
                let stored = action::base_cache_stored(doc.as_ref());
                r.outputs.push_str(&action::output_entry(
                    "base-cache-stored",
                    if stored { "true" } else { "false" },
                    &seed,
                ));
            }
            let mut out = std::io::stdout();
            for a in &r.annotations {
                let _ = writeln!(out, "{a}");
            }
            if !action::append_env_file("GITHUB_OUTPUT", &r.outputs)? {
                let _ = write!(out, "{}", r.outputs);
            }
            action::append_env_file("GITHUB_STEP_SUMMARY", &r.summary)?;
            Ok(0)
        }
        ActionCommand::Event { body_out } => {
            let event = action::event().unwrap_or_default();
            let sha = |which: &str| {
                action::pull_request_sha(&event, which)
                    .filter(|s| crate::git::CommitId::parse(s).is_some())
                    .unwrap_or_default()
            };
            let mut out = std::io::stdout();
            let number = action::pull_request_number(&event)
                .map(|n| n.to_string())
                .unwrap_or_default();
            let _ = writeln!(out, "number={number}");
            let _ = writeln!(out, "base={}", sha("base"));
            let _ = writeln!(out, "head={}", sha("head"));
            if let Some(path) = body_out {
                // A null body is normal (a pull request opened without a description).
                let body = event
                    .pointer("/pull_request/body")
                    .and_then(|v| v.as_str())
                    .unwrap_or("");
                crate::nofollow::write_atomic(&path, None, body.as_bytes())?;
            }
            Ok(0)
        }
        ActionCommand::Gate {
            verdict,
            exit_code,
            fail_on,
        } => match action::gate(&verdict, exit_code, &fail_on) {
            Ok(msg) => {
                let _ = writeln!(std::io::stdout(), "Claim Check: {msg}");
                Ok(0)
            }
            Err(msg) => {
                let _ = writeln!(
                    std::io::stdout(),
                    "::error title=Claim Check::{}",
                    action::escape_data(&msg.to_string())
                );
                Ok(1)
            }
        },
    }
}
