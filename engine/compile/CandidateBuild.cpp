#include "engine/compile/CandidateBuild.h"
#include "common/LockSections.h"
#include "engine/compile/KernelControlCheck.h"
#include "engine/compile/FirstError.h"
#include "engine/compile/BuildTreeGuard.h"
#include "common/DeviceCode.h"
#include "common/DiskFault.h"
#include "common/FileIO.h"
#include "common/EnvNames.h"
#include "common/InvalidReason.h"
#include "common/Lockfile.h"
#include "common/OwnedDir.h"
#include "engine/config/Metrics.h"
#include "common/Paths.h"
#include "common/ProcessTrack.h"
#include "engine/compile/RuntimeCompiles.h"
#include "common/Subprocess.h"
#include "common/CompileTemp.h"

#include <fstream>
#include <set>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <fcntl.h>
#include <sys/stat.h>

namespace ciq {

// A search that only reads compile metrics and runs nothing it built lets a
// candidate that reuses kept PTX skip assembling its object (PtxReuse.h), and
// the build skip the link (BuildDriver::setObjectsOnly).
static bool needsObject(const TuneConfig &cfg) {
  if (cfg.benchmark.enabled || !cfg.benchmark.correctness.empty())
    return true;
  for (const auto &o : cfg.objectives)
    if (!isCompileMetric(o.metric))
      return true;
  return false;
}

// An object of a command build (no target, no compile command of its own).
static CudaObject commandBuildObject(const std::string &source, const std::string &object) {
  CudaObject o;
  o.source = source;
  o.object = object;
  return o;
}

// Only ptxas sees the candidate (no -D parameter, nvcc option or nvcc-stage
// ACF): the host code, and with it the link, is the baseline's.
static bool ptxasOnly(const Rendered &r) {
  if (!r.nvcc.empty() || !r.defines.empty())
    return false;
  for (const auto &a : r.acfs)
    if (a.stage != "ptxas")
      return false;
  return true;
}

// Relocatable device code is linked by nvlink at the link step, where a
// candidate's device code can still fail: such builds always link.
static bool relocatable(const std::vector<CudaObject> &objects) {
  for (const auto &o : objects)
    for (const auto &a : o.command)
      if (a == "-rdc=true" || a == "--relocatable-device-code=true" || a == "-dc" || a == "--device-c" ||
          a == "-rdc" || a == "--relocatable-device-code")
        return true;
  return false;
}

bool CandidateBuilder::start(const std::string &socketPath, std::string &error) {
  // Every route in (tune, replay, validate, a worker): nothing is written
  // into a run directory another user could have prepared.
  if (!checkRunDir(cfg_.runDir, /*create=*/true, error))
    return false;
  // Before anything in the build tree is read, ended or repaired (RunLock.h).
  if (cfg_.build.kind != "none" && !treeLock_.acquireBuildTree(cfg_.buildDir, cfg_.runDir, error))
    return false;
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
  // Nothing of a killed search may run beside this one: its build (ended
  // above), then every compile it started in a group of its own.
  if (int n = reapCompiles(cfg_.runDir))
    messages_.note("ended " + std::to_string(n) + " compile process group(s) left running by a killed search in " +
               cfg_.runDir);
  // Their temporary folders (and those of compiles a timeout killed): the
  // compiles are gone, nothing removed them.
  llvm::SmallString<128> tmp;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, tmp);
  if (int n = wrapper::removeStaleCompileTemps(tmp.str().str()))
    messages_.note("removed " + std::to_string(n) + " temporary folder(s) of killed compiles (" + tmp.str().str() +
                   "/ciq-compile-*)");
  std::string note;
  repairBuildTree(cfg_.buildDir, cfg_.runDir, note);
  if (!note.empty())
    messages_.note(note);
  realPtxas_ = realPtxasFor(cfg_);
  realNvcc_ = realNvccFor(cfg_);
  if (!startTorch(error))
    return false;
  // A frozen winner applied by ciq_apply_lock() must not leak into the
  // candidates, or the "baseline" would be the old winner.
  if (llvm::sys::fs::exists(cfg_.lockfile)) {
    std::string lockErr;
    if (auto l = readLockSet(cfg_.lockfile, lockErr, /*checkIntegrity=*/false))
      stripArgs_ = lockSetCompileArgs(*l, cfg_.lockfile);
  }
  daemon_.setLogPath(cfg_.runDir + "/logs/engine-socket.log");
  std::set<std::string> tuned;
  for (const auto &o : driver_->objects())
    tuned.insert(o.object);
  daemon_.setTunedOutputs(std::move(tuned));
  // A kill -9 while a candidate builds leaves the objects compiled so far
  // with a fresh date, and the user's next plain build would link them
  // (backdateObjects() only runs once the build ends). Each object is dated
  // 1970 as its receipt arrives where the candidate's own link still runs:
  // Ninja plans the link before it runs a compile; make re-reads a remade
  // object's date, so clean() dates the files make links from the objects
  // older still (engine/compile/MakeRules.h).
  daemon_.setBackdateOnReceipt(driver_->datesObjectsOnReceipt());
  if (!daemon_.start(socketPath, error))
    return false;
  guardObjects();
  started_ = true;
  return true;
}

