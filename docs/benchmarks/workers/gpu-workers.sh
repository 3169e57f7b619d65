#!/bin/bash
# Evaluations per hour with 1 and 2 GPUs: the same stencil search (12
# evaluations, seed 1, no finalists), run once with each worker count.
set -u
root=$(pwd)
export LD_LIBRARY_PATH=$root/.device/prefix/lib/carried${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$root/.device/prefix/bin:/usr/local/cuda/bin:$PATH
nvidia-smi -L
w=/tmp/wk; rm -rf $w; mkdir -p $w; cp -r examples/stencil $w/src
cmake -S $w/src -B $w/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCompileIQ_DIR=$root/.device/prefix/lib/cmake/CompileIQ > $w/configure.log 2>&1 || { tail $w/configure.log; exit 1; }
cmake --build $w/build --target stencil_bench > /dev/null 2>&1 || exit 1
y=$w/build/ciq/stencil_bench/ciq.yaml
sed -i 's/^benchmark:/benchmark:\n  finalists: 0/' $y
for n in 1 2; do
  s=$(date +%s.%N)
  CIQ_WORKERS=$n ciq tune --config $y --fresh --no-canary --no-lock --max-evaluations 13 > $w/tune-$n.log 2>&1
  rc=$?
  e=$(date +%s.%N)
  python3 - "$n" "$s" "$e" "$w/build/ciq/stencil_bench/results.csv" "$rc" <<'PY'
import csv, sys
n, s, e, path, rc = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
rows = list(csv.DictReader(open(path)))
print(f"workers={n} rc={rc} evaluations={len(rows)} wall_s={e-s:.1f} evaluations_per_hour={len(rows)*3600/(e-s):.0f} best_ms={min(float(r['score']) for r in rows if r['score']):.4f}")
PY
  cp $w/build/ciq/stencil_bench/results.csv $OUT/results-workers-$n.csv
  cp $w/tune-$n.log $OUT/
done
