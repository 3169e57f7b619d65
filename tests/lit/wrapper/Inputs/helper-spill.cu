// A kernel whose __noinline__ device function spills under a register
// limit (-maxrregcount=24): ptxas reports the spills under the helper's own
// "Function properties", not the kernel's.
__device__ __noinline__ float helper(float *p, int n) {
  float a[24];
#pragma unroll
  for (int i = 0; i < 24; ++i)
    a[i] = p[i * n];
  float s = 0;
#pragma unroll
  for (int i = 0; i < 24; ++i)
#pragma unroll
    for (int j = 0; j < 24; ++j)
      s += a[i] * a[j] * (float)(i ^ j);
  return s;
}

__global__ void k(float *p, int n) { p[threadIdx.x] = helper(p, n); }

// On sm_80 only: an instruction ptxas rejects, so a two-architecture compile
// succeeds in ptxas for sm_90 and then fails for sm_80.
__global__ void only90(float *p) {
#if defined(CIQ_BREAK_SM80) && __CUDA_ARCH__ == 800
  asm volatile("not.an.instruction;");
#endif
  p[0] = 1;
}
