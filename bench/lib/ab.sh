#!/bin/bash
# A/B of two checkouts, interleaved: BASE (say, a `git archive` of main) and BR (a branch), PAIRS
# pairs of one overhead.ts workload, BASE first in each pair. Appends each RESULT line, with the
# side, pair and 1-minute load, to OUT, and prints the steady phase's median wall and CPU us/step.
#
# usage: BASE=/tmp/base BR=/tmp/branch [RUNS=15] [VARIANT=memory] \
#          bash bench/lib/ab.sh PAIRS MODE N OUT [more overhead.ts args, e.g. --convs 200]
# (each checkout needs node_modules, e.g. a symlink to this one's)
set -euo pipefail
PAIRS=$1; MODE=$2; N=$3; OUT=$4; shift 4
VARIANT=${VARIANT:-memory}
for i in $(seq 1 "$PAIRS"); do
  for side in base branch; do
    dir=$BASE; [ "$side" = branch ] && dir=$BR
    load=$(cut -d' ' -f1 /proc/loadavg)
    line=$(cd "$dir" && RUNS=${RUNS:-15} node --import tsx bench/overhead.ts \
      --variant "$VARIANT" --mode "$MODE" --n "$N" "$@" 2>/dev/null | grep '^RESULT')
    echo "$side pair=$i load1=$load $line" >> "$OUT"
    echo "$line" | sed 's/^RESULT //' | node -e '
      const r = JSON.parse(require("fs").readFileSync(0, "utf8"));
      const p = r.phases.find((p) => p.phase === "steady") ?? r.phases[r.phases.length - 1];
      console.log(process.argv[1], p.phase, p.usPerStep.median.toFixed(1), p.cpuUsPerStep.median.toFixed(1));
    ' "$VARIANT $MODE N=$N $side pair=$i load1=$load"
  done
done
