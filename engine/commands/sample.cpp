// `ciq sample N`: what the search would try, rendered, without building.
//
// The candidates are the strategy's own first generation, asked for with a
// pool of N: with N = pool_size they are exactly the candidates `ciq tune`
// builds first for the same seed (after the baseline, which is never sampled).
#include "engine/commands/Command.h"
#include "engine/config/Config.h"
#include "engine/record/Journal.h"
#include "engine/run/BaselineKernelControls.h"
#include "engine/search/Search.h"

#include <llvm/Support/FileSystem.h>

#include <map>

using namespace llvm;

namespace {

cl::SubCommand SampleCmd("sample", "Print N candidates of the search space with their command-line additions (no build)");
cl::opt<std::string> Config("config", cl::desc("ciq.yaml to read"), cl::init("ciq.yaml"), cl::sub(SampleCmd));
// Read as text: LLVM's parser reports a bad positional number but runs on
// with the default, so `ciq sample abc` printed 10 candidates.
cl::opt<std::string> CountText(cl::Positional, cl::desc("<N>"), cl::init("10"), cl::sub(SampleCmd));
cl::opt<long> Seed("seed", cl::desc("RNG seed (default: search.seed of ciq.yaml)"), cl::init(-1), cl::sub(SampleCmd));

// Per-kernel controls join the space after the baseline compile (its
// ptxas receipts name the kernels): from the run directory's journaled
// baseline when there is one, as `ciq tune` derives them; else one line
// that says when they come. Prints what it did; false on an error line.
bool addKernelControls(ciq::TuneConfig &cfg) {
  if (!ciq::kernelControlsOn(cfg))
    return true;
  std::string journal = cfg.runDir + "/journal.jsonl";
  const ciq::Evaluation *baseline = nullptr;
  ciq::JournalContents jc;
  if (llvm::sys::fs::exists(journal)) {
    jc = ciq::readJournal(journal);
    for (const auto &e : jc.evaluations)
      if (e.candidateId == "c0000" && e.ok)
        baseline = &e;
  }
  if (!baseline) {
    printf("# per-kernel controls: they join the space after the baseline compile of `ciq tune` names the kernels "
           "(no baseline in %s yet)\n", journal.c_str());
    return true;
  }
  ciq::BaselineKernelControls bk = ciq::baselineKernelControls(cfg, *baseline);
  if (!bk.controls.error.empty()) {
    ciq::reportError(bk.controls.error);
    return false;
  }
  for (const auto &n : bk.controls.notes)
    printf("# per-kernel controls: %s\n", n.c_str());
  printf("# per-kernel controls from the baseline of %s (%s):\n", journal.c_str(),
         bk.launchedOnly ? "the kernels its benchmark launched, most GPU time first" : bk.why.c_str());
  for (const auto &c : bk.controls.controls) {
    std::string values;
    for (const auto &v : c.values)
      values += (values.empty() ? "" : ", ") + v;
    if (c.option == "smem_spilling")   // a flag: written or not
      printf("#   %-40s .pragma \"enable_smem_spilling\" (on, or unset)\n", c.name.c_str());
    else
      printf("#   %-40s .%s N, N in {%s}\n", c.name.c_str(), c.option.c_str(), values.c_str());
    cfg.space.controls.push_back(c);
  }
  std::string err;
  if (!cfg.space.compileConstraints(err)) {
    ciq::reportError(cfg.path + ": " + err);
    return false;
  }
  return true;
}

int run() {
  if (Seed.getNumOccurrences() && Seed < 0)
    return ciq::reportError("--seed " + std::to_string(Seed) + ": give a seed of 0 or more");
  std::string err;
  auto cfg = ciq::openConfig(Config, err);
  if (!cfg)
    return ciq::reportError(err);
  if (!addKernelControls(*cfg))
    return 1;
  char *end = nullptr;
  unsigned long long asked = strtoull(CountText.c_str(), &end, 10);
  if (CountText.empty() || *end != '\0' || CountText[0] == '-' || asked == 0 || asked > 100000)
    return ciq::reportError("sample: N must be a whole number from 1 to 100000, got '" + CountText + "'");
  unsigned Count = (unsigned)asked;
  ciq::SearchConfig sc = cfg->search;
  sc.seed = Seed >= 0 ? (uint64_t)Seed : cfg->search.seed;
  sc.poolSize = (int)Count;
  sc.cullSize = 0;
  sc.elitism = 0;
  std::unique_ptr<ciq::Strategy> strategy;
  try {
    strategy = ciq::makeStrategy(sc, cfg->space, cfg->pareto);
  } catch (const std::exception &e) {
    return ciq::reportError(cfg->path + ": search.strategy: " + e.what());
  }
  // The history a search has when it asks for generation 1: the baseline.
  std::vector<ciq::ScoredPoint> history = {{cfg->space.baseline(), true, {}, 0}};
  std::vector<ciq::Point> pool = strategy->pool(1, history);
  printf("# space: %zu controls, %s, identity %s; %s strategy, seed %llu\n", cfg->space.controls.size(),
         cfg->space.sizeSummary().c_str(), cfg->space.identity().substr(0, 16).c_str(), strategy->name().c_str(),
         (unsigned long long)sc.seed);
  if (!cfg->buildNumericsNote.empty())
    printf("# %s\n", cfg->buildNumericsNote.c_str());
  if (pool.size() < Count)
    printf("# the space has only %zu candidates besides the baseline\n", pool.size());
  // Distinct points may render alike (two controls, one option): the search
  // evaluates those once, so say so.
  std::map<std::string, unsigned> firstWithHash;
  unsigned n = 0;
  for (const auto &p : pool) {
    ciq::Rendered r = ciq::render(cfg->space, p);
    std::string hash = r.hash();
    auto [it, fresh] = firstWithHash.emplace(hash, ++n);
    printf("%3u  %s  %s%s\n", n, hash.substr(0, 12).c_str(), r.summary().c_str(),
           fresh ? "" : ("  (same command line as " + std::to_string(it->second) + ": not rebuilt)").c_str());
  }
  return 0;
}

ciq::RegisterCommand reg(SampleCmd, run);

} // namespace
