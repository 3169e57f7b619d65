// Host entry points of the three kernels of multikernel.cu, and the hash
// both sides use to make their inputs (the CPU check recomputes any input
// element from its index instead of copying the inputs back).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace multikernel {

// A bijection of 32-bit integers (a murmur3-style finalizer): the inputs of
// every kernel are mix32 of their index, on the device and in the check.
__host__ __device__ inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// A float in [-1, 1) from an index and a stream id.
__host__ __device__ inline float unitFloat(uint32_t i, uint32_t stream) {
  return (float)(mix32(i * 2u + 1u + stream * 0x9e3779b9u) >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

// --- sgemm_tiled: C (n x n) = A (n x n) * B (n x n), row-major. ---------------
// 128 x 128 tiles, 8 x 8 outputs per thread, __launch_bounds__(256, 3).
cudaError_t launchSgemm(int n, const float *a, const float *b, float *c, cudaStream_t stream = 0);
// Fills m with unitFloat(index, streamId).
cudaError_t launchFillFloats(float *m, size_t count, uint32_t streamId, cudaStream_t stream = 0);

// --- node_walk: one warp per query walks `steps` nodes of 32 keys. ----------
constexpr int kWalkSteps = 32; // nodes visited per query
constexpr uint32_t kNodeSeed = 0x5bd1e995u;
// Node j's 32 keys are nodes[32 j + lane] = mix32((32 j + lane) ^ kNodeSeed).
cudaError_t launchFillNodes(uint32_t *nodes, uint32_t numNodes, cudaStream_t stream = 0);
// numNodes must be a power of two. leaf[q]: the last node of query q's walk;
// extra[32 q + lane]: the rare refinement's result where that node asks for
// one (rareLeaf), else untouched.
cudaError_t launchNodeWalk(int queries, const uint32_t *nodes, uint32_t numNodes, const float *coef, uint32_t *leaf,
                           float *extra, cudaStream_t stream = 0);
constexpr int kCoefCount = 256; // coef[i] = unitFloat(i, kCoefStream)
constexpr uint32_t kCoefStream = 7;

__host__ __device__ inline uint32_t walkKey(uint32_t q) { return mix32(q * 2654435761u + 12345u); }
__host__ __device__ inline uint32_t walkStart(uint32_t q, uint32_t mask) { return mix32(q ^ 0xabcdef01u) & mask; }
__host__ __device__ inline uint32_t walkNext(uint32_t node, uint32_t below, uint32_t mask) {
  return mix32(node * 33u + below + 1u) & mask;
}
// About one leaf in 512 asks for the register-heavy refinement.
__host__ __device__ inline bool rareLeaf(uint32_t node) { return (mix32(node ^ 0x1234567u) & 511u) == 0u; }

// --- poly_stream: y = p(x) elementwise, p of degree kPolyDegree. --------------
constexpr int kPolyDegree = 16;
// n must be a multiple of 4 * kPolyItems * 256.
constexpr int kPolyItems = 4; // float4 per thread
cudaError_t launchPolyStream(int n, const float *x, float *y, cudaStream_t stream = 0);
// Coefficient k of p (highest degree first in Horner order).
__host__ __device__ inline float polyCoef(int k) { return 1.0f / (float)(k + 2) * ((k & 1) ? -1.0f : 1.0f); }

} // namespace multikernel
