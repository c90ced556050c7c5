//! Progress on long work, shown while the floor runs: a line per finished test with its outcome
//! and time (as nextest prints them), and a heartbeat when a build or a test run has shown
//! nothing for a while. Display only: the floor's outcomes come from each runner's results
//! file, read after the run, never from what is parsed here.
//!
//! In: the output of the commands a floor step starts (through [`crate::process::watching`]), the
//! step's requested test ids, and at the end of the step its parsed outcomes.
//! Out: lines for a [`Live`] sink (stderr, `claim-check: ` before each; nothing with `--quiet`).
//!
//! Steps, for one step (a setup, a listing, or one run of some bound tests):
//! 1. the runner's streamed results are read as they arrive (the [`FinishedLines`] each runner gives,
//!    [`crate::floor::runners::Runner::progress`]): pytest's from the
//!    floor's own plugin, which appends a JSON line per test to a file in the scratch dir (so
//!    pytest's argv and output, which the evidence records, stay as they were); cargo test's
//!    `test NAME ... ok` lines (the floor runs one test at a time, so the time since the
//!    previous line is the test's); `go test -json`'s pass, fail and skip events with their
//!    `Elapsed`; nextest's `PASS [   0.004s] BINARY TEST` status lines on stderr;
//! 2. each requested test the stream names is shown once, when it finishes ([`test_line`]);
//! 3. every [`Live::heartbeat`] of nothing shown, a [`heartbeat_line`] with the time since the
//!    step started, what runs, and how many of the tests finished;
//! 4. when the step ends, a line from the parsed outcomes for each requested test the stream
//!    did not name (jest, vitest and `junit-command` stream nothing the floor reads; a test
//!    that did not build or was not run is never streamed), with no time.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::Side;
use crate::format::floor::Outcome;
use crate::process::{Stream, Watch};
use crate::text::one_line;

/// The variable that sets the heartbeat's interval in seconds (tests set a short one).
pub const HEARTBEAT_ENV: &str = "SHIPMOOR_HEARTBEAT_SECS";
/// The heartbeat's interval without [`HEARTBEAT_ENV`].
pub const HEARTBEAT_DEFAULT: Duration = Duration::from_secs(10);

/// The interval [`HEARTBEAT_ENV`] gives (seconds, fractions allowed), or the default when it
/// is unset or not a positive number.
pub fn heartbeat_interval(value: Option<&str>) -> Duration {
    value
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .unwrap_or(HEARTBEAT_DEFAULT)
}

/// Where progress goes, and how it looks.
#[derive(Clone)]
pub struct Live {
    /// Writes one line (without its newline).
    pub sink: Rc<dyn Fn(&str)>,
    /// Whether outcome words are coloured (decided for stderr by [`crate::colour`]).
    pub colour: bool,
    /// How long nothing is shown before a heartbeat.
    pub heartbeat: Duration,
}

/// An outcome as a finished line shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Pass,
    Fail,
    Skip,
    BuildFail,
    NotRun,
}

impl Shown {
    fn word(self) -> &'static str {
        match self {
            Shown::Pass => "PASS",
            Shown::Fail => "FAIL",
            Shown::Skip => "SKIP",
            Shown::BuildFail => "BUILD FAIL",
            Shown::NotRun => "NOT RUN",
        }
    }

    /// ANSI colour: green for a pass, red for a failure, yellow for what did not run.
    fn colour(self) -> &'static str {
        match self {
            Shown::Pass => "32",
            Shown::Fail | Shown::BuildFail => "1;31",
            Shown::Skip | Shown::NotRun => "33",
        }
    }

    /// What a step's parsed outcome shows, for a test its stream did not name.
    fn from_outcome(o: Outcome) -> Shown {
        match o {
            Outcome::Pass => Shown::Pass,
            Outcome::Fail => Shown::Fail,
            Outcome::BuildFail => Shown::BuildFail,
            Outcome::NotObserved => Shown::NotRun,
        }
    }
}

/// One finished test, as a stream or the parsed outcomes tell it.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// The test as the runner names it (for libtest the name alone, without the binary id).
    pub name: String,
    pub outcome: Shown,
    /// The test's own time, where the runner says (or, for libtest, the time since the line
    /// before).
    pub seconds: Option<f64>,
}

