//! The floor's evidence and runtime rows: every command's output stored (normalized, with
//! the run's temporary paths as placeholders), a record per listing, setup, test run and tag
//! scan, the runtime table's rows, and the texts a person reads with the worktrees' paths
//! made relative to the repository.

use std::time::Duration;

use crate::error::Error;
use crate::evidence::RECORD_SCHEMA;
use crate::format::evidence::{Record, RunRecord};
use crate::format::floor::{CriterionFloor, RuntimeRow, Side};

use crate::evidence::EvidenceStore;

use super::events::{row_side, Event, Progress};
use super::runners::Invocation;
use super::{all_env_pass, runners, scan, Env, FloorOrder, Position, Step, STAGE_SHARED};

impl Env<'_> {
    /// A duration in an evidence record: milliseconds, none under a pinned clock.
    pub(super) fn ms(&self, d: Duration) -> u64 {
        if self.input.clock.is_pinned() {
            0
        } else {
            d.as_millis() as u64
        }
    }

    /// A duration in the runtime table: seconds to a tenth, none under a pinned clock.
    pub(super) fn seconds(&self, d: Duration) -> f64 {
        if self.input.clock.is_pinned() {
            0.0
        } else {
            (d.as_secs_f64() * 10.0).round() / 10.0
        }
    }

    /// A text the floor shows a person (a reason, an evidence detail, a runtime row), with every
    /// path into a worktree relative to the repository and every other path of the run's own
    /// temporary directory as its placeholder: what the compiler or Python printed names the
    /// worktree's temporary path, which differs on every run and means nothing to the reader.
    /// Stored logs keep what the run printed (with the evidence's own placeholders).
    fn shown(&self, text: &str) -> String {
        let text = self.norm.apply_str(text);
        if !text.contains("$WORKTREE") {
            return text;
        }
        text.replace("$WORKTREE/", "").replace("$WORKTREE", ".")
    }

    /// [`Env::shown`] over a criterion's reason and evidence detail.
    pub(super) fn shown_floor(&self, mut cf: CriterionFloor) -> CriterionFloor {
        cf.reason = self.shown(&cf.reason);
        if let Some(e) = cf.evidence.as_mut() {
            e.detail = self.shown(&e.detail);
        }
        cf
    }
}

/// Where the floor's observations go: the evidence store, the runtime table with each row's
/// and record's position in the run's order, and the progress display, each event going to
/// whichever keeps or shows it ([`Event`]).
pub(super) struct Recorder<'a> {
    env: &'a Env<'a>,
    pub(super) store: &'a mut EvidenceStore,
    /// The runtime table, in the order its rows were made.
    pub(super) runtime: Vec<RuntimeRow>,
    /// The stage running now, and the rows and records made by the stages before it.
    stage: Position,
    pub(super) order: FloorOrder,
    /// How many records the store held before the floor began.
    records_before: usize,
    pub(super) progress: Progress<'a>,
}

