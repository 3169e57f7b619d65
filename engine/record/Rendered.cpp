#include "engine/record/Rendered.h"

#include "common/Lockfile.h"
#include "engine/record/RunSchema.h"

namespace ciq {

std::string Rendered::summary() const {
  std::vector<std::pair<std::string, std::string>> acf;
  for (const auto &a : acfs)
    acf.push_back({a.stage, a.path});
  return renderedSummary(ptxas, nvcc, defines, acf, kernels, units);
}

std::string Rendered::hash() const {
  std::vector<std::pair<std::string, std::string>> acf;
  for (const auto &a : acfs)
    acf.push_back({a.stage, a.sha256});
  return candidateHashOf(ptxas, nvcc, defines, acf, kernels, units);
}

} // namespace ciq
