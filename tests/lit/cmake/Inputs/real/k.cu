// A kernel with a per-thread accumulator array: real register pressure
// (26 registers on sm_90 at the defaults, so --maxrregcount=24 changes it).
__global__ void accumulate(const float *x, float *y, int n) {
  float acc[16];
#pragma unroll
  for (int k = 0; k < 16; ++k)
    acc[k] = 0.f;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = i; j < n; j += gridDim.x * blockDim.x)
#pragma unroll
    for (int k = 0; k < 16; ++k)
      acc[k] += x[j] * (k + 1);
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < 16; ++k)
    s += acc[k] * acc[(k * 7) % 16];
  if (i < n)
    y[i] = s;
}

int main() {
  accumulate<<<1, 256>>>(nullptr, nullptr, 0);
  return 0;
}
