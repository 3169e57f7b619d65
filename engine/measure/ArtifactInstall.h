// The runner's half of benchmark.artifacts (engine/compile/BuildArtifacts.h):
// a re-measured command carries the manifest of its build's copies, and each
// run puts them in place first. Depends on common/ only, like the runner.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace ciq {

// One file of a build's artifacts: its copy, and where the benchmark loads it.
struct ArtifactCopy {
  std::string copy, place;
};

// A manifest (a JSON array of {"copy", "place"}) read typed: a damaged or
// hand-edited one (a resumed tune reads the copies of a killed run) is one
// error line naming the file, never an abort.
std::optional<std::vector<ArtifactCopy>> readArtifactManifest(const std::string &path, std::string &error);
bool writeArtifactManifest(const std::string &path, const std::vector<ArtifactCopy> &files, std::string &error);

// The manifest a command carries (withArtifacts), or "".
std::string artifactManifestOf(const std::vector<std::string> &cmd);

// Copies `from` to `to` with its permissions; false with `error` naming both.
bool copyFileKeepingMode(const std::string &from, const std::string &to, std::string &error);

// The command that runs `cmd` with the build's artifacts of `manifest`:
// `/usr/bin/env CIQ_BUILD_ARTIFACTS=<manifest> cmd...` (the runner reads the
// variable back, installArtifactsFor; logs show which build ran).
std::vector<std::string> withArtifacts(const std::string &manifest, const std::vector<std::string> &cmd);

// Before a run of `cmd`: when it names a manifest (withArtifacts), each copy
// is put in its place (copied beside it, then renamed over it: a process
// that still maps the old file keeps it whole). False with `error` when one
// cannot be.
bool installArtifactsFor(const std::vector<std::string> &cmd, std::string &error);

} // namespace ciq
