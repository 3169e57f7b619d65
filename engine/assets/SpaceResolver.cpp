#include "engine/assets/SpaceResolver.h"

#include "engine/assets/AssetCache.h"
#include "common/EnvNames.h"
#include "common/Paths.h"
#include "engine/assets/Releases.h"
#include "common/Sha256.h"

#include <algorithm>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/WithColor.h>
#include <llvm/Support/raw_ostream.h>
#include <yaml-cpp/yaml.h>

namespace ciq {

SpaceSettings SpaceSettings::fromEnv() {
  SpaceSettings s;
  if (const char *v = getenv(env::SearchSpacesRepo); v && *v)
    s.repo = v;
  if (const char *v = getenv(env::SsTagPrefix); v)
    s.tagPrefix = v;
  s.latestTtlDays = latestTagTtlDays();
  if (const char *v = getenv(env::SearchSpacesDir); v && *v)
    s.mirrorDir = v;
  if (const char *v = getenv(env::Offline); v && *v && std::string(v) != "0")
    s.offline = true;
  return s;
}

static void warn(std::vector<std::string> &sink, const std::string &message) {
  llvm::WithColor::warning(llvm::errs(), "ciq") << message << "\n";
  sink.push_back(message);
}

// A curated space says what it is for in its `description:` key.
static std::string curatedDescription(const std::string &path) {
  try {
    YAML::Node doc = YAML::LoadFile(path);
    if (doc.IsMap() && doc["description"])
      return doc["description"].as<std::string>();
  } catch (const std::exception &) {
    // The engine's loader reports a broken file where it is used; a listing just shows no text.
  }
  return "";
}

std::vector<CuratedSpace> listCuratedSpaces() {
  std::vector<CuratedSpace> out;
  std::string dir = shareDir() + "/spaces";
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec)) {
    llvm::StringRef path = it->path();
    if (llvm::sys::path::extension(path) != ".yaml")
      continue;
    out.push_back({llvm::sys::path::stem(path).str(), path.str(), curatedDescription(path.str())});
  }
  std::sort(out.begin(), out.end(),
            [](const CuratedSpace &a, const CuratedSpace &b) { return a.name < b.name; });
  return out;
}

static std::optional<ResolvedSpace> resolveCurated(const std::string &name, std::string &error) {
  auto all = listCuratedSpaces();
  for (const auto &c : all)
    if (c.name == name) {
      ResolvedSpace r;
      r.localPath = c.path;
      r.provider = "builtin";
      r.tag = "builtin";
      r.format = "yaml";
      r.name = name;
      r.description = c.description;
      r.source = shareDir() + "/spaces";
      auto hash = sha256File(c.path);
      if (!hash) {
        error = "cannot read the curated search space " + c.path;
        return std::nullopt;
      }
      r.sha256 = *hash;
      return r;
    }
  std::string names;
  for (const auto &c : all)
    names += (names.empty() ? "" : ", ") + c.name;
  error = "no curated search space named '" + name + "' in " + shareDir() +
          "/spaces; available: " + (names.empty() ? "(none: is ciq installed completely?)" : names);
  return std::nullopt;
}

static std::optional<ResolvedSpace> resolveFile(const std::string &file, std::string &error) {
  if (file.empty()) {
    error = "space provider 'file' needs a path (space: {provider: file, file: my-space.yaml})";
    return std::nullopt;
  }
  auto hash = sha256File(file);
  if (!hash) {
    error = "cannot read the search-space file " + file + "; check the path (relative paths are "
            "relative to the folder of ciq.yaml)";
    return std::nullopt;
  }
  ResolvedSpace r;
  r.localPath = file;
  r.provider = "file";
  r.name = file;
  r.sha256 = *hash;
  r.format = llvm::sys::path::extension(file) == ".bin" ? "bin" : "yaml";
  return r;
}

