// Benchmarks that import what the build makes (a Python extension module, a
// shared library) instead of running it: benchmark.artifacts names those
// files (relative to the build directory, globs allowed: the module's ABI tag,
// `ext*.so`). Each build's copies are kept beside its program copies, and the
// interleaved re-measurements (finalists, minimization, attribution, ciq
// validate) put a build's copies back in place before each of its runs, so
// `import ext` (from the script's folder, site-packages or PYTHONPATH) and
// the loader load that build's own file, wherever the benchmark looks for it.
#pragma once
#include "engine/config/Config.h"
#include "engine/measure/ArtifactInstall.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

// Copies the files benchmark.artifacts matches now, and the shared libraries
// the built `programs` load from the build tree (ProgramLibraries.h: a
// SHARED library of the project), into dir/artifacts/ and writes
// dir/artifacts.json (copy -> place); returns that manifest's path, "" when
// there is nothing to copy, nullopt with one error line (naming
// benchmark.artifacts) when a pattern matches no file or a copy fails.
std::optional<std::string> snapshotArtifacts(const TuneConfig &cfg, const std::string &dir, std::string &error,
                                             const std::vector<std::string> &programs = {});

} // namespace ciq
