// benchmark.command[0] may be any program: a build output, a script, an
// interpreter (python3) or a binary outside the build. Found the way a user
// expects, and checked before the baseline is measured.
#pragma once
#include "engine/config/Config.h"

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

// Copies what the build makes of the benchmark command (command[0] and any
// argument naming an executable file in the build directory) to dir and
// returns the command that runs the copies; a program the build does not
// make runs where it is. A command with nothing to copy is an error (every
// build would run the same program), unless `runtimeSelects`: kernels
// compiled at run time, where each run's environment selects the build.
std::optional<std::vector<std::string>> snapshotBenchmark(const TuneConfig &cfg, const std::string &dir,
                                                          std::string &error, bool runtimeSelects = false);

} // namespace ciq
