#!/usr/bin/env bash
# Floret's postgresStore and LangGraph + PostgresSaver on the same PostgreSQL
# server (a throwaway durable cluster on loopback: fsync and synchronous_commit
# on, as PostgreSQL ships), the same workload (bench/lib/harness.mjs), in one
# run, interleaved pass by pass. Prints the RESULT lines and a ratio table.
#
#   (cd bench/peers_postgres && npm install)    # once: LangGraph and its checkpointer
#   bash bench/postgres_side_by_side.sh [passes]  # default 3
#
# Needs PostgreSQL installed (apt-get install postgresql).
set -euo pipefail
cd "$(dirname "$0")/.."
PASSES=${1:-3}
OUT=${OUT:-$(mktemp -d /tmp/floret-pg-bench-XXXX)}
eval "$(node scripts/postgres_server.mjs start --durable)"
export FLORET_POSTGRES_URL
trap 'node scripts/postgres_server.mjs stop' EXIT
echo "server: $FLORET_POSTGRES_URL; results in $OUT"
for pass in $(seq 1 "$PASSES"); do
  for workload in "seq 10" "seq 100" "conc 5"; do
    set -- $workload
    args=(--variant postgres --mode "$1" --n "$2")
    [ "$1" = conc ] && args+=(--convs 200)
    node --import tsx bench/overhead.ts "${args[@]}" | sed -n "s/^RESULT //p" >> "$OUT/pass-$pass.jsonl"
    (cd bench/peers_postgres && node langgraph_postgres.mjs "${args[@]}") | sed -n "s/^RESULT //p" >> "$OUT/pass-$pass.jsonl"
  done
done
node --import tsx bench/lib/ratios.ts "$OUT"/pass-*.jsonl
