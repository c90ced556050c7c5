//! Faults the operator's machine throws at a run: a full disk, a temporary directory that is
//! missing or full, an interruption while the judge runs, a run killed outright. Each ends as
//! the input error or the interruption it is (exit 2 naming the path, or 130), with nothing
//! written and the checkout as it was; a killed run's worktrees are removed by the next run.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{require_pytest, slow_change, wait_for_start, Repo, PINNED_EPOCH};

/// A pytest change whose tagged test passes at head and is missing at base (READY).
fn ready_change() -> (Repo, String) {
    require_pytest();
    let r = Repo::new();
    r.write("pytest.ini", "[pytest]\n");
    r.write("tests/test_a.py", "def test_a():\n    assert True\n");
    let base = r.commit("base");
    r.write(
        &format!("tests/test_b_{}.py", common::ident("b")),
        "def test_b():\n    assert True\n",
    );
    r.write(
        ".shipmoor/acceptance.yaml",
        "version: 1\ncriteria:\n  - id: b\n    ac: B holds.\n",
    );
    r.commit("head");
    (r, base)
}

/// No output of a run in the checkout, and no worktree.
fn assert_nothing_written(r: &Repo) {
    for out in [
        "claim-check.vsa.json",
        "claim-check.fixes.json",
        "verify.md",
        "evidence",
    ] {
        assert!(!r.exists(&format!(".shipmoor/{out}")), "{out} was written");
    }
    assert!(r.extra_worktrees().is_empty(), "{:?}", r.extra_worktrees());
}

/// Runs `shipmoor ARGS` in `r` inside a mount namespace of its own where `mount` is a tmpfs of
/// `kib` KiB, filled up first when `full`; after the run, prints `--- left:` and what the tmpfs
/// holds. Fails naming `unshare` when the machine cannot make the namespace.
fn on_tmpfs(r: &Repo, mount: &Path, kib: u32, full: bool, args: &[&str]) -> common::Run {
    std::fs::create_dir_all(mount).unwrap();
    let script = format!(
        "mount -t tmpfs -o size={kib}k tmpfs \"$1\" || exit 97\n\
         {fill}\n\
         shift\n\
         \"$@\"\n\
         code=$?\n\
         echo '--- left:'\n\
         ls -A \"{mount}\" | grep -v '^fill$'\n\
         exit $code\n",
        fill = if full {
            "head -c 100000000 /dev/zero > \"$1/fill\" 2>/dev/null; true"
        } else {
            ""
        },
        mount = mount.display(),
    );
    let out = Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            &script,
            "sh",
        ])
        .arg(mount)
        .arg(env!("CARGO_BIN_EXE_shipmoor"))
        .args(args)
        .current_dir(r.path())
        .env("SOURCE_DATE_EPOCH", PINNED_EPOCH)
        .env("SHIPMOOR_TMPDIR", r.tmp.path())
        .env("SHIPMOOR_SANDBOX_WRITE", r.shared.path())
        .output()
        .expect("this test needs unshare (util-linux), which is missing");
    let run = common::Run::from(out);
    assert_ne!(
        run.code, 97,
        "this test needs a tmpfs in a mount namespace of its own (unshare --mount, mount -t tmpfs), which this machine refused: {run:?}"
    );
    run
}

