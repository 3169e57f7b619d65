// results.csv: one row per evaluation, columns in docs/results-csv.md; the
// schema (columns, quoting, numbers) is RunSchema.h's, which analysis reads by.
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"

#include <string>
#include <vector>

namespace ciq {

// The figures of each case of benchmark.cases, columns "case:<name>:<figure>".
inline constexpr const char *kCaseFigures[] = {"median", "runs", "noise_percent", "ratio", "p_value"};

std::vector<std::string> resultsCsvHeader(const TuneConfig &cfg);
// Rewrites the whole file atomically (the pareto column changes as the front moves).
// On failure `error` names the file and the errno, and `errNo` (when given) holds it.
bool writeResultsCsv(const std::string &path, const TuneConfig &cfg, const std::vector<Evaluation> &evals,
                     std::string &error, int *errNo = nullptr);

} // namespace ciq
