//! In-process benchmark of criterion derivation beside a plain read of the same file
//! (harness = false), driven by `bench/derive.sh`.
//!
//! ```text
//! cargo bench --bench derive -- --iterations N --body FILE [--body FILE …]
//! ```
//!
//! Per body, after a warm-up, N calls each are timed one by one: `std::fs::read_to_string` of
//! the file (what any reader of the body pays), and `acceptance::derive::derive` over the text
//! already in memory. Prints the medians, the ratio and how many criteria came out; exits 1 when
//! a derive median is at or over the 100 ms target.

mod timing;

use std::hint::black_box;
use std::path::PathBuf;

use shipmoor::acceptance::derive::{derive, Text};

const TARGET_MS: f64 = 100.0;

fn fail(msg: &str) -> ! {
    eprintln!("derive bench: {msg}");
    std::process::exit(2);
}

/// Runs `f` a few times untimed, then `n` times each timed on its own; the median in ms.
fn median_ms(n: usize, f: impl FnMut()) -> f64 {
    timing::median_ms(n, (n / 10).clamp(1, 5), f)
}

fn main() {
    let mut n = 20usize;
    let mut bodies: Vec<PathBuf> = Vec::new();
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = it.next() {
        let value = it
            .next()
            .unwrap_or_else(|| fail(&format!("{a} needs a value")));
        match a.as_str() {
            "--iterations" => {
                n = value
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .unwrap_or_else(|| fail("--iterations takes a positive number"))
            }
            "--body" => bodies.push(PathBuf::from(value)),
            _ => fail(&format!("unexpected argument `{a}`")),
        }
    }
    if bodies.is_empty() {
        fail("give at least one --body FILE");
    }
    let mut over = false;
    println!("in process ({n} timed calls each, after a warm-up), median:");
    for path in &bodies {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", path.display())));
        let read_ms = median_ms(n, || {
            black_box(std::fs::read_to_string(path).unwrap_or_default());
        });
        let mut criteria = 0;
        let derive_ms = median_ms(n, || {
            let d = derive(&[Text {
                name: "body",
                body: &text,
            }]);
            criteria = d.len();
            black_box(d);
        });
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        );
        println!(
            "  {name}: {:.2} MiB, {criteria} criteria\n    plain read        {read_ms:>9.3} ms\n    derive            {derive_ms:>9.3} ms   ({:.1}x the read; target under {TARGET_MS} ms: {})",
            text.len() as f64 / (1 << 20) as f64,
            derive_ms / read_ms,
            if derive_ms < TARGET_MS { "met" } else { "MISSED" }
        );
        over |= derive_ms >= TARGET_MS;
    }
    if over {
        std::process::exit(1);
    }
}
