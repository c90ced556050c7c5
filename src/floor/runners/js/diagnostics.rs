//! Where a JavaScript test file that failed to load fails (book: floor/attribution.md): the
//! worktree files its error names, and the positions of the error as diagnostics, from babel's
//! and vite's messages, stack frames, ts-jest's TypeScript errors, or our own parser.
//!
//! A file that fails while loading because it calls a name its import does not bind at base
//! (`TypeError: (0 , clamp) is not a function` from vitest, `TypeError: clamp is not a function`
//! from jest with CommonJS) has two diagnostics: the call, then the import that binds the name,
//! naming it (`unbound_import`), so that the test that uses `clamp` owns the failure and a
//! neighbour that does not is never observed at base. jest with native ESM already fails at the
//! import (`The requested module '…' does not provide an export named 'clamp'`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;

use crate::floor::runners::kit::{display_text, worktree_relative};
use crate::floor::runners::{Diagnostic, RunCtx};

/// Files inside the worktree (repo-relative, not under `node_modules`) that an error message
/// names with a position, in order of appearance: absolute paths (`/w/src/a.js:3:5`,
/// `SyntaxError: /w/src/a.js: Unexpected token`), paths relative to the runner's root followed by
/// `:line` (jest's stack frames `(tests/a.test.js:1:18)`), and vite's root-relative `At file:
/// /src/a.js:1:19`. A module specifier (`'../src/gone'`) is relative to the importing file, not
/// to us, so it is not taken.
pub(super) fn mentioned_files(ctx: &RunCtx, text: &str) -> Vec<String> {
    static PATH: OnceLock<Option<Regex>> = OnceLock::new();
    let Some(re) = PATH
        .get_or_init(|| {
            Regex::new(
                r#"(?m)(?:^|[\s'"(\[])(At file: )?(/?[A-Za-z0-9_@.+~-][A-Za-z0-9_@.+~/-]*\.(?:[cm]?[jt]sx?|vue|svelte|json))(:\d+|: )?"#,
            )
            .ok()
        })
        .as_ref()
    else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for cap in re.captures_iter(text) {
        let Some(path) = cap.get(2).map(|m| m.as_str()) else {
            continue;
        };
        let at_file = cap.get(1).is_some();
        // `:12` after a relative path; `: ` (babel's `path: message`) only counts when absolute.
        let positioned = cap.get(3).is_some_and(|m| m.as_str() != ": ");
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(rooted) = path.strip_prefix('/') {
            candidates.push(PathBuf::from(path));
            if at_file {
                candidates.push(ctx.dir.join(rooted));
            }
        } else if positioned {
            candidates.push(ctx.dir.join(path));
        }
        for c in candidates {
            if !c.is_file() || c.components().any(|p| p.as_os_str() == "node_modules") {
                continue;
            }
            if let Some(rel) = worktree_relative(ctx, &c) {
                if !out.contains(&rel) {
                    out.push(rel);
                }
                break;
            }
        }
    }
    out
}

/// Where a test file that failed to load fails (book: floor/attribution.md): the position the error
/// names (babel's `SyntaxError: /abs/a.test.js: Unexpected token (8:26)`, the first stack frame
/// inside the worktree and outside `node_modules`, vite's `At file: /src/a.js:1:19`); else, for a
/// module that cannot be found (vitest without its stack names no position), the line that imports
/// it, and for a file that does not parse (vite's "Failed to parse source"), our parser's first
/// syntax error in the test file. TypeScript's compile errors (ts-jest's `tests/a.test.ts:3:10 -
/// error TS2305: …`) are one diagnostic each: several can stand in one message, and each may be a
/// different test's. `file` is relative to the runner's root.
///
/// A name the file imports that is not a function where the file calls it while loading is
/// also placed at the import that binds it (see [`unbound_import`]). Messages name paths
/// relative to the repository, never the worktree's.
pub(super) fn load_diagnostics(ctx: &RunCtx, file: &str, message: &str) -> Vec<Diagnostic> {
    let mut out = typescript_diagnostics(ctx, message);
    if out.is_empty() {
        out.extend(load_diagnostic(ctx, file, message));
        if let Some(first) = out.first_mut() {
            if let Some(import) = unbound_import(ctx, file, first) {
                first.names = import.names.clone();
                out.push(import);
            }
        }
    }
    for d in &mut out {
        d.message = display_text(ctx, &d.message);
    }
    out
}

