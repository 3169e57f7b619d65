// Search strategies over a SearchSpace: genetic (default), random, exhaustive.
//
// A strategy is a pure function of (seed, generation, history): generation g's
// pool is derived from the evaluations of generations < g with an RNG seeded
// from (seed, g). That is what makes a search reproducible for a seed and lets
// `ciq resume` rebuild the exact pool a killed engine was working on.
#pragma once
#include "engine/config/Config.h"
#include "engine/config/Space.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace ciq {

// One finished evaluation as the strategy sees it.
struct ScoredPoint {
  Point point;
  bool ok = false;
  std::vector<double> objectives;   // normalized so that smaller is better (maximize negated)
  int generation = 0;
  // Measured by the earlier search of a warm start (WarmStart.h), before the
  // program was edited: its score guides the strategy, but the point is not
  // evaluated in this search, so it may be proposed again.
  bool earlier = false;
};

// Deterministic RNG for one generation of one search.
class SearchRng {
public:
  SearchRng(uint64_t seed, int generation, uint64_t stream = 0);
  uint64_t next() { return gen_(); }
  size_t below(size_t n) { return n ? (size_t)(gen_() % n) : 0; }
  double uniform() { return (gen_() >> 11) * (1.0 / 9007199254740992.0); }

private:
  std::mt19937_64 gen_;
};

Point randomPoint(const SearchSpace &space, SearchRng &rng);
// Each control re-drawn (to a different state) with probability rate.
Point mutate(const SearchSpace &space, const Point &p, double rate, SearchRng &rng);
// Each control taken from a or b with equal probability.
Point uniformCrossover(const Point &a, const Point &b, SearchRng &rng);
// Mixed-radix index -> point (exhaustive enumeration; state 0 is "unset" when allowed).
Point pointAt(const SearchSpace &space, double index);

// Ranking: Pareto fronts by non-dominated sorting, crowding distance within a
// front (NSGA-II). Invalid points come last.
std::vector<int> nondominatedRanks(const std::vector<ScoredPoint> &pts);
std::vector<double> crowdingDistances(const std::vector<ScoredPoint> &pts, const std::vector<int> &ranks);
// Indices of pts from best to worst: lexicographic on objectives when !pareto,
// else (rank, -crowding).
std::vector<size_t> rankOrder(const std::vector<ScoredPoint> &pts, bool pareto);
bool dominates(const std::vector<double> &a, const std::vector<double> &b);

class Strategy {
public:
  virtual ~Strategy() = default;
  // The pool of generation `generation` (1-based) given every evaluation so far
  // (the baseline included). Points already in `history` are never proposed
  // again. Empty: the strategy has nothing left to try.
  virtual std::vector<Point> pool(int generation, const std::vector<ScoredPoint> &history) = 0;
  virtual std::string name() const = 0;
};

// Throws std::runtime_error with a one-line message (e.g. exhaustive over its limit).
std::unique_ptr<Strategy> makeStrategy(const SearchConfig &cfg, const SearchSpace &space, bool pareto);

// The most evaluations a search with `strategy` can make over `space`, the
// baseline included, or nullopt when only the budget ends it. Exhaustive
// visits each point once: the points of the space, plus the baseline when a
// `required` control keeps it out of the space.
std::optional<double> mostEvaluations(const std::string &strategy, const SearchSpace &space);

} // namespace ciq
