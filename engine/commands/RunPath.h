// Where `ciq diagnose`, `report` and `explain` read a search: the run
// directory (or results.csv, journal.jsonl) given, or with --config the
// run_dir of that ciq.yaml, as `ciq tune`, `resume`, `status` and `replay`
// take it. A user who copies the summary's `--config <yaml>` got "Unknown
// command line argument" (diagnose, report) or looked in "." (explain).
#pragma once
#include "engine/commands/Command.h"
#include "engine/config/Config.h"

#include <llvm/Support/FileSystem.h>
#include <optional>
#include <string>

namespace ciq {

// std::nullopt after reporting the error.
inline std::optional<std::string> searchRunPath(const std::string &given, bool givenExplicitly,
                                                const std::string &configPath) {
  if (configPath.empty())
    return given;
  if (givenExplicitly) {
    reportError("both a run directory (" + given + ") and --config " + configPath +
                " name the search; give one of them");
    return std::nullopt;
  }
  std::string error;
  auto cfg = loadConfig(configPath, error);
  if (!cfg) {
    reportError(error);
    return std::nullopt;
  }
  if (!llvm::sys::fs::is_directory(cfg->runDir)) {
    reportError("run_dir " + cfg->runDir + " of " + configPath +
                " does not exist: no search has run with this ciq.yaml yet; start one with `ciq tune --config " +
                configPath + "`");
    return std::nullopt;
  }
  return cfg->runDir;
}

} // namespace ciq
