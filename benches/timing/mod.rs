//! What the in-process benchmarks share: the median of timed calls.

use std::time::Instant;

/// Runs `f` `warm` times untimed, then `n` times each timed on its own; the median in ms.
pub fn median_ms(n: usize, warm: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..warm {
        f();
    }
    let mut ms: Vec<f64> = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(|a, b| a.total_cmp(b));
    let mid = ms.len() / 2;
    if ms.len() % 2 == 0 {
        (ms[mid - 1] + ms[mid]) / 2.0
    } else {
        ms[mid]
    }
}
