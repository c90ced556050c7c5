//! `shipmoor acceptance derive` and `acceptance commit` from the outside: the texts a draft is
//! derived from (the pull request of the event, `--from`, `--from-commits`, the issues the pull
//! request closes, read from a GitHub REST API on loopback), the ids a re-derived draft keeps,
//! `--min-confidence`, the draft gate end to end, and every bad input (exit 2, nothing written).
//!
//! The fixtures' criteria are Markdown checklists: the derivation's other sources (prose,
//! requirement lists) have tests of their own beside it.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::github_api::FakeGitHub;
use common::{ident, require_pytest, tag, Repo, Run};

/// A repository on `main` with one commit, then on the branch `feature`.
fn feature_repo() -> Repo {
    let r = Repo::new();
    r.write("README.md", "app\n");
    r.commit("base");
    r.git(&["switch", "--quiet", "-c", "feature"]);
    r
}

/// An event payload of pull request `number` with `title` and `body` (`None`: GitHub's null),
/// written beside the repository; its path.
fn event(r: &Repo, number: u64, title: &str, body: Option<&str>) -> PathBuf {
    let base = r.git(&["rev-parse", "main"]);
    let head = r.git(&["rev-parse", "HEAD"]);
    let payload = serde_json::json!({
        "action": "opened",
        "number": number,
        "pull_request": {
            "number": number, "title": title, "body": body,
            "head": {"ref": "feature", "sha": head, "repo": {"full_name": "acme/app"}},
            "base": {"ref": "main", "sha": base, "repo": {"full_name": "acme/app"}},
        },
        "repository": {"full_name": "acme/app"},
    });
    let path = r.tmp.path().join(format!("event-{number}.json"));
    std::fs::write(&path, serde_json::to_vec_pretty(&payload).unwrap()).unwrap();
    path
}

fn with_event(r: &Repo, args: &[&str], event: &Path, more: &[(&str, &str)]) -> Run {
    let mut env = vec![("GITHUB_EVENT_PATH", event.to_str().unwrap())];
    env.extend_from_slice(more);
    r.shipmoor_env(args, &env)
}

const DRAFT: &str = ".shipmoor/changes/feature.yaml.draft";

/// The criteria of the draft, parsed: (id, ac, confidence, source).
fn draft_criteria(r: &Repo) -> Vec<(String, String, f64, String)> {
    let set = shipmoor::acceptance::parse::parse(
        &r.read(DRAFT),
        DRAFT,
        shipmoor::acceptance::AcceptanceState::Draft,
        String::new(),
    )
    .unwrap_or_else(|e| panic!("the draft validates: {e:?}"));
    set.criteria
        .into_iter()
        .map(|c| {
            (
                c.id,
                c.ac,
                c.confidence.expect("a confidence").value(),
                c.source.expect("a source"),
            )
        })
        .collect()
}

