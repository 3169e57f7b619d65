// All-pairs gravitational accelerations (the force loop of an n-body step):
//
//   a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps^2)^(3/2)
//
// Each thread owns BODIES_PER_THREAD bodies (position and accumulator in
// registers; an application parameter ciq co-tunes, see space.yaml) and the
// block streams all bodies through shared memory in tiles of 256. This file
// is built into a static library that the benchmark links, to show ciq
// tuning CUDA code that lives in a library (ciq_tune's TUNE_TARGETS).
#include "nbody_kernel.h"

#ifndef BODIES_PER_THREAD
#define BODIES_PER_THREAD 1  // 1, 2, 4 or 8
#endif
static_assert(BODIES_PER_THREAD >= 1, "BODIES_PER_THREAD must be at least 1");

namespace {

constexpr int THREADS = 256;

__global__ void __launch_bounds__(THREADS)
    accelerations(const float4* __restrict__ bodies, float4* __restrict__ acc, int n, float softening2) {
  __shared__ float4 tile[THREADS];
  float4 me[BODIES_PER_THREAD];
  float3 a[BODIES_PER_THREAD];
  const int first = blockIdx.x * THREADS * BODIES_PER_THREAD + threadIdx.x;
#pragma unroll
  for (int b = 0; b < BODIES_PER_THREAD; ++b) {
    const int i = first + b * THREADS;
    me[b] = i < n ? bodies[i] : make_float4(0, 0, 0, 0);
    a[b] = make_float3(0, 0, 0);
  }
  for (int t = 0; t < n; t += THREADS) {
    // Bodies past the end get zero mass: they add nothing.
    tile[threadIdx.x] = t + threadIdx.x < n ? bodies[t + threadIdx.x] : make_float4(0, 0, 0, 0);
    __syncthreads();
#pragma unroll 8
    for (int j = 0; j < THREADS; ++j) {
      const float4 o = tile[j];
#pragma unroll
      for (int b = 0; b < BODIES_PER_THREAD; ++b) {
        const float dx = o.x - me[b].x, dy = o.y - me[b].y, dz = o.z - me[b].z;
        const float inv = rsqrtf(dx * dx + dy * dy + dz * dz + softening2);
        const float s = o.w * inv * inv * inv;
        a[b].x += dx * s;
        a[b].y += dy * s;
        a[b].z += dz * s;
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int b = 0; b < BODIES_PER_THREAD; ++b) {
    const int i = first + b * THREADS;
    if (i < n) acc[i] = make_float4(a[b].x, a[b].y, a[b].z, 0);
  }
}

}  // namespace

cudaError_t launchAccelerations(const float4* bodies, float4* acc, int n, float softening, cudaStream_t stream) {
  const int perBlock = THREADS * BODIES_PER_THREAD;
  accelerations<<<(n + perBlock - 1) / perBlock, THREADS, 0, stream>>>(bodies, acc, n, softening * softening);
  return cudaGetLastError();
}
