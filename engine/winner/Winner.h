// Choosing the winner and showing it next to the baseline.
#pragma once
#include "engine/search/Budget.h"
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"

#include <cstdio>
#include <optional>
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
  std::vector<std::string> rehearsal;     // the lock's own build: "c0005 built as its lock builds it ..."
  std::vector<std::string> gpuProblems;   // throttling or sharing seen while measuring
  // The search phase (generations after the baseline): what the budget bought.
  BudgetCount counts;                     // over the journal's evaluations
  int budget = 0, configurationCap = 0;   // distinct binaries; configurations at most
  std::optional<SearchEnd> searchEnd;     // unset: not searched here (e.g. a summary of a journal)
  double searchSeconds = 0;               // this process's search phase, wall clock
  double gpuBusySeconds = 0;
  // A resumed search: the evaluations journaled by the earlier process(es),
  // whose time is not in the two figures above (the journal keeps no wall
  // clock), and those this process recorded in its search phase.
  int resumedEvaluations = 0, searchedHere = 0;
  // Wall time of each phase in this process (issue 49 item 2): search,
  // per-kernel stage, finalists, minimization, rehearsal, attribution.
  std::vector<std::pair<std::string, double>> phaseSeconds;
  // The time budget (--time, search.max_minutes): what it was and what it cut.
  std::vector<std::string> timeBudget;
  // Seconds this process waited while another process measured on the GPU
  // (its GPU lock): not counted in the cost of a binary.
  double gpuLockWaitSeconds = 0;
  // Re-measurement runs taken from the journal of a killed run, not run again.
  int roundsReplayed = 0;
  int predictedTwins = 0;                 // proposals not compiled: predicted to repeat a binary              // the benchmark's runs in it (measure_ms of its evaluations)
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
