// Which GPU architecture a tune measures on, and what the build compiles for
// it (docs/config.md, "Architectures"). A tuned ptxas option only reaches the
// code that runs when the build has SASS for the GPU: with PTX alone the
// driver JIT-compiles it, and no ptxas option of the build applies.
#pragma once
#include "engine/compile/BuildDriver.h"
#include "engine/config/Config.h"

#include <string>
#include <vector>

namespace ciq {

struct MeasuredArchitecture {
  std::string arch;     // "sm_90"; "" when neither ciq.yaml nor a GPU says
  std::string source;   // where it came from, for messages
};

// tune_architectures: from ciq.yaml first, else the first GPU's
// `nvidia-smi --query-gpu=compute_cap` (9.0 -> sm_90).
MeasuredArchitecture measuredArchitecture(const TuneConfig &cfg);

// The SASS architectures the compile lines of `objects` produce, as
// ciq-ptxas parses nvcc's arguments ("sm_80", "sm_90"), sorted.
std::vector<std::string> sassArchitectures(const std::vector<CudaObject> &objects);

// The build configuration the objects are compiled in: CMAKE_BUILD_TYPE of
// the build tree, -G and -lineinfo of any compile line; nullopt when no
// compile line is known (a command build before its first compile).
std::optional<BuildMode> compileBuildMode(const std::vector<CudaObject> &objects, const std::string &buildDir);

// Whether the build's SASS covers `arch`: named, or through nvcc's meta
// values (CUDA_ARCHITECTURES all, all-major, native, which the compile line
// keeps as -arch=all-major and sassArchitectures() as "all-major"): all
// covers every architecture, all-major every sm_X0, native the GPU here,
// which is the one measured (issue 50 item 5: "compiles SASS for all-major
// but not for sm_90").
bool coversArchitecture(const std::vector<std::string> &built, const std::string &arch);

// A runtime tune measured on an architecture the build has no SASS for (a
// hard-coded CUDA_ARCHITECTURES 86 on an sm_90 GPU): the driver JIT-compiles
// the PTX at load, so no ptxas control reaches the code that runs and every
// candidate measures the same. One line that says why and what to do; ""
// when the search can reach the code (or nothing says what is measured).
std::string jitOnlyProblem(const MeasuredArchitecture &m, const std::vector<std::string> &built,
                           const std::string &configPath);

// narrow_architectures with nothing to narrow to (no GPU, no
// tune_architectures) and several architectures in the build: every tuning
// compile would build all of them (cuda-samples' nine, the baseline killed
// at the compile timeout; issue 41 item 6). One line naming ciq_tune()'s
// TUNE_ARCHITECTURES (the generated ciq.yaml is not to be edited); "" when
// the build has one architecture or none is known.
std::string narrowWithoutTargetProblem(const std::vector<std::string> &built, const std::string &configPath);

// The warnings to print before the baseline: no SASS for the measured
// architecture (PTX JIT), or, when not narrowing, SASS for several others
// (each candidate compiles them all).
std::vector<std::string> architectureWarnings(const MeasuredArchitecture &m, const std::vector<std::string> &built,
                                              bool narrow, const std::string &configPath);

} // namespace ciq
