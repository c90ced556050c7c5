//! The rules of a sandboxed command, and `shipmoor __sandbox v1 --probe`, the process that
//! restricts itself as a command would be and says what the kernel enforced (step 1 of the
//! module doc). Started only by [`super::Sandbox::probe`], never by a person.
//!
//! The grants, in the order they are made ([`grants`]):
//! 1. read and execute on `/`, carved around every hidden path and `/dev` (root reads a disk's
//!    device file as easily as a file, and a raw disk holds every hidden file): a directory that
//!    holds one is not granted whole but entry by entry (Landlock grants by hierarchy, so
//!    keeping a path out means granting its siblings), and may only be listed;
//! 2. read and execute on each `--read` path (a path under a hidden one that stays readable),
//!    carved in turn around any hidden path below it;
//! 3. every right on each `--write` path but making a device file (a block device made in a
//!    worktree would reach the disk as `/dev`'s own does);
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

/// The probe's whole run: `args` are the process's arguments after the program name.
/// Restricts this process under the rules a command would get and prints what held, as one
/// line of JSON ([`Enforced`]). Returns the exit code.
pub fn main(args: &[OsString]) -> i32 {
    if let Err(e) = parse(args) {
        eprintln!("shipmoor {HELPER_ARG}: {e}");
        return EXIT_UNSANDBOXED;
    }
    let enforced = match ruleset(&Policy::default()).and_then(restrict) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("shipmoor: the sandbox could not be applied: {e}");
            return EXIT_UNSANDBOXED;
        }
    };
    match serde_json::to_string(&enforced) {
        Ok(line) => {
            println!("{line}");
            0
        }
        Err(e) => {
            eprintln!("shipmoor: the sandbox probe: {e}");
            EXIT_UNSANDBOXED
        }
    }
}

/// Why the probe was not run, or the rules of a command (or of the probe) were not made.
#[derive(Debug, thiserror::Error)]
pub enum RestrictError {
    #[error("not started as the sandbox probe")]
    NotProbe,
    #[error(
        "this binary speaks the sandbox protocol {} only (was it replaced during the run?)",
        PROTOCOL
    )]
    Protocol,
    #[error("the only call is `--probe`")]
    OnlyProbe,
    #[cfg(target_os = "linux")]
    #[error("{0}")]
    Caps(caps::errors::CapsError),
    #[cfg(target_os = "linux")]
    #[error("dropping {cap} from the bounding set: {source}")]
    Bounding {
        cap: caps::Capability,
        source: caps::errors::CapsError,
    },
    /// A capability set that could not be cut (which one).
    #[cfg(target_os = "linux")]
    #[error("{set:?}: {source}")]
    Set {
        set: caps::CapSet,
        source: caps::errors::CapsError,
    },
    #[cfg(target_os = "linux")]
    #[error("{0}")]
    Landlock(landlock::RulesetError),
    #[cfg(not(target_os = "linux"))]
    #[error("the sandbox needs Linux (Landlock); this system has none")]
    NotLinux,
}

/// Checks the probe's arguments: `__sandbox v1 --probe`.
fn parse(args: &[OsString]) -> Result<(), RestrictError> {
    let mut it = args.iter();
    if it.next().map(|a| a.as_os_str()) != Some(HELPER_ARG.as_ref()) {
        return Err(RestrictError::NotProbe);
    }
    if it.next().map(|a| a.as_os_str()) != Some(PROTOCOL.as_ref()) {
        return Err(RestrictError::Protocol);
    }
    match it.next().and_then(|a| a.to_str()) {
        Some("--probe") if it.next().is_none() => Ok(()),
        _ => Err(RestrictError::OnlyProbe),
    }
}

/// The grants for `policy` (see the module doc), each path once with its strongest access;
/// `list` lists a directory's entries (every entry's path; symbolic links are left out).
pub fn grants(policy: &Policy, list: &dyn Fn(&Path) -> Vec<PathBuf>) -> Vec<(PathBuf, Access)> {
    let mut out = shared_grants(&policy.hide, &policy.read, list);
    out.extend(policy.write.iter().map(|p| (p.clone(), Access::Write)));
    merge(out)
}

/// The grants every command with these hidden and readable paths shares, whatever it writes:
/// grants 1, 2 and 4 of the module doc.
fn shared_grants(
    hide: &[PathBuf],
    read: &[PathBuf],
    list: &dyn Fn(&Path) -> Vec<PathBuf>,
) -> Vec<(PathBuf, Access)> {
    let mut out = Vec::new();
    let mut hidden = hide.to_vec();
    hidden.push(PathBuf::from("/dev"));
    carve(Path::new("/"), &hidden, list, &mut out);
    for p in read {
        carve(p, &hidden, list, &mut out);
    }
    out.extend(DEVICES.iter().map(|d| (PathBuf::from(d), Access::Device)));
    out.push((PathBuf::from("/dev/shm"), Access::Write));
    merge(out)
}

