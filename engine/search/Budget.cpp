#include "engine/search/Budget.h"

#include <algorithm>

namespace ciq {

bool countsAgainstBudget(const Evaluation &e) {
  if (!e.duplicateKind.empty())
    return false;
  if (e.ok)
    return true;
  // INVALID after the binary existed: the GPU (or the benchmark's host) ran it.
  static const char *const afterBuild[] = {reason::RunCrash,   reason::RunTimeout,   reason::WrongAnswer,
                                           reason::ParseError, reason::InvalidValue, reason::NoFreshResult,
                                           reason::CaseRegression};
  return std::any_of(std::begin(afterBuild), std::end(afterBuild), [&](const char *r) { return e.reason == r; });
}

BudgetCount countBudget(const std::vector<Evaluation> &evals) {
  BudgetCount c;
  for (const auto &e : evals) {
    ++c.configurations;
    c.compiled += e.duplicateKind != "config";
    if (!countsAgainstBudget(e))
      continue;
    ++c.distinct;
    c.measured += !e.runs.empty() || !e.stoppedBy.empty();
  }
  return c;
}

std::string distinctText(int n, bool deviceCodes) {
  if (deviceCodes)
    return std::to_string(n) + " distinct device code" + (n == 1 ? "" : "s");
  return std::to_string(n) + " distinct binar" + (n == 1 ? "y" : "ies");
}

std::string searchEndText(SearchEnd end, int budget, int configurationCap, const BudgetCount &c, bool deviceCodes) {
  std::string binaries = distinctText(c.distinct, deviceCodes);
  switch (end) {
  case SearchEnd::Budget:
    return "search ended: budget met (" + binaries + " of " + std::to_string(budget) + ")";
  case SearchEnd::SpaceExhausted:
    return "search ended: the strategy has no new point to propose (space exhausted) after " + binaries + " of a budget of " +
           std::to_string(budget);
  case SearchEnd::NothingNew:
    return "search ended: the strategy's last " + std::to_string(kSpentNothing) + " proposals all repeated an evaluated point or a known " +
           (deviceCodes ? "device code" : "binary") + ", after " +
           binaries + " of a budget of " + std::to_string(budget);
  case SearchEnd::ConfigurationCap:
    return "search ended: " + std::to_string(c.compiled) + " configurations compiled gave only " + binaries +
           " (cap: search.max_configurations_per_binary x budget = " + std::to_string(configurationCap) +
           "); the space holds few distinct " + (deviceCodes ? "device codes" : "binaries") +
           ", or more compiles find them: raise search.max_configurations_per_binary";
  case SearchEnd::Generations:
    return "search ended: search.generations reached after " + binaries + " of a budget of " + std::to_string(budget);
  case SearchEnd::KernelStage:
    return "search ended: the per-kernel stage tried every kernel's controls and measured their combination, after " +
           binaries + " of a budget of " + std::to_string(budget);
  case SearchEnd::KernelStageCut:
    return "search ended: the per-kernel stage's share of the budget ended its rounds before every value was tried (" +
           std::to_string(c.compiled) + " configurations compiled, " + binaries + " of a budget of " +
           std::to_string(budget) + ", cap " + std::to_string(configurationCap) +
           "); raise search.max_evaluations, kernel_controls.budget or search.max_configurations_per_binary to try more";
  case SearchEnd::Time:
    return "search ended: the time budget's share for the search was spent after " + binaries + " of a budget of " +
           std::to_string(budget) + " (the rest is kept for the phases after it)";
  }
  return "";
}

} // namespace ciq
