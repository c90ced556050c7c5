//! Benchmark of the chat-completions judge (harness = false), driven by `bench/judge.sh`.
//!
//! CRITERIA criteria are judged at CONCURRENCY against two endpoints on loopback
//! (`tests/common/chat_server.rs`), in one run, rounds alternated:
//! - one that answers each request after DELAY ms: the judge stage's wall time, beside the
//!   ideal `ceil(CRITERIA / CONCURRENCY) × DELAY` (the target is within 1.2×);
//! - one that answers at once: the engine's own cost per criterion (that wall time divided by
//!   CRITERIA), which is what the judge stage adds to a real endpoint's latency.
//!
//! Each round is one [`Ask::ask_all`], as the claim-check run calls it: a runtime, an HTTP
//! client, the prompt and request JSON of every criterion, the POSTs, the answers read.
//!
//! ```text
//! cargo bench --bench judge -- [--criteria N] [--concurrency C] [--delay-ms D] [--rounds R]
//! ```
//!
//! Exits 1 when the median wall time is over 1.2 × the ideal.

#[path = "../tests/common/chat_server.rs"]
mod chat_server;

use std::time::{Duration, Instant};

use shipmoor::acceptance::Lane;
use shipmoor::format::judge::{Request, RequestCriterion, RequestFloor, REQUEST_SCHEMA};
use shipmoor::judge::chat::ChatJudge;
use shipmoor::judge::{Ask, JudgeSpec, Reply, Transport};
use shipmoor::verdict::FloorResult;

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

fn request(i: usize) -> Request {
    let id = format!("criterion-{i:02}");
    // A diff of a realistic size for one small change, so the JSON work is not nil.
    let diff: String = (0..120)
        .map(|l| format!("+    audit.write(order, line={l})  # refund path {i}\n"))
        .collect();
    Request {
        schema: REQUEST_SCHEMA.to_string(),
        criterion: RequestCriterion {
            ac: format!("An audit log entry is written for every refund ({id})."),
            id,
            required: true,
            lane: Lane::Judge,
            tag: format!("AC-BENCH-{i:04}"),
        },
        repo: "https://github.com/shipmoor/bench".to_string(),
        base: "1".repeat(40),
        head: "2".repeat(40),
        changed_files: vec!["src/refund.py".to_string()],
        diff,
        diff_truncated: false,
        floor: RequestFloor {
            result: FloorResult::NotApplicable,
            reason: "a judgment criterion".to_string(),
        },
    }
}

fn judge(server: &ChatServer, concurrency: usize) -> ChatJudge {
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
        Ok(judge) => judge,
        Err(e) => panic!("{e}"),
    }
}

/// One `ask_all` of every request, timed; every reply must be an answer.
fn round(judge: &ChatJudge, requests: &[Request]) -> f64 {
    let t = Instant::now();
    let replies = judge.ask_all(requests);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    for reply in &replies {
        assert!(matches!(reply, Reply::Answer { .. }), "{reply:?}");
    }
    assert_eq!(replies.len(), requests.len());
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
    // One canned answer (every request names the same commits), so the endpoint's own work
    // per request stays small beside the engine's.
    let requests: Vec<Request> = (0..args.criteria).map(request).collect();
    let answer = completion(
        &serde_json::json!({
            "schema": "claim_check.judge.response.v1",
            "base": requests[0].base, "head": requests[0].head,
            "decision": "abstain", "rationale": "bench", "obligations": [],
        })
        .to_string(),
        Some((900, 60)),
    );
    let slow_answer = answer.clone();
    let slow = ChatServer::start(move |_| Action::ok(slow_answer.clone()).after(delay));
    let fast = ChatServer::start(move |_| Action::ok(answer.clone()));
    let (slow_judge, fast_judge) = (
        judge(&slow, args.concurrency),
        judge(&fast, args.concurrency),
    );

    // Warm-up: first connections, page faults, allocator.
    round(&fast_judge, &requests);
    round(&slow_judge, &requests);
    let (mut slow_ms, mut fast_ms) = (Vec::new(), Vec::new());
    for _ in 0..args.rounds {
        slow_ms.push(round(&slow_judge, &requests));
        fast_ms.push(round(&fast_judge, &requests));
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
