//! `cargo nextest` adapter.
//!
//! Test ids are `<binary-id> <test name>` exactly as nextest prints them (`fx-crate`,
//! `fx-crate::t`, `fx-crate::bin/tool`), the same ids as the `cargo test` adapter's.
//!
//! # list
//! In: the project in `ctx.dir`. Out: every test nextest lists, ignored ones included, minus what
//! the user's filters or the repository's `default-filter` exclude; benchmarks are not tests.
//! 1. `cargo nextest list --message-format json --cargo-message-format json <args>`: stdout holds
//!    cargo's JSON messages (nextest forwards them) and then one JSON line with `rust-suites`.
//! 2. Each suite's `binary-path` is matched against cargo's `compiler-artifact` messages to get the
//!    target's `src_path`, which becomes [`TestCase::file`].
//! 3. A failed build (`build-finished` with `success: false`, exit 101) with compiler errors is a
//!    build failure (files from the errors' spans); without compiler errors it is a problem.
//!
//! # run
//! In: test ids. Out: one outcome per id.
//! 1. List as above (this builds). A build failure makes every id `BuildFail`; ids that are not
//!    in the list stay `NotObserved` and are not named to nextest, because nextest rejects a
//!    filterset whose `binary_id(=…)` matches no binary (exit 94) instead of running the rest.
//! 2. Write a tool config into `ctx.scratch` that puts nextest's store in the scratch directory
//!    and defines a `shipmoor` profile (retries 0, no fail-fast, JUnit at `junit.xml`), and
//!    remove any JUnit file a previous run left there.
//! 3. `cargo nextest run --tool-config-file shipmoor:<cfg> --profile shipmoor --no-fail-fast
//!    --retries 0 --cargo-message-format json -E <filterset> <args>`, the filterset naming every
//!    listed requested test exactly: `(binary_id(=B) & (test(=T1) | test(=T2))) | …`.
//! 4. Exit 101 with a failed build: every id `BuildFail`. Exit 4 ("no tests to run", e.g. only
//!    ignored tests were requested): every id `NotObserved`, no problem. Exit 0 or 100: read the
//!    JUnit file `<scratch>/nextest-store/shipmoor/junit.xml` (classname = binary id, name = test
//!    name). A test passes only when its case says passed and the exit code agrees with the file
//!    (0 with no failures in it, 100 with some); failed or errored cases are `Fail`; skipped or
//!    absent ones `NotObserved`. Any other exit, or a missing or unreadable file, is a problem.
//!
//! The repository's own `.config/nextest.toml` still applies (nextest ranks it above tool
//! configs), so its setup scripts, test groups and overrides run as the user set them; `--retries
//! 0` on the command line beats any retry setting there. If that file moves the store or defines
//! its own `shipmoor` profile, the JUnit file is not where we look and the run reports a problem
//! rather than a guess.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::build::{classify_build, in_target_order, parse_cargo_messages, Build};
use super::cargo_meta::exec;
use super::cargo_targets;
use super::check_cargo;
use super::libtest::output_failure_kind;
use crate::acceptance::{RunnerConfig, RunnerKind};
use crate::error::InputError;
use crate::floor::progress::FinishedLines;
use crate::floor::runners::contract::NEXTEST;
use crate::floor::runners::junit::{any_failed, CaseNames, JunitFile, Reading};
use crate::floor::runners::kit::{exit_problem, join_problems, worktree_relative};
use crate::floor::runners::registered::{Detect, Registered};
use crate::floor::runners::{
    cd_prefix, BuildFailure, Invocation, ListReport, ListScope, Outcome, Probe, RunCtx, RunReport,
    Runner, TestCase,
};

/// The profile we define in our tool config.
const PROFILE: &str = "shipmoor";

/// `nextest`: only when configured.
pub const REGISTERED: Registered = Registered {
    kind: RunnerKind::Nextest,
    detect: Detect::Never,
    make: |config| Arc::new(Nextest::new(config)),
    harness: super::harness::harness,
    written: super::harness::written,
};

pub struct Nextest {
    config: RunnerConfig,
}

impl Nextest {
    pub fn new(config: RunnerConfig) -> Self {
        Nextest { config }
    }

