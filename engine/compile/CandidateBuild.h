// Building one candidate through the user's own build: the daemon hands the
// candidate to every ciq-ptxas, the target's CUDA objects are cleaned and
// rebuilt, and the receipts prove each translation unit got the candidate.
#pragma once
#include <functional>
#include "common/KernelDirective.h"
#include "engine/compile/BuildDriver.h"
#include "engine/compile/KernelControlCheck.h"
#include "engine/config/Config.h"
#include "engine/compile/Daemon.h"
#include "engine/compile/RunLock.h"
#include "engine/compile/TorchRoute.h"
#include "engine/record/Evaluation.h"

#include <map>
#include <memory>
#include <string>

namespace ciq {

class CandidateBuilder {
public:
  // Where its lines go: warnings (refused receipts, an interrupted build)
  // and notes (a build tree put back after a killed search). The library
  // never prints; the command that owns the builder does.
  struct Messages {
    std::function<void(const std::string &)> warning, note;
  };
  CandidateBuilder(const TuneConfig &cfg, Messages messages)
      : cfg_(cfg), driver_(makeBuildDriver(cfg)), messages_(std::move(messages)) {}
  ~CandidateBuilder() { restore(); }

  // Finds the target's CUDA objects, copies ACFs under their hash, reads the
  // project's lock (whose arguments are kept out of candidates), and starts
  // the daemon on socketPath.
  bool start(const std::string &socketPath, std::string &error);

  // Rebuilds with e.rendered. Fills ok/reason/message, kernels, objects,
  // deviceCodeSha256, buildMs, log, replay. A missing receipt is a stale
  // build: e.reason == stale_build, and the caller must stop.
  void build(Evaluation &e, const std::string &logPath);

  // Rebuilds the target as the lock at lockPath builds it (LockRouteBuild.cpp):
  // ciq-ptxas in lock mode, no candidate, nothing shortened. Fills ok,
  // reason (rehearsal_failed, disk_fault), message, objects (each with the
  // device code read from the object on disk), deviceCodeSha256, buildMs, log.
  // onlySm (90): hash that architecture's SASS alone (a lock tuned with
  // narrow_architectures covers one architecture).
  void buildLocked(Evaluation &e, const std::string &lockPath, const std::string &logPath, int onlySm = 0);

  CandidateMessage messageFor(const Evaluation &e) const;

  // Compiles made while the benchmark runs (Triton): the variables that send
  // them to ciq-ptxas with e's candidate (socket, stand-ins, e's own fresh
  // TRITON_CACHE_DIR), to add to the benchmark's environment.
  std::map<std::string, std::string> runtimeEnv(const Evaluation &e, bool freshCache);
  // Serves e's candidate while its benchmark runs...
  void beginRuntime(const Evaluation &e);
  // ...then adds the receipts of those compiles to e and checks them against
  // the baseline's (see applyRuntimeReceipts).
  void endRuntime(Evaluation &e);
  // What a resumed search knows from its baseline: the objects a command
  // build compiles, the kernels the benchmark compiles at run time.
  void expectLike(const Evaluation &baseline);
  // Removes the last candidate's objects (the next plain build recompiles
  // them with the user's own flags) and stops the daemon.
  void restore();

  Daemon &daemon() { return daemon_; }
  const BuildDriver &driver() const { return *driver_; }

private:
  void backdateObjects();
  std::map<std::string, std::string> engineEnv() const;
  std::map<std::string, std::string> buildEnv() const;
  // A build: command's way to ciq-ptxas (stand-ins first on PATH,
  // $CIQ_PTXAS, PyTorch's nvcc path) added to `env`; nothing for CMake.
  void addCommandRoute(std::map<std::string, std::string> &env) const;
  std::map<std::string, std::string> lockRouteEnv(const std::string &lockPath) const;
  std::string buildName() const;   // for messages: "cmake --build" or "build.command"
  bool learnObjects(const std::vector<Receipt> &receipts, Evaluation &e);
  bool runBuild(Evaluation &e, SubprocessResult &r, std::vector<Receipt> &receipts);
  // CandidateBuildResult.cpp: what a finished build left.
  bool failedBuild(const SubprocessResult &r, const std::vector<Receipt> &receipts, Evaluation &e);
  bool recordObjects(const std::vector<Receipt> &receipts, Evaluation &e, std::vector<std::string> &hashes);
  bool diskFault(const SubprocessResult &r, const std::vector<Receipt> &receipts, Evaluation &e);
  void warnRefusedReceipts(const Evaluation &e);
  bool socketReplaced(Evaluation &e);
  void guardObjects();

  // First, so released last: after restore() and the daemon are done with the tree.
  RunLock treeLock_;
  const TuneConfig &cfg_;
  std::unique_ptr<BuildDriver> driver_;
  Messages messages_;
  std::string standinDir_, realPtxas_, realNvcc_;
  TorchUse torch_;                               // how the workload uses PyTorch (TorchRoute.h)
  std::map<std::string, std::string> torchEnv_;  // PYTORCH_NVCC, CUDA_HOME view, ...
  bool startTorch(std::string &error);
  bool haveBaseline_ = false;
  std::vector<std::string> runtimeKernels_;   // the baseline's
  KernelScope kernelScope(bool runtime) const {
    KernelScope s;
    s.runtime = runtime;
    for (const auto &k : runtimeKernels_)
      s.runtimeKeys.insert(kernelKey(k));
    return s;
  }
  Daemon daemon_;
  std::map<std::string, std::string> acfCopy_;   // sha256 -> path under run/acf
  std::vector<std::string> stripArgs_;
  bool started_ = false;
  int refusedSeen_ = 0;   // the daemon's refused receipts already warned about
};

} // namespace ciq
