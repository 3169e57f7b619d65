// Landscape kernel: a register-heavy template kernel. Each thread keeps a
// TILE_M x TILE_N tile of accumulators of type SCALAR in registers (an
// outer-product update per step), so registers and spills grow with the tile
// and with double precision; --maxrregcount then trades registers for spills.
// A tile of more than 128 accumulators is refused with #error: those points
// are INVALID (compile_error), which the strategies must learn to avoid.
#ifndef TILE_M
#define TILE_M 8
#endif
#ifndef TILE_N
#define TILE_N 8
#endif
#ifndef SCALAR
#define SCALAR float
#endif

#if TILE_M * TILE_N > 128
#error "TILE_M x TILE_N over 128 accumulators per thread: choose a smaller tile"
#endif

template <int TM, int TN, typename T>
__global__ void outerAccumulate(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int k,
                                int ld) {
  T acc[TM][TN] = {};
  const int row = (blockIdx.y * blockDim.y + threadIdx.y) * TM;
  const int col = (blockIdx.x * blockDim.x + threadIdx.x) * TN;
  for (int kk = 0; kk < k; ++kk) {
    T ra[TM], rb[TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) ra[i] = a[(size_t)kk * ld + row + i];
#pragma unroll
    for (int j = 0; j < TN; ++j) rb[j] = b[(size_t)kk * ld + col + j];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) acc[i][j] += ra[i] * rb[j];
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) c[(size_t)(row + i) * ld + col + j] = acc[i][j];
}

template __global__ void outerAccumulate<TILE_M, TILE_N, SCALAR>(const SCALAR* __restrict__, const SCALAR* __restrict__,
                                                                 SCALAR* __restrict__, int, int);
