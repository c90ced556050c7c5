//! Files a command of the floor writes that decide how a later command runs (book:
//! floor/harness.md, "Written at run time"). The harness guard finds the harness files a change
//! commits; a test can also write one while it runs (an untracked `tests/conftest.py` whose
//! hook marks every report passed, a `usercustomize.py` in its side's user site-packages, a
//! `node_modules/.bin/node` in front of the real one), for every command after it at that side
//! to read. So after each command at a side (its `setup`, the listing, each invocation of the
//! tests), that side's worktree and private home are compared with what they held before, and
//! a new or changed file of either kind below taints everything that runs after it there:
//!
//! - a harness file, by name, anywhere outside a `.git` directory: what the harness guard
//!   lists, and the files a runner reads as configuration or start-up code
//!   ([`harness_kind`]); counted after a `setup` too, which installs dependencies but has no
//!   business writing a conftest;
//! - source a later command may load in the place of the change's own: a new or changed Python
//!   module (`tests/calc.py` before `calc.py` on pytest's path, a `tests/__init__.py`), a
//!   JavaScript, TypeScript, Go or Rust source file (but in a coverage report's directory);
//!   and a symbolic link anywhere (`~/.local` made a link to a directory the watch does not
//!   walk); counted after every command but a `setup`, which may build and link;
//! - anything installed: a file under `node_modules` (but its caches, `.vite` and `.cache`),
//!   under a `site-packages` or `dist-packages` directory, or in a Python virtual environment;
//!   counted after every command but a `setup`, whose work installing is.
//!
//! - the repository's and the person's git configuration (`.git/config`, `.git/info/attributes`,
//!   `.git/hooks/`, `~/.gitconfig`, `~/.config/git/`): a filter, a hook or an fsmonitor planted
//!   there runs in a later `git` command, the person's own included.
//!
//! Compared by each file's size, modification and change times, inode and mode: a write, a
//! rename or a `touch -d` that sets the modification time back all change one.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::runners::registry::{written, REGISTRY};

/// What can be told apart about a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
    ino: u64,
    mode: u32,
}

/// A file's kind, for what it decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A harness or configuration file: what it is.
    Harness(&'static str),
    /// Something installed: a dependency's code or a runner's own.
    Installed,
    /// Source a later command may load in the place of the change's own, or a symbolic link
    /// that may point a directory somewhere unwatched: what it is. A `setup` builds and links
    /// (a `tsc`, generated protobuf modules), so only what a later command wrote counts.
    Source(&'static str),
}

/// The files that decide how commands run, at one moment, by path (`worktree/…` or `home/…`).
#[derive(Debug, Clone, Default)]
pub(super) struct Snapshot {
    files: BTreeMap<String, (Kind, Stamp)>,
    /// The `__pycache__` directories found (never followed through a symbolic link), and each
    /// as reports show it, for [`Snapshot::remove_bytecode`].
    bytecode: Vec<(PathBuf, String)>,
}

/// A file a command wrote that decides how later commands run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Planted {
    /// As reports show it: relative to the worktree, or `~/…` in the side's private home.
    pub path: String,
    /// What it decides (`pytest conftest`, `installed package`).
    pub what: String,
}

impl Snapshot {
    /// The harness and installed files of `worktree` and of the private `home`, and the git
    /// configuration `git` names (each file, or each file of a directory, as shown).
    pub fn take(worktree: &Path, home: &Path, git: &[(String, std::path::PathBuf)]) -> Snapshot {
        let mut snapshot = Snapshot::default();
        walk(worktree, worktree, "", false, &mut snapshot);
        // The home's caches (Go's build cache, pip's, npm's) are the build outputs a side's
        // commands share by design (book: security.md), and no runner reads configuration
        // from them; walking them after every command would cost what they hold.
        let caches = [home.join(".cache"), home.join(".npm")];
        walk_skipping(home, home, "~/", &caches, &mut snapshot);
        snapshot.files.extend(Self::git_files(git));
        snapshot
    }

    /// Removes the compiled Python (`__pycache__` directories) this snapshot found in the
    /// worktree and the home, so that no later command imports bytecode an earlier one wrote:
    /// a `.pyc` whose header gives its source's size and modification time is loaded in the
    /// source's place. Python's own library keeps its installed bytecode (no
    /// `PYTHONPYCACHEPREFIX`, which would compile all of it again in every command). A
    /// directory that cannot be removed is returned as planted, to taint what runs after it.
    pub fn remove_bytecode(&self) -> Vec<Planted> {
        self.bytecode
            .iter()
            .filter(|(dir, _)| {
                std::fs::remove_dir_all(dir).is_err() && std::fs::symlink_metadata(dir).is_ok()
            })
            .map(|(_, shown)| Planted {
                path: shown.clone(),
                what: "compiled Python that could not be removed".to_string(),
            })
            .collect()
    }