/// `      PASS [  0.41s] head tests/test_x.py::test_y`: the outcome right-aligned to the
/// widest word, the time right-aligned in its brackets (`--` where it is not known), the side,
/// the test id.
pub fn test_line(
    side: Side,
    id: &str,
    outcome: Shown,
    seconds: Option<f64>,
    colour: bool,
) -> String {
    let word = format!("{:>10}", outcome.word());
    let word = if colour {
        format!("\x1b[{}m{word}\x1b[0m", outcome.colour())
    } else {
        word
    };
    let time = match seconds {
        Some(s) => format!("{s:.2}s"),
        None => "--".into(),
    };
    format!("{word} [{time:>7}] {} {}", side.as_str(), one_line(id))
}

/// `base 7fb7011: still running pytest (20 s; 3 of 12 tests finished; last: tests/t.py::a)`.
/// `tests`: finished and requested, and the last finished; `None` for a step that runs no
/// tests (a setup, a listing).
pub fn heartbeat_line(
    label: &str,
    what: &str,
    elapsed: Duration,
    tests: Option<(usize, usize, Option<&str>)>,
) -> String {
    let mut detail = format!("{} s", elapsed.as_secs());
    if let Some((done, total, last)) = tests {
        detail.push_str(&format!(
            "; {done} of {total} test{} finished",
            if total == 1 { "" } else { "s" }
        ));
        if let Some(last) = last {
            detail.push_str(&format!("; last: {}", one_line(last)));
        }
    }
    format!("{label}: still running {what} ({detail})")
}

/// Reads one streamed line into a finished test, when it says one finished.
pub type LineParser = fn(&str) -> Option<Finished>;

/// How a runner's output tells which tests finished: a parser of the lines it prints, or of
/// the lines it appends to a file; the default streams nothing (lines come from the parsed
/// outcomes when the step ends).
#[derive(Debug, Clone, Default)]
pub struct FinishedLines {
    /// Reads one line the run printed on the given stream.
    pub line: Option<fn(Stream, &str) -> Option<Finished>>,
    /// A file the run appends a line per finished test to, and the reader of its lines.
    pub file: Option<(PathBuf, LineParser)>,
    /// The streamed names lack the id's first part (libtest's test name without the binary
    /// id): a name stands for the one requested id that ends with ` NAME`, and a test's time
    /// is the time since the line before.
    pub bare_names: bool,
}

/// Bytes kept of a line still without its end, and read of the pytest plugin's file: a test
/// could write anything there, and none of it is needed past this.
const LINE_LIMIT: usize = 64 * 1024;
const FILE_LIMIT: u64 = 4 * 1024 * 1024;
/// How often the pytest plugin's file is read.
const FILE_POLL: Duration = Duration::from_millis(100);

/// The [`Watch`] of one floor step: its requested tests, what has been shown, and when.
pub struct StepWatch {
    live: Live,
    side: Side,
    /// `head e295e43`.
    label: String,
    /// What runs, as a heartbeat names it (`pytest`, `setup \`npm ci\``).
    what: String,
    source: FinishedLines,
    /// The requested ids, in order; empty for a step that runs no tests.
    ids: Vec<String>,
    /// Finished and requested over the whole phase this step is part of (a runner's bound
    /// tests run in several steps, one per file).
    done: usize,
    total: usize,
    shown: BTreeSet<String>,
    last: Option<String>,
    started: Instant,
    last_shown: Instant,
    /// When the current command started or the last test finished (libtest's times).
    last_event: Instant,
    partial: [Vec<u8>; 2],
    file_read: u64,
    file_polled: Option<Instant>,
}

