#include "engine/search/PhasePlan.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ciq {

double PhasePlan::reserve(int from) const {
  double sum = 0;
  for (int p = std::max(0, from); p < kAfterSearchPhases; ++p)
    sum += share[(size_t)p];
  return sum;
}

namespace {

// The least each phase needs for a verdict: the finalists' kLeastRounds
// rounds and the rehearsal; the minimization and the attribution run in
// what is left (their trials are skipped, their controls kept, when none fits).
std::array<double, kAfterSearchPhases> leastNeed(const PhaseCosts &costs, AfterSearchShape shape) {
  shape.rounds = std::min(shape.rounds, kLeastRounds);
  auto v = afterSearchSeconds(costs, shape);
  std::array<double, kAfterSearchPhases> least{};
  least[0] = v[0];
  least[2] = v[2];
  return least;
}

} // namespace

PhasePlan planPhases(const PhaseCosts &costs, const AfterSearchShape &shape, double budget, double left, int from) {
  PhasePlan plan;
  plan.left = left;
  auto all = afterSearchSeconds(costs, shape);
  auto least = leastNeed(costs, shape);
  double leastSum = 0;
  for (int p = 0; p < kAfterSearchPhases; ++p) {
    bool done = p < from;
    plan.need[(size_t)p] = done ? 0 : all[(size_t)p];
    least[(size_t)p] = done ? 0 : least[(size_t)p];
    leastSum += least[(size_t)p];
  }
  // While the search runs, the phases after it get at most their share of
  // the budget (never less than the least a verdict needs); once it ended,
  // all that is left.
  double cap = left;
  if (from == 0 && std::isfinite(budget))
    cap = std::min(left, std::max(leastSum, kAfterSearchShare * budget));
  double avail = std::max(0.0, cap);
  for (int p = 0; p < kAfterSearchPhases; ++p) {
    plan.share[(size_t)p] = std::min(least[(size_t)p], avail);
    avail -= plan.share[(size_t)p];
  }
  for (int p = 0; p < kAfterSearchPhases; ++p) {
    double more = std::min(plan.need[(size_t)p] - plan.share[(size_t)p], avail);
    if (more > 0) {
      plan.share[(size_t)p] += more;
      avail -= more;
    }
    if (plan.share[(size_t)p] + 0.5 < plan.need[(size_t)p])
      plan.cuts.push_back(std::string(kAfterSearchNames[p]) + ": " + durationText(plan.share[(size_t)p]) + " of the " +
                          durationText(plan.need[(size_t)p]) + " it needs at the measured costs");
  }
  plan.search = std::isfinite(left) ? std::max(0.0, left - plan.reserve(0)) : std::numeric_limits<double>::infinity();
  return plan;
}

bool searchMayTakeOne(const PhasePlan &plan, double one) { return plan.search > one; }

bool roundsEndAtDeadline(size_t roundsDone, double elapsed, double lastRoundSeconds, double deadline) {
  return roundsDone >= (size_t)kLeastRounds && elapsed + std::max(0.0, lastRoundSeconds) > deadline;
}

bool timeReturnsToSearch(const PhasePlan &afterFinalists, const PhaseCosts &costs, double finalistsSeconds) {
  if (!std::isfinite(afterFinalists.left) || costs.candidateSeconds <= 0)
    return false;
  double spare = afterFinalists.left - afterFinalists.reserve(1);
  return spare >= kLeastReturned * costs.candidateSeconds + finalistsSeconds;
}

} // namespace ciq
