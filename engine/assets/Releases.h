// GitHub-style releases of a repository, read through the REST API
// (GET <api>/repos/<owner>/<name>/releases/latest, /releases?per_page=100&page=N,
// /releases/tags/<tag>). The API base is CIQ_GITHUB_API_URL (default
// https://api.github.com), so a GitHub Enterprise host or a local test server
// serves the same layout.
#pragma once
#include "engine/assets/Http.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct ReleaseAsset {
  std::string name;
  std::string url;       // browser_download_url
  int64_t size = -1;     // bytes, as the API reports it
};

struct Release {
  std::string tag;
  bool draft = false, prerelease = false;
  std::string publishedAt;   // ISO-8601, for ordering
  std::vector<ReleaseAsset> assets;
  const ReleaseAsset *asset(const std::string &name) const;
};

class ReleaseRepo {
public:
  ReleaseRepo(std::string repo, HttpSettings http);
  const std::string &repo() const { return repo_; }
  std::string apiBase() const;
  // The release with exactly this tag.
  std::optional<Release> byTag(const std::string &tag, std::string &error) const;
  // The newest non-draft, non-prerelease release whose tag starts with `prefix`.
  std::optional<Release> latestWithPrefix(const std::string &prefix, std::string &error) const;

private:
  std::optional<Release> getRelease(const std::string &url, std::string &error) const;
  std::string repo_;
  HttpSettings http_;
};

// One release of the GitHub API's answer, every field typed; the tag and the
// asset names must be plain path components and asset URLs http(s).
std::optional<Release> parseReleaseAnswer(const std::string &body, std::string &error);

// How long a resolved `latest` tag is cached, in days: CIQ_SS_LATEST_TTL_DAYS
// (default 7). One setting for search spaces and booster packs, since both
// share <cache>/latest-tags.json.
double latestTagTtlDays();

// The `latest` tag of (repo, prefix), cached in <cache>/latest-tags.json for
// `ttlDays` days so a warm cache resolves without the network. When the
// lookup fails, a stale cached tag is used and `warning` says so.
std::optional<std::string> resolveLatestTag(const ReleaseRepo &repo, const std::string &prefix,
                                            double ttlDays, std::string &warning,
                                            std::string &error);

} // namespace ciq
