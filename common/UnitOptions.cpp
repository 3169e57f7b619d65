#include "common/UnitOptions.h"
#include "common/FoldUnitOptions.h"

#include "common/JsonRead.h"

#include <llvm/ADT/SmallString.h>
#include <llvm/Support/Path.h>

namespace ciq {

std::string normalUnit(const std::string &path) {
  llvm::SmallString<256> p(llvm::sys::path::convert_to_slash(path));
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true, llvm::sys::path::Style::posix);
  return std::string(p.str());
}

bool unitMatches(const std::string &unit, const std::string &source) {
  if (unit.empty() || source.empty())
    return false;
  std::string u = normalUnit(unit), s = normalUnit(source);
  if (s == u)
    return true;
  return s.size() > u.size() && s.compare(s.size() - u.size(), u.size(), u) == 0 && s[s.size() - u.size() - 1] == '/';
}

UnitOptions optionsForSource(const std::vector<UnitOptions> &units, const std::string &source) {
  UnitOptions out;
  out.unit = source;
  for (const auto &u : units)
    if (unitMatches(u.unit, source)) {
      out.ptxas.insert(out.ptxas.end(), u.ptxas.begin(), u.ptxas.end());
      out.nvcc.insert(out.nvcc.end(), u.nvcc.begin(), u.nvcc.end());
    }
  return out;
}

void to_json(nlohmann::json &j, const UnitOptions &v) {
  j = nlohmann::json{{"unit", v.unit}, {"ptxas", v.ptxas}, {"nvcc", v.nvcc}};
}

bool readJson(const nlohmann::json &j, UnitOptions &v, std::string &why) {
  JsonFields f(j, "");
  f.need("unit", v.unit).opt("ptxas", v.ptxas).opt("nvcc", v.nvcc);
  if (!f.ok())
    why = f.error().substr(2);
  return f.ok();
}

void foldUnitOptions(CandidateMessage &c, const std::string &source) {
  UnitOptions u = optionsForSource(c.unitOptions, source);
  c.ptxasOptions.insert(c.ptxasOptions.end(), u.ptxas.begin(), u.ptxas.end());
  c.nvccOptions.insert(c.nvccOptions.end(), u.nvcc.begin(), u.nvcc.end());
  c.unitOptions.clear();
}

} // namespace ciq
