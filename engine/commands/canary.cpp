// `ciq canary` and `ciq replay`: prove controls reach the compiler; rebuild one candidate by hand.
#include "Command.h"
#include "Config.h"
#include "Tune.h"

#include <llvm/Support/FileSystem.h>

using namespace llvm;

namespace {

cl::SubCommand CanaryCmd("canary", "Build the baseline and a deliberately degrading configuration (ptxas --opt-level=0, "
                                   "or --acf FILE) and fail unless the device code changes");
cl::SubCommand ReplayCmd("replay", "Rebuild and rerun one candidate of a search with its exact command lines");
cl::opt<std::string> Config("config", cl::desc("ciq.yaml of the search"), cl::init("ciq.yaml"), cl::sub(CanaryCmd),
                            cl::sub(ReplayCmd));
cl::opt<std::string> Acf("acf", cl::desc("Degrade with this ACF instead of --opt-level=0"), cl::sub(CanaryCmd));
cl::opt<std::string> AcfStage("acf-stage", cl::desc("ptxas or nvcc (default ptxas)"), cl::init("ptxas"), cl::sub(CanaryCmd));
cl::opt<std::string> Candidate(cl::Positional, cl::desc("<candidate id, e.g. c0007>"), cl::Required, cl::sub(ReplayCmd));

int canary() {
  std::string err;
  auto cfg = ciq::loadConfig(Config, err);
  if (!cfg)
    return ciq::reportError(err);
  if (!Acf.empty() && !sys::fs::exists(Acf))
    return ciq::reportError("--acf " + Acf + ": no such file");
  ciq::TuneOptions o;
  o.canaryOnly = true;
  o.fresh = true;
  o.canaryAcf = Acf;
  o.canaryAcfStage = AcfStage;
  return ciq::runTune(*cfg, o);
}

int replay() {
  std::string err;
  auto cfg = ciq::loadConfig(Config, err);
  if (!cfg)
    return ciq::reportError(err);
  return ciq::replayCandidate(*cfg, Candidate);
}

ciq::RegisterCommand regCanary(CanaryCmd, canary);
ciq::RegisterCommand regReplay(ReplayCmd, replay);

} // namespace
