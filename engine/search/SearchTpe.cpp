// `tpe`: the tree-structured Parzen estimator (Bergstra et al. 2011) over
// ciq's mixed space, with BaCO-style feasibility learning.
//
// The first 4 evaluations after the baseline are near-default points (one
// seeded list, whatever the pool size). Then the OK evaluations, ranked by
// ciq's own order (lexicographic or NSGA-II), are split into the best 15% ("good") and the rest ("bad"). Per control,
// a smoothed distribution over its states (values and unset) is fitted to
// each: l(x) to the good, g(x) to the bad. Ordered domains (ranges, log
// sampling, numeric choices) spread an observation onto neighbouring values,
// so "88 was good" says something about 96. Candidates are drawn from l and
// from the one-control neighbours of the best points, and scored by
// log l(x) - log g(x) + log P(valid | x), where P(valid) is a naive-Bayes
// classifier of OK against INVALID evaluations (the constraint a -D value
// that hits #error, or a register cap ptxas refuses, imposes). A generation
// takes the pool_size best candidates one at a time, each taken one counted
// as half a "bad" observation before the next is chosen (a believer), so the batch
// spreads out instead of proposing near-copies; 70% of the proposals
// (counted over the search: a pool of 1 mixes them) are the best point's
// one-control neighbours (a local step). Before any of them comes a pattern
// move (Hooke-Jeeves): where the best point beat the point that differs from
// it only in an ordered control, set to a value on one side, the next value
// on the other side. pool_size follows the workers by
// default (SearchConfig::poolFollowsWorkers): one GPU, one point at a time. Controls, and
// single values of a control, that so far only made things worse than the
// baseline are no longer sampled (an ordered control only once two of its
// values did).
//
// Like every strategy it is a pure function of (seed, generation, history):
// the same seed gives the same search, and a resumed search the same pools.
#include "engine/search/SearchTpe.h"
#include "engine/config/StrategyTable.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>

