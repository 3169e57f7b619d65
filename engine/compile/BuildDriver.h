// Drives the user's own build of one candidate. Two kinds behind one small
// interface: a CMake target (finds its CUDA objects in compile_commands.json,
// cleans only those, rebuilds with `cmake --build`), and a build command of
// the user's (`build: {command: ...}` in ciq.yaml: make, a script), which may
// also be empty (`build: none`: the benchmark compiles at run time).
#pragma once
#include "engine/config/Config.h"
#include "common/Subprocess.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ciq {

struct CudaObject {
  std::string source;   // absolute .cu (or .ptx) path
  std::string object;   // absolute object path the compile writes
  std::string target;   // CMake target it belongs to ("" for a command build)
  std::vector<std::string> command;  // the compile command as compile_commands.json has it ([] for FindCUDA, a command build)
  bool findCuda = false;             // found through legacy FindCUDA's generated scripts
};

// Legacy FindCUDA's compiles of `target`, found through the scripts it
// generates in the build tree (CMakeFiles/<target>.dir/.../<target>_generated_*.cmake).
std::vector<CudaObject> findCudaScriptCompiles(const std::string &buildDir, const std::string &target);

// The program a compile line runs: its first word past launchers
// (ciq-ptxas and its options, a compiler cache, `env VAR=value`).
std::string compilerOfCommand(const std::vector<std::string> &args);
// Is this compile line a CUDA compile? Told by the compiler that runs (nvcc,
// the build tree's CMAKE_CUDA_COMPILER `cudaCompiler`, a compiler given
// `-x cu`/`-x cuda`) or a .cu source, never by the text of the line: a
// path holding "nvcc" is no CUDA compile.
bool isCudaCompileLine(const std::vector<std::string> &args, const std::string &file, const std::string &cudaCompiler);

class BuildDriver {
public:
  explicit BuildDriver(const TuneConfig &cfg) : cfg_(cfg) {}
  virtual ~BuildDriver() = default;

  // Finds what every build must compile; false with a one-line error when
  // the build cannot be tuned as configured.
  virtual bool discover(std::string &error) = 0;
  // The CUDA objects each candidate build must compile (one receipt each).
  const std::vector<CudaObject> &objects() const { return objects_; }
  // A command build does not know its objects before it ran: it learns them
  // from the baseline's receipts (and from the journal on a resume).
  virtual bool learnsObjects() const { return false; }
  void learnObjects(std::vector<CudaObject> objects) { objects_ = std::move(objects); }

  // Kills the build a killed engine left running in this run directory.
  void endOrphanedBuild();
  // Makes the next build recompile every CUDA object of the workload.
  virtual void clean() = 0;
  // Runs the build with env added, output to logPath.
  virtual SubprocessResult build(const std::map<std::string, std::string> &env, const std::string &logPath) = 0;
  // The build command, for replay lines and logs (empty: nothing to build).
  virtual std::vector<std::string> buildCommand() const = 0;
  // A search that runs nothing it builds (compile-only objectives) builds
  // the tuned objects alone where it can (a CMake target under Ninja: no
  // link, no other target's objects); other builds ignore it.
  virtual void setObjectsOnly(bool on) { (void)on; }
  // May each tuned object be dated 1970 as its receipt arrives, with the
  // build still running? Only where the build tool then still runs every
  // step that consumes it (CandidateBuilder::start says why it matters).
  virtual bool datesObjectsOnReceipt() const { return false; }
  // Compile process groups the last build left running (ended by build()).
  int lastReaped() const { return lastReaped_; }

protected:
  // Runs one build step with the build timeout, its process group written
  // down while it runs (see endOrphanedBuild).
  SubprocessResult runStep(const std::vector<std::string> &cmd, const std::string &cwd,
                           const std::map<std::string, std::string> &env, const std::string &logPath);

  int lastReaped_ = 0;
  const TuneConfig &cfg_;
  std::vector<CudaObject> objects_;
};

// A CMake target of a configured build tree.
class CMakeBuild : public BuildDriver {
public:
  using BuildDriver::BuildDriver;
  // Reads compile_commands.json of the build tree (run a configure first if
  // it is missing); false when the target has no CUDA translation unit.
  bool discover(std::string &error) override;
  void clean() override;
  SubprocessResult build(const std::map<std::string, std::string> &env, const std::string &logPath) override;
  void setObjectsOnly(bool on) override { objectsOnly_ = on; }
  // Ninja plans every step before it runs one; make re-reads a remade
  // object's date, and clean() dates what make remakes from the objects
  // older still (engine/compile/MakeRules.h).
  bool datesObjectsOnReceipt() const override { return datesOnReceipt_; }
  std::vector<std::string> buildCommand() const override;

private:
  std::vector<std::string> objectTargets() const;
  std::vector<std::string> makeObjectsCommand(unsigned jobs) const;
  void findGenerator(const std::vector<std::string> &targets);
  bool objectsOnly_ = false;
  bool datesOnReceipt_ = false; // Ninja, or make with every tuned object's consumers found
  bool makeTree_ = false;        // "Unix Makefiles"
  std::string makeProgram_ = "make";
  std::vector<std::string> makeDependants_; // Makefile trees: linked outputs of the objects
};

// build.command of ciq.yaml (build.clean before it), or nothing (build: none).
class CommandBuild : public BuildDriver {
public:
  using BuildDriver::BuildDriver;
  bool discover(std::string &error) override;
  bool learnsObjects() const override { return cfg_.build.kind == "command"; }
  void clean() override;
  SubprocessResult build(const std::map<std::string, std::string> &env, const std::string &logPath) override;
  std::vector<std::string> buildCommand() const override { return cfg_.build.command; }

private:
  std::string cleanLog_;
};

// The driver for cfg.build.kind.
std::unique_ptr<BuildDriver> makeBuildDriver(const TuneConfig &cfg);

} // namespace ciq