    /// Only what is bound gets built (book: floor.md): lists only the test targets that hold the scope's files (see
    /// [`cargo_targets`]), one `cargo nextest list -p <package id> <targets>` per package, and
    /// where that does not build, each target alone, so that a target that does not compile
    /// leaves the others listed. `None` where the listing is not narrowed: the user's own
    /// target selection in `args`, metadata that cannot be read, a file that maps to no
    /// target.
    fn list_scoped(&self, ctx: &RunCtx, files: &[String]) -> Option<ListReport> {
        if cargo_targets::user_selects_targets(&self.config.args) {
            return None;
        }
        let mut report = ListReport::default();
        let packages = cargo_targets::workspace_packages(ctx, &mut report.invocations).ok()?;
        let targets = cargo_targets::select_in(ctx, &packages, files)?;
        let mut by_package: BTreeMap<usize, Vec<&cargo_targets::Selected>> = BTreeMap::new();
        for t in &targets {
            by_package.entry(t.package).or_default().push(t);
        }
        let mut tests = BTreeSet::new();
        let mut failures: Vec<BuildFailure> = Vec::new();
        let mut problems = Vec::new();
        for (p, group) in by_package {
            let mut groups = vec![group];
            while let Some(group) = groups.pop() {
                let mut selection: Vec<String> = cargo_targets::package_args(&packages[p]).to_vec();
                selection.extend(group.iter().flat_map(|t| t.selector.iter().cloned()));
                let listed = self.list_selected(ctx, &selection);
                report.invocations.extend(listed.invocations);
                match (listed.build_failure, listed.problem) {
                    (None, None) => tests.extend(listed.tests),
                    _ if group.len() > 1 => groups.extend(group.iter().map(|t| vec![*t])),
                    (Some(bf), _) => failures.push(bf),
                    (None, Some(problem)) => problems.push(problem),
                }
            }
        }
        report.tests = tests.into_iter().collect();
        if !failures.is_empty() {
            report.build_failure = Some(BuildFailure::merge(failures));
        }
        report.problem = join_problems(problems);
        Some(report)
    }

    /// The same for runs (book: floor.md): the cargo selection (`-p <package id> … --lib --test x …`) that
    /// builds only the targets holding `ids`, so that a run builds what it runs and nothing
    /// else. `None` (build as nextest does by default) where the user's `args` select targets,
    /// metadata cannot be read, or no id names a target of the workspace.
    fn targets_of(
        &self,
        ctx: &RunCtx,
        ids: &[String],
        invocations: &mut Vec<Invocation>,
    ) -> Option<Vec<String>> {
        if cargo_targets::user_selects_targets(&self.config.args) {
            return None;
        }
        let packages = cargo_targets::workspace_packages(ctx, invocations).ok()?;
        let wanted: BTreeSet<&str> = ids
            .iter()
            .filter_map(|id| id.split_once(' ').map(|(b, _)| b))
            .collect();
        let mut package_args: Vec<String> = Vec::new();
        let mut selectors: BTreeSet<Vec<String>> = BTreeSet::new();
        for pkg in &packages {
            let mut named = false;
            for t in &pkg.targets {
                let id = super::cargo_meta::binary_id(&pkg.name, &t.kind, &t.name);
                if wanted.contains(id.as_str()) {
                    selectors.insert(t.selector());
                    named = true;
                }
            }
            if named {
                package_args.extend(cargo_targets::package_args(pkg));
            }
        }
        if selectors.is_empty() {
            return None;
        }
        package_args.extend(selectors.into_iter().flatten());
        Some(package_args)
    }

    /// `cargo nextest list` of the packages and targets that `selection` names (every test
    /// target `cargo nextest list` builds by default when it is empty).
    fn list_selected(&self, ctx: &RunCtx, selection: &[String]) -> ListReport {
        let mut report = ListReport::default();
        let mut args: Vec<OsString> = [
            "nextest",
            "list",
            "--message-format",
            "json",
            "--cargo-message-format",
            "json",
        ]
        .map(OsString::from)
        .to_vec();
        args.extend(selection.iter().map(OsString::from));
        args.extend(self.config.args.iter().map(OsString::from));
        let ran = exec(ctx, OsStr::new("cargo"), &args, &ctx.dir, &[]);
        let problem = ran.operational_problem("cargo nextest list");
        let msgs = parse_cargo_messages(&ran.captured().stdout);
        let exit_ok = ran.captured().success();
        let exit_text = exit_problem("cargo nextest list", ran.captured());
        let mut invocation = ran.invocation;
        // cargo's messages among the list, in target order (see `in_target_order`).
        invocation.captured.stdout = in_target_order(&invocation.captured.stdout);
        report.invocations.push(invocation);
        if let Some(p) = problem {
            report.problem = Some(p);
            return report;
        }
        let suites = msgs
            .other_json
            .iter()
            .find(|v| v.get("rust-suites").is_some())
            .cloned();
        if msgs.build_success == Some(false) || (!exit_ok && suites.is_none()) {
            match classify_build(ctx, msgs, false, &exit_text, &mut report.invocations) {
                Build::Failed(bf) => report.build_failure = Some(bf),
                Build::Problem(p) => report.problem = Some(p),
                Build::Built(_) => report.problem = Some(exit_text),
            }
            return report;
        }
        let Some(suites) = suites else {
            report.problem = Some(format!(
                "cargo nextest list printed no test list ({exit_text})"
            ));
            return report;
        };
        if !exit_ok {
            report.problem = Some(exit_text);
            return report;
        }
        // binary path → the target's source file, from cargo's artifact messages.
        let sources: BTreeMap<PathBuf, PathBuf> = msgs
            .binaries
            .iter()
            .map(|b| (b.executable.clone(), b.src_path.clone()))
            .collect();
        let mut tests: Vec<TestCase> = parse_test_list(&suites)
            .into_iter()
            .map(|t| TestCase {
                id: format!("{} {}", t.binary_id, t.name),
                file: sources
                    .get(&PathBuf::from(&t.binary_path))
                    .and_then(|src| worktree_relative(ctx, src)),
            })
            .collect();
        tests.sort();
        tests.dedup();
        report.tests = tests;
        report
    }
}

