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

#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef PAD
#define PAD 0
#endif

extern "C" int cases_tile() { return TILE; }
// cases-minimize.test: UNROLL 2 speeds up case large only; PAD changes nothing.
extern "C" int cases_unroll() { return UNROLL + 0 * PAD; }
