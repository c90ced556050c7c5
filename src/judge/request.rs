//! What a judge is asked about one criterion (`claim_check.judge.request.v1`, book: judge.md).
//!
//! In: the change, read once per run ([`Change::read`]: the changed files and each one's part
//! of the unified diff base..head), the criterion and the floor's finding on it, the judge's
//! `max_diff_bytes` and `exclude`. Out: the [`Request`].
//!
//! Steps ([`build`], pure): (1) leave out every path `exclude` matches, from the diff and from
//! `changed_files` alike; (2) order the files by how likely the criterion concerns them: first
//! the files the floor's tests for it live in, then files that carry its tag, then files whose
//! path, then whose diff, shares words with its id and text; (3) take whole files' diffs in that
//! order while they fit in `max_diff_bytes`, the first that does not fit cut at a line, and say
//! so in `diff_truncated`.

use std::collections::BTreeSet;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::acceptance::{tag_matches, Criterion};
use crate::error::Error;
use crate::floor::CriterionFloor;
use crate::format::judge::{Request, RequestCriterion, RequestFloor, REQUEST_SCHEMA};
use crate::git::{CommitId, Git};

/// One changed file and its part of the diff (empty for a change git shows no text for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    pub diff: String,
}

/// The change every request of a run shows: the repository, the commits and each changed
/// file's diff, in path order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub repo: String,
    pub base: CommitId,
    pub head: CommitId,
    pub files: Vec<FileDiff>,
}

impl Change {
    /// Reads the diff base..head once and splits it by file. Renames show as a deletion and an
    /// addition, as the floor sees them, so each path's diff stands alone.
    pub fn read(git: &Git, repo: &str, base: &CommitId, head: &CommitId) -> Result<Change, Error> {
        let changed = git.changed_files(base, head)?;
        let whole = git.diff_without_renames(base, head, None)?;
        let sections = split_sections(&whole);
        let mut files = Vec::with_capacity(changed.len());
        for c in changed {
            let header = format!("diff --git a/{0} b/{0}", c.path);
            let diff = match sections.iter().find(|s| s.lines().next() == Some(&header)) {
                Some(s) => s.to_string(),
                // A path git quotes in headers (a tab, a quote, a newline in its name): ask for
                // that file alone rather than guess which section is its.
                None => git.diff_without_renames(base, head, Some(&c.path))?,
            };
            files.push(FileDiff { path: c.path, diff });
        }
        Ok(Change {
            repo: repo.to_string(),
            base: base.clone(),
            head: head.clone(),
            files,
        })
    }
}

/// The unified diff cut before each `diff --git ` line.
fn split_sections(diff: &str) -> Vec<&str> {
    let mut starts: Vec<usize> = diff
        .match_indices("diff --git ")
        .map(|(i, _)| i)
        .filter(|i| *i == 0 || diff.as_bytes()[i - 1] == b'\n')
        .collect();
    starts.push(diff.len());
    starts.windows(2).map(|w| &diff[w[0]..w[1]]).collect()
}

/// The globs of `exclude` as one matcher. Each was checked when the acceptance file was read.
pub fn exclude_set(exclude: &[String]) -> GlobSet {
    let mut b = GlobSetBuilder::new();
    for g in exclude {
        if let Ok(glob) = Glob::new(g) {
            b.add(glob);
        }
    }
    b.build().unwrap_or_else(|_| GlobSet::empty())
}

