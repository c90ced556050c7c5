//! `shipmoor action comment`, the Action's sticky pull request comment, against GitHub's REST
//! API on loopback ([`common::github_api`]): posted once, then updated in place (found on a
//! later page of the listing by its hidden marker), one per job, other people's comments left
//! alone; a fork's pull request, a token that may not write and a failing API are notices or
//! warnings and exit 0; the token never reaches the log.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::github_api::{FakeGitHub, BOT};
use common::{Repo, Run};
use shipmoor::action::comment::{marker, PER_PAGE};

const TOKEN: &str = "ghs_loopbackTOKEN0123456789";
const WORKFLOW_REF: &str = "acme/app/.github/workflows/claim.yml@refs/pull/2/merge";
const WORKFLOW: &str = "acme/app/.github/workflows/claim.yml";

/// A run's result (INCONCLUSIVE: its one criterion has no test yet), and the event of a pull
/// request from the repository itself, or from a fork.
struct Fixture {
    repo: Repo,
    result: PathBuf,
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let repo = Repo::new();
        repo.write("a.txt", "a\n");
        repo.commit("base");
        repo.git(&["switch", "--quiet", "-c", "feature"]);
        repo.write("a.txt", "b\n");
        repo.write(
            ".shipmoor/acceptance.yaml",
            "version: 1\ncriteria:\n  - id: letter\n    ac: The letter is b.\n",
        );
        repo.commit("head");
        let dir = tempfile::tempdir().unwrap();
        let result = dir.path().join("result.json");
        let run = repo.shipmoor(&[
            "claim-check",
            "--base",
            "main",
            "--sign",
            "none",
            "--result-out",
            result.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 4, "{}\n{}", run.stdout, run.stderr);
        let f = Fixture { repo, result, dir };
        f.event("pull_request", "acme/app");
        f
    }

    /// Writes the event: pull request 2 of acme/app, its head in `head_repo`.
    fn event(&self, name: &str, head_repo: &str) {
        let payload = serde_json::json!({
            "action": "synchronize",
            "number": 2,
            "pull_request": {
                "number": 2,
                "head": {"ref": "feature", "repo": {"full_name": head_repo}},
                "base": {"ref": "main", "repo": {"full_name": "acme/app"}},
            },
            "repository": {"full_name": "acme/app"},
        });
        std::fs::write(self.dir.path().join("event.json"), payload.to_string()).unwrap();
        std::fs::write(self.dir.path().join("event-name"), name).unwrap();
    }

    /// `shipmoor action comment` as the Action's step runs it, for job `job`.
    fn comment(&self, api: &str, job: &str, extra: &[(&str, &str)]) -> Run {
        let name = std::fs::read_to_string(self.dir.path().join("event-name")).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_shipmoor"));
        cmd.args(["action", "comment", "--result"])
            .arg(&self.result)
            .args(["--working-directory", "."])
            .current_dir(self.repo.path())
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_API_URL", api)
            .env("GITHUB_REPOSITORY", "acme/app")
            .env("GITHUB_EVENT_NAME", name.trim())
            .env("GITHUB_EVENT_PATH", self.dir.path().join("event.json"))
            .env("GITHUB_WORKFLOW_REF", WORKFLOW_REF)
            .env("GITHUB_JOB", job)
            .env("GITHUB_TOKEN", TOKEN);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let run = Run::from(cmd.output().unwrap());
        // Whatever happened, the token is not in the log.
        assert!(
            !run.stdout.contains(TOKEN) && !run.stderr.contains(TOKEN),
            "the token leaked: {}\n{}",
            run.stdout,
            run.stderr
        );
        run
    }
}

fn ours(gh: &FakeGitHub) -> Vec<common::github_api::Comment> {
    gh.comments()
        .into_iter()
        .filter(|c| c.user == BOT)
        .collect()
}

#[test]
fn the_comment_is_posted_once_then_updated_in_place() {
    let f = Fixture::new();
    let gh = FakeGitHub::start("acme/app", 2, TOKEN);
    let m = marker(WORKFLOW, "claim-check", ".");
    // A full first page of other people's comments, one of them quoting our marker (a reply
    // that quotes the comment is not the comment).
    for i in 0..PER_PAGE - 1 {
        gh.add("octocat", &format!("review note {i}"));
    }
    let quoting = gh.add("octocat", &format!("> {m}\n> INCONCLUSIVE\n\nwhy?"));

    // First run: nothing marked on either page, so a new comment, the marker first.
    let run = f.comment(&gh.api, "claim-check", &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .starts_with("Claim Check: posted the pull request comment "),
        "{}",
        run.stdout
    );
    let first = ours(&gh);
    assert_eq!(first.len(), 1, "{first:?}");
    assert!(
        first[0].body.starts_with(&format!("{m}\n")),
        "{}",
        first[0].body
    );
    assert!(first[0].body.contains("INCONCLUSIVE"), "{}", first[0].body);
    let requests = gh.requests();
    let methods: Vec<&str> = requests.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["GET", "GET", "POST"], "{requests:?}");
    assert!(requests[0]
        .path
        .ends_with("/repos/acme/app/issues/2/comments?per_page=100&page=1"));
    assert!(requests[1].path.ends_with("page=2"), "{}", requests[1].path);
    for r in &requests {
        assert_eq!(r.header("accept"), Some("application/vnd.github+json"));
        assert_eq!(r.header("x-github-api-version"), Some("2022-11-28"));
        assert!(
            r.header("user-agent")
                .is_some_and(|u| u.starts_with("shipmoor/")),
            "{:?}",
            r.headers
        );
    }

    // Second run, after someone else commented too: ours is found on page 2 and edited.
    gh.add("hubot", "LGTM");
    let run = f.comment(&gh.api, "claim-check", &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .starts_with("Claim Check: updated the pull request comment "),
        "{}",
        run.stdout
    );
    let second: Vec<_> = gh.requests().into_iter().skip(requests.len()).collect();
    let methods: Vec<&str> = second.iter().map(|r| r.method.as_str()).collect();
    assert_eq!(methods, ["GET", "GET", "PATCH"], "no POST: {second:?}");
    assert!(
        second[2]
            .path
            .ends_with(&format!("/repos/acme/app/issues/comments/{}", first[0].id)),
        "{}",
        second[2].path
    );
    let after = ours(&gh);
    assert_eq!(after.len(), 1, "still one comment: {after:?}");
    assert_eq!(after[0].id, first[0].id);
    assert!(after[0].body.starts_with(&m));
    // Other people's comments, the quoting one too, are as they were.
    let all = gh.comments();
    assert_eq!(all.len(), PER_PAGE + 2);
    let quote = all.iter().find(|c| c.id == quoting).unwrap();
    assert!(quote.body.starts_with("> "), "{}", quote.body);
    assert!(all.iter().any(|c| c.body == "LGTM"));

    // Another claim-check job in the workflow keeps a comment of its own.
    let run = f.comment(&gh.api, "claim-check-py", &[]);
    assert!(run.stdout.contains("posted"), "{}", run.stdout);
    let both = ours(&gh);
    assert_eq!(both.len(), 2, "{both:?}");
    assert!(both[1]
        .body
        .starts_with(&marker(WORKFLOW, "claim-check-py", ".")));
    assert_ne!(marker(WORKFLOW, "claim-check-py", "."), m);
}

