//! `shipmoor acceptance lint | tags | commit`.

use std::io::Write;

mod derive;

use crate::acceptance::{self, claim, AcceptanceState};
use crate::cli::{AcceptanceArgs, AcceptanceCommand, Format};
use crate::error::{Error, InputError, IoContext};
use crate::git::Git;

pub fn run(cmd: AcceptanceCommand) -> Result<i32, Error> {
    match cmd {
        AcceptanceCommand::Init { repo, from, force } => init(&repo, from.as_deref(), force),
        AcceptanceCommand::Lint { args, format } => lint(&args, format),
        AcceptanceCommand::Tags {
            args,
            format,
            where_,
        } => tags(&args, format, where_),
        AcceptanceCommand::Derive {
            repo,
            from,
            from_commits,
            linked_issues,
            judge,
            force,
        } => derive::derive(&derive::DeriveArgs {
            repo: &repo,
            from: from.as_deref(),
            from_commits: from_commits.as_deref(),
            linked_issues,
            judge,
            force,
        }),
        AcceptanceCommand::Commit {
            args,
            min_confidence,
        } => commit(&args, min_confidence),
    }
}

/// `acceptance lint`: each acceptance file checked, with its criteria (this change's claim,
/// those inherited) and its state.
fn lint(args: &AcceptanceArgs, format: Format) -> Result<i32, Error> {
    let view = view(args)?;
    if format == Format::Json {
        return lint_json(&view);
    }
    let mut out = std::io::stdout();
    if let Some(note) = &view.note {
        let _ = writeln!(out, "{note}");
    }
    if let Some(config) = &view.config {
        let _ = writeln!(
            out,
            "{}: ok (project settings: {})",
            config.display_path,
            if config.settings_keys.is_empty() {
                "none".to_string()
            } else {
                config.settings_keys.join(", ")
            }
        );
    }
    for f in &view.files {
        let claimed: Vec<&str> = f
            .criteria
            .iter()
            .filter(|c| c.claimed)
            .map(|c| c.id.as_str())
            .collect();
        let inherited: Vec<&str> = f
            .criteria
            .iter()
            .filter(|c| !c.claimed)
            .map(|c| c.id.as_str())
            .collect();
        let _ = writeln!(
            out,
            "{}: ok ({}, {}{})",
            f.path,
            crate::report::criteria_count(f.criteria.len()),
            f.state.as_str(),
            if f.state == AcceptanceState::Draft {
                "; commit it with `shipmoor acceptance commit`"
            } else {
                ""
            }
        );
        if !claimed.is_empty() {
            let _ = writeln!(out, "  this change's claim: {}", claimed.join(", "));
        }
        if !inherited.is_empty() {
            let _ = writeln!(
                out,
                "  inherited from earlier changes: {}",
                inherited.join(", ")
            );
        }
    }
    Ok(0)
}

