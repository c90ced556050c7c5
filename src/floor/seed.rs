//! The seeding of each side's cargo target dir: head's from the checkout's, base's from
//! head's, each a copy without the workspace's own units (see [`seed_cargo_target`]), so that
//! registry dependencies the workflow already built are not built again and no stale test
//! binary of the workspace can run at either side. Each seeding is a runtime row; one that
//! fails leaves its side to build from scratch.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::Error;
use crate::format::floor::{RuntimeRow, Side};
use crate::git::Worktree;

use super::events::{row_side, Event};
use super::runners::rust::target::{self, seed_cargo_target};
use super::{progress, Ctx, Env};

impl Env<'_> {
    /// The cargo project directory of the first cargo or nextest runner inside `root`.
    fn cargo_dir(&self, root: &std::path::Path) -> PathBuf {
        self.adapters
            .iter()
            .find(|a| a.cargo_target())
            .map(|a| {
                let r = &a.config().root;
                if r == "." {
                    root.to_path_buf()
                } else {
                    root.join(r)
                }
            })
            .unwrap_or_else(|| root.to_path_buf())
    }
}

impl Ctx<'_> {
    /// Seeds head's target dir from the checkout's (a `target/` a cache step restored or an
    /// earlier `cargo test` built, or where `CARGO_TARGET_DIR` or the cargo config puts it),
    /// so that head does not rebuild every registry dependency the workflow already built. The
    /// same safe seeding as base's: a copy with every path package's units removed, so no stale
    /// test binary of the workspace can run (see [`seed_cargo_target`]).
    pub(super) fn seed_head_target(&mut self, head: &Worktree) -> Result<(), Error> {
        let to = self.env.input.temp_root.join("target").join("head");
        if seeded_already(&to) {
            return Ok(());
        }
        let checkout = self.env.cargo_dir(self.env.input.git.root());
        let Some(from) = target::checkout_target_dir(
            &self.env.cargo_dir(head.path()),
            head.path(),
            &checkout,
            self.env.input.timeout,
            &self.jail(Side::Head, None),
        ) else {
            return Ok(());
        };
        self.rec.observe(Event::Seeding { side: Side::Head });
        let shown = from
            .strip_prefix(self.env.input.git.root())
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| from.display().to_string());
        let lock = target::find_lock(self.env.input.git.root(), &checkout);
        let seeded = self.seed_watched(Side::Head, &from, &to, head, lock.as_deref());
        self.record_seeding(
            row_side(Side::Head),
            &format!("the checkout's target dir ({shown})"),
            "the checkout's",
            &shown,
            seeded,
            &to,
        );
        Ok(())
    }

    /// Seeds base's target dir from head's so that registry dependencies are not built twice,
    /// removing every path package's own units so that nothing of head's code can run at base
    /// (see [`seed_cargo_target`]). Falls back to an empty target dir when seeding fails.
    pub(super) fn seed_base_target(&mut self, base: &Worktree) -> Result<(), Error> {
        let from = self.env.input.temp_root.join("target").join("head");
        let to = self.env.input.temp_root.join("target").join("base");
        if !from.is_dir() || seeded_already(&to) {
            return Ok(());
        }
        self.rec.observe(Event::Seeding { side: Side::Base });
        let head_root = self.env.input.temp_root.join("head");
        let lock = target::find_lock(&head_root, &self.env.cargo_dir(&head_root));
        let seeded = self.seed_watched(Side::Base, &from, &to, base, lock.as_deref());
        self.record_seeding(
            row_side(Side::Base),
            "head's target dir",
            "head's",
            "$TMP/target/head",
            seeded,
            &to,
        );
        Ok(())
    }

    /// [`seed_cargo_target`] from `from` into `to` for the worktree `wt`, under the progress
    /// watch (a heartbeat while it copies).
    fn seed_watched(
        &self,
        side: Side,
        from: &std::path::Path,
        to: &std::path::Path,
        wt: &Worktree,
        lock: Option<&std::path::Path>,
    ) -> Result<target::Seeded, target::SeedError> {
        let watch = self.step_watch(
            side,
            "the seeding of the target dir".into(),
            progress::FinishedLines::default(),
            &[],
        );
        progress::step(watch.as_ref(), || {
            seed_cargo_target(
                from,
                to,
                &self.env.cargo_dir(wt.path()),
                lock,
                self.env.input.timeout,
                &self.jail(side, None),
            )
        })
    }

    /// The runtime row of one seeding; a failed seeding leaves no target dir behind.
    fn record_seeding(
        &mut self,
        side: &str,
        source: &str,
        lock_source: &str,
        from_shown: &str,
        seeded: Result<target::Seeded, target::SeedError>,
        to: &std::path::Path,
    ) {
        // `$TMP/target/head` or `$TMP/target/base`.
        let to_side = to
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (result, duration, command) = match &seeded {
            Ok(s) => (
                format!(
                    "seeded from {source}; {} path package(s) cleaned{}",
                    s.cleaned.len(),
                    if s.lock_given {
                        format!("; given {lock_source} Cargo.lock")
                    } else {
                        String::new()
                    }
                ),
                s.duration,
                format!(
                    "cp -a --reflink=auto {from_shown} $TMP/target/{to_side} (debug/ and \
                     release/, without incremental/ and the workspace's own units) && cargo \
                     clean -p {}",
                    s.cleaned.join(" -p ")
                ),
            ),
            Err(e) => {
                // Empty again, and there: the sandbox grants the side's build directory as it
                // was made for the run, and the side's commands cannot make it anew.
                let _ = std::fs::remove_dir_all(to);
                let _ = std::fs::create_dir_all(to);
                (
                    format!("not seeded ({e}); {to_side} builds from scratch"),
                    Duration::ZERO,
                    "seed target dir".to_string(),
                )
            }
        };
        self.rec.observe(Event::Row(RuntimeRow {
            side: side.into(),
            runner: "cargo".into(),
            command,
            tests: 0,
            result,
            seconds: self.env.seconds(duration),
            exit_code: Some(if seeded.is_ok() { 0 } else { 1 }),
            excerpt: None,
            tool: None,
        }));
    }
}

/// Whether a side's target dir holds anything yet (it is made empty for the run, see
/// [`Ctx::make_homes`]): a seeding happens once.
fn seeded_already(to: &std::path::Path) -> bool {
    std::fs::read_dir(to).is_ok_and(|mut d| d.next().is_some())
}
