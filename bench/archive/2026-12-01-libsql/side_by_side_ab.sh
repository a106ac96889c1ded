#!/bin/bash
# Interleaved side-by-side: floret before/after (libSQL variants) and langgraph sqlite.
export PEERS_DIR=/tmp/peers-libsql MAX_WAIT=0 REPEAT=1
for pass in 1 2 3; do
  for w in seq:10 seq:100 conc:5; do
    tag=${w/:/}
    ROWS="floret:libsql-normal floret:libsql" WORKLOADS=$w OUT=/tmp/sbs/after-p$pass-$tag bash /tmp/floret-after/bench/lib/side_by_side.sh
    ROWS="langgraph:sqlite" WORKLOADS=$w OUT=/tmp/sbs/peer-p$pass-$tag bash /tmp/floret-after/bench/lib/side_by_side.sh
    ROWS="floret:libsql-normal floret:libsql" WORKLOADS=$w OUT=/tmp/sbs/before-p$pass-$tag bash /tmp/floret-before/bench/lib/side_by_side.sh
  done
done
echo ALL DONE
