// Host entry points of the two-pass float sum of reduce_kernel.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

// Number of pass-1 blocks (and partial sums) for a device with `smCount` SMs.
int reducePartialCount(int smCount);

// *out = sum of in[0..n); `partials` holds `partialCount` floats of scratch.
// All pointers are device pointers; `in` must be 16-byte aligned (cudaMalloc is).
cudaError_t launchReduceSum(const float* in, size_t n, float* partials, int partialCount, float* out,
                            cudaStream_t stream = 0);

// The application parameters this translation unit was compiled with, for the log.
const char* reduceParameters();
