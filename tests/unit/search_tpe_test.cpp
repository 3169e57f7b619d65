// The model-based strategy `tpe` (engine/search/SearchTpe.cpp) on small synthetic
// landscapes with known optima: it finds them in fewer evaluations than
// random, is deterministic per seed, resumes exactly, learns which points are
// INVALID, starts near the default (the same start for any pool size),
// learns more from a pool of 1 than of 8, stops sampling a control or a value that
// only ever made things worse (an ordered control only after two of its
// values did), spends half of a later pool next to the best point, and
// continues an ordered control past a value that beat its neighbour. Also: the strategy names are one table.
#include "engine/config/Config.h"
#include "engine/search/Search.h"
#include "engine/search/SearchTpe.h"
#include "engine/config/StrategyTable.h"

#include <algorithm>
#include <functional>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace ciq;
using ::testing::HasSubstr;

namespace {

Control control(const std::string &name, std::vector<std::string> values, DomainKind d = DomainKind::Choice) {
  Control c;
  c.name = name;
  c.render = RenderKind::Define;
  c.option = name;
  c.domain = d;
  c.values = std::move(values);
  return c;
}

// 4 x 7 x 3 x 2 x 5 = 840 points: a choice, an ordered range, a categorical
// choice, a literal and a second range.
SearchSpace mixedSpace() {
  SearchSpace s;
  s.controls.push_back(control("opt", {"1", "2", "3"}));
  s.controls.push_back(control("regs", {"32", "64", "96", "128", "160", "192"}, DomainKind::Range));
  s.controls.push_back(control("cache", {"ca", "cg"}));
  s.controls.push_back(control("fast", {"on"}, DomainKind::Literal));
  s.controls.push_back(control("unroll", {"1", "2", "4", "8"}, DomainKind::LogSampling));
  return s;
}

using Landscape = std::function<ScoredPoint(const Point &, int)>;

// A smooth landscape: the optimum is opt=2, regs=128, cache unset, fast on,
// unroll=4 (value 0 at that one point); INVALID when unroll is 8 with regs 32.
ScoredPoint smooth(const Point &p, int g) {
  if (p[4] == 3 && p[1] == 0)
    return {p, false, {}, g};
  auto dist = [](int v, int want) { return v == kUnset ? 2.5 : std::abs(v - want); };
  double score = dist(p[0], 1) + dist(p[1], 3) + (p[2] == kUnset ? 0 : 1.5) + (p[3] == 0 ? 0 : 2) + dist(p[4], 2);
  return {p, true, {score}, g};
}

std::unique_ptr<Strategy> strategy(const SearchSpace &s, const std::string &name, uint64_t seed, int pool,
                                   bool pareto = false) {
  SearchConfig c;
  c.strategy = name;
  c.seed = seed;
  c.poolSize = pool;
  return makeStrategy(c, s, pareto);
}

// Evaluations (baseline first) until the optimum; 0 when not within budget.
int evaluationsToOptimum(const SearchSpace &s, const std::string &name, uint64_t seed, const Landscape &f,
                         int budget) {
  auto st = strategy(s, name, seed, 8);
  std::vector<ScoredPoint> h = {f(s.baseline(), 0)};
  int found = 0;
  for (int g = 1; (int)h.size() < budget && !found; ++g) {
    auto pool = st->pool(g, h);
    if (pool.empty())
      break;
    for (const auto &p : pool) {
      h.push_back(f(p, g));
      if (!found && h.back().ok && h.back().objectives[0] == 0)
        found = (int)h.size();
    }
  }
  return found;
}

double medianEvaluations(const SearchSpace &s, const std::string &strategy, const Landscape &f, int budget) {
  std::vector<int> n;
  for (uint64_t seed = 1; seed <= 15; ++seed) {
    int e = evaluationsToOptimum(s, strategy, seed, f, budget);
    n.push_back(e ? e : budget + 1);
  }
  std::sort(n.begin(), n.end());
  return n[n.size() / 2];
}

std::vector<std::vector<Point>> pools(const SearchSpace &s, uint64_t seed, int generations, const Landscape &f,
                                      const std::string &name = "tpe") {
  auto st = strategy(s, name, seed, 6);
  std::vector<ScoredPoint> h = {f(s.baseline(), 0)};
  std::vector<std::vector<Point>> out;
  for (int g = 1; g <= generations; ++g) {
    out.push_back(st->pool(g, h));
    for (const auto &p : out.back())
      h.push_back(f(p, g));
  }
  return out;
}

int controlsSet(const Point &p) {
  return (int)std::count_if(p.begin(), p.end(), [](int v) { return v != kUnset; });
}

} // namespace

