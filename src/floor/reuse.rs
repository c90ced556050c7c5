//! Base results reused across pushes (book: floor/base-cache.md): the key of base's runs, a
//! hit's observations and records taken from the base cache into this run, and a fresh base
//! run offered to the cache when it is one to keep (no flake, nothing base could not observe,
//! every build failure attributed).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::Instant;

use crate::decision::attribute::Attribution;
use crate::digest::sha256_hex;
use crate::error::Error;
use crate::format::evidence::Record;
use crate::format::floor::{BaseCacheState, BaseCacheUse, RuntimeRow, Side};
use crate::git::Worktree;
use crate::process;
use crate::text::short_commit;

use super::bind::{Binding, TestKey};
use super::cache::{
    self, key::FileDigest, key::LockFile, key::RunnerInputs, key::Variable, BaseCache,
    CachedObservation, Entry, EntryError, KeyInputs, Made, Pending,
};
use super::decide::past;
use super::events::{row_side, Event};
use super::overlay::Overlay;
use super::plan::Plan;
use super::runners::{Outcome, RunnerId};
use super::{all_env_pass, Ctx, Env, Observed};

impl Env<'_> {
    /// The lock files under each runner's root and the directories above it, at base and at
    /// head, by digest.
    fn lock_files(&self) -> Result<Vec<LockFile>, Error> {
        let mut paths = BTreeSet::new();
        for a in &self.adapters {
            let mut dir = a.config().root.trim_end_matches('/').to_string();
            loop {
                for name in cache::key::LOCK_FILES {
                    paths.insert(if dir == "." || dir.is_empty() {
                        name.to_string()
                    } else {
                        format!("{dir}/{name}")
                    });
                }
                match dir.rsplit_once('/') {
                    Some((up, _)) => dir = up.to_string(),
                    None if dir != "." && !dir.is_empty() => dir = ".".into(),
                    None => break,
                }
            }
        }
        let paths: Vec<String> = paths.into_iter().collect();
        let mut out = Vec::new();
        for (side, commit) in [("base", &self.input.base), ("head", &self.input.head)] {
            for (path, bytes) in self.input.git.blobs(commit, &paths)? {
                out.push(LockFile {
                    side: side.into(),
                    path,
                    sha256: sha256_hex(&bytes),
                });
            }
        }
        out.sort();
        Ok(out)
    }
}

