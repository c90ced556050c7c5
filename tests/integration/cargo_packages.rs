//! The cargo runners on repositories shaped like real ones: a workspace member whose name is
//! also a registry crate in its lock file, a proc-macro crate's unit tests, a base worktree
//! with no `Cargo.lock` and a deprecated `.cargo/config`, and a checkout that already holds a
//! build in `target/`.

use crate::common;

use std::ffi::OsString;
use std::path::Path;
use std::time::{Duration, SystemTime};

use common::{ident, require_tool, Repo};
use shipmoor::acceptance::RunnerKind;
use shipmoor::floor::runners::{FailureKind, ListScope, Outcome, RunCtx};

const CLAMP_BASE: &str =
    "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else { x }\n}\n";
const CLAMP_HEAD: &str = "pub fn clamp(x: i32, lo: i32, hi: i32) -> i32 {\n    if x < lo { lo } else if x > hi { hi } else { x }\n}\n";

fn require_cargo(runner: Option<&str>) {
    require_tool("cargo", &["--version"], "install Rust with rustup");
    if runner == Some("nextest") {
        require_tool(
            "cargo",
            &["nextest", "--version"],
            "cargo install cargo-nextest --locked",
        );
    }
}

fn acceptance(r: &Repo, runner: Option<&str>, id: &str) {
    let runners = runner
        .map(|k| format!("runners:\n  - kind: {k}\n"))
        .unwrap_or_default();
    r.write(
        ".shipmoor/acceptance.yaml",
        &format!(
            "version: 1\ncriteria:\n  - id: {id}\n    ac: Values above the range are clamped to its top.\n{runners}"
        ),
    );
}

fn claim_check(r: &Repo, base: &str) -> serde_json::Value {
    let run = r.shipmoor(&["claim-check", "--base", base, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {run:?}"));
    assert_eq!(
        v["result"]["criteria"][0]["floor"]["result"], "satisfied",
        "{run:?}"
    );
    assert_eq!(run.code, 0, "{run:?}");
    v
}

/// The runtime row of one side's target dir seeding.
fn seeding_row<'a>(v: &'a serde_json::Value, side: &str) -> &'a serde_json::Value {
    v["result"]["runtime"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| {
            let command = r["command"].as_str().unwrap_or("");
            r["side"] == side && (command.starts_with("cp -a") || command == "seed target dir")
        })
        .unwrap_or_else(|| panic!("no seeding row for {side}: {:#}", v["result"]["runtime"]))
}

/// A workspace member named `itoa` whose dev-dependencies pull `itoa` 1.x from crates.io (as
/// serde_json's pull an older serde_json): `-p itoa` is ambiguous to cargo, so the bound test
/// must be selected by its package id spec or it reads `undecided`.
fn member_named_like_a_registry_crate(runner: Option<&str>) {
    require_cargo(runner);
    let r = Repo::new();
    r.write(
        "Cargo.toml",
        "[package]\nname = \"itoa\"\nversion = \"0.9.0\"\nedition = \"2021\"\n\n\
         [dev-dependencies]\nitoa_old = { package = \"itoa\", version = \"1\" }\n",
    );
    r.write(".gitignore", "/target\n");
    r.write("src/lib.rs", CLAMP_BASE);
    let base = r.commit("base");
    r.write("src/lib.rs", CLAMP_HEAD);
    let tag = ident("clamps-high");
    r.write(
        &format!("tests/clamp_{tag}.rs"),
        "#[test]\nfn clamps_high() {\n    assert_eq!(itoa::clamp(50, 0, 10), 10);\n    \
         assert_eq!(itoa_old::Buffer::new().format(10), \"10\");\n}\n",
    );
    acceptance(&r, runner, "clamps-high");
    r.commit("head");
    let v = claim_check(&r, &base);
    let t = &v["result"]["criteria"][0]["floor"]["tests"][0];
    assert_eq!(t["id"], format!("itoa::clamp_{tag} clamps_high"));
    assert_eq!(t["base"], "fail");
    assert_eq!(t["head"], "pass");
}

#[test]
fn cargo_test_selects_a_member_named_like_a_registry_crate_exactly() {
    member_named_like_a_registry_crate(None);
}

#[test]
fn nextest_selects_a_member_named_like_a_registry_crate_exactly() {
    member_named_like_a_registry_crate(Some("nextest"));
}

