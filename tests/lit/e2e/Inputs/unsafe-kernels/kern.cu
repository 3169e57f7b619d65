// Three kernels, each with what makes some per-kernel directive unsafe or
// refused (docs/search-space.md, "Per-kernel controls"):
//  warp_specialized  reconfigures its registers with setmaxnreg (sm_90a);
//  own_cap           __maxnreg__(40) in the source, and it spills there;
//  dyn_smem          dynamic shared memory, spilling under __launch_bounds__.
#define WORK(N)                                                                                                        \
  float acc[N];                                                                                                        \
  _Pragma("unroll") for (int k = 0; k < N; ++k) acc[k] = in[(i + k * 37) % n];                                         \
  for (int r = 0; r < n; ++r) {                                                                                        \
    _Pragma("unroll") for (int k = 0; k < N; ++k) acc[k] = acc[k] * acc[(k + 7) % N] + in[(r + k) % n];                \
  }                                                                                                                    \
  float s = 0;                                                                                                         \
  _Pragma("unroll") for (int k = 0; k < N; ++k) s += acc[k];

__global__ void __launch_bounds__(384, 1) warp_specialized(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x >= 128)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
  else
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
  WORK(48)
  out[i] = s;
}

__global__ void __maxnreg__(40) own_cap(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  WORK(64)
  out[i] = s;
}

__global__ void __launch_bounds__(256, 3) dyn_smem(const float *in, float *out, int n) {
  extern __shared__ float tile[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i % n];
  __syncthreads();
  WORK(96)
  out[i] = s + tile[(threadIdx.x + 1) % blockDim.x];
}

void launch(const float *in, float *out, int n) {
  warp_specialized<<<1, 384>>>(in, out, n);
  own_cap<<<1, 128>>>(in, out, n);
  dyn_smem<<<1, 256, 256 * sizeof(float)>>>(in, out, n);
}
