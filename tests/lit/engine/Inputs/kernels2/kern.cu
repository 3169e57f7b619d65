// Two kernels of one translation unit that want different per-kernel
// budgets (the engine's lit test of the per-kernel search, issue 40).
// window_sum: no __launch_bounds__; ptxas gives it about 48 registers, and a
// ceiling of 40 (.maxnreg 40) is what the stand-in's timing rewards.
__global__ void window_sum(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float acc[32];
#pragma unroll
  for (int k = 0; k < 32; ++k)
    acc[k] = in[(i + k * 37) % n] * (k + 1);
#pragma unroll
  for (int w = 16; w > 0; w /= 2)
#pragma unroll
    for (int k = 0; k < w; ++k)
      acc[k] = acc[k] * 0.5f + acc[k + w] * acc[k];
  out[i] = acc[0];
}

// tile_spill: __launch_bounds__(256, 4) caps it at 64 registers, and it
// spills; fewer blocks per SM (.minnctapersm 2 or 1) lets it keep its tile in
// registers, which the stand-in's timing rewards.
__global__ void __launch_bounds__(256, 4) tile_spill(const float *a, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc[96];
#pragma unroll
  for (int k = 0; k < 96; ++k)
    acc[k] = a[(i * 7 + k * 131) % n];
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int k = 0; k < 96; ++k)
      acc[k] = acc[k] * acc[(k + 5) % 96] + acc[(k + 17) % 96];
  float s = 0;
#pragma unroll
  for (int k = 0; k < 96; ++k)
    s += acc[k];
  if (i < n)
    c[i] = s;
}
