// `ciq canary`: prove controls reach the compiler.
#include "engine/commands/Command.h"
#include "engine/config/Config.h"
#include "engine/run/Tune.h"

#include <llvm/Support/FileSystem.h>

using namespace llvm;

namespace {

cl::SubCommand CanaryCmd("canary", "Build the baseline and a deliberately degrading configuration (ptxas --opt-level=0, "
                                   "or --acf FILE) and fail unless the device code changes");
cl::opt<std::string> Config("config", cl::desc("ciq.yaml of the search"), cl::init("ciq.yaml"), cl::sub(CanaryCmd));
cl::opt<std::string> Acf("acf", cl::desc("Degrade with this ACF instead of --opt-level=0"), cl::sub(CanaryCmd));
cl::opt<std::string> AcfStage("acf-stage", cl::desc("ptxas or nvcc (default ptxas)"), cl::init("ptxas"), cl::sub(CanaryCmd));

int canary() {
  std::string err;
  auto cfg = ciq::openConfig(Config, err);
  if (!cfg)
    return ciq::reportError(err);
  if (!Acf.empty() && !sys::fs::exists(Acf))
    return ciq::reportError("--acf " + Acf + ": no such file");
  ciq::TuneOptions o;
  o.canaryOnly = true;
  o.fresh = true;
  o.canaryAcf = Acf;
  o.canaryAcfStage = AcfStage;
  o.onWarning = ciq::reportWarning;
  return ciq::showTuneOutcome(ciq::runTune(*cfg, o));
}

ciq::RegisterCommand regCanary(CanaryCmd, canary);

} // namespace
