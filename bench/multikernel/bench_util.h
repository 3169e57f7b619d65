// Small helpers shared by the example benchmarks: CUDA error checks, the
// "no device" exit, CUDA-event timing and the median of the timed runs.
//
// Exit codes of every example benchmark (ciq reads them as the correctness gate):
//   0  result matches the CPU reference; `time_ms=<median ms>` was printed
//   1  wrong answer (the first mismatch is printed)
//   2  no usable CUDA device, or a CUDA call failed
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace example {

constexpr int kExitWrongAnswer = 1;
constexpr int kExitNoDevice = 2;

// Aborts the benchmark with exit code 2 on any CUDA error, naming the call.
#define EXAMPLE_CUDA_CHECK(call)                                                         \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,          \
                   cudaGetErrorString(err_));                                            \
      std::exit(example::kExitNoDevice);                                                 \
    }                                                                                    \
  } while (0)

// Exits with code 2 and one line when no CUDA device can run the kernel.
inline void requireDevice(const char* bench) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::fprintf(stderr, "%s: no CUDA device available (%s); nothing was measured\n", bench,
                 err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    std::exit(kExitNoDevice);
  }
}

// Median of the samples (ms); the samples are reordered.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Runs `launch` `warmup` times untimed, then times `iters` runs one by one
// with CUDA events; returns the median in ms. `launch` enqueues on stream 0.
template <class Launch>
double timeKernelMs(Launch&& launch, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) launch();
  EXAMPLE_CUDA_CHECK(cudaGetLastError());
  EXAMPLE_CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  EXAMPLE_CUDA_CHECK(cudaEventCreate(&start));
  EXAMPLE_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> samples;
  for (int i = 0; i < iters; ++i) {
    EXAMPLE_CUDA_CHECK(cudaEventRecord(start));
    launch();
    EXAMPLE_CUDA_CHECK(cudaEventRecord(stop));
    EXAMPLE_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    EXAMPLE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    samples.push_back(ms);
  }
  EXAMPLE_CUDA_CHECK(cudaGetLastError());
  EXAMPLE_CUDA_CHECK(cudaEventDestroy(start));
  EXAMPLE_CUDA_CHECK(cudaEventDestroy(stop));
  return median(samples);
}

}  // namespace example
