// A target ciq is not asked about: its build must not change.
__global__ void scale(float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] *= 0.5f;
}

int main() { return 0; }
