// Benchmark of the 25-point 3D star stencil: times one step on a
// 512 x 512 x 256 grid with CUDA events and checks six whole z planes
// (the two border planes, the first and last interior ones and two in the
// middle) against the CPU, with a tolerance that scales with the sum of the
// magnitudes of the 25 terms (any summation order or FMA contraction passes).
//
//   stencil_bench [--iters N] [--warmup N]
//
// Prints `time_ms=<median ms>`; exit 0 correct, 1 wrong answer, 2 no device.
#include "bench_util.h"
#include "stencil_kernel.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int NX = 512, NY = 512, NZ = 256, R = STENCIL_RADIUS;
constexpr size_t kPlane = (size_t)NX * NY;
// 8th-order finite-difference Laplacian weights (centre, then distance 1..4).
const float kCoeff[R + 1] = {3 * -205.0f / 72, 8.0f / 5, -1.0f / 5, 8.0f / 315, -1.0f / 560};

float valueAt(size_t i) {  // deterministic, in [-1, 1)
  uint64_t z = i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (float)(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

// `got` is plane z of the device result.
bool checkPlane(const std::vector<float>& in, const std::vector<float>& got, int z) {
  auto at = [&](int x, int y, int zz) { return (double)in[((size_t)zz * NY + y) * NX + x]; };
  for (int y = 0; y < NY; ++y) {
    for (int x = 0; x < NX; ++x) {
      double want = at(x, y, z), mag = 0;
      const bool interior = x >= R && x < NX - R && y >= R && y < NY - R && z >= R && z < NZ - R;
      if (interior) {
        want = kCoeff[0] * at(x, y, z);
        mag = std::fabs(want);
        for (int r = 1; r <= R; ++r) {
          const double t[6] = {at(x - r, y, z), at(x + r, y, z), at(x, y - r, z),
                               at(x, y + r, z), at(x, y, z - r), at(x, y, z + r)};
          for (double v : t) {
            want += kCoeff[r] * v;
            mag += std::fabs(kCoeff[r] * v);
          }
        }
      }
      const double g = got[(size_t)y * NX + x], tol = 1e-5 * mag + 1e-7;
      if (!(std::fabs(g - want) <= tol)) {  // also catches NaN
        std::fprintf(stderr, "stencil_bench: wrong answer at (x=%d, y=%d, z=%d): got %.7g, expected %.7g (tolerance %.3g)\n",
                     x, y, z, g, want, tol);
        return false;
      }
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 100, warmup = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
  }
  example::requireDevice("stencil_bench");

  std::vector<float> in(kPlane * NZ);
  for (size_t i = 0; i < in.size(); ++i) in[i] = valueAt(i);
  float *din, *dout;
  EXAMPLE_CUDA_CHECK(cudaMalloc(&din, in.size() * sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMalloc(&dout, in.size() * sizeof(float)));
  EXAMPLE_CUDA_CHECK(cudaMemcpy(din, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
  // The kernel writes every interior point and leaves the 4-wide border, so
  // `out` starts as a copy of `in`; an interior point it missed would keep
  // in(x,y,z), which differs from the stencil value and fails the check.
  EXAMPLE_CUDA_CHECK(cudaMemcpy(dout, din, in.size() * sizeof(float), cudaMemcpyDeviceToDevice));
  EXAMPLE_CUDA_CHECK(setStencilCoefficients(kCoeff));

  const double ms =
      example::timeKernelMs([&] { EXAMPLE_CUDA_CHECK(launchStencil(din, dout, NX, NY, NZ)); }, warmup, iters);

  std::vector<float> got(kPlane);
  for (int z : {0, R, R + 1, NZ / 2, NZ - R - 1, NZ - 1}) {
    EXAMPLE_CUDA_CHECK(cudaMemcpy(got.data(), dout + z * kPlane, kPlane * sizeof(float), cudaMemcpyDeviceToHost));
    if (!checkPlane(in, got, z)) return example::kExitWrongAnswer;
  }
  cudaFree(din);
  cudaFree(dout);

  const double gbs = 2.0 * in.size() * sizeof(float) / (ms * 1e6);
  std::printf("stencil 25-point %dx%dx%d (%s): %.1f GB/s effective\n", NX, NY, NZ, stencilParameters(), gbs);
  std::printf("time_ms=%.6f\n", ms);
  return 0;
}
