//! Precision and recall of criterion derivation over a corpus of pull request and issue bodies.
//!
//! `tests/fixtures/derive/NAME.md` is a body as authors write them; `NAME.expected.yaml` beside it
//! lists, written by hand by reading the body as a person would, the criteria it states (`ac` and
//! `required`). An empty `NAME.md` stands for a pull request whose body is `null` (the event
//! reader turns `null` into no text). `NAME.seed` is a body of several MiB grown by the test: the
//! lines between `%%repeat%%` and `%%end%%` are repeated until the body holds at least 4 MiB.
//!
//! Matching: a derived criterion matches an expected one when their normalised texts are equal
//! (lower-cased, only letters and digits kept, words one space apart), or else when their word
//! sets have a Jaccard similarity of at least 0.85 (a dropped article or a trailing "!" is the
//! same criterion; a changed figure is not, see [`similar`]). Each expected criterion matches at
//! most one derived one, exact matches first. Micro precision = matched / derived, micro recall =
//! matched / expected over the whole corpus; the required-flag accuracy is over the matched
//! pairs. The test fails below the figures the README states.
//!
//! `tests/fixtures/derive-independent/` is a second corpus measured the same way: bodies written by
//! other people in public repositories (pull request and issue templates, Go proposals, Rust RFCs,
//! Kubernetes enhancement proposals), labelled by hand before the extractor was run on them. Its
//! `SOURCES.md` names each body's repository, path, commit and licence, and how it was labelled.
//! It shows how derivation does on text nobody here wrote; its floor is what it measured, less a
//! small margin, and the README states both corpora's figures.

use std::path::{Path, PathBuf};

use saphyr_parser::{Event, Parser};
use shipmoor::acceptance::derive::{derive, Derived, Text};

/// The floor the README states for this corpus.
const MIN_PRECISION: f64 = 0.9;
const MIN_RECALL: f64 = 0.9;
const MIN_REQUIRED_ACCURACY: f64 = 0.9;
/// The least number of bodies the corpus holds (the acceptance: at least 30).
const MIN_FILES: usize = 30;
/// The floor the README states for the independent corpus's first 23 bodies: what they measured
/// (precision 0.929, recall 0.382, required flag 1.000; before the context-section, lead-in,
/// template-guidance and user-obligation rules 0.301 / 0.324 / 0.955), less about 0.03 (0.04 for
/// the flag, one pair of the 26 in it) so that relabelling one criterion does not fail it, while
/// a regression does.
const INDEPENDENT_MIN_PRECISION: f64 = 0.9;
const INDEPENDENT_MIN_RECALL: f64 = 0.35;
const INDEPENDENT_MIN_REQUIRED_ACCURACY: f64 = 0.96;
/// The independent corpus holds 20 to 30 bodies.
const INDEPENDENT_MIN_FILES: usize = 20;
/// The independent corpus's bodies added later and labelled before any change made for the
/// others' misses (`SOURCES.md`, "Held out"): measured apart, so that a fix that only suits the
/// first 23 bodies shows as a gap between the two figures.
const HELD_OUT: [&str; 7] = [
    "bevy-feature-request",
    "bevy-performance-regression",
    "bevy-pr-template",
    "go-cidr-no-proxy",
    "go-env-config-file",
    "go-signed-shift-counts",
    "rust-rfc-try-from",
];
/// The floor for the held-out bodies: what they measured, which is nothing matched (before the
/// rules made for the first 23 bodies: 6 derived, none right; after: 1 derived, none right; of
/// their 29 criteria most are plain "will"/present-tense design statements, which derivation
/// leaves alone). The README states it; a floor above 0 would be a guess.
const HELD_OUT_MIN_PRECISION: f64 = 0.0;
const HELD_OUT_MIN_RECALL: f64 = 0.0;
const HELD_OUT_MIN_REQUIRED_ACCURACY: f64 = 0.0;
const SEED_BODY_BYTES: usize = 4 << 20;

#[derive(Debug)]
struct Expected {
    ac: String,
    required: bool,
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/derive")
}

fn independent_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/derive-independent")
}

/// The bodies of the corpus in `dir`: (name, body, expected criteria), sorted by name.
fn corpus(dir: &Path) -> Vec<(String, String, Vec<Expected>)> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // The independent corpus's record of where each body comes from is not a body.
        if name == "SOURCES.md" {
            continue;
        }
        let (stem, body) = if let Some(stem) = name.strip_suffix(".expected.yaml") {
            let _ = stem;
            continue;
        } else if let Some(stem) = name.strip_suffix(".md") {
            (stem.to_string(), std::fs::read_to_string(&path).unwrap())
        } else if let Some(stem) = name.strip_suffix(".seed") {
            (
                stem.to_string(),
                grow(&std::fs::read_to_string(&path).unwrap()),
            )
        } else {
            panic!("{name}: the corpus holds only NAME.md, NAME.seed and NAME.expected.yaml");
        };
        let expected_path = dir.join(format!("{stem}.expected.yaml"));
        let yaml = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|e| panic!("{}: {e}", expected_path.display()));
        out.push((stem, body, expected(&yaml, &expected_path)));
    }
    out
}

