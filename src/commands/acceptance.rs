//! `shipmoor acceptance lint | tags | commit`.

use std::io::Write;

use crate::acceptance::{self, AcceptanceState};
use crate::cli::{AcceptanceArgs, AcceptanceCommand, Format};
use crate::error::{Error, InputError};
use crate::git::Git;

pub fn run(cmd: AcceptanceCommand) -> Result<i32, Error> {
    match cmd {
        AcceptanceCommand::Lint(args) => {
            let (set, _) = load(&args)?;
            let mut out = std::io::stdout();
            let _ = writeln!(
                out,
                "{}: ok ({} criteria, {}{})",
                set.display_path,
                set.criteria.len(),
                set.state.as_str(),
                if set.state == AcceptanceState::Draft {
                    "; commit it with `shipmoor acceptance commit`"
                } else {
                    ""
                }
            );
            Ok(0)
        }
        AcceptanceCommand::Tags { args, format } => {
            let (set, _) = load(&args)?;
            let mut out = std::io::stdout();
            match format {
                Format::Human => {
                    let width = set.criteria.iter().map(|c| c.id.len()).max().unwrap_or(0);
                    for c in &set.criteria {
                        let _ = writeln!(out, "{:width$}  {}", c.id, c.tag);
                    }
                }
                Format::Json => {
                    let v: Vec<_> = set
                        .criteria
                        .iter()
                        .map(|c| serde_json::json!({"id": c.id, "tag": c.tag, "requirement": c.requirement()}))
                        .collect();
                    let _ = writeln!(
                        out,
                        "{}",
                        serde_json::to_string_pretty(&v).unwrap_or_default()
                    );
                }
            }
            Ok(0)
        }
        AcceptanceCommand::Commit(args) => {
            let (set, located) = load(&args)?;
            if set.state != AcceptanceState::Draft {
                let _ = writeln!(std::io::stdout(), "{}: already committed", set.display_path);
                return Ok(0);
            }
            let target = located.path.with_extension("");
            let target = if target.extension().is_some_and(|e| e == "yaml") {
                target
            } else {
                located.path.with_file_name("acceptance.yaml")
            };
            if target.exists() {
                return Err(Error::input(
                    InputError::new(format!("`{}` already exists", target.display())).help(
                        "remove the draft, or merge it into the committed acceptance set by hand",
                    ),
                ));
            }
            std::fs::rename(&located.path, &target)?;
            let _ = writeln!(
                std::io::stdout(),
                "committed {} criteria as {}",
                set.criteria.len(),
                target.display()
            );
            Ok(0)
        }
    }
}

fn load(args: &AcceptanceArgs) -> Result<(acceptance::AcceptanceSet, acceptance::Located), Error> {
    let root = Git::discover(&args.repo)
        .map(|g| g.root().to_path_buf())
        .unwrap_or_else(|_| args.repo.clone());
    let located = acceptance::locate(&root, args.acceptance.as_deref())?;
    let set = acceptance::load(&located)?;
    Ok((set, located))
}