std::optional<LoadedManifest> loadSpaceManifest(const std::string &tag, std::string &error) {
  SpaceSettings s = SpaceSettings::fromEnv();
  LoadedManifest out;
  if (!s.mirrorDir.empty()) {
    out.mirror = true;
    out.mirrorDir = s.mirrorDir;
    out.where = s.mirrorDir + "/manifest.json";
    auto text = readWholeFile(out.where);
    if (!text) {
      error = "no manifest.json in the search-space mirror " + s.mirrorDir +
              " (CIQ_SEARCH_SPACES_DIR); copy a release's manifest.json and files there, or unset it";
      return std::nullopt;
    }
    auto m = parseSpaceManifest(*text, out.where, error);
    if (!m)
      return std::nullopt;
    if (tag != "latest" && tag != m->tag) {
      error = "pinned search-space tag '" + tag + "' differs from the mirror's manifest tag '" +
              m->tag + "' (" + out.where + "); update the mirror to that release or the pin to '" +
              m->tag + "'";
      return std::nullopt;
    }
    out.manifest = std::move(*m);
    return out;
  }
  ReleaseRepo repo(s.repo, HttpSettings::fromEnv());
  std::string resolved = tag;
  if (tag == "latest") {
    std::string warning;
    auto t = resolveLatestTag(repo, s.tagPrefix, s.latestTtlDays, warning, error);
    if (!t)
      return std::nullopt;
    if (!warning.empty())
      llvm::WithColor::warning(llvm::errs(), "ciq") << warning << "\n";
    resolved = *t;
  }
  // Release assets do not change under a tag: a cached manifest is reused.
  auto cache = cacheDir(error);
  if (!cache)
    return std::nullopt;
  std::string cached = *cache + "/" + resolved + "/manifest.json";
  std::optional<std::string> text = readWholeFile(cached);
  out.where = cached;
  if (!text) {
    auto release = repo.byTag(resolved, error);
    if (!release)
      return std::nullopt;
    const ReleaseAsset *asset = release->asset("manifest.json");
    if (!asset) {
      error = "release '" + resolved + "' of " + s.repo + " has no manifest.json asset; it is not "
              "a search-space release";
      return std::nullopt;
    }
    std::string body;
    HttpResponse resp = httpGet(asset->url, body, HttpSettings::fromEnv(), "application/octet-stream");
    if (!resp.ok) {
      error = resp.error;
      return std::nullopt;
    }
    text = body;
    out.where = asset->url;
  }
  auto m = parseSpaceManifest(*text, out.where, error);
  if (!m)
    return std::nullopt;
  if (m->tag != resolved) {
    error = "manifest " + out.where + " says tag '" + m->tag + "' but was published under '" +
            resolved + "'; the release is inconsistent";
    return std::nullopt;
  }
  if (out.where != cached) {
    std::string ignored;
    writeFileAtomically(cached, *text, ignored);   // a cache: best effort
  }
  out.manifest = std::move(*m);
  out.mirrorDir = s.repo;
  return out;
}

std::optional<ResolvedSpace> fetchSpaceEntry(const LoadedManifest &m, const SpaceEntry &e,
                                             std::string &error) {
  ResolvedSpace r;
  r.tag = m.manifest.tag;
  r.sha256 = e.sha256;
  r.format = e.format();
  r.description = e.description;
  r.name = e.name();
  if (m.mirror) {
    r.provider = "mirror";
    r.source = m.mirrorDir;
    r.localPath = m.mirrorDir + "/" + e.filename;
    if (!llvm::sys::fs::exists(r.localPath)) {
      error = "the mirror manifest " + m.where + " names " + e.filename + " but the mirror lacks " +
              r.localPath + "; copy it from release " + m.manifest.tag;
      return std::nullopt;
    }
    if (!verifyAsset(r.localPath, e.sizeBytes, e.sha256, "search space " + e.name(), error))
      return std::nullopt;
    return r;
  }
  r.provider = "release";
  r.source = m.mirrorDir;
  HttpSettings http = HttpSettings::fromEnv();
  // Only ask the API for the download URL when the cache cannot answer.
  std::string url;
  auto cachePath = cacheEntryPath(m.manifest.tag, e.sha256, e.filename, error);
  if (!cachePath)
    return std::nullopt;
  std::string ignored;
  if (!verifyAsset(*cachePath, e.sizeBytes, e.sha256, e.filename, ignored)) {
    ReleaseRepo repo(m.mirrorDir, http);
    auto release = repo.byTag(m.manifest.tag, error);
    if (!release)
      return std::nullopt;
    const ReleaseAsset *asset = release->asset(e.filename);
    if (!asset) {
      error = "the manifest of release " + m.manifest.tag + " names " + e.filename +
              " but the release has no such asset (" + repo.apiBase() + "/repos/" + m.mirrorDir + ")";
      return std::nullopt;
    }
    url = asset->url;
  }
  auto fetched = fetchToCache(url, m.manifest.tag, e.filename, e.sizeBytes, e.sha256, http, error);
  if (!fetched)
    return std::nullopt;
  if (!fetched->warning.empty())
    warn(r.warnings, fetched->warning);
  r.localPath = fetched->path;
  return r;
}

