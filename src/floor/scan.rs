//! The tag scan: where each criterion's tag occurs in a tree, before anything is listed or built
//! (book: floor.md: only what is bound gets built).
//!
//! In: a directory (the head worktree, or a checkout), the tags to look for.
//! Out: a [`TagScan`]: per tag, the tracked files whose path or contents carry it.
//!
//! Steps:
//! 1. the tracked files: `git ls-files -z --stage` in the directory (the index also says which
//!    entries are regular files, so no `stat` per file). Tracked, not walked (ripgrep's
//!    `ignore` walker): a runner's `setup` (`npm ci`) or an earlier build leaves untracked
//!    trees (`node_modules`, `target`) that no test id of the change can come from, and a walk
//!    that honours `.gitignore` would still see files a repository forgot to ignore;
//! 2. each path is matched with [`tag_matches`];
//! 3. each regular file's contents are searched once for every tag together with ripgrep's own
//!    searcher and matcher (`grep-searcher`, `grep-regex`), files in parallel, a file with a NUL
//!    byte skipped as binary as `rg` skips it (its path still counts). The regex is only a
//!    prefilter that finds candidate lines; every candidate line is confirmed with
//!    [`tag_matches`], so the scan and the binding can never disagree on what carries a tag.
//!
//! This tool's own outputs (`.shipmoor/verify.md`, the fix packet, the evidence store), which
//! name every tag, are left out when a repository commits them. Symbolic links and submodules
//! are not followed (`rg` does not follow links either); a file that cannot be read is counted
//! and skipped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use serde::Serialize;

use crate::acceptance::tag_matches;
use crate::git::Git;

/// Where one tag occurs in one file.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Occurrence {
    /// The file, relative to the scanned directory, `/`-separated.
    pub path: String,
    /// The tag is in the path itself.
    pub in_path: bool,
    /// The first line (1-based) whose text carries the tag, when the contents do.
    pub line: Option<u64>,
}

/// What one scan found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TagScan {
    /// Per tag (every tag asked for, found or not), its occurrences sorted by path.
    pub tags: BTreeMap<String, Vec<Occurrence>>,
    /// Tracked files considered.
    pub files: usize,
    /// Files whose contents were not searched because they hold a NUL byte.
    pub binary: usize,
    /// Files that could not be read (a submodule, a link, a file removed since listing).
    pub unreadable: usize,
    #[serde(skip)]
    pub duration: Duration,
}

impl TagScan {
    /// The files that carry any of the tags, sorted.
    pub fn matched_files(&self) -> BTreeSet<&str> {
        self.tags
            .values()
            .flatten()
            .map(|o| o.path.as_str())
            .collect()
    }

    /// Whether the tag occurs in any tracked file (path or contents). A tag the scan was not
    /// asked about reads as found: nothing is concluded about it.
    pub fn found(&self, tag: &str) -> bool {
        self.tags.get(tag).is_none_or(|o| !o.is_empty())
    }
}

pub use crate::git::Tracked;

/// Why the tag scan did not finish: every test is then listed, and the scan's record says why.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The tracked files could not be listed (git's error).
    #[error("{0}")]
    Tracked(crate::error::Error),
    #[error("the tag scan's pattern does not compile: {0}")]
    Pattern(grep_regex::Error),
    #[error("a tag scan thread panicked")]
    Panicked,
}

/// The tracked files of a checkout or worktree, relative to its root.
pub fn tracked_files(git: &Git) -> Result<Vec<Tracked>, ScanError> {
    git.tracked().map_err(ScanError::Tracked)
}

/// Scans the tracked files of the checkout or worktree `git` for `tags` (see the module doc);
/// paths in the result are relative to its root.
pub fn scan_tree(git: &Git, tags: &[String], threads: usize) -> Result<TagScan, ScanError> {
    let started = Instant::now();
    let mut files = tracked_files(git)?;
    // This tool's own reports name every tag; a committed copy says nothing about tests.
    files.retain(|f| !crate::floor::is_output_path(&f.path));
    let mut scan = scan_files(git.root(), &files, tags, threads)?;
    scan.duration = started.elapsed();
    Ok(scan)
}

/// The matcher for a set of tags: one pass over a file finds every tag's candidate lines.
#[derive(Clone, Debug)]
pub struct TagMatcher {
    tags: Vec<String>,
    regex: Option<RegexMatcher>,
}