namespace ciq {

namespace {

// Chosen on bench/search_efficiency's compile-only landscapes (0.15 beat
// 0.25 and 0.4 on all three tried; a first generation of only single-control
// points was slower on landscapes whose optimum needs two controls together).
constexpr double kGoodFraction = 0.15;   // of the OK evaluations, the best this share is "good"
constexpr int kCandidatesPerSlot = 32;   // candidates drawn from l(x) per pool slot
constexpr int kNeighbourhoods = 3;       // best points whose one-control neighbours are candidates
constexpr double kUnsetPrior = 0.5;      // prior mass on "unset": proposals stay near the default
// Share of generation 1 that sets one control each (the rest sets each
// control with probability 1/2): a few single-control points tell a small
// budget what a control does alone; more of them cost the optimum that needs
// several controls together (bench: all singles was slower on 3 of 5
// landscapes, none and a quarter about even).
constexpr double kSingles = 0.25;
// The first evaluations after the baseline, whatever the pool size, are
// near-default points (nearDefaultPool of this many); the model takes over
// after them. With a pool of 1 (one worker) 4 beat 2, 3, 5, 6 and 8 on
// bench/search_efficiency (seeds 1..300): a long start spends the small
// budgets of the 48- to 192-point landscapes before the model learns.
constexpr size_t kStartup = 4;
// Share of the model's proposals spent on the best point's one-control
// neighbours (a local step, chosen by the same acquisition as the rest): TPE's
// independent per-control draws rarely make the one change left to the
// optimum. Counted over the whole search, so a pool of 1 alternates
// (bench, seeds 1..300: 0.7 level with or ahead of 0.3 and 0.5 at pool 1 and 8).
constexpr double kLocal = 0.7;
// A control or value set in this many evaluations, every one worse than the
// baseline or INVALID, one of them a single-control change, is not sampled
// again (issue 19's "small budgets"). Without the single-control witness a
// control tried twice beside a harmful one was banned for good and the
// search lost optima that need it (bench: template p90 53 -> 36 with it).
constexpr int kHarmfulAfter = 2;
// Distinct values of an ordered control that must be among those
// evaluations before the whole control, not just the one value, is stopped:
// a -D parameter whose smallest value was tried twice and hurt was banned
// outright, and the search never tried the value that was best (bench:
// gemm-h200, BK=4 twice, BK=32 never; 90th percentile 16 -> 13 on seeds
// 1..30). Unordered controls keep the old rule: requiring two values there
// too was slower on reduce-h200, whose optimum leaves -DUNROLL unset.
constexpr size_t kHarmfulValuesTried = 2;
// Weight of a chosen, not yet measured point in g(x) (the believer step). A
// full observation's weight pushed the rest of the batch too far from the
// good region; none at all lets near-copies in (bench, seeds 1..30, 31..60 and
// 300 more: 1 was behind 0.5, 0 and 0.25 about even with it).
constexpr double kBelieverWeight = 0.5;

bool numeric(const std::string &s, double &v) {
  char *end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end && *end == 0;
}

// Whether neighbouring value indices are neighbouring values.
bool ordered(const Control &c) {
  if (c.domain == DomainKind::Range || c.domain == DomainKind::LogSampling)
    return true;
  if (c.domain != DomainKind::Choice || c.values.size() < 3)
    return false;
  double prev = 0, v = 0;
  int dir = 0;
  for (size_t i = 0; i < c.values.size(); ++i) {
    if (!numeric(c.values[i], v))
      return false;
    if (i > 0) {
      int d = v > prev ? 1 : v < prev ? -1 : 0;
      if (d == 0 || (dir != 0 && d != dir))
        return false;
      dir = d;
    }
    prev = v;
  }
  return true;
}

// Per control, weights over its states (values, then unset when allowed).
class Density {
public:
  Density(const SearchSpace &space, const std::vector<bool> &ordinal, double prior)
      : space_(space), ordinal_(ordinal), w_(space.controls.size()), total_(space.controls.size(), 0) {
    for (size_t c = 0; c < w_.size(); ++c) {
      const Control &ctl = space.controls[c];
      int n = (int)ctl.values.size();
      w_[c].assign(space.states(c), 0);
      double valueMass = ctl.canUnset ? prior * (1 - kUnsetPrior) : prior;
      for (int s = 0; s < n; ++s)
        w_[c][s] = valueMass / n;
      if (ctl.canUnset)
        w_[c][n] = prior * kUnsetPrior;
      total_[c] = prior;
    }
  }

  void add(const Point &p, double weight) {
    for (size_t c = 0; c < w_.size(); ++c) {
      const Control &ctl = space_.controls[c];
      int s = stateOf(ctl, p[c]);
      bump(c, s, weight);
      if (!ordinal_[c] || p[c] == kUnset)
        continue;
      for (int d = 1; d <= 2; ++d) {
        double k = weight * std::pow(0.5, d);
        if (s - d >= 0)
          bump(c, s - d, k);
        if (s + d < (int)ctl.values.size())
          bump(c, s + d, k);
      }
    }
  }

  double logp(const Point &p) const {
    double sum = 0;
    for (size_t c = 0; c < w_.size(); ++c)
      sum += std::log(w_[c][stateOf(space_.controls[c], p[c])] / total_[c]);
    return sum;
  }

  int sampleValue(size_t c, SearchRng &rng) const {
    double u = rng.uniform() * total_[c];
    for (size_t s = 0; s < w_[c].size(); ++s) {
      u -= w_[c][s];
      if (u < 0)
        return valueOf(space_.controls[c], (int)s);
    }
    return valueOf(space_.controls[c], (int)w_[c].size() - 1);
  }

private:
  void bump(size_t c, int s, double k) {
    w_[c][s] += k;
    total_[c] += k;
  }