TEST(Tpe, FindsTheKnownOptimumInAtMostHalfOfRandomsEvaluations) {
  SearchSpace s = mixedSpace();
  double tpe = medianEvaluations(s, "tpe", smooth, 840);
  double random = medianEvaluations(s, "random", smooth, 840);
  EXPECT_GT(tpe, 0);
  EXPECT_LE(tpe, 0.5 * random) << "tpe median " << tpe << ", random median " << random;
}

TEST(Tpe, SameSeedSameSearchDifferentSeedDifferent) {
  SearchSpace s = mixedSpace();
  EXPECT_EQ(pools(s, 7, 5, smooth), pools(s, 7, 5, smooth));
  EXPECT_NE(pools(s, 7, 5, smooth), pools(s, 8, 5, smooth));
}

TEST(Tpe, ResumedMidSearchProposesTheSamePools) {
  // What `ciq resume` relies on: a fresh strategy object, given the history
  // of generations before g, rebuilds generation g's pool exactly.
  SearchSpace s = mixedSpace();
  auto whole = pools(s, 3, 6, smooth);
  for (int g = 2; g <= 6; ++g) {
    std::vector<ScoredPoint> prefix = {smooth(s.baseline(), 0)};
    for (int k = 1; k < g; ++k)
      for (const auto &p : whole[k - 1])
        prefix.push_back(smooth(p, k));
    EXPECT_EQ(strategy(s, "tpe", 3, 6)->pool(g, prefix), whole[g - 1]) << "generation " << g;
  }
}

TEST(Tpe, NeverProposesAPointTwiceAndStaysInsideTheSpace) {
  SearchSpace s = mixedSpace();
  std::set<Point> all = {s.baseline()};
  for (const auto &pool : pools(s, 5, 12, smooth))
    for (const auto &p : pool) {
      EXPECT_TRUE(all.insert(p).second);
      for (size_t c = 0; c < p.size(); ++c)
        EXPECT_TRUE(p[c] == kUnset || (p[c] >= 0 && p[c] < (int)s.controls[c].values.size()));
    }
}

TEST(Tpe, LearnsWhereThePointsAreInvalid) {
  // INVALID whenever "a" takes its last value (a -D that hits #error): once
  // seen, the feasibility model keeps later generations away from it.
  SearchSpace s;
  s.controls.push_back(control("a", {"0", "1", "2", "3"}));
  s.controls.push_back(control("b", {"0", "1", "2", "3", "4"}));
  s.controls.push_back(control("c", {"x", "y", "z"}));
  auto f = [](const Point &p, int g) -> ScoredPoint {
    if (p[0] == 3)
      return {p, false, {}, g};
    return {p, true, {double(std::abs(p[1] - 2) + (p[2] == 1 ? 0 : 1) + (p[0] == 1 ? 0 : 1))}, g};
  };
  // Proposals of generations 4..8 that are INVALID, over seeds 1..5.
  auto lateInvalid = [&](const std::string &name) {
    int n = 0;
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      auto ps = pools(s, seed, 8, f, name);
      for (int g = 4; g <= 8; ++g)
        for (const auto &p : ps[g - 1])
          n += p[0] == 3;
    }
    return n;
  };
  int tpe = lateInvalid("tpe"), random = lateInvalid("random");
  EXPECT_GT(random, 0);
  EXPECT_LE(2 * tpe, random) << "tpe proposed " << tpe << " INVALID points late, random " << random;
}

