// ITEMS elements per thread: more registers as ITEMS grows (a -D parameter
// whose winner a compile-only search for fewer registers finds).
#ifndef ITEMS
#define ITEMS 4
#endif
__global__ void items(const float *x, float *y, int n, int steps) {
  int base = blockIdx.x * blockDim.x * ITEMS + threadIdx.x;
  float v[ITEMS];
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)
    v[k] = base + k * blockDim.x < n ? x[base + k * blockDim.x] : 0.f;
  for (int s = 0; s < steps; ++s)
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
      v[k] = v[k] * 0.999f + 0.001f * __sinf(v[k] + 0.5f * __cosf(v[k]));
#pragma unroll
  for (int k = 0; k < ITEMS; ++k)
    if (base + k * blockDim.x < n)
      y[base + k * blockDim.x] = v[k];
}
