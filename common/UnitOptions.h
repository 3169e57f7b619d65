// Per-translation-unit controls (issue 40 item 2; docs/search-space.md,
// "Per-translation-unit controls"): ptxas and nvcc options that reach the
// compiles of one CUDA source only, so each object of a target can get its
// own options. Shared by the engine (which renders them), the wrapper
// (which adds them to the compile of the source they name, in tuning runs
// and lock mode alike) and the lockfile.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ciq {

struct UnitOptions {
  // The source as the space names it: a path relative to the project
  // ("src/a.cu") or a file name ("a.cu"); it matches a compile whose source
  // path ends with it at a '/' (unitMatches).
  std::string unit;
  std::vector<std::string> ptxas;   // ptxas arguments (through -Xptxas on the nvcc route)
  std::vector<std::string> nvcc;    // nvcc arguments
  bool operator==(const UnitOptions &o) const { return unit == o.unit && ptxas == o.ptxas && nvcc == o.nvcc; }
};

// `path` with "." and "x/.." components and doubled slashes removed
// ("./src//a.cu" -> "src/a.cu"); a relative path that leaves its folder
// keeps its leading "..".
std::string normalUnit(const std::string &path);

// Whether a compile of `source` (as the compile line names it, relative or
// absolute) is the unit `unit` names.
bool unitMatches(const std::string &unit, const std::string &source);

// The options of every entry of `units` that names `source`, in order.
UnitOptions optionsForSource(const std::vector<UnitOptions> &units, const std::string &source);

void to_json(nlohmann::json &j, const UnitOptions &v);
bool readJson(const nlohmann::json &j, UnitOptions &v, std::string &why);

} // namespace ciq
