//! Ctrl-C during a run: the running tests are stopped, the worktrees removed, nothing written.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{slow_change, wait_for_start, PINNED_EPOCH};

#[test]
fn ctrl_c_removes_worktrees_and_writes_nothing() {
    let name = format!("i{}", std::process::id());
    let (r, base, marker) = slow_change(&name);
    let before = r.status();
    let child = Command::new(env!("CARGO_BIN_EXE_shipmoor"))
        .args(["claim-check", "--base", &base])
        .current_dir(r.path())
        .env("SOURCE_DATE_EPOCH", PINNED_EPOCH)
        .env("SHIPMOOR_TMPDIR", r.tmp.path())
        .env("SHIPMOOR_SANDBOX_WRITE", r.shared.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    wait_for_start(&marker);
    assert!(
        !r.extra_worktrees().is_empty(),
        "a worktree exists while the run is under way"
    );
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_file(&marker);
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "the run did not stop promptly"
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
    assert!(
        r.extra_worktrees().is_empty(),
        "worktrees left: {:?}",
        r.extra_worktrees()
    );
    assert!(r.tmp_leftovers().is_empty(), "{:?}", r.tmp_leftovers());
    assert!(!r.exists(".shipmoor/verify.md"));
    assert!(!r.exists(".shipmoor/evidence"));
    assert_eq!(r.status(), before);
}
