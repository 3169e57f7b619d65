// bench/search_efficiency (replayer): every ciq strategy replayed on recorded
// landscapes (bench/landscapes/*/landscape.json) for many seeds, through
// ciq's own Strategy code (engine/search/Search.cpp, SearchTpe.cpp): no compile, no
// GPU. bench/search_efficiency.py runs this, runs the peers (Kernel Tuner,
// Optuna) on the same landscapes, and prints the table.
//
// Evaluations are counted as `ciq tune` counts them: the baseline first, then
// every proposed candidate. A compile-only landscape scores a point with its
// recorded objectives; a runtime landscape draws each measurement from the
// point's recorded runs (median of a resample), so a replay sees the noise a
// search on the GPU saw. "Optimum" is the point(s) with the best true score;
// "within 1%" is a true scalar score at most 1% above the best.
//
// Each count is given twice: in evaluations (distinct configurations) and in
// binaries measured (distinct device codes among them: a point whose
// `binary` an earlier point had costs no GPU time in `ciq tune`, issue 30).
// A landscape without `binary` ids counts every configuration as a binary.
//
// --warm: the warm start of a re-tune after a one-line source change (issue
// 49 item 5, engine/run/WarmPlan.cpp). Per landscape and seed:
//   1. the earlier search: a cold search of the recorded landscape, run as
//      `ciq tune` runs it, to its budget (--earlier-budget distinct binaries,
//      default ciq's 1 + 8 x 6 = 49; at most 2 configurations a binary, as
//      search.max_configurations_per_binary), not stopped at the optimum;
//   2. the edit: a changed landscape, every binary's objectives (a runtime
//      landscape: every recorded run) multiplied by one factor of its own,
//      exp(s z) with z standard normal (one stream seeded by the seed, drawn
//      in the order of the binary ids), s =
//      --change-sd (default 0.03: a few percent, the ranking mostly kept,
//      the optimum free to move among the near-best); compile objectives
//      rounded back to whole bytes and registers. Binary ids (twins) and
//      validity are kept;
//   3. on the changed landscape, cold: the strategy from scratch, as above;
//      warm: what `ciq tune` plans from the earlier journal (the pure
//      functions of engine/search/WarmStart.h): generation 1 begins with the
//      earlier winner and the next best binaries (kWarmPoints), and the
//      earlier evaluations, with their earlier scores, are the strategy's
//      history of generation 0 (warmHistory; all strategies but exhaustive).
// Counted for both: distinct binaries measured in the re-tune (the
// baseline first) to the changed landscape's optimum and to within 1% of it.
// The model leaves out edits that move whole regions together (one that
// raises register pressure makes every low register cap spill more: factors
// correlated across a control's values), edits that make INVALID points
// valid or the reverse, and edits that make twins differ: each can make the
// earlier search a worse guide than independent factors do.
#include "engine/config/Config.h"
#include "engine/search/Search.h"
#include "engine/config/SpaceLoader.h"
#include "engine/config/StrategyTable.h"
#include "engine/search/WarmStart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <llvm/Support/CommandLine.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/Path.h>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

using namespace ciq;
using namespace llvm;
using nlohmann::json;

static cl::list<std::string> Landscapes(cl::Positional, cl::desc("<landscape.json>..."), cl::ZeroOrMore);
static cl::opt<bool> PrintDefault("print-default", cl::desc("print the default strategy's name (JSON) and exit"));
static cl::list<std::string> Strategies("strategy", cl::desc("strategies to replay (default: all of ciq's)"),
                                        cl::CommaSeparated);
static cl::opt<int> Seeds("seeds", cl::desc("replay N seeds, from --first-seed on"), cl::init(30));
static cl::opt<int> FirstSeed("first-seed", cl::desc("the first replayed seed (a second set of seeds checks that a change is no fit to seeds 1..N)"),
                              cl::init(1));
static cl::opt<int> PoolSize("pool-size",
                             cl::desc("pool_size of the replayed searches (default: each strategy's own for one "
                                      "worker: tpe 1, the others 8)"),
                             cl::init(0));
