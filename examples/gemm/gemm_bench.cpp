// Benchmark of the register-blocked SGEMM: times an M x N x K product
// (4096^3 by default) with CUDA events and checks C against a
// double-precision CPU reference.
//
//   gemm_bench [--iters N] [--warmup N] [--size S | --m M --n N --k K]
//
// --size S sets M = N = K = S (the problem sizes of benchmark.cases,
// bench/cases_gpu.py); --m, --n, --k set one dimension each.
//
// The reference covers two full rows, two full columns and 2048 scattered
// entries of C, so every block tile and both ends of each axis are checked
// without an O(n^3) CPU product. The tolerance scales with sum |a||b| of each
// entry: any summation order or FMA contraction passes, a wrong term does not.
// Prints `time_ms=<median ms>`; exit 0 correct, 1 wrong answer, 2 no device.
#include "bench_util.h"
#include "gemm_kernel.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int M = 4096, N = 4096, K = 4096;  // --size, --m, --n, --k

uint64_t mix(uint64_t z) {  // splitmix64 finaliser
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Deterministic values in [-1, 1).
void fill(std::vector<float>& v, uint64_t seed) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = (float)(mix(seed + i) >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// Compares one entry with its double-precision value `want`; `mag` is the
// sum of |a_ik b_kj| over k, which bounds any reordering or FMA error.
bool compare(double got, double want, double mag, int i, int j) {
  const double tol = 1e-4 * mag + 1e-6;
  if (std::fabs(got - want) <= tol) return true;  // false for NaN too
  std::fprintf(stderr, "gemm_bench: wrong answer at C[%d][%d]: got %.7g, expected %.7g (tolerance %.3g)\n", i, j, got,
               want, tol);
  return false;
}

// Row i of C, accumulated row by row of B (contiguous reads).
bool checkRow(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c, int i) {
  std::vector<double> want(N, 0.0), mag(N, 0.0);
  for (int k = 0; k < K; ++k) {
    const double aik = a[(size_t)i * K + k];
    const float* bk = &b[(size_t)k * N];
    for (int j = 0; j < N; ++j) {
      want[j] += aik * bk[j];
      mag[j] += std::fabs(aik * bk[j]);
    }
  }
  for (int j = 0; j < N; ++j)
    if (!compare(c[(size_t)i * N + j], want[j], mag[j], i, j)) return false;
  return true;
}

// Entries (i, j) of column j of C for the given rows, from a copy of column j of B.
bool checkColumn(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c, int j,
                 const std::vector<int>& rows) {
  std::vector<double> bj(K);
  for (int k = 0; k < K; ++k) bj[k] = b[(size_t)k * N + j];
  for (int i : rows) {
    double want = 0, mag = 0;
    for (int k = 0; k < K; ++k) {
      const double p = a[(size_t)i * K + k] * bj[k];
      want += p;
      mag += std::fabs(p);
    }
    if (!compare(c[(size_t)i * N + j], want, mag, i, j)) return false;
  }
  return true;
}

bool checkAgainstCpu(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& c) {
  for (int i : {0, M - 1})
    if (!checkRow(a, b, c, i)) return false;
  std::vector<int> allRows(M);
  for (int i = 0; i < M; ++i) allRows[i] = i;
  for (int j : {0, N - 1})
    if (!checkColumn(a, b, c, j, allRows)) return false;
  // 256 scattered columns, 8 scattered rows each.
  for (uint64_t s = 0; s < 256; ++s) {
    std::vector<int> rows;
    for (uint64_t r = 0; r < 8; ++r) rows.push_back((int)(mix(s * 131 + r + 1) % M));
    if (!checkColumn(a, b, c, (int)(mix(s * 7919 + 17) % N), rows)) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 20, warmup = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--size")) M = N = K = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--m")) M = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--n")) N = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--k")) K = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "gemm_bench: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (M < 1 || N < 1 || K < 1 || (size_t)M * K > (size_t)1 << 31 || (size_t)K * N > (size_t)1 << 31) {
    std::fprintf(stderr, "gemm_bench: sizes %d x %d x %d out of range (1 to 2^31 elements per matrix)\n", M, N, K);
    return 2;
  }
  example::requireDevice("gemm_bench");

  std::vector<float> a((size_t)M * K), b((size_t)K * N), c((size_t)M * N);
  fill(a, 1);
  fill(b, uint64_t(1) << 40);
  float *da, *db, *dc;
  EXAMPLE_CUDA_CHECK(cudaMalloc(&da, a.size() * sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMalloc(&db, b.size() * sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMalloc(&dc, c.size() * sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMemcpy(da, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  EXAMPLE_CUDA_CHECK(cudaMemcpy(db, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));
  EXAMPLE_CUDA_CHECK(cudaMemset(dc, 0xff, c.size() * sizeof(float)));  // NaN: unwritten entries fail the check

  const double ms =
      example::timeKernelMs([&] { EXAMPLE_CUDA_CHECK(launchSgemm(M, N, K, da, db, dc)); }, warmup, iters);
  EXAMPLE_CUDA_CHECK(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);

  if (!checkAgainstCpu(a, b, c)) return example::kExitWrongAnswer;
  std::printf("sgemm %dx%dx%d (%s): %.1f GFLOP/s\n", M, N, K, gemmParameters(), 2.0 * M * N * K / (ms * 1e6));
  std::printf("time_ms=%.6f\n", ms);
  return 0;
}