impl Runner for Nextest {
    rust_family!();

    fn config(&self) -> &RunnerConfig {
        &self.config
    }

    fn check_tool(&self, probe: &Probe) -> Result<(), InputError> {
        check_cargo()?;
        let mut cmd = probe.command("cargo");
        cmd.args(["nextest", "--version"])
            .env("CARGO_TERM_COLOR", "never");
        match probe.run(cmd, Duration::from_secs(60)) {
            Ok(c) if c.success() => Ok(()),
            _ => Err(InputError::new("`cargo nextest` is not installed")
                .help("cargo install cargo-nextest --locked")),
        }
    }

    fn reproduce(&self, id: &str) -> String {
        super::reproduce(&cd_prefix(&self.config), id, true)
    }

    fn version_probes(&self) -> &'static [&'static [&'static str]] {
        &[
            &["rustc", "-vV"],
            &["cargo", "-V"],
            &["cargo", "nextest", "--version"],
        ]
    }

    fn progress(&self, _ctx: &RunCtx) -> FinishedLines {
        super::progress::nextest_source()
    }

    fn list(&self, ctx: &RunCtx, scope: &ListScope) -> ListReport {
        match scope {
            ListScope::Files(files) => self
                .list_scoped(ctx, files)
                .unwrap_or_else(|| self.list_selected(ctx, &[])),
            ListScope::All => self.list_selected(ctx, &[]),
        }
    }

    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
        let mut report = RunReport::not_observed(ids);
        // nextest rejects a filterset whose `binary_id(=…)` matches no binary, so list first
        // (this also builds) and only name tests that exist.
        let mut invocations = Vec::new();
        let narrowed = self.targets_of(ctx, ids, &mut invocations);
        let listed = match &narrowed {
            Some(selection) => self.list_selected(ctx, selection),
            None => self.list(ctx, &ListScope::All),
        };
        invocations.extend(listed.invocations);
        report.invocations = invocations;
        if let Some(bf) = listed.build_failure {
            for t in report.tests.values_mut() {
                t.outcome = Outcome::BuildFail;
            }
            report.build_failure = Some(bf);
            return report;
        }
        if let Some(p) = listed.problem {
            report.problem = Some(p);
            return report;
        }
        let existing: BTreeSet<&str> = listed.tests.iter().map(|t| t.id.as_str()).collect();
        let to_run: Vec<String> = ids
            .iter()
            .filter(|id| existing.contains(id.as_str()))
            .cloned()
            .collect();
        let Some(expr) = filterset(&to_run) else {
            return report;
        };
        let store = ctx.scratch.join("nextest-store");
        let junit_path = store.join(PROFILE).join("junit.xml");
        let config_path = ctx.scratch.join("shipmoor-nextest.toml");
        // A file left by an earlier run must never be read as this run's results.
        let _ = std::fs::remove_file(&junit_path);
        if let Err(e) = std::fs::write(&config_path, tool_config(&store)) {
            report.problem = Some(format!(
                "could not write the nextest tool config {}: {e}",
                config_path.display()
            ));
            return report;
        }
        let mut tool_arg = OsString::from(format!("{PROFILE}:"));
        tool_arg.push(&config_path);
        let mut args: Vec<OsString> = vec![
            "nextest".into(),
            "run".into(),
            "--tool-config-file".into(),
            tool_arg,
            "--profile".into(),
            PROFILE.into(),
            "--no-fail-fast".into(),
            "--retries".into(),
            "0".into(),
            "--cargo-message-format".into(),
            "json".into(),
            "-E".into(),
            expr.into(),
        ];
        args.extend(narrowed.iter().flatten().map(OsString::from));
        args.extend(self.config.args.iter().map(OsString::from));
        let mut ran = exec(ctx, OsStr::new("cargo"), &args, &ctx.dir, &[]);
        let problem = ran.operational_problem("cargo nextest run");
        let exit = ran.captured().exit_code;
        let exit_text = exit_problem("cargo nextest run", ran.captured());
        let msgs = parse_cargo_messages(&ran.captured().stdout);
        let junit = JunitFile::read(&junit_path, &mut ran.invocation);
        report.invocations.push(ran.invocation);
        if let Some(p) = problem {
            report.problem = Some(p);
            return report;
        }
        if msgs.build_success == Some(false) {
            match classify_build(ctx, msgs, false, &exit_text, &mut report.invocations) {
                Build::Failed(bf) => {
                    for t in report.tests.values_mut() {
                        t.outcome = Outcome::BuildFail;
                    }
                    report.build_failure = Some(bf);
                }
                Build::Problem(p) => report.problem = Some(p),
                Build::Built(_) => report.problem = Some(exit_text),
            }
            return report;
        }
        let mut problems = Vec::new();
        let exit_believed = match exit {
            // "No tests to run": none of the ids exist in this tree, or all are ignored.
            Some(4) => return report,
            _ if NEXTEST.is_result_code(exit) => true,
            _ => {
                problems.push(exit_text);
                false
            }
        };
        let reading = Reading {
            names: CaseNames::Derived(|id| {
                id.split_once(' ')
                    .map(|(binary_id, name)| (binary_id.to_string(), name.to_string()))
            }),
            exit_believed,
            agree: &|cases| NEXTEST.agree(exit, any_failed(cases)),
            missing: format!(
                "cargo nextest run exited with code {} but wrote no JUnit file at \
                 $SCRATCH/nextest-store/{PROFILE}/junit.xml (does the repository's nextest \
                 config move the store or define a `{PROFILE}` profile?)",
                exit.unwrap_or(-1)
            ),
            unreadable: "nextest's JUnit file is unreadable",
            // nextest's failure text is the test's own output, with libtest's panic in it.
            failure_kind: |c| {
                [c.text.as_deref(), c.message.as_deref()]
                    .into_iter()
                    .flatten()
                    .find_map(output_failure_kind)
            },
        };
        junit.attach(
            &mut report,
            ids.iter().map(String::as_str),
            reading,
            problems,
        );
        report
    }
}