#[test]
fn the_pull_request_of_the_event_is_derived_with_its_confidence_source_and_tag() {
    let r = feature_repo();
    let ev = event(
        &r,
        12,
        "Raise the limit",
        Some("Why: customers asked.\n\n## Acceptance criteria\n- [ ] The limit is ten.\n- [x] The old limit is logged.\n"),
    );
    let run = with_event(&r, &["acceptance", "derive"], &ev, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        draft_criteria(&r),
        [
            (
                "the-limit-is-ten".to_string(),
                "The limit is ten.".to_string(),
                0.95,
                "pull request #12, line 4".to_string()
            ),
            (
                "the-old-limit-is-logged".to_string(),
                "The old limit is logged.".to_string(),
                0.95,
                "pull request #12, line 5".to_string()
            ),
        ]
    );
    let text = r.read(DRAFT);
    assert!(
        text.contains(
            "    required: true\n    confidence: 0.95  # checklist item under 'Acceptance criteria'\n"
        ),
        "{text}"
    );
    // Each criterion on a line of its own, aligned: confidence, id, tag, where it was read.
    let ten = tag("the-limit-is-ten");
    let logged = tag("the-old-limit-is-logged");
    assert!(
        run.stdout.contains(&format!(
            "  confidence  id                       tag{}  source\n",
            " ".repeat(logged.len() - 3)
        )),
        "{run:?}"
    );
    assert!(
        run.stdout.contains(&format!(
            "  0.95        the-limit-is-ten         {ten}{}  pull request #12, line 4\n",
            " ".repeat(logged.len() - ten.len())
        )),
        "{run:?}"
    );
    assert!(
        run.stdout.contains(&format!(
            "  0.95        the-old-limit-is-logged  {logged}  pull request #12, line 5\n"
        )),
        "{run:?}"
    );
    assert!(
        run.stdout.contains("then `shipmoor acceptance commit`"),
        "{run:?}"
    );
    // `acceptance tags` reads the same tags from the draft.
    let tags = r.shipmoor(&["acceptance", "tags", "--base", "main"]);
    assert_eq!(tags.code, 0, "{tags:?}");
    assert!(
        tags.stdout.contains(&ten) && tags.stdout.contains(&logged),
        "{tags:?}"
    );
}

#[test]
fn a_null_body_is_no_text_and_a_title_alone_has_no_criterion() {
    let r = feature_repo();
    let before = r.status();
    let ev = event(&r, 3, "Tidy up", None);
    let run = with_event(&r, &["acceptance", "derive"], &ev, &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(
            "nothing to derive: no acceptance criterion in pull request #3's title, pull request #3"
        ),
        "{run:?}"
    );
    assert!(run.stderr.contains("`- [ ] …`"), "{run:?}");
    assert!(!r.exists(DRAFT));
    assert_eq!(r.status(), before);
}

#[test]
fn from_a_file_and_from_standard_input() {
    let r = feature_repo();
    let task = r.tmp.path().join("task.md");
    std::fs::write(&task, "# Task\n\n- [ ] Refunds are idempotent.\n").unwrap();
    // A pull request in the environment is not read when --from names the text.
    let ev = event(&r, 4, "t", Some("- [ ] Something else.\n"));
    let run = with_event(
        &r,
        &["acceptance", "derive", "--from", task.to_str().unwrap()],
        &ev,
        &[],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let c = draft_criteria(&r);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].0, "refunds-are-idempotent");
    assert_eq!(c[0].3, format!("--from {}, line 3", task.display()));

    let r = feature_repo();
    let mut child = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .args(["acceptance", "derive", "--from", "-"])
        .current_dir(r.path())
        .env_remove("GITHUB_EVENT_PATH")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"- [ ] Read from a pipe.\n")
        .unwrap();
    let run = Run::from(child.wait_with_output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    let c = draft_criteria(&r);
    assert_eq!(
        (c[0].0.as_str(), c[0].3.as_str()),
        ("read-from-a-pipe", "--from -, line 1")
    );
}

#[test]
fn from_the_messages_of_a_range_of_commits() {
    let r = feature_repo();
    let base = r.git(&["rev-parse", "HEAD"]);
    r.write("a.txt", "1");
    let first = r.commit("Add a\n\nAcceptance criteria:\n- [ ] A is written.\n");
    r.write("a.txt", "2");
    let second = r.commit("Change a\n\n- [ ] A is two.\n");
    r.write("a.txt", "3");
    let third = r.commit("Change a again, with no criterion");
    let range = format!("{base}..HEAD");
    let run = r.shipmoor(&["acceptance", "derive", "--from-commits", &range]);
    assert_eq!(run.code, 0, "{run:?}");
    let c = draft_criteria(&r);
    let got: Vec<(&str, &str)> = c.iter().map(|c| (c.0.as_str(), c.3.as_str())).collect();
    assert_eq!(
        got,
        [
            (
                "a-is-written",
                format!("commit {}, line 4", &first[..7]).as_str()
            ),
            (
                "a-is-two",
                format!("commit {}, line 3", &second[..7]).as_str()
            ),
        ]
    );
    // Only the range's commits: from the second on, the first is not read.
    let run = r.shipmoor(&[
        "acceptance",
        "derive",
        "--from-commits",
        &format!("{first}..{third}"),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    let c = draft_criteria(&r);
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].0, "a-is-two");
}

