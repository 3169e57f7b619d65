// The budget counts distinct binaries (engine/search/Budget.h), and the twin
// predictor (engine/search/TwinPredictor.h) learns which control values give one.
#include "engine/search/Budget.h"
#include "engine/search/DefaultValues.h"
#include "engine/search/TwinPredictor.h"
#include "engine/search/TimeBudget.h"

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
  c.configurations = 30;
  c.compiled = 24;
  EXPECT_EQ(searchEndText(SearchEnd::Budget, 3, 24, c), "search ended: budget met (3 distinct binaries of 3)");
  // The cap counts compiled configurations (issue 41 item 7), not configuration twins.
  EXPECT_NE(searchEndText(SearchEnd::ConfigurationCap, 8, 24, c).find("24 configurations compiled gave only 3 distinct binaries"),
            std::string::npos);
}

// Issue 41 item 7: --register-usage-level does nothing under --opt-level=1;
// after three of its values there gave one binary, its others are predicted
// there, but not in a context where it was seen once.
TEST(TwinPredictor, ControlInertInOneContext) {
  std::vector<Evaluation> evals = {eval({0, kUnset}, "o1"), eval({0, 0}, "o1"), eval({0, 1}, "o1"),
                                   eval({1, 0}, "o3a"), eval({1, 1}, "o3b")};
  TwinPredictor t(2, evals, 2, byDevice);
  const Evaluation *twin = t.predict({0, 7});
  ASSERT_NE(twin, nullptr);
  EXPECT_EQ(twin->deviceCodeSha256, "o1");
  EXPECT_EQ(t.predict({1, 7}), nullptr);
  EXPECT_EQ(t.predict({kUnset, 7}), nullptr);
}

// Issue 41 item 7: a value equal to the compiler's default builds what unset builds.
namespace {
SearchSpace defaultsSpace() {
  SearchSpace s;
  Control o;
  o.name = "opt-level";
  o.option = "--opt-level={}";
  o.values = {"1", "2", "3"};
  o.compilerDefault = "3";
  Control r;
  r.name = "register-usage-level";
  r.option = "--register-usage-level={}";
  r.values = {"0", "5", "10"};
  r.compilerDefault = "5";
  Control e;
  e.name = "allow-expensive-optimizations";
  e.option = "--allow-expensive-optimizations={}";
  e.values = {"true", "false"};
  Control m;
  m.name = "maxrregcount";
  m.option = "--maxrregcount={}";
  m.values = {"32", "64"};
  s.controls = {o, r, e, m};
  return s;
}
const std::vector<std::vector<std::string>> kPlainLine = {
    {"/usr/local/cuda/bin/nvcc", "-O3", "-Xptxas", "-v", "-c", "k.cu", "-o", "k.o"}};
} // namespace

TEST(DefaultValues, DefaultsAndTheOptLevelsExpensiveOptimizations) {
  SearchSpace s = defaultsSpace();
  DefaultRules r = defaultRules(s, kPlainLine, true, "");
  ASSERT_TRUE(r.any());
  EXPECT_EQ(withDefaultsUnset(r, {2, 1, kUnset, 0}), (Point{kUnset, kUnset, kUnset, 0}));
  // Expensive optimizations are on by default at -O2 and above, off below.
  EXPECT_EQ(withDefaultsUnset(r, {kUnset, kUnset, 0, kUnset}), (Point{kUnset, kUnset, kUnset, kUnset}));
  EXPECT_EQ(withDefaultsUnset(r, {1, kUnset, 0, kUnset}), (Point{1, kUnset, kUnset, kUnset}));
  EXPECT_EQ(withDefaultsUnset(r, {0, kUnset, 0, kUnset}), (Point{0, kUnset, 0, kUnset}));
  EXPECT_EQ(withDefaultsUnset(r, {0, kUnset, 1, kUnset}), (Point{0, kUnset, kUnset, kUnset}));
  EXPECT_EQ(withDefaultsUnset(r, {kUnset, 0, 1, 1}), (Point{kUnset, 0, 1, 1}));
}

