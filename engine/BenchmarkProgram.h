// benchmark.command[0] may be any program: a build output, a script, an
// interpreter (python3) or a binary outside the build. Found the way a user
// expects, and checked before the baseline is measured.
#pragma once
#include "engine/Config.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

// The program benchmark.command[0] names, as an absolute path: an absolute
// path as is, a name with a '/' relative to the benchmark's working
// directory, a bare name on PATH or else in the working directory. nullopt
// with one error line (file, line, key, what to do) when there is none.
std::optional<std::string> resolveBenchmarkProgram(const TuneConfig &cfg, std::string &error);

// True when the program is something the build makes (it lies in the build
// directory): such a program may only exist after the first build.
bool benchmarkProgramIsBuilt(const TuneConfig &cfg, const std::string &program);

// The benchmark's working directory (benchmark.working_dir, else the build directory).
std::string benchmarkWorkDir(const TuneConfig &cfg);

// Copies the benchmark executable (benchmark.command[0], when the build
// makes it) to dir and returns the command that runs the copy; a program
// the build does not make runs where it is. (Interleave.h measures the copies.)
std::optional<std::vector<std::string>> snapshotBenchmark(const TuneConfig &cfg, const std::string &dir,
                                                          std::string &error);

} // namespace ciq
