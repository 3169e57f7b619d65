// Drives the user's own CMake build: finds the CUDA objects of the tuned
// target(s), cleans only those, and rebuilds with `cmake --build`.
#pragma once
#include "Config.h"
#include "Subprocess.h"

#include <map>
#include <string>
#include <vector>

namespace ciq {

struct CudaObject {
  std::string source;   // absolute .cu path
  std::string object;   // absolute object path the compile writes
  std::string target;   // CMake target it belongs to
  std::vector<std::string> command;  // the compile command as compile_commands.json has it ([] for FindCUDA)
};

class BuildDriver {
public:
  explicit BuildDriver(const TuneConfig &cfg) : cfg_(cfg) {}

  // Reads compile_commands.json of the build tree (run a configure first if
  // it is missing); false with a one-line error when the target has no CUDA
  // translation unit or the tree was not configured for ciq.
  bool discover(std::string &error);
  const std::vector<CudaObject> &objects() const { return objects_; }

  // Kills the build a killed engine left running in this run directory.
  void endOrphanedBuild();
  // Deletes the target's CUDA objects so the next build recompiles exactly them.
  void clean();
  // `cmake --build <dir> --target <target> [--config C] -j N`, output to logPath.
  SubprocessResult build(const std::map<std::string, std::string> &env, const std::string &logPath);
  // A search that runs nothing it builds (compile-only objectives) asks Ninja
  // for the tuned objects alone: no link, no other target's objects.
  void setObjectsOnly(bool on) { objectsOnly_ = on; }
  // The build command, for replay lines and logs.
  std::vector<std::string> buildCommand() const;
  // Compile process groups the last build left running (ended by build()).
  int lastReaped() const { return lastReaped_; }

private:
  std::vector<std::string> objectTargets() const;
  bool objectsOnly_ = false;
  int lastReaped_ = 0;
  const TuneConfig &cfg_;
  std::vector<CudaObject> objects_;
};

} // namespace ciq
