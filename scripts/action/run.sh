#!/usr/bin/env bash
# The Action's main step: runs `shipmoor claim-check` on the runner, then writes the step
# outputs, the job summary and the annotations. It never fails the step itself: the gate step
# does, after the outputs are uploaded. Inputs arrive as INPUT_<NAME> variables, upper-cased
# with hyphens kept (read with printenv), as the Docker form of the Action receives them.
set -uo pipefail
inp() { printenv "INPUT_$1" 2>/dev/null || true; }
tmp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
result="$(mktemp "$tmp/claim-check-result.XXXXXX.json")"
errors="$(mktemp "$tmp/claim-check-errors.XXXXXX.json")"
rm -f "$result" "$errors"

# The pull request's base and head (on other events, claim-check's defaults apply).
base="$(inp BASE)"
head="$(inp HEAD)"
event="$(shipmoor action event)"
[ -n "$base" ] || base="$(sed -n 's/^base=//p' <<<"$event")"
[ -n "$head" ] || head="$(sed -n 's/^head=//p' <<<"$event")"

# A shallow checkout (actions/checkout's default fetch-depth: 1) has no base: fetch history.
if [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
  echo "claim-check: the checkout is shallow; fetching history to reach the base commit"
  git fetch --no-tags --quiet --unshallow origin || git fetch --no-tags --quiet --deepen=2000 origin || true
fi
for sha in "$base" "$head"; do
  if [ -n "$sha" ] && ! git cat-file -e "$sha^{commit}" 2>/dev/null; then
    git fetch --no-tags --quiet origin "$sha" || echo "::warning title=Claim Check::cannot fetch $sha from origin"
  fi
done

args=(claim-check --result-out "$result" --error-out "$errors")
[ -n "$base" ] && args+=(--base "$base")
[ -n "$head" ] && args+=(--head "$head")
mode="$(inp MODE)"; [ -n "$mode" ] && args+=(--mode "$mode")
runs="$(inp RUNS)"; [ -n "$runs" ] && args+=(--runs "$runs")
acceptance="$(inp ACCEPTANCE)"
if [ -n "$acceptance" ]; then
  args+=(--acceptance "$acceptance")
fi
# A change that claims no criterion of its own: claim-check itself derives a draft claim from
# the pull request's checklist in GITHUB_EVENT_PATH (a draft never reads READY).
sign="$(inp SIGN)"
case "$sign" in
  ""|auto)
    # In Actions, sign keyless: where the job has no OIDC identity (a fork's pull request, no
    # `id-token: write`), claim-check writes the statement unsigned and says so.
    if [ "${GITHUB_ACTIONS:-}" = true ]; then sign=keyless; else sign=none; fi ;;
esac
args+=(--sign "$sign")
key="$(inp KEY)"; [ -n "$key" ] && args+=(--key "$key")
extra="$(inp EXTRA-ARGS)"
if [ -n "$extra" ]; then
  # Every line, split on blanks (no globbing, no evaluation).
  read -r -d '' -a more <<<"$extra" || true
  args+=("${more[@]}")
fi

echo "claim-check: shipmoor ${args[*]}"
# The code under check prints to this log: stop workflow commands while it runs, so that no
# line of its output can forge an annotation, mask a value or set an output.
resume="claim-check-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "::stop-commands::$resume"
shipmoor "${args[@]}"
code=$?
echo "::$resume::"
top="$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
shipmoor action report --result "$result" --errors "$errors" --exit-code "$code" --repo "$top"
# For the comment step: the result, when the run reached one.
if [ -s "$result" ] && [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "result-path=$result" >>"$GITHUB_OUTPUT"
fi
exit 0
