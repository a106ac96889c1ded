#!/bin/bash
# A/B interleaved: main snapshot (BASE) and this branch (BR), PAIRS pairs of one mode each.
# usage: BASE=/tmp/perf4-base BR=/work/wt-perf4 RUNS=15 bash ab.sh PAIRS MODE N OUT
PAIRS=$1; MODE=$2; N=$3; OUT=$4
for i in $(seq 1 "$PAIRS"); do
  for side in base branch; do
    dir=$BASE; [ "$side" = branch ] && dir=$BR
    load=$(cut -d' ' -f1 /proc/loadavg)
    line=$(cd "$dir" && RUNS=${RUNS:-15} node --import tsx bench/overhead.ts --variant memory --mode "$MODE" --n "$N" 2>/dev/null | grep '^RESULT')
    echo "$side pair=$i load1=$load $line" >> "$OUT"
    echo "$line" | sed 's/^RESULT //' | node -e 'const r=JSON.parse(require("fs").readFileSync(0,"utf8"));const p=r.phases.find(p=>p.phase==="steady")||r.phases[r.phases.length-1];console.log(process.argv[1], p.phase, p.usPerStep.median.toFixed(1), p.cpuUsPerStep.median.toFixed(1))' "$MODE N=$N $side pair=$i load1=$load"
  done
done
