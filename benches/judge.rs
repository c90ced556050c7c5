//! Benchmark of the chat-completions judge (harness = false), driven by `bench/judge.sh`.
//!
//! CRITERIA criteria are judged at CONCURRENCY against two endpoints on loopback
//! (`tests/common/chat_server.rs`), in one run, rounds alternated:
//! - one that answers each request after DELAY ms: the judge stage's wall time, beside the
//!   ideal `ceil(CRITERIA / CONCURRENCY) × DELAY` (the target is within 1.2×);
//! - one that answers at once: the engine's own cost per criterion (that wall time divided by
//!   CRITERIA), which is what the judge stage adds to a real endpoint's latency.
//!
//! Each round is one [`judge::run`], the judge stage as `claim-check --mode full` runs it over a
//! real git repository (a change of 20 files): the change read (`git diff`, the head tree), each
//! criterion's request built, every request and reply kept as evidence, the transport's
//! runtime, HTTP client, prompt and POSTs, and each answer read and audited.
//!
//! ```text
//! cargo bench --bench judge -- [--criteria N] [--concurrency C] [--delay-ms D] [--rounds R]
//! ```
//!
//! Exits 1 when the median wall time is over 1.2 × the ideal.

#[path = "../tests/common/chat_server.rs"]
mod chat_server;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use shipmoor::acceptance::{tag_for, Criterion, Lane};
use shipmoor::evidence::EvidenceStore;
use shipmoor::floor::{CriterionFloor, EntryKind, FloorEntry};
use shipmoor::git::{CommitId, Git};
use shipmoor::judge::chat::ChatJudge;
use shipmoor::judge::{self, Ask, JudgeSpec, RunInput, Transport};
use shipmoor::verdict::{FloorResult, JudgeResult};

use chat_server::{completion, Action, ChatServer};

const LIMIT: f64 = 1.2;

struct Args {
    criteria: usize,
    concurrency: usize,
    delay: Duration,
    rounds: usize,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        criteria: 20,
        concurrency: 4,
        delay: Duration::from_millis(200),
        rounds: 7,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or(format!("{name} needs a value"))?;
            match v.parse::<u64>() {
                Ok(n) if n > 0 || name == "--delay-ms" => Ok(n),
                _ => Err(format!("{name} takes a positive integer, not `{v}`")),
            }
        };
        match flag.as_str() {
            "--criteria" => out.criteria = value("--criteria")? as usize,
            "--concurrency" => out.concurrency = value("--concurrency")? as usize,
            "--delay-ms" => out.delay = Duration::from_millis(value("--delay-ms")?),
            "--rounds" => out.rounds = value("--rounds")? as usize,
            // cargo bench passes `--bench`.
            "--bench" => {}
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(out)
}

/// A judgment criterion the floor does not decide: the judge is asked about each.
fn entry(i: usize) -> FloorEntry {
    let id = format!("criterion-{i:02}");
    FloorEntry {
        kind: EntryKind::Claimed,
        criterion: Criterion {
            ac: format!("An audit log entry is written for every refund ({id})."),
            tag: tag_for(&id),
            id,
            required: true,
            lane: Lane::Judge,
            check: None,
            line: 3 + i,
            confidence: None,
            source: None,
        },
        floor: CriterionFloor::new(
            FloorResult::NotApplicable,
            "judgment criterion: the floor does not decide it",
            "judge_lane",
        ),
    }
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "git {args:?}");
}

/// A repository whose change touches 20 files of 120 lines each: base and head.
fn repository(dir: &Path) -> (Git, CommitId, CommitId) {
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(dir.join("src")).expect("src/");
    let write = |edit: &str| {
        for f in 0..20 {
            let body: String = (0..120)
                .map(|l| format!("    audit.write(order, line={l})  # refund path {f}{edit}\n"))
                .collect();
            std::fs::write(
                dir.join(format!("src/refund_{f:02}.py")),
                format!("def refund(order):\n{body}"),
            )
            .expect("a source file");
        }
    };
    write("");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    write(" (changed)");
    git(dir, &["commit", "-q", "-am", "head"]);
    let g = Git::discover(dir).expect("the repository");
    let base = g.resolve("HEAD~1", "base").expect("base");
    let head = g.resolve("HEAD", "head").expect("head");
    (g, base, head)
}