#[test]
fn the_issues_the_pull_request_closes_are_read_through_the_rest_api() {
    let r = feature_repo();
    let token = "ghs_s3cretT0ken";
    let gh = FakeGitHub::start("acme/app", 21, token);
    gh.add_issue(
        "acme/app",
        34,
        "Refunds",
        Some("Steps to reproduce: …\n\n## Done when\n- [ ] A refund voids the payment.\n"),
    );
    gh.add_issue(
        "acme/lib",
        5,
        "Logging",
        Some("- [ ] Each refund is logged.\n"),
    );
    gh.add_issue("acme/app", 40, "Empty", None);
    let ev = event(
        &r,
        21,
        "Refunds",
        Some("fixes #34, Closes acme/lib#5\nRESOLVES: #40\nresolves #99\nSee #77.\n\n- [ ] The pull request's own item.\n"),
    );
    let run = with_event(
        &r,
        &["acceptance", "derive", "--linked-issues"],
        &ev,
        &[
            ("GITHUB_TOKEN", token),
            ("GITHUB_API_URL", &gh.api),
            ("GITHUB_REPOSITORY", "acme/app"),
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let c = draft_criteria(&r);
    let got: Vec<(&str, &str)> = c.iter().map(|c| (c.0.as_str(), c.3.as_str())).collect();
    assert_eq!(
        got,
        [
            ("the-pull-request-s-own-item", "pull request #21, line 6"),
            ("a-refund-voids-the-payment", "issue #34, line 4"),
            ("each-refund-is-logged", "issue acme/lib#5, line 1"),
        ]
    );
    // The issue that does not exist is named, and left out; #77 is no closing reference.
    assert!(
        run.stderr.contains(
            "warning: issue #99 could not be read (HTTP 404 (Not Found)); derived without it"
        ),
        "{run:?}"
    );
    let paths: Vec<String> = gh.requests().iter().map(|q| q.path.clone()).collect();
    assert_eq!(
        paths,
        [
            "/repos/acme/app/issues/34",
            "/repos/acme/lib/issues/5",
            "/repos/acme/app/issues/40",
            "/repos/acme/app/issues/99",
        ]
    );
    for q in gh.requests() {
        assert_eq!(q.method, "GET");
        assert_eq!(
            q.header("authorization"),
            Some(format!("Bearer {token}").as_str())
        );
    }
    assert!(!run.stdout.contains(token) && !run.stderr.contains(token));
    assert!(!r.read(DRAFT).contains(token));

    // No token: an input error that says how to give one, the token's name only.
    std::fs::remove_file(r.path().join(DRAFT)).unwrap();
    let run = with_event(
        &r,
        &["acceptance", "derive", "--linked-issues"],
        &ev,
        &[("GITHUB_API_URL", &gh.api), ("GITHUB_TOKEN", "")],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("--linked-issues needs GITHUB_TOKEN"),
        "{run:?}"
    );
    assert!(!r.exists(DRAFT));
}

#[test]
fn a_re_derived_draft_keeps_the_ids_of_its_unchanged_criteria() {
    let r = feature_repo();
    let v1 = r.tmp.path().join("v1.md");
    std::fs::write(
        &v1,
        "- [ ] The limit is ten.\n- [ ] The old limit is logged.\n",
    )
    .unwrap();
    let run = r.shipmoor(&["acceptance", "derive", "--from", v1.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    // The author renames an id (its tag changes with it) and tags a test with the new tag.
    let renamed = r
        .read(DRAFT)
        .replace("id: the-limit-is-ten", "id: limit-ten");
    r.write(DRAFT, &renamed);
    // The text changes: one criterion is the same, one is reworded, one is new.
    let v2 = r.tmp.path().join("v2.md");
    std::fs::write(
        &v2,
        "- [ ] The new limit is logged.\n- [ ]   The limit   is ten.\n- [ ] Refunds are idempotent.\n",
    )
    .unwrap();
    let run = r.shipmoor(&["acceptance", "derive", "--from", v2.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("(the ids of unchanged criteria kept)"),
        "{run:?}"
    );
    let ids: Vec<String> = draft_criteria(&r).into_iter().map(|c| c.0).collect();
    assert_eq!(
        ids,
        [
            "the-new-limit-is-logged",
            "limit-ten",
            "refunds-are-idempotent"
        ]
    );
    assert!(run.stdout.contains(&tag("limit-ten")), "{run:?}");
}

#[test]
fn derive_never_replaces_a_committed_file_without_force() {
    let r = feature_repo();
    r.write(
        ".shipmoor/changes/feature.yaml",
        "version: 1\ncriteria:\n  - id: mine\n    ac: Mine.\n",
    );
    let task = r.tmp.path().join("task.md");
    std::fs::write(&task, "- [ ] Derived.\n").unwrap();
    let run = r.shipmoor(&["acceptance", "derive", "--from", task.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("this change's acceptance file is committed already"),
        "{run:?}"
    );
    assert!(run.stderr.contains("--force"), "{run:?}");
    assert!(!r.exists(DRAFT));
    let run = r.shipmoor(&[
        "acceptance",
        "derive",
        "--from",
        task.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(r.exists(DRAFT));
    assert!(r
        .read(".shipmoor/changes/feature.yaml")
        .contains("id: mine"));

    // A draft that does not validate is not replaced (its ids would be lost) without --force.
    let r = feature_repo();
    r.write(DRAFT, "version: 1\ncriteria:\n  - id: Bad Id\n    ac: A.\n");
    let run = r.shipmoor(&["acceptance", "derive", "--from", task.to_str().unwrap()]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!("{DRAFT}:3:"))
            && run.stderr.contains("pass --force to draft it afresh"),
        "{run:?}"
    );
    assert!(r.read(DRAFT).contains("Bad Id"));
    let run = r.shipmoor(&[
        "acceptance",
        "derive",
        "--from",
        task.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(draft_criteria(&r)[0].0, "derived");
}

#[test]
fn commit_min_confidence_drops_the_less_certain_criteria_and_names_them() {
    let r = feature_repo();
    let draft = "# Drafted by hand for the test.\nversion: 1\ncriteria:\n  - id: sure\n    ac: The limit is ten.\n    confidence: 0.95  # checklist item\n    source: \"pull request #2, line 3\"\n  - id: unsure\n    ac: \"The limit should be\n      documented.\"\n    required: false\n    confidence: 0.55  # should sentence\n  - id: by-hand\n    ac: Written by a person.\n";
    r.write(DRAFT, draft);
    // A criterion without a confidence (written by a person) is never dropped.
    let run = r.shipmoor(&[
        "acceptance",
        "commit",
        "--acceptance",
        DRAFT,
        "--min-confidence",
        "0.99",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with(
            "dropped 2 criteria below confidence 0.99:\n  0.95  sure  The limit is ten.\n"
        ),
        "{run:?}"
    );
    assert!(run.stdout.contains("committed 1 criterion as "), "{run:?}");
    r.remove(".shipmoor/changes/feature.yaml");
    r.write(DRAFT, draft);
    let run = r.shipmoor(&[
        "acceptance",
        "commit",
        "--base",
        "main",
        "--min-confidence",
        "0.8",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with(
            "dropped 1 criterion below confidence 0.8:\n  0.55  unsure  The limit should be documented.\ncommitted 2 criteria as "
        ),
        "{run:?}"
    );
    assert!(!r.exists(DRAFT));
    let committed = r.read(".shipmoor/changes/feature.yaml");
    assert!(!committed.contains("unsure"), "{committed}");
    assert!(
        committed.starts_with("# Drafted by hand for the test.\n"),
        "{committed}"
    );
    let tags = r.shipmoor(&["acceptance", "tags", "--base", "main"]);
    assert_eq!(tags.code, 0, "{tags:?}");
    assert_eq!(
        tags.stdout,
        format!("sure     {}\nby-hand  {}\n", tag("sure"), tag("by-hand"))
    );

    // Every criterion below: refused, nothing changed.
    let r = feature_repo();
    r.write(
        DRAFT,
        "version: 1\ncriteria:\n  - id: a\n    ac: A.\n    confidence: 0.5\n  - id: b\n    ac: B.\n    confidence: 0.6\n",
    );
    let before = r.read(DRAFT);
    let run = r.shipmoor(&["acceptance", "commit", "--min-confidence", "0.7"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("--min-confidence 0.7 would drop every criterion of the draft (the highest confidence is 0.6)"),
        "{run:?}"
    );
    assert_eq!(r.read(DRAFT), before);
    assert!(!r.exists(".shipmoor/changes/feature.yaml"));
    let run = r.shipmoor(&["acceptance", "commit", "--min-confidence", "1.5"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("is not a number from 0 to 1"),
        "{run:?}"
    );
}

#[test]
fn bad_input_is_an_input_error_and_writes_nothing() {
    let r = feature_repo();
    let before = r.status();
    let check = |run: &Run, said: &[&str]| {
        assert_eq!(run.code, 2, "{run:?}");
        assert!(run.stdout.is_empty(), "{run:?}");
        for s in said {
            assert!(run.stderr.contains(s), "{s}: {run:?}");
        }
        assert!(!r.exists(DRAFT), "{run:?}");
        assert!(!r.exists(".shipmoor/acceptance.yaml.draft"), "{run:?}");
        assert_eq!(r.status(), before, "the checkout is untouched");
    };
    // A --from file that does not exist.
    let missing = r.tmp.path().join("no-such-task.md");
    let run = r.shipmoor(&["acceptance", "derive", "--from", missing.to_str().unwrap()]);
    check(
        &run,
        &[
            &format!("{}: cannot read --from", missing.display()),
            "help: pass the path of a UTF-8 text file",
        ],
    );
    // A malformed event payload: its file and line.
    let ev = r.tmp.path().join("event.json");
    std::fs::write(
        &ev,
        "{\n  \"pull_request\": {\n    \"body\": \"- [ ] x\",\n  }\n}\n",
    )
    .unwrap();
    let run = with_event(&r, &["acceptance", "derive"], &ev, &[]);
    check(
        &run,
        &[
            &format!("{}:4:", ev.display()),
            "the event payload (GITHUB_EVENT_PATH) is not JSON",
            "give `acceptance derive` its text with --from FILE",
        ],
    );
    // claim-check reads the same payload in its input checks: the same error, nothing written.
    r.write("a.txt", "changed");
    r.commit("a change");
    let before = r.status();
    let run = with_event(&r, &["claim-check", "--base", "main"], &ev, &[]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!("{}:4:", ev.display()))
            && run
                .stderr
                .contains("the event payload (GITHUB_EVENT_PATH) is not JSON"),
        "{run:?}"
    );
    for out in [
        ".shipmoor/verify.md",
        ".shipmoor/claim-check.fixes.json",
        ".shipmoor/claim-check.vsa.json",
        ".shipmoor/evidence",
    ] {
        assert!(!r.exists(out), "{out}: {run:?}");
    }
    assert_eq!(r.status(), before, "the checkout is untouched");
    // A field of the wrong type (a base sha of 12) is named, never read as missing: claim-check
    // would otherwise take the default branch's merge-base for the pull request's base.
    std::fs::write(
        &ev,
        r#"{"pull_request": {"number": 1, "body": "- [ ] x", "base": {"sha": 12}}}"#,
    )
    .unwrap();
    for args in [
        &["acceptance", "derive"][..],
        &["claim-check", "--head", "HEAD"][..],
    ] {
        let run = with_event(&r, args, &ev, &[]);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(
            run.stderr.contains(&format!(
                "{}: the event payload (GITHUB_EVENT_PATH): `pull_request.base.sha` is a number (`12`)",
                ev.display()
            )) && run.stderr.contains("help: "),
            "{args:?}: {run:?}"
        );
        for out in [DRAFT, ".shipmoor/verify.md", ".shipmoor/evidence"] {
            assert!(!r.exists(out), "{out}: {run:?}");
        }
    }
    assert_eq!(r.status(), before, "the checkout is untouched");
    // An event about no pull request.
    std::fs::write(&ev, "{\"ref\": \"refs/heads/main\"}").unwrap();
    let run = with_event(&r, &["acceptance", "derive"], &ev, &[]);
    check(&run, &["the event is about no pull request"]);
    // Text with nothing to derive: the file is named.
    let prose = r.tmp.path().join("prose.md");
    std::fs::write(&prose, "Just a note about the weather.\n").unwrap();
    let run = r.shipmoor(&["acceptance", "derive", "--from", prose.to_str().unwrap()]);
    check(
        &run,
        &[&format!(
            "{}: nothing to derive: no acceptance criterion in --from {}",
            prose.display(),
            prose.display()
        )],
    );
    // No text at all.
    let run = r.shipmoor(&["acceptance", "derive"]);
    check(
        &run,
        &["no text to derive from", "--from FILE", "--from-commits"],
    );
    // A range that is not one, and one that does not resolve.
    let run = r.shipmoor(&["acceptance", "derive", "--from-commits", "main"]);
    check(
        &run,
        &["--from-commits `main` is not a range", "BASE..HEAD"],
    );
    let run = r.shipmoor(&["acceptance", "derive", "--from-commits", "main..nope"]);
    check(&run, &["nope"]);
    let run = r.shipmoor(&["acceptance", "derive", "--from-commits", "main..main"]);
    check(&run, &["--from-commits `main..main` holds no commit"]);
}

#[test]
fn the_draft_gate_end_to_end_inconclusive_until_committed_then_ready_with_the_same_tags() {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    r.write(
        ".gitignore",
        ".shipmoor/claim-check.*\n.shipmoor/verify.md\n.shipmoor/evidence/\n__pycache__/\n.pytest_cache/\n",
    );
    r.write("svc/__init__.py", "");
    r.write("svc/limits.py", "def limit():\n    return 0\n");
    r.write(
        "tests/test_plain.py",
        "def test_plain():\n    assert True\n",
    );
    let base = r.commit("base");
    r.git(&["switch", "--quiet", "-c", "feature"]);
    r.write("svc/limits.py", "def limit():\n    return 10\n");
    let id = "the-limit-is-ten";
    r.write(
        &format!("tests/test_limit_{}.py", ident(id)),
        "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\nfrom svc.limits import limit\n\ndef test_limit():\n    assert limit() == 10\n",
    );
    r.commit("Raise the limit");
    let ev = event(
        &r,
        2,
        "Raise the limit",
        Some("## Acceptance criteria\n- [ ] The limit is ten.\n"),
    );
    let check = |r: &Repo| {
        let run = with_event(
            r,
            &[
                "claim-check",
                "--base",
                &base,
                "--head",
                "HEAD",
                "--format",
                "json",
                "--quiet",
            ],
            &ev,
            &[],
        );
        let v: serde_json::Value =
            serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
        common::assert_matches_schema("claim_check.run.v1", &run.stdout);
        (run.code, v)
    };

    // 1. The change claims nothing but its description: a derived draft, held at INCONCLUSIVE
    // by the gate though its tagged test fails at base and passes at head.
    let (code, v) = check(&r);
    let result = &v["result"];
    assert_eq!(code, 4, "{v}");
    assert_eq!(result["rule"], "draft-gate", "{v}");
    assert_eq!(result["criteria"][0]["disposition"], "satisfied", "{v}");
    assert_eq!(result["criteria"][0]["tag"], tag(id));
    let draft = &result["acceptance"]["draft"];
    assert_eq!(draft["criteria"][0]["tag"], tag(id), "{v}");
    assert_eq!(draft["criteria"][0]["confidence"], 0.95, "{v}");
    assert_eq!(
        draft["criteria"][0]["source"], "pull request #2, line 2",
        "{v}"
    );
    assert_eq!(
        draft["commit"],
        "gh pr view 2 --json body -q .body | shipmoor acceptance derive --from - && shipmoor acceptance commit"
    );

    // 2. The draft derived as a file and committed as a draft: still INCONCLUSIVE.
    let run = with_event(&r, &["acceptance", "derive"], &ev, &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(&tag(id)), "{run:?}");
    r.commit("the draft");
    let (code, v) = check(&r);
    assert_eq!(code, 4, "{v}");
    assert_eq!(v["result"]["rule"], "draft-gate", "{v}");
    assert_eq!(v["result"]["acceptance"]["source"], "files", "{v}");
    assert_eq!(
        v["result"]["acceptance"]["draft"]["commit"],
        "shipmoor acceptance commit"
    );
    assert_eq!(v["result"]["criteria"][0]["tag"], tag(id), "{v}");

    // 3. Committed: READY, the same tag, no draft block.
    let run = r.shipmoor(&["acceptance", "commit", "--base", &base]);
    assert_eq!(run.code, 0, "{run:?}");
    r.commit("commit the criteria");
    let (code, v) = check(&r);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["result"]["verdict"], "READY", "{v}");
    assert_eq!(v["result"]["criteria"][0]["tag"], tag(id), "{v}");
    assert_eq!(v["result"]["acceptance"]["state"], "committed", "{v}");
    assert!(v["result"]["acceptance"].get("draft").is_none(), "{v}");
}

#[test]
fn a_change_with_no_text_to_derive_from_names_the_three_ways_to_give_intent() {
    let r = feature_repo();
    r.write("a.txt", "changed");
    r.commit("No criteria here");
    let run = r.shipmoor(&["claim-check", "--base", "main"]);
    assert_eq!(run.code, 2, "{run:?}");
    for said in [
        "this change claims nothing",
        "no text with criteria to derive a draft from",
        ".shipmoor/changes/<name>.yaml",
        "shipmoor acceptance derive --from FILE",
        "in the pull request's description or a commit message",
    ] {
        assert!(run.stderr.contains(said), "{said}: {run:?}");
    }
}

#[test]
fn with_judge_a_command_judge_proposes_criteria_marked_as_its_own() {
    let r = feature_repo();
    r.write(
        ".shipmoor/config.yaml",
        "version: 1\njudge: { command: [\"python3\", \"tools/judge.py\"] }\n",
    );
    // The judge reads the request on stdin and proposes one criterion beyond the derived one
    // (and repeats that one, which is dropped); it never sees the workflow's token.
    r.write(
        "tools/judge.py",
        "import json, os, sys\n\
         req = json.load(sys.stdin)\n\
         assert req['schema'] == 'claim_check.propose.v1', req\n\
         name = req['texts'][0]['name']\n\
         seen = os.environ.get('GITHUB_TOKEN', 'none')\n\
         print(json.dumps({'criteria': [\n\
           {'ac': 'Refunds are logged (token: ' + seen + ').', 'required': False, 'text': name, 'line': 2},\n\
           {'ac': req['derived'][0]['ac']},\n\
         ]}))\n",
    );
    let task = r.tmp.path().join("task.md");
    std::fs::write(
        &task,
        "- [ ] Refunds are idempotent.\nAnd we keep a trail.\n",
    )
    .unwrap();
    let from = task.to_str().unwrap();
    let run = r.shipmoor_env(
        &["acceptance", "derive", "--from", from, "--judge"],
        &[("GITHUB_TOKEN", "ghs_s3cret")],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let c = draft_criteria(&r);
    assert_eq!(c.len(), 2, "{c:?}");
    assert_eq!(c[1].1, "Refunds are logged (token: none).");
    assert_eq!(c[1].2, 0.5);
    assert_eq!(c[1].3, format!("--from {from}, line 2"));
    let text = r.read(DRAFT);
    assert!(
        text.contains(
            "    required: false\n    confidence: 0.50  # proposed by the judge `judge`\n"
        ),
        "{text}"
    );
    assert!(
        run.stdout
            .contains("  0.50        refunds-are-logged-token-none"),
        "{run:?}"
    );

    // A judge that fails is named; the draft is made from the text alone.
    r.write("tools/judge.py", "import sys\nsys.exit(3)\n");
    let run = r.shipmoor(&["acceptance", "derive", "--from", from, "--judge"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .contains("warning: the judge `judge` proposed nothing: it exited with code 3"),
        "{run:?}"
    );
    assert_eq!(draft_criteria(&r).len(), 1);

    // No judge configured: an input error, nothing written.
    let r = feature_repo();
    let run = r.shipmoor(&["acceptance", "derive", "--from", from, "--judge"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("--judge: the project settings configure no judge"),
        "{run:?}"
    );
    assert!(!r.exists(DRAFT));
}

#[test]
fn with_judge_a_chat_judge_proposes_criteria_through_its_endpoint() {
    use common::chat_server::{completion, Action, ChatServer};
    // The endpoint answers in a code fence after a sentence, as models do; it proposes one
    // criterion beyond the derived one.
    let server = ChatServer::start(|got| {
        let req = got.judge_request();
        assert_eq!(req["schema"], "claim_check.propose.v1", "{req}");
        let answer = serde_json::json!({"criteria": [
            {"ac": "Refunds are logged.", "required": false,
             "text": req["texts"][0]["name"], "line": 2},
            {"ac": req["derived"][0]["ac"]},
        ]});
        Action::ok(completion(
            &format!("Here you are:\n```json\n{answer}\n```"),
            None,
        ))
    });
    let r = feature_repo();
    r.write(
        ".shipmoor/config.yaml",
        &format!(
            "version: 1\njudge:\n  url: {}\n  model: loopback\n  api_key_env: CLAIM_CHECK_TEST_KEY\n",
            server.url
        ),
    );
    let task = r.tmp.path().join("task.md");
    std::fs::write(
        &task,
        "- [ ] Refunds are idempotent.\nAnd we keep a trail.\n",
    )
    .unwrap();
    let from = task.to_str().unwrap();
    let args = ["acceptance", "derive", "--from", from, "--judge"];

    // The key variable unset: an input error before anything is asked, nothing written.
    let run = r.shipmoor(&args);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("CLAIM_CHECK_TEST_KEY"), "{run:?}");
    assert!(server.received().is_empty());
    assert!(!r.exists(DRAFT));

    let run = r.shipmoor_env(&args, &[("CLAIM_CHECK_TEST_KEY", "sk-test-123")]);
    assert_eq!(run.code, 0, "{run:?}");
    let got = server.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].header("authorization"), Some("Bearer sk-test-123"));
    assert!(
        got[0].body["messages"][0]["content"]
            .as_str()
            .is_some_and(|s| s.contains("claim_check.propose.v1")),
        "the system prompt names the request: {:?}",
        got[0].body
    );
    let c = draft_criteria(&r);
    assert_eq!(c.len(), 2, "{c:?}");
    assert_eq!(c[1].1, "Refunds are logged.");
    assert_eq!(c[1].2, 0.5);
    assert_eq!(c[1].3, format!("--from {from}, line 2"));
    assert!(
        r.read(DRAFT).contains(
            "    required: false\n    confidence: 0.50  # proposed by the judge `judge`\n"
        ),
        "{}",
        r.read(DRAFT)
    );
}
