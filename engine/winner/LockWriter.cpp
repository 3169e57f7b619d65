#include "engine/winner/LockWriter.h"
#include "common/FolderLock.h"
#include "engine/winner/LockUnits.h"
#include "engine/config/CMakeCache.h"
#include "common/CompilerVersion.h"
#include "common/LockSections.h"
#include "engine/config/Metrics.h"
#include "common/Subprocess.h"
#include "engine/Version.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <algorithm>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>

namespace ciq {

// Each case's figures, baseline and winner: median, runs, noise, ratio, p.
static nlohmann::json casesToJson(const Evaluation &base, const Evaluation &win) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto &w : win.cases) {
    nlohmann::json c = {{"name", w.name}, {"winner_median", w.median}, {"winner_runs", w.runs.size()},
                        {"winner_noise_percent", w.noisePercent}, {"ratio", w.ratio},
                        {"p_value", w.pValue >= 0 ? nlohmann::json(w.pValue) : nlohmann::json()}};
    for (const auto &b : base.cases)
      if (b.name == w.name) {
        c["baseline_median"] = b.median;
        c["baseline_runs"] = b.runs.size();
        c["baseline_noise_percent"] = b.noisePercent;
      }
    cases.push_back(c);
  }
  return cases;
}


std::string cudaCompilerOf(const std::string &buildDir) {
  std::string nvcc = cacheValue(readCMakeCache(buildDir), "CMAKE_CUDA_COMPILER");
  if (nvcc.empty())
    nvcc = "nvcc";
  // -DCMAKE_CUDA_COMPILER=nvcc (a bare name, as many READMEs say): the cache
  // may keep the name as given; the build runs the one on PATH.
  if (nvcc.find('/') == std::string::npos)
    return findExecutable(nvcc).value_or(nvcc);
  return nvcc;
}

// ciq_apply_lock() of a target without a lock makes the configure depend on
// <build>/ciq/lock.stamp (cmake-module/CompileIQ.cmake); touching it makes
// the next build reconfigure and apply the new lock, whether the tune ran
// through the ciq-tune-<target> target (which touches it too) or by hand.
static void touchLockStamp(const std::string &buildDir) {
  std::string stamp = buildDir + "/ciq/lock.stamp";
  if (llvm::sys::fs::exists(stamp))
    ::utimensat(AT_FDCWD, stamp.c_str(), nullptr, 0);
}

