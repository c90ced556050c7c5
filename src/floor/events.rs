//! What the floor observes, as events, and the two that consume them: the runtime table keeps
//! the ones that are a row of it, and the progress display shows a line for the ones a person
//! watching the run should see now. Every progress line is worded here, beside the row it goes
//! with.

use crate::format::floor::{RuntimeRow, Side};
use crate::git::CommitId;

use super::planted::Planted;
use super::progress::Live;

/// One observation of the floor, in the order the run made it.
pub(super) enum Event<'e> {
    /// Head's worktree is being made.
    HeadWorktree { head: &'e CommitId },
    /// The tag scan of head's tracked files began.
    Scanning { head: &'e CommitId, tags: usize },
    /// A runner under whose root no tag occurs: it is neither set up nor listed.
    NothingToList {
        head: &'e CommitId,
        root: &'e str,
        runner: &'e str,
    },
    /// A runner's listing at head began.
    Listing { head: &'e CommitId, runner: &'e str },
    /// A runner's `setup` began.
    Setup { side: Side, setup: &'e str },
    /// What a side without a `setup` took from the checkout (`result`), with its row.
    Prepared { side: Side, row: RuntimeRow },
    /// The seeding of a side's cargo target dir began (head's from the checkout's, base's
    /// from head's).
    Seeding { side: Side },
    /// Base's worktree is being made, with `files` test files from head laid over it and the
    /// test items of `spliced` source files (`None`: nothing spliced).
    BaseWorktree {
        base: &'e CommitId,
        files: usize,
        spliced: Option<usize>,
    },
    /// A source file whose test items could not be laid over base (`error`), with its row.
    NotSpliced {
        path: &'e str,
        error: &'e str,
        row: RuntimeRow,
    },
    /// Base's observations came from the base cache, with its row.
    BaseReused {
        base: &'e CommitId,
        entry: &'e str,
        head: &'e str,
        row: RuntimeRow,
    },
    /// Run `run` of `runs` of a runner's `tests` bound tests at a side began.
    RunningBound {
        side: Side,
        commit: &'e CommitId,
        tests: usize,
        runner: &'e str,
        run: u32,
        runs: u32,
    },
    /// Run `run` of `runs` of a `check.command` at a side began.
    CheckCommand {
        side: Side,
        command: &'e str,
        run: u32,
        runs: u32,
    },
    /// `tests` tests did not build at base because of other new test files, and run again
    /// without them.
    Isolating { tests: usize },
    /// `what` at a side wrote a file that decides how later commands there run.
    Planted {
        side: Side,
        what: &'e str,
        planted: &'e Planted,
    },
    /// The git configuration changed while the floor ran (`changed`: the files).
    GitChanged { changed: &'e [String] },
    /// A row of the runtime table no person needs to see at once.
    Row(RuntimeRow),
}

impl Event<'_> {
    /// The progress line, for an event a person watching should see now.
    pub(super) fn line(&self) -> Option<String> {
        Some(match self {
            Event::HeadWorktree { head } => format!("head {}: creating worktree", head.short()),
            Event::Scanning { head, tags } => format!(
                "head {}: scanning tracked files for {tags} tag(s)",
                head.short()
            ),
            Event::NothingToList { head, root, runner } => format!(
                "head {}: no tag occurs under {root} ({runner}): nothing to list or build",
                head.short()
            ),
            Event::Listing { head, runner } => {
                format!("head {}: listing tests ({runner})", head.short())
            }
            Event::Setup { side, setup } => format!("{}: setup `{setup}`", side.as_str()),
            Event::Prepared { side, row } => format!("{}: {}", side.as_str(), row.result),
            Event::Seeding { side: Side::Head } => {
                "head: seeding the target dir from the checkout's (registry dependencies only)"
                    .into()
            }
            Event::Seeding { side: Side::Base } => {
                "base: seeding the target dir from head's (registry dependencies only)".into()
            }
            Event::BaseWorktree {
                base,
                files,
                spliced,
            } => format!(
                "base {}: creating worktree, laying over {files} test file(s) from head{}",
                base.short(),
                spliced
                    .map(|n| format!(" and the test items of {n} source file(s)"))
                    .unwrap_or_default()
            ),
            Event::NotSpliced { path, error, .. } => {
                format!("base: the test items of {path} are not laid over: {error}")
            }
            Event::BaseReused {
                base, entry, head, ..
            } => format!(
                "base {}: reused from the base cache (entry sha256:{entry}, observed at head {head})",
                base.short()
            ),
            Event::RunningBound {
                side,
                commit,
                tests,
                runner,
                run,
                runs,
            } => format!(
                "{} {}: running {tests} bound test(s) ({runner}, run {run}/{runs})",
                side.as_str(),
                commit.short()
            ),
            Event::CheckCommand {
                side,
                command,
                run,
                runs,
            } => format!(
                "{}: check.command `{command}` (run {run}/{runs})",
                side.as_str()
            ),
            Event::Isolating { tests } => format!(
                "base: {tests} test(s) did not build because of other new test files; running them without those"
            ),
            Event::Planted {
                side,
                what,
                planted,
            } => format!(
                "{}: {what} wrote {} ({}): what runs after it there is not trusted",
                side.as_str(),
                planted.path,
                planted.what
            ),
            Event::GitChanged { changed } => {
                format!("warning: the git configuration {}", git_changed(changed))
            }
            Event::Row(_) => return None,
        })
    }

    /// The runtime row, for an event the runtime table keeps.
    pub(super) fn row(self) -> Option<RuntimeRow> {
        match self {
            Event::Prepared { row, .. }
            | Event::NotSpliced { row, .. }
            | Event::BaseReused { row, .. }
            | Event::Row(row) => Some(row),
            Event::Planted {
                side,
                what,
                planted,
            } => Some(RuntimeRow {
                side: row_side(side).into(),
                runner: "harness guard".into(),
                command: format!("files written by {what}"),
                tests: 0,
                result: format!(
                    "{} ({}) written at run time: what runs after it at {} is not trusted",
                    planted.path,
                    planted.what,
                    side.as_str()
                ),
                seconds: 0.0,
                exit_code: None,
                excerpt: None,
                tool: None,
            }),
            Event::GitChanged { changed } => Some(RuntimeRow {
                side: "head and base".into(),
                runner: "git".into(),
                command: "the git configuration".into(),
                tests: 0,
                result: git_changed(changed),
                seconds: 0.0,
                exit_code: None,
                excerpt: None,
                tool: None,
            }),
            _ => None,
        }
    }
}

/// What the git configuration's change means for the person.
fn git_changed(changed: &[String]) -> String {
    format!(
        "changed while the floor ran: {}; review it before you run git there again (a filter, a hook or an fsmonitor runs in every git command)",
        changed.join(", ")
    )
}

/// The progress display: a line per event a person should see now ([`Event::line`]), and,
/// when live, how far the running step's bound tests are.
pub(super) struct Progress<'a> {
    line: &'a dyn Fn(&str),
    /// A line per finished test and heartbeats while commands run; `None`: neither.
    pub(super) live: Option<Live>,
    /// The bound tests of the running phase (one runner at one side, one run) that have
    /// finished, and how many it runs, for the heartbeat.
    pub(super) tally: (usize, usize),
}

impl<'a> Progress<'a> {
    pub(super) fn new(line: &'a dyn Fn(&str), live: Option<Live>) -> Progress<'a> {
        Progress {
            line,
            live,
            tally: (0, 0),
        }
    }

    /// Shows `event`'s line, if it has one; a run of bound tests starts its tally.
    pub(super) fn show(&mut self, event: &Event<'_>) {
        if let Event::RunningBound { tests, .. } = event {
            self.tally = (0, *tests);
        }
        if let Some(line) = event.line() {
            (self.line)(&line);
        }
    }
}

/// A runtime row's side: base's names what was laid over it.
pub(super) fn row_side(side: Side) -> &'static str {
    match side {
        Side::Head => "head",
        Side::Base => "base (+ head test files)",
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    fn head() -> CommitId {
        CommitId::parse(&"ab".repeat(20)).unwrap()
    }

    /// What a display shows for `events` in order, and the rows the runtime table keeps.
    fn consume(events: Vec<Event<'_>>) -> (Vec<String>, Vec<RuntimeRow>, (usize, usize)) {
        let lines = RefCell::new(Vec::new());
        let line = |l: &str| lines.borrow_mut().push(l.to_string());
        let mut progress = Progress::new(&line, None);
        let mut rows = Vec::new();
        for e in events {
            progress.show(&e);
            rows.extend(e.row());
        }
        let tally = progress.tally;
        (lines.into_inner(), rows, tally)
    }

    #[test]
    fn a_planted_file_is_one_event_with_a_line_and_a_row_that_say_the_same() {
        let planted = Planted {
            path: "conftest.py".into(),
            what: "pytest conftest".into(),
        };
        let (lines, rows, _) = consume(vec![Event::Planted {
            side: Side::Base,
            what: "the run of t",
            planted: &planted,
        }]);
        assert_eq!(
            lines,
            ["base: the run of t wrote conftest.py (pytest conftest): what runs after it there is not trusted"]
        );
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].side, "base (+ head test files)");
        assert_eq!(rows[0].runner, "harness guard");
        assert_eq!(rows[0].command, "files written by the run of t");
        assert!(rows[0]
            .result
            .starts_with("conftest.py (pytest conftest) written at run time"));
    }

    #[test]
    fn a_step_that_begins_shows_a_line_and_keeps_no_row_and_a_plain_row_shows_nothing() {
        let head = head();
        let row = RuntimeRow {
            side: "head".into(),
            runner: "pytest".into(),
            command: "c".into(),
            tests: 0,
            result: "r".into(),
            seconds: 0.0,
            exit_code: None,
            excerpt: None,
            tool: None,
        };
        let (lines, rows, tally) = consume(vec![
            Event::HeadWorktree { head: &head },
            Event::RunningBound {
                side: Side::Head,
                commit: &head,
                tests: 3,
                runner: "pytest",
                run: 1,
                runs: 2,
            },
            Event::Row(row),
        ]);
        assert_eq!(
            lines,
            [
                "head abababa: creating worktree",
                "head abababa: running 3 bound test(s) (pytest, run 1/2)"
            ]
        );
        assert_eq!(rows.len(), 1, "only the plain row is kept");
        assert_eq!(
            (rows[0].command.as_str(), rows[0].result.as_str()),
            ("c", "r")
        );
        assert_eq!(
            tally,
            (0, 3),
            "a run of bound tests starts the heartbeat's tally"
        );
    }

    #[test]
    fn the_git_configuration_changing_is_a_warning_and_a_row_naming_the_files() {
        let changed = vec![
            ".git/config".to_string(),
            ".git/hooks/pre-commit".to_string(),
        ];
        let (lines, rows, _) = consume(vec![Event::GitChanged { changed: &changed }]);
        assert!(lines[0].starts_with(
            "warning: the git configuration changed while the floor ran: .git/config, .git/hooks/pre-commit;"
        ));
        assert_eq!(
            lines[0],
            format!("warning: the git configuration {}", rows[0].result)
        );
        assert_eq!(rows[0].side, "head and base");
    }
}
