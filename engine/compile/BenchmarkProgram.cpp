#include "engine/compile/BenchmarkProgram.h"
#include "engine/compile/BuildArtifacts.h"
#include "common/FindExecutable.h"
#include "common/Paths.h"
#include "common/Subprocess.h"

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
  if (program.compare(0, dir.size(), dir) == 0)
    return true;
  // Named through a symlink (a bin/ of links to the build's outputs, or a
  // build directory reached through one): the file it leads to decides.
  llvm::SmallString<256> real, realDir;
  if (llvm::sys::fs::real_path(program, real) || llvm::sys::fs::real_path(cfg.buildDir, realDir))
    return false;
  return llvm::StringRef(real).startswith((realDir + "/").str());
}

namespace {

// command[0] as the runs name it when the build does not make it: a bare
// name found on PATH stays a name, so the run's own PATH picks the program,
// as a shell would: a benchmark that is a compiler (`nvcc x.cu -o x --run`)
// then reaches ciq's stand-in first on that PATH in every run, the
// finalists' included (by its absolute path it ran the real nvcc, without
// the candidate). Any other program runs by the path it resolved to.
std::string programAsRun(const TuneConfig &cfg, const std::string &resolved) {
  const std::string &name = cfg.benchmark.command.at(0);
  if (name.find('/') == std::string::npos && findExecutable(name))
    return name;
  return resolved;
}

// argv[i] as the executable file it names inside the build directory, or "".
std::string builtProgramArgument(const TuneConfig &cfg, const std::string &arg) {
  if (arg.empty() || arg[0] == '-')
    return "";
  std::string p = absolutePath(arg, benchmarkWorkDir(cfg));
  if (!benchmarkProgramIsBuilt(cfg, p) || llvm::sys::fs::is_directory(p) || !llvm::sys::fs::can_execute(p))
    return "";
  return p;
}

bool copyProgram(const std::string &from, const std::string &dir, std::string &to, std::string &error) {
  llvm::sys::fs::create_directories(dir);
  to = dir + "/" + llvm::sys::path::filename(from).str();
  if (auto ec = llvm::sys::fs::copy_file(from, to)) {
    error = "cannot copy " + from + " to " + to + ": " + ec.message();
    return false;
  }
  llvm::sys::fs::setPermissions(to, llvm::sys::fs::all_read | llvm::sys::fs::all_exe | llvm::sys::fs::owner_write);
  return true;
}

} // namespace

std::optional<std::vector<std::string>> snapshotBenchmark(const TuneConfig &cfg, const std::string &dir,
                                                          std::string &error, bool runtimeSelects) {
  std::vector<std::string> cmd = cfg.benchmark.command;
  auto exe = resolveBenchmarkProgram(cfg, error);
  if (!exe)
    return std::nullopt;
  // No build: every build runs the same files, and the run's environment
  // (BeforeRun) selects the candidate's kernels compiled at run time.
  if (cfg.build.kind == "none") {
    cmd[0] = programAsRun(cfg, *exe);
    return cmd;
  }
  // The programs the build makes are copied: command[0], or an argument
  // (an interpreter's script runs ./app). A program the build does not make
  // (python3, a script, an installed binary) is the same for every build:
  // it runs where it is.
  bool copied = false;
  std::string to;
  std::vector<std::string> built;   // as the build made them: the libraries they load
  if (benchmarkProgramIsBuilt(cfg, *exe)) {
    if (!copyProgram(*exe, dir, to, error))
      return std::nullopt;
    cmd[0] = to;
    copied = true;
    built.push_back(*exe);
  } else
    cmd[0] = programAsRun(cfg, *exe);
  for (size_t i = 1; i < cmd.size(); ++i) {
    std::string p = builtProgramArgument(cfg, cmd[i]);
    if (p.empty())
      continue;
    if (!copyProgram(p, dir, to, error))
      return std::nullopt;
    cmd[i] = to;
    copied = true;
    built.push_back(p);
  }
  // Files the benchmark imports (benchmark.artifacts) and the project's
  // shared libraries the programs load: this build's copies, put in place
  // before each of its runs.
  auto manifest = snapshotArtifacts(cfg, dir, error, built);
  if (!manifest)
    return std::nullopt;
  if (!manifest->empty())
    return withArtifacts(*manifest, cmd);
  // Nothing of this build in the command: every "build" would run the one
  // program the build tree holds now, and the comparison would be void.
  if (!copied && !runtimeSelects) {
    error = cfg.benchmark.commandLoc.str() + ": '" + shellJoin(cfg.benchmark.command) +
            "' names no program the build makes, so ciq cannot run each build's own copy side by side; name "
            "the built program in the command (command[0], or an argument such as [python3, run.py, ./app]), or "
            "the files it imports in benchmark.artifacts (an extension module: ['my_ext*.so'])";
    return std::nullopt;
  }
  return cmd;
}

} // namespace ciq
