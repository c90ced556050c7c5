//! The change's claim (book: claims.md, "A claim belongs to the change that makes it").
//!
//! In: the acceptance files of the repository at head and at base (`.shipmoor/acceptance.yaml`,
//! `.shipmoor/changes/*.yaml`, each also as `.draft`) and the shared project settings
//! (`.shipmoor/config.yaml`). Out: a [`Claim`]: an [`AcceptanceSet`] whose criteria are the ones
//! base..head adds or changes, with the settings that apply to this change, the inherited
//! criteria beside them, and, per file, which criteria are claimed and which inherited.
//!
//! Steps: (1) list and parse every acceptance file at head (every problem of every file, each
//! at `file:line:col`), ids unique across the files; (2) the same at base, where a file that no
//! longer validates counts as absent, so that its criteria are claimed rather than silently
//! inherited; (3) a criterion is claimed when its id is new or its `ac`, `required`, `lane` or
//! `check` differ from base; (4) the settings: `.shipmoor/config.yaml`, then
//! `.shipmoor/acceptance.yaml`, then the change's own files (those holding a claimed
//! criterion), later ones winning key by key; (5) settings the change edits that base already
//! had are its own harness (book: floor/harness.md).
//!
//! Pure but for the reads, which go through a [`FileSource`]: a commit (claim-check reads both sides
//! from git, never the worktree) or the worktree (`acceptance lint` checks what is being edited).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};

use super::parse;
use super::{AcceptanceSet, AcceptanceState, Check, Criterion, HarnessConfig, SETTINGS_KEYS};
use crate::error::{Error, InputError};
use crate::git::{CommitId, Git};

/// The directory every acceptance file and the settings live in.
pub const DIR: &str = ".shipmoor";
/// The shared project settings, which every change reads.
pub const CONFIG: &str = ".shipmoor/config.yaml";
/// The repository's first acceptance file; shared like the settings.
pub const LEGACY: &str = ".shipmoor/acceptance.yaml";
/// One file per change lives here.
pub const CHANGES: &str = ".shipmoor/changes/";

/// Whether `path` (repository-relative, `/`-separated) is an acceptance file.
pub fn is_acceptance_file(path: &str) -> bool {
    let p = path.strip_suffix(".draft").unwrap_or(path);
    p == LEGACY
        || p.strip_prefix(CHANGES).is_some_and(|name| {
            name.ends_with(".yaml") && name.len() > ".yaml".len() && !name.contains('/')
        })
}

/// Where the files are read from.
pub enum FileSource<'a> {
    Commit(&'a Git, &'a CommitId),
    Worktree(&'a Path),
}

/// One acceptance file listed on a side: its path, and whether it is a symlink (mode 120000 in
/// a commit, a link in the worktree), which is never read as the file it names.
struct Listed {
    path: String,
    link: bool,
}

impl FileSource<'_> {
    fn list(&self) -> Result<Vec<Listed>, Error> {
        let mut out: Vec<Listed> = match self {
            FileSource::Commit(git, commit) => git
                .tree(commit.as_str(), Some(DIR))?
                .into_iter()
                .filter(|e| e.kind == "blob")
                .map(|e| Listed {
                    link: e.mode == "120000",
                    path: e.path,
                })
                .collect(),
            FileSource::Worktree(root) => {
                let mut v = Vec::new();
                for dir in [".shipmoor", ".shipmoor/changes"] {
                    let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                        continue;
                    };
                    for e in entries.flatten() {
                        let Ok(kind) = e.file_type() else { continue };
                        if !kind.is_dir() {
                            v.push(Listed {
                                path: format!("{dir}/{}", e.file_name().to_string_lossy()),
                                link: kind.is_symlink(),
                            });
                        }
                    }
                }
                v
            }
        };
        out.retain(|l| l.path == CONFIG || is_acceptance_file(&l.path));
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// The file's bytes: from the commit's blob, or the worktree's regular file (at most
    /// [`super::ACCEPTANCE_LIMIT`] bytes, never blocking on a FIFO put there).
    fn read(&self, path: &str) -> Result<Option<Vec<u8>>, Error> {
        match self {
            FileSource::Commit(git, commit) => git.show(commit, path),
            FileSource::Worktree(root) => {
                match crate::nofollow::read_regular(&root.join(path), super::ACCEPTANCE_LIMIT) {
                    Ok(bytes) => Ok(Some(bytes)),
                    Err(crate::nofollow::ReadError::Missing(_)) => Ok(None),
                    Err(e) if path == CONFIG => Err(Error::input(
                        InputError::new(format!("the settings file {e}"))
                            .at(path.to_string(), 1, 1)
                            .help(crate::nofollow::read_help(what(path), &e)),
                    )),
                    Err(e) => Err(Error::input(
                        InputError::new(format!("the acceptance file {e}"))
                            .at(path.to_string(), 1, 1)
                            .help(crate::nofollow::read_help(what(path), &e)),
                    )),
                }
            }
        }
    }
}

