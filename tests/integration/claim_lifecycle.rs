//! A claim belongs to the change that makes it (book: claims.md): a team's pull requests over real git
//! history with real pytest. Pull request 1 brings a criterion and merges; later pull requests
//! neither inherit it as their claim nor conflict over one file; with `inherited: guard`, its
//! test becomes a regression guard.

use crate::common;

use common::{ident, require_pytest, Repo};
use serde_json::Value;

const REFUND_BASE: &str = "def refund(order):\n    return order\n";
const REFUND_DONE: &str =
    "def refund(order):\n    order['status'] = 'refunded'\n    return order\n";

/// `main` with a service, a plain test and pytest settings.
fn team_repo() -> Repo {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    r.write("svc/__init__.py", "");
    r.write("svc/refund.py", REFUND_BASE);
    r.write("svc/limits.py", "def limit():\n    return 0\n");
    r.write(
        "tests/test_plain.py",
        "def test_plain():\n    assert True\n",
    );
    // As a team keeps them: the outputs of a run are never committed.
    r.write(
        ".gitignore",
        ".shipmoor/claim-check.*\n.shipmoor/verify.md\n.shipmoor/evidence/\n__pycache__/\n.pytest_cache/\n",
    );
    r.commit("main");
    r
}

fn criterion(id: &str, ac: &str) -> String {
    format!("version: 1\ncriteria:\n  - id: {id}\n    ac: {ac}\n")
}

/// A test tagged for `id` that imports `module.func` and asserts it returns `want`.
fn tagged_test(r: &Repo, id: &str, body: &str) {
    r.write(&format!("tests/test_{}.py", ident(id)), body);
}

fn refund_test() -> String {
    "from svc.refund import refund\n\ndef test_refunded():\n    assert refund({})['status'] == 'refunded'\n".to_string()
}

fn limit_test(want: u32) -> String {
    format!("from svc.limits import limit\n\ndef test_limit():\n    assert limit() == {want}\n")
}

/// Merges `branch` into main (a merge commit) and returns main's new tip.
fn merge(r: &Repo, branch: &str) -> String {
    r.git(&["switch", "--quiet", "main"]);
    r.git(&[
        "merge",
        "--quiet",
        "--no-ff",
        "-m",
        &format!("Merge {branch}"),
        branch,
    ]);
    r.git(&["rev-parse", "HEAD"])
}

