// A register-blocked single-precision GEMM, C = alpha * A * B + beta * C.
//
// Each thread owns a TM x TN tile of C in registers (64 accumulators) and
// the block stages BM x BK and BK x BN tiles of A and B through shared
// memory. __launch_bounds__(256, 3) asks for three resident blocks per SM,
// which caps ptxas at 80 registers per thread on sm_90 (65536 / 768 = 85,
// allocated in steps of 8): a little fewer than the 64 accumulators plus the
// 16 operands and the addresses need, so the default compile spills to local
// memory. How much it spills depends on ptxas's scheduling (--opt-level,
// --register-usage-level), which is what ciq's compile-only objective tunes.
#include "spill_kernel.h"

#include <cuda_runtime.h>

namespace {

constexpr int BM = 128;  // rows of C per block
constexpr int BN = 128;  // columns of C per block
constexpr int BK = 8;    // depth of one shared-memory stage
constexpr int TM = 8;    // rows of C per thread
constexpr int TN = 8;    // columns of C per thread
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256
constexpr int MIN_BLOCKS_PER_SM = 3;            // 65536 / (256 * 3) -> 80 registers

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS_PER_SM)
    sgemm_blocked(int m, int n, int k, float alpha, const float* __restrict__ a,
                  const float* __restrict__ b, float beta, float* __restrict__ c) {
  __shared__ float as[BK][BM];  // A tile, transposed so a thread reads TM consecutive rows
  __shared__ float bs[BK][BN];

  const int tx = threadIdx.x % (BN / TN);
  const int ty = threadIdx.x / (BN / TN);
  const int row0 = blockIdx.y * BM;
  const int col0 = blockIdx.x * BN;

  float acc[TM][TN] = {};
  float ra[TM];
  float rb[TN];

  for (int k0 = 0; k0 < k; k0 += BK) {
    // Each of the 256 threads loads 4 elements of each tile (128 x 8 = 1024).
    for (int i = threadIdx.x; i < BM * BK; i += THREADS) {
      const int r = i / BK, kk = i % BK;
      const int gr = row0 + r, gk = k0 + kk;
      as[kk][r] = (gr < m && gk < k) ? a[(size_t)gr * k + gk] : 0.0f;
    }
    for (int i = threadIdx.x; i < BK * BN; i += THREADS) {
      const int kk = i / BN, cc = i % BN;
      const int gk = k0 + kk, gc = col0 + cc;
      bs[kk][cc] = (gk < k && gc < n) ? b[(size_t)gk * n + gc] : 0.0f;
    }
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int i = 0; i < TM; ++i) ra[i] = as[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) rb[j] = bs[kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + ty * TM + i;
    if (r >= m) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int cc = col0 + tx * TN + j;
      if (cc < n) c[(size_t)r * n + cc] = alpha * acc[i][j] + beta * c[(size_t)r * n + cc];
    }
  }
}

}  // namespace

cudaError_t launch_sgemm_blocked(int m, int n, int k, float alpha, const float* a, const float* b,
                                 float beta, float* c, cudaStream_t stream) {
  const dim3 grid((n + BN - 1) / BN, (m + BM - 1) / BM);
  sgemm_blocked<<<grid, THREADS, 0, stream>>>(m, n, k, alpha, a, b, beta, c);
  return cudaGetLastError();
}
