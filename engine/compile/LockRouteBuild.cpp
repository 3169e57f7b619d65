// The target built as a lock builds it (CandidateBuilder::buildLocked): no
// candidate on the socket, ciq-ptxas in lock mode with the lock about to be
// written, every object assembled, the device link and the target's link,
// and the device code read back from the objects on disk, as `ciq lock
// verify` reads it. The rehearsal of a winner (engine/winner/Rehearsal.h).
#include "engine/compile/CandidateBuild.h"
#include "engine/compile/FirstError.h"
#include "engine/compile/RuntimeCompiles.h"
#include "common/DeviceCode.h"
#include "common/EnvNames.h"
#include "common/InvalidReason.h"
#include "common/Paths.h"

#include <cstdlib>
#include <llvm/Support/FileSystem.h>

namespace ciq {

// What a build through the lock needs: the stand-ins and $CIQ_PTXAS of a
// command build, PyTorch's route, the real nvcc behind a ccache link, and
// the lock, which wins over the --lock of a launcher chain the configure
// wrote; the arguments of the project's current lock, which ciq_apply_lock()
// may have put on the compile lines, are removed first (a reconfigure
// renders the new lock in their place).
std::map<std::string, std::string> CandidateBuilder::lockRouteEnv(const std::string &lockPath) const {
  std::map<std::string, std::string> env;
  if (!realNvcc_.empty())
    env[env::RealNvcc] = realNvcc_;
  addCommandRoute(env);
  env[env::RehearsalLock] = lockPath;
  if (llvm::sys::fs::exists(cfg_.lockfile))
    env[env::RehearsalReplaces] = cfg_.lockfile;
  return env;
}

void CandidateBuilder::buildLocked(Evaluation &e, const std::string &lockPath, const std::string &logPath,
                                   int onlySm) {
  e.log = logPath;
  e.ok = false;
  e.objects.clear();
  driver_->setObjectsOnly(false);
  daemon_.clearCandidate();
  driver_->clean();
  SubprocessResult r = driver_->build(lockRouteEnv(lockPath), logPath);
  e.buildMs = r.wallMs;
  backdateObjects();
  if (diskFault(r, {}, e))
    return;
  if (r.exitCode != 0 || r.spawnFailed || r.timedOut || r.termSignal != 0) {
    std::string first = firstErrorLineOfFile(logPath);
    e.reason = reason::RehearsalFailed;
    e.message = "the lock's own build failed (" + buildName() +
                (r.timedOut ? " ran past timeouts.build_s"
                 : r.termSignal ? " killed by signal " + std::to_string(r.termSignal)
                                : " exit " + std::to_string(r.exitCode)) +
                ")" + (first.empty() ? "" : ": " + first) + "; log: " + logPath;
    return;
  }
  if (driver_->objects().empty()) {
    // A build: command's objects come from a build's receipts; none known
    // means nothing to compare, never "matches".
    e.reason = reason::RehearsalFailed;
    e.message = "no CUDA object of " + buildName() + " is known to compare (a build: command names them in the "
                "receipts of its default build); log: " + logPath;
    return;
  }
  std::vector<std::string> hashes;
  for (const auto &o : driver_->objects()) {
    std::string err;
    auto dc = readDeviceCode(o.object, err, onlySm);
    if (!dc) {
      e.reason = reason::RehearsalFailed;
      e.message = "the lock's own build left no device code to compare in " + o.object + " (" + err + "); log: " +
                  logPath;
      return;
    }
    ObjectRecord rec;
    rec.source = o.source;
    rec.output = o.object;
    rec.deviceCodeSha256 = dc->sha256;
    rec.deviceCodeBytes = dc->bytes;
    rec.status = "ok";
    e.objects.push_back(rec);
    hashes.push_back(dc->sha256);
  }
  e.deviceCodeSha256 = hashes.empty() ? "" : combineDeviceCodeHashes(hashes);
  e.ok = true;
}

} // namespace ciq
