// Measuring several builds of the benchmark interleaved (A B A B ...), so
// that drift of the machine (clocks, temperature, other load) hits every
// build alike. Each build's benchmark executable is copied aside
// (a snapshot) so the builds can run side by side without rebuilding.
#pragma once
#include "Benchmark.h"
#include "Config.h"
#include "Stats.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// Copies the benchmark executable (benchmark.command[0], when the build
// makes it) to dir and returns the command that runs the copy; a program
// the build does not make runs where it is.
std::optional<std::vector<std::string>> snapshotBenchmark(const TuneConfig &cfg, const std::string &dir,
                                                          std::string &error);

struct InterleavedResult {
  bool ok = false;
  std::string reason, message;           // first failure
  std::vector<std::vector<double>> values;   // per build, per round
};

// `rounds` rounds; in each, every command runs once, in order, after
// beforeRun(its index) when given (programs that compile at run time: serve
// that build's candidate and framework cache).
InterleavedResult runInterleaved(BenchmarkRunner &runner, const std::vector<std::vector<std::string>> &commands,
                                 int rounds, const std::string &logPath,
                                 const std::function<void(size_t)> &beforeRun = {});

struct Verdict {
  Summary baseline, winner;
  double speedup = 0;        // baseline median / winner median (time metrics)
  WelchResult welch;
  bool significant = false;  // CV% <= maxCv for both and p < alpha and winner faster
  std::string reason;        // why not, when not
};

Verdict judge(const std::vector<double> &baseline, const std::vector<double> &winner, bool minimize,
              double maxCvPercent = 10, double alpha = 0.01);

} // namespace ciq
