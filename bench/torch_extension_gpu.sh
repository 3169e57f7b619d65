#!/usr/bin/env bash
# Issue 43 on a GPU: a PyTorch CUDA extension (examples/torch-extension)
# tuned through its setup.py build with no setting of PyTorch's, validated,
# locked, rebuilt with the lock (`ciq lock env`) and proved by
# `ciq lock verify --object` on the module's .so.
#
#   bench/torch_extension_gpu.sh <ciq prefix> <out dir>
#
# Needs python3 with a CUDA build of PyTorch, nvcc (PATH or /usr/local/cuda),
# a GPU. Expected wall time on an H200: about 2-3 minutes (8 builds of a few
# seconds, each measured by 2 runs of bench.py, whose import of torch takes
# the most; 2 finalists; validate); every step is bounded by `timeout`.
# Logs and the figures (summary.txt) land in <out dir>.
set -u
[ $# -ge 2 ] || { echo "usage: $0 <ciq prefix> <out dir>" >&2; exit 2; }
prefix=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
export PATH="$prefix/bin:$PATH"
ciq="$prefix/bin/ciq"
summary="$out/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
start=$(date +%s)
elapsed() { echo "$(( $(date +%s) - start )) s"; }

src="$out/src"
rm -rf "$src" && cp -r "$here/examples/torch-extension" "$src" && rm -f "$src"/ciq.lock && rm -rf "$src/ciq" "$src/build"
cd "$src" || exit 1
{ nvidia-smi -L; python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; nvcc --version | tail -2
  "$ciq" --version; } >"$out/host.log" 2>&1
cat "$out/host.log" | tee -a "$summary"

# The extension and its benchmark outside ciq: it must build and pass.
timeout 120 python3 setup.py build_ext --inplace >"$out/plain-build.log" 2>&1 || { say "plain build failed: $out/plain-build.log"; exit 1; }
timeout 60 python3 bench.py >"$out/plain-bench.log" 2>&1 || { say "bench.py failed: $out/plain-bench.log"; exit 1; }
say "plain: $(tail -1 "$out/plain-bench.log")"
rm -rf build ciq_torch_ext*.so

timeout 30 "$ciq" doctor --config ciq.yaml >"$out/doctor.log" 2>&1
grep -E "pytorch" "$out/doctor.log" | tee -a "$summary"
timeout 200 "$ciq" tune --config ciq.yaml >"$out/tune.log" 2>&1
say "tune: exit $? after $(elapsed) ($out/tune.log)"
grep -E "^\[|^verdict|^winning options|^attribution|^  (baseline|compiler|parameters|both|all)|^lockfile|error" "$out/tune.log" | tee -a "$summary"
cp ciq/workload/results.csv ciq/workload/journal.jsonl "$out"/ 2>/dev/null
[ -f ciq.lock ] || { say "no lock written: nothing to validate or rebuild ($(elapsed))"; exit 0; }
cp ciq.lock "$out"/
timeout 90 "$ciq" validate --config ciq.yaml --warmup 0 >"$out/validate.log" 2>&1
say "validate: exit $? after $(elapsed)"
grep -E "median|speedup|p =|verdict" "$out/validate.log" | tee -a "$summary"

# A later build with the lock, as a user's would be, then its proof.
rm -rf build ciq_torch_ext*.so
( eval "$("$ciq" lock env ciq.lock)" && env | grep -E "^(PYTORCH_NVCC|CUDA_HOME|CIQ_LOCK)=" &&
  timeout 120 python3 setup.py build_ext --inplace ) >"$out/locked-build.log" 2>&1
say "locked build: exit $?"
"$ciq" lock verify ciq.lock --object ciq_torch_ext*.so 2>&1 | tee "$out/verify.log" | tee -a "$summary"
timeout 60 python3 bench.py >"$out/locked-bench.log" 2>&1
say "locked: $(tail -1 "$out/locked-bench.log")"
say "wall time: $(elapsed)"