fn judge(server: &ChatServer, concurrency: usize) -> (JudgeSpec, Box<dyn Ask>) {
    let spec = JudgeSpec {
        name: "bench".to_string(),
        transport: Transport::Chat {
            url: server.url.clone(),
            model: "loopback".to_string(),
            api_key_env: None,
        },
        timeout: Duration::from_secs(60),
        concurrency,
        max_diff_bytes: 200_000,
        exclude: Vec::new(),
        file: "bench".to_string(),
        line: 1,
    };
    match ChatJudge::from_spec(&spec) {
        Ok(judge) => (spec, Box::new(judge)),
        Err(e) => panic!("{e}"),
    }
}

/// What one round judges.
struct Stage<'a> {
    git: &'a Git,
    base: &'a CommitId,
    head: &'a CommitId,
    entries: &'a [FloorEntry],
}

/// One judge stage, timed; every criterion must come back judged (an abstention).
fn round(stage: &Stage<'_>, panel: &[(JudgeSpec, Box<dyn Ask>)]) -> f64 {
    let mut evidence = EvidenceStore::new();
    let t = Instant::now();
    let out = judge::run(
        RunInput {
            git: stage.git,
            repo: "https://github.com/shipmoor/bench",
            base: stage.base,
            head: stage.head,
            entries: stage.entries,
            panel,
        },
        &mut evidence,
    )
    .expect("the judge stage");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(out.findings.len(), stage.entries.len());
    for f in &out.findings {
        assert_eq!(f.result, JudgeResult::Abstain, "{f:?}");
        assert_eq!(f.downgraded, None, "{f:?}");
    }
    ms
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let mid = v.len() / 2;
    if v.len() % 2 == 0 {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    }
}

fn main() {
    let args = match args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("benches/judge.rs: {e}");
            std::process::exit(2);
        }
    };
    let delay = args.delay;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (g, base, head) = repository(dir.path());
    let entries: Vec<FloorEntry> = (0..args.criteria).map(entry).collect();
    let stage = Stage {
        git: &g,
        base: &base,
        head: &head,
        entries: &entries,
    };
    // One canned answer naming the change's commits, so the endpoint's own work per request
    // stays small beside the engine's.
    let answer = completion(
        &serde_json::json!({
            "schema": "claim_check.judge.response.v1",
            "base": base.as_str(), "head": head.as_str(),
            "decision": "abstain", "rationale": "bench", "obligations": [],
        })
        .to_string(),
        Some((900, 60)),
    );
    let slow_answer = answer.clone();
    let slow = ChatServer::start(move |_| Action::ok(slow_answer.clone()).after(delay));
    let fast = ChatServer::start(move |_| Action::ok(answer.clone()));
    let slow_panel = [judge(&slow, args.concurrency)];
    let fast_panel = [judge(&fast, args.concurrency)];

    // Warm-up: first connections, page faults, allocator, git's caches.
    round(&stage, &fast_panel);
    round(&stage, &slow_panel);
    let (mut slow_ms, mut fast_ms) = (Vec::new(), Vec::new());
    for _ in 0..args.rounds {
        slow_ms.push(round(&stage, &slow_panel));
        fast_ms.push(round(&stage, &fast_panel));
    }
    assert!(slow.max_in_flight() <= args.concurrency);

    let waves = args.criteria.div_ceil(args.concurrency);
    let ideal = waves as f64 * delay.as_secs_f64() * 1e3;
    let (slow_med, fast_med) = (median(slow_ms.clone()), median(fast_ms.clone()));
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let n = args.criteria as f64;
    println!(
        "{} criteria, concurrency {}, {} rounds each (medians; min in brackets)",
        args.criteria, args.concurrency, args.rounds
    );
    println!(
        "  endpoint answering after {:>3} ms: judge stage {:>8.1} ms [{:.1}]   ideal ceil({}/{}) x {} ms = {:.0} ms   ratio {:.3}x (target <= {LIMIT}x)",
        delay.as_millis(),
        slow_med,
        min(&slow_ms),
        args.criteria,
        args.concurrency,
        delay.as_millis(),
        ideal,
        if ideal > 0.0 { slow_med / ideal } else { f64::NAN },
    );
    println!(
        "  endpoint answering at once:      judge stage {:>8.1} ms [{:.1}]   engine overhead {:.3} ms per criterion",
        fast_med,
        min(&fast_ms),
        fast_med / n,
    );
    println!(
        "  above the ideal at {} ms: {:.3} ms per criterion; peak requests in flight {} of {}",
        delay.as_millis(),
        (slow_med - ideal) / n,
        slow.max_in_flight(),
        args.concurrency
    );
    if ideal > 0.0 && slow_med > LIMIT * ideal {
        println!("  OVER TARGET: {:.3}x > {LIMIT}x", slow_med / ideal);
        std::process::exit(1);
    }
    println!("  within target");
}
