// The rehearsal of a winner before its lock is written (issue 48): the
// search judges candidates on shortcut builds (PTX reuse, objects never
// assembled, no device link), so the build the lock makes happens here first,
// exactly as the lock will make it: the lock about to be written, applied
// through ciq-ptxas --lock (which renders the same compile arguments a
// ciq_apply_lock() compile line carries, and writes the per-kernel
// directives), every object assembled, the device link and the target's link
// (CandidateBuilder::buildLocked). Its device code, read from the objects on
// disk as `ciq lock verify` reads it, must be what was tuned. A rehearsal
// that fails makes that winner INVALID (rehearsal_failed) with the first
// error line; no lock is written that its own build cannot reproduce. For a
// runtime objective the rehearsed program is snapshotted, and the winner's
// last measurement (the attribution's, or `ciq validate`'s) runs it.
#pragma once
#include "common/Lockfile.h"
#include "engine/compile/CandidateBuild.h"
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct Rehearsal {
  bool ok = false;
  std::string reason;    // rehearsal_failed, or disk_fault (not the winner's doing)
  std::string message;   // one line: what failed, the first error line or the units that differ, the log
  double buildMs = 0;    // the lock route's build
  std::string lockPath;  // the lock it built through
  std::optional<std::vector<std::string>> snapshot;   // the rehearsed benchmark program (runtime objectives)
  nlohmann::json sections;   // RehearsalRecord::sections, of a build that matched
};

// `win` as its lock would be written (makeLock) into <run dir>/rehearsal/,
// built through that lock; its device code must be win.deviceCodeSha256
// (per object: win.objects). `snapshot`: copy the benchmark program aside.
Rehearsal rehearseWinner(CandidateBuilder &builder, const TuneConfig &cfg, const Evaluation &baseline,
                         const Evaluation &win, bool snapshot);

// `ciq validate`: the lock at lockPath itself, whose winner.device_code_sha256
// the build must reproduce.
Rehearsal rehearseLock(CandidateBuilder &builder, const TuneConfig &cfg, const Lockfile &lock,
                       const std::string &lockPath, bool snapshot);

} // namespace ciq