fn cargo_ctx(dir: &Path, target: &Path, scratch: &Path) -> RunCtx {
    std::fs::create_dir_all(scratch).unwrap();
    RunCtx {
        worktree: dir.to_path_buf(),
        dir: dir.to_path_buf(),
        scratch: scratch.to_path_buf(),
        timeout: Duration::from_secs(300),
        env: vec![
            (
                OsString::from("CARGO_TARGET_DIR"),
                target.as_os_str().to_owned(),
            ),
            // cargo (and nextest) put the toolchain's libraries on this path for the process
            // that runs this test; the floor must find them itself, as in a CI shell.
            (OsString::from("LD_LIBRARY_PATH"), OsString::new()),
            (
                OsString::from("DYLD_FALLBACK_LIBRARY_PATH"),
                OsString::new(),
            ),
        ],
        jail: shipmoor::sandbox::Jail::none(),
    }
}

fn cargo_runner() -> std::sync::Arc<dyn shipmoor::floor::runners::Runner> {
    common::builtin_runner(RunnerKind::Cargo, ".", &[])
}

/// A proc-macro crate's unit test binary links `libstd` dynamically: started without the
/// toolchain's library directory it cannot load (`error while loading shared libraries:
/// libstd-….so`, exit 127) and its tests could never bind. It must list and run, and see the
/// variables `cargo test` gives it.
#[test]
fn a_proc_macro_crates_unit_tests_list_and_run_with_cargos_environment() {
    require_cargo(None);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("pm");
    let tag = ident("macro-env");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"pm\"\nversion = \"1.2.3-rc.1\"\nedition = \"2021\"\n\
         authors = [\"A <a@example.com>\", \"B\"]\ndescription = \"a macro\"\n\
         license = \"MIT\"\nrepository = \"https://example.com/pm\"\nrust-version = \"1.70\"\n\n\
         [lib]\nproc-macro = true\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        format!(
            "use proc_macro::TokenStream;\n\n\
             #[proc_macro]\npub fn nothing(_: TokenStream) -> TokenStream {{ TokenStream::new() }}\n\n\
             #[cfg(test)]\nmod tests {{\n    \
             fn runtime(k: &str) -> String {{ std::env::var(k).unwrap_or_else(|_| format!(\"<{{k}} unset>\")) }}\n\n    \
             #[test]\n    fn env_{tag}() {{\n        \
             assert_eq!(runtime(\"CARGO_MANIFEST_DIR\"), env!(\"CARGO_MANIFEST_DIR\"));\n        \
             assert_eq!(runtime(\"CARGO_MANIFEST_PATH\"), env!(\"CARGO_MANIFEST_PATH\"));\n        \
             assert_eq!(runtime(\"CARGO_PKG_NAME\"), env!(\"CARGO_PKG_NAME\"));\n        \
             assert_eq!(runtime(\"CARGO_PKG_VERSION\"), env!(\"CARGO_PKG_VERSION\"));\n        \
             assert_eq!(runtime(\"CARGO_PKG_VERSION_PRE\"), env!(\"CARGO_PKG_VERSION_PRE\"));\n        \
             assert_eq!(runtime(\"CARGO_PKG_AUTHORS\"), env!(\"CARGO_PKG_AUTHORS\"));\n        \
             assert_eq!(runtime(\"CARGO_PKG_DESCRIPTION\"), env!(\"CARGO_PKG_DESCRIPTION\"));\n        \
             assert_eq!(runtime(\"CARGO_PKG_LICENSE\"), env!(\"CARGO_PKG_LICENSE\"));\n        \
             assert_eq!(runtime(\"CARGO_PKG_REPOSITORY\"), env!(\"CARGO_PKG_REPOSITORY\"));\n        \
             assert_eq!(runtime(\"CARGO_PKG_RUST_VERSION\"), env!(\"CARGO_PKG_RUST_VERSION\"));\n        \
             assert_eq!(runtime(\"CARGO_PKG_HOMEPAGE\"), env!(\"CARGO_PKG_HOMEPAGE\"));\n        \
             assert!(std::path::Path::new(&runtime(\"CARGO\")).is_file());\n    }}\n\n    \
             #[test]\n    fn fails_{tag}() {{\n        assert_eq!(1 + 1, 3);\n    }}\n}}\n"
        ),
    )
    .unwrap();
    let cargo = cargo_runner();
    let target = tmp.path().join("target");
    let listed = cargo.list(
        &cargo_ctx(&dir, &target, &tmp.path().join("s1")),
        &ListScope::All,
    );
    assert!(listed.problem.is_none(), "{:?}", listed.problem);
    let ids: Vec<&str> = listed.tests.iter().map(|t| t.id.as_str()).collect();
    let env_id = format!("pm tests::env_{tag}");
    let fails_id = format!("pm tests::fails_{tag}");
    assert_eq!(ids, [env_id.as_str(), fails_id.as_str()]);
    assert_eq!(listed.tests[0].file.as_deref(), Some("src/lib.rs"));

    let ran = cargo.run(
        &cargo_ctx(&dir, &target, &tmp.path().join("s2")),
        &[env_id.clone(), fails_id.clone()],
    );
    assert!(ran.problem.is_none(), "{:?}", ran.problem);
    assert_eq!(
        ran.outcomes()[&env_id],
        Outcome::Pass,
        "{:?}",
        ran.messages()
    );
    assert_eq!(ran.outcomes()[&fails_id], Outcome::Fail);
    assert_eq!(
        ran.failure_kinds().get(&fails_id),
        Some(&FailureKind::Assertion)
    );
    assert_eq!(ran.failure_kinds().get(&env_id), None);
}

