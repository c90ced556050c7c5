//! The pure phases from plain data: a floor report and a claim built by hand (no git, no
//! runner, no I/O), concluded and rendered, and each document snapshotted, as cargo-vet
//! snapshots the human and the JSON report of one resolve.

use std::collections::BTreeMap;

use crate::acceptance::{
    tag_for, AcceptanceSet, AcceptanceState, Criterion, HarnessConfig, InheritedPolicy, Lane,
};
use crate::attest::SubjectArg;
use crate::cli::{Format, Mode};
use crate::floor::runners::FailureKind;
use crate::floor::{
    guard_criterion, CriterionFloor, EntryKind, EvidenceRef, FloorEntry, FloorReport, RuntimeRow,
    TestObservation,
};
use crate::format::judge::Citation;
use crate::format::SideOutcome;
use crate::git::CommitId;
use crate::judge::{CheckedCitation, CitationCheck, Finding, Identity, Usage};
use crate::report::{JudgeRun, Outputs, RunResult, Signing, SigningState};
use crate::verdict::{FloorResult, JudgeResult, Verdict};

use super::claim::ClaimInfo;
use super::outputs::{from_dir, render, Documents, StatementInputs, Terminal};
use super::stages::{conclude, Facts};

const FILE: &str = ".shipmoor/changes/refund.yaml";

/// A distinct evidence pointer per `n`.
fn pointer(n: u8) -> String {
    format!("sha256:{}", format!("{n:02x}").repeat(32))
}

fn criterion(id: &str, ac: &str, line: usize, lane: Lane, required: bool) -> Criterion {
    Criterion {
        id: id.into(),
        ac: ac.into(),
        required,
        lane,
        check: None,
        tag: tag_for(id),
        line,
        confidence: None,
        source: None,
    }
}

/// One pytest test of `file`, with what each side observed and the evidence of each.
fn test(file: &str, name: &str, base: SideOutcome, head: SideOutcome, n: u8) -> TestObservation {
    TestObservation {
        id: format!("{file}::{name}"),
        runner: "pytest".into(),
        file: Some(file.into()),
        head,
        base,
        head_evidence: vec![pointer(n)],
        base_evidence: vec![pointer(n + 1)],
        base_failure: None,
    }
}

fn floor(result: FloorResult, reason: &str, binding: &str) -> CriterionFloor {
    CriterionFloor::new(result, reason, binding)
}

/// A floor over one observed test: its sides' summaries and all its evidence; `decisive`
/// names the side whose observation decided.
fn tested(result: FloorResult, reason: &str, t: TestObservation, decisive: &str) -> CriterionFloor {
    let (pointer, state) = match decisive {
        "head" => (t.head_evidence[0].clone(), format!("{}ed at head", t.head)),
        _ => (t.base_evidence[0].clone(), format!("{}ed at base", t.base)),
    };
    CriterionFloor {
        evidence: Some(EvidenceRef {
            pointer,
            detail: format!("{}, {state}", t.id),
        }),
        evidence_all: [t.head_evidence.clone(), t.base_evidence.clone()].concat(),
        base_summary: t.base.to_string(),
        head_summary: t.head.to_string(),
        reproduce: Some(format!("pytest {}", t.id)),
        tests: vec![t],
        ..floor(result, reason, "tag")
    }
}

