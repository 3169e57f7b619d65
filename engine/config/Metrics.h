// The objective metrics ciq knows by name: one descriptor table (name, unit,
// where the number comes from, what it counts), read by the config reader
// (which names need a benchmark, default units), the compile scorer
// (engine/winner/Objectives.cpp) and the docs test (docs/config.md lists every
// compile metric). A new compile metric is one row here.
#pragma once
#include "engine/record/Evaluation.h"

#include <string>
#include <vector>

namespace ciq {

enum class MetricFrom {
  PtxasFrame, // ptxas's "Function properties" line (device functions count)
  PtxasUsage, // ptxas's "Used N registers" line (entries only)
  Objects,    // the wrappers' receipts of every object, no ptxas statistics needed
  Benchmark,  // the benchmark's output (a runtime metric)
};

struct MetricInfo {
  const char *name; // as written in ciq.yaml objectives
  const char *unit; // the default unit
  MetricFrom from;
  const char *description; // what it counts
  // One kernel's value (PtxasFrame, PtxasUsage) or one object's
  // (Objects); nullptr for a Benchmark metric.
  double (*perKernel)(const KernelStats &);
  double (*perObject)(const ObjectRecord &);
};

// Every metric, compile metrics first, in the order docs/config.md lists them.
const std::vector<MetricInfo> &knownMetrics();
// The row of `name`, or nullptr for a name only a benchmark prints.
const MetricInfo *findMetric(const std::string &name);
// A metric ptxas or the device code reports (not the benchmark): known at
// compile time.
bool isCompileMetric(const std::string &metric);
// "compile_ms, device_code_bytes, ..." (sorted by name).
std::string metricNames();

} // namespace ciq
