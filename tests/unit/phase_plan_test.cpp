// Issue 55 item 1: the plan of a timed tune. The shares of the phases after
// the search never add up to more than the time left, take at most their
// share of the budget while the search runs (beyond the least a verdict
// needs), and time they do not use goes back to the search.
#include "engine/search/PhasePlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace ciq;

namespace {

AfterSearchShape runtimeShape(int controls = 3) {
  AfterSearchShape s;
  s.runtime = true;
  s.finalists = 2;
  s.rounds = 10;
  s.controls = controls;
  s.programsKept = true;
  return s;
}

// 5 s a build, 1 s a run, 20 s a candidate, 30 s the whole build.
PhaseCosts costs() { return PhaseCosts{5, 1, 20, 30}; }

} // namespace

TEST(PhasePlan, ReserveNeverExceedsTheTimeLeft) {
  // The need is far more than the budget (a memory-bound solver under
  // --time 3m reserved 8m48s): every share is capped by what is left.
  PhaseCosts c{60, 20, 120, 300};
  for (double left : {0.0, 5.0, 40.0, 179.0})
    for (int from = 0; from < kAfterSearchPhases; ++from) {
      PhasePlan p = planPhases(c, runtimeShape(), 180, left, from);
      EXPECT_LE(p.reserve(from), left + 1e-9) << left << " " << from;
      EXPECT_GE(p.search, 0);
      EXPECT_NEAR(p.search + p.reserve(0), std::max(left, p.reserve(0)), 1e-9);
    }
}

TEST(PhasePlan, WhileTheSearchRunsThePhasesAfterItGetTheirShareOfTheBudget) {
  // The need: finalists 3 x 10 runs = 30 s, minimization 3 x (5 + 20) = 75 s,
  // rehearsal 30 s, attribution 2 x 5 + 4 x 10 = 50 s: 185 s of a 600 s budget.
  PhasePlan p = planPhases(costs(), runtimeShape(), 600, 600);
  EXPECT_DOUBLE_EQ(p.need[0], 30);
  EXPECT_DOUBLE_EQ(p.need[1], 75);
  EXPECT_DOUBLE_EQ(p.need[2], 30);
  EXPECT_DOUBLE_EQ(p.need[3], 50);
  // Capped at kAfterSearchShare of the budget (138 s): the finalists, the
  // rehearsal and the minimization in full, the attribution in what remains.
  EXPECT_NEAR(p.reserve(0), kAfterSearchShare * 600, 1e-9);
  EXPECT_DOUBLE_EQ(p.share[0], 30);
  EXPECT_DOUBLE_EQ(p.share[1], 75);
  EXPECT_DOUBLE_EQ(p.share[2], 30);
  EXPECT_NEAR(p.share[3], kAfterSearchShare * 600 - 135, 1e-9);
  EXPECT_NEAR(p.search, 600 - kAfterSearchShare * 600, 1e-9);
  ASSERT_EQ(p.cuts.size(), 1u);
  EXPECT_EQ(p.cuts[0], "attribution: 3s of the 50s it needs at the measured costs");
  // A budget whose cap is below the least a verdict needs (kLeastRounds
  // rounds of the finalists and the rehearsal) still keeps that least.
  PhasePlan tight = planPhases(costs(), runtimeShape(), 100, 100);
  EXPECT_DOUBLE_EQ(tight.share[0], 3 * 3);
  EXPECT_DOUBLE_EQ(tight.share[2], 30);
  EXPECT_NEAR(tight.reserve(0), std::max(39.0, kAfterSearchShare * 100), 1e-9);
}

TEST(PhasePlan, OnceTheSearchEndedTheLaterPhasesMayTakeAllThatIsLeft) {
  PhasePlan p = planPhases(costs(), runtimeShape(), 600, 400, 1);
  EXPECT_DOUBLE_EQ(p.share[0], 0);
  EXPECT_DOUBLE_EQ(p.share[1], 75);
  EXPECT_DOUBLE_EQ(p.share[3], 50);
  EXPECT_DOUBLE_EQ(p.reserve(1), 155);
  EXPECT_TRUE(p.cuts.empty());
}

