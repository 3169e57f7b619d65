// The numerics options a build's own CUDA compiles already set
// (-use_fast_math, --ftz, --prec-div, --prec-sqrt, --fmad), read from the
// compile lines the build tool runs (CompileLines.h). A project that
// compiles with its own -use_fast_math has nothing to gain from nvcc's
// fast-math controls and only exact-math candidates to lose (1.6-1.8x
// slower, measured on the H200, issue 32): the baseline's values are the
// build's, and the space says so.
#pragma once
#include "engine/compile/CompileLines.h"
#include "engine/config/Config.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ciq {

struct BuildNumerics {
  // nvcc-13.0-default's control name (use-fast-math, ftz, prec-div,
  // prec-sqrt, fmad) -> the value every CUDA compile line gives it, directly
  // or through -use_fast_math ("on" for use-fast-math, "true"/"false").
  std::map<std::string, std::string> fixed;
  // Controls some compile lines set and others do not (or set differently):
  // the space keeps them, the note names them.
  std::set<std::string> mixed;
  // The options as the compile lines write them, in order of first sight
  // ("-use_fast_math", "--ftz=true").
  std::vector<std::string> written;
  bool any() const { return !fixed.empty() || !mixed.empty(); }
};

// What the lines set; an empty BuildNumerics for no lines.
BuildNumerics readBuildNumerics(const std::vector<CompileLine> &lines);

// Brings cfg's space in line with what the build sets: in the default space
// (cfg.spaceIsDefault) a numerics control the build fixes is dropped (a
// candidate could only undo the build's choice); in a space the user wrote,
// the control stays and its compiler_default becomes the build's value
// (what an unset control means in constraints and in the winner's notes).
// Returns the one line the commands print ("" when the build sets none of
// them), e.g. "space: the build compiles with -use_fast_math (...)".
std::string applyBuildNumerics(TuneConfig &cfg, const BuildNumerics &build);

// Whether cfg's space or objective makes the build's numerics matter: the
// space has a numerics control (changes_results, rendered by nvcc), or it is
// a default space of a runtime search (whose note names them).
bool numericsMatter(const TuneConfig &cfg);

} // namespace ciq
