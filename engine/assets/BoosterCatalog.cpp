#include "engine/assets/BoosterCatalog.h"

#include "engine/assets/AssetCache.h"
#include "common/JsonRead.h"

#include <set>
#include <sstream>

namespace ciq {

using nlohmann::json;

const BoosterPack *BoosterCatalog::find(const std::string &packId) const {
  for (const auto &p : packs)
    if (p.packId == packId)
      return &p;
  return nullptr;
}

namespace {

struct Reader {
  const json &obj;
  std::string where;
  std::string &error;

  bool str(const char *key, std::string &out, bool required = true) {
    if (!obj.contains(key)) {
      if (required)
        error = std::string("missing '") + key + "' in " + where;
      return !required;
    }
    if (!obj[key].is_string()) {
      error = std::string("'") + key + "' in " + where + " must be a string";
      return false;
    }
    out = obj[key].get<std::string>();
    return true;
  }
  bool size(const char *key, int64_t &out) {
    if (!obj.contains(key) || !obj[key].is_number_unsigned()) {
      error = std::string("missing or non-integer '") + key + "' (bytes) in " + where;
      return false;
    }
    out = obj[key].get<int64_t>();
    return true;
  }
  bool sha(const char *key, std::string &out) {
    if (!str(key, out))
      return false;
    if (!isSha256Hex(out)) {
      error = std::string("'") + key + "' in " + where + " is not 64 lowercase hex digits";
      return false;
    }
    return true;
  }
};

std::optional<BoosterPack> parsePack(const json &j, const std::string &where, std::string &error) {
  if (!j.is_object()) {
    error = where + " is not an object";
    return std::nullopt;
  }
  BoosterPack p;
  Reader r{j, where, error};
  int64_t acfCount = 0;
  if (!r.str("pack_id", p.packId) || !r.str("artifact_name", p.artifactName) ||
      !r.sha("artifact_sha256", p.artifactSha256) ||
      !r.size("artifact_size_bytes", p.artifactSizeBytes) ||
      !r.str("manifest_path", p.manifestPath) || !r.sha("manifest_sha256", p.manifestSha256) ||
      !r.size("acf_count", acfCount) || !r.str("cuda_version", p.cudaVersion) ||
      !r.str("controls_stage", p.controlsStage) || !r.str("display_name", p.displayName, false) ||
      !r.str("pack_type", p.packType, false) || !r.str("description", p.description, false))
    return std::nullopt;
  if (!isPlainFileName(p.packId) || !isPlainFileName(p.packId + "-x")) {
    error = "'pack_id' in " + where + " must be a plain name (no '/', no '..'), not '" + p.packId + "'";
    return std::nullopt;
  }
  if (!isPlainFileName(p.artifactName)) {
    error = "'artifact_name' in " + where + " must be a plain file name, not '" + p.artifactName + "'";
    return std::nullopt;
  }
  if (p.controlsStage != "ptxas" && p.controlsStage != "nvcc") {
    error = "'controls_stage' in " + where + " is '" + p.controlsStage + "'; expected ptxas or nvcc";
    return std::nullopt;
  }
  if (!j.contains("acfs") || !j["acfs"].is_array()) {
    error = "missing 'acfs' list in " + where;
    return std::nullopt;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < j["acfs"].size(); ++i) {
    PackAcf a;
    Reader ar{j["acfs"][i], where + " acfs[" + std::to_string(i) + "]", error};
    if (!j["acfs"][i].is_object()) {
      error = ar.where + " is not an object";
      return std::nullopt;
    }
    if (!ar.str("filename", a.filename) || !ar.sha("sha256", a.sha256) ||
        !ar.size("size_bytes", a.sizeBytes))
      return std::nullopt;
    if (!isPlainFileName(a.filename)) {
      error = "'filename' in " + ar.where + " must be a plain file name, not '" + a.filename + "'";
      return std::nullopt;
    }
    if (!names.insert(a.filename).second) {
      error = "ACF " + a.filename + " listed twice in " + where;
      return std::nullopt;
    }
    p.acfs.push_back(std::move(a));
  }
  if ((size_t)acfCount != p.acfs.size()) {
    error = "'acf_count' in " + where + " is " + std::to_string(acfCount) + " but 'acfs' lists " +
            std::to_string(p.acfs.size());
    return std::nullopt;
  }
  if (j.contains("supported_gpus") && j["supported_gpus"].is_array())
    for (const auto &g : j["supported_gpus"])
      if (g.is_string())
        p.supportedGpus.push_back(g.get<std::string>());
  if (j.contains("validation_summary"))
    p.validationSummary = j["validation_summary"];
  return p;
}

} // namespace

std::optional<BoosterCatalog> parseBoosterCatalog(const std::string &text, const std::string &where,
                                                  std::string &error) {
  json j;
  if (!parseJson(text, "booster-pack catalog " + where, j, error))
    return std::nullopt;
  if (!j.is_object()) {
    error = "booster-pack catalog " + where + " is not a JSON object";
    return std::nullopt;
  }
  BoosterCatalog c;
  Reader r{j, "booster-pack catalog " + where, error};
  auto scalar = [&](const char *key, std::string &out) {
    if (j.contains(key) && j[key].is_number())
      out = j[key].dump();   // schema_version may be written as a number
    else
      return r.str(key, out);
    return true;
  };
  if (!scalar("schema_version", c.schemaVersion) || !scalar("catalog_version", c.catalogVersion) ||
      !r.str("release_tag", c.releaseTag))
    return std::nullopt;
  // The tag names the cache folder: one plain component, never a way out.
  if (!isPlainFileName(c.releaseTag)) {
    error = "'release_tag' in booster-pack catalog " + where + " must be a plain name (no '/', no '..'), not '" +
            c.releaseTag + "'";
    return std::nullopt;
  }
  if (!j.contains("packs") || !j["packs"].is_array()) {
    error = "booster-pack catalog " + where + " has no 'packs' list";
    return std::nullopt;
  }
  for (size_t i = 0; i < j["packs"].size(); ++i) {
    auto p = parsePack(j["packs"][i], where + " packs[" + std::to_string(i) + "]", error);
    if (!p)
      return std::nullopt;
    if (c.find(p->packId)) {
      error = "pack_id '" + p->packId + "' appears twice in " + where;
      return std::nullopt;
    }
    c.packs.push_back(std::move(*p));
  }
  return c;
}

std::optional<std::map<std::string, std::string>> parseSha256Sums(const std::string &text,
                                                                  const std::string &where,
                                                                  std::string &error) {
  std::map<std::string, std::string> sums;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || line[0] == '#')
      continue;
    size_t sp = line.find(' ');
    std::string hash = line.substr(0, sp);
    std::string name = sp == std::string::npos ? "" : line.substr(line.find_first_not_of(" *", sp));
    if (!isSha256Hex(hash) || name.empty()) {
      error = where + ":" + std::to_string(n) + ": expected '<sha256>  <file name>'";
      return std::nullopt;
    }
    sums[name] = hash;
  }
  return sums;
}

int compareVersions(const std::string &a, const std::string &b) {
  std::istringstream sa(a), sb(b);
  std::string pa, pb;
  while (true) {
    bool ha = (bool)std::getline(sa, pa, '.'), hb = (bool)std::getline(sb, pb, '.');
    if (!ha && !hb)
      return 0;
    long va = ha ? atol(pa.c_str()) : 0, vb = hb ? atol(pb.c_str()) : 0;
    if (va != vb)
      return va < vb ? -1 : 1;
  }
}

} // namespace ciq
