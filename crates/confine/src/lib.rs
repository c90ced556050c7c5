//! The restriction of a command between `fork` and `exec`: the one place of Shipmoor Claim
//! Check with `unsafe` code, kept in a crate of its own so that the rest forbids it.
//!
//! The parent makes everything the restriction needs (the Landlock ruleset with its rules, the
//! capability masks) before it starts the command; [`confine`] installs a `pre_exec` hook
//! that, in the child, makes only raw system calls, in this order:
//! 1. `prctl(PR_SET_NO_NEW_PRIVS)`: no program it executes gains privileges (no `sudo`, no
//!    setuid or file-capability helper), and the Landlock domain may be entered unprivileged;
//! 2. for a process that holds capabilities (root): every capability but the kept ones dropped
//!    from the bounding set (`PR_CAPBSET_DROP`), the ambient set cleared, and the effective,
//!    permitted and inheritable sets cut to the kept ones (`capset`);
//! 3. `landlock_restrict_self` with the ruleset.
//!
//! A step that fails fails the start of the command with the system's error: the command never
//! runs less restricted than asked. Nothing in the hook allocates, locks or touches state the
//! parent's other threads may hold between `fork` and `exec` (the rules of `pre_exec`).

#![deny(unsafe_code)]

use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Command;

/// What a command is restricted to, made by the parent.
#[derive(Debug, Default)]
pub struct Restriction {
    /// A Landlock ruleset (`landlock_create_ruleset`'s descriptor, its rules added) the command
    /// enters; none where the kernel has no Landlock.
    pub ruleset: Option<OwnedFd>,
    /// The capabilities to keep, by number, for a process that holds any; `None` leaves the
    /// sets as they are (a user other than root holds none).
    pub keep_capabilities: Option<u64>,
    /// The highest capability number the kernel knows (`/proc/sys/kernel/cap_last_cap`).
    pub last_capability: u32,
}

/// Installs `restriction` on `cmd`: applied in the child after `fork`, before `exec`.
#[cfg(target_os = "linux")]
pub fn confine(cmd: &mut Command, restriction: Restriction) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the hook runs in the forked child before `exec`. It only reads `restriction`
    // (moved into the closure, never freed there) and makes `prctl`, `capget`, `capset` and
    // `landlock_restrict_self` system calls, all async-signal-safe; it allocates nothing and
    // takes no lock, so no state another thread of the parent held at `fork` is touched.
    #[allow(unsafe_code)]
    unsafe {
        cmd.pre_exec(move || apply(&restriction));
    }
}

#[cfg(not(target_os = "linux"))]
pub fn confine(_cmd: &mut Command, _restriction: Restriction) {}

/// The capability sets as `capget`/`capset` take them (version 3: two 32-bit words).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn apply(r: &Restriction) -> std::io::Result<()> {
    let fail = || Err(std::io::Error::last_os_error());
    // SAFETY (for each call below): raw system calls on plain integers and on pointers to
    // live, properly sized local values.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return fail();
        }
        if let Some(keep) = r.keep_capabilities {
            for cap in 0..=r.last_capability.min(63) {
                if keep & (1u64 << cap) != 0 {
                    continue;
                }
                if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0
                    && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL)
                {
                    return fail();
                }
            }
            // Before Linux 4.3 there is no ambient set to clear.
            if libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
                && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL)
            {
                return fail();
            }
            let mut header = CapHeader {
                version: LINUX_CAPABILITY_VERSION_3,
                pid: 0,
            };
            let mut data = [CapData::default(); 2];
            if libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) != 0 {
                return fail();
            }
            for (i, d) in data.iter_mut().enumerate() {
                let mask = (keep >> (32 * i)) as u32;
                d.effective &= mask;
                d.permitted &= mask;
                d.inheritable &= mask;
            }
            if libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) != 0 {
                return fail();
            }
        }
        if let Some(fd) = &r.ruleset {
            if libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0u32) != 0 {
                return fail();
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The child runs with `no_new_privs`; a command that cannot be restricted never starts.
    #[test]
    fn a_confined_command_runs_with_no_new_privs() {
        let mut cmd = Command::new("grep");
        cmd.args(["^NoNewPrivs:", "/proc/self/status"]);
        confine(&mut cmd, Restriction::default());
        let out = cmd.output().expect("grep starts");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "NoNewPrivs:\t1"
        );
    }

    #[test]
    fn a_restriction_that_fails_fails_the_start() {
        // A descriptor that is no ruleset: `landlock_restrict_self` refuses it.
        let file = std::fs::File::open("/proc/self/status").unwrap();
        let mut cmd = Command::new("true");
        confine(
            &mut cmd,
            Restriction {
                ruleset: Some(OwnedFd::from(file)),
                ..Restriction::default()
            },
        );
        assert!(cmd.status().is_err());
    }
}