/// The seed's `%%repeat%%` … `%%end%%` lines repeated until the body holds SEED_BODY_BYTES.
fn grow(seed: &str) -> String {
    let (head, rest) = seed.split_once("%%repeat%%\n").expect("a %%repeat%% line");
    let (block, tail) = rest.split_once("%%end%%\n").expect("an %%end%% line");
    let mut body = String::with_capacity(SEED_BODY_BYTES + seed.len());
    body.push_str(head);
    while body.len() < SEED_BODY_BYTES {
        body.push_str(block);
    }
    body.push_str(tail);
    body
}

/// `criteria:` as a list of `{ac, required}` mappings (`criteria: []` for none).
fn expected(yaml: &str, path: &Path) -> Vec<Expected> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut key: Option<String> = None;
    let mut ac: Option<String> = None;
    let mut required: Option<bool> = None;
    for event in Parser::new_from_str(yaml) {
        let (event, _) = event.unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
        match event {
            Event::MappingStart(..) | Event::SequenceStart(..) => depth += 1,
            Event::MappingEnd | Event::SequenceEnd => {
                if depth == 3 {
                    out.push(Expected {
                        ac: ac
                            .take()
                            .unwrap_or_else(|| panic!("{}: an item without ac", path.display())),
                        required: required.take().unwrap_or_else(|| {
                            panic!("{}: an item without required", path.display())
                        }),
                    });
                }
                depth -= 1;
            }
            Event::Scalar(text, ..) if depth == 3 => match key.take() {
                None => key = Some(text.into_owned()),
                Some(k) if k == "ac" => ac = Some(text.into_owned()),
                Some(k) if k == "required" => required = Some(text == "true"),
                Some(k) => panic!("{}: unknown key `{k}`", path.display()),
            },
            _ => {}
        }
    }
    out
}

