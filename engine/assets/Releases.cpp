#include "engine/assets/Releases.h"

#include "engine/assets/AssetCache.h"
#include "common/EnvNames.h"
#include "common/JsonRead.h"
#include "common/Paths.h"

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace ciq {

using nlohmann::json;

const ReleaseAsset *Release::asset(const std::string &name) const {
  for (const auto &a : assets)
    if (a.name == name)
      return &a;
  return nullptr;
}

ReleaseRepo::ReleaseRepo(std::string repo, HttpSettings http)
    : repo_(std::move(repo)), http_(std::move(http)) {}

std::string ReleaseRepo::apiBase() const {
  std::string base = "https://api.github.com";
  if (const char *env = getenv(env::GithubApiUrl); env && *env)
    base = env;
  while (!base.empty() && base.back() == '/')
    base.pop_back();
  return base;
}

static std::optional<Release> parseRelease(const json &j, std::string &error) {
  if (!j.is_object() || !j.contains("tag_name") || !j["tag_name"].is_string()) {
    error = "release has no tag_name";
    return std::nullopt;
  }
  Release r;
  std::vector<json> assets;
  JsonFields f(j, "release");
  f.need("tag_name", r.tag).opt("draft", r.draft).opt("prerelease", r.prerelease).opt("published_at", r.publishedAt)
      .opt("assets", assets);
  if (!f.ok())
    return error = f.error(), std::nullopt;
  // The tag and every asset name become cache paths: one plain component each.
  if (!isPlainFileName(r.tag))
    return error = "release tag_name '" + r.tag + "' is not a plain name (no '/', no '..')", std::nullopt;
  for (size_t i = 0; i < assets.size(); ++i) {
    ReleaseAsset asset;
    long size = -1;
    JsonFields af(assets[i], "release " + r.tag + ": \"assets\"[" + std::to_string(i) + "]");
    af.need("name", asset.name).need("browser_download_url", asset.url).opt("size", size);
    if (!af.ok())
      return error = af.error(), std::nullopt;
    if (size >= 0)
      asset.size = size;
    if (!isPlainFileName(asset.name))
      return error = af.where() + ": name '" + asset.name + "' is not a plain file name", std::nullopt;
    // A remote answer may only point at the network, never at this machine's files.
    if (asset.url.rfind("https://", 0) != 0 && asset.url.rfind("http://", 0) != 0)
      return error = af.where() + ": browser_download_url '" + asset.url.substr(0, 80) +
                     "' is not an http(s) URL; refused",
             std::nullopt;
    r.assets.push_back(std::move(asset));
  }
  return r;
}

std::optional<Release> parseReleaseAnswer(const std::string &body, std::string &error) {
  json j;
  if (!parseJson(body, "answer", j, error))
    return std::nullopt;
  return parseRelease(j, error);
}

std::optional<Release> ReleaseRepo::getRelease(const std::string &url, std::string &error) const {
  std::string body;
  HttpResponse resp = httpGet(url, body, http_);
  if (!resp.ok) {
    error = resp.error;
    return std::nullopt;
  }
  std::string why;
  auto r = parseReleaseAnswer(body, why);
  if (!r)
    error = "unexpected answer from " + url + ": " + why;
  return r;
}

std::optional<Release> ReleaseRepo::byTag(const std::string &tag, std::string &error) const {
  std::string url = apiBase() + "/repos/" + repo_ + "/releases/tags/" + tag;
  auto r = getRelease(url, error);
  if (!r && error.find("HTTP 404") != std::string::npos)
    error = "no release tagged '" + tag + "' in " + repo_ + " (" + url +
            " answered 404); check the tag, or use tag: latest";
  return r;
}

std::optional<Release> ReleaseRepo::latestWithPrefix(const std::string &prefix,
                                                     std::string &error) const {
  // The repository's own "latest" release is the cheap answer when it
  // carries our prefix; otherwise walk the release list.
  std::string latestError;
  if (auto r = getRelease(apiBase() + "/repos/" + repo_ + "/releases/latest", latestError);
      r && !r->draft && !r->prerelease && r->tag.rfind(prefix, 0) == 0)
    return r;
  else if (!r && latestError.find("HTTP 404") == std::string::npos) {
    error = latestError;   // the network, not the repository, failed
    return std::nullopt;
  }
  std::optional<Release> best;
  for (int page = 1; page <= 20; ++page) {
    std::string url = apiBase() + "/repos/" + repo_ + "/releases?per_page=100&page=" +
                      std::to_string(page);
    std::string body;
    HttpResponse resp = httpGet(url, body, http_);
    if (!resp.ok) {
      error = resp.error;
      return std::nullopt;
    }
    json list;
    std::string why;
    if (!parseJson(body, "answer", list, why) || !list.is_array()) {
      error = "unexpected answer from " + url + ": not a JSON list of releases";
      return std::nullopt;
    }
    for (const auto &item : list) {
      std::string why;
      auto r = parseRelease(item, why);
      if (!r || r->draft || r->prerelease || r->tag.rfind(prefix, 0) != 0)
        continue;
      if (!best || r->publishedAt > best->publishedAt)
        best = std::move(r);
    }
    if (list.size() < 100)
      break;
  }
  if (!best)
    error = "no published release of " + repo_ + " has a tag starting with '" + prefix +
            "' (" + apiBase() + "); check the repository and the tag prefix";
  return best;
}

double latestTagTtlDays() {
  if (const char *v = getenv(env::SsLatestTtlDays); v && *v)
    return atof(v);
  return 7;
}

std::optional<std::string> resolveLatestTag(const ReleaseRepo &repo, const std::string &prefix,
                                            double ttlDays, std::string &warning,
                                            std::string &error) {
  const std::string key = repo.apiBase() + "/" + repo.repo() + "|" + prefix;
  auto dir = cacheDir(error);
  if (!dir)
    return std::nullopt;
  const std::string tagCachePath = *dir + "/latest-tags.json";
  json cache = json::object();
  std::string ignored;
  if (auto text = readWholeFile(tagCachePath))
    if (!parseJson(*text, tagCachePath, cache, ignored) || !cache.is_object())
      cache = json::object(); // a cache: a damaged one is rebuilt
  auto now = std::chrono::duration_cast<std::chrono::seconds>(
                 std::chrono::system_clock::now().time_since_epoch()).count();
  std::optional<std::string> cached;
  double ageDays = 0;
  std::string tag;
  long resolvedAt = 0;
  if (cache.contains(key) && JsonFields(cache[key], "").need("tag", tag).opt("resolved_at", resolvedAt).ok() &&
      isPlainFileName(tag)) {
    cached = tag;
    ageDays = (now - resolvedAt) / 86400.0;
    if (ageDays < ttlDays)
      return cached;
  }
  std::string lookupError;
  auto release = repo.latestWithPrefix(prefix, lookupError);
  if (!release) {
    if (cached) {
      warning = "could not look up the latest release of " + repo.repo() + " (" + lookupError +
                "); using the cached tag '" + *cached + "' resolved " +
                std::to_string((int)ageDays) + " days ago";
      return cached;
    }
    error = lookupError;
    return std::nullopt;
  }
  cache[key] = {{"tag", release->tag}, {"resolved_at", now}};
  writeFileAtomically(tagCachePath, cache.dump(2) + "\n", ignored);   // a cache: best effort
  return release->tag;
}

} // namespace ciq
