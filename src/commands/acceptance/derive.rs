//! `shipmoor acceptance derive`: the change's draft from its own words.
//!
//! 1. the texts ([`intent_texts`]): `--from`, the commits of `--from-commits`, else the pull
//!    request of `GITHUB_EVENT_PATH`; with `--linked-issues`, the issues it closes, read through
//!    the REST API; every bad input an input error before anything is written;
//! 2. the criteria derived from them ([`acceptance::derive`]), their ids settled against the
//!    existing draft and the other acceptance files ([`acceptance::draft::settle_ids`]);
//! 3. the draft, validated, written atomically, and each criterion printed with its confidence,
//!    its tag and its source.

use std::io::Write;

use super::change_branch;
use crate::acceptance::{self, claim, AcceptanceState};
use crate::error::{Error, InputError};
use crate::git::Git;

/// `acceptance derive`'s flags.
pub(super) struct DeriveArgs<'a> {
    pub(super) repo: &'a std::path::Path,
    pub(super) from: Option<&'a std::path::Path>,
    pub(super) from_commits: Option<&'a str>,
    pub(super) linked_issues: bool,
    pub(super) judge: bool,
    pub(super) force: bool,
}

/// One text to derive from, owned: its name for source pointers, and its words.
struct NamedText {
    name: String,
    body: String,
}

/// `acceptance derive`: the texts, the criteria derived from them with their ids settled
/// against the existing draft and the other acceptance files, then the draft, written only when
/// everything before it worked.
pub(super) fn derive(args: &DeriveArgs<'_>) -> Result<i32, Error> {
    let git = Git::discover(args.repo).ok();
    let root = git
        .as_ref()
        .map(|g| g.root().to_path_buf())
        .unwrap_or_else(|| args.repo.to_path_buf());
    let texts = intent_texts(args, git.as_ref())?;
    let named: Vec<acceptance::derive::Text<'_>> = texts
        .iter()
        .map(|t| acceptance::derive::Text {
            name: &t.name,
            body: &t.body,
        })
        .collect();
    let mut derived = acceptance::derive::derive(&named);
    if args.judge {
        let proposed = judge_proposals(&root, &named, &derived)?;
        derived.extend(proposed);
    }
    if derived.is_empty() {
        let names: Vec<&str> = texts.iter().map(|t| t.name.as_str()).collect();
        let mut e = InputError::new(format!(
            "nothing to derive: no acceptance criterion in {}",
            names.join(", ")
        ))
        .help("write the criteria as a Markdown checklist (`- [ ] …`) under an `Acceptance criteria` heading, or write the acceptance file by hand (`shipmoor acceptance init`)");
        if let Some(from) = args.from.filter(|f| *f != std::path::Path::new("-")) {
            e = e.in_file(from.display().to_string());
        }
        return Err(Error::input(e));
    }
    let rel = match git.as_ref().and_then(change_branch) {
        // One file per change: concurrent branches never write the same one.
        Some(branch) => format!("{}{branch}.yaml.draft", claim::CHANGES),
        None => ".shipmoor/acceptance.yaml.draft".to_string(),
    };
    let path = root.join(&rel);
    let committed = root.join(rel.trim_end_matches(".draft"));
    if committed.exists() && !args.force {
        return Err(Error::input(
            InputError::new(format!(
                "this change's acceptance file is committed already: {}",
                committed.display()
            ))
            .in_file(rel.trim_end_matches(".draft").to_string())
            .help("edit it by hand, or pass --force to draft beside it"),
        ));
    }
    // The existing draft's ids stay with their text; one that does not validate is replaced
    // only with --force.
    let previous = match std::fs::read_to_string(&path) {
        Ok(text) => {
            match acceptance::parse::parse(&text, &rel, AcceptanceState::Draft, String::new()) {
                Ok(set) => set.criteria,
                Err(_) if args.force => Vec::new(),
                Err(mut problems) => {
                    if let Some(first) = problems.first_mut() {
                        first.help = Some("fix it so its ids are kept, or pass --force to draft it afresh (new ids, new tags)".into());
                    }
                    return Err(Error::Input(problems));
                }
            }
        }
        Err(_) => Vec::new(),
    };
    // Ids other acceptance files hold are not the draft's to take.
    let taken: std::collections::BTreeSet<String> =
        claim::Files::read(&claim::FileSource::Worktree(&root), false)
            .map(|f| {
                f.files
                    .iter()
                    .filter(|f| f.path != rel)
                    .flat_map(|f| f.set.criteria.iter().map(|c| c.id.clone()))
                    .collect()
            })
            .unwrap_or_default();
    acceptance::draft::settle_ids(&mut derived, &previous, &taken);
    let yaml = acceptance::draft::yaml(&derived, &rel).map_err(Error::crash)?;
    // The draft must be one the parser accepts.
    acceptance::parse::parse(&yaml, &rel, AcceptanceState::Draft, String::new()).map_err(|e| {
        Error::crash(format!(
            "the drafted acceptance set does not validate: {:?}",
            e.first()
        ))
    })?;
    crate::nofollow::write_atomic(&path, Some(&root), yaml.as_bytes())?;
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "drafted {} as {}{}",
        crate::report::criteria_count(derived.len()),
        path.display(),
        if previous.is_empty() {
            ""
        } else {
            " (the ids of unchanged criteria kept)"
        }
    );
    let width = derived.iter().map(|d| d.id.len()).max().unwrap_or(0);
    let tag_width = derived
        .iter()
        .map(|d| acceptance::tag_for(&d.id).len())
        .max()
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "\n  {:<10}  {:width$}  {:tag_width$}  source",
        "confidence", "id", "tag"
    );
    for d in &derived {
        let _ = writeln!(
            out,
            "  {:<10.2}  {:width$}  {:tag_width$}  {}{}",
            d.confidence,
            d.id,
            acceptance::tag_for(&d.id),
            acceptance::draft::source_pointer(d),
            if d.required { "" } else { " (optional)" }
        );
    }
    let _ = writeln!(
        out,
        "\nnext: review {rel}, name a test after each tag, then `shipmoor acceptance commit`"
    );
    Ok(0)
}

