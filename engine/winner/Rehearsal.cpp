#include "engine/winner/Rehearsal.h"
#include "common/FileIO.h"
#include "engine/winner/LockUnits.h"
#include "engine/winner/LockWriter.h"
#include "engine/compile/BenchmarkProgram.h"
#include "common/DeviceCode.h"
#include "common/InvalidReason.h"
#include "common/JsonRead.h"

#include <cstdlib>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

namespace ciq {
namespace {

// Each object's device-code sections, by its source relative to the lock the
// tune will write (what `ciq lock verify` names when a later build differs).
nlohmann::json sectionsOf(const Evaluation &e, const TuneConfig &cfg, int onlySm) {
  nlohmann::json out = nlohmann::json::object();
  std::string lockDir = llvm::sys::path::parent_path(cfg.lockfile).str();
  for (const auto &o : e.objects) {
    std::string err;
    auto dc = readDeviceCode(o.output, err, onlySm);
    if (dc && !dc->sections.empty())
      out[lockRelative(o.source, lockDir)] = dc->sections;
  }
  return out;
}

// Builds through `lockPath` and compares the device code with the lock's.
Rehearsal rehearse(CandidateBuilder &builder, const TuneConfig &cfg, const Lockfile &lock, const std::string &lockPath,
                   const std::string &id, bool snapshot) {
  Rehearsal r;
  r.lockPath = lockPath;
  Evaluation e;
  e.candidateId = id;
  std::string narrowed = stringAt(lock.extra, "device_code_architecture");
  int onlySm = narrowed.rfind("sm_", 0) == 0 ? std::atoi(narrowed.c_str() + 3) : 0;
  builder.buildLocked(e, lockPath, cfg.runDir + "/logs/" + id + ".rehearsal.log", onlySm);
  r.buildMs = e.buildMs;
  if (!e.ok) {
    r.reason = e.reason;
    r.message = e.message;
    return r;
  }
  if (e.deviceCodeSha256 != lock.deviceCodeSha256) {
    std::vector<std::pair<std::string, std::string>> built;
    for (const auto &o : e.objects)
      built.push_back({o.source, o.deviceCodeSha256});
    std::string units = unitDifferences(lock, llvm::sys::path::parent_path(lockPath).str(), built);
    r.reason = reason::RehearsalFailed;
    r.message = "the lock's own build made other device code (" + e.deviceCodeSha256.substr(0, 16) +
                "...) than the tuned build (" + lock.deviceCodeSha256.substr(0, 16) + "...)" +
                (units.empty() ? "" : ": " + units) + "; log: " + e.log;
    return r;
  }
  if (snapshot) {
    std::string err;
    r.snapshot = snapshotBenchmark(cfg, cfg.runDir + "/rehearsal/" + id + "/program", err);
    if (!r.snapshot) {
      r.reason = reason::RehearsalFailed;
      r.message = "the lock's own build made no benchmark program to measure: " + err + "; log: " + e.log;
      return r;
    }
  }
  r.ok = true;
  r.sections = sectionsOf(e, cfg, onlySm);
  return r;
}

} // namespace

Rehearsal rehearseWinner(CandidateBuilder &builder, const TuneConfig &cfg, const Evaluation &baseline,
                         const Evaluation &win, bool snapshot) {
  std::string dir = cfg.runDir + "/rehearsal/" + win.candidateId;
  removeTree(dir);
  std::string lockPath = dir + "/rehearsal.ciq.lock", err;
  auto lock = makeLock(cfg, baseline, win, lockPath, err);
  // The tuned build applied the winner to every architecture it compiled;
  // narrowed, it compiled (and its device code covers) the measured one alone.
  if (lock && cfg.narrowTo.empty())
    lock->section.clear();
  if (!lock || !writeLockfile(lockPath, *lock, err)) {
    Rehearsal r;
    r.reason = reason::RehearsalFailed;
    r.message = "cannot write the lock to rehearse: " + err;
    return r;
  }
  return rehearse(builder, cfg, *lock, lockPath, win.candidateId, snapshot);
}

Rehearsal rehearseLock(CandidateBuilder &builder, const TuneConfig &cfg, const Lockfile &lock,
                       const std::string &lockPath, bool snapshot) {
  return rehearse(builder, cfg, lock, lockPath, lock.candidateId + "-validate", snapshot);
}

} // namespace ciq