fn json_run(r: &Repo, base: &str) -> (i32, Value) {
    let run = r.shipmoor(&["claim-check", "--base", base, "--format", "json"]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {run:?}"));
    (run.code, v)
}

fn claimed_ids(v: &Value) -> Vec<String> {
    v["result"]["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

fn inherited_ids(v: &Value) -> Vec<String> {
    v["result"]["acceptance"]["inherited"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_team_over_three_pull_requests() {
    let r = team_repo();
    let main0 = r.git(&["rev-parse", "HEAD"]);

    // Pull request 1 brings the first criterion in `.shipmoor/acceptance.yaml`: READY.
    r.git(&["switch", "--quiet", "-c", "pr-1"]);
    r.write("svc/refund.py", REFUND_DONE);
    tagged_test(&r, "order-refunded", &refund_test());
    r.write(
        ".shipmoor/acceptance.yaml",
        &criterion("order-refunded", "Order is marked refunded."),
    );
    r.commit("pr 1");
    let run = r.shipmoor(&["claim-check", "--base", &main0]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("inherited"), "{run:?}");
    let main1 = merge(&r, "pr-1");

    // Pull request 2 changes something unrelated and claims nothing: an input error that says
    // how to give intent, never a verdict, nothing written.
    r.git(&["switch", "--quiet", "-c", "pr-2"]);
    r.write(
        "svc/limits.py",
        "def limit():\n    return 0  # unchanged behaviour\n",
    );
    r.commit("pr 2: tidy");
    std::fs::remove_file(r.path().join(".shipmoor/claim-check.vsa.json")).unwrap();
    let run = r.shipmoor(&["claim-check", "--base", &main1]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stdout.is_empty(), "{run:?}");
    for said in [
        "this change claims nothing",
        "1 criterion is inherited from an earlier change",
        ".shipmoor/changes/<name>.yaml",
        "--from FILE",
        "pull request's description or a commit message",
    ] {
        assert!(run.stderr.contains(said), "{said}: {run:?}");
    }
    assert!(!r.exists(".shipmoor/claim-check.vsa.json"));

    // `--from` text gives a draft claim: INCONCLUSIVE at best, with the inherited line.
    let notes = r.tmp.path().join("notes.md");
    std::fs::write(
        &notes,
        "## Acceptance criteria\n- [ ] The limit stays zero.\n",
    )
    .unwrap();
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &main1,
        "--from",
        notes.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(
        run.stdout.contains("? The limit stays zero.")
            || run.stdout.contains("∅ The limit stays zero."),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("1 criterion inherited from an earlier change, not checked"),
        "{run:?}"
    );

    // Its own file under `.shipmoor/changes/`, first as a draft: the draft gate holds it at
    // INCONCLUSIVE; `acceptance commit` promotes this change's own draft; then READY, with the
    // inherited criterion listed in every report and never checked.
    r.write("svc/limits.py", "def limit():\n    return 10\n");
    tagged_test(&r, "limit-is-ten", &limit_test(10));
    r.write(
        ".shipmoor/changes/pr-2.yaml.draft",
        &criterion("limit-is-ten", "The limit is ten."),
    );
    r.commit("pr 2: the limit");
    let run = r.shipmoor(&["claim-check", "--base", &main1]);
    assert_eq!(run.code, 4, "{run:?}");
    assert!(
        run.stdout.contains("rule draft-gate: acceptance set is a draft; commit .shipmoor/changes/pr-2.yaml.draft with `shipmoor acceptance commit`"),
        "{run:?}"
    );
    let commit = r.shipmoor(&["acceptance", "commit", "--base", &main1]);
    assert_eq!(commit.code, 0, "{commit:?}");
    assert!(r.exists(".shipmoor/changes/pr-2.yaml"), "{commit:?}");
    assert!(
        r.exists(".shipmoor/acceptance.yaml"),
        "the inherited file stays"
    );
    r.commit("pr 2: commit the criteria");
    let run = r.shipmoor(&["claim-check", "--base", &main1]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.starts_with("Claim Check  READY"), "{run:?}");
    assert!(run.stdout.contains("✓ The limit is ten."), "{run:?}");
    assert!(!run.stdout.contains("Order is marked refunded"), "{run:?}");
    let line = "1 criterion inherited from an earlier change, not checked";
    assert!(run.stdout.contains(line), "{run:?}");
    assert!(r.read(".shipmoor/verify.md").contains(line));
    assert_eq!(
        r.json(".shipmoor/claim-check.fixes.json")["inherited"],
        line
    );
    let vsa = r.json(".shipmoor/claim-check.vsa.json");
    let ext = &vsa["predicate"]["https://shipmoor.dev/claim-check/v1"];
    assert_eq!(ext["format_version"], 5);
    assert_eq!(ext["dispositions"].as_array().unwrap().len(), 1);
    assert_eq!(
        ext["dispositions"][0]["file"],
        ".shipmoor/changes/pr-2.yaml"
    );
    assert_eq!(ext["acceptance"]["source"], "files");
    assert_eq!(ext["acceptance"]["inherited"][0]["id"], "order-refunded");
    assert_eq!(
        ext["acceptance"]["inherited"][0]["file"],
        ".shipmoor/acceptance.yaml"
    );
    // The policy is the change's own file at head; the claim's digest is the extension's.
    let head = r.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        vsa["predicate"]["policy"]["uri"],
        format!("git+https://git.example.com/acme/shop@{head}#.shipmoor/changes/pr-2.yaml")
    );
    assert_eq!(
        vsa["predicate"]["policy"]["digest"]["gitBlob"],
        r.git(&["rev-parse", &format!("{head}:.shipmoor/changes/pr-2.yaml")])
    );
    assert_eq!(ext["acceptance"]["path"], ".shipmoor/changes/pr-2.yaml");
    // `replay --rerun` works the same claim out of git and gets the same outcomes.
    let replay = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--rerun",
    ]);
    assert_eq!(replay.code, 0, "{replay:?}");
    assert!(
        replay
            .stdout
            .contains("recorded outcomes for the 1 criterion"),
        "{replay:?}"
    );
    let (code, v) = json_run(&r, &main1);
    assert_eq!(code, 0);
    assert_eq!(claimed_ids(&v), ["limit-is-ten"]);
    assert_eq!(inherited_ids(&v), ["order-refunded"]);
    assert_eq!(
        v["result"]["criteria"][0]["file"],
        ".shipmoor/changes/pr-2.yaml"
    );
    let main2 = merge(&r, "pr-2");

    // The team turns inherited criteria into regression guards, in the shared settings.
    r.write(".shipmoor/config.yaml", "version: 1\ninherited: guard\n");
    let main3 = r.commit("settings: inherited criteria guard");
    let _ = main2;

    // Pull request 3 brings its own criterion, met, and breaks pull request 1's: BLOCKED on
    // the guard, which names the regressed test.
    r.git(&["switch", "--quiet", "-c", "pr-3"]);
    r.write("svc/refund.py", REFUND_BASE);
    r.write(
        "svc/limits.py",
        "def limit():\n    return 10\n\ndef floor_limit():\n    return 1\n",
    );
    tagged_test(
        &r,
        "floor-limit",
        // At base there is no floor_limit yet: an assertion, not an import error, fails there.
        "import svc.limits as limits\n\ndef test_floor_limit():\n    assert getattr(limits, 'floor_limit', lambda: 0)() == 1\n",
    );
    r.write(
        ".shipmoor/changes/pr-3.yaml",
        &criterion("floor-limit", "The floor limit is one."),
    );
    r.commit("pr 3");
    let run = r.shipmoor(&["claim-check", "--base", &main3]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.starts_with("Claim Check  BLOCKED"), "{run:?}");
    assert!(run.stdout.contains("✓ The floor limit is one."), "{run:?}");
    assert!(
        run.stdout
            .contains("2 criteria inherited from earlier changes, kept as regression guards (stage1.floor.guard)"),
        "{run:?}"
    );
    let (code, v) = json_run(&r, &main3);
    assert_eq!(code, 1);
    assert_eq!(claimed_ids(&v), ["floor-limit", "guard"]);
    let guard = &v["result"]["criteria"][1];
    assert_eq!(guard["requirement"], "stage1.floor.guard");
    assert_eq!(guard["floor"]["result"], "unsatisfied");
    let reason = guard["floor"]["reason"].as_str().unwrap();
    assert!(reason.contains("regression"), "{reason}");
    assert!(reason.contains(&ident("order-refunded")), "{reason}");
    let fixes = &v["fixes"]["fixes"];
    assert_eq!(fixes[0]["requirement"], "stage1.floor.guard");

    // Put pull request 1's behaviour back: the guard holds, READY.
    r.write("svc/refund.py", REFUND_DONE);
    r.commit("pr 3: keep refunds");
    let (code, v) = json_run(&r, &main3);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["result"]["criteria"][1]["floor"]["result"], "satisfied");
}

#[test]
fn two_branches_with_their_own_files_merge_without_conflict() {
    let r = team_repo();
    let main0 = r.git(&["rev-parse", "HEAD"]);
    r.git(&["switch", "--quiet", "-c", "a"]);
    r.write("svc/refund.py", REFUND_DONE);
    tagged_test(&r, "order-refunded", &refund_test());
    r.write(
        ".shipmoor/changes/a.yaml",
        &criterion("order-refunded", "Order is marked refunded."),
    );
    r.commit("a");
    r.git(&["switch", "--quiet", "main"]);
    r.git(&["switch", "--quiet", "-c", "b"]);
    r.write("svc/limits.py", "def limit():\n    return 10\n");
    tagged_test(&r, "limit-is-ten", &limit_test(10));
    r.write(
        ".shipmoor/changes/b.yaml",
        &criterion("limit-is-ten", "The limit is ten."),
    );
    r.commit("b");
    let (code, v) = json_run(&r, &main0);
    assert_eq!(code, 0, "{v}");
    assert_eq!(claimed_ids(&v), ["limit-is-ten"]);
    r.git(&["switch", "--quiet", "a"]);
    let (code, v) = json_run(&r, &main0);
    assert_eq!(code, 0, "{v}");
    assert_eq!(claimed_ids(&v), ["order-refunded"]);

    // a merges; b takes main in without a conflict and still claims only its own criterion.
    let main1 = merge(&r, "a");
    r.git(&["switch", "--quiet", "b"]);
    r.git(&["merge", "--quiet", "-m", "Merge main into b", "main"]);
    let (code, v) = json_run(&r, &main1);
    assert_eq!(code, 0, "{v}");
    assert_eq!(claimed_ids(&v), ["limit-is-ten"]);
    assert_eq!(inherited_ids(&v), ["order-refunded"]);
    assert_eq!(
        v["result"]["acceptance"]["inherited"][0]["file"],
        ".shipmoor/changes/a.yaml"
    );
    let both = merge(&r, "b");
    assert!(r.exists(".shipmoor/changes/a.yaml") && r.exists(".shipmoor/changes/b.yaml"));
    let _ = both;
}

#[test]
fn editing_one_criterion_of_an_inherited_file_claims_that_criterion_only() {
    let r = team_repo();
    r.write("svc/refund.py", REFUND_DONE);
    tagged_test(&r, "order-refunded", &refund_test());
    tagged_test(&r, "limit-is-ten", &limit_test(0));
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: order-refunded\n    ac: Order is marked refunded.\n  - id: limit-is-ten\n    ac: The limit is zero for now.\n",
    );
    let base = r.commit("earlier changes");
    r.git(&["switch", "--quiet", "-c", "edit"]);
    r.write("svc/limits.py", "def limit():\n    return 10\n");
    tagged_test(&r, "limit-is-ten", &limit_test(10));
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: order-refunded\n    ac: Order is marked refunded.\n  - id: limit-is-ten\n    ac: The limit is ten.\n",
    );
    r.commit("the limit is ten");
    let (code, v) = json_run(&r, &base);
    assert_eq!(code, 0, "{v}");
    assert_eq!(claimed_ids(&v), ["limit-is-ten"]);
    assert_eq!(inherited_ids(&v), ["order-refunded"]);

    // lint and tags say the same, per file, against the base.
    let lint = r.shipmoor(&["acceptance", "lint", "--base", &base]);
    assert_eq!(lint.code, 0, "{lint:?}");
    assert!(
        lint.stdout
            .contains(".shipmoor/acceptance.yaml: ok (2 criteria, committed)"),
        "{lint:?}"
    );
    assert!(
        lint.stdout.contains("  this change's claim: limit-is-ten"),
        "{lint:?}"
    );
    assert!(
        lint.stdout
            .contains("  inherited from earlier changes: order-refunded"),
        "{lint:?}"
    );
    let tags = r.shipmoor(&["acceptance", "tags", "--base", &base]);
    assert_eq!(tags.code, 0, "{tags:?}");
    assert_eq!(
        tags.stdout,
        format!(
            ".shipmoor/acceptance.yaml\n  order-refunded  {}  inherited\n  limit-is-ten    {}  claim\n",
            common::tag("order-refunded"),
            common::tag("limit-is-ten")
        )
    );
    // Without --base, the default base (the merge-base with main) gives the same.
    let tags_json = r.shipmoor(&["acceptance", "tags", "--format", "json"]);
    common::assert_schema_is_strict("claim_check.tags.v1", &tags_json.stdout);
    let t: Value = serde_json::from_str(&tags_json.stdout).unwrap();
    assert_eq!(t["schema"], "claim_check.tags.v1");
    let t = &t["criteria"];
    assert_eq!(t[0]["claim"], false);
    assert_eq!(t[1]["claim"], true);
    assert_eq!(t[1]["file"], ".shipmoor/acceptance.yaml");
    // lint's JSON: the inherited criterion, against the base.
    let lint_json = r.shipmoor(&["acceptance", "lint", "--base", &base, "--format", "json"]);
    assert_eq!(lint_json.code, 0, "{lint_json:?}");
    common::assert_matches_schema("claim_check.lint.v1", &lint_json.stdout);
    let l: Value = serde_json::from_str(&lint_json.stdout).unwrap();
    assert_eq!(l["files"][0]["criteria"][0]["claim"], false, "{l:#}");
    assert_eq!(l["files"][0]["criteria"][1]["claim"], true, "{l:#}");
}

