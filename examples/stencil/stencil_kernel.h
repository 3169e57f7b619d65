// Host entry points of the 25-point 3D star stencil of stencil_kernel.cu.
#pragma once

#include <cuda_runtime.h>

#define STENCIL_RADIUS 4

// Sets c[0..STENCIL_RADIUS]: the centre weight, then the weight of distance 1..4.
cudaError_t setStencilCoefficients(const float* c);

// One stencil step from `in` to `out` (nx * ny * nz floats each, x fastest;
// device pointers). Writes interior points only: copy the 4-wide border of
// `in` into `out` once beforehand.
cudaError_t launchStencil(const float* in, float* out, int nx, int ny, int nz, cudaStream_t stream = 0);

// The application parameters this translation unit was compiled with, for the log.
const char* stencilParameters();
