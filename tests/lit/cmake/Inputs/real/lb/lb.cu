// Every kernel has __launch_bounds__ with a thread count whose own register
// limit ptxas keeps over a global --maxrregcount (ptxas -v: "Overriding
// global maxrregcount 24 with entry-specific value ... computed using thread
// count"). The accumulator makes the register count a real choice.
template <int N> __device__ float work(const float *x, int n) {
  float acc[N];
#pragma unroll
  for (int k = 0; k < N; ++k)
    acc[k] = 0.f;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = i; j < n; j += gridDim.x * blockDim.x)
#pragma unroll
    for (int k = 0; k < N; ++k)
      acc[k] += x[j] * (k + 1);
  float s = 0.f;
#pragma unroll
  for (int k = 0; k < N; ++k)
    s += acc[k] * acc[(k * 7) % N];
  return s;
}

__global__ void __launch_bounds__(256, 1) wide(const float *x, float *y, int n) { y[0] = work<16>(x, n); }
__global__ void __launch_bounds__(128, 4) narrow(const float *x, float *y, int n) { y[1] = work<12>(x, n); }

int main() {
  wide<<<1, 256>>>(nullptr, nullptr, 0);
  narrow<<<1, 128>>>(nullptr, nullptr, 0);
  return 0;
}