  const SearchSpace &space_;
  const std::vector<bool> &ordinal_;
  std::vector<std::vector<double>> w_;
  std::vector<double> total_;
};

// log P(valid | x): naive Bayes over the controls' states, OK against INVALID.
class Feasibility {
public:
  // No smoothing between neighbouring values here: OK mass spread onto the
  // value next to an INVALID one would hide exactly the boundary to learn.
  Feasibility(const SearchSpace &space, const std::vector<ScoredPoint> &history)
      : flat_(space.controls.size(), false), ok_(space, flat_, 1), bad_(space, flat_, 1) {
    for (const auto &h : history) {
      if (h.generation == 0)
        continue;   // the baseline (a required control makes it no point of the space)
      (h.ok ? ok_ : bad_).add(h.point, 1);
      (h.ok ? nOk_ : nBad_) += 1;
    }
  }
  double logValid(const Point &p) const {
    if (nBad_ == 0)
      return 0;
    double logit = std::log((nBad_ + 0.5) / (nOk_ + 0.5)) + bad_.logp(p) - ok_.logp(p);
    return -std::log1p(std::exp(logit));
  }

private:
  std::vector<bool> flat_;
  Density ok_, bad_;
  double nOk_ = 0, nBad_ = 0;
};

bool worseThanBaseline(const ScoredPoint &h, const ScoredPoint &base, bool pareto) {
  if (!h.ok)
    return true;
  return pareto ? dominates(base.objectives, h.objectives) : base.objectives < h.objectives;
}

// The evaluated baseline (every control unset), or null.
const ScoredPoint *baselineOf(const SearchSpace &space, const std::vector<ScoredPoint> &history) {
  for (const auto &h : history)
    if (h.generation == 0 && !h.earlier && h.point == space.baseline())
      return &h;
  return nullptr;
}

// What the strategy stops sampling: whole controls, and single values.
struct Pruned {
  std::vector<bool> controls;
  std::vector<std::vector<bool>> values;   // [control][value index]
  bool value(size_t c, int v) const { return v != kUnset && values[c][v]; }
};

// p with every harmful control, and every control at a harmful value, unset
// (required controls are never harmful).
Point withoutHarmful(Point p, const Pruned &harmful) {
  for (size_t c = 0; c < p.size(); ++c)
    if (harmful.controls[c] || harmful.value(c, p[c]))
      p[c] = kUnset;
  return p;
}

class TpeStrategy : public Strategy {
public:
  TpeStrategy(const SearchConfig &c, const SearchSpace &s, bool pareto) : cfg_(c), space_(s), pareto_(pareto) {
    for (const auto &ctl : space_.controls)
      ordinal_.push_back(ordered(ctl));
  }
  std::string name() const override { return strategies::tpe; }

  std::vector<Point> pool(int generation, const std::vector<ScoredPoint> &history) override {
    SearchRng rng(cfg_.seed, generation, 0x747065);
    std::set<Point> taken = seenPoints(history);
    size_t want = (size_t)std::max(1, cfg_.poolSize);
    std::vector<ScoredPoint> ok;
    size_t done = 0;   // evaluations after the baseline
    for (const auto &h : history) {
      if (h.ok)
        ok.push_back(h);
      done += h.generation > 0;
    }
    std::vector<Point> pool = startupPoints(done, want, taken);
    if (ok.size() < 2) {
      std::vector<Point> more = nearDefaultPool(space_, want - pool.size(), taken, rng);
      pool.insert(pool.end(), more.begin(), more.end());
      return pool;
    }
    Pruned harmful{harmfulControls(space_, history, pareto_), harmfulValues(space_, history, pareto_)};
    std::vector<Point> model = modelPool(ok, history, harmful, done + pool.size(), want - pool.size(), taken, rng);
    pool.insert(pool.end(), model.begin(), model.end());
    // Few candidates left (a small space mostly evaluated): new points at
    // random, first without the harmful controls, then any.
    for (int tries = 0; pool.size() < want && tries < 200 * (int)want + 1000; ++tries)
      offerPoint(space_, pool, taken, withoutHarmful(randomPoint(space_, rng), harmful));
    fillRandom(pool, taken, want, space_, rng);
    return pool;
  }

private:
  // The first kStartup evaluations after the baseline, whatever the pool
  // size: the near-default points a pool of kStartup would hold in
  // generation 1 (one seeded list), those not evaluated yet, in order.
  std::vector<Point> startupPoints(size_t done, size_t want, std::set<Point> &taken) const {
    std::vector<Point> out;
    if (done >= (size_t)kStartup)
      return out;
    SearchRng rng(cfg_.seed, 1, 0x747065);
    std::set<Point> none = {space_.baseline()};
    for (const Point &p : nearDefaultPool(space_, kStartup, none, rng))
      if (out.size() < std::min(want, kStartup - done))
        offerPoint(space_, out, taken, p);
    return out;
  }

