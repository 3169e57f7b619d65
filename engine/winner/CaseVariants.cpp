#include "engine/winner/CaseVariants.h"

#include "common/NumberFormat.h"
#include "engine/winner/CaseScore.h"
#include "engine/measure/Stats.h"

#include <map>

namespace ciq {

std::optional<std::vector<CaseRows>> measureVariantsPerCase(CandidateBuilder &builder, BenchmarkRunner &bench,
                                                           const TuneConfig &cfg, const std::vector<Variant> &variants,
                                                           int rounds, const std::string &tag, std::string &error,
                                                           MeasureOptions opts) {
  // Each variant is built once: the later cases run the snapshot of the first.
  std::map<std::string, std::vector<std::string>> local;
  if (!opts.snapshots)
    opts.snapshots = &local;
  std::vector<CaseRows> out;
  const std::string key = opts.roundsKey;
  for (const auto &c : cfg.benchmark.cases) {
    bench.selectCase(&c);
    opts.caseIndex = (int)out.size();
    if (!key.empty())
      opts.roundsKey = key + "/" + c.name;
    auto rows = measureVariants(builder, &bench, cfg, variants, rounds, tag + "-" + c.name, error, opts);
    bench.selectCase(nullptr);
    if (!rows) {
      error = "case '" + c.name + "': " + error;
      return std::nullopt;
    }
    out.push_back({c.name, std::move(*rows)});
  }
  return out;
}

CaseResult caseResultOf(const std::string &name, const VariantResult &r) {
  CaseResult c;
  c.name = name;
  c.runs = r.values;
  c.median = r.median;
  c.cvPercent = r.cvPercent;
  c.noisePercent = medianCiHalfWidthPercent(r.values);
  return c;
}

std::vector<VariantResult> aggregateCaseRows(const std::vector<CaseRows> &perCase, const TuneConfig &cfg) {
  std::vector<VariantResult> out;
  if (perCase.empty())
    return out;
  bool minimize = cfg.objectives.front().direction == "minimize";
  size_t n = perCase.front().rows.size();
  for (size_t i = 0; i < n; ++i) {
    VariantResult a;
    a.name = perCase.front().rows[i].name;
    a.controls = perCase.front().rows[i].controls;
    a.reference = 1;
    if (i == 0) {
      a.median = 1;
      out.push_back(a);
      continue;
    }
    std::vector<CaseResult> mine, ref;
    for (const auto &c : perCase) {
      mine.push_back(caseResultOf(c.name, c.rows[i]));
      ref.push_back(caseResultOf(c.name, c.rows[0]));
    }
    std::string why;
    double mean = compareCases(mine, ref, why);
    a.median = mean;
    if (mean <= 0) {
      a.verdict = why;
      out.push_back(a);
      continue;
    }
    a.speedup = minimize ? 1 / mean : mean;
    for (const auto &c : mine)
      if ((minimize ? c.ratio < 1 : c.ratio > 1) && (a.pValue < 0 || c.pValue < a.pValue))
        a.pValue = c.pValue;
    std::string regression = caseRegression(mine, minimize, cfg.benchmark.maxRegressionPercent);
    bool better = minimize ? mean < 1 : mean > 1;
    a.significant = regression.empty() && better && a.pValue >= 0 && a.pValue < VerdictAlpha;
    a.verdict = a.significant      ? "significantly better over the cases"
                : !regression.empty() ? regression
                : !better ? "the geometric mean of the case ratios is not better"
                          : "no case significantly better";
    if (a.pValue < 0)
      a.pValue = 1;   // a measured row: formatVariant prints its p-value
    out.push_back(a);
  }
  return out;
}

bool betterInAnyCase(const std::vector<CaseRows> &perCase, size_t i, const std::string &unit, std::string &detail) {
  bool any = false;
  detail.clear();
  for (const auto &c : perCase) {
    const VariantResult &r = c.rows[i];
    any = any || r.significant;
    detail += (detail.empty() ? "" : "; ") + ("case " + c.name + ": " + speedupText(r, unit) + ", " +
                                             fmt::pValue(r.pValue));
  }
  return any;
}

} // namespace ciq
