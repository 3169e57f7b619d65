#include "engine/measure/NoiseSource.h"
#include "engine/measure/Stats.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstdio>

namespace ciq {
namespace {

std::string fmt(const char *f, double a, double b = 0) {
  char buf[160];
  snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

std::optional<NoiseSource> firstRunOutlier(const std::vector<double> &runs, double targetPercent) {
  std::vector<double> rest(runs.begin() + 1, runs.end());
  double m = median(rest);
  std::vector<double> dev;
  for (double x : rest)
    dev.push_back(std::fabs(x - m));
  double sigma = 1.4826 * median(dev);
  double off = std::fabs(runs[0] - m);
  double offPercent = m != 0 ? 100 * off / std::fabs(m) : 0;
  // Alone (no other run even half as far from it as from the others'
  // median: not one of a group, as in bimodal runs), far off the others
  // (sigma 0: identical others, any offset counts), and by more than the target.
  double nearest = INFINITY;
  for (double x : rest)
    nearest = std::min(nearest, std::fabs(x - runs[0]));
  if (off == 0 || nearest <= off / 2 || (sigma > 0 && off <= 5 * sigma) || offPercent <= targetPercent)
    return std::nullopt;
  return NoiseSource{"first_run_outlier",
                     fmt("the first measured run is %.1f%% off the median of the others", offPercent) +
                         fmt(" (%.0f robust deviations); CV %.2f%% with it, ", sigma > 0 ? off / sigma : 0,
                             summarize(runs).cvPercent) +
                         fmt("%.2f%% without", summarize(rest).cvPercent),
                     "raise benchmark.warmup: the first run still pays for start-up (context creation, module "
                     "loading, cold caches, clocks ramping up)"};
}

std::optional<NoiseSource> drift(const std::vector<double> &runs, double targetPercent) {
  double n = double(runs.size()), mx = (n - 1) / 2, my = 0;
  for (double y : runs)
    my += y / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    sxy += (double(i) - mx) * (runs[i] - my);
    sxx += (double(i) - mx) * (double(i) - mx);
    syy += (runs[i] - my) * (runs[i] - my);
  }
  if (syy == 0 || my == 0)
    return std::nullopt;
  double r = sxy / std::sqrt(sxx * syy);
  if (std::fabs(r) >= 1)
    r = r > 0 ? 0.999999 : -0.999999;
  double t = r * std::sqrt((n - 2) / (1 - r * r));
  boost::math::students_t dist(n - 2);
  double p = 2 * boost::math::cdf(boost::math::complement(dist, std::fabs(t)));
  double moved = 100 * std::fabs(sxy / sxx * (n - 1)) / std::fabs(my);
  if (p >= 0.01 || moved <= targetPercent)
    return std::nullopt;
  return NoiseSource{"drift",
                     std::string("the runs ") + (sxy > 0 ? "rise" : "fall") +
                         fmt(" by %.1f%% from the first to the last", moved) +
                         fmt(" (correlation with the run index %.2f, p = %.2g)", r, p),
                     "the machine drifts while measuring (clocks, temperature, other load): run on an idle GPU with "
                     "locked clocks (an administrator: nvidia-smi --lock-gpu-clocks), raise benchmark.warmup, or "
                     "make each run longer so it settles"};
}

std::optional<NoiseSource> bimodal(const std::vector<double> &runs) {
  std::vector<double> s = runs;
  std::sort(s.begin(), s.end());
  size_t n = s.size(), cut = 0;
  double widest = 0;
  for (size_t i = 1; i < n; ++i)
    if (s[i] - s[i - 1] > widest)
      widest = s[i] - s[i - 1], cut = i;
  size_t least = std::max<size_t>(3, (n + 4) / 5);
  if (cut < least || n - cut < least)
    return std::nullopt;
  Summary lo = summarize({s.begin(), s.begin() + cut}), hi = summarize({s.begin() + cut, s.end()});
  if (widest <= 3 * std::max(lo.stddev, hi.stddev))
    return std::nullopt;
  return NoiseSource{"bimodal",
                     fmt("the runs fall into two groups, %.0f runs", double(cut)) +
                         fmt(" around %.4g and ", lo.median) + fmt("%.0f around ", double(n - cut)) +
                         fmt("%.4g (%.1f%% apart)", hi.median, 100 * (hi.median - lo.median) / std::fabs(lo.median)),
                     "the program runs in two states (two clock levels, a cache or page placement that differs, an "
                     "input that varies): pin the input size and data, run on locked clocks, and check what differs "
                     "between fast and slow runs"};
}

std::optional<NoiseSource> clockChange(const std::vector<double> &mhz, double targetPercent) {
  if (mhz.size() != 2 || mhz[0] <= 0)
    return std::nullopt;
  double moved = 100 * (mhz[1] - mhz[0]) / mhz[0];
  if (std::fabs(moved) <= targetPercent)
    return std::nullopt;
  return NoiseSource{"clock_change",
                     fmt("the GPU's SM clock was %.0f MHz before the runs and ", mhz[0]) +
                         fmt("%.0f MHz after (%+.1f%%)", mhz[1], moved),
                     "the GPU changed clocks while measuring (boost, power or temperature): measure at steady "
                     "clocks (an administrator may lock them: nvidia-smi --lock-gpu-clocks), raise "
                     "benchmark.warmup so the clocks settle first, or make each run longer"};
}

} // namespace

std::optional<NoiseSource> noiseSource(const std::vector<double> &runs, double targetPercent,
                                       const std::vector<std::string> &gpuProblems,
                                       const std::vector<double> &smClockMhz) {
  if (runs.size() < 5)
    return std::nullopt;
  if (!gpuProblems.empty()) {
    std::string seen;
    for (const auto &p : gpuProblems)
      seen += (seen.empty() ? "" : "; ") + p;
    return NoiseSource{"gpu_state", "the GPU's state changed the runs: " + seen,
                       "measure on an idle GPU at steady clocks: stop the other processes, let it cool, check the "
                       "clock state with `ciq doctor` (an administrator may lock clocks: nvidia-smi "
                       "--lock-gpu-clocks)"};
  }
  if (auto s = clockChange(smClockMhz, targetPercent))
    return s;
  if (auto s = firstRunOutlier(runs, targetPercent))
    return s;
  if (auto s = bimodal(runs))
    return s;
  if (auto s = drift(runs, targetPercent))
    return s;
  return NoiseSource{"random", fmt("spread without a pattern (CV %.1f%% over %.0f runs)", summarize(runs).cvPercent,
                                   double(runs.size())),
                     "the noise is random: a larger budget (benchmark.max_repeats, max_measure_s) narrows it as "
                     "1/sqrt(runs); or make each run longer (more iterations inside one run) so its timer "
                     "averages more"};
}

} // namespace ciq
