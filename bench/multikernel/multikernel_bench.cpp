// Benchmark of the three kernels of multikernel.cu: launches the ones named
// on the command line, times them with CUDA events, checks their results
// against the CPU, and prints each kernel's median and the median of their
// sum per iteration.
//
//   multikernel_bench [--kernels gemm,walk,poly] [--gemm-n N] [--walk-queries N]
//                     [--walk-nodes N] [--poly-n N] [--iters N] [--warmup N]
//
//   gemm   sgemm_tiled: C = A B, N x N (default 2048)                 spills
//   walk   node_walk: N queries (default 65536), one warp each, over a table
//          of --walk-nodes nodes of 32 keys (a power of two, default 2^19:
//          64 MiB)                                                   latency-bound
//   poly   poly_stream: y = p(x) over N floats (default 2^26)        memory-bound
//
// Prints `<kernel>_ms=<median>` per kernel and `time_ms=<median ms>` (one
// iteration launches every kernel named, in that order); exit 0 correct,
// 1 wrong answer or bad arguments, 2 no device or a CUDA error.
#include "bench_util.h"
#include "multikernel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace multikernel;

struct Options {
  std::vector<std::string> kernels{"gemm", "walk", "poly"};
  int gemmN = 2048;
  int walkQueries = 65536;
  long walkNodes = 1L << 19;
  long polyN = 1L << 26;
  int iters = 10;
  int warmup = 2;
};

[[noreturn]] void usage(const char *why) {
  std::fprintf(stderr,
               "multikernel_bench: %s\nusage: multikernel_bench [--kernels gemm,walk,poly] [--gemm-n N] "
               "[--walk-queries N] [--walk-nodes N] [--poly-n N] [--iters N] [--warmup N]\n",
               why);
  std::exit(example::kExitWrongAnswer);
}

long positive(const char *name, const char *value, long max) {
  char *end = nullptr;
  const long v = std::strtol(value, &end, 10);
  if (!*value || *end || v <= 0 || v > max)
    usage((std::string(name) + ": expected a positive integer, got '" + value + "'").c_str());
  return v;
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc)
      usage((a + " needs a value").c_str());
    const char *v = argv[++i];
    if (a == "--kernels") {
      o.kernels.clear();
      std::string list = v;
      for (size_t p = 0; p <= list.size();) {
        const size_t q = std::min(list.find(',', p), list.size());
        const std::string k = list.substr(p, q - p);
        if (k != "gemm" && k != "walk" && k != "poly")
          usage(("unknown kernel '" + k + "' (gemm, walk, poly)").c_str());
        o.kernels.push_back(k);
        p = q + 1;
      }
    } else if (a == "--gemm-n")
      o.gemmN = (int)positive("--gemm-n", v, 16384);
    else if (a == "--walk-queries")
      o.walkQueries = (int)positive("--walk-queries", v, 1 << 24);
    else if (a == "--walk-nodes")
      o.walkNodes = positive("--walk-nodes", v, 1L << 24);
    else if (a == "--poly-n")
      o.polyN = positive("--poly-n", v, 1L << 30);
    else if (a == "--iters")
      o.iters = (int)positive("--iters", v, 100000);
    else if (a == "--warmup")
      o.warmup = (int)std::strtol(v, nullptr, 10);
    else
      usage(("unknown option " + a).c_str());
  }
  if (o.walkNodes & (o.walkNodes - 1))
    usage("--walk-nodes: expected a power of two");
  const long polyUnit = 4L * kPolyItems * 256;
  if (o.polyN % polyUnit)
    usage(("--poly-n: expected a multiple of " + std::to_string(polyUnit)).c_str());
  return o;
}

// --- CPU checks: each recomputes inputs from their index (mix32) ------------------

// The rows of C the check reads: the first, one past the middle, the last.
std::vector<int> gemmRows(int n) { return n > 2 ? std::vector<int>{0, n / 2 + 1, n - 1} : std::vector<int>{0}; }

