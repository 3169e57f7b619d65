#include "engine/BenchmarkProgram.h"
#include "common/FindExecutable.h"
#include "common/Paths.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace ciq {

std::string benchmarkWorkDir(const TuneConfig &cfg) {
  return cfg.benchmark.workingDir.empty() ? cfg.buildDir : cfg.benchmark.workingDir;
}

static std::string candidatePath(const TuneConfig &cfg) {
  const std::string &name = cfg.benchmark.command.at(0);
  if (llvm::sys::path::is_absolute(name))
    return name;
  std::string inWorkDir = absolutePath(name, benchmarkWorkDir(cfg));
  if (name.find('/') != std::string::npos)
    return inWorkDir;
  // A bare name runs from PATH (as the shell would), unless only the working
  // directory has it (a build output named without ./).
  if (auto p = findExecutable(name))
    return absolutePath(*p, benchmarkWorkDir(cfg));
  return inWorkDir;
}

std::optional<std::string> resolveBenchmarkProgram(const TuneConfig &cfg, std::string &error) {
  std::string p = candidatePath(cfg);
  if (llvm::sys::fs::can_execute(p) && !llvm::sys::fs::is_directory(p))
    return p;
  const auto &loc = cfg.benchmark.commandLoc;
  const std::string &name = cfg.benchmark.command.at(0);
  bool bare = name.find('/') == std::string::npos;
  error = loc.str() + ": '" + name + "' " +
          (llvm::sys::fs::exists(p) ? "is not an executable file (" + p + ")"
                                    : bare ? "is neither a program on PATH nor a file in " + benchmarkWorkDir(cfg)
                                           : "does not exist (" + p + ")") +
          "; give the program to run: a build output (relative to the build directory), a script, or an "
          "interpreter such as python3 followed by its script";
  return std::nullopt;
}

bool benchmarkProgramIsBuilt(const TuneConfig &cfg, const std::string &program) {
  if (cfg.build.kind == "none")
    return false;
  std::string dir = cfg.buildDir + "/";
  return program.compare(0, dir.size(), dir) == 0;
}

std::optional<std::vector<std::string>> snapshotBenchmark(const TuneConfig &cfg, const std::string &dir,
                                                          std::string &error) {
  std::vector<std::string> cmd = cfg.benchmark.command;
  auto exe = resolveBenchmarkProgram(cfg, error);
  if (!exe)
    return std::nullopt;
  // A program the build does not make (python3, a script, an installed
  // binary) is the same for every build: it runs where it is.
  if (!benchmarkProgramIsBuilt(cfg, *exe)) {
    cmd[0] = *exe;
    return cmd;
  }
  llvm::sys::fs::create_directories(dir);
  std::string copy = dir + "/" + llvm::sys::path::filename(*exe).str();
  if (auto ec = llvm::sys::fs::copy_file(*exe, copy)) {
    error = "cannot copy " + *exe + " to " + copy + ": " + ec.message();
    return std::nullopt;
  }
  llvm::sys::fs::setPermissions(copy, llvm::sys::fs::all_read | llvm::sys::fs::all_exe | llvm::sys::fs::owner_write);
  cmd[0] = copy;
  return cmd;
}

} // namespace ciq