/// A test in nextest's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ListedTest {
    pub binary_id: String,
    pub binary_path: String,
    pub name: String,
    pub ignored: bool,
}

/// Reads the `rust-suites` of `cargo nextest list --message-format json`. Keeps tests that match
/// the filters, and ignored tests (they are tests of the suite; running one reports it ignored);
/// drops tests the user's filters or the default filter exclude, and benchmarks.
pub(super) fn parse_test_list(list: &Value) -> Vec<ListedTest> {
    let mut out = Vec::new();
    let Some(suites) = list.get("rust-suites").and_then(Value::as_object) else {
        return out;
    };
    for (key, suite) in suites {
        let binary_id = suite
            .get("binary-id")
            .and_then(Value::as_str)
            .unwrap_or(key)
            .to_string();
        let binary_path = suite
            .get("binary-path")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let Some(cases) = suite.get("testcases").and_then(Value::as_object) else {
            continue;
        };
        for (name, case) in cases {
            if case.get("kind").and_then(Value::as_str).unwrap_or("test") != "test" {
                continue;
            }
            let ignored = case.get("ignored").and_then(Value::as_bool) == Some(true);
            let status = case.pointer("/filter-match/status").and_then(Value::as_str);
            let reason = case.pointer("/filter-match/reason").and_then(Value::as_str);
            let keep = match status {
                Some("matches") | None => true,
                Some(_) => reason == Some("ignored"),
            };
            if keep {
                out.push(ListedTest {
                    binary_id: binary_id.clone(),
                    binary_path: binary_path.clone(),
                    name: name.clone(),
                    ignored,
                });
            }
        }
    }
    out
}

