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
        AcceptanceCommand::Tags {
            args,
            format,
            where_,
        } => {
            let (set, _) = load(&args)?;
            let scan = if where_ {
                Some(scan_checkout(&args, &set)?)
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
            match format {
                Format::Human => {
                    let width = set.criteria.iter().map(|c| c.id.len()).max().unwrap_or(0);
                    for c in &set.criteria {
                        let _ = writeln!(out, "{:width$}  {}", c.id, c.tag);
                        if scan.is_some() {
                            let found = occurrences(&c.tag);
                            if found.is_empty() {
                                let _ = writeln!(out, "    (in no tracked file)");
                            }
                            for o in found {
                                let _ = writeln!(out, "    {}", where_line(&o));
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
                    let v: Vec<_> = set
                        .criteria
                        .iter()
                        .map(|c| {
                            let mut v = serde_json::json!({"id": c.id, "tag": c.tag, "requirement": c.requirement()});
                            if scan.is_some() {
                                v["where"] = serde_json::json!(occurrences(&c.tag));
                            }
                            v
                        })
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
        AcceptanceCommand::Derive { repo, from, force } => derive(&repo, &from, force),
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

/// Drafts criteria from a Markdown checklist: the `- [ ]` items under a heading that names
/// acceptance criteria, or every checklist item when no heading does.
pub fn derive_criteria(text: &str) -> Vec<(String, String)> {
    let item = |l: &str| -> Option<String> {
        let t = l.trim_start();
        let rest = t.strip_prefix("- ").or_else(|| t.strip_prefix("* "))?;
        let rest = rest.trim_start();
        let body = ["[ ]", "[x]", "[X]"]
            .iter()
            .find_map(|b| rest.strip_prefix(b))?;
        let body = body.trim();
        (!body.is_empty()).then(|| body.to_string())
    };
    let mut under_heading = Vec::new();
    let mut all = Vec::new();
    let mut in_section: Option<usize> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with('#') {
            let level = t.chars().take_while(|c| *c == '#').count();
            let title = t[level..].trim().to_ascii_lowercase();
            if in_section.is_some_and(|l| level <= l) {
                in_section = None;
            }
            if title.contains("acceptance")
                || title.contains("done when")
                || title.contains("definition of done")
            {
                in_section = Some(level);
            }
            continue;
        }
        if let Some(i) = item(line) {
            if in_section.is_some() {
                under_heading.push(i.clone());
            }
            all.push(i);
        }
    }
    let items = if under_heading.is_empty() {
        all
    } else {
        under_heading
    };
    let mut seen = std::collections::BTreeSet::new();
    items
        .into_iter()
        .map(|ac| {
            let mut id: String = ac
                .to_ascii_lowercase()
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect::<String>()
                .split('-')
                .filter(|w| !w.is_empty())
                .take(6)
                .collect::<Vec<_>>()
                .join("-");
            if id.is_empty() {
                id = "criterion".into();
            }
            id.truncate(48);
            let id = id.trim_end_matches('-').to_string();
            let mut unique = id.clone();
            let mut n = 2;
            while !seen.insert(unique.clone()) {
                unique = format!("{id}-{n}");
                n += 1;
            }
            (unique, ac)
        })
        .collect()
}

fn derive(repo: &std::path::Path, from: &std::path::Path, force: bool) -> Result<i32, Error> {
    let text = if from == std::path::Path::new("-") {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
        s
    } else {
        std::fs::read_to_string(from).map_err(|e| {
            Error::input(
                InputError::new(format!("cannot read: {e}")).in_file(from.display().to_string()),
            )
        })?
    };
    let criteria = derive_criteria(&text);
    if criteria.is_empty() {
        return Err(Error::input(
            InputError::new("no checklist items (`- [ ] …`) in the text to draft criteria from")
                .in_file(from.display().to_string())
                .help("list the acceptance criteria as a Markdown checklist under an `Acceptance criteria` heading"),
        ));
    }
    let root = Git::discover(repo)
        .map(|g| g.root().to_path_buf())
        .unwrap_or_else(|_| repo.to_path_buf());
    let path = root.join(".shipmoor/acceptance.yaml.draft");
    if path.exists() && !force {
        return Err(Error::input(
            InputError::new(format!("{} exists", path.display()))
                .help("pass --force to replace the draft"),
        ));
    }
    let mut yaml = String::from("# Drafted by `shipmoor acceptance derive`: nobody has agreed to it yet.\n# Review it, then `shipmoor acceptance commit` makes it .shipmoor/acceptance.yaml.\nversion: 1\ncriteria:\n");
    for (id, ac) in &criteria {
        let quoted = serde_json::to_string(ac).map_err(Error::crash)?;
        yaml.push_str(&format!("  - id: {id}\n    ac: {quoted}\n"));
    }
    // The draft must be one the parser accepts.
    acceptance::parse::parse(
        &yaml,
        ".shipmoor/acceptance.yaml.draft",
        AcceptanceState::Draft,
        String::new(),
    )
    .map_err(|e| {
        Error::crash(format!(
            "the drafted acceptance set does not validate: {:?}",
            e.first()
        ))
    })?;
    crate::evidence::write_atomic(&path, yaml.as_bytes())?;
    let _ = writeln!(
        std::io::stdout(),
        "drafted {} criteria as {}",
        criteria.len(),
        path.display()
    );
    for (id, _) in &criteria {
        let _ = writeln!(std::io::stdout(), "  {id}  {}", acceptance::tag_for(id));
    }
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
    set: &acceptance::AcceptanceSet,
) -> Result<crate::floor::scan::TagScan, Error> {
    let git = Git::discover(&args.repo)?;
    let tags: Vec<String> = set.criteria.iter().map(|c| c.tag.clone()).collect();
    crate::floor::scan::scan_tree(git.root(), &tags, crate::floor::scan::default_threads()).map_err(
        |e| {
            Error::input(
                InputError::new(format!(
                    "cannot scan {} for tags: {e}",
                    git.root().display()
                ))
                .help("run it inside a git checkout, or pass one with --repo"),
            )
        },
    )
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
    use super::derive_criteria;

    #[test]
    fn derives_the_checklist_under_the_acceptance_heading() {
        let body = "Fixes #12.\n\n- [ ] unrelated todo\n\n## Acceptance criteria\n- [ ] The Stripe PaymentIntent is voided.\n- [x] Order is marked refunded!\n* [ ] Order is marked refunded!\n\n## Notes\n- [ ] not a criterion\n";
        let c = derive_criteria(body);
        assert_eq!(
            c,
            [
                (
                    "the-stripe-paymentintent-is-voided".to_string(),
                    "The Stripe PaymentIntent is voided.".to_string()
                ),
                (
                    "order-is-marked-refunded".to_string(),
                    "Order is marked refunded!".to_string()
                ),
                (
                    "order-is-marked-refunded-2".to_string(),
                    "Order is marked refunded!".to_string()
                ),
            ]
        );
        assert_eq!(derive_criteria("- [ ] a thing\n").len(), 1);
        assert!(derive_criteria("no list here").is_empty());
    }
}
