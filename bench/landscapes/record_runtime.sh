#!/bin/sh
# Records the runtime landscapes of bench/landscapes/ on a machine with a CUDA
# GPU (the H200): for each, `ciq tune` with strategy exhaustive over the
# landscape's space.yaml on a copy of the example (time_ms; warm-up and runs
# per point as the landscape's space.yaml says, every run kept in the
# journal; no finalists), then journal_to_landscape.py writes landscape.json
# beside the space. WORKERS (default 2) workers share the GPU: ciq's GPU lock
# lets one measure at a time while another builds, so a point costs about its
# benchmark runs, not build + runs. The `ciq tune` on an H200 took 517 s for
# stencil-h200 (250 points) and 318 s for gemm-h200 (240) with two workers,
# 283 s for reduce-h200 (48) with one (bench/landscapes/README.md); give each
# landscape its own GPU (CUDA_VISIBLE_DEVICES) to record several at once.
# Usage: bench/landscapes/record_runtime.sh <ciq build dir> [names...]
#        (names: reduce-h200 stencil-h200 gemm-h200; default all three)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: $0 <ciq build dir> [reduce-h200|stencil-h200|gemm-h200 ...]" >&2; exit 2; }
build=$(cd "$1" && pwd)
shift
names=${*:-reduce-h200 stencil-h200 gemm-h200}
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
work=$(mktemp -d /tmp/ciq-landscapes.XXXXXX)
for n in $names; do
  ex=${n%-h200}
  # Runs per point as each landscape was recorded (its space.yaml's header).
  case $ex in
    reduce) measure="WARMUP 1 REPEATS 5" ;;
    stencil) measure="WARMUP 1 REPEATS 4" ;;
    gemm) measure="WARMUP 0 REPEATS 3" ;;
    *) echo "record_runtime: error: unknown landscape '$n'" >&2; exit 1 ;;
  esac
  cp -r "$root/examples/$ex" "$work/$ex"
  # The example's own ciq_tune(), pointed at the landscape's space, exhaustive.
  sed -i -e "s|SPACE \${CMAKE_CURRENT_SOURCE_DIR}/space.yaml ptxas-13.0-default|SPACE $here/$n/space.yaml|" \
         -e "s|BUDGET 60 SEED 1|BUDGET 5000 SEED 1 STRATEGY exhaustive|" \
         -e "s|WARMUP 1 REPEATS 5|$measure|" "$work/$ex/CMakeLists.txt"
  grep -q "STRATEGY exhaustive" "$work/$ex/CMakeLists.txt" && grep -q "$measure" "$work/$ex/CMakeLists.txt" || { echo "record_runtime: error: could not retarget $ex's ciq_tune()" >&2; exit 1; }
  cmake -S "$work/$ex" -B "$work/$ex/build" -G Ninja -DCompileIQ_DIR="$build/lib/cmake/CompileIQ" >/dev/null
  cmake --build "$work/$ex/build" >/dev/null
  cfg=$(ls "$work/$ex/build"/ciq/*/ciq.yaml)
  # Every point is measured the same way: no finalists re-measure the best.
  sed -i 's|^benchmark:$|benchmark:\n  finalists: 0|' "$cfg"
  grep -q "^  finalists: 0$" "$cfg" || { echo "record_runtime: error: could not turn off the finalists in $cfg" >&2; exit 1; }
  start=$(date +%s)
  # A search without a winner exits non-zero; the journal still holds every point.
  CIQ_WORKERS=${WORKERS:-2} "$build/bin/ciq" tune --config "$cfg" --no-canary --no-lock --quiet || echo "record_runtime: $n: ciq tune exited $?"
  echo "record_runtime: $n: ciq tune took $(( $(date +%s) - start )) s"
  python3 "$here/journal_to_landscape.py" "$(dirname "$cfg")/journal.jsonl" "$here/$n" "$n"
done
rm -rf "$work"
