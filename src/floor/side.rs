//! One side's run (head, or base with head's test files laid over it): each runner's `setup`
//! and its bound tests, `runs` times, in invocations of one test file each; the environment
//! every command at a side gets (its own cargo target dir, the names `env_pass` passes, a
//! pinned terminal size); the scratch directories; and the progress watch of each step.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::error::Error;
use crate::evidence::RECORD_SCHEMA;
use crate::format::evidence::{OverlayRef, Record, RunRecord};
use crate::format::floor::{RuntimeRow, Side};
use crate::git::{Change, Worktree};
use crate::process;

use super::bind::TestKey;
use super::decide::past;
use super::events::{row_side, Event};
use super::plan::Plan;
use super::record::{code, side_index};
use super::runners::{Invocation, Outcome, RunCtx, RunReport, RunnerId, TestRun};
use super::workspace::rewritten_files;
use super::{
    confine, interrupted, planted, progress, Ctx, Env, Observed, Position, Step, Watch,
    STAGE_BASE_RUNNER, STAGE_HEAD_RUNS,
};
use crate::error::IoContext;

impl Env<'_> {
    /// The environment every command at a side gets: its own cargo target dir (base and head
    /// never share build outputs, nor use the user's), a pinned terminal size (runners wrap
    /// their output to it, and the same run must leave the same logs), and its side's private
    /// home and temporary directory ([`Ctx::home_env`]).
    pub(super) fn side_env(&self, side: Side) -> Vec<(OsString, OsString)> {
        let mut env = vec![
            (
                OsString::from("CARGO_TARGET_DIR"),
                self.input
                    .temp_root
                    .join("target")
                    .join(side.as_str())
                    .into_os_string(),
            ),
            (OsString::from("COLUMNS"), OsString::from("120")),
            (OsString::from("LINES"), OsString::from("40")),
        ];
        env.extend(self.home_env(side));
        env
    }

    /// The variables `env_pass` passes to runner `runner`'s commands (`floor.env_pass` and its
    /// own; `None`: a `check.command`, `floor.env_pass` alone), as our environment has them.
    /// Set on each command explicitly: [`process::run`] withholds them when inherited.
    pub(super) fn passed_env(&self, runner: Option<usize>) -> Vec<(OsString, OsString)> {
        let mut names = self.input.acceptance.env_pass.clone();
        if let Some(a) = runner.and_then(|i| self.adapters.get(i)) {
            names.extend(a.config().env_pass.iter().cloned());
        }
        names.sort();
        names.dedup();
        self.input
            .confinement
            .env
            .passed_values(&names)
            .into_iter()
            .map(|(k, v)| (OsString::from(k), v))
            .collect()
    }
}

impl Watch {
    /// Notes the tracked files the runs at `side` changed in its worktree `wt` (beyond
    /// `baseline`, what `git status` said before they ran), for the deciding phase.
    pub(super) fn note_rewritten(
        &mut self,
        side: Side,
        wt: &Worktree,
        baseline: &[String],
    ) -> Result<(), Error> {
        self.rewritten.extend(
            rewritten_files(wt, baseline)?
                .into_iter()
                .map(|f| format!("{}: {f}", side.as_str())),
        );
        Ok(())
    }

    /// Why what runs now at `side` is not trusted: the first file an earlier command there
    /// wrote that decides how it runs.
    pub(super) fn taint(&self, side: Side) -> Option<String> {
        self.planted.iter().find(|(s, _)| *s == side).map(|(_, p)| {
            format!(
                "{} ({}) was written at {} while the floor ran, before this ran there",
                p.path,
                p.what,
                side.as_str()
            )
        })
    }
}

