//! The judge stage through the library, with scripted command judges in real git repositories:
//! what each kind of answer becomes once read and audited, what is kept as evidence, and what a
//! judge that misbehaves (hangs, crashes, answers for other commits, edits the tree it is shown)
//! is left with.

use crate::common;

use std::time::Duration;

use common::command_judge::{
    audit_log, criterion, entry, fixture, fixture_with, one, one_in, run, spec, Fixture, JUDGE,
    REFUND_HEAD,
};
use shipmoor::acceptance::Lane;
use shipmoor::evidence::EvidenceStore;
use shipmoor::floor::{EntryKind, FloorEntry};
use shipmoor::format::evidence::Record;
use shipmoor::judge::command::CommandJudge;
use shipmoor::judge::{self, Ask, Identity, JudgeRun, JudgeSpec, RunInput, Transport};
use shipmoor::sandbox::env::EnvPolicy;
use shipmoor::sandbox::Confinement;
use shipmoor::verdict::{FloorResult, JudgeResult};

#[test]
fn a_confirmed_block_is_kept_with_its_pointer_and_evidence() {
    let f = fixture();
    let (finding, out, ev) = one(&f, "block");
    assert_eq!(finding.result, JudgeResult::Block, "{finding:?}");
    let p = finding.pointer.as_ref().unwrap();
    assert_eq!((p.path.as_str(), p.line), ("src/refund.py", 3));
    assert_eq!(out.outcomes()["audit-log"].result, JudgeResult::Block);
    assert_eq!(
        out.outcomes()["audit-log"].rationale.as_deref(),
        Some("refund() returns before the audit entry is written")
    );
    assert!(out.notes.is_empty());

    // The identity: the argv and the digest of the script the command runs, read at head.
    let Identity::Command { argv, sha256 } = &finding.identity else {
        panic!("{:?}", finding.identity)
    };
    assert_eq!(argv[1], "tools/judge.py");
    assert_eq!(*sha256, shipmoor::evidence::sha256_hex(JUDGE.as_bytes()));

    // The request and the response, each an evidence record, with their blobs.
    let record = |p: &str| -> Record { serde_json::from_slice(ev.get(p).unwrap()).unwrap() };
    let Record::JudgeRequest(req) = record(&finding.request_evidence) else {
        panic!("not a request record")
    };
    assert_eq!(
        (req.criterion.as_str(), req.judge.as_str()),
        ("audit-log", "judge")
    );
    assert_eq!(
        (req.base.as_str(), req.commit.as_str()),
        (f.base.as_str(), f.head.as_str())
    );
    let sent: serde_json::Value = serde_json::from_slice(ev.get(&req.request).unwrap()).unwrap();
    assert_eq!(sent["schema"], "claim_check.judge.request.v1");
    assert_eq!(sent["criterion"]["tag"], "AC-AUDIT-LOG-fb7d");
    let Record::JudgeResponse(resp) = record(finding.response_evidence.as_deref().unwrap()) else {
        panic!("not a response record")
    };
    assert_eq!(resp.request, finding.request_evidence);
    let body = ev.get(resp.body.as_deref().unwrap()).unwrap();
    assert!(String::from_utf8_lossy(body).contains("\"decision\": \"block\""));
    assert_eq!(resp.failure, None);
}

#[test]
fn a_block_in_prose_and_a_code_fence_is_read() {
    let f = fixture();
    assert_eq!(one(&f, "prose").0.result, JudgeResult::Block);
}

#[test]
fn an_abstention_and_a_pass_both_abstain() {
    let f = fixture();
    let (abstain, out, _) = one(&f, "abstain");
    assert_eq!(abstain.result, JudgeResult::Abstain);
    assert_eq!(abstain.downgraded, None);
    assert_eq!(
        out.outcomes()["audit-log"].rationale.as_deref(),
        Some("the diff does not show the audit writer")
    );
    let (pass, out, _) = one(&f, "pass");
    assert_eq!(pass.result, JudgeResult::Abstain);
    assert!(pass
        .downgraded
        .unwrap()
        .starts_with("\"pass\" is not an answer"));
    assert_eq!(out.outcomes()["audit-log"].result, JudgeResult::Abstain);
}

#[test]
fn a_fabricated_pointer_is_downgraded_and_a_mostly_fabricated_judge_loses_its_blocks() {
    let f = fixture();
    let (fabricated, _, _) = one(&f, "fabricated");
    assert_eq!(fabricated.result, JudgeResult::Abstain);
    assert_eq!(
        fabricated.downgraded.as_deref(),
        Some("unresolved pointer: src/refund.py:3 (the quote is not there)")
    );

    let (mostly, out, _) = one(&f, "mostly-fabricated");
    assert_eq!(mostly.result, JudgeResult::Abstain);
    assert!(mostly.downgraded.unwrap().contains("(3 of 4)"));
    assert_eq!(
        out.notes,
        ["judge judge: most citations do not resolve (3 of 4); its blocks are discarded"]
    );
    assert_eq!(out.outcomes()["audit-log"].result, JudgeResult::Abstain);
}

