// Three kernels in one translation unit whose best register and occupancy
// budgets differ, so one set of compiler options for the whole compile is a
// compromise (issue 40). On sm_90 (65536 registers and 2048 threads per SM):
//
//   sgemm_tiled   __launch_bounds__(256, 3): three blocks per SM cap ptxas at
//                 80 registers, fewer than its 64 accumulators need: it spills.
//                 It wants FEWER blocks per SM (.minnctapersm 1 or 2).
//   node_walk     __launch_bounds__(256, 2): a warp per query walks a chain of
//                 dependent loads (latency-bound: it wants many warps), but a
//                 rare register-heavy branch makes ptxas use ~90 registers,
//                 so only 2 blocks (16 warps) fit per SM. It wants MORE blocks
//                 per SM (.minnctapersm 4..8, or .maxnreg 32..64): the rare
//                 branch spills, the walk gets 2-4x the warps.
//   poly_stream   no __launch_bounds__: a float4 stream through a polynomial,
//                 memory-bound at the default compile. Neutral: no register
//                 budget makes it much faster, a tight one slows it.
//
// --maxrregcount cannot help either of the first two (their __launch_bounds__
// win over it); per-kernel PTX directives can, each kernel its own.
#include "multikernel.h"

namespace multikernel {
namespace {

// --- sgemm_tiled --------------------------------------------------------------

constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8;
constexpr int GEMM_THREADS = (BM / TM) * (BN / TN); // 256
constexpr int GEMM_MIN_BLOCKS = 3;                  // 65536 / (256 * 3) -> 80 registers

__global__ void __launch_bounds__(GEMM_THREADS, GEMM_MIN_BLOCKS)
    sgemm_tiled(int n, const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c) {
  __shared__ float as[BK][BM]; // A tile, transposed: a thread reads TM consecutive rows
  __shared__ float bs[BK][BN];
  const int tx = threadIdx.x % (BN / TN);
  const int ty = threadIdx.x / (BN / TN);
  const int row0 = blockIdx.y * BM;
  const int col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  float ra[TM], rb[TN];
  for (int k0 = 0; k0 < n; k0 += BK) {
    for (int i = threadIdx.x; i < BM * BK; i += GEMM_THREADS) {
      const int r = i / BK, kk = i % BK;
      as[kk][r] = (row0 + r < n && k0 + kk < n) ? a[(size_t)(row0 + r) * n + k0 + kk] : 0.0f;
    }
    for (int i = threadIdx.x; i < BK * BN; i += GEMM_THREADS) {
      const int kk = i / BN, cc = i % BN;
      bs[kk][cc] = (k0 + kk < n && col0 + cc < n) ? b[(size_t)(k0 + kk) * n + col0 + cc] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int i = 0; i < TM; ++i)
        ra[i] = as[kk][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j)
        rb[j] = bs[kk][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
          acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + ty * TM + i;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int cc = col0 + tx * TN + j;
      if (r < n && cc < n)
        c[(size_t)r * n + cc] = acc[i][j];
    }
  }
}

// --- node_walk ----------------------------------------------------------------

constexpr int WALK_THREADS = 256;  // 8 queries (warps) per block
constexpr int WALK_MIN_BLOCKS = 2; // the author's request: 128 registers allowed

// The rare branch: an 8 x 8 outer-product accumulation over 16 coefficient
// pairs, 64 accumulators live across a loop that is not unrolled. It is what
// sets the kernel's register count.
__device__ __forceinline__ float refine(uint32_t node, int lane, const float *__restrict__ coef) {
  float acc[8][8] = {};
#pragma unroll 1
  for (int t = 0; t < 16; ++t) {
    float ra[8], rb[8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
      ra[i] = coef[(t * 16 + i + lane) & (kCoefCount - 1)];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      rb[j] = coef[(t * 16 + 8 + j + (node & 7u)) & (kCoefCount - 1)];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j)
        acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
  }
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      s = fmaf((float)(i * 8 + j + 1), acc[i][j], s);
  return s;
}

__global__ void __launch_bounds__(WALK_THREADS, WALK_MIN_BLOCKS)
    node_walk(int queries, const uint32_t *__restrict__ nodes, uint32_t mask, const float *__restrict__ coef,
              uint32_t *__restrict__ leaf, float *__restrict__ extra) {
  const int lane = threadIdx.x & 31;
  const int q = (int)((blockIdx.x * WALK_THREADS + threadIdx.x) >> 5);
  if (q >= queries)
    return; // whole warps only
  const uint32_t key = walkKey(q);
  uint32_t node = walkStart(q, mask);
  // Each step: the warp reads one node (32 keys, one 128-byte line), counts
  // the keys at or below its query's key, and that count picks the next
  // node: one dependent load per step, like a B-tree descent.
  for (int s = 0; s < kWalkSteps; ++s) {
    const uint32_t v = nodes[(size_t)node * 32 + lane];
    const uint32_t below = __popc(__ballot_sync(0xffffffffu, v <= key));
    node = walkNext(node, below, mask);
  }
  if (lane == 0)
    leaf[q] = node;
  if (rareLeaf(node))
    extra[(size_t)q * 32 + lane] = refine(node, lane, coef);
}

// --- poly_stream --------------------------------------------------------------

constexpr int POLY_THREADS = 256;

__global__ void poly_stream(int n4, const float4 *__restrict__ x, float4 *__restrict__ y) {
  // kPolyItems float4 per thread, spaced a grid apart (coalesced); 4 x
  // kPolyItems independent Horner chains.
  const int stride = gridDim.x * POLY_THREADS;
  const int i0 = blockIdx.x * POLY_THREADS + threadIdx.x;
  float4 v[kPolyItems];
#pragma unroll
  for (int u = 0; u < kPolyItems; ++u)
    v[u] = x[i0 + u * stride];
  float4 r[kPolyItems];
#pragma unroll
  for (int u = 0; u < kPolyItems; ++u)
    r[u] = make_float4(polyCoef(0), polyCoef(0), polyCoef(0), polyCoef(0));
#pragma unroll
  for (int k = 1; k <= kPolyDegree; ++k)
#pragma unroll
    for (int u = 0; u < kPolyItems; ++u) {
      r[u].x = fmaf(r[u].x, v[u].x, polyCoef(k));
      r[u].y = fmaf(r[u].y, v[u].y, polyCoef(k));
      r[u].z = fmaf(r[u].z, v[u].z, polyCoef(k));
      r[u].w = fmaf(r[u].w, v[u].w, polyCoef(k));
    }
#pragma unroll
  for (int u = 0; u < kPolyItems; ++u)
    y[i0 + u * stride] = r[u];
}

// --- input fills ----------------------------------------------------------------

__global__ void fill_floats(float *m, size_t count, uint32_t streamId) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
    m[i] = unitFloat((uint32_t)i, streamId);
}

__global__ void fill_nodes(uint32_t *nodes, size_t count) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
    nodes[i] = mix32((uint32_t)i ^ kNodeSeed);
}

} // namespace

