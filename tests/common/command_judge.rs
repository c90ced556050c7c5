//! A scripted command judge (`tools/judge.py`, its behaviour chosen by its first argument) in a
//! refund repository, and the judge stage run with it through the library: for the judge tests
//! (`tests/integration/judge.rs`).

use std::time::Duration;

use super::Repo;
use shipmoor::acceptance::{tag_for, Criterion, Lane};
use shipmoor::evidence::EvidenceStore;
use shipmoor::floor::{CriterionFloor, EntryKind, FloorEntry};
use shipmoor::git::{CommitId, Git};
use shipmoor::judge::command::CommandJudge;
use shipmoor::judge::{self, Ask, Finding, JudgeRun, JudgeSpec, RunInput, Transport};
use shipmoor::sandbox::Confinement;
use shipmoor::verdict::FloorResult;

/// One scripted judge whose behaviour is chosen by its first argument.
pub const JUDGE: &str = r##"
import json, os, sys, time
req = json.load(sys.stdin)
mode = sys.argv[1]
ptr = {"path": "src/refund.py", "line": 3, "quote": "return order"}
def block(**extra):
    answer = {"schema": "claim_check.judge.response.v1", "base": req["base"], "head": req["head"],
              "decision": "block", "rationale": "refund() returns before the audit entry is written",
              "pointer": ptr,
              "obligations": [{"text": "an entry is written", "status": "divergent", "citation": ptr}]}
    answer.update(extra)
    return answer
if mode == "block":
    print(json.dumps(block()))
elif mode == "prose":
    print("Here is my review.\n```json\n" + json.dumps(block()) + "\n```")
elif mode == "abstain":
    print(json.dumps({"decision": "abstain", "rationale": "the diff does not show the audit writer"}))
elif mode == "pass":
    print(json.dumps({"decision": "pass", "rationale": "looks fine to me"}))
elif mode == "fabricated":
    print(json.dumps(block(pointer={"path": "src/refund.py", "line": 3, "quote": "audit.skip(order)"})))
elif mode == "mostly-fabricated":
    ghost = lambda n: {"text": "o%d" % n, "status": "met",
                       "citation": {"path": "src/ghost.py", "line": n, "quote": "never written"}}
    print(json.dumps(block(obligations=[ghost(1), ghost(2), ghost(3)])))
elif mode == "malformed":
    print("I reviewed the change and it is fine.")
elif mode == "sleep":
    # Says who it is, and would say it woke up had it not been killed first.
    with open(sys.argv[2] + ".pid", "w") as f:
        f.write(str(os.getpid()))
    time.sleep(30)
    with open(sys.argv[2] + ".woke", "w") as f:
        f.write("woke")
elif mode == "crash":
    sys.stderr.write("Traceback (most recent call last): boom\n")
    sys.exit(3)
elif mode == "other-commits":
    print(json.dumps(block(head="0" * 40)))
elif mode == "request":
    # Keeps what it was sent (outside the view) and says what it saw around it.
    with open(sys.argv[2] + "-" + req["criterion"]["id"], "w") as f:
        json.dump({"files": req["changed_files"], "diff": req["diff"],
                   "truncated": req["diff_truncated"], "floor": req["floor"]["result"]}, f)
    print(json.dumps({"decision": "abstain", "rationale": json.dumps(sorted(os.listdir(".")))}))
elif mode == "slow":
    # Marks its start and its end in a log shared by the requests (O_APPEND: each line written
    # whole), waits until a second request has started (at most 10 s), then lingers so that
    # requests in flight pile up.
    def mark(what):
        fd = os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, (what + " " + req["criterion"]["id"] + "\n").encode())
        os.close(fd)
    mark("start")
    deadline = time.time() + 10
    while time.time() < deadline:
        with open(sys.argv[2]) as log:
            if sum(1 for line in log if line.startswith("start ")) >= 2:
                break
        time.sleep(0.05)
    time.sleep(0.3)
    mark("end")
    print(json.dumps({"decision": "abstain", "rationale": "slowly: " + req["criterion"]["id"]}))
elif mode == "env":
    names = ["SIGSTORE_ID_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "GITHUB_OUTPUT", "GITHUB_ENV",
             "GITHUB_STEP_SUMMARY", "GITHUB_PATH", "JUDGE_TEST_KEEP"]
    print(json.dumps({"decision": "abstain",
                      "rationale": " ".join(n for n in names if n in os.environ)}))
elif mode == "view":
    import stat
    with open("README.md") as r, open("src/version.txt") as v:
        print(json.dumps({"decision": "abstain", "rationale": json.dumps(
            {"readme": r.read(), "version": v.read(),
             "judge_mode": stat.filemode(os.stat("tools/judge.py").st_mode)})}))
elif mode == "edit":
    if req["criterion"]["id"] == "audit-log":
        os.chmod("src/refund.py", 0o644)
        with open("src/refund.py", "a") as f:
            f.write("# judged\n")
        print(json.dumps(block()))
    else:
        with open("src/refund.py") as f:
            seen = f.read()
        state = "dirty" if "# judged" in seen else "clean"
        print(json.dumps({"decision": "abstain", "rationale": "tree " + state}))
