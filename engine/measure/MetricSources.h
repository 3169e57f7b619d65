// Where a runtime metric's number comes from (ciq.yaml benchmark.metric): one
// descriptor table, read by the config reader (the keys it accepts and what
// each one's value is), the parser (engine/measure/MetricParser.cpp switches
// on `id`, so a row without a parser is a compile warning) and the docs test
// (docs/config.md "Metric sources" lists every row). A new source is one row
// here plus its case in parseMetric().
#pragma once
#include <string>

namespace ciq {

enum class MetricSourceId { Regex, JsonPointer, NvbenchCsv, NvbenchJson, WallTime, KernelTime };

// What the key's value in ciq.yaml is.
enum class MetricSourceValue {
  Pattern, // MetricSource::pattern
  File,    // MetricSource::file
  Flag,    // true: the source needs nothing more
};

struct MetricSourceInfo {
  MetricSourceId id;
  const char *name; // the key in benchmark.metric and MetricSource::kind
  MetricSourceValue value;
  const char *description;
};

inline constexpr MetricSourceInfo kMetricSources[] = {
    {MetricSourceId::Regex, "regex", MetricSourceValue::Pattern,
     "the first capture group of the first match (ECMAScript syntax)"},
    {MetricSourceId::JsonPointer, "json_pointer", MetricSourceValue::Pattern,
     "an RFC 6901 pointer into the output (the whole text, else its last JSON line)"},
    {MetricSourceId::NvbenchCsv, "nvbench_csv", MetricSourceValue::File,
     "NVBench's --csv output: the column named by `column` of the state selected by `state`"},
    {MetricSourceId::NvbenchJson, "nvbench_json", MetricSourceValue::File,
     "NVBench's --json output: the summary named by `column` of the state selected by `state`"},
    {MetricSourceId::WallTime, "wall_time", MetricSourceValue::Flag,
     "the benchmark command's wall time, measured by ciq (the default)"},
    {MetricSourceId::KernelTime, "kernel_time", MetricSourceValue::Flag,
     "the summed GPU time (ms) of the kernels the run launched (those matching benchmark.kernels), measured by ciq's "
     "CUPTI injection library (objective kernel_time_ms)"},
};

// The row named `name`, or nullptr.
inline const MetricSourceInfo *findMetricSource(const std::string &name) {
  for (const auto &s : kMetricSources)
    if (name == s.name)
      return &s;
  return nullptr;
}

// "regex, json_pointer, nvbench_csv, nvbench_json, wall_time, kernel_time", with `last`
// (", " or " or ") before the last name.
inline std::string metricSourceNames(const char *last = ", ") {
  std::string out;
  size_t n = sizeof(kMetricSources) / sizeof(kMetricSources[0]);
  for (size_t i = 0; i < n; ++i)
    out += (i == 0 ? "" : i + 1 == n ? last : ", ") + std::string(kMetricSources[i].name);
  return out;
}

} // namespace ciq