impl Ctx<'_> {
    /// Steps 3 and 4 at one side: every runner's tests of `plan`, `runs` times each, in `side`'s
    /// worktree `wt` (`overlay`: what base got from head; `None` at head). Head's runners were
    /// set up before their listing; at base each runner's work starts with its `setup` (when it
    /// fails, the runner's tests are not observed there) and ends with the runs again of tests a
    /// neighbour laid over from head kept from building, and the attribution of what still did
    /// not build (book: floor/attribution.md).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_side(
        &mut self,
        side: Side,
        wt: &Worktree,
        overlay: Option<&OverlayRef>,
        plan: &Plan,
        changes: &[Change],
        obs: &mut BTreeMap<TestKey, Observed>,
    ) -> Result<(), Error> {
        let runs = plan.runs;
        for (i, wanted) in plan.wanted.iter().enumerate() {
            let ids: Vec<String> = wanted.iter().cloned().collect();
            if ids.is_empty() {
                continue;
            }
            // The stages of runner `i` at base: setup, runs, runs without the neighbours,
            // attribution.
            let at_base =
                |step: u64| vec![Step::N(STAGE_BASE_RUNNER), Step::N(i as u64), Step::N(step)];
            if side == Side::Base {
                self.rec.enter(at_base(0));
                if let Some(p) = self.setup(i, wt, side, overlay)? {
                    for id in &ids {
                        obs.insert(
                            TestKey {
                                runner: RunnerId(i),
                                id: id.clone(),
                            },
                            Observed {
                                problem: Some(p.clone()),
                                ..Default::default()
                            },
                        );
                    }
                    continue;
                }
            }
            let stage = match side {
                Side::Head => vec![Step::N(STAGE_HEAD_RUNS), Step::N(i as u64)],
                Side::Base => at_base(1),
            };
            for k in 1..=runs {
                self.rec.observe(Event::RunningBound {
                    side,
                    commit: self.env.commit(side),
                    tests: ids.len(),
                    runner: self.env.adapters[i].kind().as_str(),
                    run: k,
                    runs,
                });
                self.run_isolated(&stage, i, wt, side, overlay, &ids, &plan.bound[i], k, obs)?;
            }
            if let (Side::Base, Some(overlay)) = (side, overlay) {
                let files = plan.files(i);
                self.rec.enter(at_base(2));
                self.isolate_base_build(i, wt, overlay, changes, &files, runs, obs)?;
                self.rec.enter(at_base(3));
                self.attribute_base_builds(i, wt, &files, obs)?;
            }
        }
        Ok(())
    }

    /// What `side`'s worktree `wt` and private home hold now, taken as the baseline the next
    /// command is compared with, unless one was taken already (book: floor/harness.md,
    /// "Written at run time").
    pub(super) fn watch_from(&mut self, side: Side, wt: &Worktree) {
        let at = side_index(side);
        if self.watch.snapshots[at].is_none() {
            let now = planted::Snapshot::take(wt.path(), &self.env.home(side), &self.env.git_files);
            // A `__pycache__` the change committed is no more trusted than one a test writes.
            let stuck = now.remove_bytecode();
            self.watch.snapshots[at] = Some(now);
            self.note_planted(side, "the worktree as checked out", stuck);
        }
    }

    /// After a command at `side` (`what` it was; `setup`: a runner's `setup`, whose installing
    /// is its work): the harness files it wrote, each noted, with a runtime row, to taint what
    /// runs after it there.
    pub(super) fn watch_after(&mut self, side: Side, wt: &Worktree, what: &str, setup: bool) {
        let at = side_index(side);
        let now = planted::Snapshot::take(wt.path(), &self.env.home(side), &self.env.git_files);
        let mut found = self.watch.snapshots[at]
            .as_ref()
            .map(|before| before.planted(&now, setup))
            .unwrap_or_default();
        found.extend(now.remove_bytecode());
        self.watch.snapshots[at] = Some(now);
        self.note_planted(side, what, found);
    }

    /// Notes each file of `found`, which `what` at `side` wrote, and taints what runs after it
    /// there.
    fn note_planted(&mut self, side: Side, what: &str, found: Vec<planted::Planted>) {
        for p in found {
            self.rec.observe(Event::Planted {
                side,
                what,
                planted: &p,
            });
            self.watch.planted.push((side, p));
        }
    }

    /// At the end of the floor: whether the git configuration changed since `before` (the
    /// start), said on stderr and in a runtime row, for the person whose later `git` commands
    /// would run what was planted there.
    pub(super) fn git_changed(&mut self, before: &planted::Snapshot) {
        let now = planted::Snapshot::git(&self.env.git_files);
        let changed: Vec<String> = before
            .planted(&now, true)
            .into_iter()
            .map(|p| p.path)
            .collect();
        if changed.is_empty() {
            return;
        }
        self.rec.observe(Event::GitChanged { changed: &changed });
    }

    /// The watch of one step at `side` that runs `what` (and the tests `ids`,
    /// none for a setup or a listing), when progress is live.
    pub(super) fn step_watch(
        &self,
        side: Side,
        what: String,
        source: progress::FinishedLines,
        ids: &[String],
    ) -> Option<std::rc::Rc<std::cell::RefCell<progress::StepWatch>>> {
        let live = self.rec.progress.live.clone()?;
        let commit = self.env.commit(side);
        let (done, total) = if ids.is_empty() {
            (0, 0)
        } else {
            self.rec.progress.tally
        };
        Some(std::rc::Rc::new(std::cell::RefCell::new(
            progress::StepWatch::new(
                live,
                side,
                format!("{} {}", side.as_str(), commit.short()),
                what,
                source,
                ids.to_vec(),
                done,
                total.max(done + ids.len()),
            ),
        )))
    }

    /// A fresh scratch directory for one command, numbered in the order the run makes them.
    pub(super) fn scratch(&mut self, label: &str) -> Result<PathBuf, Error> {
        self.scratch_seq += 1;
        let p = self
            .env
            .input
            .temp_root
            .join("scratch")
            .join(format!("{:03}-{label}", self.scratch_seq));
        std::fs::create_dir_all(&p).at("create", &p)?;
        Ok(p)
    }

    /// What runner `i`'s commands at `side` run in: its root in `wt`, a fresh scratch
    /// directory, the timeout, the environment and the jail.
    pub(super) fn run_ctx(&mut self, i: usize, wt: &Worktree, side: Side) -> Result<RunCtx, Error> {
        let root = &self.env.adapters[i].config().root;
        let dir = if root == "." {
            wt.path().to_path_buf()
        } else {
            wt.path().join(root)
        };
        let adapter = self.env.adapters[i].clone();
        let kind = adapter.kind();
        if let Some(cache) = adapter.build_cache() {
            self.seed_build_cache(side, &cache);
        }
        self.fetch_dependencies(i, side, wt);
        let scratch = self.scratch(&format!("{}-{}", side.as_str(), kind.as_str()))?;
        // Cargo's variables are for cargo and nextest alone; every runner gets the rest.
        let cargo = adapter.cargo_target();
        let mut env: Vec<(OsString, OsString)> = self
            .env
            .side_env(side)
            .into_iter()
            .filter(|(k, _)| cargo || k != "CARGO_TARGET_DIR")
            .chain(self.env.passed_env(Some(i)))
            .collect();
        let first = adapter.path_dirs(&dir, wt.path());
        if let Some(path) = confine::runner_path(first, &self.env.home(side)) {
            env.push(("PATH".into(), path));
        }
        let jail = self.jail(side, Some(&scratch));
        Ok(RunCtx {
            worktree: wt.path().to_path_buf(),
            dir,
            scratch,
            timeout: self.env.input.timeout,
            env,
            jail,
        })
    }

    /// What a side without a `setup` takes from the checkout ([`Runner::without_setup`]),
    /// said in the progress and in a runtime row.
    fn prepare_without_setup(&mut self, i: usize, wt: &Worktree, side: Side) {
        let root = self.env.adapters[i].config().root.clone();
        let rel = |base: &std::path::Path| {
            if root == "." {
                base.to_path_buf()
            } else {
                base.join(&root)
            }
        };
        let (dir, checkout) = (rel(wt.path()), rel(self.env.input.git.root()));
        let Some(prepared) = self.env.adapters[i].without_setup(&dir, &checkout) else {
            return;
        };
        self.reused.extend(prepared.reused);
        let row = RuntimeRow {
            side: row_side(side).into(),
            runner: self.env.adapters[i].kind().as_str().into(),
            command: prepared.command.into(),
            tests: 0,
            result: prepared.result,
            seconds: 0.0,
            exit_code: None,
            excerpt: None,
            tool: None,
        };
        self.rec.observe(Event::Prepared { side, row });
    }

    /// Runs a runner's `setup` in a worktree; `Some(problem)` when it failed.
    pub(super) fn setup(
        &mut self,
        i: usize,
        wt: &Worktree,
        side: Side,
        overlay: Option<&OverlayRef>,
    ) -> Result<Option<String>, Error> {
        let Some(setup) = self.env.adapters[i].config().setup.clone() else {
            self.prepare_without_setup(i, wt, side);
            return Ok(None);
        };
        self.rec.observe(Event::Setup {
            side,
            setup: &setup,
        });
        self.seed_package_caches(side);
        self.watch_from(side, wt);
        let ctx = self.run_ctx(i, wt, side)?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(&setup).current_dir(&ctx.dir);
        for (k, v) in &ctx.env {
            cmd.env(k, v);
        }
        let watch = self.step_watch(
            side,
            format!("setup `{setup}`"),
            progress::FinishedLines::default(),
            &[],
        );
        let confine = process::Confine::Sandboxed(&ctx.jail);
        let cap = progress::step(watch.as_ref(), || {
            process::run(cmd, self.env.input.timeout, confine)
        })
        .map_err(|e| Error::crash(format!("cannot start sh: {e}")))?;
        let argv = vec!["sh".to_string(), "-c".to_string(), setup.clone()];
        let inv = Invocation {
            command: argv,
            captured: cap.clone(),
            results: None,
            results_type: None,
        };
        let commit = self.env.commit(side);
        let ptrs = self.rec.store_invocation(&inv)?;
        let note = if cap.success() {
            None
        } else {
            Some("setup failed")
        };
        self.rec.put(&Record::Setup(RunRecord {
            schema: RECORD_SCHEMA,
            side: Some(side),
            commit: commit.to_string(),
            overlay: overlay.cloned(),
            runner: Some(self.env.adapters[i].kind().as_str().into()),
            root: Some(self.env.adapters[i].config().root.clone()),
            command: inv.command.clone(),
            test_id: None,
            run: 1,
            outcome: None,
            exit_code: cap.exit_code,
            duration_ms: self.env.ms(cap.duration),
            stdout: Some(ptrs.0),
            stderr: Some(ptrs.1),
            results: None,
            note: note.map(str::to_string),
        }))?;
        self.rec.push_runtime(
            side,
            i,
            &inv,
            0,
            if cap.success() {
                "ok".into()
            } else {
                "setup failed".into()
            },
        );
        interrupted()?;
        self.watch_after(side, wt, &format!("setup `{setup}`"), true);
        if cap.success() {
            self.env.adapters[i]
                .check_setup(&ctx)
                .map_err(Error::input)?;
        }
        Ok((!cap.success()).then(|| {
            if cap.timed_out {
                format!("setup `{setup}` timed out")
            } else {
                format!("setup `{setup}` failed (exit {})", code(cap.exit_code))
            }
        }))
    }

    /// Runs the bound tests of one file in one invocation, and tests of different files in
    /// different invocations, so that no test of another file (another criterion's, say, or one
    /// the change added) can forge or disturb a bound test's result: the tests of one file
    /// already share a module, so one process gives them no way to reach each other that the
    /// file does not already have. A bound test whose file is unknown runs alone. Each test's
    /// evidence cites the invocation that observed it. The tests only the pass-to-pass guard
    /// wants run together.
    #[allow(clippy::too_many_arguments)]
    fn run_isolated(
        &mut self,
        stage: &Position,
        i: usize,
        wt: &Worktree,
        side: Side,
        overlay: Option<&OverlayRef>,
        ids: &[String],
        bound: &BTreeMap<String, Option<String>>,
        k: u32,
        obs: &mut BTreeMap<TestKey, Observed>,
    ) -> Result<(), Error> {
        let (groups, alone, together) = group_by_file(ids, bound);
        // Each invocation is a stage of its own, named as it is ordered here, so that the
        // invocations of shards merge back into this order.
        let at = |class: u64, name: &str| {
            let mut p = stage.clone();
            p.extend([
                Step::N(u64::from(k)),
                Step::N(class),
                Step::S(name.to_string()),
            ]);
            p
        };
        for (file, group) in &groups {
            self.rec.enter(at(0, file));
            self.run_tests(i, wt, side, overlay, group, k, obs)?;
        }
        for id in &alone {
            self.rec.enter(at(1, id));
            self.run_tests(i, wt, side, overlay, std::slice::from_ref(id), k, obs)?;
        }
        if !together.is_empty() {
            self.rec.enter(at(2, ""));
            self.run_tests(i, wt, side, overlay, &together, k, obs)?;
        }
        Ok(())
    }

    /// Runs the tests `ids` of runner `i` together at `side` (run `k`): a record per test,
    /// citing the invocation that ran it, its outcome in `obs`, and a runtime row per invocation
    /// the runner made.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_tests(
        &mut self,
        i: usize,
        wt: &Worktree,
        side: Side,
        overlay: Option<&OverlayRef>,
        ids: &[String],
        k: u32,
        obs: &mut BTreeMap<TestKey, Observed>,
    ) -> Result<(), Error> {
        let ctx = self.run_ctx(i, wt, side)?;
        let kind = self.env.adapters[i].kind();
        let source = self.env.adapters[i].progress(&ctx);
        let watch = self.step_watch(side, kind.as_str().to_string(), source, ids);
        // What an earlier command at this side wrote that decides how this one runs.
        self.watch_from(side, wt);
        let tainted = self.watch.taint(side);
        let report = progress::step(watch.as_ref(), || self.env.adapters[i].run(&ctx, ids));
        interrupted()?;
        self.watch_after(
            side,
            wt,
            &format!(
                "the run of {}",
                ids.first().map(String::as_str).unwrap_or("the tests")
            ),
            false,
        );
        if let Some(w) = &watch {
            let mut w = w.borrow_mut();
            w.finish(&report.outcomes());
            self.rec.progress.tally.0 = w.done();
        }
        let commit = self.env.commit(side);
        let mut blobs = Vec::new();
        for inv in &report.invocations {
            blobs.push(self.rec.store_invocation(inv)?);
        }
        let duration: Duration = report
            .invocations
            .iter()
            .map(|inv| inv.captured.duration)
            .sum();
        let mut counts: BTreeMap<Outcome, usize> = BTreeMap::new();
        for id in ids {
            let run = report.tests.get(id);
            let outcome = run.map_or(Outcome::NotObserved, |t| t.outcome);
            *counts.entry(outcome).or_default() += 1;
            let at = citing(&report, id);
            let (stdout, stderr, results) = blobs.get(at).cloned().unwrap_or_default();
            let inv = report.invocations.get(at);
            let command: Vec<String> = inv
                .map(|inv| {
                    inv.command
                        .iter()
                        .map(|a| self.env.norm.apply_str(a))
                        .collect()
                })
                .unwrap_or_default();
            let exit_code = inv.and_then(|inv| inv.captured.exit_code);
            let message = run
                .and_then(|t| t.message.as_deref())
                .map(|m| self.env.norm.apply_text(m));
            let note = match outcome {
                Outcome::BuildFail => report
                    .build_failure
                    .as_ref()
                    .map(|b| format!("errors in: {}", b.diagnostic_files.join(", "))),
                Outcome::NotObserved => report.problem.clone(),
                Outcome::Fail => message.clone(),
                Outcome::Pass => None,
            };
            let ptr = self.rec.put(&Record::Test(RunRecord {
                schema: RECORD_SCHEMA,
                side: Some(side),
                commit: commit.to_string(),
                overlay: overlay.cloned(),
                runner: Some(self.env.adapters[i].kind().as_str().into()),
                root: Some(self.env.adapters[i].config().root.clone()),
                command,
                test_id: Some(id.clone()),
                run: k,
                outcome: Some(outcome),
                exit_code,
                duration_ms: self.env.ms(duration),
                stdout: Some(stdout),
                stderr: Some(stderr),
                results,
                note,
            }))?;
            let entry = obs
                .entry(TestKey {
                    runner: RunnerId(i),
                    id: id.clone(),
                })
                .or_default();
            entry.add(outcome, ptr, &tainted, run, &report, message);
        }
        let result = counts
            .iter()
            .map(|(o, n)| format!("{n} {}", past(o.as_str())))
            .collect::<Vec<_>>()
            .join(", ");
        for (n, inv) in report.invocations.iter().enumerate() {
            let is_last = n + 1 == report.invocations.len();
            let summary = if is_last {
                result.clone()
            } else if inv.captured.success() {
                "ok".to_string()
            } else if report.build_failure.is_some() {
                "build failed".to_string()
            } else {
                format!("exit {}", code(inv.captured.exit_code))
            };
            self.rec
                .push_runtime(side, i, inv, if is_last { ids.len() } else { 0 }, summary);
        }
        Ok(())
    }
}