  std::vector<Point> modelPool(const std::vector<ScoredPoint> &ok, const std::vector<ScoredPoint> &history,
                               const Pruned &harmful, size_t done, size_t want, std::set<Point> &taken,
                               SearchRng &rng) {
    if (want == 0)
      return {};
    std::vector<size_t> order = rankOrder(ok, pareto_);
    size_t nGood = std::max<size_t>(1, (size_t)std::ceil(kGoodFraction * ok.size()));
    // Ties with the last good point are good too: the split must not depend
    // on the order of equal scores.
    while (nGood < ok.size() && ok[order[nGood]].objectives == ok[order[nGood - 1]].objectives)
      ++nGood;
    Density good(space_, ordinal_, 1), bad(space_, ordinal_, 1);
    for (size_t i = 0; i < ok.size(); ++i)
      (i < nGood ? good : bad).add(ok[order[i]].point, 1);
    Feasibility feasible(space_, history);

    std::vector<Point> cands = candidates(good, ok, order, nGood, harmful, want, taken, rng);
    std::vector<double> fixed(cands.size()), badLog(cands.size());
    for (size_t i = 0; i < cands.size(); ++i) {
      fixed[i] = good.logp(cands[i]) + feasible.logValid(cands[i]);
      badLog[i] = bad.logp(cands[i]);
    }
    // The first slots of the pool are one-control neighbours of the best
    // point (while any are left), the rest any candidate.
    const Point incumbent = withoutHarmful(ok[order[0]].point, harmful);
    std::vector<bool> local(cands.size());
    for (size_t i = 0; i < cands.size(); ++i) {
      int diff = 0;
      for (size_t c = 0; c < incumbent.size(); ++c)
        diff += cands[i][c] != incumbent[c];
      local[i] = diff == 1;
    }
    // Local slots: kLocal of every evaluation, counted over the whole search
    // (with a pool of 1, every other proposal).
    const size_t nLocal = (size_t)std::lround(kLocal * (done + want)) - (size_t)std::lround(kLocal * done);
    const std::set<Point> trends = trendSteps(ok[order[0]], ok, incumbent);
    std::vector<bool> trend(cands.size());
    for (size_t i = 0; i < cands.size(); ++i)
      trend[i] = local[i] && trends.count(cands[i]);
    std::vector<Point> pool;
    std::vector<bool> used(cands.size(), false);
    // Pass 0: trend steps, in any slot (Hooke-Jeeves makes the pattern move
    // as soon as a step improved); 1: local steps, in local slots; 2: any.
    auto eligible = [&](int pass, size_t i) {
      return pass == 0 ? trend[i] : pass == 1 ? pool.size() < nLocal && local[i] : true;
    };
    while (pool.size() < want) {
      size_t best = cands.size();
      for (int pass = 0; pass < 3 && best == cands.size(); ++pass)
        for (size_t i = 0; i < cands.size(); ++i)
          if (!used[i] && eligible(pass, i) &&
              (best == cands.size() || fixed[i] - badLog[i] > fixed[best] - badLog[best]))
            best = i;
      if (best == cands.size())
        break;
      used[best] = true;
      pool.push_back(cands[best]);
      taken.insert(cands[best]);
      // The believer step: until measured, the chosen point counts as bad.
      bad.add(cands[best], kBelieverWeight);
      for (size_t i = 0; i < cands.size(); ++i)
        if (!used[i])
          badLog[i] = bad.logp(cands[i]);
    }
    return pool;
  }