/// The request for one criterion (steps 1-3 of the module doc).
pub fn build(
    change: &Change,
    criterion: &Criterion,
    floor: &CriterionFloor,
    max_diff_bytes: usize,
    exclude: &[String],
) -> Request {
    let excluded = exclude_set(exclude);
    let mut files: Vec<(u64, &FileDiff)> = change
        .files
        .iter()
        .filter(|f| !excluded.is_match(&f.path))
        .map(|f| (relevance(f, criterion, floor), f))
        .collect();
    let changed_files: Vec<String> = {
        let set: BTreeSet<&str> = files.iter().map(|(_, f)| f.path.as_str()).collect();
        set.into_iter().map(str::to_string).collect()
    };
    files.sort_by(|(a, fa), (b, fb)| b.cmp(a).then_with(|| fa.path.cmp(&fb.path)));
    let (diff, diff_truncated) =
        bounded(files.iter().map(|(_, f)| f.diff.as_str()), max_diff_bytes);
    Request {
        schema: REQUEST_SCHEMA.to_string(),
        criterion: RequestCriterion {
            id: criterion.id.clone(),
            ac: criterion.ac.clone(),
            required: criterion.required,
            lane: criterion.lane,
            tag: criterion.tag.clone(),
        },
        repo: change.repo.clone(),
        base: change.base.clone().into(),
        head: change.head.clone().into(),
        changed_files,
        diff,
        diff_truncated,
        floor: RequestFloor {
            result: floor.result,
            reason: floor.reason.clone(),
        },
    }
}

/// Whole sections while they fit in `max` bytes; the first that does not is cut after its last
/// whole line that fits, and the diff is marked truncated.
fn bounded<'a>(sections: impl Iterator<Item = &'a str>, max: usize) -> (String, bool) {
    let mut out = String::new();
    for s in sections {
        if out.len() + s.len() <= max {
            out.push_str(s);
            continue;
        }
        let room = max - out.len();
        let mut cut = room.min(s.len());
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        if let Some(nl) = s[..cut].rfind('\n') {
            out.push_str(&s[..=nl]);
        }
        return (out, true);
    }
    (out, false)
}

/// Words too common in criteria to say which file one concerns.
const STOPWORDS: &[&str] = &[
    "the", "and", "for", "with", "that", "this", "from", "when", "into", "every", "each", "must",
    "should", "have", "been", "are", "not", "its", "can", "test", "tests",
];