/// `acceptance tags`: every criterion's tag, and with `--where` where each occurs in the
/// checkout's tracked files.
fn tags(args: &AcceptanceArgs, format: Format, where_: bool) -> Result<i32, Error> {
    let view = view(args)?;
    let scan = if where_ {
        let tags: Vec<String> = view
            .files
            .iter()
            .flat_map(|f| f.criteria.iter().map(|c| c.tag.clone()))
            .collect();
        Some(scan_checkout(args, &tags)?)
    } else {
        None
    };
    let occurrences = |tag: &str| {
        scan.as_ref()
            .and_then(|s| s.tags.get(tag))
            .cloned()
            .unwrap_or_default()
    };
    let mut out = std::io::stdout();
    let rows: Vec<(&str, &claim::FileCriterion)> = view
        .files
        .iter()
        .flat_map(|f| f.criteria.iter().map(move |c| (f.path.as_str(), c)))
        .collect();
    match format {
        Format::Human => {
            let width = rows.iter().map(|(_, c)| c.id.len()).max().unwrap_or(0);
            // One file that is all this change's claim reads as it always has: `id  tag`.
            let plain = view.files.len() == 1 && rows.iter().all(|(_, c)| c.claimed);
            let mut file = "";
            let indent = if plain { "    " } else { "      " };
            for (path, c) in &rows {
                if plain {
                    let _ = writeln!(out, "{:width$}  {}", c.id, c.tag);
                } else {
                    if *path != file {
                        let _ = writeln!(out, "{path}");
                        file = path;
                    }
                    let _ = writeln!(
                        out,
                        "  {:width$}  {}  {}",
                        c.id,
                        c.tag,
                        if c.claimed { "claim" } else { "inherited" }
                    );
                }
                if scan.is_some() {
                    let found = occurrences(&c.tag);
                    if found.is_empty() {
                        let _ = writeln!(out, "{indent}(in no tracked file)");
                    }
                    for o in found {
                        let _ = writeln!(out, "{indent}{}", where_line(&o));
                    }
                }
            }
            if let Some(s) = &scan {
                let _ = writeln!(
                    out,
                    "searched {} tracked files ({} binary, {} not readable) in {:.2}s",
                    s.files,
                    s.binary,
                    s.unreadable,
                    s.duration.as_secs_f64()
                );
            }
        }
        Format::Json => {
            let v: Vec<_> = rows
                .iter()
                .map(|(path, c)| {
                    let mut v = serde_json::json!({
                        "id": c.id, "tag": c.tag, "requirement": c.requirement,
                        "file": path, "claim": c.claimed,
                    });
                    if scan.is_some() {
                        v["where"] = serde_json::json!(occurrences(&c.tag));
                    }
                    v
                })
                .collect();
            let doc = TagsDocument {
                schema: TAGS_SCHEMA,
                criteria: v,
            };
            let text = serde_json::to_string_pretty(&doc).map_err(Error::crash)?;
            let _ = writeln!(out, "{text}");
        }
    }
    Ok(0)
}

/// The schema of `acceptance lint --format json`.
pub const LINT_SCHEMA: &str = "claim_check.lint.v1";

/// The schema of `acceptance tags --format json`: `{"schema", "criteria": [...]}`.
pub const TAGS_SCHEMA: &str = "claim_check.tags.v1";

/// What `acceptance tags --format json` prints: the schema first, as every document does.
#[derive(serde::Serialize)]
struct TagsDocument {
    schema: &'static str,
    criteria: Vec<serde_json::Value>,
}