// PyTorch's nvcc runs reach the stand-in (TorchRoute.h); a workload that
// builds or loads an extension with a PyTorch that cannot (missing, no CUDA)
// stops here, before any build, with one line.
bool CandidateBuilder::startTorch(std::string &error) {
  torch_ = detectTorchUse(cfg_);
  std::string version;
  if (torch_.any()) {
    if (std::string p = torchProblem(torch_, version); !p.empty()) {
      error = p;
      return false;
    }
  }
  auto standin = standinEnv(standinDir_, realPtxas_);
  std::string note;
  torchEnv_ = torchEnv(cfg_.runDir, standinDir_, standin.count(env::RealNvcc) ? standin[env::RealNvcc] : "", note);
  if (torch_.any() && !note.empty())
    messages_.note(note);
  return true;
}

// The objects a signal-time cleanup removes (BuildTreeGuard.h): the CMake
// target's from the start, a command build's once its baseline named them.
void CandidateBuilder::guardObjects() {
  std::vector<std::string> objects;
  for (const auto &o : driver_->objects())
    objects.push_back(o.object);
  guardBuildTree(cfg_.buildDir, cfg_.runDir, objects, daemon_.socketPath());
}

CandidateMessage CandidateBuilder::messageFor(const Evaluation &e) const {
  CandidateMessage m;
  m.candidateId = e.candidateId;
  m.candidateHash = e.candidateHash;
  m.ptxasOptions = e.rendered.ptxas;
  m.nvccOptions = e.rendered.nvcc;
  m.defines = e.rendered.defines;
  m.kernelDirectives = e.rendered.kernels;
  m.unitOptions = e.rendered.units;
  for (const auto &a : e.rendered.acfs) {
    auto it = acfCopy_.find(a.sha256);
    m.acfs.push_back({a.stage, it == acfCopy_.end() ? a.path : it->second, a.sha256});
  }
  m.compileTimeoutSeconds = cfg_.timeouts.compileSeconds;
  m.stripArgs = stripArgs_;
  m.narrowTo = cfg_.narrowTo;
  // Relocatable device code is linked by nvlink, which checks each entry
  // against what it calls in other units (a .maxnreg below a callee's
  // registers fails there): the build must link the candidate's own object.
  m.needObject = needsObject(cfg_) || relocatable(driver_->objects());
  return m;
}

// A build failed with no compile reporting a failure and some CUDA object
// without a receipt, or died of a signal: something outside the candidate
// ended it (a kill, a lost connection).
static bool interrupted(const SubprocessResult &r, const std::vector<Receipt> &receipts,
                        const std::vector<CudaObject> &objects, const std::string &log) {
  if (r.timedOut || r.spawnFailed)
    return false;
  if (r.termSignal != 0)
    return true;
  if (r.exitCode == 0)
    return false;
  std::set<std::string> got;
  for (const auto &rc : receipts) {
    if (rc.status != "ok")
      return false; // a compile failed: the candidate's doing
    got.insert(rc.output);
  }
  for (const auto &o : objects)
    if (!got.count(o.object))
      return true;
  // Every compile succeeded: a link error, if a command failed at all (ninja
  // says FAILED:, make says Error); else the build tool itself was killed.
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.find("FAILED:") == std::string::npos && text.find("Error ") == std::string::npos &&
         text.find("error") == std::string::npos;
}

// What every compile of this engine needs to reach it: the socket, the run
// directory and this engine's token (compiles without it are refused).
std::map<std::string, std::string> CandidateBuilder::engineEnv() const {
  std::map<std::string, std::string> env = {{env::Socket, daemon_.socketPath()},
                                            {env::RunDir, cfg_.runDir},
                                            {env::EngineToken, daemon_.token()},
                                            {env::SocketTimeout, std::to_string((int)cfg_.timeouts.socketSeconds)}};
  // CMAKE_CUDA_COMPILER a link to ccache: the stand-ins and the launcher
  // read the nvcc behind it, never the link (RuntimeCompiles.h).
  if (!realNvcc_.empty())
    env[env::RealNvcc] = realNvcc_;
  return env;
}

