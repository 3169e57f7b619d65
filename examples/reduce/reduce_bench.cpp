// Benchmark of the two-pass float sum: times it with CUDA events on a
// 512 MiB array and checks the result against the CPU.
//
//   reduce_bench [--iters N] [--warmup N]
//
// The array holds small integers (1 or 2 at one index in 16, else 0) and has
// an odd length, so every partial sum stays an integer below 2^24 and the
// fp32 result is exact in any summation order: a lost or doubly counted
// group of elements shows as an exact mismatch, whatever the compiler does.
// Prints `time_ms=<median ms>`; exit 0 correct, 1 wrong answer, 2 no device.
#include "bench_util.h"
#include "reduce_kernel.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kN = (size_t(128) << 20) + 3;  // 128 Mi + 3 floats, about 512 MiB

// Deterministic sparse small integers (splitmix64 finaliser of the index).
float valueAt(size_t i) {
  uint64_t z = i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (z & 15) == 0 ? (float)(1 + ((z >> 4) & 1)) : 0.0f;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 100, warmup = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
  }
  example::requireDevice("reduce_bench");
  int device = 0, smCount = 0;
  EXAMPLE_CUDA_CHECK(cudaGetDevice(&device));
  EXAMPLE_CUDA_CHECK(cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, device));
  const int partialCount = reducePartialCount(smCount);

  std::vector<float> host(kN);
  uint64_t want = 0;
  for (size_t i = 0; i < kN; ++i) want += (uint64_t)(host[i] = valueAt(i));

  float *in, *partials, *out;
  EXAMPLE_CUDA_CHECK(cudaMalloc(&in, kN * sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMalloc(&partials, partialCount * sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMalloc(&out, sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMemcpy(in, host.data(), kN * sizeof(float), cudaMemcpyHostToDevice));

  const double ms = example::timeKernelMs(
      [&] { EXAMPLE_CUDA_CHECK(launchReduceSum(in, kN, partials, partialCount, out)); }, warmup, iters);
  float got = 0;
  EXAMPLE_CUDA_CHECK(cudaMemcpy(&got, out, sizeof(float), cudaMemcpyDeviceToHost));  // sum of the last timed run
  cudaFree(in);
  cudaFree(partials);
  cudaFree(out);

  if ((double)got != (double)want) {
    std::fprintf(stderr, "reduce_bench: wrong answer: sum of %zu floats is %.1f, expected %llu\n", kN, (double)got,
                 (unsigned long long)want);
    return example::kExitWrongAnswer;
  }
  std::printf("reduce %zu floats (%s): %.1f GB/s\n", kN, reduceParameters(),
              kN * sizeof(float) / (ms * 1e6));
  std::printf("time_ms=%.6f\n", ms);
  return 0;
}
