// `ciq init`: a starting point for a project (engine/config/InitConfig).
//   ciq init --build "make app" [--run "./app --size 4096"] [-o ciq.yaml]
//     writes a commented ciq.yaml that `ciq tune` runs as written;
//   ciq init --build-dir build --target app [--run "./app --size 4096"]
//     prints the three CMake lines to paste for that target.
#include "engine/commands/Command.h"
#include "engine/config/InitConfig.h"
#include "engine/measure/KernelTraceSetup.h"
#include "common/FindExecutable.h"
#include "common/Subprocess.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

namespace {

using namespace ciq;
namespace cl = llvm::cl;

cl::SubCommand InitCmd("init", "Write a starting ciq.yaml for a build command, or print the CMake lines for a target");
cl::opt<std::string> Build("build", cl::sub(InitCmd), cl::desc("the project's build command, e.g. \"make app\""),
                           cl::value_desc("command"));
cl::opt<std::string> Run("run", cl::sub(InitCmd),
                         cl::desc("the benchmark to time, e.g. \"./app --size 4096\" (none: compile-only)"),
                         cl::value_desc("command"));
cl::opt<std::string> BuildDir("build-dir", cl::sub(InitCmd), cl::desc("a configured CMake build tree"),
                              cl::value_desc("dir"));
cl::opt<std::string> Target("target", cl::sub(InitCmd), cl::desc("the CMake target to tune (with --build-dir)"));
cl::opt<std::string> Output("o", cl::sub(InitCmd), cl::desc("the ciq.yaml to write (default: ./ciq.yaml)"),
                            cl::init("ciq.yaml"), cl::value_desc("file"));
cl::opt<bool> Force("force", cl::sub(InitCmd), cl::desc("replace an existing file"));

// <prefix>/lib/cmake/CompileIQ beside this ciq (<prefix>/bin/ciq).
std::string packageDir() {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable("ciq", &anchor);
  llvm::SmallString<256> p(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(p, "lib", "cmake", "CompileIQ");
  return std::string(p);
}

int writeYaml(InitRequest r) {
  std::string error;
  // A make build: its makefile, searched for nvcc called by its path.
  if (auto words = splitCommand(r.build, "--build", error);
      words && (llvm::sys::path::filename(words->front()) == "make" ||
                llvm::sys::path::filename(words->front()) == "gmake")) {
    r.makefilePath = makefileOf(*words, [](const std::string &f) { return llvm::sys::fs::exists(f); });
    if (auto text = llvm::MemoryBuffer::getFile(r.makefilePath); !r.makefilePath.empty() && text)
      r.makefileText = (*text)->getBuffer().str();
  }
  std::vector<std::string> notes;
  auto yaml = initYaml(r, error, &notes);
  if (!yaml)
    return reportError(error);
  if (llvm::sys::fs::exists(Output.getValue()) && !Force)
    return reportError(Output + " exists; pass --force to replace it, or -o <another file>");
  std::error_code ec;
  llvm::raw_fd_ostream os(Output.getValue(), ec);
  if (ec)
    return reportError(Output + ": cannot be written (" + ec.message() + ")");
  os << *yaml;
  os.close();
  if (os.has_error())
    return reportError(Output + ": cannot be written (" + os.error().message() + ")");
  for (const auto &n : notes)
    reportNote(n);
  llvm::outs() << "wrote " << Output << "; next: ciq tune --config " << shellQuote(Output) << "\n";
  return 0;
}

int printCMake(InitRequest r) {
  std::string error;
  if (!llvm::sys::fs::exists(r.buildDir + "/CMakeCache.txt"))
    return reportError("--build-dir " + r.buildDir + ": no CMakeCache.txt there; configure it first (cmake -S <source> -B " +
                       shellQuote(r.buildDir) + "), or give a build command with --build");
  auto cmake = findExecutable("cmake");
  if (!cmake)
    return reportError("cmake not found on PATH; it lists the targets of " + r.buildDir);
  SubprocessOptions opts;
  opts.timeoutSeconds = 120;
  opts.mergeStderrIntoStdout = true;
  // A dry run (ninja -n, make -n) builds nothing and fails for an unknown target.
  bool exists = false;
  if (!r.target.empty()) {
    auto dry = runSubprocess({*cmake, "--build", r.buildDir, "--target", r.target, "--", "-n"}, opts);
    exists = !dry.spawnFailed && !dry.timedOut && dry.exitCode == 0;
  }
  std::vector<std::string> targets;
  if (!exists) {
    auto help = runSubprocess({*cmake, "--build", r.buildDir, "--target", "help"}, opts);
    targets = parseTargetHelp(help.out);
  }
  r.packageDir = packageDir();
  auto lines = initCMakeLines(r, exists, targets, error);
  if (!lines)
    return reportError(error);
  for (const auto &l : *lines)
    llvm::outs() << l << "\n";
  return 0;
}

int run() {
  InitRequest r;
  r.build = Build;
  r.run = Run;
  r.buildDir = BuildDir;
  r.target = Target;
  std::string why;
  r.kernelTrace = kernelTraceLibrary(why).has_value();
  r.traceWhy = why;
  if (Build.getNumOccurrences() && (BuildDir.getNumOccurrences() || Target.getNumOccurrences()))
    return reportError("--build names a build command; --build-dir and --target name a CMake build tree: give one "
                       "or the other");
  if (Build.getNumOccurrences())
    return writeYaml(r);
  if (BuildDir.getNumOccurrences())
    return printCMake(r);
  if (Target.getNumOccurrences())
    return reportError("--target " + Target + " needs --build-dir <its configured CMake build tree>");
  return reportError("nothing to start from: give --build \"<build command>\" (a Makefile or any build) or "
                     "--build-dir <CMake build tree> --target <target>; --run \"<benchmark>\" for a runtime tune");
}

RegisterCommand reg(InitCmd, run);

} // namespace
