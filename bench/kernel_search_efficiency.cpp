// bench/kernel_search_efficiency: measured binaries needed to reach the
// per-kernel winner, against the number of kernels tuned (issue 40 item 4),
// on a synthetic landscape; no compile, no GPU.
//
// Each of K kernels gets the per-kernel controls ciq derives for it
// (engine/config/KernelSpace: kernelControlsFor), alternately a kernel that
// spills under __launch_bounds__(256, 3) at 80 registers and one that uses
// 96 registers without spilling. Every value of every control has a true
// factor on its kernel's GPU time (30% of values faster, 0.70-0.97x; the
// rest 1.00-1.30x), a kernel's time is its base time times the factors of
// the controls set, and the program's time is the sum of its kernels',
// each measured with 0.5% noise. The optimum sets every control of every
// kernel to its fastest value where that is faster.
//
// Two searches per seed, each counted until it first measures a binary
// within 1% of the optimum's true time:
//   per-kernel  ciq's per-kernel stage (engine/search/KernelSearch.h): every
//               kernel's next trial in the same binary, judged on its own
//               time, then the per-kernel bests combined
//   tpe         ciq's default strategy over the same controls, scored by the
//               program's time (the whole-program objective), capped at --cap
#include "engine/config/Config.h"
#include "engine/config/KernelSpace.h"
#include "engine/config/StrategyTable.h"
#include "engine/search/KernelSearch.h"
#include "engine/measure/Stats.h"
#include "engine/search/Search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <llvm/Support/CommandLine.h>
#include <map>
#include <random>
#include <set>

using namespace ciq;
using namespace llvm;

static cl::opt<int> Seeds("seeds", cl::desc("seeds per kernel count"), cl::init(20));
static cl::opt<int> Cap("cap", cl::desc("the most binaries a whole-program search may measure"), cl::init(300));
static cl::list<int> Counts("kernels", cl::desc("kernel counts (default 1,2,4,8)"), cl::CommaSeparated);

