//! `shipmoor replay` over a full-mode statement, through the binary, in a real repository: the
//! judge's request and response records are re-hashed like every record, and the citation audit
//! is re-run at the recorded head with git. The statement is a real fast run's, rewritten as the
//! full run the judge stage makes of it: the judge's records are the stage's own, written by
//! `judge::run` asking a scripted command judge.

use crate::common;

use std::time::Duration;

use common::Repo;
use shipmoor::acceptance::{Criterion, Lane};
use shipmoor::evidence::EvidenceStore;
use shipmoor::floor::{EntryKind, FloorEntry};
use shipmoor::format::judge::Citation;
use shipmoor::format::statement::Statement;
use shipmoor::format::{Disposition, Mode};
use shipmoor::git::Git;
use shipmoor::judge::command::CommandJudge;
use shipmoor::judge::{self, Ask, CheckedCitation, CitationCheck, JudgeSpec, RunInput, Transport};
use shipmoor::report::{ResultDocument, RouteTo};
use shipmoor::verdict::{self, JudgeResult};

const RESULT: &str = ".shipmoor/claim-check.result.json";

/// Judge `intent`: blocks with the pointer its argument holds, answering as a chat model would
/// (prose and a code fence around the JSON).
const JUDGE: &str = r#"
import json, sys
req = json.load(sys.stdin)
answer = {"schema": "claim_check.judge.response.v1", "base": req["base"], "head": req["head"],
          "decision": "block", "rationale": "refund() returns before the audit write",
          "pointer": json.loads(sys.argv[1])}
print("Here is my review.\n```json\n" + json.dumps(answer) + "\n```")
"#;

/// A change with one judgment criterion, checked in fast mode (nothing to run: no runner
/// needed), whose head has `svc/refund.py`; then the file is removed by a later commit, so the
/// audit must read the recorded head and not the checkout.
fn fast_run() -> (Repo, String) {
    let r = Repo::new();
    r.write("README.md", "shop\n");
    let base = r.commit("base");
    r.write(
        "svc/refund.py",
        "def refund(order):\n    if order.paid:\n        return order\n    audit.write(order)\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: audit-log\n    ac: An audit log entry is written for every refund.\n    lane: judge\n    required: false\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--result-out", RESULT]);
    assert_eq!(run.code, 0, "{run:?}");
    (r, base)
}

