// The budget counts distinct binaries (engine/search/Budget.h), and the twin
// predictor (engine/search/TwinPredictor.h) learns which control values give one.
#include "engine/search/Budget.h"
#include "engine/search/TwinPredictor.h"

#include <gtest/gtest.h>

namespace ciq {
namespace {

Evaluation eval(Point p, std::string device, bool ok = true, std::string reason = "", std::string dupKind = "") {
  Evaluation e;
  e.point = std::move(p);
  e.deviceCodeSha256 = std::move(device);
  e.ok = ok;
  e.reason = std::move(reason);
  e.duplicateKind = std::move(dupKind);
  e.generation = 1;
  return e;
}

std::string byDevice(const Evaluation &e) { return e.deviceCodeSha256; }

TEST(Budget, TwinsAndCompileFailuresDoNotCount) {
  std::vector<Evaluation> evals = {
      eval({0}, "a"),
      eval({1}, "a", true, "", "device_code"),
      eval({1}, "a", true, "", "config"),
      eval({2}, "", false, reason::CompileError),
      eval({3}, "b", false, reason::WrongAnswer),
      eval({4}, "c"),
  };
  evals[5].runs = {1.0, 1.1};
  BudgetCount c = countBudget(evals);
  EXPECT_EQ(c.configurations, 6);
  EXPECT_EQ(c.compiled, 5);   // the configuration twin was not built
  EXPECT_EQ(c.distinct, 3);   // a, b (run, then wrong), c
  EXPECT_EQ(c.measured, 1);   // only c has runs
}

// A candidate that ran every case and was then refused for slowing one of
// them (benchmark.cases) spent GPU time: it counts like a wrong answer.
TEST(Budget, CaseRegressionCounts) {
  std::vector<Evaluation> evals = {eval({0}, "a"), eval({1}, "b", false, reason::CaseRegression)};
  evals[1].runs = {1.0, 1.1};
  BudgetCount c = countBudget(evals);
  EXPECT_EQ(c.distinct, 2);
  EXPECT_EQ(c.measured, 1);
}

TEST(Budget, EndTextSaysWhy) {
  BudgetCount c;
  c.distinct = 3;
  c.configurations = 24;
  EXPECT_EQ(searchEndText(SearchEnd::Budget, 3, 24, c), "search ended: budget met (3 distinct binaries of 3)");
  EXPECT_NE(searchEndText(SearchEnd::ConfigurationCap, 8, 24, c).find("24 configurations gave only 3 distinct binaries"),
            std::string::npos);
}

// Two controls; control 0's values 0 and 1 give one binary whatever control 1 is.
TEST(TwinPredictor, PredictsAcrossContextsOnceValuesAreEquivalent) {
  std::vector<Evaluation> evals = {eval({0, 0}, "x"), eval({1, 0}, "x"), eval({0, 1}, "y")};
  TwinPredictor t(2, evals, 2, byDevice);
  EXPECT_EQ(t.equivalences(), 1);
  const Evaluation *twin = t.predict({1, 1});
  ASSERT_NE(twin, nullptr);
  EXPECT_EQ(twin->deviceCodeSha256, "y");
  EXPECT_EQ(t.predict({2, 1}), nullptr);   // value 2 never seen equal to anything
}

// Equal in one context, different in another: no prediction from that control.
TEST(TwinPredictor, ContradictingEvidenceDisablesTheControl) {
  std::vector<Evaluation> evals = {eval({0, 0}, "x"), eval({1, 0}, "x"), eval({0, 1}, "y"), eval({1, 1}, "z"),
                                   eval({0, 2}, "w")};
  TwinPredictor t(2, evals, 2, byDevice);
  EXPECT_EQ(t.predict({1, 2}), nullptr);
}

TEST(TwinPredictor, ReadsOnlyEarlierGenerationsAndSharedKeys) {
  std::vector<Evaluation> evals = {eval({0, 0}, "x"), eval({1, 0}, "x"), eval({0, 1}, "y")};
  evals[1].generation = 3;
  EXPECT_EQ(TwinPredictor(2, evals, 2, byDevice).predict({1, 1}), nullptr);
  // A reuse key of "" (a runtime result never shared) teaches nothing.
  EXPECT_EQ(TwinPredictor(2, evals, 9, [](const Evaluation &) { return std::string(); }).predict({1, 1}), nullptr);
}

} // namespace
} // namespace ciq
