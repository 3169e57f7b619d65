// `ciq boost list|fetch|try`: booster packs, curated sets of ACFs in NVIDIA
// CompileIQ's release format (docs/spaces-and-boosters.md). Fetching and
// verification live in engine/assets/BoosterPacks; `try` runs the pack's
// ACFs through the normal tuning pipeline (engine/run/Tune.h).
#include "engine/assets/BoosterPacks.h"
#include "engine/commands/Command.h"
#include "engine/config/Config.h"
#include "engine/run/Tune.h"

#include <algorithm>
#include <cmath>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Format.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace {

using namespace ciq;
namespace cl = llvm::cl;

cl::SubCommand BoostCmd("boost", "Booster packs: list, fetch, or try a pack's ACFs on your workload");
cl::list<std::string> Args(cl::Positional, cl::sub(BoostCmd),
                           cl::desc("list | fetch <pack_id> | try <pack_id>"));
cl::opt<std::string> Tag("tag", cl::sub(BoostCmd), cl::init("latest"),
                         cl::desc("release tag of the booster packs, or 'latest' (newest booster-packs-* release)"));
cl::opt<std::string> ConfigPath("config", cl::sub(BoostCmd), cl::init("ciq.yaml"),
                                cl::desc("try: the ciq.yaml of the workload (target, benchmark, objectives)"));
cl::opt<bool> Lock("lock", cl::sub(BoostCmd),
                   cl::desc("try: freeze the best ACF that beats the no-ACF baseline in the lockfile"));
cl::opt<bool> AllowNewer("allow-newer-cuda", cl::sub(BoostCmd),
                         cl::desc("try: evaluate a pack made for a newer CUDA than the installed ptxas"));

// The pack, or an error that lists the catalog's pack ids.
const BoosterPack *findPack(const LoadedCatalog &c, const std::string &id) {
  if (const BoosterPack *p = c.catalog.find(id))
    return p;
  std::string ids;
  for (const auto &p : c.catalog.packs)
    ids += (ids.empty() ? "" : ", ") + p.packId;
  reportError("no booster pack '" + id + "' in " + c.where + " (tag " + c.tag + "); available: " +
              (ids.empty() ? "(none)" : ids));
  return nullptr;
}

std::string cudaFlag(const BoosterPack &p, const std::optional<std::string> &installed) {
  if (!installed)
    return "";
  return compareVersions(p.cudaVersion, *installed) > 0 ? "  [needs CUDA " + p.cudaVersion +
                                                              ", installed " + *installed + "]"
                                                        : "";
}

int list() {
  std::string error;
  auto c = loadBoosterCatalog(Tag, error);
  if (!c)
    return reportError(error);
  auto installed = installedCudaVersion();
  llvm::outs() << "booster packs of " << c->where << " (tag " << c->tag << ", catalog "
               << c->catalog.catalogVersion << "):\n";
  for (const auto &p : c->catalog.packs) {
    std::string gpus;
    for (const auto &g : p.supportedGpus)
      gpus += (gpus.empty() ? "" : ",") + g;
    llvm::outs() << llvm::format("  %-24s %-10s cuda %-5s %-5s %2zu ACFs  %-14s %s%s\n",
                                 p.packId.c_str(), p.packType.c_str(), p.cudaVersion.c_str(),
                                 p.controlsStage.c_str(), p.acfs.size(), gpus.c_str(),
                                 p.displayName.c_str(), cudaFlag(p, installed).c_str());
  }
  return 0;
}

std::optional<ExtractedPack> fetchPack(const std::string &id, LoadedCatalog &c,
                                       const BoosterPack *&pack) {
  std::string error;
  auto loaded = loadBoosterCatalog(Tag, error);
  if (!loaded)
    return reportError(error), std::nullopt;
  c = std::move(*loaded);
  pack = findPack(c, id);
  if (!pack)
    return std::nullopt;
  std::vector<std::string> warnings;
  auto x = fetchBoosterPack(c, *pack, warnings, error);
  if (!x)
    reportError(error);
  return x;
}

int fetch() {
  if (Args.size() != 2)
    return reportError("boost fetch: expected one pack id (ciq boost list shows them)");
  LoadedCatalog c;
  const BoosterPack *pack = nullptr;
  auto x = fetchPack(Args[1], c, pack);
  if (!x)
    return 1;
  llvm::outs() << "fetched " << pack->packId << " (tag " << c.tag << ", " << x->acfs.size()
               << " ACFs for " << pack->controlsStage << ", CUDA " << pack->cudaVersion << ")\n  "
               << x->dir << "\n";
  for (const auto &a : x->acfs)
    llvm::outs() << "  " << a.ref.sha256 << "  " << llvm::sys::path::filename(a.path) << "\n";
  return 0;
}

// The search space of a try: one ACF control whose values are the pack's
// files; unset is the no-ACF baseline.
SearchSpace packSpace(const LoadedCatalog &c, const BoosterPack &pack, const ExtractedPack &x) {
  Control acf;
  acf.name = "acf";
  acf.render = RenderKind::Acf;
  acf.domain = DomainKind::AcfFiles;
  acf.acfStage = pack.controlsStage;
  for (const auto &a : x.acfs) {
    acf.values.push_back(a.path);
    acf.acfSha256.push_back(a.ref.sha256);
  }
  acf.help = "ACFs of booster pack " + pack.packId;
  acf.origin = "booster pack " + pack.packId + " (" + c.where + ")";
  SearchSpace space;
  space.controls.push_back(std::move(acf));
  space.sources.push_back({"booster:" + pack.packId, c.mirror ? "mirror" : "release", c.tag,
                           pack.artifactSha256});
  return space;
}

