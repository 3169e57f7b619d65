// Enough live values that --maxrregcount=16 lowers its register count.
__global__ void big(float *a, int n) {
  float acc = 0.f;
#pragma unroll
  for (int j = 0; j < 64; ++j) acc += __sinf(a[(threadIdx.x * 7 + j) % n]) * j;
  a[threadIdx.x] = acc;
}