impl Ctx<'_> {
    /// The key of base's runs under `plan` and `overlay`, when the base cache is on and base
    /// has tests to run; `None` otherwise. Where the cache cannot be used for this run (its
    /// directory refused, a `check.command` that runs at base too), a runtime row says why.
    pub(super) fn base_key(
        &mut self,
        plan: &Plan,
        overlay: &Overlay,
        head: Option<&Worktree>,
    ) -> Result<Option<KeyInputs>, Error> {
        let Some(cache) = self.env.input.base_cache else {
            return Ok(None);
        };
        self.cache.started = Some(Instant::now());
        let (Some(head), true) = (head, plan.wanted.iter().any(|w| !w.is_empty())) else {
            return Ok(None);
        };
        if let Some(why) = cache.refused() {
            self.cache_note(cache, BaseCacheState::Ran, None, why.to_string(), true);
            return Ok(None);
        }
        if plan.mine().any(|b| matches!(b, Binding::Command(_))) {
            self.cache_note(
                cache,
                BaseCacheState::Ran,
                None,
                "not used: a check.command runs at base too, in base's worktree after its setup"
                    .into(),
                true,
            );
            return Ok(None);
        }
        let input = self.env.input;
        let mut runners = Vec::new();
        for (i, adapter) in self.env.adapters.iter().enumerate() {
            let config = adapter.config();
            let tests = plan.wanted[i]
                .iter()
                .filter_map(|id| plan.bound[i].get(id).map(|f| (id.clone(), f.clone())))
                .collect();
            let together = plan.wanted[i]
                .iter()
                .filter(|id| !plan.bound[i].contains_key(*id))
                .cloned()
                .collect();
            let mut env_pass = config.env_pass.clone();
            env_pass.sort();
            runners.push(RunnerInputs {
                kind: config.kind.as_str().to_string(),
                root: config.root.clone(),
                args: config.args.clone(),
                setup: config.setup.clone(),
                command: config.command.clone(),
                env_pass,
                toolchain: if plan.wanted[i].is_empty() {
                    Vec::new()
                } else {
                    self.toolchain(i, head)
                },
                tests,
                together,
            });
        }
        let laid = &overlay.laid;
        let head_files = input.git.blobs(&input.head, &laid.paths)?;
        let laid_over = laid
            .paths
            .iter()
            .map(|p| FileDigest {
                path: p.clone(),
                sha256: head_files
                    .get(p)
                    .map(|b| sha256_hex(b))
                    .unwrap_or_else(|| "absent".into()),
            })
            .collect();
        let spliced = overlay
            .splices
            .iter()
            .map(|(p, text)| FileDigest {
                path: p.clone(),
                sha256: sha256_hex(text.as_bytes()),
            })
            .collect();
        Ok(Some(KeyInputs {
            shipmoor: env!("CARGO_PKG_VERSION").to_string(),
            observation: cache::key::OBSERVATION_VERSION,
            base: input.base.to_string(),
            runs: plan.runs,
            timeout_seconds: input.timeout.as_secs(),
            environment: environment(&all_env_pass(input), &input.confinement.env),
            runners,
            laid_over,
            spliced,
            deleted: laid.deleted.clone(),
            lock_files: self.env.lock_files()?,
            sandbox: crate::format::sandbox::SandboxRecord::of(&input.confinement.sandbox).key(),
        }))
    }

    /// A hit: base's observations, records and blobs from the cache's entry of `key` put into
    /// `obs` and this run's evidence store, with the runtime row that says so. `false` on a
    /// miss (an entry that does not check out is one), with a row that says why base runs.
    pub(super) fn reuse_base(
        &mut self,
        key: &KeyInputs,
        obs: &mut BTreeMap<TestKey, Observed>,
    ) -> bool {
        let Some(cache) = self.env.input.base_cache else {
            return false;
        };
        let started = self.cache.started.unwrap_or_else(Instant::now);
        let digest = key.digest();
        let miss = match cache.lookup(&digest) {
            None => explain_miss(cache, key),
            // A head that is no commit here: the entry was made elsewhere (a clone the code
            // under check made, say), and speaks for no run of this repository.
            Some(held)
                if !crate::git::CommitId::parse(&held.entry.made.head)
                    .is_some_and(|c| self.env.input.git.has_commit(c.as_str())) =>
            {
                format!(
                "entry sha256:{} ignored: the head it was observed at ({}) is no commit of this repository; base runs",
                cache::short(&held.name),
                short_commit(&held.entry.made.head)
            )
            }
            Some(held) => match cache
                .read_items(held)
                .and_then(|items| self.take_entry(&held.entry, items, obs))
            {
                Ok(tests) => {
                    let e = &held.entry;
                    self.cache.used = Some(BaseCacheUse {
                        state: BaseCacheState::Reused,
                        dir: cache.shown().to_string(),
                        key: format!("sha256:{digest}"),
                        entry: Some(format!("sha256:{}", held.name)),
                        observed_at_head: Some(e.made.head.clone()),
                        observed_at: Some(e.made.at.clone()),
                        note: None,
                    });
                    // The cache's own cost: reading it, the key (the toolchain's answers
                    // included), the entry's items re-hashed and taken into the store.
                    let cost = cache.opened_in() + started.elapsed();
                    let seconds = self.env.seconds(cost);
                    let cost = if self.env.input.clock.is_pinned() {
                        String::new()
                    } else {
                        format!("; the cache's own cost {} ms", cost.as_millis())
                    };
                    let row = RuntimeRow {
                        side: row_side(Side::Base).into(),
                        runner: "base cache".into(),
                        command: format!(
                            "base cache {}: entry sha256:{}",
                            cache.shown(),
                            cache::short(&held.name)
                        ),
                        tests,
                        result: format!(
                            "reused from the base cache: {}; observed at head {} ({}){cost}",
                            e.summary,
                            short_commit(&e.made.head),
                            e.made.at
                        ),
                        seconds,
                        exit_code: None,
                        excerpt: None,
                        tool: None,
                    };
                    self.rec.observe(Event::BaseReused {
                        base: &self.env.input.base,
                        entry: cache::short(&held.name),
                        head: short_commit(&e.made.head),
                        row,
                    });
                    return true;
                }
                Err(why) => format!(
                    "entry sha256:{} ignored: {why}; base runs again",
                    cache::short(&held.name)
                ),
            },
        };
        let mut notes: Vec<String> = cache.notes().to_vec();
        notes.push(miss);
        self.cache_note(
            cache,
            BaseCacheState::Ran,
            Some(format!("sha256:{digest}")),
            notes.join("; "),
            false,
        );
        false
    }

    /// Checks a hit's entry against its records and takes it into this run: the items into the
    /// store (the records in the order the run that observed them stored them), each test's
    /// observation into `obs`, the files base's runs rewrote. How many tests it observed.
    fn take_entry(
        &mut self,
        entry: &Entry,
        items: Vec<(String, Vec<u8>)>,
        obs: &mut BTreeMap<TestKey, Observed>,
    ) -> Result<usize, EntryError> {
        let by_name: BTreeMap<String, Vec<u8>> = items.into_iter().collect();
        let record = |p: &str| -> Result<Record, EntryError> {
            let hex = crate::evidence::pointer_digest(p)
                .ok_or_else(|| EntryError::Pointer(p.to_string()))?;
            let bytes = by_name
                .get(hex)
                .ok_or_else(|| EntryError::RecordMissing(hex.to_string()))?;
            serde_json::from_slice(bytes).map_err(|e| EntryError::RecordParse(hex.to_string(), e))
        };
        // Each observation rests on records of that test at base, at this base commit, with
        // the outcomes it says; every record is base's.
        for p in &entry.records {
            match record(p)? {
                Record::Setup(r) | Record::Test(r)
                    if r.side == Some(Side::Base) && r.commit == self.env.input.base.as_str() => {}
                _ => return Err(EntryError::NotBase(p.clone())),
            }
        }
        for o in &entry.observed {
            if o.outcomes.len() != o.evidence.len() && o.problem.is_none() {
                return Err(EntryError::Count(o.id.clone()));
            }
            for (p, outcome) in o.evidence.iter().zip(&o.outcomes) {
                let Record::Test(r) = record(p)? else {
                    return Err(EntryError::NoTestRun(o.id.clone(), p.clone()));
                };
                if r.test_id.as_deref() != Some(o.id.as_str()) || r.outcome != Some(*outcome) {
                    return Err(EntryError::OtherTest(o.id.clone(), p.clone()));
                }
            }
            if o.runner >= self.env.adapters.len() {
                return Err(EntryError::NoRunner(o.id.clone(), o.runner));
            }
        }
        let records: BTreeSet<&str> = entry
            .records
            .iter()
            .filter_map(|p| crate::evidence::pointer_digest(p))
            .collect();
        for (hex, bytes) in &by_name {
            if !records.contains(hex.as_str()) {
                self.rec.store.put_blob(bytes.clone());
            }
        }
        for p in &entry.records {
            if let Some(bytes) = crate::evidence::pointer_digest(p).and_then(|h| by_name.get(h)) {
                self.rec.store.put_record_bytes(bytes.clone());
            }
        }
        for o in &entry.observed {
            obs.insert(
                TestKey {
                    runner: RunnerId(o.runner),
                    id: o.id.clone(),
                },
                Observed {
                    outcomes: o.outcomes.clone(),
                    evidence: o.evidence.clone(),
                    problem: o.problem.clone(),
                    build_files: o.build_files.clone(),
                    diagnostics: o.diagnostics.clone(),
                    attribution: o.attribution.clone(),
                    message: o.message.clone(),
                    failure_kind: o.failure_kind,
                    tainted: None,
                },
            );
        }
        self.watch.rewritten.extend(entry.rewritten.iter().cloned());
        Ok(entry.observed.len())
    }

    /// After base ran: its observations `obs` (and the records stored since `first_record`,
    /// the rewritten files noted since `first_rewritten`) offered to the cache as an entry
    /// under `key`, unless base's answer is not one to keep. A runtime row says which.
    pub(super) fn offer_base(
        &mut self,
        key: KeyInputs,
        obs: &BTreeMap<TestKey, Observed>,
        first_record: usize,
        first_rewritten: usize,
    ) -> Result<(), Error> {
        let Some(cache) = self.env.input.base_cache else {
            return Ok(());
        };
        let digest = key.digest();
        if let Some(why) = not_to_keep(obs) {
            let mut note = self
                .cache
                .used
                .take()
                .and_then(|u| u.note)
                .map(|n| format!("{n}; "))
                .unwrap_or_default();
            note.push_str(&format!("base's results are not kept: {why}"));
            self.cache_note(
                cache,
                BaseCacheState::Ran,
                Some(format!("sha256:{digest}")),
                note,
                true,
            );
            return Ok(());
        }
        let records: Vec<String> =
            self.rec.store.records()[first_record.min(self.rec.store.records().len())..].to_vec();
        let mut items: BTreeSet<String> = BTreeSet::new();
        for p in &records {
            items.insert(p.clone());
            // What a record cites, as replay reads it.
            let record = self
                .rec
                .store
                .get(p)
                .and_then(|b| serde_json::from_slice::<Record>(b).ok());
            for c in record.iter().flat_map(|r| r.blobs()) {
                if self.rec.store.get(c).is_some() {
                    items.insert(c.to_string());
                }
            }
        }
        let observed: Vec<CachedObservation> = obs
            .iter()
            .map(|(k, o)| CachedObservation {
                runner: k.runner.0,
                id: k.id.clone(),
                outcomes: o.outcomes.clone(),
                evidence: o.evidence.clone(),
                problem: o.problem.clone(),
                build_files: o.build_files.clone(),
                diagnostics: o.diagnostics.clone(),
                attribution: o.attribution.clone(),
                message: o.message.clone(),
                failure_kind: o.failure_kind,
            })
            .collect();
        let entry = Entry {
            schema: cache::ENTRY_SCHEMA.to_string(),
            key: digest.clone(),
            inputs: key,
            made: Made {
                head: self.env.input.head.to_string(),
                at: crate::clock::rfc3339(self.env.input.clock.now()),
                by: env!("CARGO_PKG_VERSION").to_string(),
            },
            summary: summary(obs),
            observed,
            rewritten: self.watch.rewritten[first_rewritten.min(self.watch.rewritten.len())..]
                .to_vec(),
            items: items.iter().cloned().collect(),
            records,
        };
        let blobs = items
            .iter()
            .filter_map(|p| {
                let hex = crate::evidence::pointer_digest(p)?;
                Some((hex.to_string(), self.rec.store.get(p)?.to_vec()))
            })
            .collect();
        let pending = Pending::new(&entry, blobs).map_err(Error::crash)?;
        let mut note = self.cache.used.take().and_then(|u| u.note);
        let kept = format!(
            "base's results are kept for the next push as entry sha256:{}",
            cache::short(&pending.name)
        );
        note = Some(match note {
            Some(n) => format!("{n}; {kept}"),
            None => kept,
        });
        self.cache.used = Some(BaseCacheUse {
            state: BaseCacheState::Stored,
            dir: cache.shown().to_string(),
            key: format!("sha256:{digest}"),
            entry: Some(format!("sha256:{}", pending.name)),
            observed_at_head: None,
            observed_at: None,
            note,
        });
        self.cache_row(cache);
        self.cache.entry = Some(pending);
        Ok(())
    }

    /// Notes how this run used the cache (`state`, `key`, `note`), with its runtime row when
    /// `row` (a miss has its row once base ran, from [`Ctx::offer_base`]).
    fn cache_note(
        &mut self,
        cache: &BaseCache,
        state: BaseCacheState,
        key: Option<String>,
        note: String,
        row: bool,
    ) {
        self.cache.used = Some(BaseCacheUse {
            state,
            dir: cache.shown().to_string(),
            key: key.unwrap_or_default(),
            entry: None,
            observed_at_head: None,
            observed_at: None,
            note: Some(note),
        });
        if row {
            self.cache_row(cache);
        }
    }

    /// The runtime row of the cache's use, from [`Ctx::cache_use`].
    fn cache_row(&mut self, cache: &BaseCache) {
        let Some(u) = &self.cache.used else {
            return;
        };
        self.rec.observe(Event::Row(RuntimeRow {
            side: row_side(Side::Base).into(),
            runner: "base cache".into(),
            command: format!("base cache {}", cache.shown()),
            tests: 0,
            result: u.note.clone().unwrap_or_default(),
            seconds: 0.0,
            exit_code: None,
            excerpt: None,
            tool: None,
        }));
    }

    /// Runner `i`'s toolchain as it reports itself, asked in head's worktree (where a
    /// `rust-toolchain.toml` is honoured); a command that fails is keyed as failing.
    fn toolchain(&self, i: usize, head: &Worktree) -> Vec<String> {
        let adapter = &self.env.adapters[i];
        let probes = adapter.version_probes();
        let root = &adapter.config().root;
        let dir = if root == "." {
            head.path().to_path_buf()
        } else {
            head.path().join(root)
        };
        let mut out: Vec<String> = adapter.tool(&self.env.probe()).into_iter().collect();
        // Through the floor's own runner of commands: the environment withheld as for every
        // other command, the timeout, and nothing a probe leaves behind still running (a
        // `rust-toolchain.toml` at head can name a toolchain of the change's own).
        let jail = self.jail(Side::Head, None);
        for argv in probes {
            let mut cmd = Command::new(argv[0]);
            cmd.args(&argv[1..]).current_dir(&dir);
            for (k, v) in self.env.side_env(Side::Head) {
                cmd.env(k, v);
            }
            let answer = process::run(
                cmd,
                self.env.input.timeout,
                process::Confine::Sandboxed(&jail),
            )
            .ok()
            .filter(|c| c.success())
            .map(|c| String::from_utf8_lossy(&c.stdout).trim().to_string());
            out.push(match answer {
                Some(text) => format!("{}: {text}", argv.join(" ")),
                None => format!("{}: failed", argv.join(" ")),
            });
        }
        out
    }
}

