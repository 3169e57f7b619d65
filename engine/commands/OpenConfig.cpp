#include "engine/commands/Command.h"
#include "engine/compile/BuildTreeGuard.h"
#include "engine/config/Config.h"

namespace ciq {

std::optional<TuneConfig> openConfig(const std::string &path, std::string &error) {
  auto cfg = loadConfig(path, error);
  if (!cfg)
    return cfg;
  std::string note;
  repairBuildTree(cfg->buildDir, cfg->runDir, note);
  if (!note.empty())
    reportNote(note);
  return cfg;
}

} // namespace ciq
