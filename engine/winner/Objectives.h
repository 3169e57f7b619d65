// Scores: compile metrics from the wrapper's receipts (ptxas statistics and
// device code), runtime metrics from the benchmark, and the vector the
// strategies compare.
#pragma once
#include "engine/config/Config.h"
#include "engine/config/Metrics.h"
#include "engine/record/Evaluation.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// Does a kernel match an objective's `kernels` filter? Matches the mangled
// name, the demangled name, or the demangled name without its parameters.
bool kernelSelected(const KernelStats &k, const std::vector<std::string> &filter);

// A compile metric of engine/config/Metrics.h (docs/config.md, "Metrics"), per
// kernel summed or max over kernels and architectures, or summed over objects.
// Device functions count in spill and stack metrics. A statistic ptxas did
// not report (ptxas did not run at compile time, a missing line) is unknown:
// nullopt with `why`, never 0.
std::optional<double> compileMetric(const Objective &o, const Evaluation &e, std::string &why);

// Fills e.scores for every compile objective; false (e INVALID
// not_measurable) when one is unknown.
bool scoreCompileMetrics(const TuneConfig &cfg, Evaluation &e);

// "" when ptxas compiled at least one kernel or device function for e (or
// kernels were compiled at run time); else why there is nothing to tune,
// naming e's sources: a target whose .cu files define no device code gives
// every control the same (empty) device code, which is no cache problem.
std::string noDeviceCodeReason(const TuneConfig &cfg, const Evaluation &e);

// The objectives of e, negated where maximized: smaller is better.
std::vector<double> normalizedObjectives(const TuneConfig &cfg, const Evaluation &e);

} // namespace ciq