#[test]
fn a_forks_pull_request_is_skipped_with_a_notice_and_no_request() {
    let f = Fixture::new();
    let gh = FakeGitHub::start("acme/app", 2, TOKEN);
    f.event("pull_request", "mallory/app");
    let run = f.comment(&gh.api, "claim-check", &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let notice = run.stdout.trim();
    assert!(
        notice.starts_with("::notice title=Claim Check::no pull request comment: this pull request comes from the fork mallory/app"),
        "{notice}"
    );
    assert!(
        notice.contains("pull_request_target") && notice.contains("job summary"),
        "it says how: {notice}"
    );
    assert!(gh.requests().is_empty(), "{:?}", gh.requests());

    // On `pull_request_target` the token may write: the fork's pull request gets its comment.
    f.event("pull_request_target", "mallory/app");
    let run = f.comment(&gh.api, "claim-check", &[]);
    assert!(run.stdout.contains("posted"), "{}", run.stdout);
    assert_eq!(ours(&gh).len(), 1);
}

#[test]
fn a_token_that_may_not_write_is_a_notice_and_exit_0() {
    let f = Fixture::new();
    let gh = FakeGitHub::start("acme/app", 2, TOKEN);
    gh.refuse_writes(403, "Resource not accessible by integration");
    let run = f.comment(&gh.api, "claim-check", &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let line = run.stdout.trim();
    assert!(line.starts_with("::notice title=Claim Check::"), "{line}");
    assert!(
        line.contains("HTTP 403 (Resource not accessible by integration)")
            && line.contains("pull-requests: write"),
        "{line}"
    );
    let methods: Vec<String> = gh.requests().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, ["GET", "POST"]);
    assert!(gh.comments().is_empty());
}

#[test]
fn other_api_failures_are_warnings_with_githubs_message() {
    let f = Fixture::new();
    let gh = FakeGitHub::start("acme/app", 2, TOKEN);
    gh.refuse_listing(500, "Server Error");
    let run = f.comment(&gh.api, "claim-check", &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let line = run.stdout.trim();
    assert!(line.starts_with("::warning title=Claim Check::the pull request comment failed: listing acme/app#2's comments answered HTTP 500 (Server Error)"), "{line}");
    assert_eq!(gh.requests().len(), 1, "no write after a failed listing");

    // A wrong token: GitHub's 401 and its message.
    let gh = FakeGitHub::start("acme/app", 2, "another-token");
    let run = f.comment(&gh.api, "claim-check", &[]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains("HTTP 401 (Bad credentials)"),
        "{}",
        run.stdout
    );
    // Nothing listening: a warning too.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let run = f.comment(&format!("http://127.0.0.1:{port}"), "claim-check", &[]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout
            .starts_with("::warning title=Claim Check::the pull request comment failed: listing"),
        "{}",
        run.stdout
    );
}

#[test]
fn without_a_pull_request_or_a_token_there_is_a_notice_and_no_request() {
    let f = Fixture::new();
    let gh = FakeGitHub::start("acme/app", 2, TOKEN);
    std::fs::write(
        f.dir.path().join("event.json"),
        r#"{"ref":"refs/heads/main","repository":{"full_name":"acme/app"}}"#,
    )
    .unwrap();
    std::fs::write(f.dir.path().join("event-name"), "push").unwrap();
    let run = f.comment(&gh.api, "claim-check", &[]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout
            .starts_with("::notice title=Claim Check::no pull request comment: the `push` event"),
        "{}",
        run.stdout
    );

    f.event("pull_request", "acme/app");
    let run = f.comment(&gh.api, "claim-check", &[("GITHUB_TOKEN", "")]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("no token"), "{}", run.stdout);
    assert!(gh.requests().is_empty(), "{:?}", gh.requests());
}

#[test]
fn an_unreadable_result_is_an_input_error() {
    let f = Fixture::new();
    std::fs::write(&f.result, "{}").unwrap();
    let gh = FakeGitHub::start("acme/app", 2, TOKEN);
    let run = f.comment(&gh.api, "claim-check", &[]);
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains("not a claim-check result"),
        "{}",
        run.stderr
    );
    assert!(gh.requests().is_empty());
}
