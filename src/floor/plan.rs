//! What the floor runs, settled before any bound test runs: the runners (configured, or
//! detected from head's files) and their tools; the harness changes of the claim; head's
//! worktree and each runner's listing there, scoped by the tag scan; each criterion's binding;
//! and the tests each runner runs at both sides (in a shard, its own entries' tests, whole
//! file groups).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use crate::acceptance::{AcceptanceSet, Criterion, RunnerConfig};
use crate::error::{Error, InputError};
use crate::format::floor::Side;
use crate::git::{Change, CommitId, Git, Worktree};

use super::bind::{Binding, BoundTest};
use super::decide::{guarded_tests, inherited_guard_tests, ListOutcome, Listing};
use super::events::Event;
use super::runners::kit::first_line;
use super::runners::{Runner, RunnerId};
use super::{bind, harness, progress, runners, scan, Ctx, FloorInput};
use crate::floor::runners::registry::Registry;

/// The runners to use: the configured ones, or those detected from the head commit's files.
pub fn detect_runners(git: &Git, head: &CommitId) -> Result<Vec<RunnerConfig>, Error> {
    let files: Vec<String> = git.files(head.as_str(), None)?;
    let read = |f: &str| -> Result<String, Error> {
        Ok(git
            .show(head, f)?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default())
    };
    Registry::builtin().detect(&files, &read)
}

/// Checks every runner's tools, and what the worktrees take from the checkout (`checkout`),
/// before any work starts (a missing tool is an input error).
pub fn check_tools(
    runners: &[RunnerConfig],
    checkout: &Path,
    display_path: &str,
    confinement: &crate::sandbox::Confinement,
) -> Result<(), Error> {
    let probe = runners::Probe::new(confinement);
    let registry = Registry::builtin();
    let mut errors = Vec::new();
    for r in runners {
        match registry.make(r.clone()) {
            Some(a) => {
                if let Err(e) = a
                    .check_tool(&probe)
                    .and_then(|()| a.check_checkout(checkout))
                {
                    errors.push(e);
                }
            }
            None => errors.push(
                InputError::new(format!(
                    "runner kind `{}` is not supported by this version",
                    r.kind.as_str()
                ))
                .at(display_path, r.line, 1)
                .help(format!("use one of: {}", registry.names().join(", "))),
            ),
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Input(errors))
    }
}

/// The harness changes of base..head, with `harness.allow_changes` applied.
pub(super) fn detect_harness(
    input: &FloorInput<'_>,
    adapters: &[Arc<dyn Runner>],
    changes: &[Change],
) -> Result<Vec<harness::HarnessChange>, Error> {
    let mut gb = globset::GlobSetBuilder::new();
    for g in &input.acceptance.harness.allow_changes {
        let glob = globset::Glob::new(g).map_err(|e| Error::crash(format!("glob `{g}`: {e}")))?;
        gb.add(glob);
    }
    let allow = gb
        .build()
        .map_err(|e| Error::crash(format!("harness.allow_changes: {e}")))?;
    let scripts: Vec<String> = adapters
        .iter()
        .filter_map(|a| {
            let script = a.harness_script()?;
            let r = a.config();
            Some(if r.root == "." {
                script
            } else {
                format!("{}/{script}", r.root.trim_end_matches('/'))
            })
        })
        .collect();
    let read = |p: &str, at_head: bool| {
        let commit = if at_head { &input.head } else { &input.base };
        input
            .git
            .show(commit, p)
            .ok()
            .flatten()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    };
    let mut found = harness::detect(
        changes,
        &read,
        &|p| allow.is_match(p),
        &scripts,
        input.acceptance_path.as_deref(),
        &input.registry.harness_rules(),
    );
    // Settings this change edits that base had (worked out with the claim; book:
    // floor/harness.md).
    for p in &input.acceptance.settings_edits {
        if !found.iter().any(|h| &h.path == p) {
            found.push(harness::HarnessChange {
                path: p.clone(),
                what: "the project settings (runners, judge, harness, guard or inherited)".into(),
                family: harness::Family::All,
                scope: String::new(),
                allowed: false,
            });
        }
    }
    Ok(found)
}

