//! What a person (or a program) reads after a run: the run's result model, the terminal report,
//! the fix packet (`claim_check.fixes.v2`) and `verify.md`.
//!
//! In: the floor's entries (each criterion with its disposition), the files the criteria come
//! from, in full mode the judge's findings ([`JudgeRun`], folded per criterion by
//! [`audit::outcomes`](crate::judge::audit::outcomes)), the fused verdict. Out: a [`RunResult`]
//! (serialized as `claim_check.result.v1` by `--format json`), and from it each rendering. The
//! renderers are pure functions of the result, so the same run always renders the same bytes.
//! The result's and the fix packet's types are in [`crate::format`], which readers share.

pub mod explain;
pub mod fixes;
pub mod github;
pub mod terminal;
pub mod verify_md;

use std::collections::BTreeMap;

use crate::acceptance::{Criterion, InheritedPolicy, Lane};
use crate::floor::{CriterionFloor, EntryKind, FloorReport};
use crate::format::judge::Citation;
pub use crate::format::result::{
    AcceptanceInfo, BaseCacheState, BaseCacheUse, CriterionResult, DraftCriterion, DraftInfo,
    InheritedCriterion, JudgeOutcome, Outputs, ResultDocument, RouteTo, RunResult, Shards, Signing,
    RESULT_SCHEMA,
};
pub use crate::format::{Disposition, SigningState};
use crate::judge::Finding;
use crate::verdict::{FloorResult, Fused, FusionInput, JudgeResult, Verdict};

impl CriterionResult {
    pub fn fusion_input(&self) -> FusionInput {
        FusionInput {
            required: self.required,
            lane: self.lane,
            floor: self.floor.result,
            judge: self.judge.result,
        }
    }

    /// The claim-record verdict of `verify.md`.
    pub fn claim_verdict(&self) -> &'static str {
        match self.disposition {
            Disposition::Satisfied => "VERIFIED",
            Disposition::Unsatisfied | Disposition::Blocked => "NOT VERIFIED",
            _ => "INCONCLUSIVE",
        }
    }

    /// Whether this criterion alone makes the verdict BLOCKED, by the fusion's first two rules
    /// (see [`crate::verdict::fuse`]): a required criterion the floor finds unsatisfied, or any
    /// judge's confirmed block. An optional criterion's floor miss is a gap, not a block.
    pub fn blocks(&self) -> bool {
        (self.required && self.floor.result == FloorResult::Unsatisfied)
            || self.judge.result == JudgeResult::Block
    }

    /// Whether this criterion is one the verdict `v` rests on: a block behind BLOCKED, a
    /// required criterion left open behind INCONCLUSIVE, a gap behind READY WITH GAPS. A
    /// draft's INCONCLUSIVE and a READY rest on no single criterion.
    pub fn explains(&self, v: Verdict) -> bool {
        match v {
            Verdict::Blocked => self.blocks(),
            Verdict::Inconclusive => self.required && self.fusion_input().underspecified(),
            Verdict::ReadyWithGaps => self.disposition != Disposition::Satisfied,
            Verdict::Ready => false,
        }
    }

    /// The reason a person reads: the judge's rationale when there is one (a block, an
    /// abstention, or why nobody judged), else the floor's.
    pub fn reason(&self) -> String {
        match (&self.judge.rationale, self.floor.result.settled()) {
            (Some(r), false) => r.clone(),
            (Some(r), true) if self.judge.result == JudgeResult::Block => r.clone(),
            _ => self.floor.reason.clone(),
        }
    }
}

impl AcceptanceInfo {
    /// The one line every report says about inherited criteria, when there are any.
    pub fn inherited_line(&self) -> Option<String> {
        let n = self.inherited.len();
        if n == 0 {
            return None;
        }
        let what = if n == 1 {
            "1 criterion inherited from an earlier change".to_string()
        } else {
            format!("{n} criteria inherited from earlier changes")
        };
        Some(if self.inherited_policy == InheritedPolicy::Guard {
            format!("{what}, kept as regression guards (stage1.floor.guard)")
        } else {
            format!("{what}, not checked")
        })
    }
}

/// The requirement a judge's block or abstention is reported under, whatever the criterion's
/// lane (book: verdict.md): a floor-lane criterion the floor left open is the judge's to block.
pub const JUDGE_REQUIREMENT: &str = "stage3.byo_judge";

