// Evaluates many polynomials per thread: enough live values that ptxas's
// register allocation (and --maxrregcount) changes the device code.
#include "poly.h"

__global__ void poly_eval(const float *__restrict__ x, float *__restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = x[i];
  float acc[POLY_TERMS];
#pragma unroll
  for (int k = 0; k < POLY_TERMS; ++k)
    acc[k] = v * (k + 1) + 1.0f / (k + 2);
#pragma unroll
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int k = 0; k < POLY_TERMS; ++k)
      acc[k] = acc[k] * v + acc[(k + r + 1) % POLY_TERMS];
  float s = 0;
#pragma unroll
  for (int k = 0; k < POLY_TERMS; ++k)
    s += acc[k];
  y[i] = s;
}

void launch_poly(const float *x, float *y, int n) {
  poly_eval<<<(n + 255) / 256, 256>>>(x, y, n);
}
