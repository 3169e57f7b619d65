// Host entry points of the register-blocked SGEMM of gemm_kernel.cu.
#pragma once

#include <cuda_runtime.h>

// C (m x n) = A (m x k) * B (k x n); row-major device pointers. Returns the
// launch error, if any (the kernel runs asynchronously on `stream`).
cudaError_t launchSgemm(int m, int n, int k, const float* a, const float* b, float* c, cudaStream_t stream = 0);

// The application parameters this translation unit was compiled with, for the log.
const char* gemmParameters();
