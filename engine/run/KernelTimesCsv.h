// kernel-times.csv beside results.csv (benchmark.metric kernel_time): one row
// per kernel of each evaluation's traced run (Evaluation::kernelTimes), so
// the per-kernel figures sit next to the scores without widening results.csv
// by a column per kernel (docs/results-csv.md, "kernel-times.csv").
#pragma once
#include "engine/record/Evaluation.h"

#include <string>
#include <vector>

namespace ciq {

inline constexpr const char *kKernelTimesCsv = "kernel-times.csv";

// Rewrites <dir>/kernel-times.csv atomically; nothing when no evaluation was traced.
bool writeKernelTimesCsv(const std::string &dir, const std::vector<Evaluation> &evals, std::string &error);

} // namespace ciq
