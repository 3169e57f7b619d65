// benchmark.cases (docs/config.md, "Cases"): a candidate's score is the
// geometric mean over the cases of its median / the baseline's median in
// that case (the baseline scores 1; lower is better for a time), and a
// candidate that slows any one case by more than
// benchmark.max_regression_percent is INVALID (case_regression), whatever
// its mean: a lock tuned for three sizes must not trade one of them away.
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"

#include <string>
#include <vector>

namespace ciq {

// The geometric mean of `ratios` (all > 0); 0 when empty or one is not.
double geometricMean(const std::vector<double> &ratios);

// Fills each case's ratio (median / the baseline's median of the case of
// the same name) and Welch p-value against the baseline's runs; returns the
// geometric mean of the ratios, or 0 (with `why`) when a case is missing
// from the baseline or a median is 0.
double compareCases(std::vector<CaseResult> &cases, const std::vector<CaseResult> &baseline, std::string &why);

// How much worse than the baseline a ratio is, in percent (>0: worse):
// (ratio - 1) for a minimized metric, (1 / ratio - 1) for a maximized one.
double worsePercent(double ratio, bool minimize);

// "" when no case is worse than the baseline by more than limitPercent,
// else the first such case: "case 'small' 23.1% slower than the baseline
// (limit 1%)" ("worse" for a maximized metric).
std::string caseRegression(const std::vector<CaseResult> &cases, bool minimize, double limitPercent);

// A measured candidate with cases: its ratios and p-values against
// `baseline` (null: e is the baseline, every ratio 1), its score (the
// geometric mean, under the first objective's metric), and INVALID
// case_regression when one case is over the limit. No-op without cases.
void scoreCases(const TuneConfig &cfg, Evaluation &e, const Evaluation *baseline);

} // namespace ciq
