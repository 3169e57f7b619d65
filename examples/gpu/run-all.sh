#!/usr/bin/env bash
# Tunes and validates ciq's runtime examples on a machine with a CUDA GPU.
#
#   examples/gpu/run-all.sh <ciq build dir> <results dir> [example...]
#
# <ciq build dir>: a configured and built ciq tree (holds bin/ciq and
#   lib/cmake/CompileIQ). <results dir>: created if missing; every output
#   lands there. Examples default to: reduce gemm stencil (nbody on request).
#
# For each example, independently (a failure is recorded and the next one
# runs): copy its sources to <results>/<example>/src (so the tune writes its
# ciq.lock there, not into the repository), configure, build, run the
# benchmark once as a sanity check, tune (`cmake --build --target
# ciq-tune-<bench>`) and validate the winner (`ciq validate`). Every step's
# output goes to <results>/<example>/<step>.log, its exit status and wall
# seconds to <results>/summary.tsv. Needs cmake and the CUDA 13.0 toolkit
# (nvcc on PATH or in /usr/local/cuda/bin); no network.
#
# Environment: CUDA_ARCH (default 90), TUNE_TIMEOUT_S (default 3000),
# STEP_TIMEOUT_S for the other steps (default 600).
set -u

usage() { echo "usage: $0 <ciq build dir> <results dir> [reduce|gemm|stencil|nbody ...]" >&2; exit 2; }
[ $# -ge 2 ] || usage
ciq_build=$(cd "$1" 2>/dev/null && pwd) || { echo "run-all: error: ciq build dir '$1' does not exist" >&2; exit 2; }
mkdir -p "$2" || { echo "run-all: error: cannot create results dir '$2'" >&2; exit 2; }
results=$(cd "$2" && pwd)
shift 2
examples=("$@")
[ ${#examples[@]} -gt 0 ] || examples=(reduce gemm stencil)

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)   # the examples/ folder
ciq="$ciq_build/bin/ciq"
module_dir="$ciq_build/lib/cmake/CompileIQ"
arch=${CUDA_ARCH:-90}
tune_timeout=${TUNE_TIMEOUT_S:-3000}
step_timeout=${STEP_TIMEOUT_S:-600}
[ -x "$ciq" ] || { echo "run-all: error: $ciq not found: build ciq first (cmake --build $ciq_build)" >&2; exit 2; }
[ -d "$module_dir" ] || { echo "run-all: error: $module_dir not found: is $ciq_build a ciq build tree?" >&2; exit 2; }
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

summary="$results/summary.tsv"
[ -f "$summary" ] || printf 'example\tstep\texit\twall_s\tlog\n' >"$summary"

# step <example> <name> <timeout s> <command...>: runs it, logs, records; returns its exit status.
step() {
  local ex=$1 name=$2 limit=$3; shift 3
  local log="$results/$ex/$name.log" start rc
  start=$(date +%s.%N)
  echo "== $ex: $name: $*" | tee "$log"
  timeout --kill-after=30 "$limit" "$@" >>"$log" 2>&1
  rc=$?
  local wall; wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
  printf '%s\t%s\t%s\t%s\t%s\n' "$ex" "$name" "$rc" "$wall" "$log" >>"$summary"
  echo "   exit $rc after ${wall} s ($log)"
  [ $rc -eq 124 ] && echo "   timed out after $limit s" | tee -a "$log"
  return $rc
}

# GPU state before the runs, for the record (read only).
{ nvidia-smi -q 2>&1 || echo "nvidia-smi not available"; } >"$results/gpu-before.txt"
{ echo "date: $(date -u +%FT%TZ)"; echo "host: $(hostname)"; nvcc --version 2>&1 | tail -2; cmake --version | head -1
  echo "ciq: $("$ciq" --version 2>&1 | head -1)"; } >"$results/environment.txt"

run_example() {
  local ex=$1 bench=$1_bench
  local src="$results/$ex/src" build="$results/$ex/build"
  [ -d "$here/$ex" ] || { echo "run-all: error: no example '$ex' in $here" >&2; return 2; }
  rm -rf "$results/$ex" && mkdir -p "$results/$ex" && cp -r "$here/$ex" "$src" || return 2
  # A committed lock would be applied to the baseline build: tune from the default build instead.
  local lock="$src/$bench.ciq.lock"
  rm -f "$src/ciq.lock" "$lock"
  step "$ex" configure "$step_timeout" cmake -S "$src" -B "$build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCompileIQ_DIR="$module_dir" || return 1
  step "$ex" build "$step_timeout" cmake --build "$build" --target "$bench" || return 1
  step "$ex" sanity "$step_timeout" "$build/$bench" || return 1
  step "$ex" tune "$tune_timeout" cmake --build "$build" --target "ciq-tune-$bench"
  local tune_rc=$?
  # Keep whatever the tune wrote (journal, results.csv, lockfile), even after a failure.
  [ -d "$build/ciq" ] && cp -r "$build/ciq" "$results/$ex/ciq-state"
  [ -f "$lock" ] && cp "$lock" "$results/$ex/ciq.lock"
  [ $tune_rc -eq 0 ] || return 1
  step "$ex" validate "$tune_timeout" "$ciq" validate --config "$build/ciq/$bench/ciq.yaml" || return 1
  [ -f "$lock" ] && cp "$lock" "$results/$ex/ciq.lock"   # now with the validation figures
  # The locked build, measured once more as the user will build it
  # (configured again so that ciq_apply_lock reads the new lockfile),
  # and proved: its device code is the lock's (the tune rehearsed this build).
  step "$ex" configure-locked "$step_timeout" cmake -S "$src" -B "$build" &&
    step "$ex" build-locked "$step_timeout" cmake --build "$build" --target "$bench" &&
    { [ ! -f "$lock" ] || step "$ex" verify-locked "$step_timeout" "$ciq" lock verify "$lock" --build-dir "$build"; } &&
    step "$ex" run-locked "$step_timeout" "$build/$bench"
}

failed=()
for ex in "${examples[@]}"; do
  run_example "$ex" || failed+=("$ex")
done
{ nvidia-smi -q 2>&1 || echo "nvidia-smi not available"; } >"$results/gpu-after.txt"

echo
column -t -s $'\t' "$summary" 2>/dev/null || cat "$summary"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run-all: failed: ${failed[*]} (see the logs under $results)"
  exit 1
fi
echo "run-all: all examples tuned and validated; results in $results"