std::map<std::string, std::string> CandidateBuilder::buildEnv() const {
  auto env = engineEnv();
  // compile_ms is the compiler's time: a compiler cache behind ciq-ptxas
  // compiles again (and stores the result) instead of answering from what it
  // holds, whose time would be its own (issue 51 item 10). A cache that
  // answers anyway gives a receipt marked cached, which compile_ms refuses.
  for (const auto &o : cfg_.objectives)
    if (o.metric == "compile_ms") {
      env["CCACHE_RECACHE"] = "1";
      env["SCCACHE_RECACHE"] = "1";
    }
  addCommandRoute(env);
  return env;
}

void CandidateBuilder::addCommandRoute(std::map<std::string, std::string> &env) const {
  // The user's own build finds the stand-ins first on PATH, or names
  // ciq-ptxas as its launcher: `$(CIQ_PTXAS) nvcc ...`.
  if (cfg_.build.kind != "command")
    return;
  for (const auto &kv : standinEnv(standinDir_, realPtxas_))
    env[kv.first] = kv.second;
  env[env::Ptxas] = wrapperPath();
  // PyTorch's builds run nvcc by a path; what build.env sets stays the user's.
  for (const auto &kv : torchEnv_)
    if (!cfg_.build.env.count(kv.first))
      env[kv.first] = kv.second;
}

std::string CandidateBuilder::buildName() const {
  return cfg_.build.kind == "cmake" ? "cmake --build" : "build.command";
}

std::map<std::string, std::string> CandidateBuilder::runtimeEnv(const Evaluation &e, bool freshCache) {
  auto env = engineEnv();
  for (const auto &kv : standinEnv(standinDir_, realPtxas_))
    env[kv.first] = kv.second;
  std::string cache = frameworkCacheDir(cfg_, e.candidateHash);
  // Fresh for an evaluation: every kernel compiles, with this candidate.
  if (freshCache)
    removeTree(cache);
  llvm::sys::fs::create_directories(cache);
  env["TRITON_CACHE_DIR"] = cache;
  // load()/load_inline(): PyTorch's nvcc is the stand-in, and each candidate
  // compiles into a folder of its own (a cached build would hide it).
  for (const auto &kv : torchEnv_)
    if (!cfg_.benchmark.env.count(kv.first))
      env[kv.first] = kv.second;
  env["TORCH_EXTENSIONS_DIR"] = cache + "/torch-extensions";
  return env;
}

void CandidateBuilder::beginRuntime(const Evaluation &e) {
  daemon_.setCandidate(messageFor(e));
}

void CandidateBuilder::endRuntime(Evaluation &e) {
  auto receipts = daemon_.receipts();
  daemon_.clearCandidate();
  for (const auto &rc : receipts)
    if (rc.ioErrno != 0) { // the disk's doing, not the candidate's (DiskFault.h)
      e.ok = false;
      e.reason = reason::DiskFault;
      e.message = "a compile while the benchmark of " + e.candidateId + " ran could not write " +
                  DiskFault{rc.ioErrno, rc.ioPath}.describe() + " (compiling " + rc.source +
                  "), not the candidate's doing; " + remedyFor(rc.ioErrno);
      return;
    }
  bool required = cfg_.build.kind == "none";
  applyRuntimeReceipts(receipts, runtimeKernels_, required, e);
  // The per-kernel controls of kernels compiled while it ran, checked like
  // the build's (the baseline names them: before it, there are none).
  if (e.ok && haveBaseline_)
    if (std::string bad = kernelControlProblem(e.rendered, receipts, kernelScope(true)); !bad.empty()) {
      e.ok = false;
      e.reason = reason::KernelControlIgnored;
      e.message = bad + " while the benchmark ran";
    }
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
      objs.push_back(commandBuildObject(o.source, o.output));
    driver_->learnObjects(objs);
    guardObjects();
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
      objs.push_back(commandBuildObject(rc.source, rc.output));
  if (objs.empty() && torch_.build) {
    e.reason = reason::StaleBuild;
    e.message = "the configuration did not reach the compiler: build.command (" + shellJoin(cfg_.build.command) +
                ") compiled no CUDA source through ciq-ptxas: " +
                (torch_.cudaSources ? std::string("a PyTorch build whose objects were up to date, or a wheel pip "
                                                  "took from its cache, compiles nothing; give build.clean (e.g. "
                                                  "[rm, -rf, build]) and pip's --no-cache-dir")
                                    : torch_.file + " names no .cu source (a CppExtension, or a CUDAExtension "
                                                    "without CUDA sources has nothing to tune)") +
                "; log: " + e.log;
    return false;
  }
  if (objs.empty()) {
    e.reason = reason::StaleBuild;
    e.message = "the configuration did not reach the compiler: build.command (" + shellJoin(cfg_.build.command) +
                ") compiled nothing through ciq-ptxas; call nvcc/ptxas by name (ciq puts stand-ins first on PATH) "
                "or through $CIQ_PTXAS as a launcher, and give build.clean so that each build recompiles; log: " +
                e.log;
    return false;
  }
  driver_->learnObjects(objs);
  guardObjects();
  return true;
}