    /// The git configuration alone (see [`Snapshot::take`]).
    pub fn git(git: &[(String, std::path::PathBuf)]) -> Snapshot {
        Snapshot {
            files: Self::git_files(git),
            bytecode: Vec::new(),
        }
    }

    fn git_files(git: &[(String, std::path::PathBuf)]) -> BTreeMap<String, (Kind, Stamp)> {
        let mut out = BTreeMap::new();
        for (shown, path) in git {
            let Ok(meta) = std::fs::symlink_metadata(path) else {
                continue;
            };
            if meta.is_dir() {
                for e in std::fs::read_dir(path).into_iter().flatten().flatten() {
                    if let Ok(m) = std::fs::symlink_metadata(e.path()) {
                        let name = e.file_name().to_string_lossy().into_owned();
                        out.insert(
                            format!("{shown}/{name}"),
                            (Kind::Harness("git configuration"), stamp(&m)),
                        );
                    }
                }
            } else {
                out.insert(
                    shown.clone(),
                    (Kind::Harness("git configuration"), stamp(&meta)),
                );
            }
        }
        out
    }

    /// What appeared or changed in `after` since this snapshot (a removed file changes nothing
    /// a later command reads). `setup`: `after` follows a `setup`, whose installing is its
    /// work, so only harness files count.
    pub fn planted(&self, after: &Snapshot, setup: bool) -> Vec<Planted> {
        after
            .files
            .iter()
            .filter(|(path, (_, stamp))| self.files.get(*path).map(|(_, s)| s) != Some(stamp))
            .filter_map(|(path, (kind, _))| match kind {
                Kind::Harness(what) => Some(Planted {
                    path: path.clone(),
                    what: what.to_string(),
                }),
                Kind::Installed if !setup => Some(Planted {
                    path: path.clone(),
                    what: "installed code".to_string(),
                }),
                Kind::Source(what) if !setup => Some(Planted {
                    path: path.clone(),
                    what: what.to_string(),
                }),
                Kind::Installed | Kind::Source(_) => None,
            })
            .collect()
    }
}

/// [`walk`] of `dir`'s entries but those in `skip`.
fn walk_skipping(
    root: &Path,
    dir: &Path,
    shown: &str,
    skip: &[std::path::PathBuf],
    out: &mut Snapshot,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if skip.contains(&path) {
            continue;
        }
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            walk(root, &path, shown, false, out);
        } else if let Ok(meta) = std::fs::symlink_metadata(&path) {
            let rel = path
                .strip_prefix(root)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = e.file_name().to_string_lossy().into_owned();
            let kind = if meta.file_type().is_symlink() {
                Some(Kind::Source("symbolic link"))
            } else {
                harness_kind(&rel)
                    .map(Kind::Harness)
                    .or_else(|| source_kind(&name).map(Kind::Source))
            };
            if let Some(kind) = kind {
                out.files
                    .insert(format!("{shown}{rel}"), (kind, stamp(&meta)));
            }
        }
    }
}

/// Walks `dir` (under `root`), keeping the harness and installed files; `installed`: `dir` lies
/// under an installation directory. Symbolic links are kept as themselves, never followed.
fn walk(root: &Path, dir: &Path, shown: &str, installed: bool, out: &mut Snapshot) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    // A virtual environment's own directory: everything in it is installed.
    let venv = installed || dir.join("pyvenv.cfg").is_file();
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let rel = path
            .strip_prefix(root)
            .map(|r| r.to_string_lossy().into_owned())
            .unwrap_or_default();
        if meta.is_dir() {
            if name == "__pycache__" {
                out.bytecode.push((path, format!("{shown}{rel}")));
                continue;
            }
            if name == ".git" {
                continue;
            }
            // The caches a runner keeps in `node_modules` are no installed code.
            let parent_is_node_modules = dir.file_name().is_some_and(|n| n == "node_modules");
            if parent_is_node_modules && matches!(name.as_str(), ".vite" | ".cache" | ".vitest") {
                continue;
            }
            let installing = venv
                || matches!(
                    name.as_str(),
                    "node_modules" | "site-packages" | "dist-packages"
                );
            walk(root, &path, shown, installing, out);
            continue;
        }
        if name == ".git" {
            continue;
        }
        // A coverage report's pages (`coverage/lcov-report/sorter.js`) are written by every
        // run that measures coverage, and no runner loads them.
        let reports = Path::new(&rel).components().any(|c| {
            matches!(
                c.as_os_str().to_str(),
                Some("coverage" | "htmlcov" | ".nyc_output")
            )
        });
        let kind = match harness_kind(&rel) {
            _ if meta.file_type().is_symlink() && !venv => Kind::Source("symbolic link"),
            Some(what) => Kind::Harness(what),
            None if venv => Kind::Installed,
            None if reports => continue,
            None => match source_kind(&name) {
                Some(what) => Kind::Source(what),
                None => continue,
            },
        };
        out.files
            .insert(format!("{shown}{rel}"), (kind, stamp(&meta)));
    }
}