/// The filterset that selects exactly the given ids; `None` when no id is well-formed.
pub(super) fn filterset(ids: &[String]) -> Option<String> {
    let mut by_binary: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for id in ids {
        if let Some((binary_id, name)) = id.split_once(' ') {
            if !binary_id.is_empty() && !name.is_empty() {
                by_binary.entry(binary_id).or_default().push(name);
            }
        }
    }
    if by_binary.is_empty() {
        return None;
    }
    let parts: Vec<String> = by_binary
        .iter()
        .map(|(binary_id, names)| {
            let tests: Vec<String> = names
                .iter()
                .map(|n| format!("test(={})", escape_matcher(n)))
                .collect();
            format!(
                "(binary_id(={}) & ({}))",
                escape_matcher(binary_id),
                tests.join(" | ")
            )
        })
        .collect();
    Some(parts.join(" | "))
}

/// Escapes a string for an `=` matcher: the escapes nextest's filterset grammar defines, and
/// `\u{..}` for other control characters and for spaces at either end (which the parser would
/// otherwise trim).
pub(super) fn escape_matcher(s: &str) -> String {
    let n = s.chars().count();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, c) in s.chars().enumerate() {
        match c {
            '\\' => out.push_str("\\\\"),
            ')' => out.push_str("\\)"),
            ',' => out.push_str("\\,"),
            '/' => out.push_str("\\/"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c if c.is_whitespace() && (i == 0 || i + 1 == n) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// Our tool config: the store in the scratch directory, and the `shipmoor` profile.
fn tool_config(store: &std::path::Path) -> String {
    format!(
        "# Written by shipmoor claim-check for one run.\n\
         [store]\n\
         dir = {}\n\
         \n\
         [profile.{PROFILE}]\n\
         retries = 0\n\
         fail-fast = false\n\
         \n\
         [profile.{PROFILE}.junit]\n\
         path = \"junit.xml\"\n",
        toml_string(&store.to_string_lossy())
    )
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filterset_names_each_test_exactly() {
        let ids = vec![
            "fx-crate::t passes".to_string(),
            "fx-crate::t mod::fails".to_string(),
            "fx-crate::bin/tool odd),name\\x".to_string(),
            "malformed".to_string(),
        ];
        assert_eq!(
            filterset(&ids).unwrap(),
            "(binary_id(=fx-crate::bin\\/tool) & (test(=odd\\)\\,name\\\\x))) | \
             (binary_id(=fx-crate::t) & (test(=passes) | test(=mod::fails)))"
        );
        assert_eq!(filterset(&["malformed".to_string()]), None);
        assert_eq!(escape_matcher(" a b "), "\\u{20}a b\\u{20}");
    }

    #[test]
    fn test_list() {
        let json = r#"{"rust-build-meta":{},"test-count":4,"rust-suites":{
          "fx-crate":{"binary-id":"fx-crate","binary-path":"/t/debug/deps/fx_crate-1","kind":"lib","testcases":{
            "tests::unit_ok":{"kind":"test","ignored":false,"filter-match":{"status":"matches"}}}},
          "fx-crate::t":{"binary-id":"fx-crate::t","binary-path":"/t/debug/deps/t-2","kind":"test","testcases":{
            "ignored":{"kind":"test","ignored":true,"filter-match":{"status":"mismatch","reason":"ignored"}},
            "filtered":{"kind":"test","ignored":false,"filter-match":{"status":"mismatch","reason":"expression"}},
            "bench_x":{"kind":"bench","ignored":false,"filter-match":{"status":"matches"}},
            "passes":{"kind":"test","ignored":false,"filter-match":{"status":"matches"}}}},
          "fx-crate::bin/skipped":{"binary-id":"fx-crate::bin/skipped","binary-path":"/t/x","kind":"bin","status":"skipped","testcases":{}}
        }}"#;
        let v: Value = serde_json::from_str(json).unwrap();
        let names: Vec<(String, String, bool)> = parse_test_list(&v)
            .into_iter()
            .map(|t| (t.binary_id, t.name, t.ignored))
            .collect();
        assert_eq!(
            names,
            vec![
                ("fx-crate".into(), "tests::unit_ok".into(), false),
                ("fx-crate::t".into(), "ignored".into(), true),
                ("fx-crate::t".into(), "passes".into(), false),
            ]
        );
    }

    #[test]
    fn tool_config_is_toml() {
        let cfg = tool_config(std::path::Path::new("/tmp/a \"b\"\\c/store"));
        assert!(cfg.contains("dir = \"/tmp/a \\\"b\\\"\\\\c/store\"\n"));
        assert!(cfg.contains("[profile.shipmoor]\nretries = 0\nfail-fast = false\n"));
        assert!(cfg.contains("[profile.shipmoor.junit]\npath = \"junit.xml\"\n"));
    }
}