/// The criterion's words: its id's parts and its text's, lower-cased, three letters or more.
fn words(criterion: &Criterion) -> BTreeSet<String> {
    criterion
        .id
        .split('-')
        .chain(criterion.ac.split(|c: char| !c.is_ascii_alphanumeric()))
        .map(str::to_ascii_lowercase)
        .filter(|w| w.len() >= 3 && !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// How likely `criterion` concerns the file: the floor's own test files first, then files
/// carrying the tag, then shared words (a word in the path counts more than one in the diff).
fn relevance(file: &FileDiff, criterion: &Criterion, floor: &CriterionFloor) -> u64 {
    let named = floor.tests.iter().any(|t| {
        t.file.as_deref() == Some(file.path.as_str())
            || t.id.split("::").next() == Some(file.path.as_str())
    });
    let tagged = tag_matches(&file.path, &criterion.tag) || tag_matches(&file.diff, &criterion.tag);
    let path = file.path.to_ascii_lowercase();
    let diff = file.diff.to_ascii_lowercase();
    let ws = words(criterion);
    let in_path = ws.iter().filter(|w| path.contains(w.as_str())).count() as u64;
    let in_diff = ws.iter().filter(|w| diff.contains(w.as_str())).count() as u64;
    u64::from(named) * 1_000_000 + u64::from(tagged) * 100_000 + in_path * 1_000 + in_diff
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acceptance::{tag_for, Lane};
    use crate::floor::TestObservation;
    use crate::format::SideOutcome;
    use crate::verdict::FloorResult;

    fn criterion(id: &str, ac: &str) -> Criterion {
        Criterion {
            id: id.into(),
            ac: ac.into(),
            required: true,
            lane: Lane::Judge,
            check: None,
            tag: tag_for(id),
            line: 3,
            confidence: None,
            source: None,
        }
    }

    fn floor(tests: &[&str]) -> CriterionFloor {
        CriterionFloor {
            result: FloorResult::Unbound,
            reason: "no test carries the tag".into(),
            binding: "tag".into(),
            tests: tests
                .iter()
                .map(|t| TestObservation {
                    id: format!("{t}::test_it"),
                    runner: "pytest".into(),
                    file: Some(t.to_string()),
                    head: SideOutcome::Pass,
                    base: SideOutcome::NotObserved,
                    head_evidence: vec![],
                    base_evidence: vec![],
                    base_failure: None,
                })
                .collect(),
            evidence: None,
            evidence_all: vec![],
            base_summary: "—".into(),
            head_summary: "—".into(),
            reproduce: None,
        }
    }

    fn section(path: &str, body: &str) -> FileDiff {
        FileDiff {
            path: path.into(),
            diff: format!(
                "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n{body}\n"
            ),
        }
    }

    fn change(files: Vec<FileDiff>) -> Change {
        Change {
            repo: "https://example.com/shop.git".into(),
            base: CommitId::parse(&"a".repeat(40)).unwrap(),
            head: CommitId::parse(&"b".repeat(40)).unwrap(),
            files,
        }
    }

    fn order(r: &Request) -> Vec<String> {
        split_sections(&r.diff)
            .iter()
            .filter_map(|s| s.lines().next())
            .map(|l| l.rsplit(" b/").next().unwrap_or("").to_string())
            .collect()
    }

    #[test]
    fn the_files_the_criterion_concerns_come_first() {
        let c = change(vec![
            section("docs/intro.md", "+hello"),
            section("src/audit.py", "+def write(entry): pass"),
            section("src/mail.py", "+# refund receipts"),
            section("tests/test_x.py", "+assert True"),
        ]);
        let crit = criterion(
            "audit-log",
            "An audit log entry is written for every refund.",
        );
        let r = build(&c, &crit, &floor(&["tests/test_x.py"]), 100_000, &[]);
        assert_eq!(
            order(&r),
            [
                "tests/test_x.py",
                "src/audit.py",
                "src/mail.py",
                "docs/intro.md"
            ]
        );
        assert!(!r.diff_truncated);
        assert_eq!(r.changed_files.len(), 4);
        assert_eq!(
            (r.base.as_str().len(), r.criterion.tag.as_str()),
            (40, "AC-AUDIT-LOG-fb7d")
        );
        assert_eq!(r.floor.result, FloorResult::Unbound);
    }

    #[test]
    fn the_diff_is_bounded_at_a_line_and_marked_truncated() {
        let big = format!("+{}", "x\n+".repeat(200));
        let c = change(vec![
            section("src/audit.py", &big),
            section("zzz.txt", "+tail"),
        ]);
        let crit = criterion("audit-log", "An audit log entry is written.");
        let r = build(&c, &crit, &floor(&[]), 150, &[]);
        assert!(r.diff_truncated);
        assert!(
            r.diff.len() <= 150 && r.diff.ends_with('\n'),
            "{:?}",
            r.diff
        );
        assert!(r.diff.starts_with("diff --git a/src/audit.py"));
        assert!(!r.diff.contains("zzz.txt"));
        // Both files are still listed as changed.
        assert_eq!(r.changed_files, ["src/audit.py", "zzz.txt"]);
    }

    #[test]
    fn excluded_paths_are_never_sent() {
        let c = change(vec![
            section("Cargo.lock", "+secret-ish"),
            section("web/package-lock.json", "+x"),
            section(".env.production", "+API_KEY=sk-live"),
            section("svc/.env", "+TOKEN=t"),
            section("src/audit.py", "+ok"),
        ]);
        let exclude: Vec<String> = crate::judge::DEFAULT_EXCLUDE
            .iter()
            .map(|s| s.to_string())
            .collect();
        let r = build(
            &c,
            &criterion("audit-log", "A."),
            &floor(&[]),
            100_000,
            &exclude,
        );
        assert_eq!(r.changed_files, ["src/audit.py"]);
        for leaked in ["secret-ish", "sk-live", "TOKEN=t", "lock"] {
            assert!(!r.diff.contains(leaked), "{leaked}: {}", r.diff);
        }
    }
}
