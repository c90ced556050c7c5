//! `shipmoor replay ATTESTATION`: the six steps of [`crate::replay`], with step 6 (re-running
//! the floor) wired to a repository here. Exit 0 valid, 1 invalid, 2 usage, 3 crash.

use std::path::{Path, PathBuf};

use crate::attest::keys;
use crate::attest::verify::Attestation;
use crate::attest::SubjectArg;
use crate::cli::ReplayArgs;
use crate::error::{Error, InputError};
use crate::evidence::sha256_hex;
use crate::git::{CommitId, CommitTrees, Git};
#[cfg(feature = "claim-check")]
use crate::replay::Invalid;
use crate::replay::{self, Expectations, SignatureCheck};
// What `--rerun` uses (the floor again: the default feature `claim-check`).
#[cfg(feature = "claim-check")]
use {
    crate::acceptance::{self, AcceptanceState},
    crate::clock::Clock,
    crate::evidence::EvidenceStore,
    crate::floor::{self, FloorInput},
    crate::format::statement::{Extension, Statement},
    std::time::Duration,
};

/// The largest attestation read (a statement, an envelope or a bundle): 64 MiB. A statement
/// cites its evidence by digest, so even a run of thousands of criteria is megabytes.
pub const ATTESTATION_LIMIT: u64 = 64 << 20;

/// The largest key file read: 1 MiB (a PEM key is hundreds of bytes).
pub const KEY_LIMIT: u64 = 1 << 20;

/// `--key`: a readable regular file holding a public key replay can verify with.
fn check_key(path: &std::path::Path) -> Result<(), Error> {
    let bytes = crate::nofollow::read_named(path, KEY_LIMIT)
        .map_err(|e| Error::input(crate::nofollow::named_input_error(path, "the key", &e)))?;
    // A private key is named as one, with the command that writes its public half.
    keys::refuse_private_key(path)?;
    let pem = String::from_utf8_lossy(&bytes);
    crate::attest::keys::load_verifying_key(&pem).map_err(|e| {
        Error::input(
            InputError::new(format!("the key: {e}"))
                .in_file(path.display().to_string())
                .help("pass the public key (PEM, SubjectPublicKeyInfo: P-256 or Ed25519) that signed the attestation, as `shipmoor keygen` writes it (.pub.pem)"),
        )
    })?;
    Ok(())
}