/// The refund change: five claimed criteria (one per disposition the floor gives in fast
/// mode) and the pass-to-pass guard, which caught a regression.
fn refund() -> (ClaimInfo, FloorReport) {
    let criteria = vec![
        criterion(
            "refund-voids-payment-intent",
            "The Stripe PaymentIntent is voided.",
            3,
            Lane::Floor,
            true,
        ),
        criterion(
            "order-marked-refunded",
            "Order is marked refunded in the database.",
            5,
            Lane::Floor,
            true,
        ),
        criterion(
            "audit-log",
            "An audit log entry is written for every refund.",
            7,
            Lane::Judge,
            true,
        ),
        criterion(
            "refund-idempotency",
            "A refund cannot be issued twice for the same order.",
            10,
            Lane::Floor,
            true,
        ),
        criterion(
            "receipt-email",
            "The customer receives a receipt.",
            12,
            Lane::Floor,
            false,
        ),
    ];
    let inherited = criterion(
        "limit-is-ten",
        "The refund limit is ten.",
        3,
        Lane::Floor,
        true,
    );
    let mut origin: BTreeMap<String, String> = criteria
        .iter()
        .map(|c| (c.id.clone(), FILE.to_string()))
        .collect();
    origin.insert(inherited.id.clone(), ".shipmoor/changes/pr-1.yaml".into());
    let set = AcceptanceSet {
        display_path: FILE.into(),
        state: AcceptanceState::Committed,
        sha256: "5e".repeat(32),
        criteria: criteria.clone(),
        runners: vec![],
        judge: Vec::new(),
        harness: HarnessConfig::default(),
        guard: vec!["tests/test_kept.py::*".into()],
        inherited: InheritedPolicy::List,
        env_pass: Vec::new(),
        settings_keys: vec!["guard"],
        settings_files: BTreeMap::from([("guard", ".shipmoor/config.yaml".to_string())]),
        origin,
        inherited_criteria: vec![inherited],
        settings_edits: vec![],
    };

    let void = "tests/test_stripe_void.py";
    let mut void_test = test(
        void,
        "test_void_called",
        SideOutcome::Fail,
        SideOutcome::Fail,
        1,
    );
    void_test.base_failure = Some(FailureKind::Assertion);
    let marks = "tests/test_refund.py";
    let mut marks_test = test(
        marks,
        "test_marks_refunded",
        SideOutcome::Fail,
        SideOutcome::Pass,
        3,
    );
    marks_test.base_failure = Some(FailureKind::Exception);
    let scan = EvidenceRef {
        pointer: pointer(9),
        detail: "tag scan of head's tracked files".into(),
    };
    let unbound = |tag: &str| CriterionFloor {
        evidence: Some(scan.clone()),
        evidence_all: vec![scan.pointer.clone()],
        ..floor(
            FloorResult::Unbound,
            &format!("the tag {tag} occurs in no tracked file at head (no path, no contents)"),
            "tag",
        )
    };
    let floors = vec![
        tested(
            FloorResult::Unsatisfied,
            "bound test tests/test_stripe_void.py::test_void_called fails at head: AssertionError: assert [] == ['pi_123']",
            void_test,
            "head",
        ),
        tested(
            FloorResult::Satisfied,
            "tests/test_refund.py::test_marks_refunded fails at base (an exception) and passes at head",
            marks_test,
            "base",
        ),
        floor(
            FloorResult::NotApplicable,
            "judgment criterion: the floor does not decide it",
            "judge_lane",
        ),
        unbound(&criteria[3].tag),
        unbound(&criteria[4].tag),
    ];
    let mut entries: Vec<FloorEntry> = criteria
        .into_iter()
        .zip(floors)
        .map(|(criterion, floor)| FloorEntry {
            kind: EntryKind::Claimed,
            criterion,
            floor,
        })
        .collect();
    let kept = test(
        "tests/test_kept.py",
        "test_kept",
        SideOutcome::Pass,
        SideOutcome::Fail,
        5,
    );
    entries.push(FloorEntry {
        kind: EntryKind::Guard,
        criterion: guard_criterion(&set.guard_scope()),
        floor: CriterionFloor {
            binding: "guard".into(),
            reproduce: None,
            ..tested(
                FloorResult::Unsatisfied,
                "regression: tests/test_kept.py::test_kept passes at base and failed at head",
                kept,
                "head",
            )
        },
    });

    let row = |side: &str, command: &str, tests: usize, result: &str| RuntimeRow {
        side: side.into(),
        runner: "pytest".into(),
        command: command.into(),
        tests,
        result: result.into(),
        seconds: 0.0,
        exit_code: Some(if result.contains("failed") { 1 } else { 0 }),
        excerpt: None,
        tool: None,
    };
    let report = FloorReport {
        entries,
        runtime: vec![
            row("head", "python3 -m pytest --collect-only -q", 4, "4 listed"),
            row("head", "python3 -m pytest -q tests/test_kept.py tests/test_refund.py tests/test_stripe_void.py", 3, "1 passed, 2 failed"),
            row("base", "python3 -m pytest -q tests/test_kept.py tests/test_refund.py tests/test_stripe_void.py", 3, "1 passed, 2 failed"),
        ],
        overlay: vec![marks.into(), void.into()],
        overlay_deleted: vec![],
        overlay_spliced: vec![],
        changed_files: 4,
        harness: vec![],
        base_cache: None,
        cache_entry: None,
        sandbox: crate::format::sandbox::SandboxRecord::example(),
    };
    (
        ClaimInfo {
            set,
            source: "files".into(),
        },
        report,
    )
}