#[test]
fn the_claim_is_read_from_git_and_an_explicit_file_is_the_claim_whatever_base_holds() {
    let r = team_repo();
    r.write("svc/refund.py", REFUND_DONE);
    tagged_test(&r, "order-refunded", &refund_test());
    r.write(
        ".shipmoor/acceptance.yaml",
        &criterion("order-refunded", "Order is marked refunded."),
    );
    let base = r.commit("pr 1 merged");
    r.write("svc/limits.py", "def limit():\n    return 10\n");
    tagged_test(&r, "limit-is-ten", &limit_test(10));
    r.commit("pr 2 code");
    // An uncommitted file of the change is not its claim: the message says so.
    r.write(
        ".shipmoor/changes/pr-2.yaml",
        &criterion("limit-is-ten", "The limit is ten."),
    );
    let run = r.shipmoor(&["claim-check", "--base", &base]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains(".shipmoor/changes/pr-2.yaml is not committed"),
        "{run:?}"
    );
    // Named explicitly (even outside the repository), a file is the claim as it stands.
    let outside = r.tmp.path().join("claim.yaml");
    std::fs::write(&outside, criterion("limit-is-ten", "The limit is ten.")).unwrap();
    r.remove(".shipmoor/changes/pr-2.yaml");
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--acceptance",
        outside.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("inherited"), "{run:?}");
    let replay = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--rerun",
    ]);
    assert_eq!(replay.code, 0, "{replay:?}");
    // Another file in its place is not the claim the attestation names.
    std::fs::write(&outside, criterion("limit-is-ten", "The limit is eleven.")).unwrap();
    let replay = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--rerun",
    ]);
    assert_eq!(replay.code, 1, "{replay:?}");
    assert!(replay.stdout.contains("its digest differs"), "{replay:?}");
    // And the explicit file of base's own acceptance set is claimed whole, as before.
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--acceptance",
        ".shipmoor/acceptance.yaml",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("proves nothing"), "{run:?}");
}

