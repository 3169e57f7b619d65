// bench/search_efficiency: how many evaluations ciq's genetic and random
// strategies need to reach the true optimum of a compile-only objective,
// as a fraction of an exhaustive enumeration.
//
// What it does (and says it does): the space (search_efficiency.yaml, >= 200
// points) is enumerated ONCE with real ptxas compiles of examples/spill's
// kernel, caching the objective of each point (spill bytes, then registers)
// in a table. The strategies are then replayed against that table through
// ciq's own Strategy code (engine/Search.cpp) for seeds 1..5 — no compile
// happens during the replay — counting evaluations as `ciq tune` does
// (the baseline first, every proposed candidate one evaluation).
#include "PtxasStats.h"
#include "Search.h"
#include "SpaceLoader.h"
#include "Subprocess.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <map>
#include <thread>

using namespace ciq;
using namespace llvm;

static cl::opt<std::string> Nvcc("nvcc", cl::desc("nvcc that makes the PTX"), cl::init("nvcc"));
static cl::opt<std::string> Ptxas("ptxas", cl::desc("ptxas that compiles every point"), cl::init("ptxas"));
static cl::opt<std::string> Kernel("kernel", cl::desc(".cu file whose kernel is compiled"), cl::Required);
static cl::opt<std::string> SpaceFile("space", cl::desc("search space YAML"), cl::Required);
static cl::opt<std::string> Arch("arch", cl::desc("GPU architecture"), cl::init("sm_90"));
static cl::opt<int> PoolSize("pool-size", cl::desc("pool_size of the replayed searches"), cl::init(8));
static cl::opt<int> Seeds("seeds", cl::desc("replay seeds 1..N"), cl::init(5));

