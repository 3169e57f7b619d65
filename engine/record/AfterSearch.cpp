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

// Reads an array item by item: read(item, "<where>[i]", out, error).
template <class T, class Read>
bool readEach(const json &array, std::vector<T> &out, std::string &error, const std::string &where, Read read) {
  std::vector<json> items;
  std::string why;
  if (!readJson(array, items, why))
    return error = where + ": " + why, false;
  out.clear();
  for (size_t i = 0; i < items.size(); ++i) {
    T v;
    if (!read(items[i], where + "[" + std::to_string(i) + "]", v, error))
      return false;
    out.push_back(std::move(v));
  }
  return true;
}

} // namespace

bool attributionFromJson(const json &rows, std::vector<AttributionRow> &out, std::string &error,
                         const std::string &where) {
  return readEach(rows, out, error, where, [](const json &item, const std::string &at, AttributionRow &r,
                                              std::string &error) {
    JsonFields f(item, at);
    f.opt("name", r.name).opt("controls", r.controls).opt("median", r.median).opt("cv_percent", r.cvPercent)
        .opt("runs", r.runs).opt("significant", r.significant).opt("verdict", r.verdict);
    if (!f.ok())
      return error = f.error(), false;
    return optionalNumber(item, "speedup", r.speedup, error, at) && optionalNumber(item, "p_value", r.pValue, error, at);
  });
}

json minimizeStepsToJson(const std::vector<MinimizeStep> &steps) {
  json out = json::array();
  for (const auto &s : steps)
    out.push_back({{"removed", s.removed}, {"dropped", s.dropped}, {"detail", s.detail}});
  return out;
}

bool minimizeStepsFromJson(const json &steps, std::vector<MinimizeStep> &out, std::string &error,
                           const std::string &where) {
  return readEach(steps, out, error, where, [](const json &item, const std::string &at, MinimizeStep &s,
                                               std::string &error) {
    JsonFields f(item, at);
    if (!f.opt("removed", s.removed).opt("dropped", s.dropped).opt("detail", s.detail).ok())
      return error = f.error(), false;
    return true;
  });
}

json minimizeTrialToJson(const MinimizeTrial &t) {
  return {{"op", "minimize_trial"}, {"from", t.from},       {"current", t.current},
          {"reduced", t.reduced},  {"worse", t.worse}, {"detail", t.detail}};
}

bool minimizeTrialFromJson(const json &j, MinimizeTrial &t, std::string &error, const std::string &where) {
  JsonFields f(j, where);
  if (!f.need("from", t.from).need("current", t.current).need("reduced", t.reduced).need("worse", t.worse)
           .opt("detail", t.detail)
           .ok())
    return error = f.error(), false;
  return true;
}

json rehearsalToJson(const RehearsalRecord &r) {
  json j = {{"op", "rehearsal"}, {"candidate_id", r.candidateId}, {"candidate_hash", r.candidateHash},
            {"ok", r.ok}, {"build_ms", r.buildMs}};
  if (!r.ok)
    j.update({{"reason", r.reason}, {"message", r.message}});
  if (!r.snapshot.empty())
    j["snapshot"] = r.snapshot;
  if (r.sections.is_object())
    j["sections"] = r.sections;
  return j;
}

bool rehearsalFromJson(const json &j, RehearsalRecord &r, std::string &error, const std::string &where) {
  JsonFields f(j, where);
  if (!f.need("candidate_id", r.candidateId).need("candidate_hash", r.candidateHash).need("ok", r.ok)
           .opt("build_ms", r.buildMs).opt("reason", r.reason).opt("message", r.message).opt("snapshot", r.snapshot)
           .ok())
    return error = f.error(), false;
  if (auto s = j.find("sections"); s != j.end() && s->is_object())
    r.sections = *s;
  return true;
}

} // namespace ciq