/// What a side's file is called in messages: the settings or an acceptance file.
fn what(path: &str) -> &'static str {
    if path == CONFIG {
        "the settings file"
    } else {
        "the acceptance file"
    }
}

/// One acceptance file as parsed, with its text (for positions in messages).
#[derive(Debug, Clone)]
pub struct ParsedFile {
    pub path: String,
    pub set: AcceptanceSet,
    text: String,
}

/// Every acceptance file of one side, and the shared settings.
#[derive(Debug, Clone, Default)]
pub struct Files {
    pub files: Vec<ParsedFile>,
    pub config: Option<ParsedFile>,
}

impl Files {
    /// Reads every file. `strict` (head, the worktree): every problem of every file is an input
    /// error, duplicate ids across files too. Otherwise (base) a file that does not validate is
    /// left out: its criteria then read as new, never as silently inherited.
    pub fn read(source: &FileSource<'_>, strict: bool) -> Result<Files, Error> {
        let mut out = Files::default();
        let mut problems = Vec::new();
        for Listed { path, link } in source.list()? {
            // A symlink's blob is the path it names: parsed, it would be that path read as
            // YAML; followed, it would read whatever the change points it at.
            if link {
                if strict {
                    problems.push(
                        InputError::new(format!(
                            "`{path}` is a symlink: {} is read as committed, never through a link",
                            what(&path)
                        ))
                        .at(path.clone(), 1, 1)
                        .help("commit the file itself where the link is (`cp --remove-destination TARGET LINK`, then `git add LINK`)"),
                    );
                }
                continue;
            }
            let bytes = match source.read(&path) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => continue,
                Err(Error::Input(mut e)) if strict => {
                    problems.append(&mut e);
                    continue;
                }
                Err(Error::Input(_)) => continue,
                Err(e) => return Err(e),
            };
            let text = match String::from_utf8(bytes.clone()) {
                Ok(t) => t,
                Err(_) if strict => {
                    problems.push(
                        InputError::new(format!("{} is not UTF-8 text", what(&path)))
                            .at(path.clone(), 1, 1)
                            .help("save the file as UTF-8"),
                    );
                    continue;
                }
                Err(_) => continue,
            };
            let parsed = if path == CONFIG {
                parse::parse_config(&text, &path)
            } else {
                let state = if path.ends_with(".draft") {
                    AcceptanceState::Draft
                } else {
                    AcceptanceState::Committed
                };
                parse::parse(&text, &path, state, crate::digest::sha256_hex(&bytes))
            };
            match parsed {
                Ok(set) => {
                    let f = ParsedFile { path, set, text };
                    if f.path == CONFIG {
                        out.config = Some(f);
                    } else {
                        out.files.push(f);
                    }
                }
                Err(mut e) if strict => problems.append(&mut e),
                Err(_) => {}
            }
        }
        // Ids are unique across the files: the later file (in path order) is the one to fix.
        let mut seen: BTreeMap<String, (String, usize)> = BTreeMap::new();
        let mut keep = Vec::new();
        for f in out.files {
            let mut dup = false;
            for c in &f.set.criteria {
                if let Some((first, line)) = seen.get(&c.id) {
                    dup = true;
                    if strict {
                        problems.push(
                            InputError::new(format!(
                                "duplicate criterion id `{}`: also defined at {first}:{line}",
                                c.id
                            ))
                            .at(f.path.clone(), c.line, id_column(&f.text, c.line))
                            .help("ids are unique across every acceptance file: rename one of the two, or remove the copy"),
                        );
                    }
                } else {
                    seen.insert(c.id.clone(), (f.path.clone(), c.line));
                }
            }
            if !dup || strict {
                keep.push(f);
            }
        }
        out.files = keep;
        // Tags collide across files too (one file's are checked as it is parsed).
        if strict {
            let all: Vec<(&ParsedFile, &Criterion)> = out
                .files
                .iter()
                .flat_map(|f| f.set.criteria.iter().map(move |c| (f, c)))
                .collect();
            let criteria: Vec<&Criterion> = all.iter().map(|(_, c)| *c).collect();
            for (shorter, longer) in super::tags::tag_collisions(&criteria) {
                let file_of =
                    |c: &Criterion| all.iter().find(|(_, x)| x.id == c.id).map(|(f, _)| *f);
                let (Some(fs), Some(fl)) = (file_of(shorter), file_of(longer)) else {
                    continue;
                };
                if fs.path == fl.path {
                    continue;
                }
                problems.push(
                    InputError::new(format!(
                        "the tag `{}` of criterion `{}` ({}:{}) is part of the tag `{}` of criterion `{}`: a test named with the longer tag would bind both",
                        shorter.tag, shorter.id, fs.path, shorter.line, longer.tag, longer.id
                    ))
                    .at(fl.path.clone(), longer.line, id_column(&fl.text, longer.line))
                    .help("rename one of the two ids so that neither tag holds the other (a tag is made from its id; `shipmoor acceptance tags` prints them)"),
                );
            }
        }
        if problems.is_empty() {
            Ok(out)
        } else {
            Err(Error::Input(problems))
        }
    }

    fn criterion(&self, id: &str) -> Option<(&ParsedFile, &Criterion)> {
        self.files
            .iter()
            .find_map(|f| f.set.criteria.iter().find(|c| c.id == id).map(|c| (f, c)))
    }

    fn file(&self, path: &str) -> Option<&ParsedFile> {
        self.files
            .iter()
            .chain(self.config.as_ref())
            .find(|f| f.path == path)
    }

    /// The settings every change shares: `.shipmoor/config.yaml`, then
    /// `.shipmoor/acceptance.yaml` (or its draft).
    fn shared(&self) -> Vec<&ParsedFile> {
        let legacy = self
            .files
            .iter()
            .filter(|f| f.path.strip_suffix(".draft").unwrap_or(&f.path) == LEGACY);
        self.config.iter().chain(legacy).collect()
    }
}

