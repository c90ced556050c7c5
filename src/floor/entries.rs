//! The last stage, each entry's own: what the run observed as plain data for the deciding
//! phase, then per criterion its `check.command` run at both sides or its `check.pattern` at
//! head (`checks`), or the decision from its tests' observations (`decide`); then the
//! pass-to-pass guard's. Each entry is a stage of the floor's order.

use std::collections::BTreeMap;

use crate::error::Error;
use crate::format::evidence::OverlayRef;
use crate::format::floor::{CriterionFloor, Side};
use crate::git::{Change, Worktree};
use crate::verdict::FloorResult;

use super::bind::{Binding, TestKey};
use super::decide::{
    decide_guard, decide_tests, guard_criterion, tag_in_head, Listing, Observations,
};
use super::plan::Plan;
use super::{Ctx, EntryKind, FloorEntry, Observed, Step, STAGE_ENTRIES};

impl Ctx<'_> {
    /// Step 5: everything the deciding phase reads, from `listed` (head's listing) and the
    /// observations of each side.
    pub(super) fn observations(
        &self,
        plan: &Plan,
        listed: Vec<Listing>,
        head: BTreeMap<TestKey, Observed>,
        base: BTreeMap<TestKey, Observed>,
    ) -> Observations {
        let input = self.env.input;
        let whole_head_broken = listed
            .iter()
            .filter_map(|l| l.outcome.build())
            .any(|(_, whole)| whole);
        // Where a tag bound nothing, the file the scan found it in, so the reason never
        // contradicts the scan; without a scan, looked up only where head did not build at all.
        let mut tag_files = BTreeMap::new();
        if whole_head_broken || self.scan.is_some() {
            for (c, _) in input
                .acceptance
                .criteria
                .iter()
                .zip(&plan.bindings)
                .filter(|(_, b)| b.tests().is_empty())
            {
                let scanned = self
                    .scan
                    .as_ref()
                    .and_then(|s| s.tags.get(&c.tag))
                    .map(|o| o.first().map(|o| o.path.clone()));
                let found = match scanned {
                    Some(found) => found,
                    None if whole_head_broken => tag_in_head(input.git, &input.head, &c.tag),
                    None => None,
                };
                if let Some(f) = found {
                    tag_files.insert(c.tag.clone(), f);
                }
            }
        }
        Observations {
            runners: self.env.adapters.clone(),
            head,
            base,
            listings: listed,
            harness: self.watch.harness.clone(),
            rewritten: self.watch.rewritten.clone(),
            tags_nowhere: self.scan.as_ref().map(|s| {
                s.tags
                    .iter()
                    .filter(|(_, o)| o.is_empty())
                    .map(|(t, _)| t.clone())
                    .collect()
            }),
            scan_evidence: self.scan_evidence.clone(),
            tag_files,
        }
    }

    /// Step 6: the entries this run decides, in the report's order: each criterion's (its
    /// command or pattern run now; its tests decided from `obs`), then the guard's. `worktrees`:
    /// head's and base's, where they were made.
    pub(super) fn entries(
        &mut self,
        plan: &Plan,
        obs: &Observations,
        worktrees: (Option<&Worktree>, Option<&Worktree>),
        overlay: &OverlayRef,
        changes: &[Change],
    ) -> Result<Vec<FloorEntry>, Error> {
        let input = self.env.input;
        let mut entries = Vec::new();
        for (pos, (c, b)) in input
            .acceptance
            .criteria
            .iter()
            .zip(&plan.bindings)
            .enumerate()
        {
            if !plan.selected(pos) {
                continue;
            }
            self.rec
                .enter(vec![Step::N(STAGE_ENTRIES), Step::N(pos as u64)]);
            self.rec.order.entries.push(pos);
            let cf = match b {
                Binding::JudgeLane => CriterionFloor::new(
                    FloorResult::NotApplicable,
                    "judgment criterion: the floor does not decide it",
                    b.kind(),
                ),
                Binding::Command(cmd) => {
                    let (Some(h), Some(bw)) = worktrees else {
                        return Err(Error::crash("worktrees missing for a command check"));
                    };
                    let planted = self
                        .watch
                        .taint(Side::Head)
                        .or_else(|| self.watch.taint(Side::Base));
                    let cf = self.command_check(cmd, h, bw, overlay, plan.runs)?;
                    match planted {
                        Some(why) if cf.result != FloorResult::Undecided => CriterionFloor {
                            result: FloorResult::Undecided,
                            reason: format!(
                                "{why}: a command of the floor wrote it, and it decides how `{cmd}` ran; the result ({}: {}) is not trusted",
                                cf.result.as_str(),
                                cf.reason
                            ),
                            ..cf
                        },
                        _ => cf,
                    }
                }
                Binding::Pattern { paths, regex } => {
                    self.pattern_check(c, paths, regex, changes)?
                }
                Binding::Tag(_) | Binding::ExplicitTest { .. } => decide_tests(c, b, obs),
            };
            entries.push(FloorEntry {
                kind: EntryKind::Claimed,
                criterion: c.clone(),
                floor: self.env.shown_floor(cf),
            });
        }
        let guard_pos = plan.guard_pos();
        if plan.guarding && plan.selected(guard_pos) {
            self.rec
                .enter(vec![Step::N(STAGE_ENTRIES), Step::N(guard_pos as u64)]);
            self.rec.order.entries.push(guard_pos);
            // The reason names the globs alone when they are all the guard keeps; the
            // criterion's text always names the whole scope.
            let scope = if input.acceptance.guarded_criteria().is_empty() {
                input.acceptance.guard.join(", ")
            } else {
                input.acceptance.guard_scope()
            };
            entries.push(FloorEntry {
                kind: EntryKind::Guard,
                criterion: guard_criterion(&input.acceptance.guard_scope()),
                floor: self
                    .env
                    .shown_floor(decide_guard(&plan.guarded, obs, &scope)),
            });
        }
        Ok(entries)
    }
}