/// What the judges of the project settings (commands and chat endpoints) propose beyond
/// `derived`; a judge that gives no answer is named on stderr and the draft is made without it.
fn judge_proposals(
    root: &std::path::Path,
    texts: &[acceptance::derive::Text<'_>],
    derived: &[acceptance::derive::Derived],
) -> Result<Vec<acceptance::derive::Derived>, Error> {
    let files = claim::Files::read(&claim::FileSource::Worktree(root), true)?;
    let panel = claim::compare(&files, None).set.judge;
    if panel.is_empty() {
        return Err(Error::input(
            InputError::new("--judge: the project settings configure no judge")
                .help("add a judge to .shipmoor/config.yaml (`judge: { command: [\"python3\", \"tools/judge.py\"] }`, or a chat endpoint), or derive without --judge"),
        ));
    }
    // A chat judge's key variable is checked before anything is asked, as a run's input checks
    // do: a draft made without the judge asked for would look like one it saw.
    let missing: Vec<InputError> = panel
        .iter()
        .filter(|spec| matches!(spec.transport, crate::judge::Transport::Chat { .. }))
        .filter_map(|spec| crate::judge::chat::ChatJudge::from_spec(spec).err())
        .collect();
    if !missing.is_empty() {
        return Err(Error::Input(missing));
    }
    let request = crate::judge::propose::request(texts, derived);
    // A command judge of the settings is the change's to name: it runs in the sandbox where
    // the kernel has one, reading the repository, writing only a home of its own.
    let home = tempfile::Builder::new()
        .prefix("shipmoor-derive-")
        .tempdir()
        .map_err(|e| Error::crash(format!("temporary directory: {e}")))?;
    let confinement = super::super::confinement::confinement(
        crate::sandbox::Mode::Auto,
        None,
        None,
        super::super::confinement::Extra::default(),
    )?;
    let jail = confinement.jail_reading(&[home.path()], &[root]);
    let mut out: Vec<acceptance::derive::Derived> = Vec::new();
    for spec in &panel {
        let known: Vec<acceptance::derive::Derived> =
            derived.iter().chain(out.iter()).cloned().collect();
        match crate::judge::propose::ask(spec, root, request.clone(), &known, &jail) {
            Ok(proposed) => out.extend(proposed),
            Err(why) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "warning: the judge `{}` proposed nothing: {why}",
                    spec.name
                );
            }
        }
    }
    Ok(out)
}

/// The texts `acceptance derive` reads: --from, the commits of --from-commits, else the pull
/// request of GITHUB_EVENT_PATH; with --linked-issues, the issues that pull request closes.
fn intent_texts(args: &DeriveArgs<'_>, git: Option<&Git>) -> Result<Vec<NamedText>, Error> {
    let mut texts = Vec::new();
    if let Some(from) = args.from {
        texts.push(NamedText {
            name: format!("--from {}", from.display()),
            body: read_from(from)?,
        });
    }
    if let Some(range) = args.from_commits {
        let git = git.ok_or_else(|| {
            Error::input(
                InputError::new("--from-commits needs a git repository")
                    .help("run inside the repository, or pass --repo DIR"),
            )
        })?;
        texts.extend(commit_texts(git, range)?);
    }
    let explicit = args.from.is_some() || args.from_commits.is_some();
    if explicit && !args.linked_issues {
        return Ok(texts);
    }
    let Some((event_path, event)) = crate::action::read_event()? else {
        return Err(Error::input(
            InputError::new(if args.linked_issues {
                "--linked-issues reads the pull request in GITHUB_EVENT_PATH, and it is not set"
            } else {
                "no text to derive from: no --from, no --from-commits, and GITHUB_EVENT_PATH is not set"
            })
            .help("pass --from FILE (an issue, a task, a pull request's description; `-` for standard input) or --from-commits BASE..HEAD; in a pull request's workflow, the pull request is read"),
        ));
    };
    let Some(pr) = event.get("pull_request").filter(|p| p.is_object()) else {
        return Err(Error::input(
            InputError::new("the event is about no pull request (no `pull_request` in it)")
                .in_file(event_path)
                .help("run it on a `pull_request` event, or pass the text with --from FILE"),
        ));
    };
    let number = pr
        .get("number")
        .or_else(|| event.get("number"))
        .and_then(serde_json::Value::as_u64);
    let pr_name = match number {
        Some(n) => format!("pull request #{n}"),
        None => "the pull request".to_string(),
    };
    let title = pr.get("title").and_then(|t| t.as_str()).unwrap_or_default();
    let body = pr.get("body").and_then(|t| t.as_str()).unwrap_or_default();
    if !explicit {
        texts.push(NamedText {
            name: format!("{pr_name}'s title"),
            body: title.to_string(),
        });
        texts.push(NamedText {
            name: pr_name.clone(),
            body: body.to_string(),
        });
    }
    if args.linked_issues {
        texts.extend(linked_issue_texts(
            &event,
            &format!("{title}\n{body}"),
            &pr_name,
        )?);
    }
    Ok(texts)
}