/// The column of the `id` key on `line` (1-based), for messages about a criterion.
fn id_column(text: &str, line: usize) -> usize {
    text.lines()
        .nth(line.saturating_sub(1))
        .and_then(|l| l.find("id").map(|i| l[..i].chars().count() + 1))
        .unwrap_or(1)
}

/// Per acceptance file: which criteria are this change's claim and which are inherited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileClaim {
    pub path: String,
    pub state: AcceptanceState,
    pub criteria: Vec<FileCriterion>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileCriterion {
    pub id: String,
    pub tag: String,
    pub requirement: String,
    /// This change's claim (else inherited).
    pub claimed: bool,
}

impl FileCriterion {
    pub fn of(c: &Criterion, claimed: bool) -> FileCriterion {
        FileCriterion {
            id: c.id.clone(),
            tag: c.tag.clone(),
            requirement: c.requirement(),
            claimed,
        }
    }
}

/// The change's claim.
#[derive(Debug, Clone)]
pub struct Claim {
    /// The claimed criteria (possibly none), the settings for this change, the inherited
    /// criteria and each criterion's file.
    pub set: AcceptanceSet,
    pub files: Vec<FileClaim>,
}

/// Whether `head`'s criterion is the same as `base`'s: same `ac`, `required`, `lane`, `check`
/// (where it sits in which file does not matter).
fn same(head: &Criterion, base: &Criterion) -> bool {
    head.ac == base.ac
        && head.required == base.required
        && head.lane == base.lane
        && head.check == base.check
}

/// Works out the claim from both sides (`base` absent: everything is claimed).
pub fn compare(head: &Files, base: Option<&Files>) -> Claim {
    let mut claimed = Vec::new();
    let mut inherited = Vec::new();
    let mut origin = BTreeMap::new();
    let mut files = Vec::new();
    let mut own: Vec<&ParsedFile> = Vec::new();
    for f in &head.files {
        let mut rows = Vec::new();
        let mut mine = false;
        for c in &f.set.criteria {
            let is_claim = match base.and_then(|b| b.criterion(&c.id)) {
                Some((_, was)) => !same(c, was),
                None => true,
            };
            origin.insert(c.id.clone(), f.path.clone());
            rows.push(FileCriterion::of(c, is_claim));
            if is_claim {
                claimed.push((f.set.state, c.clone()));
                mine = true;
            } else {
                inherited.push(c.clone());
            }
        }
        if mine {
            own.push(f);
        }
        files.push(FileClaim {
            path: f.path.clone(),
            state: f.set.state,
            criteria: rows,
        });
    }
    let shared = head.shared();
    let mut sources: Vec<&ParsedFile> = shared.clone();
    for f in own {
        if !sources.iter().any(|s| s.path == f.path) {
            sources.push(f);
        }
    }
    let mut set = settings_of(&sources);
    set.state = if claimed.iter().any(|(s, _)| *s == AcceptanceState::Draft) {
        AcceptanceState::Draft
    } else {
        AcceptanceState::Committed
    };
    set.criteria = claimed.into_iter().map(|(_, c)| c).collect();
    let claim_files: Vec<&str> = files
        .iter()
        .filter(|f| f.criteria.iter().any(|c| c.claimed))
        .map(|f| f.path.as_str())
        .collect();
    set.display_path = claim_files.join(",");
    set.inherited_criteria = inherited;
    set.origin = origin;
    set.settings_edits = match base {
        Some(b) => settings_edits(head, b, &sources),
        None => Vec::new(),
    };
    set.sha256 = digest(&set);
    Claim { set, files }
}