// rows: the rows gemmRows(n) names, one after another.
bool checkGemm(int n, const std::vector<float> &rows) {
  std::vector<float> b((size_t)n * n);
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = unitFloat((uint32_t)i, 2);
  std::vector<double> sum(n), mag(n);
  const std::vector<int> which = gemmRows(n);
  for (size_t r = 0; r < which.size(); ++r) {
    const int row = which[r];
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(mag.begin(), mag.end(), 0.0);
    for (int k = 0; k < n; ++k) {
      const double aik = unitFloat((uint32_t)((size_t)row * n + k), 1);
      const float *bk = &b[(size_t)k * n];
      for (int j = 0; j < n; ++j) {
        sum[j] += aik * bk[j];
        mag[j] += std::fabs(aik * bk[j]);
      }
    }
    for (int j = 0; j < n; ++j) {
      const double got = rows[r * n + j], tol = 1e-4 * mag[j] + 1e-6;
      if (!(std::fabs(got - sum[j]) <= tol)) { // also catches NaN
        std::fprintf(stderr, "multikernel_bench: gemm: wrong answer at C[%d][%d]: got %.7g, expected %.7g\n", row, j,
                     got, sum[j]);
        return false;
      }
    }
  }
  return true;
}

uint32_t cpuWalk(uint32_t q, uint32_t mask) {
  const uint32_t key = walkKey(q);
  uint32_t node = walkStart(q, mask);
  for (int s = 0; s < kWalkSteps; ++s) {
    uint32_t below = 0;
    for (uint32_t lane = 0; lane < 32; ++lane)
      below += mix32((node * 32u + lane) ^ kNodeSeed) <= key;
    node = walkNext(node, below, mask);
  }
  return node;
}

double cpuRefine(uint32_t node, int lane, double &mag) {
  double acc[8][8] = {}, accMag[8][8] = {};
  for (int t = 0; t < 16; ++t)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j) {
        const double p = (double)unitFloat((uint32_t)((t * 16 + i + lane) & (kCoefCount - 1)), kCoefStream) *
                         unitFloat((uint32_t)((t * 16 + 8 + j + (node & 7u)) & (kCoefCount - 1)), kCoefStream);
        acc[i][j] += p;
        accMag[i][j] += std::fabs(p);
      }
  double s = 0;
  mag = 0;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) {
      s += (i * 8 + j + 1) * acc[i][j];
      mag += (i * 8 + j + 1) * accMag[i][j];
    }
  return s;
}

bool checkWalk(int queries, uint32_t mask, const std::vector<uint32_t> &leaf, const std::vector<float> &extra) {
  int rare = 0;
  for (int q = 0; q < queries; ++q) {
    const bool sampled = q % 127 == 0 || q == queries - 1;
    if (!sampled && !rareLeaf(leaf[q]))
      continue;
    const uint32_t want = cpuWalk((uint32_t)q, mask);
    if (leaf[q] != want) {
      std::fprintf(stderr, "multikernel_bench: walk: wrong answer for query %d: leaf %u, expected %u\n", q, leaf[q],
                   want);
      return false;
    }
    if (!rareLeaf(want)) {
      if (!std::isnan(extra[(size_t)q * 32])) { // the refinement ran where it should not have
        std::fprintf(stderr, "multikernel_bench: walk: query %d wrote a refinement its leaf does not ask for\n", q);
        return false;
      }
      continue;
    }
    ++rare;
    for (int lane = 0; lane < 32; ++lane) {
      double mag = 0;
      const double ref = cpuRefine(want, lane, mag), got = extra[(size_t)q * 32 + lane];
      if (!(std::fabs(got - ref) <= 1e-5 * mag + 1e-6)) {
        std::fprintf(stderr,
                     "multikernel_bench: walk: wrong refinement for query %d lane %d: got %.7g, expected %.7g\n", q,
                     lane, got, ref);
        return false;
      }
    }
  }
  if (rare == 0 && queries >= 4096) {
    std::fprintf(stderr, "multikernel_bench: walk: no query reached a leaf that asks for the refinement\n");
    return false;
  }
  return true;
}