/// What the claim needs of the run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Needs {
    /// The pass-to-pass guard keeps tests (by glob, or of inherited criteria): one more entry.
    pub guarding: bool,
    /// Head's runners are listed: a criterion binds tests, or the guard keeps some.
    pub tests: bool,
    /// Head and base get worktrees: a criterion runs tests or a command.
    pub worktrees: bool,
}

impl Needs {
    /// What the criteria of `acceptance` and its guard need.
    pub(super) fn of(acceptance: &AcceptanceSet) -> Needs {
        let criteria = &acceptance.criteria;
        let guarding = !acceptance.guard.is_empty() || !acceptance.guarded_criteria().is_empty();
        Needs {
            guarding,
            tests: guarding || criteria.iter().any(bind::needs_tests),
            worktrees: guarding
                || criteria.iter().any(|c| {
                    bind::needs_tests(c)
                        || matches!(c.check, Some(crate::acceptance::Check::Command(_)))
                }),
        }
    }
}

impl Ctx<'_> {
    /// Head's worktree, when a criterion runs tests or a command.
    pub(super) fn head_worktree(&mut self, needs: Needs) -> Result<Option<Worktree>, Error> {
        if !needs.worktrees {
            return Ok(None);
        }
        let input = self.env.input;
        self.rec.observe(Event::HeadWorktree { head: &input.head });
        Ok(Some(Worktree::add(
            input.git,
            &input.temp_root.join("head"),
            &input.head,
        )?))
    }

    /// Step 1 at head, when tests are needed: the changed files that are test code as a whole
    /// there, the seeding of the cargo target dir, then each runner's `setup` and listing,
    /// scoped by the tag scan (a runner under whose root no tag occurs is neither set up nor
    /// listed).
    pub(super) fn list_head(
        &mut self,
        wt: Option<&Worktree>,
        changes: &[Change],
        needs: Needs,
    ) -> Result<Vec<Listing>, Error> {
        let mut listed = vec![Listing::default(); self.env.adapters.len()];
        let Some(wt) = wt.filter(|_| needs.tests) else {
            return Ok(listed);
        };
        self.test_modules = self.test_modules_at_head(wt, changes)?;
        if self.env.adapters.iter().any(|a| a.cargo_target()) {
            self.seed_head_target(wt)?;
        }
        let input = self.env.input;
        let scopes = self.list_scopes(wt)?;
        for (i, scope) in scopes.iter().enumerate() {
            let Some(scope) = scope else {
                self.rec.observe(Event::NothingToList {
                    head: &input.head,
                    root: &self.env.adapters[i].config().root,
                    runner: self.env.adapters[i].kind().as_str(),
                });
                continue;
            };
            if let Some(p) = self.setup(i, wt, Side::Head, None)? {
                listed[i].outcome = ListOutcome::Failed(p);
                continue;
            }
            self.rec.observe(Event::Listing {
                head: &input.head,
                runner: self.env.adapters[i].kind().as_str(),
            });
            let ctx = self.run_ctx(i, wt, Side::Head)?;
            let watch = self.step_watch(
                Side::Head,
                format!("{} to list the tests", self.env.adapters[i].kind().as_str()),
                progress::FinishedLines::default(),
                &[],
            );
            self.watch_from(Side::Head, wt);
            let report = progress::step(watch.as_ref(), || self.env.adapters[i].list(&ctx, scope));
            let kind = self.env.adapters[i].kind().as_str();
            self.watch_after(Side::Head, wt, &format!("the {kind} listing"), false);
            let ev = self.rec.record_listing(i, Side::Head, &report)?;
            listed[i].evidence = Some(ev);
            if let Some(bf) = &report.build_failure {
                // A partial listing (pytest collects what imports) still binds what it found;
                // the files that failed are kept to judge the criteria they carry.
                listed[i].outcome = ListOutcome::DoesNotBuild {
                    problem: format!("head does not build: {}", first_line(&bf.excerpt)),
                    files: bf.diagnostic_files.clone(),
                    nothing_listed: report.tests.is_empty(),
                };
            } else if let Some(p) = &report.problem {
                listed[i].outcome = ListOutcome::Failed(p.clone());
            }
            listed[i].tests = report.tests;
        }
        Ok(listed)
    }

    /// What each runner's head listing needs to cover (book: floor.md). Tag-bound criteria are
    /// found by a scan of head's tracked files first, and each runner lists only the files under
    /// its root that carry a tag (`None`: no tag occurs there, so the runner lists nothing). A
    /// `check.test` binding or a `guard` glob can name any test, so they need the whole listing;
    /// so does a scan that could not run.
    fn list_scopes(&mut self, head: &Worktree) -> Result<Vec<Option<runners::ListScope>>, Error> {
        // The claim's criteria and the inherited ones kept as regression guards: both bind
        // by tag, so both need their tests listed.
        let guarded = self.env.input.acceptance.guarded_criteria();
        let criteria: Vec<&Criterion> = self
            .env
            .input
            .acceptance
            .criteria
            .iter()
            .chain(guarded.iter().copied())
            .collect();
        let all = vec![Some(runners::ListScope::All); self.env.adapters.len()];
        let tags: Vec<String> = criteria
            .iter()
            .filter(|c| c.lane == crate::acceptance::Lane::Floor && c.check.is_none())
            .map(|c| c.tag.clone())
            .collect();
        if tags.is_empty() {
            return Ok(all);
        }
        self.rec.observe(Event::Scanning {
            head: &self.env.input.head,
            tags: tags.len(),
        });
        let scanned = scan::scan_tree(&head.git(), &tags, scan::default_threads());
        self.scan_evidence = Some(self.rec.record_scan(&tags, &scanned)?);
        let Ok(found) = scanned else {
            return Ok(all);
        };
        let whole = !self.env.input.acceptance.guard.is_empty()
            || criteria.iter().any(|c| {
                c.lane == crate::acceptance::Lane::Floor
                    && matches!(c.check, Some(crate::acceptance::Check::Test(_)))
            });
        let matched = found.matched_files();
        let scopes = self
            .env
            .adapters
            .iter()
            .map(|a| {
                let files = scan::files_under_root(&a.config().root, matched.iter().copied());
                if whole {
                    Some(runners::ListScope::All)
                } else if files.is_empty() {
                    None
                } else {
                    Some(runners::ListScope::Files(files))
                }
            })
            .collect();
        self.scan = Some(found);
        Ok(scopes)
    }
}

