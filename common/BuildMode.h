// The build configuration a lock was tuned in (docs/lockfile.md, "build"):
// CMake's build type and the two nvcc flags that change what ptxas does with
// the winner's options. -G makes ptxas refuse any optimisation level but 0
// ("Optimized debugging not supported"), so a Release lock applied to a Debug
// build breaks it; -lineinfo changes the device code the lock's SHA-256 covers.
#pragma once
#include "common/Lockfile.h"

#include <optional>
#include <string>

namespace ciq {

struct BuildMode {
  std::string buildType;   // CMAKE_BUILD_TYPE ("" when not known, e.g. a multi-config generator)
  bool deviceDebug = false; // -G / --device-debug (ptxas -g)
  bool lineinfo = false;    // -lineinfo / --generate-line-info
};

nlohmann::json buildModeToJson(const BuildMode &m);
// The lock's "build" member; nullopt for a lock written before it was recorded.
std::optional<BuildMode> lockBuildMode(const Lockfile &l);
// "a Release build without -G" / "a build with -G -lineinfo".
std::string describeBuildMode(const BuildMode &m);
// "" when `here` compiles as the lock was tuned; else one clause naming both,
// e.g. "it was tuned in a Release build without -G; this is a Debug build with -G".
// The build types are compared only when both are known (case-insensitive, as CMake's).
std::string buildModeDifference(const BuildMode &lock, const BuildMode &here);

} // namespace ciq
