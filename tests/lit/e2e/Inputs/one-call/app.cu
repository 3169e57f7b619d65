// A one-file program built by one nvcc call (compile and link, as many
// Makefile projects do): its PTX exists only inside that call.
#include <cstdio>

__global__ void __launch_bounds__(256, 3) spill_sum(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc[96];
#pragma unroll
  for (int k = 0; k < 96; ++k)
    acc[k] = in[(i + k * 37) % n];
  for (int r = 0; r < n; ++r) {
#pragma unroll
    for (int k = 0; k < 96; ++k)
      acc[k] = acc[k] * acc[(k + 7) % 96] + in[(r + k) % n];
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < 96; ++k)
    s += acc[k];
  out[i] = s;
}

int main() {
  std::printf("built\n");
  return 0;
}
