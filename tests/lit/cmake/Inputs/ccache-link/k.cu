// Enough live values that a register cap changes the device code.
__global__ void big(float *a, int n) {
  float acc = 0.f;
#pragma unroll
  for (int j = 0; j < 64; ++j) acc += __sinf(a[(threadIdx.x * 7 + j) % n]) * j;
  a[threadIdx.x] = acc;
}
int main() { return 0; }