impl StepWatch {
    /// A step of `what` at `side` (`label` as heartbeats name it) that runs `ids` (none for a
    /// setup or a listing); `done` of `total` of the phase's tests finished before it.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        live: Live,
        side: Side,
        label: String,
        what: String,
        source: FinishedLines,
        ids: Vec<String>,
        done: usize,
        total: usize,
    ) -> StepWatch {
        let now = Instant::now();
        StepWatch {
            live,
            side,
            label,
            what,
            source,
            ids,
            done,
            total,
            shown: BTreeSet::new(),
            last: None,
            started: now,
            last_shown: now,
            last_event: now,
            partial: [Vec::new(), Vec::new()],
            file_read: 0,
            file_polled: None,
        }
    }

    /// How many of the phase's tests have finished, this step's included.
    pub fn done(&self) -> usize {
        self.done
    }

    fn emit(&mut self, line: &str) {
        (self.live.sink)(line);
        self.last_shown = Instant::now();
    }

    /// The requested id a streamed name stands for: the same id, or for libtest the one id
    /// that ends with ` NAME` (the binary id comes first); `None` for a test not requested.
    fn requested(&self, name: &str) -> Option<String> {
        if self.ids.iter().any(|id| id == name) {
            return Some(name.to_string());
        }
        if !self.source.bare_names {
            return None;
        }
        let suffix = format!(" {name}");
        let mut matching = self.ids.iter().filter(|id| id.ends_with(&suffix));
        match (matching.next(), matching.next()) {
            (Some(id), None) => Some(id.clone()),
            _ => None,
        }
    }

    fn finished(&mut self, f: Finished) {
        let now = Instant::now();
        let seconds = if self.source.bare_names {
            Some(now.duration_since(self.last_event).as_secs_f64())
        } else {
            f.seconds
        };
        self.last_event = now;
        let Some(id) = self.requested(&f.name) else {
            return;
        };
        if !self.shown.insert(id.clone()) {
            return;
        }
        self.done += 1;
        let line = test_line(self.side, &id, f.outcome, seconds, self.live.colour);
        self.last = Some(id);
        self.emit(&line);
    }

    fn line(&mut self, stream: Stream, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        if let Some(f) = self.source.line.and_then(|parse| parse(stream, &text)) {
            self.finished(f);
        }
    }

    /// Reads what the pytest plugin appended since the last poll.
    fn poll_file(&mut self) {
        if self.file_polled.is_some_and(|t| t.elapsed() < FILE_POLL) || self.file_read >= FILE_LIMIT
        {
            return;
        }
        let Some((path, parse)) = self.source.file.clone() else {
            return;
        };
        self.file_polled = Some(Instant::now());
        let Ok(mut file) = std::fs::File::open(&path) else {
            return;
        };
        let mut bytes = Vec::new();
        if std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(self.file_read)).is_err()
            || file
                .take(FILE_LIMIT - self.file_read)
                .read_to_end(&mut bytes)
                .is_err()
        {
            return;
        }
        // Only whole lines: the plugin may be writing the next one.
        let Some(end) = bytes.iter().rposition(|b| *b == b'\n') else {
            return;
        };
        self.file_read += end as u64 + 1;
        for line in bytes[..end].split(|b| *b == b'\n') {
            if let Some(f) = parse(&String::from_utf8_lossy(line)) {
                self.finished(f);
            }
        }
    }

    /// The end of the step: the plugin's last lines, then a line for each requested test the
    /// stream did not name, from the parsed outcomes.
    pub fn finish(&mut self, outcomes: &BTreeMap<String, Outcome>) {
        self.file_polled = None;
        self.poll_file();
        for id in self.ids.clone() {
            if self.shown.contains(&id) {
                continue;
            }
            let outcome = outcomes.get(&id).copied().unwrap_or(Outcome::NotObserved);
            self.shown.insert(id.clone());
            self.done += 1;
            let line = test_line(
                self.side,
                &id,
                Shown::from_outcome(outcome),
                None,
                self.live.colour,
            );
            self.last = Some(id);
            self.emit(&line);
        }
    }
}

impl Watch for StepWatch {
    fn started(&mut self, _program: &str) {
        self.last_event = Instant::now();
    }

    fn output(&mut self, stream: Stream, bytes: &[u8]) {
        let slot = match stream {
            Stream::Stdout => 0,
            Stream::Stderr => 1,
        };
        let mut rest = bytes;
        while let Some(i) = rest.iter().position(|b| *b == b'\n') {
            let mut line = std::mem::take(&mut self.partial[slot]);
            line.extend_from_slice(&rest[..i]);
            self.line(stream, &line);
            rest = &rest[i + 1..];
        }
        let partial = &mut self.partial[slot];
        if partial.len() + rest.len() <= LINE_LIMIT {
            partial.extend_from_slice(rest);
        }
    }

    fn tick(&mut self) {
        self.poll_file();
        if self.last_shown.elapsed() < self.live.heartbeat {
            return;
        }
        let tests = (!self.ids.is_empty()).then_some((self.done, self.total, self.last.as_deref()));
        let line = heartbeat_line(&self.label, &self.what, self.started.elapsed(), tests);
        self.emit(&line);
    }
}

/// Runs `f` (a floor step that starts commands) watched by `watch`, when there is one.
pub fn step<T>(watch: Option<&Rc<RefCell<StepWatch>>>, f: impl FnOnce() -> T) -> T {
    match watch {
        Some(w) => {
            let w: Rc<RefCell<dyn Watch>> = w.clone();
            crate::process::watching(w, f)
        }
        None => f(),
    }
}

#[cfg(test)]
mod tests;
