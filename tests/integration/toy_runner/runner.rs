//! The toy runner: `sh toy.sh` at the runner's root writes JUnit XML to
//! `$SHIPMOOR_JUNIT_OUT`; a test's id is `<classname> <name>`. Everything the floor needs of it
//! is here and in its registered entry.

use std::ffi::{OsStr, OsString};
use std::sync::Arc;

use shipmoor::acceptance::{RunnerConfig, RunnerKind};
use shipmoor::error::InputError;
use shipmoor::floor::harness::Family;
use shipmoor::floor::runners::contract::ExitContract;
use shipmoor::floor::runners::junit::{any_failed, CaseNames, JunitFile, Reading};
use shipmoor::floor::runners::kit::{exec, exit_problem};
use shipmoor::floor::runners::registered::{no_harness, nothing_written, Detect, Registered};
use shipmoor::floor::runners::{ListReport, ListScope, Probe, RunCtx, RunReport, Runner, TestCase};

/// The toy runner's entry: never detected, only configured.
pub const REGISTERED: Registered = Registered {
    kind: RunnerKind::named("toy"),
    detect: Detect::Never,
    make: |config| Arc::new(Toy { config }),
    harness: no_harness,
    written: nothing_written,
};

struct Toy {
    config: RunnerConfig,
}

/// What the toy's exit code means: 0 when no test failed, anything else when one did.
const TOY: ExitContract = ExitContract {
    runner: "toy",
    passed: 0,
    failed: None,
};

/// What one `sh toy.sh` left: the JUnit file it wrote, its exit code, and what kept it from
/// results (it did not start, timed out, was killed).
struct Toyed {
    file: JunitFile,
    exit: Option<i32>,
    problem: Option<String>,
}

impl Toy {
    /// Runs `sh toy.sh` and reads the JUnit file it wrote.
    fn toy(&self, ctx: &RunCtx, report: &mut Vec<shipmoor::floor::runners::Invocation>) -> Toyed {
        let out = ctx.scratch.join("toy.xml");
        let env = vec![(
            OsString::from("SHIPMOOR_JUNIT_OUT"),
            out.as_os_str().to_owned(),
        )];
        let mut ran = exec(
            ctx,
            OsStr::new("sh"),
            &[OsString::from("toy.sh")],
            &ctx.dir,
            &env,
        );
        let file = JunitFile::read(&out, &mut ran.invocation);
        let exit = ran.captured().exit_code;
        let problem = ran.operational_problem("toy");
        report.push(ran.invocation);
        Toyed {
            file,
            exit,
            problem,
        }
    }
}

impl Runner for Toy {
    fn config(&self) -> &RunnerConfig {
        &self.config
    }

    fn check_tool(&self, _probe: &Probe) -> Result<(), InputError> {
        Ok(())
    }

    fn family(&self) -> Family {
        Family::Command
    }

    fn is_test_file(&self, rel_path: &str) -> bool {
        rel_path == "toy.sh"
    }

    fn list(&self, ctx: &RunCtx, _scope: &ListScope) -> ListReport {
        let mut report = ListReport::default();
        let toyed = self.toy(ctx, &mut report.invocations);
        if let Some(p) = toyed.problem {
            report.problem = Some(p);
            return report;
        }
        match toyed
            .file
            .into_cases("toy.sh wrote no JUnit XML".into(), "unreadable")
        {
            Ok(cases) => {
                report.tests = cases
                    .iter()
                    .map(|c| TestCase {
                        id: format!("{} {}", c.classname, c.name),
                        file: None,
                    })
                    .collect()
            }
            Err(p) => report.problem = Some(p.0),
        }
        report
    }

    fn run(&self, ctx: &RunCtx, ids: &[String]) -> RunReport {
        let mut report = RunReport::not_observed(ids);
        let Toyed {
            file,
            exit,
            problem,
        } = self.toy(ctx, &mut report.invocations);
        if problem.is_some() {
            report.problem = problem;
            return report;
        }
        let reading = Reading {
            names: CaseNames::Joined,
            exit_believed: true,
            agree: &|cases| TOY.agree(exit, any_failed(cases)),
            missing: exit_problem("toy", &report.invocations[0].captured),
            unreadable: "unreadable",
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
