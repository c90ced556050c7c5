#!/usr/bin/env bash
# The Action's main step: runs `shipmoor claim-check` on the runner, then writes the step
# outputs, the job summary and the annotations. It never fails the step itself: the gate step
# does, after the outputs are uploaded. Inputs arrive as INPUT_<NAME> variables, upper-cased
# with hyphens kept (read with printenv), as the Docker form of the Action receives them.
#
#   run.sh                    run (the step "Claim check")
#   run.sh --base-cache-key   print the base cache's step outputs (the step "Locate the base
#                             cache"): needed=true|false, dir=, key=, restore-key=
set -uo pipefail
inp() { printenv "INPUT_$1" 2>/dev/null || true; }
tmp="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"

# Whether extra-args names the flag $1 itself (then the Action leaves the choice to it).
extra_names() {
  local word
  read -r -d '' -a words <<<"$(inp EXTRA-ARGS)" || true
  for word in "${words[@]}"; do
    case "$word" in "$1"|"$1"=*) return 0 ;; esac
  done
  return 1
}
extra_names_base_cache() { extra_names --base-cache; }

if [ "${1:-}" = "--base-cache-key" ]; then
  # The base cache outlives the job through actions/cache, one pull request's entries for that
  # pull request's runs only: the key names the pull request and its base commit, then this
  # run and attempt (a cache key is written once); a run restores the newest entry of its pull
  # request and base by the prefix. Outside the checkout, so it is never uploaded and never
  # makes the tree dirty.
  out="${GITHUB_OUTPUT:-/dev/stdout}"
  not_used() {
    [ -n "$1" ] && printf '::notice title=Claim Check::the base cache is not restored or saved: %s\n' "$1"
    echo "needed=false" >>"$out"
    exit 0
  }
  case "$(inp BASE-CACHE)" in
    ""|true) ;;
    # Off, or not a value: the run step says which.
    *) not_used "" ;;
  esac
  # A fuse runs no floor; a shard job writes no result to tell whether it stored an entry.
  [ -n "$(inp FUSE)" ] && not_used ""
  [ -n "$(inp SHARD)" ] && not_used "a shard job (shard $(inp SHARD)) runs base every time"
  extra_names_base_cache && not_used "extra-args names the base cache (--base-cache)"
  [ -n "${SHIPMOOR_BASE_CACHE:-}" ] && not_used "SHIPMOOR_BASE_CACHE is set, and the run uses it"
  event="$(shipmoor action event)"
  number="$(sed -n 's/^number=//p' <<<"$event")"
  if [ -z "$number" ]; then
    not_used "this is no pull request (event ${GITHUB_EVENT_NAME:-unknown}), and the base cache is kept per pull request; base runs"
  fi
  base="$(inp BASE)"
  if [ -n "$base" ]; then
    sha="$(git rev-parse --verify --quiet "$base^{commit}" 2>/dev/null || true)"
    if [ -z "$sha" ]; then
      if [[ "$base" =~ ^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$ ]]; then
        sha="${base,,}"
      else
        not_used "the base input \`$base\` is not a commit of this checkout (give the base commit's SHA)"
      fi
    fi
    base="$sha"
  else
    base="$(sed -n 's/^base=//p' <<<"$event")"
  fi
  [ -n "$base" ] || not_used "the event payload names no base commit (pull_request.base.sha)"
  prefix="shipmoor-base-v1-$number-$base-"
  key="$prefix${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-1}"
  dir="$tmp/shipmoor-base-cache"
  echo "claim-check: the base cache $dir, saved as $key when the run stores an entry (restored from the newest $prefix*)"
  {
    echo "needed=true"
    echo "dir=$dir"
    echo "key=$key"
    echo "restore-key=$prefix"
  } >>"$out"
  exit 0
fi
# The directory "Restore the base cache" filled: for claim-check's flag, kept out of the
# environment of the code under check (whose environment is part of the base cache's key).
base_cache_dir="${CLAIM_CHECK_BASE_CACHE_DIR:-}"
unset CLAIM_CHECK_BASE_CACHE_DIR
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
report_args=()
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
# A shard's artifact is named for the run's nonce (the reusable workflow's plan job draws it
# before any shard job starts), so that the change's code cannot upload one of that name first.
nonce="$(inp ARTIFACT-NONCE)"
[ -n "$nonce" ] || nonce="${GITHUB_RUN_ID:-local}-${GITHUB_RUN_ATTEMPT:-1}"
if ! [[ "$nonce" =~ ^[A-Za-z0-9-]{1,64}$ ]]; then
  no_verdict 2 "the input artifact-nonce is \`$nonce\`: give letters, digits and hyphens (at most 64)"
