// The per-kernel search (docs/search-space.md, "Per-kernel search"): with
// kernel times, each kernel's per-kernel controls are judged on that
// kernel's own GPU time instead of the whole program's objective.
//
// Every binary of the per-kernel stage carries one trial for every kernel at
// once (one directive value, on top of the best configuration of the
// command-line search): a PTX directive of one entry changes that entry's
// code only, and the traced run times each kernel apart, so k kernels with
// t trials each cost max(t) binaries, not t^k. The per-kernel bests are then
// combined and the combination measured as a whole; the whole-program
// winner, minimization and `ciq validate` judge it like any candidate.
//
// Pure functions of the space, the baseline's kernels and the recorded
// evaluations: a resumed search derives the same rounds.
#pragma once
#include "engine/config/KernelSpace.h"
#include "engine/config/Space.h"
#include "engine/record/Evaluation.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

// One value of one per-kernel control, tried on top of the base.
struct KernelTrial {
  size_t control = 0;   // index in the space
  int value = kUnset;   // index in the control's values
  bool operator==(const KernelTrial &o) const { return control == o.control && value == o.value; }
};

// One kernel with per-kernel controls, and its trials, most promising first.
struct KernelPlan {
  std::string key, label;
  std::vector<size_t> controls;       // indexes in the space
  std::vector<KernelTrial> trials;
};

// The kernels of the space's per-kernel controls (in the space's order),
// each with its trials ordered from the baseline's view of it (`kernels`):
// a kernel that spills under its __launch_bounds__ tries fewer blocks per
// SM first (a higher register ceiling changes nothing while its occupancy
// request caps it), then shared-memory spilling, then the ceilings; one
// that does not spill tries the nearest lower ceilings first, then more
// blocks per SM. A stage cut short by the budget tried the first ones.
std::vector<KernelPlan> kernelPlans(const SearchSpace &space, const std::vector<SpaceKernel> &kernels);

// The most trials any kernel has: the rounds a full stage takes.
size_t mostTrials(const std::vector<KernelPlan> &plans);

// Round r of the stage: `base` with trial r of every kernel that has one.
// nullopt when no kernel has an r-th trial.
std::optional<Point> designRound(const Point &base, const std::vector<KernelPlan> &plans, size_t r);

// `base` with one trial alone (a retry of a round that gave no kernel times).
Point soloRound(const Point &base, const KernelTrial &t);

// One kernel's GPU time per launch in an evaluation's traced run, ms; -1
// when that run did not launch it (or was not traced).
double kernelMsPerLaunch(const Evaluation &e, const std::string &key);

// Whether an evaluation tells anything of its kernels' times: traced, and
// either scored or refused only for a case slower than the limit (its
// kernels ran and were timed; a failed compile or a wrong answer did not).
bool kernelTimesUsable(const Evaluation &e);

// What the stage learned of one kernel.
struct KernelVerdict {
  std::string key, label;
  double baseMs = -1;                  // per launch, in the base
  std::vector<std::pair<KernelTrial, double>> tried;   // trial, its ratio to baseMs (-1: no time)
  std::optional<KernelTrial> best;     // the fastest trial at least kMinKernelGain faster
  double bestRatio = 1;
  std::vector<KernelTrial> bestPerControl;   // each control's fastest value, when faster
  // Trials faster over all cases that ran this kernel slower in one case
  // (benchmark.cases): never its best, since the combination carrying it
  // would be refused as case_regression. The case and the ratio there.
  struct SlowCase {
    KernelTrial trial;
    std::string caseName;
    double ratio = 1;         // the kernel's time per launch there, against the base's
    double casePercent = 0;   // the time it added, as a share of the base's whole case (its GPU time)
  };
  std::vector<SlowCase> slowsCase;
};

// A trial counts as faster when its kernel ran at least this much faster
// than in the base (per launch): below that, timer and clock noise.
constexpr double kMinKernelGain = 0.01;

// Judges every kernel from the stage's evaluations (each matched to the
// trials it carried by its point). With benchmark.cases and each case's
// kernel times, a trial must also not add more than maxRegressionPercent
// (benchmark.max_regression_percent) to any case's whole GPU time through
// its own kernel: the limit a combination carrying it is held to.
std::vector<KernelVerdict> judgeKernels(const std::vector<KernelPlan> &plans, const Point &base,
                                        const Evaluation &baseEval, const std::vector<const Evaluation *> &stage,
                                        double maxRegressionPercent = 1.0);

// The trials whose every evaluation so far gave no usable kernel times and
// that were never tried alone: each gets a round of its own.
std::vector<KernelTrial> trialsToRetry(const std::vector<KernelPlan> &plans, const Point &base,
                                       const std::vector<const Evaluation *> &stage);

// The trials no evaluation of the stage carried, by kernel (in plan
// order): what a stage cut short by the budget left untried.
std::vector<std::pair<const KernelPlan *, std::vector<KernelTrial>>>
untriedTrials(const std::vector<KernelPlan> &plans, const Point &base, const std::vector<const Evaluation *> &stage);

// The combinations measured as a whole at the end: every kernel's best
// trial; then, where it differs, every kernel's best value of each control
// together. Empty when no kernel has a faster trial.
std::vector<Point> combinations(const Point &base, const std::vector<KernelVerdict> &verdicts);

// Stage 1 of a per-kernel search (the command-line search) leaves the
// per-kernel controls unset: the pool with them unset, each point once.
std::vector<Point> withoutKernelControls(const SearchSpace &space, const std::vector<Point> &pool);

// "kernel sgemm_blocked: .minnctapersm 1" for a trial.
std::string trialText(const SearchSpace &space, const KernelTrial &t);

} // namespace ciq