/// vite's SSR transform (vitest) and CommonJS destructuring (jest) do not check that a module
/// exports the names a file imports from it: a name it lacks is bound to `undefined`, and the
/// failure surfaces at the name's first use. When the file calls it while loading (at the top
/// level, or in a `describe` body), the file fails with vitest's `TypeError: (0 , clamp) is not
/// a function` or jest's `TypeError: clamp is not a function`, at the call. Where that call is
/// in the test file itself and one of its imports binds the name, that import is what fails, as
/// Node's ESM linker would say at the import (`does not provide an export named 'clamp'`): a
/// diagnostic at the binding, naming it, so that a test that uses the name owns the failure and
/// its neighbours do not. A member of a namespace (`math.clamp is not a function`) names no
/// binding of the file: nothing is added.
fn unbound_import(ctx: &RunCtx, file: &str, thrown: &Diagnostic) -> Option<Diagnostic> {
    static NOT_CALLABLE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = NOT_CALLABLE
        .get_or_init(|| {
            Regex::new(
                r"^(?:TypeError: )?(?:\(0 , ([A-Za-z_$][A-Za-z0-9_$]*)\)|([A-Za-z_$][A-Za-z0-9_$]*)) is not a (?:function|constructor)$",
            )
            .ok()
        })
        .as_ref()?;
    let c = re.captures(thrown.message.trim())?;
    let name = c.get(1).or_else(|| c.get(2))?.as_str();
    if worktree_relative(ctx, &ctx.dir.join(file)).as_deref() != Some(thrown.file.as_str()) {
        return None;
    }
    let source = std::fs::read_to_string(ctx.dir.join(file)).ok()?;
    let (line, column) = super::parse::import_binding(&source, file, name)?;
    Some(Diagnostic {
        file: thrown.file.clone(),
        line,
        column: Some(column),
        message: format!("{}, thrown at {}", thrown.message, thrown.at()),
        names: vec![name.to_string()],
    })
}

