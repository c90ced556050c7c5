# shellcheck shell=bash
# Sourced by bench/floor.sh and bench/cache.sh, after bench/common.sh (whose `must` and `die` it
# uses): the published sources of `globset` 0.4.22 (cargo downloads them into its registry
# cache, not timed) committed into a new repository with a bug at base, then its fix and a
# tagged integration test at head.
#
#   globset_repo DIR WORK TAG_IDENT [BRANCH]
#
# DIR: the repository to make (with `new_repo` and `acceptance` of the sourcing script); WORK:
# a scratch directory; BRANCH: the head commit's branch (default: on top of main). Sets
# `gs_base`, the base commit, and leaves the current directory in DIR.
globset_repo() {
  local gs="$1" scratch="$2" ident="$3" branch="${4:-}"
  echo "==> downloading globset 0.4.22's published sources through cargo (not timed)"
  local fetcher="$scratch/fetch-globset"
  mkdir -p "$fetcher/src"
  printf '[package]\nname = "fetch-globset"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\nglobset = "=0.4.22"\n' > "$fetcher/Cargo.toml"
  : > "$fetcher/src/lib.rs"
  must env -C "$fetcher" cargo fetch --quiet
  local src
  src="$(cd "$fetcher" && cargo metadata --format-version 1 --quiet | python3 -c '
import json, os, sys
meta = json.load(sys.stdin)
print(next(os.path.dirname(p["manifest_path"]) for p in meta["packages"] if p["name"] == "globset"))')" ||
    die "\`cargo metadata\` in $fetcher did not name globset's sources"
  new_repo "$gs"
  cp -R "$src/." "$gs/"
  rm -f "$gs/.cargo-ok" "$gs/.cargo_vcs_info.json"
  cd "$gs" || die "cannot enter $gs"
  echo "/target" > .gitignore
  # The published manifest lists its targets (`autotests = false`); let cargo find tests/ as in
  # the crate's own repository. And the bug at base: a set of one glob reads as empty.
  python3 - <<'PY'
m = open("Cargo.toml").read()
assert "autotests = false\n" in m
open("Cargo.toml", "w").write(m.replace("autotests = false\n", ""))
p = "src/lib.rs"
s = open(p).read()
fixed = "    pub fn is_empty(&self) -> bool {\n        self.len == 0\n    }"
assert fixed in s, "globset's is_empty changed; pick another line for the bug"
open(p, "w").write(s.replace(fixed, fixed.replace("self.len == 0", "self.len <= 1")))
PY
  git add -A; git commit --quiet -m "globset 0.4.22 with a bug"
  # shellcheck disable=SC2034 # read by the sourcing script
  gs_base="$(git rev-parse HEAD)"
  [ -n "$branch" ] && git switch --quiet -c "$branch"
  sed -i 's/        self.len <= 1/        self.len == 0/' src/lib.rs
  mkdir -p tests
  cat > "tests/empty_${ident}.rs" <<'RS'
use globset::{Glob, GlobSetBuilder};

#[test]
fn one_glob_is_not_empty() {
    let mut b = GlobSetBuilder::new();
    b.add(Glob::new("*.rs").unwrap());
    let set = b.build().unwrap();
    assert_eq!(set.len(), 1);
    assert!(!set.is_empty());
    assert!(set.is_match("lib.rs"));
}
RS
  acceptance
  git add -A; git commit --quiet -m "globset: a set of one glob is not empty"
}