namespace {

using Score = std::vector<double>;   // {spill bytes, registers}; empty: ptxas failed

Score compileOne(const std::string &ptx, const Rendered &r) {
  std::vector<std::string> argv = {Ptxas, "-arch=" + Arch, "-v", "-o", "/dev/null"};
  argv.insert(argv.end(), r.ptxas.begin(), r.ptxas.end());
  argv.push_back(ptx);
  SubprocessOptions o;
  o.mergeStderrIntoStdout = true;
  auto res = runSubprocess(argv, o);
  if (res.exitCode != 0)
    return {};
  double spill = 0, regs = 0;
  for (const auto &k : wrapper::parsePtxasVerbose(res.out)) {
    spill += double(k.spillStores + k.spillLoads);
    regs += k.registers;
  }
  return {spill, regs};
}

// Every distinct rendered command line compiled once, all cores busy.
std::map<std::string, Score> buildTable(const SearchSpace &space, const std::string &ptx) {
  std::map<std::string, Rendered> todo;
  for (double i = 0; i < space.size(); ++i) {
    Rendered r = render(space, pointAt(space, i));
    todo.emplace(r.hash(), r);
  }
  std::vector<std::pair<std::string, Rendered>> work(todo.begin(), todo.end());
  std::map<std::string, Score> table;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (size_t start = 0; start < work.size(); start += threads) {
    std::vector<std::future<Score>> batch;
    for (size_t j = start; j < std::min(work.size(), start + threads); ++j)
      batch.push_back(std::async(std::launch::async, compileOne, ptx, work[j].second));
    for (size_t j = 0; j < batch.size(); ++j)
      table[work[start + j].first] = batch[j].get();
  }
  return table;
}

// Evaluations a strategy needs until one reaches `best` (0: never).
int replay(const SearchConfig &cfg, const SearchSpace &space, const std::map<std::string, Score> &table,
           const Score &best) {
  auto strategy = makeStrategy(cfg, space, false);
  auto score = [&](const Point &p, int g) {
    const Score &o = table.at(render(space, p).hash());
    return ScoredPoint{p, !o.empty(), o, g};
  };
  std::vector<ScoredPoint> history = {score(space.baseline(), 0)};
  if (history[0].ok && history[0].objectives == best)
    return 1;
  int limit = (int)space.size() * 4;
  for (int g = 1; (int)history.size() < limit; ++g) {
    auto pool = strategy->pool(g, history);
    if (pool.empty())
      return 0;
    for (const auto &p : pool) {
      history.push_back(score(p, g));
      if (history.back().ok && history.back().objectives == best)
        return (int)history.size();
    }
  }
  return 0;
}

double median(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "ciq search-efficiency benchmark\n");
  SearchSpace space = loadSpaceFile(SpaceFile, ".");
  const double total = space.size();
  SmallString<128> ptx;
  sys::fs::createTemporaryFile("ciq-search-efficiency", "ptx", ptx);
  auto mk = runSubprocess({Nvcc, "-arch=" + Arch, "-ptx", Kernel, "-o", ptx.str().str()});
  if (mk.exitCode != 0) {
    fprintf(stderr, "search_efficiency: error: %s -ptx %s failed: %s\n", Nvcc.c_str(), Kernel.c_str(), mk.err.c_str());
    return 1;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto table = buildTable(space, ptx.str().str());
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sys::fs::remove(ptx);

  Score best;
  int optimal = 0, invalid = 0;
  for (double i = 0; i < total; ++i) {
    const Score &o = table.at(render(space, pointAt(space, i)).hash());
    if (o.empty())
      ++invalid;
    else if (best.empty() || o < best)
      best = o;
  }
  for (double i = 0; i < total; ++i)
    optimal += table.at(render(space, pointAt(space, i)).hash()) == best;
  const Score &base = table.at(render(space, space.baseline()).hash());

  printf("search_efficiency: %s, kernel %s, %s\n", SpaceFile.c_str(), Kernel.c_str(), Arch.c_str());
  printf("method: every point of the space compiled once with the real ptxas (%.0f points, %zu distinct command "
         "lines, %.1f s), objective cached per point; genetic and random then replayed against that table "
         "through ciq's own Strategy code (pool_size %d, seeds 1..%d), no compile during the replay\n",
         total, table.size(), secs, PoolSize.getValue(), Seeds.getValue());
  printf("objective: spill bytes, then registers (lexicographic, minimized)\n");
  printf("baseline (default compile): %.0f spill bytes, %.0f registers\n", base[0], base[1]);
  printf("optimum: %.0f spill bytes, %.0f registers, reached by %d of %.0f points (%d INVALID)\n", best[0], best[1],
         optimal, total, invalid);

  SearchConfig cfg;
  cfg.poolSize = PoolSize;
  cfg.exhaustiveLimit = (long)total;
  cfg.strategy = "exhaustive";
  int exhaustiveAt = replay(cfg, space, table, best);
  printf("exhaustive: %.0f evaluations to be sure; its enumeration order meets the optimum at evaluation %d\n", total,
         exhaustiveAt);
  std::map<std::string, double> med;
  for (const char *name : {"genetic", "random"}) {
    cfg.strategy = name;
    std::vector<int> need;
    std::string list;
    for (int seed = 1; seed <= Seeds; ++seed) {
      cfg.seed = seed;
      int n = replay(cfg, space, table, best);
      need.push_back(n > 0 ? n : (int)total * 4);
      list += (list.empty() ? "" : " ") + (n > 0 ? std::to_string(n) : std::string("never"));
    }
    med[name] = median(need);
    printf("%-8s evaluations to the optimum, seeds 1..%d: %s; median %.1f = %.3f of exhaustive\n", name,
           Seeds.getValue(), list.c_str(), med[name], med[name] / total);
  }
  printf("ratio genetic/random (median evaluations): %.3f\n", med["genetic"] / med["random"]);
  printf("goal: genetic <= 0.25 of exhaustive: %s; genetic fewer than random: %s\n",
         med["genetic"] / total <= 0.25 ? "met" : "NOT met", med["genetic"] < med["random"] ? "met" : "NOT met");
  return 0;
}
