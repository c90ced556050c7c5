//! The run's outputs: where they go, checked before any work and again before they are written
//! (nothing in their way, each through no symlink), rendered from the result (phase 4),
//! written all or nothing (phase 6) and printed (phase 7).

use std::io::Write;
use std::path::{Path, PathBuf};

use super::signing::SignedForms;
use super::stop_if_interrupted;
use crate::attest::{self, SubjectArg};
use crate::cli::Format;
use crate::commands::pretty_json;
use crate::error::{Error, InputError};
use crate::evidence::EvidenceStore;
use crate::nofollow::{NewDirs, OutputPath, Refused};
use crate::report::{fixes, terminal, verify_md, Outputs, ResultDocument, RunResult};

/// How the terminal text is written: `--format`, and colour (`--color`, see [`crate::colour`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Terminal {
    pub format: Format,
    pub colour: bool,
}

/// What the statement says beside the result: the evidence records it cites, the further
/// subjects, the SHA-256 of head's commit object.
pub(super) struct StatementInputs<'a> {
    pub evidence_records: &'a [String],
    /// What the claim was read from ([`super::policy::policy`]).
    pub policy: crate::format::statement::Policy,
    pub subjects: &'a [SubjectArg],
    pub head_object_sha256: &'a str,
}

/// The outputs, each written through no symlink ([`OutputPath`]).
pub(super) struct Paths {
    pub vsa: OutputPath,
    pub fixes: OutputPath,
    pub report: OutputPath,
    pub evidence: OutputPath,
}

/// The rendered outputs of one run, byte for byte as they are written.
pub(super) struct Documents {
    pub fixes: Vec<u8>,
    pub verify_md: String,
    pub statement: Vec<u8>,
    /// `{"result": …, "fixes": …}`: `--result-out`, and the terminal text of `--format json`.
    pub result_json: Vec<u8>,
    pub terminal: String,
}

/// Phase 4 (pure): the documents of one result, as they are written and printed.
pub(super) fn render(
    result: &RunResult,
    inputs: &StatementInputs<'_>,
    terminal: Terminal,
    footer: &Outputs,
) -> Result<Documents, Error> {
    let packet = fixes::packet(result);
    let statement = attest::statement(
        result,
        inputs.evidence_records,
        inputs.subjects,
        inputs.head_object_sha256,
        inputs.policy.clone(),
    );
    let statement = attest::statement_bytes(&statement).map_err(Error::crash)?;
    let fixes = pretty_json(&packet)?;
    let mut result_json = ResultDocument::new(result, &packet)
        .to_json()
        .map_err(Error::crash)?
        .into_bytes();
    result_json.push(b'\n');
    let terminal = match terminal.format {
        Format::Json => String::from_utf8_lossy(&result_json).into_owned(),
        Format::Human => {
            // The terminal is read where the user stands, so its footer names the outputs from
            // the current directory; the documents keep them relative to the repository, from
            // where the Action resolves them.
            let mut shown = result.clone();
            shown.outputs = footer.clone();
            terminal::render_at(&shown, terminal.colour, terminal::width())
        }
    };
    Ok(Documents {
        verify_md: verify_md::render(result, &packet),
        fixes,
        statement,
        result_json,
        terminal,
    })
}

/// Phase 6, all or nothing: every document is staged beside its place, then every evidence
/// item the store lacks, before anything is renamed into place; an interruption or a failure
/// before the renames removes what was staged, and the directories made for it. Every output
/// is checked again first: the floor ran the change's code, which may have put a symlink where
/// an output goes since the input checks; then nothing at all is written.
pub(super) fn write(
    paths: &Paths,
    result_out: Option<&OutputPath>,
    store: &EvidenceStore,
    docs: &Documents,
    signed: &SignedForms,
) -> Result<(), Error> {
    let dsse_path = signed_path(&paths.vsa, "dsse.json");
    let bundle_path = signed_path(&paths.vsa, "sigstore.json");
    let places = outputs(paths, &dsse_path, &bundle_path, result_out);
    for (path, flag) in &places {
        path.check().map_err(|r| refused(&r, flag))?;
    }
    crate::evidence::check_store(&paths.evidence).map_err(|r| refused(&r, "--evidence-dir"))?;
    let evidence_item = paths.evidence.path().join("sha256").join("item");
    let new_dirs = NewDirs::of(
        places
            .iter()
            .map(|(p, _)| p.path())
            .chain([evidence_item.as_path()]),
    );
    let forms = (&dsse_path, &bundle_path);
    let written = write_staged(paths, result_out, store, docs, signed, forms);
    if written.is_err() {
        new_dirs.remove();
    }
    written
}

