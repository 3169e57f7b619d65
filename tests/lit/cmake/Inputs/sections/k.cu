// Many values live at once: the default compile uses more registers than
// the caps the tests' spaces give, so each section's cap shows in its SASS.
__global__ void k(const float *in, float *out, int n) {
  float acc[40];
#pragma unroll
  for (int i = 0; i < 40; ++i)
    acc[i] = in[threadIdx.x + i * n];
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int i = 0; i < 40; ++i)
      acc[i] = acc[i] * acc[(i + r + 1) % 40] + 1.0f;
  float s = 0;
#pragma unroll
  for (int i = 0; i < 40; ++i)
    s += acc[i] * (float)(i + 1);
  out[threadIdx.x] = s;
}
int main() { return 0; }
