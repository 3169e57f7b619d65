// Search strategies: seeded determinism, mutation and crossover inside the
// space, exhaustive enumeration and its limit, NSGA-II ranking against
// hand-computed examples, and no point proposed twice.
#include "engine/search/Search.h"

#include <gmock/gmock.h>
#include "tests/unit/engine_test_util.h"
#include <gtest/gtest.h>
#include <map>
#include <set>

using namespace ciq;
using ::testing::ElementsAre;
using ciq::test::define;
using ::testing::HasSubstr;

namespace {


// 4 x 3 x 2 x 6 = 144 points; one control required (never unset).
SearchSpace smallSpace() {
  SearchSpace s;
  s.controls.push_back(define("A", {"1", "2", "3"}));
  s.controls.push_back(define("B", {"x", "y"}));
  s.controls.push_back(define("C", {"on"}));
  s.controls.push_back(define("D", {"1", "2", "3", "4", "5", "6"}, /*canUnset=*/false));
  return s;
}

SearchConfig config(const std::string &strategy, uint64_t seed, int pool = 6) {
  SearchConfig c;
  c.strategy = strategy;
  c.seed = seed;
  c.poolSize = pool;
  c.cullSize = 2;
  c.mutateRate = 0.3;
  return c;
}

void expectInside(const SearchSpace &s, const Point &p) {
  ASSERT_EQ(p.size(), s.controls.size());
  for (size_t i = 0; i < p.size(); ++i) {
    const Control &c = s.controls[i];
    if (p[i] == kUnset)
      EXPECT_TRUE(c.canUnset) << "control " << c.name << " is required but was left unset";
    else {
      EXPECT_GE(p[i], 0) << c.name;
      EXPECT_LT(p[i], (int)c.values.size()) << c.name;
    }
  }
}

// A deterministic objective over the small space: distance from a target point.
double objective(const Point &p) {
  static const Point target = {2, 0, 0, 4};
  double d = 0;
  for (size_t i = 0; i < p.size(); ++i)
    d += std::abs(p[i] - target[i]);
  return d;
}

ScoredPoint scoredPoint(const Point &p, int generation) {
  return {p, true, {objective(p)}, generation};
}

// Runs `generations` pools, scoring each point; returns every pool.
std::vector<std::vector<Point>> runSearch(Strategy &st, const SearchSpace &s, int generations,
                                          std::vector<ScoredPoint> *historyOut = nullptr) {
  std::vector<ScoredPoint> history = {scoredPoint(s.baseline(), 0)};
  // The baseline of a space with a required control is not a valid point of
  // it; the strategies must cope with a history holding it anyway.
  std::vector<std::vector<Point>> pools;
  for (int g = 1; g <= generations; ++g) {
    auto pool = st.pool(g, history);
    pools.push_back(pool);
    for (const auto &p : pool)
      history.push_back(scoredPoint(p, g));
  }
  if (historyOut)
    *historyOut = history;
  return pools;
}

} // namespace

// --- RNG and determinism ----------------------------------------------------

TEST(SearchRng, SameSeedSameStreamDifferentSeedDifferent) {
  SearchRng a(5, 3), b(5, 3), c(6, 3), d(5, 4);
  std::vector<uint64_t> va, vb, vc, vd;
  for (int i = 0; i < 8; ++i) {
    va.push_back(a.next());
    vb.push_back(b.next());
    vc.push_back(c.next());
    vd.push_back(d.next());
  }
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
  EXPECT_NE(va, vd);
}

TEST(Strategies, SameSeedSamePools) {
  SearchSpace s = smallSpace();
  for (const char *name : {"genetic", "random", "exhaustive"}) {
    auto a = makeStrategy(config(name, 11), s, false);
    auto b = makeStrategy(config(name, 11), s, false);
    EXPECT_EQ(runSearch(*a, s, 5), runSearch(*b, s, 5)) << name;
  }
}

TEST(Strategies, DifferentSeedDifferentPools) {
  SearchSpace s = smallSpace();
  for (const char *name : {"genetic", "random"}) {
    auto a = makeStrategy(config(name, 1), s, false);
    auto b = makeStrategy(config(name, 2), s, false);
    EXPECT_NE(runSearch(*a, s, 3), runSearch(*b, s, 3)) << name;
  }
}

