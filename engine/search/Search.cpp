#include "engine/search/Search.h"
#include "engine/search/SearchParts.h"
#include "engine/search/SearchTpe.h"
#include "engine/config/StrategyTable.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

namespace ciq {

// The most points exhaustive walks through (constrained spaces: the feasible
// ones are found by walking all).
constexpr double kExhaustiveWalk = 2e7;

SearchRng::SearchRng(uint64_t seed, int generation, uint64_t stream) {
  std::seed_seq seq{(uint32_t)seed, (uint32_t)(seed >> 32), (uint32_t)generation, (uint32_t)stream, 0x63697175u};
  gen_.seed(seq);
}

int stateOf(const Control &c, int v) { return v == kUnset ? (int)c.values.size() : v; }
int valueOf(const Control &c, int s) { return s == (int)c.values.size() ? kUnset : s; }

static int drawState(const Control &c, SearchRng &rng) {
  int n = (int)c.values.size();
  if (c.canUnset && c.knockoutProb >= 0)
    return rng.uniform() < c.knockoutProb ? kUnset : (int)rng.below(n);
  return valueOf(c, (int)rng.below(n + (c.canUnset ? 1 : 0)));
}

Point randomPoint(const SearchSpace &space, SearchRng &rng) {
  Point p(space.controls.size());
  for (size_t i = 0; i < p.size(); ++i)
    p[i] = drawState(space.controls[i], rng);
  return p;
}

Point mutate(const SearchSpace &space, const Point &p, double rate, SearchRng &rng) {
  Point q = p;
  for (size_t i = 0; i < q.size(); ++i) {
    if (rng.uniform() >= rate)
      continue;
    const Control &c = space.controls[i];
    int states = space.states(i);
    if (states < 2)
      continue;
    // A different state, uniformly: shift by 1..states-1.
    int s = (stateOf(c, q[i]) + 1 + (int)rng.below(states - 1)) % states;
    q[i] = valueOf(c, s);
  }
  return q;
}

Point uniformCrossover(const Point &a, const Point &b, SearchRng &rng) {
  Point c(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    c[i] = (rng.next() & 1) ? a[i] : b[i];
  return c;
}

Point pointAt(const SearchSpace &space, double index) {
  Point p(space.controls.size());
  for (size_t i = 0; i < p.size(); ++i) {
    const Control &c = space.controls[i];
    int states = space.states(i);
    int s = (int)std::fmod(index, states);
    index = std::floor(index / states);
    // State 0 is "unset" when allowed, so index 0 is the baseline.
    p[i] = c.canUnset ? (s == 0 ? kUnset : s - 1) : s;
  }
  return p;
}

bool dominates(const std::vector<double> &a, const std::vector<double> &b) {
  bool better = false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] > b[i])
      return false;
    better = better || a[i] < b[i];
  }
  return better;
}

std::vector<int> nondominatedRanks(const std::vector<ScoredPoint> &pts) {
  size_t n = pts.size();
  std::vector<int> rank(n, std::numeric_limits<int>::max());
  std::vector<int> dominatedBy(n, 0);
  std::vector<std::vector<size_t>> dominatesList(n);
  std::vector<size_t> front;
  for (size_t i = 0; i < n; ++i) {
    if (!pts[i].ok)
      continue;
    for (size_t j = 0; j < n; ++j) {
      if (i == j || !pts[j].ok)
        continue;
      if (dominates(pts[i].objectives, pts[j].objectives))
        dominatesList[i].push_back(j);
      else if (dominates(pts[j].objectives, pts[i].objectives))
        ++dominatedBy[i];
    }
    if (dominatedBy[i] == 0)
      front.push_back(i);
  }
  for (int r = 0; !front.empty(); ++r) {
    std::vector<size_t> next;
    for (size_t i : front) {
      rank[i] = r;
      for (size_t j : dominatesList[i])
        if (--dominatedBy[j] == 0)
          next.push_back(j);
    }
    front = std::move(next);
  }
  return rank;
}