/// `acceptance lint --format json`: what the human form says, as one document. A file that does
/// not validate never gets here: the error document (`claim_check.error.v1`) says why.
fn lint_json(view: &View) -> Result<i32, Error> {
    let files: Vec<_> = view
        .files
        .iter()
        .map(|f| {
            let criteria: Vec<_> = f
                .criteria
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "id": c.id, "tag": c.tag, "requirement": c.requirement, "claim": c.claimed,
                    })
                })
                .collect();
            serde_json::json!({ "file": f.path, "state": f.state.as_str(), "criteria": criteria })
        })
        .collect();
    let config = view
        .config
        .as_ref()
        .map(|c| serde_json::json!({ "file": c.display_path, "settings": c.settings_keys }));
    let doc = serde_json::json!({
        "schema": LINT_SCHEMA,
        "ok": true,
        "note": view.note,
        "config": config,
        "files": files,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(Error::crash)?;
    let _ = writeln!(std::io::stdout(), "{text}");
    Ok(0)
}

/// Promotes the change's own draft: the named file, or the one draft among the acceptance
/// files that holds this change's claim; with `min_confidence`, without the criteria derived
/// with less confidence than that.
fn commit(args: &AcceptanceArgs, min_confidence: Option<f64>) -> Result<i32, Error> {
    let located = if args.acceptance.is_some() {
        let (_, located) = load(args)?;
        located
    } else {
        let view = view(args)?;
        let own: Vec<&claim::FileClaim> = view
            .files
            .iter()
            .filter(|f| f.state == AcceptanceState::Draft && f.criteria.iter().any(|c| c.claimed))
            .collect();
        match own.as_slice() {
            [] => {
                let drafts: Vec<&str> = view
                    .files
                    .iter()
                    .filter(|f| f.state == AcceptanceState::Draft)
                    .map(|f| f.path.as_str())
                    .collect();
                if drafts.is_empty() {
                    let _ = writeln!(
                        std::io::stdout(),
                        "no draft to commit: every acceptance file is committed"
                    );
                    return Ok(0);
                }
                return Err(Error::input(
                    InputError::new(format!(
                        "no draft of this change's own: {} holds only criteria inherited from earlier changes",
                        drafts.join(", ")
                    ))
                    .help("name the draft to promote with --acceptance PATH"),
                ));
            }
            [one] => acceptance::Located {
                path: view.root.join(&one.path),
                display_path: one.path.clone(),
                state: AcceptanceState::Draft,
            },
            many => {
                return Err(Error::input(
                    InputError::new(format!(
                        "this change has {} drafts: {}",
                        many.len(),
                        many.iter()
                            .map(|f| f.path.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                    .help("name the one to promote with --acceptance PATH"),
                ))
            }
        }
    };
    let set = acceptance::load(&located)?;
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
            InputError::new(format!("`{}` already exists", target.display()))
                .help("remove the draft, or merge it into the committed acceptance set by hand"),
        ));
    }
    let low: Vec<&acceptance::Criterion> = match min_confidence {
        Some(x) => set
            .criteria
            .iter()
            .filter(|c| c.confidence.is_some_and(|k| k.value() < x))
            .collect(),
        None => Vec::new(),
    };
    let mut out = std::io::stdout();
    if low.is_empty() {
        std::fs::rename(&located.path, &target).at("rename", &located.path)?;
    } else {
        let x = min_confidence.unwrap_or_default();
        if low.len() == set.criteria.len() {
            return Err(Error::input(
                InputError::new(format!(
                    "--min-confidence {x} would drop every criterion of the draft (the highest confidence is {})",
                    set.criteria
                        .iter()
                        .filter_map(|c| c.confidence)
                        .map(|c| c.value())
                        .fold(0.0, f64::max)
                ))
                .in_file(located.display_path.clone())
                .help("an acceptance set with no criteria can never be READY: lower --min-confidence, or edit the draft"),
            ));
        }
        let text = std::fs::read_to_string(&located.path).at("read", &located.path)?;
        let kept = without_criteria(&text, &low);
        let shown = target.display().to_string();
        acceptance::parse::parse(&kept, &shown, AcceptanceState::Committed, String::new())
            .map_err(|_| {
                Error::input(
                    InputError::new(format!(
                        "the draft's criteria below {x} could not be cut out of it and leave a valid file"
                    ))
                    .in_file(located.display_path.clone())
                    .help("remove them from the draft by hand, then `shipmoor acceptance commit`"),
                )
            })?;
        let repository = crate::git::Git::discover(&args.repo).ok();
        crate::nofollow::write_atomic(
            &target,
            repository.as_ref().map(|g| g.root()),
            kept.as_bytes(),
        )?;
        std::fs::remove_file(&located.path).at("remove", &located.path)?;
        let _ = writeln!(
            out,
            "dropped {} below confidence {x}:",
            crate::report::criteria_count(low.len())
        );
        for c in &low {
            let _ = writeln!(
                out,
                "  {}  {}  {}",
                c.confidence.map(|k| k.to_string()).unwrap_or_default(),
                c.id,
                c.ac.replace('\n', " ")
            );
        }
    }
    let _ = writeln!(
        out,
        "committed {} as {}",
        crate::report::criteria_count(set.criteria.len() - low.len()),
        target.display()
    );
    Ok(0)
}

/// `text` (an acceptance file) without the list items of `drop`: each from its `-` line to the
/// next line indented no deeper than that `-` (the next item, or the next top-level key).
fn without_criteria(text: &str, drop: &[&acceptance::Criterion]) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut cut = vec![false; lines.len()];
    for c in drop {
        // The item's `-`: on the line of its `id`, or the nearest line above it.
        let Some(start) = (0..c.line.min(lines.len()))
            .rev()
            .find(|&i| lines[i].trim_start().starts_with('-'))
        else {
            continue;
        };
        let dash = indent(lines[start]);
        let mut end = start + 1;
        while end < lines.len() {
            let l = lines[end];
            if !l.trim().is_empty() && indent(l) <= dash {
                break;
            }
            end += 1;
        }
        for flag in &mut cut[start..end] {
            *flag = true;
        }
    }
    lines
        .iter()
        .zip(cut)
        .filter(|(_, c)| !c)
        .map(|(l, _)| *l)
        .collect()
}

