// Benchmark of the all-pairs n-body accelerations (65613 bodies): times them
// with CUDA events and checks 512 bodies spread over the array against a
// double-precision CPU sum, with a tolerance that scales with the sum of the
// magnitudes of the terms (rsqrtf, FMA contraction and --use_fast_math pass;
// a missing or wrong body does not).
//
//   nbody_bench [--iters N] [--warmup N]
//
// Prints `time_ms=<median ms>`; exit 0 correct, 1 wrong answer, 2 no device.
#include "bench_util.h"
#include "nbody_kernel.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kBodies = 65536 + 77;  // not a multiple of the 256-body tile
constexpr float kSoftening = 0.01f;

float unitAt(uint64_t i) {  // deterministic, in [0, 1) (splitmix64 finaliser)
  uint64_t z = i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (float)(z >> 40) * (1.0f / 16777216.0f);
}

bool checkBody(const std::vector<float4>& bodies, const std::vector<float4>& acc, int i) {
  double a[3] = {0, 0, 0}, mag[3] = {0, 0, 0};
  const float4 p = bodies[i];
  for (const float4& o : bodies) {
    const double d[3] = {(double)o.x - p.x, (double)o.y - p.y, (double)o.z - p.z};
    const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + (double)kSoftening * kSoftening;
    const double s = o.w / (r2 * std::sqrt(r2));
    for (int c = 0; c < 3; ++c) {
      a[c] += d[c] * s;
      mag[c] += std::fabs(d[c] * s);
    }
  }
  const double got[3] = {acc[i].x, acc[i].y, acc[i].z};
  for (int c = 0; c < 3; ++c) {
    const double tol = 1e-4 * mag[c] + 1e-6;
    if (!(std::fabs(got[c] - a[c]) <= tol)) {  // also catches NaN
      std::fprintf(stderr, "nbody_bench: wrong answer for body %d, axis %c: got %.7g, expected %.7g (tolerance %.3g)\n",
                   i, "xyz"[c], got[c], a[c], tol);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 20, warmup = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::atoi(argv[i + 1]);
  }
  example::requireDevice("nbody_bench");

  std::vector<float4> bodies(kBodies), acc(kBodies);
  for (int i = 0; i < kBodies; ++i)
    bodies[i] = make_float4(2 * unitAt(4 * i) - 1, 2 * unitAt(4 * i + 1) - 1, 2 * unitAt(4 * i + 2) - 1,
                            0.5f + unitAt(4 * i + 3));
  float4 *dbodies, *dacc;
  EXAMPLE_CUDA_CHECK(cudaMalloc(&dbodies, kBodies * sizeof(float4)));
  EXAMPLE_CUDA_CHECK(cudaMalloc(&dacc, kBodies * sizeof(float4)));
  EXAMPLE_CUDA_CHECK(cudaMemcpy(dbodies, bodies.data(), kBodies * sizeof(float4), cudaMemcpyHostToDevice));
  EXAMPLE_CUDA_CHECK(cudaMemset(dacc, 0xff, kBodies * sizeof(float4)));  // NaN: unwritten bodies fail

  const double ms = example::timeKernelMs(
      [&] { EXAMPLE_CUDA_CHECK(launchAccelerations(dbodies, dacc, kBodies, kSoftening)); }, warmup, iters);
  EXAMPLE_CUDA_CHECK(cudaMemcpy(acc.data(), dacc, kBodies * sizeof(float4), cudaMemcpyDeviceToHost));
  cudaFree(dbodies);
  cudaFree(dacc);

  for (int k = 0; k < 512; ++k)
    if (!checkBody(bodies, acc, (int)((int64_t)k * (kBodies - 1) / 511))) return example::kExitWrongAnswer;
  std::printf("nbody %d bodies: %.1f G interactions/s\n", kBodies, (double)kBodies * kBodies / (ms * 1e6));
  std::printf("time_ms=%.6f\n", ms);
  return 0;
}
