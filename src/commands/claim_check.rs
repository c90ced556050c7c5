//! `shipmoor claim-check`: load intent, bind, floor, fuse, write outputs.
//!
//! Everything that can be wrong with the input is checked before any work starts (flags,
//! repository, commits, a dirty tree, the acceptance set, the runners' tools), so an input
//! error writes nothing. Outputs are rendered in memory and written at the end, each atomically.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::acceptance::{self, claim, AcceptanceSet};
use crate::attest::{self, Subject};
use crate::cli::{ClaimCheckArgs, Format, Mode, Sign};
use crate::clock::{rfc3339, Clock};
use crate::error::{Error, InputError};
use crate::evidence::EvidenceStore;
use crate::floor::{self, FloorInput};
use crate::git::{CommitId, Git};
use crate::report::{
    self, fixes, terminal, verify_md, AcceptanceInfo, InheritedCriterion, Outputs, ResultDocument,
    RunResult, Signing, SigningState,
};
use crate::verdict;

struct Paths {
    vsa: PathBuf,
    fixes: PathBuf,
    report: PathBuf,
    evidence: PathBuf,
}

pub fn run(args: ClaimCheckArgs) -> Result<i32, Error> {
    let clock = Clock::from_env(args.current_time.as_deref()).map_err(|m| {
        Error::input(
            InputError::new(m)
                .help("give seconds since 1970 (SOURCE_DATE_EPOCH) or an RFC 3339 time"),
        )
    })?;
    let started = clock.now();
    let stopwatch = clock.stopwatch();
    let quiet = args.quiet;
    let progress = move |msg: &str| {
        if !quiet {
            let _ = writeln!(
                std::io::stderr(),
                "claim-check: {}",
                crate::report::terminal::one_line(msg)
            );
        }
    };

    // Input checks, all before any work.
    let git = Git::discover(&args.repo)?;
    let subjects = args
        .subjects
        .iter()
        .map(|s| Subject::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| {
            Error::input(
                InputError::new(format!("--subject {m}"))
                    .help("pass --subject NAME=sha256:<64 hex digits>"),
            )
        })?;
    if args.mode == Mode::Full {
        return Err(Error::input(
            InputError::new("--mode full needs the judge, which this version does not ship").help(
                "run with --mode fast (the default): judgment criteria are routed to a person",
            ),
        ));
    }
    let signing_key = match (args.sign, &args.key) {
        (Sign::Key, Some(path)) => Some(load_key(path)?),
        (Sign::Key, None) => {
            return Err(Error::input(
                InputError::new("--sign key needs --key PATH (a PKCS#8 PEM private key)")
                    .help("pass --key, or sign keyless in CI with --sign keyless"),
            ))
        }
        (_, Some(_)) => {
            return Err(Error::input(
                InputError::new("--key is used only with --sign key")
                    .help("add --sign key, or drop --key"),
            ))
        }
        _ => None,
    };
    let head = match (&args.head, pull_request_sha("head")) {
        (Some(h), _) => git.resolve(h, "--head")?,
        (None, Some(sha)) => git.resolve(&sha, "the pull request's head")?,
        (None, None) => git.resolve("HEAD", "HEAD")?,
    };
    let base = match &args.base {
        Some(b) => git.resolve(b, "--base")?,
        None => default_base(&git, &head)?,
    };
    if base == head {
        return Err(Error::input(
            InputError::new(format!(
                "base and head are the same commit ({})",
                head.short()
            ))
            .help("pass the commit the change starts from with --base"),
        ));
    }
    if !git.is_ancestor(&base, &head)? {
        return Err(Error::input(
            InputError::new(format!(
                "--base {} is not an ancestor of --head {}",
                base.short(),
                head.short()
            ))
            .help(
                "pass the commit the change branched from (for example `git merge-base main HEAD`)",
            ),
        ));
    }
    // The claim's file, when named explicitly; otherwise the claim is read from git below.
    let located = match &args.acceptance {
        Some(p) => Some(acceptance::locate(git.root(), Some(p))?),
        None => None,
    };
    let head_is_checkout = git.resolve("HEAD", "HEAD").ok().as_ref() == Some(&head);
    if head_is_checkout {
        let acceptance_rel = located.as_ref().and_then(|l| {
            l.path
                .strip_prefix(git.root())
                .ok()
                .map(|p| p.display().to_string())
        });
        let dirty = git
            .dirty_tracked(|p| floor::is_output_path(p) || acceptance_rel.as_deref() == Some(p))?;
        if !dirty.is_empty() {
            let shown: Vec<&str> = dirty.iter().take(5).map(|s| s.as_str()).collect();
            return Err(Error::input(
                InputError::new(format!(
                    "the working tree has uncommitted changes to tracked files: {}{}",
                    shown.join(", "),
                    if dirty.len() > 5 { format!(" and {} more", dirty.len() - 5) } else { String::new() }
                ))
                .help("claim-check checks committed code: commit or stash the changes (`git stash`), or pass --head"),
            ));
        }
    }
    let (claim, source) = load_claim(&args, &git, &base, &head, located.as_ref())?;
    let set = claim.set;
    // Where the runners in force were written, for messages about them.
    let runners_file = set
        .settings_files
        .get("runners")
        .cloned()
        .unwrap_or_else(|| set.display_path.clone());
    let runners = if set.runners.is_empty() {
        floor::detect_runners(&git, &head)?
    } else {
        set.runners.clone()
    };
    let needs_runner = !set.guard.is_empty()
        || !set.guarded_criteria().is_empty()
        || set.criteria.iter().any(floor::bind::needs_tests);
    if needs_runner {
        floor::check_tools(&runners, &runners_file)?;
        let mut missing = Vec::new();
        for r in runners.iter().filter(|r| r.root != ".") {
            let out = git.run([
                "cat-file",
                "-t",
                &format!("{}:{}", head, r.root.trim_end_matches('/')),
            ])?;
            if !out.ok || out.text() != "tree" {
                missing.push(
                    InputError::new(format!("runner root `{}` is not a directory at head {}", r.root, head.short()))
                        .at(runners_file.clone(), r.line, 1)
                        .help("set `root` to the directory of the runner's project, relative to the repository"),
                );
            }
        }
        if !missing.is_empty() {
            return Err(Error::Input(missing));
        }
    }
    let paths = output_paths(&args, git.root());
    check_writable(&paths)?;
    let temp_base = match &args.temp_dir {
        Some(d) => d.clone(),
        None => std::env::temp_dir(),
    };
    std::fs::create_dir_all(&temp_base).map_err(|e| {
        Error::input(
            InputError::new(format!(
                "cannot use {} for temporary files: {e}",
                temp_base.display()
            ))
            .help("pass a writable --temp-dir"),
        )
    })?;
    let temp = tempfile::Builder::new()
        .prefix("shipmoor-")
        .tempdir_in(&temp_base)
        .map_err(|e| Error::crash(format!("temporary directory: {e}")))?;

    // The floor.
    progress(&format!(
        "{} criteria from {} ({}); base {} · head {}",
        set.criteria.len(),
        set.display_path,
        set.state.as_str(),
        base.short(),
        head.short()
    ));
    if !set.inherited_criteria.is_empty() {
        progress(&format!(
            "{} criteria inherited from earlier changes ({})",
            set.inherited_criteria.len(),
            if set.guarded_criteria().is_empty() {
                "not checked"
            } else {
                "kept as regression guards"
            }
        ));
    }

    let mut store = EvidenceStore::new();
    let input = FloorInput {
        git: &git,
        acceptance: &set,
        runners,
        base: base.clone(),
        head: head.clone(),
        runs: args.runs,
        timeout: Duration::from_secs(args.timeout),
        temp_root: temp.path().to_path_buf(),
        clock: &clock,
        progress: &progress,
        // An explicit file's own settings are checked by path as before; the claim read from
        // git carries its settings edits itself (`settings_edits`).
        acceptance_path: located.as_ref().and_then(|l| {
            let p = l.path.canonicalize().ok()?;
            let root = git.root().canonicalize().ok()?;
            p.strip_prefix(root).ok().map(|r| r.display().to_string())
        }),
    };
    let mut floor_report = floor::run(&input, &mut store)?;
    drop(temp);
    // The pass-to-pass guard reports as one more required floor criterion.
    let mut set = set;
    if let Some(g) = floor_report.guard.take() {
        set.criteria
            .push(floor::guard_criterion(&set.guard_scope()));
        floor_report.criteria.push(g);
    }

    // How the statement will be signed: decided before the statement is written, since the
    // statement records it.
    let token = match args.sign {
        Sign::Keyless => attest::sigstore::ambient_token().map_err(|e| {
            Error::crash(format!("keyless signing: cannot get the OIDC token: {e}"))
        })?,
        _ => None,
    };
    let signing = match (args.sign, &signing_key, &token) {
        (Sign::Key, Some(k), _) => Signing {
            state: SigningState::Key,
            note: format!("signed with key {} ({})", k.keyid(), k.algorithm()),
        },
        (Sign::Keyless, _, Some(_)) => Signing {
            state: SigningState::Keyless,
            note: "signed keyless with Sigstore (Fulcio certificate, Rekor entry)".into(),
        },
        (Sign::Keyless, _, None) => Signing {
            state: SigningState::Unsigned,
            note: "UNSIGNED: --sign keyless found no OIDC identity (SIGSTORE_ID_TOKEN, or GitHub Actions with `id-token: write`; a pull request from a fork gets none): the attestation records the verdict but proves nothing about who produced it".into(),
        },
        _ => Signing {
            state: SigningState::Unsigned,
            note: "the attestation is unsigned (--sign none): it records the verdict but proves nothing about who produced it".into(),
        },
    };
    if args.sign == Sign::Keyless && token.is_none() && !quiet {
        let _ = writeln!(std::io::stderr(), "claim-check: warning: {}", signing.note);
    }

    // Fuse and report.
    let criteria = report::criteria_results(&set, &floor_report, &[], args.mode == Mode::Full);
    let inputs: Vec<_> = criteria.iter().map(|c| c.fusion_input()).collect();
    let fused = verdict::fuse(set.state, &inputs);
    let completed = clock.now();
    let result = RunResult {
        schema: report::RESULT_SCHEMA,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        policy: verdict::POLICY,
        mode: match args.mode {
            Mode::Fast => "fast".into(),
            Mode::Full => "full".into(),
        },
        verdict: fused.verdict,
        rule: fused.rule.label().to_string(),
        rule_reason: draft_reason(&fused, &set, &source),
        exit_code: fused.verdict.exit_code(),
        repository: git.repo_uri()?,
        base: base.to_string(),
        head: head.to_string(),
        acceptance: acceptance_info(&set, located.as_ref(), &source, git.root()),
        started_at: rfc3339(started),
        completed_at: rfc3339(completed),
        duration_seconds: stopwatch.elapsed().as_secs(),
        criteria,
        overlay: floor_report.overlay.clone(),
        overlay_spliced: floor_report.overlay_spliced.clone(),
        harness_changes: floor_report.harness.iter().map(|h| h.label()).collect(),
        runtime: floor_report.runtime.clone(),
        outputs: Outputs {
            vsa: shown_path(&paths.vsa, git.root()),
            fixes: shown_path(&paths.fixes, git.root()),
            report: shown_path(&paths.report, git.root()),
            evidence: shown_path(&paths.evidence, git.root()),
        },
        signing: signing.clone(),
    };
    let packet = fixes::packet(&result);
    let head_object = git.run(["cat-file", "commit", head.as_str()])?;
    if !head_object.ok {
        return Err(Error::crash(format!(
            "git cat-file commit {head}: {}",
            head_object.stderr
        )));
    }
    let statement = attest::statement(
        &result,
        store.records(),
        &subjects,
        &attest::commit_object_sha256(&head_object.stdout),
    );
    let vsa_bytes = attest::statement_bytes(&statement).map_err(Error::crash)?;
    let (dsse_bytes, bundle_bytes) = sign(
        &vsa_bytes,
        &signing,
        signing_key.as_ref(),
        token.as_deref(),
        &args,
    )?;
    let mut fixes_bytes = serde_json::to_vec_pretty(&packet).map_err(Error::crash)?;
    fixes_bytes.push(b'\n');
    let md = verify_md::render(&result, &packet);

    // Write: evidence first (what the others cite), then the documents, all staged beside
    // their places before any is renamed into place.
    let io = |what: &Path, e: std::io::Error| {
        Error::crash(format!("cannot write {}: {e}", what.display()))
    };
    store
        .commit(&paths.evidence)
        .map_err(|e| io(&paths.evidence, e))?;
    let dsse_path = signed_path(&paths.vsa, "dsse.json");
    let bundle_path = signed_path(&paths.vsa, "sigstore.json");
    let result_json = {
        let mut b = ResultDocument::new(&result, &packet)
            .to_json()
            .map_err(Error::crash)?
            .into_bytes();
        b.push(b'\n');
        b
    };
    let result_out = args.result_out.as_ref().map(|p| {
        if p.is_absolute() {
            p.clone()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        }
    });
    let mut docs: Vec<(&Path, &[u8])> = vec![
        (&paths.vsa, &vsa_bytes),
        (&paths.fixes, &fixes_bytes),
        (&paths.report, md.as_bytes()),
    ];
    if let Some(b) = &dsse_bytes {
        docs.push((&dsse_path, b));
    }
    if let Some(p) = &result_out {
        docs.push((p, &result_json));
    }
    if let Some(b) = &bundle_bytes {
        docs.push((&bundle_path, b));
    }
    let mut staged = Vec::new();
    for (path, bytes) in docs {
        staged.push((path, stage(path, bytes).map_err(|e| io(path, e))?));
    }
    for (path, tmp) in staged {
        tmp.persist(path).map_err(|e| io(path, e.error))?;
    }
    // A signed form left by an earlier run must not stand beside this run's statement.
    for (path, written) in [
        (&dsse_path, dsse_bytes.is_some()),
        (&bundle_path, bundle_bytes.is_some()),
    ] {
        if !written && path.exists() {
            std::fs::remove_file(path).map_err(|e| io(path, e))?;
        }
    }

    let mut out = std::io::stdout();
    match args.format {
        Format::Json => {
            let doc = ResultDocument::new(&result, &packet);
            let _ = writeln!(out, "{}", doc.to_json().map_err(Error::crash)?);
        }
        Format::Human => {
            let colour =
                out.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            let _ = write!(out, "{}", terminal::render(&result, colour));
        }
    }
    Ok(result.exit_code)
}

