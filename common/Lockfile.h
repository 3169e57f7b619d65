// ciq.lock: the frozen winner (docs/lockfile.md). JSON with keys in sorted
// order (nlohmann's default object is a std::map), so it diffs well.
#pragma once
#include "common/Protocol.h"
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// 2: a section per SASS architecture ("architectures": {"sm_80": {...}}),
// each its own winner (common/LockSections.h). 1: one winner for every
// architecture of the build; still read, as one section for all of them.
constexpr int kLockSchemaVersion = 2;
constexpr int kLockSchemaOneWinner = 1;

struct LockAcf {
  std::string stage;    // "ptxas" or "nvcc"
  std::string file;     // path relative to the lockfile: ciq-acf/<sha256>.acf
  std::string sha256;
};

// kernel_units: kernel (kernelKey) -> translation unit (the source, relative
// to the lock's folder) -> the architectures whose PTX had the kernel.
using KernelUnits = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

// One winner: a format-1 lock whole, or one architecture's section of a
// format-2 lock (LockSections.h), read and written by the same code.
struct Lockfile {
  int schemaVersion = kLockSchemaVersion;
  // The architecture this winner is for ("sm_90"); "" in a format-1 lock,
  // whose one winner applies to every architecture of `architectures`.
  std::string section;
  // How the winner was measured: "gpu" (a runtime objective on that
  // architecture's GPU) or "compile-only" (ptxas statistics; the
  // architecture from tune_architectures or the build); "" when not said.
  std::string measured;
  std::string engineVersion;
  std::string createdAt;                 // ISO-8601 UTC
  std::string target;
  std::string nvccPath, nvccVersion;     // version as "13.0.88" (from nvcc --version)
  std::string ptxasPath, ptxasVersion;
  std::vector<std::string> architectures; // e.g. ["sm_90"]
  nlohmann::json gpu = nlohmann::json::object();         // name, driver, clocks (runtime runs)
  nlohmann::json searchSpace = nlohmann::json::object(); // provider, tag, sha256, controls
  // The winner.
  std::string candidateId;
  std::string candidateHash;
  nlohmann::json controls = nlohmann::json::object();    // control name -> value
  std::vector<std::string> ptxasOptions;
  std::vector<std::string> nvccOptions;
  std::vector<std::string> defines;                     // NAME=VALUE
  std::vector<LockAcf> acfs;
  // Per-kernel controls, keyed by kernelKey (common/KernelDirective.h): they
  // reach a build only through ciq-ptxas --lock, never a compile line.
  std::vector<KernelDirective> kernelDirectives;
  // Per-translation-unit controls (common/UnitOptions.h): likewise only
  // through ciq-ptxas --lock, which adds them to the compiles of their unit.
  std::vector<UnitOptions> unitOptions;
  // kernel_units: where each per-kernel control took effect in the winner's
  // build. Empty in a lock written before it (ciq-ptxas --lock then cannot
  // tell a kernel renamed or removed, and applies what it finds, as it did).
  KernelUnits kernelUnits;
  std::string deviceCodeSha256;
  nlohmann::json score = nlohmann::json::object();      // objective, unit, baseline, winner, speedup, cv, p
  nlohmann::json extra = nlohmann::json::object();      // forward-compatible fields kept on rewrite
  // The lock carries lock_sha256 (every lock ciq writes does). False: written
  // by hand or by a ciq before lock_sha256; read all the same (every field
  // typed, the winner checked by candidate_hash), and readers that print say
  // unsealedLockWarning() once.
  bool sealed = true;
};

// The candidate hash: SHA-256 of the compact JSON (keys sorted)
// {"acfs":[[stage,sha256],...],"defines":[...],"nvcc":[...],"ptxas":[...]},
// plus "kernels":[[kernel,directive,value],...] when there are per-kernel
// controls (absent otherwise, so the hashes of winners without them stay).
// Equal hashes mean the compiler sees the same thing; a lock whose winner does
// not hash to its candidate_hash was edited by hand and is refused.
std::string candidateHashOf(const std::vector<std::string> &ptxas, const std::vector<std::string> &nvcc,
                            const std::vector<std::string> &defines,
                            const std::vector<std::pair<std::string, std::string>> &acfStageAndSha256,
                            const std::vector<KernelDirective> &kernels = {},
                            const std::vector<UnitOptions> &units = {});

// The key of the lock's own hash: SHA-256 of the compact JSON of every other
// key (sorted), so an edit anywhere (score included) is refused, not only one
// of the winner's options. lockToJson() writes it.
constexpr const char *kLockShaKey = "lock_sha256";
std::string lockSha256Of(const nlohmann::json &lock);
// True when `lock` has no lock_sha256 (hand-written, or older) or it matches.
bool checkLockSha256(const nlohmann::json &lock, const std::string &path, std::string &error);
// The one warning line for a lock without lock_sha256: what it means and the
// command that seals it.
std::string unsealedLockWarning(const std::string &path);
// `ciq lock seal`: adds lock_sha256 to a lock that has none, after reading it
// as every reader does (types, candidate_hash); nothing else changes. False
// with one line when it does not read, or cannot be written. *alreadySealed
// tells a lock that carried a matching hash already (left as it was).
bool sealLockfile(const std::string &path, bool &alreadySealed, std::string &error);

// One winner as JSON: a format-1 lock's keys (schema_version, architectures
// and lock_sha256 aside), which is also a format-2 section's body.
nlohmann::json winnerToJson(const Lockfile &l);
// The reverse: `j` holds a winner's keys plus "target" and "architectures";
// `where` names it in errors (the file, or "<file>: architectures: sm_90").
// Checks shape and types, and (checkIntegrity) candidate_hash; not lock_sha256.
std::optional<Lockfile> winnerFromJson(nlohmann::json j, const std::string &where, bool checkIntegrity,
                                       std::string &error);
// The file as one JSON object (bounded nesting), or one line why not.
std::optional<nlohmann::json> parseLockJson(const std::string &path, std::string &error);

// The lock of one winner (LockSections.h writes a section per architecture
// of l.architectures, or l.section's alone).
nlohmann::json lockToJson(const Lockfile &l);
// A lock of one winner: a format-1 lock, or a format-2 lock of one section;
// a lock of several sections is an error that says to read it by section
// (readLockSet). On failure one error line names the file and key and says
// what to do. checkIntegrity false: for stripping the arguments
// ciq_apply_lock() applied from an edited lock (CMake applies it without the
// hash check).
std::optional<Lockfile> readLockfile(const std::string &path, std::string &error, bool checkIntegrity = true);
// errNo (when given): the errno of a write that failed (writeFileAtomically).
bool writeLockfile(const std::string &path, const Lockfile &l, std::string &error, int *errNo = nullptr);

// The default lockfile of `target` in `dir`: <dir>/<target>.ciq.lock, so two
// tuned targets of one folder never share a lock; an older <dir>/ciq.lock is
// still used when it exists, the new name does not, and it does not name
// another target (as ciq_apply_lock() and ciq_tune() choose it).
std::string defaultLockfilePath(const std::string &dir, const std::string &target);

// The winner as the candidate message the wrapper injects; ACF paths made
// absolute against the lockfile's folder.
CandidateMessage lockToCandidate(const Lockfile &l, const std::string &lockPath);

// The compiler arguments ciq_apply_lock() adds to a target for this lock, token
// for token as cmake-module/CompileIQ.cmake renders them (-Xptxas=<opt> with
// commas escaped, nvcc options, -D<define>, --apply-controls=<abs ACF path>).
std::vector<std::string> lockCompileArgs(const Lockfile &l, const std::string &lockPath);

} // namespace ciq
