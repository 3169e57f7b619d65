// Reading the benchmark's number from its output (ciq.yaml `benchmark.metric`).
//
// Kinds (MetricSource::kind):
//  regex         the first capture group of the first match (ECMAScript syntax)
//  json_pointer  an RFC 6901 pointer into the output; the whole text is parsed,
//                else the last line that is a JSON object or array (JSON lines)
//  nvbench_json  NVBench's --json output: benchmarks[].states[].summaries[];
//                the summary whose name (or tag) is nvbenchColumn ("GPU Time"),
//                of the state selected by nvbenchState (else the first state
//                that was not skipped). Durations are seconds there.
//  nvbench_csv   NVBench's --csv output: the header row starts with
//                "Benchmark,"; the column is "<nvbenchColumn>" or
//                "<nvbenchColumn> (<unit>)" ("GPU Time (sec)"); cells may also
//                carry a unit suffix ("12.3 us", as NVBench's markdown prints).
//  wall_time     measured by the caller, not parsed: asking for it is an error.
//
// nvbenchState: space-separated tokens; "Key=Value" matches the state's axis
// Key (for NVBench's power-of-two axes both "2^20" and "1048576" match), a
// token without '=' matches the benchmark name. Every token must match.
//
// Durations (from NVBench or regex/JSON values when src.unit is a time unit
// and the number already is in it) end in src.unit (ns, us, ms, s); the result
// is then multiplied by src.scale.
#pragma once
#include "engine/measure/BenchmarkConfig.h"

#include <optional>
#include <string>

namespace ciq {

// The benchmark's number, in src.unit after src.scale. On failure: nullopt and
// a one-line error that shows the pattern and an excerpt of the output (the
// engine records it as INVALID parse_error). src.file, when set, is read
// instead of stdoutText, relative to workingDir.
std::optional<double> parseMetric(const MetricSource &src, const std::string &stdoutText,
                                  const std::string &workingDir, std::string &error);

// benchmark.metric.file made absolute against workingDir; "" when unset.
std::string metricFilePath(const MetricSource &src, const std::string &workingDir);

// Seconds per one `unit` (ns, us, ms, s, also "sec", "usec", "msec", "nsec");
// nullopt when the unit is not a time unit.
std::optional<double> secondsPerUnit(const std::string &unit);

// One line that shows a long output: the head and tail with newlines escaped.
std::string outputExcerpt(const std::string &text, size_t maxChars = 160);

} // namespace ciq
