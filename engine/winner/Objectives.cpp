#include "engine/winner/Objectives.h"
#include "engine/config/Metrics.h"

#include <algorithm>

namespace ciq {

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
static bool counts(const MetricInfo &m, const KernelStats &k, bool &unknown) {
  bool usage = m.from == MetricFrom::PtxasUsage;
  if (usage && !k.entry)
    return false;
  if (usage ? !k.usageKnown : !k.frameKnown)
    unknown = true;
  return true;
}

std::optional<double> compileMetric(const Objective &o, const Evaluation &e, std::string &why) {
  const MetricInfo *m = findMetric(o.metric);
  if (!m || m->from == MetricFrom::Benchmark) {
    why = "'" + o.metric + "' is not a compile metric";
    return std::nullopt;
  }
  if (m->from == MetricFrom::Objects) {
    double s = 0;
    for (const auto &ob : e.objects) {
      // A compiler cache's answer time is no compile time (issue 51 item 10).
      if (ob.cached && o.metric == "compile_ms") {
        why = ob.source + " came from the compiler cache (no compiler ran), so compile_ms cannot be measured; "
              "turn the cache off for the tune (CCACHE_DISABLE=1, SCCACHE_RECACHE=1, or no cache in "
              "CMAKE_CUDA_COMPILER_LAUNCHER)";
        return std::nullopt;
      }
      s += m->perObject(ob);
    }
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
    if (!kernelSelected(k, o.kernels) || !counts(*m, k, unknown))
      continue;
    if (unknown) {
      why = "ptxas printed no " +
            std::string(m->from == MetricFrom::PtxasUsage ? "\"Used ... registers\"" : "\"bytes stack frame\"") +
            " line for " + k.name + " (" + k.arch + "), so " + o.metric + " is unknown, not 0";
      return std::nullopt;
    }
    double v = m->perKernel(k);
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

std::string noDeviceCodeReason(const TuneConfig &cfg, const Evaluation &e) {
  if (!e.ok || !e.kernels.empty() || !e.runtimeKernels.empty() || e.objects.empty())
    return "";
  std::string sources;
  for (const auto &o : e.objects)
    sources += (sources.empty() ? "" : ", ") + o.source;
  return cfg.target + " has no device code for ptxas to tune: its " + std::to_string(e.objects.size()) +
         " CUDA object(s) (" + sources + ") define no __global__ kernel or __device__ function ptxas compiled; "
         "tune a target whose .cu files define kernels (ciq_tune(), or target: in ciq.yaml)";
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
