// The commands the build tool really runs for a target's CUDA compiles, as
// opposed to compile_commands.json, which leaves out RULE_LAUNCH_COMPILE
// launchers and knows nothing of compiles CMake does not own (FindCUDA's
// custom commands). `ciq doctor` checks them: ciq-ptxas must run first, or
// no candidate reaches the compiler.
#pragma once
#include "engine/config/Config.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct CompileLine {
  std::string source;               // the .cu file it compiles
  std::vector<std::string> argv;    // the command, split as the shell would (after any `cd dir &&`)
};

// The CUDA compile commands of cfg.target (and tune_targets) as Ninja
// (`ninja -t commands`) or Make (`make -n -B`) would run them, read without
// building anything. nullopt with `error` when the generator is neither or the
// build tool fails.
std::optional<std::vector<CompileLine>> realCompileLines(const TuneConfig &cfg, std::string &error);

// "" when ciq-ptxas (as the launcher, or as an nvcc stand-in) runs the compile
// first; else why not, with the fix.
std::string compileLineProblem(const CompileLine &line);

} // namespace ciq