cudaError_t launchSgemm(int n, const float *a, const float *b, float *c, cudaStream_t stream) {
  const dim3 grid((n + BN - 1) / BN, (n + BM - 1) / BM);
  sgemm_tiled<<<grid, GEMM_THREADS, 0, stream>>>(n, a, b, c);
  return cudaGetLastError();
}

cudaError_t launchNodeWalk(int queries, const uint32_t *nodes, uint32_t numNodes, const float *coef, uint32_t *leaf,
                           float *extra, cudaStream_t stream) {
  const int warpsPerBlock = WALK_THREADS / 32;
  node_walk<<<(queries + warpsPerBlock - 1) / warpsPerBlock, WALK_THREADS, 0, stream>>>(queries, nodes, numNodes - 1,
                                                                                        coef, leaf, extra);
  return cudaGetLastError();
}

cudaError_t launchPolyStream(int n, const float *x, float *y, cudaStream_t stream) {
  const int n4 = n / 4;
  const int blocks = n4 / (kPolyItems * POLY_THREADS);
  poly_stream<<<blocks, POLY_THREADS, 0, stream>>>(n4, reinterpret_cast<const float4 *>(x),
                                                   reinterpret_cast<float4 *>(y));
  return cudaGetLastError();
}

cudaError_t launchFillFloats(float *m, size_t count, uint32_t streamId, cudaStream_t stream) {
  fill_floats<<<1024, 256, 0, stream>>>(m, count, streamId);
  return cudaGetLastError();
}

cudaError_t launchFillNodes(uint32_t *nodes, uint32_t numNodes, cudaStream_t stream) {
  fill_nodes<<<1024, 256, 0, stream>>>(nodes, (size_t)numNodes * 32);
  return cudaGetLastError();
}

} // namespace multikernel