impl<'a> Recorder<'a> {
    pub(super) fn new(env: &'a Env<'a>, store: &'a mut EvidenceStore) -> Recorder<'a> {
        Recorder {
            env,
            records_before: store.records().len(),
            store,
            runtime: Vec::new(),
            stage: vec![Step::N(STAGE_SHARED)],
            order: FloorOrder::default(),
            progress: Progress::new(env.input.progress, env.input.live.clone()),
        }
    }

    /// Takes one observation: its line to the progress display, its row to the runtime table.
    pub(super) fn observe(&mut self, event: Event<'_>) {
        self.progress.show(&event);
        if let Some(row) = event.row() {
            self.runtime.push(row);
        }
    }

    /// Starts the stage at `next`: the rows and records made since the last one are given their
    /// positions in the stage that made them.
    pub(super) fn enter(&mut self, next: Position) {
        let done = std::mem::replace(&mut self.stage, next);
        let at = |n: usize| {
            let mut p = done.clone();
            p.push(Step::N(n as u64));
            p
        };
        let first_row = self.order.rows.len();
        for n in first_row..self.runtime.len() {
            self.order.rows.push(at(n - first_row));
        }
        let first_record = self.records_before + self.order.records.len();
        let made: Vec<String> =
            self.store.records()[first_record.min(self.store.records().len())..].to_vec();
        for (n, pointer) in made.into_iter().enumerate() {
            self.order.records.push((pointer, at(n)));
        }
    }

    /// Stores one evidence record; its pointer.
    pub(super) fn put(&mut self, r: &Record) -> Result<String, Error> {
        self.store.put_record(r).map_err(Error::crash)
    }

    /// Stores what one invocation printed and its results file, normalized; their pointers.
    pub(super) fn store_invocation(
        &mut self,
        inv: &Invocation,
    ) -> Result<(String, String, Option<String>), Error> {
        let out = self
            .store
            .put_blob(self.env.norm.apply(&inv.captured.stdout));
        let err = self
            .store
            .put_blob(self.env.norm.apply(&inv.captured.stderr));
        let res = inv
            .results
            .as_ref()
            .map(|r| self.store.put_blob(self.env.norm.apply(r)));
        Ok((out, err, res))
    }

    /// A record and a runtime row per invocation of runner `i`'s listing at `side`; the last
    /// record's pointer.
    pub(super) fn record_listing(
        &mut self,
        i: usize,
        side: Side,
        report: &runners::ListReport,
    ) -> Result<String, Error> {
        let commit = self.env.commit(side);
        let mut last = String::new();
        for inv in &report.invocations {
            let (o, e, r) = self.store_invocation(inv)?;
            let command: Vec<String> = inv
                .command
                .iter()
                .map(|a| self.env.norm.apply_str(a))
                .collect();
            let note = report
                .build_failure
                .as_ref()
                .map(|_| "does not build".to_string())
                .or_else(|| report.problem.clone())
                .unwrap_or_else(|| format!("{} tests listed", report.tests.len()));
            last = self.put(&Record::Listing(RunRecord {
                schema: RECORD_SCHEMA,
                side: Some(side),
                commit: commit.to_string(),
                overlay: None,
                runner: Some(self.env.adapters[i].kind().as_str().into()),
                root: Some(self.env.adapters[i].config().root.clone()),
                command,
                test_id: None,
                run: 1,
                outcome: None,
                exit_code: inv.captured.exit_code,
                duration_ms: self.env.ms(inv.captured.duration),
                stdout: Some(o),
                stderr: Some(e),
                results: r.clone(),
                note: Some(note.clone()),
            }))?;
            let is_last = std::ptr::eq(inv, report.invocations.last().unwrap_or(inv));
            let summary = match (inv.captured.success(), is_last) {
                (true, true) => format!("{} listed", report.tests.len()),
                (true, false) => "ok".to_string(),
                (false, _) => note.clone(),
            };
            let n = if is_last { report.tests.len() } else { 0 };
            self.push_runtime(side, i, inv, n, summary);
            if is_last {
                let tool = self.env.adapters[i].tool(&self.env.probe());
                if let Some(row) = self.runtime.last_mut() {
                    row.tool = tool;
                }
            }
        }
        Ok(last)
    }

    /// The scan as evidence (what was searched, which files carry which tag) and a runtime row;
    /// the evidence record's pointer.
    pub(super) fn record_scan(
        &mut self,
        tags: &[String],
        scanned: &Result<scan::TagScan, scan::ScanError>,
    ) -> Result<String, Error> {
        let command: Vec<String> = crate::git::TRACKED_COMMAND
            .iter()
            .map(|s| s.to_string())
            .chain(tags.iter().map(|t| format!("--tag={t}")))
            .collect();
        let (note, result, results, duration) = match scanned {
            Ok(found) => {
                let hit = tags.iter().filter(|t| found.found(t)).count();
                let json = serde_json::to_vec(found).map_err(|e| Error::crash(e.to_string()))?;
                (
                    format!(
                        "searched the paths and contents of {} tracked files at head ({} binary, {} not regular files, contents not searched); {hit} of {} tag(s) found in {} file(s)",
                        found.files,
                        found.binary,
                        found.unreadable,
                        tags.len(),
                        found.matched_files().len()
                    ),
                    format!(
                        "{hit} of {} tag(s) in {} of {} files",
                        tags.len(),
                        found.matched_files().len(),
                        found.files
                    ),
                    Some(self.store.put_blob(json)),
                    found.duration,
                )
            }
            Err(e) => (
                format!("the tag scan failed ({e}); every test is listed"),
                format!("failed: {e}"),
                None,
                Duration::ZERO,
            ),
        };
        let ptr = self.put(&Record::TagScan(RunRecord {
            schema: RECORD_SCHEMA,
            side: Some(Side::Head),
            commit: self.env.input.head.to_string(),
            overlay: None,
            runner: None,
            root: Some(".".into()),
            command,
            test_id: None,
            run: 1,
            outcome: None,
            exit_code: None,
            duration_ms: self.env.ms(duration),
            stdout: None,
            stderr: None,
            results,
            note: Some(note),
        }))?;
        self.runtime.push(RuntimeRow {
            side: "head".into(),
            runner: "tag scan".into(),
            command: format!("tag scan of tracked files ({} tag(s))", tags.len()),
            tests: 0,
            result,
            seconds: self.env.seconds(duration),
            exit_code: None,
            excerpt: None,
            tool: None,
        });
        Ok(ptr)
    }

    pub(super) fn push_runtime(
        &mut self,
        side: Side,
        i: usize,
        inv: &Invocation,
        tests: usize,
        result: String,
    ) {
        let failed = !inv.captured.success();
        let excerpt = failed.then(|| {
            excerpt(
                &self.env.norm.apply(&inv.captured.stdout),
                &self.env.norm.apply(&inv.captured.stderr),
            )
        });
        self.runtime.push(RuntimeRow {
            side: row_side(side).into(),
            runner: self
                .env
                .adapters
                .get(i)
                .map(|a| a.kind().as_str().to_string())
                .unwrap_or_else(|| "command".into()),
            command: inv
                .command
                .iter()
                .map(|a| self.env.norm.apply_str(a))
                .collect::<Vec<_>>()
                .join(" "),
            tests,
            result,
            seconds: self.env.seconds(inv.captured.duration),
            exit_code: inv.captured.exit_code,
            excerpt,
            tool: None,
        });
    }

    /// The environment the floor's commands get, for the runtime section: the names withheld
    /// from them (looking like credentials, or the judge's key) and the names `env_pass`
    /// passes, never a value. No row where nothing is either.
    pub(super) fn environment_row(&mut self) {
        let (withheld, passed) = self
            .env
            .input
            .confinement
            .env
            .environment_names(&all_env_pass(self.env.input));
        if withheld.is_empty() && passed.is_empty() {
            return;
        }
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        self.runtime.push(RuntimeRow {
            side: "head and base".into(),
            runner: "environment".into(),
            command: "the environment of every command the floor runs".into(),
            tests: 0,
            result: format!(
                "withheld: {}; passed by env_pass: {}",
                list(&withheld),
                list(&passed)
            ),
            seconds: 0.0,
            exit_code: None,
            excerpt: None,
            tool: None,
        });
    }

    /// The runtime rows as a person reads them ([`Env::shown`] over their texts).
    pub(super) fn shown_runtime(&self) -> Vec<RuntimeRow> {
        self.runtime
            .iter()
            .map(|r| RuntimeRow {
                command: self.env.shown(&r.command),
                result: self.env.shown(&r.result),
                excerpt: r.excerpt.as_deref().map(|e| self.env.shown(e)),
                ..r.clone()
            })
            .collect()
    }
}

/// A side's place in the per-side arrays.
pub(super) fn side_index(side: Side) -> usize {
    match side {
        Side::Head => 0,
        Side::Base => 1,
    }
}

/// An exit code as the texts show it (`signal`: a signal ended the command).
pub(super) fn code(c: Option<i32>) -> String {
    c.map(|c| c.to_string()).unwrap_or_else(|| "signal".into())
}

/// The last lines of a failed command's output, bounded.
pub(super) fn excerpt(stdout: &[u8], stderr: &[u8]) -> String {
    let pick = |b: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(b)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.chars().take(200).collect())
            .collect()
    };
    let mut lines = pick(stdout);
    if lines.is_empty() {
        lines = pick(stderr);
    }
    let n = lines.len();
    lines[n.saturating_sub(12)..].join("\n")
}
