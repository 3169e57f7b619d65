// Freezing the winner: ciq.lock beside the project, ACFs in ciq-acf/.
#pragma once
#include "engine/config/Config.h"
#include "engine/record/Evaluation.h"

#include <string>

namespace ciq {

// The CUDA compiler of a configured build tree (CMAKE_CUDA_COMPILER), else nvcc on PATH.
std::string cudaCompilerOf(const std::string &buildDir);

bool writeLock(const TuneConfig &cfg, const Evaluation &baseline, const Evaluation &winner, std::string &error,
               const nlohmann::json &validation = nlohmann::json::object());

} // namespace ciq
