//! The generic `junit-command` adapter: any command that runs tests and writes JUnit XML.
//!
//! The command (the runner's `command`, run with `sh -c` in the runner's root) must write its
//! JUnit XML to the path in `$SHIPMOOR_JUNIT_OUT`, a file of our own outside the worktree. It
//! may read `$SHIPMOOR_TESTS` (the requested ids, one per line) to run fewer tests; it need not.
//!
//! Test ids are `<classname> <name>` as the JUnit file spells them; `TestCase.file` is the
//! testcase's `file` attribute made repo-relative, when there is one.
//!
//! A generic command cannot list tests without running them, so listing runs the command once
//! and reads every testcase it reported. A test passes only when its testcase is present and
//! passed and the exit code agrees (0 with no failure in the file, non-zero with one); a command
//! that exits non-zero with no failure in its file, or writes no file, is a problem and its
//! tests are not observed. Build failures cannot be told apart from other failures here.

use std::ffi::{OsStr, OsString};
use std::sync::Arc;

use super::contract::JUNIT_COMMAND;
use super::junit::{any_failed, CaseNames, JunitCase, JunitFile, Reading};
use super::kit::{exec, exit_problem, worktree_relative};
use super::registered::{nothing_written, Detect, Registered};
use super::{ListReport, ListScope, Probe, RunCtx, RunReport, Runner, TestCase};
use crate::acceptance::{RunnerConfig, RunnerKind};
use crate::error::InputError;
use crate::floor::harness::{Family, HarnessFile, HarnessHit};
use crate::floor::runners::Problem;

/// `junit-command`: only when configured.
pub const REGISTERED: Registered = Registered {
    kind: RunnerKind::JunitCommand,
    detect: Detect::Never,
    make: |config| Arc::new(JunitCommand::new(config)),
    harness,
    written: nothing_written,
};

/// The harness guard's rule for `junit-command`: a runner's own script decides everything it
/// reports, for every test of the repository.
fn harness(f: &HarnessFile<'_>) -> Option<HarnessHit> {
    f.command_scripts
        .iter()
        .any(|s| s == f.path)
        .then(|| HarnessHit {
            what: "junit-command script",
            family: Family::Command,
            scope: String::new(),
        })
}

pub struct JunitCommand {
    config: RunnerConfig,
}

impl JunitCommand {
    pub fn new(config: RunnerConfig) -> Self {
        JunitCommand { config }
    }

    /// Runs the command; returns the JUnit file it left, its exit code and what to say if it
    /// wrote no file (or why nothing it reported can be believed).
    fn run_command(
        &self,
        ctx: &RunCtx,
        requested: &[String],
        invocations: &mut Vec<super::Invocation>,
    ) -> Result<(JunitFile, Option<i32>, String), Problem> {
        let command = self.config.command.clone().unwrap_or_default();
        let out = ctx.scratch.join("junit.xml");
        let _ = std::fs::remove_file(&out);
        let mut args: Vec<OsString> = vec![OsString::from("-c"), OsString::from(&command)];
        args.extend(self.config.args.iter().map(OsString::from));
        let env = vec![
            (
                OsString::from("SHIPMOOR_JUNIT_OUT"),
                out.as_os_str().to_owned(),
            ),
            (
                OsString::from("SHIPMOOR_TESTS"),
                OsString::from(requested.join("\n")),
            ),
        ];
        let mut ran = exec(ctx, OsStr::new("sh"), &args, &ctx.dir, &env);
        let file = JunitFile::read(&out, &mut ran.invocation);
        let problem = ran.operational_problem("junit-command");
        let exit = ran.captured().exit_code;
        let exit_text = exit_problem("junit-command", ran.captured());
        invocations.push(ran.invocation);
        if let Some(p) = problem {
            return Err(Problem(p));
        }
        let missing = format!("{exit_text}; it wrote no JUnit XML to $SHIPMOOR_JUNIT_OUT");
        Ok((file, exit, missing))
    }
}

/// The script a command runs first, when its first word is a relative path.
pub fn command_script(cmd: &str) -> Option<String> {
    let first = cmd.split_whitespace().next()?;
    let first = first.strip_prefix("./").unwrap_or(first);
    (first.contains('/') && !first.starts_with('/')).then(|| first.to_string())
}

/// The opening of the problem when the command's JUnit XML does not parse.
const UNREADABLE: &str = "its JUnit XML is unreadable";

fn id_of(c: &JunitCase) -> String {
    format!("{} {}", c.classname, c.name)
}

impl Runner for JunitCommand {
    fn config(&self) -> &RunnerConfig {
        &self.config
    }

    fn family(&self) -> Family {
        Family::Command
    }

    fn harness_script(&self) -> Option<String> {
        self.config.command.as_deref().and_then(command_script)
    }

    fn check_tool(&self, _probe: &Probe) -> Result<(), InputError> {
        match crate::process::which("sh") {
            Some(_) => Ok(()),
            None => Err(InputError::new(
                "`sh` is not on PATH; junit-command runs its command with `sh -c`",
            )
            .help("install a POSIX shell")),
        }
    }

    fn is_test_file(&self, rel_path: &str) -> bool {
        let name = rel_path
            .rsplit('/')
            .next()
            .unwrap_or(rel_path)
            .to_ascii_lowercase();
        rel_path
            .split('/')
            .any(|c| matches!(c, "tests" | "test" | "__tests__" | "spec" | "testdata"))
            || name.starts_with("test_")
            || name.contains("_test.")
            || name.contains(".test.")
            || name.contains("_spec.")
            || name.contains(".spec.")
    }