/// The invocation of `report` that ran test `id`: the last one whose output names it (earlier
/// ones build or collect; cargo runs one binary per invocation).
fn citing(report: &RunReport, id: &str) -> usize {
    let name = id.rsplit([' ', ':']).next().unwrap_or(id);
    report
        .invocations
        .iter()
        .rposition(|inv| {
            contains(&inv.captured.stdout, name)
                || inv.results.as_deref().is_some_and(|r| contains(r, name))
        })
        .unwrap_or(report.invocations.len().saturating_sub(1))
}

impl Observed {
    /// One run's `outcome` of this test, its record `ptr`, and what `report` says of it: why
    /// the run is not trusted (`tainted`), its problem, build failure or first failure message.
    fn add(
        &mut self,
        outcome: Outcome,
        ptr: String,
        tainted: &Option<String>,
        run: Option<&TestRun>,
        report: &RunReport,
        message: Option<String>,
    ) {
        self.outcomes.push(outcome);
        self.evidence.push(ptr);
        if self.tainted.is_none() {
            self.tainted = tainted.clone();
        }
        if outcome == Outcome::NotObserved && report.problem.is_some() {
            self.problem = report.problem.clone();
        }
        if outcome == Outcome::BuildFail {
            self.build_files = run.and_then(|t| t.build_files.clone()).or_else(|| {
                report
                    .build_failure
                    .as_ref()
                    .map(|b| b.diagnostic_files.clone())
            });
            self.diagnostics = report
                .build_failure
                .as_ref()
                .map(|b| b.diagnostics.clone())
                .unwrap_or_default();
        }
        if outcome == Outcome::Fail && self.message.is_none() {
            self.message = message;
        }
        if outcome == Outcome::Fail && self.failure_kind.is_none() {
            self.failure_kind = run.and_then(|t| t.failure_kind);
        }
    }
}