pub fn run(args: ReplayArgs) -> Result<i32, Error> {
    #[cfg(not(feature = "claim-check"))]
    if args.rerun {
        return Err(super::verifier_only("replay --rerun"));
    }
    let bytes = crate::nofollow::read_named(&args.attestation, ATTESTATION_LIMIT).map_err(|e| {
        Error::input(crate::nofollow::named_input_error(
            &args.attestation,
            "the attestation",
            &e,
        ))
    })?;
    let s = &args.signature;
    // The key is the user's input, checked before any verification: a key that cannot be
    // read or is no public key is a usage error, not an invalid attestation.
    if let Some(key) = &s.key {
        check_key(key)?;
    }
    let identity = match (&s.certificate_identity, &s.certificate_oidc_issuer) {
        (Some(i), Some(o)) => Some((i.clone(), o.clone())),
        (None, None) => None,
        _ => {
            return Err(Error::input(
                InputError::new("--certificate-identity and --certificate-oidc-issuer go together")
                    .help("pass both, or verify with --key"),
            ))
        }
    };
    if s.key.is_some() && identity.is_some() {
        return Err(Error::input(
            InputError::new("--key and a certificate identity exclude each other").help(
                "verify a keyed attestation with --key, a keyless one with the identity flags",
            ),
        ));
    }
    require_signer(&bytes, s.key.is_some(), identity.is_some())
        .map_err(|e| Error::input(e.in_file(args.attestation.display().to_string())))?;
    let subjects = args
        .subjects
        .iter()
        .map(|x| SubjectArg::parse(x))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| {
            Error::input(
                InputError::new(format!("--subject {m}"))
                    .help("pass --subject NAME=sha256:<64 hex digits>"),
            )
        })?;
    let git = Git::discover(&args.repo).ok();
    let commit = match (&args.commit, &git) {
        // A full id is taken as given: the attestation may be replayed outside its repository.
        (Some(c), _) if CommitId::parse(c).is_some() => Some(c.clone()),
        (Some(c), Some(g)) => Some(g.resolve(c, "--commit")?.to_string()),
        (Some(c), None) => Some(
            CommitId::parse(c)
                .ok_or_else(|| Error::input(InputError::new(format!("--commit `{c}` is not a full commit id")).help("pass the 40-hex commit id, or run inside the repository")))?
                .to_string(),
        ),
        (None, Some(g)) => Some(g.resolve("HEAD", "HEAD")?.to_string()),
        // Where git itself is missing (the verifier image holds none), say so: the directory
        // may well be a repository.
        (None, None) if !crate::git::can_run() => {
            return Err(Error::input(
                InputError::new("no commit to check the attestation against: no --commit, and git cannot run here to read the repository's HEAD")
                    .help("pass --commit SHA (the full commit id), or replay where git is installed"),
            ))
        }
        (None, None) => {
            return Err(Error::input(
                InputError::new("no commit to check the attestation against: not in a git repository and no --commit")
                    .help("pass --commit SHA, or --repo DIR"),
            ))
        }
    };
    let commit_sha256 = match (&commit, &git) {
        (Some(c), Some(g)) => g.commit_object(c.as_str())?.map(|o| sha256_hex(&o)),
        _ => None,
    };
    let evidence = args
        .evidence
        .clone()
        .unwrap_or_else(|| default_evidence_dir(&args.attestation, git.as_ref()));
    let sig = SignatureCheck {
        key: s.key.clone(),
        identity,
        trusted_root: s.trusted_root.clone(),
        allow_unsigned: args.allow_unsigned,
    };
    let expect = Expectations {
        commit,
        commit_sha256,
        subjects,
    };
    // The floor a re-run executes is the change's code, sandboxed as claim-check's own.
    #[cfg(feature = "claim-check")]
    let confinement = match (args.rerun, &git) {
        (true, Some(g)) => {
            let mut extra = super::confinement::Extra::default();
            extra.hide.push(evidence.clone());
            let temp = std::env::temp_dir();
            let mut c = super::confinement::confinement(
                args.sandbox.sandbox.mode(),
                Some(g),
                Some(&temp),
                extra,
            )?;
            c.write.extend(
                args.sandbox
                    .sandbox_write
                    .iter()
                    .map(|d| crate::sandbox::canonical(d)),
            );
            c
        }
        _ => crate::sandbox::Confinement::off(),
    };
    #[cfg(feature = "claim-check")]
    let rerun_fn = |st: &Statement| rerun(st, git.as_ref(), &confinement);
    #[cfg(feature = "claim-check")]
    let rerun_step = args.rerun.then_some(&rerun_fn as replay::Rerun<'_>);
    #[cfg(not(feature = "claim-check"))]
    let rerun_step = None;
    let tree = git.as_ref().map(GitTree::new);
    let report = replay::replay_audited(
        &bytes,
        &args.attestation.display().to_string(),
        &sig,
        &expect,
        &evidence,
        rerun_step,
        tree.as_ref().map(|t| t as &dyn replay::HeadTree),
    );
    super::print_result(args.format, &report, replay::render)?;
    Ok(if report.valid { 0 } else { 1 })
}

