//! The sandbox the floor's commands ran under, as the run result, `verify.md`, the shard result
//! and the statement record it (book: security.md, "Reading the sandbox line"), so that a
//! person sees it and an admission policy can require it.

use serde::{Deserialize, Serialize};

use crate::sandbox::{Mode, Sandbox};

/// What the kernel enforced on every command of the floor and every command judge of a run:
/// the same at head and at base (a base reused from the base cache was observed under the same
/// sandbox: the cache's key covers it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxRecord {
    /// What `--sandbox` asked for: `require`, `auto` or `off`.
    pub mode: Mode,
    /// Every command ran with `no_new_privs` under Landlock's filesystem rules and ptrace
    /// restriction: what `require` demands, and what an admission policy's
    /// `require_sandbox: true` reads.
    pub enforced: bool,
    /// The Landlock ABI the kernel offered (0: none or not asked).
    pub landlock_abi: u32,
    /// What held, by name: `filesystem`, `ptrace`, `no_new_privs`, `signals`,
    /// `abstract_sockets`, `root_capabilities` (root's cut to a container's default set).
    pub protections: Vec<String>,
    /// What did not hold, in words (a protection the kernel lacks, or why there was none).
    pub not_enforced: Vec<String>,
    /// The run's user was root.
    pub as_root: bool,
}

impl SandboxRecord {
    /// The record of `sandbox`.
    pub fn of(sandbox: &Sandbox) -> SandboxRecord {
        let e = sandbox.enforced();
        let mut protections = Vec::new();
        let mut not_enforced = Vec::new();
        if sandbox.active() {
            for (held, name) in [
                (e.filesystem, "filesystem"),
                (e.ptrace, "ptrace"),
                (e.no_new_privs, "no_new_privs"),
                (e.signals, "signals"),
                (e.abstract_sockets, "abstract_sockets"),
                (e.capabilities_cut, "root_capabilities"),
            ] {
                if held {
                    protections.push(name.to_string());
                }
            }
            not_enforced.extend(e.missing().iter().map(|m| m.to_string()));
        } else if sandbox.mode() == Mode::Off {
            not_enforced.push("everything: --sandbox off".to_string());
        } else {
            not_enforced.push(format!(
                "everything: {}",
                sandbox.unavailable().unwrap_or("no sandbox")
            ));
        }
        SandboxRecord {
            mode: sandbox.mode(),
            enforced: sandbox.active() && e.meets_require(),
            landlock_abi: if sandbox.active() { e.landlock_abi } else { 0 },
            protections,
            not_enforced,
            as_root: e.as_root,
        }
    }

    /// The one line every report shows: what held, or that nothing did and why.
    pub fn line(&self) -> String {
        let mut line = if self.protections.is_empty() {
            format!(
                "sandbox {}: nothing enforced, so the change's code ran with all the reach of this run's user ({})",
                self.mode.as_str(),
                self.not_enforced.join("; ")
            )
        } else {
            let shown: Vec<&str> = self
                .protections
                .iter()
                .map(|p| match p.as_str() {
                    "no_new_privs" => "no new privileges",
                    "abstract_sockets" => "abstract sockets",
                    "root_capabilities" => "root's capabilities cut",
                    other => other,
                })
                .collect();
            let mut l = format!(
                "sandbox {}: Landlock ABI {} ({}) at head and base",
                self.mode.as_str(),
                self.landlock_abi,
                shown.join(", ")
            );
            if !self.not_enforced.is_empty() {
                l.push_str(&format!("; not enforced: {}", self.not_enforced.join(", ")));
            }
            l
        };
        if self.as_root && self.protections.iter().all(|p| p != "root_capabilities") {
            line.push_str("; run as root");
        }
        line
    }

    /// What a Linux 6.12+ kernel enforces for a user other than root: for tests that render
    /// reports from plain data.
    #[cfg(test)]
    pub fn example() -> SandboxRecord {
        SandboxRecord {
            mode: Mode::Require,
            enforced: true,
            landlock_abi: 7,
            protections: [
                "filesystem",
                "ptrace",
                "no_new_privs",
                "signals",
                "abstract_sockets",
            ]
            .map(String::from)
            .to_vec(),
            not_enforced: Vec::new(),
            as_root: false,
        }
    }

    /// A short summary of what the sandbox is, for the base cache's key: entries observed under
    /// another sandbox are not this run's.
    pub fn key(&self) -> String {
        format!(
            "{} enforced={} abi={} protections={}",
            self.mode.as_str(),
            self.enforced,
            self.landlock_abi,
            self.protections.join(",")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_what_held_or_why_nothing_did() {
        let full = SandboxRecord {
            mode: Mode::Require,
            enforced: true,
            landlock_abi: 7,
            protections: vec![
                "filesystem".into(),
                "ptrace".into(),
                "no_new_privs".into(),
                "signals".into(),
                "abstract_sockets".into(),
            ],
            not_enforced: vec![],
            as_root: false,
        };
        assert_eq!(
            full.line(),
            "sandbox require: Landlock ABI 7 (filesystem, ptrace, no new privileges, signals, abstract sockets) at head and base"
        );
        let off = SandboxRecord::of(&Sandbox::off());
        assert!(!off.enforced && off.protections.is_empty());
        assert_eq!(
            off.line(),
            "sandbox off: nothing enforced, so the change's code ran with all the reach of this run's user (everything: --sandbox off)"
        );
        let json = serde_json::to_string(&full).unwrap();
        assert_eq!(serde_json::from_str::<SandboxRecord>(&json).unwrap(), full);
    }
}
