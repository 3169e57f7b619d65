// Judging what a candidate's build left (CandidateBuild.h): a fault that is
// not the candidate's (the disk, the engine's socket), a compiler crash, a
// timeout, a failed compile or link, objects no receipt accounts for. Each
// sets the INVALID reason and a message that names the log.
#include "engine/compile/CandidateBuild.h"
#include "common/CompileTemp.h"
#include "common/DeviceCode.h"
#include "common/DiskFault.h"
#include "common/FileIO.h"
#include "common/InvalidReason.h"
#include "common/Paths.h"
#include "common/Subprocess.h"
#include "engine/compile/FirstError.h"
#include "engine/compile/KernelControlCheck.h"

#include <llvm/Support/Path.h>

namespace ciq {

// A write the disk refused is no result of the candidate (DiskFault.h): a
// compile whose receipt says so, or a failed build whose own folders (build
// tree, log, temporary folder) are read-only or full, or whose output names
// a disk fault (ninja: "opening build log: No space left on device").
bool CandidateBuilder::diskFault(const SubprocessResult &r, const std::vector<Receipt> &receipts, Evaluation &e) {
  std::optional<DiskFault> fault;
  std::string compiling;
  for (const auto &rc : receipts)
    if (rc.ioErrno != 0) {
      fault = DiskFault{rc.ioErrno, rc.ioPath};
      compiling = " (compiling " + rc.source + ")";
      break;
    }
  if (!fault && (r.exitCode != 0 || r.spawnFailed || r.termSignal != 0 || r.timedOut)) {
    std::string log = readWholeFile(e.log).value_or("");
    fault = diskFaultOfFailedTool(r.errorMessage + "\n" + log.substr(log.size() > 65536 ? log.size() - 65536 : 0),
                                  {cfg_.buildDir, llvm::sys::path::parent_path(e.log).str(), temporaryFolder()});
  }
  if (!fault)
    return false;
  e.reason = reason::DiskFault;
  e.message = "the build of " + e.candidateId + " could not write " + fault->describe() + compiling +
              ", not the candidate's doing; " + fault->remedy() + "; log: " + e.log;
  e.kernels.clear();
  return true;
}

// Receipts the daemon refused while this candidate built (ReceiptCheck.h):
// never counted, logged in engine-socket.log, and said once here.
void CandidateBuilder::warnRefusedReceipts(const Evaluation &e) {
  int n = daemon_.refusedReceipts();
  if (n <= refusedSeen_)
    return;
  messages_.warning(e.candidateId + ": refused " + std::to_string(n - refusedSeen_) +
                " receipt(s) on the engine's socket, none counted (the last: " + daemon_.lastRefusedReceipt() +
                "); see " + cfg_.runDir + "/logs/engine-socket.log");
  refusedSeen_ = n;
}

// The engine's socket replaced during the build (another user unlinked it
// and bound their own): the wrapper refused theirs at once and the compiles
// failed, which says nothing of the candidate; a retry meets the same socket.
bool CandidateBuilder::socketReplaced(Evaluation &e) {
  std::string what = daemon_.socketProblem();
  if (what.empty())
    return false;
  std::string dir = daemon_.socketPath().substr(0, daemon_.socketPath().find_last_of('/'));
  e.ok = false;
  e.reason = reason::SocketReplaced;
  e.message = "the engine's socket " + daemon_.socketPath() + " " + what + " during the build of " + e.candidateId +
              ", so its compiles refused to take options from it; another user can write to " + dir +
              ": make it yours alone (chmod o-w), then `ciq resume`; log: " + e.log;
  return true;
}

// A compiler crash, a timeout, or a build that failed: `e` says which, and
// true; false for a build that succeeded.
bool CandidateBuilder::failedBuild(const SubprocessResult &r, const std::vector<Receipt> &receipts, Evaluation &e) {
  std::map<std::string, const Receipt *> byOutput;
  bool compileFailed = false, timedOut = false;
  const Receipt *crashed = nullptr;
  std::string why; // a receipt's reason: the compiler was not started (a missing ACF)
  for (const auto &rc : receipts) {
    if (why.empty())
      why = rc.reason;
    byOutput[rc.output] = &rc;
    e.kernels.insert(e.kernels.end(), rc.kernels.begin(), rc.kernels.end());
    compileFailed = compileFailed || rc.status == reason::CompileError;
    timedOut = timedOut || rc.status == reason::CompileTimeout;
    if (rc.status == reason::CompilerCrash && !crashed)
      crashed = &rc;
  }
  if (crashed) {
    // A compiler fault, not the candidate's controls: the command that
    // reproduces it goes with the reason (docs/troubleshooting.md).
    e.reason = reason::CompilerCrash;
    e.message = (crashed->crashedTool.empty() ? std::string("a tool nvcc ran (cicc, ptxas, ...)") : crashed->crashedTool) +
                " was killed by " + signalName(crashed->crashSignal) + " compiling " + crashed->source +
                "; reproduce: " + shellJoin(crashed->finalArgv) + "; log: " + e.log;
    e.kernels.clear();
    return true;
  }
  if (r.exitCode != 0 || r.spawnFailed || r.timedOut || timedOut)
    e.kernels.clear(); // a failed build's statistics describe no program
  if (r.timedOut || timedOut) {
    e.reason = reason::CompileTimeout;
    e.message = std::string(timedOut ? "a compile ran past timeouts.compile_s"
                                     : "the build ran past timeouts.build_s and was ended with every compile "
                                       "it had started (" + std::to_string(driver_->lastReaped()) +
                                           " process group(s) outside the build's own)") +
                "; log: " + e.log;
    return true;
  }
  if (r.exitCode != 0 || r.spawnFailed) {
    bool allCompiled = true;
    for (const auto &o : driver_->objects())
      allCompiled = allCompiled && byOutput.count(o.object) && byOutput[o.object]->exitStatus == 0;
    e.reason = (compileFailed || !allCompiled || logFileShowsCompileFailure(e.log)) ? reason::CompileError
                                                                                    : reason::LinkError;
    // The compiler's own first error line, so that the summary and `ciq
    // diagnose` say why without opening the log (a receipt's reason first:
    // the compiler was not started).
    // A link's too (nvlink's "entry function ... with max regcount of 32
    // calls function ... with regcount of 139").
    std::string first = why.empty() ? firstErrorLineOfFile(e.log) : "";
    e.message = std::string(e.reason == reason::CompileError ? "the compile failed" : "the link failed") +
                " (" + buildName() + " exit " + std::to_string(r.exitCode) + ")" + (why.empty() ? "" : ": " + why) +
                (first.empty() ? "" : ": " + first) + "; log: " + e.log;
    return true;
  }
  return false;
}

// Each object the target compiles, with its receipt's device code (its hash
// in `hashes`); false with StaleBuild when an object has no receipt (the
// candidate did not reach its compiler).
bool CandidateBuilder::recordObjects(const std::vector<Receipt> &receipts, Evaluation &e,
                                     std::vector<std::string> &hashes) {
  std::map<std::string, const Receipt *> byOutput;
  for (const auto &rc : receipts)
    byOutput[rc.output] = &rc;
  std::vector<std::string> missing;
  bool missingAreFindCuda = true;
  for (const auto &o : driver_->objects()) {
    auto it = byOutput.find(o.object);
    if (it == byOutput.end()) {
      missing.push_back(o.source);
      missingAreFindCuda = missingAreFindCuda && o.findCuda;
      continue;
    }
    const Receipt &rc = *it->second;
    e.objects.push_back({o.source, o.object, rc.deviceCodeSha256, rc.status, rc.deviceCodeBytes, rc.wallMs,
                         rc.ptxasRan, rc.ptxReuse, appliedKernels(rc), rc.cached});
    hashes.push_back(rc.deviceCodeSha256);
  }
  if (!missing.empty()) {
    std::string files;
    for (const auto &m : missing)
      files += (files.empty() ? "" : ", ") + m;
    e.reason = reason::StaleBuild;
    if (missingAreFindCuda) {
      // The one cause, not the list of its sources: FindCUDA's custom
      // commands run nvcc by CUDA_NVCC_EXECUTABLE, which no launcher reaches.
      e.message = "the configuration did not reach the compiler: " + cfg_.target + " compiles its " +
                  std::to_string(missing.size()) + " CUDA source(s) (" + llvm::sys::path::filename(missing[0]).str() +
                  (missing.size() > 1 ? ", ..." : "") + ") with legacy FindCUDA, whose nvcc (CUDA_NVCC_EXECUTABLE) "
                  "is not the ciq-ptxas stand-in; configure with -DCUDA_NVCC_EXECUTABLE=<a link named nvcc to "
                  "ciq-ptxas> (docs/cmake.md, \"Legacy FindCUDA\"); log: " + e.log;
      return false;
    }
    e.message = "the configuration did not reach the compiler: no receipt from ciq-ptxas for " + files +
                (cfg_.build.kind == "cmake" ? " (is ciq-ptxas the target's CUDA_COMPILER_LAUNCHER? run `ciq canary`)"
                                            : " (did build.clean delete it, and does build.command compile it "
                                              "through nvcc/ptxas on PATH or $CIQ_PTXAS?)") +
                "; log: " + e.log;
    return false;
  }
  return true;
}

} // namespace ciq
