//! `shipmoor explain CRITERION`: one criterion of the last run, from its statement and evidence
//! (see [`crate::report::explain`]). Exit 0 explained, 2 input error.

use std::io::Write;

use crate::cli::{ExplainArgs, Format};
use crate::error::{Error, InputError};
use crate::evidence::StoreReader;
use crate::format::statement::Statement;
use crate::git::Git;
use crate::report::explain;

/// The most of a statement that is read.
const STATEMENT_LIMIT: u64 = 64 << 20;

pub fn run(args: ExplainArgs) -> Result<i32, Error> {
    let git = Git::discover(&args.repo)?;
    let root = git.root().to_path_buf();
    let vsa = args
        .vsa
        .clone()
        .unwrap_or_else(|| root.join(".shipmoor/claim-check.vsa.json"));
    let shown = vsa.display().to_string();
    let bytes = crate::nofollow::read_regular(&vsa, STATEMENT_LIMIT).map_err(|e| {
        Error::input(
            InputError::new(format!("cannot read the statement {shown}: {e}"))
                .in_file(&shown)
                .help(
            "run `shipmoor claim-check` first (it writes .shipmoor/claim-check.vsa.json), or pass --vsa",
        ),
        )
    })?;
    let statement: Statement = serde_json::from_slice(&bytes).map_err(|e| {
        Error::input(
            InputError::new(format!("{shown} is not a Claim Check statement: {e}"))
                .at(&shown, e.line(), e.column())
                .help(
            "pass the statement (claim-check.vsa.json), not its envelope or bundle, or run `shipmoor claim-check` again",
        ),
        )
    })?;
    let ext = &statement.predicate.extension;
    let Some(d) = explain::find(ext, &args.criterion) else {
        let known: Vec<String> = ext
            .dispositions
            .iter()
            .map(|d| format!("{} ({})", d.id, d.tag))
            .collect();
        let err = InputError::new(format!(
            "no criterion `{}` among the {} this run records",
            args.criterion,
            ext.dispositions.len()
        ))
        .in_file(shown);
        return Err(Error::input(err.help(format!(
            "name a criterion by its id or its tag: {}",
            if known.is_empty() {
                "the run has none".to_string()
            } else {
                known.join(", ")
            }
        ))));
    };
    let store_dir = args
        .evidence_dir
        .clone()
        .unwrap_or_else(|| root.join(".shipmoor/evidence"));
    let store = StoreReader::open(&store_dir).ok();
    let explained = explain::explain(ext, d, store.as_ref());
    let mut out = std::io::stdout();
    match args.format {
        Format::Json => {
            let text = serde_json::to_string_pretty(&explained).map_err(Error::crash)?;
            let _ = writeln!(out, "{text}");
        }
        Format::Human => {
            let width = crate::report::terminal::width();
            let _ = write!(out, "{}", explain::render(&explained, width));
        }
    }
    Ok(crate::error::EXIT_OK)
}