/// The invocations of one run at one side (see [`Ctx::run_isolated`]): the bound ids grouped by
/// their file, the bound ids with no known file (each alone), and the ids that are not bound
/// (the guard's, run together).
type Grouped = (BTreeMap<String, Vec<String>>, Vec<String>, Vec<String>);

pub(super) fn group_by_file(ids: &[String], bound: &BTreeMap<String, Option<String>>) -> Grouped {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut alone = Vec::new();
    let mut together = Vec::new();
    for id in ids {
        match bound.get(id) {
            Some(Some(file)) => groups.entry(file.clone()).or_default().push(id.clone()),
            Some(None) => alone.push(id.clone()),
            None => together.push(id.clone()),
        }
    }
    (groups, alone, together)
}

/// Whether `needle` occurs in `hay` as a whole name (not inside a longer identifier, so that
/// `TestA` is not found in `TestAB`).
fn contains(hay: &[u8], needle: &str) -> bool {
    let n = needle.as_bytes();
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    !n.is_empty()
        && hay.windows(n.len()).enumerate().any(|(i, w)| {
            w == n
                && (i == 0 || !ident(hay[i - 1]) || !ident(n[0]))
                && hay
                    .get(i + n.len())
                    .is_none_or(|b| !ident(*b) || !ident(n[n.len() - 1]))
        })
}
