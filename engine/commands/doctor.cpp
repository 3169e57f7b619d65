// `ciq doctor [--config ciq.yaml]`: one line per environment check with its
// fix (engine/analysis/Doctor). Exit status = number of failed checks.
#include "engine/measure/KernelTraceSetup.h"
#include "engine/commands/Command.h"
#include "engine/compile/BuildDriver.h"
#include "engine/compile/CompileLines.h"
#include "engine/compile/TorchRoute.h"
#include "engine/config/CMakeCache.h"
#include "engine/config/Config.h"
#include "engine/analysis/Doctor.h"
#include "common/FindExecutable.h"
#include "common/Paths.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

namespace {

using namespace ciq;
namespace cl = llvm::cl;

cl::SubCommand DoctorCmd("doctor", "Check the environment before a search (exit status = failed checks)");
cl::opt<std::string> ConfigPath("config", cl::sub(DoctorCmd),
                                cl::desc("ciq.yaml whose build dir and search space to check"));

DoctorCheck checkConfig(const std::optional<TuneConfig> &cfg, const std::string &error) {
  DoctorCheck c{"search space"};
  if (!cfg) {
    c.status = DoctorCheck::Fail;
    c.detail = error;
    c.fix = "fix ciq.yaml at the place named (docs/config.md)";
    return c;
  }
  c.detail = ConfigPath + ": target " + cfg->target + ", " + std::to_string(cfg->space.controls.size()) +
             " controls, " + cfg->space.sizeSummary();
  if (cfg->space.controls.empty()) {
    c.status = DoctorCheck::Fail;
    c.fix = "declare controls under `space:` (ciq spaces list shows curated ones)";
  }
  return c;
}

// A build: command (or none): no CMake target to list commands of; the tune
// runs that command, so it must be found. Its compiles show themselves to
// the tune as they run (a compile without ciq-ptxas is a stale_build there).
DoctorCheck checkBuildCommand(const TuneConfig &cfg) {
  DoctorCheck c{"build command"};
  if (cfg.build.kind == "none" || cfg.build.command.empty()) {
    c.detail = "build: " + cfg.build.kind + " in " + cfg.path + ": ciq builds nothing itself";
    return c;
  }
  const std::string &program = cfg.build.command.front();
  std::string path = program; // a relative path runs from the build directory
  if (program.find('/') != std::string::npos && program.front() != '/')
    path = cfg.buildDir + "/" + program;
  if (program.find('/') == std::string::npos ? !findExecutable(program) : !llvm::sys::fs::can_execute(path)) {
    c.status = DoctorCheck::Fail;
    c.detail = "build.command in " + cfg.path + " runs " + program + ", which is not found";
    c.fix = "install it or give its path in build.command";
    return c;
  }
  std::string line;
  for (const auto &a : cfg.build.command)
    line += (line.empty() ? "" : " ") + a;
  c.detail = "the tune runs `" + line + "` in " + cfg.buildDir;
  return c;
}

// Legacy FindCUDA compiles through generated scripts (cmake -P) that run
// CUDA_NVCC_EXECUTABLE: the tune reaches them only when that is the nvcc
// stand-in, a link named nvcc to ciq-ptxas.
DoctorCheck checkFindCuda(const TuneConfig &cfg) {
  DoctorCheck c{"compile lines"};
  size_t n = findCudaScriptCompiles(cfg.buildDir, cfg.target).size();
  std::string nvcc = cacheValue(readCMakeCache(cfg.buildDir), "CUDA_NVCC_EXECUTABLE");
  if (!nvcc.empty() && isCiqPtxas(findExecutable(nvcc).value_or(nvcc))) {
    c.detail = std::to_string(n) + " CUDA compile(s) of " + cfg.target + " run through legacy FindCUDA with the nvcc "
               "stand-in " + nvcc;
    return c;
  }
  c.status = DoctorCheck::Fail;
  c.detail = cfg.target + " compiles its " + std::to_string(n) + " CUDA source(s) with legacy FindCUDA, whose nvcc (" +
             (nvcc.empty() ? std::string("CUDA_NVCC_EXECUTABLE unset") : nvcc) + ") is not the ciq-ptxas stand-in";
  c.fix = "configure with -DCUDA_NVCC_EXECUTABLE=<a link named nvcc to ciq-ptxas> (docs/cmake.md, \"Legacy FindCUDA\")";
  return c;
}

// The tuned target's compile commands as the build tool runs them: ciq-ptxas
// first on every one (a missing launcher or a cache rule in front means no
// candidate reaches the compiler).
DoctorCheck checkCompileLines(const TuneConfig &cfg) {
  DoctorCheck c{"compile lines"};
  if (cfg.build.kind != "cmake")
    return checkBuildCommand(cfg);
  std::string error;
  auto lines = realCompileLines(cfg, error);
  if (!lines) {
    c.status = DoctorCheck::Warn;
    c.detail = error;
    c.fix = "check the launcher by hand: the target's nvcc commands must start with ciq-ptxas";
    return c;
  }
  if (lines->empty() && !findCudaScriptCompiles(cfg.buildDir, cfg.target).empty())
    return checkFindCuda(cfg);
  if (lines->empty()) {
    c.status = DoctorCheck::Warn;
    c.detail = "no command of target " + cfg.target + " compiles a .cu file directly";
    c.fix = "check `target:` (a target with .cu sources); a legacy FindCUDA target is tuned through "
            "CUDA_NVCC_EXECUTABLE (docs/cmake.md, \"Legacy FindCUDA\")";
    return c;
  }
  for (const auto &l : *lines)
    if (std::string p = compileLineProblem(l); !p.empty()) {
      c.status = DoctorCheck::Fail;
      c.detail = "the compile of " + l.source + " starts with " + l.argv.front();
      c.fix = p;
      return c;
    }
  c.detail = std::to_string(lines->size()) + " CUDA compile(s) of " + cfg.target + " run through ciq-ptxas";
  return c;
}

// PyTorch extensions: which of PyTorch's nvcc routes the workload takes
// (docs/config.md, "PyTorch extensions"), and a PyTorch that can build them.
DoctorCheck checkTorch(const TorchUse &use) {
  DoctorCheck c{"pytorch"};
  std::string version;
  if (std::string p = torchProblem(use, version); !p.empty()) {
    c.status = DoctorCheck::Fail;
    c.detail = p.substr(0, p.rfind("; "));
    c.fix = p.substr(p.rfind("; ") + 2);
    return c;
  }
  std::string route;
  if (use.build)
    route = use.file + " builds through PYTORCH_NVCC (ninja) or CUDA_HOME/bin/nvcc (without ninja), both the nvcc "
            "stand-in during a tune";
  if (use.jit)
    route += (route.empty() ? "" : "; ") + std::string("the benchmark's load()/load_inline() compiles at run time "
             "through PYTORCH_NVCC, each candidate in its own TORCH_EXTENSIONS_DIR");
  c.detail = "PyTorch " + version + ": " + route;
  if (use.build && !use.cudaSources) {
    c.status = DoctorCheck::Fail;
    c.detail = use.file + " names no .cu source: nothing of the extension compiles through nvcc";
    c.fix = "tune an extension with CUDA sources (CUDAExtension with .cu files)";
  }
  return c;
}

// ciq's cache folder: made, this user's own (common/OwnedDir.h), writable.
DoctorCheck checkCacheDir() {
  std::string error;
  if (auto dir = cacheDir(error))
    return checkWritableDir("cache dir", *dir);
  DoctorCheck c{"cache dir"};
  c.status = DoctorCheck::Fail;
  c.detail = error.substr(0, error.find("; "));
  c.fix = "set XDG_CACHE_HOME to a folder of your own";
  return c;
}

// Kernel times (benchmark.metric kernel_time): ciq's injection library, or
// why this build has none; a failure only where ciq.yaml asks for them.
DoctorCheck checkKernelTimes(const std::optional<TuneConfig> &cfg) {
  DoctorCheck c{"kernel times"};
  std::string why;
  if (auto lib = kernelTraceLibrary(why)) {
    c.detail = *lib + " (CUPTI is opened when a traced run starts: CIQ_CUPTI_LIBRARY, beside it, or the build's)";
    return c;
  }
  bool wanted = cfg && cfg->benchmark.enabled && cfg->benchmark.metric.kind == "kernel_time";
  c.status = wanted ? DoctorCheck::Fail : DoctorCheck::Warn;
  c.detail = why;
  c.fix = "kernel_time_ms needs it: docs/troubleshooting.md \"no_kernel_times\"";
  return c;
}

int run() {
  std::vector<DoctorCheck> checks = {checkNvcc(), checkPtxas(), checkApplyControls()};
  std::optional<TuneConfig> cfg;
  std::string error;
  if (!ConfigPath.empty())
    cfg = openConfig(ConfigPath, error);
  // Doctor's checks follow the workload's kind: a `build:` command or a
  // program compiling at run time has no CMake build tree to look at.
  std::string noCmake = cfg && cfg->build.kind != "cmake" ? "build: " + cfg->build.kind + " in " + cfg->path : "";
  checks.push_back(checkCmake(cfg ? cfg->buildDir : "", noCmake));
  checks.push_back(checkGpu(cfg && cfg->benchmark.enabled));
  checks.push_back(checkCacheDir());
  checks.push_back(checkKernelTimes(cfg));
  if (!ConfigPath.empty())
    checks.push_back(checkConfig(cfg, error));
  if (cfg)
    checks.push_back(checkCompileLines(*cfg));
  if (cfg && detectTorchUse(*cfg).any())
    checks.push_back(checkTorch(detectTorchUse(*cfg)));
  return printChecks(checks, llvm::outs());
}

RegisterCommand reg(DoctorCmd, run);

} // namespace
