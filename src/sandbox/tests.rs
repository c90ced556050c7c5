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
fn nothing_hidden_grants_the_root_whole() {
    let g = granted(&Policy::default(), &["/usr", "/tmp"]);
    assert_eq!(g[0], ("/".to_string(), Access::Read));
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

#[test]
fn a_wrapped_program_that_does_not_exist_fails_to_start() {
    let sandbox = Sandbox {
        mode: Mode::Auto,
        helper: Some("/bin/true".into()),
        enforced: Enforced::default(),
        unavailable: None,
    };
    let cmd = Command::new("definitely-not-a-program-here");
    let e = sandbox.command(cmd, &Policy::default()).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("true")
        .env("A", "1")
        .env_remove("B")
        .current_dir("/tmp");
    let policy = Policy {
        write: vec!["/w".into()],
        hide: vec!["/h".into()],
        read: vec!["/r".into()],
    };
    let w = sandbox.command(cmd, &policy).unwrap();
    let args: Vec<String> = w.get_args().map(|a| a.to_string_lossy().into()).collect();
    assert_eq!(w.get_program(), "/bin/true");
    assert_eq!(
        args[..10],
        [
            "__sandbox",
            "v1",
            "--write",
            "/w",
            "--hide",
            "/h",
            "--read",
            "/r",
            "--",
            args[9].as_str()
        ]
    );
    assert!(args[9].ends_with("/sh"), "{args:?}");
    assert_eq!(args[10..], ["-c", "true"]);
    assert_eq!(w.get_current_dir(), Some(Path::new("/tmp")));
    let envs: Vec<_> = w.get_envs().collect();
    assert!(envs.contains(&(std::ffi::OsStr::new("A"), Some(std::ffi::OsStr::new("1")))));
    assert!(envs.contains(&(std::ffi::OsStr::new("B"), None)));
}

#[test]
fn require_refuses_where_no_helper_restricts_itself_and_auto_says_why_it_goes_on() {
    let missing = Path::new("/nonexistent/shipmoor");
    let e = Sandbox::probe(Mode::Require, missing).unwrap_err();
    assert!(
        e.contains("the sandbox helper /nonexistent/shipmoor did not start"),
        "{e}"
    );
    let auto = Sandbox::probe(Mode::Auto, missing).unwrap();
    assert!(!auto.active());
    assert!(auto.unavailable().unwrap().contains("did not start"));
    // A helper that answers nothing a probe reads: the same.
    let e = Sandbox::probe(Mode::Require, Path::new("/bin/true")).unwrap_err();
    assert!(e.contains("could not restrict itself"), "{e}");
    assert!(!Sandbox::probe(Mode::Off, missing).unwrap().active());
}