/// What the judge stage gave a run (full mode): empty in fast mode.
pub use crate::judge::JudgeRun;

/// `path:line` of a citation, as reports point into the head tree.
/// `1 criterion`, `3 criteria`.
pub fn criteria_count(n: usize) -> String {
    if n == 1 {
        "1 criterion".to_string()
    } else {
        format!("{n} criteria")
    }
}

pub fn citation_at(c: &Citation) -> String {
    format!("{}:{}", c.path, c.line)
}

impl RunResult {
    /// The findings on one criterion, in the order the judges answered.
    pub fn findings_for<'a>(&'a self, id: &'a str) -> impl Iterator<Item = &'a Finding> + 'a {
        self.findings.iter().filter(move |f| f.criterion == id)
    }
}

/// The floor's entries, each with the judge's outcome for its criterion (`judge`, keyed by
/// criterion id; a criterion absent from it was not judged) and the acceptance file it comes
/// from (`origin`, by id). The pass-to-pass guard is the settings' and never judged: it takes
/// neither, even where a claimed criterion shares its id.
pub fn criteria_results(
    floor: &FloorReport,
    origin: &BTreeMap<String, String>,
    judge: &BTreeMap<String, JudgeOutcome>,
    mode_full: bool,
) -> Vec<CriterionResult> {
    floor
        .entries
        .iter()
        .map(|e| {
            let claimed = e.kind == EntryKind::Claimed;
            let judge = judge
                .get(&e.criterion.id)
                .filter(|_| claimed)
                .cloned()
                .unwrap_or_default();
            let mut r = criterion_result(&e.criterion, e.floor.clone(), judge, mode_full);
            r.file = if claimed {
                origin.get(&e.criterion.id).cloned()
            } else {
                None
            };
            r
        })
        .collect()
}

fn criterion_result(
    c: &Criterion,
    mut floor: CriterionFloor,
    mut judge: JudgeOutcome,
    mode_full: bool,
) -> CriterionResult {
    if c.lane == Lane::Judge && judge.result == JudgeResult::None {
        judge.rationale = Some(if mode_full {
            "the judge did not answer; a person decides this judgment criterion".to_string()
        } else {
            "judgment criterion: no judge ran (fast mode); a person decides".to_string()
        });
        floor.reason = "judgment criterion: the floor does not decide it".into();
    }
    let disposition = match (floor.result, judge.result) {
        (_, JudgeResult::Block) => Disposition::Blocked,
        (FloorResult::Satisfied, _) => Disposition::Satisfied,
        (FloorResult::Unsatisfied, _) => Disposition::Unsatisfied,
        (_, JudgeResult::Abstain) => Disposition::Abstained,
        (FloorResult::Unbound, _) => Disposition::Unbound,
        (FloorResult::Undecided, _) => Disposition::Undecided,
        (FloorResult::NotApplicable, _) => Disposition::NotJudged,
    };
    let route_to = match disposition {
        Disposition::Satisfied => RouteTo::Proceed,
        _ if !c.required => RouteTo::FollowUp,
        Disposition::Unsatisfied | Disposition::Blocked => RouteTo::Fix,
        Disposition::Unbound => RouteTo::AuthorCheck,
        _ => RouteTo::Human,
    };
    CriterionResult {
        id: c.id.clone(),
        ac: c.ac.clone(),
        tag: c.tag.clone(),
        required: c.required,
        lane: c.lane,
        requirement: c.requirement(),
        line: c.line,
        file: None,
        disposition,
        route_to,
        floor,
        judge,
    }
}

/// Renders `f` followed by the fused verdict's rule as a sentence.
pub fn fused_reason(f: &Fused) -> String {
    f.rule.explain().to_string()
}

/// Shortens `sha256:<64 hex>` to `sha256:<12 hex>…` for narrow places.
pub fn short_pointer(p: &str) -> String {
    match p.strip_prefix("sha256:") {
        Some(hex) if hex.len() > 12 => format!("sha256:{}…", &hex[..12]),
        _ => p.to_string(),
    }
}

/// The footer's line about the base cache, when base's results were reused from it.
/// The sandbox the floor's commands ran under, as every report shows it (book: security.md,
/// "Reading the sandbox line"); `None` for a result of a release before it.
pub fn sandbox_line(r: &RunResult) -> Option<String> {
    r.sandbox.as_ref().map(|s| s.line())
}

