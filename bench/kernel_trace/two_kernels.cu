// Two kernels of different cost, launched several times, timed by the
// program's own CUDA events (bench/kernel_trace_gpu.sh): the per-kernel table
// of a traced run must show both, with launch counts 10 and 10, and their
// summed GPU time close to the program's own figure.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void axpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}

template <int Steps> __global__ void heavy(int n, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = y[i];
  for (int s = 0; s < Steps; ++s)
    v = v * 0.999f + 0.001f * __sinf(v);
  y[i] = v;
}

int main() {
  const int n = 1 << 22, launches = 10;
  float *x, *y;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&y, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "two_kernels: no CUDA device\n");
    return 2;
  }
  cudaMemset(x, 0, n * sizeof(float));
  cudaMemset(y, 0, n * sizeof(float));
  axpy<<<(n + 255) / 256, 256>>>(n, 2.f, x, y); // warm-up, not timed
  heavy<256><<<(n + 255) / 256, 256>>>(n, y);
  cudaDeviceSynchronize();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a);
  for (int i = 0; i < launches; ++i) {
    axpy<<<(n + 255) / 256, 256>>>(n, 2.f, x, y);
    heavy<256><<<(n + 255) / 256, 256>>>(n, y);
  }
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  std::printf("time_ms=%.6f\n", ms);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
