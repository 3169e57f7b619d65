#!/usr/bin/env bash
# Issue 39 on a GPU: ciq's CUPTI injection library (libciq-kernel-trace.so)
# in real CUDA programs, and what tracing costs.
#
#   bench/kernel_trace_gpu.sh <ciq prefix> <out dir> [runs] [steps]
#
# <ciq prefix>: a ciq build tree or install prefix (bin/ciq, lib/ciq/
# libciq-kernel-trace.so, lib/cmake/CompileIQ). CUPTI (libcupti.so.13 of
# CUDA 13) is taken from, in order: $CIQ_CUPTI_LIBRARY, <prefix>/lib/ciq
# (bundled beside the library), /usr/local/cuda/extras/CUPTI/lib64, the
# Python packages nvidia-cuda-cupti (nvidia/cu13/lib) and the toolkit's lib64.
#
# <steps> (default "tables notimer timed agreement"), each optional:
# tables    the per-kernel table of a two-kernel program (bench/kernel_trace/
#           two_kernels.cu), of every GPU example (examples/reduce, gemm,
#           stencil, nbody, spill: their own benchmarks) and of bench/heavy,
#           with the A/A overhead: each program's own time_ms untraced and
#           traced, <runs> (default 20) runs each, interleaved A B B A; the
#           median shift and each side's noise (CV%). KT_PROGRAMS narrows the
#           list (e.g. "nbody spill heavy");
# notimer   kernel_time_ms end to end: bench/kernel_trace/notimer, a program
#           that prints no time, tuned with METRIC kernel_time_ms (budget 6)
#           and its winner validated (ciq validate);
# timed     the same program tuned for its own time_ms (budget 4): the
#           timed runs untraced, the kernel table from each build's traced
#           warm-up run (benchmark.kernel_times: warmup);
# agreement kernel_time_ms against the program's own timer on the same two
#           binaries (notimer ILP 1 and ILP 4): the ratios of both
#           (bench/kernel_trace/agreement.py, <runs> runs each).
# Everything lands in <out dir>; a summary in <out dir>/summary.txt.
set -u
[ $# -ge 2 ] || { echo "usage: $0 <ciq prefix> <out dir> [runs]" >&2; exit 2; }
prefix=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
runs=${3:-20}
steps=" ${4:-tables notimer timed agreement} "
programs=" ${KT_PROGRAMS:-two_kernels reduce gemm stencil nbody spill heavy} "
want() { case "$1" in *" $2 "*) return 0;; esac; return 1; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
lib="$prefix/lib/ciq/libciq-kernel-trace.so"
[ -f "$lib" ] || { echo "kernel_trace_gpu: $lib is missing: ciq was built without CUPTI" >&2; exit 2; }

find_cupti() {
  [ -n "${CIQ_CUPTI_LIBRARY:-}" ] && { echo "$CIQ_CUPTI_LIBRARY"; return; }
  for f in "$prefix"/lib/ciq/libcupti.so.13 /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13 \
           /usr/local/cuda/lib64/libcupti.so.13; do
    [ -f "$f" ] && { echo "$f"; return; }
  done
  python3 - <<'PY' 2>/dev/null
import glob, os, site, sys
dirs = site.getsitepackages() + [site.getusersitepackages()] + sys.path
for d in dirs:
    for f in sorted(glob.glob(os.path.join(d, "nvidia", "cu13", "lib", "libcupti.so.13")) +
                    glob.glob(os.path.join(d, "nvidia", "cuda_cupti", "lib", "libcupti.so.13"))):
        print(f); sys.exit(0)
PY
}
cupti=$(find_cupti)
[ -n "$cupti" ] || { echo "kernel_trace_gpu: no libcupti.so.13 found; copy one into $prefix/lib/ciq or set CIQ_CUPTI_LIBRARY" >&2; exit 2; }
export CIQ_CUPTI_LIBRARY="$cupti"
summary="$out/summary.txt"
{ echo "kernel_trace_gpu $(date -u +%FT%TZ) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "library $lib"; echo "cupti $cupti"; } > "$summary"

# Prints the program's own time_ms, traced (prefix $2) or not ("").
own_time() {
  local t="$2"; shift 2
  if [ -n "$t" ]; then
    CUDA_INJECTION64_PATH="$lib" CIQ_KERNEL_TRACE="$t" "$@"
  else
    "$@"
  fi | sed -n 's/.*time_ms=\([0-9.eE+-]*\).*/\1/p' | tail -1
}

# One program: its table, traced vs own time, the A/A overhead.
measure() {
  local name="$1"; shift
  local dir="$out/$name"; mkdir -p "$dir/trace"
  echo "== $name: $*" | tee -a "$summary"
  rm -f "$dir"/trace/run.*
  own=$(own_time "$name" "$dir/trace/run" "$@")
  python3 "$here/bench/kernel_trace/table.py" "$dir/trace/run" | tee "$dir/table.txt" | tee -a "$summary"
  echo "own timer of the traced run: time_ms=$own" | tee -a "$summary"
  : > "$dir/aa.tsv"
  for ((i = 0; i < runs; ++i)); do   # A B B A
    for side in $([ $((i % 2)) = 0 ] && echo "off on" || echo "on off"); do
      rm -f "$dir"/trace/aa.*
      t=$(own_time "$name" "$([ "$side" = on ] && echo "$dir/trace/aa")" "$@")
      echo "$side $t" >> "$dir/aa.tsv"
    done
  done
  python3 - "$dir/aa.tsv" <<'PY' | tee -a "$summary"
import statistics as s, sys
v = {"off": [], "on": []}
for line in open(sys.argv[1]):
    side, t = line.split()[:2] if len(line.split()) >= 2 else (line.strip(), "")
    if t:
        v[side].append(float(t))
def cv(x): return 100 * s.stdev(x) / s.mean(x) if len(x) > 1 else float("nan")
if v["off"] and v["on"]:
    a, b = s.median(v["off"]), s.median(v["on"])
    print("A/A own timer: untraced median %.4f ms (CV %.2f%%, %d runs), traced median %.4f ms (CV %.2f%%, %d runs): "
          "shift %+.2f%%" % (a, cv(v["off"]), len(v["off"]), b, cv(v["on"]), len(v["on"]), 100 * (b - a) / a))
else:
    print("A/A: no times read")
PY
}

# tables: the two-kernel program, then the GPU examples and bench/heavy,
# built as the user would (their own CMake projects).
if want "$steps" tables; then
  if want "$programs" two_kernels; then
    mkdir -p "$out/two_kernels"
    if nvcc -O3 -arch=sm_90 -o "$out/two_kernels/app" "$here/bench/kernel_trace/two_kernels.cu" \
         > "$out/two_kernels/build.log" 2>&1; then
      measure two_kernels "$out/two_kernels/app"
    else
      echo "== two_kernels: nvcc failed ($out/two_kernels/build.log)" | tee -a "$summary"
    fi
  fi
  for ex in reduce gemm stencil nbody spill heavy; do
    want "$programs" "$ex" || continue
    srcdir="$here/examples/$ex"; [ "$ex" = heavy ] && srcdir="$here/bench/heavy"
    b="$out/$ex/build"
    if cmake -S "$srcdir" -B "$b" -G Ninja -DCompileIQ_DIR="$prefix/lib/cmake/CompileIQ" \
         -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/$ex.configure.log" 2>&1 &&
       cmake --build "$b" > "$out/$ex.build.log" 2>&1; then
      exe=$(find "$b" -maxdepth 1 -type f -name "${ex}_bench" | head -1)
      [ -n "$exe" ] && measure "$ex" "$exe" || echo "== $ex: no ${ex}_bench built" | tee -a "$summary"
    else
      echo "== $ex: configure or build failed ($out/$ex.*.log)" | tee -a "$summary"
    fi
  done
fi

# A tune of bench/kernel_trace/notimer (metric $2, budget $3) and ciq
# validate of its lock; logs in $out/$1.
tune_notimer() {
  local name="$1" metric="$2" budget="$3"
  local src="$out/$name/src" tb="$out/$name/build"
  mkdir -p "$src"; cp -r "$here/bench/kernel_trace/notimer/." "$src/"
  if ! cmake -S "$src" -B "$tb" -G Ninja -DCompileIQ_DIR="$prefix/lib/cmake/CompileIQ" \
         -DNOTIMER_METRIC="$metric" -DNOTIMER_BUDGET="$budget" > "$out/$name/configure.log" 2>&1; then
    echo "== $name: configure failed ($out/$name/configure.log)" | tee -a "$summary"; return
  fi
  timeout 240 cmake --build "$tb" --target ciq-tune-notimer_bench > "$out/$name/tune.log" 2>&1
  echo "== $name: notimer tuned with $metric: exit $?" | tee -a "$summary"
  sed -n '/^kernel times/,/^[^ k]/p' "$out/$name/tune.log" | head -8 | tee -a "$summary"
  grep -E "^objective|^verdict|^winning|^attribution|no_kernel_times|kernel_times" "$out/$name/tune.log" | tail -8 | tee -a "$summary"
  local cfg; cfg=$(find "$tb/ciq" -name ciq.yaml | head -1)
  if [ -n "$cfg" ] && [ -f "$src/notimer_bench.ciq.lock" ]; then
    (cd "$(dirname "$cfg")" && timeout 120 "$prefix/bin/ciq" validate --config "$cfg" --runs 10) \
      > "$out/$name/validate.log" 2>&1
    echo "validate: exit $?" | tee -a "$summary"
    tail -4 "$out/$name/validate.log" | tee -a "$summary"
  fi
  local rd; rd=$(dirname "$(find "$tb" -name journal.jsonl | head -1)" 2>/dev/null)
  [ -n "$rd" ] && python3 - "$rd/journal.jsonl" <<'PY' | tee -a "$summary"
import collections, json, sys
src = collections.Counter(e.get("kernel_times_from", "-") for e in map(json.loads, open(sys.argv[1]))
                          if e.get("op") == "evaluation")
print("journal kernel_times_from per evaluation:", dict(src))
PY
}
want "$steps" notimer && tune_notimer notimer kernel_time_ms 6
want "$steps" timed && tune_notimer timed time_ms 4

# agreement: the same two binaries timed by themselves and by the injection.
if want "$steps" agreement; then
  mkdir -p "$out/agreement"
  if nvcc -O3 -arch=sm_90 -DILP=1 -o "$out/agreement/ilp1" "$here/bench/kernel_trace/notimer/notimer.cu" &&
     nvcc -O3 -arch=sm_90 -DILP=4 -o "$out/agreement/ilp4" "$here/bench/kernel_trace/notimer/notimer.cu"; then
    echo "== agreement: kernel_time_ms against the own timer (notimer ILP 1 = A, ILP 4 = B)" | tee -a "$summary"
    python3 "$here/bench/kernel_trace/agreement.py" "$lib" "$runs" "chains" \
      "$out/agreement/ilp1" --print-time -- "$out/agreement/ilp4" --print-time 2>&1 | tee -a "$summary"
  else
    echo "== agreement: nvcc failed" | tee -a "$summary"
  fi
fi
echo "summary: $summary"
