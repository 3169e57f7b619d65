// Resolves a search-space request (ciq.yaml `space: {provider, version,
// variant, tag}` or `ciq spaces fetch`) to one verified local file.
//
// Order for provider ptxas/nvcc (docs/spaces-and-boosters.md):
//   tag "builtin"            ciq's curated space shipped in <share>/ciq/spaces
//   CIQ_SEARCH_SPACES_DIR    an offline mirror (manifest.json + files); nothing
//                            touches the network; a pinned tag must match its manifest
//   otherwise                the releases of CIQ_SEARCH_SPACES_REPO (default
//                            NVIDIA/CompileIQ): tag "latest" = newest published
//                            release whose tag starts with CIQ_SS_TAG_PREFIX
//                            (default "search-spaces-"), cached CIQ_SS_LATEST_TTL_DAYS
//                            (default 7); files cached under $XDG_CACHE_HOME/ciq
//   "latest", no network and no cached tag (or CIQ_OFFLINE=1): the curated
//                            space of the same compiler/version/variant, with a warning.
#pragma once
#include "engine/assets/SpaceManifest.h"

#include <optional>
#include <string>
#include <vector>

namespace ciq {

struct SpaceRequest {
  std::string provider;      // "ptxas" | "nvcc" | "file" | "builtin"
  std::string version;       // compiler version, "13.0"
  std::string variant = "default";   // "default", "att", ...
  std::string tag = "latest";        // release tag, "latest", or "builtin"
  std::string file;          // provider "file": a local path; "builtin": a curated space name like "ptxas-13.0-default"
};

struct ResolvedSpace {
  std::string localPath;     // a readable local file (cache entry, mirror file or shipped file)
  // Where it came from: "builtin" (shipped with ciq), "file", "mirror"
  // (CIQ_SEARCH_SPACES_DIR) or "release" (downloaded, cached).
  std::string provider, tag, sha256, format;  // format: "yaml" (ciq language) or "bin" (NVIDIA encrypted; opaque)
  std::string description;
  std::string name;          // "ptxas-13.0-default", or the file's path for provider "file"
  std::string source;        // the mirror folder or repository it came from
  std::vector<std::string> warnings;   // already printed to stderr (stale tag, offline fallback, ...)
};

// On failure: nullopt and one line in `error`. For format "bin" the space is
// returned AND `error` holds the line to print if a search tries to use it.
std::optional<ResolvedSpace> resolveSpace(const SpaceRequest &req, std::string &error);

// Settings read from the environment (documented in docs/spaces-and-boosters.md).
struct SpaceSettings {
  std::string repo = "NVIDIA/CompileIQ";   // CIQ_SEARCH_SPACES_REPO
  std::string tagPrefix = "search-spaces-"; // CIQ_SS_TAG_PREFIX
  double latestTtlDays = 7;                 // latestTagTtlDays() (Releases.h)
  std::string mirrorDir;                    // CIQ_SEARCH_SPACES_DIR
  bool offline = false;                     // CIQ_OFFLINE=1
  static SpaceSettings fromEnv();
};

// The manifest a tag resolves to (mirror or release), for `ciq spaces list|verify`.
struct LoadedManifest {
  SpaceManifest manifest;
  std::string where;         // mirror path or release URL, for messages
  bool mirror = false;
  std::string mirrorDir;
};
std::optional<LoadedManifest> loadSpaceManifest(const std::string &tag, std::string &error);

// Fetches (or finds in the mirror) and verifies one manifest entry.
std::optional<ResolvedSpace> fetchSpaceEntry(const LoadedManifest &m, const SpaceEntry &e,
                                             std::string &error);

// ciq's curated spaces: <share>/ciq/spaces/<compiler>-<version>-<variant>.yaml.
struct CuratedSpace {
  std::string name, path, description;
};
std::vector<CuratedSpace> listCuratedSpaces();

// The message for an opaque (encrypted .bin) space used in a search.
std::string binSpaceError(const ResolvedSpace &s);

} // namespace ciq