/// `claim-check.vsa.json` → `claim-check.vsa.<suffix>`.
fn signed_path(vsa: &Path, suffix: &str) -> PathBuf {
    let name = vsa
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".json").unwrap_or(&name);
    vsa.with_file_name(format!("{stem}.{suffix}"))
}

/// Loads the signing key, its password from `SHIPMOOR_KEY_PASSWORD` when it is encrypted.
fn load_key(path: &Path) -> Result<attest::keys::SigningKey, Error> {
    let pem = std::fs::read_to_string(path).map_err(|e| {
        Error::input(
            InputError::new(format!("cannot read the key: {e}"))
                .in_file(path.display().to_string()),
        )
    })?;
    let password = std::env::var("SHIPMOOR_KEY_PASSWORD").ok();
    attest::keys::load_signing_key(&pem, password.as_deref().map(str::as_bytes))
        .map_err(|e| Error::input(e.to_input_error(path.display().to_string())))
}

/// The DSSE envelope and the Sigstore bundle, as written (either may be absent).
type SignedForms = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The signed forms of the statement: with a key, a DSSE envelope and a Sigstore bundle
/// carrying it; keyless, a Sigstore bundle from Fulcio and Rekor.
fn sign(
    statement: &[u8],
    signing: &Signing,
    key: Option<&attest::keys::SigningKey>,
    token: Option<&str>,
    args: &ClaimCheckArgs,
) -> Result<SignedForms, Error> {
    let pretty = |v: &serde_json::Value| -> Result<Vec<u8>, Error> {
        let mut b = serde_json::to_vec_pretty(v).map_err(Error::crash)?;
        b.push(b'\n');
        Ok(b)
    };
    match (signing.state, key) {
        (SigningState::Key, Some(k)) => {
            let env = attest::dsse::sign(statement, attest::dsse::PAYLOAD_TYPE, k);
            let bundle = attest::keyed_bundle::to_bundle(&env)
                .map_err(|e| Error::crash(format!("bundle: {e}")))?;
            let env_json = serde_json::to_value(&env).map_err(Error::crash)?;
            Ok((Some(pretty(&env_json)?), Some(pretty(&bundle)?)))
        }
        (SigningState::Keyless, _) => {
            let token = token.ok_or_else(|| Error::crash("keyless signing without a token"))?;
            let services = attest::sigstore::Services {
                fulcio_url: args.fulcio_url.clone(),
                rekor_url: args.rekor_url.clone(),
                tsa_url: args.tsa_url.clone(),
            };
            let bundle =
                attest::sigstore::sign_keyless(statement, token, &services).map_err(|e| {
                    Error::crash(format!("keyless signing failed (nothing written): {e}"))
                })?;
            let mut b = bundle.into_bytes();
            if !b.ends_with(b"\n") {
                b.push(b'\n');
            }
            Ok((None, Some(b)))
        }
        _ => Ok((None, None)),
    }
}

