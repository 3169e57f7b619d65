#include "kern.h"

#ifndef TILE
#define TILE 4
#endif
#if TILE % 2 == 1
#error "TILE must be even: the pairwise reduction below folds the tile in halves"
#endif

#ifdef FAST_PATH
// Set-up of the fast path lives in a source file only the fast-path build
// adds; a build that defines FAST_PATH without it fails to link.
void fast_path_init();
#endif

__global__ void __launch_bounds__(128) window_sum(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float acc[TILE * 8];
#pragma unroll
  for (int k = 0; k < TILE * 8; ++k)
    acc[k] = in[(i + k * 37) % n] * (k + 1);
#pragma unroll
  for (int w = TILE * 4; w > 0; w /= 2)
#pragma unroll
    for (int k = 0; k < w; ++k)
      acc[k] = acc[k] * 0.5f + acc[k + w] * acc[k];
  out[i] = acc[0];
}

void launch_window_sum(const float *in, float *out, int n) {
#ifdef FAST_PATH
  fast_path_init();
#endif
  window_sum<<<(n + 127) / 128, 128>>>(in, out, n);
}
