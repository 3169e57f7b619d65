// A device function in its own translation unit that keeps many values live.
__device__ float heavy(const float *x, int n) {
  float acc[48];
#pragma unroll
  for (int i = 0; i < 48; ++i) acc[i] = x[(i * 7) % n];
  float s = 0;
  for (int r = 0; r < n; ++r) {
#pragma unroll
    for (int i = 0; i < 48; ++i) { acc[i] = acc[i] * acc[(i + 5) % 48] + x[(r + i) % n]; }
  }
#pragma unroll
  for (int i = 0; i < 48; ++i) s += acc[i];
  return s;
}
