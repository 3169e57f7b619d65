// The build configuration a lock was tuned in (docs/lockfile.md, "build"):
// CMake's build type and the two nvcc flags that change what ptxas does with
// the winner's options. -G makes ptxas refuse any optimisation level but 0
// ("Optimized debugging not supported"), so a Release lock applied to a Debug
// build breaks it; -lineinfo changes the device code the lock's SHA-256 covers.
#pragma once
#include "common/Lockfile.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct BuildMode {
  std::string buildType;   // CMAKE_BUILD_TYPE ("" when not known, e.g. a multi-config generator)
  bool deviceDebug = false; // -G / --device-debug (ptxas -g)
  bool lineinfo = false;    // -lineinfo / --generate-line-info
  // Sources compiled with -G or -lineinfo when not every compile was (a
  // set_source_files_properties on one file): each compile is judged by its
  // own source's mode, so the other sources still take the lock. Paths as the
  // lock keeps units: relative to the lock's folder.
  std::vector<std::string> deviceDebugUnits, lineinfoUnits;
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
// The mode the tune compiled `source` (absolute) in: the lock's, with its
// per-source -G or -lineinfo added where `source` is one of those units
// (relative to `lockDir`, the lock's folder).
BuildMode buildModeOfSource(const BuildMode &lock, const std::string &source, const std::string &lockDir);
// `path` made absolute against `base`, "." and ".." resolved.
std::string unitPath(const std::string &path, const std::string &base);
bool modePerSource(const BuildMode &m);

} // namespace ciq
