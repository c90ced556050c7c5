use super::runners::RunnerId;
use super::side::group_by_file;
use super::{Share, Split};
use std::collections::BTreeMap;

#[test]
fn shards_split_the_entries_round_robin_by_criterion_or_by_runner() {
    let positions = |k, n, split, runners: &[Option<usize>], guard| {
        let runners: Vec<Option<RunnerId>> = runners.iter().map(|r| r.map(RunnerId)).collect();
        Share { k, n, split }
            .positions(&runners, guard)
            .into_iter()
            .collect::<Vec<_>>()
    };
    // Seven criteria and the guard (position 7), three shards: i mod 3 = K - 1.
    let runners = [Some(0), Some(1), Some(0), Some(1), Some(0), Some(1), None];
    assert_eq!(positions(1, 3, Split::Criterion, &runners, true), [0, 3, 6]);
    assert_eq!(positions(2, 3, Split::Criterion, &runners, true), [1, 4, 7]);
    assert_eq!(positions(3, 3, Split::Criterion, &runners, true), [2, 5]);
    // By runner: runner 0's criteria, and those bound to none and the guard, in shard 1.
    assert_eq!(
        positions(1, 3, Split::Runner, &runners, true),
        [0, 2, 4, 6, 7]
    );
    assert_eq!(positions(2, 3, Split::Runner, &runners, true), [1, 3, 5]);
    assert!(positions(3, 3, Split::Runner, &runners, true).is_empty());
    // Runners round robin over fewer shards: runner 2 goes with runner 0.
    let three = [Some(2), Some(1), Some(0)];
    assert_eq!(positions(1, 2, Split::Runner, &three, false), [0, 2]);
    // Every entry in exactly one shard, whatever N.
    for n in 1..=9 {
        for split in [Split::Criterion, Split::Runner] {
            let mut all: Vec<usize> = (1..=n)
                .flat_map(|k| positions(k, n, split, &runners, true))
                .collect();
            all.sort();
            assert_eq!(all, (0..8).collect::<Vec<_>>(), "{n} shards by {split:?}");
        }
    }
}

#[test]
fn bound_tests_run_together_per_file_and_never_across_files() {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let bound: BTreeMap<String, Option<String>> = [
        ("a::one", Some("tests/a.py")),
        ("b::one", Some("tests/b.py")),
        ("a::two", Some("tests/a.py")),
        ("x::nofile", None),
        ("y::nofile", None),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.map(str::to_string)))
    .collect();
    let ids = s(&[
        "a::one",
        "a::two",
        "b::one",
        "g::guard",
        "x::nofile",
        "y::nofile",
    ]);
    let (groups, alone, together) = group_by_file(&ids, &bound);
    assert_eq!(
        groups.into_iter().collect::<Vec<_>>(),
        vec![
            ("tests/a.py".to_string(), s(&["a::one", "a::two"])),
            ("tests/b.py".to_string(), s(&["b::one"])),
        ]
    );
    // No file known: each alone, never grouped with each other.
    assert_eq!(alone, s(&["x::nofile", "y::nofile"]));
    // Not bound (the guard's): together.
    assert_eq!(together, s(&["g::guard"]));
}
