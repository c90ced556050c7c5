//! `shipmoor __sandbox`: the process that restricts itself and then becomes the command (step 3
//! of the module doc). Started only by [`super::Sandbox::command`] and
//! [`super::Sandbox::probe`], never by a person:
//!
//! ```text
//! shipmoor __sandbox v1 [--require] [--write P]... [--hide P]... [--read P]... -- PROGRAM ARGS...
//! shipmoor __sandbox v1 --probe
//! ```
//!
//! The grants, in the order they are made ([`grants`]):
//! 1. read and execute on `/`, carved around every hidden path: a directory that holds one is
//!    not granted whole but entry by entry (Landlock grants by hierarchy, so keeping a path out
//!    means granting its siblings), and may only be listed;
//! 2. read and execute on each `--read` path (a path under a hidden one that stays readable);
//! 3. every right on each `--write` path;
//! 4. reading and writing the device files a program writes to as a matter of course
//!    ([`DEVICES`]: `/dev/null`, the terminals, the random sources), every right on `/dev/shm`
//!    (POSIX shared memory and semaphores).
//!
//! Symbolic links are never granted through: a link among the entries of a carved directory
//! would grant what it points to, which may be hidden.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{Enforced, Policy, HELPER_ARG, PROTOCOL};

/// The device files a command may open for writing (and `ioctl`): the sinks, the random
/// sources, the terminals. Nothing else under `/dev` (`/dev/kmsg`, a disk) is writable.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// The exit code when the sandbox cannot be applied: the command never runs unrestricted.
pub const EXIT_UNSANDBOXED: i32 = 125;

/// What a grant allows under its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Read files, list directories, execute.
    Read,
    /// List the directory and those under it (names only): an ancestor of a hidden path.
    List,
    /// Every right: write, create, remove, rename.
    Write,
    /// Read and write (and `ioctl`) existing files: device files.
    Device,
}

/// The helper's whole run: `args` are the process's arguments after the program name.
/// Returns an exit code when it does not become the command.
pub fn main(args: &[OsString]) -> i32 {
    let parsed = match parse(args) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("shipmoor {HELPER_ARG}: {e}");
            return EXIT_UNSANDBOXED;
        }
    };
    let enforced = match restrict(&parsed.policy) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("shipmoor: the sandbox could not be applied: {e}");
            return EXIT_UNSANDBOXED;
        }
    };
    let Some((program, rest)) = parsed.command.split_first() else {
        // The probe: say what held.
        match serde_json::to_string(&enforced) {
            Ok(line) => {
                println!("{line}");
                return 0;
            }
            Err(e) => {
                eprintln!("shipmoor: the sandbox probe: {e}");
                return EXIT_UNSANDBOXED;
            }
        }
    };
    if parsed.require && !enforced.meets_require() {
        eprintln!(
            "shipmoor: the sandbox could not be applied in full (missing {}); the command was not started",
            enforced.missing().join(", ")
        );
        return EXIT_UNSANDBOXED;
    }
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(program).args(rest).exec();
    eprintln!(
        "shipmoor: cannot start {}: {e}",
        Path::new(program).display()
    );
    if e.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

struct Parsed {
    require: bool,
    policy: Policy,
    /// Empty for `--probe`.
    command: Vec<OsString>,
}

