#ifndef TILE
#define TILE 16
#endif
#ifndef VEC
#define VEC 4
#endif
__global__ void k(float *x) { x[threadIdx.x * TILE] *= VEC; }
int main() { return 0; }