TEST(Tpe, StartsNearTheDefault) {
  SearchSpace s = mixedSpace();
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto first = pools(s, seed, 1, smooth)[0];
    ASSERT_EQ(first.size(), 6u);
    // The first evaluation after the baseline sets one control alone.
    EXPECT_EQ(controlsSet(first[0]), 1) << "seed " << seed;
    // The rest leave about half the controls unset (12.5 of 25 expected);
    // uniform sampling would leave 1/(values + 1) of each unset (about 19 set).
    int set = 0;
    for (size_t i = 1; i < 6; ++i)
      set += controlsSet(first[i]);
    EXPECT_LE(set, 17) << "seed " << seed;
  }
}

// Evaluations (after the baseline) of a search with this pool size, in order.
std::vector<Point> firstEvaluations(const SearchSpace &s, uint64_t seed, int pool, size_t n) {
  auto st = strategy(s, "tpe", seed, pool);
  std::vector<ScoredPoint> h = {smooth(s.baseline(), 0)};
  for (int g = 1; h.size() <= n; ++g)
    for (const auto &p : st->pool(g, h))
      h.push_back(smooth(p, g));
  std::vector<Point> out;
  for (size_t i = 1; i <= n; ++i)
    out.push_back(h[i].point);
  return out;
}

TEST(Tpe, TheStartIsTheSameWhateverThePoolSize) {
  // One worker (pool 1) or four (pool 4) start with the same 4 points: the
  // start is counted in evaluations, not in generations.
  SearchSpace s = mixedSpace();
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto four = firstEvaluations(s, seed, 4, 4);
    EXPECT_EQ(firstEvaluations(s, seed, 1, 4), four) << "seed " << seed;
    EXPECT_EQ(firstEvaluations(s, seed, 2, 4), four) << "seed " << seed;
  }
}

TEST(Tpe, OnePointAtATimeFindsTheOptimumSoonerThanABatchOfEight) {
  // Learning from every evaluation before the next (one worker) is what the
  // default pool size buys: fewer evaluations than pools of 8.
  SearchSpace s = mixedSpace();
  std::vector<int> one, eight;
  for (uint64_t seed = 1; seed <= 15; ++seed)
    for (int pool : {1, 8}) {
      auto st = strategy(s, "tpe", seed, pool);
      std::vector<ScoredPoint> h = {smooth(s.baseline(), 0)};
      int found = 0;
      for (int g = 1; !found && h.size() < 840; ++g)
        for (const auto &p : st->pool(g, h)) {
          h.push_back(smooth(p, g));
          if (!found && h.back().ok && h.back().objectives[0] == 0)
            found = (int)h.size();
        }
      (pool == 1 ? one : eight).push_back(found ? found : 841);
    }
  std::sort(one.begin(), one.end());
  std::sort(eight.begin(), eight.end());
  EXPECT_LT(one[7], eight[7]) << "median with a pool of 1: " << one[7] << ", of 8: " << eight[7];
}

TEST(Tpe, ResumedMidSearchWithAPoolOfOneProposesTheSamePoints) {
  SearchSpace s = mixedSpace();
  auto whole = firstEvaluations(s, 5, 1, 20);
  for (size_t k = 0; k < whole.size(); ++k) {
    std::vector<ScoredPoint> prefix = {smooth(s.baseline(), 0)};
    for (size_t i = 0; i < k; ++i)
      prefix.push_back(smooth(whole[i], (int)i + 1));
    EXPECT_EQ(strategy(s, "tpe", 5, 1)->pool((int)k + 1, prefix), std::vector<Point>{whole[k]}) << "evaluation " << k + 1;
  }
}

