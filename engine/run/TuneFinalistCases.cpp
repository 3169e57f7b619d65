// benchmark.cases: the finalists measured interleaved with the baseline,
// every case of every build (command i x cases + k), and judged on the
// geometric mean of the per-case ratios to the baseline, within
// max_regression_percent in every case (CaseScore.h).
#include "engine/run/TuneRun.h"

namespace ciq {

// Adaptive repeats per case: each case's builds stop once its verdicts are
// made (enoughRoundsFor, each against the baseline); the measurement ends
// when every case's have.
EnoughRounds TuneRun::caseEnoughRounds() const {
  EnoughRounds inner = enoughRounds(Judged::EachAgainstFirst);
  if (!inner)
    return nullptr;
  size_t nc = finalistCases();
  return [inner, nc](const std::vector<std::vector<double>> &values) {
    RoundsDecision d;
    d.stop = true;
    d.active.assign(values.size(), true);
    for (size_t c = 0; c < nc; ++c) {
      std::vector<std::vector<double>> one;
      for (size_t k = c; k < values.size(); k += nc)
        one.push_back(values[k]);
      RoundsDecision x = inner(one);
      d.stop = d.stop && x.stop;
      for (size_t b = 0; b < one.size(); ++b)
        d.active[b * nc + c] = !x.stop && (x.active.size() != one.size() || x.active[b]);
    }
    return d;
  };
}

void TuneRun::judgeFinalistCases(WinnerChoice &w, const std::vector<size_t> &order,
                                 const std::vector<std::vector<double>> &values) {
  const Objective &o = cfg_.objectives.front();
  bool minimize = o.direction == "minimize";
  const auto &cases = cfg_.benchmark.cases;
  size_t nc = cases.size();
  std::vector<std::vector<CaseResult>> per(order.size());
  for (size_t k = 0; k < order.size(); ++k)
    for (size_t c = 0; c < nc; ++c) {
      const auto &v = values[k * nc + c];
      Summary s = summarize(v);
      per[k].push_back({cases[c].name, v, s.median, s.cvPercent, medianCiHalfWidthPercent(v), "finalists", 0});
    }
  std::vector<double> mean(order.size(), 0);
  std::vector<std::string> regression(order.size());
  size_t best = 0;
  nlohmann::json rows = nlohmann::json::array();
  for (size_t k = 0; k < order.size(); ++k) {
    std::string why;
    mean[k] = compareCases(per[k], per[0], why);
    regression[k] = mean[k] > 0 ? caseRegression(per[k], minimize, cfg_.benchmark.maxRegressionPercent) : why;
    nlohmann::json cs = nlohmann::json::array();
    for (const auto &c : per[k])
      cs.push_back({{"name", c.name}, {"median", c.median}, {"noise_percent", c.noisePercent}, {"runs", c.runs.size()},
                    {"ratio", c.ratio}, {"p_value", c.pValue}});
    rows.push_back({{"candidate_id", evals_[order[k]].candidateId}, {"median", mean[k]}, {"cases", cs},
                    {"regression", regression[k]}});
    if (k > 0 && regression[k].empty() &&
        (best == 0 || (minimize ? mean[k] < mean[best] : mean[k] > mean[best])))
      best = k;
  }
  journal({{"op", "finalists"}, {"rows", rows}});
  // Improved: no case over the limit, the mean better than the baseline's
  // 1, and at least one case significantly better.
  double bestP = -1;
  for (const auto &c : per[best])
    if (best > 0 && c.pValue >= 0 && (minimize ? c.ratio < 1 : c.ratio > 1) && (bestP < 0 || c.pValue < bestP))
      bestP = c.pValue;
  bool better = best > 0 && (minimize ? mean[best] < 1 : mean[best] > 1);
  bool significant = better && bestP >= 0 && bestP < VerdictAlpha;
  std::string why = best == 0 ? "every finalist slows a case: " + regression[order.size() > 1 ? 1 : 0]
                    : !better ? "the geometric mean of its cases' ratios is not better than the baseline's"
                              : !significant ? "no case is significantly faster (" + fmt::pValue(bestP) + ")" : "";
  progress_.note("finalists: best " + evals_[order[best]].candidateId + " geometric mean of the case ratios " +
                 fmt::value(mean[best]) + " (" + (significant ? fmt::pValue(bestP) : "not significant: " + why) + ")");
  w.index = (int)order[best];
  w.improved = significant;
  w.why = significant ? "" : "not significantly better than the baseline: " + why;
  verdicts_.speedup = mean[best] > 0 ? (minimize ? 1 / mean[best] : mean[best]) : 0;
  verdicts_.pValue = bestP;
  evals_[w.index].scores[o.metric] = mean[best];
  evals_[w.index].cases = per[best];
  evals_[0].scores[o.metric] = 1;
  evals_[0].cases = per[0];
}

} // namespace ciq
