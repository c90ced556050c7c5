//! Step 5, merging duplicates and near-duplicates.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::scan::Candidate;

/// The Jaccard similarity of two token sets (one holding the other) at or above which two
/// criteria are one.
pub(super) const NEAR_DUPLICATE: f64 = 0.8;
/// Each bucket compares a criterion with at most this many earlier ones, so that a body of many
/// similar lines stays linear (a body of thousands of criteria sharing their rarest words spends
/// most of its time here).
pub(super) const BUCKET_CAP: usize = 8;

/// The maps of the merge and the ids: keys are the body's own words, hashed by the millions on a
/// large body, and no input of ours needs SipHash's resistance to chosen collisions (a body
/// crafted to collide costs its own run time, bounded by [`BUCKET_CAP`] where it matters).
pub(super) type Map<K, V> = HashMap<K, V, BuildHasherDefault<Fx>>;

/// The Fx hash (rustc's): a multiply and a rotate per word of input.
#[derive(Default)]
pub(super) struct Fx(u64);

impl Fx {
    pub(super) const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    pub(super) fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(c);
            self.add(u64::from_le_bytes(word));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }
    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

pub(super) fn merge(found: Vec<Candidate>) -> Vec<Candidate> {
    // Exact duplicates first (one map lookup each), then near-duplicates among the distinct.
    let mut kept: Vec<Candidate> = Vec::new();
    let mut by_key: Map<String, usize> = Map::default();
    for c in found {
        match by_key.get(&c.key) {
            Some(&i) => {
                if c.confidence > kept[i].confidence {
                    kept[i] = c;
                }
            }
            None => {
                by_key.insert(c.key.clone(), kept.len());
                kept.push(c);
            }
        }
    }
    drop(by_key);
    // Near-duplicates: each criterion's three smallest token hashes name its buckets; two sets
    // with Jaccard ≥ 0.8 share one of them unless the union's three smallest all fall outside the
    // intersection (odds below 1 in 100), an acceptable miss for a draft a person reviews.
    let tokens: Vec<Vec<u64>> = kept.iter().map(|c| token_hashes(&c.key)).collect();
    let mut parent: Vec<usize> = (0..kept.len()).collect();
    let mut buckets: Map<u64, Vec<usize>> = Map::default();
    for (i, t) in tokens.iter().enumerate() {
        let mut smallest = t.clone();
        smallest.truncate(3);
        let mut matched = None;
        'search: for h in &smallest {
            if let Some(members) = buckets.get(h) {
                for &j in members.iter().take(BUCKET_CAP) {
                    if near_duplicate(&kept[i].key, &kept[j].key, t, &tokens[j]) {
                        matched = Some(find(&mut parent, j));
                        break 'search;
                    }
                }
            }
        }
        if let Some(root) = matched {
            parent[i] = root;
        }
        for h in smallest {
            buckets.entry(h).or_default().push(i);
        }
    }
    let mut best: Map<usize, usize> = Map::default();
    for i in 0..kept.len() {
        let root = find(&mut parent, i);
        let entry = best.entry(root).or_insert(i);
        if kept[i].confidence > kept[*entry].confidence {
            *entry = i;
        }
    }
    let mut winners: Vec<usize> = best.into_values().collect();
    winners.sort_by_key(|&i| (kept[i].text, kept[i].line, i));
    let mut slots: Vec<Option<Candidate>> = kept.into_iter().map(Some).collect();
    winners
        .into_iter()
        .filter_map(|i| slots[i].take())
        .collect()
}

pub(super) fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The sorted, distinct FNV-1a hashes of a key's words.
pub(super) fn token_hashes(key: &str) -> Vec<u64> {
    let mut out: Vec<u64> = key
        .split(' ')
        .map(|w| {
            w.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
            })
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

pub(super) fn near_duplicate(a_key: &str, b_key: &str, a: &[u64], b: &[u64]) -> bool {
    // One must hold the other, so the Jaccard is the smaller's share of the larger: most pairs
    // of a bucket fail on their sizes alone.
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if (small.len() as f64) < NEAR_DUPLICATE * large.len() as f64 {
        return false;
    }
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    let union = a.len() + b.len() - common;
    // One says all the other says, and a little more ("… on the server" / "… on the server
    // side"); a word replaced ("keeps the totals" / "keeps the dates") is another criterion.
    if union == 0
        || common < a.len().min(b.len())
        || (common as f64) / (union as f64) < NEAR_DUPLICATE
    {
        return false;
    }
    // Figures are the criterion: "within a day" and "within a day or 2" are two.
    let words_a: Vec<&str> = a_key.split(' ').collect();
    let words_b: Vec<&str> = b_key.split(' ').collect();
    let differs_in_digits = |x: &[&str], y: &[&str]| {
        x.iter()
            .any(|w| !y.contains(w) && w.bytes().any(|c| c.is_ascii_digit()))
    };
    !differs_in_digits(&words_a, &words_b) && !differs_in_digits(&words_b, &words_a)
}