#[test]
fn a_full_disk_under_the_evidence_store_is_an_input_error_and_nothing_is_written() {
    let (r, base) = ready_change();
    let before = r.status();
    let disk = tempfile::tempdir().unwrap();
    let evidence = disk.path().join("evidence");
    let run = on_tmpfs(
        &r,
        disk.path(),
        256,
        true,
        &[
            "claim-check",
            "--base",
            &base,
            "--evidence-dir",
            evidence.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("No space left on device"), "{run:?}");
    assert!(
        run.stderr.contains(&evidence.display().to_string()),
        "{run:?}"
    );
    assert!(run.stderr.contains("help: free space"), "{run:?}");
    assert!(run.stderr.contains("--evidence-dir"), "{run:?}");
    // Nothing on the full disk (not even the evidence directory made for the items), and
    // nothing in the checkout, though the documents were staged there before the evidence.
    let left = run.stdout.split("--- left:").nth(1).unwrap_or("").trim();
    assert_eq!(left, "", "left on the full disk: {left}");
    assert_nothing_written(&r);
    assert!(
        !std::fs::read_dir(r.path().join(".shipmoor"))
            .unwrap()
            .flatten()
            .any(|e| e
                .file_name()
                .to_string_lossy()
                .starts_with(".shipmoor-tmp-")),
        "a staged file was left"
    );
    // The base cache keeps what base observed (a later run reuses it); nothing else changed.
    let status: Vec<String> = r
        .status()
        .lines()
        .filter(|l| !l.contains(".shipmoor/cache/"))
        .map(str::to_string)
        .collect();
    assert_eq!(status.join("\n"), before);
}

#[test]
fn a_full_disk_under_the_reports_is_an_input_error_and_no_evidence_is_kept() {
    for (flag, file) in [
        ("--report-out", "reports/verify.md"),
        ("--result-out", "results/result.json"),
    ] {
        let (r, base) = ready_change();
        let disk = tempfile::tempdir().unwrap();
        let out = disk.path().join(file);
        let run = on_tmpfs(
            &r,
            disk.path(),
            256,
            true,
            &["claim-check", "--base", &base, flag, out.to_str().unwrap()],
        );
        assert_eq!(run.code, 2, "{flag}: {run:?}");
        assert!(
            run.stderr.contains("No space left on device"),
            "{flag}: {run:?}"
        );
        assert!(run.stderr.contains(flag), "{flag}: {run:?}");
        let left = run.stdout.split("--- left:").nth(1).unwrap_or("").trim();
        assert_eq!(left, "", "{flag}: left on the full disk: {left}");
        // The documents are staged before any evidence item: none was committed.
        assert_nothing_written(&r);
    }
}

#[test]
fn a_full_temporary_directory_is_an_input_error_before_any_work() {
    let (r, base) = ready_change();
    let disk = tempfile::tempdir().unwrap();
    let run = on_tmpfs(
        &r,
        disk.path(),
        64,
        true,
        &[
            "claim-check",
            "--base",
            &base,
            "--temp-dir",
            disk.path().to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains("for temporary files") && run.stderr.contains("No space left"),
        "{run:?}"
    );
    assert!(run.stderr.contains("help:"), "{run:?}");
    assert!(
        !run.stderr.contains("claim-check: head"),
        "work began: {run:?}"
    );
    assert_nothing_written(&r);
}

#[test]
fn a_temporary_directory_that_does_not_exist_is_refused_and_not_made() {
    let (r, base) = ready_change();
    let missing = r.tmp.path().join("not-there");
    let run = r.shipmoor(&[
        "claim-check",
        "--base",
        &base,
        "--temp-dir",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("does not exist"), "{run:?}");
    assert!(run.stderr.contains("help:"), "{run:?}");
    assert!(!missing.exists(), "the temporary directory was made");
    assert_nothing_written(&r);
}

/// An output path that cannot be written is an input error before any work, checked with the
/// other outputs: a file where the evidence store's `sha256/` goes, and a file where
/// `--result-out`'s directory goes. Exit 2 naming the flag and the fix, never tests run and then
/// a crash.
#[test]
fn an_output_path_that_cannot_be_written_is_an_input_error_before_any_work() {
    for (flag, blocker, out, words) in [
        ("--evidence-dir", "evidence/sha256", "evidence", "sha256"),
        (
            "--result-out",
            "not-a-dir",
            "not-a-dir/result.json",
            "help:",
        ),
    ] {
        let (r, base) = ready_change();
        let blocker = r.tmp.path().join(blocker);
        std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
        std::fs::write(&blocker, "not a directory").unwrap();
        let out = r.tmp.path().join(out);
        let run = r.shipmoor(&["claim-check", "--base", &base, flag, out.to_str().unwrap()]);
        assert_eq!(run.code, 2, "{flag}: {run:?}");
        assert!(run.stderr.contains(words), "{flag}: {run:?}");
        assert!(run.stderr.contains(flag), "{flag}: {run:?}");
        assert!(
            !run.stderr.contains("claim-check: head"),
            "{flag}: work began: {run:?}"
        );
        assert_nothing_written(&r);
    }
}

/// A directory the user may not write: `acceptance commit` in a checkout whose `.shipmoor/` is
/// read-only for the user (mode 0555, the command run in a user namespace of its own, where
/// root's override of file permissions does not reach the checkout's files). Exit 2 naming
/// the draft and the fix; the draft stays as it was and no committed file appears.
#[test]
fn a_directory_without_write_permission_is_an_input_error_naming_the_path() {
    use std::os::unix::fs::PermissionsExt;
    let r = Repo::new();
    let draft = ".shipmoor/acceptance.yaml.draft";
    r.write(
        draft,
        "version: 1\ncriteria:\n  - id: a\n    ac: A holds.\n",
    );
    let dir = r.path().join(".shipmoor");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = Command::new("unshare")
        .args(["--user", env!("CARGO_BIN_EXE_shipmoor")])
        .args(["acceptance", "commit", "--acceptance", draft])
        .current_dir(r.path())
        .env("SOURCE_DATE_EPOCH", PINNED_EPOCH)
        .env("SHIPMOOR_TMPDIR", r.tmp.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("this test needs unshare (util-linux), which is missing");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = common::Run::from(out);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("Permission denied"), "{run:?}");
    let shown = r.path().join(draft).display().to_string();
    assert!(
        run.stderr.contains(&format!("cannot rename {shown}")),
        "{run:?}"
    );
    assert!(
        run.stderr
            .contains(&format!("help: make {} writable", dir.display())),
        "{run:?}"
    );
    assert!(!run.stderr.contains("internal error"), "{run:?}");
    assert_eq!(
        r.read(draft),
        "version: 1\ncriteria:\n  - id: a\n    ac: A holds.\n"
    );
    assert!(!r.exists(".shipmoor/acceptance.yaml"));
}

/// A directory that does not exist where an output goes: `action report` with `GITHUB_OUTPUT`
/// in a directory that is not there. Exit 2 naming the file and the fix, and the job summary,
/// written after the outputs, is not written either.
#[test]
fn a_missing_directory_is_an_input_error_naming_the_path() {
    let r = Repo::new();
    r.write("README", "x\n");
    r.commit("base");
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("not-there/output");
    let summary = dir.path().join("summary");
    let run = r.shipmoor_env(
        &[
            "action",
            "report",
            "--result",
            "no-result.json",
            "--exit-code",
            "3",
        ],
        &[
            ("GITHUB_OUTPUT", output.to_str().unwrap()),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("No such file or directory"), "{run:?}");
    assert!(
        run.stderr.contains(&output.display().to_string()),
        "{run:?}"
    );
    assert!(run.stderr.contains("help:"), "{run:?}");
    assert!(!run.stderr.contains("internal error"), "{run:?}");
    assert!(!output.exists() && !output.parent().unwrap().exists());
    assert!(!summary.exists(), "the job summary was written");
}

#[test]
fn ctrl_c_while_the_judge_runs_is_exit_130_and_nothing_is_written() {
    let (r, base) = ready_change();
    let started = r.shared.path().join("judging");
    r.write(
        ".shipmoor/acceptance.yaml",
        &format!(
            "version: 1\ncriteria:\n  - id: b\n    ac: B holds.\n  - id: audit\n    ac: An audit log entry is written.\n    lane: judge\njudge:\n  command: [\"sh\", \"-c\", \"touch {}; sleep 120\"]\n",
            started.display()
        ),
    );
    r.commit("judge");
    let before = r.status();
    let child = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .args(["claim-check", "--base", &base, "--mode", "full"])
        .current_dir(r.path())
        .env("SOURCE_DATE_EPOCH", PINNED_EPOCH)
        .env("SHIPMOOR_TMPDIR", r.tmp.path())
        .env("SHIPMOOR_SANDBOX_WRITE", r.shared.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_start(&started);
    let start = Instant::now();
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    let run = common::Run::from(out);
    assert!(
        start.elapsed() < Duration::from_secs(8),
        "the run took {:?} to stop",
        start.elapsed()
    );
    assert_eq!(run.code, 130, "{run:?}");
    assert!(run.stderr.contains("interrupted"), "{run:?}");
    assert!(run.stdout.is_empty(), "a report was printed: {run:?}");
    assert_nothing_written(&r);
    assert!(r.tmp_leftovers().is_empty(), "{:?}", r.tmp_leftovers());
    assert_eq!(r.status(), before);
}

#[test]
fn a_run_killed_outright_is_cleaned_up_by_the_next_run() {
    let name = format!("k{}", std::process::id());
    let (r, base, marker) = slow_change(&name);
    let mut child = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .args(["claim-check", "--base", &base])
        .current_dir(r.path())
        .env("SOURCE_DATE_EPOCH", PINNED_EPOCH)
        .env("SHIPMOOR_TMPDIR", r.tmp.path())
        .env("SHIPMOOR_SANDBOX_WRITE", r.shared.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_start(&marker);
    child.kill().unwrap(); // SIGKILL: nothing of ours runs after it
    child.wait().unwrap();
    // The killed run's test goes on, an orphan; stop it (its command line names the marker).
    let _ = Command::new("pkill").args(["-9", "-f", &name]).status();
    let _ = std::fs::remove_file(&marker);
    assert!(!r.extra_worktrees().is_empty(), "SIGKILL left no worktree");
    assert!(!r.tmp_leftovers().is_empty(), "SIGKILL left no directory");
    // The next run (its slow test stopped after a second) removes what the killed one left.
    let run = r.shipmoor(&["claim-check", "--base", &base, "--timeout", "1"]);
    let _ = Command::new("pkill").args(["-9", "-f", &name]).status();
    assert_eq!(run.code, 4, "{run:?}");
    let said: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("killed run"))
        .collect();
    assert_eq!(said.len(), 1, "{run:?}");
    assert!(
        said[0].contains("removed what 1 killed run left"),
        "{run:?}"
    );
    assert!(r.extra_worktrees().is_empty(), "{:?}", r.extra_worktrees());
    assert!(r.tmp_leftovers().is_empty(), "{:?}", r.tmp_leftovers());
}
