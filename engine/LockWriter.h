// Freezing the winner: ciq.lock beside the project, ACFs in ciq-acf/.
#pragma once
#include "Config.h"
#include "Evaluation.h"

#include <string>

namespace ciq {

// Versions as "13.0.88", from `<tool> --version` ("release 13.0, V13.0.88").
std::string compilerVersion(const std::string &tool);
// The CUDA compiler of a configured build tree (CMAKE_CUDA_COMPILER), else nvcc on PATH.
std::string cudaCompilerOf(const std::string &buildDir);

bool writeLock(const TuneConfig &cfg, const Evaluation &baseline, const Evaluation &winner, std::string &error,
               const nlohmann::json &validation = nlohmann::json::object());

} // namespace ciq
