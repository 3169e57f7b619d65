#include "engine/run/BaselineKernelControls.h"

#include <algorithm>

namespace ciq {
namespace {

// The kernel keys the baseline's benchmark launched, by GPU time, largest
// first (its traced run, engine/measure/KernelTrace.h); empty when ciq has
// no kernel times for it.
std::vector<std::string> launchedKernelOrder(const Evaluation &baseline) {
  std::vector<const KernelTime *> t;
  for (const auto &k : baseline.kernelTimes)
    t.push_back(&k);
  std::stable_sort(t.begin(), t.end(), [](const KernelTime *a, const KernelTime *b) { return a->gpuMs > b->gpuMs; });
  std::vector<std::string> keys;
  for (const auto *k : t)
    keys.push_back(kernelKey(k->mangled));
  return keys;
}

} // namespace

BaselineKernelControls baselineKernelControls(const TuneConfig &cfg, const Evaluation &baseline) {
  BaselineKernelControls out;
  std::vector<SpaceKernel> kernels = spaceKernels(baseline.kernels);
  out.kernels = kernels.size();
  std::vector<std::string> order = launchedKernelOrder(baseline);
  // A trace lost in one case (kernelTimesWhy set beside kernel times) would
  // take that case's kernels for ones the benchmark never launches.
  bool partial = !order.empty() && !baseline.kernelTimesWhy.empty();
  out.launchedOnly = !order.empty() && !partial;
  if (partial) {
    out.why = "the baseline's kernel times are incomplete (" + baseline.kernelTimesWhy + ")";
    order.clear();
  } else if (order.empty())
    out.why = !cfg.benchmark.enabled            ? "no benchmark runs"
              : !baseline.kernelTimesWhy.empty() ? "no kernel times: " + baseline.kernelTimesWhy
                                                 : "no kernel times (benchmark.kernel_times: off, or no warm-up run)";
  KernelControlsConfig kcfg = cfg.kernelControls;
  if (kcfg.kernels.empty())   // the kernels kernel_time_ms times are the ones worth controls
    kcfg.kernels = cfg.benchmark.metric.kernels;
  kcfg.objective = cfg.objectives.empty() ? "" : cfg.objectives.front().metric;
  out.controls = kernelControlsFor(kcfg, kernels, order);
  return out;
}

} // namespace ciq
