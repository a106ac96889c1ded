#!/usr/bin/env bash
# How these passes were run: one side-by-side pass of main (348b871, a
# worktree at /work/wt-pg2-base) then one of branch pg2, three times, each on
# its own throwaway durable cluster; a private TMPDIR keeps the cluster's state
# file apart from other sessions' clusters.
export TMPDIR=/tmp/pg2bench
for i in 1 2 3; do
  for side in base new; do
    dir=/work/wt-pg2-base; [ $side = new ] && dir=/work/wt-pg2
    (cd $dir && OUT=/tmp/pg2out/$side/p$i bash bench/postgres_side_by_side.sh 1)
  done
done
