//! A runner that is no builtin one, added by a test: the runner is its folder (`runner.rs`) and
//! the one line that puts its entry in the floor's registry. The acceptance set names it as it
//! names any runner, and the floor runs it as any other: head's listing, the criterion bound by
//! `check.test`, the test at base with head's test file laid over it, and the decision.

mod runner;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use shipmoor::acceptance::parse::parse_with_runners;
use shipmoor::acceptance::{AcceptanceState, RunnerKind};
use shipmoor::clock::Clock;
use shipmoor::evidence::EvidenceStore;
use shipmoor::floor::runners::registry::Registry;
use shipmoor::floor::{self, FloorInput};
use shipmoor::git::Git;
use shipmoor::sandbox::Confinement;
use shipmoor::verdict::FloorResult;

/// The test: `refund caps` passes when `answer.txt` holds 42.
const TOY_SH: &str = r#"if [ "$(cat answer.txt)" = 42 ]; then
  body='<testcase classname="refund" name="caps"/>'
else
  body='<testcase classname="refund" name="caps"><failure message="not 42">not 42</failure></testcase>'
fi
printf '<testsuite name="toy" tests="1">%s</testsuite>\n' "$body" > "$SHIPMOOR_JUNIT_OUT"
[ "$(cat answer.txt)" = 42 ]
"#;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .expect("git runs")
        .success();
    assert!(ok, "git {args:?}");
}

#[test]
fn a_runner_the_build_does_not_know_is_one_folder_and_one_registry_line() {
    let repo = tempfile::tempdir().expect("tmp");
    let dir = repo.path();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join("toy.sh"), TOY_SH).unwrap();
    std::fs::write(dir.join("answer.txt"), "41\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "base"]);
    std::fs::write(dir.join("answer.txt"), "42\n").unwrap();
    git(dir, &["commit", "-q", "-am", "head"]);

    let registry = Registry::builtin().with(runner::REGISTERED);
    let kinds: Vec<RunnerKind> = registry.entries().iter().map(|e| e.kind).collect();

    let git = Git::discover(dir).expect("a repository");
    let set = parse_with_runners(
        "version: 1\ncriteria:\n  - id: caps\n    ac: Refunds are capped.\n    check:\n      test: refund caps\nrunners:\n  - kind: toy\n",
        "acceptance.yaml",
        AcceptanceState::Committed,
        String::new(),
        &kinds,
    )
    .expect("a valid set");
    let temp = tempfile::tempdir().expect("tmp");
    let input = FloorInput {
        git: &git,
        acceptance: &set,
        runners: set.runners.clone(),
        base: git.resolve("HEAD~1", "base").unwrap(),
        head: git.resolve("HEAD", "head").unwrap(),
        runs: 1,
        timeout: Duration::from_secs(60),
        temp_root: temp.path().to_path_buf(),
        clock: &Clock::System,
        progress: &|_| {},
        live: None,
        acceptance_path: None,
        shard: None,
        base_cache: None,
        confinement: &Confinement::off(),
        registry: &registry,
    };
    let mut store = EvidenceStore::new();
    let report = floor::run(&input, &mut store).expect("the floor runs");
    let caps = &report.entries[0].floor;
    assert_eq!(caps.result, FloorResult::Satisfied, "{}", caps.reason);
    assert_eq!(caps.tests[0].runner, "toy");
}
