// Landscape kernel: one translation unit with three kernels of different
// register pressure (a scaled copy, a 1-D stencil with UNROLL outputs per
// thread, a per-thread polynomial/histogram mix). Compile-only objectives sum
// spills and registers over the three, so a control that helps one kernel and
// hurts another shows up as a trade-off.
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef RADIUS
#define RADIUS 4
#endif

__global__ void scaleCopy(const float* __restrict__ in, float* __restrict__ out, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = s * in[i];
}

__global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, const float* __restrict__ w, int n) {
  const int base = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
  float win[UNROLL + 2 * RADIUS];
#pragma unroll
  for (int j = 0; j < UNROLL + 2 * RADIUS; ++j) win[j] = in[min(max(base + j - RADIUS, 0), n - 1)];
  float wr[2 * RADIUS + 1];
#pragma unroll
  for (int r = 0; r <= 2 * RADIUS; ++r) wr[r] = w[r];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    float s = 0.0f;
#pragma unroll
    for (int r = 0; r <= 2 * RADIUS; ++r) s += wr[r] * win[u + r];
    if (base + u < n) out[base + u] = s;
  }
}

__global__ void polyMix(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ coef, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float c[4 * UNROLL];
#pragma unroll
  for (int j = 0; j < 4 * UNROLL; ++j) c[j] = coef[j];
  float v = x[i], acc = 0.0f, p = 1.0f;
#pragma unroll
  for (int j = 0; j < 4 * UNROLL; ++j) {
    acc += c[j] * p * __sinf(v + j);
    p *= v;
  }
  y[i] = acc;
}
