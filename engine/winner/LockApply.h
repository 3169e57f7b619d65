// Whether a lockfile applies to one CMake target, and the compile arguments
// that apply it: the logic behind ciq_apply_lock() (cmake-module/CompileIQ.cmake
// runs `ciq lock render` and only turns its lines into target properties).
// docs/lockfile.md, "How ciq_apply_lock checks and applies a lock".
#pragma once
#include <string>
#include <vector>

namespace ciq {

// What CMake knows about the build and the target applying the lock.
struct LockBuild {
  std::string target;                     // the target ciq_apply_lock() was called for
  std::string buildDir;                   // CMAKE_BINARY_DIR, for the "tune again" hint
  std::string policy = "error";           // error | warn: only changes the hint of a broken lock
  std::string nvccPath, nvccVersion;      // CMAKE_CUDA_COMPILER[_VERSION]; version "" when CUDA is not enabled
  std::string ptxasVersion;               // `ptxas --version` beside nvcc ("unknown" when unreadable)
  std::vector<std::string> architectures; // the target's CUDA_ARCHITECTURES, resolved; empty: nvcc's choice
  // The CUDA flags CMake knows at configure time, token by token:
  // CMAKE_CUDA_FLAGS, CMAKE_CUDA_FLAGS_<CONFIG>, the target's and its
  // folder's COMPILE_OPTIONS (generator expressions unevaluated).
  std::vector<std::string> cudaFlags;
  std::string buildType;                  // CMAKE_BUILD_TYPE; "" when unset or multi-config
  bool multiConfig = false;               // the configuration is chosen at build time
  // The target's CUDA sources (absolute), when configure knows them: each
  // unit of the lock must name one of them. Empty: not checked.
  std::vector<std::string> sources;
};

struct LockRender {
  std::vector<std::string> problems; // every way the lock does not apply, one line each
  std::string candidate;             // winner.candidate_id
  std::vector<std::string> lockArchitectures;
  bool throughWrapper = false;          // the architectures are only known per compile: ciq-ptxas --lock
  std::string skip;                     // another build configuration: build without the lock, this says why
  std::string warning;                  // applies, but the module warns (a lock without lock_sha256)
  std::string wrapperReason;            // why through the wrapper, when CUDA_ARCHITECTURES is fixed
  std::vector<std::string> options;     // CUDA compile options, in order
  std::vector<std::string> defines;     // NAME=VALUE
  std::vector<std::string> depends;     // files whose change must reconfigure (the ACFs)
  std::vector<std::string> tuneTargets; // the lock's tune_targets
  // A lock of sections: lines the module prints once at configure. notes: an
  // architecture the target compiles without a section (the defaults);
  // warnings: a section for an architecture the target does not compile.
  std::vector<std::string> notes, warnings;
};

// `lockPath` absolute. Never fails: what is wrong is in `problems`.
LockRender renderLockForBuild(const std::string &lockPath, const LockBuild &build);

} // namespace ciq