  // Hooke-Jeeves' pattern move on ordered controls: where the best point
  // `inc` beat an OK point of `ok` that differs from it only in one
  // ordered control, set there to a value on one side of inc's, the point
  // `from` (inc without harmful controls) with that control at the next
  // value on the other side. The scale improved towards inc's value, so the
  // trend likely goes on past it; TPE's densities cannot say so: the bad
  // density spreads the worse value onto its neighbours (inc's value and
  // the one beyond it alike), the good density inc's value onto both sides.
  std::set<Point> trendSteps(const ScoredPoint &inc, const std::vector<ScoredPoint> &ok, const Point &from) const {
    std::set<Point> out;
    for (const auto &h : ok) {
      size_t c = inc.point.size(), diffs = 0;
      for (size_t k = 0; k < inc.point.size(); ++k)
        if (h.point[k] != inc.point[k])
          ++diffs, c = k;
      if (diffs != 1 || !ordinal_[c] || h.point[c] == kUnset || inc.point[c] == kUnset)
        continue;
      bool worse = pareto_ ? dominates(inc.objectives, h.objectives) : inc.objectives < h.objectives;
      int next = inc.point[c] + (h.point[c] < inc.point[c] ? 1 : -1);
      if (!worse || from[c] != inc.point[c] || next < 0 || next >= (int)space_.controls[c].values.size())
        continue;
      Point q = from;
      q[c] = next;
      out.insert(q);
    }
    return out;
  }

  // Distinct new points: draws from l(x), and every one-control neighbour of
  // the best few points (a local step TPE's independent draws rarely make).
  std::vector<Point> candidates(const Density &good, const std::vector<ScoredPoint> &ok,
                                const std::vector<size_t> &order, size_t nGood, const Pruned &harmful,
                                size_t want, const std::set<Point> &taken, SearchRng &rng) {
    std::set<Point> seen = taken;
    std::vector<Point> out;
    // The constraints are the feasibility model's hard part: a point that
    // violates one is not a candidate at all (log P(valid) = -inf).
    auto consider = [&](const Point &p) {
      if (seen.insert(p).second && space_.feasible(p))
        out.push_back(p);
    };
    for (size_t k = 0; k < kCandidatesPerSlot * want; ++k) {
      Point p(space_.controls.size());
      for (size_t c = 0; c < p.size(); ++c)
        p[c] = good.sampleValue(c, rng);
      consider(withoutHarmful(p, harmful));
    }
    for (size_t g = 0; g < std::min<size_t>(nGood, kNeighbourhoods); ++g) {
      const Point base = withoutHarmful(ok[order[g]].point, harmful);
      for (size_t c = 0; c < base.size(); ++c) {
        if (harmful.controls[c])
          continue;
        for (int s = 0; s < space_.states(c); ++s) {
          Point q = base;
          q[c] = valueOf(space_.controls[c], s);
          if (harmful.value(c, q[c]))
            continue;
          consider(q);
        }
      }
    }
    return out;
  }

