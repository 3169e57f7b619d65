#!/usr/bin/env bash
# Issue 39 on a GPU: ciq's CUPTI injection library (libciq-kernel-trace.so)
# in real CUDA programs, and what tracing costs.
#
#   bench/kernel_trace_gpu.sh <ciq prefix> <out dir> [runs]
#
# <ciq prefix>: a ciq build tree or install prefix (bin/ciq, lib/ciq/
# libciq-kernel-trace.so, lib/cmake/CompileIQ). CUPTI (libcupti.so.13 of
# CUDA 13) is taken from, in order: $CIQ_CUPTI_LIBRARY, <prefix>/lib/ciq
# (bundled beside the library), /usr/local/cuda/extras/CUPTI/lib64, the
# Python packages nvidia-cuda-cupti (nvidia/cu13/lib) and the toolkit's lib64.
#
# 1. the per-kernel table of a two-kernel program (bench/kernel_trace/
#    two_kernels.cu) and of examples/reduce, gemm and stencil (their own
#    benchmarks), and the traced GPU time against each program's own timer;
# 2. A/A overhead: each program's own time_ms untraced and traced, <runs>
#    (default 20) runs each, interleaved A B B A; the median shift and each
#    side's noise (CV%);
# 3. kernel_time_ms end to end: examples/reduce tuned with METRIC
#    kernel_time_ms (budget 6), its winner validated.
# Everything lands in <out dir>; a summary in <out dir>/summary.txt.
set -u
[ $# -ge 2 ] || { echo "usage: $0 <ciq prefix> <out dir> [runs]" >&2; exit 2; }
prefix=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
runs=${3:-20}
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

# 1+2: the two-kernel program.
mkdir -p "$out/two_kernels"
nvcc -O3 -arch=sm_90 -o "$out/two_kernels/app" "$here/bench/kernel_trace/two_kernels.cu" \
  > "$out/two_kernels/build.log" 2>&1 || { echo "nvcc failed: $out/two_kernels/build.log" | tee -a "$summary"; exit 1; }
measure two_kernels "$out/two_kernels/app"

# The runtime examples, built as the user would (their own CMake projects).
for ex in reduce gemm stencil; do
  b="$out/$ex/build"
  if cmake -S "$here/examples/$ex" -B "$b" -G Ninja -DCompileIQ_DIR="$prefix/lib/cmake/CompileIQ" \
       -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/$ex.configure.log" 2>&1 &&
     cmake --build "$b" > "$out/$ex.build.log" 2>&1; then
    exe=$(find "$b" -maxdepth 1 -type f -name "${ex}_bench" | head -1)
    [ -n "$exe" ] && measure "$ex" "$exe" || echo "== $ex: no ${ex}_bench built" | tee -a "$summary"
  else
    echo "== $ex: configure or build failed ($out/$ex.*.log)" | tee -a "$summary"
  fi
done

# 3: a search with kernel_time_ms, no timer needed: examples/reduce.
src="$out/tune-reduce/src"; mkdir -p "$src"; cp -r "$here/examples/reduce/." "$src/"
sed -i 's/METRIC time_ms/METRIC kernel_time_ms/; s/BUDGET 60/BUDGET 6/' "$src/CMakeLists.txt"
tb="$out/tune-reduce/build"
if cmake -S "$src" -B "$tb" -G Ninja -DCompileIQ_DIR="$prefix/lib/cmake/CompileIQ" -DCMAKE_CUDA_ARCHITECTURES=90 \
     > "$out/tune-reduce/configure.log" 2>&1; then
  timeout 1800 cmake --build "$tb" --target ciq-tune-reduce_bench > "$out/tune-reduce/tune.log" 2>&1
  echo "== tune reduce with kernel_time_ms: exit $?" | tee -a "$summary"
  grep -E "objective|verdict|kernels|no_kernel_times" "$out/tune-reduce/tune.log" | tail -15 | tee -a "$summary"
  cfg=$(find "$tb/ciq" -name ciq.yaml | head -1)
  [ -n "$cfg" ] && (cd "$(dirname "$cfg")" && timeout 900 "$prefix/bin/ciq" validate --config "$cfg") \
    > "$out/tune-reduce/validate.log" 2>&1
  tail -5 "$out/tune-reduce/validate.log" | tee -a "$summary"
else
  echo "== tune reduce: configure failed ($out/tune-reduce/configure.log)" | tee -a "$summary"
fi
echo "summary: $summary"