impl TagMatcher {
    pub fn new(tags: &[String]) -> Result<TagMatcher, ScanError> {
        // Indexes follow the caller's order; an empty or repeated tag is left out.
        let mut seen = BTreeSet::new();
        let tags: Vec<String> = tags
            .iter()
            .filter(|t| !t.is_empty() && seen.insert(t.as_str()))
            .cloned()
            .collect();
        let regex = if tags.is_empty() {
            None
        } else {
            // ASCII case folding only (Unicode off): the tag match folds ASCII case and nothing
            // else, so a Unicode fold (the Kelvin sign for `k`) must not widen the prefilter.
            let alternatives: Vec<String> = tags.iter().map(|t| prefilter(t)).collect();
            let matcher = RegexMatcherBuilder::new()
                .case_insensitive(true)
                .unicode(false)
                .line_terminator(Some(b'\n'))
                .build(&alternatives.join("|"))
                .map_err(ScanError::Pattern)?;
            Some(matcher)
        };
        Ok(TagMatcher { tags, regex })
    }

    /// The indexes of the tags a line (or any text) carries, confirmed with [`tag_matches`].
    pub fn tags_in(&self, text: &[u8]) -> Vec<usize> {
        let Some(regex) = &self.regex else {
            return Vec::new();
        };
        if !matches!(regex.is_match(text), Ok(true)) {
            return Vec::new();
        }
        let text = String::from_utf8_lossy(text);
        (0..self.tags.len())
            .filter(|&i| tag_matches(&text, &self.tags[i]))
            .collect()
    }

    /// The indexes of the tags a path carries.
    pub fn tags_in_path(&self, path: &str) -> Vec<usize> {
        self.tags_in(path.as_bytes())
    }

    /// Searches one file's contents. `Ok(None)` when the file is binary.
    pub fn search_file(
        &self,
        searcher: &mut Searcher,
        path: &Path,
    ) -> std::io::Result<Option<BTreeMap<usize, u64>>> {
        let Some(regex) = &self.regex else {
            return Ok(Some(BTreeMap::new()));
        };
        let mut sink = FirstLines {
            matcher: self,
            found: BTreeMap::new(),
            binary: false,
        };
        searcher.search_path(regex, path, &mut sink)?;
        if sink.binary {
            return Ok(None);
        }
        if sink.found.is_empty() {
            return Ok(Some(sink.found));
        }
        // Line numbers only for the few files that match: counting lines in every file would
        // cost the scan a pass over every byte that `rg -l` does not make.
        let text = std::fs::read(path)?;
        Ok(Some(
            sink.found
                .into_iter()
                .map(|(tag, offset)| {
                    let upto = usize::try_from(offset)
                        .unwrap_or(usize::MAX)
                        .min(text.len());
                    let line = text[..upto].iter().filter(|b| **b == b'\n').count() as u64 + 1;
                    (tag, line)
                })
                .collect(),
        ))
    }

    pub fn searcher() -> Searcher {
        SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .line_number(false)
            .build()
    }
}

/// The prefilter for one tag: its characters with ASCII case folded and `-`/`_` as one class.
/// Boundaries are left to [`tag_matches`]: the regex crate has no look-behind, and a looser
/// prefilter only costs a confirmation on a candidate line.
fn prefilter(tag: &str) -> String {
    tag.chars()
        .map(|c| match c {
            '-' | '_' => "[-_]".to_string(),
            c => regex::escape(&c.to_string()),
        })
        .collect()
}

/// Records where each tag's first line starts (a byte offset); stops once every tag has been
/// seen.
struct FirstLines<'a> {
    matcher: &'a TagMatcher,
    found: BTreeMap<usize, u64>,
    binary: bool,
}