std::vector<double> crowdingDistances(const std::vector<ScoredPoint> &pts, const std::vector<int> &ranks) {
  size_t n = pts.size();
  std::vector<double> dist(n, 0);
  std::map<int, std::vector<size_t>> fronts;
  for (size_t i = 0; i < n; ++i)
    if (pts[i].ok)
      fronts[ranks[i]].push_back(i);
  for (auto &[r, idx] : fronts) {
    size_t m = pts[idx[0]].objectives.size();
    for (size_t k = 0; k < m; ++k) {
      std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
        return pts[a].objectives[k] < pts[b].objectives[k] || (pts[a].objectives[k] == pts[b].objectives[k] && a < b);
      });
      double lo = pts[idx.front()].objectives[k], hi = pts[idx.back()].objectives[k];
      dist[idx.front()] = dist[idx.back()] = std::numeric_limits<double>::infinity();
      if (hi <= lo)
        continue;
      for (size_t j = 1; j + 1 < idx.size(); ++j)
        dist[idx[j]] += (pts[idx[j + 1]].objectives[k] - pts[idx[j - 1]].objectives[k]) / (hi - lo);
    }
  }
  return dist;
}

std::vector<size_t> rankOrder(const std::vector<ScoredPoint> &pts, bool pareto) {
  std::vector<size_t> order(pts.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  if (!pareto) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (pts[a].ok != pts[b].ok)
        return pts[a].ok;
      return pts[a].ok && pts[a].objectives < pts[b].objectives;
    });
    return order;
  }
  auto ranks = nondominatedRanks(pts);
  auto crowd = crowdingDistances(pts, ranks);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (ranks[a] != ranks[b])
      return ranks[a] < ranks[b];
    return crowd[a] > crowd[b];
  });
  return order;
}

std::set<Point> seenPoints(const std::vector<ScoredPoint> &history) {
  std::set<Point> s;
  for (const auto &h : history)
    if (!h.earlier)
      s.insert(h.point);
  return s;
}

bool offerPoint(const SearchSpace &space, std::vector<Point> &pool, std::set<Point> &taken, const Point &p) {
  if (!taken.insert(p).second || !space.feasible(p))
    return false;
  pool.push_back(p);
  return true;
}

void fillRandom(std::vector<Point> &pool, std::set<Point> &taken, size_t want, const SearchSpace &space,
                SearchRng &rng) {
  for (int tries = 0; pool.size() < want && tries < 200 * (int)want + 1000; ++tries)
    offerPoint(space, pool, taken, randomPoint(space, rng));
}

namespace {

using PointSet = std::set<Point>;

class RandomStrategy : public Strategy {
public:
  RandomStrategy(const SearchConfig &c, const SearchSpace &s) : cfg_(c), space_(s) {}
  std::string name() const override { return strategies::random; }
  std::vector<Point> pool(int generation, const std::vector<ScoredPoint> &history) override {
    SearchRng rng(cfg_.seed, generation);
    PointSet taken = seenPoints(history), unexplored = taken;
    for (const auto &h : history)
      if (h.earlier)
        unexplored.insert(h.point);
    std::vector<Point> pool;
    fillRandom(pool, unexplored, cfg_.poolSize, space_, rng);
    // A warm start (WarmStart.h): random learns nothing from the earlier
    // search's scores, so it draws the points that search never measured
    // first, and those it did once few others are left.
    if (unexplored.size() > taken.size()) {
      taken.insert(pool.begin(), pool.end());
      fillRandom(pool, taken, cfg_.poolSize, space_, rng);
    }
    return pool;
  }

private:
  SearchConfig cfg_;
  const SearchSpace &space_;
};

class ExhaustiveStrategy : public Strategy {
public:
  ExhaustiveStrategy(const SearchConfig &c, const SearchSpace &s) : cfg_(c), space_(s) {}
  std::string name() const override { return strategies::exhaustive; }
  std::vector<Point> pool(int generation, const std::vector<ScoredPoint> &history) override {
    PointSet taken = seenPoints(history);
    std::vector<Point> pool;
    double total = space_.size();
    // Walk the enumeration; everything already evaluated is skipped, so a
    // generation is simply "the next pool_size new points".
    for (double i = 0; i < total && (int)pool.size() < cfg_.poolSize; ++i)
      offerPoint(space_, pool, taken, pointAt(space_, i));
    return pool;
  }

private:
  SearchConfig cfg_;
  const SearchSpace &space_;
};

} // namespace

std::optional<double> mostEvaluations(const std::string &strategy, const SearchSpace &space) {
  if (strategy != strategies::exhaustive)
    return std::nullopt;
  // The baseline is measured whether or not the constraints allow it.
  bool baselineInSpace =
      std::all_of(space.controls.begin(), space.controls.end(), [](const Control &c) { return c.canUnset; }) &&
      space.feasible(space.baseline());
  return space.feasibleSize().points + (baselineInSpace ? 0 : 1);
}