namespace {

struct Landscape {
  SearchSpace space;
  std::vector<SpaceKernel> kernels;
  std::vector<double> baseMs;                 // per kernel
  std::map<size_t, std::vector<double>> factor;   // control -> per value
  std::map<std::string, size_t> kernelOf;     // key -> index
  double optimumMs = 0;
};

Landscape makeLandscape(int kernels, uint64_t seed) {
  Landscape l;
  std::mt19937_64 rng(seed * 1000003 + (uint64_t)kernels);
  std::uniform_real_distribution<double> u(0, 1);
  for (int k = 0; k < kernels; ++k) {
    SpaceKernel s;
    s.mangled = s.key = "_Z7kernel" + std::to_string(k) + "v";
    s.demangled = "kernel" + std::to_string(k) + "()";
    s.ptxKnown = true;
    s.maxThreads = 256;
    bool spills = k % 2 == 0;
    s.registers = spills ? 80 : 96;
    s.spillBytes = spills ? 888 : 0;
    s.minBlocks = spills ? 3 : 0;
    l.kernels.push_back(s);
    l.kernelOf[s.key] = (size_t)k;
    l.baseMs.push_back(0.5 + 1.5 * u(rng));
  }
  KernelControlsConfig cfg;
  cfg.maxKernels = 64;
  l.space.controls = kernelControlsFor(cfg, l.kernels).controls;
  std::vector<double> best(l.kernels.size(), 1.0);
  for (size_t c = 0; c < l.space.controls.size(); ++c) {
    double lowest = 1;
    for (size_t v = 0; v < l.space.controls[c].values.size(); ++v) {
      double f = u(rng) < 0.3 ? 0.70 + 0.27 * u(rng) : 1.0 + 0.3 * u(rng);
      l.factor[c].push_back(f);
      lowest = std::min(lowest, f);
    }
    best[l.kernelOf[l.space.controls[c].kernelKey]] *= lowest;
  }
  for (size_t k = 0; k < l.kernels.size(); ++k)
    l.optimumMs += l.baseMs[k] * best[k];
  return l;
}

std::vector<double> trueKernelMs(const Landscape &l, const Point &p) {
  std::vector<double> ms = l.baseMs;
  for (size_t c = 0; c < p.size(); ++c)
    if (p[c] != kUnset)
      ms[l.kernelOf.at(l.space.controls[c].kernelKey)] *= l.factor.at(c)[(size_t)p[c]];
  return ms;
}

double sum(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s;
}

// One measured binary as ciq records it: kernel times of its traced run.
Evaluation measure(const Landscape &l, const Point &p, std::mt19937_64 &noise) {
  std::normal_distribution<double> n(0, 0.005);
  Evaluation e;
  e.point = p;
  e.ok = true;
  double total = 0;
  std::vector<double> ms = trueKernelMs(l, p);
  for (size_t k = 0; k < ms.size(); ++k) {
    KernelTime t;
    t.mangled = l.kernels[k].mangled;
    t.launches = 1;
    t.gpuMs = ms[k] * (1 + n(noise));
    total += t.gpuMs;
    e.kernelTimes.push_back(t);
  }
  e.scores["time_ms"] = total;
  return e;
}

bool reached(const Landscape &l, const Point &p) { return sum(trueKernelMs(l, p)) <= 1.01 * l.optimumMs; }

// Binaries the per-kernel stage measures until it reaches the optimum (0: never).
int perKernel(const Landscape &l, uint64_t seed, int &stageBinaries) {
  std::mt19937_64 noise(seed);
  Point base = l.space.baseline();
  Evaluation baseEval = measure(l, base, noise);
  auto plans = kernelPlans(l.space, l.kernels);
  std::vector<Evaluation> stage;
  int binaries = 1, hit = 0;
  for (size_t r = 0;; ++r) {
    auto p = designRound(base, plans, r);
    if (!p)
      break;
    stage.push_back(measure(l, *p, noise));
    ++binaries;
    if (!hit && reached(l, *p))
      hit = binaries;
  }
  std::vector<const Evaluation *> seen;
  for (const auto &e : stage)
    seen.push_back(&e);
  for (const Point &p : combinations(base, judgeKernels(plans, base, baseEval, seen))) {
    ++binaries;
    if (!hit && reached(l, p))
      hit = binaries;
  }
  stageBinaries = binaries;
  return hit;
}

// Binaries ciq's default strategy measures until it reaches the optimum
// scored by the program's time (0: not within --cap).
int wholeProgram(const Landscape &l, uint64_t seed) {
  SearchConfig cfg;
  cfg.strategy = kDefaultStrategy;
  cfg.seed = seed;
  cfg.poolSize = 1;
  auto st = makeStrategy(cfg, l.space, false);
  std::mt19937_64 noise(seed);
  std::vector<ScoredPoint> history;
  std::set<Point> seen;
  history.push_back({l.space.baseline(), true, {measure(l, l.space.baseline(), noise).scores["time_ms"]}, 0});
  seen.insert(l.space.baseline());
  for (int g = 1; (int)seen.size() < Cap; ++g) {
    auto pool = st->pool(g, history);
    if (pool.empty())
      return 0;
    for (const auto &p : pool) {
      history.push_back({p, true, {measure(l, p, noise).scores["time_ms"]}, g});
      seen.insert(p);   // a repeated point is a twin: no new binary
      if (reached(l, p))
        return (int)seen.size();
    }
  }
  return 0;
}

// ciq's own median (engine/measure/Stats.h) of binary counts; 0 for none.
double medianOf(const std::vector<int> &v) {
  return v.empty() ? 0 : median(std::vector<double>(v.begin(), v.end()));
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "ciq per-kernel search efficiency (synthetic landscape)\n");
  std::vector<int> counts(Counts.begin(), Counts.end());
  if (counts.empty())
    counts = {1, 2, 4, 8};
  printf("kernels  controls  joint points  | per-kernel stage: binaries to the optimum (median), reached, stage size"
         " | %s whole-program: binaries to the optimum (median of those that reached it), reached within %d\n",
         kDefaultStrategy, (int)Cap);
  for (int k : counts) {
    std::vector<int> pk, pkStage, wp;
    int pkReached = 0, wpReached = 0;
    Landscape shape = makeLandscape(k, 1);
    for (int s = 1; s <= Seeds; ++s) {
      Landscape l = makeLandscape(k, (uint64_t)s);
      int stage = 0, hit = perKernel(l, (uint64_t)s, stage);
      pkStage.push_back(stage);
      if (hit)
        pk.push_back(hit), ++pkReached;
      int w = wholeProgram(l, (uint64_t)s);
      if (w)
        wp.push_back(w), ++wpReached;
    }
    printf("%7d  %8zu  %12.3g  | %6.1f  %3d/%-3d  %5.1f | %6.1f  %3d/%-3d\n", k, shape.space.controls.size(),
           (double)shape.space.feasibleSize().points, medianOf(pk), pkReached, (int)Seeds, medianOf(pkStage), medianOf(wp),
           wpReached, (int)Seeds);
  }
  return 0;
}