TEST(Strategies, PoolIsAPureFunctionOfGenerationAndHistory) {
  // What `ciq resume` relies on: a fresh strategy object asked for generation
  // g with the same history proposes exactly the pool a killed engine had.
  SearchSpace s = smallSpace();
  auto a = makeStrategy(config("genetic", 3), s, false);
  std::vector<ScoredPoint> history;
  auto pools = runSearch(*a, s, 4, &history);
  std::vector<ScoredPoint> before3;
  for (const auto &h : history)
    if (h.generation < 3)
      before3.push_back(h);
  auto b = makeStrategy(config("genetic", 3), s, false);
  EXPECT_EQ(b->pool(3, before3), pools[2]);
}

// --- operators stay inside the space ------------------------------------------

TEST(Operators, RandomPointsAreInside) {
  SearchSpace s = smallSpace();
  SearchRng rng(1, 1);
  for (int i = 0; i < 2000; ++i)
    expectInside(s, randomPoint(s, rng));
}

TEST(Operators, MutationStaysInsideAndChangesEveryControlAtRateOne) {
  SearchSpace s = smallSpace();
  SearchRng rng(2, 1);
  for (int i = 0; i < 2000; ++i) {
    Point p = randomPoint(s, rng);
    Point q = mutate(s, p, 1.0, rng);
    expectInside(s, q);
    for (size_t k = 0; k < p.size(); ++k)
      EXPECT_NE(p[k], q[k]) << "control " << k << " kept its value at mutate_rate 1";
  }
}

TEST(Operators, MutationAtRateZeroChangesNothing) {
  SearchSpace s = smallSpace();
  SearchRng rng(3, 1);
  for (int i = 0; i < 200; ++i) {
    Point p = randomPoint(s, rng);
    EXPECT_EQ(mutate(s, p, 0.0, rng), p);
  }
}

TEST(Operators, MutationReachesEveryState) {
  SearchSpace s = smallSpace();
  SearchRng rng(4, 1);
  std::vector<std::set<int>> seen(s.controls.size());
  Point p = pointAt(s, 0);
  for (int i = 0; i < 3000; ++i) {
    p = mutate(s, p, 0.5, rng);
    for (size_t k = 0; k < p.size(); ++k)
      seen[k].insert(p[k]);
  }
  for (size_t k = 0; k < s.controls.size(); ++k)
    EXPECT_EQ((int)seen[k].size(), s.states(k)) << s.controls[k].name;
}

TEST(Operators, UniformCrossoverTakesEachGeneFromAParent) {
  SearchSpace s = smallSpace();
  SearchRng rng(5, 1);
  int fromA = 0, total = 0;
  for (int i = 0; i < 1000; ++i) {
    Point a = randomPoint(s, rng), b = randomPoint(s, rng);
    Point c = uniformCrossover(a, b, rng);
    expectInside(s, c);
    for (size_t k = 0; k < c.size(); ++k) {
      EXPECT_TRUE(c[k] == a[k] || c[k] == b[k]);
      if (a[k] != b[k]) {
        fromA += c[k] == a[k];
        ++total;
      }
    }
  }
  // Uniform: each parent about half of the differing genes.
  EXPECT_NEAR(double(fromA) / total, 0.5, 0.05);
}

TEST(Strategies, EveryProposedPointIsInsideTheSpace) {
  SearchSpace s = smallSpace();
  for (const char *name : {"genetic", "random", "exhaustive"}) {
    auto st = makeStrategy(config(name, 9), s, false);
    for (const auto &pool : runSearch(*st, s, 8))
      for (const auto &p : pool)
        expectInside(s, p);
  }
}

// --- exhaustive ---------------------------------------------------------------

TEST(Exhaustive, PointAtIsABijection) {
  SearchSpace s = smallSpace();
  std::set<Point> all;
  for (double i = 0; i < s.size(); ++i) {
    Point p = pointAt(s, i);
    expectInside(s, p);
    all.insert(p);
  }
  EXPECT_EQ((double)all.size(), s.size());
}