    fn list(&self, ctx: &RunCtx, _scope: &ListScope) -> ListReport {
        let mut report = ListReport::default();
        let cases = self
            .run_command(ctx, &[], &mut report.invocations)
            .and_then(|(file, _, missing)| file.into_cases(missing, UNREADABLE));
        match cases {
            Ok(cases) => {
                let mut tests: Vec<TestCase> = cases
                    .iter()
                    .map(|c| TestCase {
                        id: id_of(c),
                        file: c.file.as_deref().and_then(|f| {
                            let p = std::path::Path::new(f);
                            let abs = if p.is_absolute() {
                                p.to_path_buf()
                            } else {
                                ctx.dir.join(p)
                            };
                            worktree_relative(ctx, &abs)
                        }),
                    })
                    .collect();
                tests.sort();
                tests.dedup();
                report.tests = tests;
            }
            Err(p) => report.problem = Some(p.0),
        }
        report
    }

    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
        let mut report = RunReport::not_observed(ids);
        if ids.is_empty() {
            return report;
        }
        let (file, exit, missing) = match self.run_command(ctx, ids, &mut report.invocations) {
            Ok(r) => r,
            Err(p) => {
                report.problem = Some(p.0);
                return report;
            }
        };
        let reading = Reading {
            names: CaseNames::Joined,
            // Every exit code means something to a generic command (a signal is a problem
            // already): zero for no failure, anything else for some.
            exit_believed: true,
            agree: &|cases| JUNIT_COMMAND.agree(exit, any_failed(cases)),
            missing,
            unreadable: UNREADABLE,
            failure_kind: |_| None,
        };
        file.attach(
            &mut report,
            ids.iter().map(String::as_str),
            reading,
            Vec::new(),
        );
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::floor::runners::Outcome;
    use std::time::Duration;

    #[test]
    fn the_script_a_command_runs_first() {
        assert_eq!(
            command_script("./scripts/check.sh --x").as_deref(),
            Some("scripts/check.sh")
        );
        assert_eq!(command_script("make check"), None);
    }

    fn runner(command: &str) -> JunitCommand {
        JunitCommand::new(RunnerConfig {
            kind: crate::acceptance::RunnerKind::JunitCommand,
            root: ".".into(),
            args: vec![],
            setup: None,
            command: Some(command.into()),
            line: 0,
            env_pass: Vec::new(),
        })
    }

    fn ctx(dir: &std::path::Path, scratch: &std::path::Path) -> RunCtx {
        RunCtx {
            worktree: dir.to_path_buf(),
            dir: dir.to_path_buf(),
            scratch: scratch.to_path_buf(),
            timeout: Duration::from_secs(60),
            env: vec![],
            jail: crate::sandbox::Jail::none(),
        }
    }

    const XML: &str = r#"<testsuites><testsuite name="s"><testcase classname="suite.A" name="ok" file="tests/a.sh"/><testcase classname="suite.A" name="bad"><failure message="expected 1, got 2"/></testcase><testcase classname="suite.A" name="later"><skipped/></testcase></testsuite></testsuites>"#;

    fn script(dir: &std::path::Path, exit: i32) {
        std::fs::write(dir.join("junit.xml.src"), XML).unwrap();
        std::fs::write(
            dir.join("run.sh"),
            format!("cp junit.xml.src \"$SHIPMOOR_JUNIT_OUT\"\nexit {exit}\n"),
        )
        .unwrap();
    }

    #[test]
    fn lists_and_runs_from_the_junit_file() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        script(dir.path(), 1);
        let r = runner("sh run.sh");
        let listed = r.list(&ctx(dir.path(), scratch.path()), &ListScope::All);
        assert_eq!(listed.problem, None);
        let ids: Vec<&str> = listed.tests.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["suite.A bad", "suite.A later", "suite.A ok"]);
        assert_eq!(listed.tests[2].file.as_deref(), Some("tests/a.sh"));
        let want: Vec<String> = [
            "suite.A ok",
            "suite.A bad",
            "suite.A later",
            "suite.A nothing",
        ]
        .map(String::from)
        .to_vec();
        let run = r.run(&ctx(dir.path(), scratch.path()), &want);
        assert_eq!(run.problem, None);
        assert_eq!(run.outcomes()["suite.A ok"], Outcome::Pass);
        assert_eq!(run.outcomes()["suite.A bad"], Outcome::Fail);
        assert_eq!(run.outcomes()["suite.A later"], Outcome::NotObserved);
        assert_eq!(run.outcomes()["suite.A nothing"], Outcome::NotObserved);
        assert_eq!(run.messages()["suite.A bad"], "expected 1, got 2");
    }

    #[test]
    fn an_exit_code_that_disagrees_with_the_file_is_never_a_pass() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        // Failures in the file, but exit 0.
        script(dir.path(), 0);
        let run = runner("sh run.sh").run(&ctx(dir.path(), scratch.path()), &["suite.A ok".into()]);
        assert_eq!(run.outcomes()["suite.A ok"], Outcome::NotObserved);
        assert!(run.problem.is_some());
    }

    #[test]
    fn no_file_is_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = tempfile::tempdir().unwrap();
        let run = runner("exit 0").run(&ctx(dir.path(), scratch.path()), &["a b".into()]);
        assert_eq!(run.outcomes()["a b"], Outcome::NotObserved);
        assert!(run.problem.unwrap().contains("wrote no JUnit XML"));
    }
}
