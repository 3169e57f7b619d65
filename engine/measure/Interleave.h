// Measuring several builds of the benchmark interleaved (A B B A ...), so
// that drift of the machine (clocks, temperature, other load) hits every
// build alike. Each build's benchmark executable is copied aside
// (a snapshot) so the builds can run side by side without rebuilding.
#pragma once
#include "engine/measure/Benchmark.h"
#include "engine/measure/BenchmarkConfig.h"
#include "engine/measure/Stats.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct InterleavedResult {
  bool ok = false;
  std::string reason, message;           // first failure
  std::vector<std::vector<double>> values;   // per build, per round
  std::vector<std::vector<double>> warmup;   // per build: the warm-up rounds' values, not counted
};

// The order of the builds in one round: forwards in even rounds, backwards
// in odd ones (A B, B A, A B, ...), so that a machine warming up or cooling
// down over the rounds favours no build.
std::vector<size_t> balancedOrder(size_t builds, int round);

// Called before each run with the index of the build about to run: programs
// that compile at run time get that build's candidate and framework cache.
using BeforeRun = std::function<void(size_t)>;
// Asked after every measured round whether the values so far suffice
// (adaptive repeats: stop before `rounds`).
using EnoughRounds = std::function<bool(const std::vector<std::vector<double>> &values)>;

// `rounds` rounds; in each, every command runs once, in balancedOrder, after
// beforeRun(its index) when given. `warmupRounds` rounds first, in the same
// order, kept apart in `warmup`. With `enough`, fewer rounds when it says so.
InterleavedResult runInterleaved(BenchmarkRunner &runner, const std::vector<std::vector<std::string>> &commands,
                                 int rounds, const std::string &logPath, int warmupRounds = 0,
                                 const BeforeRun &beforeRun = {}, const EnoughRounds &enough = nullptr);

// The interleaved re-measurements' settings (finalists, minimization,
// attribution), the same in `ciq tune` and in a Slurm finalists job: a fixed
// count of rounds (at least 5), or with adaptive repeats up to max_repeats
// rounds until every build's median is within the noise target.
int interleavedRounds(const BenchmarkConfig &b);
EnoughRounds enoughRoundsFor(const BenchmarkConfig &b);   // null for fixed repeats
// The CV gate of the verdicts (judge) guards small fixed samples; adaptive
// repeats size the sample to the noise, and Welch's test alone decides.
double verdictMaxCvPercent(const BenchmarkConfig &b);

struct Verdict {
  Summary baseline, winner;
  double speedup = 0;        // baseline median / winner median (time metrics); 0: undefined (a median of 0)
  WelchResult welch;
  bool significant = false;  // CV% <= maxCv for both and p < alpha and winner faster
  std::string reason;        // why not, when not
};

Verdict judge(const std::vector<double> &baseline, const std::vector<double> &winner, bool minimize,
              double maxCvPercent = 10, double alpha = 0.01);

} // namespace ciq