/// What `lint` and `tags` show: every acceptance file of the worktree (or the one named), each
/// criterion marked as this change's claim or inherited against the base.
struct View {
    root: std::path::PathBuf,
    files: Vec<claim::FileClaim>,
    config: Option<acceptance::AcceptanceSet>,
    note: Option<String>,
}

fn view(args: &AcceptanceArgs) -> Result<View, Error> {
    let git = Git::discover(&args.repo).ok();
    let root = git
        .as_ref()
        .map(|g| g.root().to_path_buf())
        .unwrap_or_else(|| args.repo.clone());
    if args.acceptance.is_some() {
        let (set, located) = load(args)?;
        return Ok(View {
            root,
            files: vec![claim::FileClaim {
                path: located.display_path.clone(),
                state: set.state,
                criteria: set
                    .criteria
                    .iter()
                    .map(|c| claim::FileCriterion::of(c, true))
                    .collect(),
            }],
            config: None,
            note: None,
        });
    }
    let here = claim::Files::read(&claim::FileSource::Worktree(&root), true)?;
    if here.files.is_empty() && here.config.is_none() {
        // Nothing at all: the same message as always.
        load(args)?;
    }
    let mut note = None;
    let base = match (&git, &args.base) {
        (Some(g), Some(b)) => Some(g.resolve(b, "--base")?),
        (Some(g), None) => {
            let head = g.resolve("HEAD", "HEAD").ok();
            match head.map(|h| crate::commands::claim_check::default_base(g, &h)) {
                Some(Ok(b)) => Some(b),
                _ => None,
            }
        }
        (None, Some(_)) => {
            return Err(Error::input(
                InputError::new("--base needs a git repository")
                    .help("run inside the repository, or pass --repo DIR"),
            ))
        }
        (None, None) => None,
    };
    let base_files = match (&git, &base) {
        (Some(g), Some(b)) => Some(claim::Files::read(&claim::FileSource::Commit(g, b), false)?),
        _ => {
            note = Some(
                "no base commit (pass --base): every criterion reads as this change's claim"
                    .to_string(),
            );
            None
        }
    };
    let c = claim::compare(&here, base_files.as_ref());
    Ok(View {
        root,
        files: c.files,
        config: here.config.map(|f| f.set),
        note,
    })
}

/// The criteria drafted from a text (`-`: standard input); none is an input error.
fn criteria_from(from: &std::path::Path) -> Result<Vec<(String, String)>, Error> {
    let text = if from == std::path::Path::new("-") {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
            .at("read", "standard input")?;
        s
    } else {
        let bytes = crate::nofollow::read_named(from, crate::acceptance::ACCEPTANCE_LIMIT)
            .map_err(|e| Error::input(crate::nofollow::named_input_error(from, "--from", &e)))?;
        String::from_utf8(bytes).map_err(|_| {
            Error::input(
                InputError::new("--from is not UTF-8 text")
                    .in_file(from.display().to_string())
                    .help("save the file as UTF-8, or pass `-` and pipe the text in"),
            )
        })?
    };
    let name = format!("--from {}", from.display());
    let criteria: Vec<(String, String)> =
        crate::acceptance::derive::derive(&[crate::acceptance::derive::Text {
            name: &name,
            body: &text,
        }])
        .into_iter()
        .map(|d| (d.id, d.ac))
        .collect();
    if criteria.is_empty() {
        return Err(Error::input(
            InputError::new("no acceptance criteria in the text to draft them from")
                .in_file(from.display().to_string())
                .help("list them under an `Acceptance criteria` heading (a checklist or a list), or write them as \"must\" sentences"),
        ));
    }
    Ok(criteria)
}

