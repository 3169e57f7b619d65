#include "engine/record/AfterSearch.h"
#include "common/JsonRead.h"

namespace ciq {
using nlohmann::json;

json attributionToJson(const std::vector<AttributionRow> &rows) {
  json out = json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const AttributionRow &r = rows[i];
    json j = {{"name", r.name}, {"controls", r.controls}, {"median", r.median}, {"cv_percent", r.cvPercent},
              {"runs", r.runs}};
    if (i > 0) {
      j["speedup"] = r.speedup ? json(*r.speedup) : json(); // null: undefined
      j["p_value"] = r.pValue ? json(*r.pValue) : json();
      j["significant"] = r.significant;
      j["verdict"] = r.verdict;
    }
    out.push_back(j);
  }
  return out;
}

namespace {

// A number or null (nullopt); false with error for anything else.
bool optionalNumber(const json &row, const char *key, std::optional<double> &out, std::string &error,
                    const std::string &where) {
  json v;
  JsonFields f(row, where);
  if (!f.opt(key, v).ok())
    return error = f.error(), false;
  if (v.is_null())
    return true;
  if (!v.is_number())
    return error = where + ": \"" + key + "\": expected a number or null, found " + jsonKind(v), false;
  out = v.get<double>();
  return true;
}

} // namespace

bool attributionFromJson(const json &rows, std::vector<AttributionRow> &out, std::string &error,
                         const std::string &where) {
  std::vector<json> items;
  std::string why;
  if (!readJson(rows, items, why))
    return error = where + ": " + why, false;
  out.clear();
  for (size_t i = 0; i < items.size(); ++i) {
    AttributionRow r;
    std::string at = where + "[" + std::to_string(i) + "]";
    JsonFields f(items[i], at);
    f.opt("name", r.name).opt("controls", r.controls).opt("median", r.median).opt("cv_percent", r.cvPercent)
        .opt("runs", r.runs).opt("significant", r.significant).opt("verdict", r.verdict);
    if (!f.ok())
      return error = f.error(), false;
    if (!optionalNumber(items[i], "speedup", r.speedup, error, at) ||
        !optionalNumber(items[i], "p_value", r.pValue, error, at))
      return false;
    out.push_back(r);
  }
  return true;
}

json minimizeStepsToJson(const std::vector<MinimizeStep> &steps) {
  json out = json::array();
  for (const auto &s : steps)
    out.push_back({{"removed", s.removed}, {"dropped", s.dropped}, {"detail", s.detail}});
  return out;
}

bool minimizeStepsFromJson(const json &steps, std::vector<MinimizeStep> &out, std::string &error,
                           const std::string &where) {
  std::vector<json> items;
  std::string why;
  if (!readJson(steps, items, why))
    return error = where + ": " + why, false;
  out.clear();
  for (size_t i = 0; i < items.size(); ++i) {
    MinimizeStep s;
    JsonFields f(items[i], where + "[" + std::to_string(i) + "]");
    if (!f.opt("removed", s.removed).opt("dropped", s.dropped).opt("detail", s.detail).ok())
      return error = f.error(), false;
    out.push_back(s);
  }
  return true;
}

} // namespace ciq
