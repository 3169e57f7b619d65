// Every form of nvcc's file-local names (issue 56 item 1): an anonymous
// namespace (cooperative groups' reduce brings libcu++'s cuda::std::ignore),
// a file-static device function, a static kernel template (with -rdc, a unit
// nvcc names "__nv_static_<n>__<unit id>_") and a function-local static.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
#ifndef CIQ_SCALE
#define CIQ_SCALE 2.0f
#endif
namespace {
__device__ float scale(float x) { return x * CIQ_SCALE; }
}
static __device__ float offset(float x) { return x + 1.0f; }
__device__ int counted(int x) {
  static __device__ int calls;
  return atomicAdd(&calls, x);
}
template <typename T> static __global__ void bump(T *p) { p[threadIdx.x] += T(counted(1)); }
__global__ void reduceTile(const float *in, float *out) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  float v = cg::reduce(tile, scale(in[threadIdx.x]), cg::plus<float>());
  if (tile.thread_rank() == 0) out[blockIdx.x] = offset(v);
}
void launchAll(const float *in, float *out, int *n) {
  reduceTile<<<1, 32>>>(in, out);
  bump<<<1, 32>>>(n);
}