  SearchConfig cfg_;
  const SearchSpace &space_;
  bool pareto_;
  std::vector<bool> ordinal_;
};

} // namespace

namespace {

// Every control set in every evaluated point but the baseline's:
// visit(control, value index, worse than the baseline, the only one set).
// False when there is no measured baseline to compare with.
template <class Visit>
bool visitSetControls(const SearchSpace &space, const std::vector<ScoredPoint> &history, bool pareto, Visit visit) {
  const ScoredPoint *base = baselineOf(space, history);
  if (!base || !base->ok)
    return false;
  for (const auto &h : history) {
    if (&h == base)
      continue;
    bool w = worseThanBaseline(h, *base, pareto);
    bool alone = std::count_if(h.point.begin(), h.point.end(), [](int v) { return v != kUnset; }) == 1;
    for (size_t c = 0; c < space.controls.size(); ++c)
      if (h.point[c] != kUnset)
        visit(c, (size_t)h.point[c], w, alone);
  }
  return true;
}

// Harmful: set often enough, worse every time, and worse at least once
// with nothing else set (so it is not blamed for a neighbour).
bool harmful(const SearchSpace &space, size_t c, int set, int worse, int alone) {
  return space.controls[c].canUnset && set >= kHarmfulAfter && worse == set && alone > 0;
}

} // namespace

std::vector<bool> harmfulControls(const SearchSpace &space, const std::vector<ScoredPoint> &history, bool pareto) {
  size_t n = space.controls.size();
  std::vector<bool> out(n, false);
  std::vector<int> set(n, 0), worse(n, 0), alone(n, 0);
  std::vector<std::set<size_t>> tried(n);
  if (!visitSetControls(space, history, pareto, [&](size_t c, size_t v, bool w, bool a) {
        ++set[c];
        worse[c] += w;
        alone[c] += a;
        tried[c].insert(v);
      }))
    return out;
  // An ordered control (a numeric -D choice, a range) is blamed as a whole
  // only once two of its values were tried: one bad end of an ordered scale
  // (the smallest tile) often means the other end is the good one, and
  // harmfulValues() already stops sampling the bad value itself.
  for (size_t c = 0; c < n; ++c)
    out[c] = harmful(space, c, set[c], worse[c], alone[c]) &&
             (!ordered(space.controls[c]) || tried[c].size() >= kHarmfulValuesTried);
  return out;
}

std::vector<std::vector<bool>> harmfulValues(const SearchSpace &space, const std::vector<ScoredPoint> &history,
                                             bool pareto) {
  size_t n = space.controls.size();
  std::vector<std::vector<bool>> out(n);
  std::vector<std::vector<int>> set(n), worse(n), alone(n);
  for (size_t c = 0; c < n; ++c) {
    size_t values = space.controls[c].values.size();
    out[c].assign(values, false);
    set[c].assign(values, 0);
    worse[c].assign(values, 0);
    alone[c].assign(values, 0);
  }
  if (!visitSetControls(space, history, pareto, [&](size_t c, size_t v, bool w, bool a) {
        ++set[c][v];
        worse[c][v] += w;
        alone[c][v] += a;
      }))
    return out;
  for (size_t c = 0; c < n; ++c)
    for (size_t v = 0; v < out[c].size(); ++v)
      out[c][v] = harmful(space, c, set[c][v], worse[c][v], alone[c][v]);
  return out;
}

std::vector<Point> nearDefaultPool(const SearchSpace &space, size_t want, std::set<Point> &taken, SearchRng &rng) {
  // The baseline with required controls at a seeded value: the nearest
  // points of the space to the user's own build.
  Point home = space.baseline();
  for (size_t c = 0; c < home.size(); ++c)
    if (!space.controls[c].canUnset)
      home[c] = (int)rng.below(space.controls[c].values.size());
  // Per control, its values in seeded order; controls in seeded order.
  std::vector<size_t> controls;
  std::vector<std::vector<int>> values(home.size());
  for (size_t c = 0; c < home.size(); ++c) {
    const Control &ctl = space.controls[c];
    for (int v = 0; v < (int)ctl.values.size(); ++v)
      if (!(v == home[c]))
        values[c].push_back(v);
    for (size_t i = values[c].size(); i > 1; --i)
      std::swap(values[c][i - 1], values[c][rng.below(i)]);
    if (!values[c].empty())
      controls.push_back(c);
  }
  for (size_t i = controls.size(); i > 1; --i)
    std::swap(controls[i - 1], controls[rng.below(i)]);
  std::vector<Point> pool;
  offerPoint(space, pool, taken, home);
  // kSingles of the pool: one control at a time, round robin, every control
  // once before any twice.
  const size_t singles = (size_t)std::ceil(want * kSingles);
  for (size_t round = 0; pool.size() < singles; ++round) {
    bool any = false;
    for (size_t c : controls) {
      if (round >= values[c].size() || pool.size() >= singles)
        continue;
      any = true;
      Point p = home;
      p[c] = values[c][round];
      offerPoint(space, pool, taken, p);
    }
    if (!any)
      break;
  }
  // The rest: each control unset with probability 1/2, else a value
  // (the prior the model starts from), so controls that only help together
  // can meet in the first generation.
  for (int tries = 0; pool.size() < want && tries < 50 * (int)want; ++tries) {
    Point p = home;
    for (size_t c = 0; c < p.size(); ++c)
      if (!values[c].empty() && (!space.controls[c].canUnset || rng.uniform() >= kUnsetPrior))
        p[c] = (int)rng.below(space.controls[c].values.size());
    offerPoint(space, pool, taken, p);
  }
  fillRandom(pool, taken, want, space, rng);
  return pool;
}

std::unique_ptr<Strategy> makeTpeStrategy(const SearchConfig &cfg, const SearchSpace &space, bool pareto) {
  return std::make_unique<TpeStrategy>(cfg, space, pareto);
}

} // namespace ciq
