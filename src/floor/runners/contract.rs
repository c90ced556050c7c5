//! Each runner's exit-code contract, declared once, and the one check that an exit code agrees
//! with what the runner's structured results say (book: floor/runners.md: never trust an exit code alone,
//! and never trust results the exit code contradicts).
//!
//! In: a runner's [`ExitContract`], the exit code (`None` for a signal), and whether the
//! results show any failure. Out: `Ok` when they agree, else the sentence a report shows.

use crate::floor::runners::Problem;

/// What a runner's exit codes mean once it has run tests and written results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitContract {
    /// The runner's name as reports show it.
    pub runner: &'static str,
    /// The code for "every test that ran passed" (also what cargo test, `go test -run` and
    /// vitest `-t` return when nothing matched: zero results are judged elsewhere).
    pub passed: i32,
    /// The codes for "a test failed". `None` means any non-zero code (a generic command).
    pub failed: Option<&'static [i32]>,
}

/// libtest binaries and `cargo test`: 101 for a failing test (and for a compile error, which
/// the cargo adapter tells apart from the build's own messages).
pub const LIBTEST: ExitContract = ExitContract {
    runner: "cargo test",
    passed: 0,
    failed: Some(&[101]),
};
/// `cargo nextest run`: 100 for failing tests; 101 (build failed) and 4 (no tests) are not
/// results.
pub const NEXTEST: ExitContract = ExitContract {
    runner: "cargo nextest",
    passed: 0,
    failed: Some(&[100]),
};
/// pytest: 1 for failing tests; 2 (interrupted, collection error), 4 (usage) and 5 (nothing
/// collected) are not results.
pub const PYTEST: ExitContract = ExitContract {
    runner: "pytest",
    passed: 0,
    failed: Some(&[1]),
};
/// `go test`: 1 for a failing test (and for a build failure, told apart by its events).
pub const GO: ExitContract = ExitContract {
    runner: "go test",
    passed: 0,
    failed: Some(&[1]),
};
pub const JEST: ExitContract = ExitContract {
    runner: "jest",
    passed: 0,
    failed: Some(&[1]),
};
pub const VITEST: ExitContract = ExitContract {
    runner: "vitest",
    passed: 0,
    failed: Some(&[1]),
};
/// A command that writes JUnit: zero when nothing failed, anything else when something did.
pub const JUNIT_COMMAND: ExitContract = ExitContract {
    runner: "junit-command",
    passed: 0,
    failed: None,
};

impl ExitContract {
    fn means_failed(&self, code: i32) -> bool {
        match self.failed {
            Some(codes) => codes.contains(&code),
            None => code != self.passed,
        }
    }

    /// Whether the exit code is one this contract gives meaning to at all (a code outside it
    /// says the runner did not get as far as results: a crash, a usage error).
    pub fn is_result_code(&self, exit: Option<i32>) -> bool {
        exit.is_some_and(|c| c == self.passed || self.means_failed(c))
    }

    /// Whether `exit` agrees with results that do (`any_failed`) or do not show a failure.
    pub fn agree(&self, exit: Option<i32>, any_failed: bool) -> Result<(), Problem> {
        let shows = if any_failed {
            "failures"
        } else {
            "no failures"
        };
        match exit {
            Some(c) if c == self.passed && !any_failed => Ok(()),
            Some(c) if c != self.passed && self.means_failed(c) && any_failed => Ok(()),
            Some(c) => Err(Problem(format!(
                "{} exited with code {c} but its results show {shows}",
                self.runner
            ))),
            None => Err(Problem(format!(
                "{} was killed by a signal; its results show {shows}",
                self.runner
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [ExitContract; 7] = [LIBTEST, NEXTEST, PYTEST, GO, JEST, VITEST, JUNIT_COMMAND];

    #[test]
    fn every_contract_agrees_only_with_matching_results() {
        for c in ALL {
            assert!(c.agree(Some(0), false).is_ok(), "{}", c.runner);
            assert!(c.agree(Some(0), true).is_err(), "{}", c.runner);
            assert!(c.agree(None, false).is_err(), "{}", c.runner);
            assert!(c.agree(None, true).is_err(), "{}", c.runner);
            let failed = c.failed.map(|f| f[0]).unwrap_or(1);
            assert!(c.agree(Some(failed), true).is_ok(), "{}", c.runner);
            assert!(c.agree(Some(failed), false).is_err(), "{}", c.runner);
        }
    }

    #[test]
    fn codes_outside_a_contract_never_agree() {
        // pytest 5 (nothing collected), nextest 4 (no tests) and 101 (build failed), cargo's
        // 1 (a cargo error, not a test): none of these is a result.
        for (c, code) in [
            (PYTEST, 5),
            (PYTEST, 2),
            (NEXTEST, 4),
            (NEXTEST, 101),
            (LIBTEST, 1),
        ] {
            assert!(!c.is_result_code(Some(code)), "{} {code}", c.runner);
            assert!(c.agree(Some(code), true).is_err(), "{} {code}", c.runner);
            assert!(c.agree(Some(code), false).is_err(), "{} {code}", c.runner);
        }
        assert!(JUNIT_COMMAND.is_result_code(Some(7)));
        assert!(JUNIT_COMMAND.agree(Some(7), true).is_ok());
    }

    #[test]
    fn the_message_names_the_runner_code_and_results() {
        let e = PYTEST.agree(Some(0), true).unwrap_err();
        assert_eq!(
            e.0,
            "pytest exited with code 0 but its results show failures"
        );
    }
}