/// [`write`]'s staging and renames.
fn write_staged(
    paths: &Paths,
    result_out: Option<&OutputPath>,
    store: &EvidenceStore,
    docs: &Documents,
    (dsse_bytes, bundle_bytes): &SignedForms,
    (dsse_path, bundle_path): (&OutputPath, &OutputPath),
) -> Result<(), Error> {
    let mut all: Vec<(&OutputPath, &[u8], &str)> = vec![
        (&paths.vsa, &docs.statement, "--vsa-out"),
        (&paths.fixes, &docs.fixes, "--fixes-out"),
        (&paths.report, docs.verify_md.as_bytes(), "--report-out"),
    ];
    if let Some(b) = dsse_bytes {
        all.push((dsse_path, b, "--vsa-out"));
    }
    if let Some(p) = result_out {
        all.push((p, &docs.result_json, "--result-out"));
    }
    if let Some(b) = bundle_bytes {
        all.push((bundle_path, b, "--vsa-out"));
    }
    let mut staged = Vec::new();
    for (path, bytes, flag) in all {
        stop_if_interrupted()?;
        staged.push((
            flag,
            path.stage(bytes).map_err(|e| e.into_error(Some(flag)))?,
        ));
    }
    let items = store
        .stage(&paths.evidence, &mut crate::process::interrupted)
        .map_err(|e| e.into_error(Some("--evidence-dir")))?
        .ok_or(Error::Interrupted)?;
    // The last point an interruption stops the run: from here the renames complete.
    stop_if_interrupted()?;
    let mut renamed: Vec<PathBuf> = Vec::new();
    let commit = || -> Result<(), Error> {
        for item in items {
            let at = item.path().to_path_buf();
            item.commit()
                .map_err(|e| e.into_error(Some("--evidence-dir")))?;
            renamed.push(at);
        }
        for (flag, tmp) in staged {
            tmp.commit().map_err(|e| e.into_error(Some(flag)))?;
        }
        Ok(())
    };
    if let Err(e) = commit() {
        // A rename that fails (the file system went away) takes back the evidence items this
        // run added, so that nothing is left that no document cites.
        for at in renamed {
            let _ = std::fs::remove_file(at);
        }
        return Err(e);
    }
    // A signed form left by an earlier run must not stand beside this run's statement.
    for (path, written) in [
        (dsse_path, dsse_bytes.is_some()),
        (bundle_path, bundle_bytes.is_some()),
    ] {
        let there = std::fs::symlink_metadata(path.path()).is_ok_and(|m| m.is_file());
        if !written && there {
            std::fs::remove_file(path.path()).map_err(|e| {
                Error::crash(format!("cannot remove {}: {e}", path.path().display()))
            })?;
        }
    }
    Ok(())
}

/// Every output file a run may write or remove, with the flag that names it.
fn outputs<'a>(
    paths: &'a Paths,
    dsse: &'a OutputPath,
    bundle: &'a OutputPath,
    result_out: Option<&'a OutputPath>,
) -> Vec<(&'a OutputPath, &'static str)> {
    let mut all = vec![
        (&paths.vsa, "--vsa-out"),
        (dsse, "--vsa-out"),
        (bundle, "--vsa-out"),
        (&paths.fixes, "--fixes-out"),
        (&paths.report, "--report-out"),
    ];
    if let Some(r) = result_out {
        all.push((r, "--result-out"));
    }
    all
}

/// An output in the way (a symlink, a file where a directory goes): an input error that
/// names it and says how to clear it.
fn refused(r: &Refused, flag: &str) -> Error {
    Error::input(r.input_error(flag))
}

/// Phase 7: the terminal text on stdout.
pub(super) fn print(docs: &Documents) {
    let _ = std::io::stdout().write_all(docs.terminal.as_bytes());
}