/// A repository that does not track its `Cargo.lock` (it is in `.gitignore`) and still has a
/// `.cargo/config` (deprecated: cargo warns on every command), with a dependency for another
/// platform (`winapi` under `cfg(windows)`) that no build on this host downloads. Base's target
/// dir is still seeded from head's: the warning is not taken for the failure, and resolving
/// base's graph offline needs neither the other platform's crates nor a tracked lock.
#[test]
fn base_is_seeded_without_a_tracked_lock_and_past_a_deprecated_cargo_config() {
    require_cargo(None);
    let r = Repo::new();
    r.write(
        "Cargo.toml",
        "[package]\nname = \"clamp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nitoa = \"1\"\n\n[target.'cfg(windows)'.dependencies]\nwinapi = \"0.3\"\n",
    );
    r.write(".gitignore", "/target\nCargo.lock\n");
    r.write(".cargo/config", "[net]\nretry = 3\n");
    r.write(
        "src/lib.rs",
        &format!("{CLAMP_BASE}pub fn show(x: i32) -> String {{ itoa::Buffer::new().format(x).to_string() }}\n"),
    );
    let base = r.commit("base");
    r.write(
        "src/lib.rs",
        &format!("{CLAMP_HEAD}pub fn show(x: i32) -> String {{ itoa::Buffer::new().format(x).to_string() }}\n"),
    );
    r.write(
        &format!("tests/clamp_{}.rs", ident("clamps-high")),
        "#[test]\nfn clamps_high() {\n    assert_eq!(clamp::show(clamp::clamp(50, 0, 10)), \"10\");\n}\n",
    );
    acceptance(&r, None, "clamps-high");
    r.commit("head");
    let v = claim_check(&r, &base);
    let row = seeding_row(&v, "base (+ head test files)");
    let result = row["result"].as_str().unwrap();
    assert!(
        result.starts_with("seeded from head's target dir; 1 path package(s) cleaned"),
        "{row:#}"
    );
    assert!(result.contains("given head's Cargo.lock"), "{row:#}");
    assert_eq!(row["exit_code"], 0);
    // Nothing tracked changed, and the lock stays untracked.
    assert!(
        r.status().lines().all(|l| l.contains(".shipmoor/")),
        "{}",
        r.status()
    );
}

/// Sets the mtime of every file under `dir` a day ahead: copied artifacts then look newer than
/// any checkout's sources, the case where cargo trusts a stale test binary.
fn make_future(dir: &Path) {
    let later = SystemTime::now() + Duration::from_secs(86_400);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.is_symlink() {
                let f = std::fs::File::options().write(true).open(&p).unwrap();
                f.set_modified(later).unwrap();
            }
        }
    }
}

