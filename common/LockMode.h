// Lock mode (--lock FILE or CIQ_LOCK): the lockfile's winner is injected only
// after checking that it applies here.
//
// Integrity (always an error, whatever the policy): the lockfile reads and has
// the shape of docs/lockfile.md; every ACF exists and has the SHA-256 recorded.
// Applicability (policy `error`, the default, refuses; `warn` prints one
// warning and compiles without the lock): the nvcc/ptxas release equals the one
// the lock was frozen with. A lock of schema 1 (one winner): every SASS
// architecture of this invocation is one of the lock's architectures. A lock
// of sections: each architecture gets its own section's winner, one without a
// section the default compile (docs/lockfile.md, "Sections").
#pragma once
#include "common/BuildMode.h"
#include "common/Lockfile.h"
#include "common/Protocol.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ciq::wrapper {

enum class LockPolicy { Error, Warn };

// "error"/"warn"; nullopt for anything else.
std::optional<LockPolicy> parseLockPolicy(const std::string &s);

struct LockDecision {
  bool apply = false;            // inject `candidate`
  bool fail = false;             // refuse the compile with `message`
  bool skip = false;             // another build configuration: compile without the lock, `message` says why
  std::string message;           // the error, or the warning when neither apply nor fail
  CandidateMessage candidate;
  // The lock's kernel_units (Lockfile::kernelUnits) and the folder its
  // translation units are relative to: which kernels each source must still
  // have (LockKernels.h).
  KernelUnits kernelUnits;
  std::string lockDir;
  // No architecture of this compile has a section: the default compile.
  bool defaults = false;
  // A fat compile whose architectures have different sections (or some
  // none): `candidate` holds what one nvcc run shares (nvcc options, -D
  // parameters, nvcc ACFs) and this, per SASS architecture family ("sm_90"),
  // what its ptxas run gets (ptxas options and ACFs, per-kernel directives;
  // empty: the default compile) with its section's kernel_units.
  std::map<std::string, CandidateMessage> perArch;
  std::map<std::string, KernelUnits> perArchUnits;
};

// sm_90a and sm_100f are sm_90 and sm_100 with architecture-specific
// features: the same GPU, and the same controls, as the lock's sm_90.
std::string archFamily(const std::string &arch);

// nvccPath / ptxasPath: the compilers of this invocation ("" when not involved).
// warnOption: how this invocation can ask for policy warn ("--lock-policy=warn",
// or "CIQ_LOCK_POLICY=warn" for a stand-in), named in an error's hint.
// mode: this compile's -G and -lineinfo; a lock tuned with others is skipped,
// whatever the policy (a Release lock must never break a Debug build).
// source: this compile's CUDA source (absolute), judged by its own mode where
// the lock was tuned with -G or -lineinfo on some sources only.
LockDecision checkLock(const std::string &lockPath, LockPolicy policy, const std::string &nvccPath,
                       const std::string &ptxasPath, const std::vector<std::string> &sassArchs,
                       const std::string &warnOption, const BuildMode &mode = {}, const std::string &source = "");

} // namespace ciq::wrapper