fi
base_cache="$(inp BASE-CACHE)"
case "$base_cache" in
  ""|true|false) ;;
  *) no_verdict 2 "the input base-cache is \`$base_cache\`: give true or false" ;;
esac
# The sandbox of the change's commands: required on Linux, whose runners have Landlock.
sandbox="$(inp SANDBOX)"
case "$sandbox" in
  "") if [ "$(uname -s)" = Linux ]; then sandbox=require; else sandbox=auto; fi ;;
  require|auto|off) ;;
  *) no_verdict 2 "the input sandbox is \`$sandbox\`: give require, auto or off" ;;
esac

if [ -n "$fuse" ]; then
  args=(fuse --result-out "$result" --error-out "$errors")
  # The commits are this job's own event's (or the inputs'), never a shard's: fuse refuses
  # shards that checked others.
  [ -n "$base" ] && args+=(--base "$base")
  [ -n "$head" ] && args+=(--head "$head")
  # Each shard's digest as its observe job published it, through job outputs the change's
  # code cannot write: fuse refuses a shard that differs.
  digests="$(inp SHARD-DIGESTS)"
  [ -n "$digests" ] && args+=(--expect-digests "$digests")
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
  # The base cache: off with base-cache false; the directory the step "Restore the base cache"
  # filled, on a pull request; else claim-check's own default. extra-args' --base-cache wins.
  if ! extra_names_base_cache; then
    if [ "$base_cache" = false ]; then
      args+=(--base-cache none)
    elif [ -z "$shard" ] && [ -n "$base_cache_dir" ]; then
      args+=(--base-cache "$base_cache_dir")
      report_args+=(--base-cache-stored-output)
    fi
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
extra_names --sandbox || args+=(--sandbox "$sandbox")
# The repository the statement names is the workflow's own (its event's), not whatever the
# checkout's `origin` says.
if [ -n "${GITHUB_SERVER_URL:-}" ] && [ -n "${GITHUB_REPOSITORY:-}" ] && ! extra_names --resource-uri; then
  args+=(--resource-uri "$GITHUB_SERVER_URL/$GITHUB_REPOSITORY")
fi
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
  # Signing keyless in the job that runs the change's code: that code could take the job's
  # OIDC identity and sign anything as this workflow (book: trust-boundary.md).
  if [ -z "$fuse" ] && [ "$sign" = keyless ] && { [ "$(inp SIGN)" = keyless ] || [ -n "${ACTIONS_ID_TOKEN_REQUEST_URL:-}" ]; }; then
    isolation="this job runs the change's code (its setup and the floor) and holds the signing identity: that code could take the job's OIDC token and sign anything as this workflow. Sign in a job of its own: call the reusable workflow shipmoor/claim-check/.github/workflows/claim-check.yml, whose sign job runs none of it"
    printf '::warning title=Claim Check::%s\n' "$isolation"
    if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
      printf '> [!WARNING]\n> **Signed where the change'"'"'s code ran:** %s (see the trust boundary page).\n\n' "$isolation" >>"$GITHUB_STEP_SUMMARY"
    fi
  fi
fi
extra="$(inp EXTRA-ARGS)"
if [ -n "$extra" ]; then
  # Every line, split on blanks (no globbing, no evaluation).
  read -r -d '' -a more <<<"$extra" || true
  args+=("${more[@]}")
fi
[ -n "$fuse" ] && args+=("${dirs[@]}")

# actions/checkout leaves the job's token in .git/config unless told `persist-credentials:
# false`. The floor's commands read a copy without it; the job's other steps (a setup that
# installs the change) read the file itself.
if [ -z "$fuse" ] && git config --local --get-regexp '^http\..*\.extraheader$' >/dev/null 2>&1; then
  echo "::warning title=Claim Check::the checkout left the job's token in .git/config (http.*.extraheader), where the job's other steps (a setup that installs the change) can read it: check out with persist-credentials: false"
fi
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
  name="claim-check-shard-$nonce-$k-of-$n"
  # The digest the sign job checks the downloaded shard against.
  digest="$(sha256sum "$shard_dir/shard.json" | cut -d' ' -f1)"
  echo "claim-check: shard $shard written: shard.json sha256:$digest"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    {
      echo "exit-code=0"
      echo "shard-digest=$digest"
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
# With the Action's base cache: whether the run stored a new entry, for the save step.
shipmoor action report --result "$result" --errors "$errors" --exit-code "$code" --repo "$top" "${report_args[@]}"
# For the comment step: the result, when the run reached one.
if [ -s "$result" ] && [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "result-path=$result" >>"$GITHUB_OUTPUT"
fi
exit 0
