// Compiles with a front-end warning (unused variable), so the terminal shows compiler output.
__global__ void warns(float *x) {
  int unused = 3;
  x[threadIdx.x] = 1.0f;
}