/// The environment's part of the key (see [`KeyInputs::environment`]): `pass`, the names
/// `env_pass` passes, are keyed by name alone, as is anything else named like a credential
/// (withheld from the commands, it cannot change what they observe; listed so that passing it
/// or not does).
fn environment(pass: &[String], env: &crate::sandbox::env::EnvPolicy) -> Vec<Variable> {
    let mut out: Vec<Variable> = std::env::vars_os()
        .filter_map(|(k, v)| {
            let k = k.into_string().ok()?;
            if cache::key::volatile(&k) {
                return None;
            }
            if env.is_secret_env(&k) {
                return pass.contains(&k).then_some(Variable {
                    name: k,
                    sha256: None,
                });
            }
            Some(Variable {
                sha256: Some(sha256_hex(v.as_encoded_bytes())),
                name: k,
            })
        })
        .collect();
    out.sort();
    out
}

/// Why base's observations are not kept, when they are not: a flake (mixed outcomes), a test
/// base could not observe for a reason of the machine's (its setup, a timeout, the runner), a
/// build failure not attributed.
fn not_to_keep(obs: &BTreeMap<TestKey, Observed>) -> Option<String> {
    for (TestKey { id, .. }, o) in obs {
        if let Some(why) = &o.tainted {
            return Some(format!("{id} ran after {why}"));
        }
        if o.outcomes.windows(2).any(|w| w[0] != w[1]) {
            return Some(format!("{id} gave mixed results at base (a flake)"));
        }
        if let Some(p) = &o.problem {
            return Some(format!("{id} was not observed at base ({p})"));
        }
        let built = !o.outcomes.contains(&Outcome::BuildFail);
        let attributed = matches!(
            o.attribution,
            Some(
                Attribution::InTest { .. }
                    | Attribution::InUsedImport { .. }
                    | Attribution::Elsewhere { .. }
            )
        );
        if !built && !attributed {
            return Some(format!(
                "{id} did not build at base, and whose failure that is was not decided"
            ));
        }
    }
    None
}