/// An attestation that the command line gives nothing to verify with is a usage error, not an
/// INVALID verdict: the file may be sound, only the question is incomplete. The form decides
/// what is needed (a DSSE envelope or a keyed bundle: `--key`; a Sigstore bundle: `--key` or
/// the identity flags). A file that does not parse, and an unsigned statement, are left to
/// the steps: those are verdicts about the file.
fn require_signer(bytes: &[u8], key: bool, identity: bool) -> Result<(), InputError> {
    let Ok(attestation) = Attestation::parse(bytes) else {
        return Ok(());
    };
    let needs_key = attestation.is_envelope() || attestation.is_keyed_bundle_without_log();
    let missing = if attestation.is_unsigned() || key {
        None
    } else if needs_key {
        Some((
            if attestation.is_envelope() {
                "a DSSE envelope is verified with the signer's public key, and no --key was given"
            } else {
                "this bundle is signed with a key and is verified with its public key, and no --key was given"
            }
            .to_string(),
            "pass `--key KEY.pub`; from the signing key: `openssl pkey -in KEY -pubout -out KEY.pub`",
        ))
    } else if !identity {
        Some((
            "a keyless Sigstore bundle is verified with the signer's identity, and none was given".to_string(),
            "pass `--certificate-identity ID --certificate-oidc-issuer URL` (and `--trusted-root FILE` offline), or `--key KEY.pub` for a bundle signed with a key; from a signing key: `openssl pkey -in KEY -pubout -out KEY.pub`",
        ))
    } else {
        None
    };
    match missing {
        Some((message, help)) => Err(InputError::new(message).help(help)),
        None => Ok(()),
    }
}

/// The repository's commits, for the citation audit of step 4: each commit's tree read as the
/// judge stage reads head ([`crate::git::HeadTree`]), so replay counts as "a file at head"
/// exactly what the run did.
struct GitTree<'a>(CommitTrees<'a>);

impl<'a> GitTree<'a> {
    fn new(git: &'a Git) -> GitTree<'a> {
        GitTree(CommitTrees::new(git))
    }
}

impl replay::HeadTree for GitTree<'_> {
    fn has_commit(&self, commit: &str) -> bool {
        self.0.has_commit(commit)
    }

    fn read(&self, commit: &str, path: &str) -> Option<String> {
        self.0.text(commit, path)
    }
}

/// Where claim-check wrote the evidence: beside the attestation (`.shipmoor/claim-check.vsa.json`
/// → `.shipmoor/evidence`, the statement's `evidence/sha256/…` URIs read from its directory),
/// else, for a VSA written elsewhere with `--vsa-out`, the repository's default store
/// `.shipmoor/evidence`. Neither there: the one beside, which step 4 then names.
fn default_evidence_dir(attestation: &Path, git: Option<&Git>) -> PathBuf {
    let beside = attestation
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join("evidence");
    if beside.is_dir() {
        return beside;
    }
    match git.map(|g| g.root().join(".shipmoor/evidence")) {
        Some(store) if store.is_dir() => store,
        _ => beside,
    }
}

