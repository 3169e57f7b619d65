// Freezing the winner: ciq.lock beside the project, ACFs in ciq-acf/.
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"
#include "common/Lockfile.h"
#include "common/LockSections.h"

#include <optional>

#include <string>
#include <vector>

namespace ciq {

// The CUDA compiler of a configured build tree (CMAKE_CUDA_COMPILER), else nvcc on PATH.
std::string cudaCompilerOf(const std::string &buildDir);

// The lock of `win` as it would be written at `lockPath` (its ACFs copied
// into ciq-acf/ beside it); nullopt with `error` when an ACF cannot be copied.
std::optional<Lockfile> makeLock(const TuneConfig &cfg, const Evaluation &baseline, const Evaluation &win,
                                 const std::string &lockPath, std::string &error,
                                 const nlohmann::json &validation = nlohmann::json::object());

// What writing the lock did to its sections (common/LockSections.h).
struct LockWritten {
  std::vector<std::string> added;      // the sections this tune wrote
  std::vector<std::string> sections;   // every section the lock now has
  std::vector<std::string> replaced;   // of `added`, those that replaced an earlier winner
  bool replacedOneWinner = false;      // the lock was of schema 1 (one winner for all), replaced whole
};

// Reads the lockfile at `path` (none: a new one), merges `added` into it
// (common/LockSections.h: mergeSections) and writes it, `set` the result;
// while the lock's folder is held, so that two writers never lose each
// other's sections. A lock that does not read is refused, not overwritten.
bool addToLockfile(const std::string &path, const LockSet &added, SectionMerge &merge, LockSet &set,
                   std::string &error, int *errNo = nullptr);

// Writes or replaces the winner's section(s) of cfg.lockfile and keeps the
// others (a lock that does not read is refused, not overwritten).
// errNo (when given): the errno of a lock write the file system refused.
bool writeLock(const TuneConfig &cfg, const Evaluation &baseline, const Evaluation &winner, std::string &error,
               const nlohmann::json &validation = nlohmann::json::object(), int *errNo = nullptr,
               LockWritten *written = nullptr);

} // namespace ciq
