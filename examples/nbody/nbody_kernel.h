// Host entry point of the all-pairs n-body accelerations of nbody_kernel.cu.
#pragma once

#include <cuda_runtime.h>

// acc[i].xyz = sum over j of m_j (p_j - p_i) / (|p_j - p_i|^2 + softening^2)^(3/2),
// for bodies[i] = (x, y, z, mass); device pointers, n bodies. acc[i].w = 0.
cudaError_t launchAccelerations(const float4* bodies, float4* acc, int n, float softening,
                                cudaStream_t stream = 0);