TEST(PhasePlan, UnusedTimeGoesBackToTheSearch) {
  // After the finalists (20 s), 400 s left and 155 s needed after them:
  // 245 s buy a second re-measurement and more than two binaries.
  PhasePlan p = planPhases(costs(), runtimeShape(), 600, 400, 1);
  EXPECT_TRUE(timeReturnsToSearch(p, costs(), 20));
  // 200 s left: 45 s beyond the later phases buy two 20 s binaries but not
  // the 20 s re-measurement too.
  EXPECT_FALSE(timeReturnsToSearch(planPhases(costs(), runtimeShape(), 600, 200, 1), costs(), 20));
  // Without a time budget, or before a candidate was measured: never.
  PhaseCosts unmeasured{5, 1, 0, 30};
  EXPECT_FALSE(timeReturnsToSearch(p, unmeasured, 20));
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(timeReturnsToSearch(planPhases(costs(), runtimeShape(), inf, inf, 1), costs(), 20));
}

TEST(PhasePlan, TheSearchTakesABinaryWhileOneFitsBesideTheShares) {
  PhasePlan p = planPhases(costs(), runtimeShape(), 600, 160);
  // 138 s of shares: 22 s for the search.
  EXPECT_TRUE(searchMayTakeOne(p, 20));
  EXPECT_FALSE(searchMayTakeOne(p, 25));
  // A compile-only tune runs nothing after the search but the rehearsal.
  AfterSearchShape compileOnly;
  compileOnly.controls = 3;
  PhasePlan c = planPhases(costs(), compileOnly, 600, 600);
  EXPECT_DOUBLE_EQ(c.reserve(0), c.need[1] + c.need[2] + c.need[3]);
}

TEST(PhasePlan, TimeReturnsWhenTwoBinariesAndAReMeasurementFitBeyondTheLaterPhases) {
  // Issue 55 item 6 (d): the decision that sends time back to the search
  // after the finalists, at its edge. The later phases' shares (155 s:
  // minimization 75, rehearsal 30, attribution 50) stay theirs; what is
  // beyond them must buy kLeastReturned binaries of 20 s and the 20 s the
  // finalists just took.
  double edge = 155 + kLeastReturned * 20 + 20;
  PhasePlan at = planPhases(costs(), runtimeShape(), 600, edge, 1);
  EXPECT_DOUBLE_EQ(at.reserve(1), 155);
  EXPECT_TRUE(timeReturnsToSearch(at, costs(), 20));
  EXPECT_FALSE(timeReturnsToSearch(planPhases(costs(), runtimeShape(), 600, edge - 1, 1), costs(), 20));
  // Finalists that took longer need more left over for a second re-measurement.
  EXPECT_FALSE(timeReturnsToSearch(at, costs(), 21));
  // The finalists' own share is spent by then: only the later phases' count.
  EXPECT_DOUBLE_EQ(at.share[0], 0);
  // Slower binaries (30 s a candidate) need more than the same time left.
  PhaseCosts slower{5, 1, 30, 30};
  EXPECT_FALSE(timeReturnsToSearch(planPhases(slower, runtimeShape(), 600, edge, 1), slower, 20));
}

TEST(PhasePlan, NoRoundStartsThatWouldEndPastItsDeadline) {
  // caps under --time 60s on a loaded host: the finalists began at 37 s,
  // their deadline 52.5 s (the rehearsal's 7.5 s kept), rounds of 3.4 s.
  // After round 4 (50.6 s) a fifth would end at 54 s: it is not started
  // (checked only for the time already past the deadline, it ran, and the
  // tune used 102% of its budget).
  EXPECT_FALSE(roundsEndAtDeadline(3, 47.2, 3.4, 52.5));
  EXPECT_TRUE(roundsEndAtDeadline(4, 50.6, 3.4, 52.5));
  // The least a verdict needs runs whatever the time.
  EXPECT_FALSE(roundsEndAtDeadline(kLeastRounds - 1, 70, 3.4, 52.5));
  EXPECT_TRUE(roundsEndAtDeadline(kLeastRounds, 70, 3.4, 52.5));
  // A round that ends exactly at the deadline still runs.
  EXPECT_FALSE(roundsEndAtDeadline(5, 49, 3.5, 52.5));
}