/// Each path once, sorted, with the strongest of its grants: Write and Device beat Read and
/// List (as Landlock itself unites the rights of two rules on one file).
fn merge(mut out: Vec<(PathBuf, Access)>) -> Vec<(PathBuf, Access)> {
    out.sort();
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
/// `CAP_SETPCAP` and `CAP_MKNOD`), which tests that `chown` or bind a low port still need. Root with
/// `CAP_SYS_ADMIN` or `CAP_PERFMON` still reads the environment of a process outside the
/// Landlock domain; without them, it cannot.
#[cfg(target_os = "linux")]
const ROOT_KEEPS: &[caps::Capability] = &[
    caps::Capability::CAP_CHOWN,
    caps::Capability::CAP_DAC_OVERRIDE,
    caps::Capability::CAP_FSETID,
    caps::Capability::CAP_FOWNER,
    caps::Capability::CAP_NET_RAW,
    caps::Capability::CAP_SETGID,
    caps::Capability::CAP_SETUID,
    caps::Capability::CAP_SETFCAP,
    caps::Capability::CAP_NET_BIND_SERVICE,
    caps::Capability::CAP_SYS_CHROOT,
    caps::Capability::CAP_KILL,
    caps::Capability::CAP_AUDIT_WRITE,
];

/// [`ROOT_KEEPS`] as a mask of capability numbers.
#[cfg(target_os = "linux")]
fn root_keeps_mask() -> u64 {
    ROOT_KEEPS.iter().fold(0u64, |m, c| m | (1u64 << c.index()))
}

/// Whether this process holds any capability (root does; under `no_new_privs` a user other
/// than root gains none by executing a program, so its sets matter to nobody).
#[cfg(target_os = "linux")]
fn holds_capabilities() -> Result<bool, RestrictError> {
    caps::read(None, caps::CapSet::Permitted)
        .map(|held| !held.is_empty())
        .map_err(RestrictError::Caps)
}

/// Cuts every capability but [`ROOT_KEEPS`] from the bounding set (so that no program this
/// process executes gains them) and from the effective, permitted, inheritable and ambient
/// sets: the probe's own cut, as [`restriction`] has each command's made.
#[cfg(target_os = "linux")]
fn drop_capabilities() -> Result<bool, RestrictError> {
    use caps::CapSet;
    if !holds_capabilities()? {
        return Ok(false);
    }
    let keep: caps::CapsHashSet = ROOT_KEEPS.iter().copied().collect();
    let bounding = caps::read(None, CapSet::Bounding).map_err(RestrictError::Caps)?;
    for cap in bounding.difference(&keep) {
        caps::drop(None, CapSet::Bounding, *cap)
            .map_err(|source| RestrictError::Bounding { cap: *cap, source })?;
    }
    let _ = caps::clear(None, CapSet::Ambient);
    for set in [CapSet::Inheritable, CapSet::Effective, CapSet::Permitted] {
        let now = caps::read(None, set).map_err(RestrictError::Caps)?;
        let kept: caps::CapsHashSet = now.intersection(&keep).copied().collect();
        caps::set(None, set, &kept).map_err(|source| RestrictError::Set { set, source })?;
    }
    Ok(true)
}

/// The Landlock ruleset of `policy`, its rules added (see the module doc). Where the kernel has no Landlock the ruleset holds nothing and
/// enforces nothing (`BestEffort`): the probe says so, and `require` stops before any command.
#[cfg(target_os = "linux")]
fn ruleset(policy: &Policy) -> Result<landlock::RulesetCreated, RestrictError> {
    use landlock::{
        Access as _, AccessFs, CompatLevel, Compatible, PathBeneath, Ruleset, RulesetAttr,
        RulesetCreatedAttr, Scope, ABI,
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
    let err = RestrictError::Landlock;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(handled)
        .map_err(err)?
        .scope(Scope::from_all(ABI::V6))
        .map_err(err)?
        .create()
        .map_err(err)?;
    let shared = anchors(&policy.hide, &policy.read);
    let own: Vec<(std::fs::File, Access)> = policy
        .write
        .iter()
        .filter_map(|p| Some((open_path(p).ok()?, Access::Write)))
        .collect();
    for (fd, access) in shared.rules.iter().chain(own.iter()) {
        let rights = match access {
            Access::Read => read,
            Access::List => AccessFs::ReadDir.into(),
            Access::Write => handled & !(AccessFs::MakeChar | AccessFs::MakeBlock),
            Access::Device => device,
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(RestrictError::Landlock)?;
    }
    Ok(ruleset)
}

/// Restricts this process with `ruleset` (the probe) and says what the kernel enforced.
#[cfg(target_os = "linux")]
fn restrict(ruleset: landlock::RulesetCreated) -> Result<Enforced, RestrictError> {
    use landlock::{LandlockStatus, RulesetStatus};
    let err = RestrictError::Landlock;
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

/// Step 2's rules for one command under `policy`, made here in the parent: the ruleset's
/// descriptor, and the capabilities to keep when this process holds any. The command enters
/// them between `fork` and `exec` ([`shipmoor_confine::confine`]).
#[cfg(target_os = "linux")]
pub fn restriction(policy: &Policy) -> Result<shipmoor_confine::Restriction, RestrictError> {
    let ruleset = ruleset(policy)?;
    let keep_capabilities = holds_capabilities()?.then(root_keeps_mask);
    Ok(shipmoor_confine::Restriction {
        ruleset: Option::<std::os::fd::OwnedFd>::from(ruleset),
        keep_capabilities,
        last_capability: last_capability(),
    })
}

/// The highest capability number this kernel knows, read once.
#[cfg(target_os = "linux")]
fn last_capability() -> u32 {
    static LAST: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    // The kernel's own number, so that a capability newer than the `caps` crate is dropped too.
    *LAST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(63)
    })
}

#[cfg(not(target_os = "linux"))]
pub fn restriction(_policy: &Policy) -> Result<shipmoor_confine::Restriction, RestrictError> {
    Err(RestrictError::NotLinux)
}

/// The shared grants of these hidden and readable paths ([`shared_grants`]), each path opened
/// as the anchor of its rule: kept for the next command with the same pair (a run has a few,
/// one per kind of command) while no carved directory changed, so that a command's rules cost
/// one system call each rather than a walk of `/`. A carved directory whose entries changed
/// (its modification time moved: `.git/worktrees` made by the first worktree) is carved anew.
#[cfg(target_os = "linux")]
fn anchors(hide: &[PathBuf], read: &[PathBuf]) -> std::sync::Arc<Anchors> {
    use std::sync::{Arc, Mutex};
    static MADE: Mutex<Vec<Arc<Anchors>>> = Mutex::new(Vec::new());
    let key = (hide.to_vec(), read.to_vec());
    if let Ok(made) = MADE.lock() {
        let fresh = made
            .iter()
            .find(|a| a.key == key && a.carved.iter().all(|(p, t)| modified(p) == *t));
        if let Some(a) = fresh {
            return a.clone();
        }
    }
    let grants = shared_grants(hide, read, &list_dir);
    let carved = grants
        .iter()
        .filter(|(_, a)| *a == Access::List)
        .map(|(p, _)| (p.clone(), modified(p)))
        .collect();
    // Opened without following a link; a path that is not there is nothing to grant.
    let rules = grants
        .into_iter()
        .filter_map(|(p, a)| Some((open_path(&p).ok()?, a)))
        .collect();
    let made_now = Arc::new(Anchors { key, carved, rules });
    if let Ok(mut made) = MADE.lock() {
        made.retain(|a| a.key != made_now.key);
        // A few pairs per run; a long-lived process (`shipmoor mcp`) keeps the newest.
        if made.len() >= 8 {
            made.remove(0);
        }
        made.push(made_now.clone());
    }
    made_now
}

/// The opened anchors of one pair of hidden and readable paths ([`anchors`]).
#[cfg(target_os = "linux")]
struct Anchors {
    key: (Vec<PathBuf>, Vec<PathBuf>),
    /// Each carved directory with its modification time when its entries were read.
    carved: Vec<(PathBuf, Option<(i64, i64)>)>,
    rules: Vec<(std::fs::File, Access)>,
}

/// A directory's modification time (seconds, nanoseconds), which moves when an entry is made,
/// removed or renamed in it.
fn modified(p: &Path) -> Option<(i64, i64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(p)
        .ok()
        .map(|m| (m.mtime(), m.mtime_nsec()))
}

/// `path` opened with `O_PATH | O_NOFOLLOW`: a rule's anchor, never through a symbolic link
/// (opened so, a link is the link itself, refused here).
#[cfg(target_os = "linux")]
fn open_path(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
        .open(path)?;
    if file.metadata()?.file_type().is_symlink() {
        return Err(std::io::Error::other("a symbolic link"));
    }
    Ok(file)
}