std::string binSpaceError(const ResolvedSpace &s) {
  return "search space " + s.name + " (tag " + s.tag + ", " + s.localPath +
         ") is in NVIDIA's encrypted format, which only NVIDIA CompileIQ's closed search core "
         "reads; ciq can fetch and verify it but has no consumer for it: use one of ciq's curated "
         "YAML spaces instead (tag: builtin; `ciq spaces list` shows them)";
}

static std::optional<ResolvedSpace> resolveRelease(const SpaceRequest &req, std::string &error) {
  SpaceSettings s = SpaceSettings::fromEnv();
  const std::string curatedName = req.provider + "-" + req.version + "-" + req.variant;
  std::vector<std::string> warnings;
  std::string tag = req.tag;
  if (s.mirrorDir.empty() && tag == "latest") {
    // `latest` reaches ciq's own curated space when no release can be
    // looked up: offline machines work with no set-up.
    std::string lookupError;
    std::optional<std::string> resolved;
    if (s.offline)
      lookupError = "CIQ_OFFLINE is set";
    else {
      std::string warning;
      resolved = resolveLatestTag(ReleaseRepo(s.repo, HttpSettings::fromEnv()), s.tagPrefix,
                                  s.latestTtlDays, warning, lookupError);
      if (!warning.empty())
        warn(warnings, warning);
    }
    if (!resolved) {
      std::string curatedError;
      auto curated = resolveCurated(curatedName, curatedError);
      if (!curated) {
        error = "cannot resolve search space " + curatedName + " (tag latest): " + lookupError +
                "; and " + curatedError;
        return std::nullopt;
      }
      warn(warnings, "no search-space release of " + s.repo + " reachable (" + lookupError +
                         "); using ciq's curated " + curatedName + " (tag builtin)");
      curated->warnings = warnings;
      return curated;
    }
    tag = *resolved;
  }
  auto m = loadSpaceManifest(tag, error);
  if (!m)
    return std::nullopt;
  const SpaceEntry *e = findSpaceEntry(m->manifest, req.provider, req.version, req.variant,
                                       m->where, error);
  if (!e)
    return std::nullopt;
  auto r = fetchSpaceEntry(*m, *e, error);
  if (!r)
    return std::nullopt;
  r->warnings.insert(r->warnings.begin(), warnings.begin(), warnings.end());
  return r;
}

std::optional<ResolvedSpace> resolveSpace(const SpaceRequest &req, std::string &error) {
  std::optional<ResolvedSpace> r;
  if (req.provider == "file")
    r = resolveFile(req.file, error);
  else if (req.provider == "builtin")
    r = resolveCurated(req.file, error);
  else if (req.provider == "ptxas" || req.provider == "nvcc") {
    if (req.version.empty()) {
      error = "space provider '" + req.provider + "' needs a compiler version (version: \"13.0\")";
      return std::nullopt;
    }
    if (req.tag == "builtin")
      r = resolveCurated(req.provider + "-" + req.version + "-" + req.variant, error);
    else
      r = resolveRelease(req, error);
  } else {
    error = "unknown space provider '" + req.provider + "'; expected ptxas, nvcc, file or builtin";
    return std::nullopt;
  }
  if (r && r->format == "bin")
    error = binSpaceError(*r);
  return r;
}

} // namespace ciq