/// A --from text (`-`: standard input); a file that cannot be read is an input error naming it.
fn read_from(from: &std::path::Path) -> Result<String, Error> {
    if from == std::path::Path::new("-") {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map_err(|e| {
            Error::input(
                InputError::new(format!("cannot read standard input (--from -): {e}"))
                    .help("pipe UTF-8 text in, or pass a file with --from FILE"),
            )
        })?;
        return Ok(s);
    }
    std::fs::read_to_string(from).map_err(|e| {
        Error::input(
            InputError::new(format!("cannot read --from: {e}"))
                .in_file(from.display().to_string())
                .help("pass the path of a UTF-8 text file, or `-` to read standard input"),
        )
    })
}

/// The messages of the commits of `range` (`BASE..HEAD`), oldest first, each named by its
/// short id.
fn commit_texts(git: &Git, range: &str) -> Result<Vec<NamedText>, Error> {
    let bad = || {
        Error::input(
            InputError::new(format!("--from-commits `{range}` is not a range"))
                .help("name the commits as BASE..HEAD, for example `--from-commits main..HEAD`"),
        )
    };
    let (base, head) = range.split_once("..").ok_or_else(bad)?;
    if base.is_empty() || head.is_empty() || head.starts_with('.') {
        return Err(bad());
    }
    let base = git.resolve(base, "--from-commits")?;
    let head = git.resolve(head, "--from-commits")?;
    let messages = git.messages(&base, &head)?;
    if messages.is_empty() {
        return Err(Error::input(
            InputError::new(format!("--from-commits `{range}` holds no commit")).help(
                "name the commits the change adds: BASE, the commit it starts from, then HEAD",
            ),
        ));
    }
    Ok(messages
        .into_iter()
        .map(|(commit, message)| NamedText {
            name: format!("commit {}", commit.short()),
            body: message,
        })
        .collect())
}

/// The titles and bodies of the issues the pull request closes, read with GITHUB_TOKEN. An
/// issue that cannot be read is named on stderr and left out.
fn linked_issue_texts(
    event: &serde_json::Value,
    pr_text: &str,
    pr_name: &str,
) -> Result<Vec<NamedText>, Error> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let home = var("GITHUB_REPOSITORY")
        .or_else(|| {
            event
                .pointer("/repository/full_name")
                .and_then(|v| v.as_str())
                .map(str::to_string)
        })
        .unwrap_or_default();
    let refs = crate::action::linked::closing_references(pr_text, &home);
    if refs.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "note: {pr_name} closes no issue (no `Fixes #N`, `Closes #N` or `Resolves #N`)"
        );
        return Ok(Vec::new());
    }
    let token = var("GITHUB_TOKEN").ok_or_else(|| {
        Error::input(
            InputError::new("--linked-issues needs GITHUB_TOKEN to read the issues")
                .help("give the step `env: GITHUB_TOKEN: ${{ github.token }}` (with `permissions: issues: read`)"),
        )
    })?;
    let api_url = var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".to_string());
    let api = crate::action::rest::Api::new(&api_url, token.trim()).map_err(|why| {
        Error::input(
            InputError::new(format!("--linked-issues: {why}"))
                .help("set GITHUB_API_URL to the REST API's https:// address"),
        )
    })?;
    let mut texts = Vec::new();
    for r in refs {
        let name = r.name(&home);
        match crate::action::linked::fetch(&api, &r) {
            Ok(issue) => {
                texts.push(NamedText {
                    name: format!("{name}'s title"),
                    body: issue.title.unwrap_or_default(),
                });
                texts.push(NamedText {
                    name,
                    body: issue.body.unwrap_or_default(),
                });
            }
            Err(f) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "warning: {name} could not be read ({f}); derived without it"
                );
            }
        }
    }
    Ok(texts)
}
