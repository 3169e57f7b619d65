// Host entry point of the register-blocked SGEMM of spill_kernel.cu.
#pragma once

#include <cuda_runtime.h>

// C (m x n) = alpha * A (m x k) * B (k x n) + beta * C; row-major, device pointers.
// Returns the launch error, if any (the kernel runs asynchronously on `stream`).
cudaError_t launch_sgemm_blocked(int m, int n, int k, float alpha, const float* a, const float* b,
                                 float beta, float* c, cudaStream_t stream = 0);
