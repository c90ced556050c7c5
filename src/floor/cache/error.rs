//! Why the base cache could not read an entry or an item, or could not be written: an entry
//! not read is a note and base runs again; a cache not written is a warning, never a verdict.

use crate::digest::CanonicalError;
use crate::error::IoError;
use crate::nofollow::{ReadError, Refused, WriteError};

use super::{short, ENTRY_SCHEMA};

/// Why an entry, or an item it cites, does not check out.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    #[error("its name is not 64 lowercase hex digits")]
    Name,
    #[error("{0}")]
    Read(ReadError),
    #[error("its contents do not hash to its name")]
    Hash,
    #[error("it does not parse: {0}")]
    Parse(serde_json::Error),
    #[error("its schema is {0}, not {ENTRY_SCHEMA}")]
    Schema(String),
    #[error("its key is not the digest of its inputs")]
    Key,
    /// A pointer that is no `sha256:<hex>`.
    #[error("`{0}` is not an evidence name")]
    Pointer(String),
    /// An item (its hex name) that could not be read.
    #[error("its item {} {}", short(.0), .1)]
    ItemRead(String, ReadError),
    #[error("its item {} does not hash to its name", short(.0))]
    ItemHash(String),
    /// A record (its hex name) the entry cites that is not among its items.
    #[error("its record {} is not among its items", short(.0))]
    RecordMissing(String),
    #[error("its record {} does not parse: {}", short(.0), .1)]
    RecordParse(String, serde_json::Error),
    /// A record (its pointer) of another side or commit than this run's base.
    #[error("its record {} is not one of base's runs", short_pointer(.0))]
    NotBase(String),
    /// A test (its id) with more outcomes than evidence, or fewer.
    #[error("{0}: outcomes and evidence differ in number")]
    Count(String),
    /// A test's evidence (its id, the pointer) that is no test run.
    #[error("{}: evidence {} is no test run", .0, short_pointer(.1))]
    NoTestRun(String, String),
    #[error("{}: evidence {} records another test or outcome", .0, short_pointer(.1))]
    OtherTest(String, String),
    /// A test observed by a runner this run does not have (its index).
    #[error("{0}: no runner {1}")]
    NoRunner(String, usize),
}

/// The first 12 hex digits of a pointer (`sha256:<hex>`), as notes show it.
fn short_pointer(p: &str) -> &str {
    short(p.strip_prefix("sha256:").unwrap_or(p))
}

/// Why the cache, or `evidence gc`, could not write or tidy the cache's directory.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{0}")]
    Canonical(#[from] CanonicalError),
    #[error("{0}")]
    Write(#[from] WriteError),
    /// A directory of the cache turned into a symlink or a file since it was read.
    #[error("{0}")]
    Refused(Refused),
    /// The metadata of a file to remove could not be read.
    #[error("{0}")]
    Stat(std::io::Error),
    #[error("{0}")]
    Io(#[from] IoError),
    #[error("{0}")]
    Json(serde_json::Error),
}
