#include "Objectives.h"

#include <algorithm>
#include <set>

namespace ciq {

bool isCompileMetric(const std::string &m) {
  static const std::set<std::string> names = {"spill_bytes", "spill_stores", "spill_loads", "registers",
                                              "stack_frame", "shared_bytes", "compile_ms", "device_code_bytes"};
  return names.count(m) != 0;
}

bool kernelSelected(const KernelStats &k, const std::vector<std::string> &filter) {
  if (filter.empty())
    return true;
  std::string base = k.demangled.substr(0, k.demangled.find('('));
  for (const auto &f : filter)
    if (f == k.name || f == k.demangled || f == base)
      return true;
  return false;
}

static double perKernel(const std::string &m, const KernelStats &k) {
  if (m == "spill_bytes") return double(k.spillStores + k.spillLoads);
  if (m == "spill_stores") return double(k.spillStores);
  if (m == "spill_loads") return double(k.spillLoads);
  if (m == "registers") return k.registers;
  if (m == "stack_frame") return double(k.stackFrame);
  if (m == "shared_bytes") return double(k.sharedBytes);
  return 0;
}

double compileMetric(const Objective &o, const Evaluation &e) {
  if (o.metric == "compile_ms") {
    double s = 0;
    for (const auto &ob : e.objects)
      s += ob.wallMs;
    return s;
  }
  if (o.metric == "device_code_bytes") {
    double s = 0;
    for (const auto &ob : e.objects)
      s += ob.deviceCodeBytes;
    return s;
  }
  double acc = 0;
  for (const auto &k : e.kernels) {
    if (!kernelSelected(k, o.kernels))
      continue;
    double v = perKernel(o.metric, k);
    acc = o.reduce == "max" ? std::max(acc, v) : acc + v;
  }
  return acc;
}

void scoreCompileMetrics(const TuneConfig &cfg, Evaluation &e) {
  for (const auto &o : cfg.objectives)
    if (isCompileMetric(o.metric))
      e.scores[o.metric] = compileMetric(o, e);
}

std::vector<double> normalizedObjectives(const TuneConfig &cfg, const Evaluation &e) {
  std::vector<double> v;
  for (const auto &o : cfg.objectives) {
    auto it = e.scores.find(o.metric);
    double x = it == e.scores.end() ? 0 : it->second;
    v.push_back(o.direction == "maximize" ? -x : x);
  }
  return v;
}

} // namespace ciq
