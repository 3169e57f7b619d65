// A kernel ptxas compiles (the tune's receipts) and a host function the
// benchmark calls through the shared library.
__global__ void scale(float *y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] *= a;
}

extern "C" int kern_answer() { return 42; }
