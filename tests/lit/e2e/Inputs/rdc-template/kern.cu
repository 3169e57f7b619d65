// A translation unit whose only kernels are templates, instantiated through
// a host template (as cuda-samples' reduction does), compiled -rdc: nvcc then
// names the unit after the compiling process ("..._cu_5f0e6d00_31426"), and
// cooperative groups' file-local entities carry that name into the cubin.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

#ifndef SPREAD
#define SPREAD 8
#endif

template <class T>
__global__ void tile_sum(const T *in, T *out, unsigned n) {
  cg::thread_block cta = cg::this_thread_block();
  auto tile = cg::tiled_partition<32>(cta);
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  T part[SPREAD];
#pragma unroll
  for (int k = 0; k < SPREAD; ++k)
    part[k] = i * SPREAD + k < n ? in[(i * SPREAD + k * 977) % n] : T(0);
  T v = 0;
#pragma unroll
  for (int k = 0; k < SPREAD; ++k)
    v += part[k] * part[(k + 1) % SPREAD];
  v = cg::reduce(tile, v, cg::plus<T>());
  if (tile.thread_rank() == 0)
    atomicAdd(out, v);
}

template <class T> void sum(const T *in, T *out, unsigned n) { tile_sum<T><<<(n + 255) / 256, 256>>>(in, out, n); }
template void sum<float>(const float *, float *, unsigned);
template void sum<int>(const int *, int *, unsigned);
