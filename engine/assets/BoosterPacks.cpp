#include "engine/assets/BoosterPacks.h"

#include "engine/assets/AssetCache.h"
#include "common/EnvNames.h"
#include "common/Paths.h"
#include "engine/assets/Releases.h"
#include "common/Sha256.h"
#include "common/Subprocess.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>
#include <regex>

namespace ciq {

static const char *kCatalog = "booster-pack-catalog.json";
static const char *kSums = "SHA256SUMS.txt";

BoosterSettings BoosterSettings::fromEnv() {
  BoosterSettings s;
  if (const char *v = getenv(env::BoosterPacksRepo); v && *v)
    s.repo = v;
  if (const char *v = getenv(env::BpTagPrefix); v)
    s.tagPrefix = v;
  s.latestTtlDays = latestTagTtlDays();
  if (const char *v = getenv(env::BoosterPacksDir); v && *v)
    s.mirrorDir = v;
  return s;
}

// The catalog must be the one SHA256SUMS.txt names, and every pack's
// artifact hash must agree between the two files.
static bool crossCheck(const LoadedCatalog &c, const std::string &catalogText, std::string &error) {
  auto it = c.sums.find(kCatalog);
  if (it == c.sums.end()) {
    error = std::string(kSums) + " of " + c.where + " does not list " + kCatalog;
    return false;
  }
  if (it->second != sha256Hex(catalogText)) {
    error = std::string("checksum mismatch for ") + kCatalog + " of " + c.where + ": SHA-256 " +
            sha256Hex(catalogText) + ", " + kSums + " says " + it->second;
    return false;
  }
  for (const auto &p : c.catalog.packs) {
    auto s = c.sums.find(p.artifactName);
    if (s != c.sums.end() && s->second != p.artifactSha256) {
      error = std::string(kSums) + " and " + kCatalog + " of " + c.where + " disagree on the SHA-256 of " +
              p.artifactName;
      return false;
    }
  }
  return true;
}

static bool parseBoth(LoadedCatalog &c, const std::string &catalogText, const std::string &sumsText,
                      std::string &error) {
  auto sums = parseSha256Sums(sumsText, c.where + "/" + kSums, error);
  if (!sums)
    return false;
  c.sums = std::move(*sums);
  auto cat = parseBoosterCatalog(catalogText, c.where + "/" + kCatalog, error);
  if (!cat)
    return false;
  c.catalog = std::move(*cat);
  return crossCheck(c, catalogText, error);
}

static std::optional<LoadedCatalog> loadMirror(const BoosterSettings &s, const std::string &tag,
                                               std::string &error) {
  LoadedCatalog c;
  c.mirror = true;
  c.where = s.mirrorDir;
  auto catalog = readWholeFile(s.mirrorDir + "/" + kCatalog);
  auto sums = readWholeFile(s.mirrorDir + "/" + kSums);
  if (!catalog || !sums) {
    error = std::string("no ") + (!catalog ? kCatalog : kSums) + " in the booster-pack mirror " +
            s.mirrorDir + " (CIQ_BOOSTER_PACKS_DIR); copy the release's catalog, " + kSums +
            " and zips there, or unset it";
    return std::nullopt;
  }
  if (!parseBoth(c, *catalog, *sums, error))
    return std::nullopt;
  c.tag = c.catalog.releaseTag;
  if (tag != "latest" && tag != c.tag) {
    error = "pinned booster-pack tag '" + tag + "' differs from the mirror's catalog release_tag '" +
            c.tag + "' (" + s.mirrorDir + "/" + kCatalog + ")";
    return std::nullopt;
  }
  return c;
}

// A release asset's bytes: from the cache folder of the tag, else downloaded.
static std::optional<std::string> releaseText(const ReleaseRepo &repo, std::optional<Release> &release,
                                              const std::string &tag, const std::string &name,
                                              std::string &error) {
  auto cache = cacheDir(error);
  if (!cache)
    return std::nullopt;
  if (auto text = readWholeFile(*cache + "/" + tag + "/" + name))
    return text;
  if (!release && !(release = repo.byTag(tag, error)))
    return std::nullopt;
  const ReleaseAsset *asset = release->asset(name);
  if (!asset) {
    error = "release '" + tag + "' of " + repo.repo() + " has no " + name +
            " asset; it is not a booster-pack release";
    return std::nullopt;
  }
  std::string body;
  HttpResponse resp = httpGet(asset->url, body, HttpSettings::fromEnv(), "application/octet-stream");
  if (!resp.ok) {
    error = resp.error;
    return std::nullopt;
  }
  return body;
}

std::optional<LoadedCatalog> loadBoosterCatalog(const std::string &tag, std::string &error) {
  BoosterSettings s = BoosterSettings::fromEnv();
  if (!s.mirrorDir.empty())
    return loadMirror(s, tag, error);
  ReleaseRepo repo(s.repo, HttpSettings::fromEnv());
  LoadedCatalog c;
  c.where = repo.apiBase() + "/repos/" + s.repo;
  c.tag = tag;
  if (tag == "latest") {
    std::string warning;
    auto t = resolveLatestTag(repo, s.tagPrefix, s.latestTtlDays, warning, error);
    if (!t)
      return std::nullopt;
    if (!warning.empty())
      llvm::WithColor::warning(llvm::errs(), "ciq") << warning << "\n";
    c.tag = *t;
  }
  c.where += " release " + c.tag;
  std::optional<Release> release;
  auto catalog = releaseText(repo, release, c.tag, kCatalog, error);
  if (!catalog)
    return std::nullopt;
  auto sums = releaseText(repo, release, c.tag, kSums, error);
  if (!sums || !parseBoth(c, *catalog, *sums, error))
    return std::nullopt;
  // Cached only once verified against each other.
  std::string ignored;
  if (auto cache = cacheDir(ignored)) { // releaseText has checked it already
    writeFileAtomically(*cache + "/" + c.tag + "/" + kCatalog, *catalog, ignored);
    writeFileAtomically(*cache + "/" + c.tag + "/" + kSums, *sums, ignored);
  }
  return c;
}

std::optional<ExtractedPack> fetchBoosterPack(const LoadedCatalog &c, const BoosterPack &pack,
                                              std::vector<std::string> &warnings,
                                              std::string &error) {
  std::string zip;
  if (c.mirror) {
    zip = c.where + "/" + pack.artifactName;
    if (!llvm::sys::fs::exists(zip)) {
      error = "the catalog of the booster-pack mirror " + c.where + " names " + pack.artifactName +
              " but the mirror lacks " + zip;
      return std::nullopt;
    }
    if (!verifyAsset(zip, pack.artifactSizeBytes, pack.artifactSha256,
                     "booster pack " + pack.packId, error))
      return std::nullopt;
  } else {
    HttpSettings http = HttpSettings::fromEnv();
    std::string url, ignored;
    auto cached = cacheEntryPath(c.tag, pack.artifactSha256, pack.artifactName, error);
    if (!cached)
      return std::nullopt;
    if (!verifyAsset(*cached, pack.artifactSizeBytes, pack.artifactSha256, pack.artifactName, ignored)) {
      BoosterSettings s = BoosterSettings::fromEnv();
      auto release = ReleaseRepo(s.repo, http).byTag(c.tag, error);
      if (!release)
        return std::nullopt;
      const ReleaseAsset *asset = release->asset(pack.artifactName);
      if (!asset) {
        error = "release " + c.tag + " of " + s.repo + " has no asset " + pack.artifactName +
                " (booster pack " + pack.packId + ")";
        return std::nullopt;
      }
      url = asset->url;
    }
    auto fetched = fetchToCache(url, c.tag, pack.artifactName, pack.artifactSizeBytes,
                                pack.artifactSha256, http, error);
    if (!fetched)
      return std::nullopt;
    if (!fetched->warning.empty()) {
      llvm::WithColor::warning(llvm::errs(), "ciq") << fetched->warning << "\n";
      warnings.push_back(fetched->warning);
    }
    zip = fetched->path;
  }
  auto cache = cacheDir(error);
  if (!cache)
    return std::nullopt;
  std::string dest = *cache + "/" + c.tag + "/packs/" + pack.packId + "-" + pack.artifactSha256.substr(0, 12);
  if (!isPlainFileName(pack.packId + "-x")) {
    error = "pack_id '" + pack.packId + "' is not usable as a folder name";
    return std::nullopt;
  }
  return extractPack(zip, pack, dest, error);
}

std::optional<std::string> installedCudaVersion(const std::string &ptxas) {
  auto exe = findExecutable(ptxas);
  if (!exe)
    return std::nullopt;
  SubprocessOptions opts;
  opts.timeoutSeconds = 30;
  auto r = runSubprocess({*exe, "--version"}, opts);
  if (r.exitCode != 0)
    return std::nullopt;
  std::smatch m;
  static const std::regex release("release ([0-9]+\\.[0-9]+)");
  if (!std::regex_search(r.out, m, release))
    return std::nullopt;
  return m[1].str();
}

} // namespace ciq
