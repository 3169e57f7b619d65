// Memory-bound example: the sum of a large float array in two passes.
//
// Pass 1: a grid of BLOCKS_PER_SM blocks per SM walks the array with float4
// loads, UNROLL loads in flight per thread, and writes one partial sum per
// block. Pass 2: one block sums the partials. Both use warp shuffles, then
// shared memory across warps. The three defines are application parameters
// that ciq co-tunes with the compiler controls (space.yaml); the defaults
// below are the baseline build.
#include "reduce_kernel.h"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 256  // threads per block: 128, 256, 512 or 1024
#endif
#ifndef UNROLL
#define UNROLL 4  // float4 loads in flight per thread: 1, 2, 4 or 8
#endif
#ifndef BLOCKS_PER_SM
#define BLOCKS_PER_SM 4  // pass-1 blocks per SM (grid size = SMs x this)
#endif

static_assert(BLOCK_SIZE % 32 == 0 && BLOCK_SIZE <= 1024, "BLOCK_SIZE must be a multiple of 32, at most 1024");
static_assert(UNROLL >= 1, "UNROLL must be at least 1");
static_assert(BLOCKS_PER_SM >= 1, "BLOCKS_PER_SM must be at least 1");

namespace {

__device__ float warpSum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Sum of `v` over the block; valid in thread 0.
__device__ float blockSum(float v) {
  __shared__ float warpSums[BLOCK_SIZE / 32];
  v = warpSum(v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warpSums[warp] = v;
  __syncthreads();
  v = threadIdx.x < BLOCK_SIZE / 32 ? warpSums[threadIdx.x] : 0.0f;
  if (warp == 0) v = warpSum(v);
  return v;
}

__global__ void __launch_bounds__(BLOCK_SIZE) partialSums(const float* __restrict__ in, size_t n,
                                                         float* __restrict__ partials) {
  const float4* in4 = reinterpret_cast<const float4*>(in);
  const size_t n4 = n / 4;
  const size_t stride = (size_t)gridDim.x * BLOCK_SIZE * UNROLL;
  size_t i = (size_t)blockIdx.x * BLOCK_SIZE * UNROLL + threadIdx.x;
  float sum = 0.0f;
  // Full groups: all UNROLL loads of this thread exist; issue them before adding.
  for (; i + (size_t)(UNROLL - 1) * BLOCK_SIZE < n4; i += stride) {
    float4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = in4[i + (size_t)u * BLOCK_SIZE];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
  }
  // This thread's last, partial group; every later group lies past the end.
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    const size_t j = i + (size_t)u * BLOCK_SIZE;
    if (j < n4) {
      const float4 v = in4[j];
      sum += (v.x + v.y) + (v.z + v.w);
    }
  }
  // The n % 4 floats after the last float4.
  if (blockIdx.x == 0 && threadIdx.x < n % 4) sum += in[n4 * 4 + threadIdx.x];
  sum = blockSum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void __launch_bounds__(BLOCK_SIZE) finalSum(const float* __restrict__ partials, int count,
                                                      float* __restrict__ out) {
  float sum = 0.0f;
  for (int i = threadIdx.x; i < count; i += BLOCK_SIZE) sum += partials[i];
  sum = blockSum(sum);
  if (threadIdx.x == 0) *out = sum;
}

}  // namespace

int reducePartialCount(int smCount) { return smCount * BLOCKS_PER_SM; }

cudaError_t launchReduceSum(const float* in, size_t n, float* partials, int partialCount, float* out,
                            cudaStream_t stream) {
  partialSums<<<partialCount, BLOCK_SIZE, 0, stream>>>(in, n, partials);
  finalSum<<<1, BLOCK_SIZE, 0, stream>>>(partials, partialCount, out);
  return cudaGetLastError();
}

const char* reduceParameters() {
#define REDUCE_STR2(x) #x
#define REDUCE_STR(x) REDUCE_STR2(x)
  return "BLOCK_SIZE=" REDUCE_STR(BLOCK_SIZE) " UNROLL=" REDUCE_STR(UNROLL) " BLOCKS_PER_SM=" REDUCE_STR(BLOCKS_PER_SM);
}
