// build.command of ciq.yaml: the user's own build (make, a script). ciq does
// not know its objects before it ran; the baseline's receipts name them, and
// every later build must compile the same ones (CandidateBuilder checks).
#include "engine/compile/BuildDriver.h"

#include <llvm/Support/FileSystem.h>

namespace ciq {

bool CommandBuild::discover(std::string &error) {
  (void)error;
  objects_.clear();
  cleanLog_ = cfg_.runDir + "/logs/clean.log";
  return true;
}

void CommandBuild::clean() {
  if (cfg_.build.clean.empty())
    return;
  // A failing clean shows up as a stale build (objects not recompiled), whose
  // message names the build log; this log says why.
  runStep(cfg_.build.clean, cfg_.buildDir, cfg_.build.env, cleanLog_);
}

SubprocessResult CommandBuild::build(const std::map<std::string, std::string> &env, const std::string &logPath) {
  if (cfg_.build.kind == "none") {
    SubprocessResult r;   // nothing to build: the benchmark compiles at run time
    r.exitCode = 0;
    return r;
  }
  std::map<std::string, std::string> all = cfg_.build.env;
  for (const auto &kv : env)
    all[kv.first] = kv.second;
  return runStep(cfg_.build.command, cfg_.buildDir, all, logPath);
}

} // namespace ciq
