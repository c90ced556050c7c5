//! `shipmoor replay` over a full-mode statement, through the binary, in a real repository: the
//! judge's request and response records are re-hashed like every record, and the citation audit
//! is re-run at the recorded head with git. The statement is a real run's, with a judge's block
//! added by hand as the judge stage would record it (plain data: the judge stage itself is
//! tested with the engine).

mod common;

use common::Repo;
use shipmoor::acceptance::Lane;
use shipmoor::evidence::{canonical_json, sha256_hex};
use shipmoor::format::evidence::{
    JudgeRequestRecord, JudgeResponseRecord, Record, StoredReply, RECORD_SCHEMA,
};
use shipmoor::format::judge::{Citation, Request, RequestCriterion, RequestFloor, REQUEST_SCHEMA};
use shipmoor::format::statement::Statement;
use shipmoor::format::Disposition;
use shipmoor::judge::{CheckedCitation, CitationCheck, Finding, Identity};
use shipmoor::report::{ResultDocument, RouteTo};
use shipmoor::verdict::{self, FloorResult, JudgeResult};

const RESULT: &str = ".shipmoor/claim-check.result.json";

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

fn store(r: &Repo, record: &Record) -> String {
    let bytes = canonical_json(record).unwrap();
    let hex = sha256_hex(&bytes);
    let dir = r.path().join(".shipmoor/evidence/sha256");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(&hex), bytes).unwrap();
    format!("sha256:{hex}")
}

/// The run's statement rewritten as a full run in which judge `intent` blocked the criterion
/// with `pointer`, recorded as resolving; its request and response stored as evidence.
fn with_a_judge_block(r: &Repo, pointer: Citation) -> Vec<u8> {
    let vsa = r.path().join(".shipmoor/claim-check.vsa.json");
    let fast: Statement = serde_json::from_slice(&std::fs::read(&vsa).unwrap()).unwrap();
    let doc = ResultDocument::parse(r.read(RESULT).as_bytes()).unwrap();
    let mut result = doc.result.into_owned();
    let c = &result.criteria[0];
    let request = Record::JudgeRequest(JudgeRequestRecord {
        schema: RECORD_SCHEMA,
        judge: "intent".into(),
        criterion: c.id.clone(),
        request: Request {
            schema: REQUEST_SCHEMA.into(),
            criterion: RequestCriterion {
                id: c.id.clone(),
                ac: c.ac.clone(),
                required: c.required,
                lane: Lane::Judge,
                tag: c.tag.clone(),
            },
            repo: result.repository.clone(),
            base: result.base.clone(),
            head: result.head.clone(),
            changed_files: vec!["svc/refund.py".into()],
            diff: String::new(),
            diff_truncated: false,
            floor: RequestFloor {
                result: FloorResult::NotApplicable,
                reason: c.floor.reason.clone(),
            },
        },
    });
    let body = serde_json::json!({
        "schema": "claim_check.judge.response.v1",
        "decision": "block",
        "rationale": "refund() returns before the audit write",
        "pointer": pointer,
    })
    .to_string();
    let response = Record::JudgeResponse(JudgeResponseRecord {
        schema: RECORD_SCHEMA,
        judge: "intent".into(),
        criterion: c.id.clone(),
        reply: StoredReply::Body(body),
        usage: None,
    });
    let request_evidence = store(r, &request);
    let response_evidence = store(r, &response);
    result.findings = vec![Finding {
        criterion: c.id.clone(),
        judge: "intent".into(),
        identity: Identity::Command {
            argv: vec!["./judge.sh".into()],
            sha256: "e".repeat(64),
        },
        result: JudgeResult::Block,
        rationale: "refund() returns before the audit write".into(),
        pointer: Some(pointer.clone()),
        citations: vec![CheckedCitation {
            citation: pointer,
            check: CitationCheck::Resolved,
        }],
        downgraded: None,
        request_evidence: request_evidence.clone(),
        response_evidence: Some(response_evidence.clone()),
        usage: None,
    }];
    let outcomes = shipmoor::report::judge_outcomes(&result.findings);
    let c = &mut result.criteria[0];
    c.judge = outcomes[&c.id].clone();
    c.disposition = Disposition::Blocked;
    c.route_to = RouteTo::FollowUp;
    let inputs: Vec<_> = result.criteria.iter().map(|c| c.fusion_input()).collect();
    let fused = verdict::fuse(result.acceptance.state, &inputs);
    result.verdict = fused.verdict;
    result.rule = fused.rule.label().to_string();
    result.mode = "full".into();
    let mut records: Vec<String> = fast
        .predicate
        .input_attestations
        .iter()
        .map(|a| format!("sha256:{}", a.digest.sha256))
        .collect();
    records.extend([request_evidence, response_evidence]);
    let head_object = fast.commit_subjects()[0].digest.sha256.clone().unwrap();
    shipmoor::attest::statement(&result, &records, &[], &head_object)
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
    let run = replay(&r, &with_a_judge_block(&r, cite("return order")), &head);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "every judge finding (1) agrees with its records, 1 citation re-audited at head"
        ),
        "{run:?}"
    );
    assert!(run.stdout.contains("recorded verdict: BLOCKED"), "{run:?}");

    // A pointer recorded as resolving that the head tree does not hold fails at evidence.
    let run = replay(&r, &with_a_judge_block(&r, cite("audit.log(order)")), &head);
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
