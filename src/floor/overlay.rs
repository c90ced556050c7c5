//! What base gets from head (book: floor/base-overlay.md): the changed files that are test
//! code, laid over base whole (or deleted where head deleted them), and the test items of
//! source files that keep tests beside the code, spliced into base's text; then base's
//! worktree with all of it applied.

use std::collections::BTreeSet;

use crate::error::Error;
use crate::format::evidence::OverlayRef;
use crate::format::floor::{RuntimeRow, Side};
use crate::git::{Change, CommitId, Worktree};

use super::bind::Binding;
use super::events::{row_side, Event};
use super::plan::Plan;
use super::runners::RunCtx;
use super::workspace::{apply_overlay, apply_splices, status_entries};
use super::{bind, under_root, Ctx};

/// What base's worktree gets from head.
pub(super) struct Overlay {
    /// The whole files laid over, deleted and spliced, as the evidence of base's runs cites
    /// them.
    pub laid: OverlayRef,
    /// Each spliced file with its text: base's, with head's test items spliced in.
    pub splices: Vec<(String, String)>,
}

impl Ctx<'_> {
    /// Step 4's overlay: head's test files (by each runner's path rule, the tag-bound paths,
    /// the scripts of `check.command`s and the files test code as a whole at head), without the
    /// source files whose test items alone are spliced.
    pub(super) fn overlay(&mut self, plan: &Plan, changes: &[Change]) -> Result<Overlay, Error> {
        let input = self.env.input;
        let tags: Vec<&str> = input
            .acceptance
            .criteria
            .iter()
            .zip(&plan.bindings)
            .filter(|(_, b)| !b.tests().is_empty())
            .map(|(c, _)| c.tag.as_str())
            .collect();
        let scripts: Vec<String> = plan
            .bindings
            .iter()
            .flat_map(|b| match b {
                Binding::Command(cmd) => bind::command_paths(cmd),
                _ => Vec::new(),
            })
            .collect();
        let is_test_file = |p: &str| {
            self.env
                .adapters
                .iter()
                .any(|a| under_root(&a.config().root, p).is_some_and(|r| a.is_test_file(r)))
                || self.test_modules.contains(p)
        };
        let (mut take, delete) = bind::overlay(changes, &is_test_file, &tags, &scripts);
        let (splices, claimed) = self.splices(changes)?;
        take.retain(|p| !claimed.contains(p));
        let spliced: Vec<String> = splices.iter().map(|(p, _)| p.clone()).collect();
        Ok(Overlay {
            laid: OverlayRef {
                from: input.head.to_string(),
                paths: take,
                deleted: delete,
                spliced,
            },
            splices,
        })
    }

    /// Base's worktree with `overlay` applied, and what `git status` says of it then (so that
    /// what the runs change later can be told from what the overlay changed).
    pub(super) fn lay_base(&mut self, overlay: &Overlay) -> Result<(Worktree, Vec<String>), Error> {
        let input = self.env.input;
        let laid = &overlay.laid;
        self.rec.observe(Event::BaseWorktree {
            base: &input.base,
            files: laid.paths.len() + laid.deleted.len(),
            spliced: (!overlay.splices.is_empty()).then_some(laid.spliced.len()),
        });
        let wt = Worktree::add(input.git, &input.temp_root.join("base"), &input.base)?;
        apply_overlay(&wt, &input.head, &laid.paths, &laid.deleted)?;
        apply_splices(&wt, &overlay.splices)?;
        let baseline = status_entries(&wt)?;
        Ok((wt, baseline))
    }

    /// The changed files each runner takes for test code as a whole at head beyond its path
    /// rule ([`runners::TestItems::test_files_among`]), relative to the repository. Read before any of the
    /// change's code runs in the head worktree, so what it decides is what head commits.
    pub(super) fn test_modules_at_head(
        &mut self,
        wt: &Worktree,
        changes: &[Change],
    ) -> Result<BTreeSet<String>, Error> {
        let mut out = BTreeSet::new();
        for i in 0..self.env.adapters.len() {
            let root = self.env.adapters[i]
                .config()
                .root
                .trim_end_matches('/')
                .to_string();
            let strip = |p: &str| under_root(&root, p).map(str::to_string);
            let rel: Vec<String> = changes
                .iter()
                .filter(|c| c.status != 'D')
                .filter_map(|c| strip(&c.path))
                .filter(|r| !self.env.adapters[i].is_test_file(r))
                .collect();
            if rel.is_empty() {
                continue;
            }
            // No scratch directory of its own: reading the module tree writes nothing, and the
            // scratch numbering stays that of the runs.
            let ctx = RunCtx {
                worktree: wt.path().to_path_buf(),
                dir: if root == "." || root.is_empty() {
                    wt.path().to_path_buf()
                } else {
                    wt.path().join(&root)
                },
                scratch: self.env.input.temp_root.join("scratch"),
                timeout: self.env.input.timeout,
                env: self.env.side_env(Side::Head),
                jail: self.jail(Side::Head, None),
            };
            for f in self.env.adapters[i].items().test_files_among(&ctx, &rel) {
                out.insert(if root == "." || root.is_empty() {
                    f
                } else {
                    format!("{root}/{f}")
                });
            }
        }
        Ok(out)
    }

    /// The source files of the change whose test items (only) are laid over base, with base's
    /// text and head's test items spliced in (book: floor/base-overlay.md): changed files that a runner keeps
    /// tests beside the code in ([`runners::TestItems::may_splice`], Rust's `#[cfg(test)]` modules). Such a
    /// file is never laid over whole, even when its path carries a tag: it holds the fix too.
    /// A file new at head is not spliced: base's code does not include it, so its tests cannot
    /// exist there and read as not observed. A file that does not parse is left as base has it,
    /// and said so in the runtime table. Returns the spliced texts and every file claimed.
    #[allow(clippy::type_complexity)]
    fn splices(
        &mut self,
        changes: &[Change],
    ) -> Result<(Vec<(String, String)>, Vec<String>), Error> {
        let mut out = Vec::new();
        let mut claimed = Vec::new();
        let mut unparsed: Vec<(String, String, String)> = Vec::new();
        for ch in changes.iter().filter(|c| c.status != 'D') {
            let found = self.env.adapters.iter().find_map(|a| {
                under_root(&a.config().root, &ch.path)
                    .filter(|r| {
                        !a.is_test_file(r)
                            && !self.test_modules.contains(&ch.path)
                            && a.items().may_splice(r)
                    })
                    .map(|r| (a, r.to_string()))
            });
            let Some((adapter, rel)) = found else {
                continue;
            };
            claimed.push(ch.path.clone());
            if ch.status == 'A' {
                continue;
            }
            let text = |c: &CommitId| -> Result<Option<String>, Error> {
                Ok(self
                    .env
                    .input
                    .git
                    .show(c, &ch.path)?
                    .map(|b| String::from_utf8_lossy(&b).into_owned()))
            };
            let (Some(base), Some(head)) =
                (text(&self.env.input.base)?, text(&self.env.input.head)?)
            else {
                continue;
            };
            match adapter.items().splice_test_items(&rel, &base, &head) {
                None => {}
                Some(Ok(spliced)) if spliced == base => {}
                Some(Ok(spliced)) => out.push((ch.path.clone(), spliced)),
                Some(Err(e)) => unparsed.push((
                    adapter.kind().as_str().to_string(),
                    ch.path.clone(),
                    e.to_string(),
                )),
            }
        }
        for (runner, path, e) in unparsed {
            let row = RuntimeRow {
                side: row_side(Side::Base).into(),
                runner,
                command: format!("splice test items of {path}"),
                tests: 0,
                result: format!("not spliced: {e}"),
                seconds: 0.0,
                exit_code: None,
                excerpt: None,
                tool: None,
            };
            self.rec.observe(Event::NotSpliced {
                path: &path,
                error: &e,
                row,
            });
        }
        Ok((out, claimed))
    }
}
