#!/usr/bin/env bash
# Which controls cause each runtime example's gain, measured on a GPU.
#
#   examples/gpu/attribution.sh <ciq build dir> <results dir> [example...]
#
# For each example (default: gemm stencil reduce): copy it to
# <results>/<example>/src, configure and build it, take a winner, and run
# `ciq validate`, whose attribution builds baseline, the winner's application
# parameters alone (-D), its compiler controls alone (ptxas/nvcc options,
# ACFs) and both, runs them interleaved in balanced order (A B B A ...) after
# a warm-up, 10 runs each, and judges each against the baseline (Welch's
# t-test). The winner is, in this order: <results>/<example>/winner.lock (a
# previous run's), the co-tuned winner shipped in
# docs/benchmarks/<example>/ciq.lock.json, or a fresh tune with
# ATTRIBUTION_BUDGET evaluations (default 8; ATTRIBUTION_TUNE=1 forces it).
# Prints one table; every step's log is under <results>/<example>/.
# Needs cmake, python3 and the CUDA 13.0 toolkit; no network. About 2
# minutes per example on one H200 host with 16 cores (re-used winners).
set -u

usage() { echo "usage: $0 <ciq build dir> <results dir> [gemm|stencil|reduce|nbody ...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
ciq_build=$(cd "$1" 2>/dev/null && pwd) || { echo "attribution: error: ciq build dir '$1' does not exist" >&2; exit 2; }
mkdir -p "$2" || { echo "attribution: error: cannot create results dir '$2'" >&2; exit 2; }
results=$(cd "$2" && pwd)
shift 2
examples=("$@")
[ ${#examples[@]} -gt 0 ] || examples=(gemm stencil reduce)

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ciq="$ciq_build/bin/ciq"
module_dir="$ciq_build/lib/cmake/CompileIQ"
[ -x "$ciq" ] || { echo "attribution: error: $ciq not found: build ciq first (cmake --build $ciq_build)" >&2; exit 2; }
[ -d "$module_dir" ] || { echo "attribution: error: $module_dir not found: is $ciq_build a ciq build tree?" >&2; exit 2; }
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
arch=${CUDA_ARCH:-90}
budget=${ATTRIBUTION_BUDGET:-8}
step_timeout=${STEP_TIMEOUT_S:-300}

run() { # run <log> <command...>
  local log=$1; shift
  echo "== $*" >>"$log"
  timeout --kill-after=20 "$step_timeout" "$@" >>"$log" 2>&1
}

one() {
  local ex=$1 bench=$1_bench
  local dir="$results/$ex" src="$results/$ex/src" lock="$results/$ex/src/$1_bench.ciq.lock" build="$results/$ex/build" log="$results/$ex/steps.log"
  [ -d "$repo/examples/$ex" ] || { echo "attribution: no example '$ex'" >&2; return 2; }
  mkdir -p "$dir"
  rm -rf "$src" && cp -r "$repo/examples/$ex" "$src" && rm -f "$src/ciq.lock" "$lock"
  : >"$log"
  run "$log" cmake -S "$src" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCompileIQ_DIR="$module_dir" || { echo "$ex: configure failed ($log)"; return 1; }
  run "$log" cmake --build "$build" --target "$bench" || { echo "$ex: build failed ($log)"; return 1; }
  local cfg="$build/ciq/$bench/ciq.yaml" origin
  if [ "${ATTRIBUTION_TUNE:-0}" != 1 ] && [ -f "$dir/winner.lock" ]; then
    cp "$dir/winner.lock" "$lock"; origin="previous run ($dir/winner.lock)"
  elif [ "${ATTRIBUTION_TUNE:-0}" != 1 ] && [ -f "$repo/docs/benchmarks/$ex/ciq.lock.json" ]; then
    cp "$repo/docs/benchmarks/$ex/ciq.lock.json" "$lock"; origin="shipped co-tuned winner (docs/benchmarks/$ex)"
  else
    run "$log" "$ciq" tune --config "$cfg" --fresh --no-canary --max-evaluations "$budget"
    [ -f "$lock" ] || { echo "$ex: the tune wrote no lock (no significant winner; $log)"; return 1; }
    origin="fresh tune, $budget evaluations"
  fi
  cp "$lock" "$dir/winner.lock"
  run "$log" "$ciq" validate --config "$cfg" --runs 10
  [ -f "$lock" ] && cp "$lock" "$dir/validated.lock"
  python3 - "$ex" "$lock" "$origin" <<'PY'
import json, sys
ex, path, origin = sys.argv[1:4]
v = json.load(open(path)).get("score", {}).get("validation", {})
rows = {r["name"]: r for r in v.get("attribution", [])}
if not rows:
    print("%-8s no attribution in %s (see steps.log)" % (ex, path)); sys.exit(1)
def cell(name):
    r = rows.get(name)
    if r is None: return "(same as both)"
    if name == "baseline": return "%.5g ms" % r["median"]
    return "%.5g ms %.3fx p=%.2g" % (r["median"], r["speedup"], r["p_value"] if r.get("p_value") is not None else float("nan"))
print("| %s | %s | %s | %s | %s | %s |" % (ex, cell("baseline"), cell("parameters only"), cell("compiler controls only"),
                                         cell("both"), v.get("verdict", "?")))
print("|   | winner: %s; GPU problems: %s |" % (origin, ", ".join(v.get("measurement", {}).get("problems", [])) or "none"))
PY
}

echo "| example | baseline | parameters only | compiler controls only | both | verdict |"
echo "| --- | --- | --- | --- | --- | --- |"
start=$(date +%s)
failed=0
for ex in "${examples[@]}"; do
  one "$ex" || failed=1
done
echo "attribution: $(( $(date +%s) - start )) s; logs under $results"
exit $failed
