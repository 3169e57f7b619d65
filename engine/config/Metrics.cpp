#include "engine/config/Metrics.h"

#include <algorithm>

namespace ciq {

bool isCompileMetric(const std::string &m) {
  const MetricInfo *info = findMetric(m);
  return info && info->from != MetricFrom::Benchmark;
}

const std::vector<MetricInfo> &knownMetrics() {
  using K = const KernelStats &;
  using O = const ObjectRecord &;
  static const std::vector<MetricInfo> table = {
      {"spill_bytes", "bytes", MetricFrom::PtxasFrame, "spill stores + loads",
       [](K k) { return double(k.spillStores + k.spillLoads); }, nullptr},
      {"spill_stores", "bytes", MetricFrom::PtxasFrame, "spill stores",
       [](K k) { return double(k.spillStores); }, nullptr},
      {"spill_loads", "bytes", MetricFrom::PtxasFrame, "spill loads",
       [](K k) { return double(k.spillLoads); }, nullptr},
      {"stack_frame", "bytes", MetricFrom::PtxasFrame, "stack frame size",
       [](K k) { return double(k.stackFrame); }, nullptr},
      {"registers", "registers", MetricFrom::PtxasUsage, "registers per thread",
       [](K k) { return double(k.registers); }, nullptr},
      {"shared_bytes", "bytes", MetricFrom::PtxasUsage, "static shared memory",
       [](K k) { return double(k.sharedBytes); }, nullptr},
      {"compile_ms", "ms", MetricFrom::Objects, "the compilers' wall time, summed over the wrappers' compiles",
       nullptr, [](O o) { return o.wallMs; }},
      {"device_code_bytes", "bytes", MetricFrom::Objects, "the objects' .nv_fatbin sizes, summed",
       nullptr, [](O o) { return double(o.deviceCodeBytes); }},
      {"time_ms", "ms", MetricFrom::Benchmark, "the benchmark's wall time (benchmark.metric wall_time)", nullptr,
       nullptr},
      {"kernel_time_ms", "ms", MetricFrom::Benchmark,
       "the GPU time of the kernels the benchmark launched, summed (benchmark.metric kernel_time)", nullptr, nullptr},
  };
  return table;
}

const MetricInfo *findMetric(const std::string &name) {
  for (const auto &m : knownMetrics())
    if (name == m.name)
      return &m;
  return nullptr;
}

std::string metricNames() {
  std::vector<std::string> names;
  for (const auto &m : knownMetrics())
    names.push_back(m.name);
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto &n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

} // namespace ciq
