// Runs both kernels once; prints time_ms=<ms> as the module's default
// METRIC_REGEX expects. Needs a GPU to run; the tests only build it.
#include "kern.h"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

int main(int argc, char **argv) {
  int n = argc > 2 ? std::atoi(argv[2]) : 1 << 20;
  float *x = nullptr, *y = nullptr;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaMalloc(&y, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "bench: no CUDA device\n");
    return 1;
  }
  auto t0 = std::chrono::steady_clock::now();
  launchSaxpy(2.f, x, y, n);
  launchAccumulate(x, y, n);
  cudaDeviceSynchronize();
  auto t1 = std::chrono::steady_clock::now();
  std::printf("time_ms=%f\n", std::chrono::duration<double, std::milli>(t1 - t0).count());
  return 0;
}