"##;

pub const REFUND_BASE: &str = "def refund(order):\n    order.paid = False\n    return order\n";
pub const REFUND_HEAD: &str =
    "def refund(order):\n    order.paid = False\n    return order\n    audit.write(order)\n";

pub struct Fixture {
    pub repo: Repo,
    pub git: Git,
    pub base: CommitId,
    pub head: CommitId,
}

pub fn fixture() -> Fixture {
    fixture_with(&[])
}

/// The refund repository, with `extra` files in its head commit.
pub fn fixture_with(extra: &[(&str, &str)]) -> Fixture {
    let repo = Repo::new();
    repo.write("src/refund.py", REFUND_BASE);
    repo.write("README.md", "# shop\n");
    let base = repo.commit("base");
    repo.write("src/refund.py", REFUND_HEAD);
    repo.write("tools/judge.py", JUDGE);
    repo.write("Cargo.lock", "# a lock file: never sent\n");
    repo.write(".env", "API_KEY=sk-live-never-sent\n");
    for (path, text) in extra {
        repo.write(path, text);
    }
    let head = repo.commit("head");
    let git = Git::discover(repo.path()).unwrap();
    let base = git.resolve(&base, "base").unwrap();
    let head = git.resolve(&head, "head").unwrap();
    Fixture {
        repo,
        git,
        base,
        head,
    }
}

pub fn criterion(id: &str, ac: &str, lane: Lane) -> Criterion {
    Criterion {
        id: id.into(),
        ac: ac.into(),
        required: true,
        lane,
        check: None,
        tag: tag_for(id),
        line: 3,
        confidence: None,
        source: None,
    }
}

pub fn entry(c: Criterion, result: FloorResult) -> FloorEntry {
    FloorEntry {
        kind: EntryKind::Claimed,
        criterion: c,
        floor: CriterionFloor::new(
            result,
            &format!("the floor says {}", result.as_str()),
            "tag",
        ),
    }
}

pub fn audit_log() -> FloorEntry {
    entry(
        criterion(
            "audit-log",
            "An audit log entry is written for every refund.",
            Lane::Judge,
        ),
        FloorResult::NotApplicable,
    )
}

pub fn spec(name: &str, mode: &str, timeout: Duration) -> JudgeSpec {
    JudgeSpec {
        name: name.into(),
        transport: Transport::Command {
            argv: ["python3", "tools/judge.py"]
                .into_iter()
                .chain(mode.split(' '))
                .map(str::to_string)
                .collect(),
        },
        timeout,
        concurrency: 2,
        max_diff_bytes: judge::DEFAULT_MAX_DIFF_BYTES,
        exclude: judge::DEFAULT_EXCLUDE
            .iter()
            .map(|g| g.to_string())
            .collect(),
        file: ".shipmoor/acceptance.yaml".into(),
        line: 5,
    }
}

/// Runs the stage with command judges, one per `(name, mode)`.
pub fn run(
    f: &Fixture,
    entries: &[FloorEntry],
    judges: &[(&str, &str)],
    timeout: Duration,
) -> (JudgeRun, EvidenceStore) {
    run_in(f, entries, judges, timeout, &Confinement::off())
}

/// [`run`], the judges' commands confined by `confinement` (and given what its environment
/// policy leaves them).
pub fn run_in(
    f: &Fixture,
    entries: &[FloorEntry],
    judges: &[(&str, &str)],
    timeout: Duration,
    confinement: &Confinement,
) -> (JudgeRun, EvidenceStore) {
    let scratch = f.repo.tmp.path();
    let panel: Vec<(JudgeSpec, Box<dyn Ask>)> = judges
        .iter()
        .map(|(name, mode)| {
            let s = spec(name, mode, timeout);
            let dir = scratch.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let ask: Box<dyn Ask> =
                Box::new(CommandJudge::from_spec(&s, &f.git, &f.head, &dir, confinement).unwrap());
            (s, ask)
        })
        .collect();
    let mut evidence = EvidenceStore::new();
    let input = RunInput {
        git: &f.git,
        repo: "https://example.com/shop.git",
        base: &f.base,
        head: &f.head,
        entries,
        panel: &panel,
    };
    let out = judge::run(input, &mut evidence).unwrap();
    (out, evidence)
}

pub fn one(f: &Fixture, mode: &str) -> (Finding, JudgeRun, EvidenceStore) {
    one_in(f, mode, &Confinement::off())
}

/// [`one`], the judge's command confined by `confinement`.
pub fn one_in(
    f: &Fixture,
    mode: &str,
    confinement: &Confinement,
) -> (Finding, JudgeRun, EvidenceStore) {
    let (out, ev) = run_in(
        f,
        &[audit_log()],
        &[("judge", mode)],
        Duration::from_secs(30),
        confinement,
    );
    assert_eq!(out.findings.len(), 1, "{out:?}");
    (out.findings[0].clone(), out, ev)
}
