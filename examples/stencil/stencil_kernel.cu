// Example between memory- and compute-bound: one step of a 25-point,
// 8th-order 3D star stencil (radius 4 on each axis), as in seismic wave
// propagation:
//
//   out(x,y,z) = c0 * in(x,y,z) + sum_{r=1..4} c_r * (the 6 points at distance r)
//
// on interior points; points within 4 of a face are copied. Each thread owns
// one (x, y) column and marches along z, keeping the 9 z-neighbours in a
// register queue; each xy plane is staged with its halo through shared
// memory. BLOCK_X x BLOCK_Y is the tile of columns per block and Z_CHUNKS
// splits the z range over that many blocks (more parallelism, more halo
// re-reads). These defines are application parameters ciq co-tunes with the
// compiler controls (space.yaml); the defaults below are the baseline build.
#include "stencil_kernel.h"

#ifndef BLOCK_X
#define BLOCK_X 32  // threads along x (the contiguous axis): 16, 32, 64 or 128
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 8  // threads along y: 2, 4, 8 or 16
#endif
#ifndef Z_CHUNKS
#define Z_CHUNKS 1  // blocks along z, each marching over 1 / Z_CHUNKS of the interior: 1, 2, 4 or 8
#endif

static_assert(BLOCK_X * BLOCK_Y <= 1024, "BLOCK_X * BLOCK_Y must be at most 1024 threads");
static_assert(Z_CHUNKS >= 1, "Z_CHUNKS must be at least 1");

namespace {

constexpr int R = STENCIL_RADIUS;
__constant__ float coeff[R + 1];

// Loads plane z of the tile plus its R-wide halo into shared memory, with
// zeros outside the grid (those only feed outputs that are not written).
__device__ void loadPlane(float (*tile)[BLOCK_X + 2 * R], const float* __restrict__ in, int nx, int ny, int z,
                          int x0, int y0) {
  for (int j = threadIdx.y; j < BLOCK_Y + 2 * R; j += BLOCK_Y) {
    const int y = y0 + j - R;
    for (int i = threadIdx.x; i < BLOCK_X + 2 * R; i += BLOCK_X) {
      const int x = x0 + i - R;
      tile[j][i] = (x >= 0 && x < nx && y >= 0 && y < ny) ? in[((size_t)z * ny + y) * nx + x] : 0.0f;
    }
  }
}

__global__ void __launch_bounds__(BLOCK_X* BLOCK_Y)
    star25(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz) {
  __shared__ float tile[BLOCK_Y + 2 * R][BLOCK_X + 2 * R];
  const int x0 = blockIdx.x * BLOCK_X, y0 = blockIdx.y * BLOCK_Y;
  const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
  const bool writes = x >= R && x < nx - R && y >= R && y < ny - R;
  const size_t plane = (size_t)nx * ny;
  const size_t column = (size_t)y * nx + x;
  const bool inGrid = x < nx && y < ny;

  // This block's share of the interior z range [R, nz - R).
  const int interior = nz - 2 * R;
  const int zBegin = R + (int)((long long)interior * blockIdx.z / Z_CHUNKS);
  const int zEnd = R + (int)((long long)interior * (blockIdx.z + 1) / Z_CHUNKS);
  if (zBegin >= zEnd) return;  // uniform per block: no barrier is skipped by part of it

  // behind[i] = in(z - 1 - i), infront[i] = in(z + 1 + i)
  float behind[R], infront[R];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    behind[i] = inGrid ? in[(zBegin - 1 - i) * plane + column] : 0.0f;
    infront[i] = inGrid ? in[(zBegin + 1 + i) * plane + column] : 0.0f;
  }

  for (int z = zBegin; z < zEnd; ++z) {
    if (z > zBegin) {
#pragma unroll
      for (int i = R - 1; i > 0; --i) behind[i] = behind[i - 1];
      behind[0] = tile[threadIdx.y + R][threadIdx.x + R];  // the previous plane's centre
#pragma unroll
      for (int i = 0; i < R - 1; ++i) infront[i] = infront[i + 1];
      infront[R - 1] = inGrid ? in[(z + R) * plane + column] : 0.0f;
    }
    __syncthreads();  // the previous plane's tile is no longer read
    loadPlane(tile, in, nx, ny, z, x0, y0);
    __syncthreads();

    const int tx = threadIdx.x + R, ty = threadIdx.y + R;
    float v = coeff[0] * tile[ty][tx];
#pragma unroll
    for (int r = 1; r <= R; ++r)
      v += coeff[r] * ((tile[ty][tx - r] + tile[ty][tx + r]) + (tile[ty - r][tx] + tile[ty + r][tx]) +
                       (behind[r - 1] + infront[r - 1]));
    if (writes) out[z * plane + column] = v;
  }
}

}  // namespace

cudaError_t setStencilCoefficients(const float* c) {
  return cudaMemcpyToSymbol(coeff, c, sizeof(float) * (R + 1));
}

cudaError_t launchStencil(const float* in, float* out, int nx, int ny, int nz, cudaStream_t stream) {
  const dim3 block(BLOCK_X, BLOCK_Y);
  const dim3 grid((nx + BLOCK_X - 1) / BLOCK_X, (ny + BLOCK_Y - 1) / BLOCK_Y, Z_CHUNKS);
  star25<<<grid, block, 0, stream>>>(in, out, nx, ny, nz);
  return cudaGetLastError();
}

const char* stencilParameters() {
#define STENCIL_STR2(x) #x
#define STENCIL_STR(x) STENCIL_STR2(x)
  return "BLOCK_X=" STENCIL_STR(BLOCK_X) " BLOCK_Y=" STENCIL_STR(BLOCK_Y) " Z_CHUNKS=" STENCIL_STR(Z_CHUNKS);
}
