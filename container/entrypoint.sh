#!/bin/sh
# The entrypoint of the Docker action (container/action.yml), installed in the image as
# /usr/local/bin/shipmoor-action and run there by busybox sh (the image has no other shell).
#
# The same run as the composite action's scripts/action/run.sh and its gate step, in one step:
# `shipmoor claim-check` in the workspace, then `shipmoor action report` (step outputs, job summary
# capped at 1 MiB, annotations), `shipmoor action comment` with `comment: true`, and
# `shipmoor action gate` (fail-on). Differences:
# - Inputs: a Docker action gets each input as INPUT_<NAME upper-cased> with hyphens kept
#   (INPUT_FAIL-ON). No POSIX shell can expand such a name, and busybox sh (like dash) drops it
#   from the environment of every command it starts, so `printenv 'INPUT_FAIL-ON'` sees nothing
#   here: the value is read from this process's own initial environment, /proc/$$/environ.
#   INPUT_FAIL_ON (underscores) is read first, for runs by hand (`docker run -e INPUT_FAIL_ON=…`).
# - Paths in the outputs are relative to the workspace (./.shipmoor/verify.md): the container
#   sees the workspace at /github/workspace, the workflow's other steps at another path.
# - The workspace belongs to the runner's user, not root: git is told it is safe (and the image's
#   /etc/gitconfig trusts every directory), git is kept from rewriting the index
#   (GIT_OPTIONAL_LOCKS=0), and what the run wrote is handed back to the workspace's owner.
# - The image's git cannot fetch (no HTTPS helper): the checkout needs the base commit
#   (actions/checkout with fetch-depth: 0).
# - The step fails in this one step: with claim-check's exit code (1 BLOCKED, 4 INCONCLUSIVE,
#   2 usage or input error, 3 crash), or 1 for a passing verdict that fail-on lists.
set -u

note() { printf 'shipmoor-action: %s\n' "$*" >&2; }

# input NAME: the action input NAME (as action.yml spells it), or empty.
input() {
  _up=$(printf '%s' "$1" | tr 'a-z ' 'A-Z_')
  _us=$(printf '%s' "$_up" | tr '-' '_')
  if eval "[ -n \"\${INPUT_${_us}+set}\" ]"; then
    eval "printf '%s' \"\$INPUT_${_us}\""
    return 0
  fi
  if [ "$_us" != "$_up" ] && [ -r "/proc/$$/environ" ]; then
    # NUL-separated NAME=VALUE entries: NULs become newlines, and newlines inside values \001,
    # turned back after the match.
    tr '\n\000' '\001\n' <"/proc/$$/environ" | sed -n "s/^INPUT_${_up}=//p" | head -n 1 | tr '\001' '\n'
  fi
}

