// Kernels whose own register limits ptxas keeps over -maxrregcount, and one
// (plain) the cap applies to; lbC keeps its limit silently (ptxas prints
// nothing for it), which makes the unnamed override lines ambiguous.
__global__ void __launch_bounds__(256, 1) lbA(float *a) { a[threadIdx.x] *= 2.f; }
__global__ void plain(float *a) { a[threadIdx.x] *= 3.f; }
__global__ void __launch_bounds__(128, 4) lbB(float *a) { a[threadIdx.x] *= 4.f; }
__global__ void __maxnreg__(40) mx(float *a) { a[threadIdx.x] *= 5.f; }
__global__ void __launch_bounds__(1024) lbC(float *a) { a[threadIdx.x] *= 6.f; }