static cl::opt<bool> Trace("trace", cl::desc("print every evaluation of every replay to stderr"));
static cl::opt<bool> Warm("warm", cl::desc("warm against cold re-tunes after a modelled one-line source change "
                                          "(see the file's header); prints a table"));
static cl::opt<double> ChangeSd("change-sd", cl::desc("--warm: the spread of the per-binary factor (log scale)"),
                                cl::init(0.03));
static cl::opt<int> EarlierBudget("earlier-budget",
                                  cl::desc("--warm: the earlier search's budget in distinct binaries"), cl::init(49));
static cl::opt<std::string> JsonOut("json", cl::desc("write evaluations per landscape, strategy and seed here"));

namespace {

struct Landscape {
  std::string name, kind;
  SearchSpace space;
  std::vector<double> weights;            // objectives -> one scalar, lexicographic order kept
  std::map<Point, json> points;
  double best = 0;                        // best true scalar
  int budget = 0;
  int binaries = 0;                       // distinct binary ids
};

// The device-code identity of a recorded point: its `binary`, else the
// point itself (every configuration its own binary).
std::string binaryOf(const json &rec) {
  // A `binary` that is not a string (a hand-edited file) is read as its JSON text, not a type error.
  if (auto it = rec.find("binary"); it != rec.end())
    return it->is_string() ? it->get<std::string>() : it->dump();
  return "point:" + rec["point"].dump();
}

double scalar(const Landscape &l, const std::vector<double> &o) {
  double s = 0;
  for (size_t i = 0; i < o.size(); ++i)
    s += l.weights[i] * o[i];
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The true objectives of an OK point: recorded scores, or the median of its runs.
std::vector<double> trueScores(const json &p) {
  if (p.contains("runs"))
    return {median(p["runs"].get<std::vector<double>>())};
  return p["scores"].get<std::vector<double>>();
}

bool load(const std::string &path, Landscape &l, std::string &error) {
  std::ifstream in(path);
  json doc = json::parse(in, nullptr, false);
  if (!in || doc.is_discarded())
    return error = path + ": not a landscape JSON file", false;
  l.name = doc.value("name", path);
  l.kind = doc.value("kind", "compile");
  SmallString<256> dir(sys::path::parent_path(path));
  try {
    l.space = loadSpaceFile("space.yaml", dir.empty() ? "." : dir.str().str());
  } catch (const std::exception &e) {
    return error = path + ": " + e.what(), false;
  }
  if (doc.value("space_identity", "") != l.space.identity())
    return error = path + ": space.yaml beside it changed since it was recorded; record it again", false;
  l.weights = doc.value("scalar_weights", std::vector<double>{1024, 1});
  bool first = true;
  for (const auto &p : doc["points"]) {
    Point pt = p["point"].get<Point>();
    l.points[pt] = p;
    if (p["status"] == "OK") {
      double s = scalar(l, trueScores(p));
      l.best = first ? s : std::min(l.best, s);
      first = false;
    }
  }
  // A constrained landscape records the points its constraints allow.
  if ((double)l.points.size() != l.space.feasibleSize().points)
    return error = path + ": " + std::to_string(l.points.size()) + " points recorded, the space has " +
                   std::to_string((long)l.space.feasibleSize().points), false;
  l.budget = (int)l.points.size();
  std::set<std::string> bins;
  for (const auto &[pt, rec] : l.points)
    bins.insert(binaryOf(rec));
  l.binaries = (int)bins.size();
  return true;
}

struct Reached {
  int optimum = 0, within1 = 0;   // evaluations; 0: not within the budget
  int optimumBinaries = 0, within1Binaries = 0;   // binaries measured by then
};

// A measurement as the search sees it: compile objectives as recorded; a
// runtime point's median over a resample of its recorded runs.
ScoredPoint measure(const Landscape &l, const Point &p, int g, SearchRng &noise) {
  const json &rec = l.points.at(p);
  if (rec["status"] != "OK")
    return {p, false, {}, g};
  if (!rec.contains("runs"))
    return {p, true, rec["scores"].get<std::vector<double>>(), g};
  auto runs = rec["runs"].get<std::vector<double>>();
  std::vector<double> draw;
  for (size_t i = 0; i < runs.size(); ++i)
    draw.push_back(runs[noise.below(runs.size())]);
  return {p, true, {median(draw)}, g};
}

// An earlier search's plan for a warm re-tune (engine/search/WarmStart.h).
struct WarmPlan {
  std::vector<Point> points;          // generation 1 begins with these
  std::vector<ScoredPoint> learned;   // generation 0 of the strategy's history
};

struct Search {
  Reached reached;
  std::vector<ScoredPoint> history;   // this search's evaluations, in order
};

// One search of `l`, cold or warm from `warm`. budget 0: until the optimum
// (or every point); else the earlier search of --warm, run past the optimum
// to `budget` distinct binaries, at most 2 configurations a binary.
Search replay(const Landscape &l, const std::string &strategy, uint64_t seed, const WarmPlan *warm = nullptr,
              int budget = 0) {
  SearchConfig cfg;
  cfg.strategy = strategy;
  cfg.seed = seed;
  // ciq's default for one worker: tpe's pool follows the workers (1),
  // the other strategies' is 8 (SearchConfig::poolFollowsWorkers).
  cfg.poolSizeSet = PoolSize > 0;
  cfg.poolSize = cfg.poolSizeSet ? (int)PoolSize : cfg.poolFollowsWorkers() ? 1 : SearchConfig::kDefaultPoolSize;
  cfg.exhaustiveLimit = l.budget;
  auto st = makeStrategy(cfg, l.space, false);
  SearchRng noise(seed, 0, 0x6e6f697365);
  Search out;
  Reached &r = out.reached;
  std::vector<ScoredPoint> &history = out.history;
  std::set<std::string> binaries;
  auto more = [&] {
    return (int)history.size() < l.budget &&
           (!budget || ((int)binaries.size() < budget && (int)history.size() < 2 * budget));
  };
  auto note = [&](const ScoredPoint &sp) {
    history.push_back(sp);
    binaries.insert(binaryOf(l.points.at(sp.point)));
    if (Trace) {
      std::string pt;
      for (int v : sp.point)
        pt += std::to_string(v) + " ";
      fprintf(stderr, "%s seed %llu #%zu g%d [%s] %s\n", strategy.c_str(), (unsigned long long)seed, history.size(),
              sp.generation, pt.c_str(), sp.ok ? json(sp.objectives).dump().c_str() : "INVALID");
    }
    const json &rec = l.points.at(sp.point);
    if (rec["status"] != "OK")
      return;
    double s = scalar(l, trueScores(rec));
    int n = (int)history.size();
    if (!r.optimum && s <= l.best)
      r.optimum = n, r.optimumBinaries = (int)binaries.size();
    if (!r.within1 && s <= l.best + 0.01 * std::abs(l.best))
      r.within1 = n, r.within1Binaries = (int)binaries.size();
  };
  note(measure(l, l.space.baseline(), 0, noise));
  for (int g = 1; more() && (budget || !r.optimum); ++g) {
    // As TuneRun::history: the earlier search's evaluations first.
    auto pool = st->pool(g, warm ? warmHistory(warm->learned, history) : history);
    if (g == 1 && warm)   // as TuneFeed::propose
      pool = warmFirst(warm->points, pool);
    if (pool.empty())
      break;
    for (const auto &p : pool)
      if (more())
        note(measure(l, p, g, noise));
  }
  return out;
}

// What `ciq tune` plans from the earlier search (TuneRun::planWarmStart).
// Its winner: the best measured point when it beat the default compile (the
// finalists' re-measurement and the minimization are not replayed).
WarmPlan planWarm(const Landscape &l, const std::vector<ScoredPoint> &earlier, const std::string &strategy) {
  WarmPlan w;
  std::vector<Point> winners;
  const ScoredPoint &best = earlier[rankOrder(earlier, false).front()];
  const ScoredPoint &base = earlier.front();
  if (best.ok && (!base.ok || best.objectives < base.objectives))
    winners.push_back(best.point);
  std::vector<std::string> binaries;
  for (const auto &e : earlier)
    binaries.push_back(binaryOf(l.points.at(e.point)));
  w.points = warmPoints(earlier, binaries, winners, l.space.baseline());
  if (warmLearns(strategy))
    for (const auto &e : earlier)
      w.learned.push_back({e.point, e.ok, e.objectives, 0});
  return w;
}

// The landscape after a one-line source change (the model of the header):
// each binary's objectives, or runs, times exp(--change-sd x z).
Landscape changed(const Landscape &l, uint64_t seed) {
  Landscape c = l;
  std::map<std::string, double> factor;   // by binary id, drawn in id order
  for (const auto &[pt, rec] : l.points)
    factor.emplace(binaryOf(rec), 1.0);
  SearchRng rng(seed, 0, 0x6368616e6765);
  for (auto &[id, f] : factor) {
    double u1 = 1 - rng.uniform(), u2 = rng.uniform();   // Box-Muller
    f = std::exp(ChangeSd * std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2));
  }
  bool first = true;
  for (auto &[pt, rec] : c.points) {
    if (rec["status"] != "OK")
      continue;
    double f = factor.at(binaryOf(rec));
    auto scale = [&](json &values, bool round) {
      for (auto &v : values)
        v = round ? std::round(v.get<double>() * f) : v.get<double>() * f;
    };
    if (rec.contains("runs"))
      scale(rec["runs"], false);
    scale(rec["scores"], !rec.contains("runs"));
    double s = scalar(c, trueScores(rec));
    c.best = first ? s : std::min(c.best, s);
    first = false;
  }
  return c;
}

std::set<Point> optima(const Landscape &l) {
  std::set<Point> out;
  for (const auto &[pt, rec] : l.points)
    if (rec["status"] == "OK" && scalar(l, trueScores(rec)) <= l.best)
      out.insert(pt);
  return out;
}

// --warm, one landscape, strategy and seed: the earlier search, the edit,
// then the cold and the warm re-tune of the changed landscape.
json warmReplay(const Landscape &l, const std::string &strategy, uint64_t seed) {
  Search earlier = replay(l, strategy, seed, nullptr, std::min<int>(EarlierBudget, l.budget));
  Landscape c = changed(l, seed);
  WarmPlan w = planWarm(l, earlier.history, strategy);
  Reached cold = replay(c, strategy, seed).reached;
  // No warm point (nothing beat... nothing OK): `ciq tune` starts cold.
  Reached warm = w.points.empty() ? cold : replay(c, strategy, seed, &w).reached;
  std::set<Point> before = optima(l), after = optima(c), seen;
  for (const auto &e : earlier.history)
    seen.insert(e.point);
  auto any = [&](auto first, auto last) { return std::any_of(first, last, [&](const Point &p) { return after.count(p); }); };
  // Where the new optimum stood in the earlier ranking: distinct binaries ranked before it.
  int rank = -1;
  std::set<std::string> ahead;
  for (size_t i : rankOrder(earlier.history, false)) {
    const Point &p = earlier.history[i].point;
    if (after.count(p)) {
      rank = (int)ahead.size();
      break;
    }
    ahead.insert(binaryOf(l.points.at(p)));
  }
  return {{"cold", {cold.optimumBinaries, cold.within1Binaries}},
          {"earlier_rank", rank},
          {"warm", {warm.optimumBinaries, warm.within1Binaries}},
          {"moved", !any(before.begin(), before.end())},          // no earlier optimum is optimal now
          {"in_warm_points", any(w.points.begin(), w.points.end())}, // generation 1 measures the new optimum
          {"in_earlier", any(seen.begin(), seen.end())},              // the earlier search evaluated it
          {"earlier_evaluations", earlier.history.size()}};
}

// Binaries to the optimum (which 0) or to within 1% (1) of one side, cold
// or warm, per seed; never reached: notReached.
std::vector<double> binariesTo(const json &runs, const char *side, int which, int notReached) {
  std::vector<double> v;
  for (const auto &r : runs)
    v.push_back(r[side][which].get<int>() ? r[side][which].get<int>() : notReached);
  std::sort(v.begin(), v.end());
  return v;
}

// "median (90th percentile)", as bench/search_efficiency.py picks it; ">N": not reached.
std::string figure(const std::vector<double> &v, int notReached) {
  auto one = [&](double x) {
    char buf[32];
    snprintf(buf, sizeof buf, x >= notReached ? ">%g" : "%g", x >= notReached ? notReached - 1 : x);
    return std::string(buf);
  };
  double p90 = v[std::min(v.size() - 1, (size_t)std::lround(0.9 * (v.size() - 1)))];
  return one(median(v)) + " (" + one(p90) + ")";
}

// Per strategy: binaries to the optimum and to within 1%, cold and warm, the
// ratio of the medians; how often the optimum moved, was among the warm
// points, and was measured by the earlier search.
void printWarm(const std::string &landscape, int binaries, const json &byStrategy) {
  int notReached = binaries + 1;   // never reached: counted as one more than every binary
  for (const auto &[name, runs] : byStrategy.items()) {
    auto c0 = binariesTo(runs, "cold", 0, notReached), w0 = binariesTo(runs, "warm", 0, notReached);
    auto c1 = binariesTo(runs, "cold", 1, notReached), w1 = binariesTo(runs, "warm", 1, notReached);
    int moved = 0, inWarm = 0, inEarlier = 0;
    for (const auto &r : runs)
      moved += r["moved"].get<bool>(), inWarm += r["in_warm_points"].get<bool>(), inEarlier += r["in_earlier"].get<bool>();
    size_t n = runs.size();
    printf("| %s | %s | %s | %s | %.2f | %s | %s | %.2f | %d/%zu | %d/%zu | %d/%zu |\n", landscape.c_str(), name.c_str(),
           figure(c0, notReached).c_str(), figure(w0, notReached).c_str(), median(w0) / median(c0),
           figure(c1, notReached).c_str(), figure(w1, notReached).c_str(), median(w1) / median(c1), moved, n, inWarm, n,
           inEarlier, n);
  }
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "ciq search-efficiency replayer\n");
  if (PrintDefault) {
    printf("%s\n", json(std::string(kDefaultStrategy)).dump().c_str());
    return 0;
  }
  std::vector<std::string> names(Strategies.begin(), Strategies.end());
  if (names.empty())
    for (const auto &s : kStrategies)
      names.push_back(s.name);
  json out = json::object();
  for (const auto &path : Landscapes) {
    Landscape l;
    std::string error;
    if (!load(path, l, error)) {
      fprintf(stderr, "search_efficiency: error: %s\n", error.c_str());
      return 1;
    }
    json &lj = out[l.name];
    lj["budget"] = l.budget;
    lj["binaries"] = l.binaries;
    for (const auto &name : names) {
      for (int seed = FirstSeed; seed < FirstSeed + Seeds; ++seed) {
        Reached r;
        try {
          if (Warm) {
            lj["warm"][name].push_back(warmReplay(l, name, (uint64_t)seed));
            continue;
          }
          r = replay(l, name, (uint64_t)seed).reached;
        } catch (const std::exception &e) {
          fprintf(stderr, "search_efficiency: error: %s: %s\n", name.c_str(), e.what());
          return 1;
        }
        lj["strategies"][name]["optimum"].push_back(r.optimum);
        lj["strategies"][name]["within1"].push_back(r.within1);
        lj["strategies"][name]["optimum_binaries"].push_back(r.optimumBinaries);
        lj["strategies"][name]["within1_binaries"].push_back(r.within1Binaries);
      }
    }
  }
  if (Warm) {
    printf("| landscape | strategy | cold: binaries to the optimum, median (p90) | warm | warm / cold | cold: to "
           "within 1%% | warm | warm / cold | optimum moved | new optimum in the warm points | measured by the earlier "
           "search |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (const auto &[name, lj] : out.items())
      printWarm(name, lj["binaries"], lj["warm"]);
  }
  std::string text = out.dump(1);
  if (Warm && JsonOut.empty())
    return 0;
  if (JsonOut.empty())
    printf("%s\n", text.c_str());
  else
    std::ofstream(JsonOut) << text << "\n";
  return 0;
}
