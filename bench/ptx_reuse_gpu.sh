#!/usr/bin/env bash
# PTX reuse on a GPU host, end to end: the same 30-evaluation runtime search
# of bench/heavy (time_ms of six register-heavy kernel instances, space
# ptxas-13.0-default, seed 1) once with every candidate a full rebuild
# (CIQ_PTX_REUSE=0, the path before PTX reuse) and once with PTX reuse (the
# default), then with PTX reuse and WORKERS (default 4) workers sharing the
# one GPU (parallel candidates: the others build while the GPU measures one),
# all timed in this one run; prints the wall times and the ratios.
# Goal (issue 17): at least 3x faster end to end than the full-rebuild path.
#
#   bench/ptx_reuse_gpu.sh [BUILD_DIR [OUT_DIR]]      (BUILD_DIR: a built ciq tree, default build)
#
# Needs a GPU, CUDA 13.0, CMake and Ninja; no network. EVALUATIONS=n changes 30;
# WORKERS=n the 4; GPUS=a,b spreads the searches over two GPUs (see below);
# FINALISTS=n re-measures the best n at the end (default 0 here).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-build}" && pwd)"
out="${2:-$(mktemp -d /tmp/ciq-ptx-reuse-gpu.XXXXXX)}"
mkdir -p "$out"
n="${EVALUATIONS:-30}"
ciq="$build/bin/ciq"
export PATH="$build/bin:/usr/local/cuda/bin:$PATH"
[ -x "$ciq" ] || { echo "ptx_reuse_gpu: error: no $ciq; build ciq first (make build)" >&2; exit 1; }

tune() { # label, environment assignment
  local label="$1" envset="$2" b="$out/$1"
  rm -rf "$b"
  cmake -S "$here/heavy" -B "$b" -G Ninja -DCompileIQ_DIR="$build/lib/cmake/CompileIQ" \
        -DHEAVY_OBJECTIVE=runtime -DHEAVY_BUDGET="$n" -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/$label.configure.log"
  local cfg
  cfg="$(find "$b/ciq" -name ciq.yaml | head -1)"
  # The finalists' re-measurement builds nothing and costs both paths the
  # same: left out (FINALISTS=n puts it back).
  sed -i "/^  working_dir:/a\\  finalists: ${FINALISTS:-0}" "$cfg"
  local t0 t1
  t0=$(date +%s.%N)
  env $envset "$ciq" tune --config "$cfg" --max-evaluations "$n" --no-lock --no-canary > "$out/$label.tune.log" 2>&1
  t1=$(date +%s.%N)
  cp "$(dirname "$cfg")/results.csv" "$out/$label.results.csv"
  python3 - "$(dirname "$cfg")/journal.jsonl" "$label" "$t0" "$t1" <<'PY'
import json, sys
evals = [json.loads(l) for l in open(sys.argv[1])]
evals = [e for e in evals if e.get("op") == "evaluation"]
ok = [e for e in evals if e.get("status") == "OK"]
build = sum(e.get("build_ms", 0) for e in evals) / 1000
wall = float(sys.argv[4]) - float(sys.argv[3])
best = min((e["scores"]["time_ms"] for e in ok if isinstance(e.get("scores"), dict) and "time_ms" in e["scores"]), default=float("nan"))
print("%-13s %3d evaluations (%d ok)  %7.1f s wall  %7.1f s building  %6.2f evaluations/min  best time_ms %.4f"
      % (sys.argv[2], len(evals), len(ok), wall, build, len(evals) / wall * 60, best))
open(sys.argv[1] + ".wall", "w").write("%f\n" % wall)
PY
}

echo "ptx_reuse_gpu: bench/heavy, $n evaluations each, outputs in $out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader || true
# One GPU per search: the workers of the third share theirs. On a host with
# two GPUs, GPUS=a,b runs the full-rebuild search on GPU a while the two
# others run one after the other on GPU b (less wall time; the same machine
# load for both sides). ARMS="..." runs some of the three searches into OUT_DIR
# (another call, ARMS=none, then prints the ratios of what OUT_DIR holds).
w="${WORKERS:-4}"
# A search started in the background ends with this script (timeout, ^C).
trap 'jobs -p | xargs -r kill 2>/dev/null' EXIT
arms="${ARMS:-full-rebuild ptx-reuse ptx-reuse-w$w}"
arm() { case " $arms " in *" $1 "*) return 0;; *) return 1;; esac; }
if [ -n "${GPUS:-}" ]; then
  if arm full-rebuild; then CUDA_VISIBLE_DEVICES="${GPUS%%,*}" tune full-rebuild "CIQ_PTX_REUSE=0 CIQ_WORKERS=1" & fi
  export CUDA_VISIBLE_DEVICES="${GPUS#*,}"
else
  export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"
  if arm full-rebuild; then tune full-rebuild "CIQ_PTX_REUSE=0 CIQ_WORKERS=1"; fi
fi
if arm ptx-reuse; then tune ptx-reuse "CIQ_PTX_REUSE=1 CIQ_WORKERS=1"; fi
if arm "ptx-reuse-w$w"; then tune "ptx-reuse-w$w" "CIQ_PTX_REUSE=1 CIQ_WORKERS=$w"; fi
wait
wall() { cat "$(find "$out/$1/ciq" -name journal.jsonl.wall 2>/dev/null)" 2>/dev/null || echo nan; }
python3 -c "import sys; f,r,p=map(float,sys.argv[1:4]); print('ratio end to end, full rebuild / PTX reuse: %.2fx' % (f/r)); print('ratio end to end, full rebuild / PTX reuse with %s workers on one GPU: %.2fx (goal: at least 3x)' % (sys.argv[4], f/p))" "$(wall full-rebuild)" "$(wall ptx-reuse)" "$(wall "ptx-reuse-w$w")" "$w"