/// A temporary file beside `path` holding `bytes`, to be renamed into place.
fn stage(path: &Path, bytes: &[u8]) -> std::io::Result<tempfile::NamedTempFile> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".shipmoor-tmp-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    Ok(tmp)
}

/// Every output can be written: its nearest existing ancestor is a directory we can create
/// files in (checked with an anonymous file that leaves no trace). Checked before any work so
/// that an unwritable output is an input error, not a half-written run.
fn check_writable(paths: &Paths) -> Result<(), Error> {
    let all = [
        (&paths.vsa, "--vsa-out", false),
        (&paths.fixes, "--fixes-out", false),
        (&paths.report, "--report-out", false),
        (&paths.evidence, "--evidence-dir", true),
    ];
    for (path, flag, is_dir) in all {
        if path.exists() && path.is_dir() != is_dir {
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
        let mut dir = if is_dir {
            path.as_path()
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
    Ok(())
}

fn acceptance_info(
    set: &AcceptanceSet,
    located: Option<&acceptance::Located>,
    source: &str,
    root: &Path,
) -> AcceptanceInfo {
    AcceptanceInfo {
        path: match located {
            Some(l) => shown_path(&l.path, root),
            None => set.display_path.clone(),
        },
        state: set.state,
        sha256: set.sha256.clone(),
        source: source.to_string(),
        inherited: set
            .inherited_criteria
            .iter()
            .map(|c| InheritedCriterion {
                id: c.id.clone(),
                file: set.origin.get(&c.id).cloned().unwrap_or_default(),
            })
            .collect(),
        inherited_policy: set.inherited,
    }
}

/// The fused rule as a sentence; the draft gate says how to commit this claim's own draft.
fn draft_reason(fused: &verdict::Fused, set: &AcceptanceSet, source: &str) -> String {
    if fused.rule != verdict::Rule::DraftGate
        || set.display_path == ".shipmoor/acceptance.yaml.draft"
        || source == "explicit"
    {
        return report::fused_reason(fused);
    }
    if source == "derived" {
        return format!(
            "acceptance set is a draft derived from {}; write its criteria as .shipmoor/changes/<name>.yaml and commit it",
            set.display_path.trim_end_matches(" (derived draft)")
        );
    }
    let drafts: Vec<&str> = set
        .criteria
        .iter()
        .filter_map(|c| set.origin.get(&c.id))
        .filter(|f| f.ends_with(".draft"))
        .map(String::as_str)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    format!(
        "acceptance set is a draft; commit {} with `shipmoor acceptance commit`",
        drafts.join(", ")
    )
}

/// The change's claim (DESIGN 3): the file named with `--acceptance`; else the criteria
/// base..head adds or changes, read from git at both sides; else, when that is nothing, a draft
/// derived from `--from`, the pull request's description or the commit messages. Nothing at
/// all is an input error that says how to give intent. Returns the claim and its source
/// (`explicit`, `files` or `derived`).
fn load_claim(
    args: &ClaimCheckArgs,
    git: &Git,
    base: &CommitId,
    head: &CommitId,
    located: Option<&acceptance::Located>,
) -> Result<(claim::Claim, String), Error> {
    let head_files = claim::Files::read(&claim::Source::Commit(git, head), true)?;
    let base_files = claim::Files::read(&claim::Source::Commit(git, base), false)?;
    if let Some(l) = located {
        let mut file = acceptance::load(l)?;
        // Named as the reports and the VSA name it, so that `replay --rerun` finds the same.
        file.display_path = shown_path(&l.path, git.root());
        return Ok((
            claim::explicit(file, &head_files, Some(&base_files)),
            "explicit".into(),
        ));
    }
    let found = claim::compare(&head_files, Some(&base_files));
    if !found.set.criteria.is_empty() {
        return Ok((found, "files".into()));
    }
    let mut texts: Vec<(String, String)> = Vec::new();
    if let Some(from) = &args.from {
        let text = std::fs::read_to_string(from).map_err(|e| {
            Error::input(
                InputError::new(format!("cannot read --from: {e}"))
                    .in_file(from.display().to_string()),
            )
        })?;
        texts.push((format!("--from {}", from.display()), text));
    }
    if let Some(event) = crate::action::event() {
        if let Some(body) = event.pointer("/pull_request/body").and_then(|b| b.as_str()) {
            let what = match event
                .pointer("/pull_request/number")
                .and_then(|n| n.as_u64())
            {
                Some(n) => format!("pull request #{n}'s description"),
                None => "the pull request's description".to_string(),
            };
            texts.push((what, body.to_string()));
        }
    }
    let log = git.run([
        "log",
        "--format=%B",
        &format!("{}..{}", base.as_str(), head.as_str()),
    ])?;
    if log.ok {
        texts.push(("the commit messages".into(), log.text()));
    }
    for (what, text) in &texts {
        let drafted = crate::commands::acceptance::derive_criteria(text);
        if drafted.is_empty() {
            continue;
        }
        let taken: std::collections::BTreeSet<&str> = found
            .set
            .inherited_criteria
            .iter()
            .map(|c| c.id.as_str())
            .collect();
        let criteria = drafted
            .into_iter()
            .map(|(id, ac)| {
                // A drafted id may repeat an inherited one; the draft is a new claim.
                let id = if taken.contains(id.as_str()) {
                    format!("{id}-draft")
                } else {
                    id
                };
                acceptance::Criterion {
                    tag: acceptance::tag_for(&id),
                    id,
                    ac,
                    required: true,
                    lane: acceptance::Lane::Floor,
                    check: None,
                    line: 0,
                }
            })
            .collect();
        let source = format!("{what} (derived draft)");
        return Ok((
            claim::derived(criteria, &source, &head_files, Some(&base_files)),
            "derived".into(),
        ));
    }
    let inherited = found.set.inherited_criteria.len();
    let uncommitted: Vec<String> = claim::Files::read(&claim::Source::Worktree(git.root()), false)
        .map(|w| {
            w.files
                .into_iter()
                .map(|f| f.path)
                .filter(|p| head_files.files.iter().all(|h| &h.path != p))
                .collect()
        })
        .unwrap_or_default();
    let mut help = "give the change its intent in one of three ways: (1) add its criteria as `.shipmoor/changes/<name>.yaml` (or edit a criterion of `.shipmoor/acceptance.yaml`) and commit it; (2) pass `--from FILE` with a Markdown checklist to derive a draft from; (3) put a `## Acceptance criteria` checklist (`- [ ] …`) in the pull request's description or a commit message".to_string();
    if !uncommitted.is_empty() {
        help.push_str(&format!(
            "; note: {} is not committed, and claim-check reads the change from git",
            uncommitted.join(", ")
        ));
    }
    Err(Error::input(
        InputError::new(format!(
            "this change claims nothing: base..head ({}..{}) adds or changes no acceptance criterion{}, and there is no text with a checklist to derive a draft from",
            base.short(),
            head.short(),
            match inherited {
                0 => String::new(),
                1 => " (1 criterion is inherited from an earlier change)".to_string(),
                n => format!(" ({n} criteria are inherited from earlier changes)"),
            }
        ))
        .help(help),
    ))
}

/// A path as reports show it: relative to the repository when inside it.
fn shown_path(p: &Path, root: &Path) -> String {
    let canon_root = std::fs::canonicalize(root).unwrap_or(root.to_path_buf());
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    };
    let parent_canon = abs
        .parent()
        .and_then(|d| std::fs::canonicalize(d).ok())
        .map(|d| d.join(abs.file_name().unwrap_or_default()))
        .unwrap_or(abs.clone());
    parent_canon
        .strip_prefix(&canon_root)
        .or_else(|_| abs.strip_prefix(root))
        .map(|r| r.display().to_string())
        .unwrap_or_else(|_| p.display().to_string())
}

fn output_paths(args: &ClaimCheckArgs, root: &Path) -> Paths {
    let cwd = std::env::current_dir().unwrap_or_else(|_| root.to_path_buf());
    let pick = |given: &Option<PathBuf>, default: &str| match given {
        Some(p) if p.is_absolute() => p.clone(),
        Some(p) => cwd.join(p),
        None => root.join(default),
    };
    Paths {
        vsa: pick(&args.vsa_out, ".shipmoor/claim-check.vsa.json"),
        fixes: pick(&args.fixes_out, ".shipmoor/claim-check.fixes.json"),
        report: pick(&args.report_out, ".shipmoor/verify.md"),
        evidence: pick(&args.evidence_dir, ".shipmoor/evidence"),
    }
}

/// The pull request's base in GitHub Actions, else the merge-base of head with the default
/// branch.
pub(crate) fn default_base(git: &Git, head: &CommitId) -> Result<CommitId, Error> {
    if let Some(sha) = pull_request_sha("base") {
        return git.resolve(&sha, "the pull request's base");
    }
    let Some(branch) = git.default_branch()? else {
        return Err(Error::input(
            InputError::new(
                "cannot tell the base commit: no default branch (origin/HEAD, main or master) here",
            )
            .help("pass the commit the change starts from with --base"),
        ));
    };
    let tip = git.resolve(&branch, "the default branch")?;
    match git.merge_base(&tip, head)? {
        Some(b) => Ok(b),
        None => Err(Error::input(
            InputError::new(format!("`{branch}` and head share no history"))
                .help("pass the commit the change starts from with --base"),
        )),
    }
}

/// The pull request's base or head commit in GitHub Actions.
fn pull_request_sha(which: &str) -> Option<String> {
    crate::action::pull_request_sha(&crate::action::event()?, which)
}