namespace {

class GeneticStrategy : public Strategy {
public:
  GeneticStrategy(const SearchConfig &c, const SearchSpace &s, bool pareto) : cfg_(c), space_(s), pareto_(pareto) {}
  std::string name() const override { return strategies::genetic; }

  std::vector<Point> pool(int generation, const std::vector<ScoredPoint> &history) override {
    SearchRng rng(cfg_.seed, generation);
    PointSet taken = seenPoints(history);
    std::vector<Point> pool;
    std::vector<ScoredPoint> parents = selectParents(history);
    if (generation <= 1 || parents.size() < 2) {
      fillRandom(pool, taken, cfg_.poolSize, space_, rng);
      return pool;
    }
    // Elites each seed one child by mutation alone: a local search around the best.
    for (int e = 0; e < cfg_.elitism && e < (int)parents.size() && (int)pool.size() < cfg_.poolSize; ++e)
      for (int t = 0; t < 20; ++t)
        if (offerPoint(space_, pool, taken, mutate(space_, parents[e].point, std::max(cfg_.mutateRate, 1.0 / space_.controls.size()), rng)))
          break;
    for (int tries = 0; (int)pool.size() < cfg_.poolSize && tries < 50 * cfg_.poolSize; ++tries) {
      const Point &a = tournament(parents, rng);
      const Point &b = tournament(parents, rng);
      Point child = mutate(space_, uniformCrossover(a, b, rng), cfg_.mutateRate, rng);
      offerPoint(space_, pool, taken, child);
    }
    // A converged population breeds only known points: explore instead.
    fillRandom(pool, taken, cfg_.poolSize, space_, rng);
    return pool;
  }

private:
  // The parent population: the best evaluated points, pool_size of them,
  // less the cull_size worst of those (truncation selection, mu + lambda).
  std::vector<ScoredPoint> selectParents(const std::vector<ScoredPoint> &history) {
    std::vector<ScoredPoint> ok;
    for (const auto &h : history)
      if (h.ok)
        ok.push_back(h);
    auto order = rankOrder(ok, pareto_);
    size_t keep = std::min(ok.size(), (size_t)std::max(2, cfg_.poolSize - cfg_.cullSize));
    std::vector<ScoredPoint> parents;
    for (size_t i = 0; i < keep; ++i)
      parents.push_back(ok[order[i]]);
    return parents;
  }

  // Binary tournament on rank position (parents are sorted best first).
  const Point &tournament(const std::vector<ScoredPoint> &parents, SearchRng &rng) {
    size_t a = rng.below(parents.size()), b = rng.below(parents.size());
    return parents[std::min(a, b)].point;
  }

  SearchConfig cfg_;
  const SearchSpace &space_;
  bool pareto_;
};

} // namespace

std::unique_ptr<Strategy> makeStrategy(const SearchConfig &cfg, const SearchSpace &space, bool pareto) {
  if (cfg.strategy == strategies::random)
    return std::make_unique<RandomStrategy>(cfg, space);
  if (cfg.strategy == strategies::exhaustive) {
    double n = space.feasibleSize().points;
    // Exhaustive walks every point, feasible or not, to find the feasible ones.
    if (space.size() > kExhaustiveWalk) {
      char buf[64];
      snprintf(buf, sizeof buf, "%.0f", space.size());
      throw std::runtime_error("exhaustive search would walk " + std::string(buf) + " points to find the " +
                               std::to_string((long long)n) + " the constraints allow, over " +
                               std::to_string((long long)kExhaustiveWalk) + "; use strategy " +
                               std::string(kDefaultStrategy) + " or random, or narrow the controls' domains");
    }
    if (n > (double)cfg.exhaustiveLimit) {
      char buf[64];
      snprintf(buf, sizeof buf, "%.0f", n);
      throw std::runtime_error("the search space has " + std::string(buf) +
                               " points, over exhaustive_limit " + std::to_string(cfg.exhaustiveLimit) +
                               "; use strategy " + std::string(kDefaultStrategy) + " or random, or raise search.exhaustive_limit");
    }
    return std::make_unique<ExhaustiveStrategy>(cfg, space);
  }
  if (cfg.strategy == strategies::genetic)
    return std::make_unique<GeneticStrategy>(cfg, space, pareto);
  if (cfg.strategy == strategies::tpe)
    return makeTpeStrategy(cfg, space, pareto);
  // A name in Strategies.def without a class here, or one that bypassed the
  // config reader: never silently another strategy.
  throw std::runtime_error("unknown strategy '" + cfg.strategy + "'; expected " + strategyNames());
}

} // namespace ciq
