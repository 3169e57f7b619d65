// The options each CUDA compile of a target gets from a lock, as the build
// tool runs it (`ciq lock show --build-dir`, docs/lockfile.md). Through
// target options (ciq_apply_lock with a fixed CUDA_ARCHITECTURES) they are in
// the compile line and compile_commands.json; through the launcher
// (ciq-ptxas --lock: -arch flags, CMP0104 OLD, a multi-config generator)
// only ciq-ptxas adds them, per compile, after its checks: this asks the
// same checks of each real compile line.
#pragma once
#include "common/Lockfile.h"
#include "engine/config/Config.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct AppliedObject {
  std::string source;                 // the .cu file compiled
  std::string route;                  // "compile options", "ciq-ptxas --lock <file>", or "none"
  std::vector<std::string> options;   // the lock's arguments this compile gets
  std::string note;                   // why it gets none ("" when it does)
};

// nullopt with `error` when the build tool cannot list the commands.
std::optional<std::vector<AppliedObject>> lockAppliedObjects(const Lockfile &l, const std::string &lockPath,
                                                             const TuneConfig &cfg, std::string &error);

} // namespace ciq