/// The claim named explicitly (`--acceptance PATH`): that file's criteria, whatever base
/// holds; the shared settings at head fill in what the file does not set.
pub fn explicit(file: AcceptanceSet, head: &Files, base: Option<&Files>) -> Claim {
    let path = file.display_path.clone();
    let parsed = ParsedFile {
        path: path.clone(),
        set: file,
        text: String::new(),
    };
    let mut sources = head.shared();
    sources.retain(|s| s.path != path);
    sources.push(&parsed);
    let mut set = settings_of(&sources);
    set.state = parsed.set.state;
    set.criteria = parsed.set.criteria.clone();
    set.display_path = path.clone();
    set.origin = set
        .criteria
        .iter()
        .map(|c| (c.id.clone(), path.clone()))
        .collect();
    set.settings_edits = match base {
        Some(b) => settings_edits(head, b, &sources),
        None => Vec::new(),
    };
    set.sha256 = digest(&set);
    let files = vec![FileClaim {
        path,
        state: set.state,
        criteria: set
            .criteria
            .iter()
            .map(|c| FileCriterion::of(c, true))
            .collect(),
    }];
    Claim { set, files }
}

/// A draft claim derived from text (a pull request's description, `--from`, commit messages),
/// with the settings that apply to a change that brings no file of its own.
pub fn derived(
    criteria: Vec<Criterion>,
    source: &str,
    head: &Files,
    base: Option<&Files>,
) -> Claim {
    let sources = head.shared();
    let mut set = settings_of(&sources);
    set.state = AcceptanceState::Draft;
    set.display_path = source.to_string();
    set.origin = criteria
        .iter()
        .map(|c| (c.id.clone(), source.to_string()))
        .collect();
    set.criteria = criteria;
    let prior = compare(head, base);
    set.inherited_criteria = prior.set.inherited_criteria;
    for (id, file) in prior.set.origin {
        set.origin.entry(id).or_insert(file);
    }
    set.settings_edits = match base {
        Some(b) => settings_edits(head, b, &sources),
        None => Vec::new(),
    };
    set.sha256 = digest(&set);
    Claim {
        set,
        files: prior.files,
    }
}

/// The settings of `sources`, later ones winning key by key; no criteria yet.
fn settings_of(sources: &[&ParsedFile]) -> AcceptanceSet {
    let mut set = AcceptanceSet {
        display_path: String::new(),
        state: AcceptanceState::Committed,
        sha256: String::new(),
        criteria: Vec::new(),
        runners: Vec::new(),
        judge: Vec::new(),
        harness: HarnessConfig::default(),
        guard: Vec::new(),
        inherited: Default::default(),
        env_pass: Vec::new(),
        settings_keys: Vec::new(),
        settings_files: BTreeMap::new(),
        origin: BTreeMap::new(),
        inherited_criteria: Vec::new(),
        settings_edits: Vec::new(),
    };
    for f in sources {
        let s = &f.set;
        for key in &s.settings_keys {
            match *key {
                "runners" => set.runners = s.runners.clone(),
                "judge" => set.judge = s.judge.clone(),
                "harness" => set.harness = s.harness.clone(),
                "guard" => set.guard = s.guard.clone(),
                "inherited" => set.inherited = s.inherited,
                "floor" => set.env_pass = s.env_pass.clone(),
                _ => {}
            }
            if !set.settings_keys.contains(key) {
                set.settings_keys.push(key);
            }
            set.settings_files.insert(key, f.path.clone());
        }
    }
    set
}

