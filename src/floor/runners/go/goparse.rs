//! Go test files parsed with go's own `go/parser`, for attributing a build failure (book:
//! floor/attribution.md).
//!
//! A small Go program ([`SOURCE`], `goparse.go` beside this file) is embedded in shipmoor. The
//! first time a process needs it, it is written to the runner's scratch directory and built with
//! `go build` (the user's go, which is installed whenever the go runner runs; only the standard
//! library, so no download); later calls reuse that binary while it exists, and go's build cache
//! makes a rebuild a link only. Why go's parser rather than a Rust crate: it is the language's
//! reference parser at the installed version (generics, every syntax go accepts), costs no new
//! dependency in shipmoor (a Rust crate would be tree-sitter's C grammar, compiled into every
//! build and lagging the language), and its price is small: measured on a 2-core machine, the
//! first build in a process takes about 4 s with an empty go build cache and 0.3-0.8 s with a
//! warm one, and each file then parses in a few milliseconds. It runs only when a bound test
//! reads `build_fail` at base.
//!
//! In: a test file. Out: its `Test*` functions (extent from `func` to the closing brace, and
//! every identifier each mentions: a selector `pkg.Name` contributes `pkg` and `Name`), and its
//! imports with the names they bind: the alias, else the name the import path implies (the last
//! element without a `/vN` major version or `go-` prefix, cut at the first character that is
//! not an identifier's: the package itself often does not exist at base, so its declared name
//! cannot be read). `_` and `.` imports bind no name we can match. A file that does not parse
//! gives no map.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use serde::Deserialize;

use super::go_env;
use crate::decision::attribute::{ItemMap, ParsedImport, ParsedItem};
use crate::floor::runners::RunCtx;
use crate::process;

/// The parser program.
pub const SOURCE: &str = include_str!("goparse.go");

/// The binary built in this process, while it exists.
static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);

#[derive(Debug, Deserialize)]
struct Parsed {
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    items: Vec<ParsedItem>,
    #[serde(default)]
    imports: Vec<ParsedImport>,
}

/// The environment for building the parser: the caller's (its `GOCACHE`, with [`go_env`]'s
/// toolchain), but never its `GOFLAGS` (`-mod=vendor` would not apply to our module), workspace
/// or cgo, and no download.
fn build_env(ctx: &RunCtx, cmd: &mut Command) {
    for (k, v) in ctx.env.iter().chain(&go_env(&ctx.env)) {
        cmd.env(k, v);
    }
    for (k, v) in [
        ("GOFLAGS", ""),
        ("GOWORK", "off"),
        ("GO111MODULE", "on"),
        ("CGO_ENABLED", "0"),
        ("GOPROXY", "off"),
    ] {
        cmd.env(k, v);
    }
}

/// Why the parser could not be built.
#[derive(Debug, thiserror::Error)]
enum BuildError {
    #[error("{}: {why}", .dir.display())]
    Dir { dir: PathBuf, why: std::io::Error },
    #[error("{name}: {why}")]
    Write {
        name: &'static str,
        why: std::io::Error,
    },
    #[error("go build: {0}")]
    Start(std::io::Error),
    #[error("go build of the parser failed: {0}")]
    Failed(String),
}

/// Builds the parser into `ctx.scratch`, or returns the one this process built.
fn binary(ctx: &RunCtx) -> Result<PathBuf, BuildError> {
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(bin) = built.as_ref().filter(|b| b.is_file()) {
        return Ok(bin.clone());
    }
    let dir = ctx.scratch.join("goparse");
    std::fs::create_dir_all(&dir).map_err(|why| BuildError::Dir {
        dir: dir.clone(),
        why,
    })?;
    let write = |name: &'static str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|why| BuildError::Write { name, why })
    };
    write("main.go", SOURCE)?;
    write("go.mod", "module shipmoor.invalid/goparse\n\ngo 1.19\n")?;
    let bin = dir.join("goparse");
    let mut cmd = Command::new("go");
    cmd.args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(&dir);
    build_env(ctx, &mut cmd);
    let c = process::run(cmd, ctx.timeout, process::Confine::Sandboxed(&ctx.jail))
        .map_err(BuildError::Start)?;
    if !c.success() || !bin.is_file() {
        return Err(BuildError::Failed(c.stderr_lossy().trim().to_string()));
    }
    *built = Some(bin.clone());
    Ok(bin)
}

/// Parses one file (see the module doc); `None` when it does not parse or the parser cannot
/// be built or run.
pub fn item_map(ctx: &RunCtx, file: &Path) -> Option<ItemMap> {
    let bin = binary(ctx).ok()?;
    let mut cmd = Command::new(&bin);
    cmd.arg(file);
    let c = process::run(cmd, ctx.timeout, process::Confine::Sandboxed(&ctx.jail)).ok()?;
    if !c.success() {
        return None;
    }
    let parsed: Parsed = serde_json::from_slice(c.stdout.split(|b| *b == b'\n').next()?).ok()?;
    if parsed.error.is_some() {
        return None;
    }
    Some(ItemMap::from_parsed(parsed.items, parsed.imports))
}