impl Sink for FirstLines<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let offset = mat.absolute_byte_offset();
        for i in self.matcher.tags_in(mat.bytes()) {
            self.found.entry(i).or_insert(offset);
        }
        Ok(self.found.len() < self.matcher.tags.len())
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// Scans the given files (relative to `dir`) for `tags`, `threads` files at a time.
pub fn scan_files(
    dir: &Path,
    files: &[Tracked],
    tags: &[String],
    threads: usize,
) -> Result<TagScan, ScanError> {
    let matcher = TagMatcher::new(tags)?;
    let mut scan = TagScan {
        tags: tags.iter().map(|t| (t.clone(), Vec::new())).collect(),
        files: files.len(),
        ..TagScan::default()
    };
    if matcher.tags.is_empty() {
        return Ok(scan);
    }
    let next = AtomicUsize::new(0);
    let found: Mutex<Vec<(usize, usize, Occurrence)>> = Mutex::new(Vec::new());
    let binary = AtomicUsize::new(0);
    let unreadable = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                let mut searcher = TagMatcher::searcher();
                let mut local = Vec::new();
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = files.get(n) else { break };
                    let rel = &file.path;
                    let in_path: BTreeSet<usize> = matcher.tags_in_path(rel).into_iter().collect();
                    let path = dir.join(rel);
                    let lines = if file.regular {
                        match matcher.search_file(&mut searcher, &path) {
                            Ok(Some(lines)) => lines,
                            Ok(None) => {
                                binary.fetch_add(1, Ordering::Relaxed);
                                BTreeMap::new()
                            }
                            Err(_) => {
                                unreadable.fetch_add(1, Ordering::Relaxed);
                                BTreeMap::new()
                            }
                        }
                    } else {
                        unreadable.fetch_add(1, Ordering::Relaxed);
                        BTreeMap::new()
                    };
                    let hit: BTreeSet<usize> =
                        in_path.iter().chain(lines.keys()).copied().collect();
                    for i in hit {
                        local.push((
                            i,
                            n,
                            Occurrence {
                                path: rel.clone(),
                                in_path: in_path.contains(&i),
                                line: lines.get(&i).copied(),
                            },
                        ));
                    }
                }
                if let Ok(mut all) = found.lock() {
                    all.extend(local);
                }
            });
        }
    });
    let mut found = found.into_inner().map_err(|_| ScanError::Panicked)?;
    found.sort();
    for (i, _, occ) in found {
        if let Some(list) = scan.tags.get_mut(&matcher.tags[i]) {
            list.push(occ);
        }
    }
    scan.binary = binary.into_inner();
    scan.unreadable = unreadable.into_inner();
    Ok(scan)
}