// Which ACF a row used: its file name and SHA-256, or the baseline.
std::pair<std::string, std::string> acfOf(const Evaluation &e) {
  if (e.rendered.acfs.empty())
    return {"(no ACF: baseline)", ""};
  const auto &a = e.rendered.acfs.front();
  return {llvm::sys::path::filename(a.path).str(), a.sha256};
}

void printTable(const TuneConfig &cfg, std::vector<Evaluation> evals) {
  const Objective &obj = cfg.objectives.front();
  bool maximize = obj.direction == "maximize";
  auto score = [&](const Evaluation &e) {
    auto it = e.scores.find(obj.metric);
    return it == e.scores.end() ? NAN : it->second;
  };
  std::stable_sort(evals.begin(), evals.end(), [&](const Evaluation &a, const Evaluation &b) {
    if (a.ok != b.ok)
      return a.ok;
    if (!a.ok)
      return false;
    return maximize ? score(a) > score(b) : score(a) < score(b);
  });
  const std::string scoreHead = obj.metric + " (" + obj.unit + ")";
  const char *rankHead = "rank", *acfHead = "ACF", *outcomeHead = "outcome", *shaHead = "sha256",
             *noteHead = "note";
  llvm::outs() << llvm::format("%-4s %-28s %-14s %-14s %-64s %s\n", rankHead, acfHead,
                               scoreHead.c_str(), outcomeHead, shaHead, noteHead);
  int rank = 0;
  for (const auto &e : evals) {
    if (e.candidateId == "canary")
      continue;
    auto [name, sha] = acfOf(e);
    std::string value = e.ok ? llvm::formatv("{0:g}", score(e)).str() : "-";
    std::string outcome = e.ok ? "OK" : "INVALID " + e.reason;
    std::string note = e.duplicateOf.empty() ? e.message : "same " + e.duplicateKind + " as " + e.duplicateOf;
    llvm::outs() << llvm::format("%-4d %-28s %-14s %-14s %-64s %s\n", ++rank, name.c_str(),
                                 value.c_str(), outcome.c_str(), sha.empty() ? "-" : sha.c_str(),
                                 note.c_str());
  }
}

int tryPack() {
  if (Args.size() != 2)
    return reportError("boost try: expected one pack id (ciq boost list shows them)");
  std::string error;
  auto loaded = loadBoosterCatalog(Tag, error);
  if (!loaded)
    return reportError(error);
  const BoosterPack *pack = findPack(*loaded, Args[1]);
  if (!pack)
    return 1;
  // Flagged before anything is fetched or built: ACFs target one compiler release.
  auto installed = installedCudaVersion();
  if (!installed)
    reportWarning("cannot run 'ptxas --version' to compare with the pack's cuda_version " + pack->cudaVersion);
  else if (compareVersions(pack->cudaVersion, *installed) > 0) {
    std::string what = "booster pack " + pack->packId + " was made for CUDA " + pack->cudaVersion +
                       " but the installed ptxas is " + *installed;
    if (!AllowNewer)
      return reportError(what + "; install CUDA " + pack->cudaVersion +
                         " or later, or pass --allow-newer-cuda to try it anyway");
    reportWarning(what + "; trying anyway (--allow-newer-cuda)");
  }
  auto cfg = openConfig(ConfigPath, error);
  if (!cfg)
    return reportError(error);
  std::vector<std::string> warnings;
  auto x = fetchBoosterPack(*loaded, *pack, warnings, error);
  if (!x)
    return reportError(error);

  cfg->space = packSpace(*loaded, *pack, *x);
  cfg->search.strategy = ciq::strategies::exhaustive;
  cfg->search.exitOnFailure = false;   // every ACF gets its row, even if all fail
  cfg->runDir += "/boost-" + pack->packId;   // never mixes with the user's own search
  TuneOptions opts;
  opts.fresh = true;
  opts.writeLock = Lock;
  opts.maxEvaluations = 1 + (int)x->acfs.size();
  llvm::outs() << "trying booster pack " << pack->packId << ": the no-ACF baseline and "
               << x->acfs.size() << " ACF(s) for " << pack->controlsStage << "\n";
  llvm::outs().flush();
  opts.onWarning = reportWarning;
  int rc = showTuneOutcome(runTune(*cfg, opts));
  auto evals = loadEvaluations(*cfg);
  if (!evals.empty()) {
    llvm::outs() << "\nbooster pack " << pack->packId << " (tag " << loaded->tag
                 << "), sorted by " << cfg->objectives.front().metric << ", "
                 << cfg->objectives.front().direction << "; results in " << cfg->runDir << "\n";
    printTable(*cfg, evals);
  }
  return rc;
}

int run() {
  if (Args.empty())
    return reportError("boost: expected an action: list, fetch or try (ciq boost --help)");
  const std::string &action = Args[0];
  if (action == "list")
    return list();
  if (action == "fetch")
    return fetch();
  if (action == "try")
    return tryPack();
  return reportError("boost: unknown action '" + action + "'; expected list, fetch or try");
}

RegisterCommand reg(BoostCmd, run);

} // namespace
