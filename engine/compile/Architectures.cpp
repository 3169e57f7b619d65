#include "engine/compile/Architectures.h"
#include "common/CommandLine.h"
#include "engine/measure/GpuState.h"
#include "engine/config/CMakeCache.h"

#include <llvm/Support/Path.h>

#include <algorithm>
#include <set>

namespace ciq {

MeasuredArchitecture measuredArchitecture(const TuneConfig &cfg) {
  if (!cfg.tuneArchitectures.empty())
    return {cfg.tuneArchitectures.front(), "tune_architectures in " + cfg.path};
  auto gpus = queryGpuState().value("gpus", nlohmann::json::array());
  if (gpus.empty() || !gpus[0].contains("compute_cap") || !gpus[0]["compute_cap"].is_string())
    return {};
  std::string cap = gpus[0]["compute_cap"].get<std::string>();  // "9.0"
  auto dot = cap.find('.');
  if (dot == std::string::npos)
    return {};
  return {"sm_" + cap.substr(0, dot) + cap.substr(dot + 1),
          "the GPU (" + gpus[0].value("name", std::string("GPU 0")) + ", compute capability " + cap + ")"};
}

// The arguments after the compiler (launchers such as ciq-ptxas or ccache first); nullopt for no nvcc line.
static std::optional<wrapper::NvccCommand> nvccLine(const CudaObject &o) {
  size_t i = 0;
  while (i < o.command.size() && llvm::sys::path::filename(o.command[i]) != "nvcc")
    ++i;
  if (i + 1 >= o.command.size())
    return std::nullopt;
  return wrapper::parseNvcc({o.command.begin() + i + 1, o.command.end()}, "", "", "/");
}

std::vector<std::string> sassArchitectures(const std::vector<CudaObject> &objects) {
  std::set<std::string> archs;
  for (const auto &o : objects) {
    if (auto line = nvccLine(o))
      for (const auto &a : line->sassArchs())
        archs.insert(a);
  }
  return {archs.begin(), archs.end()};
}

std::optional<BuildMode> compileBuildMode(const std::vector<CudaObject> &objects, const std::string &buildDir) {
  BuildMode m;
  // -G or -lineinfo on some sources only is that source's mode (issue 48
  // item 5d): the whole build is "with -G" only when every compile is.
  std::vector<std::string> debug, lineinfo;
  size_t lines = 0;
  for (const auto &o : objects)
    if (auto line = nvccLine(o)) {
      ++lines;
      if (line->deviceDebug)
        debug.push_back(o.source);
      if (line->lineinfo)
        lineinfo.push_back(o.source);
    }
  if (lines == 0)
    return std::nullopt;
  m.deviceDebug = debug.size() == lines;
  m.lineinfo = lineinfo.size() == lines;
  if (!m.deviceDebug)
    m.deviceDebugUnits = debug;
  if (!m.lineinfo)
    m.lineinfoUnits = lineinfo;
  auto cache = readCMakeCache(buildDir);
  // A multi-config generator chooses at build time: the type is not known here.
  if (cacheValue(cache, "CMAKE_CONFIGURATION_TYPES").empty())
    m.buildType = cacheValue(cache, "CMAKE_BUILD_TYPE");
  return m;
}

namespace {

// "sm_86" -> 86; "sm_90a" -> 90 with suffix 'a'; -1 for anything else.
int smNumber(const std::string &arch, char &suffix) {
  suffix = 0;
  llvm::StringRef s(arch);
  if (!s.consume_front("sm_"))
    return -1;
  if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) {
    suffix = s.back();
    s = s.drop_back();
  }
  int n = 0;
  if (s.empty() || s.getAsInteger(10, n))
    return -1;
  return n;
}

} // namespace