fn parse(args: &[OsString]) -> Result<Parsed, String> {
    let mut it = args.iter();
    if it.next().map(|a| a.as_os_str()) != Some(HELPER_ARG.as_ref()) {
        return Err("not started as the sandbox helper".into());
    }
    if it.next().map(|a| a.as_os_str()) != Some(PROTOCOL.as_ref()) {
        return Err(format!(
            "this binary speaks the sandbox protocol {PROTOCOL} only (was it replaced during the run?)"
        ));
    }
    let mut parsed = Parsed {
        require: false,
        policy: Policy::default(),
        command: Vec::new(),
    };
    let mut probe = false;
    while let Some(a) = it.next() {
        let mut path = |list: &mut Vec<PathBuf>| -> Result<(), String> {
            let p = it
                .next()
                .ok_or_else(|| format!("{} needs a path", a.to_string_lossy()))?;
            list.push(PathBuf::from(p));
            Ok(())
        };
        match a.to_str() {
            Some("--require") => parsed.require = true,
            Some("--probe") => probe = true,
            Some("--write") => path(&mut parsed.policy.write)?,
            Some("--hide") => path(&mut parsed.policy.hide)?,
            Some("--read") => path(&mut parsed.policy.read)?,
            Some("--") => {
                parsed.command = it.cloned().collect();
                break;
            }
            _ => return Err(format!("unknown argument {}", a.to_string_lossy())),
        }
    }
    if parsed.command.is_empty() && !probe {
        return Err("no command to start".into());
    }
    Ok(parsed)
}

/// The grants for `policy` (see the module doc), each path once with its strongest access;
/// `list` lists a directory's entries (every entry's path; symbolic links are left out).
pub fn grants(policy: &Policy, list: &dyn Fn(&Path) -> Vec<PathBuf>) -> Vec<(PathBuf, Access)> {
    let mut out = Vec::new();
    carve(Path::new("/"), &policy.hide, list, &mut out);
    out.extend(policy.read.iter().map(|p| (p.clone(), Access::Read)));
    out.extend(policy.write.iter().map(|p| (p.clone(), Access::Write)));
    out.extend(DEVICES.iter().map(|d| (PathBuf::from(d), Access::Device)));
    out.push((PathBuf::from("/dev/shm"), Access::Write));
    out.sort();
    // Of one path granted twice, the later (stronger) grant: Write and Device beat Read and List.
    let mut merged: Vec<(PathBuf, Access)> = Vec::new();
    for (p, a) in out {
        match merged.last_mut() {
            Some((q, b)) if *q == p => *b = (*b).max(a),
            _ => merged.push((p, a)),
        }
    }
    merged
}

/// Grants read on `dir` whole, or, when a hidden path lies strictly below it, list on `dir`
/// and the same for each of its entries; nothing for a hidden path itself.
fn carve(
    dir: &Path,
    hidden: &[PathBuf],
    list: &dyn Fn(&Path) -> Vec<PathBuf>,
    out: &mut Vec<(PathBuf, Access)>,
) {
    if hidden.iter().any(|h| h == dir) {
        return;
    }
    let below: Vec<PathBuf> = hidden
        .iter()
        .filter(|h| h.starts_with(dir) && h.as_path() != dir)
        .cloned()
        .collect();
    if below.is_empty() {
        out.push((dir.to_path_buf(), Access::Read));
        return;
    }
    out.push((dir.to_path_buf(), Access::List));
    for entry in list(dir) {
        carve(&entry, &below, list, out);
    }
}

/// A directory's entries, without symbolic links (never granted through: see the module doc).
fn list_dir(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_symlink()))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// The capabilities root keeps inside the sandbox: a container's default set (Docker's, less
/// `CAP_SETPCAP`), which tests that `chown` or bind a low port still need. Root with
/// `CAP_SYS_ADMIN` or `CAP_PERFMON` still reads the environment of a process outside the
/// Landlock domain; without them, it cannot.
#[cfg(target_os = "linux")]
const ROOT_KEEPS: &[caps::Capability] = &[
    caps::Capability::CAP_CHOWN,
    caps::Capability::CAP_DAC_OVERRIDE,
    caps::Capability::CAP_FSETID,
    caps::Capability::CAP_FOWNER,
    caps::Capability::CAP_MKNOD,
    caps::Capability::CAP_NET_RAW,
    caps::Capability::CAP_SETGID,
    caps::Capability::CAP_SETUID,
    caps::Capability::CAP_SETFCAP,
    caps::Capability::CAP_NET_BIND_SERVICE,
    caps::Capability::CAP_SYS_CHROOT,
    caps::Capability::CAP_KILL,
    caps::Capability::CAP_AUDIT_WRITE,
];

