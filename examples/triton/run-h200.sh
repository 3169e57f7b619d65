#!/usr/bin/env bash
# One command on a GPU host (written for the H200: python3 with PyTorch and
# Triton, CUDA 13.0, ciq built in build/): checks matmul.py, tunes the ptxas
# of its Triton kernel, validates the winner against the default compile
# (interleaved runs, Welch's t-test), runs it once more with the lock applied
# through `ciq lock env`, and copies the logs to $OUT (default /tmp/ciq-triton-out).
#   bash examples/triton/run-h200.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${BUILD:-$root/build}
out=${OUT:-/tmp/ciq-triton-out}
export PATH="$build/bin:/usr/local/cuda/bin:$PATH"
work=$(mktemp -d /tmp/ciq-triton.XXXXXX)
cp "$here"/matmul.py "$here"/ciq.yaml "$work"/
mkdir -p "$out"
cd "$work"
start=$(date +%s)
{
  echo "== host"; nvidia-smi -L; python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  ptxas --version | tail -2
  echo "== matmul.py with the default compile"; python3 matmul.py || exit 1
  echo "== ciq tune"; ciq tune --config ciq.yaml
  if [ -f ciq.lock ]; then
    echo "== ciq validate"; ciq validate --config ciq.yaml
    echo "== ciq lock show"; ciq lock show ciq.lock
    echo "== matmul.py with the lock (eval \"\$(ciq lock env ciq.lock)\")"
    ( eval "$(ciq lock env ciq.lock)"; export TRITON_CACHE_DIR="$work/locked-cache"; python3 matmul.py
      "$TRITON_PTXAS_PATH" --version | tail -1 )
  else
    echo "== no lock: no candidate beat the default compile significantly"
  fi
  echo "== wall time: $(( $(date +%s) - start )) s"
} 2>&1 | tee "$out/run.log"
cp -r ciq.yaml ciq.lock ciq/workload/results.csv ciq/workload/journal.jsonl "$out"/ 2>/dev/null
echo "logs and results in $out"
