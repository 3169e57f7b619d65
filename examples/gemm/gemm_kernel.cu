// Compute-bound example: a register-blocked single-precision GEMM,
// C = A * B (row-major, any sizes).
//
// 256 threads per block; each thread owns a THREAD_TILE x THREAD_TILE tile of
// C in registers, so a block computes (16 * THREAD_TILE)^2 outputs and stages
// BK-deep slices of A and B through shared memory. MIN_BLOCKS_PER_SM goes to
// __launch_bounds__ and caps the registers per thread (65536 / (256 * n)): a
// high value buys occupancy at the price of spills. These three defines are
// application parameters ciq co-tunes with the compiler controls
// (space.yaml); the defaults below are the baseline build.
#include "gemm_kernel.h"

#ifndef THREAD_TILE
#define THREAD_TILE 8  // outputs per thread along each axis: 4 or 8
#endif
#ifndef BK
#define BK 8  // depth of one shared-memory stage: 4, 8, 16 or 32
#endif
#ifndef MIN_BLOCKS_PER_SM
#define MIN_BLOCKS_PER_SM 2  // __launch_bounds__ occupancy request: 1, 2 or 3
#endif

static_assert(THREAD_TILE % 4 == 0, "THREAD_TILE must be a multiple of 4 (16-byte shared-memory reads)");
static_assert(BK >= 1, "BK must be at least 1");

namespace {

constexpr int THREADS_X = 16, THREADS_Y = 16, THREADS = THREADS_X * THREADS_Y;
constexpr int BM = THREADS_Y * THREAD_TILE;  // rows of C per block
constexpr int BN = THREADS_X * THREAD_TILE;  // columns of C per block
// Padding the A tile by 4 floats spreads the transposing stores over all
// banks and keeps each row 16-byte aligned.
constexpr int APAD = 4;
static_assert((BM * BK + BK * BN) * 4 + BK * APAD * 4 <= 48 * 1024, "tiles exceed 48 KiB of static shared memory");

__global__ void __launch_bounds__(THREADS, MIN_BLOCKS_PER_SM)
    sgemm(int m, int n, int k, const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c) {
  __shared__ __align__(16) float as[BK][BM + APAD];  // A tile, transposed
  __shared__ __align__(16) float bs[BK][BN];

  const int tx = threadIdx.x % THREADS_X, ty = threadIdx.x / THREADS_X;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

  float acc[THREAD_TILE][THREAD_TILE] = {};
  for (int k0 = 0; k0 < k; k0 += BK) {
    for (int i = threadIdx.x; i < BM * BK; i += THREADS) {
      const int r = i / BK, kk = i % BK, gr = row0 + r, gk = k0 + kk;
      as[kk][r] = (gr < m && gk < k) ? a[(size_t)gr * k + gk] : 0.0f;
    }
    for (int i = threadIdx.x; i < BK * BN; i += THREADS) {
      const int kk = i / BN, cc = i % BN, gk = k0 + kk, gc = col0 + cc;
      bs[kk][cc] = (gk < k && gc < n) ? b[(size_t)gk * n + gc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float ra[THREAD_TILE], rb[THREAD_TILE];
#pragma unroll
      for (int i = 0; i < THREAD_TILE; ++i) ra[i] = as[kk][ty * THREAD_TILE + i];
#pragma unroll
      for (int j = 0; j < THREAD_TILE; ++j) rb[j] = bs[kk][tx * THREAD_TILE + j];
#pragma unroll
      for (int i = 0; i < THREAD_TILE; ++i)
#pragma unroll
        for (int j = 0; j < THREAD_TILE; ++j) acc[i][j] += ra[i] * rb[j];
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < THREAD_TILE; ++i) {
    const int r = row0 + ty * THREAD_TILE + i;
#pragma unroll
    for (int j = 0; j < THREAD_TILE; ++j) {
      const int cc = col0 + tx * THREAD_TILE + j;
      if (r < m && cc < n) c[(size_t)r * n + cc] = acc[i][j];
    }
  }
}

}  // namespace

cudaError_t launchSgemm(int m, int n, int k, const float* a, const float* b, float* c, cudaStream_t stream) {
  const dim3 grid((n + BN - 1) / BN, (m + BM - 1) / BM);
  sgemm<<<grid, THREADS, 0, stream>>>(m, n, k, a, b, c);
  return cudaGetLastError();
}

const char* gemmParameters() {
#define GEMM_STR2(x) #x
#define GEMM_STR(x) GEMM_STR2(x)
  return "THREAD_TILE=" GEMM_STR(THREAD_TILE) " BK=" GEMM_STR(BK) " MIN_BLOCKS_PER_SM=" GEMM_STR(MIN_BLOCKS_PER_SM);
}
