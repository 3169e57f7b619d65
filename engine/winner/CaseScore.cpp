#include "engine/winner/CaseScore.h"
#include "engine/config/Metrics.h"
#include "engine/measure/Stats.h"
#include "common/NumberFormat.h"

#include <cmath>
#include <cstdio>

namespace ciq {

double geometricMean(const std::vector<double> &ratios) {
  if (ratios.empty())
    return 0;
  double logs = 0; // a sum of logs: a product of many ratios neither overflows nor underflows
  for (double r : ratios) {
    if (!(r > 0) || !std::isfinite(r))
      return 0;
    logs += std::log(r);
  }
  return std::exp(logs / ratios.size());
}

double compareCases(std::vector<CaseResult> &cases, const std::vector<CaseResult> &baseline, std::string &why) {
  std::vector<double> ratios;
  for (auto &c : cases) {
    const CaseResult *b = nullptr;
    for (const auto &x : baseline)
      if (x.name == c.name)
        b = &x;
    if (!b) {
      why = "case '" + c.name + "' has no baseline measurement";
      return 0;
    }
    if (b->median == 0 || c.median == 0) {
      why = "case '" + c.name + "' has a median of 0, so no ratio to the baseline";
      return 0;
    }
    c.ratio = c.median / b->median;
    c.pValue = welchTTest(b->runs, c.runs).pValue;
    ratios.push_back(c.ratio);
  }
  return geometricMean(ratios);
}

double worsePercent(double ratio, bool minimize) {
  if (ratio <= 0)
    return 0;
  return 100 * (minimize ? ratio - 1 : 1 / ratio - 1);
}

std::string caseRegression(const std::vector<CaseResult> &cases, bool minimize, double limitPercent) {
  for (const auto &c : cases) {
    double worse = worsePercent(c.ratio, minimize);
    if (worse > limitPercent) {
      char buf[64];
      snprintf(buf, sizeof buf, "%.1f%%", worse);
      return "case '" + c.name + "' " + buf + (minimize ? " slower" : " worse") + " than the baseline (limit " +
             fmt::value(limitPercent) + "%)";
    }
  }
  return "";
}

void scoreCases(const TuneConfig &cfg, Evaluation &e, const Evaluation *baseline) {
  if (cfg.benchmark.cases.empty() || !e.ok || e.cases.empty() || cfg.objectives.empty())
    return;
  const Objective &o = cfg.objectives.front();
  if (isCompileMetric(o.metric))
    return;
  std::string why;
  double mean = compareCases(e.cases, baseline ? baseline->cases : e.cases, why);
  if (mean <= 0) {
    e.ok = false;
    e.reason = reason::NotMeasurable;
    e.message = why;
    e.scores.clear();
    return;
  }
  e.scores[o.metric] = mean;
  bool minimize = o.direction == "minimize";
  std::string regression = caseRegression(e.cases, minimize, cfg.benchmark.maxRegressionPercent);
  if (!regression.empty()) {
    e.ok = false;
    e.reason = reason::CaseRegression;
    e.message = regression;
  }
}

} // namespace ciq