TEST(Tpe, APoolOfOneStillStepsFromTheBestPointMostOfTheTime) {
  // 70% of the model's proposals are one-control neighbours of the best
  // point, counted over the search: a pool of 1 mixes them with the rest.
  SearchSpace s = mixedSpace();
  int local = 0, proposals = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto st = strategy(s, "tpe", seed, 1);
    std::vector<ScoredPoint> h = {smooth(s.baseline(), 0)};
    for (int g = 1; g <= 24; ++g) {
      std::vector<ScoredPoint> ok;
      for (const auto &sp : h)
        if (sp.ok)
          ok.push_back(sp);
      const Point best = ok[rankOrder(ok, false)[0]].point;
      Point p = st->pool(g, h).at(0);
      if (g > 4) {   // after the near-default start
        int diff = 0;
        for (size_t c = 0; c < best.size(); ++c)
          diff += p[c] != best[c];
        local += diff == 1;
        ++proposals;
      }
      h.push_back(smooth(p, g));
    }
  }
  EXPECT_GE(local, proposals / 2) << local << " of " << proposals;
  EXPECT_LT(local, proposals) << "every proposal a local step: the model's own draws are never used";
}

TEST(Tpe, StopsSamplingAControlThatOnlyMadeThingsWorse) {
  // Like --maxrregcount on a kernel already at 255 registers: every value
  // adds spills. After it has been tried twice, no pool sets it again.
  SearchSpace s = mixedSpace();
  auto f = [](const Point &p, int g) -> ScoredPoint {
    ScoredPoint sp = smooth(p, g);
    if (sp.ok && p[1] != kUnset)
      sp.objectives[0] += 100;
    return sp;
  };
  auto st = strategy(s, "tpe", 4, 8);
  std::vector<ScoredPoint> h = {f(s.baseline(), 0)};
  int setAfterBan = 0;
  bool banned = false;
  for (int g = 1; g <= 10; ++g) {
    banned = harmfulControls(s, h, false)[1];
    for (const auto &p : st->pool(g, h)) {
      setAfterBan += banned && p[1] != kUnset;
      h.push_back(f(p, g));
    }
  }
  EXPECT_TRUE(banned);
  EXPECT_EQ(setAfterBan, 0);
  // The other controls are not harmful.
  auto harmful = harmfulControls(s, h, false);
  EXPECT_FALSE(harmful[0]);
  EXPECT_FALSE(harmful[4]);
}

namespace {
// The smooth landscape, except that regs=32 (index 0 of control 1) always
// adds 100: a value that only makes things worse.
ScoredPoint regs32Hurts(const Point &p, int g) {
  ScoredPoint sp = smooth(p, g);
  if (sp.ok && p[1] == 0)
    sp.objectives[0] += 100;
  return sp;
}
} // namespace

TEST(Tpe, StopsSamplingAValueThatOnlyMadeThingsWorse) {
  // regs=32 always adds 100; the other values of regs help.
  SearchSpace s = mixedSpace();
  auto f = regs32Hurts;
  auto at = [&](std::vector<int> v) { return Point(v.begin(), v.end()); };
  std::vector<ScoredPoint> h = {f(s.baseline(), 0)};
  // Tried twice, never alone: another control could be to blame; not banned.
  h.push_back(f(at({0, 0, -1, -1, -1}), 1));
  h.push_back(f(at({-1, 0, 1, -1, -1}), 1));
  EXPECT_FALSE(harmfulValues(s, h, false)[1][0]);
  // Once alone too: banned. regs=128 alone helped: neither it nor regs is banned.
  h.push_back(f(at({-1, 0, -1, -1, -1}), 1));
  h.push_back(f(at({-1, 3, -1, -1, -1}), 1));
  EXPECT_TRUE(harmfulValues(s, h, false)[1][0]);
  EXPECT_FALSE(harmfulValues(s, h, false)[1][3]);
  EXPECT_FALSE(harmfulControls(s, h, false)[1]);
  // No later pool proposes regs=32; other values of regs stay in use.
  auto st = strategy(s, "tpe", 3, 8);
  int proposed = 0, otherRegs = 0;
  for (int g = 2; g <= 8; ++g)
    for (const auto &p : st->pool(g, h)) {
      proposed += p[1] == 0;
      otherRegs += p[1] > 0;
      h.push_back(f(p, g));
    }
  EXPECT_EQ(proposed, 0);
  EXPECT_GT(otherRegs, 0);
}