#[test]
fn a_commit_message_checklist_is_intent_too() {
    let r = team_repo();
    let base = r.git(&["rev-parse", "HEAD"]);
    r.write("svc/limits.py", "def limit():\n    return 10\n");
    r.git(&["add", "-A"]);
    r.git(&[
        "commit",
        "--quiet",
        "-m",
        "Raise the limit\n\n## Acceptance criteria\n- [ ] The limit is ten.\n",
    ]);
    let (code, v) = json_run(&r, &base);
    assert_eq!(code, 4, "{v}");
    assert_eq!(v["result"]["acceptance"]["source"], "derived");
    assert_eq!(v["result"]["acceptance"]["state"], "draft");
    assert_eq!(
        v["result"]["acceptance"]["path"],
        "the commit messages (derived draft)"
    );
    assert_eq!(claimed_ids(&v), ["the-limit-is-ten"]);
    // `replay --rerun` derives the same draft claim (its criteria are in the dispositions).
    let replay = r.shipmoor(&[
        "replay",
        ".shipmoor/claim-check.vsa.json",
        "--allow-unsigned",
        "--rerun",
    ]);
    assert_eq!(replay.code, 0, "{replay:?}");
}

#[test]
fn a_change_that_edits_the_shared_settings_edits_its_own_harness() {
    let r = team_repo();
    r.write(
        ".shipmoor/config.yaml",
        "version: 1\nrunners:\n  - kind: pytest\n",
    );
    let base = r.commit("shared settings");
    r.write("svc/limits.py", "def limit():\n    return 10\n");
    tagged_test(&r, "limit-is-ten", &limit_test(10));
    r.write(
        ".shipmoor/changes/pr-2.yaml",
        &criterion("limit-is-ten", "The limit is ten."),
    );
    // The change also rewrites how every test runs.
    r.write(
        ".shipmoor/config.yaml",
        "version: 1\nrunners:\n  - kind: pytest\n    args: [\"-p\", \"no:cacheprovider\"]\n",
    );
    r.commit("pr 2");
    let (code, v) = json_run(&r, &base);
    assert_eq!(code, 4, "{v}");
    let c = &v["result"]["criteria"][0];
    assert_eq!(c["floor"]["result"], "undecided", "{v}");
    assert!(
        c["floor"]["reason"]
            .as_str()
            .unwrap()
            .contains(".shipmoor/config.yaml"),
        "{v}"
    );
    assert!(
        v["result"]["harness_changes"][0]
            .as_str()
            .unwrap()
            .contains(".shipmoor/config.yaml"),
        "{v}"
    );
}