/// The starter of a change's acceptance file: the drafted criteria, or one example to edit.
fn starter(criteria: &[(String, String)], from: Option<&std::path::Path>) -> Result<String, Error> {
    let mut yaml = String::from(
        "# This change's acceptance criteria: what it claims to do, one criterion each.\n\
         # `shipmoor claim-check` checks every criterion on the floor: a test whose name carries\n\
         # the criterion's tag (`shipmoor acceptance tags` prints them) must fail at the base\n\
         # commit and pass at this change's head. Commit this file with the change.\n",
    );
    if let Some(from) = from {
        let source = if from.as_os_str() == "-" {
            "standard input".to_string()
        } else {
            from.display().to_string()
        };
        yaml.push_str(&format!(
            "# Drafted from {source}: check each criterion says what you mean.\n"
        ));
    }
    yaml.push_str("version: 1\ncriteria:\n");
    let example = [(
        "describe-the-behaviour".to_string(),
        "Say in one sentence what a user can observe once the change is in.".to_string(),
    )];
    let listed = if criteria.is_empty() {
        &example[..]
    } else {
        criteria
    };
    for (id, ac) in listed {
        let quoted = serde_json::to_string(ac).map_err(Error::crash)?;
        yaml.push_str(&format!("  - id: {id}\n    ac: {quoted}\n"));
    }
    yaml.push_str(
        "    # required: false    # optional: left unmet, it is a gap (READY WITH GAPS), never a block\n\
         \x20   # check:             # or bind the criterion without a tag:\n\
         \x20   #   test: tests/test_refund.py::test_void   # a named test\n\
         \x20   #   command: sh checks/void.sh              # a command: non-zero at base, zero at head\n",
    );
    Ok(yaml)
}

const STARTER_CONFIG: &str =
    "# Settings every change's acceptance file shares: the runners, the judge, harness rules,\n\
# the pass-to-pass guard, what inherited criteria do (every key is on the book's acceptance\n\
# page: https://shipmoor.github.io/claim-check/book/acceptance.html).\n\
# Each example below is valid as it stands: remove the `# ` to use it.\n\
version: 1\n\
# runners:                 # detected when absent (Cargo.toml, pytest.ini, go.mod, package.json)\n\
#   - kind: pytest         # cargo | nextest | pytest | go | vitest | jest | junit-command\n\
#     root: .\n\
# guard: [\"tests/**\"]      # pass-to-pass: tests passing at base must still pass at head\n\
# inherited: guard         # earlier changes' criteria: their tests must still pass\n\
# harness:\n\
#   allow_changes: []      # test-harness files a change may edit (conftest.py, build.rs, ...)\n";

/// Keeps claim-check's outputs out of commits: they are the run's, not the change's.
const STARTER_GITIGNORE: &str =
    "# The outputs of `shipmoor claim-check` (the Action uploads them as artifacts).\n\
/claim-check.*.json\n\
/verify.md\n\
/evidence/\n\
# Base results kept across pushes (`--base-cache`).\n\
/cache/\n";

/// `acceptance init`: the change's acceptance file, and the shared files a first run needs.
fn init(repo: &std::path::Path, from: Option<&std::path::Path>, force: bool) -> Result<i32, Error> {
    let git = Git::discover(repo)?;
    let root = git.root().to_path_buf();
    let rel = match change_branch(&git) {
        Some(branch) => format!("{}{branch}.yaml", claim::CHANGES),
        None => ".shipmoor/acceptance.yaml".to_string(),
    };
    let criteria = match from {
        Some(f) => criteria_from(f)?,
        None => Vec::new(),
    };
    let path = root.join(&rel);
    if path.exists() && !force {
        return Err(Error::input(
            InputError::new("this change's acceptance file exists already")
                .in_file(rel.clone())
                .help("edit it, or pass --force to start it again"),
        ));
    }
    let yaml = starter(&criteria, from)?;
    acceptance::parse::parse(&yaml, &rel, AcceptanceState::Committed, String::new()).map_err(
        |e| {
            Error::crash(format!(
                "the starter acceptance file does not validate: {:?}",
                e.first()
            ))
        },
    )?;
    let config_rel = ".shipmoor/config.yaml";
    acceptance::parse::parse_config(STARTER_CONFIG, config_rel).map_err(|e| {
        Error::crash(format!(
            "the starter config does not validate: {:?}",
            e.first()
        ))
    })?;
    let mut written = vec![rel.clone()];
    crate::nofollow::write_atomic(&path, Some(&root), yaml.as_bytes())?;
    for (file, text) in [
        (config_rel, STARTER_CONFIG),
        (".shipmoor/.gitignore", STARTER_GITIGNORE),
    ] {
        let p = root.join(file);
        if !p.exists() {
            crate::nofollow::write_atomic(&p, Some(&root), text.as_bytes())?;
            written.push(file.to_string());
        }
    }
    let mut out = std::io::stdout();
    let _ = writeln!(out, "wrote {}", written.join(", "));
    let ids: Vec<&str> = if criteria.is_empty() {
        vec!["describe-the-behaviour"]
    } else {
        criteria.iter().map(|(id, _)| id.as_str()).collect()
    };
    let _ = writeln!(
        out,
        "\ncriteria and the tag each one's test carries in its name:"
    );
    for id in &ids {
        let _ = writeln!(out, "  {id:<32} {}", acceptance::tag_for(id));
    }
    let mut step = 0;
    let mut next = |line: String| {
        step += 1;
        let _ = writeln!(out, "  {step}. {line}");
    };
    let _ = writeln!(std::io::stdout(), "\nnext:");
    if criteria.is_empty() {
        next(format!("edit {rel} (changing an id changes its tag)"));
    }
    next(format!(
        "name a test with the tag, e.g. `def test_{}():`",
        acceptance::tag_for(ids[0]).to_lowercase().replace('-', "_")
    ));
    next("commit, then run `shipmoor claim-check`".to_string());
    Ok(0)
}