/// The checkout holds a `target/` (as after a cache restore) whose test binary was built from
/// other sources and fails the bound test. Head's target dir is seeded from it, path packages
/// cleaned, so head rebuilds its own code and the truth comes out; the report says so.
#[test]
fn head_is_seeded_from_the_checkouts_target_and_its_stale_binary_never_answers() {
    require_cargo(None);
    let r = Repo::new();
    r.write(
        "Cargo.toml",
        "[package]\nname = \"clamp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nitoa = \"1\"\n",
    );
    r.write(".gitignore", "/target\nCargo.lock\n");
    let lib = |code: &str| {
        format!(
            "{code}pub fn show(x: i32) -> String {{ itoa::Buffer::new().format(x).to_string() }}\n"
        )
    };
    r.write("src/lib.rs", &lib(CLAMP_BASE));
    let base = r.commit("base");
    let test_file = format!("tests/clamp_{}.rs", ident("clamps-high"));
    r.write(
        &test_file,
        "#[test]\nfn clamps_high() {\n    assert_eq!(clamp::show(clamp::clamp(50, 0, 10)), \"10\");\n}\n",
    );
    acceptance(&r, None, "clamps-high");
    // The cached build: head's test against base's code, so its test binary fails.
    let built = std::process::Command::new("cargo")
        .args(["test", "--no-run", "--quiet"])
        .current_dir(r.path())
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .unwrap();
    assert!(built.success());
    make_future(&r.path().join("target"));
    r.write("src/lib.rs", &lib(CLAMP_HEAD));
    r.commit("head");

    // The hazard: a plain copy of that target dir answers for head's sources with the stale
    // binary.
    let clone = r.tmp.path().join("clone");
    let cloned = std::process::Command::new("git")
        .args(["clone", "--quiet"])
        .arg(r.path())
        .arg(&clone)
        .status()
        .unwrap();
    assert!(cloned.success());
    let plain = r.tmp.path().join("plain-target");
    let copied = std::process::Command::new("cp")
        .arg("-a")
        .arg(r.path().join("target"))
        .arg(&plain)
        .status()
        .unwrap();
    assert!(copied.success());
    let id = format!("clamp::clamp_{} clamps_high", ident("clamps-high"));
    let stale = cargo_runner().run(
        &cargo_ctx(&clone, &plain, &r.tmp.path().join("s")),
        std::slice::from_ref(&id),
    );
    assert_eq!(
        stale.outcomes()[&id],
        Outcome::Fail,
        "a plain copy no longer reuses the stale binary with this cargo; the seeding is still required"
    );
    std::fs::remove_dir_all(&clone).unwrap();
    std::fs::remove_dir_all(&plain).unwrap();
    std::fs::remove_dir_all(r.tmp.path().join("s")).unwrap();

    let v = claim_check(&r, &base);
    let t = &v["result"]["criteria"][0]["floor"]["tests"][0];
    assert_eq!(t["head"], "pass");
    assert_eq!(t["base"], "fail");
    let row = seeding_row(&v, "head");
    assert!(
        row["result"].as_str().unwrap().starts_with(
            "seeded from the checkout's target dir (target); 1 path package(s) cleaned"
        ),
        "{row:#}"
    );
    assert!(
        row["command"].as_str().unwrap().starts_with(
            "cp -a --reflink=auto target $TMP/target/head (debug/ and release/, without \
                 incremental/ and the workspace's own units) && cargo clean -p clamp@0.1.0"
        ),
        "{row:#}"
    );
}

/// The workflow builds into a directory `CARGO_TARGET_DIR` names, outside the checkout: head's
/// target dir is seeded from there.
#[test]
fn head_is_seeded_from_where_cargo_target_dir_points() {
    require_cargo(None);
    let r = Repo::new();
    r.write(
        "Cargo.toml",
        "[package]\nname = \"clamp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
         [dependencies]\nitoa = \"1\"\n",
    );
    r.write(".gitignore", "/target\nCargo.lock\n");
    r.write("src/lib.rs", CLAMP_BASE);
    let base = r.commit("base");
    r.write("src/lib.rs", CLAMP_HEAD);
    r.write(
        &format!("tests/clamp_{}.rs", ident("clamps-high")),
        "#[test]\nfn clamps_high() {\n    assert_eq!(clamp::clamp(50, 0, 10), 10);\n}\n",
    );
    acceptance(&r, None, "clamps-high");
    r.commit("head");
    let ci = tempfile::tempdir().unwrap();
    let ci_target = ci.path().join("ci-target");
    let built = std::process::Command::new("cargo")
        .args(["test", "--no-run", "--quiet"])
        .current_dir(r.path())
        .env("CARGO_TARGET_DIR", &ci_target)
        .status()
        .unwrap();
    assert!(built.success());
    let run = r.shipmoor_env(
        &["claim-check", "--base", &base, "--format", "json"],
        &[("CARGO_TARGET_DIR", ci_target.to_str().unwrap())],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["result"]["criteria"][0]["floor"]["result"], "satisfied");
    let row = seeding_row(&v, "head");
    let want = format!(
        "seeded from the checkout's target dir ({}); 1 path package(s) cleaned",
        ci_target.display()
    );
    assert!(
        row["result"].as_str().unwrap().starts_with(&want),
        "{row:#}"
    );
    assert!(
        !r.exists("target"),
        "the floor never builds in the checkout"
    );
}
