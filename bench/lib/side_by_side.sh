#!/usr/bin/env bash
# Runs Floret's overhead benchmark and the peers' side by side, interleaved,
# one process per (engine, variant, workload), REPEAT passes (default 3).
#   bash bench/lib/side_by_side.sh                  # peers in /tmp/peers (a copy of the peers' benchmark folder, after npm ci)
#   PEERS_DIR=/path/to/peers REPEAT=3 bash bench/lib/side_by_side.sh
#   ROWS="floret:memory ai-sdk:default" bash bench/lib/side_by_side.sh
#   FLORET_DIR=/tmp/after BASE_DIR=/tmp/before ROWS="floret:memory base:memory ai-sdk:default" ...
#     (engine "base": the same overhead.ts from another checkout, e.g. a `git archive`
#     of the commit before a change, so before and after run in the same passes; its
#     RESULT lines get "peer":"floret-base")
# Each pass writes $OUT/pass-<k>.jsonl (one RESULT json per line, plus "load1" and
# "startedAt" fields); summarise with: npx tsx bench/lib/ratios.ts $OUT/pass-*.jsonl
# Before each process it waits (up to MAX_WAIT s, default 60) for the 1-min load
# average to drop under MAX_LOAD (default 1.2).
set -uo pipefail
REPO=${FLORET_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
BASE_DIR=${BASE_DIR:-}
PEERS_DIR=${PEERS_DIR:-/tmp/peers}
REPEAT=${REPEAT:-3}
OUT=${OUT:-$PEERS_DIR/results/side-by-side-$(date +%Y%m%dT%H%M%S)}
MAX_LOAD=${MAX_LOAD:-1.2}
MAX_WAIT=${MAX_WAIT:-60}
ROWS=${ROWS:-"floret:memory floret:libsql-normal floret:libsql ai-sdk:default langgraph:sqlite"}
WORKLOADS=${WORKLOADS:-"seq:10 seq:100 conc:5"}
export OPENAI_AGENTS_DISABLE_TRACING=1 MASTRA_TELEMETRY_DISABLED=1
export LANGCHAIN_TRACING_V2=false LANGSMITH_TRACING=false
mkdir -p "$OUT"
fails=0

wait_low_load() {
  local t=0
  while [ "$t" -lt "$MAX_WAIT" ]; do
    awk -v max="$MAX_LOAD" '{ exit !($1 < max) }' /proc/loadavg && return
    sleep 5
    t=$((t + 5))
  done
}

one() { # engine variant mode n rawfile
  local engine=$1 variant=$2 mode=$3 n=$4 raw=$5 out rc line load args
  args=(--variant "$variant" --mode "$mode" --n "$n")
  [ "$mode" = conc ] && args+=(--convs "${CONVS:-200}")
  wait_low_load
  load=$(cut -d' ' -f1 /proc/loadavg)
  printf '>> %-8s %-14s %-4s N=%-4s load=%-5s ' "$engine" "$variant" "$mode" "$n" "$load" >&2
  local t0=$SECONDS started
  started=$(date -u +%FT%TZ)
  if [ "$engine" = floret ]; then
    out=$(cd "$REPO" && npx tsx bench/overhead.ts "${args[@]}" 2>"$OUT/last-stderr.txt")
  elif [ "$engine" = base ]; then
    [ -n "$BASE_DIR" ] || { echo "engine base needs BASE_DIR" >&2; exit 2; }
    out=$(cd "$BASE_DIR" && npx tsx bench/overhead.ts "${args[@]}" 2>"$OUT/last-stderr.txt" |
      sed 's/^RESULT {"peer":"floret"/RESULT {"peer":"floret-base"/')
  else
    out=$(cd "$PEERS_DIR" && node "peer-$engine.mjs" "${args[@]}" 2>"$OUT/last-stderr.txt")
  fi
  rc=$?
  line=$(printf '%s\n' "$out" | grep '^RESULT ' | sed 's/^RESULT //')
  if [ $rc -ne 0 ] || [ -z "$line" ]; then
    fails=$((fails + 1))
    printf '{"failed":true,"peer":"%s","variant":"%s","mode":"%s","N":%s,"error":"rc=%s"}\n' \
      "$engine" "$variant" "$mode" "$n" "$rc" >>"$raw"
    echo "FAILED rc=$rc ($((SECONDS - t0))s): $(tail -c 300 "$OUT/last-stderr.txt" | tr '\n' ' ')" >&2
  else
    printf '%s\n' "${line%\}},\"load1\":$load,\"startedAt\":\"$started\"}" >>"$raw"
    echo "ok ($((SECONDS - t0))s)" >&2
  fi
}

for rep in $(seq 1 "$REPEAT"); do
  raw="$OUT/pass-$rep.jsonl"
  : >"$raw"
  echo "pass $rep/$REPEAT $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  for w in $WORKLOADS; do
    for row in $ROWS; do
      one "${row%%:*}" "${row#*:}" "${w%%:*}" "${w#*:}" "$raw"
    done
  done
done
echo "results in $OUT" >&2
exit $((fails > 0 ? 1 : 0))
