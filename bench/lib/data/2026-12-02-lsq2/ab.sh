#!/bin/bash
# A/B interleaved: main snapshot (BASE) and this branch (BR), PAIRS pairs of one variant and mode.
# usage: BASE=/tmp/lsq2-base BR=/work/wt-lsq2 RUNS=15 bash ab.sh PAIRS VARIANT MODE N OUT [extra overhead.ts args]
PAIRS=$1; VARIANT=$2; MODE=$3; N=$4; OUT=$5; shift 5
for i in $(seq 1 "$PAIRS"); do
  for side in base branch; do
    dir=$BASE; [ "$side" = branch ] && dir=$BR
    load=$(cut -d' ' -f1 /proc/loadavg)
    line=$(cd "$dir" && RUNS=${RUNS:-15} node --import tsx bench/overhead.ts --variant "$VARIANT" --mode "$MODE" --n "$N" "$@" 2>/dev/null | grep '^RESULT')
    echo "$side pair=$i load1=$load $line" >> "$OUT"
    echo "$line" | sed 's/^RESULT //' | node -e 'const r=JSON.parse(require("fs").readFileSync(0,"utf8"));const p=r.phases.find(p=>p.phase==="steady")||r.phases[r.phases.length-1];console.log(process.argv[1], p.phase, p.usPerStep.median.toFixed(1), p.cpuUsPerStep.median.toFixed(1))' "$VARIANT $MODE N=$N $side pair=$i load1=$load"
  done
done
