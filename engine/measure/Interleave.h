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
  std::string reason, message;           // first failure: "build <i>, <failedRun>"
  int failedBuild = -1;                  // its build's index (the caller names it)
  std::string failedRun;                 // "[warm-up ]round <n>: <why>", without the build
  std::vector<std::vector<double>> values;   // per build, per round
  std::vector<std::vector<double>> warmup;   // per build: the warm-up rounds' values, not counted
  // Racing inside the re-measurement: builds dropped before the last round
  // (significantly worse than the best), and the runs that saved.
  std::vector<size_t> raced;
  int runsSaved = 0;
  // `ciq stop` arrived: the rounds ended early (ok is false; the values are
  // partial and must not be judged).
  bool stopped = false;
};

// The order of the builds in one round: forwards in even rounds, backwards
// in odd ones (A B, B A, A B, ...), so that a machine warming up or cooling
// down over the rounds favours no build.
std::vector<size_t> balancedOrder(size_t builds, int round);

// Called before each run with the index of the build about to run: programs
// that compile at run time get that build's candidate and framework cache.
using BeforeRun = std::function<void(size_t)>;
// Asked after every measured round whether the values so far suffice
// (adaptive repeats: stop before `rounds`). A build whose `active` entry is
// false runs no more rounds (racing); an empty `active` keeps every build.
struct RoundsDecision {
  bool stop = false;
  std::vector<bool> active;
};
using EnoughRounds = std::function<RoundsDecision(const std::vector<std::vector<double>> &values)>;
// Asked before every round: true ends the measurement
// (`ciq stop`), so a stop does not wait for up to max_repeats more rounds.
using StopRequested = std::function<bool()>;
// Runs measured before a kill (round-major: per round, one value per
// build, NaN where none was measured), read back from the journal by `ciq
// resume`: they are taken as measured, not run again (a round the kill cut
// short runs only its missing builds), and the warm-up rounds, done before
// them, are not repeated. onRun gets each run measured now, to journal it
// (issue 49 item 3).
struct RoundsRecord {
  std::vector<std::vector<double>> prior;
  std::function<void(int round, size_t build, double value)> onRun;
};

// `rounds` rounds; in each, every command runs once, in balancedOrder, after
// beforeRun(its index) when given. `warmupRounds` rounds first, in the same
// order, kept apart in `warmup`. With `enough`, fewer rounds when it says so,
// and a build it drops skips the remaining rounds (the others stay interleaved).
// With `stop`, a round starts only while it says false (else `stopped`).
InterleavedResult runInterleaved(BenchmarkRunner &runner, const std::vector<std::vector<std::string>> &commands,
                                 int rounds, const std::string &logPath, int warmupRounds = 0,
                                 const BeforeRun &beforeRun = {}, const EnoughRounds &enough = nullptr,
                                 const StopRequested &stop = nullptr, const RoundsRecord *record = nullptr);

// The interleaved re-measurements' settings (finalists, minimization,
// attribution), the same in `ciq tune` and in a Slurm finalists job: a fixed
// count of rounds (at least 5), or with adaptive repeats up to max_repeats
// rounds until the verdicts are made (enoughRoundsFor).
int interleavedRounds(const BenchmarkConfig &b);

// Which verdicts a re-measurement makes, all against build 0 (the baseline
// or the reference): every other build's (minimization, attribution), or
// only the best other build's (finalists: the winner).
enum class Judged { EachAgainstFirst, BestAgainstFirst };
// Adaptive repeats stop once (1) every build still measured has at least
// max(min_repeats, 3) runs and its median within the noise target, and (2)
// each judged pair is decided: significant (Welch p < VerdictAlpha) or
// equal within the noise target (the 95% Welch interval of the difference
// inside +-target_noise_percent), so a close call gets more rounds instead
// of a coin toss. With
// BestAgainstFirst and racing on, a finalist significantly worse than the
// best one (one-sided Welch, p < race_alpha) is dropped: it cannot be the
// winner, so it needs neither more runs nor the target. Null for fixed repeats.
EnoughRounds enoughRoundsFor(const BenchmarkConfig &b, bool minimize, Judged judged);
// The significance level of every verdict (judge, `ciq validate`).
constexpr double VerdictAlpha = 0.01;
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
              double maxCvPercent = 10, double alpha = VerdictAlpha);

} // namespace ciq
