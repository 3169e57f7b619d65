#!/bin/sh
# Records the compile-only landscapes of bench/landscapes/ (each folder: its
# space.yaml, and the landscape.json this writes). Every point of each space
# is compiled once, with the real nvcc/ptxas, by bench/record_landscape.
# Usage: bench/landscapes/record.sh [build dir] [names...]   (default: build, all)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift
names=${*:-spill template bounds multi}
command -v nvcc >/dev/null || export PATH="/usr/local/cuda/bin:$PATH"
cmake --build "$build" --target record_landscape
bin=$(cd "$build" && pwd)/bin/record_landscape
for n in $names; do
  case $n in
    spill) kernel=../../../examples/spill/spill_kernel.cu ;;
    template) kernel=../kernels/template_regs.cu ;;
    bounds) kernel=../../../examples/gemm/gemm_kernel.cu ;;
    multi) kernel=../kernels/multi_kernel.cu ;;
    *) echo "record.sh: error: unknown landscape '$n' (spill, template, bounds, multi)" >&2; exit 1 ;;
  esac
  (cd "$here/$n" && "$bin" --name "$n" --space space.yaml \
     --kernel "$kernel" --arch sm_90 -j "${JOBS:-2}" -o landscape.json)
done