/// Step 6: the floor again at the recorded commits, with the acceptance set the attestation
/// names (its digest must match), compared criterion by criterion and test by test.
#[cfg(feature = "claim-check")]
fn rerun(
    st: &Statement,
    git: Option<&Git>,
    confinement: &crate::sandbox::Confinement,
) -> Result<String, Invalid> {
    let git = git.ok_or("--rerun needs the repository (--repo)")?;
    let ext = st.extension();
    // From format 3 the claim is the extension's `acceptance` (its files, and its digest); the
    // formats before name one file as `policy`, with its bytes' digest.
    let (path, want) = if ext.format_version >= 3 {
        (ext.acceptance.path.as_str(), ext.acceptance.sha256.as_str())
    } else {
        (
            st.predicate.policy.uri.as_str(),
            st.predicate.policy.digest.sha256.as_deref().unwrap_or(""),
        )
    };
    let base = git
        .resolve(ext.base.as_str(), "base")
        .map_err(|e| e.to_string())?;
    let head = git
        .resolve(ext.head.as_str(), "head")
        .map_err(|e| e.to_string())?;
    let format = ext.format_version;
    let explicit = ext.acceptance.source.as_deref() == Some("explicit");
    let (set, acceptance_path) = if format >= 3 {
        (
            rebuild_claim(ext, git, &base, &head, path, want)?,
            // As claim-check: an explicit file's own settings are checked by its path.
            (explicit && !Path::new(path).is_absolute()).then(|| path.to_string()),
        )
    } else {
        (legacy_set(ext, git, path, want)?, Some(path.to_string()))
    };
    let runners = if set.runners.is_empty() {
        floor::detect_runners(git, &head).map_err(|e| e.to_string())?
    } else {
        set.runners.clone()
    };
    floor::check_tools(&runners, git.root(), path, confinement).map_err(|e| e.to_string())?;
    let temp = tempfile::Builder::new()
        .prefix("shipmoor-replay-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let clock = Clock::System;
    let quiet = |_: &str| {};
    let input = FloorInput {
        git,
        acceptance: &set,
        runners,
        base,
        head,
        runs: 1,
        timeout: Duration::from_secs(1800),
        temp_root: temp.path().to_path_buf(),
        clock: &clock,
        progress: &quiet,
        live: None,
        acceptance_path,
        shard: None,
        base_cache: None,
        confinement,
        registry: &floor::runners::registry::Registry::builtin(),
    };
    let mut store = EvidenceStore::new();
    let report = floor::run(&input, &mut store).map_err(|e| e.to_string())?;
    let recorded = &ext.dispositions;
    let mut differences = Vec::new();
    for (d, now) in recorded.iter().zip(report.entries.iter().map(|e| &e.floor)) {
        let id = &d.id;
        let was = d.floor.result;
        if was != now.result {
            differences.push(format!(
                "{id}: recorded {}, now {}",
                was.as_str(),
                now.result.as_str()
            ));
            continue;
        }
        for (t, n) in d.floor.tests.iter().zip(&now.tests) {
            for (side, was, is) in [("base", t.base, n.base), ("head", t.head, n.head)] {
                if was != is {
                    differences.push(format!(
                        "{id}: {} at {side}: recorded {was}, now {is}",
                        n.id
                    ));
                }
            }
        }
    }
    if recorded.len() != report.entries.len() {
        differences.push(format!(
            "{} criteria recorded, {} now",
            recorded.len(),
            report.entries.len()
        ));
    }
    if differences.is_empty() {
        Ok(format!(
            "the floor re-run at base and head gives the recorded outcomes for {}",
            match recorded.len() {
                1 => "the 1 criterion".to_string(),
                n => format!("all {n} criteria"),
            }
        ))
    } else {
        Err(Invalid::from(format!(
            "the floor re-run differs: {}",
            differences.join("; ")
        )))
    }
}

/// The acceptance set of a format 1 or 2 attestation: the one file its `policy` names, read from
/// the repository, whose bytes the digest covers.
#[cfg(feature = "claim-check")]
fn legacy_set(
    ext: &Extension,
    git: &Git,
    path: &str,
    want: &str,
) -> Result<acceptance::AcceptanceSet, Invalid> {
    let file = git.root().join(path);
    let bytes = std::fs::read(&file).map_err(|e| format!("the acceptance set {path}: {e}"))?;
    if sha256_hex(&bytes) != want {
        return Err(Invalid::from(format!(
            "the acceptance set {path} is not the one the attestation names (sha256 differs)"
        )));
    }
    let state = ext.acceptance.state;
    let text = String::from_utf8(bytes).map_err(|_| "the acceptance set is not UTF-8")?;
    let set = acceptance::parse::parse(&text, path, state, want.to_string()).map_err(|e| {
        format!(
            "the acceptance set: {}",
            e.first().map(|x| x.to_string()).unwrap_or_default()
        )
    })?;
    Ok(set)
}

/// The claim of a format 3 attestation, worked out again from git at the recorded commits the
/// way claim-check worked it out (what base..head adds or changes, the explicit file, or the
/// derived draft its dispositions carry); its digest must be the recorded `policy` digest.
#[cfg(feature = "claim-check")]
fn rebuild_claim(
    ext: &Extension,
    git: &Git,
    base: &CommitId,
    head: &CommitId,
    path: &str,
    want: &str,
) -> Result<acceptance::AcceptanceSet, Invalid> {
    use crate::acceptance::claim;
    let head_files = claim::Files::read(&claim::FileSource::Commit(git, head), true)
        .map_err(|e| e.to_string())?;
    let base_files = claim::Files::read(&claim::FileSource::Commit(git, base), false)
        .map_err(|e| e.to_string())?;
    let source = ext.acceptance.source.as_deref().unwrap_or("");
    let c = match source {
        "files" => claim::compare(&head_files, Some(&base_files)),
        "explicit" => {
            let file = if Path::new(path).is_absolute() {
                PathBuf::from(path)
            } else {
                git.root().join(path)
            };
            let located = acceptance::Located {
                display_path: path.to_string(),
                state: if path.ends_with(".draft") {
                    AcceptanceState::Draft
                } else {
                    AcceptanceState::Committed
                },
                path: file,
            };
            let set = acceptance::load(&located)
                .map_err(|e| format!("the acceptance set {path}: {e}"))?;
            claim::explicit(set, &head_files, Some(&base_files))
        }
        "derived" => {
            // A derived draft's criteria are plain tag-bound ones: the dispositions carry them.
            let criteria = ext
                .dispositions
                .iter()
                .filter(|d| d.file.as_deref() == Some(path))
                .map(|d| {
                    let id = d.id.clone();
                    acceptance::Criterion {
                        tag: acceptance::tag_for(&id),
                        id,
                        ac: d.ac.clone(),
                        required: d.required,
                        lane: acceptance::Lane::Floor,
                        check: None,
                        line: 0,
                        confidence: None,
                        source: None,
                    }
                })
                .collect();
            claim::derived(criteria, path, &head_files, Some(&base_files))
        }
        other => return Err(Invalid::from(format!("unknown claim source {other:?}"))),
    };
    if c.set.sha256 != want {
        return Err(Invalid::from(format!(
            "the claim of base..head ({source}: {path}) is not the one the attestation names (its digest differs)"
        )));
    }
    Ok(c.set)
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::GitTree;
    use crate::format::judge::Citation;
    use crate::git::Git;
    use crate::judge::audit::check_citation;
    use crate::judge::CitationCheck;
    use crate::replay::HeadTree;

    fn git(dir: &std::path::Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(dir)
            .env_remove("GIT_DIR")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// The citation audit over a real repository reads the recorded head, not the checkout:
    /// a file changed or removed since still resolves as it was at that commit, and a
    /// directory is no file.
    #[test]
    fn the_head_tree_is_read_at_the_recorded_commit() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(
            root.join("src/refund.py"),
            "def refund(order):\n    return order\n",
        )
        .unwrap();
        // A symlink whose target text holds the quote: git stores it as a blob, but the run's
        // audit counts only regular files as files at head, and so must replay.
        std::os::unix::fs::symlink("return order", root.join("src/link.py")).unwrap();
        git(root, &["add", "."]);
        git(root, &["commit", "-qm", "head"]);
        let head = git(root, &["rev-parse", "HEAD"]);
        std::fs::remove_file(root.join("src/refund.py")).unwrap();
        git(root, &["commit", "-qam", "later"]);

        let repo = Git::discover(root).unwrap();
        let tree = GitTree::new(&repo);
        assert!(tree.has_commit(&head));
        assert!(!tree.has_commit(&"0".repeat(40)));
        let cite = |path: &str, quote: &str| Citation {
            path: path.into(),
            line: 2,
            quote: quote.into(),
        };
        let read = |p: &str| tree.read(&head, p);
        assert_eq!(
            check_citation(&cite("src/refund.py", "return   order"), &read),
            CitationCheck::Resolved
        );
        assert_eq!(
            check_citation(&cite("src/refund.py", "audit.write"), &read),
            CitationCheck::QuoteNotFound
        );
        assert_eq!(
            check_citation(&cite("src", "return order"), &read),
            CitationCheck::NoSuchFile
        );
        assert_eq!(
            check_citation(&cite("src/nope.py", "return order"), &read),
            CitationCheck::NoSuchFile
        );
        let at_line_one = Citation {
            line: 1,
            ..cite("src/link.py", "return order")
        };
        assert_eq!(
            check_citation(&at_line_one, &read),
            CitationCheck::NoSuchFile
        );
    }
}
