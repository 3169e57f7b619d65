#!/bin/sh
# Issue 48 item 1: what the lock rehearsal costs, as a share of the tune.
# Tunes a copy of examples/spill compile-only with per-kernel controls
# (KERNEL_CONTROLS on, BUDGET 12), once with the host compiler CMake finds
# and once with clang++ as CMAKE_CUDA_HOST_COMPILER when it is installed,
# and prints, for each, the tune's wall time, the rehearsal's build time (the
# lock's score.rehearsal.build_ms, what the rehearsal line of the summary
# says) and the ratio rehearsal / tune, both measured in the same run.
# No GPU; about a minute on 2 cores.
#
# usage: bench/rehearsal_cost.sh <ciq build dir> [work dir]
# e.g.   bench/rehearsal_cost.sh build /tmp/rehearsal-cost
set -eu
ciq_build=$(cd "$1" && pwd)
work=${2:-$(mktemp -d)}
src=$(cd "$(dirname "$0")/.." && pwd)/examples/spill
rm -rf "$work" && mkdir -p "$work"
one() {
  name=$1; shift
  d="$work/$name"
  mkdir -p "$d"
  cp -r "$src" "$d/src" && rm -f "$d"/src/*.ciq.lock
  sed -i 's/^ciq_tune(spill_bench .*/ciq_tune(spill_bench METRIC spill_bytes registers BUDGET 12 SEED 1 KERNEL_CONTROLS on)/' \
    "$d/src/CMakeLists.txt"
  cmake -S "$d/src" -B "$d/build" -G Ninja -DCompileIQ_DIR="$ciq_build/lib/cmake/CompileIQ" "$@" > "$d/configure.log" 2>&1
  start=$(date +%s.%N)
  cmake --build "$d/build" --target ciq-tune-spill_bench > "$d/tune.log" 2>&1 || { echo "$name: tune failed, see $d/tune.log"; return; }
  end=$(date +%s.%N)
  lock="$d/src/spill_bench.ciq.lock"
  if [ ! -f "$lock" ]; then echo "$name: no lock written (see $d/tune.log)"; return; fi
  python3 - "$lock" "$start" "$end" "$name" <<'PY'
import json, sys
lock, start, end, name = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
l = json.load(open(lock))
l = next(iter(l["architectures"].values())) if l.get("schema_version", 1) >= 2 else l  # the one section of this GPU
r = l["score"].get("rehearsal")
tune = end - start
if not r:
    print(f"{name}: the lock has no score.rehearsal"); sys.exit(0)
reh = r["build_ms"] / 1000
print(f"{name}: tune {tune:.1f} s, rehearsal of {r['candidate_id']} {reh:.1f} s: {reh / tune:.2f} of the tune")
PY
  grep -m1 'rehearsal: .*device code matches' "$d/tune.log" || true
}
one default
if command -v clang++ >/dev/null 2>&1; then
  one clang -DCMAKE_CUDA_HOST_COMPILER=clang++ -DCMAKE_CXX_COMPILER=clang++
fi