std::optional<Lockfile> makeLock(const TuneConfig &cfg, const Evaluation &base, const Evaluation &win,
                                 const std::string &lockPath, std::string &error, const nlohmann::json &validation) {
  Lockfile l;
  l.engineVersion = CIQ_VERSION;
  l.createdAt = nowIso8601();
  l.target = cfg.target;
  l.nvccPath = cudaCompilerOf(cfg.buildDir);
  std::string err;
  l.nvccVersion = compilerVersion(l.nvccPath, err).value_or("");
  std::string ptxas = (llvm::sys::path::parent_path(l.nvccPath) + "/ptxas").str();
  l.ptxasPath = llvm::sys::fs::exists(ptxas) ? ptxas : findExecutable("ptxas").value_or("ptxas");
  l.ptxasVersion = compilerVersion(l.ptxasPath, err).value_or("");
  std::set<std::string> archs;
  // A translation unit of device functions only (-rdc=true) reports its
  // functions with no architecture: it contributes none (issue 41 item 11).
  for (const auto &k : win.kernels)
    if (!k.arch.empty())
      archs.insert(k.arch);
  // Narrowed: the winner was measured on one architecture and applies to the
  // build's whole list (docs/config.md, "Architectures"); the device-code
  // SHA-256 covers that one architecture's SASS.
  if (!cfg.narrowTo.empty()) {
    archs.insert(cfg.buildArchitectures.begin(), cfg.buildArchitectures.end());
    l.extra["device_code_architecture"] = cfg.narrowTo;
  }
  if (!cfg.measuredArchitecture.empty())
    l.extra["tuned_architecture"] = cfg.measuredArchitecture;
  l.architectures.assign(archs.begin(), archs.end());
  // The section: the architecture measured (the GPU's, or tune_architectures'
  // for a compile-only tune); with neither, the winner was measured on every
  // architecture the build compiled, together, and gets a section for each.
  l.section = cfg.lockEveryArchitecture ? "" : cfg.measuredArchitecture;
  if (cfg.lockEveryArchitecture)   // the old rule, asked for: every architecture the build compiles
    l.architectures.insert(l.architectures.end(), cfg.buildArchitectures.begin(), cfg.buildArchitectures.end());
  std::sort(l.architectures.begin(), l.architectures.end());
  l.architectures.erase(std::unique(l.architectures.begin(), l.architectures.end()), l.architectures.end());
  if (!l.section.empty() && !isArchitectureName(l.section)) {
    error = "the measured architecture '" + l.section + "' (" + cfg.path +
            ": tune_architectures) is not an architecture name (sm_80, sm_90, ...); the lock needs one per section";
    return std::nullopt;
  }
  bool onGpu = std::any_of(cfg.objectives.begin(), cfg.objectives.end(),
                           [](const auto &o) { return !isCompileMetric(o.metric); });
  l.measured = onGpu ? "gpu" : "compile-only";
  // The configuration tuned in: ciq_apply_lock() and ciq-ptxas --lock leave
  // the lock out of another one (a Release winner breaks a -G build).
  if (cfg.buildMode) {
    BuildMode mode = *cfg.buildMode;
    std::string dir = llvm::sys::path::parent_path(lockPath).str();
    for (auto *units : {&mode.deviceDebugUnits, &mode.lineinfoUnits})
      for (auto &u : *units)
        u = lockRelative(u, dir);
    l.extra["build"] = buildModeToJson(mode);
  }
  nlohmann::json sources = nlohmann::json::array();
  for (const auto &s : cfg.space.sources)
    sources.push_back({{"name", s.name}, {"provider", s.provider}, {"tag", s.tag}, {"sha256", s.sha256}});
  l.searchSpace = {{"identity", cfg.space.identity()}, {"sources", sources}, {"controls", cfg.space.controls.size()}};
  l.candidateId = win.candidateId;
  l.candidateHash = win.candidateHash;
  l.controls = win.rendered.controls;
  l.ptxasOptions = win.rendered.ptxas;
  l.nvccOptions = win.rendered.nvcc;
  l.defines = win.rendered.defines;
  l.kernelDirectives = win.rendered.kernels;
  l.unitOptions = win.rendered.units;
  // ACFs travel with the lock, named by their SHA-256.
  std::string lockDir = llvm::sys::path::parent_path(lockPath).str();
  if (auto units = lockUnitsOf(win, lockDir); !units.empty())
    l.extra["device_code_units"] = units;
  l.kernelUnits = kernelUnitsOf(win, lockDir);
  for (const auto &a : win.rendered.acfs) {
    std::string rel = "ciq-acf/" + a.sha256 + ".acf";
    llvm::sys::fs::create_directories(lockDir + "/ciq-acf");
    if (llvm::sys::fs::copy_file(a.path, lockDir + "/" + rel)) {
      error = "cannot copy ACF " + a.path + " to " + lockDir + "/" + rel;
      return std::nullopt;
    }
    l.acfs.push_back({a.stage, rel, a.sha256});
  }
  l.deviceCodeSha256 = win.deviceCodeSha256;
  // The device code covers the CUDA objects of these targets too.
  if (!cfg.tuneTargets.empty())
    l.extra["tune_targets"] = cfg.tuneTargets;
  const auto &o = cfg.objectives.front();
  nlohmann::json score = {{"objective", o.metric}, {"unit", o.unit}, {"direction", o.direction}};
  if (base.scores.count(o.metric))
    score["baseline"] = base.scores.at(o.metric);
  if (win.scores.count(o.metric))
    score["winner"] = win.scores.at(o.metric);
  if (base.scores.count(o.metric) && win.scores.count(o.metric) && win.scores.at(o.metric) != 0 &&
      o.metric == "time_ms")
    score["speedup"] = base.scores.at(o.metric) / win.scores.at(o.metric);
  if (win.cvPercent >= 0)
    score["cv_percent"] = win.cvPercent;
  nlohmann::json all = nlohmann::json::object();
  for (const auto &ob : cfg.objectives)
    all[ob.metric] = {{"baseline", base.scores.count(ob.metric) ? nlohmann::json(base.scores.at(ob.metric)) : nlohmann::json()},
                      {"winner", win.scores.count(ob.metric) ? nlohmann::json(win.scores.at(ob.metric)) : nlohmann::json()},
                      {"unit", ob.unit}};
  score["objectives"] = all;
  if (!win.cases.empty()) { // benchmark.cases: the score is the geometric mean of these ratios
    score["aggregate"] = "geometric mean of the per-case ratios to the baseline";
    score["cases"] = casesToJson(base, win);
  }
  for (auto it = validation.begin(); it != validation.end(); ++it)
    if (it.key() == "device_code_sections")   // the rehearsed build's, a field of its own
      l.extra[it.key()] = it.value();
    else
      score[it.key()] = it.value();
  score["baseline_device_code_sha256"] = base.deviceCodeSha256;
  l.score = score;
  return l;
}

// Tunes add, never discard: the sections of other architectures stay. The
// read, the merge and the write hold the lock's folder (FolderLock.h), so
// two tunes ending at once each keep the other's section.
bool addToLockfile(const std::string &path, const LockSet &added, SectionMerge &merge, LockSet &set,
                   std::string &error, int *errNo) {
  FolderLock hold(llvm::sys::path::parent_path(path).str());
  set = LockSet{};
  if (llvm::sys::fs::exists(path)) {
    std::string why;
    auto old = readLockSet(path, why);
    if (!old)
      return error = why + " (it holds the other architectures' sections: restore it, or move it away to write "
                           "this tune's winner alone; the search is journaled, `ciq resume` writes the lock)",
             false;
    set = *old;
  }
  if (!mergeSections(set, added, merge, error))
    return error = path + ": " + error + " (the search is journaled: `ciq resume` writes the lock)", false;
  return writeLockSet(path, set, error, errNo);
}

bool writeLock(const TuneConfig &cfg, const Evaluation &base, const Evaluation &win, std::string &error,
               const nlohmann::json &validation, int *errNo, LockWritten *written) {
  auto l = makeLock(cfg, base, win, cfg.lockfile, error, validation);
  if (!l)
    return false;
  LockSet added = lockSetOf(*l);
  if (added.sections.empty())
    return error = cfg.lockfile + ": the winner's build compiled no architecture, so there is no section to write", false;
  SectionMerge merge;
  LockSet set;
  if (!addToLockfile(cfg.lockfile, added, merge, set, error, errNo))
    return false;
  if (written) {
    written->sections = set.names();
    written->replaced = merge.replaced;
    written->replacedOneWinner = merge.replacedOneWinner;
    for (const auto &s : added.sections)
      written->added.push_back(s.section);
  }
  touchLockStamp(cfg.buildDir);
  return true;
}

} // namespace ciq