TEST(Exhaustive, EnumeratesEveryPointOnceThenStops) {
  SearchSpace s = smallSpace();
  auto st = makeStrategy(config("exhaustive", 1, 10), s, false);
  std::vector<ScoredPoint> history;
  std::map<Point, int> count;
  for (int g = 1; g < 100; ++g) {
    auto pool = st->pool(g, history);
    if (pool.empty())
      break;
    EXPECT_LE(pool.size(), 10u);
    for (const auto &p : pool) {
      ++count[p];
      history.push_back(scoredPoint(p, g));
    }
  }
  EXPECT_EQ((double)count.size(), s.size());
  for (const auto &[p, n] : count)
    EXPECT_EQ(n, 1);
  EXPECT_TRUE(st->pool(1000, history).empty());
}

// The budget cap ciq tune takes from the strategy: exhaustive ends after
// every point, plus the baseline when a required control keeps it out of
// the space (smallSpace's D); the other strategies only at their budget.
TEST(Exhaustive, MostEvaluationsIsTheSpaceAndAnOutsideBaseline) {
  SearchSpace s = smallSpace();
  EXPECT_EQ(mostEvaluations("exhaustive", s), std::optional<double>(145));
  s.controls.back().canUnset = true;
  EXPECT_EQ(mostEvaluations("exhaustive", s), std::optional<double>(s.size()));
  EXPECT_EQ(mostEvaluations("tpe", s), std::nullopt);
  EXPECT_EQ(mostEvaluations("genetic", s), std::nullopt);
}

TEST(Exhaustive, RefusesASpaceOverTheLimitSayingItsSize) {
  SearchSpace s = smallSpace();
  SearchConfig c = config("exhaustive", 1);
  c.exhaustiveLimit = 100;
  try {
    makeStrategy(c, s, false);
    FAIL() << "a space of 144 points was accepted with exhaustive_limit 100";
  } catch (const std::runtime_error &e) {
    EXPECT_THAT(e.what(), HasSubstr("has 144 points, over exhaustive_limit 100"));
    EXPECT_THAT(e.what(), HasSubstr("search.exhaustive_limit"));
  }
  c.exhaustiveLimit = 144;
  EXPECT_NO_THROW(makeStrategy(c, s, false));
}

// --- Pareto ranking (NSGA-II) -----------------------------------------------------

namespace {
ScoredPoint obj(double a, double b, bool ok = true) { return {{}, ok, {a, b}, 1}; }
} // namespace

TEST(Pareto, Dominates) {
  EXPECT_TRUE(dominates({1, 2}, {2, 2}));
  EXPECT_TRUE(dominates({1, 1}, {2, 2}));
  EXPECT_FALSE(dominates({1, 2}, {1, 2}));   // equal: neither
  EXPECT_FALSE(dominates({1, 3}, {2, 2}));   // a trade-off
  EXPECT_FALSE(dominates({2, 2}, {1, 2}));
}

TEST(Pareto, NondominatedSortingByHand) {
  //      A(1,5) B(2,3) G(3,2) C(4,1)   front 0
  //      D(3,4): dominated by B          front 1
  //      E(5,5): dominated by D too      front 2
  //      F: INVALID                      last
  std::vector<ScoredPoint> pts = {obj(1, 5), obj(2, 3), obj(3, 2), obj(4, 1), obj(3, 4), obj(5, 5), obj(0, 0, false)};
  auto r = nondominatedRanks(pts);
  EXPECT_THAT(std::vector<int>(r.begin(), r.begin() + 6), ElementsAre(0, 0, 0, 0, 1, 2));
  EXPECT_EQ(r[6], std::numeric_limits<int>::max());
}

TEST(Pareto, CrowdingDistanceByHand) {
  std::vector<ScoredPoint> pts = {obj(1, 5), obj(2, 3), obj(3, 2), obj(4, 1), obj(3, 4), obj(5, 5)};
  auto r = nondominatedRanks(pts);
  auto d = crowdingDistances(pts, r);
  const double inf = std::numeric_limits<double>::infinity();
  // Front 0, objective 1 spans 1..4, objective 2 spans 1..5.
  // B(2,3): (3-1)/3 + (5-2)/4 = 0.6667 + 0.75;  G(3,2): (4-2)/3 + (3-1)/4 = 0.6667 + 0.5.
  EXPECT_EQ(d[0], inf);
  EXPECT_NEAR(d[1], 2.0 / 3 + 0.75, 1e-12);
  EXPECT_NEAR(d[2], 2.0 / 3 + 0.5, 1e-12);
  EXPECT_EQ(d[3], inf);
  // Fronts of one point are boundary points.
  EXPECT_EQ(d[4], inf);
  EXPECT_EQ(d[5], inf);
}