// A candidate's objects are dated 1970: if ciq is killed -9 before it removes
// them, the user's next plain build finds them older than their sources and
// recompiles them with the user's own flags instead of linking the candidate's
// code (the repair by the next ciq command or configure, BuildTreeGuard.h,
// may never come). Nothing in the search reads their dates.
void CandidateBuilder::backdateObjects() {
  for (const auto &o : driver_->objects())
    setFileDate(o.object, kCandidateObjectDate);
}

// Builds once, or twice when the first build was killed from outside (an
// interrupted build is no result of the candidate); false when `e` already
// holds the outcome (a socket replaced, a disk fault, interrupted twice).
bool CandidateBuilder::runBuild(Evaluation &e, SubprocessResult &r, std::vector<Receipt> &receipts) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    daemon_.setCandidate(messageFor(e));
    driver_->clean();
    r = driver_->build(buildEnv(), e.log);
    receipts = daemon_.receipts();
    daemon_.clearCandidate();
    warnRefusedReceipts(e);
    if (socketReplaced(e) || diskFault(r, receipts, e))
      return false;
    if (!interrupted(r, receipts, driver_->objects(), e.log))
      return true;
    if (attempt == 1) {
      e.reason = reason::BuildInterrupted;
      e.message = "the build of " + e.candidateId + " was interrupted twice (" +
                  (r.termSignal ? "killed by signal " + std::to_string(r.termSignal)
                                : buildName() + " exit " + std::to_string(r.exitCode) + " with no compile failing") +
                  "), so it says nothing about the candidate; log: " + e.log;
      return false;
    }
    messages_.warning("the build of " + e.candidateId + " was interrupted (" +
                  (r.termSignal ? "killed by signal " + std::to_string(r.termSignal)
                                : "no compile failed, some never reported") +
                  "); building it once more (log: " + e.log + ")");
    e.log = e.log + ".retry";
  }
  return true;
}

void CandidateBuilder::build(Evaluation &e, const std::string &logPath) {
  e.log = logPath;
  // Compile-only objectives run nothing the build makes: a candidate that
  // cannot change the link builds its objects alone. One with -D parameters
  // or nvcc options links, so that a configuration that breaks the user's
  // link is INVALID (link_error), never a winner.
  driver_->setObjectsOnly(!needsObject(cfg_) && ptxasOnly(e.rendered) && !relocatable(driver_->objects()));
  e.replay = "ciq replay " + e.candidateId + " --config " + shellQuote(cfg_.path);
  SubprocessResult r;
  std::vector<Receipt> receipts;
  if (!runBuild(e, r, receipts))
    return;
  e.buildMs = r.wallMs;
  backdateObjects();
  std::vector<std::string> hashes;
  if (failedBuild(r, receipts, e) || !learnObjects(receipts, e) || !recordObjects(receipts, e, hashes))
    return;
  if (std::string bad = kernelControlProblem(e.rendered, receipts, kernelScope(false)); !bad.empty()) {
    e.reason = reason::KernelControlIgnored;
    e.message = bad + "; log: " + e.log;
    e.kernels.clear();
    return;
  }
  e.deviceCodeSha256 = hashes.empty() ? "" : combineDeviceCodeHashes(hashes);
  std::vector<std::string> outputs;
  for (const auto &o : e.objects)
    outputs.push_back(o.output);
  std::string err;
  // "": never reused (no object at all: build: none)
  e.objectsSha256 = outputs.empty() ? "" : objectsCodeSha256(outputs, err).value_or("");
  e.ok = true;
}

void CandidateBuilder::restore() {
  if (!started_)
    return;
  started_ = false;
  daemon_.stop();
  driver_->clean();
  releaseBuildTree(cfg_.buildDir);
}

} // namespace ciq
