// One of two translation units with the same kind of kernel (about 48
// registers by default): a per-translation-unit control reaches only its own.
__global__ void window_b(const float *in, float *out, int n) {
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