TEST(Tpe, AnOrderedControlIsStoppedOnlyAfterTwoOfItsValuesHurt) {
  // Like -DBK=4 on gemm-h200, where -DBK=32 is the optimum: regs=32 hurts
  // (tried twice, once alone), so that value is stopped, but the ordered
  // control regs is not, and the search still reaches the optimum at regs=128.
  SearchSpace s = mixedSpace();
  auto f = regs32Hurts;
  auto at = [&](std::vector<int> v) { return Point(v.begin(), v.end()); };
  std::vector<ScoredPoint> h = {f(s.baseline(), 0)};
  h.push_back(f(at({-1, 0, -1, -1, -1}), 1));
  h.push_back(f(at({1, 0, -1, -1, -1}), 1));
  EXPECT_TRUE(harmfulValues(s, h, false)[1][0]);
  EXPECT_FALSE(harmfulControls(s, h, false)[1]);
  // A categorical control tried at one value, twice, worse each time, is
  // stopped as before: cache (ca, cg) is no ordered domain.
  std::vector<ScoredPoint> hc = {smooth(s.baseline(), 0), smooth(at({-1, -1, 0, -1, -1}), 1),
                                 smooth(at({1, -1, 0, -1, -1}), 1)};
  for (auto &sp : hc)
    if (sp.generation > 0)
      sp.objectives[0] += 100;
  EXPECT_TRUE(harmfulControls(s, hc, false)[2]);
  // The search goes on with the other values of regs to the optimum (the
  // same pools for a seed).
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto st = strategy(s, "tpe", seed, 8);
    std::vector<ScoredPoint> run = h;
    bool found = false;
    for (int g = 2; g <= 30 && !found; ++g)
      for (const auto &p : st->pool(g, run)) {
        EXPECT_NE(p[1], 0) << "seed " << seed << ": regs=32 proposed again";
        run.push_back(f(p, g));
        found = found || (run.back().ok && run.back().objectives[0] == 0);
      }
    EXPECT_TRUE(found) << "seed " << seed << ": no optimum in 29 pools of 8";
    EXPECT_EQ(strategy(s, "tpe", seed, 8)->pool(2, h), strategy(s, "tpe", seed, 8)->pool(2, h)) << "seed " << seed;
  }
  // Once a second value hurts too, the whole control is stopped.
  h.push_back(smooth(at({-1, 1, -1, -1, -1}), 2));
  h.back().objectives[0] += 100;
  EXPECT_TRUE(harmfulControls(s, h, false)[1]);
}

namespace {
// Like -DBK on gemm-h200: an ordered tile depth (4 .. 64) whose unset
// default is 8 and whose optimum is 32; cache, fast and regs only add cost.
SearchSpace tileSpace() {
  SearchSpace s;
  s.controls.push_back(control("tile", {"4", "8", "16", "32", "64"}));
  s.controls.push_back(control("cache", {"ca", "cg"}));
  s.controls.push_back(control("fast", {"on"}, DomainKind::Literal));
  s.controls.push_back(control("regs", {"32", "64", "96", "128", "160", "192"}, DomainKind::Range));
  return s;
}

ScoredPoint tileLandscape(const Point &p, int g) {
  double score = 10 * std::abs((p[0] == kUnset ? 1 : p[0]) - 3);
  for (size_t c = 1; c < p.size(); ++c)
    score += p[c] == kUnset ? 0 : 5;
  return {p, true, {score}, g};
}
} // namespace

