// Two kernels with __launch_bounds__: `both` in the PTX of every
// architecture, `hopper_only` in sm_90's (and later) only, as code written
// for one GPU generation is (the host pass still sees it, to launch it).
__global__ void __launch_bounds__(128, 2) both(float *x) { x[threadIdx.x] *= 2.0f; }
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
__global__ void __launch_bounds__(128, 2) hopper_only(float *x) { x[threadIdx.x] += 1.0f; }
#endif
