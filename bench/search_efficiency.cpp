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
#include "engine/config/Config.h"
#include "engine/search/Search.h"
#include "engine/config/SpaceLoader.h"
#include "engine/config/StrategyTable.h"

#include <algorithm>
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

Reached replay(const Landscape &l, const std::string &strategy, uint64_t seed) {
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
  Reached r;
  std::vector<ScoredPoint> history;
  std::set<std::string> binaries;
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
  for (int g = 1; (int)history.size() < l.budget && !r.optimum; ++g) {
    auto pool = st->pool(g, history);
    if (pool.empty())
      break;
    for (const auto &p : pool)
      if ((int)history.size() < l.budget)
        note(measure(l, p, g, noise));
  }
  return r;
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
          r = replay(l, name, (uint64_t)seed);
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
  std::string text = out.dump(1);
  if (JsonOut.empty())
    printf("%s\n", text.c_str());
  else
    std::ofstream(JsonOut) << text << "\n";
  return 0;
}
