#include <cstdio>
__global__ void gemm(const float *a, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
#if LAYOUT == 0
  if (i < n) c[i] = a[i] * 2.0f;
#else
  if (i < n) c[i] = a[n - 1 - i] * 2.0f;
#endif
}
int main() { std::printf("LAYOUT=%d\n", LAYOUT); }