// Where the build sets the option itself, unset is the build's value, not ptxas's default.
TEST(DefaultValues, TheBuildsOwnOptionsKeepTheControl) {
  SearchSpace s = defaultsSpace();
  DefaultRules o1 = defaultRules(s, {{"nvcc", "-Xptxas", "-O1,-v", "-c", "k.cu"}}, true, "");
  EXPECT_EQ(withDefaultsUnset(o1, {2, 1, 0, kUnset}), (Point{2, kUnset, 0, kUnset}));
  DefaultRules g = defaultRules(s, {{"nvcc", "-G", "-c", "k.cu"}}, true, "");
  EXPECT_EQ(withDefaultsUnset(g, {2, 1, 0, kUnset}), (Point{2, kUnset, 0, kUnset}));
  DefaultRules env = defaultRules(s, kPlainLine, true, "-Xptxas=--register-usage-level=7");
  EXPECT_EQ(withDefaultsUnset(env, {2, 1, kUnset, kUnset}), (Point{kUnset, 1, kUnset, kUnset}));
  // Lines that cannot be read (a command build, an options file): nothing is predicted.
  EXPECT_FALSE(defaultRules(s, kPlainLine, false, "").any());
  EXPECT_FALSE(defaultRules(s, {{"nvcc", "-optf", "flags.txt", "-c", "k.cu"}}, true, "").any());
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

// Issue 55 item 2: controls ptxas ignores under one value of another
// (control 0 = 0 stands for --opt-level=1, where controls 1 and 2 change
// nothing) are learnt from two pairs each: a proposal with that value and
// values of theirs never compiled is that binary's twin; under the other
// opt level (where they matter) nothing is predicted.
TEST(TwinPredictor, ControlsIgnoredUnderAnotherControlsValueAreLearnt) {
  std::vector<Evaluation> evals = {eval({0, 0, 0}, "o1"), eval({0, 1, 0}, "o1"), eval({0, 2, 0}, "o1"),
                                   eval({0, 0, 1}, "o1"), eval({0, 0, 2}, "o1"), eval({1, 0, 0}, "a"),
                                   eval({1, 1, 0}, "b"),  eval({1, 0, 1}, "c")};
  TwinPredictor t(3, evals, 2, byDevice);
  const Evaluation *twin = t.predict({0, 3, 2});
  ASSERT_NE(twin, nullptr);
  EXPECT_EQ(twin->deviceCodeSha256, "o1");
  EXPECT_EQ(t.predict({1, 3, 2}), nullptr);
  EXPECT_EQ(t.predict({1, 2, 0}), nullptr);
  // One pair is not enough evidence.
  TwinPredictor one(3, {eval({0, 0, 0}, "o1"), eval({0, 1, 0}, "o1"), eval({1, 0, 0}, "a")}, 2, byDevice);
  EXPECT_EQ(one.predict({0, 3, 0}), nullptr);
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

// Issue 49 item 1: --time, TIME and search.max_minutes take a positive
// number and one unit; anything else is refused with the accepted form.
TEST(TimeBudget, DurationsNeedANumberAndAUnit) {
  EXPECT_EQ(parseDuration("90s"), 90);
  EXPECT_EQ(parseDuration("10m"), 600);
  EXPECT_EQ(parseDuration("1.5h"), 5400);
  EXPECT_EQ(parseDuration("0.5m"), 30);
  for (const char *bad : {"10", "", "m", "0m", "-5m", "10x", "1e3s", " 5m", "5 m", "1.2.3m", ".m", "10min", "nanm"})
    EXPECT_FALSE(parseDuration(bad)) << bad;
  EXPECT_EQ(durationError("--time", "10"),
            "--time: '10' is not a duration; expected a positive number and a unit, s, m or h (90s, 10m, 1.5h)");
  // Issue 55: 1s to 1000h, each side refused with its own line (0.1s was
  // taken and echoed as 0s; 20 digits of hours were taken as 1e+20h).
  EXPECT_EQ(parseDuration("1s"), 1);
  EXPECT_EQ(parseDuration("1000h"), 3.6e6);
  for (const char *bad : {"0.1s", "0.99s", "1000.1h", "99999999999999999999h"})
    EXPECT_FALSE(parseDuration(bad)) << bad;
  EXPECT_EQ(durationError("--time", "0.1s"),
            "--time: '0.1s' is under 1s, less than any tune can use; give at least 1s (90s, 10m, 1.5h)");
  EXPECT_EQ(durationError("--time", "99999999999999999999h"),
            "--time: '99999999999999999999h' is over 1000h; give at most 1000h, or no time budget (the binary "
            "budget alone)");
  EXPECT_EQ(durationText(45), "45s");
  EXPECT_EQ(durationText(125), "2m05s");
  EXPECT_EQ(durationText(3720), "1h02m");
  // A budget past what a long holds prints as hours, not a negative count.
  EXPECT_EQ(durationText(3.6e23), "1e+20h");
}

// What a build and a run cost, from the evaluations: configuration twins
// (not built) are left out; a run with cases is one case's run.
TEST(TimeBudget, CostsComeFromTheMeasuredEvaluations) {
  Evaluation a, b, twin, baseline;
  baseline.buildMs = 60000;   // the whole program's build: not a candidate's, once one was built
  baseline.measureMs = 100;
  baseline.runs = {1};
  a.generation = b.generation = 1;
  a.buildMs = 4000;
  a.measureMs = 1000;
  a.runs = {1, 1, 1, 1};
  b.buildMs = 2000;
  b.measureMs = 600;
  b.cases.resize(2);
  b.cases[0].runs = {1, 1};
  b.cases[1].runs = {1};
  twin.duplicateKind = "config";
  twin.generation = 1;
  twin.buildMs = 99999;
  EXPECT_DOUBLE_EQ(measuredCosts({baseline}).buildSeconds, 60);
  PhaseCosts c = measuredCosts({baseline, a, b, twin});
  EXPECT_DOUBLE_EQ(c.buildSeconds, 3);
  EXPECT_DOUBLE_EQ(c.runSeconds, 1.6 / 7);
  EXPECT_DOUBLE_EQ(c.candidateSeconds, 3.8);
  EXPECT_DOUBLE_EQ(c.wholeBuildSeconds, 60);
  // A device-code twin is built but runs nothing (its twin's runs are
  // taken): a run costs what the baseline's did, not 0 s.
  Evaluation device;
  device.generation = 1;
  device.duplicateKind = "device";
  device.buildMs = 3000;
  device.runs = {1, 1};
  EXPECT_DOUBLE_EQ(measuredCosts({baseline, device}).runSeconds, 0.1);
  // The phases after the search: finalists (2 builds re-measured), a
  // minimization trial per control (its reduced build, both measured), the
  // rehearsal (a whole build and the links), the attribution's 4 rows (2
  // built anew); a compile-only objective runs nothing.
  PhaseCosts k{10, 1, 0, 15};
  AfterSearchShape s;
  s.runtime = true;
  s.finalists = 1;
  s.rounds = 5;
  s.controls = 2;
  auto need = afterSearchSeconds(k, s);
  ASSERT_EQ(need.size(), (size_t)kAfterSearchPhases);
  EXPECT_DOUBLE_EQ(need[0], 2 * (10 + 5));
  EXPECT_DOUBLE_EQ(need[1], 2 * (10 + 2 * 5));
  EXPECT_DOUBLE_EQ(need[2], 15);
  EXPECT_DOUBLE_EQ(need[3], 2 * 10 + 4 * 5);
  // The search kept its best programs: the finalists only run them.
  s.programsKept = true;
  EXPECT_DOUBLE_EQ(afterSearchSeconds(k, s)[0], 2 * 5);
  s.programsKept = false;
  // One control: the minimization and the attribution judge the finalists' runs.
  s.controls = 1;
  need = afterSearchSeconds(k, s);
  EXPECT_DOUBLE_EQ(need[1], 0);
  EXPECT_DOUBLE_EQ(need[3], 0);
  s.runtime = false;
  s.controls = 2;
  need = afterSearchSeconds(k, s);
  EXPECT_DOUBLE_EQ(need[0], 0);
  EXPECT_DOUBLE_EQ(need[3], 2 * 10);
}

} // namespace
} // namespace ciq