#[test]
fn derive_drafts_the_branchs_own_file_and_commit_promotes_it() {
    let r = team_repo();
    r.write(
        ".shipmoor/acceptance.yaml",
        &criterion("order-refunded", "Order is marked refunded."),
    );
    let base = r.commit("pr 1 merged");
    r.git(&["switch", "--quiet", "-c", "feature/limits"]);
    let notes = r.tmp.path().join("body.md");
    std::fs::write(&notes, "## Acceptance criteria\n- [ ] The limit is ten.\n").unwrap();
    let run = r.shipmoor(&["acceptance", "derive", "--from", notes.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{run:?}");
    let draft = ".shipmoor/changes/feature-limits.yaml.draft";
    assert!(r.read(draft).contains("- id: the-limit-is-ten"), "{run:?}");
    let lint = r.shipmoor(&["acceptance", "lint", "--base", &base]);
    assert_eq!(lint.code, 0, "{lint:?}");
    assert!(
        lint.stdout.contains(".shipmoor/changes/feature-limits.yaml.draft: ok (1 criterion, draft; commit it with `shipmoor acceptance commit`)\n  this change's claim: the-limit-is-ten\n"),
        "{lint:?}"
    );
    // As JSON, the draft's state; and without a base, the note that says why all is claimed.
    let lint_json = r.shipmoor(&["acceptance", "lint", "--base", &base, "--format", "json"]);
    common::assert_matches_schema("claim_check.lint.v1", &lint_json.stdout);
    let l: Value = serde_json::from_str(&lint_json.stdout).unwrap();
    let draft_file = l["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["file"] == draft)
        .unwrap_or_else(|| panic!("{l:#}"));
    assert_eq!(draft_file["state"], "draft", "{l:#}");
    let commit = r.shipmoor(&["acceptance", "commit", "--base", &base]);
    assert_eq!(commit.code, 0, "{commit:?}");
    assert!(r.exists(".shipmoor/changes/feature-limits.yaml") && !r.exists(draft));
}