// The parts of y copied back and checked: three runs of kPolyChunk floats
// (the first, one in the middle, the last; only the first when y is shorter).
constexpr long kPolyChunk = 65536;

std::vector<long> polyChunks(long n) {
  if (n <= 3 * kPolyChunk)
    return {0};
  return {0, (n / 2) & ~(kPolyChunk - 1), n - kPolyChunk};
}

// chunk: y[offset, offset + chunk.size()).
bool checkPoly(long offset, const std::vector<float> &chunk) {
  for (long s = 0; s < (long)chunk.size(); ++s) {
    const long i = offset + s;
    const double x = unitFloat((uint32_t)i, 3);
    double r = polyCoef(0), mag = std::fabs(polyCoef(0));
    for (int k = 1; k <= kPolyDegree; ++k) {
      r = r * x + polyCoef(k);
      mag = mag * std::fabs(x) + std::fabs(polyCoef(k));
    }
    if (!(std::fabs(chunk[s] - r) <= 1e-5 * mag + 1e-6)) {
      std::fprintf(stderr, "multikernel_bench: poly: wrong answer at y[%ld]: got %.7g, expected %.7g\n", i, chunk[s],
                   r);
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);
  example::requireDevice("multikernel_bench");
  auto wants = [&](const char *k) {
    for (const auto &s : o.kernels)
      if (s == k)
        return true;
    return false;
  };

  // Inputs are made on the device (fill kernels), outputs copied back for the check.
  const size_t gemmElems = wants("gemm") ? (size_t)o.gemmN * o.gemmN : 0;
  const size_t nodeElems = wants("walk") ? (size_t)o.walkNodes * 32 : 0;
  const size_t walkOut = wants("walk") ? (size_t)o.walkQueries : 0;
  const size_t polyElems = wants("poly") ? (size_t)o.polyN : 0;
  float *a = nullptr, *b = nullptr, *c = nullptr, *coef = nullptr, *extra = nullptr, *x = nullptr, *y = nullptr;
  uint32_t *nodes = nullptr, *leaf = nullptr;
  if (gemmElems) {
    EXAMPLE_CUDA_CHECK(cudaMalloc(&a, gemmElems * sizeof(float)));
    EXAMPLE_CUDA_CHECK(cudaMalloc(&b, gemmElems * sizeof(float)));
    EXAMPLE_CUDA_CHECK(cudaMalloc(&c, gemmElems * sizeof(float)));
    EXAMPLE_CUDA_CHECK(launchFillFloats(a, gemmElems, 1));
    EXAMPLE_CUDA_CHECK(launchFillFloats(b, gemmElems, 2));
  }
  if (nodeElems) {
    EXAMPLE_CUDA_CHECK(cudaMalloc(&nodes, nodeElems * sizeof(uint32_t)));
    EXAMPLE_CUDA_CHECK(cudaMalloc(&coef, kCoefCount * sizeof(float)));
    EXAMPLE_CUDA_CHECK(cudaMalloc(&leaf, walkOut * sizeof(uint32_t)));
    EXAMPLE_CUDA_CHECK(cudaMalloc(&extra, walkOut * 32 * sizeof(float)));
    EXAMPLE_CUDA_CHECK(cudaMemset(extra, 0xff, walkOut * 32 * sizeof(float))); // NaN: no refinement
    EXAMPLE_CUDA_CHECK(launchFillNodes(nodes, (uint32_t)o.walkNodes));
    EXAMPLE_CUDA_CHECK(launchFillFloats(coef, kCoefCount, kCoefStream));
  }
  if (polyElems) {
    EXAMPLE_CUDA_CHECK(cudaMalloc(&x, polyElems * sizeof(float)));
    EXAMPLE_CUDA_CHECK(cudaMalloc(&y, polyElems * sizeof(float)));
    EXAMPLE_CUDA_CHECK(launchFillFloats(x, polyElems, 3));
  }
  EXAMPLE_CUDA_CHECK(cudaDeviceSynchronize());

  auto launch = [&](const std::string &k) {
    if (k == "gemm")
      EXAMPLE_CUDA_CHECK(launchSgemm(o.gemmN, a, b, c));
    else if (k == "walk")
      EXAMPLE_CUDA_CHECK(launchNodeWalk(o.walkQueries, nodes, (uint32_t)o.walkNodes, coef, leaf, extra));
    else
      EXAMPLE_CUDA_CHECK(launchPolyStream((int)o.polyN, x, y));
  };
  for (int w = 0; w < o.warmup; ++w)
    for (const auto &k : o.kernels)
      launch(k);
  EXAMPLE_CUDA_CHECK(cudaDeviceSynchronize());

  // One event before the first kernel and one after each: kernel i's time is
  // the gap between events i and i + 1, an iteration's time the first to the last.
  const size_t nk = o.kernels.size();
  std::vector<cudaEvent_t> ev(nk + 1);
  for (auto &e : ev)
    EXAMPLE_CUDA_CHECK(cudaEventCreate(&e));
  std::vector<std::vector<double>> perKernel(nk);
  std::vector<double> total;
  for (int it = 0; it < o.iters; ++it) {
    EXAMPLE_CUDA_CHECK(cudaEventRecord(ev[0]));
    for (size_t i = 0; i < nk; ++i) {
      launch(o.kernels[i]);
      EXAMPLE_CUDA_CHECK(cudaEventRecord(ev[i + 1]));
    }
    EXAMPLE_CUDA_CHECK(cudaEventSynchronize(ev[nk]));
    for (size_t i = 0; i < nk; ++i) {
      float ms = 0;
      EXAMPLE_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
      perKernel[i].push_back(ms);
    }
    float all = 0;
    EXAMPLE_CUDA_CHECK(cudaEventElapsedTime(&all, ev[0], ev[nk]));
    total.push_back(all);
  }
  for (auto &e : ev)
    EXAMPLE_CUDA_CHECK(cudaEventDestroy(e));

  bool ok = true;
  if (gemmElems) {
    const std::vector<int> which = gemmRows(o.gemmN);
    std::vector<float> rows(which.size() * o.gemmN);
    for (size_t r = 0; r < which.size(); ++r)
      EXAMPLE_CUDA_CHECK(cudaMemcpy(&rows[r * o.gemmN], c + (size_t)which[r] * o.gemmN, o.gemmN * sizeof(float),
                                    cudaMemcpyDeviceToHost));
    ok = ok && checkGemm(o.gemmN, rows);
  }
  if (nodeElems) {
    std::vector<uint32_t> hl(walkOut);
    std::vector<float> he(walkOut * 32);
    EXAMPLE_CUDA_CHECK(cudaMemcpy(hl.data(), leaf, hl.size() * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    EXAMPLE_CUDA_CHECK(cudaMemcpy(he.data(), extra, he.size() * sizeof(float), cudaMemcpyDeviceToHost));
    ok = ok && checkWalk(o.walkQueries, (uint32_t)(o.walkNodes - 1), hl, he);
  }
  if (polyElems) {
    for (long offset : polyChunks(o.polyN)) { // y is 256 MiB by default: three parts of it
      std::vector<float> chunk(std::min<long>(kPolyChunk, o.polyN - offset));
      EXAMPLE_CUDA_CHECK(cudaMemcpy(chunk.data(), y + offset, chunk.size() * sizeof(float), cudaMemcpyDeviceToHost));
      ok = ok && checkPoly(offset, chunk);
    }
  }
  for (void *p : {(void *)a, (void *)b, (void *)c, (void *)coef, (void *)extra, (void *)x, (void *)y, (void *)nodes,
                  (void *)leaf})
    if (p)
      cudaFree(p);
  if (!ok)
    return example::kExitWrongAnswer;

  for (size_t i = 0; i < nk; ++i)
    std::printf("%s_ms=%.6f ", o.kernels[i].c_str(), example::median(perKernel[i]));
  std::printf("\ntime_ms=%.6f\n", example::median(total));
  return 0;
}
