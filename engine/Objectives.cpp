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

// Whether ptxas reported what `m` needs for k. Registers and shared memory
// come from an entry's "Used" line (a device function has none: it adds no
// registers of its own to count); stack and spills from "Function properties".
static bool counts(const std::string &m, const KernelStats &k, bool &unknown) {
  bool usage = m == "registers" || m == "shared_bytes";
  if (usage && !k.entry)
    return false;
  if (usage ? !k.usageKnown : !k.frameKnown)
    unknown = true;
  return true;
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

std::optional<double> compileMetric(const Objective &o, const Evaluation &e, std::string &why) {
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
  for (const auto &ob : e.objects)
    if (!ob.ptxasRan) {
      why = "ptxas did not run when " + ob.source + " was compiled (with -dlto it runs at the device link), so " +
            o.metric + " cannot be measured here";
      return std::nullopt;
    }
  double acc = 0;
  for (const auto &k : e.kernels) {
    bool unknown = false;
    if (!kernelSelected(k, o.kernels) || !counts(o.metric, k, unknown))
      continue;
    if (unknown) {
      why = "ptxas printed no " + std::string(o.metric == "registers" || o.metric == "shared_bytes"
                                                  ? "\"Used ... registers\""
                                                  : "\"bytes stack frame\"") +
            " line for " + k.name + " (" + k.arch + "), so " + o.metric + " is unknown, not 0";
      return std::nullopt;
    }
    double v = perKernel(o.metric, k);
    acc = o.reduce == "max" ? std::max(acc, v) : acc + v;
  }
  return acc;
}

bool scoreCompileMetrics(const TuneConfig &cfg, Evaluation &e) {
  for (const auto &o : cfg.objectives) {
    if (!isCompileMetric(o.metric))
      continue;
    std::string why;
    auto v = compileMetric(o, e, why);
    if (!v) {
      e.ok = false;
      e.reason = reason::NotMeasurable;
      e.message = why;
      e.scores.clear();
      return false;
    }
    e.scores[o.metric] = *v;
  }
  return true;
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
