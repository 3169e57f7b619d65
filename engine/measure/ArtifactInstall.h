// The runner's half of benchmark.artifacts (engine/compile/BuildArtifacts.h):
// a re-measured command carries the manifest of its build's copies, and each
// run puts them in place first. Depends on common/ only, like the runner.
#pragma once
#include <string>
#include <vector>

namespace ciq {

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
