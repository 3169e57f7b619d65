// Choosing the winner and showing it next to the baseline.
#pragma once
#include "Config.h"
#include "Evaluation.h"

#include <cstdio>
#include <vector>

namespace ciq {

struct WinnerChoice {
  int index = -1;        // into evals; -1 when nothing is OK
  bool improved = false; // strictly better than the baseline (lexicographic on the objectives)
};

// The best OK evaluation: lexicographic on the objectives (first primary),
// which is also on the Pareto front when there are several.
WinnerChoice chooseWinner(const TuneConfig &cfg, const std::vector<Evaluation> &evals);
// Sets Evaluation::pareto: the Pareto front with `pareto: true`, else the best.
void markFront(const TuneConfig &cfg, std::vector<Evaluation> &evals);
// Baseline and winner side by side, per kernel and architecture.
void printSummary(const TuneConfig &cfg, const std::vector<Evaluation> &evals, const WinnerChoice &w, FILE *out);

} // namespace ciq