#[test]
fn malformed_output_a_timeout_and_a_crash_abstain_with_the_reason() {
    let f = fixture();
    let (malformed, _, _) = one(&f, "malformed");
    assert_eq!(
        malformed.downgraded.as_deref(),
        Some("malformed output: no JSON object in the judge's output")
    );

    let sleeper = f.repo.tmp.path().join("sleeper");
    let (out, ev) = run(
        &f,
        &[audit_log()],
        &[("judge", &format!("sleep {}", sleeper.display()))],
        Duration::from_secs(1),
    );
    // The judge was killed at the timeout: it never woke from its sleep (a stage that waited it
    // out would find it woke), and it is gone (one that left it running would find it there; a
    // judge killed before it even wrote its pid is gone too).
    assert!(!sleeper.with_extension("woke").exists());
    if let Ok(pid) = std::fs::read_to_string(sleeper.with_extension("pid")) {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "the judge {pid} still runs"
        );
    }
    let timeout = &out.findings[0];
    assert_eq!(timeout.result, JudgeResult::Abstain);
    assert_eq!(timeout.downgraded.as_deref(), Some("timeout after 1 s"));
    let Record::JudgeResponse(resp) = serde_json::from_slice(
        ev.get(timeout.response_evidence.as_deref().unwrap())
            .unwrap(),
    )
    .unwrap() else {
        panic!("not a response record")
    };
    assert_eq!(
        (resp.body, resp.failure.as_deref()),
        (None, Some("timeout after 1 s"))
    );

    let (crash, _, _) = one(&f, "crash");
    assert_eq!(
        crash.downgraded.as_deref(),
        Some("the judge exited with code 3: Traceback (most recent call last): boom")
    );
}

#[test]
fn an_answer_for_other_commits_is_discarded() {
    let f = fixture();
    let (finding, out, _) = one(&f, "other-commits");
    assert_eq!(finding.result, JudgeResult::Abstain);
    let why = finding.downgraded.unwrap();
    assert!(
        why.starts_with("invalid context: the answer is for head `0000000"),
        "{why}"
    );
    assert_eq!(out.outcomes()["audit-log"].result, JudgeResult::Abstain);
}

#[test]
fn a_judge_that_edits_the_tree_is_discarded_and_the_tree_restored() {
    let f = fixture();
    let other = entry(
        criterion(
            "receipt-email",
            "The customer receives a receipt.",
            Lane::Judge,
        ),
        FloorResult::NotApplicable,
    );
    // One at a time, so that the second request is asked in the view the first one changed.
    let scratch = f.repo.tmp.path().join("edit");
    std::fs::create_dir_all(&scratch).unwrap();
    let s = JudgeSpec {
        concurrency: 1,
        ..spec("judge", "edit", Duration::from_secs(30))
    };
    let ask: Box<dyn Ask> = Box::new(
        CommandJudge::from_spec(
            &s,
            &f.git,
            &f.head,
            &scratch,
            &shipmoor::sandbox::Confinement::off(),
        )
        .unwrap(),
    );
    let panel = vec![(s, ask)];
    let entries = [audit_log(), other];
    let mut ev = EvidenceStore::new();
    let out = judge::run(
        RunInput {
            git: &f.git,
            repo: "https://example.com/shop.git",
            base: &f.base,
            head: &f.head,
            entries: &entries,
            panel: &panel,
        },
        &mut ev,
    )
    .unwrap();
    let edited = &out.findings[0];
    assert_eq!(edited.result, JudgeResult::Abstain);
    assert_eq!(
        edited.downgraded.as_deref(),
        Some("the judge changed the tree it was shown (src/refund.py); its answer is discarded")
    );
    assert_eq!(out.findings[1].rationale, "tree clean");
    // The checkout is untouched, and no view is left behind.
    assert_eq!(f.repo.status(), "");
    assert_eq!(f.repo.read("src/refund.py"), REFUND_HEAD);
    assert_eq!(std::fs::read_dir(&scratch).unwrap().count(), 0);
}

