// Two small kernels: a template (mangled name) and one with shared memory and a barrier.
#ifndef CIQ_TILE
#define CIQ_TILE 1
#endif
template <int N> __global__ void scale(float *x, float a) { x[threadIdx.x] *= a * N * CIQ_TILE; }
template __global__ void scale<2>(float *, float);
__global__ void add(float *x, const float *y) {
  __shared__ float s[32];
  s[threadIdx.x] = y[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] += s[31 - threadIdx.x];
}
