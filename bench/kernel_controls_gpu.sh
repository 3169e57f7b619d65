#!/usr/bin/env bash
# Issue 40 on a GPU: per-kernel controls found by a runtime search, checked
# by an A/B timing of ciq's own.
#
#   bench/kernel_controls_gpu.sh <ciq prefix> <out dir> [ab runs]
#
# 1. examples/spill tuned for its own run time (its ciq_tune() line made
#    `ciq_tune(spill_bench BENCHMARK spill_bench METRIC time_ms BUDGET 16
#    SEED 1)`: the default runtime space, which holds per-kernel controls for
#    its one kernel), through its CMake build, the winner validated;
# 2. A/B outside ciq: the plain build and the locked build (ciq-ptxas --lock
#    writes the winner's PTX directives), each binary run <ab runs> times
#    (default 20) interleaved A B B A; medians of the program's own time_ms
#    and their ratio.
# Everything lands in <out dir>; the figures in <out dir>/summary.txt.
set -u
[ $# -ge 2 ] || { echo "usage: $0 <ciq prefix> <out dir> [ab runs]" >&2; exit 2; }
prefix=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
runs=${3:-20}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
summary="$out/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }

src="$out/spill-src"
rm -rf "$src" "$out/tuned" "$out/plain"
cp -r "$here/examples/spill" "$src" && rm -f "$src"/*.ciq.lock
sed -i 's/^ciq_tune(spill_bench .*/ciq_tune(spill_bench BENCHMARK spill_bench METRIC time_ms BUDGET 16 SEED 1)/' "$src/CMakeLists.txt"
cmake -S "$src" -B "$out/tuned" "${gen[@]}" -DCompileIQ_DIR="$prefix/lib/cmake/CompileIQ" >"$out/configure.log" 2>&1 ||
  { say "configure failed: $out/configure.log"; exit 1; }
start=$(date +%s)
cmake --build "$out/tuned" --target ciq-tune-spill_bench >"$out/tune.log" 2>&1
say "tune: exit $? after $(( $(date +%s) - start )) s ($out/tune.log)"
grep -E "^per-kernel controls|^verdict|^winning options|^attribution|^  (baseline|compiler|per-kernel|parameters|both|all)" "$out/tune.log" | tee -a "$summary"
lock="$src/spill_bench.ciq.lock"
[ -f "$lock" ] || { say "no lock written: nothing to A/B"; exit 0; }
"$prefix/bin/ciq" validate --config "$out/tuned/ciq/spill_bench/ciq.yaml" >"$out/validate.log" 2>&1
say "validate: exit $?"; grep -iE "median|speedup|p =|p=|verdict" "$out/validate.log" | head -8 | tee -a "$summary"
"$prefix/bin/ciq" lock show "$lock" | grep -E "^(options|kernel):" | tee -a "$summary"

# The locked build: configure again (ciq_apply_lock), build, verify.
cmake "$out/tuned" >"$out/reconfigure.log" 2>&1 && cmake --build "$out/tuned" --target spill_bench >"$out/build-locked.log" 2>&1
"$prefix/bin/ciq" lock verify "$lock" --build-dir "$out/tuned" 2>&1 | tee -a "$summary"
# The plain build: the same sources, no ciq at all.
cp -r "$src" "$out/plain-src" && rm -f "$out/plain-src"/*.ciq.lock
sed -i '/find_package(CompileIQ/,$d' "$out/plain-src/CMakeLists.txt"
cmake -S "$out/plain-src" -B "$out/plain" "${gen[@]}" >"$out/plain-configure.log" 2>&1 &&
  cmake --build "$out/plain" --target spill_bench >"$out/plain-build.log" 2>&1 || { say "plain build failed"; exit 1; }

a="$out/plain/spill_bench"; b="$out/tuned/spill_bench"
: >"$out/ab.tsv"
for ((i = 0; i < runs; i++)); do
  if (( i % 2 == 0 )); then order="$a $b"; else order="$b $a"; fi
  for x in $order; do
    t=$("$x" | sed -n 's/^time_ms=//p')
    [ "$x" = "$a" ] && echo "A $t" >>"$out/ab.tsv" || echo "B $t" >>"$out/ab.tsv"
  done
done
python3 - "$out/ab.tsv" <<'PY' | tee -a "$summary"
import statistics, sys
v = {"A": [], "B": []}
for line in open(sys.argv[1]):
    k, t = line.split()
    v[k].append(float(t))
ma, mb = statistics.median(v["A"]), statistics.median(v["B"])
cv = lambda x: 100 * statistics.stdev(x) / statistics.mean(x)
print("A/B (independent of ciq, %d runs each, interleaved): plain build %.4f ms (CV %.1f%%), locked build %.4f ms "
      "(CV %.1f%%): speedup %.3fx" % (len(v["A"]), ma, cv(v["A"]), mb, cv(v["B"]), ma / mb))
PY
