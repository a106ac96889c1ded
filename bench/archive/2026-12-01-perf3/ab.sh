mode=$1; n=$2; out=/tmp/perf3ab/r2/$mode.log
for i in $(seq 1 $n); do for side in main branch; do d=/work/main; [ $side = branch ] && d=/work/wt-perf3
 (cd $d && r=$(RUNS=15 npx tsx bench/overhead.ts --variant memory --mode $mode --n $N 2>&1 | grep RESULT | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s.slice(7));const p=r.phases[r.phases.length-1];console.log(p.usPerStep.median.toFixed(1),p.cpuUsPerStep.median)})'); echo "$side $i load=$(uptime | sed 's/.*average: //' | cut -d, -f1) $r" >> $out)
done; done
