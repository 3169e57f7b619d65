// Built with -G (device debug): ptxas takes it at --opt-level=0 only.
__global__ void traced(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = out[i] * 2.0f + 1.0f;
}
