// A device function the other translation unit calls (relocatable device code).
__device__ float scaled(float v, float a) { return a * v * v + 1.0f / (v + a); }
__global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = scaled(x[i], a);
}
