#include "engine/commands/Command.h"
#include "engine/compile/BuildNumerics.h"
#include "engine/compile/BuildTreeGuard.h"
#include "engine/config/Config.h"
#include "common/OwnedDir.h"

namespace ciq {

std::optional<TuneConfig> openConfig(const std::string &path, std::string &error) {
  auto cfg = loadConfig(path, error);
  if (!cfg)
    return cfg;
  // Before anything in it is read, ended or run (its process records, its
  // stand-ins): another user's folder would have us kill or run theirs.
  if (!checkRunDir(cfg->runDir, /*create=*/false, error))
    return std::nullopt;
  std::string note;
  repairBuildTree(cfg->buildDir, cfg->runDir, note);
  if (!note.empty())
    reportNote(note);
  // What the build's own compile lines fix of nvcc's numerics options; a
  // build tree whose lines cannot be read (generator, not configured yet)
  // keeps the space as written, and `ciq doctor` says why.
  if (numericsMatter(*cfg)) {
    std::string linesError;
    if (auto lines = realCompileLines(*cfg, linesError)) {
      cfg->buildNumericsNote = applyBuildNumerics(*cfg, readBuildNumerics(*lines));
      if (std::string err; !cfg->space.compileConstraints(err)) {
        error = cfg->path + ": " + err;
        return std::nullopt;
      }
    }
  }
  return cfg;
}

} // namespace ciq
