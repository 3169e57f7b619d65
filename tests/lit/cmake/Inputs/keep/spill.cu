// 32 live accumulators under __launch_bounds__(1024, 2), which caps ptxas at
// 32 registers per thread on sm_90: the default compile spills, and a
// per-kernel .maxnreg or .minnctapersm can lift the cap.
__global__ void __launch_bounds__(1024, 2) spill_sum(const float *__restrict__ a, float *__restrict__ out, int n) {
  float acc[32];
#pragma unroll
  for (int j = 0; j < 32; ++j) acc[j] = a[(threadIdx.x + j * 97) % n];
  for (int i = 0; i < n; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) acc[j] = acc[j] * a[(i + j) % n] + acc[(j + 1) % 32];
  }
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 32; ++j) s += acc[j] * j;
  out[threadIdx.x] = s;
}
