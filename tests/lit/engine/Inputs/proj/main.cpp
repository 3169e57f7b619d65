// Runs the kernel once on a GPU and prints a checksum (a build-only test
// project: the engine's lit tests tune compile metrics and never run it).
#include "kern.h"

#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

int main() {
  const int n = 1 << 16;
  std::vector<float> host(n, 1.0f);
  float *in = nullptr, *out = nullptr;
  if (cudaMalloc(&in, n * sizeof(float)) != cudaSuccess || cudaMalloc(&out, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "no CUDA device\n");
    return 2;
  }
  cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  launch_window_sum(in, out, n);
  cudaMemcpy(host.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost);
  double sum = 0;
  for (float v : host)
    sum += v;
  std::printf("checksum=%.6g\n", sum);
  return 0;
}
