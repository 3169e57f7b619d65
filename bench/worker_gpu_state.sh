#!/bin/sh
# On a machine with a GPU: `ciq worker` evaluates one candidate of the engine
# test project with a runtime benchmark (wall time of the app, which runs its
# kernel on the GPU) and records the GPU's clocks and throttle state with the
# result (docs/cluster.md). Prints the result record's status, node and gpu.
#   sh bench/worker_gpu_state.sh [build dir of ciq, default: build]
set -e
CIQ_BUILD=$(cd "${1:-build}" && pwd)
SRC=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d /tmp/ciq-worker-gpu-XXXXXX)
cp -r "$SRC/tests/lit/engine/Inputs/proj" "$W/proj"
cmake -S "$W/proj" -B "$W/build" -G Ninja -DCompileIQ_DIR="$CIQ_BUILD/lib/cmake/CompileIQ" > "$W/configure.log"
cat > "$W/ciq.yaml" <<YAML
target: app
build_dir: build
benchmark:
  command: [./app]
  warmup: 1
  repeats: 3
  metric: {wall_time: true}
space:
  controls:
    - name: maxrregcount
      ptxas: "--maxrregcount={}"
      choice: [32, 64]
YAML
cp "$SRC/tests/lit/slurm/Inputs/candidate.json" "$W/"
cd "$W" && "$CIQ_BUILD/bin/ciq" worker --config ciq.yaml --candidate candidate.json --result result.json --workspace ws
python3 -c "import json; r=json.load(open('$W/result.json')); print(json.dumps({k: r.get(k) for k in ['status', 'reason', 'message', 'scores', 'node', 'gpu']}, indent=2))"
[ -n "$KEEP" ] || rm -rf "$W"