TEST(Pareto, RankOrderIsFrontThenCrowding) {
  std::vector<ScoredPoint> pts = {obj(3, 4), obj(1, 5), obj(0, 0, false), obj(2, 3), obj(3, 2), obj(4, 1)};
  auto order = rankOrder(pts, true);
  // Boundaries of front 0 first (index order among equals), then B (1.417) before G (1.167),
  // then the dominated D, then the INVALID point.
  EXPECT_THAT(order, ElementsAre(1, 5, 3, 4, 0, 2));
}

TEST(Pareto, LexicographicOrderWithoutPareto) {
  std::vector<ScoredPoint> pts = {obj(2, 1), obj(1, 9), obj(0, 0, false), obj(1, 3)};
  EXPECT_THAT(rankOrder(pts, false), ElementsAre(3, 1, 0, 2));
}

// --- no point twice -----------------------------------------------------------

TEST(Genetic, NeverProposesAPointAlreadyEvaluated) {
  SearchSpace s = smallSpace();
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto st = makeStrategy(config("genetic", seed, 8), s, false);
    std::vector<ScoredPoint> history = {scoredPoint(s.baseline(), 0)};
    std::set<Point> evaluated = {s.baseline()};
    // 144 points, 8 a generation: run until the space is used up.
    for (int g = 1; g <= 30; ++g) {
      auto pool = st->pool(g, history);
      for (const auto &p : pool) {
        EXPECT_TRUE(evaluated.insert(p).second) << "seed " << seed << " generation " << g << " proposed a point again";
        history.push_back(scoredPoint(p, g));
      }
    }
    // It keeps finding new points until (almost) all are used.
    EXPECT_GE(evaluated.size(), 140u) << "seed " << seed;
  }
}

TEST(Genetic, ImprovesOnRandomOverGenerations) {
  // The best objective after the first generation must improve later: the
  // genetic operators exploit what was learnt.
  SearchSpace s = smallSpace();
  auto st = makeStrategy(config("genetic", 4, 8), s, false);
  std::vector<ScoredPoint> history;
  runSearch(*st, s, 6, &history);
  double bestGen1 = 1e9, bestLater = 1e9;
  for (const auto &h : history) {
    if (h.generation == 1)
      bestGen1 = std::min(bestGen1, h.objectives[0]);
    if (h.generation > 1)
      bestLater = std::min(bestLater, h.objectives[0]);
  }
  EXPECT_LE(bestLater, bestGen1);
  EXPECT_EQ(bestLater, 0) << "the optimum of a 144-point space within 40 evaluations";
}

TEST(Genetic, ParetoModeProposesNewPoints) {
  SearchSpace s = smallSpace();
  auto st = makeStrategy(config("genetic", 2, 8), s, true);
  std::vector<ScoredPoint> history = {{s.baseline(), true, {5, 5}, 0}};
  std::set<Point> evaluated = {s.baseline()};
  for (int g = 1; g <= 5; ++g)
    for (const auto &p : st->pool(g, history)) {
      EXPECT_TRUE(evaluated.insert(p).second);
      history.push_back({p, true, {objective(p), double(p[3])}, g});
    }
  EXPECT_EQ(evaluated.size(), 41u);
}

TEST(Genetic, AllInvalidHistoryStillProposes) {
  SearchSpace s = smallSpace();
  auto st = makeStrategy(config("genetic", 2, 8), s, false);
  std::vector<ScoredPoint> history = {scoredPoint(s.baseline(), 0)};
  for (const auto &p : st->pool(1, history))
    history.push_back({p, false, {}, 1});
  auto pool = st->pool(2, history);
  EXPECT_EQ(pool.size(), 8u);
}
