// `ciq sample N`: what the search would try, rendered, without building.
#include "Command.h"
#include "Config.h"
#include "Search.h"

#include <set>

using namespace llvm;

namespace {

cl::SubCommand SampleCmd("sample", "Print N candidates of the search space with their command-line additions (no build)");
cl::opt<std::string> Config("config", cl::desc("ciq.yaml to read"), cl::init("ciq.yaml"), cl::sub(SampleCmd));
cl::opt<unsigned> Count(cl::Positional, cl::desc("<N>"), cl::init(10), cl::sub(SampleCmd));
cl::opt<long> Seed("seed", cl::desc("RNG seed (default: search.seed of ciq.yaml)"), cl::init(-1), cl::sub(SampleCmd));

int run() {
  std::string err;
  auto cfg = ciq::loadConfig(Config, err);
  if (!cfg)
    return ciq::reportError(err);
  uint64_t seed = Seed >= 0 ? (uint64_t)Seed : cfg->search.seed;
  ciq::SearchRng rng(seed, 1, /*stream=*/7);
  printf("# space: %zu controls, %.0f points, identity %s\n", cfg->space.controls.size(), cfg->space.size(),
         cfg->space.identity().substr(0, 16).c_str());
  std::set<ciq::Point> seen = {cfg->space.baseline()};
  unsigned printed = 0;
  for (unsigned tries = 0; printed < Count && tries < Count * 100 + 100; ++tries) {
    ciq::Point p = ciq::randomPoint(cfg->space, rng);
    if (!seen.insert(p).second)
      continue;
    ciq::Rendered r = ciq::render(cfg->space, p);
    printf("%3u  %s  %s\n", ++printed, r.hash().substr(0, 12).c_str(), r.summary().c_str());
  }
  return 0;
}

ciq::RegisterCommand reg(SampleCmd, run);

} // namespace
