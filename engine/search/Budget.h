// What a search's budget buys (search.max_evaluations, ciq_tune(BUDGET),
// --max-evaluations): distinct binaries. A candidate whose configuration or
// device code an earlier one had is recorded as that one's twin (its result
// reused, no GPU time) and costs nothing; a flat landscape still ends, after
// search.max_configurations_per_binary compiled configurations per binary of the budget.
#pragma once
#include "engine/record/Evaluation.h"

#include <string>
#include <vector>

namespace ciq {

// True for a candidate that built a binary no earlier candidate had and was
// scored or run: OK, or INVALID at run time (crash, timeout, wrong answer,
// unreadable metric). A compile that failed made no binary; a twin reused one.
bool countsAgainstBudget(const Evaluation &e);

struct BudgetCount {
  int configurations = 0;   // every evaluated configuration (one journal evaluation each)
  int compiled = 0;         // built: configuration twins are not
  int distinct = 0;         // binaries that count against the budget (countsAgainstBudget)
  int measured = 0;         // of those, run by the benchmark (runtime objectives)
};

BudgetCount countBudget(const std::vector<Evaluation> &evals);

// Why a search's proposals ended, for the summary.
// KernelStage: the per-kernel stage (KernelSearch.h) tried every kernel's
// trials and measured their combination within the budget; KernelStageCut:
// its share of the budget or the configuration cap ended its rounds first.
// Time: the time budget (TimeBudget.h) left the search no more than the
// phases after it need.
enum class SearchEnd { Budget, SpaceExhausted, NothingNew, ConfigurationCap, Generations, KernelStage, KernelStageCut, Time };

// Proposals in a row that repeat an evaluated point or a known binary before
// a search without generations of its own ends (SearchEnd::NothingNew).
constexpr int kSpentNothing = 100;

// One line: "search ended: budget met (8 distinct binaries)" and the like.
// deviceCodes: a compile-only objective, whose budget counts distinct device
// codes ("3 distinct device codes").
std::string searchEndText(SearchEnd end, int budget, int configurationCap, const BudgetCount &c,
                          bool deviceCodes = false);
// "1 distinct binary", "3 distinct device codes".
std::string distinctText(int n, bool deviceCodes);

} // namespace ciq