/// The run's statement rewritten as a full run in which judge `intent` answered a block with
/// `pointer`: the judge stage run over the fast run's criterion, its evidence committed to the
/// run's store. The stage's audit must conclude `audited`; the finding is then recorded as a
/// block whose pointer resolves either way (as a statement that misreports the audit would).
fn with_a_judge_block(r: &Repo, pointer: Citation, audited: JudgeResult) -> Vec<u8> {
    let vsa = r.path().join(".shipmoor/claim-check.vsa.json");
    let fast: Statement = serde_json::from_slice(&std::fs::read(&vsa).unwrap()).unwrap();
    let doc = ResultDocument::parse(r.read(RESULT).as_bytes()).unwrap();
    let mut result = doc.result.into_owned();

    let git = Git::discover(r.path()).unwrap();
    let base = git.resolve(result.base.as_str(), "base").unwrap();
    let head = git.resolve(result.head.as_str(), "head").unwrap();
    let c = &result.criteria[0];
    let entry = FloorEntry {
        kind: EntryKind::Claimed,
        criterion: Criterion {
            id: c.id.clone(),
            ac: c.ac.clone(),
            required: c.required,
            lane: Lane::Judge,
            check: None,
            tag: c.tag.clone(),
            line: c.line,
            confidence: None,
            source: None,
        },
        floor: c.floor.clone(),
    };
    let spec = JudgeSpec {
        name: "intent".into(),
        transport: Transport::Command {
            argv: vec![
                "python3".into(),
                "-c".into(),
                JUDGE.into(),
                serde_json::to_string(&pointer).unwrap(),
            ],
        },
        timeout: Duration::from_secs(60),
        concurrency: 1,
        max_diff_bytes: judge::DEFAULT_MAX_DIFF_BYTES,
        exclude: vec![],
        file: ".shipmoor/acceptance.yaml".into(),
        line: 2,
    };
    let scratch = tempfile::tempdir().unwrap();
    let ask: Box<dyn Ask> = Box::new(
        CommandJudge::from_spec(
            &spec,
            &git,
            &head,
            scratch.path(),
            &shipmoor::sandbox::Confinement::off(),
        )
        .unwrap(),
    );
    let panel = vec![(spec, ask)];
    let mut evidence = EvidenceStore::new();
    let input = RunInput {
        git: &git,
        repo: &result.repository,
        base: &base,
        head: &head,
        entries: std::slice::from_ref(&entry),
        panel: &panel,
    };
    let out = judge::run(input, &mut evidence).unwrap();
    evidence
        .commit(&shipmoor::nofollow::OutputPath::dir(
            &r.path().join(".shipmoor/evidence"),
            Some(r.path()),
        ))
        .unwrap();
    assert_eq!(out.findings.len(), 1, "{out:?}");
    let mut finding = out.findings[0].clone();
    assert_eq!(finding.result, audited, "{finding:?}");
    finding.result = JudgeResult::Block;
    finding.pointer = Some(pointer.clone());
    finding.citations = vec![CheckedCitation {
        citation: pointer,
        check: CitationCheck::Resolved,
    }];
    finding.downgraded = None;
    result.findings = vec![finding];

    let outcomes = shipmoor::judge::audit::outcomes(&result.findings);
    let c = &mut result.criteria[0];
    c.judge = outcomes[&c.id].clone();
    c.disposition = Disposition::Blocked;
    c.route_to = RouteTo::FollowUp;
    let inputs: Vec<_> = result.criteria.iter().map(|c| c.fusion_input()).collect();
    let fused = verdict::fuse(result.acceptance.state, &inputs);
    result.verdict = fused.verdict;
    result.rule = fused.rule.into();
    result.mode = Mode::Full.into();
    let mut records: Vec<String> = fast.evidence_pointers();
    records.extend(evidence.records().iter().cloned());
    let head_object = fast.commit_subjects()[0].digest.sha256.clone().unwrap();
    shipmoor::attest::statement(
        &result,
        &records,
        &[],
        &head_object,
        fast.predicate.policy.clone(),
    )
    .to_bytes()
    .unwrap()
}

fn replay(r: &Repo, statement: &[u8], head: &str) -> common::Run {
    let path = r.path().join(".shipmoor/full.vsa.json");
    std::fs::write(&path, statement).unwrap();
    r.shipmoor(&[
        "replay",
        path.to_str().unwrap(),
        "--allow-unsigned",
        "--commit",
        head,
        "--evidence",
        r.path().join(".shipmoor/evidence").to_str().unwrap(),
    ])
}

#[test]
fn evidence_reaudits_a_judge_block_at_the_recorded_head() {
    let (r, _base) = fast_run();
    let head = r.git(&["rev-parse", "HEAD"]);
    // Later commits do not move the recorded head's tree.
    r.remove("svc/refund.py");
    r.commit("later");
    let cite = |quote: &str| Citation {
        path: "svc/refund.py".into(),
        line: 3,
        quote: quote.into(),
    };
    let block = with_a_judge_block(&r, cite("return order"), JudgeResult::Block);
    let run = replay(&r, &block, &head);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "every judge finding (1) agrees with its records, 1 citation re-audited at head"
        ),
        "{run:?}"
    );
    assert!(run.stdout.contains("recorded verdict: BLOCKED"), "{run:?}");

    // A pointer recorded as resolving that the head tree does not hold (the run's audit found
    // it did not) fails at evidence.
    let forged = with_a_judge_block(&r, cite("audit.log(order)"), JudgeResult::Abstain);
    let run = replay(&r, &forged, &head);
    assert_eq!(run.code, 1, "{run:?}");
    let line = run
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("4 evidence"))
        .unwrap_or_default()
        .to_string();
    assert!(line.contains("FAILED"), "{run:?}");
    assert!(
        line.contains(
            "judge intent's citation svc/refund.py:3 is recorded `resolved`, but at head"
        ),
        "{line}"
    );
    assert!(
        line.ends_with("the audit gives `quote_not_found`"),
        "{line}"
    );
}