// SASS for sm_XY runs on every GPU of major X with minor >= Y (CUDA's binary
// compatibility: an sm_86 GPU runs sm_80 SASS); arch-specific SASS (sm_90a)
// only on its own architecture. all-major compiles SASS for each major nvcc
// supports (CUDA 13: sm_75, sm_80, sm_90, sm_100, sm_110, sm_120, and PTX),
// so every GPU of majors 5 to 12 runs SASS, none of it JIT-compiled.
bool coversArchitecture(const std::vector<std::string> &built, const std::string &arch) {
  char gpuSuffix = 0;
  int gpu = smNumber(arch, gpuSuffix);
  for (const auto &a : built) {
    if (a == arch || a == "all" || a == "native")
      return true;
    if (a == "all-major") {
      if (gpu >= 50 && gpu / 10 <= 12)
        return true;
      continue;
    }
    char suffix = 0;
    int sass = smNumber(a, suffix);
    if (sass > 0 && gpu > 0 && !suffix && sass / 10 == gpu / 10 && sass <= gpu)
      return true;
  }
  return false;
}

std::string jitOnlyProblem(const MeasuredArchitecture &m, const std::vector<std::string> &built,
                           const std::string &configPath) {
  if (m.arch.empty() || built.empty() || coversArchitecture(built, m.arch))
    return "";
  std::string list;
  for (const auto &a : built)
    list += (list.empty() ? "" : ", ") + a;
  std::string num = m.arch.substr(3), first = built.front().substr(3);
  return "the build compiles SASS for " + list + " but not for " + m.arch + ", the architecture measured on (" +
         m.source + "): the driver JIT-compiles the PTX at load, so no ptxas control reaches the code that runs and "
         "every candidate would measure the same; build for it (add " + num + " to CUDA_ARCHITECTURES, with "
         "NARROW_ARCHITECTURES to compile only " + m.arch + " while tuning), or measure an architecture the build has "
         "(TUNE_ARCHITECTURES " + first + ", tune_architectures: [sm_" + first + "] in " + configPath +
         ", on a GPU of that architecture)";
}

std::string narrowWithoutTargetProblem(const std::vector<std::string> &built, const std::string &configPath) {
  if (built.size() < 2)
    return "";
  std::string list;
  for (const auto &a : built)
    list += (list.empty() ? "" : ", ") + a;
  std::string last = built.back().substr(3);
  return "narrow_architectures: no GPU here and no tune_architectures, so nothing to narrow to: every tuning "
         "compile would build all " + std::to_string(built.size()) + " of the build's architectures (" + list +
         "); name the one to tune for: ciq_tune(... NARROW_ARCHITECTURES TUNE_ARCHITECTURES " + last +
         ") (tune_architectures: [sm_" + last + "] in " + configPath + " when you wrote it), or leave out "
         "NARROW_ARCHITECTURES";
}

std::vector<std::string> architectureWarnings(const MeasuredArchitecture &m, const std::vector<std::string> &built,
                                              bool narrow, const std::string &configPath) {
  std::vector<std::string> out;
  if (m.arch.empty() || built.empty())
    return out;
  std::string list;
  for (const auto &a : built)
    list += (list.empty() ? "" : ", ") + a;
  bool hasSass = coversArchitecture(built, m.arch);
  if (!hasSass)
    out.push_back("the build compiles SASS for " + list + " but not for " + m.arch + ", the architecture measured on (" +
                  m.source + "): the driver JIT-compiles PTX there, so no tuned ptxas option reaches the code that "
                  "runs; add " + m.arch.substr(3) + " to CUDA_ARCHITECTURES (or -gencode), or tune for an architecture "
                  "the build has with tune_architectures: in " + configPath);
  bool every = std::find(built.begin(), built.end(), "all") != built.end() ||
               std::find(built.begin(), built.end(), "all-major") != built.end();
  size_t others = built.size() - (std::find(built.begin(), built.end(), m.arch) != built.end() ? 1 : 0);
  if (every && !narrow)
    out.push_back("the build compiles SASS for " + list + " (every " +
                  (std::find(built.begin(), built.end(), "all") != built.end() ? "" : "major ") +
                  "architecture nvcc supports), each compile of each candidate for all of them, while the tune "
                  "measures " + m.arch + "; narrow_architectures: true in " + configPath + " compiles only " +
                  m.arch + " while tuning");
  else if (others >= 2 && !narrow)
    out.push_back("the build compiles SASS for " + std::to_string(built.size()) + " architectures (" + list +
                  "), each compile of each candidate for all of them, while the tune measures " + m.arch +
                  "; narrow_architectures: true in " + configPath + " compiles only " + m.arch + " while tuning");
  return out;
}

} // namespace ciq
