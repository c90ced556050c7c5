//! A pytest test file's test items and imports, for attribution (book: floor/attribution.md):
//! `py/items.py` (Python's own `ast`, run by the same Python that starts pytest, `-I` so that
//! nothing of the project is imported) walks the file and prints them as JSON, read here as an
//! [`ItemMap`]. Items are named as [`crate::floor::runners::TestItems::test_item`] names a node id
//! (`TestA::test_b`).

use std::ffi::OsString;
use std::process::Command;

use super::tool::PytestCommand;
use crate::decision::attribute::{ParsedImport, ParsedItem};
use crate::floor::runners::kit::safe_relative;
use crate::floor::runners::{ItemMap, RunCtx};
use crate::process;

/// The `ast` walk that finds a file's test items and imports.
const ITEMS_SCRIPT: &str = include_str!("../py/items.py");

/// The items and imports of the test file `rel_path` (relative to the runner's root); `None`
/// when it is not a file there, or Python cannot parse it.
pub(super) fn item_map(command: PytestCommand, ctx: &RunCtx, rel_path: &str) -> Option<ItemMap> {
    if !safe_relative(rel_path) {
        return None;
    }
    let file = ctx.dir.join(rel_path);
    if !file.is_file() {
        return None;
    }
    let (program, prefix) = command;
    // The Python that starts pytest parses the file (its grammar is the one the tests run
    // under); a bare `pytest` script leaves no Python to name, so `python3`.
    let python = if prefix.is_empty() {
        OsString::from("python3")
    } else {
        program
    };
    let mut cmd = Command::new(python);
    cmd.arg("-I")
        .arg("-c")
        .arg(ITEMS_SCRIPT)
        .arg(&file)
        .current_dir(&ctx.dir)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    let out = process::run(cmd, ctx.timeout, process::Confine::Sandboxed(&ctx.jail)).ok()?;
    if !out.success() {
        return None;
    }
    parse_item_map(&out.stdout)
}

/// `py/items.py`'s JSON as an [`ItemMap`].
fn parse_item_map(stdout: &[u8]) -> Option<ItemMap> {
    #[derive(serde::Deserialize)]
    struct Raw {
        items: Vec<ParsedItem>,
        imports: Vec<ParsedImport>,
    }
    let raw: Raw = serde_json::from_slice(stdout).ok()?;
    Some(ItemMap::from_parsed(raw.items, raw.imports))
}
