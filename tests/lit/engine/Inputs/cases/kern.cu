// The kernel the stand-in embeds, and the host function the candidate's
// -DTILE reaches.
#ifndef TILE
#define TILE 1
#endif

__global__ void scale(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= TILE;
}

extern "C" int cases_tile() { return TILE; }