trim() { printf '%s' "$1" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//'; }

# Before claim-check runs: an error annotation, the outputs of a run without a verdict, exit 2.
setup_error() {
  printf '::error title=Claim Check::%s\n' "$(printf '%s' "$1" | sed -e 's/%/%25/g' | tr '\n' ' ')"
  shipmoor action report --result /nonexistent --exit-code 2 >/dev/null 2>&1 || true
  exit 2
}

mode=$(trim "$(input mode)")
acceptance=$(trim "$(input acceptance)")
runs=$(trim "$(input runs)")
sandbox=$(trim "$(input sandbox)")
sign=$(trim "$(input sign)")
key=$(trim "$(input key)")
base=$(trim "$(input base)")
head=$(trim "$(input head)")
extra_args=$(input extra-args)
working_directory=$(trim "$(input working-directory)")
fail_on=$(trim "$(input fail-on)")
: "${working_directory:=.}" "${fail_on:=BLOCKED,INCONCLUSIVE}"

workspace=${GITHUB_WORKSPACE:-$(pwd)}
[ "$workspace" = / ] || workspace=${workspace%/}
case $working_directory in
  /*) dir=$working_directory ;;
  *) dir=$workspace/$working_directory ;;
esac
cd "$dir" 2>/dev/null || setup_error "working-directory '$working_directory': no such directory ($dir)"

# "detected dubious ownership" otherwise (where a system config is ignored, GIT_CONFIG_NOSYSTEM).
if ! git config --global --get-all safe.directory 2>/dev/null | grep -qxF "$workspace"; then
  git config --global --add safe.directory "$workspace" 2>/dev/null ||
    note "could not add $workspace to safe.directory in the global git config (HOME=${HOME:-unset})"
fi
export GIT_OPTIONAL_LOCKS=0

root=$(git rev-parse --show-toplevel 2>/dev/null) ||
  setup_error "$dir is not in a git repository: check the repository out first (actions/checkout with fetch-depth: 0)"
case $root in
  "$workspace") root_shown=. ;;
  "$workspace"/*) root_shown=${root#"$workspace"/} ;;
  *) root_shown=$root ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shipmoor-action.XXXXXX")
result=$tmp/result.json
errors=$tmp/errors.json

# The pull request's base and head (on other events, claim-check's defaults apply).
event=$(shipmoor action event)
[ -n "$base" ] || base=$(printf '%s\n' "$event" | sed -n 's/^base=//p')
[ -n "$head" ] || head=$(printf '%s\n' "$event" | sed -n 's/^head=//p')
if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
  for sha in $base $head; do
    git cat-file -e "$sha^{commit}" 2>/dev/null ||
      echo "::warning title=Claim Check::$sha is not in this shallow checkout, and the container cannot fetch it: check out with fetch-depth: 0"
  done
fi

set -- claim-check --result-out "$result" --error-out "$errors"
[ -z "$base" ] || set -- "$@" --base "$base"
[ -z "$head" ] || set -- "$@" --head "$head"
[ -z "$mode" ] || set -- "$@" --mode "$mode"
[ -z "$runs" ] || set -- "$@" --runs "$runs"
[ -z "$sandbox" ] || set -- "$@" --sandbox "$sandbox"
if [ -n "$acceptance" ]; then
  set -- "$@" --acceptance "$acceptance"
fi
# A change that claims no criterion of its own: claim-check itself derives a draft claim from
# the pull request's checklist in GITHUB_EVENT_PATH (a draft never reads READY).
case $sign in
  "" | auto)
    # Keyless in Actions: where the job has no OIDC identity (a fork's pull request, no
    # `id-token: write`), claim-check writes the statement unsigned and says so.
    if [ "${GITHUB_ACTIONS:-}" = true ]; then sign=keyless; else sign=none; fi
    ;;
esac
set -- "$@" --sign "$sign"
[ -z "$key" ] || set -- "$@" --key "$key"
# extra-args: split on white space, no quoting, no globbing.
set -f
for a in $extra_args; do set -- "$@" "$a"; done
set +f

echo "claim-check: shipmoor $*"
shipmoor "$@"
code=$?

# Outputs, summary and annotations, from the workspace so that the paths are the workflow's.
outputs=$tmp/outputs
: >"$outputs"
(cd "$workspace" && GITHUB_OUTPUT=$outputs shipmoor action report --result "$result" --errors "$errors" --exit-code "$code" --repo "$root_shown") ||
  note "shipmoor action report failed"
[ -z "${GITHUB_OUTPUT:-}" ] || cat "$outputs" >>"$GITHUB_OUTPUT"
# output NAME: a value from the outputs file (name<<DELIM, the value's lines, DELIM).
output() {
  awk -v name="$1" '
    !inside && index($0, name "<<") == 1 { delim = substr($0, length(name) + 3); inside = 1; n = 0; next }
    inside && $0 == delim { exit }
    inside { printf "%s%s", (n++ ? "\n" : ""), $0 }
  ' "$outputs"
}
verdict=$(output verdict)

# The pull request comment, when asked: a courtesy that never changes the step's result. The
# token reaches this one command only (the floor above scrubs INPUT_* from what it runs too).
if [ "$(trim "$(input comment)")" = true ] && [ -s "$result" ]; then
  (cd "$workspace" && GITHUB_TOKEN=$(input github-token) shipmoor action comment --result "$result" --working-directory "$working_directory") ||
    note "the pull request comment was not written; the verdict stands"
fi

# What the run wrote is root's: hand it back to the workspace's owner, so that later steps
# (running as the runner's user) can replace or remove it.
owner=$(stat -c '%u:%g' "$workspace" 2>/dev/null || echo 0:0)
if [ "$owner" != 0:0 ]; then
  [ ! -d "$root/.shipmoor" ] || chown -R "$owner" "$root/.shipmoor" 2>/dev/null ||
    note "could not hand $root/.shipmoor to $owner"
  output artifact-paths | while IFS= read -r p; do
    case $p in "") continue ;; /*) ;; *) p=$workspace/$p ;; esac
    [ ! -e "$p" ] || chown -R "$owner" "$p" 2>/dev/null || true
  done
fi
rm -rf "$tmp"

if shipmoor action gate --verdict "$verdict" --exit-code "$code" --fail-on "$fail_on"; then
  exit 0
fi
[ "$code" -eq 0 ] && exit 1
exit "$code"