/// Which tests each runner runs, from every criterion's binding to head's listing.
pub(super) struct Plan {
    /// Each criterion's binding, in acceptance order. A shard makes every one: the overlay, the
    /// grouping by file and the listing are the whole run's.
    pub bindings: Vec<Binding>,
    /// The tests the pass-to-pass guard keeps; none in a shard without the guard's entry.
    pub guarded: Vec<BoundTest>,
    /// Whether the pass-to-pass guard is an entry, after the criteria.
    pub guarding: bool,
    /// The positions of this shard's entries; `None`: every entry.
    chosen: Option<BTreeSet<usize>>,
    /// Per runner: the ids it runs, at each side.
    pub wanted: Vec<BTreeSet<String>>,
    /// Per runner: each bound test with its file (the floor runs the bound tests of one file
    /// together).
    pub bound: Vec<BTreeMap<String, Option<String>>>,
    /// How many times each test runs at each side.
    pub runs: u32,
}

impl Plan {
    /// Step 2: binds each criterion to head's listings (`listings`, per runner), and gathers
    /// what each runner runs.
    pub(super) fn new(
        input: &FloorInput<'_>,
        listings: &[&[runners::TestCase]],
        guarding: bool,
    ) -> Result<Plan, Error> {
        let criteria = &input.acceptance.criteria;
        let bindings: Vec<Binding> = criteria.iter().map(|c| bind::bind(c, listings)).collect();
        let mut guarded = guarded_tests(&input.acceptance.guard, listings)?;
        let inherited =
            inherited_guard_tests(&input.acceptance.guarded_criteria(), listings, &guarded);
        guarded.extend(inherited);
        // A shard runs the tests of its own entries only; every binding above is still made.
        let chosen = input
            .shard
            .map(|share| share.positions(&binding_runners(&bindings), guarding));
        let mut plan = Plan {
            bindings,
            guarded,
            guarding,
            chosen,
            wanted: vec![BTreeSet::new(); listings.len()],
            bound: vec![BTreeMap::new(); listings.len()],
            runs: input.runs.max(1),
        };
        if !plan.selected(plan.guard_pos()) {
            plan.guarded.clear();
        }
        for t in plan.bindings.iter().flat_map(|b| b.tests()) {
            plan.bound[t.runner.0].insert(t.id.clone(), t.file.clone());
        }
        let mut wanted = vec![BTreeSet::new(); listings.len()];
        for t in plan.mine().flat_map(|b| b.tests()).chain(&plan.guarded) {
            wanted[t.runner.0].insert(t.id.clone());
        }
        // A shard runs the whole of every file group it has a test in: the bound tests of one
        // file run in one invocation, and the same invocation in every shard that needs it (and
        // in the single run) gives the same evidence, where a part of the group would give
        // other evidence.
        if input.shard.is_some() {
            let mut files: BTreeSet<(RunnerId, String)> = BTreeSet::new();
            for (i, ids) in wanted.iter().enumerate() {
                for id in ids {
                    if let Some(Some(file)) = plan.bound[i].get(id) {
                        files.insert((RunnerId(i), file.clone()));
                    }
                }
            }
            for t in plan.bindings.iter().flat_map(|b| b.tests()) {
                if t.file
                    .as_ref()
                    .is_some_and(|f| files.contains(&(t.runner, f.clone())))
                {
                    wanted[t.runner.0].insert(t.id.clone());
                }
            }
        }
        plan.wanted = wanted;
        Ok(plan)
    }

