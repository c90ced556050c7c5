//! `check.command` (non-zero at base, 0 at head) and `check.pattern` (a match at head in the
//! files the change touched).

use std::process::Command;

use crate::acceptance::Criterion;
use crate::error::Error;
use crate::evidence::RECORD_SCHEMA;
use crate::format::evidence::{OverlayRef, PatternMatch, PatternRecord, Record, RunRecord};
use crate::format::floor::{CriterionFloor, EvidenceRef, RuntimeRow, Side};
use crate::git::{Change, Worktree};
use crate::process;
use crate::verdict::FloorResult;

use super::decide::{past, unobservable};
use super::events::{row_side, Event};
use super::record::{code, excerpt};
use super::runners::{Invocation, Outcome};
use super::{interrupted, progress, Ctx};
use crate::decision;
use crate::decision::{Finding, SideState};

impl Ctx<'_> {
    pub(super) fn command_check(
        &mut self,
        cmd: &str,
        head: &Worktree,
        base: &Worktree,
        overlay: &OverlayRef,
        runs: u32,
    ) -> Result<CriterionFloor, Error> {
        let mut sides = Vec::new();
        for (side, wt) in [(Side::Head, head), (Side::Base, base)] {
            sides.push(self.command_runs(cmd, side, wt, overlay, runs)?);
        }
        let (hs, hev, head_runs) = sides.remove(0);
        let (bs, bev, base_runs) = sides.remove(0);
        let d = decision::decide(&[(hs.clone(), bs.clone())]);
        let reason = match d.finding {
            Finding::FailToPass => format!("`{cmd}` exits non-zero at base and 0 at head"),
            Finding::ProvesNothing => format!("proves nothing: `{cmd}` already exits 0 at base"),
            Finding::FailsAtHead => format!("`{cmd}` exits non-zero at head"),
            Finding::NotObservedAtHead => {
                format!("`{cmd}` could not be run at head (command not found)")
            }
            Finding::NotObservedAtBase => format!(
                "`{cmd}` could not be run at base (command not found), so it shows no change"
            ),
            Finding::FlakyAtHead => format!(
                "flaky: `{cmd}` exited 0 in {} at head",
                super::decide::runs_of(&head_runs)
            ),
            Finding::FlakyAtBase => format!(
                "flaky: `{cmd}` exited 0 in {} at base",
                super::decide::runs_of(&base_runs)
            ),
            _ => format!(
                "`{cmd}` could not be observed: {} at head, {} at base",
                unobservable(&hs),
                unobservable(&bs)
            ),
        };
        let at_base = matches!(
            d.finding,
            Finding::FailToPass
                | Finding::ProvesNothing
                | Finding::NotObservedAtBase
                | Finding::FlakyAtBase
                | Finding::UnobservableAtBase
        );
        let (ptr, side, state) = if at_base {
            (bev.last(), "base", &bs)
        } else {
            (hev.last(), "head", &hs)
        };
        let mut all: Vec<String> = hev.iter().chain(bev.iter()).cloned().collect();
        all.sort();
        all.dedup();
        Ok(CriterionFloor {
            result: d.result,
            reason,
            binding: "check.command".into(),
            tests: vec![],
            evidence: ptr.map(|p| EvidenceRef {
                pointer: p.clone(),
                detail: format!("`{cmd}`, {} at {side}", past(state.label())),
            }),
            evidence_all: all,
            base_summary: bs.label().into(),
            head_summary: hs.label().into(),
            reproduce: Some(cmd.to_string()),
        })
    }
    /// A `check.command`'s `runs` runs at one side: the collapsed state, each run's evidence and
    /// outcome.
    fn command_runs(
        &mut self,
        cmd: &str,
        side: Side,
        wt: &Worktree,
        overlay: &OverlayRef,
        runs: u32,
    ) -> Result<(SideState, Vec<String>, Vec<Outcome>), Error> {
        let mut outcomes = Vec::new();
        let mut evidence = Vec::new();
        let mut problem = None;
        for k in 1..=runs {
            self.rec.observe(Event::CheckCommand {
                side,
                command: cmd,
                run: k,
                runs,
            });
            let mut c = Command::new("sh");
            c.arg("-c").arg(cmd).current_dir(wt.path());
            c.envs(self.env.side_env(side));
            c.envs(self.env.passed_env(None));
            let jail = self.jail(side, None);
            let watch = self.step_watch(
                side,
                format!("check.command `{cmd}`"),
                progress::FinishedLines::default(),
                &[],
            );
            let confine = process::Confine::Sandboxed(&jail);
            let cap = progress::step(watch.as_ref(), || {
                process::run(c, self.env.input.timeout, confine)
            })
            .map_err(|e| Error::crash(format!("cannot start sh: {e}")))?;
            interrupted()?;
            let outcome = match cap.exit_code {
                _ if cap.timed_out => {
                    problem = Some(format!(
                        "timed out after {}s",
                        self.env.input.timeout.as_secs()
                    ));
                    Outcome::NotObserved
                }
                Some(0) => Outcome::Pass,
                // The shell's "not found" and "not executable": the check did not run.
                Some(126) | Some(127) => Outcome::NotObserved,
                Some(_) => Outcome::Fail,
                None => {
                    problem = Some("killed by a signal".into());
                    Outcome::NotObserved
                }
            };
            let inv = Invocation {
                command: vec!["sh".into(), "-c".into(), cmd.to_string()],
                captured: cap.clone(),
                results: None,
                results_type: None,
            };
            let (o, e, _) = self.rec.store_invocation(&inv)?;
            let commit = self.env.commit(side);
            let ptr = self.rec.put(&Record::Command(RunRecord {
                schema: RECORD_SCHEMA,
                side: Some(side),
                commit: commit.to_string(),
                overlay: (side == Side::Base).then(|| overlay.clone()),
                runner: None,
                root: None,
                command: inv.command.clone(),
                test_id: None,
                run: k,
                outcome: Some(outcome),
                exit_code: cap.exit_code,
                duration_ms: self.env.ms(cap.duration),
                stdout: Some(o),
                stderr: Some(e),
                results: None,
                note: problem.clone(),
            }))?;
            self.rec.observe(Event::Row(RuntimeRow {
                side: row_side(side).into(),
                runner: "check.command".into(),
                command: cmd.to_string(),
                tests: 1,
                result: format!("exit {}", code(cap.exit_code)),
                seconds: self.env.seconds(cap.duration),
                exit_code: cap.exit_code,
                excerpt: (!cap.success()).then(|| {
                    excerpt(
                        &self.env.norm.apply(&cap.stdout),
                        &self.env.norm.apply(&cap.stderr),
                    )
                }),
                tool: None,
            }));
            outcomes.push(outcome);
            evidence.push(ptr);
        }
        Ok((
            SideState::collapse(&outcomes, problem.as_deref(), false),
            evidence,
            outcomes,
        ))
    }

    pub(super) fn pattern_check(
        &mut self,
        c: &Criterion,
        paths: &[String],
        regex: &str,
        changes: &[Change],
    ) -> Result<CriterionFloor, Error> {
        let mut gb = globset::GlobSetBuilder::new();
        for p in paths {
            let g = globset::Glob::new(p).map_err(|e| Error::crash(format!("glob `{p}`: {e}")))?;
            gb.add(g);
        }
        let set = gb
            .build()
            .map_err(|e| Error::crash(format!("globs: {e}")))?;
        let re =
            regex::Regex::new(regex).map_err(|e| Error::crash(format!("regex `{regex}`: {e}")))?;
        let mut considered = Vec::new();
        let mut matches = Vec::new();
        for ch in changes
            .iter()
            .filter(|ch| ch.status != 'D' && set.is_match(&ch.path))
        {
            considered.push(ch.path.clone());
            if let Some(bytes) = self.env.input.git.show(&self.env.input.head, &ch.path)? {
                let text = String::from_utf8_lossy(&bytes);
                for (n, line) in text.lines().enumerate() {
                    if re.is_match(line) {
                        matches.push(PatternMatch {
                            path: ch.path.clone(),
                            line: n + 1,
                            text: line.trim().chars().take(200).collect(),
                        });
                    }
                }
            }
        }
        let record = Record::Pattern(PatternRecord {
            schema: RECORD_SCHEMA,
            commit: self.env.input.head.to_string(),
            criterion: c.id.clone(),
            paths: paths.to_vec(),
            regex: regex.to_string(),
            considered: considered.clone(),
            matches: matches.clone(),
        });
        let ptr = self.rec.put(&record)?;
        let (result, reason, detail) = if let Some(m) = matches.first() {
            let loc = format!("{}:{}", m.path, m.line);
            (
                FloorResult::Satisfied,
                format!("`{regex}` matches at head in a file this change touched ({loc})"),
                format!("{loc}, matched at head"),
            )
        } else {
            (
                FloorResult::Unsatisfied,
                format!(
                    "`{regex}` matches nothing at head in the {} changed file(s) under {}",
                    considered.len(),
                    paths.join(", ")
                ),
                "no match at head".to_string(),
            )
        };
        Ok(CriterionFloor {
            result,
            reason,
            binding: "check.pattern".into(),
            tests: vec![],
            evidence: Some(EvidenceRef {
                pointer: ptr.clone(),
                detail,
            }),
            evidence_all: vec![ptr],
            base_summary: "—".into(),
            head_summary: if result == FloorResult::Satisfied {
                "match".into()
            } else {
                "no match".into()
            },
            reproduce: None,
        })
    }
}