/// `path:line:col - error TSnnnn: message` lines inside the worktree; `has no exported member
/// 'x'` names the one import that fails.
fn typescript_diagnostics(ctx: &RunCtx, message: &str) -> Vec<Diagnostic> {
    static TS: OnceLock<Option<Regex>> = OnceLock::new();
    static MEMBER: OnceLock<Option<Regex>> = OnceLock::new();
    let (Some(ts), Some(member)) = (
        TS.get_or_init(|| {
            Regex::new(r"(?m)^\s*(\S+\.(?:[cm]?[jt]sx?)):(\d+):(\d+) - error (TS\d+: .*)$").ok()
        })
        .as_ref(),
        MEMBER
            .get_or_init(|| Regex::new(r"has no exported member(?: named)? '([^']+)'").ok())
            .as_ref(),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for c in ts.captures_iter(message) {
        let path = Path::new(&c[1]);
        let abs = if path.is_absolute() {
            path.to_path_buf()
        } else {
            ctx.dir.join(path)
        };
        if abs.components().any(|p| p.as_os_str() == "node_modules") {
            continue;
        }
        let (Some(rel), Ok(line), Ok(column)) = (
            worktree_relative(ctx, &abs),
            c[2].parse::<u32>(),
            c[3].parse::<u32>(),
        ) else {
            continue;
        };
        let text: String = c[4].chars().take(200).collect();
        out.push(Diagnostic {
            file: rel,
            line,
            column: Some(column),
            names: member
                .captures(&text)
                .map(|m| vec![m[1].to_string()])
                .unwrap_or_default(),
            message: text,
        });
    }
    out
}

pub(super) fn load_diagnostic(ctx: &RunCtx, file: &str, message: &str) -> Option<Diagnostic> {
    static BABEL: OnceLock<Option<Regex>> = OnceLock::new();
    static FRAME: OnceLock<Option<Regex>> = OnceLock::new();
    static MISSING: OnceLock<Option<Regex>> = OnceLock::new();
    let babel = BABEL
        .get_or_init(|| Regex::new(r"SyntaxError: (/\S+?): .*\((\d+):(\d+)\)").ok())
        .as_ref()?;
    let frame = FRAME
        .get_or_init(|| {
            Regex::new(
                r#"(?m)(?:^|[\s'"(\[])(At file: )?((?:file://)?/?[A-Za-z0-9_@.+~-][A-Za-z0-9_@.+~/-]*\.(?:[cm]?[jt]sx?|vue|svelte)):(\d+):(\d+)"#,
            )
            .ok()
        })
        .as_ref()?;
    let missing = MISSING
        .get_or_init(|| Regex::new(r#"Cannot find (?:module|package) '([^']+)'"#).ok())
        .as_ref()?;
    static NO_EXPORT: OnceLock<Option<Regex>> = OnceLock::new();
    let no_export = NO_EXPORT
        .get_or_init(|| {
            Regex::new(
                r#"The requested module '([^']+)' does not provide an export named '([^']+)'"#,
            )
            .ok()
        })
        .as_ref()?;
    fn text<'h>(m: Option<regex::Match<'h>>) -> &'h str {
        m.map_or("", |m| m.as_str())
    }
    let number = |m: Option<regex::Match<'_>>| text(m).parse::<u32>().ok();
    let first_line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('●'))
        .unwrap_or("")
        .chars()
        .take(200)
        .collect::<String>();
    // Node's ESM linker names the one export that is missing; only that name of the import
    // statement fails.
    let names: Vec<String> = no_export
        .captures(message)
        .and_then(|c| c.get(2))
        .map(|m| vec![m.as_str().to_string()])
        .unwrap_or_default();
    let diagnostic = |rel: String, line: u32, column: Option<u32>| Diagnostic {
        file: rel,
        line,
        column,
        message: first_line.clone(),
        names: names.clone(),
    };
    let in_worktree = |path: &str, at_file: bool| -> Option<String> {
        let path = path.strip_prefix("file://").unwrap_or(path);
        let mut candidates = Vec::new();
        if let Some(rooted) = path.strip_prefix('/') {
            candidates.push(PathBuf::from(path));
            if at_file {
                candidates.push(ctx.dir.join(rooted));
            }
        } else {
            candidates.push(ctx.dir.join(path));
        }
        candidates.into_iter().find_map(|c| {
            if !c.is_file() || c.components().any(|p| p.as_os_str() == "node_modules") {
                return None;
            }
            worktree_relative(ctx, &c)
        })
    };
    if let Some(c) = babel.captures(message) {
        if let (Some(rel), Some(line)) = (in_worktree(text(c.get(1)), false), number(c.get(2))) {
            // Babel counts columns from 0.
            return Some(diagnostic(rel, line, number(c.get(3)).map(|n| n + 1)));
        }
    }
    for c in frame.captures_iter(message) {
        if let (Some(rel), Some(line)) = (
            in_worktree(text(c.get(2)), c.get(1).is_some()),
            number(c.get(3)),
        ) {
            return Some(diagnostic(rel, line, number(c.get(4))));
        }
    }
    let source = std::fs::read_to_string(ctx.dir.join(file)).ok()?;
    let rel = worktree_relative(ctx, &ctx.dir.join(file))?;
    // Node's ESM linker: `The requested module '../src/m.js' does not provide an export named
    // 'x'`, at the import of that module.
    let spec = missing
        .captures(message)
        .or_else(|| no_export.captures(message));
    if let Some(c) = spec {
        if let Some((line, column)) = super::parse::import_position(&source, file, text(c.get(1))) {
            return Some(diagnostic(rel, line, Some(column)));
        }
    }
    let unparsable = [
        "Failed to parse source",
        "SyntaxError",
        "Transform failed",
        "Unexpected token",
    ];
    if unparsable.iter().any(|m| message.contains(m)) {
        if let Some((line, column)) = super::parse::first_syntax_error(&source, file) {
            return Some(diagnostic(rel, line, Some(column)));
        }
    }
    None
}
