// Minimization and attribution with benchmark.cases: the variants are
// measured case by case (each case's command, args and env selected, the
// variants interleaved within it, each variant built once for all cases),
// so a control is dropped only when no case is significantly worse without
// it, and the winner's gain is split per case and over all of them.
#pragma once
#include "engine/winner/Attribution.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct CaseRows {
  std::string name;                  // the case (benchmark.cases[].name)
  std::vector<VariantResult> rows;   // measureVariants' rows in this case (row 0: the reference)
};

// measureVariants once per case, in the order of benchmark.cases; the tag
// of each case's logs is "<tag>-<case>". nullopt with `error` naming the
// case that could not be measured.
std::optional<std::vector<CaseRows>> measureVariantsPerCase(CandidateBuilder &builder, BenchmarkRunner &bench,
                                                           const TuneConfig &cfg, const std::vector<Variant> &variants,
                                                           int rounds, const std::string &tag, std::string &error,
                                                           MeasureOptions opts);

// One row per variant over all cases, judged as `ciq validate` judges a
// lock with cases: `median` is the geometric mean of the variant's per-case
// ratios to the reference (the reference row: 1), the speedup its inverse
// for a minimized metric, the p-value the smallest among the cases the
// variant is better in; significant when no case is worse than the
// reference by more than benchmark.max_regression_percent, the mean is
// better than 1, and at least one case is significantly better.
std::vector<VariantResult> aggregateCaseRows(const std::vector<CaseRows> &perCase, const TuneConfig &cfg);

// A row's runs as one case's result (its ratio and p-value not yet compared).
CaseResult caseResultOf(const std::string &name, const VariantResult &r);

// Whether row `i` is significantly better than the reference (row 0) in
// any case; `detail` lists each case's comparison ("case small: 1.10x, p = 0.001").
bool betterInAnyCase(const std::vector<CaseRows> &perCase, size_t i, const std::string &unit, std::string &detail);

} // namespace ciq
