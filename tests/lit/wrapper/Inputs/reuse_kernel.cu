// A kernel whose code depends on a header (ptx-reuse-edits.test).
#include "reuse_tile.h"
__global__ void axpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
  for (int k = 0; k < REUSE_TILE; ++k)
    if (i * REUSE_TILE + k < n)
      y[i * REUSE_TILE + k] = a * x[i * REUSE_TILE + k] + y[i * REUSE_TILE + k];
}
