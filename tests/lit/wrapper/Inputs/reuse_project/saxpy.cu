extern __device__ float scaled(float v, float a);
__global__ void saxpy(float *y, const float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = scaled(x[i], a) + y[i];
}
void launchSaxpy(float *y, const float *x, float a, int n) { saxpy<<<(n + 255) / 256, 256>>>(y, x, a, n); }
