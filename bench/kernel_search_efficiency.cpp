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
// With --cases N (issue 49 item 4), the program runs N cases, each launching
// every kernel with its own weight (0.3-1.5x the kernel's base time), and
// a faster value is, with probability 0.3, 5-45% slower in one case while
// still faster over all of them. A binary slower than the baseline in any
// case (beyond 1%) is INVALID case_regression, as `ciq tune` refuses it;
// the per-kernel optimum sets every control to its fastest value that
// slows no case. The stage then runs three ways:
//   discard    a case_regression binary tells nothing (the trials riding
//              with the one that slowed a case are retried alone)
//   merged     its kernel times count, summed over the cases (ciq before
//              issue 49: a trial that slows one case can win its kernel)
//   per-case   its kernel times count, and a trial must not slow its kernel
//              in any case (ciq now: each case's traced run is kept)
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
static cl::opt<int> Cases("cases", cl::desc("benchmark cases (0: one run, the whole-program comparison)"), cl::init(0));

namespace {

struct Landscape {
  SearchSpace space;
  std::vector<SpaceKernel> kernels;
  std::vector<double> baseMs;                 // per kernel
  std::map<size_t, std::vector<double>> factor;   // control -> per value
  std::map<std::string, size_t> kernelOf;     // key -> index
  double optimumMs = 0;
  // --cases: per case, each kernel's weight, and per control and value the
  // factor in each case (the factor above is their weighted mean).
  std::vector<std::vector<double>> weight;                  // [case][kernel]
  std::map<size_t, std::vector<std::vector<double>>> caseFactor;   // control -> [value][case]
  std::vector<double> baseCaseMs;             // the baseline's true time per case
};

Landscape makeLandscape(int kernels, uint64_t seed, int cases) {
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
  // The case draws come from their own generator, so --cases 0 draws the
  // landscape it always did.
  std::mt19937_64 caseRng(seed * 7919 + (uint64_t)kernels);
  for (int c = 0; c < cases; ++c) {
    l.weight.emplace_back();
    for (int k = 0; k < kernels; ++k)
      l.weight.back().push_back(0.3 + 1.2 * u(caseRng));
  }
  std::vector<double> best(l.kernels.size(), 1.0);
  for (size_t c = 0; c < l.space.controls.size(); ++c) {
    double lowest = 1;
    size_t k = l.kernelOf[l.space.controls[c].kernelKey];
    for (size_t v = 0; v < l.space.controls[c].values.size(); ++v) {
      double f = u(rng) < 0.3 ? 0.70 + 0.27 * u(rng) : 1.0 + 0.3 * u(rng);
      bool slowsCase = false;
      if (cases > 0) {
        // Each case's factor; a faster value slows one case 5-45% now and then.
        std::vector<double> per(cases, f);
        double wsum = 0, mean = 0;
        if (f < 1 && cases > 1 && u(caseRng) < 0.3) {
          int slow = (int)(u(caseRng) * cases) % cases;
          per[slow] = 1.05 + 0.40 * u(caseRng);
          slowsCase = true;
        }
        for (int cs = 0; cs < cases; ++cs)
          wsum += l.weight[cs][k], mean += l.weight[cs][k] * per[cs];
        l.caseFactor[c].push_back(per);
        f = mean / wsum;
      }
      l.factor[c].push_back(f);
      if (!slowsCase)
        lowest = std::min(lowest, f);
    }
    best[k] *= lowest;
  }
  for (size_t k = 0; k < l.kernels.size(); ++k)
    l.optimumMs += l.baseMs[k] * best[k] * (cases > 0 ? 0 : 1);
  for (int cs = 0; cs < cases; ++cs) {
    double base = 0;
    for (size_t k = 0; k < l.kernels.size(); ++k) {
      base += l.baseMs[k] * l.weight[cs][k];
      l.optimumMs += l.baseMs[k] * l.weight[cs][k] * best[k];   // no value of `best` slows a case
    }
    l.baseCaseMs.push_back(base);
  }
  return l;
}

std::vector<double> trueKernelMs(const Landscape &l, const Point &p) {
  std::vector<double> ms = l.baseMs;
  for (size_t c = 0; c < p.size(); ++c)
    if (p[c] != kUnset)
      ms[l.kernelOf.at(l.space.controls[c].kernelKey)] *= l.factor.at(c)[(size_t)p[c]];
  return ms;
}

// Each kernel's true time in one case.
std::vector<double> trueCaseMs(const Landscape &l, const Point &p, size_t cs) {
  std::vector<double> ms(l.kernels.size());
  for (size_t k = 0; k < ms.size(); ++k)
    ms[k] = l.baseMs[k] * l.weight[cs][k];
  for (size_t c = 0; c < p.size(); ++c)
    if (p[c] != kUnset)
      ms[l.kernelOf.at(l.space.controls[c].kernelKey)] *= l.caseFactor.at(c)[(size_t)p[c]][cs];
  return ms;
}

double sum(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += x;
  return s;
}

KernelTimes timed(const Landscape &l, const std::vector<double> &ms, std::mt19937_64 &noise) {
  std::normal_distribution<double> n(0, 0.005);
  KernelTimes out;
  for (size_t k = 0; k < ms.size(); ++k) {
    KernelTime t;
    t.mangled = l.kernels[k].mangled;
    t.launches = 1;
    t.gpuMs = ms[k] * (1 + n(noise));
    out.push_back(t);
  }
  return out;
}

// One measured binary as ciq records it: kernel times of its traced run;
// with cases, each case's kernel times and total, and case_regression when
// a case ran more than 1% slower than the baseline's.
Evaluation measure(const Landscape &l, const Point &p, std::mt19937_64 &noise) {
  Evaluation e;
  e.point = p;
  e.ok = true;
  if (l.weight.empty()) {
    e.kernelTimes = timed(l, trueKernelMs(l, p), noise);
  } else {
    e.kernelTimes = timed(l, std::vector<double>(l.kernels.size(), 0), noise);
    for (size_t cs = 0; cs < l.weight.size(); ++cs) {
      CaseResult c;
      c.name = "case" + std::to_string(cs);
      c.kernels = timed(l, trueCaseMs(l, p, cs), noise);
      for (size_t k = 0; k < c.kernels.size(); ++k) {
        c.median += c.kernels[k].gpuMs;
        e.kernelTimes[k].gpuMs += c.kernels[k].gpuMs;
      }
      c.ratio = c.median / l.baseCaseMs[cs];
      if (c.ratio > 1.01 && e.ok) {
        e.ok = false;
        e.reason = reason::CaseRegression;
      }
      e.cases.push_back(c);
    }
  }
  double total = 0;
  for (const auto &k : e.kernelTimes)
    total += k.gpuMs;
  e.scores["time_ms"] = total;
  return e;
}

// Within 1% of the optimum's true time, and (cases) slowing no case.
bool reached(const Landscape &l, const Point &p) {
  if (l.weight.empty())
    return sum(trueKernelMs(l, p)) <= 1.01 * l.optimumMs;
  double total = 0;
  for (size_t cs = 0; cs < l.weight.size(); ++cs) {
    double t = sum(trueCaseMs(l, p, cs));
    if (t > l.baseCaseMs[cs] * 1.0001)
      return false;
    total += t;
  }
  return total <= 1.01 * l.optimumMs;
}

enum class Judge { Discard, Merged, PerCase };

// What the stage's judge sees of a measured binary.
Evaluation seenBy(Evaluation e, Judge j) {
  if (j == Judge::Discard && !e.ok)
    e.kernelTimes.clear();
  if (j != Judge::PerCase)
    for (auto &c : e.cases)
      c.kernels.clear();
  return e;
}

// Binaries the per-kernel stage measures until it reaches the optimum (0:
// never): its design rounds, the retries of trials whose rounds told
// nothing, then the combinations, as TuneKernelStage.cpp runs them.
int perKernel(const Landscape &l, uint64_t seed, int &stageBinaries, Judge judge) {
  std::mt19937_64 noise(seed);
  Point base = l.space.baseline();
  Evaluation baseEval = measure(l, base, noise);
  auto plans = kernelPlans(l.space, l.kernels);
  std::vector<Evaluation> stage;
  int binaries = 1, hit = 0;
  auto run = [&](const Point &p) {
    stage.push_back(seenBy(measure(l, p, noise), judge));
    ++binaries;
    if (!hit && stage.back().ok && reached(l, p))
      hit = binaries;
  };
  auto seen = [&] {
    std::vector<const Evaluation *> out;
    for (const auto &e : stage)
      out.push_back(&e);
    return out;
  };
  for (size_t r = 0;; ++r) {
    auto p = designRound(base, plans, r);
    if (!p)
      break;
    run(*p);
  }
  for (const KernelTrial &t : trialsToRetry(plans, base, seen()))
    run(soloRound(base, t));
  for (const Point &p : combinations(base, judgeKernels(plans, base, baseEval, seen())))
    run(p);
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
  // The program's objective: its time, or with cases the geometric mean of
  // the cases' ratios to the baseline (CaseScore.h); a case_regression
  // binary is INVALID.
  auto scored = [&](const Point &p, int g) {
    Evaluation m = measure(l, p, noise);
    double score = m.scores["time_ms"];
    if (!m.cases.empty()) {
      double logs = 0;
      for (const auto &c : m.cases)
        logs += std::log(c.ratio);
      score = std::exp(logs / (double)m.cases.size());
    }
    return ScoredPoint{p, m.ok, {score}, g};
  };
  std::vector<ScoredPoint> history;
  std::set<Point> seen;
  history.push_back(scored(l.space.baseline(), 0));
  seen.insert(l.space.baseline());
  for (int g = 1; (int)seen.size() < Cap; ++g) {
    auto pool = st->pool(g, history);
    if (pool.empty())
      return 0;
    for (const auto &p : pool) {
      history.push_back(scored(p, g));
      seen.insert(p);   // a repeated point is a twin: no new binary
      if (history.back().ok && reached(l, p))
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

struct Tally {
  std::vector<int> hits, sizes;
  int reached = 0;
  void add(int hit, int size) {
    sizes.push_back(size);
    if (hit)
      hits.push_back(hit), ++reached;
  }
};

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "ciq per-kernel search efficiency (synthetic landscape)\n");
  std::vector<int> counts(Counts.begin(), Counts.end());
  if (counts.empty())
    counts = {1, 2, 4, 8};
  if (Cases < 0 || Cases > 16) {
    fprintf(stderr, "kernel_search_efficiency: --cases %d: expected 0 to 16\n", (int)Cases);
    return 1;
  }
  std::vector<std::pair<const char *, Judge>> judges = {{"per-kernel stage", Judge::PerCase}};
  if (Cases > 0)
    judges = {{"discard", Judge::Discard}, {"merged", Judge::Merged}, {"per-case", Judge::PerCase}};
  printf("kernels  controls  joint points  |");
  for (const auto &j : judges)
    printf(" %s: binaries to the optimum (median), reached, stage size |", j.first);
  printf(" %s whole-program: binaries to the optimum (median of those that reached it), reached within %d\n",
         kDefaultStrategy, (int)Cap);
  if (Cases > 0)
    printf("(%d cases; the optimum slows no case; a binary slower than the baseline in a case is case_regression)\n",
           (int)Cases);
  for (int k : counts) {
    std::vector<Tally> pk(judges.size());
    Tally wp;
    Landscape shape = makeLandscape(k, 1, Cases);
    for (int s = 1; s <= Seeds; ++s) {
      Landscape l = makeLandscape(k, (uint64_t)s, Cases);
      for (size_t j = 0; j < judges.size(); ++j) {
        int stage = 0, hit = perKernel(l, (uint64_t)s, stage, judges[j].second);
        pk[j].add(hit, stage);
      }
      int w = wholeProgram(l, (uint64_t)s);
      wp.add(w, 0);
    }
    printf("%7d  %8zu  %12.3g  |", k, shape.space.controls.size(), (double)shape.space.feasibleSize().points);
    for (const auto &t : pk)
      printf(" %6.1f  %3d/%-3d  %5.1f |", medianOf(t.hits), t.reached, (int)Seeds, medianOf(t.sizes));
    printf(" %6.1f  %3d/%-3d\n", medianOf(wp.hits), wp.reached, (int)Seeds);
  }
  return 0;
}