fn facts() -> Facts {
    Facts {
        mode: Mode::Fast,
        repository: "https://github.com/example/shop".into(),
        base: CommitId::parse(&"1".repeat(40)).unwrap(),
        head: CommitId::parse(&"2".repeat(40)).unwrap(),
        acceptance_path: FILE.into(),
        started_at: "2026-11-30T10:00:00Z".into(),
        completed_at: "2026-11-30T10:00:00Z".into(),
        duration_seconds: 0,
        outputs: Outputs {
            vsa: ".shipmoor/claim-check.vsa.json".into(),
            fixes: ".shipmoor/claim-check.fixes.json".into(),
            report: ".shipmoor/verify.md".into(),
            evidence: ".shipmoor/evidence".into(),
        },
        signing: Signing {
            state: SigningState::Unsigned,
            note: "the attestation is unsigned (--sign none): it records the verdict but proves nothing about who produced it".into(),
        },
        shards: None,
        observation: crate::format::observation::Observation::single(None),
    }
}

/// The claim's one file at head as the statement's policy.
fn file_policy(result: &RunResult) -> crate::format::statement::Policy {
    crate::attest::resource::policy(
        &result.repository,
        result.head.known().expect("a run result names its head"),
        &crate::attest::resource::ClaimOrigin::File {
            path: result.acceptance.path.clone(),
            sha256: "ef".repeat(32),
            blob: "12".repeat(20),
        },
        &result.acceptance.sha256,
    )
}

fn rendered(result: &RunResult, format: Format) -> Documents {
    let records: Vec<String> = (1..=9).map(pointer).collect();
    let subjects = [SubjectArg {
        name: "shop.whl".into(),
        sha256: "ab".repeat(32),
    }];
    let inputs = StatementInputs {
        evidence_records: &records,
        policy: file_policy(result),
        subjects: &subjects,
        head_object_sha256: &"cd".repeat(32),
    };
    let terminal = Terminal {
        format,
        colour: false,
    };
    // Run from the repository's root, the footer names the outputs as the documents do.
    render(result, &inputs, terminal, &result.outputs).expect("renders")
}

fn snapshots() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    // The tool's version is in the result and the statement; a release must not churn these.
    s.add_filter(
        r#""(tool_version|shipmoor)": "[0-9A-Za-z.+-]+""#,
        "\"$1\": \"[VERSION]\"",
    );
    s
}

#[test]
fn a_blocked_run_with_every_disposition_and_the_guard() {
    let (claim, report) = refund();
    let result = conclude(&claim, &report, &JudgeRun::default(), &facts());
    assert_eq!(result.verdict, Verdict::Blocked);
    let dispositions: Vec<(&str, &str)> = result
        .criteria
        .iter()
        .map(|c| (c.id.as_str(), c.disposition.as_str()))
        .collect();
    assert_eq!(
        dispositions,
        [
            ("refund-voids-payment-intent", "unsatisfied"),
            ("order-marked-refunded", "satisfied"),
            ("audit-log", "not_judged"),
            ("refund-idempotency", "unbound"),
            ("receipt-email", "unbound"),
            ("guard", "unsatisfied"),
        ]
    );
    // The guard is a criterion of the settings: line 0, in no acceptance file.
    let guard = &result.criteria[5];
    assert_eq!(
        (
            guard.requirement.as_str(),
            guard.line,
            guard.file.as_deref()
        ),
        ("stage1.floor.guard", 0, None)
    );
    assert_eq!(result.criteria[0].file.as_deref(), Some(FILE));

    let docs = rendered(&result, Format::Human);
    snapshots().bind(|| {
        insta::assert_snapshot!("blocked_terminal", docs.terminal);
        insta::assert_snapshot!(
            "blocked_result_json",
            String::from_utf8_lossy(&docs.result_json)
        );
        insta::assert_snapshot!("blocked_fixes", String::from_utf8_lossy(&docs.fixes));
        insta::assert_snapshot!("blocked_verify_md", docs.verify_md);
        insta::assert_snapshot!(
            "blocked_statement",
            String::from_utf8_lossy(&docs.statement)
        );
    });
}

