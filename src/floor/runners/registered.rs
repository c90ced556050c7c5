//! A runner's registered entry: what the floor knows of a runner before it has a
//! configuration (how it is detected, how its adapter is made, which files decide how its
//! tests run). Each runner's folder defines its entry; [`super::registry`] lists them.

use std::sync::Arc;

use super::Runner;
use crate::acceptance::{RunnerConfig, RunnerKind};
use crate::error::Error;
use crate::floor::harness::{HarnessFile, HarnessHit};

/// Reads a file of head, as detection needs it.
pub type ReadText<'r> = &'r dyn Fn() -> Result<String, Error>;

/// How a runner is found in head's files.
#[derive(Clone, Copy)]
pub enum Detect {
    /// At the repository's root, when head's files (every tracked path) say so.
    Root(fn(files: &[String]) -> bool),
    /// Rooted at the directory of each file of head (outside dependency and test-data
    /// directories) whose name and text say so; `text` reads the file at head.
    EachFile(fn(name: &str, text: ReadText<'_>) -> Result<bool, Error>),
    /// Only when configured.
    Never,
}

/// Which files decide how a family's tests run, changed in base..head.
pub type HarnessRule = fn(&HarnessFile<'_>) -> Option<HarnessHit>;

/// What a file a command may write decides for a family, by its name and directory
/// (`under(d)`: the file lies in a directory named `d`); `None`: nothing.
pub type WrittenRule = fn(name: &str, under: &dyn Fn(&str) -> bool) -> Option<&'static str>;

/// A runner as this build knows it.
#[derive(Clone, Copy)]
pub struct Registered {
    pub kind: RunnerKind,
    pub detect: Detect,
    pub make: fn(RunnerConfig) -> Arc<dyn Runner>,
    /// The harness guard's rule of the runner's family.
    pub harness: HarnessRule,
    /// The files of the runner's family that a command may write to steer a later one.
    pub written: WrittenRule,
}

/// A harness rule and a written-file rule for a runner whose family has none.
pub fn no_harness(_: &HarnessFile<'_>) -> Option<HarnessHit> {
    None
}

/// See [`no_harness`].
pub fn nothing_written(_: &str, _: &dyn Fn(&str) -> bool) -> Option<&'static str> {
    None
}