/// `claim-check.vsa.json` → `claim-check.vsa.<suffix>`.
fn signed_path(vsa: &OutputPath, suffix: &str) -> OutputPath {
    let name = vsa
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    vsa.sibling(&format!("{stem}.{suffix}"))
}

/// Every output can be written: nothing is in its way (no symlink where it goes or on a
/// directory on the way, the evidence store's items regular files: [`OutputPath::check`]), and
/// its nearest existing ancestor is a directory we can create files in (checked with an
/// anonymous file that leaves no trace). Checked before any work so that an output that cannot
/// be written is an input error, not a half-written run.
pub(super) fn check_writable(paths: &Paths, result_out: Option<&OutputPath>) -> Result<(), Error> {
    let dsse = signed_path(&paths.vsa, "dsse.json");
    let bundle = signed_path(&paths.vsa, "sigstore.json");
    let mut all: Vec<(&OutputPath, &str, bool)> = outputs(paths, &dsse, &bundle, result_out)
        .into_iter()
        .map(|(p, flag)| (p, flag, false))
        .collect();
    all.push((&paths.evidence, "--evidence-dir", true));
    for (out, flag, is_dir) in all {
        let path = out.path();
        let meta = std::fs::symlink_metadata(path).ok();
        if meta
            .as_ref()
            .is_some_and(|m| !m.file_type().is_symlink() && m.is_dir() != is_dir)
        {
            return Err(Error::input(
                InputError::new(format!(
                    "{flag} {} is a {}",
                    path.display(),
                    if is_dir {
                        "file, not a directory"
                    } else {
                        "directory, not a file"
                    }
                ))
                .help(format!("pass another path with {flag}")),
            ));
        }
        out.check().map_err(|r| refused(&r, flag))?;
        let mut dir = if is_dir {
            path
        } else {
            path.parent().unwrap_or(Path::new("."))
        };
        while !dir.exists() {
            dir = dir.parent().unwrap_or(Path::new("/"));
        }
        let writable = dir.is_dir() && tempfile::tempfile_in(dir).is_ok();
        if !writable {
            return Err(Error::input(
                InputError::new(format!(
                    "cannot write {} ({flag}): {} is not a writable directory",
                    path.display(),
                    dir.display()
                ))
                .help(format!("pass a writable path with {flag}")),
            ));
        }
    }
    crate::evidence::check_store(&paths.evidence).map_err(|r| refused(&r, "--evidence-dir"))
}

/// The outputs as the terminal's footer names them: paths that exist from the current
/// directory (relative to it, up to two `../`, else absolute).
pub(super) fn footer_outputs(paths: &Paths) -> Outputs {
    let cwd = std::env::current_dir().ok();
    let shown = |p: &Path| match &cwd {
        Some(cwd) => from_dir(p, cwd),
        None => p.display().to_string(),
    };
    Outputs {
        vsa: shown(paths.vsa.path()),
        fixes: shown(paths.fixes.path()),
        report: shown(paths.report.path()),
        evidence: shown(paths.evidence.path()),
    }
}

/// `path` relative to `dir`, both compared as the file system resolves them (a symlinked temp
/// directory, `..` in a flag); the path as given when they share no root.
pub(super) fn from_dir(path: &Path, dir: &Path) -> String {
    // The output is not written yet (nor, maybe, its directory): resolve the nearest ancestor
    // that exists and keep the rest as given.
    let resolve = |p: &Path| -> Option<PathBuf> {
        let existing = p.ancestors().find(|a| a.exists())?;
        let rest = p.strip_prefix(existing).ok()?;
        Some(std::fs::canonicalize(existing).ok()?.join(rest))
    };
    let (Some(target), Ok(base)) = (resolve(path), std::fs::canonicalize(dir)) else {
        return path.display().to_string();
    };
    let target: Vec<_> = target.components().collect();
    let base: Vec<_> = base.components().collect();
    let common = target.iter().zip(&base).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return path.display().to_string();
    }
    // Far away (a temp directory, another tree), the absolute path reads better than `../../..`.
    if base.len() - common > 2 {
        return target.iter().collect::<PathBuf>().display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in common..base.len() {
        rel.push("..");
    }
    for c in &target[common..] {
        rel.push(c);
    }
    rel.display().to_string()
}
