use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::helper::{grants, Access};
use super::*;

/// A file system of directories, as `list` sees it.
fn tree(dirs: &[&str]) -> BTreeMap<PathBuf, Vec<PathBuf>> {
    let mut t: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for d in dirs {
        let p = PathBuf::from(d);
        let mut child = p.clone();
        while let Some(parent) = child.parent() {
            let e = t.entry(parent.to_path_buf()).or_default();
            if !e.contains(&child) {
                e.push(child.clone());
            }
            child = parent.to_path_buf();
        }
    }
    t
}

fn granted(policy: &Policy, dirs: &[&str]) -> Vec<(String, Access)> {
    let t = tree(dirs);
    let list = |d: &Path| t.get(d).cloned().unwrap_or_default();
    grants(policy, &list)
        .into_iter()
        .map(|(p, a)| (p.display().to_string(), a))
        .collect()
}

#[test]
fn a_hidden_path_is_carved_out_and_its_siblings_granted() {
    let policy = Policy {
        write: vec!["/tmp/run/head".into()],
        hide: vec!["/tmp/run".into(), "/home/u/.ssh".into()],
        read: vec![],
    };
    let g = granted(
        &policy,
        &[
            "/usr/bin",
            "/tmp/other",
            "/tmp/run/head",
            "/tmp/run/base",
            "/home/u/.ssh",
            "/home/u/.cargo",
        ],
    );
    let want = [
        ("/", Access::List),
        ("/dev/full", Access::Device),
        ("/dev/null", Access::Device),
        ("/dev/ptmx", Access::Device),
        ("/dev/pts", Access::Device),
        ("/dev/random", Access::Device),
        ("/dev/shm", Access::Write),
        ("/dev/tty", Access::Device),
        ("/dev/urandom", Access::Device),
        ("/dev/zero", Access::Device),
        ("/home", Access::List),
        ("/home/u", Access::List),
        ("/home/u/.cargo", Access::Read),
        ("/tmp", Access::List),
        ("/tmp/other", Access::Read),
        ("/tmp/run/head", Access::Write),
        ("/usr", Access::Read),
    ];
    let want: Vec<(String, Access)> = want.iter().map(|(p, a)| (p.to_string(), *a)).collect();
    assert_eq!(g, want);
    // Nothing of the hidden trees is granted but what the policy writes.
    assert!(!g.iter().any(|(p, _)| p.starts_with("/tmp/run/base")));
    assert!(!g.iter().any(|(p, _)| p.starts_with("/home/u/.ssh")));
}

#[test]
fn a_read_path_under_a_hidden_one_stays_readable_and_grants_merge() {
    let policy = Policy {
        write: vec!["/repo/.git/worktrees".into()],
        hide: vec!["/repo".into()],
        read: vec!["/repo/.git".into()],
    };
    let g = granted(&policy, &["/repo/src", "/repo/.git/objects", "/usr"]);
    assert!(g.contains(&("/repo/.git".into(), Access::Read)), "{g:?}");
    assert!(g.contains(&("/repo/.git/worktrees".into(), Access::Write)));
    assert!(!g.iter().any(|(p, _)| p == "/repo" || p == "/repo/src"));
    // The same path granted twice keeps the stronger access.
    let policy = Policy {
        write: vec!["/dev/shm".into()],
        ..Policy::default()
    };
    let g = granted(&policy, &["/dev/shm"]);
    assert_eq!(
        g.iter().filter(|(p, _)| p == "/dev/shm").count(),
        1,
        "{g:?}"
    );
}

#[test]
fn with_nothing_hidden_every_entry_of_the_root_but_dev_is_granted_whole() {
    let g = granted(
        &Policy::default(),
        &["/usr", "/tmp", "/dev/sda", "/dev/null"],
    );
    assert_eq!(g[0], ("/".to_string(), Access::List));
    assert!(g.contains(&("/usr".to_string(), Access::Read)), "{g:?}");
    assert!(g.contains(&("/tmp".to_string(), Access::Read)), "{g:?}");
    // `/dev` only by its listed devices: a disk's device file holds every hidden file.
    assert!(
        !g.iter().any(|(p, _)| p == "/dev" || p == "/dev/sda"),
        "{g:?}"
    );
    assert!(
        g.contains(&("/dev/null".to_string(), Access::Device)),
        "{g:?}"
    );
}

#[test]
fn a_mode_reads_as_written() {
    for m in [Mode::Require, Mode::Auto, Mode::Off] {
        assert_eq!(Mode::parse(m.as_str()), Some(m));
    }
    assert_eq!(Mode::parse("on"), None);
}

#[test]
fn require_needs_the_filesystem_rules_no_new_privs_and_ptrace() {
    let full = Enforced {
        landlock_abi: 7,
        no_new_privs: true,
        filesystem: true,
        ptrace: true,
        signals: true,
        abstract_sockets: true,
        as_root: false,
        capabilities_cut: false,
    };
    assert!(full.meets_require() && full.missing().is_empty());
    let old = Enforced {
        landlock_abi: 3,
        signals: false,
        abstract_sockets: false,
        ..full.clone()
    };
    assert!(old.meets_require());
    assert_eq!(old.missing().len(), 2);
    assert!(!Enforced::default().meets_require());
}