/// The matched files that lie under a runner's root (`.` or `a/b`, relative to the scanned
/// tree), relative to that root: the files a runner's listing is scoped to.
pub fn files_under_root<'a>(root: &str, matched: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let root = root.trim_start_matches("./").trim_end_matches('/');
    let mut out: Vec<String> = matched
        .into_iter()
        .filter_map(|p| {
            if root.is_empty() || root == "." {
                Some(p.to_string())
            } else {
                p.strip_prefix(root)
                    .and_then(|r| r.strip_prefix('/'))
                    .filter(|r| !r.is_empty())
                    .map(str::to_string)
            }
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// How many files to search at once: the machine's cores, at most 8 (the scan is bound by
/// reading files well before that).
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get().min(8))
        .unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acceptance::tag_for;

    fn matcher(tags: &[&str]) -> TagMatcher {
        TagMatcher::new(&tags.iter().map(|t| t.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn folds_case_and_separators_and_needs_boundaries() {
        let tag = "AC-REFUND-IDEMPOTENT-10fd";
        let m = matcher(&[tag]);
        for yes in [
            "fn ac_refund_idempotent_10fd() {",
            "def test_AC_REFUND_IDEMPOTENT_10FD():",
            "// AC-refund_idempotent-10fd",
            "ac-refund-idempotent-10fd",
            "x.AC_REFUND_IDEMPOTENT_10fd\r",
        ] {
            assert_eq!(m.tags_in(yes.as_bytes()), [0], "{yes}");
        }
        for no in [
            "fn xac_refund_idempotent_10fd()",
            "ac_refund_idempotent_10fda",
            "ac_refund_idempotent_10fd0",
            "ac refund idempotent 10fd",
            "ac_refund_idempotent_10fe",
            "",
        ] {
            assert!(m.tags_in(no.as_bytes()).is_empty(), "{no}");
        }
        // Only ASCII folds: the Kelvin sign is not `k`.
        let k = matcher(&["AC-K-1234"]);
        assert_eq!(k.tags_in(b"ac_k_1234"), [0]);
        assert!(k.tags_in("ac_\u{212A}_1234".as_bytes()).is_empty());
        // Non-UTF-8 bytes around a tag are boundaries, as in the binding.
        assert_eq!(k.tags_in(b"\xffac_k_1234\xfe"), [0]);
    }

    #[test]
    fn many_tags_in_one_pass() {
        let a = tag_for("refund-idempotent");
        let b = tag_for("audit-log");
        let m = matcher(&[&a, &b]);
        let line = format!("{} and {}", a.to_lowercase(), b.replace('-', "_"));
        assert_eq!(m.tags_in(line.as_bytes()), [0, 1]);
        assert_eq!(m.tags_in(b.as_bytes()), [1]);
    }

    /// The scan's prefilter and confirmation agree with the binding's matcher on every
    /// haystack: generated around each tag with every kind of neighbour, case and separator.
    #[test]
    fn agrees_with_tag_matches() {
        let tags = [tag_for("refund-idempotent"), tag_for("a"), tag_for("k-s-9")];
        let m = TagMatcher::new(&tags).unwrap();
        let neighbours = [
            "", " ", "_", "-", "a", "Z", "0", ".", "/", "é", "\u{212A}", ":",
        ];
        let mut seeds: Vec<String> = Vec::new();
        for t in &tags {
            seeds.push(t.clone());
            seeds.push(t.to_lowercase());
            seeds.push(t.to_uppercase().replace('-', "_"));
            seeds.push(t[..t.len() - 1].to_string());
            seeds.push(t.replace('-', " "));
            seeds.push(format!("{t}{t}"));
        }
        let mut checked = 0;
        for seed in &seeds {
            for before in neighbours {
                for after in neighbours {
                    let hay = format!("{before}{seed}{after}");
                    let by_scan = m.tags_in(hay.as_bytes());
                    let by_binding: Vec<usize> = (0..tags.len())
                        .filter(|&i| tag_matches(&hay, &tags[i]))
                        .collect();
                    assert_eq!(by_scan, by_binding, "{hay:?}");
                    assert_eq!(m.tags_in_path(&hay), by_binding, "{hay:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000);
    }

    #[test]
    fn files_are_scoped_to_a_runner_root() {
        let matched = ["a/tests/x.rs", "ab/y.rs", "b/z.py", "a"];
        assert_eq!(
            files_under_root(".", matched),
            ["a", "a/tests/x.rs", "ab/y.rs", "b/z.py"]
        );
        assert_eq!(files_under_root("a", matched), ["tests/x.rs"]);
        assert_eq!(files_under_root("./a/", matched), ["tests/x.rs"]);
        assert!(files_under_root("c", matched).is_empty());
    }

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn scans_tracked_paths_and_contents_and_skips_binary_files() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let tag = tag_for("refund-idempotent");
        let other = tag_for("audit-log");
        let never = tag_for("nowhere");
        let ident = tag.to_lowercase().replace('-', "_");
        let write = |rel: &str, bytes: &[u8]| {
            let p = d.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        };
        write("src/lib.rs", b"pub fn refund() {}\n");
        write(
            "tests/refund.rs",
            format!("#[test]\nfn plain() {{}}\n\n#[test]\nfn refund_{ident}() {{}}\n").as_bytes(),
        );
        write(&format!("tests/{ident}.py"), b"def test_x():\n    pass\n");
        write("assets/blob.bin", format!("\x00\x01{ident}\n").as_bytes());
        write("docs/notes.md", format!("see {other} here\n").as_bytes());
        // Untracked: a build's leftovers never bind.
        write(
            "target/untracked.rs",
            format!("fn {ident}() {{}}\n").as_bytes(),
        );
        // A committed report of an earlier run names the tags: it is no test.
        write(".shipmoor/verify.md", format!("{tag} {never}\n").as_bytes());
        // A tracked link is not followed (as rg does not): its target is searched on its own.
        std::os::unix::fs::symlink("tests/refund.rs", d.join("link.rs")).unwrap();
        git(d, &["init", "--quiet"]);
        git(
            d,
            &[
                "add",
                "src",
                "tests",
                "assets",
                "docs",
                "link.rs",
                ".shipmoor",
            ],
        );
        let scan = scan_tree(
            &Git::discover(&d.join("src")).unwrap(),
            &[tag.clone(), other.clone(), never.clone()],
            2,
        )
        .unwrap();
        assert_eq!(scan.files, 6);
        assert_eq!(scan.binary, 1);
        assert_eq!(scan.unreadable, 1);
        assert_eq!(
            scan.tags[&tag],
            [
                Occurrence {
                    path: format!("tests/{ident}.py"),
                    in_path: true,
                    line: None
                },
                Occurrence {
                    path: "tests/refund.rs".into(),
                    in_path: false,
                    line: Some(5)
                },
            ]
        );
        assert_eq!(
            scan.tags[&other],
            [Occurrence {
                path: "docs/notes.md".into(),
                in_path: false,
                line: Some(1)
            }]
        );
        assert!(scan.tags[&never].is_empty());
        assert!(!scan.found(&never));
        assert!(scan.found(&tag));
        assert_eq!(
            scan.matched_files().into_iter().collect::<Vec<_>>(),
            [
                "docs/notes.md",
                &format!("tests/{ident}.py"),
                "tests/refund.rs"
            ]
        );
        // One thread or many: the same result.
        let one = scan_tree(&Git::discover(d).unwrap(), &[tag, other, never], 1).unwrap();
        assert_eq!(one.tags, scan.tags);
    }
}
