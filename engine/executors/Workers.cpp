#include "engine/executors/Workers.h"
#include "engine/config/CMakeCache.h"
#include "common/EnvNames.h"
#include "common/Subprocess.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <thread>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>

namespace ciq {

namespace {

// CUDA_VISIBLE_DEVICES' entries; nullopt when it is not set.
std::optional<std::vector<std::string>> visibleDeviceList() {
  const char *v = getenv("CUDA_VISIBLE_DEVICES");
  if (!v)
    return std::nullopt;
  std::vector<std::string> list;
  llvm::StringRef s(v);
  if (s.empty() || s == "-1" || s == "none")
    return list;
  llvm::SmallVector<llvm::StringRef, 8> parts;
  s.split(parts, ',');
  for (auto p : parts)
    list.push_back(p.trim().str());
  return list;
}

} // namespace

int visibleGpuCount() {
  if (auto list = visibleDeviceList())
    return (int)list->size();
  auto smi = findExecutable("nvidia-smi");
  if (!smi)
    return 0;
  auto r = runSubprocess({*smi, "-L"});
  if (r.exitCode != 0)
    return 0;
  return (int)std::count(r.out.begin(), r.out.end(), '\n');
}

std::vector<std::string> workerGpus(int n) {
  std::vector<std::string> gpus;
  if (auto list = visibleDeviceList())
    gpus = *list;
  else
    for (int k = 0, count = visibleGpuCount(); k < count; ++k)
      gpus.push_back(std::to_string(k));
  std::vector<std::string> out;
  for (int k = 0; k < n; ++k)
    out.push_back(gpus.empty() ? std::to_string(k) : gpus[k % gpus.size()]);
  return out;
}

int workerCount(const TuneConfig &cfg) {
  // Twin build trees are CMake configures: a build command or a program that
  // compiles at run time is evaluated by one worker.
  if (!cfg.benchmark.enabled || cfg.build.kind != "cmake")
    return 1;
  if (const char *v = getenv(env::Workers); v && atoi(v) > 0)
    return atoi(v);
  if (cfg.workers > 0)
    return cfg.workers;
  int gpus = std::max(1, visibleGpuCount());
  if (cfg.overlap == "off")
    return gpus;
  // A candidate compiles in 1-16 s and is measured in a few: with a quarter
  // of the cores (each build still uses `jobs`) the GPU has a new binary
  // waiting whenever it ends one; a 2-core host keeps one worker.
  return gpus * std::clamp((int)std::thread::hardware_concurrency() / 4, 1, 4);
}

namespace {

// The user's settings from CMakeCache.txt, without CMake's own INTERNAL and
// STATIC bookkeeping, to configure a twin build tree.
std::vector<std::string> cacheArguments(const std::map<std::string, CacheEntry> &cache) {
  std::vector<std::string> args;
  for (const auto &[name, e] : cache)
    if (e.type != "INTERNAL" && e.type != "STATIC" && name != "CMAKE_COMMAND" && name.rfind("CMAKE_CACHE", 0) != 0)
      args.push_back("-D" + name + ":" + e.type + "=" + e.value);
  return args;
}

std::string rebase(const std::string &s, const std::string &from, const std::string &to) {
  return s.rfind(from, 0) == 0 ? to + s.substr(from.size()) : s;
}

} // namespace

bool prepareWorkerConfig(const TuneConfig &main, int k, TuneConfig &out, std::string &error) {
  return prepareWorkspaceConfig(main, main.runDir + "/worker-" + std::to_string(k), "worker " + std::to_string(k), out,
                                error);
}

bool prepareWorkspaceConfig(const TuneConfig &main, const std::string &dir, const std::string &label, TuneConfig &out,
                            std::string &error) {
  out = main;
  out.runDir = dir;
  out.buildDir = out.runDir + "/build";
  if (!llvm::sys::fs::exists(out.buildDir + "/CMakeCache.txt")) {
    auto cache = readCMakeCache(main.buildDir);
    std::string source = cacheValue(cache, "CMAKE_HOME_DIRECTORY"), generator = cacheValue(cache, "CMAKE_GENERATOR");
    auto args = cacheArguments(cache);
    std::vector<std::string> cmd = {"cmake", "-S", source, "-B", out.buildDir};
    if (!generator.empty()) {
      cmd.push_back("-G");
      cmd.push_back(generator);
    }
    cmd.insert(cmd.end(), args.begin(), args.end());
    SubprocessOptions o;
    o.mergeStderrIntoStdout = true;
    llvm::sys::fs::create_directories(out.runDir);
    o.stdoutFile = out.runDir + "/configure.log";
    auto r = runSubprocess(cmd, o);
    if (r.exitCode != 0) {
      error = label + ": configuring its build tree failed; log: " + o.stdoutFile;
      return false;
    }
  }
  for (auto &a : out.benchmark.command)
    a = rebase(a, main.buildDir, out.buildDir);
  for (auto &a : out.benchmark.correctness)
    a = rebase(a, main.buildDir, out.buildDir);
  out.benchmark.workingDir = rebase(main.benchmark.workingDir, main.buildDir, out.buildDir);
  return true;
}

} // namespace ciq