#[test]
fn an_inactive_sandbox_leaves_the_command_as_it_is() {
    let mut cmd = Command::new("definitely-not-a-program-here");
    cmd.arg("x").current_dir("/");
    let same = Sandbox::off().command(cmd, &Policy::default()).unwrap();
    assert_eq!(same.get_program(), "definitely-not-a-program-here");
}

/// A restricted command starts as it would unrestricted (its arguments, directory and
/// environment), under `no_new_privs`, and writes only where its policy says; a program that does
/// not exist fails to start as it would unrestricted.
#[test]
fn a_restricted_command_runs_as_asked_and_writes_only_where_its_policy_says() {
    let sandbox = Sandbox {
        mode: Mode::Auto,
        active: true,
        enforced: Enforced::default(),
        unavailable: None,
    };
    let cmd = Command::new("definitely-not-a-program-here");
    let e = sandbox
        .command(cmd, &Policy::default())
        .unwrap()
        .status()
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    let allowed = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(
            "echo \"$A${B:-unset}\" > \"$1/written\"; grep NoNewPrivs /proc/self/status >> \"$1/written\"; \
             echo x > \"$2/written\" 2>/dev/null && echo escaped; pwd",
        )
        .arg("sh")
        .arg(allowed.path())
        .arg(other.path())
        .env("A", "1")
        .env_remove("B")
        .current_dir(allowed.path());
    let policy = Policy {
        write: vec![canonical(allowed.path())],
        hide: vec![],
        read: vec![],
    };
    let out = sandbox.command(cmd, &policy).unwrap().output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        canonical(allowed.path()).display().to_string()
    );
    assert_eq!(
        std::fs::read_to_string(allowed.path().join("written")).unwrap(),
        "1unset\nNoNewPrivs:\t1\n"
    );
    assert!(!other.path().join("written").exists());
}

#[test]
fn require_refuses_where_no_helper_restricts_itself_and_auto_says_why_it_goes_on() {
    let missing = Path::new("/nonexistent/shipmoor");
    let e = Sandbox::probe(Mode::Require, missing)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the sandbox helper /nonexistent/shipmoor did not start"),
        "{e}"
    );
    let auto = Sandbox::probe(Mode::Auto, missing).unwrap();
    assert!(!auto.active());
    assert!(auto.unavailable().unwrap().contains("did not start"));
    // A helper that answers nothing a probe reads: the same.
    let e = Sandbox::probe(Mode::Require, Path::new("/bin/true"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("could not restrict itself"), "{e}");
    assert!(!Sandbox::probe(Mode::Off, missing).unwrap().active());
}

#[test]
fn a_read_path_is_carved_around_what_is_hidden_below_it() {
    let policy = Policy {
        write: vec![],
        hide: vec![
            "/repo".into(),
            "/repo/.git/index".into(),
            "/repo/.git/logs".into(),
        ],
        read: vec!["/repo/.git".into()],
    };
    let g = granted(
        &policy,
        &[
            "/repo/.git/objects",
            "/repo/.git/index",
            "/repo/.git/logs/HEAD",
            "/repo/src",
        ],
    );
    assert!(g.contains(&("/repo/.git".into(), Access::List)), "{g:?}");
    assert!(
        g.contains(&("/repo/.git/objects".into(), Access::Read)),
        "{g:?}"
    );
    assert!(
        !g.iter()
            .any(|(p, _)| p.starts_with("/repo/.git/index") || p.starts_with("/repo/.git/logs")),
        "{g:?}"
    );
}

/// The carved grants are kept from one command to the next with the same hidden paths, and
/// made anew when a carved directory gained an entry: a directory made beside a hidden one
/// after the first command is readable by the second, the hidden one never.
#[test]
fn a_directory_made_beside_a_hidden_one_after_a_command_is_readable_by_the_next() {
    let sandbox = Sandbox {
        mode: Mode::Require,
        active: true,
        enforced: Enforced::default(),
        unavailable: None,
    };
    let root = tempfile::tempdir().unwrap();
    let root = canonical(root.path());
    std::fs::create_dir(root.join("hidden")).unwrap();
    std::fs::write(root.join("hidden/secret"), "s").unwrap();
    std::fs::create_dir(root.join("before")).unwrap();
    std::fs::write(root.join("before/a"), "a").unwrap();
    let policy = Policy {
        write: vec![],
        hide: vec![root.join("hidden")],
        read: vec![],
    };
    let cat = |path: &Path| {
        let mut cmd = Command::new("cat");
        cmd.arg(path);
        sandbox.command(cmd, &policy).unwrap().output().unwrap()
    };
    assert!(cat(&root.join("before/a")).status.success());
    assert!(!cat(&root.join("hidden/secret")).status.success());
    std::fs::create_dir(root.join("after")).unwrap();
    std::fs::write(root.join("after/b"), "b").unwrap();
    let out = cat(&root.join("after/b"));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(out.stdout, b"b");
    assert!(!cat(&root.join("hidden/secret")).status.success());
}
