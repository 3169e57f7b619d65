// Benchmark of the register-blocked SGEMM: times it with CUDA events, then
// checks C against a double-precision CPU reference.
//
//   spill_bench [--iters N] [--warmup N]
//
// Prints `time_ms=<median ms>`; exit 0 correct, 1 wrong answer, 2 no device.
#include "bench_util.h"
#include "spill_kernel.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

// Deliberately not multiples of the 128 x 128 block tile, so the kernel's
// bounds checks are exercised too.
constexpr int M = 1000, N = 1100, K = 900;
constexpr float ALPHA = 1.5f, BETA = -0.5f;

// Compares rows 0, 7, 14, ... and the last row of C with a double-precision
// reference; the tolerance scales with sum |a||b| of each entry, which bounds
// any reordering or FMA-contraction difference of the fp32 sum.
// Row i of C, accumulated row by row of B (contiguous reads).
bool checkRow(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c0,
              const std::vector<float>& c, int i) {
  std::vector<double> sum(N, 0.0), mag(N, 0.0);
  for (int k = 0; k < K; ++k) {
    const double aik = a[(size_t)i * K + k];
    const float* bk = &b[(size_t)k * N];
    for (int j = 0; j < N; ++j) {
      sum[j] += aik * bk[j];
      mag[j] += std::fabs(aik * bk[j]);
    }
  }
  for (int j = 0; j < N; ++j) {
    const double old = c0[(size_t)i * N + j];
    const double want = ALPHA * sum[j] + BETA * old;
    const double tol = 1e-4 * (std::fabs(ALPHA) * mag[j] + std::fabs(BETA * old)) + 1e-6;
    const double got = c[(size_t)i * N + j];
    if (!(std::fabs(got - want) <= tol)) {  // also catches NaN
      std::fprintf(stderr, "spill_bench: wrong answer at C[%d][%d]: got %.7g, expected %.7g (tolerance %.3g)\n",
                   i, j, got, want, tol);
      return false;
    }
  }
  return true;
}

bool checkAgainstCpu(const std::vector<float>& a, const std::vector<float>& b,
                     const std::vector<float>& c0, const std::vector<float>& c) {
  for (int i = 0; i < M; i += 7)
    if (!checkRow(a, b, c0, c, i)) return false;
  return checkRow(a, b, c0, c, M - 1);
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 20, warmup = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
  }
  example::requireDevice("spill_bench");

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a((size_t)M * K), b((size_t)K * N), c0((size_t)M * N), c((size_t)M * N);
  for (auto* v : {&a, &b, &c0})
    for (float& x : *v) x = dist(rng);

  float *da, *db, *dc;
  EXAMPLE_CUDA_CHECK(cudaMalloc(&da, a.size() * sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMalloc(&db, b.size() * sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMalloc(&dc, c.size() * sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  EXAMPLE_CUDA_CHECK(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));

  // Timed runs use beta = 0 so repeated launches do not accumulate into C.
  const double ms = example::timeKernelMs(
      [&] { EXAMPLE_CUDA_CHECK(launch_sgemm_blocked(M, N, K, ALPHA, da, db, 0.0f, dc)); }, warmup, iters);

  // One checked run with beta != 0 from a known C.
  EXAMPLE_CUDA_CHECK(cudaMemcpy(dc, c0.data(), c0.size() * sizeof(float), cudaMemcpyHostToDevice));
  EXAMPLE_CUDA_CHECK(launch_sgemm_blocked(M, N, K, ALPHA, da, db, BETA, dc));
  EXAMPLE_CUDA_CHECK(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);

  if (!checkAgainstCpu(a, b, c0, c)) return example::kExitWrongAnswer;
  std::printf("sgemm %dx%dx%d: %.1f GFLOP/s\n", M, N, K, 2.0 * M * N * K / (ms * 1e6));
  std::printf("time_ms=%.6f\n", ms);
  return 0;
}
