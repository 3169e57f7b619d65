#include <cstdio>
__device__ float heavy(const float *x, int n);
__global__ void k_rdc(const float *a, const float *b, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v[24];
#pragma unroll
  for (int j = 0; j < 24; ++j) v[j] = a[(i + j * 13) % n];
  for (int r = 0; r < n; ++r) {
#pragma unroll
    for (int j = 0; j < 24; ++j) v[j] = v[j] * v[(j + 3) % 24] + b[(r + j) % n];
  }
  float s = heavy(a, n);
#pragma unroll
  for (int j = 0; j < 24; ++j) s += v[j];
  if (i < n) out[i] = s;
}
void launch(const float *a, const float *b, float *out, int n) { k_rdc<<<(n + 127) / 128, 128>>>(a, b, out, n); }
