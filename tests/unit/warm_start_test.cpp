// The warm start of a re-tune after an edit (engine/search/WarmStart.h,
// issue 49 item 5): which earlier configurations generation 1 begins with,
// the history the strategies learn from, and that an earlier point is a guide
// the strategies may propose again, not an evaluation of the edited program.
#include "engine/search/WarmStart.h"
#include "engine/run/WarmPlan.h"

#include "tests/unit/engine_test_util.h"
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <set>

using namespace ciq;
using ciq::test::define;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// 4 x 3 x 2 = 24 points, every control optional.
SearchSpace space() {
  SearchSpace s;
  s.controls.push_back(define("A", {"1", "2", "3"}));
  s.controls.push_back(define("B", {"x", "y"}));
  s.controls.push_back(define("C", {"on"}));
  return s;
}

ScoredPoint scored(Point p, double score, int generation = 1) { return {std::move(p), true, {score}, generation}; }

} // namespace

TEST(WarmStart, WinnerFirstThenTheBestRankedAtMostThree) {
  Point base = space().baseline();
  std::vector<ScoredPoint> earlier = {scored(base, 10, 0), scored({0, -1, -1}, 5), scored({1, -1, -1}, 7),
                                      scored({2, -1, -1}, 6), scored({0, 0, -1}, 8), scored({1, 1, -1}, 1)};
  earlier.back().ok = false;   // INVALID: never a warm point, whatever its numbers
  EXPECT_THAT(warmPoints(earlier, {}, {{1, 0, 0}}, base),
              ElementsAre(Point{1, 0, 0}, Point{0, -1, -1}, Point{2, -1, -1}));
  // No winner (it did not beat the default compile): the best ranked; the baseline never.
  earlier[0].objectives = {0};
  EXPECT_THAT(warmPoints(earlier, {}, {}, base), ElementsAre(Point{0, -1, -1}, Point{2, -1, -1}, Point{1, -1, -1}));
}

TEST(WarmStart, TwinsOfTheBaselineOrOfATakenPointAreLeftOut) {
  Point base = space().baseline();
  std::vector<ScoredPoint> earlier = {scored(base, 10, 0), scored({0, -1, -1}, 5), scored({0, 0, -1}, 5),
                                      scored({0, -1, 0}, 6), scored({2, -1, -1}, 7), scored({1, -1, -1}, 8)};
  // {0,0,-1} builds {0,-1,-1}'s binary, {0,-1,0} the baseline's.
  std::vector<std::string> binaries = {"c0", "c1", "c1", "c0", "c4", "c5"};
  EXPECT_THAT(warmPoints(earlier, binaries, {}, base), ElementsAre(Point{0, -1, -1}, Point{2, -1, -1}, Point{1, -1, -1}));
}

TEST(WarmStart, HistoryPutsTheEarlierSearchFirstLessWhatWasMeasuredAgain) {
  Point base = space().baseline();
  std::vector<ScoredPoint> learned = {scored(base, 10, 0), scored({0, -1, -1}, 5, 1), scored({1, -1, -1}, 7, 2)};
  std::vector<ScoredPoint> now = {scored(base, 11, 0), scored({0, -1, -1}, 9, 1)};
  auto h = warmHistory(learned, now);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].point, Point({1, -1, -1}));   // the only earlier point not measured again
  EXPECT_TRUE(h[0].earlier);
  EXPECT_EQ(h[0].generation, 0);
  EXPECT_EQ(h[1].objectives, std::vector<double>{11});   // the edited program's scores replace the old ones
  EXPECT_EQ(h[2].objectives, std::vector<double>{9});
  EXPECT_FALSE(h[1].earlier || h[2].earlier);
  EXPECT_TRUE(warmLearns("tpe") && warmLearns("genetic") && warmLearns("random"));
  EXPECT_FALSE(warmLearns("exhaustive"));
}

// The earlier search measured every point of the space: the re-tune still
// has points to propose (before, every strategy but exhaustive ended after
// the warm points, and missed an optimum the edit moved elsewhere:
// bench/search_efficiency --warm, reduce-h200).
TEST(WarmStart, EarlierPointsMayBeProposedAgain) {
  SearchSpace s = space();
  std::vector<ScoredPoint> learned;
  for (int i = 0; i < (int)s.size(); ++i)
    learned.push_back(scored(pointAt(s, i), i, i == 0 ? 0 : 1));
  std::vector<ScoredPoint> now = {scored(s.baseline(), 3, 0)};
  for (const char *name : {"tpe", "genetic", "random"}) {
    SearchConfig c;
    c.strategy = name;
    c.poolSize = 4;
    auto st = makeStrategy(c, s, false);
    auto pool = st->pool(1, warmHistory(learned, now));
    EXPECT_EQ(pool.size(), 4u) << name;
    for (const auto &p : pool)
      EXPECT_NE(p, s.baseline()) << name << ": measured in this search";
  }
}

// random learns nothing from the earlier scores: it draws the points the
// earlier search never measured first (as it did before earlier points could
// be proposed again: bench --warm, bounds and template).
TEST(WarmStart, RandomDrawsUnmeasuredPointsFirst) {
  SearchSpace s = space();
  std::vector<ScoredPoint> learned;
  std::set<Point> measured;
  for (int i = 0; i < (int)s.size(); i += 2) {
    learned.push_back(scored(pointAt(s, i), i, i == 0 ? 0 : 1));
    measured.insert(pointAt(s, i));
  }
  SearchConfig c;
  c.strategy = "random";
  c.poolSize = 6;
  auto st = makeStrategy(c, s, false);
  auto pool = st->pool(1, warmHistory(learned, {scored(s.baseline(), 3, 0)}));
  ASSERT_EQ(pool.size(), 6u);
  for (const auto &p : pool)
    EXPECT_EQ(measured.count(p), 0u);
}

// The plan a warm search journals reads back as it was; a damaged warm line
// (a point that is not one of this space's) is a warning and no plan, never
// a point rendered or proposed (engine/run/WarmPlan.h).
TEST(WarmPlan, AJournaledPlanReadsBackAndADamagedOneIsAWarningNotAPlan) {
  TuneConfig cfg;
  cfg.space = space();
  nlohmann::json learned = nlohmann::json::array();
  learned.push_back({{"point", Point{0, -1, -1}}, {"ok", true}, {"objectives", {2.0}}});
  nlohmann::json j = {{"op", "warm"},         {"from", "journal.jsonl.previous"}, {"changed", "src/a.cu"},
                      {"winner", "c0003"},    {"points", {Point{1, 0, -1}}},       {"learned", learned}};
  WarmPlan w;
  EXPECT_EQ(w.fromJson(j, cfg), "");
  ASSERT_TRUE(w);
  EXPECT_EQ(w.toJson(), j);
  EXPECT_THAT(w.note(cfg.space), HasSubstr("src/a.cu changed since the search in journal.jsonl.previous"));
  EXPECT_THAT(w.note(cfg.space), HasSubstr("its winner c0003"));

  j["points"] = {Point{7, 0, -1}};
  WarmPlan damaged;
  EXPECT_THAT(damaged.fromJson(j, cfg), HasSubstr("the warm line is damaged (point [7,0,-1]: no value 7 for control A)"));
  EXPECT_FALSE(damaged);
  EXPECT_EQ(damaged.note(cfg.space), "");
}