#[test]
fn in_a_panel_a_block_from_one_lens_counts_and_every_answer_is_kept() {
    let f = fixture();
    let (out, _) = run(
        &f,
        &[audit_log()],
        &[("intent", "abstain"), ("security", "block")],
        Duration::from_secs(30),
    );
    let judges: Vec<(&str, JudgeResult)> = out
        .findings
        .iter()
        .map(|f| (f.judge.as_str(), f.result))
        .collect();
    assert_eq!(
        judges,
        [
            ("intent", JudgeResult::Abstain),
            ("security", JudgeResult::Block)
        ]
    );
    assert_eq!(out.outcomes()["audit-log"].result, JudgeResult::Block);
    assert_eq!(
        out.outcomes()["audit-log"].rationale.as_deref(),
        Some("judge security: refund() returns before the audit entry is written")
    );
    assert_ne!(
        out.findings[0].request_evidence,
        out.findings[1].request_evidence
    );
}

#[test]
fn only_open_criteria_are_judged_and_excluded_paths_are_never_sent() {
    let f = fixture();
    let c = |id: &str| criterion(id, "The refund is recorded.", Lane::Floor);
    let entries = [
        entry(c("satisfied-one"), FloorResult::Satisfied),
        entry(c("unsatisfied-one"), FloorResult::Unsatisfied),
        entry(c("unbound-one"), FloorResult::Unbound),
        entry(c("undecided-one"), FloorResult::Undecided),
        audit_log(),
        FloorEntry {
            kind: EntryKind::Guard,
            ..entry(c("guard"), FloorResult::Undecided)
        },
    ];
    let dump = f.repo.tmp.path().join("sent");
    let mode = format!("request {}", dump.display());
    let (out, _) = run(&f, &entries, &[("judge", &mode)], Duration::from_secs(30));
    let judged: Vec<&str> = out.findings.iter().map(|f| f.criterion.as_str()).collect();
    assert_eq!(judged, ["unbound-one", "undecided-one", "audit-log"]);
    let outcomes = out.outcomes();
    let results: Vec<JudgeResult> = entries
        .iter()
        .map(|e| {
            outcomes
                .get(&e.criterion.id)
                .map_or(JudgeResult::None, |o| o.result)
        })
        .collect();
    use JudgeResult::{Abstain, None};
    assert_eq!(results, [None, None, Abstain, Abstain, Abstain, None]);

    let sent = std::fs::read_to_string(format!("{}-audit-log", dump.display())).unwrap();
    let sent: serde_json::Value = serde_json::from_str(&sent).unwrap();
    assert_eq!(
        sent["files"],
        serde_json::json!(["src/refund.py", "tools/judge.py"])
    );
    let diff = sent["diff"].as_str().unwrap();
    assert!(diff.contains("+    audit.write(order)"), "{diff}");
    assert!(
        !diff.contains("sk-live") && !diff.contains("lock file"),
        "{diff}"
    );
    assert_eq!(sent["truncated"], false);
    assert_eq!(sent["floor"], "not_applicable");
    // The judge runs in a view of the head tree: its files, without `.git` or excluded paths.
    let cwd: serde_json::Value = serde_json::from_str(&out.findings[2].rationale).unwrap();
    assert_eq!(cwd, serde_json::json!(["README.md", "src", "tools"]));
}