TEST(Tpe, ContinuesAnOrderedControlPastTheValueThatBeatItsNeighbour) {
  // Hooke-Jeeves' pattern move: tile=16 beat tile=8 (the point that differs
  // from it in tile alone), so the next proposal is tile=32, the next value
  // on the other side, ahead of the best point's other one-control
  // neighbours and of the model's draws, whatever the seed or slot.
  SearchSpace s = tileSpace();
  auto at = [&](std::vector<int> v) { return Point(v.begin(), v.end()); };
  std::vector<ScoredPoint> h = {tileLandscape(s.baseline(), 0)};
  for (const Point &p : {at({-1, 0, -1, -1}), at({-1, -1, 0, -1}), at({-1, -1, -1, 2}), at({1, -1, -1, -1}),
                         at({2, -1, -1, -1})})
    h.push_back(tileLandscape(p, (int)h.size()));
  for (uint64_t seed = 1; seed <= 8; ++seed)
    for (int pool : {1, 4}) {
      std::vector<Point> next = strategy(s, "tpe", seed, pool)->pool((int)h.size(), h);
      ASSERT_FALSE(next.empty());
      EXPECT_EQ(next[0], at({3, -1, -1, -1})) << "seed " << seed << ", pool " << pool;
    }
  // Downwards alike: tile=8 beat tile=16, so tile=4 is next.
  std::vector<ScoredPoint> down = {tileLandscape(s.baseline(), 0)};
  for (const Point &p : {at({-1, 0, -1, -1}), at({-1, -1, 0, -1}), at({-1, -1, -1, 2}), at({2, -1, 0, -1}),
                         at({1, -1, 0, -1})})
    down.push_back(tileLandscape(p, (int)down.size()));
  for (auto &sp : down)   // here smaller tiles are better: 4 is the optimum
    if (sp.point[0] != kUnset)
      sp.objectives[0] = 10 * sp.point[0] + (sp.point[2] == kUnset ? 0 : 5);
  EXPECT_EQ(strategy(s, "tpe", 1, 1)->pool((int)down.size(), down).at(0), at({0, -1, 0, -1}));
}

TEST(Tpe, HalfOfALaterPoolStepsOneControlFromTheBestPoint) {
  SearchSpace s = mixedSpace();
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto st = strategy(s, "tpe", seed, 8);
    std::vector<ScoredPoint> h = {smooth(s.baseline(), 0)};
    for (int g = 1; g <= 2; ++g)
      for (const auto &p : st->pool(g, h))
        h.push_back(smooth(p, g));
    std::vector<ScoredPoint> ok;
    for (const auto &sp : h)
      if (sp.ok)
        ok.push_back(sp);
    const Point best = ok[rankOrder(ok, false)[0]].point;
    auto next = st->pool(3, h);
    ASSERT_EQ(next.size(), 8u);
    for (size_t i = 0; i < 4; ++i) {
      int diff = 0;
      for (size_t c = 0; c < best.size(); ++c)
        diff += next[i][c] != best[c];
      EXPECT_EQ(diff, 1) << "seed " << seed << ", pool entry " << i;
    }
  }
}

TEST(Tpe, WorksWithSeveralObjectivesAndAllInvalidHistory) {
  SearchSpace s = mixedSpace();
  auto st = strategy(s, "tpe", 1, 5, /*pareto=*/true);
  std::vector<ScoredPoint> h = {{s.baseline(), true, {1, 2}, 0}};
  for (const auto &p : st->pool(1, h))
    h.push_back({p, false, {}, 1});
  auto next = st->pool(2, h);
  EXPECT_EQ(next.size(), 5u);
  for (const auto &p : st->pool(2, h))
    h.push_back({p, true, {double(p[0]), double(-p[0])}, 2});
  EXPECT_EQ(st->pool(3, h).size(), 5u);
}

TEST(StrategyTable, EveryNameMakesItsOwnStrategyAndAnUnknownNameIsRefused) {
  SearchSpace s = mixedSpace();
  for (const auto &info : kStrategies) {
    SearchConfig c;
    c.strategy = info.name;
    EXPECT_EQ(makeStrategy(c, s, false)->name(), info.name);
  }
  SearchConfig c;
  c.strategy = "annealing";
  try {
    makeStrategy(c, s, false);
    FAIL() << "an unknown strategy name was accepted";
  } catch (const std::runtime_error &e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown strategy 'annealing'; expected tpe, genetic, random or exhaustive"));
  }
  EXPECT_EQ(SearchConfig().strategy, kDefaultStrategy);
}
