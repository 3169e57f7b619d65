#!/usr/bin/env bash
# Checks, on a machine with a CUDA GPU, that the tune takes the architecture
# it measures on from the GPU (nvidia-smi compute_cap) when ciq.yaml names
# none (issue 16 item 3; the lit tests can only use tune_architectures:).
#
#   examples/gpu/architecture-check.sh <ciq build dir> <results dir>
#
# Builds tests/lit/cmake/Inputs/real/plain for sm_86 only and tunes it with a
# hand-written ciq.yaml: on an sm_90 GPU (H200) the tune must warn, before the
# baseline, that the build has no SASS for sm_90. Then the same with
# sm_90 in the build: no warning. Prints PASS or FAIL per case; exit status =
# failed cases. Needs cmake, ninja and the CUDA 13.0 toolkit; no network.
set -u
[ $# -eq 2 ] || { echo "usage: $0 <ciq build dir> <results dir>" >&2; exit 2; }
ciq_build=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && results=$(cd "$2" && pwd) || exit 2
src=$(cd "$(dirname "$0")/../../tests/lit/cmake/Inputs" && pwd)
export PATH="$ciq_build/bin:/usr/local/cuda/bin:$PATH"
gpu=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.[:space:]')
echo "GPU compute capability: sm_$gpu"
rm -rf "$results/src" && cp -r "$src/real" "$results/src" && cp -r "$src/multi" "$results/multi"
fails=0
for arch in 86 "$gpu"; do
  b="$results/b$arch"
  cmake -S "$results/src/plain" -B "$b" -G Ninja -DCMAKE_CUDA_ARCHITECTURES="$arch" \
        -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_CUDA_COMPILER_LAUNCHER="$ciq_build/bin/ciq-ptxas" > "$b.configure.log" 2>&1
  printf 'target: k\nbuild_dir: %s\nlockfile: %s/ciq-%s.lock\nobjectives: [registers]\nsearch: {strategy: exhaustive}\nspace:\n  include: [%s/src/regs.yaml]\n' \
    "$b" "$results" "$arch" "$results" > "$results/ciq-$arch.yaml"
  ciq tune --config "$results/ciq-$arch.yaml" > "$b.tune.log" 2>&1
  warned=$(grep -c "but not for sm_$gpu, the architecture measured on (the GPU" "$b.tune.log")
  if { [ "$arch" = 86 ] && [ "$warned" = 1 ]; } || { [ "$arch" != 86 ] && [ "$warned" = 0 ]; }; then
    echo "PASS build sm_$arch: warning lines $warned"
  else
    echo "FAIL build sm_$arch: warning lines $warned (see $b.tune.log)"; fails=$((fails + 1))
  fi
done
exit $fails
