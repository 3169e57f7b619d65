// Device code only: no kernel, so ptxas reports no architecture for it.
__device__ float helper(float x) { return __sinf(x) * 3.f + 1.f; }
