// A point of the search space and what it puts on the compiler's command
// line: the part of a candidate that a recorded run (the journal,
// results.csv, the lockfile's hash) holds. Below the search space
// (engine/config/Space.h) so that the run's model does not need the search.
//
// A point holds, per control, the index of its value in the domain, or
// kUnset: the control is left out and the compiler's default applies.
#pragma once
#include "common/KernelDirective.h"
#include "common/UnitOptions.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

constexpr int kUnset = -1;
using Point = std::vector<int>;

struct RenderedAcf {
  std::string stage;
  std::string path;     // the user's file
  std::string sha256;
};

// What a point puts on the command line.
struct Rendered {
  std::vector<std::string> ptxas;     // ptxas arguments, one token each
  std::vector<std::string> nvcc;      // nvcc arguments
  std::vector<std::string> defines;   // NAME=VALUE
  std::vector<RenderedAcf> acfs;
  // Per-kernel controls (common/KernelDirective.h), in the space's order.
  std::vector<KernelDirective> kernels;
  // Per-translation-unit controls (common/UnitOptions.h), one entry per unit.
  std::vector<UnitOptions> units;
  nlohmann::json controls = nlohmann::json::object();   // name -> value of set controls
  bool empty() const { return ptxas.empty() && nvcc.empty() && defines.empty() && acfs.empty() && kernels.empty() && units.empty(); }
  std::string summary() const;        // one line, e.g. "-Xptxas --opt-level=2 -DTILE=16"
  // SHA-256 over the rendered arguments and each ACF's bytes (by their hash):
  // equal hashes mean the compiler sees the same thing.
  std::string hash() const;
};

} // namespace ciq