    /// The pass-to-pass guard's position among the entries: after every criterion.
    pub(super) fn guard_pos(&self) -> usize {
        self.bindings.len()
    }

    /// Whether this run decides the entry at `pos` (every entry, outside a shard).
    pub(super) fn selected(&self, pos: usize) -> bool {
        self.chosen.as_ref().is_none_or(|c| c.contains(&pos))
    }

    /// The bindings of the criteria this run decides.
    pub(super) fn mine(&self) -> impl Iterator<Item = &Binding> + '_ {
        self.bindings
            .iter()
            .enumerate()
            .filter(|(pos, _)| self.selected(*pos))
            .map(|(_, b)| b)
    }

    /// Whether base has anything to do: a test to run or a `check.command` to decide.
    pub(super) fn any_base_work(&self) -> bool {
        self.wanted.iter().any(|w| !w.is_empty())
            || self.mine().any(|b| matches!(b, Binding::Command(_)))
    }

    /// The tests runner `i` runs for this run's entries and the guard, each with its file (those
    /// whose file is known).
    pub(super) fn files(&self, i: usize) -> BTreeMap<String, String> {
        self.mine()
            .flat_map(|b| b.tests())
            .chain(&self.guarded)
            .filter(|t| t.runner == RunnerId(i))
            .filter_map(|t| Some((t.id.clone(), t.file.clone()?)))
            .collect()
    }
}

/// The runner each binding's tests are in (the first, when several), `None` for no test.
fn binding_runners(bindings: &[Binding]) -> Vec<Option<RunnerId>> {
    bindings
        .iter()
        .map(|b| b.tests().iter().map(|t| t.runner).min())
        .collect()
}