/// Cuts every capability but [`ROOT_KEEPS`] from the bounding set (so that no program this
/// process executes gains them) and from the effective, permitted, inheritable and ambient
/// sets. Only root holds any to cut.
#[cfg(target_os = "linux")]
fn drop_capabilities() -> Result<bool, String> {
    use caps::CapSet;
    let keep: caps::CapsHashSet = ROOT_KEEPS.iter().copied().collect();
    // A user other than root holds no capability, and under `no_new_privs` gains none by
    // executing a program: its bounding set (full, and its to keep) matters to nobody.
    let held = caps::read(None, CapSet::Permitted).map_err(|e| e.to_string())?;
    if held.is_empty() {
        return Ok(false);
    }
    let bounding = caps::read(None, CapSet::Bounding).map_err(|e| e.to_string())?;
    for cap in bounding.difference(&keep) {
        caps::drop(None, CapSet::Bounding, *cap)
            .map_err(|e| format!("dropping {cap} from the bounding set: {e}"))?;
    }
    let _ = caps::clear(None, CapSet::Ambient);
    for set in [CapSet::Inheritable, CapSet::Effective, CapSet::Permitted] {
        let now = caps::read(None, set).map_err(|e| e.to_string())?;
        let kept: caps::CapsHashSet = now.intersection(&keep).copied().collect();
        caps::set(None, set, &kept).map_err(|e| format!("{set:?}: {e}"))?;
    }
    Ok(true)
}

/// Restricts this process under `policy` and says what the kernel enforced.
#[cfg(target_os = "linux")]
fn restrict(policy: &Policy) -> Result<Enforced, String> {
    use landlock::{
        Access as _, AccessFs, CompatLevel, Compatible, LandlockStatus, PathBeneath, Ruleset,
        RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, ABI,
    };
    // The filesystem rights handled: every right up to ABI 5 (ioctl on devices). Rights of
    // later ABIs (connecting to a pathname socket, ABI 9) are left unhandled until they are
    // tried here: handled, they would be denied everywhere no rule grants them.
    let handled = AccessFs::from_all(ABI::V5);
    let read = AccessFs::from_read(ABI::V5);
    let device = AccessFs::ReadFile
        | AccessFs::WriteFile
        | AccessFs::ReadDir
        | AccessFs::Truncate
        | AccessFs::IoctlDev;
    let err = |e: landlock::RulesetError| e.to_string();
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(handled)
        .map_err(err)?
        .scope(Scope::from_all(ABI::V6))
        .map_err(err)?
        .create()
        .map_err(err)?;
    for (path, access) in grants(policy, &list_dir) {
        let rights = match access {
            Access::Read => read,
            Access::List => AccessFs::ReadDir.into(),
            Access::Write => handled,
            Access::Device => device,
        };
        // Opened without following a link; a path that is not there is nothing to grant.
        let Ok(fd) = open_path(&path) else { continue };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    // Capabilities after the rules are made (opening a rule's path may need them) and before
    // the domain applies.
    let capabilities_cut = drop_capabilities()?;
    let status = ruleset.restrict_self().map_err(err)?;
    let abi = match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi as u32,
        _ => 0,
    };
    let domain = status.ruleset != RulesetStatus::NotEnforced;
    Ok(Enforced {
        landlock_abi: abi,
        no_new_privs: status.no_new_privs,
        filesystem: domain,
        ptrace: domain,
        signals: domain && abi >= 6,
        abstract_sockets: domain && abi >= 6,
        as_root: super::is_root(),
        capabilities_cut,
    })
}

#[cfg(not(target_os = "linux"))]
fn restrict(_policy: &Policy) -> Result<Enforced, String> {
    Err("the sandbox needs Linux (Landlock); this system has none".into())
}

/// `path` opened with `O_PATH | O_NOFOLLOW`: a rule's anchor, never through a symbolic link.
#[cfg(target_os = "linux")]
fn open_path(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let meta = std::fs::symlink_metadata(path)?;
    if meta.file_type().is_symlink() {
        return Err(std::io::Error::other("a symbolic link"));
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
        .open(path)
}