pub fn base_cache_line(r: &RunResult) -> Option<String> {
    let u = r.base_cache.as_ref()?;
    (u.state == BaseCacheState::Reused).then(|| {
        let entry = u.entry.as_deref().unwrap_or("");
        let head = u.observed_at_head.as_deref().unwrap_or("");
        format!(
            "base reused from the base cache: entry {}, observed at head {} ({})",
            &entry[..entry.len().min(19)],
            &head[..head.len().min(7)],
            u.observed_at.as_deref().unwrap_or("")
        )
    })
}

#[cfg(test)]
mod recorded_tests;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{criteria_results, Disposition, JudgeOutcome, RouteTo};
    use crate::acceptance::AcceptanceState;
    use crate::acceptance::{tag_for, Criterion, Lane};
    use crate::floor::{guard_criterion, CriterionFloor, EntryKind, FloorEntry, FloorReport};
    use crate::format::judge::Citation;
    use crate::judge::audit;
    use crate::judge::{Finding, Identity};
    use crate::verdict::{fuse, Verdict};
    use crate::verdict::{FloorResult, JudgeResult};

    fn entry(kind: EntryKind, criterion: Criterion, result: FloorResult) -> FloorEntry {
        FloorEntry {
            kind,
            criterion,
            floor: CriterionFloor::new(result, "why", "tag"),
        }
    }

    /// Each result comes from its own entry: a claimed criterion names its file, the guard
    /// none, even where a criterion of the same id has one; the judge's outcome goes by
    /// criterion id, and never to the guard.
    #[test]
    fn each_entry_carries_its_criterion_into_its_result() {
        let claimed = Criterion {
            id: "order-refunded".into(),
            ac: "Order is refunded.".into(),
            required: false,
            lane: Lane::Floor,
            check: None,
            tag: tag_for("order-refunded"),
            line: 4,
            confidence: None,
            source: None,
        };
        let report = FloorReport {
            entries: vec![
                entry(EntryKind::Claimed, claimed, FloorResult::Unsatisfied),
                entry(
                    EntryKind::Guard,
                    guard_criterion("guard: tests/**"),
                    FloorResult::Satisfied,
                ),
            ],
            runtime: vec![],
            overlay: vec![],
            overlay_deleted: vec![],
            overlay_spliced: vec![],
            changed_files: 0,
            harness: vec![],
            base_cache: None,
            cache_entry: None,
            sandbox: crate::format::sandbox::SandboxRecord::example(),
        };
        let origin = BTreeMap::from([
            ("order-refunded".to_string(), "a.yaml".to_string()),
            ("guard".to_string(), "b.yaml".to_string()),
        ]);
        let blocked = JudgeOutcome {
            result: JudgeResult::Block,
            rationale: Some("blocked".into()),
        };
        let judge = BTreeMap::from([
            ("order-refunded".to_string(), blocked.clone()),
            ("guard".to_string(), blocked),
        ]);
        let r = criteria_results(&report, &origin, &judge, false);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (
                r[0].id.as_str(),
                r[0].file.as_deref(),
                r[0].line,
                r[0].disposition.as_str()
            ),
            ("order-refunded", Some("a.yaml"), 4, "blocked")
        );
        assert_eq!(r[0].route_to, RouteTo::FollowUp);
        assert_eq!(
            (
                r[1].requirement.as_str(),
                r[1].file.as_deref(),
                r[1].line,
                r[1].disposition.as_str()
            ),
            ("stage1.floor.guard", None, 0, "satisfied")
        );
        assert_eq!(r[1].judge.result, JudgeResult::None);
        assert!(r[1].required);
    }

    fn finding(criterion: &str, judge: &str, result: JudgeResult, downgraded: bool) -> Finding {
        Finding {
            criterion: criterion.into(),
            judge: judge.into(),
            identity: Identity::Chat {
                url: "http://127.0.0.1:1/v1/chat/completions".into(),
                model: "m".into(),
            },
            result,
            rationale: format!("{judge} says {}", result.as_str()),
            pointer: (result == JudgeResult::Block).then(|| Citation {
                path: "src/a.py".into(),
                line: 1,
                quote: "x".into(),
            }),
            citations: vec![],
            downgraded: downgraded.then(|| "unresolved pointer".into()),
            request_evidence: format!("sha256:{}", "1".repeat(64)),
            response_evidence: None,
            usage: None,
        }
    }

    /// Every floor result, lane and requirement, under every panel answer: no judge answer
    /// makes a criterion satisfied, a confirmed block from any judge blocks it, and the fused
    /// verdict is never READY or READY WITH GAPS where the floor alone would not have been.
    #[test]
    fn no_judge_answer_passes_a_criterion() {
        use JudgeResult::{Abstain, Block};
        let panels: [&[(&str, JudgeResult, bool)]; 7] = [
            &[],
            &[("a", Block, false)],
            &[("a", Abstain, false)],
            &[("a", Abstain, true)],
            &[("a", Block, false), ("b", Abstain, false)],
            &[("a", Abstain, false), ("b", Abstain, true)],
            &[("a", Abstain, true), ("b", Block, false)],
        ];
        let good = |v: Verdict| matches!(v, Verdict::Ready | Verdict::ReadyWithGaps);
        for floor in FloorResult::ALL {
            for lane in [Lane::Floor, Lane::Judge] {
                for required in [true, false] {
                    for panel in panels {
                        let c = Criterion {
                            id: "c".into(),
                            ac: "C holds.".into(),
                            required,
                            lane,
                            check: None,
                            tag: tag_for("c"),
                            line: 1,
                            confidence: None,
                            source: None,
                        };
                        let report = FloorReport {
                            entries: vec![entry(EntryKind::Claimed, c, floor)],
                            runtime: vec![],
                            overlay: vec![],
                            overlay_spliced: vec![],
                            overlay_deleted: vec![],
                            changed_files: 0,
                            harness: vec![],
                            base_cache: None,
                            cache_entry: None,
                            sandbox: crate::format::sandbox::SandboxRecord::example(),
                        };
                        let findings: Vec<Finding> = panel
                            .iter()
                            .map(|(j, r, d)| finding("c", j, *r, *d))
                            .collect();
                        let origin = BTreeMap::new();
                        let judged =
                            criteria_results(&report, &origin, &audit::outcomes(&findings), true);
                        let alone = criteria_results(&report, &origin, &BTreeMap::new(), true);
                        let case = format!("{floor:?} {lane:?} required={required} {panel:?}");
                        let r = &judged[0];
                        if floor != FloorResult::Satisfied {
                            assert_ne!(r.disposition, Disposition::Satisfied, "{case}");
                            assert_ne!(r.route_to, RouteTo::Proceed, "{case}");
                        }
                        let blocked = panel.iter().any(|(_, res, _)| *res == Block);
                        assert_eq!(r.disposition == Disposition::Blocked, blocked, "{case}");
                        let want = match (panel.is_empty(), blocked) {
                            (true, _) => JudgeResult::None,
                            (false, true) => Block,
                            (false, false) => Abstain,
                        };
                        assert_eq!(r.judge.result, want, "{case}");
                        let verdict = |rs: &[super::CriterionResult]| {
                            let inputs: Vec<_> = rs.iter().map(|c| c.fusion_input()).collect();
                            fuse(AcceptanceState::Committed, &inputs).verdict
                        };
                        if good(verdict(&judged)) {
                            assert!(good(verdict(&alone)), "{case}");
                        }
                    }
                }
            }
        }
    }

    /// A panel's rationale names each judge; an abstention downgraded by the engine says why.
    #[test]
    fn a_panel_outcome_names_its_judges_and_a_downgrade_its_reason() {
        let one = audit::outcomes(&[finding("c", "a", JudgeResult::Abstain, true)]);
        assert_eq!(
            one["c"].rationale.as_deref(),
            Some("unresolved pointer: a says abstain")
        );
        let panel = audit::outcomes(&[
            finding("c", "a", JudgeResult::Abstain, false),
            finding("c", "b", JudgeResult::Block, false),
            finding("d", "a", JudgeResult::Abstain, false),
        ]);
        assert_eq!(panel["c"].result, JudgeResult::Block);
        assert_eq!(
            panel["c"].rationale.as_deref(),
            Some("judge b: b says block")
        );
        assert_eq!(panel["d"].result, JudgeResult::Abstain);
        assert_eq!(
            panel["d"].rationale.as_deref(),
            Some("judge a: a says abstain")
        );
    }
}
