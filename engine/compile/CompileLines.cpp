#include "engine/compile/CompileLines.h"
#include "engine/config/CMakeCache.h"
#include "common/FindExecutable.h"
#include "common/Subprocess.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/StringSaver.h>

namespace ciq {
namespace {

std::vector<std::string> splitShell(llvm::StringRef line) {
  llvm::BumpPtrAllocator alloc;
  llvm::StringSaver saver(alloc);
  llvm::SmallVector<const char *, 64> toks;
  llvm::cl::TokenizeGNUCommandLine(line, saver, toks);
  return std::vector<std::string>(toks.begin(), toks.end());
}

// nvcc's -x cu (CMake writes it for a source with LANGUAGE CUDA, whatever
// its name): the input after -c is CUDA, not C++.
bool languageIsCuda(const std::vector<std::string> &argv) {
  for (size_t i = 0; i < argv.size(); ++i)
    if (argv[i] == "-xcu" || argv[i] == "--x=cu" || argv[i] == "-x=cu" ||
        ((argv[i] == "-x" || argv[i] == "--x") && i + 1 < argv.size() && argv[i + 1] == "cu"))
      return true;
  return false;
}

// The tokens of the last `&&`-separated part (Make prefixes `cd dir &&`),
// with a `.cu` argument, or nvcc's -x cu and -c <source>: a CUDA compile.
std::optional<CompileLine> cudaCompile(llvm::StringRef line) {
  auto amp = line.rfind("&& ");
  if (amp != llvm::StringRef::npos)
    line = line.substr(amp + 3);
  CompileLine c;
  c.argv = splitShell(line.trim());
  for (const auto &a : c.argv)
    if (llvm::StringRef(a).endswith(".cu") && a.find('=') == std::string::npos)
      c.source = a;
  if (c.source.empty() && languageIsCuda(c.argv))
    for (size_t i = 0; i + 1 < c.argv.size(); ++i)
      if (c.argv[i] == "-c")
        c.source = c.argv[i + 1];
  if (c.source.empty() || c.argv.empty())
    return std::nullopt;
  return c;
}

std::string baseName(const std::string &p) { return llvm::sys::path::filename(p).str(); }

} // namespace

std::optional<std::vector<CompileLine>> realCompileLines(const TuneConfig &cfg, std::string &error) {
  auto cache = readCMakeCache(cfg.buildDir);
  std::string generator = cacheValue(cache, "CMAKE_GENERATOR");
  std::vector<std::string> targets = {cfg.target};
  targets.insert(targets.end(), cfg.tuneTargets.begin(), cfg.tuneTargets.end());
  std::vector<CompileLine> out;
  for (const auto &t : targets) {
    std::vector<std::string> cmd;
    if (llvm::StringRef(generator).startswith("Ninja"))
      cmd = {cacheValue(cache, "CMAKE_MAKE_PROGRAM", "ninja"), "-C", cfg.buildDir, "-t", "commands", t};
    else if (llvm::StringRef(generator).endswith("Makefiles"))
      // -n: print, never run; -B: every command, not only what is out of date.
      cmd = {cacheValue(cache, "CMAKE_MAKE_PROGRAM", "make"), "-C", cfg.buildDir, "-n", "-B", t};
    else {
      error = "generator '" + generator + "' of " + cfg.buildDir + ": only Ninja and Makefile generators can be read";
      return std::nullopt;
    }
    SubprocessOptions o;
    o.timeoutSeconds = 120;
    auto r = runSubprocess(cmd, o);
    if (r.exitCode != 0) {
      error = "`" + cmd[0] + "` could not list the commands of " + t + ": " +
              llvm::StringRef(r.err).trim().split('\n').first.str();
      return std::nullopt;
    }
    llvm::SmallVector<llvm::StringRef, 64> lines;
    llvm::StringRef(r.out).split(lines, '\n');
    for (auto l : lines)
      if (auto c = cudaCompile(l); c && c->argv[0].find("cmake") == std::string::npos)
        out.push_back(*c);
  }
  return out;
}

std::string compileLineProblem(const CompileLine &line) {
  const std::string &first = line.argv.front();
  if (baseName(first) == "ciq-ptxas")
    return "";
  // FindCUDA's CUDA_NVCC_EXECUTABLE (or a PATH entry) may name the nvcc stand-in.
  std::string real = findExecutable(first).value_or(first);
  if (isCiqPtxas(real))
    return "";
  bool ciqLater = false;
  for (const auto &a : line.argv)
    ciqLater |= baseName(a) == "ciq-ptxas";
  if (ciqLater)
    return baseName(first) + " runs before ciq-ptxas (a RULE_LAUNCH_COMPILE launcher, or a launcher put first): "
           "its cache answers with objects compiled without the candidate; remove the rule launcher or put it "
           "after ciq-ptxas in CUDA_COMPILER_LAUNCHER (ciq_tune() chains ccache and sccache itself)";
  return "ciq-ptxas does not run this compile, so every candidate would be a stale_build; call ciq_tune() for the "
         "target, or configure with -DCMAKE_CUDA_COMPILER_LAUNCHER=ciq-ptxas (FindCUDA targets: "
         "-DCUDA_NVCC_EXECUTABLE=<dir of a link named nvcc to ciq-ptxas>/nvcc), see docs/cmake.md";
}

} // namespace ciq
