#include "engine/compile/RuntimeCompiles.h"
#include "engine/config/CMakeCache.h"
#include "common/DeviceCode.h"
#include "common/EnvNames.h"
#include "common/FindExecutable.h"
#include "common/Paths.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <set>
#include <sys/stat.h>

namespace ciq {

bool makeStandinDir(const std::string &dir, std::string &error) {
  // The folder goes first on PATH for builds and benchmarks: anything in it
  // but ciq's two links would run in place of a tool of the same name, so it
  // is made anew (a link or file in its place, an entry ciq never made).
  struct stat st;
  if (lstat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    llvm::sys::fs::remove(dir);
  else
    llvm::sys::fs::remove_directories(dir);
  if (mkdir(dir.c_str(), 0700) != 0) {
    error = "cannot create " + dir + ": " + strerror(errno) +
            (errno == EEXIST ? " (something recreated it at once: is another user writing to its folder?)" : "");
    return false;
  }
  std::string wrapper = wrapperPath();
  for (const char *tool : {"ptxas", "nvcc"}) {
    std::string link = dir + "/" + tool;
    if (auto ec = llvm::sys::fs::create_link(wrapper, link)) {
      error = "cannot link " + link + " to " + wrapper + ": " + ec.message();
      return false;
    }
  }
  return true;
}

std::string realNvccFor(const TuneConfig &cfg) {
  if (const char *v = getenv(env::RealNvcc); v && *v)
    return v;
  if (cfg.build.kind != "cmake")
    return "";
  std::string nvcc = cacheValue(readCMakeCache(cfg.buildDir), "CMAKE_CUDA_COMPILER");
  if (nvcc.empty() || !isCompilerCache(nvcc))
    return "";
  auto behind = findRealCompiler("nvcc", wrapperPath());
  return behind ? *behind : "";
}

std::string realPtxasFor(const TuneConfig &cfg) {
  if (const char *v = getenv(env::RealPtxas); v && *v)
    return v;
  if (cfg.build.kind == "cmake") {
    std::string nvcc = realNvccFor(cfg);
    if (nvcc.empty())
      nvcc = cacheValue(readCMakeCache(cfg.buildDir), "CMAKE_CUDA_COMPILER");
    std::string beside = nvcc.empty() ? "" : (llvm::sys::path::parent_path(nvcc) + "/ptxas").str();
    if (!beside.empty() && llvm::sys::fs::can_execute(beside))
      return beside;
  }
  auto p = findExecutable("ptxas", wrapperPath());
  return p && !isCiqPtxas(*p) ? *p : "";
}

std::map<std::string, std::string> standinEnv(const std::string &standinDir, const std::string &realPtxas) {
  std::map<std::string, std::string> env;
  env["TRITON_PTXAS_PATH"] = standinDir + "/ptxas";
  env["TRITON_PTXAS_BLACKWELL_PATH"] = standinDir + "/ptxas";
  const char *path = getenv("PATH");
  env["PATH"] = standinDir + (path && *path ? ":" + std::string(path) : "");
  if (!realPtxas.empty())
    env[env::RealPtxas] = realPtxas;
  // The real nvcc behind the nvcc stand-in and behind `$CIQ_PTXAS nvcc`
  // (where `nvcc` on PATH is the stand-in): the user's, else the one beside
  // the real ptxas.
  const char *nvcc = getenv(env::RealNvcc);
  std::string beside = realPtxas.empty() ? "" : (llvm::sys::path::parent_path(realPtxas) + "/nvcc").str();
  if (nvcc && *nvcc)
    env[env::RealNvcc] = nvcc;
  else if (!beside.empty() && llvm::sys::fs::can_execute(beside) && !isCiqPtxas(beside))
    env[env::RealNvcc] = beside;
  return env;
}

std::string frameworkCacheDir(const TuneConfig &cfg, const std::string &candidateHash) {
  return cfg.runDir + "/framework-cache/" + candidateHash.substr(0, 16);
}

namespace {

std::string joined(const std::vector<std::string> &v) {
  std::string s;
  for (const auto &x : v)
    s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "none" : s;
}

} // namespace

void applyRuntimeReceipts(const std::vector<Receipt> &receipts, const std::vector<std::string> &expected,
                          bool required, Evaluation &e) {
  std::set<std::string> kernels, hashes;
  int compiles = 0;
  for (const auto &rc : receipts) {
    if (!rc.ptxasRan)
      continue;   // `ptxas --version` and other queries
    ++compiles;
    for (const auto &k : rc.kernels) {
      e.kernels.push_back(k);
      kernels.insert(k.name);
    }
    if (!rc.deviceCodeSha256.empty())
      hashes.insert(rc.deviceCodeSha256);
  }
  e.runtimeKernels.assign(kernels.begin(), kernels.end());
  std::vector<std::string> missing;
  for (const auto &k : expected)
    if (!kernels.count(k))
      missing.push_back(k);
  if (!missing.empty() || (required && compiles == 0)) {
    e.ok = false;
    e.reason = reason::StaleBuild;
    e.message = "the configuration did not reach the run-time compiles: " +
                (compiles == 0 ? std::string("no compile reached ciq-ptxas while the benchmark ran")
                               : "no receipt for kernel(s) " + joined(missing)) +
                " (expected: " + (expected.empty() ? std::string("at least one compile") : joined(expected)) +
                "); does the program keep TRITON_PTXAS_PATH, PATH and TRITON_CACHE_DIR as ciq sets them, "
                "or serve kernels from a cache of its own? (docs/wrapper.md, Triton)";
    return;
  }
  if (hashes.empty())
    return;
  // The device code of the workload: the build's objects and the kernels
  // compiled at run time, each once.
  std::vector<std::string> all(hashes.begin(), hashes.end());
  for (const auto &o : e.objects)
    all.push_back(o.deviceCodeSha256);
  e.deviceCodeSha256 = combineDeviceCodeHashes(all);
}

} // namespace ciq