/// With the failures fixed and the guard held, the judgment criterion nobody judged and the
/// optional gap remain.
#[test]
fn a_run_whose_guard_holds_leaves_the_judgment_to_a_person() {
    let (claim, mut report) = refund();
    for e in &mut report.entries {
        match e.criterion.id.as_str() {
            "refund-voids-payment-intent" | "refund-idempotency" | "guard" => {
                e.floor.result = FloorResult::Satisfied;
                e.floor.reason = "holds".into();
            }
            _ => {}
        }
    }
    let result = conclude(&claim, &report, &JudgeRun::default(), &facts());
    // A required judgment criterion nobody judged leaves the verdict to a person.
    assert_eq!(result.verdict, Verdict::Inconclusive);
    let docs = rendered(&result, Format::Human);
    assert!(
        docs.terminal.contains(
            "✓ Tests that passed at base still pass at head (guard: tests/test_kept.py::*)."
        ),
        "{}",
        docs.terminal
    );
    let packet: serde_json::Value = serde_json::from_slice(&docs.fixes).expect("JSON");
    assert_eq!(packet["fixes"], serde_json::json!([]));
    assert_eq!(packet["author_checks"][0]["tag"], tag_for("receipt-email"));
    assert_eq!(
        packet["route_to_human"][0]["ac"],
        "An audit log entry is written for every refund."
    );
}

/// `--format json` prints the result JSON itself, byte for byte as `--result-out` writes it.
#[test]
fn the_json_terminal_text_is_the_result_json() {
    let (claim, report) = refund();
    let result = conclude(&claim, &report, &JudgeRun::default(), &facts());
    let docs = rendered(&result, Format::Json);
    assert_eq!(docs.terminal.as_bytes(), docs.result_json.as_slice());
    assert!(docs.result_json.ends_with(b"}\n"));
    let human = rendered(&result, Format::Human);
    assert_eq!(human.result_json, docs.result_json);
    assert_ne!(human.terminal, docs.terminal);
}

/// Full mode's findings for the refund change, by hand: a panel of three judges. `intent` (a
/// command) confirms a block on the idempotency criterion and abstains on the audit log;
/// `security` (a chat endpoint) blocks the audit log with a pointer that does not resolve
/// (downgraded) and abstains on idempotency; `sloppy` cites files that are not there, so its
/// block on the receipt is discarded and every report says so.
fn panel() -> JudgeRun {
    let intent = Identity::Command {
        argv: vec!["python3".into(), "tools/judge.py".into()],
        sha256: "ab".repeat(32),
    };
    let security = Identity::Chat {
        url: "https://models.github.ai/inference/chat/completions".into(),
        model: "openai/gpt-4.1-mini".into(),
    };
    let sloppy = Identity::Chat {
        url: "http://127.0.0.1:11434/v1/chat/completions".into(),
        model: "llama3.1".into(),
    };
    let cite = |path: &str, line: u64, quote: &str, check: CitationCheck| CheckedCitation {
        citation: Citation {
            path: path.into(),
            line,
            quote: quote.into(),
        },
        check,
    };
    let finding = |criterion: &str,
                   judge: &str,
                   identity: &Identity,
                   result: JudgeResult,
                   rationale: &str,
                   citations: Vec<CheckedCitation>,
                   n: u8| Finding {
        criterion: criterion.into(),
        judge: judge.into(),
        identity: identity.clone(),
        result,
        rationale: rationale.into(),
        pointer: (result == JudgeResult::Block).then(|| citations[0].citation.clone()),
        citations,
        downgraded: None,
        request_evidence: pointer(n),
        response_evidence: Some(pointer(n + 1)),
        usage: None,
    };
    let tokens = |prompt_tokens, completion_tokens| {
        Some(Usage {
            prompt_tokens,
            completion_tokens,
        })
    };
    let findings = vec![
        finding(
            "audit-log",
            "intent",
            &intent,
            JudgeResult::Abstain,
            "no audit-log call is visible in the diff, but the write may happen inside the shared AuditWriter helper this change doesn't touch",
            vec![cite("src/refund.py", 40, "def refund(order):", CitationCheck::Resolved)],
            20,
        ),
        Finding {
            downgraded: Some("unresolved pointer".into()),
            usage: tokens(1200, 80),
            ..finding(
                "audit-log",
                "security",
                &security,
                JudgeResult::Abstain,
                "refund() skips AuditWriter.write",
                vec![cite("src/audit.py", 12, "AuditWriter.write(order)", CitationCheck::NoSuchFile)],
                22,
            )
        },
        finding(
            "refund-idempotency",
            "intent",
            &intent,
            JudgeResult::Block,
            "refund() never checks order.refunded before voiding, so a second call refunds again",
            vec![
                cite("src/refund.py", 42, "return order", CitationCheck::Resolved),
                cite("src/refund.py", 44, "stripe.void(order.intent)", CitationCheck::Resolved),
            ],
            24,
        ),
        Finding {
            usage: tokens(900, 60),
            ..finding(
                "refund-idempotency",
                "security",
                &security,
                JudgeResult::Abstain,
                "the diff does not show the caller; a lock may exist upstream",
                vec![],
                26,
            )
        },
        Finding {
            downgraded: Some("most of this judge's citations do not resolve".into()),
            usage: tokens(400, 30),
            ..finding(
                "receipt-email",
                "sloppy",
                &sloppy,
                JudgeResult::Abstain,
                "the receipt is never sent",
                vec![
                    cite("src/mail.py", 3, "send_receipt(order)", CitationCheck::NoSuchFile),
                    cite("src/refund.py", 90, "mailer.send", CitationCheck::QuoteNotFound),
                ],
                28,
            )
        },
    ];
    JudgeRun {
        findings,
        notes: vec!["judge sloppy: most citations do not resolve; its blocks are discarded".into()],
    }
}

