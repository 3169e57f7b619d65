// Choosing the winner and showing it next to the baseline.
#pragma once
#include "engine/Config.h"
#include "engine/record/Evaluation.h"

#include <cstdio>
#include <vector>

namespace ciq {

struct WinnerChoice {
  int index = -1;        // into evals; -1 when nothing is OK
  bool improved = false; // better than the baseline: strictly (compile-only), significantly (runtime)
  std::string why;       // when not improved: why not, one phrase
};

// What the engine learnt after the search: the verdict's figures, the
// minimization and the attribution (Attribution.h), shown by printSummary.
struct Verdicts {
  double speedup = 0;        // of the final winner over the baseline, 0 when not measured
  double pValue = -1;        // <0: exact comparison
  std::vector<std::string> attribution;   // formatted rows (formatVariant)
  std::vector<std::string> minimization;  // "dropped control x (p = 0.4: may be noise)"
  std::vector<std::string> gpuProblems;   // throttling or sharing seen while measuring
};

// The best OK evaluation: lexicographic on the objectives (first primary),
// which is also on the Pareto front when there are several.
WinnerChoice chooseWinner(const TuneConfig &cfg, const std::vector<Evaluation> &evals);
// Sets Evaluation::pareto: the Pareto front with `pareto: true`, else the best.
void markFront(const TuneConfig &cfg, std::vector<Evaluation> &evals);
// Baseline and winner side by side, per kernel and architecture, and one
// verdict: the winner's options and notes only when it beat the baseline.
void printSummary(const TuneConfig &cfg, const std::vector<Evaluation> &evals, const WinnerChoice &w, FILE *out,
                  const Verdicts &v = {});

} // namespace ciq
