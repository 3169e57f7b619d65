// Does not compile: the error text and exit status must reach the user unchanged.
__global__ void broken(float *x) { x[threadIdx.x] = undefined_name; }