/// `path` (the tag is in the path), `path:line` (in the contents), or both.
fn where_line(o: &crate::floor::scan::Occurrence) -> String {
    match (o.in_path, o.line) {
        (true, Some(l)) => format!("{}:{l} (path and contents)", o.path),
        (true, None) => format!("{} (path)", o.path),
        (false, Some(l)) => format!("{}:{l}", o.path),
        (false, None) => o.path.clone(),
    }
}

/// The tag scan over the checkout's tracked files, every criterion's tag at once.
fn scan_checkout(
    args: &AcceptanceArgs,
    tags: &[String],
) -> Result<crate::floor::scan::TagScan, Error> {
    let git = Git::discover(&args.repo)?;
    crate::floor::scan::scan_tree(&git, tags, crate::floor::scan::default_threads()).map_err(|e| {
        Error::input(
            InputError::new(format!(
                "cannot scan {} for tags: {e}",
                git.root().display()
            ))
            .help("run it inside a git checkout, or pass one with --repo"),
        )
    })
}

/// The branch checked out, as a file name, when it is a change's branch (not the default
/// branch, not detached): `feature/refunds` → `feature-refunds`.
fn change_branch(git: &Git) -> Option<String> {
    let branch = git.current_branch()?;
    let default = git.default_branch().ok().flatten().unwrap_or_default();
    let default = default.rsplit('/').next().unwrap_or_default();
    if branch.is_empty() || branch == default || branch == "main" || branch == "master" {
        return None;
    }
    let name: String = branch
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let name = name.trim_matches(|c| c == '-' || c == '.').to_string();
    (!name.is_empty()).then_some(name)
}

fn load(args: &AcceptanceArgs) -> Result<(acceptance::AcceptanceSet, acceptance::Located), Error> {
    let root = Git::discover(&args.repo)
        .map(|g| g.root().to_path_buf())
        .unwrap_or_else(|_| args.repo.clone());
    let located = acceptance::locate(&root, args.acceptance.as_deref())?;
    let set = acceptance::load(&located)?;
    Ok((set, located))
}

#[cfg(test)]
mod tests {
    use super::STARTER_CONFIG;

    /// The starter settings' commented examples are valid once uncommented, together.
    #[test]
    fn the_starter_configs_examples_are_valid_uncommented() {
        let (_, examples) = STARTER_CONFIG.split_once("version: 1\n").unwrap();
        let uncommented: String = examples
            .lines()
            .map(|l| format!("{}\n", l.strip_prefix("# ").unwrap_or(l)))
            .collect();
        let text = format!("version: 1\n{uncommented}");
        crate::acceptance::parse::parse_config(&text, ".shipmoor/config.yaml")
            .unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        assert!(text.contains("\nguard: [\"tests/**\"]"), "{text}");
        // And as written, the starter itself parses.
        assert!(
            crate::acceptance::parse::parse_config(STARTER_CONFIG, ".shipmoor/config.yaml").is_ok()
        );
    }
}