fn stamp(meta: &std::fs::Metadata) -> Stamp {
    Stamp {
        len: meta.len(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
        ctime: (meta.ctime(), meta.ctime_nsec()),
        ino: meta.ino(),
        mode: meta.mode(),
    }
}

/// Source a later command may load in the place of the change's own, by its file name: a
/// Python module, or a JavaScript, TypeScript, Go or Rust source file.
fn source_kind(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.').map(|(_, e)| e)?;
    Some(match ext {
        "py" => "Python module",
        "js" | "mjs" | "cjs" | "jsx" | "ts" | "mts" | "cts" | "tsx" => "JavaScript module",
        "go" => "Go source",
        "rs" => "Rust source",
        _ => return None,
    })
}

/// What a file decides, by its path (relative to the worktree or home), when a runner reads it
/// as configuration or start-up code: the harness guard's files
/// ([`super::harness::detect`]), whole rather than by section, and what a Python, Rust, Go or
/// JavaScript toolchain reads before or while it runs a test. Lock files are no such file
/// (builds rewrite them).
pub(super) fn harness_kind(rel: &str) -> Option<&'static str> {
    written(REGISTRY, rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_a_runner_reads_are_harness_files() {
        for (path, what) in [
            ("tests/conftest.py", "pytest conftest"),
            ("pyproject.toml", "pytest configuration"),
            (
                ".venv/lib/python3.11/site-packages/x.pth",
                "Python path hook",
            ),
            ("sub/.cargo/config.toml", "cargo configuration"),
            (".config/nextest.toml", "nextest configuration"),
            ("pkg/zz_test.go", "Go source"),
            ("vitest.config.ts", "test runner configuration"),
            ("web/package.json", "package.json"),
        ] {
            assert_eq!(harness_kind(path), Some(what), "{path}");
        }
        for path in [
            "tests/test_a.py",
            "Cargo.lock",
            "src/lib.rs",
            "config",
            "README.md",
        ] {
            assert_eq!(harness_kind(path), None, "{path}");
        }
    }

    #[test]
    fn a_file_written_or_changed_is_planted_and_a_setup_may_install() {
        let wt = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let p = wt.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w("tests/test_a.py", "def test(): pass\n");
        w("pyproject.toml", "[project]\n");
        let before = Snapshot::take(wt.path(), home.path(), &[]);
        // A setup installs; a test file or a log is no harness.
        w("node_modules/vitest/index.js", "x");
        w("node_modules/.vite/results.json", "{}");
        w("out.log", "x");
        let after_setup = Snapshot::take(wt.path(), home.path(), &[]);
        assert_eq!(before.planted(&after_setup, true), vec![]);
        // After a test: the conftest, the changed pyproject, the runner's code and a user
        // site hook in the home are all planted.
        w("tests/conftest.py", "x");
        w("pyproject.toml", "[tool.pytest.ini_options]\n");
        w("node_modules/vitest/index.js", "forged");
        let p = home.path().join(".local/lib/python3.11/site-packages");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("usercustomize.py"), "x").unwrap();
        std::fs::write(p.join("evil.py"), "x").unwrap();
        let after = Snapshot::take(wt.path(), home.path(), &[]);
        let planted: Vec<String> = after_setup
            .planted(&after, false)
            .into_iter()
            .map(|p| format!("{} ({})", p.path, p.what))
            .collect();
        assert_eq!(
            planted,
            [
                "node_modules/vitest/index.js (installed code)",
                "pyproject.toml (pytest configuration)",
                "tests/conftest.py (pytest conftest)",
                "~/.local/lib/python3.11/site-packages/evil.py (installed code)",
                "~/.local/lib/python3.11/site-packages/usercustomize.py (Python start-up hook)",
            ]
        );
        // A module in front of the change's own, and a link that points a home directory at
        // one the watch does not walk.
        let mid = Snapshot::take(wt.path(), home.path(), &[]);
        w("tests/calc.py", "def add(a, b): return a + b\n");
        w("coverage/lcov-report/sorter.js", "x");
        std::os::unix::fs::symlink("/tmp", home.path().join(".local-elsewhere")).unwrap();
        let now = Snapshot::take(wt.path(), home.path(), &[]);
        // A setup may build modules and link; a test may not. A coverage report is no module.
        assert_eq!(mid.planted(&now, true), vec![]);
        let shadowed: Vec<String> = mid
            .planted(&now, false)
            .into_iter()
            .map(|p| format!("{} ({})", p.path, p.what))
            .collect();
        assert_eq!(
            shadowed,
            [
                "tests/calc.py (Python module)",
                "~/.local-elsewhere (symbolic link)"
            ]
        );
        // The same bytes written again still count: the change time moved.
        let again = Snapshot::take(wt.path(), home.path(), &[]);
        std::thread::sleep(std::time::Duration::from_millis(20));
        w("tests/conftest.py", "x");
        let last = Snapshot::take(wt.path(), home.path(), &[]);
        assert_eq!(again.planted(&last, false).len(), 1);
    }
}
