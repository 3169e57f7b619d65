#include "engine/assets/SpaceManifest.h"
#include "common/JsonRead.h"

#include "engine/assets/AssetCache.h"

#include <nlohmann/json.hpp>
#include <set>

namespace ciq {

using nlohmann::json;

std::string SpaceEntry::format() const {
  return (searchSpaceFormat == "yaml" || searchSpaceFormat == "ciq-yaml") ? "yaml" : "bin";
}

namespace {

bool checkKeys(const json &obj, const std::set<std::string> &known, const std::string &where,
               std::string &error) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!known.count(it.key())) {
      std::string list;
      for (const auto &k : known)
        list += (list.empty() ? "" : ", ") + k;
      error = "unknown field '" + it.key() + "' in " + where + "; expected one of: " + list;
      return false;
    }
  return true;
}

bool getString(const json &obj, const char *key, std::string &out, const std::string &where,
               std::string &error) {
  if (!obj.contains(key) || !obj[key].is_string()) {
    error = std::string("missing or non-string '") + key + "' in " + where;
    return false;
  }
  out = obj[key].get<std::string>();
  return true;
}

std::optional<SpaceEntry> parseEntry(const json &e, const std::string &where, std::string &error) {
  static const std::set<std::string> known = {"compiler", "compiler_version", "variant",
                                              "filename", "sha256", "size_bytes",
                                              "search_space_format", "description"};
  if (!e.is_object()) {
    error = where + " is not an object";
    return std::nullopt;
  }
  SpaceEntry s;
  if (!checkKeys(e, known, where, error) || !getString(e, "compiler", s.compiler, where, error) ||
      !getString(e, "compiler_version", s.compilerVersion, where, error) ||
      !getString(e, "variant", s.variant, where, error) ||
      !getString(e, "filename", s.filename, where, error) ||
      !getString(e, "sha256", s.sha256, where, error) ||
      !getString(e, "search_space_format", s.searchSpaceFormat, where, error))
    return std::nullopt;
  if (e.contains("description") && e["description"].is_string())
    s.description = e["description"].get<std::string>();
  if (!e.contains("size_bytes") || !e["size_bytes"].is_number_unsigned()) {
    error = "missing or non-integer 'size_bytes' (bytes) in " + where;
    return std::nullopt;
  }
  s.sizeBytes = e["size_bytes"].get<int64_t>();
  if (!isSha256Hex(s.sha256)) {
    error = "'sha256' in " + where + " is not 64 lowercase hex digits: '" + s.sha256 + "'";
    return std::nullopt;
  }
  if (!isPlainFileName(s.filename)) {
    error = "'filename' in " + where + " must be a plain file name, not '" + s.filename + "'";
    return std::nullopt;
  }
  return s;
}

} // namespace

std::optional<SpaceManifest> parseSpaceManifest(const std::string &text, const std::string &where,
                                                std::string &error) {
  json j;
  if (!parseJson(text, "search-space manifest " + where, j, error))
    return std::nullopt;
  if (!j.is_object()) {
    error = "search-space manifest " + where + " is not a JSON object";
    return std::nullopt;
  }
  static const std::set<std::string> known = {"manifest_format", "tag", "generated_at", "entries"};
  SpaceManifest m;
  if (!checkKeys(j, known, "search-space manifest " + where, error) ||
      !getString(j, "manifest_format", m.manifestFormat, where, error) ||
      !getString(j, "tag", m.tag, where, error))
    return std::nullopt;
  if (!isPlainFileName(m.tag)) {
    error = "'tag' in search-space manifest " + where + " must be a plain name (no '/', no '..'), not '" + m.tag + "'";
    return std::nullopt;
  }
  if (m.manifestFormat != "1.0.0") {
    error = "search-space manifest " + where + " has manifest_format '" + m.manifestFormat +
            "'; this ciq reads 1.0.0 (a newer ciq may read it)";
    return std::nullopt;
  }
  if (j.contains("generated_at") && j["generated_at"].is_string())
    m.generatedAt = j["generated_at"].get<std::string>();
  if (!j.contains("entries") || !j["entries"].is_array()) {
    error = "search-space manifest " + where + " has no 'entries' list";
    return std::nullopt;
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < j["entries"].size(); ++i) {
    std::string at = where + " entries[" + std::to_string(i) + "]";
    auto e = parseEntry(j["entries"][i], at, error);
    if (!e)
      return std::nullopt;
    if (!seen.insert(e->name()).second) {
      error = "duplicate entry for " + e->compiler + " " + e->compilerVersion + " variant '" +
              e->variant + "' at " + at + "; each compiler/version/variant may appear once";
      return std::nullopt;
    }
    m.entries.push_back(std::move(*e));
  }
  return m;
}

const SpaceEntry *findSpaceEntry(const SpaceManifest &m, const std::string &compiler,
                                 const std::string &version, const std::string &variant,
                                 const std::string &where, std::string &error) {
  std::set<std::string> versions, variants;
  for (const auto &e : m.entries) {
    if (e.compiler != compiler)
      continue;
    versions.insert(e.compilerVersion);
    if (e.compilerVersion != version)
      continue;
    variants.insert(e.variant);
    if (e.variant == variant)
      return &e;
  }
  auto join = [](const std::set<std::string> &s) {
    std::string out;
    for (const auto &v : s)
      out += (out.empty() ? "" : ", ") + v;
    return out;
  };
  if (versions.empty())
    error = "no " + compiler + " search space in " + where + " (tag " + m.tag + ")";
  else if (variants.empty())
    error = "no " + compiler + " " + version + " search space in " + where + " (tag " + m.tag +
            "); available versions: " + join(versions);
  else
    error = "unknown variant '" + variant + "' of " + compiler + " " + version + " in " + where +
            " (tag " + m.tag + "); available variants: " + join(variants);
  return nullptr;
}

} // namespace ciq
