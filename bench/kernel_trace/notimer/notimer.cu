// A benchmark that prints no time (issue 39): ciq tunes it with the
// kernel_time_ms metric, the GPU time its CUPTI injection measures.
// Each thread runs ILP independent chains of DEPTH dependent FMAs over its
// elements; the total work is fixed, so ILP (an application parameter, -DILP)
// trades threads for independent work per thread: ILP 1 is latency-bound.
// It checks its result against the host (fmaf is exact on both sides) and
// exits 1 on a mismatch; on success it prints nothing, unless run with
// --print-time: then its own timer (CUDA events around each launch, summed)
// prints time_ms=<ms>, for the agreement of kernel_time_ms with it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <vector>

#ifndef ILP
#define ILP 1
#endif
#ifndef BLOCK
#define BLOCK 256
#endif
constexpr int kDepth = 512;
constexpr int kElements = 1 << 22;
constexpr int kLaunches = 10;

__global__ void __launch_bounds__(BLOCK) chains(float *x, float a, float b) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float v[ILP];
#pragma unroll
  for (int j = 0; j < ILP; ++j)
    v[j] = x[t * ILP + j];
  for (int d = 0; d < kDepth; ++d)
#pragma unroll
    for (int j = 0; j < ILP; ++j)
      v[j] = fmaf(v[j], a, b);
#pragma unroll
  for (int j = 0; j < ILP; ++j)
    x[t * ILP + j] = v[j];
}

int main(int argc, char **argv) {
  bool printTime = argc > 1 && !strcmp(argv[1], "--print-time");
  std::vector<float> h(kElements);
  for (int i = 0; i < kElements; ++i)
    h[i] = (i % 97) * 0.01f;
  float *d = nullptr;
  if (cudaMalloc(&d, kElements * sizeof(float)) != cudaSuccess) {
    fprintf(stderr, "notimer: cudaMalloc failed\n");
    return 2;
  }
  const float a = 0.999f, b = 0.001f;
  int threads = kElements / ILP;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float totalMs = 0;
  for (int l = 0; l < kLaunches; ++l) {
    cudaMemcpy(d, h.data(), kElements * sizeof(float), cudaMemcpyHostToDevice);
    cudaEventRecord(start);
    chains<<<threads / BLOCK, BLOCK>>>(d, a, b);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    totalMs += ms;
  }
  std::vector<float> out(kElements);
  if (cudaMemcpy(out.data(), d, kElements * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
    fprintf(stderr, "notimer: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 2;
  }
  for (int i = 0; i < kElements; i += 4099) {
    float v = h[i];
    for (int k = 0; k < kDepth; ++k)
      v = fmaf(v, a, b);
    if (v != out[i]) {
      fprintf(stderr, "notimer: element %d is %.9g, expected %.9g\n", i, out[i], v);
      return 1;
    }
  }
  cudaFree(d);
  if (printTime)
    printf("time_ms=%.6f\n", totalMs);
  return 0;
}