/// The refund change with the floor's failures fixed, judged in full mode by [`panel`]: the
/// confirmed block decides (rule 2), the abstentions go to a person, the discarded judge is
/// named in every report.
#[test]
fn a_full_run_with_a_block_an_abstain_a_downgrade_and_a_discarded_judge() {
    let (claim, mut report) = refund();
    for e in &mut report.entries {
        if matches!(
            e.criterion.id.as_str(),
            "refund-voids-payment-intent" | "guard"
        ) {
            e.floor.result = FloorResult::Satisfied;
            e.floor.reason = "holds".into();
            e.floor.head_summary = "pass".into();
            for t in &mut e.floor.tests {
                t.head = SideOutcome::Pass;
            }
        }
    }
    let facts = Facts {
        mode: Mode::Full,
        ..facts()
    };
    let result = conclude(&claim, &report, &panel(), &facts);
    assert_eq!(
        (result.verdict, result.rule.as_str()),
        (Verdict::Blocked, "2")
    );
    let dispositions: Vec<(&str, &str)> = result
        .criteria
        .iter()
        .map(|c| (c.id.as_str(), c.disposition.as_str()))
        .collect();
    assert_eq!(
        dispositions,
        [
            ("refund-voids-payment-intent", "satisfied"),
            ("order-marked-refunded", "satisfied"),
            ("audit-log", "abstained"),
            ("refund-idempotency", "blocked"),
            ("receipt-email", "abstained"),
            ("guard", "satisfied"),
        ]
    );
    // A panel's rationale names each judge; a block's names only the blocking ones.
    assert_eq!(
        result.criteria[3].judge.rationale.as_deref(),
        Some("judge intent: refund() never checks order.refunded before voiding, so a second call refunds again")
    );
    assert!(result.criteria[2]
        .reason()
        .contains("judge security: unresolved pointer: refund() skips AuditWriter.write"));

    let records: Vec<String> = (1..=9).chain(20..=29).map(pointer).collect();
    let inputs = StatementInputs {
        evidence_records: &records,
        policy: file_policy(&result),
        subjects: &[],
        head_object_sha256: &"cd".repeat(32),
    };
    let terminal = Terminal {
        format: Format::Human,
        colour: false,
    };
    let docs = render(&result, &inputs, terminal, &result.outputs).expect("renders");

    let t = &docs.terminal;
    assert!(t.contains("  ✗ A refund cannot be issued twice for the same order.\n      requirement: stage3.byo_judge · required · result: blocked\n      rationale: refund() never checks order.refunded before voiding, so a second call refunds again\n      pointer: src/refund.py:42 (judge intent · evidence sha256:191919191919…)\n"), "{t}");
    assert!(t.contains("  ? An audit log entry is written for every refund.\n      requirement: stage3.byo_judge · required · result: abstained\n"), "{t}");
    assert!(t.contains(" — routed to a human\n"), "{t}");
    assert!(
        t.contains("  judge sloppy: most citations do not resolve; its blocks are discarded\n"),
        "{t}"
    );

    let packet: serde_json::Value = serde_json::from_slice(&docs.fixes).expect("JSON");
    assert_eq!(
        packet["fixes"],
        serde_json::json!([{
            "requirement": "stage3.byo_judge",
            "ac": "A refund cannot be issued twice for the same order.",
            "reason": "refund() never checks order.refunded before voiding, so a second call refunds again",
            "evidence": {"type": "judge", "pointer": pointer(25), "detail": "src/refund.py:42"}
        }])
    );
    let humans: Vec<&str> = packet["route_to_human"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|h| h["reason"].as_str())
        .collect();
    assert_eq!(humans.len(), 2, "{humans:?}");
    assert!(
        humans.iter().all(|r| r.starts_with("judge abstained: ")),
        "{humans:?}"
    );
    // The judged criteria the floor could not bind still ask for their tagged test.
    assert_eq!(packet["author_checks"].as_array().map(Vec::len), Some(2));

    let md = &docs.verify_md;
    assert!(crate::report::verify_md::body_lines(md) <= crate::report::verify_md::BODY_LINE_BUDGET);
    let rows = md
        .lines()
        .filter(|l| {
            l.starts_with("| intent |")
                || l.starts_with("| security |")
                || l.starts_with("| sloppy |")
        })
        .count();
    // Five findings and six citations, one row each.
    assert_eq!(rows, 11, "{md}");
    assert!(
        md.contains("- judge_prompt_tokens: 2500\n- judge_completion_tokens: 170\n"),
        "{md}"
    );

    let st: serde_json::Value = serde_json::from_slice(&docs.statement).expect("JSON");
    let ext = &st["predicate"][crate::attest::EXTENSION_KEY];
    assert_eq!(ext["format_version"], 5, "every statement is format 5");
    assert_eq!(ext["judges"].as_array().map(Vec::len), Some(3));
    assert_eq!(ext["judges"][0]["identity"]["sha256"], "ab".repeat(32));
    assert_eq!(ext["findings"].as_array().map(Vec::len), Some(5));
    assert_eq!(ext["findings"][2]["response_evidence"], pointer(25));
    // The typed reader `replay` uses reads it back to the same bytes.
    let typed: crate::format::statement::Statement =
        serde_json::from_slice(&docs.statement).expect("a statement");
    assert_eq!(typed.to_bytes().expect("bytes"), docs.statement);
    assert_eq!(typed.extension().findings, result.findings);
    // And the result document, which the Action reads.
    let back = crate::report::ResultDocument::parse(&docs.result_json).expect("a result");
    assert_eq!(back.result.findings, result.findings);
    assert_eq!(back.result.judge_notes, result.judge_notes);

    snapshots().bind(|| {
        insta::assert_snapshot!("full_terminal", docs.terminal);
        insta::assert_snapshot!("full_fixes", String::from_utf8_lossy(&docs.fixes));
        insta::assert_snapshot!("full_verify_md", docs.verify_md);
        insta::assert_snapshot!("full_statement", String::from_utf8_lossy(&docs.statement));
    });
}

/// The footer's paths exist from the directory they are shown for: inside it, from a
/// subdirectory (`../`), through a symlinked directory, not yet written; far away, absolute.
#[test]
fn footer_paths_are_relative_to_where_the_user_stands() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("repo/.shipmoor")).unwrap();
    std::fs::create_dir_all(root.join("repo/svc/deep/er")).unwrap();
    std::os::unix::fs::symlink(root.join("repo"), root.join("link")).unwrap();
    let vsa = root.join("repo/.shipmoor/claim-check.vsa.json");
    assert_eq!(
        from_dir(&vsa, &root.join("repo")),
        ".shipmoor/claim-check.vsa.json"
    );
    assert_eq!(
        from_dir(&vsa, &root.join("link")),
        ".shipmoor/claim-check.vsa.json"
    );
    assert_eq!(
        from_dir(&vsa, &root.join("repo/svc")),
        "../.shipmoor/claim-check.vsa.json"
    );
    assert_eq!(
        from_dir(
            &root.join("repo/svc/out/new/vsa.json"),
            &root.join("repo/svc")
        ),
        "out/new/vsa.json"
    );
    assert_eq!(
        from_dir(&vsa, &root.join("repo/svc/deep/er")),
        vsa.display().to_string()
    );
}
