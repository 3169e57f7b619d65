#!/usr/bin/env bash
# Issue 57 on a GPU: one lock, a section per architecture. A small project
# (tests/lit/cmake/Inputs/sections: one register-hungry kernel, a fat build
# for the GPU's architecture and another) is tuned twice into one lock:
#   1. on the GPU at hand (no TUNE_ARCHITECTURES: nvidia-smi's compute
#      capability names the section; time_ms of the kernel, measured on it);
#   2. compile-only for the other architecture (TUNE_ARCHITECTURES, register
#      count, narrowed), with a register cap of its own (cap32.yaml).
# Then one fat build applies both sections, and the check is per
# architecture: each architecture's SASS has its own section's winner
# (ptxas -v's register count of the build against each section's options,
# and `ciq lock verify --build-dir`, a line per architecture).
#
#   bench/sections_gpu.sh <ciq build dir or prefix> <out dir> [other arch, default 80 or 90]
#
# Writes <out dir>/sections.txt (the tunes' section lines, `ciq lock show`,
# the per-architecture registers, verify) and exits non-zero when a check
# fails. Needs cmake, ninja, the CUDA 13.0 toolkit and one NVIDIA GPU.
set -u
[ $# -ge 2 ] || { echo "usage: $0 <ciq build dir or prefix> <out dir> [other arch]" >&2; exit 2; }
prefix=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" && out=$(cd "$2" && pwd) || exit 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$prefix/bin:/usr/local/cuda/bin:$PATH"
gpu=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.[:space:]')
[ -n "$gpu" ] || { echo "no GPU: nvidia-smi names no compute capability" >&2; exit 2; }
other=${3:-}
[ -n "$other" ] || { [ "$gpu" = 80 ] && other=90 || other=80; }
echo "GPU: sm_$gpu; compile-only section: sm_$other" | tee "$out/sections.txt"
rm -rf "$out/src" "$out/b" "$out/fat"
cp -r "$here/tests/lit/cmake/Inputs/sections" "$out/src"
# A runtime benchmark for the GPU tune: the kernel launched and timed.
cat >> "$out/src/k.cu" <<'CU'
#include <cstdio>
int bench() {
  const int n = 1 << 16;
  float *in, *o;
  cudaMalloc(&in, sizeof(float) * n * 41);
  cudaMalloc(&o, sizeof(float) * n);
  cudaMemset(in, 0, sizeof(float) * n * 41);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  k<<<n / 256, 256>>>(in, o, n);
  cudaEventRecord(a);
  for (int i = 0; i < 200; ++i)
    k<<<n / 256, 256>>>(in, o, n);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  printf("time_ms=%f\n", ms / 200);
  return cudaGetLastError() != cudaSuccess;
}
CU
sed -i 's/^int main() { return 0; }$/int bench();\nint main() { return bench(); }/' "$out/src/k.cu"
# The GPU tune measures time; the compile-only one counts registers.
cat > "$out/src/gpu-tune.cmake" <<CMAKE
ciq_tune(k BENCHMARK \$<TARGET_FILE:k> METRIC time_ms METRIC_REGEX "time_ms=([0-9.]+)" WARMUP 1 REPEATS 5
         SPACE \${CMAKE_CURRENT_SOURCE_DIR}/cap40.yaml STRATEGY exhaustive NARROW_ARCHITECTURES)
CMAKE
sed -i 's|^if(TUNE_ARCHS)|if(GPU_TUNE)\n  include(${CMAKE_CURRENT_SOURCE_DIR}/gpu-tune.cmake)\nelseif(TUNE_ARCHS)|' "$out/src/CMakeLists.txt"
archs="$gpu;$other"
fails=0
check() { if "$@"; then echo "PASS $*"; else echo "FAIL $*"; fails=$((fails + 1)); fi; }
cmake -S "$out/src" -B "$out/b" -G Ninja -DCompileIQ_DIR="$prefix/lib/cmake/CompileIQ" "-DARCHS=$archs" \
      -DGPU_TUNE=ON > "$out/c1.log" 2>&1
cmake --build "$out/b" --target ciq-tune-k > "$out/tune-gpu.log" 2>&1
cmake -S "$out/src" -B "$out/b" -DGPU_TUNE=OFF -DTUNE_ARCHS="$other" -DSPACE=cap32 > "$out/c2.log" 2>&1
cmake --build "$out/b" --target ciq-tune-fresh-k > "$out/tune-other.log" 2>&1
{
  grep -h -E '^(lock|lock sections|winning options|verdict):' "$out/tune-gpu.log" "$out/tune-other.log"
  ciq lock show "$out/src/k.ciq.lock" | head -4
} | tee -a "$out/sections.txt"
check grep -q "lock sections: sm_$(( other < gpu ? other : gpu )), sm_$(( other < gpu ? gpu : other ))" "$out/tune-other.log"
cmake -S "$out/src" -B "$out/fat" -G Ninja -DCompileIQ_DIR="$prefix/lib/cmake/CompileIQ" "-DARCHS=$archs" \
      "-DCMAKE_CUDA_FLAGS=-Xptxas=-v" > "$out/cfat.log" 2>&1
cmake --build "$out/fat" > "$out/fat.log" 2>&1
python3 "$out/src/sass_registers.py" "$out/fat.log" | tee -a "$out/sections.txt" > "$out/regs.txt"
# Each architecture's registers are within its section's cap (cap40 on the
# GPU's section when its winner is the cap, cap32 on the other).
gpu_opts=$(ciq lock show "$out/src/k.ciq.lock" | awk -v s="section sm_$gpu:" '$0 == s {f=1} f && /^options:/ {print; exit}')
echo "sm_$gpu section options: $gpu_opts" | tee -a "$out/sections.txt"
other_regs=$(awk -v a="sm_$other" '$1 == a {print $2}' "$out/regs.txt")
check [ "${other_regs:-99}" -le 32 ]
gpu_regs=$(awk -v a="sm_$gpu" '$1 == a {print $2}' "$out/regs.txt")
if echo "$gpu_opts" | grep -q maxrregcount=40; then check [ "${gpu_regs:-99}" -le 40 ] && check [ "${gpu_regs:-0}" -gt 32 ];
else check [ "${gpu_regs:-0}" -gt 40 ]; fi   # the default compile won on the GPU: no cap there
ciq lock verify "$out/src/k.ciq.lock" --build-dir "$out/fat" 2>&1 | tee -a "$out/sections.txt" > "$out/verify.txt"
check grep -q "sm_$other: device code matches section sm_$other" "$out/verify.txt"
check grep -q "sm_$gpu: device code matches section sm_$gpu" "$out/verify.txt"
"$out/fat/k" | tee -a "$out/sections.txt"
echo "failed checks: $fails" | tee -a "$out/sections.txt"
exit $fails
