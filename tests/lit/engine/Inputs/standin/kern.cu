// The kernel the stand-in embeds (the engine lit project's at TILE 4, without
// __launch_bounds__, which would win over --maxrregcount: 48
// registers by default), and two host functions the candidate's -D reach.
#ifndef BLOCK
#define BLOCK 128
#endif

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

// Read by host code only: the launch shape a real benchmark would pick.
extern "C" int hb_block() { return BLOCK; }