/// A setting's value, without the line numbers parsing records.
fn setting(set: &AcceptanceSet, key: &str) -> Value {
    match key {
        "runners" => json!(set
            .runners
            .iter()
            .map(|r| {
                let mut v = json!({"kind": r.kind, "root": r.root, "args": r.args, "setup": r.setup, "command": r.command});
                // Only where set: the digest of a set without it stays what it was.
                if !r.env_pass.is_empty() {
                    v["env_pass"] = json!(r.env_pass);
                }
                v
            })
            .collect::<Vec<_>>()),
        // No judge reads as `null`, as before panels: the policy digest of a set without a
        // judge stays what it was.
        "judge" if set.judge.is_empty() => Value::Null,
        "judge" => json!(set.judge.iter().map(judge_setting).collect::<Vec<_>>()),
        "harness" => json!({"allow_changes": set.harness.allow_changes}),
        "guard" => json!(set.guard),
        "inherited" => json!(set.inherited.as_str()),
        "floor" => json!({"env_pass": set.env_pass}),
        _ => Value::Null,
    }
}

/// One judge of the panel as the policy digest covers it: what it is and how it is asked,
/// without where it is written.
fn judge_setting(j: &super::judges::JudgeSpec) -> Value {
    let (command, url, model, api_key_env) = match &j.transport {
        super::judges::Transport::Command { argv } => (Some(argv), None, None, None),
        super::judges::Transport::Chat {
            url,
            model,
            api_key_env,
        } => (None, Some(url), Some(model), api_key_env.as_ref()),
    };
    json!({
        "name": j.name, "command": command, "url": url, "model": model,
        "api_key_env": api_key_env, "timeout": j.timeout.as_secs(),
        "concurrency": j.concurrency, "max_diff_bytes": j.max_diff_bytes, "exclude": j.exclude,
    })
}

/// The settings files whose settings, present at base, this change edits: a file base had
/// settings in whose settings differ at head (or that is gone), and a shared setting of base
/// that the change's own file overrides with another value.
fn settings_edits(head: &Files, base: &Files, sources: &[&ParsedFile]) -> Vec<String> {
    let mut out = Vec::new();
    for b in base.files.iter().chain(base.config.as_ref()) {
        if b.set.settings_keys.is_empty() {
            continue;
        }
        let edited = match head.file(&b.path) {
            None => true,
            Some(h) => SETTINGS_KEYS.iter().any(|k| {
                b.set.settings_keys.contains(k) != h.set.settings_keys.contains(k)
                    || setting(&b.set, k) != setting(&h.set, k)
            }),
        };
        if edited {
            out.push(b.path.clone());
        }
    }
    let was = settings_of(&base.shared());
    let now = settings_of(sources);
    for key in &was.settings_keys {
        if setting(&was, key) != setting(&now, key) {
            let by = sources
                .iter()
                .rev()
                .find(|s| s.set.settings_keys.contains(key))
                .map(|s| s.path.clone())
                .or_else(|| base.shared().last().map(|s| s.path.clone()));
            if let Some(p) = by {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out
}

fn check_json(check: &Option<Check>) -> Value {
    match check {
        None => Value::Null,
        Some(Check::Test(t)) => json!({"test": t}),
        Some(Check::Command(c)) => json!({"command": c}),
        Some(Check::Pattern { paths, regex }) => {
            json!({"pattern": {"paths": paths, "regex": regex}})
        }
    }
}

/// What decided the run, as the VSA's `policy` digest covers it: the claimed criteria (each
/// with its file), the state of the claim and the settings that applied.
pub fn document(set: &AcceptanceSet) -> Value {
    let criteria: Vec<Value> = set
        .criteria
        .iter()
        .map(|c| {
            json!({
                "id": c.id, "ac": c.ac, "required": c.required, "lane": c.lane,
                "check": check_json(&c.check),
                "file": set.origin.get(&c.id),
            })
        })
        .collect();
    // `floor` only where it is set: the digest of a set without it stays what it was.
    let settings: serde_json::Map<String, Value> = SETTINGS_KEYS
        .iter()
        .filter(|k| **k != "floor" || !set.env_pass.is_empty())
        .map(|k| (k.to_string(), setting(set, k)))
        .collect();
    json!({
        "schema": "claim_check.claim.v1",
        "state": set.state,
        "criteria": criteria,
        "settings": settings,
    })
}

/// Hex SHA-256 of the canonical JSON of [`document`].
pub fn digest(set: &AcceptanceSet) -> String {
    let bytes = crate::digest::canonical_json(&document(set)).unwrap_or_default();
    crate::digest::sha256_hex(&bytes)
}

#[cfg(test)]
#[path = "claim_tests.rs"]
mod tests;