fn normalise(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_lowercase().next().unwrap()
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Word-set Jaccard ≥ 0.85, and no differing word holding a digit.
fn similar(a: &str, b: &str) -> bool {
    let wa: std::collections::BTreeSet<&str> = a.split(' ').collect();
    let wb: std::collections::BTreeSet<&str> = b.split(' ').collect();
    let common = wa.intersection(&wb).count();
    let union = wa.union(&wb).count();
    let digits = wa
        .symmetric_difference(&wb)
        .any(|w| w.bytes().any(|c| c.is_ascii_digit()));
    union > 0 && common as f64 / union as f64 >= 0.85 && !digits
}

/// Pairs (derived index, expected index), exact matches first.
fn pair(derived: &[Derived], expected: &[Expected]) -> Vec<(usize, usize)> {
    let d: Vec<String> = derived.iter().map(|c| normalise(&c.ac)).collect();
    let e: Vec<String> = expected.iter().map(|c| normalise(&c.ac)).collect();
    let mut used_d = vec![false; d.len()];
    let mut used_e = vec![false; e.len()];
    let mut pairs = Vec::new();
    for exact in [true, false] {
        for (j, ej) in e.iter().enumerate() {
            if used_e[j] {
                continue;
            }
            if let Some(i) = (0..d.len()).find(|&i| {
                !used_d[i]
                    && (if exact {
                        d[i] == *ej
                    } else {
                        similar(&d[i], ej)
                    })
            }) {
                used_d[i] = true;
                used_e[j] = true;
                pairs.push((i, j));
            }
        }
    }
    pairs
}

/// What one corpus measured.
struct Figures {
    precision: f64,
    recall: f64,
    required_accuracy: f64,
}

impl Figures {
    /// Fails, naming the figure, when one is below its floor.
    fn assert_at_least(&self, precision: f64, recall: f64, required_accuracy: f64) {
        let p = self.precision;
        assert!(p >= precision, "precision {p:.3} < {precision}");
        let r = self.recall;
        assert!(r >= recall, "recall {r:.3} < {recall}");
        let q = self.required_accuracy;
        assert!(
            q >= required_accuracy,
            "required-flag accuracy {q:.3} < {required_accuracy}"
        );
    }
}

/// Derives every body of `corpus`, prints a line per body, then every extra, missed and
/// wrongly flagged criterion, then the totals, and returns the micro figures.
fn measure(corpus: &[(String, String, Vec<Expected>)]) -> Figures {
    let (mut derived_n, mut expected_n, mut matched_n, mut required_ok) = (0, 0, 0, 0);
    let mut misses = Vec::new();
    println!(
        "{:<32} {:>7} {:>8} {:>7} {:>8}",
        "body", "derived", "expected", "matched", "required"
    );
    for (name, body, expected) in corpus {
        let derived = derive(&[Text { name, body }]);
        let pairs = pair(&derived, expected);
        let req = pairs
            .iter()
            .filter(|(i, j)| derived[*i].required == expected[*j].required)
            .count();
        println!(
            "{:<32} {:>7} {:>8} {:>7} {:>8}",
            name,
            derived.len(),
            expected.len(),
            pairs.len(),
            req
        );
        for (i, d) in derived.iter().enumerate() {
            if !pairs.iter().any(|p| p.0 == i) {
                misses.push(format!(
                    "{name}: extra   {:?} ({}, line {})",
                    d.ac, d.reason, d.source.line
                ));
            }
        }
        for (j, e) in expected.iter().enumerate() {
            if !pairs.iter().any(|p| p.1 == j) {
                misses.push(format!("{name}: missed  {:?}", e.ac));
            }
        }
        for (i, j) in &pairs {
            if derived[*i].required != expected[*j].required {
                misses.push(format!(
                    "{name}: required {} but expected {} for {:?}",
                    derived[*i].required, expected[*j].required, expected[*j].ac
                ));
            }
        }
        derived_n += derived.len();
        expected_n += expected.len();
        matched_n += pairs.len();
        required_ok += req;
    }
    let precision = matched_n as f64 / derived_n as f64;
    let recall = matched_n as f64 / expected_n as f64;
    // With no matched pair there is no flag to judge: 0, so that only a floor of 0 accepts it.
    let required_accuracy = if matched_n == 0 {
        0.0
    } else {
        required_ok as f64 / matched_n as f64
    };
    println!();
    for m in &misses {
        println!("{m}");
    }
    println!(
        "\n{} bodies: {derived_n} derived, {expected_n} expected, {matched_n} matched; \
         precision {precision:.3}, recall {recall:.3}, required-flag accuracy {required_accuracy:.3}",
        corpus.len()
    );
    Figures {
        precision,
        recall,
        required_accuracy,
    }
}

#[test]
fn derivation_meets_the_stated_precision_and_recall_over_the_corpus() {
    let corpus = corpus(&corpus_dir());
    assert!(
        corpus.len() >= MIN_FILES,
        "the corpus holds {} bodies",
        corpus.len()
    );
    measure(&corpus).assert_at_least(MIN_PRECISION, MIN_RECALL, MIN_REQUIRED_ACCURACY);
}

#[test]
fn derivation_meets_the_stated_floor_over_the_independent_corpus() {
    let mut corpus = corpus(&independent_dir());
    corpus.retain(|(name, ..)| !HELD_OUT.contains(&name.as_str()));
    assert!(
        corpus.len() >= INDEPENDENT_MIN_FILES,
        "the independent corpus holds {} bodies",
        corpus.len()
    );
    measure(&corpus).assert_at_least(
        INDEPENDENT_MIN_PRECISION,
        INDEPENDENT_MIN_RECALL,
        INDEPENDENT_MIN_REQUIRED_ACCURACY,
    );
}

#[test]
fn derivation_meets_the_stated_floor_over_the_held_out_bodies() {
    let mut corpus = corpus(&independent_dir());
    corpus.retain(|(name, ..)| HELD_OUT.contains(&name.as_str()));
    assert_eq!(
        corpus.len(),
        HELD_OUT.len(),
        "every held-out body is in the independent corpus"
    );
    measure(&corpus).assert_at_least(
        HELD_OUT_MIN_PRECISION,
        HELD_OUT_MIN_RECALL,
        HELD_OUT_MIN_REQUIRED_ACCURACY,
    );
}

/// The grown body is really several MiB, and its criteria come out with their lines.
#[test]
fn the_seeded_body_is_several_mib() {
    let seed = std::fs::read_to_string(corpus_dir().join("large-ci-log.seed")).unwrap();
    let body = grow(&seed);
    assert!(body.len() >= SEED_BODY_BYTES);
    let derived = derive(&[Text {
        name: "pr",
        body: &body,
    }]);
    let last = derived.last().expect("criteria in the seeded body");
    assert!(last.source.line > 40_000, "line {}", last.source.line);
}