fn run_with(f: &Fixture, entries: &[FloorEntry], s: JudgeSpec, limit: Option<usize>) -> JudgeRun {
    let dir = f
        .repo
        .tmp
        .path()
        .join(format!("{}-{}", s.name, entries.len()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut judge = CommandJudge::from_spec(
        &s,
        &f.git,
        &f.head,
        &dir,
        &shipmoor::sandbox::Confinement::off(),
    )
    .unwrap();
    if let Some(bytes) = limit {
        judge = judge.with_output_limit(bytes);
    }
    let panel: Vec<(JudgeSpec, Box<dyn Ask>)> = vec![(s, Box::new(judge))];
    let mut ev = EvidenceStore::new();
    let input = RunInput {
        git: &f.git,
        repo: "https://example.com/shop.git",
        base: &f.base,
        head: &f.head,
        entries,
        panel: &panel,
    };
    judge::run(input, &mut ev).unwrap()
}

/// The most requests in flight at once, from the start and end lines the `slow` judge logs.
fn most_in_flight(log: &str) -> usize {
    let mut now = 0usize;
    let mut most = 0;
    for line in log.lines() {
        if line.starts_with("start ") {
            now += 1;
            most = most.max(now);
        } else {
            now -= 1;
        }
    }
    most
}

#[test]
fn criteria_are_judged_concurrently_and_answered_in_order() {
    let f = fixture();
    let ids = ["c-one", "c-two", "c-three", "c-four", "c-five", "c-six"];
    let entries: Vec<FloorEntry> = ids
        .iter()
        .map(|id| {
            entry(
                criterion(id, "C holds.", Lane::Judge),
                FloorResult::NotApplicable,
            )
        })
        .collect();
    let log = f.repo.tmp.path().join("in-flight.log");
    let s = JudgeSpec {
        concurrency: 3,
        ..spec(
            "judge",
            &format!("slow {}", log.display()),
            Duration::from_secs(30),
        )
    };
    let out = run_with(&f, &entries, s, None);
    let said: Vec<&str> = out.findings.iter().map(|f| f.rationale.as_str()).collect();
    assert_eq!(
        said,
        [
            "slowly: c-one",
            "slowly: c-two",
            "slowly: c-three",
            "slowly: c-four",
            "slowly: c-five",
            "slowly: c-six"
        ]
    );
    let log = std::fs::read_to_string(&log).unwrap();
    assert_eq!(log.lines().count(), 2 * ids.len(), "{log}");
    // One after another, never more than one would be in flight; and never more than the
    // judge's concurrency.
    let most = most_in_flight(&log);
    assert!((2..=3).contains(&most), "{most} in flight:\n{log}");
}

#[test]
fn output_over_the_limit_abstains() {
    let f = fixture();
    let out = run_with(
        &f,
        &[audit_log()],
        spec("judge", "block", Duration::from_secs(30)),
        Some(64),
    );
    assert_eq!(
        out.findings[0].downgraded.as_deref(),
        Some("output over the limit of 64 bytes")
    );
}

#[test]
fn the_view_holds_heads_files_as_git_stores_them() {
    // `git archive` would leave README.md out and expand the placeholder: a change could hide
    // a file from its judge that way. And the view is read-only.
    let f = fixture_with(&[
        (
            ".gitattributes",
            "README.md export-ignore\nsrc/version.txt export-subst\n",
        ),
        ("src/version.txt", "$Format:%H$\n"),
    ]);
    let (finding, _, _) = one(&f, "view");
    let seen: serde_json::Value = serde_json::from_str(&finding.rationale).unwrap();
    assert_eq!(
        seen,
        serde_json::json!({"readme": "# shop\n", "version": "$Format:%H$\n", "judge_mode": "-r--r--r--"})
    );
}

#[test]
fn a_program_of_the_repository_runs_from_the_view_and_is_identified_by_its_bytes() {
    use std::os::unix::fs::PermissionsExt;
    let f = fixture();
    let script = "#!/bin/sh\nexec python3 tools/judge.py \"$@\"\n";
    f.repo.write("tools/run-judge.sh", script);
    let path = f.repo.path().join("tools/run-judge.sh");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let head = f.repo.commit("a judge launcher");
    let f = Fixture {
        head: f.git.resolve(&head, "head").unwrap(),
        ..f
    };
    let s = JudgeSpec {
        transport: Transport::Command {
            argv: vec!["tools/run-judge.sh".into(), "block".into()],
        },
        ..spec("judge", "block", Duration::from_secs(30))
    };
    let out = run_with(&f, &[audit_log()], s, None);
    let finding = &out.findings[0];
    assert_eq!(finding.result, JudgeResult::Block, "{finding:?}");
    assert_eq!(
        finding.identity,
        Identity::Command {
            argv: vec!["tools/run-judge.sh".into(), "block".into()],
            sha256: shipmoor::evidence::sha256_hex(script.as_bytes()),
        }
    );
    // A program from PATH is identified by the argv.
    let identity = shipmoor::judge::command::identity(&["true".to_string()], &f.git, &f.head);
    let Identity::Command { sha256, .. } = identity else {
        panic!("{identity:?}")
    };
    assert_eq!(sha256, shipmoor::evidence::sha256_hex(b"true\0"));
}

#[test]
fn a_command_judge_gets_the_floors_scrubbed_environment() {
    let f = fixture();
    // The environment of a real job, given to the judge's policy as what its command inherits.
    let job = [
        ("SIGSTORE_ID_TOKEN", "oidc"),
        ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "t"),
        ("GITHUB_OUTPUT", "/tmp/out"),
        ("GITHUB_ENV", "/tmp/env"),
        ("GITHUB_STEP_SUMMARY", "/tmp/sum"),
        ("GITHUB_PATH", "/tmp/path"),
        ("JUDGE_TEST_KEEP", "1"),
    ]
    .map(|(k, v)| (k.into(), v.into()));
    let confinement = Confinement {
        env: EnvPolicy::default().inheriting(std::env::vars_os().chain(job)),
        ..Confinement::off()
    };
    let (finding, _, _) = one_in(&f, "env", &confinement);
    assert_eq!(finding.rationale, "JUDGE_TEST_KEEP");
}
