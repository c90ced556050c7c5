//! Whose failure a build failure at base is (book: floor/attribution.md). A test laid over
//! from head that reads `build_fail` at base is run there again without the neighbours new at
//! head, when one of those is what did not compile; a test that still does not build counts as
//! failing only when the compiler's errors are in its own item ([`attribute_in`]), and
//! otherwise reads as not observed at base.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Error;
use crate::format::evidence::OverlayRef;
use crate::format::floor::Side;
use crate::git::{Change, CommitId, Worktree};

use super::bind::TestKey;
use super::events::Event;
use super::runners::{ItemMap, Outcome, RunnerId};
use super::workspace::apply_overlay;
use super::{under_root, Ctx, Observed};
use crate::decision::attribute::attribute_in;

impl Ctx<'_> {
    /// A test whose own file compiled at base can still read `build_fail` there when a
    /// neighbour laid over from head (another new test file in the same Go package, say) does
    /// not compile. Such tests are run again at base without the neighbours new at head, so
    /// that what they report is their own outcome, not the neighbour's.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn isolate_base_build(
        &mut self,
        i: usize,
        wt: &Worktree,
        overlay: &OverlayRef,
        changes: &[Change],
        files: &BTreeMap<String, String>,
        runs: u32,
        obs: &mut BTreeMap<TestKey, Observed>,
    ) -> Result<(), Error> {
        let tainted: Vec<String> = files
            .iter()
            .filter(|(id, file)| {
                obs.get(&TestKey {
                    runner: RunnerId(i),
                    id: (*id).clone(),
                })
                .is_some_and(|o| {
                    o.outcomes.contains(&Outcome::BuildFail)
                        && o.build_files.as_ref().is_some_and(|fs| !fs.contains(file))
                })
            })
            .map(|(id, _)| id.clone())
            .collect();
        if tainted.is_empty() {
            return Ok(());
        }
        let own: BTreeSet<&str> = tainted
            .iter()
            .filter_map(|id| files.get(id))
            .map(String::as_str)
            .collect();
        let neighbours: Vec<String> = changes
            .iter()
            .filter(|c| {
                c.status == 'A' && overlay.paths.contains(&c.path) && !own.contains(c.path.as_str())
            })
            .map(|c| c.path.clone())
            .collect();
        if neighbours.is_empty() {
            return Ok(());
        }
        self.rec.observe(Event::Isolating {
            tests: tainted.len(),
        });
        for p in &neighbours {
            let _ = std::fs::remove_file(wt.path().join(p));
        }
        let reduced = OverlayRef {
            from: overlay.from.clone(),
            paths: overlay
                .paths
                .iter()
                .filter(|p| !neighbours.contains(p))
                .cloned()
                .collect(),
            deleted: overlay.deleted.clone(),
            spliced: overlay.spliced.clone(),
        };
        let mut fresh: BTreeMap<TestKey, Observed> = BTreeMap::new();
        let mut outcome = Ok(());
        'runs: for k in 1..=runs {
            self.rec.progress.tally = (0, tainted.len());
            for id in &tainted {
                outcome = self.run_tests(
                    i,
                    wt,
                    Side::Base,
                    Some(&reduced),
                    std::slice::from_ref(id),
                    k,
                    &mut fresh,
                );
                if outcome.is_err() {
                    break 'runs;
                }
            }
        }
        let head = CommitId::parse(&overlay.from).ok_or_else(|| Error::crash("overlay commit"))?;
        apply_overlay(wt, &head, &neighbours, &[])?;
        outcome?;
        for (key, o) in fresh {
            obs.insert(key, o);
        }
        Ok(())
    }

    /// A bound test that does not build at base counts as failing there only when the failure
    /// is its own (book: floor/attribution.md): a diagnostic inside the test item, or at an
    /// import whose names the item uses, as the runner's parser finds them in base's version of
    /// the files. Anything else (another new test in the same file, a base that does not build
    /// at all, a runner without a parser) leaves the test not observed at base.
    pub(super) fn attribute_base_builds(
        &mut self,
        i: usize,
        wt: &Worktree,
        files: &BTreeMap<String, String>,
        obs: &mut BTreeMap<TestKey, Observed>,
    ) -> Result<(), Error> {
        let failed: Vec<String> = obs
            .iter()
            .filter(|(k, o)| k.runner == RunnerId(i) && o.outcomes.contains(&Outcome::BuildFail))
            .map(|(k, _)| k.id.clone())
            .collect();
        if failed.is_empty() {
            return Ok(());
        }
        let ctx = self.run_ctx(i, wt, Side::Base)?;
        let adapter = &self.env.adapters[i];
        let in_root = |f: &str| under_root(&adapter.config().root, f).map(str::to_string);
        let mut parsed: BTreeMap<String, Option<ItemMap>> = BTreeMap::new();
        for id in failed {
            let Some(o) = obs.get_mut(&TestKey {
                runner: RunnerId(i),
                id: id.clone(),
            }) else {
                continue;
            };
            // The test's own file first, then every file the compiler complained about.
            let mut candidates: Vec<String> = files.get(&id).cloned().into_iter().collect();
            for d in &o.diagnostics {
                if !candidates.contains(&d.file) {
                    candidates.push(d.file.clone());
                }
            }
            let maps: Vec<(String, Option<ItemMap>)> = candidates
                .into_iter()
                .filter_map(|f| {
                    let rel = in_root(&f)?;
                    // Each file is parsed once for all the tests that failed in it (a Rust
                    // item map walks the crate's module tree).
                    let map = parsed
                        .entry(rel.clone())
                        .or_insert_with(|| adapter.items().item_map(&ctx, &rel))
                        .clone();
                    Some((f, map))
                })
                .collect();
            let item = adapter.items().test_item(&id);
            o.attribution = Some(attribute_in(item.as_deref(), &maps, &o.diagnostics));
        }
        Ok(())
    }
}