/// What base's runs gave, for the row of a later hit (`2 failed, 1 passed`).
fn summary(obs: &BTreeMap<TestKey, Observed>) -> String {
    let mut counts: BTreeMap<Outcome, usize> = BTreeMap::new();
    for o in obs.values() {
        if let Some(last) = o.outcomes.last() {
            *counts.entry(*last).or_default() += 1;
        } else {
            *counts.entry(Outcome::NotObserved).or_default() += 1;
        }
    }
    counts
        .iter()
        .map(|(o, n)| format!("{n} {}", past(o.as_str())))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why `key` found no entry: the newest entry at the same base commit and what differs from
/// it, or that there is none.
fn explain_miss(cache: &BaseCache, key: &KeyInputs) -> String {
    // The entry at this base that differs from this run in the fewest ways (the newest of
    // those), whose differences say the most.
    let closest = cache
        .at_base(&key.base)
        .into_iter()
        .map(|h| (key.differences(&h.entry.inputs), h))
        .min_by_key(|(d, _)| d.len());
    match closest {
        Some((d, h)) => {
            format!(
                "no entry for this key; base runs. Since the entry observed at head {}: {}",
                short_commit(&h.entry.made.head),
                if d.is_empty() {
                    "nothing the key covers differs".to_string()
                } else {
                    d.join("; ")
                }
            )
        }
        None => format!(
            "no entry for base {} yet; base runs",
            short_commit(&key.base)
        ),
    }
}
