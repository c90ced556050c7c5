//! Base and head builds must not reuse each other's outputs unsafely. A plain copy of head's
//! target dir runs head's stale test binary at base and reports a wrong pass; the seeding the
//! floor uses (copy, then `cargo clean -p` of every path package) gives the right answer.

use crate::common;

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, SystemTime};

use common::require_tool;
use shipmoor::acceptance::RunnerKind;
use shipmoor::floor::runners::{Outcome, RunCtx};

const LIB_BASE: &str =
    "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else { x }\n}\n";
const LIB_HEAD: &str = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else if x > hi { hi } else { x }\n}\n";
const TEST: &str = "#[test]\nfn clamps_high() {\n    assert_eq!(clamp::clamp(50, 0, 10), 10);\n}\n";
const ID: &str = "clamp::clamp clamps_high";

fn write_crate(dir: &Path, lib: &str) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"clamp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    std::fs::write(dir.join("tests/clamp.rs"), TEST).unwrap();
}

/// Makes every file under `dir` look older than anything built today, as a base checkout made
/// before the head build would.
fn age(dir: &Path) {
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(946_684_800);
    for entry in walk(dir) {
        let f = std::fs::File::options().write(true).open(&entry).unwrap();
        f.set_modified(old).unwrap();
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn run_at(dir: &Path, target: &Path, scratch: &Path) -> Outcome {
    let cargo = common::builtin_runner(RunnerKind::Cargo, ".", &[]);
    std::fs::create_dir_all(scratch).unwrap();
    let ctx = RunCtx {
        worktree: dir.to_path_buf(),
        dir: dir.to_path_buf(),
        scratch: scratch.to_path_buf(),
        timeout: Duration::from_secs(300),
        env: vec![(
            OsString::from("CARGO_TARGET_DIR"),
            target.as_os_str().to_owned(),
        )],
        jail: shipmoor::sandbox::Jail::none(),
    };
    let report = cargo.run(&ctx, &[ID.to_string()]);
    assert!(report.problem.is_none(), "{:?}", report.problem);
    report.outcomes()[ID]
}

#[test]
fn seeding_base_from_head_never_runs_heads_binary() {
    require_tool("cargo", &["--version"], "install Rust with rustup");
    let tmp = tempfile::tempdir().unwrap();
    let head = tmp.path().join("head");
    let base = tmp.path().join("base");
    write_crate(&head, LIB_HEAD);
    write_crate(&base, LIB_BASE);
    age(&base);
    let head_target = tmp.path().join("target-head");
    assert_eq!(
        run_at(&head, &head_target, &tmp.path().join("s1")),
        Outcome::Pass
    );

    // The hazard: a plain copy of head's target dir makes base look built, and head's test
    // binary answers for base.
    let plain = tmp.path().join("target-plain");
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(&head_target)
        .arg(&plain)
        .status()
        .unwrap();
    assert!(ok.success());
    assert_eq!(
        run_at(&base, &plain, &tmp.path().join("s2")),
        Outcome::Pass,
        "a plain copy no longer reuses head's binary with this cargo; the seeding below is still required"
    );

    // The floor's seeding: the truth at base is a failure.
    let seeded_target = tmp.path().join("target-seeded");
    let seeded = shipmoor::floor::seed_cargo_target(
        &head_target,
        &seeded_target,
        &base,
        None,
        Duration::from_secs(300),
        &shipmoor::sandbox::Jail::none(),
    )
    .unwrap();
    assert_eq!(seeded.cleaned, ["clamp@0.1.0"]);
    assert_eq!(
        run_at(&base, &seeded_target, &tmp.path().join("s3")),
        Outcome::Fail
    );

    // And a fresh target dir agrees.
    assert_eq!(
        run_at(
            &base,
            &tmp.path().join("target-fresh"),
            &tmp.path().join("s4")
        ),
        Outcome::Fail
    );
}
