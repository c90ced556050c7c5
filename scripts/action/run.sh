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

# Three roles: the whole run (the default); one shard of the floor (`shard: K/N`), uploaded for
# a later fuse job; or the fuse of the downloaded shards (`fuse: DIR`), which judges, decides
# and signs as the whole run does.
shard="$(inp SHARD)"
fuse="$(inp FUSE)"
top="$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
# No verdict reached: the report step says why (annotations, verdict ERROR) and the gate fails.
no_verdict() {
  local code="$1" message="$2"
  [ -n "$message" ] && printf '::error title=Claim Check::%s\n' "$message"
  shipmoor action report --result "$result" --errors "$errors" --exit-code "$code" --repo "$top"
  exit 0
}
if [ -n "$shard" ] && [ -n "$fuse" ]; then
  no_verdict 2 "the inputs shard and fuse are two roles: give one of them"
fi

if [ -n "$fuse" ]; then
  args=(fuse --result-out "$result" --error-out "$errors")
  # Every directory below the input holding a shard.json, in a stable order.
  mapfile -t dirs < <(find "$fuse" -name shard.json -type f -printf '%h\n' 2>/dev/null | LC_ALL=C sort)
  if [ "${#dirs[@]}" -eq 0 ]; then
    no_verdict 2 "no shard (shard.json) under $fuse: did the shard jobs upload theirs?"
  fi
else
  args=(claim-check)
  [ -n "$base" ] && args+=(--base "$base")
  [ -n "$head" ] && args+=(--head "$head")
  runs="$(inp RUNS)"; [ -n "$runs" ] && args+=(--runs "$runs")
  acceptance="$(inp ACCEPTANCE)"
  if [ -n "$acceptance" ]; then
    args+=(--acceptance "$acceptance")
  fi
  if [ -n "$shard" ]; then
    shard_dir="$tmp/claim-check-shard-${shard%%/*}"
    args+=(--shard "$shard" --shard-out "$shard_dir" --error-out "$errors")
    by="$(inp SHARD-BY)"; [ -n "$by" ] && args+=(--shard-by "$by")
  else
    args+=(--result-out "$result" --error-out "$errors")
  fi
fi
# A change that claims no criterion of its own: claim-check itself derives a draft claim from
# the pull request's checklist in GITHUB_EVENT_PATH (a draft never reads READY).
# The judge and the signature belong to the whole run and to the fuse, never to a shard.
if [ -z "$shard" ]; then
  mode="$(inp MODE)"; [ -n "$mode" ] && args+=(--mode "$mode")
  sign="$(inp SIGN)"
  case "$sign" in
    ""|auto)
      # In Actions, sign keyless: where the job has no OIDC identity (a fork's pull request, no
      # `id-token: write`), claim-check writes the statement unsigned and says so.
      if [ "${GITHUB_ACTIONS:-}" = true ]; then sign=keyless; else sign=none; fi ;;
  esac
  args+=(--sign "$sign")
  key="$(inp KEY)"; [ -n "$key" ] && args+=(--key "$key")
fi
extra="$(inp EXTRA-ARGS)"
if [ -n "$extra" ]; then
  # Every line, split on blanks (no globbing, no evaluation).
  read -r -d '' -a more <<<"$extra" || true
  args+=("${more[@]}")
fi
[ -n "$fuse" ] && args+=("${dirs[@]}")

echo "claim-check: shipmoor ${args[*]}"
# The code under check prints to this log: stop workflow commands while it runs, so that no
# line of its output can forge an annotation, mask a value or set an output.
resume="claim-check-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "::stop-commands::$resume"
shipmoor "${args[@]}"
code=$?
echo "::$resume::"
if [ -n "$shard" ]; then
  [ "$code" -eq 0 ] || no_verdict "$code" ""
  # The shard's directory, uploaded under a name unique to this run for the fuse job to find.
  k="${shard%%/*}"
  n="${shard##*/}"
  name="claim-check-shard-${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-1}-$k-of-$n"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
      echo "exit-code=0"
      echo "shard-dir=$shard_dir"
      echo "artifact-name=$name"
      echo "artifact-paths=$shard_dir"
    } >>"$GITHUB_OUTPUT"
  fi
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    printf '### Claim Check: shard %s\n\nThe floor of this shard'"'"'s criteria ran; its evidence is uploaded as `%s` for the fuse job, which decides the verdict.\n' "$shard" "$name" >>"$GITHUB_STEP_SUMMARY"
  fi
  exit 0
fi
shipmoor action report --result "$result" --errors "$errors" --exit-code "$code" --repo "$top"
# For the comment step: the result, when the run reached one.
if [ -s "$result" ] && [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "result-path=$result" >>"$GITHUB_OUTPUT"
fi
exit 0
