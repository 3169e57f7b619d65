#include "CandidateBuild.h"
#include "DeviceCode.h"
#include "Lockfile.h"
#include "RuntimeCompiles.h"
#include "Subprocess.h"

#include "Paths.h"

#include <llvm/Support/FileSystem.h>

namespace ciq {

bool CandidateBuilder::start(const std::string &socketPath, std::string &error) {
  llvm::sys::fs::create_directories(cfg_.runDir + "/acf");
  llvm::sys::fs::create_directories(cfg_.runDir + "/logs");
  // ACFs travel under their content hash: a path with no comma (nvcc splits
  // -Xptxas values on commas) that also keys compiler caches on the bytes.
  for (const auto &c : cfg_.space.controls) {
    if (c.render != RenderKind::Acf)
      continue;
    for (size_t i = 0; i < c.values.size(); ++i) {
      std::string dst = cfg_.runDir + "/acf/" + c.acfSha256[i] + ".acf";
      if (!llvm::sys::fs::exists(dst) && llvm::sys::fs::copy_file(c.values[i], dst)) {
        error = "cannot copy ACF " + c.values[i] + " to " + dst;
        return false;
      }
      acfCopy_[c.acfSha256[i]] = dst;
    }
  }
  if (!driver_->discover(error))
    return false;
  driver_->endOrphanedBuild();
  standinDir_ = cfg_.runDir + "/standin";
  if (!makeStandinDir(standinDir_, error))
    return false;
  realPtxas_ = realPtxasFor(cfg_);
  // A frozen winner applied by ciq_apply_lock() must not leak into the
  // candidates, or the "baseline" would be the old winner.
  if (llvm::sys::fs::exists(cfg_.lockfile)) {
    std::string lockErr;
    if (auto l = readLockfile(cfg_.lockfile, lockErr, /*checkIntegrity=*/false))
      stripArgs_ = lockCompileArgs(*l, cfg_.lockfile);
  }
  if (!daemon_.start(socketPath, error))
    return false;
  started_ = true;
  return true;
}

CandidateMessage CandidateBuilder::messageFor(const Evaluation &e) const {
  CandidateMessage m;
  m.candidateId = e.candidateId;
  m.candidateHash = e.candidateHash;
  m.ptxasOptions = e.rendered.ptxas;
  m.nvccOptions = e.rendered.nvcc;
  m.defines = e.rendered.defines;
  for (const auto &a : e.rendered.acfs) {
    auto it = acfCopy_.find(a.sha256);
    m.acfs.push_back({a.stage, it == acfCopy_.end() ? a.path : it->second, a.sha256});
  }
  m.compileTimeoutSeconds = cfg_.timeouts.compileSeconds;
  m.stripArgs = stripArgs_;
  return m;
}

std::map<std::string, std::string> CandidateBuilder::runtimeEnv(const Evaluation &e, bool freshCache) {
  auto env = standinEnv(standinDir_, realPtxas_);
  env["CIQ_SOCKET"] = daemon_.socketPath();
  env["CIQ_RUN_DIR"] = cfg_.runDir;
  env["CIQ_SOCKET_TIMEOUT"] = std::to_string((int)cfg_.timeouts.socketSeconds);
  std::string cache = frameworkCacheDir(cfg_, e.candidateHash);
  // Fresh for an evaluation: every kernel compiles, with this candidate.
  if (freshCache)
    llvm::sys::fs::remove_directories(cache);
  llvm::sys::fs::create_directories(cache);
  env["TRITON_CACHE_DIR"] = cache;
  return env;
}

void CandidateBuilder::beginRuntime(const Evaluation &e) {
  daemon_.setCandidate(messageFor(e));
}

void CandidateBuilder::endRuntime(Evaluation &e) {
  auto receipts = daemon_.receipts();
  daemon_.clearCandidate();
  bool required = cfg_.build.kind == "none";
  applyRuntimeReceipts(receipts, runtimeKernels_, required, e);
  if (e.ok && !haveBaseline_) {
    haveBaseline_ = true;
    runtimeKernels_ = e.runtimeKernels;
  }
}

void CandidateBuilder::expectLike(const Evaluation &baseline) {
  haveBaseline_ = true;
  runtimeKernels_ = baseline.runtimeKernels;
  if (driver_->learnsObjects()) {
    std::vector<CudaObject> objs;
    for (const auto &o : baseline.objects)
      objs.push_back({o.source, o.output, ""});
    driver_->learnObjects(objs);
  }
}

// A command build's first successful build names the objects every later
// one must compile; false (a stale build) when it compiled nothing through ciq-ptxas.
bool CandidateBuilder::learnObjects(const std::vector<Receipt> &receipts, Evaluation &e) {
  if (!driver_->learnsObjects() || !driver_->objects().empty())
    return true;
  std::vector<CudaObject> objs;
  for (const auto &rc : receipts)
    if (rc.ptxasRan && rc.exitStatus == 0)
      objs.push_back({rc.source, rc.output, ""});
  if (objs.empty()) {
    e.reason = reason::StaleBuild;
    e.message = "the configuration did not reach the compiler: build.command (" + shellJoin(cfg_.build.command) +
                ") compiled nothing through ciq-ptxas; call nvcc/ptxas by name (ciq puts stand-ins first on PATH) "
                "or through $CIQ_PTXAS as a launcher, and give build.clean so that each build recompiles; log: " +
                e.log;
    return false;
  }
  driver_->learnObjects(objs);
  return true;
}

void CandidateBuilder::build(Evaluation &e, const std::string &logPath) {
  daemon_.setCandidate(messageFor(e));
  driver_->clean();
  e.log = logPath;
  std::map<std::string, std::string> env = {{"CIQ_SOCKET", daemon_.socketPath()},
                                            {"CIQ_RUN_DIR", cfg_.runDir},
                                            {"CIQ_SOCKET_TIMEOUT", std::to_string((int)cfg_.timeouts.socketSeconds)}};
  // The user's own build finds the stand-ins first on PATH, or names
  // ciq-ptxas as its launcher: `$(CIQ_PTXAS) nvcc ...`.
  if (cfg_.build.kind == "command") {
    for (const auto &kv : standinEnv(standinDir_, realPtxas_))
      env[kv.first] = kv.second;
    env["CIQ_PTXAS"] = wrapperPath();
  }
  e.replay = "ciq replay " + e.candidateId + " --config " + shellQuote(cfg_.path);
  auto r = driver_->build(env, e.log);
  e.buildMs = r.wallMs;
  auto receipts = daemon_.receipts();
  daemon_.clearCandidate();
  std::map<std::string, const Receipt *> byOutput;
  bool compileFailed = false, timedOut = false;
  for (const auto &rc : receipts) {
    byOutput[rc.output] = &rc;
    e.kernels.insert(e.kernels.end(), rc.kernels.begin(), rc.kernels.end());
    compileFailed = compileFailed || rc.status == "compile_error";
    timedOut = timedOut || rc.status == "compile_timeout";
  }
  if (r.timedOut || timedOut) {
    e.reason = reason::CompileTimeout;
    e.message = std::string(timedOut ? "a compile ran past timeouts.compile_s" : "the build ran past timeouts.build_s") +
                "; log: " + e.log;
    return;
  }
  if (r.exitCode != 0 || r.spawnFailed) {
    bool allCompiled = true;
    for (const auto &o : driver_->objects())
      allCompiled = allCompiled && byOutput.count(o.object) && byOutput[o.object]->exitStatus == 0;
    e.reason = (compileFailed || !allCompiled) ? reason::CompileError : reason::LinkError;
    e.message = std::string(e.reason == reason::CompileError ? "the compile failed" : "the link failed") +
                " (cmake --build exit " + std::to_string(r.exitCode) + "); log: " + e.log;
    return;
  }
  if (!learnObjects(receipts, e))
    return;
  std::vector<std::string> missing, hashes;
  for (const auto &o : driver_->objects()) {
    auto it = byOutput.find(o.object);
    if (it == byOutput.end()) {
      missing.push_back(o.source);
      continue;
    }
    const Receipt &rc = *it->second;
    e.objects.push_back({o.source, o.object, rc.deviceCodeSha256, rc.status, rc.deviceCodeBytes, rc.wallMs});
    hashes.push_back(rc.deviceCodeSha256);
  }
  if (!missing.empty()) {
    std::string files;
    for (const auto &m : missing)
      files += (files.empty() ? "" : ", ") + m;
    e.reason = reason::StaleBuild;
    e.message = "the configuration did not reach the compiler: no receipt from ciq-ptxas for " + files +
                (cfg_.build.kind == "cmake" ? " (is ciq-ptxas the target's CUDA_COMPILER_LAUNCHER? run `ciq canary`)"
                                            : " (did build.clean delete it, and does build.command compile it "
                                              "through nvcc/ptxas on PATH or $CIQ_PTXAS?)") +
                "; log: " + e.log;
    return;
  }
  e.deviceCodeSha256 = hashes.empty() ? "" : combineDeviceCodeHashes(hashes);
  e.ok = true;
}

void CandidateBuilder::restore() {
  if (!started_)
    return;
  started_ = false;
  daemon_.stop();
  driver_->clean();
}

} // namespace ciq
